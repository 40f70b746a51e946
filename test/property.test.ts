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
 * documented additions; every added container meets the restricted profile, has the documented
 * default resources (or the given ones) and hooks that run only what exists on the target
 * (test/util/hooks.ts), with the hook tools there exactly when a hook runs them; terminated by the
 * simulated kubelet (test/util/kubelet-termination.ts) no container is cut short, every sidecar
 * outlives the app's last line, and no preStop delay is a second longer than that needs; and the
 * output is byte-identical when the app is built and synthesized twice. When it must fail:
 * exactly the expected errors are reported (each naming its owner, the bad value and the fix),
 * and nothing is written.
 *
 * Runs: `npm test` runs a third of each property's full runs (no fewer than its coverage checks
 * need); `npm run test:property` (FC_FULL=1) runs the full ones, about 1000 cases; FC_NUM_RUNS
 * sets the runs of every property, FC_SEED replays a run (the seed is printed with every failure,
 * with the counterexample).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, Chart, Duration, Testing } from 'cdk8s';
import * as fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { AdoptSidecar } from '../src/adopt-sidecar';
import { SidecarCheck, SidecarQuit, SidecarVolume, WithSidecar } from '../src/with-sidecar';
import { readManifests } from './util/api-server-yaml';
import {
  AnyCheckCase, AnySidecarCase, ContainerCase, Scenario, anySidecarArb, buildScenario, inScenarioEnv, nativeWorks, renameToolsClashes, scenarioArb,
} from './util/arbitraries';
import { podSpecOf } from './util/fixtures';
import {
  addedContainerViolations, apiRuleViolations, canonical, errorViolations, expectedErrors, layoutViolations,
  manifestSetViolations, moreApiRuleViolations, orderedFacts, runsTools, schemaViolations, terminationViolations, workloadIndex,
} from './util/invariants';
import { cutShort, simulateTermination } from './util/kubelet-termination';
import { restrictedViolations } from './util/pss';
import { checkPodSpec } from '../src/engine/rules';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const savedEnv = process.env[ENV];
beforeAll(() => { delete process.env[ENV]; });
afterAll(() => { if (savedEnv !== undefined) process.env[ENV] = savedEnv; });

const RUNS = process.env.FC_NUM_RUNS ? Number(process.env.FC_NUM_RUNS) : undefined;
const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
const FULL = process.env.FC_FULL === '1' || process.env.FC_FULL === 'true';
/** The runs of a property whose full run is `full`: FC_NUM_RUNS, else all with FC_FULL, else a third (at least `min`). */
const runsOf = (full: number, min = 1) => RUNS ?? (FULL ? full : Math.max(min, Math.ceil(full / 3)));

function parameters(fullRuns: number): fc.Parameters<[Scenario]> {
  return { numRuns: runsOf(fullRuns, 100), seed: SEED, endOnFailure: false };
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
  // The baseline as the cluster reads it too (the output is read so below): a value of the user's
  // own that cdk8s' writer cannot carry (an env value '0B0', written plain and read as a number) is
  // not the library's to mend when it leaves the workload alone, and reads the same on both sides.
  const base = readManifests(buildScenario(s, { withSidecars: false }).app.synthYaml());
  const wi = workloadIndex(base);
  const baseline = base[wi];
  const tools = toolsOfRenamed(s);
  const expected = expectedErrors(s, baseline, tools);
  const required = expected.filter(e => !e.optional);
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
    for (const x of expected) coverage.errors.add(x.optional ? `${x.category} (tools unknown: allowed)` : x.category);
    return;
  }
  if (required.length > 0) fail('synthesis succeeded, but the model expects errors', required.map(x => `${x.why}: ${x.pattern}`));

  // as the cluster reads it: the API server's own YAML reader (test/util/api-server-yaml.ts)
  const manifests = readManifests(yaml);
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

/**
 * Whether the scenario's output has the hook tools, where the user (or a construct) uses their
 * name: seen on the output of the same scenario with those names renamed (undefined when nothing
 * is named so, or when that synthesis fails too).
 */
