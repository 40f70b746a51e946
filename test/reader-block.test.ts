/**
 * The reader's block-YAML path (issue 50): a document in the block YAML that cdk8s and Helm write
 * is read without the YAML parser (`readBlockDocument`), and its reading is the API server's and
 * the YAML parser's, always: the same values, the same line, and where the path is not certain it
 * gives the document to the YAML parser, which reads or refuses it as before.
 *
 * - the guard (no clock): what cdk8s writes, and Helm-style YAML, reaches the YAML parser 0 times;
 * - the hostile corpus, the fixtures and the snapshots: each read on both paths alike, and each
 *   document the block path takes read as the API server's reader (test/go-yaml-reader) reads it;
 * - a property: generated manifests written the ways cdk8s, kubectl and Helm write them (and
 *   mutated by a character or a line), read alike on both paths and as the API server reads them.
 * FC_NUM_RUNS sets the runs, FC_SEED replays another seed.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import * as fc from 'fast-check';
import { Sidecars, WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { describeOracle, oracle } from './util/api-server-yaml';
import { ODD_SCALARS, ODD_STRINGS, hostileCorpus } from './util/hostile-corpus';
import { parseJsonLossless } from './util/lossless-json';
import {
  DEFAULT_LIMITS, ReadLimits, YamlValue, breaksAsKubectl, canonical, decodeInput, readBlockDocument, readYaml, splitDocuments, yamlPackage,
} from '../src/cli/reader';

const ROOT = path.join(__dirname, '..');
const RUNS = process.env.FC_NUM_RUNS ? Number(process.env.FC_NUM_RUNS) : 300;
const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : 50;

/** A reading, or the error, comparable across the two paths. */
function outcome(text: string, fast: boolean, limits: ReadLimits = DEFAULT_LIMITS): string[] {
  try {
    return readYaml(text, 'f', limits, fast).map(d => `${d.index} line ${d.line}: ${canonical(d.value)}`);
  } catch (e) {
    return [`error: ${(e as Error).message}`];
  }
}

