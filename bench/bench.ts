/**
 * `npm run bench`: the synthesis cost of the library against the same sidecars written by hand
 * with cdk8s-plus-27 alone. A benchmark, not a test: it judges a run against the targets of
 * issue 8 (one definition each, in `targets.ts`), writes the figures and the verdicts into
 * bench/README.md between its generated markers (and into `.bench/results.md`, every sample into
 * `.bench/results.json`), and fails only when the outputs are not equivalent.
 *
 * - Apps of 100, 500, 1000 and 2000 Deployments, each an app container with the log agent, the
 *   tracer and Envoy and a Service in front of Envoy (shape `service`), and again each also with
 *   a HorizontalPodAutoscaler (shape `hpa`), built three ways (`apps.ts`): hand-written legacy
 *   (cdk8s-plus-27 alone), library legacy (1.27), library native (1.29). The native layout cannot
 *   be hand-written with cdk8s-plus-27, so the library's native app is timed against the
 *   hand-written LEGACY app.
 * - Before timing, the hand-written and library legacy outputs are checked for equivalence
 *   (`equivalence.ts`) at every size, and the native output for the same objects and containers.
 * - The compiled JS of the library (`lib/`, built by jsii, what consumers load), timed in
 *   `--processes` fresh processes one after the other (default 3: a process's JIT and heap move
 *   all its rounds by a few per cent). In each: first `--warmup` rounds of every variant at the
 *   smallest size (JIT), then per size: a warm-up run of each variant and shape (in the first
 *   process its output is checked), then `--runs` rounds (default 5 at 100, 2 at 500, 1000 and
 *   2000; 15 / 6 / 6 / 6 in all) of each shape with the variants interleaved (the order rotates
 *   each round, and starts with another variant in each process), `gc()` before every run. Construction (building the constructs) and synthesis
 *   (`App.synthYaml()`: validation, every object's `toJson()`, YAML; no disk I/O) are timed
 *   separately, on the wall clock and as CPU time of the process. Medians, and the median of
 *   the per-round ratios library / hand-written, over the rounds of every process.
 * - Peak memory: one fresh process per variant and size of the `service` shape (`--memory`),
 *   maxRSS and the heap the built app retains.
 * - `cdk8s-sidecars check` (the compiled bin, `lib/cli/main.js`) over the library's native app
 *   of 2000 Deployments and their Services, one file per object, in fresh processes: the CPU
 *   time of the whole process.
 * - `cdk8s-sidecars check` and kubeconform -strict side by side over what `cdk8s synth` writes
 *   for 2000 workloads (20 YAML files), alternately: the CPU time of each whole process (issue 50).
 * - Import time: fresh `node` processes that load cdk8s-plus-27 alone, or cdk8s-plus-27 and then
 *   the library, alternately; the library's share is the difference of the medians of the
 *   processes' CPU time (issue 50); the `require()` calls' own times beside it.
 *
 * Usage: node --expose-gc .bench/bench.js [--sizes 100,500,1000,2000] [--runs N] [--processes 3] [--warmup 2] [--imports 40] [--checks 3] [--check-size 2000] [--peers 5] [--no-memory] [--no-doc]
 * Any setting other than the defaults makes a smoke run, marked as such in the generated block;
 * `--no-doc` leaves bench/README.md alone.
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { SHAPES, Shape, VARIANTS, Variant, buildApp, synthCheckApp } from './apps';
import { checkEquivalent, checkSameWorkloads, parseYaml } from './equivalence';
import { BEGIN, END, NOT_MEASURED, TARGETS, TargetId, judge, limitText } from './targets';

const ROOT = path.resolve(__dirname, '..');
const LIB = path.join(ROOT, 'lib');
const OUT = path.join(ROOT, '.bench');
const DOC = path.join(ROOT, 'bench', 'README.md');
const LIB_VARIANTS: Variant[] = ['lib-legacy', 'lib-native'];

// The target comes from Sidecars.configure() in the apps; the environment variable would win.
delete process.env.CDK8S_SIDECARS_KUBERNETES_VERSION;

/** Milliseconds of one run: wall clock, and CPU time of the process (user + system, all threads). */
interface Times { construct: number; synth: number; total: number }
interface Sample { wall: Times; cpu: Times }
type Clock = keyof Sample;
const CLOCKS: Clock[] = ['wall', 'cpu'];

const gc = (): void => {
  const g = (global as any).gc;
  if (typeof g !== 'function') throw new Error('run node with --expose-gc');
  g();
};
const now = () => Number(process.hrtime.bigint()) / 1e6;
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};

function run(variant: Variant, n: number, shape: Shape): { sample: Sample; yaml: string } {
  gc();
  const c0 = cpu();
  const t0 = now();
  const app = buildApp(variant, n, shape);
  const t1 = now();
  const c1 = cpu();
  const yaml = app.synthYaml();
  const t2 = now();
  const c2 = cpu();
  return {
    sample: {
      wall: { construct: t1 - t0, synth: t2 - t1, total: t2 - t0 },
      cpu: { construct: c1 - c0, synth: c2 - c1, total: c2 - c0 },
    },
    yaml,
  };
}

