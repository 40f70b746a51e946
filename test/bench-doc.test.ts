/**
 * The performance figures are written by `npm run bench`, never by hand (issue 17). This checks
 * the block the benchmark writes into bench/README.md: it is well formed, and every verdict in
 * its targets table follows from the figures beside it, with the one definition of each target
 * in bench/targets.ts (so a hand edit that says "met" beside a figure over its limit, or changes
 * a figure without the verdict, fails here). It also checks that the README's Performance
 * section only points there and states no figure of its own.
 *
 * Nothing here runs the benchmark: it reads the committed text.
 */
import * as fs from 'fs';
import * as path from 'path';
import { BEGIN, END, MET, MISSED, NOT_MEASURED, TARGETS, limitText } from '../bench/targets';
import { TIMELINE_BEGIN, TIMELINE_END, timelineSection } from '../scripts/bench-timeline';
import { repositoryUrl } from './util/doc-links';

const ROOT = path.resolve(__dirname, '..');
const BENCH_DOC = fs.readFileSync(path.join(ROOT, 'bench', 'README.md'), 'utf8');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const VARIANTS = ['hand-legacy', 'lib-legacy', 'lib-native'];
const LIB_VARIANTS = ['lib-legacy', 'lib-native'];
const SHAPES = ['service', 'hpa'];
/** The sizes of a full run (bench.ts DEFAULTS), and the Deployments the check target is judged on. */
const FULL_SIZES = '100,500,1000,2000';
const FULL_ROUNDS = '15 / 6 / 6 / 6';
const FULL_PROCESSES = '3';
const CHECK_SIZE = 2000;

interface Table { header: string[]; rows: Array<Record<string, string>> }

const cells = (line: string) => line.trim().replace(/^\||\|$/g, '').split('|').map(c => c.trim());

/** The markdown table right after `### <heading>` in the block. */
function table(block: string, heading: string, problems: string[]): Table {
  const lines = block.split('\n');
  const at = lines.indexOf(`### ${heading}`);
  if (at < 0) {
    problems.push(`no "### ${heading}" section`);
    return { header: [], rows: [] };
  }
  const start = lines.findIndex((l, i) => i > at && l.startsWith('|'));
  let end = start;
  while (end < lines.length && lines[end].startsWith('|')) end++;
  const header = cells(lines[start]);
  if (!/^\|(---\|)+$/.test(lines[start + 1] ?? '')) problems.push(`${heading}: the table has no separator line`);
  const rows = lines.slice(start + 2, end).map((l, i) => {
    const c = cells(l);
    if (c.length !== header.length) problems.push(`${heading}: row ${i + 1} has ${c.length} cells, the header ${header.length}`);
    return Object.fromEntries(header.map((h, j) => [h, c[j] ?? '']));
  });
  return { header, rows };
}

const num = (s: string | undefined) => (s !== undefined && /^-?\d+(\.\d+)?$/.test(s) ? Number(s) : NaN);