/** The YAML parser's calls while `run` runs. */
function yamlParses(run: () => void): number {
  const spy = jest.spyOn(yamlPackage().Parser.prototype, 'parse');
  try {
    run();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

/**
 * The 0-based numbers of the documents of `text` the block path takes, as `readYaml` splits and
 * reads them: none where the input is refused as a whole (its characters, its separators), none
 * from the first document it refuses on.
 */
function blockDocuments(text: string): number[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let read = Infinity;
  try {
    readYaml(text, 'f');
  } catch (e) {
    const m = /^f: document (\d+)/.exec((e as Error).message);
    read = m ? Number(m[1]) - 1 : 0;
  }
  if (read === 0) return [];
  return splitDocuments(body, 'f').slice(0, read === Infinity ? undefined : read)
    .flatMap((d, i) => (readBlockDocument(breaksAsKubectl(d.text)) ? [i] : []));
}

/** The Go reader (the API server's) over many streams: per stream, per document, the reading or the error. */
function goRead(streams: Buffer[]): Array<Array<{ ok?: YamlValue; error?: string }>> {
  const { binary, why } = oracle();
  if (!binary) throw new Error(why);
  const input = Buffer.concat(streams.flatMap(b => [Buffer.from(`${b.length}\n`), b]));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const res = require('child_process').spawnSync(binary, ['-batch'], { input, maxBuffer: 1024 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`go-yaml-reader failed: ${res.stderr}`);
  return res.stdout.toString('utf8').split('\n').filter((l: string) => l !== '').map((l: string) => parseJsonLossless(l) as any);
}

/**
 * Each document of each stream that the block path takes, against the API server's reading of the
 * stream: the differences (empty when all agree), and how many documents were compared.
 */
function againstApiServer(streams: Array<{ name: string; bytes: Buffer }>): { differ: string[]; compared: number } {
  const go = goRead(streams.map(s => s.bytes));
  const differ: string[] = [];
  let compared = 0;
  streams.forEach((s, i) => {
    let text: string;
    try {
      text = decodeInput(s.bytes, 'f');
    } catch {
      return;
    }
    const taken = blockDocuments(text);
    if (taken.length === 0) return;
    const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    const docs = splitDocuments(body, 'f');
    for (const k of taken) {
      compared++;
      const mine = canonical(readBlockDocument(breaksAsKubectl(docs[k].text))!.value);
      const theirs = go[i][k];
      if (!theirs || theirs.error !== undefined || canonical(theirs.ok === undefined ? null : theirs.ok) !== mine) {
        differ.push(`${s.name}: document ${k + 1}: block path ${mine.slice(0, 200)} / API server ${theirs ? (theirs.error ?? canonical(theirs.ok ?? null)).slice(0, 200) : 'no document'}`);
      }
    }
  });
  return { differ, compared };
}

// ---------------------------------------------------------------------------------------------
// The guard

/** What `cdk8s synth` writes for a small app of the library (both layouts, every agent, a Service). */
function synthesized(kubernetesVersion: string): string {
  const app = new App();
  Sidecars.configure(app, { kubernetesVersion });
  const chart = new Chart(app, 'c');
  for (let i = 0; i < 3; i++) {
    const workload = new kplus.Deployment(chart, `w${i}`, {
      containers: [{ name: 'app', image: `ghcr.io/example/w${i}:1.0`, ports: [{ number: 8080 }], securityContext: { user: 1000, group: 1000 } }],
    });
    new WithLogAgent(chart, `w${i}-logs`, { workload });
    new WithTracer(chart, `w${i}-tracer`, { workload, exporterEndpoint: 'otel-collector.observability:4317', exporterTls: false });
    new WithEnvoy(chart, `w${i}-envoy`, { workload, appPort: 8080 }).exposeVia(new kplus.Service(chart, `w${i}-svc`, { selector: workload }));
  }
  return app.synthYaml();
}

/** The same objects as Helm and kubectl write them: `# Source:` comments, sequences at their key's column, quoted strings. */
function helmStyle(yaml: string): string {
  const Y = yamlPackage();
  return Y.parseAllDocuments(yaml).map((d: any, i: number) =>
    `# Source: chart/templates/t${i}.yaml\n${Y.stringify(d.toJSON(), { indentSeq: false, lineWidth: 0, singleQuote: true })}`).join('---\n');
}

describe('the guard: what cdk8s and Helm write never reaches the YAML parser', () => {
  test.each(['1.27', '1.29', '1.33'])('cdk8s synth of the library\'s app at %s: 0 parses, every document on the block path, read as the YAML parser reads it', version => {
    const yaml = synthesized(version);
    const documents = yaml.split(/^---$/m).length;
    expect(documents).toBeGreaterThan(10);
    expect(blockDocuments(yaml)).toHaveLength(documents);
    expect(yamlParses(() => expect(readYaml(yaml, 'f')).toHaveLength(documents))).toBe(0);
    expect(outcome(yaml, true)).toEqual(outcome(yaml, false));
    const helm = helmStyle(yaml);
    expect(yamlParses(() => expect(readYaml(helm, 'f')).toHaveLength(documents))).toBe(0);
    expect(outcome(helm, true)).toEqual(outcome(helm, false));
    expect(readYaml(helm, 'f').map(d => canonical(d.value))).toEqual(readYaml(yaml, 'f', DEFAULT_LIMITS, false).map(d => canonical(d.value)));
  });

  test('what it does not take reaches the YAML parser once per document', () => {
    const flow = 'a: {b: 1}\n---\nc: &x 1\nd: *x\n---\ne: >\n  folded\n';
    expect(blockDocuments(flow)).toEqual([]);
    expect(yamlParses(() => readYaml(flow, 'f'))).toBe(3);
  });
});

// ---------------------------------------------------------------------------------------------
// Listed cases: taken or not, the reading is the YAML parser's

describe('listed cases: both paths read alike', () => {
  test.each([
    // [text, block path taken]
    ['a: 1\nb: x\n', true],
    ['a:\n  - 1\n  - x\n', true],
    ['a:\n- 1\n- x\nb: 2\n', true],
    ['- a: 1\n  b: 2\n- c\n', true],
    ['a: "x\\ty\\u00e9\\x41\\U0001F600\\"\\\\"\n', true],
    ["a: 'x\"y'\n", true],
    ["a: 'it''s'\n", false],
    ['a: |\n  x\n\n  y\n\n\nb: 1\n', true],
    ['a: |-\n  x\n  y\n', true],
    ['a: |+\n  x\n\n', true],
    ['a: |\n  x\n    \n   y\n', true],
    ['a: |\n  x\n  \ty\n', true],
    ['a: |\n  x', false],
    ['a: |2\n   x\n', false],
    ['a: >\n  x\n', false],
    ['a: |\n \n  x\n', false],
    ['a: |\n x\n', false],
    ['a: []\nb: {}\n', true],
    ['a: [1]\n', false],
    ['a: x # c\n', false],
    ['# c\n\na: 1\n  # c\nb: 2\n', true],
    ['a: 1\n\t\nb: 2\n', false],
    ['a:\tb\n', false],
    ['a: - x\n', false],
    ['a: &x 1\n', false],
    ['a: !!str 1\n', false],
    ['a: 1\na: 2\n', false],
    ['__proto__: 1\n', false],
    ['<<: {a: 1}\n', false],
    ['y: 1\n', false],
    ['1: x\n', false],
    ['a: yes\nb: 0o17\nc: 12:30\nd: 9007199254740993\ne: 1e400\nf: ~\ng: 0x1F\nh: -0\n', true],
    ['a: yes\nb: 0o17\nd: 9007199254740993\nf: ~\ng: 0x1F\nh: -0\ni: 1_000\nj: .5\nk: 017\n', true],
    ['a: .inf\n', false],
    ['a: x\n  y\n', false],
    ['a:\n  x\n', false],
    ['a: "x\n  y"\n', false],
    ['a: "x\\/y"\n', false],
    ['a: "\\ud83d"\n', false],
    ['a: x\u00e9\n', false],
    ['a: "x\u00e9"\n', true],
    ['a: \ufeffx\n', false],
    ['a: x\n...\n', false],
    ['  a: 1\n', false],
    ['x\n', false],
    ['- - a\n', false],
    ['-\n  a: 1\n', false],
    ['a: b: c\n', false],
    ['a: http://x/?a=b&c=[d]{e},f\n', true],
    ['a: -x\nb: --y\nc: $(X)\nd: ~/x\n', true],
    ['"a b": 1\n\'c:d\': 2\n', true],
    [`${'k'.repeat(1001)}: 1\n`, false],
  ])('%j', (text, taken) => {
    expect(blockDocuments(text).length > 0).toBe(taken);
    expect(outcome(text, true)).toEqual(outcome(text, false));
  });

  test('past the node or depth limit: the YAML parser says so', () => {
    const limits: ReadLimits = { ...DEFAULT_LIMITS, maxNodes: 10 };
    const text = `a:\n${Array.from({ length: 20 }, (_, i) => `  - ${i}\n`).join('')}`;
    expect(readBlockDocument(text, limits)).toBeUndefined();
    expect(outcome(text, true, limits)).toEqual(outcome(text, false, limits));
    expect(outcome(text, true, limits)[0]).toMatch(/more than 10 nodes/);
    const deep = Array.from({ length: 8 }, (_, i) => `${' '.repeat(2 * i)}k:\n`).join('') + `${' '.repeat(16)}x: 1\n`;
    expect(readBlockDocument(deep, { ...DEFAULT_LIMITS, maxDepth: 5 })).toBeUndefined();
    expect(outcome(deep, true, { ...DEFAULT_LIMITS, maxDepth: 5 })).toEqual(outcome(deep, false, { ...DEFAULT_LIMITS, maxDepth: 5 }));
  });
});

// ---------------------------------------------------------------------------------------------
// Against the API server's reader

/** The options of the writers: cdk8s' (`Yaml.stringify`), kubectl's and Helm's way (sequences at their key's column), quotes. */
const WRITERS = [
  { keepUndefined: true, lineWidth: 0, version: '1.1' },
  { lineWidth: 0, indentSeq: false },
  { lineWidth: 0, indentSeq: false, singleQuote: true, indent: 4 },
  { lineWidth: 0, defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN' },
  { lineWidth: 0, blockQuote: 'literal' },
];

function corpus(): Array<{ name: string; bytes: Buffer }> {
  const files = hostileCorpus().map(f => ({ name: f.name, bytes: f.bytes }));
  for (const s of ODD_SCALARS) files.push({ name: `scalar ${s}`, bytes: Buffer.from(`a: ${s}\nb:\n  - ${s}\n- ${s}: c\n`) });
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(e.name)) files.push({ name: path.relative(ROOT, p), bytes: fs.readFileSync(p) });
    }
  };
  walk(path.join(ROOT, 'test', 'fixtures'));
  walk(path.join(ROOT, 'test', '__snapshots__'));
  // each file the YAML parser reads (up to 100 KB: the big ones are bombs and depths, on the parser's path), written again as cdk8s writes
  for (const f of files.filter(x => x.bytes.length <= 100_000)) {
    try {
      const docs = readYaml(decodeInput(f.bytes, 'f'), 'f', DEFAULT_LIMITS, false);
      files.push({ name: `${f.name}, as cdk8s writes it`, bytes: Buffer.from(docs.map(d => yamlPackage().stringify(d.value, WRITERS[0])).join('---\n')) });
    } catch {
      // refused: nothing to write
    }
  }
  for (const v of ['1.27', '1.29', '1.33']) {
    const yaml = synthesized(v);
    files.push({ name: `synth ${v}`, bytes: Buffer.from(yaml) }, { name: `synth ${v}, Helm style`, bytes: Buffer.from(helmStyle(yaml)) });
  }
  return files;
}

describeOracle('the hostile corpus, the fixtures and the snapshots', () => {
  test('both paths read every file alike, and each document the block path takes as the API server reads it', () => {
    const files = corpus();
    expect(files.length).toBeGreaterThan(400);
    const differ: string[] = [];
    for (const f of files) {
      let text: string;
      try {
        text = decodeInput(f.bytes, 'f');
      } catch {
        continue;
      }
      const a = outcome(text, true);
      const b = outcome(text, false);
      if (JSON.stringify(a) !== JSON.stringify(b)) differ.push(`${f.name}: ${JSON.stringify(a).slice(0, 200)} / ${JSON.stringify(b).slice(0, 200)}`);
    }
    expect(differ).toEqual([]);
    const api = againstApiServer(files);
    expect(api.differ).toEqual([]);
    // the block path took a good part of the corpus (and left the rest to the parser)
    expect(api.compared).toBeGreaterThan(500);
  }, 300_000);
});

// ---------------------------------------------------------------------------------------------
// Generated manifests

const KEYS = ['apiVersion', 'kind', 'metadata', 'name', 'labels', 'app.kubernetes.io/name', 'cdk8s.io/metadata.addr', 'data', 'spec', 'a', 'b',
  'y', 'on', 'No', 'null', 'True', '1', '0o17', '1.5', '-x', '_x', '.x', '/x', 'a b', 'a:b', 'a: b', '#x', 'x#y', 'é', '"q"', "'q'", '', ' ', '<<',
  '__proto__', 'constructor', 'toString', '- x', '? x', 'k\tv', 'k\nv', '---', '...', 'k'.repeat(30)];
const PIECES = ['a', 'Z', '0', '9', ' ', '  ', '#', ':', ': ', ' #', '-', '- ', '?', ',', '[', ']', '{', '}', '"', "'", '\\', '/', '|', '>', '&', '*',
  '!', '%', '@', '`', '~', '.', '=', '<', '\t', '\n', '\n\n', '\n  ', '  \n', '\r\n', 'é', '日', '😀', '\u00a0', '\u0085', '\u2028', '\u007f', '\u0007',
  '\ufeff', 'yes', 'no', 'null', '0x1F', '1e3', '---', '...', '\\u00e9', '\\x41'];
const str = fc.oneof(
  fc.constantFrom(...ODD_STRINGS, ...ODD_SCALARS),
  fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }).map(p => p.join('')),
  fc.string({ maxLength: 10 }),
);
const scalar = fc.oneof(
  str,
  fc.integer({ min: -1000, max: 100000 }),
  fc.constantFrom(0, -0, 1.5, 1e21, 2 ** 53, 2 ** 53 + 2, -1e-7, true, false, null),
  fc.bigInt({ min: -(2n ** 65n), max: 2n ** 65n }),
);
const { value: manifestValue } = fc.letrec<{ value: unknown; map: Record<string, unknown>; list: unknown[] }>(tie => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('map'), tie('list')),
  map: fc.dictionary(fc.oneof(fc.constantFrom(...KEYS), str), tie('value'), { maxKeys: 5 }),
  list: fc.array(tie('value'), { maxLength: 4 }),
}));
const manifest = fc.record({ apiVersion: fc.constant('v1'), kind: fc.constantFrom('ConfigMap', 'Deployment'), metadata: fc.record({ name: str }), data: manifestValue });
const written = fc.tuple(fc.array(manifest, { minLength: 1, maxLength: 3 }), fc.nat(WRITERS.length - 1), fc.boolean())
  .map(([docs, w, comments]) => docs.map((d, i) => (comments ? `# Source: chart/templates/t${i}.yaml\n` : '') + yamlPackage().stringify(d, WRITERS[w])).join('---\n'));
