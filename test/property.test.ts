/**
 * Property-based tests: random workloads (every kind, cdk8s-plus-27 and raw ApiObjects), random
 * user containers, init containers (some of them native sidecars already), volumes, env and
 * patches, a random subset of the sidecar constructs in random creation order, random targets
 * 1.27-1.35 with and without the SidecarContainers gate, random modes.
 *
 * For every case the model (test/util/invariants.ts) says whether synthesis must fail and with
 * which messages. When it must succeed: valid against the strict schema of the release; the API
 * server's rules hold; each sidecar appears once, in the layout and order the docs promise; the
 * user's containers, init containers, volumes, env and patches are unchanged but for the
 * documented additions; every added container meets the restricted profile; terminated by the
 * simulated kubelet (test/util/kubelet-termination.ts) no container is cut short and every
 * sidecar outlives the app's last line; and the output is
 * byte-identical when the app is built and synthesized twice. When it must fail: exactly the
 * expected errors are reported, and nothing is written.
 *
 * Runs: FC_NUM_RUNS overrides the number of runs of each property, FC_SEED replays a run (the seed
 * is printed with every failure, with the counterexample).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import * as fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { ContainerCase, Scenario, buildScenario, inScenarioEnv, scenarioArb } from './util/arbitraries';
import {
  addedContainerViolations, apiRuleViolations, errorViolations, expectedErrors, layoutViolations,
  manifestSetViolations, moreApiRuleViolations, orderedFacts, schemaViolations, terminationViolations, workloadIndex,
} from './util/invariants';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const savedEnv = process.env[ENV];
beforeAll(() => { delete process.env[ENV]; });
afterAll(() => { if (savedEnv !== undefined) process.env[ENV] = savedEnv; });

const RUNS = process.env.FC_NUM_RUNS ? Number(process.env.FC_NUM_RUNS) : undefined;
const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;

function parameters(defaultRuns: number): fc.Parameters<[Scenario]> {
  return { numRuns: RUNS ?? defaultRuns, seed: SEED, endOnFailure: false };
}

/** What the runs covered, to be sure the generators reach every branch. */
interface Coverage {
  ok: number;
  failed: number;
  layouts: Set<string>;
  kinds: Set<string>;
  errors: Set<string>;
}

function newCoverage(): Coverage {
  return { ok: 0, failed: 0, layouts: new Set(), kinds: new Set(), errors: new Set() };
}

class Violations extends Error {}

function fail(title: string, violations: string[]): never {
  throw new Violations(`${title}:\n  - ${violations.join('\n  - ')}`);
}

/** Builds the scenario, synthesizes it and checks every invariant. Throws on a violation. */
function check(s: Scenario, coverage: Coverage): void {
  const base = Testing.synth(buildScenario(s, { withSidecars: false }).chart);
  const wi = workloadIndex(base);
  const baseline = base[wi];
  const expected = expectedErrors(s, baseline);
  coverage.kinds.add(`${s.workload.flavor} ${s.workload.kind}`);

  let yaml: string;
  try {
    const built = buildScenario(s, { withSidecars: true });
    yaml = inScenarioEnv(s, () => built.app.synthYaml());
  } catch (e) {
    const message = (e as Error).message;
    if (expected.length === 0) fail('synthesis failed, but the model expects success', [message]);
    const v = errorViolations(message, expected);
    if (v.length > 0) fail('synthesis failed with other errors than the model expects', [...v, `message: ${message}`]);
    v.push(...nothingWritten(s, message));
    if (v.length > 0) fail('a failed synthesis wrote files', v);
    coverage.failed++;
    for (const x of expected) coverage.errors.add(x.category);
    return;
  }
  if (expected.length > 0) fail('synthesis succeeded, but the model expects errors', expected.map(x => `${x.why}: ${x.pattern}`));

  // cdk8s writes YAML 1.1: read it back the same way (e.g. `0o7` is a string in 1.1, an integer in 1.2)
  const manifests = parseAllDocuments(yaml, { version: '1.1' }).map(d => d.toJSON());
  const out = manifests[workloadIndex(manifests)];
  // Without sidecars the library must leave the workload alone (whatever the user wrote).
  const touched = s.sidecars.length > 0;
  const violations = [
    ...(touched ? schemaViolations(manifests, s.target.minor).map(x => `schema 1.${s.target.minor}: ${x}`) : []),
    ...(touched ? apiRuleViolations(s, out).map(x => `API server rule: ${x}`) : []),
    ...(touched ? moreApiRuleViolations(out).map(x => `API server rule: ${x}`) : []),
    ...layoutViolations(s, baseline, out),
    ...addedContainerViolations(s, baseline, out),
    ...manifestSetViolations(s, base, manifests),
    ...terminationViolations(s, baseline, out).map(x => `simulated termination: ${x}`),
  ];
  const rebuilt = buildScenario(s, { withSidecars: true });
  const again = inScenarioEnv(s, () => rebuilt.app.synthYaml());
  if (again !== yaml) violations.push('two syntheses of the same app differ');
  if (violations.length > 0) fail('invariants violated', violations);
  coverage.ok++;
  for (const f of orderedFacts(s, baseline.metadata.name)) coverage.layouts.add(`${f.type} ${f.layout}`);
}