/** Everything wrong with the generated block of a bench/README.md text ([] if nothing). */
function problemsOf(doc: string): string[] {
  const problems: string[] = [];
  const count = (s: string) => doc.split(s).length - 1;
  if (count(BEGIN) !== 1 || count(END) !== 1 || doc.indexOf(BEGIN) > doc.indexOf(END)) {
    return [`expected one "${BEGIN}" line, then one "${END}" line`];
  }
  const block = doc.slice(doc.indexOf(BEGIN) + BEGIN.length, doc.indexOf(END)).trim();

  // The kind of run, its settings, the machine.
  const kind = /^\*\*(Full run)\*\* of `npm run bench` \(sizes ([\d, ]+); rounds ([\d /]+); timing processes (\d+); JIT warm-up rounds \d+; import processes \d+; check processes \d+; peer runs \d+\)\.$/m.exec(block) ??
    /^\*\*(Smoke run)\*\*, not the documented measurement \(sizes ([\d, ]+); rounds ([\d /]+); timing processes (\d+); JIT warm-up rounds \d+; import processes \d+; check processes \d+; peer runs \d+\): regenerate this block with `npm run bench` on a quiet machine\.$/m.exec(block);
  if (!kind || !block.startsWith('**')) problems.push('the block does not start with the "**Full run**" or "**Smoke run**" line');
  const full = kind?.[1] === 'Full run';
  const sizes = (kind?.[2] ?? '').split(', ').map(Number);
  const rounds = (kind?.[3] ?? '').split(' / ');
  const machine = /^Commit `[0-9a-f]{7,40}(-dirty)?`, Node v\d+\.\d+\.\d+, (\d+) CPUs \(.+\), [\d.]+ GiB; load average \(1, 5, 15 min\) ([\d.]+) [\d.]+ [\d.]+ before, ([\d.]+) [\d.]+ [\d.]+ after; [\d.]+ min, finished \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/m.exec(block);
  if (!machine) {
    problems.push('no "Commit `...`, Node ..., N CPUs (...), ... GiB; load average ... before, ... after; ... min, finished ... UTC." line');
  } else {
    const loaded = Math.max(Number(machine[3]), Number(machine[4])) > Number(machine[2]);
    if (loaded !== block.includes('**The load average exceeded the')) problems.push('the load warning does not match the load averages');
  }
  if (full && sizes.join() !== FULL_SIZES) problems.push(`a full run has the sizes ${FULL_SIZES.replace(/,/g, ', ')}, not ${sizes.join(', ')}`);
  if (full && rounds.join(' / ') !== FULL_ROUNDS) problems.push(`a full run has the rounds ${FULL_ROUNDS}, not ${rounds.join(' / ')}`);
  if (full && kind?.[4] !== FULL_PROCESSES) problems.push(`a full run has ${FULL_PROCESSES} timing processes, not ${kind?.[4]}`);

  // Synthesis: one row per size and variant, in order, with the rounds of the header line.
  const synthesis = table(block, 'Synthesis', problems);
  const cpuRatio = 'lib / hand (CPU)';
  const perWorkload = 'CPU µs / workload';
  for (const column of ['N', 'shape', 'variant', 'rounds', cpuRatio, 'lib / hand (wall)', perWorkload]) {
    if (!synthesis.header.includes(column)) problems.push(`Synthesis: no column "${column}"`);
  }
  const expected = sizes.flatMap((n, i) => SHAPES.flatMap(shape => VARIANTS.map(v => `${n} ${shape} ${v} ${rounds[i]}`)));
  const actual = synthesis.rows.map(r => `${r.N} ${r.shape} ${r.variant} ${r.rounds}`);
  if (actual.join('\n') !== expected.join('\n')) problems.push(`Synthesis: rows ${actual.join(', ')}; expected ${expected.join(', ')}`);
  const row = (n: number, shape: string, v: string) => synthesis.rows.find(r => r.N === String(n) && r.shape === shape && r.variant === v);
  for (const r of synthesis.rows) {
    const ratios = [r[cpuRatio], r['lib / hand (wall)']];
    if (r.variant === 'hand-legacy' ? ratios.some(x => x !== '1') : ratios.some(x => !/^\d+\.\d{3}$/.test(x))) {
      problems.push(`Synthesis: N=${r.N} ${r.variant}: lib / hand ${ratios.join(', ')}`);
    }
    if (!(num(r[perWorkload]) > 0)) problems.push(`Synthesis: N=${r.N} ${r.variant}: ${perWorkload} "${r[perWorkload]}"`);
  }

  // Import: the library's own require() after cdk8s-plus-27.
  const imports = table(block, 'Import', problems);
  const libImport = imports.rows.find(r => r['a fresh process loads'] === 'of which the library')?.['process CPU ms'];
  if (!Number.isFinite(num(libImport))) problems.push(`Import: no "of which the library" row with a process CPU ms figure (${libImport})`);

  const peers = table(block, 'Check against the pipeline linters', problems);
  const peerWorkloads = Number(/What `cdk8s synth` writes for (\d+) workloads/.exec(block)?.[1]);
  const kubeconformRow = peers.rows.find(r => /^kubeconform v[\d.]+ -strict$/.test(r.tool));
  const checkRow0 = peers.rows.find(r => r.tool === '`cdk8s-sidecars check`');
  if (!checkRow0 || !(num(checkRow0['process CPU s']) > 0)) problems.push('Check against the pipeline linters: no `cdk8s-sidecars check` row with a process CPU s figure');
  if (full && peerWorkloads !== CHECK_SIZE) problems.push(`Check against the pipeline linters: a full run compares over ${CHECK_SIZE} workloads, not ${peerWorkloads}`);

  // Check: `cdk8s-sidecars check` over N Deployments and their Services, its process CPU time.
  const check = table(block, 'Check', problems);
  const checkRow = check.rows[0];
  const checkN = Number(/^(\d+) Deployments and their Services/.exec(checkRow?.['`cdk8s-sidecars check` over'] ?? '')?.[1]);
  const checkCpu = num(checkRow?.['process CPU s']);
  if (check.rows.length !== 1 || !(checkN > 0) || !(checkCpu > 0)) problems.push('Check: expected one row "<N> Deployments and their Services ..." with a process CPU s figure');
  if (full && checkN !== CHECK_SIZE) problems.push(`Check: a full run checks ${CHECK_SIZE} Deployments, not ${checkN}`);
  if (checkRow && num(checkRow.files) !== 2 * checkN) problems.push(`Check: ${checkRow.files} files for ${checkN} Deployments and their Services`);

  // Targets: one row per definition in bench/targets.ts, the verdict taken on the printed value.
  const targets = table(block, 'Targets', problems);
  const recomputed: Record<string, number | undefined> = {
    ratio: Math.max(...sizes.flatMap(n => SHAPES.flatMap(shape => LIB_VARIANTS.map(v => num(row(n, shape, v)?.[cpuRatio]))))),
    growth: sizes.length < 2 ? undefined : Math.max(...SHAPES.flatMap(shape => LIB_VARIANTS.map(v =>
      num(row(sizes[sizes.length - 1], shape, v)?.[perWorkload]) / num(row(sizes[0], shape, v)?.[perWorkload])))),
    import: num(libImport),
    check: checkN === CHECK_SIZE ? checkCpu : undefined,
    kubeconform: peerWorkloads === CHECK_SIZE && kubeconformRow ? num(kubeconformRow['check / tool (CPU)']) : undefined,
  };
  if (targets.rows.length !== TARGETS.length) problems.push(`Targets: ${targets.rows.length} rows, expected ${TARGETS.length}`);
  TARGETS.forEach((t, i) => {
    const r = targets.rows[i];
    if (!r) return;
    const where = `Targets: "${t.title}"`;
    if (r.target !== t.title) problems.push(`Targets: row ${i + 1} is "${r.target}", expected "${t.title}"`);
    if (r['measured as'] !== t.measure) problems.push(`${where}: "measured as" differs from bench/targets.ts`);
    if (r.limit !== limitText(t)) problems.push(`${where}: limit "${r.limit}", expected "${limitText(t)}"`);
    const m = /^(n\/a|\d+\.\d+)(x| ms| s)? \(.+\)$/.exec(r.measured);
    if (!m) {
      problems.push(`${where}: measured "${r.measured}" is not "<number>${t.unit} (<where>)"`);
      return;
    }
    if (m[1] === 'n/a') {
      if (recomputed[t.id] !== undefined || r.result !== NOT_MEASURED) problems.push(`${where}: "n/a" / "${r.result}" but the figures give a value`);
      return;
    }
    const value = Number(m[1]);
    if ((m[2] ?? '') !== t.unit || m[1].split('.')[1].length !== t.decimals) problems.push(`${where}: "${r.measured}" is not printed as ${t.decimals} decimals + "${t.unit}"`);
    const verdict = value <= t.limit ? MET : MISSED;
    if (r.result !== verdict) problems.push(`${where}: ${m[1]}${t.unit} against ${limitText(t)} is "${verdict}", the block says "${r.result}"`);
    const fromFigures = recomputed[t.id];
    // Growth is recomputed from the printed per-workload times: within the rounding of the printed value.
    const tolerance = t.id === 'growth' ? 0.5 * 10 ** -t.decimals + 1e-4 : 1e-9;
    if (fromFigures === undefined || !(Math.abs(fromFigures - value) <= tolerance)) {
      problems.push(`${where}: measured ${m[1]}, but the figures of the block give ${fromFigures}`);
    }
  });
  return problems;
}