/** `--memory <variant> <n>`, in a fresh process: peak RSS and the heap the built app retains. */
function memoryChild(variant: Variant | 'none', n: number): void {
  gc();
  const base = process.memoryUsage().heapUsed;
  let retained = 0;
  let bytes = 0;
  if (variant !== 'none') {
    const app = buildApp(variant, n, 'service');
    gc();
    retained = process.memoryUsage().heapUsed - base;
    bytes = app.synthYaml().length;
  }
  process.stdout.write(JSON.stringify({ maxRssKb: process.resourceUsage().maxRSS, retained, bytes }));
}

function memory(variant: Variant | 'none', n: number): { maxRssMb: number; retainedMb: number } {
  const out = execFileSync(process.execPath, ['--expose-gc', __filename, '--memory', variant, String(n)], { encoding: 'utf8', maxBuffer: 1024 * 1024 });
  const r = JSON.parse(out);
  return { maxRssMb: r.maxRssKb / 1024, retainedMb: r.retained / 2 ** 20 };
}

/**
 * Fresh processes, alternately: `node -e "require('cdk8s-plus-27')"` alone, or then the library, as
 * a user's synthesis pays it (issue 50). Each reports the CPU time of the whole process from its
 * start to the end of its `require()` calls (process.cpuUsage: user + system, every thread), and
 * the wall and CPU time of the `require()` calls; the parent times the whole process on the wall clock.
 */
function importTimes(count: number) {
  const script = (withLib: boolean) => `
    const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
    const t0 = process.hrtime.bigint(); const c0 = cpu();
    require('cdk8s-plus-27');
    const t1 = process.hrtime.bigint(); const c1 = cpu();
    ${withLib ? `require(${JSON.stringify(LIB)});` : ''}
    const t2 = process.hrtime.bigint(); const c2 = cpu();
    process.stdout.write(JSON.stringify({ procCpu: c2, wall: Number(t2 - t0) / 1e6, cpu: c2 - c0, libWall: Number(t2 - t1) / 1e6, libCpu: c2 - c1 }));`;
  type Which = 'alone' | 'withLib';
  const keys = ['process', 'procCpu', 'wall', 'cpu', 'libWall', 'libCpu'] as const;
  const samples: Record<Which, Record<typeof keys[number], number[]>> = {
    alone: { process: [], procCpu: [], wall: [], cpu: [], libWall: [], libCpu: [] },
    withLib: { process: [], procCpu: [], wall: [], cpu: [], libWall: [], libCpu: [] },
  };
  for (let i = 0; i < count + 1; i++) {
    for (const which of (i % 2 ? ['alone', 'withLib'] : ['withLib', 'alone']) as Which[]) {
      const t0 = now();
      const r = spawnSync(process.execPath, ['-e', script(which === 'withLib')], { cwd: ROOT, encoding: 'utf8' });
      const wall = now() - t0;
      if (r.status !== 0) throw new Error(r.stderr);
      if (i === 0) continue; // warm the file system cache
      const m = JSON.parse(r.stdout);
      samples[which].process.push(wall);
      for (const k of ['procCpu', 'wall', 'cpu', 'libWall', 'libCpu'] as const) samples[which][k].push(m[k]);
    }
  }
  const med = (w: Which) => Object.fromEntries(keys.map(k => [k, median(samples[w][k])])) as Record<typeof keys[number], number>;
  const alone = med('alone');
  const withLib = med('withLib');
  // the library's share of a process: the difference of the medians (and, for information, the median of the pairs' differences)
  const share = {
    procCpu: withLib.procCpu - alone.procCpu,
    process: withLib.process - alone.process,
    pairedCpu: median(samples.withLib.procCpu.map((x, i) => x - samples.alone.procCpu[i])),
  };
  return { count, samples, alone, withLib, share };
}

const CACHE = path.join(process.env.CDK8S_SIDECARS_CACHE ?? path.join(os.homedir(), '.cache', 'cdk8s-sidecars'), 'linters');
const BUILD_LINTERS = path.join(ROOT, 'scripts', 'build-linters.sh');
/** A pin of scripts/build-linters.sh (`NAME=value`), as test/linters/util/linters.ts reads it. */
const pin = (name: string) => new RegExp(`^${name}="?([^"\\n]+)"?$`, 'm').exec(fs.readFileSync(BUILD_LINTERS, 'utf8'))?.[1] ?? '';
/**
 * kube-linter, built from a checkout of its tag (the Go module proxy refuses its module: 403,
 * 2026-12-07; scripts/build-linters.sh with KUBE_LINTER_SRC); or why it is not in the comparison.
 */
function kubeLinterSetup(): { binary: string; version: string } | { why: string } {
  const version = pin('KUBE_LINTER_VERSION');
  const binary = path.join(CACHE, 'bin', `kube-linter-${version}`);
  return fs.existsSync(binary) ? { binary, version }
    : { why: `not built: the Go module proxy refuses its module (403); \`KUBE_LINTER_SRC=<a checkout of ${version}> bash scripts/build-linters.sh\` builds it` };
}

/** The CPU time (user + system, ms) of this process's waited-for children so far (Linux: /proc/self/stat cutime + cstime). */
let clockTicks: number | undefined;
function childrenCpu(): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 1000 / clockTicks;
}

/**
 * kubeconform, its version and the schema root for `release`, built and generated when absent
 * (scripts/build-linters.sh, test/linters/util/k8s-json-schema.ts, as `npm run test:linters`
 * does); or why it cannot run here.
 */