function toolsOfRenamed(s: Scenario): boolean | undefined {
  const renamed = renameToolsClashes(s);
  if (!renamed) return undefined;
  let yaml: string;
  try {
    const built = buildScenario(renamed, { withSidecars: true });
    yaml = inScenarioEnv(renamed, () => built.app.synthYaml());
  } catch {
    return undefined;
  }
  const manifests = parseAllDocuments(yaml, { version: '1.1' }).map(d => d.toJSON());
  const spec = podSpecOf(manifests[workloadIndex(manifests)]);
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])].some(runsTools);
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
    if (runsOf(500, 100) >= 100) {
      expect(c.ok).toBeGreaterThan(0);
      expect(c.failed).toBeGreaterThan(0);
    }
  });

  test('raw ApiObjects (also ReplicaSets, zero app containers, the user\'s own native sidecars)', () => {
    const c = run('raw', 500);
    if (runsOf(500, 100) >= 100) {
      expect(c.ok).toBeGreaterThan(0);
      expect(c.failed).toBeGreaterThan(0);
    }
  });
});

/** The scenario with the user's first app container, or a new volume of theirs, named 'sidecar-tools'. */
function withToolsName(s: Scenario, what: 'container' | 'volume'): Scenario {
  const w = s.workload;
  if (what === 'container' && w.containers.length > 0 && ![...w.containers, ...w.initContainers].some(c => c.name === 'sidecar-tools')) {
    return { ...s, workload: { ...w, containers: [{ ...w.containers[0], name: 'sidecar-tools' }, ...w.containers.slice(1)] } };
  }
  return w.volumes.includes('sidecar-tools') ? s : { ...s, workload: { ...w, volumes: [...w.volumes, 'sidecar-tools'] } };
}

/**
 * The hook tools' name is the library's only where its output has the tools: a user container or
 * volume named 'sidecar-tools' fails synthesis (naming the workload and the name) exactly when the
 * same scenario with the name changed synthesizes with the tools. (The main property meets such
 * names rarely, and then mostly among other errors: here every case is one of them.)
 */
test('property: a user name sidecar-tools is an error exactly where the output has the hook tools', () => {
  const coverage = newCoverage();
  fc.assert(fc.property(scenarioArb(), fc.constantFrom('container' as const, 'volume' as const), (s0, what) => {
    const s = withToolsName(s0, what);
    fc.pre(s.sidecars.length > 0 && toolsOfRenamed(s) !== undefined);
    check(s, coverage);
  }), { numRuns: runsOf(60, 60), seed: SEED });
  // eslint-disable-next-line no-console
  console.log(`sidecar-tools names: ${coverage.failed} refused (the output has the tools), ${coverage.ok} synthesized (it has none)`);
  // both outcomes: refused (the output has the tools) and synthesized (it has none)
  if (runsOf(60, 60) >= 60) {
    expect(coverage.failed).toBeGreaterThan(0);
    expect(coverage.ok).toBeGreaterThan(0);
  }
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
  }), { numRuns: runsOf(50), seed: SEED });
});

// ---------------------------------------------------------------------------
// WithSidecar and AdoptSidecar (issue 18): random containers and options through WithSidecar,
// adopt on random workloads. Expectations from the target and the options alone (not from the
// engine), the termination from the kubelet simulation.
// ---------------------------------------------------------------------------

const VENDOR = 'vendor-proxy';
const QUIT_PORT = 22000;

function anyWorkload(chart: Chart, c: AnySidecarCase): ApiObject {
  const vendor = {
    name: VENDOR,
    image: 'vendor.example.com/proxy:1.2.3',
    args: c.args,
    ports: c.ports.map(p => ({ containerPort: p })),
    env: c.env.map(e => ({ name: e.name, value: e.value })),
    ...(c.readiness ? { readinessProbe: { tcpSocket: { port: 21999 } } } : {}),
    resources: { limits: { cpu: '100m', memory: '64Mi' }, requests: { cpu: '10m', memory: '32Mi' } },
  };
  const completes = c.kind === 'Job' || c.kind === 'CronJob';
  const podSpec = {
    containers: [{ name: 'app', image: 'app:1', ports: [{ containerPort: 8080 }] }, ...(c.adopt ? [vendor] : [])],
    ...(c.init.length > 0 ? { initContainers: c.init.map(i => ({ name: i.name, image: 'init:1', ...(i.native ? { restartPolicy: 'Always' } : {}) })) } : {}),
    ...(completes ? { restartPolicy: 'Never' } : {}),
  };
  const template = { metadata: { labels: { app: 'w' } }, spec: podSpec };
  const selector = { matchLabels: { app: 'w' } };
  switch (c.kind) {
    case 'Job': return new ApiObject(chart, 'w', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'w' }, spec: { template } });
    case 'CronJob': return new ApiObject(chart, 'w', { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'w' }, spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template } } } });
    case 'StatefulSet': return new ApiObject(chart, 'w', { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'w' }, spec: { serviceName: 'w', selector, template } });
    default: return new ApiObject(chart, 'w', { apiVersion: 'apps/v1', kind: c.kind, metadata: { name: 'w' }, spec: { selector, template } });
  }
}

