/**
 * SidecarInjectionPolicy run by Kubernetes' own MutatingAdmissionPolicy code (`npm run
 * test:k8s-api`): test/k8s-api/map-eval, k8s.io/apiserver v0.37.2's compiler and JSON patcher,
 * compiles the policy as the API server does when it is created and when it runs, and patches the
 * pods of the offline test's cases (test/util/injection-cases.ts); each admitted pod must equal,
 * field by field, the pod the library synthesizes for the same workload, after the documented
 * differences. The same cases as test/sidecar-injection-policy.test.ts (@bufbuild/cel and this
 * project's stand-ins for Kubernetes' CEL parts): this one has no stand-in.
 *
 * Needs Go 1.25+ and the Go module proxy (or a module cache with k8s.io/apiserver v0.37.2); the
 * binary is cached in ~/.cache/cdk8s-sidecars/map-eval. Without Go it says how to get it.
 */
import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Testing } from 'cdk8s';
import { newChart } from '../util/fixtures';
import { AGENTS, Json, POD_SPECS, podOf, policyFor, synthesized, workload, normalized } from '../util/injection-cases';

const SOURCE = path.join(__dirname, 'map-eval');
const CACHE = path.join(process.env.CDK8S_SIDECARS_CACHE ?? path.join(os.homedir(), '.cache', 'cdk8s-sidecars'), 'map-eval');

/** Builds map-eval once per machine and source; its path, or why it cannot be had. */
function mapEval(): { binary?: string; why?: string } {
  const go = ['/usr/local/go/bin/go', 'go'].find(g => spawnSync(g, ['version']).status === 0);
  if (!go) return { why: 'no Go toolchain (Go 1.25+: /usr/local/go/bin/go or go on PATH)' };
  const hash = createHash('sha256');
  for (const f of ['main.go', 'go.mod', 'go.sum']) hash.update(fs.readFileSync(path.join(SOURCE, f)));
  hash.update(spawnSync(go, ['version'], { encoding: 'utf8' }).stdout);
  const binary = path.join(CACHE, `map-eval-${hash.digest('hex').slice(0, 16)}`);
  if (fs.existsSync(binary)) return { binary };
  fs.mkdirSync(CACHE, { recursive: true });
  const tmp = `${binary}.${process.pid}.tmp`;
  const res = spawnSync(go, ['build', '-o', tmp, '.'], {
    cwd: SOURCE, encoding: 'utf8', timeout: 1_200_000, env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
  });
  if (res.status !== 0) return { why: `go build in ${SOURCE} failed: ${(res.stderr ?? '').trim().split('\n').slice(-5).join(' ')}` };
  fs.renameSync(tmp, binary);
  return { binary };
}

jest.setTimeout(1_800_000);
const built = mapEval();

/** Runs the policy on `pods` with Kubernetes' code: one outcome per pod. */
function run(policy: Json, pods: Json[]): Json[] {
  const file = path.join(os.tmpdir(), `map-eval-policy-${process.pid}.json`);
  fs.writeFileSync(file, JSON.stringify(policy));
  try {
    const r = spawnSync(built.binary!, [file], { input: pods.map(p => JSON.stringify(p)).join('\n') + '\n', encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    const errors = r.stderr.split('\n').filter(l => l.includes('mode ')); // compile errors (typeconverter noise aside)
    if (r.status !== 0 || errors.length > 0) throw new Error(`map-eval exited ${r.status}: ${errors.join('\n') || r.stderr.slice(-2000)}`);
    return r.stdout.trim().split('\n').map(l => JSON.parse(l));
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** The typed pod's JSON back to the manifest's: the zero values Go's encoder writes for a typed Pod. */
function untyped(pod: Json): Json {
  const out = structuredClone(pod);
  delete out.status;
  if (out.metadata?.creationTimestamp === null) delete out.metadata.creationTimestamp;
  for (const c of [...(out.spec.containers ?? []), ...(out.spec.initContainers ?? [])]) {
    if (c.resources && Object.keys(c.resources).length === 0) delete c.resources;
  }
  return out;
}

if (built.why) {
  test(`skipped: ${built.why}`, () => undefined);
} else {
  describe.each(['1.36', '1.37'])('Kubernetes\' MutatingAdmissionPolicy code (k8s.io/apiserver v0.37.2), target %s', version => {
    for (const [agents, attach] of Object.entries(AGENTS)) {
      test(`${agents}: every kind and pod shape equals synthesis`, () => {
        const { policy } = policyFor(attach, version);
        const cases: Array<{ name: string; pod: Json; expected: Json }> = [];
        for (const kind of ['Deployment', 'Job', 'StatefulSet']) {
          for (const [shape, podSpec] of Object.entries(POD_SPECS)) {
            const plain = Testing.synth((() => { const { chart } = newChart(); workload(chart, kind, podSpec); return chart; })())[0].spec.template;
            let template: Json;
            try {
              template = synthesized(kind, podSpec, attach, version);
            } catch (e) {
              // appShutdownTime given and a grace period below the need: synthesis refuses, the policy raises it (docs/admission.md)
              const need = /but its sidecars need (\d+)/.exec((e as Error).message);
              if (!need) throw e;
              template = synthesized(kind, { ...podSpec, terminationGracePeriodSeconds: Number(need[1]) }, attach, version);
            }
            cases.push({ name: `${kind}, ${shape}`, pod: podOf(kind, plain), expected: podOf(kind, template) });
          }
        }
        const outcomes = run(policy, cases.map(c => c.pod));
        const wrong: string[] = [];
        outcomes.forEach((o, i) => {
          if (!o.pod) {
            wrong.push(`${cases[i].name}: ${JSON.stringify(o).slice(0, 600)}`);
            return;
          }
          const got = normalized(untyped(o.pod));
          // the typed decode writes a quantity canonically (1000m as 1), as the API server stores both pods
          const want = JSON.parse(JSON.stringify(normalized(cases[i].expected)).replace(/"(\d+)000m"/g, '"$1"'));
          const d = differences(got, want);
          if (d.length > 0) wrong.push(`${cases[i].name}: ${d.slice(0, 8).join('; ')}`);
        });
        expect(wrong).toEqual([]);
        // a second run on the admitted pods changes nothing (reinvocation, a second policy)
        const again = run(policy, outcomes.map(o => o.pod));
        expect(again.map(o => o.skippedBy)).toEqual(outcomes.map(() => 'not-injected-yet'));
      });
    }
  });
}

/** The paths where two JSON values differ (key order aside: Go writes struct fields in their declared order). */
function differences(a: Json, b: Json, at = ''): string[] {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return [`${at}: ${a.length} entries against ${b.length}`];
    return a.flatMap((x, i) => differences(x, b[i], `${at}[${x?.name ?? i}]`));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort().flatMap(k => differences(a[k], b[k], `${at}.${k}`));
  }
  return a === b ? [] : [`${at}: ${JSON.stringify(a)} against ${JSON.stringify(b)}`];
}