function kubeconformSetup(release: string): { binary: string; version: string; schemas: string } | { why: string } {
  const version = pin('KUBECONFORM_VERSION');
  const binary = path.join(CACHE, 'bin', `kubeconform-${version}`);
  const swagger = path.join(CACHE, 'swagger', `v${release}.json`);
  if (!fs.existsSync(binary) || !fs.existsSync(swagger)) {
    const r = spawnSync('bash', [BUILD_LINTERS], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0 || !fs.existsSync(binary) || !fs.existsSync(swagger)) return { why: `scripts/build-linters.sh could not build kubeconform ${version} or fetch the ${release} swagger.json (needs Go and the Go module proxy)` };
  }
  const schemas = path.join(CACHE, 'schemas');
  const gen = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e',
    `require('./test/linters/util/k8s-json-schema').generateKubeconformSchemas(${JSON.stringify(swagger)}, ${JSON.stringify(path.join(schemas, `v${release}-standalone-strict`))})`],
  { cwd: ROOT, encoding: 'utf8' });
  if (gen.status !== 0) return { why: `the kubeconform schemas for ${release} could not be generated: ${gen.stderr.split('\n')[0]}` };
  return { binary, version, schemas };
}

/**
 * `cdk8s-sidecars check` (the compiled bin) and kubeconform -strict over the same files, what
 * `cdk8s synth` writes for `workloads` Deployments, each with Fluent Bit, Envoy and a Service,
 * native at 1.33, in `charts` files (issue 50): `count` runs of each, alternating (after one
 * discarded pair that warms the file system cache), each process's CPU time (user + system of
 * the process and its threads, read from outside: /proc/self/stat of the bench for its
 * waited-for children), its wall time, and that each read every object and found nothing wrong.
 */