function anyCheck(k: AnyCheckCase): SidecarCheck {
  const o = { period: Duration.seconds(k.period), timeout: Duration.seconds(Math.max(k.timeout, k.period)) };
  if (k.type === 'http') return SidecarCheck.http(k.port, { ...o, path: k.path });
  if (k.type === 'tcp') return SidecarCheck.tcp(k.port, o);
  return SidecarCheck.exec(['/bin/check', String(k.port)], o);
}

function buildAny(c: AnySidecarCase) {
  const app = Testing.app();
  const chart = new Chart(app, 'test');
  const workload = anyWorkload(chart, c);
  const original = structuredClone(workload.toJson());
  const common = {
    workload,
    kubernetesVersion: `1.${c.minor}`,
    sidecarContainersGate: c.gate,
    appShutdownTime: Duration.seconds(c.appShutdownSeconds),
    // the user's native init containers stop in 2 s (the simulation's behaviour below)
    userSidecarStopTime: Duration.seconds(2),
    allowLegacyOnJob: c.allowLegacyOnJob,
    after: c.after !== undefined ? c.init[c.after].name : undefined,
    startupCheck: c.check ? anyCheck(c.check) : undefined,
    holdApplicationUntilStarted: c.hold,
    stopTime: Duration.seconds(c.stopSeconds),
    outliveApp: c.outliveApp,
    jobQuit: c.quit ? SidecarQuit.http(QUIT_PORT, '/quitquitquit', 'QUIT_URL') : undefined,
  };
  if (c.adopt) {
    new AdoptSidecar(chart, 'side', { ...common, containerName: VENDOR });
  } else {
    new WithSidecar(chart, 'side', {
      ...common,
      containerName: VENDOR,
      image: 'example/side:1',
      args: c.args,
      env: Object.fromEntries(c.env.map(e => [e.name, e.value])),
      ports: c.ports.map(p => ({ number: p })),
      localPorts: c.quit ? [QUIT_PORT] : undefined,
      // (a check on a declared port: one on a port none of them is is refused, issue 27)
      readinessCheck: c.readiness ? SidecarCheck.tcp(c.ports[0] ?? 21999) : undefined,
      appEnv: Object.fromEntries(c.appEnv.map(e => [e.name, e.value])),
      volumes: c.shared ? [SidecarVolume.emptyDir('side-shared', '/shared', { appMountPath: '/shared' })] : undefined,
      serveInitContainers: c.serve,
    });
  }
  return { chart, original };
}

