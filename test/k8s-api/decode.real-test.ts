/**
 * The API types of every release (issue 30): every object the tests synthesize, decoded strictly
 * by the Kubernetes API types of its target release, as the API server reads a request body under
 * `fieldValidation=Strict` (test/k8s-api/decoder: k8s.io/api and k8s.io/apimachinery at the
 * release's tag, sigs.k8s.io/yaml and sigs.k8s.io/json's strict decoder; one binary per release,
 * built by scripts/build-k8s-decoders.sh). And where the decoder and the jsii-derived schemas of
 * test/util/k8s-schema.ts disagree, the test says so: the decoder is the reference.
 *
 *   npm run test:k8s-api      (builds the decoders once, cached, then runs this file)
 *
 * Not part of `jest --ci` (a `.real-test.ts`, which the test task's testMatch does not take): it needs the binaries and the dumps. Given K8S_DECODERS_DIR it runs;
 * without it, it says how to get them and skips, and fails under CI=true.
 *
 * What it decodes: the example app (examples/main.ts) for 1.27 and 1.29 as `cdk8s synth` writes
 * it; every manifest that the schema check accepted while the snapshot test files and the property
 * test (its generator, test/util/arbitraries.ts) ran, each for the release it was checked
 * against (K8S_API_DUMP, test/util/k8s-schema.ts); and a tenth of those once more at every release
 * from theirs up to the newest (what an upgraded cluster reads).
 */
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Yaml } from 'cdk8s';
import { schemaErrors } from '../util/k8s-schema';

const DIR = process.env.K8S_DECODERS_DIR;
const HOW = 'run `npm run test:k8s-api` (it builds the decoders with scripts/build-k8s-decoders.sh; needs Go and the Go module proxy)';
if (!DIR && process.env.CI === 'true') throw new Error(`test/k8s-api: K8S_DECODERS_DIR is not set under CI=true; ${HOW}`);
if (!DIR) console.warn(`test/k8s-api: skipped: K8S_DECODERS_DIR is not set; ${HOW}`);
const describeReal = DIR ? describe : describe.skip;
const RELEASES = DIR ? fs.readdirSync(DIR).filter(f => /^decoder-1\.\d+$/.test(f)).map(f => f.slice('decoder-'.length)).sort((a, b) => minor(a) - minor(b)) : [];
const ROOT = path.join(__dirname, '..', '..');

function minor(v: string): number { return Number(v.split('.')[1]); }

interface Decoded { file: string; index: number; apiVersion: string; kind: string; name: string; errors: string[] }
interface Source { label: string; release: string; manifests: any[] }

/** Decodes every source with the decoder of `release`: one file, one call. */
function decodeAll(sources: Source[], release: string): Array<Decoded & { label: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-decode-'));
  const file = path.join(dir, 'all.yaml');
  const labels = sources.flatMap(s => s.manifests.map(() => s.label));
  fs.writeFileSync(file, Yaml.stringify(...sources.flatMap(s => s.manifests)));
  const r = spawnSync(path.join(DIR!, `decoder-${release}`), [file], { encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024 });
  fs.rmSync(dir, { recursive: true, force: true });
  if (r.status !== 0 && r.status !== 1) throw new Error(`decoder-${release}: exit ${r.status} ${r.error ?? ''} ${r.stderr}`);
  return r.stdout.trim().split('\n').filter(Boolean).map(l => JSON.parse(l)).map((d: Decoded) => ({ ...d, label: labels[d.index] }));
}

/** Decodes each source at its own release; returns the documents with errors. */
function failures(sources: Source[]): string[] {
  const out: string[] = [];
  for (const release of [...new Set(sources.map(s => s.release))]) {
    const mine = sources.filter(s => s.release === release);
    const decoded = decodeAll(mine, release);
    const count = mine.reduce((n, s) => n + s.manifests.length, 0);
    if (decoded.length !== count) out.push(`release ${release}: ${decoded.length} documents decoded, ${count} written`);
    for (const d of decoded) if (d.errors.length) out.push(`${d.label} @${release}: ${d.kind}/${d.name}: ${d.errors.join('; ')}`);
  }
  return out;
}

/**
 * Every manifest that the schema check (test/util/k8s-schema.ts `schemaErrors`) accepted while
 * scripts/k8s-api-test.sh ran the snapshot test files and the property test with K8S_API_DUMP
 * set, each once per release.
 */
function dumpSources(): Source[] {
  const dir = process.env.K8S_API_DUMP;
  if (!dir) throw new Error(`test/k8s-api: K8S_API_DUMP is not set; ${HOW}`);
  const seen = new Set<string>();
  const out: Source[] = [];
  for (const file of fs.readdirSync(dir).filter(f => f.endsWith('.jsonl')).sort()) {
    for (const line of fs.readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean)) {
      if (seen.has(line)) continue;
      seen.add(line);
      const { release, manifest } = JSON.parse(line);
      out.push({ label: `${file}:${out.length} ${manifest.kind}/${manifest.metadata?.name}`, release, manifests: [manifest] });
    }
  }
  return out;
}

function exampleSources(): Source[] {
  const out: Source[] = [];
  for (const release of ['1.27', '1.29']) {
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-decode-example-'));
    execFileSync(path.join(ROOT, 'node_modules', '.bin', 'ts-node'), ['--transpile-only', '--project', 'examples/tsconfig.json', 'examples/main.ts'], {
      cwd: ROOT, env: { ...process.env, CDK8S_OUTDIR: outdir, CDK8S_SIDECARS_KUBERNETES_VERSION: release }, stdio: 'pipe',
    });
    for (const f of fs.readdirSync(outdir).filter(name => name.endsWith('.yaml')).sort()) {
      out.push({ label: `examples ${release} ${f}`, release, manifests: Yaml.load(path.join(outdir, f)) });
    }
    fs.rmSync(outdir, { recursive: true, force: true });
  }
  return out;
}