function peerTimes(workloads: number, charts: number, count: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-bench-peers-'));
  try {
    synthCheckApp(dir, workloads, charts);
    const files = fs.readdirSync(dir).filter(f => f.endsWith('.k8s.yaml')).length;
    const objects = workloads * 4; // a Deployment, its Service, Fluent Bit's and Envoy's ConfigMaps
    const release = pin('KUBERNETES_RELEASES').split(/\s+/).find(r => r.startsWith('1.33.')) ?? '1.33.13';
    const kc = kubeconformSetup(release);
    const kl = kubeLinterSetup();
    type Tool = 'check' | 'kubeconform' | 'kubeLinter';
    const argv: Record<Tool, string[] | undefined> = {
      check: [process.execPath, path.join(LIB, 'cli', 'main.js'), 'check', '--kubernetes-version', '1.33', '--output', 'json', dir],
      kubeconform: 'binary' in kc ? [kc.binary, '-strict', '-summary', '-output', 'json', '-kubernetes-version', release, '-schema-location', kc.schemas, dir] : undefined,
      // its default checks, as `npm run test:linters` runs it; it exits 1 when it reports anything
      kubeLinter: 'binary' in kl ? [kl.binary, 'lint', '--format', 'json', dir] : undefined,
    };
    const runs: Record<Tool, { cpuMs: number[]; wallMs: number[] }> = {
      check: { cpuMs: [], wallMs: [] }, kubeconform: { cpuMs: [], wallMs: [] }, kubeLinter: { cpuMs: [], wallMs: [] },
    };
    let kubeLinterReports = 0;
    const tools = (Object.keys(argv) as Tool[]).filter(t => argv[t]);
    for (let i = 0; i < count + 1; i++) {
      for (const tool of i % 2 ? [...tools].reverse() : tools) {
        const [cmd, ...args] = argv[tool]!;
        const c0 = childrenCpu();
        const t0 = now();
        const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
        const wall = now() - t0;
        const cpuMs = childrenCpu() - c0;
        if (r.status !== 0 && !(tool === 'kubeLinter' && r.status === 1)) throw new Error(`${tool} exited with ${r.status}:\n${r.stderr}${r.stdout.slice(0, 2000)}`);
        const out = JSON.parse(r.stdout);
        if (tool === 'kubeLinter') {
          // kube-linter reports objects, not a count of those it read: it must have run its checks
          if ((out.Checks ?? []).length === 0) throw new Error(`kube-linter ran no check:\n${r.stderr}`);
          kubeLinterReports = (out.Reports ?? []).length;
          if (i > 0) { runs[tool].cpuMs.push(cpuMs); runs[tool].wallMs.push(wall); }
          continue;
        }
        const read = tool === 'check' ? out.objects : out.summary.valid;
        const wrong = tool === 'check' ? out.findings.length : out.summary.invalid + out.summary.errors + out.summary.skipped;
        if (read !== objects || wrong !== 0) throw new Error(`${tool} read ${read} objects (not ${objects}) with ${wrong} findings, errors or skips`);
        if (i === 0) continue;
        runs[tool].cpuMs.push(cpuMs);
        runs[tool].wallMs.push(wall);
      }
    }
    const summary = (t: Tool) => ({ ...runs[t], cpu: median(runs[t].cpuMs), wall: median(runs[t].wallMs) });
    return {
      workloads,
      charts,
      files,
      objects,
      count,
      release,
      check: summary('check'),
      kubeconform: 'binary' in kc ? { version: kc.version, ...summary('kubeconform') } : { why: kc.why },
      ratio: 'binary' in kc ? median(runs.check.cpuMs.map((c, i) => c / runs.kubeconform.cpuMs[i])) : undefined,
      kubeLinter: 'binary' in kl
        ? { version: kl.version, reports: kubeLinterReports, ...summary('kubeLinter'), ratio: median(runs.check.cpuMs.map((c, i) => c / runs.kubeLinter.cpuMs[i])) }
        : { why: kl.why },
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `cdk8s-sidecars check` over the library's native app of `n` Deployments, each with its
 * Service, one file per object, in `count` fresh processes of the compiled bin: the median CPU
 * time (user + system) of the whole process, from its start to its exit.
 */
function checkTimes(n: number, count: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-sidecars-bench-check-'));
  try {
    const objects = parseYaml(buildApp('lib-native', n, 'service').synthYaml()).filter(o => o.kind === 'Deployment' || o.kind === 'Service');
    const files = path.join(dir, 'manifests');
    fs.mkdirSync(files);
    objects.forEach((o, i) => fs.writeFileSync(path.join(files, `${String(i).padStart(5, '0')}-${o.kind}-${o.metadata.name}.yaml`), JSON.stringify(o)));
    const reporter = path.join(dir, 'cpu.js');
    fs.writeFileSync(reporter, "process.on('exit', () => { const u = process.cpuUsage(); require('fs').writeFileSync(process.env.BENCH_CPU_OUT, String((u.user + u.system) / 1000)); });\n");
    const out = path.join(dir, 'cpu.txt');
    const cpuMs: number[] = [];
    const wallMs: number[] = [];
    let findings = 0;
    for (let i = 0; i < count + 1; i++) {
      const t0 = now();
      const r = spawnSync(process.execPath, ['-r', reporter, path.join(LIB, 'cli', 'main.js'), 'check', '--kubernetes-version', '1.29', '--output', 'json', files], {
        cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: { ...process.env, BENCH_CPU_OUT: out },
      });
      const wall = now() - t0;
      if (r.status !== 0) throw new Error(`cdk8s-sidecars check exited with ${r.status}:\n${r.stderr}${r.stdout.slice(0, 2000)}`);
      const result = JSON.parse(r.stdout);
      if (result.objects !== objects.length || result.workloads !== n) throw new Error(`cdk8s-sidecars check read ${result.objects} objects and ${result.workloads} workloads, not ${objects.length} and ${n}`);
      findings = result.findings.length;
      if (i === 0) continue; // warm the file system cache
      cpuMs.push(Number(fs.readFileSync(out, 'utf8')));
      wallMs.push(wall);
    }
    return { n, files: objects.length, findings, count, cpuMs, wallMs, cpu: median(cpuMs), wall: median(wallMs) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function machine() {
  const cpus = os.cpus();
  let commit = '?';
  try {
    commit = execFileSync('git', ['describe', '--always', '--dirty'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout
  }
  return {
    node: process.version,
    cpus: cpus.length,
    cpu: cpus[0]?.model?.trim() ?? '?',
    memGb: +(os.totalmem() / 2 ** 30).toFixed(1),
    loadavg: os.loadavg(),
    commit,
    date: new Date().toISOString(),
  };
}
const load = (m: ReturnType<typeof machine>) => m.loadavg.map(x => x.toFixed(2)).join(' ');

/** The defaults of `npm run bench`: a run with any other setting is a smoke run. */
const DEFAULTS = { sizes: [100, 500, 1000, 2000], processes: 3, warmup: 2, imports: 40, checks: 3, checkSize: 2000, peers: 5 };
// Rounds per timing process. On a shared 2-CPU machine one round's ratio moves by 5-10 % (the same
// code measured 1.06 and 1.19 at 100 Deployments in 5 rounds), and a whole process moves by a few
// per cent with its JIT and heap: lib-legacy over hand-written at 1000 Deployments, 5 rounds each, in
// 7 fresh processes of the same code: 0.99, 1.03, 1.03, 1.03, 1.06, 1.06, 1.09 (issue 36). More rounds
// in one process do not average that out; rounds in 3 processes do: 5 where a round is short, 2
// elsewhere, so 15 / 6 / 6 / 6 rounds in all.
const defaultRuns = (n: number) => (n <= 100 ? 5 : 2);

/** What a timing process (`--timing`) does: its rounds per size, and whether it checks the outputs. */
interface TimingConfig {
  readonly sizes: number[];
  readonly rounds: Record<number, number>;
  readonly warmup: number;
  /** The first process checks the outputs for equivalence (the outputs do not change between processes). */
  readonly check: boolean;
  /** Where the rotation of the variants starts, so that each process puts another variant first. */
  readonly offset: number;
}

interface TimingResult {
  readonly samples: Record<string, Record<Shape, Record<Variant, Sample[]>>>;
  readonly equivalence: Record<string, { legacy: string; native: string; bytes: Record<string, number> }>;
}

/**
 * `--timing <config>`, in a fresh process: the JIT warm-up, then per size and shape a warm-up run
 * of each variant (its output checked when `check`) and the rounds, variants interleaved. Writes
 * the samples as JSON on stdout; the progress goes to stderr. A failed check ends it with an error.
 */
function timingChild(cfg: TimingConfig): void {
  // Warm the JIT up on every variant first, so that the smallest size is not measured cold.
  for (let r = 0; r < cfg.warmup; r++) for (const shape of SHAPES) for (const v of VARIANTS) run(v, cfg.sizes[0], shape);
  const out: TimingResult = { samples: {}, equivalence: {} };
  for (const [n, shape] of cfg.sizes.flatMap(size => SHAPES.map(sh => [size, sh] as const))) {
    const at = `${n} ${shape}`;
    // Warm-up run of each variant (the heap grows to this size), and the equivalence check on its output.
    const warm: Record<string, string> = {};
    for (const v of VARIANTS) warm[v] = run(v, n, shape).yaml;
    if (cfg.check) {
      const legacy = parseYaml(warm['lib-legacy']);
      out.equivalence[at] = {
        legacy: checkEquivalent(parseYaml(warm['hand-legacy']), legacy),
        native: checkSameWorkloads(parseYaml(warm['lib-native']), legacy),
        bytes: Object.fromEntries(VARIANTS.map(v => [v, warm[v].length])),
      };
      process.stderr.write(`N=${n} ${shape}: equivalence: hand-legacy vs lib-legacy: ${out.equivalence[at].legacy}\n`);
      process.stderr.write(`N=${n} ${shape}: lib-native: ${out.equivalence[at].native}\n`);
    }
    const samples: Record<Variant, Sample[]> = { 'hand-legacy': [], 'lib-legacy': [], 'lib-native': [] };
    for (let r = 0; r < cfg.rounds[n]; r++) {
      const k = (r + cfg.offset) % 3;
      for (const v of [...VARIANTS.slice(k), ...VARIANTS.slice(0, k)]) samples[v].push(run(v, n, shape).sample);
    }
    (out.samples[n] ??= {} as Record<Shape, Record<Variant, Sample[]>>)[shape] = samples;
    process.stderr.write(`N=${n} ${shape}: ${cfg.rounds[n]} rounds timed (process ${cfg.offset + 1}); load average ${load(machine())}\n`);
  }
  process.stdout.write(JSON.stringify(out));
}

/** One timing process (see timingChild); throws when it fails (e.g. the outputs are not equivalent). */
function timingProcess(cfg: TimingConfig): TimingResult {
  const r = spawnSync(process.execPath, ['--expose-gc', __filename, '--timing', JSON.stringify(cfg)], {
    cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`timing process ${cfg.offset + 1} failed (exit ${r.status}${r.signal ? `, ${r.signal}` : ''}): see its output above`);
  return JSON.parse(r.stdout);
}

function main(): void {
  if (process.argv.includes('--memory')) {
    const i = process.argv.indexOf('--memory');
    memoryChild(process.argv[i + 1] as Variant | 'none', Number(process.argv[i + 2]));
    return;
  }
  if (process.argv.includes('--timing')) {
    timingChild(JSON.parse(arg('timing', '{}')));
    return;
  }
  const start = now();
  const sizes = arg('sizes', DEFAULTS.sizes.join(',')).split(',').map(Number).sort((a, b) => a - b);
  if (sizes.some(n => !Number.isInteger(n) || n < 1)) throw new Error(`--sizes: positive integers separated by commas, not ${arg('sizes', '')}`);
  const runsFor = (n: number) => Number(arg('runs', String(defaultRuns(n))));
  const processes = Number(arg('processes', String(DEFAULTS.processes)));
  if (!Number.isInteger(processes) || processes < 1) throw new Error(`--processes: a positive integer, not ${arg('processes', '')}`);
  const importCount = Number(arg('imports', String(DEFAULTS.imports)));
  const warmUp = Number(arg('warmup', String(DEFAULTS.warmup)));
  const checkCount = Number(arg('checks', String(DEFAULTS.checks)));
  const checkSize = Number(arg('check-size', String(DEFAULTS.checkSize)));
  const peerCount = Number(arg('peers', String(DEFAULTS.peers)));
  const noMemory = process.argv.includes('--no-memory');
  const full = sizes.join() === DEFAULTS.sizes.join() && sizes.every(n => runsFor(n) === defaultRuns(n)) && processes === DEFAULTS.processes &&
    warmUp === DEFAULTS.warmup && importCount === DEFAULTS.imports && checkCount === DEFAULTS.checks && checkSize === DEFAULTS.checkSize &&
    peerCount === DEFAULTS.peers && !noMemory;
  const before = machine();
  console.log(`# cdk8s-sidecars benchmark (${full ? 'full run' : 'smoke run'})\n\nnode ${before.node}, ${before.cpus} CPUs (${before.cpu}), ${before.memGb} GiB`);
  console.log(`load average before: ${load(before)}\nlibrary: ${LIB} (compiled by jsii from commit ${before.commit})\n`);

  const results: any = {
    full,
    config: { sizes, processes, warmup: warmUp, imports: importCount, checks: checkCount, checkSize, peers: peerCount },
    machine: { before },
    sizes: {},
    equivalence: {},
  };

  // The rounds, in fresh processes one after the other; a round's runs stay side by side.
  const rounds = Object.fromEntries(sizes.map(n => [n, runsFor(n)]));
  const timed: TimingResult[] = [];
  for (let p = 0; p < processes; p++) timed.push(timingProcess({ sizes, rounds, warmup: warmUp, check: p === 0, offset: p }));
  results.equivalence = timed[0].equivalence;

  for (const [n, shape] of sizes.flatMap(size => SHAPES.map(sh => [size, sh] as const))) {
    const samples = Object.fromEntries(VARIANTS.map(v => [v, timed.flatMap(t => t.samples[n][shape][v])])) as Record<Variant, Sample[]>;
    const runs = samples['hand-legacy'].length;
    const med = (v: Variant, c: Clock): Times => ({
      construct: median(samples[v].map(x => x[c].construct)),
      synth: median(samples[v].map(x => x[c].synth)),
      total: median(samples[v].map(x => x[c].total)),
    });
    const byVariant = (c: Clock) => Object.fromEntries(VARIANTS.map(v => [v, med(v, c)])) as Record<Variant, Times>;
    const medians = Object.fromEntries(CLOCKS.map(c => [c, byVariant(c)])) as Record<Clock, Record<Variant, Times>>;
    const ratio = (v: Variant, c: Clock) => medians[c][v].total / medians[c]['hand-legacy'].total;
    // The same round's runs side by side: median of the per-round ratios (the ratio target).
    const pairRatio = (v: Variant, c: Clock) => median(samples[v].map((x, i) => x[c].total / samples['hand-legacy'][i][c].total));
    results.sizes[n] ??= {};
    results.sizes[n][shape] = {
      runs,
      samples,
      medians,
      ratio: Object.fromEntries(CLOCKS.map(c => [c, Object.fromEntries(LIB_VARIANTS.map(v => [v, ratio(v, c)]))])),
      pairRatio: Object.fromEntries(CLOCKS.map(c => [c, Object.fromEntries(LIB_VARIANTS.map(v => [v, pairRatio(v, c)]))])),
    };
    console.log(`N=${n} ${shape}: ${runs} rounds in ${processes} processes; median ms (construct + synth = total), wall clock | CPU time:`);
    for (const v of VARIANTS) {
      const w = medians.wall[v];
      const c = medians.cpu[v];
      console.log(`  ${v.padEnd(12)} ${fmt(w.construct)} + ${fmt(w.synth)} = ${fmt(w.total)} (${(w.total / n * 1000).toFixed(0)} µs/workload) | ` +
        `${fmt(c.construct)} + ${fmt(c.synth)} = ${fmt(c.total)} (${(c.total / n * 1000).toFixed(0)} µs/workload)`);
    }
    for (const c of CLOCKS) {
      console.log(`  lib/hand (${c}), median of per-round ratios: ${LIB_VARIANTS.map(v => `${v} ${pairRatio(v, c).toFixed(3)} (ratio of medians ${ratio(v, c).toFixed(3)})`).join(', ')}`);
    }
    console.log('');
  }

  // Growth: time per workload at the largest size over that at the smallest, per shape.
  const small = sizes[0];
  const large = sizes[sizes.length - 1];
  results.growth = Object.fromEntries(SHAPES.map(shape => [shape, Object.fromEntries(CLOCKS.map(c => [c, Object.fromEntries(VARIANTS.map(v => [v,
    (results.sizes[large][shape].medians[c][v].total / large) / (results.sizes[small][shape].medians[c][v].total / small)]))]))]));

  results.check = checkTimes(checkSize, checkCount);
  console.log(`cdk8s-sidecars check over ${results.check.files} files: median CPU ${fmt(results.check.cpu)} ms, wall ${fmt(results.check.wall)} ms`);
  results.peers = peerTimes(checkSize, 20, peerCount);
  const p = results.peers;
  console.log(`over what cdk8s synth writes for ${p.workloads} workloads (${p.objects} objects in ${p.files} files), median CPU of ${p.count} runs each: ` +
    `cdk8s-sidecars check ${fmt(p.check.cpu)} ms; kubeconform ${p.kubeconform.why ?? `${fmt(p.kubeconform.cpu)} ms; check / kubeconform ${p.ratio.toFixed(2)}`}; kube-linter ${p.kubeLinter.why ?? `${fmt(p.kubeLinter.cpu)} ms; check / kube-linter ${p.kubeLinter.ratio.toFixed(2)}`}`);

  // Peak memory, one fresh process per variant and size (shape service); `--no-memory` skips it (a smoke run).
  if (!noMemory) {
    results.memory = { baseline: memory('none', 0) };
    for (const n of sizes) {
      results.memory[n] = Object.fromEntries(VARIANTS.map(v => [v, memory(v, n)]));
    }
  }

  results.imports = importTimes(importCount);
  const imp = results.imports;
  console.log(`import, whole processes (median of ${imp.count} each): cdk8s-plus-27 ${fmt(imp.alone.procCpu)} ms CPU, with the library ${fmt(imp.withLib.procCpu)} ms CPU: ` +
    `the library's share ${imp.share.procCpu.toFixed(1)} ms (median of the pairs' differences ${imp.share.pairedCpu.toFixed(1)} ms)`);
  results.machine.after = machine();
  results.minutes = (now() - start) / 60_000;
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'results.json'), JSON.stringify(results, null, 2));
  const report = markdown(results);
  fs.writeFileSync(path.join(OUT, 'results.md'), report);
  console.log(report);
  if (!process.argv.includes('--no-doc')) {
    writeDoc(report);
    console.log(`Written into ${path.relative(ROOT, DOC)} (between its bench:begin / bench:end markers).`);
  }
}

/** Replaces the generated block of bench/README.md. */
function writeDoc(block: string): void {
  const text = fs.readFileSync(DOC, 'utf8');
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin || text.indexOf(BEGIN, begin + 1) >= 0 || text.indexOf(END, end + 1) >= 0) {
    throw new Error(`${DOC}: expected one line "${BEGIN}" followed by one line "${END}"`);
  }
  fs.writeFileSync(DOC, `${text.slice(0, begin + BEGIN.length)}\n${block}${text.slice(end)}`);
}

/** Each target's measured value (see targets.ts for the definitions) and where it was found. */
function measure(r: any): Record<TargetId, { value?: number; where: string }> {
  const sizes: number[] = r.config.sizes;
  const cells = sizes.flatMap(n => SHAPES.flatMap(shape => LIB_VARIANTS.map(v => ({ value: r.sizes[n][shape].pairRatio.cpu[v] as number, where: `${v}, ${shape}, N=${n}` }))));
  const ratio = cells.reduce((a, b) => (b.value > a.value ? b : a));
  const growths = SHAPES.flatMap(shape => LIB_VARIANTS.map(v => ({ value: r.growth[shape].cpu[v] as number, where: `${v}, ${shape}` })));
  const growth = growths.reduce((a, b) => (b.value > a.value ? b : a));
  const small = sizes[0];
  const large = sizes[sizes.length - 1];
  return {
    ratio,
    growth: sizes.length > 1 ? { value: growth.value, where: `${growth.where}, N=${large} vs N=${small}` } : { where: `only N=${small}` },
    import: { value: r.imports.share.procCpu, where: `medians of ${r.imports.count} processes each` },
    check: r.check.n === 2000
      ? { value: r.check.cpu / 1000, where: `median of ${r.check.count} processes, ${r.check.files} files` }
      : { where: `only ${r.check.n} Deployments` },
    kubeconform: r.peers.ratio === undefined || r.peers.workloads !== 2000
      ? { where: r.peers.ratio === undefined ? `kubeconform ${r.peers.kubeconform.why}` : `only ${r.peers.workloads} workloads` }
      : { value: r.peers.ratio, where: `${r.peers.count} runs each, ${r.peers.objects} objects in ${r.peers.files} files` },
  };
}

function markdown(r: any): string {
  const sizes: number[] = r.config.sizes;
  const small = sizes[0];
  const large = sizes[sizes.length - 1];
  const { before, after } = r.machine;
  const lines: string[] = [];
  const settings = `sizes ${sizes.join(', ')}; rounds ${sizes.map(n => r.sizes[n].service.runs).join(' / ')}; timing processes ${r.config.processes}; ` +
    `JIT warm-up rounds ${r.config.warmup}; import processes ${r.config.imports}; check processes ${r.config.checks}; peer runs ${r.config.peers}`;
  lines.push(r.full
    ? `**Full run** of \`npm run bench\` (${settings}).`
    : `**Smoke run**, not the documented measurement (${settings}): regenerate this block with \`npm run bench\` on a quiet machine.`);
  lines.push('');
  lines.push(`Commit \`${before.commit}\`, Node ${before.node}, ${before.cpus} CPUs (${before.cpu}), ${before.memGb} GiB; ` +
    `load average (1, 5, 15 min) ${load(before)} before, ${load(after)} after; ${r.minutes.toFixed(1)} min, finished ${after.date.slice(0, 16).replace('T', ' ')} UTC.`);
  if (Math.max(before.loadavg[0], after.loadavg[0]) > before.cpus) {
    lines.push('');
    lines.push(`**The load average exceeded the ${before.cpus} CPUs: other processes disturbed these figures.**`);
  }

  lines.push('');
  lines.push('### Targets');
  lines.push('');
  lines.push('| target | measured as | limit | measured | result |');
  lines.push('|---|---|---|---|---|');
  const measured = measure(r);
  for (const t of TARGETS) {
    const m = measured[t.id];
    const j = m.value === undefined ? { printed: 'n/a', verdict: NOT_MEASURED } : judge(t, m.value);
    lines.push(`| ${t.title} | ${t.measure} | ${limitText(t)} | ${j.printed} (${m.where}) | ${j.verdict} |`);
  }

  lines.push('');
  lines.push('### Synthesis');
  lines.push('');
  lines.push('| N | shape | variant | rounds | construct ms (wall) | synth ms (wall) | total ms (wall) | total ms (CPU) | CPU µs / workload | lib / hand (CPU) | lib / hand (wall) | peak RSS MB | retained heap MB |');
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const n of sizes) {
    for (const shape of SHAPES) {
      const s = r.sizes[n][shape];
      for (const v of VARIANTS) {
        const w = s.medians.wall[v];
        const c = s.medians.cpu[v];
        const ratio = (k: Clock) => (v === 'hand-legacy' ? '1' : s.pairRatio[k][v].toFixed(3));
        const mem = shape === 'service' ? r.memory?.[n][v] : undefined;
        lines.push(`| ${n} | ${shape} | ${v} | ${s.runs} | ${fmt(w.construct)} | ${fmt(w.synth)} | ${fmt(w.total)} | ${fmt(c.total)} | ` +
          `${(c.total / n * 1000).toFixed(1)} | ${ratio('cpu')} | ${ratio('wall')} | ${mem ? mem.maxRssMb.toFixed(0) : ''} | ${mem ? mem.retainedMb.toFixed(1) : ''} |`);
      }
    }
  }
  lines.push('');
  lines.push('Medians over the rounds (of each column, so construct + synth is not exactly the total). ' +
    'CPU: user + system time of the process, every thread. "lib / hand": per round, the library run ' +
    `over the hand-written run of the same round, median over the rounds of the ${r.config.processes} timing processes. ` +
    'Shapes: `service`, each Deployment with a Service ' +
    'in front of Envoy; `hpa`, also with a HorizontalPodAutoscaler. ' + (r.memory
    ? 'Peak RSS (shape service): one fresh process per variant and ' +
      `size; a process that only loads the modules peaks at ${r.memory.baseline.maxRssMb.toFixed(0)} MB.`
    : 'Peak RSS: not measured in this run (`--no-memory`).'));
  if (sizes.length > 1) {
    for (const shape of SHAPES) {
      lines.push('');
      lines.push(`Time per workload at N=${large} over that at N=${small} (${shape}): ` +
        CLOCKS.map(k => `${k === 'cpu' ? 'CPU' : 'wall clock'} ${VARIANTS.map(v => `${v} ${r.growth[shape][k][v].toFixed(2)}x`).join(', ')}`).join('; ') + '.');
    }
  }

  const c = r.check;
  lines.push('');
  lines.push('### Check');
  lines.push('');
  lines.push('| `cdk8s-sidecars check` over | files | findings | process CPU s | process wall s |');
  lines.push('|---|---|---|---|---|');
  lines.push(`| ${c.n} Deployments and their Services (lib-native) | ${c.files} | ${c.findings} | ${(c.cpu / 1000).toFixed(2)} | ${(c.wall / 1000).toFixed(2)} |`);
  lines.push('');
  lines.push(`Medians of ${c.count} fresh processes of the compiled bin (after one discarded run that warms the file system cache); ` +
    'CPU: user + system time of the whole process, from its start to its exit.');

  const i = r.imports;
  lines.push('');
  lines.push('### Import');
  lines.push('');
  lines.push('| a fresh process loads | process CPU ms | process wall ms | require CPU ms | require wall ms |');
  lines.push('|---|---|---|---|---|');
  lines.push(`| cdk8s-plus-27 | ${fmt(i.alone.procCpu)} | ${fmt(i.alone.process)} | ${fmt(i.alone.cpu)} | ${fmt(i.alone.wall)} |`);
  lines.push(`| cdk8s-plus-27, then the library | ${fmt(i.withLib.procCpu)} | ${fmt(i.withLib.process)} | ${fmt(i.withLib.cpu)} | ${fmt(i.withLib.wall)} |`);
  lines.push(`| of which the library | ${i.share.procCpu.toFixed(1)} | ${fmt(i.share.process)} | ${i.withLib.libCpu.toFixed(1)} | ${fmt(i.withLib.libWall)} |`);
  lines.push('');
  lines.push(`Medians of ${i.count} fresh processes each, alternating (after one discarded pair that warms the file system cache); ` +
    '"of which the library": the difference of the medians (the `require()` columns: the median of the library\'s own `require()`). ' +
    `Process CPU: from the process's start to the end of its \`require()\` calls; the median of the pairs' differences: ${i.share.pairedCpu.toFixed(1)} ms.`);

  const p = r.peers;
  lines.push('');
  lines.push('### Check against the pipeline linters');
  lines.push('');
  lines.push('| tool | objects | files | process CPU s | process wall s | check / tool (CPU) |');
  lines.push('|---|---|---|---|---|---|');
  lines.push(`| \`cdk8s-sidecars check\` | ${p.objects} | ${p.files} | ${(p.check.cpu / 1000).toFixed(2)} | ${(p.check.wall / 1000).toFixed(2)} | 1 |`);
  lines.push(p.kubeconform.why
    ? `| kubeconform -strict | | | not measured: ${p.kubeconform.why} | | |`
    : `| kubeconform ${p.kubeconform.version} -strict | ${p.objects} | ${p.files} | ${(p.kubeconform.cpu / 1000).toFixed(2)} | ${(p.kubeconform.wall / 1000).toFixed(2)} | ${p.ratio.toFixed(2)} |`);
  lines.push(p.kubeLinter.why
    ? `| kube-linter | | | not measured: ${p.kubeLinter.why} | | |`
    : `| kube-linter ${p.kubeLinter.version} (default checks) | ${p.objects} | ${p.files} | ${(p.kubeLinter.cpu / 1000).toFixed(2)} | ${(p.kubeLinter.wall / 1000).toFixed(2)} | ${p.kubeLinter.ratio.toFixed(2)} |`);
  lines.push('');
  lines.push(`What \`cdk8s synth\` writes for ${p.workloads} workloads (a Deployment with Fluent Bit and Envoy, native at Kubernetes 1.33, and its Service: ` +
    `${p.objects} objects in ${p.files} YAML files), the same files for each tool: \`cdk8s-sidecars check --kubernetes-version 1.33\` (the compiled bin) and ` +
    `\`kubeconform -strict -kubernetes-version ${p.release}\` against the schemas generated from that release's swagger.json (as \`npm run test:linters\`); ` +
    `each read every object and found nothing wrong${p.kubeLinter.why ? '' : `; \`kube-linter lint --format json\` with its default checks (${p.kubeLinter.reports} reports: the app's own choices, as in \`npm run test:linters\`)`}. ${p.count} runs of each, alternating (after one discarded pair); CPU: user + system of the whole process ` +
    'and its threads, from outside (the children\'s times in /proc); medians, and the median of the per-pair ratios.');

  lines.push('');
  lines.push('### Equivalence');
  lines.push('');
  for (const n of sizes) {
    for (const shape of SHAPES) {
      const e = r.equivalence[`${n} ${shape}`];
      lines.push(`- N=${n}, ${shape}: hand-legacy vs lib-legacy: ${e.legacy}; lib-native: ${e.native}.`);
    }
  }
  return lines.join('\n') + '\n';
}

main();