/** A character or a line put in, taken out or repeated somewhere in a text. */
const edit = fc.tuple(fc.nat(), fc.nat(3), fc.constantFrom(...PIECES));
const mutated = fc.tuple(written, fc.array(edit, { minLength: 1, maxLength: 3 })).map(([text, edits]) => {
  let t = text;
  for (const [at, how, piece] of edits) {
    const k = at % (t.length + 1);
    if (how === 0) {t = t.slice(0, k) + piece + t.slice(k);} else if (how === 1) {t = t.slice(0, k) + t.slice(k + 1);} else {
      const start = t.lastIndexOf('\n', k - 1) + 1;
      const end = t.indexOf('\n', k);
      const line = t.slice(start, end < 0 ? t.length : end + 1);
      t = how === 2 ? t.slice(0, start) + line + t.slice(start) : t.slice(0, start) + ' ' + t.slice(start);
    }
  }
  return t;
});

describeOracle('generated manifests: the same reading on both paths and as the API server reads it', () => {
  test.each([['as written', written], ['mutated', mutated]] as const)('%s', (_name, texts) => {
    const seen: Array<{ name: string; bytes: Buffer }> = [];
    let documents = 0;
    let taken = 0;
    fc.assert(
      fc.property(texts, text => {
        const a = outcome(text, true);
        const b = outcome(text, false);
        expect(a).toEqual(b);
        documents += text.split(/^---/m).length;
        taken += blockDocuments(text).length;
        seen.push({ name: JSON.stringify(text).slice(0, 300), bytes: Buffer.from(text) });
      }),
      { numRuns: RUNS, seed: SEED },
    );
    const api = againstApiServer(seen);
    expect(api.differ).toEqual([]);
    // the property went through the block path, and past it
    expect(taken).toBeGreaterThan(documents / 10);
    expect(taken).toBeLessThan(documents);
  }, 300_000);
});