function anyViolations(c: AnySidecarCase): string[] {
  const native = nativeWorks(c);
  const completes = c.kind === 'Job' || c.kind === 'CronJob';
  const expected = [
    ...(!native && completes && !c.quit && !c.allowLegacyOnJob ? [/never exits, so the Job never completes/] : []),
    ...(!native && c.serve && !c.adopt ? [/serveInitContainers asks the sidecar to serve the init containers/] : []),
  ];
  const { chart, original } = buildAny(c);
  let manifests: any[];
  try {
    manifests = Testing.synth(chart);
  } catch (e) {
    const message = (e as Error).message;
    const lines = message.split('\n').filter(l => l.includes("'test/side'"));
    const v: string[] = [];
    if (expected.length === 0) v.push(`synthesis failed, expected success: ${message}`);
    for (const re of expected) if (!re.test(message)) v.push(`missing ${re}`);
    if (lines.length !== expected.length) v.push(`${lines.length} error lines, expected ${expected.length}: ${message}`);
    return v;
  }
  if (expected.length > 0) return [`synthesis succeeded, expected ${expected.join(', ')}`];
  const v: string[] = [];
  v.push(...schemaViolations(manifests, c.minor));
  const out = manifests.find(m => m.metadata.name === 'w');
  const pod = podSpecOf(out);
  v.push(...checkPodSpec(pod, { minor: c.minor, gate: c.gate }, 'w', { kind: c.kind }));
  const init: any[] = pod.initContainers ?? [];
  const initNames = init.map(x => x.name);
  const containerNames = pod.containers.map((x: any) => x.name);
  const side = [...init, ...pod.containers].filter(x => x.name === VENDOR);
  if (side.length !== 1) return [...v, `'${VENDOR}' appears ${side.length} times`];
  const s = side[0];
  const userInit = c.init.map(i => i.name);
  if (native) {
    if (s.restartPolicy !== 'Always') v.push('native: no restartPolicy Always');
    // before the user's init containers, or right after the named one
    const firstUser = initNames.findIndex(n => userInit.includes(n));
    const want = c.after !== undefined ? initNames.indexOf(userInit[c.after]) + 1 : firstUser >= 0 ? firstUser - 1 : -1;
    const at = initNames.indexOf(VENDOR);
    if (want >= 0 && at !== want) v.push(`native: at initContainers[${at}], expected [${want}] (${initNames.join(', ')})`);
    if (containerNames.includes(VENDOR)) v.push('native: still in spec.containers');
    // served: the init containers after it have the app env; those before it do not
    if (c.serve && !c.adopt) {
      for (const [i, n] of initNames.entries()) {
        if (!userInit.includes(n)) continue;
        const has = c.appEnv.every(e => (init[i].env ?? []).some((x: any) => x.name === e.name && x.value === e.value));
        if (i > at && !has) v.push(`init container '${n}' after the sidecar is not served`);
        if (i < at && c.appEnv.length > 0 && (init[i].env ?? []).length > 0) v.push(`init container '${n}' before the sidecar is served`);
      }
    } else {
      for (const x of init.filter(y => userInit.includes(y.name))) if (x.env !== undefined) v.push(`init container '${x.name}' got env without serveInitContainers`);
    }
  } else {
    if (s.restartPolicy !== undefined) v.push('legacy: restartPolicy set');
    const want = c.hold ? 0 : containerNames.length - 1;
    if (containerNames.indexOf(VENDOR) !== want) v.push(`legacy: at containers[${containerNames.indexOf(VENDOR)}], expected [${want}]`);
    const appEnv = pod.containers.find((x: any) => x.name === 'app').env ?? [];
    const hasQuit = appEnv.some((e: any) => e.name === 'QUIT_URL' && e.value === `http://127.0.0.1:${QUIT_PORT}/quitquitquit`);
    if (hasQuit !== (completes && c.quit)) v.push(`legacy: the app's QUIT_URL is ${hasQuit ? 'set' : 'missing'} (completes ${completes}, quit ${c.quit})`);
  }
  if (c.check && s.startupProbe === undefined) v.push('no startupProbe for the startup check');
  if (c.adopt) {
    // every original field kept (the engine adds only restartPolicy / startupProbe / its hooks and the tools mount)
    const before = podSpecOf(original).containers.find((x: any) => x.name === VENDOR);
    const { restartPolicy, startupProbe, lifecycle, volumeMounts, ...rest } = s;
    if (canonical(rest) !== canonical(before)) v.push(`adopted fields changed: ${canonical(rest)} vs ${canonical(before)}`);
  } else {
    v.push(...restrictedViolations(s).map(x => `restricted: ${x}`));
  }
  // The kubelet's order: nobody cut short, and the sidecar outlives the app's shutdown where promised.
  const behaviour = (name: string) => ({ exitAfterSigterm: name === 'app' ? c.appShutdownSeconds : name === VENDOR ? c.stopSeconds : 2 });
  const sim = simulateTermination({ spec: pod, minor: c.minor, behaviour });
  v.push(...cutShort(sim));
  const ordered = native && c.minor >= 29;
  if ((ordered || c.outliveApp !== false) && sim.containers.get(VENDOR)!.sigterm < c.appShutdownSeconds) {
    v.push(`'${VENDOR}' gets SIGTERM at ${sim.containers.get(VENDOR)!.sigterm}s, before the app's shutdown (${c.appShutdownSeconds}s) ends`);
  }
  return v;
}

test('property: any container through WithSidecar, adopt on random workloads (every target 1.27-1.35)', () => {
  const seen = { ok: 0, failed: 0, native: 0, legacy: 0, adopt: 0 };
  fc.assert(fc.property(anySidecarArb, c => {
    const v = anyViolations(c);
    if (v.length > 0) throw new Error(`violations:\n  - ${v.join('\n  - ')}`);
    seen[nativeWorks(c) ? 'native' : 'legacy']++;
    if (c.adopt) seen.adopt++;
  }), { numRuns: runsOf(150), seed: SEED });
  expect(seen.native).toBeGreaterThan(0);
  expect(seen.legacy).toBeGreaterThan(0);
  expect(seen.adopt).toBeGreaterThan(0);
});