describeReal('the Kubernetes API types of every release, strict', () => {
  test('the decoders of every release from 1.27 to the newest are there', () => {
    expect(RELEASES[0]).toBe('1.27');
    expect(RELEASES.length).toBeGreaterThanOrEqual(9);
    expect(RELEASES.map(minor)).toEqual(RELEASES.map((_, i) => 27 + i));
  });

  test('the decoder can fail: an unknown field, a wrong type, an init container restartPolicy before 1.28, a duplicate key', () => {
    const pod = (container: any) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'x', ...container }] } });
    const decoded = (m: any, release: string) => decodeAll([{ label: 't', release, manifests: [m] }], release)[0].errors.join('; ');
    expect(decoded(pod({}), '1.27')).toBe('');
    expect(decoded(pod({ imagePullPolicyy: 'Always' }), '1.35')).toMatch(/unknown field "spec.containers\[0\].imagePullPolicyy"/);
    expect(decoded(pod({ ports: [{ containerPort: '80' }] }), '1.35')).toMatch(/fatal: .*cannot unmarshal string/);
    expect(decoded(pod({ ports: [{ containerPort: 80.5 }] }), '1.35')).toMatch(/fatal: .*80\.5/);
    const init = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'x' }], initContainers: [{ name: 'b', image: 'x', restartPolicy: 'Always' }] } };
    expect(decoded(init, '1.27')).toMatch(/unknown field "spec.initContainers\[0\].restartPolicy"/);
    expect(decoded(init, '1.28')).toBe('');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-decode-')), 'dup.yaml');
    fs.writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n');
    const r = spawnSync(path.join(DIR!, 'decoder-1.35'), [file], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/duplicate|already set/i);
  });

  test('the example app (examples/main.ts), for 1.27 and 1.29', () => {
    const sources = exampleSources();
    expect(sources.length).toBeGreaterThan(1);
    expect(failures(sources)).toEqual([]);
  }, 300_000);

  const accepted = DIR ? dumpSources() : [];

  test('every manifest the schema check accepted in the snapshot tests and the property test, for its release', () => {
    const releases = [...new Set(accepted.map(s => s.release))].sort();
    console.log(`test/k8s-api: ${accepted.length} distinct accepted manifests, releases ${releases.join(', ')}`);
    expect(accepted.length).toBeGreaterThan(200);
    expect(releases.length).toBeGreaterThanOrEqual(9);
    expect(failures(accepted)).toEqual([]);
  }, 600_000);

  // Every 10th of them, bounded: 11 releases x the whole set would take minutes more.
  const sample = accepted.filter((_, i) => i % 10 === 0);

  test('the same sample at every newer release (what an upgraded cluster reads)', () => {
    const newer = sample.flatMap(s => RELEASES.filter(r => minor(r) > minor(s.release)).map(release => ({ ...s, label: `${s.label} (target ${s.release})`, release })));
    expect(failures(newer)).toEqual([]);
  }, 600_000);

  /**
   * Where the jsii-derived schemas (test/util/k8s-schema.ts) and the decoder disagree on the same
   * object: objects the schema accepts must decode, and objects with one mutation (an unknown
   * field, a wrong type, a fractional integer) must be rejected by both.
   */
  test('the jsii-derived schemas agree with the decoder, mutations included', () => {
    const base = sample.filter(s => s.manifests[0].kind !== 'ConfigMap').slice(0, 60);
    const mutations: Array<[string, (m: any) => boolean]> = [
      ['unknown field', (m) => { m.spec = { ...m.spec, replicass: 1 }; return true; }],
      ['string for an object', (m) => { if (!m.metadata) return false; m.metadata.labels = 'app'; return true; }],
      ['fractional integer', (m) => {
        const c = (m.spec?.template?.spec ?? m.spec?.jobTemplate?.spec.template.spec ?? m.spec)?.containers?.[0];
        if (!c) return false;
        c.ports = [{ containerPort: 8080.5 }];
        return true;
      }],
    ];
    const disagreements: string[] = [];
    for (const [what, mutate] of [['none', () => true] as [string, (m: any) => boolean], ...mutations]) {
      const cases: Source[] = [];
      for (const s of base) {
        s.manifests.forEach((m, i) => {
          if (m.kind === 'ConfigMap' && what !== 'none' && what !== 'string for an object') return;
          const copy = JSON.parse(JSON.stringify(m));
          if (mutate(copy)) cases.push({ label: `${s.label}[${i}] ${what}`, release: s.release, manifests: [copy] });
        });
      }
      const goBad = new Set(failures(cases).map(f => f.split(' @')[0]));
      for (const c of cases) {
        const schemaBad = schemaErrors(c.manifests[0], c.release).length > 0;
        if (schemaBad !== goBad.has(c.label)) disagreements.push(`${what}: schema ${schemaBad ? 'rejects' : 'accepts'}, decoder ${goBad.has(c.label) ? 'rejects' : 'accepts'}`);
      }
    }
    const counts: Record<string, number> = {};
    for (const d of disagreements) counts[d] = (counts[d] ?? 0) + 1;
    console.log(`test/k8s-api: schema vs decoder disagreements: ${JSON.stringify(counts)}`);
    // Before issue 30 the schemas accepted a fractional number for an integer field (60 of these
    // cases); test/util/k8s-schema.ts now checks jsii numbers as integers.
    expect(counts).toEqual({});
  }, 600_000);
});