/** A failed synthesis through `App.synth()` into a fresh directory leaves it empty. */
function nothingWritten(s: Scenario, message: string): string[] {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-prop-'));
  try {
    let threw = false;
    try {
      // the user's program: build the app (constructors may throw), then write it
      inScenarioEnv(s, () => buildScenario(s, { withSidecars: true, outdir }).app.synth());
    } catch (e) {
      threw = true;
      if ((e as Error).message !== message) return [`App.synth() failed differently from synthYaml(): ${(e as Error).message}`];
    }
    const files = fs.readdirSync(outdir);
    return [...(threw ? [] : ['App.synth() did not fail']), ...(files.length > 0 ? [`files written: ${files.join(', ')}`] : [])];
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}

function run(flavor: 'kplus' | 'raw', defaultRuns: number): Coverage {
  const coverage = newCoverage();
  const started = Date.now();
  fc.assert(fc.property(scenarioArb(flavor), s => check(s, coverage)), parameters(defaultRuns));
  // eslint-disable-next-line no-console
  console.log(
    `${flavor}: ${coverage.ok + coverage.failed} cases in ${Date.now() - started} ms: ${coverage.ok} synthesized, ` +
    `${coverage.failed} refused as the model expects\n` +
    `kinds: ${[...coverage.kinds].sort().join(', ')}\nlayouts: ${[...coverage.layouts].sort().join(', ')}\n` +
    `errors: ${[...coverage.errors].sort().join(', ')}`,
  );
  return coverage;
}

describe('property: any workload, any target, any subset of sidecars', () => {
  test('cdk8s-plus-27 workloads', () => {
    const c = run('kplus', 500);
    // the generators reach both outcomes (meaningful only with enough runs)
    if ((RUNS ?? 500) >= 100) {
      expect(c.ok).toBeGreaterThan(0);
      expect(c.failed).toBeGreaterThan(0);
    }
  });

  test('raw ApiObjects (also ReplicaSets, zero app containers, the user\'s own native sidecars)', () => {
    const c = run('raw', 500);
    if ((RUNS ?? 500) >= 100) {
      expect(c.ok).toBeGreaterThan(0);
      expect(c.failed).toBeGreaterThan(0);
    }
  });
});

/** A container the user adds between two syntheses (its name cannot collide with the generated ones). */
const LATE: ContainerCase = { name: 'late-worker', image: 'ghcr.io/example/worker:1.0.0', ports: [], env: [], mounts: [] };

/**
 * A synthesis does not depend on what was synthesized before in the same (synchronous) run: synthesize another
 * chart of the app (which validates, and so renders, the whole app), add a container to the workload, then
 * synthesize the workload's chart: the result equals a fresh build that had the container from the start.
 * (Found by this property: the binding once reused a validation's render across syntheses.)
 */
test('property: a synthesis does not reuse a render made before the app changed', () => {
  fc.assert(fc.property(scenarioArb(), s => {
    const base = Testing.synth(buildScenario(s, { withSidecars: false }).chart);
    fc.pre(s.sidecars.length > 0 && expectedErrors(s, base[workloadIndex(base)]).length === 0);
    const fresh = inScenarioEnv(s, () => {
      const built = buildScenario(s, { withSidecars: true });
      built.addContainer(LATE);
      return Testing.synth(built.chart);
    });
    const stateful = inScenarioEnv(s, () => {
      const built = buildScenario(s, { withSidecars: true });
      Testing.synth(new Chart(built.app, 'other'));
      built.addContainer(LATE);
      return Testing.synth(built.chart);
    });
    expect(stateful).toEqual(fresh);
  }), { numRuns: RUNS ?? 50, seed: SEED });
});