describe('bench/README.md: the generated performance block', () => {
  test('is well formed and every verdict follows from its own figures', () => {
    expect(problemsOf(BENCH_DOC)).toEqual([]);
  });

  // The checker must be able to fail: hand edits of the committed block are caught.
  describe('a hand edit is caught', () => {
    const lines = BENCH_DOC.split('\n');
    const targetLine = (t: typeof TARGETS[number]) => lines.findIndex(l => l.startsWith(`| ${t.title} |`));
    const edit = (i: number, f: (line: string) => string) => lines.map((l, j) => (j === i ? f(l) : l)).join('\n');

    test.each(TARGETS.map(t => [t.id, t] as const))('the verdict of %s flipped', (_id, t) => {
      const i = targetLine(t);
      expect(i).toBeGreaterThan(0);
      const flipped = edit(i, l => l.replace(/\| ([^|]+) \|$/, (_m, v: string) => `| ${v === MET ? MISSED : MET} |`));
      expect(problemsOf(flipped).join('\n')).toMatch(/the block says|n\/a/);
    });

    test('"met" beside an import time over the limit, changed in both tables', () => {
      const t = TARGETS.find(x => x.id === 'import')!;
      const over = (t.limit + 0.1).toFixed(t.decimals);
      let doc = edit(targetLine(t), l => l.replace(/\| [\d.]+ ms \(/, `| ${over} ms (`).replace(/\| [^|]+ \|$/, `| ${MET} |`));
      doc = doc.replace(/^\| of which the library \| [\d.]+ \|/m, `| of which the library | ${over} |`);
      expect(problemsOf(doc)).toEqual([expect.stringContaining(`${over} ms against <= ${t.limit} ms is "${MISSED}", the block says "${MET}"`)]);
    });

    test('"met" beside a check over its limit, changed in both tables', () => {
      const t = TARGETS.find(x => x.id === 'check')!;
      const i = targetLine(t);
      if (lines[i].includes('| n/a (')) return; // a smoke run without the 2000 Deployments: nothing to change
      const over = (t.limit + 0.5).toFixed(t.decimals);
      let doc = edit(i, l => l.replace(/\| [\d.]+ s \(/, `| ${over} s (`).replace(/\| [^|]+ \|$/, `| ${MET} |`));
      doc = doc.replace(/^(\| \d+ Deployments and their Services[^|]*\| \d+ \| \d+ \| )[\d.]+ \|/m, `$1${over} |`);
      expect(problemsOf(doc)).toEqual([expect.stringContaining(`${over} s against <= ${t.limit} s is "${MISSED}", the block says "${MET}"`)]);
    });

    test('a figure changed without its verdict', () => {
      // the row of the worst library ratio (the one the ratio target is judged on), made worse
      const col = cells(lines.find(x => x.startsWith('| N | shape | variant'))!).indexOf('lib / hand (CPU)') + 1;
      const libRows = lines.map((l, j) => [l, j] as const).filter(([l]) => /^\| \d+ \| \w+ \| lib-/.test(l));
      const [, i] = libRows.reduce((a, b) => (Number(b[0].split('|')[col]) > Number(a[0].split('|')[col]) ? b : a));
      const doc = edit(i, l => {
        const c = l.split('|');
        c[col] = ` ${(Number(c[col]) + 0.5).toFixed(3)} `;
        return c.join('|');
      });
      expect(problemsOf(doc).join('\n')).toMatch(/but the figures of the block give|the block says/);
    });

    test('a missing end marker, or a run called full with other sizes', () => {
      expect(problemsOf(BENCH_DOC.replace(END, ''))).toEqual([expect.stringContaining('expected one')]);
      const fake = BENCH_DOC.replace(/^\*\*Smoke run\*\*, not the documented measurement \((.*)\): regenerate.*$/m, '**Full run** of `npm run bench` ($1).');
      // (a smoke run's sizes, rounds or check size are not a full run's)
      if (fake !== BENCH_DOC) expect(problemsOf(fake).join('\n')).toMatch(/a full run has (the (sizes|rounds)|\d+ timing processes)|Synthesis: rows|a full run checks/);
    });
  });
});

describe('README.md: the Performance section', () => {
  const start = README.indexOf('\n## Performance\n');
  const section = README.slice(start + 1, README.indexOf('\n## ', start + 1));

  test('is a short summary that links to bench/README.md', () => {
    expect(start).toBeGreaterThan(0);
    // an absolute link into the repository: bench/ is not in the package (test/util/doc-links.ts)
    expect(section).toContain(`](${repositoryUrl(ROOT)}/blob/main/bench/README.md)`);
    const text = section.split('\n').slice(1).filter(l => l.trim() !== '');
    expect(text.length).toBeGreaterThanOrEqual(2);
    expect(text.length).toBeLessThanOrEqual(5);
  });

  test('states no figure (the figures are generated in bench/README.md)', () => {
    const prose = section
      .replace(/\]\([^)]*\)/g, ']') // link targets
      .replace(/cdk8s-plus-\d+|cdk8s|k8s/g, ''); // package names
    expect(prose.match(/.{0,30}\d.{0,30}/g) ?? []).toEqual([]);
  });
});

describe('the "time added to a pod\'s start and stop" section (issue 26)', () => {
  test('is what scripts/bench-timeline.ts writes from SidecarTimeline today (no figure typed by hand)', () => {
    const begin = BENCH_DOC.indexOf(TIMELINE_BEGIN);
    const end = BENCH_DOC.indexOf(TIMELINE_END);
    expect(begin).toBeGreaterThan(-1);
    expect(BENCH_DOC.slice(begin, end + TIMELINE_END.length)).toBe(timelineSection());
  });

  test('the native layout adds no delay before a log agent\'s SIGTERM where it is the only sidecar', () => {
    const rows = BENCH_DOC.slice(BENCH_DOC.indexOf(TIMELINE_BEGIN), BENCH_DOC.indexOf(TIMELINE_END)).split('\n').filter(l => l.startsWith('| example'));
    const native = rows.filter(l => l.includes('| native |') && !l.includes("'web'")).map(cells);
    expect(native.length).toBe(3);
    for (const c of native) expect(c[4]).toBe('0');
  });
});
