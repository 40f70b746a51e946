/**
 * Issue 26: fast terminations, and the public timeline (src/timeline.ts, src/engine/timeline.ts).
 *
 * The expectations come from the kubelet simulation (test/util/kubelet-termination.ts, written
 * from the kubelet's code), from the scheduler's rule for pod requests computed by hand below, and
 * from the agents' shutdown models' own terms: never from the timeline's code.
 */
import { ApiObject, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import * as fc from 'fast-check';
import { LogAgent, SidecarMode, SidecarTimeline, WithLogAgent, WithTracer } from '../src';
import { Scenario, buildScenario, inScenarioEnv, scenarioArb } from './util/arbitraries';
import { kplusWorkload, manifestOf, newChart, podSpecOf } from './util/fixtures';
import { appTimeOf, orderedFacts, userSidecarStop } from './util/invariants';
import { Behaviour, ContainerTimeline, Simulation, simulateTermination } from './util/kubelet-termination';
import { sigtermHoldOf } from './util/sigterm-hold';

const ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';
const savedEnv = process.env[ENV];
beforeAll(() => { delete process.env[ENV]; });
afterAll(() => { if (savedEnv !== undefined) process.env[ENV] = savedEnv; });

const ENDPOINT = 'otel-collector.observability:4317';
const AGENTS = { 'fluent-bit': () => LogAgent.fluentBit(), 'vector': () => LogAgent.vector(), 'fluentd': () => LogAgent.fluentd() };
type AgentName = keyof typeof AGENTS;

/**
 * How long each agent takes from SIGTERM to its exit when its backend answers, from the terms of
 * its shutdown model (src/agents/, written from the agent's code at the pinned tag): Fluent Bit's
 * engine stops at its first 1 s grace tick without running tasks, then exits (1 s); Vector's
 * topology ends once the sink has sent what the source had read, then exits (1 s); Fluentd makes
 * its one flush attempt, which succeeds, then exits (1 s). The collector: its exporters send their
 * queues once, then it exits (1 s).
 */
const HEALTHY_EXIT: Record<string, number> = { 'fluent-bit': 2, 'vector': 1, 'fluentd': 1, 'tracer': 1 };

/** The read delay each agent's model asks for where it is stopped together with the app. */
const LEGACY_READ: Record<AgentName, number> = { 'fluent-bit': 2, 'vector': 3, 'fluentd': 0 };

function synthAgent(agent: AgentName, version: string, kind: 'Deployment' | 'Job', extra: { mode?: SidecarMode; tracer?: boolean } = {}) {
  const { chart } = newChart();
  const workload = kplusWorkload(chart, kind);
  const common = { workload, kubernetesVersion: version, ...(extra.mode ? { mode: extra.mode } : {}) };
  new WithLogAgent(chart, 'logs', { ...common, agent: AGENTS[agent](), ...(kind === 'Job' && extra.mode === SidecarMode.LEGACY ? { allowLegacyOnJob: true } : {}) });
  if (extra.tracer) new WithTracer(chart, 'tracer', { ...common, exporterEndpoint: ENDPOINT });
  const spec = podSpecOf(manifestOf(Testing.synth(chart), kind));
  return { spec, workload };
}

/** `spec`'s containers as a healthy backend makes them stop; a held agent's wrapper adds its hold (read from the manifest). */
const healthy = (agent: AgentName, appExit: number, spec?: any) => (name: string): Behaviour => {
  const c = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].find((x: any) => x.name === name);
  return { exitAfterSigterm: sigtermHoldOf(c) + (name === 'log-agent' ? HEALTHY_EXIT[agent] : HEALTHY_EXIT[name] ?? appExit) };
};

/** The simulated kubelet's stop of a pod whose app containers have completed: only the native sidecars are left. */
function simulateCompletion(
  spec: any, minor: number, behaviour: (name: string) => Behaviour, wrappedRead: Map<string, number> = new Map(),
): Simulation {
  // Legacy sidecars under the exit-with-app wrapper (test/exit-with-app.test.ts runs it under
  // busybox: it looks at the pod's processes once a second, then waits the read delay and sends
  // SIGTERM): SIGTERM at most 1 s + the read delay after the app's exit, then the agent's stop; the
  // kubelet kills nothing of a completed pod, so no deadline but the exit. The native sidecars are
  // stopped by the kubelet once every container of spec.containers has exited.
  const self = [...wrappedRead].map(([name, read]): ContainerTimeline => {
    const sigterm = 1 + read;
    const exit = sigterm + behaviour(name).exitAfterSigterm;
    return { name, kind: 'container', preStopEnd: 0, turn: 0, sigterm, deadline: exit, exit, killed: false, early: false };
  });
  // The kubelet's own latency (pkg/kubelet/pod_workers.go `podWorkerLoop`: every pod sync waits
  // for a container state newer than the previous sync, `podCache.GetNewerThan`, i.e. the PLEG's
  // next relist, every 1 s): the sync that sees the app's exit kills the native sidecars (up to 1 s
  // after it); after the last exit, the sync that sees the pod Succeeded, SyncTerminatingPod and
  // SyncTerminatedPod (the status manager sends the terminal phase only then) take up to 1 s each.
  const mainDone = Math.max(0, ...self.map(c => c.exit));
  const sim = simulateTermination({ spec: { ...spec, containers: [] }, minor, behaviour });
  const killAt = sim.containers.size > 0 ? mainDone + 1 : mainDone;
  const natives = [...sim.containers.values()].map(c => ({
    ...c, sigterm: c.sigterm + killAt, deadline: c.deadline + killAt, exit: c.exit + killAt,
  }));
  const all = [...self, ...natives];
  return { ...sim, containers: new Map(all.map(c => [c.name, c])), end: Math.max(sim.end + killAt, ...all.map(c => c.exit)) + 3 };
}

const NATIVE = ['1.29', '1.30', '1.33'];

/** What holding an agent's SIGTERM costs a Job's completion: its read delay (Vector: its file source polls, issue 39; Fluent Bit: a new file is found at the next scan, issue 51). */
const NATIVE_HOLD: Record<AgentName, number> = { 'fluent-bit': 2, 'vector': 3, 'fluentd': 0 };

describe('native (1.29+): the agent gets SIGTERM right after the app (Vector, Fluent Bit: its wrapper does, and holds it 3 s, 2 s), and a Job\'s agents stop within 3 s (Vector: 6 s, Fluent Bit: 5 s)', () => {
  test.each((Object.keys(AGENTS) as AgentName[]).flatMap(a => NATIVE.map(v => [a, v] as const)))(
    '%s on %s: app exit -> agent SIGTERM at most 1 s, whenever the app exits', (agent, version) => {
      const { spec } = synthAgent(agent, version, 'Deployment');
      const minor = Number(version.split('.')[1]);
      for (const appExit of [0, 3, 10]) {
        const sim = simulateTermination({ spec, minor, behaviour: healthy(agent, appExit, spec) });
        const gap = sim.containers.get('log-agent')!.sigterm - sim.containers.get('app')!.exit;
        expect({ appExit, gap: Math.max(0, Math.min(gap, 1)) === gap }).toEqual({ appExit, gap: true });
        // what the agent itself gets: SIGTERM after its hold, i.e. at least its read delay after the app's exit where it polls
        expect(sigtermHoldOf(spec.initContainers.find((c: any) => c.name === 'log-agent'))).toBe(NATIVE_HOLD[agent]);
        if (NATIVE_HOLD[agent] > 0) expect(gap + NATIVE_HOLD[agent]).toBeGreaterThanOrEqual(LEGACY_READ[agent]);
      }
    });

  test.each((Object.keys(AGENTS) as AgentName[]).flatMap(a => NATIVE.flatMap(v => [[a, v, false], [a, v, true]] as const)))(
    '%s on %s (with a tracer: %s): a Job\'s agents have stopped at most 3 s after the kubelet\'s stop, the pod completes 4 s later at most', (agent, version, tracer) => {
      const { spec, workload } = synthAgent(agent, version, 'Job', { tracer });
      const minor = Number(version.split('.')[1]);
      const sim = simulateCompletion(spec, minor, healthy(agent, 0, spec));
      // the kubelet's four pod syncs (one before it stops the agents, three after: docs/proof.md)
      const agentsStopped = Math.max(...[...sim.containers.values()].map(c => c.exit)) - 1;
      expect(agentsStopped).toBeLessThanOrEqual(3 + NATIVE_HOLD[agent]);
      expect(sim.end).toBe(agentsStopped + 4);
      // the model's worst case (budgeted stop times) is no earlier than the healthy run
      expect(SidecarTimeline.of(workload).completionSeconds).toBeGreaterThanOrEqual(sim.end);
    });
});

describe('legacy: the guarantee is kept (the agent outlives the app by its read delay)', () => {
  test.each((Object.keys(AGENTS) as AgentName[]).flatMap(a => [['1.27', {}], ['1.30', { mode: SidecarMode.LEGACY }]].map(([v, x]) => [a, v, x] as const)))(
    '%s on %s %j', (agent, version, extra) => {
      const { spec } = synthAgent(agent, version as string, 'Deployment', extra as any);
      const minor = Number((version as string).split('.')[1]);
      // the app uses its whole appShutdownTime (10 s)
      const sim = simulateTermination({ spec, minor, behaviour: healthy(agent, 10, spec) });
      const gap = sim.containers.get('log-agent')!.sigterm - sim.containers.get('app')!.exit;
      expect(gap).toBeGreaterThanOrEqual(LEGACY_READ[agent]);
    });
});

// ---------------------------------------------------------------------------
// SidecarTimeline equals the simulated kubelet, over the property generator
// ---------------------------------------------------------------------------

let compared = 0;
function timelineViolations(s: Scenario): string[] {
  let built: ReturnType<typeof buildScenario>;
  let manifests: any[];
  try {
    built = buildScenario(s, { withSidecars: true });
    manifests = inScenarioEnv(s, () => Testing.synth(built.chart));
  } catch {
    return []; // refused: the property tests check the errors
  }
  if (s.sidecars.length === 0) return [];
  const workload = manifests.find(m => m.kind === s.workload.kind);
  const spec = podSpecOf(workload);
  const t = inScenarioEnv(s, () => SidecarTimeline.of(built.apiObject));
  const facts = orderedFacts(s, workload.metadata.name);
  // the app: appShutdownTime, or the budget inferred from the manifest (docs/target.md), by the
  // invariants' own rule on the workload without sidecars
  const baseline = inScenarioEnv(s, () => Testing.synth(buildScenario(s, { withSidecars: false }).chart)).find(m => m.kind === s.workload.kind);
  const app = appTimeOf(s, baseline);
  const stops = new Map(facts.map(f => [f.name, f.stopSeconds]));
  const userStop = userSidecarStop(facts);
  const natives = new Set((spec.initContainers ?? []).filter((c: any) => c.restartPolicy === 'Always').map((c: any) => c.name));
  // the library's sidecars: their models; the user's native sidecars: userSidecarStopTime, or until killed; the app: appShutdownTime
  // a native agent whose SIGTERM its wrapper holds back (read from the manifest): the hold, then its model
  const holds = new Map([...(spec.initContainers ?? []), ...(spec.containers ?? [])].map((c: any) => [c.name, sigtermHoldOf(c)]));
  const behaviour = (name: string): Behaviour => ({
    exitAfterSigterm: (holds.get(name) ?? 0) + (stops.get(name) ?? (natives.has(name) ? userStop ?? Infinity : app)),
  });
  const minor = s.target.minor;
  const v: string[] = [];
  const compare = (what: string, sim: Simulation, entries: SidecarTimeline['termination']) => {
    const byName = (a: [string, unknown][]) => Object.fromEntries(a.sort(([x], [y]) => x.localeCompare(y)));
    const got = byName(entries.map(e => [e.name, [e.sigtermSeconds, e.sigkillSeconds, e.exitSeconds, e.killed, e.early]]));
    const want = byName([...sim.containers.values()].map(c => [c.name, [c.sigterm, c.deadline, c.exit, c.killed, c.early]]));
    if (JSON.stringify(got) !== JSON.stringify(want)) v.push(`${what}: timeline ${JSON.stringify(got)}, simulation ${JSON.stringify(want)}`);
  };
  compared++;
  const sim = simulateTermination({ spec, minor, behaviour });
  compare('termination', sim, t.termination);
  if (t.endSeconds !== sim.end) v.push(`end: timeline ${t.endSeconds}, simulation ${sim.end}`);
  if (t.graceSeconds !== sim.grace) v.push(`grace: timeline ${t.graceSeconds}, simulation ${sim.grace}`);
  // the library's legacy sidecars in a completing pod that synthesized run under the wrapper, but
  // those the app stops itself (allowLegacyOnJob, a quit endpoint), which never exit by themselves
  const wrapped = new Map(facts.filter(f => f.layout === 'LEGACY')
    .filter(f => (spec.containers ?? []).some((c: any) => c.name === f.name && c.command?.[0] === '/sidecar-tools/busybox' && c.command?.[1] === 'sh'))
    .map(f => [f.name, f.readAfterAppExitSeconds]));
  if (t.completes) compare('completion', simulateCompletion(spec, minor, behaviour, wrapped), t.completion);
  return v;
}

test.each(['kplus', 'raw'] as const)('SidecarTimeline.of: the termination (and a Job\'s completion) equals the simulated kubelet\'s (%s workloads)', (flavor) => {
  compared = 0;
  fc.assert(fc.property(scenarioArb(flavor), s => {
    const v = timelineViolations(s);
    if (v.length > 0) throw new Error(v.join('\n'));
  }), {
    numRuns: process.env.FC_NUM_RUNS ? Number(process.env.FC_NUM_RUNS) : flavor === 'kplus' ? 300 : 400,
    seed: process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined,
  });
  // many scenarios are refused (as the property tests expect) or have no sidecar; some are compared
  // (seen: 16 of 150 kplus ones, 23 of 400 raw ones)
  expect(compared).toBeGreaterThan(10);
});

// ---------------------------------------------------------------------------
// ofManifest: a hand-written pod, figures worked out by hand
// ---------------------------------------------------------------------------

/**
 * Init: `fetch` (a regular init container, 500m / 256Mi), then two native sidecars `a` (100m /
 * 64Mi, startup probe 5 + 2 x 30 = 65 s) and `b` (50m / 32Mi, no requests but limits: the API
 * server defaults the request to the limit; default probe 0 + 10 x 3 = 30 s); the app (200m /
 * 128Mi). By hand (KEP-753, the scheduler's PodRequests):
 * - init peak: max(fetch: 500 / 256, a: 100 / 64, b: 100 + 50 / 64 + 32) = 500m / 256Mi;
 * - steady: a + b + app = 350m / 224Mi; effective: 500m / 256Mi.
 * - start: fetch at 0 (its run time is not known: 0), a started by 65, b by 95, the app at 95.
 * - stop on 1.30, grace 40, app 12 s, a 3 s, b 4 s, a preStop sleep of 5 s on b:
 *   app: SIGTERM 0, exit 12; b: its hook 0-5, its turn at 12, SIGTERM 12, exit 16; a: turn 16,
 *   SIGTERM 16, exit 19. SIGKILL: the app at 40; b: 40 - 5 (hook) - 7 (waited) = 28 left: 12 + 28
 *   = 40; a: 16 + (40 - 16) = 40.
 */
const POD = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'hand' },
  spec: {
    terminationGracePeriodSeconds: 40,
    initContainers: [
      { name: 'fetch', image: 'f:1', resources: { requests: { cpu: '500m', memory: '256Mi' } } },
      { name: 'a', image: 'a:1', restartPolicy: 'Always', resources: { requests: { cpu: '0.1', memory: '64Mi' } }, startupProbe: { httpGet: { port: 1 }, initialDelaySeconds: 5, periodSeconds: 2, failureThreshold: 30 } },
      { name: 'b', image: 'b:1', restartPolicy: 'Always', resources: { limits: { cpu: '50m', memory: '32Mi' } }, startupProbe: { httpGet: { port: 2 } }, lifecycle: { preStop: { sleep: { seconds: 5 } } } },
    ],
    containers: [{ name: 'app', image: 'app:1', resources: { requests: { cpu: '200m', memory: '128Mi' } } }],
  },
};

describe('SidecarTimeline.ofManifest', () => {
  const t = SidecarTimeline.ofManifest(POD, {
    kubernetesVersion: '1.30', appShutdownTime: Duration.seconds(12), stopTimes: { a: Duration.seconds(3), b: Duration.seconds(4) },
  });

  test('the effective request: the init phase peak against the steady state', () => {
    const Mi = 2 ** 20;
    expect(t.requests).toEqual({
      initPeakCpuMillis: 500,
      initPeakMemoryBytes: 256 * Mi,
      steadyCpuMillis: 350,
      steadyMemoryBytes: 224 * Mi,
      effectiveCpuMillis: 500,
      effectiveMemoryBytes: 256 * Mi,
    });
  });

  test('the start order and the worst case until the app starts', () => {
    expect(t.startOrder.map(s => [s.name, s.role, s.startSeconds, s.startedSeconds])).toEqual([
      ['fetch', 'init', 0, 0], ['a', 'native sidecar', 0, 65], ['b', 'native sidecar', 65, 95], ['app', 'app', 95, 95],
    ]);
    expect(t.appStartSeconds).toBe(95);
    expect(t.assumptions).toEqual(["init container 'fetch': its run time counts 0 s"]);
  });

  test('a deletion: the kubelet starts the termination up to 1 s after the delete (its pod worker waits for the PLEG\'s next relist), and the table says so', () => {
    // kubernetes v1.33.13 pkg/kubelet/pod_workers.go:1256 (v1.37.2 :1288) podCache.GetNewerThan;
    // measured 1.02 s on 1.33.13 (docs/proof.md)
    expect(t.deletionReactionSeconds).toBe(1);
    expect(t.toTable()).toContain("stop (seconds from the pod's termination, which starts up to 1 s after the delete;");
  });

  test('the termination, in the kubelet\'s order', () => {
    const rows = t.termination.map(s => [
      s.name, s.hookStartSeconds, s.hookEndSeconds, s.turnSeconds, s.sigtermSeconds, s.sigkillSeconds, s.exitSeconds,
    ]);
    expect(rows).toEqual([
      ['app', undefined, undefined, undefined, 0, 40, 12],
      ['a', undefined, undefined, 16, 16, 40, 19],
      ['b', 0, 5, 12, 12, 40, 16],
    ]);
    expect([t.appExitSeconds, t.sidecarSigtermAfterAppSeconds, t.endSeconds, t.graceSeconds, t.graceSet]).toEqual([12, 4, 19, 40, true]);
    // a Pod without restartPolicy Never / OnFailure does not complete
    expect([t.completes, t.completionSeconds, t.completion]).toEqual([false, undefined, []]);
  });

  test('the same pod on 1.28 with the gate: nothing waits for its turn', () => {
    const old = SidecarTimeline.ofManifest(POD, { kubernetesVersion: '1.28', sidecarContainersGate: true, stopTimes: { a: Duration.seconds(3), b: Duration.seconds(4) } });
    expect(old.orderedTermination).toBe(false);
    expect(old.termination.map(s => [s.name, s.sigtermSeconds, s.exitSeconds])).toEqual([['app', 0, 10], ['a', 0, 3], ['b', 5, 9]]);
  });

  test('a completing pod, and a sidecar whose stop time is not known (it runs until it is killed)', () => {
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { ...POD.spec, restartPolicy: 'Never' } } } };
    const j = SidecarTimeline.ofManifest(job, { kubernetesVersion: '1.29', stopTimes: { b: Duration.seconds(1) } });
    // the kubelet kills the pod at its next sync after the app's exit (1 s): b's hook 1-6, SIGTERM
    // 6, exit 7; a (until killed) waits for b: SIGTERM 7, killed at 1 + 40; then three syncs
    expect(j.completion.map(s => [s.name, s.sigtermSeconds, s.sigkillSeconds, s.exitSeconds, s.killed])).toEqual([['a', 7, 41, 41, true], ['b', 6, 41, 7, false]]);
    expect(j.completionSeconds).toBe(44);
    expect(j.jobCompleteSeconds).toBe(45);
    expect(j.assumptions).toContain("'a': its stop time is not known: it runs until it is killed");
  });

  test('toTable and summaryTable', () => {
    const table = t.toTable();
    expect(table).toContain("Pod 'hand', Kubernetes 1.30");
    expect(table).toContain('the app starts by 95 s');
    expect(table).toContain('the app exits at 12 s, the last sidecar gets SIGTERM 4 s after it, the pod is gone at 19 s');
    expect(table).toMatch(/\n {2}b +native sidecar +0-5 +12 +12 +40 +16\n/);
    expect(table).toContain('requests: init phase peak 500m / 256Mi, steady 350m / 224Mi, effective 500m / 256Mi');
    const summary = SidecarTimeline.summaryTable([t]).split('\n');
    expect(summary).toHaveLength(2);
    expect(summary[1].split(/ {2,}/)).toEqual(["Pod 'hand'", '1.30', '95s', '12s', '+4s', '19s', '40s', '-', '500m / 256Mi']);
  });

  test('bad input: a clear error that says what to pass', () => {
    expect(() => SidecarTimeline.ofManifest(42)).toThrow('SidecarTimeline.ofManifest: 42 is not an object with a pod template. Pass one Kubernetes object of kind Pod, Deployment');
    expect(() => SidecarTimeline.ofManifest({ kind: 'Service' })).toThrow('SidecarTimeline.ofManifest: kind "Service" is not an object with a pod template.');
    expect(() => SidecarTimeline.ofManifest(POD, { kubernetesVersion: '1.3' })).toThrow(/kubernetesVersion '1.3' is older than 1.27/);
    expect(() => SidecarTimeline.ofManifest(POD, { appShutdownTime: 10 as any })).toThrow('SidecarTimeline.ofManifest: appShutdownTime is 10, not a Duration; give e.g. Duration.seconds(10).');
  });
});

describe('SidecarTimeline.of', () => {
  test('a workload without sidecars of the library, and a construct that is no workload: errors that say what to do', () => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', { containers: [{ image: 'x:1', portNumber: 8080 }] });
    expect(() => SidecarTimeline.of(dep)).toThrow("SidecarTimeline.of('test/web'): no sidecar of cdk8s-sidecars is attached to this workload.");
    expect(() => SidecarTimeline.of(chart)).toThrow(/is neither a cdk8s-plus workload nor a cdk8s ApiObject/);
  });

  test('reads the workload as synthesized and the sidecars\' target; ofAll finds every workload with sidecars', () => {
    const { app, chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', { containers: [{ image: 'x:1', portNumber: 8080 }] });
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.30' });
    new ApiObject(chart, 'other', { apiVersion: 'v1', kind: 'ConfigMap' });
    const t = SidecarTimeline.of(dep);
    expect(t.kubernetesVersion).toBe('1.30');
    // Fluent Bit, stdout: its SIGTERM held 2 s, Grace 5 + exit 1 = 8 s after its turn at the app's 10 s
    expect(t.termination.find(e => e.name === 'log-agent')).toMatchObject({ turnSeconds: 10, sigtermSeconds: 10, exitSeconds: 18 });
    expect(SidecarTimeline.ofAll(app).map(x => x.workload)).toEqual([t.workload]);
  });
});

// ---------------------------------------------------------------------------
// The app's budget inferred from the manifest (issue 27's inference, shown by the timeline)
// ---------------------------------------------------------------------------

describe('SidecarTimeline.of: the app\'s budget the binding inferred from the manifest', () => {
  /**
   * A vendor-shaped Deployment (an ApiObject, as `Include` brings one in): its own explicit
   * `terminationGracePeriodSeconds: 30`, which is below what its sidecars need (a log agent and a
   * tracer draining 25 s, behind an app of the default 10 s), and no `appShutdownTime` given. The
   * documented rule (docs/target.md, "Inferred from the manifest") makes the vendor's 30 s the
   * app's own budget, the sidecars' time on top; the expectations come from the simulated kubelet
   * (test/util/kubelet-termination.ts) on the synthesized pod, with the app taking its 30 s.
   */
  function vendorWorkload(version: string) {
    const { chart } = newChart();
    const dep = new ApiObject(chart, 'shop', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'shop' },
      spec: {
        selector: { matchLabels: { app: 'shop' } },
        template: {
          metadata: { labels: { app: 'shop' } },
          spec: {
            terminationGracePeriodSeconds: 30,
            containers: [{ name: 'server', image: 'vendor.example.com/shop:2.1.0', ports: [{ name: 'http', containerPort: 8080 }] }],
          },
        },
      },
    });
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: version });
    new WithTracer(chart, 'tracer', { workload: dep, kubernetesVersion: version, exporterEndpoint: ENDPOINT, drainTime: Duration.seconds(25) });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    return { dep, spec };
  }

  test.each(['1.29', '1.30', '1.33'])('on %s: the app\'s budget, SIGTERM and SIGKILL times equal the simulated kubelet\'s', (version) => {
    const { dep, spec } = vendorWorkload(version);
    const t = SidecarTimeline.of(dep);
    // the binding raised the vendor's grace (it is the pod's grace the timeline and the kubelet read)
    expect(spec.terminationGracePeriodSeconds).toBeGreaterThan(30);
    expect(t.graceSeconds).toBe(spec.terminationGracePeriodSeconds);
    // the app takes the vendor's 30 s; the sidecars, what the timeline counts for each (their
    // stop models are checked against the agents' code elsewhere)
    const sidecarStop = new Map(t.termination.filter(e => e.role !== 'app').map(e => [e.name, e.exitSeconds - e.sigtermSeconds]));
    const behaviour = (name: string): Behaviour => ({ exitAfterSigterm: sidecarStop.get(name) ?? 30 });
    const sim = simulateTermination({ spec, minor: Number(version.split('.')[1]), behaviour });
    const server = sim.containers.get('server')!;
    expect(t.termination.find(e => e.name === 'server')).toMatchObject({ sigtermSeconds: server.sigterm, sigkillSeconds: server.deadline, exitSeconds: 30, killed: false });
    expect(t.appExitSeconds).toBe(30);
    for (const e of t.termination) {
      const s = sim.containers.get(e.name)!;
      expect([e.name, e.sigtermSeconds, e.sigkillSeconds, e.exitSeconds, e.killed, e.early])
        .toEqual([e.name, s.sigterm, s.deadline, s.exit, s.killed, s.early]);
    }
    expect(t.endSeconds).toBe(sim.end);
    expect(t.appShutdownSeconds).toBe(30);
    // and the reason is shown
    expect(t.budgetSource).toMatch(/^inferred from the manifest: no appShutdownTime given, so the workload's terminationGracePeriodSeconds 30s is the app's own budget/);
    expect(t.toTable()).toContain(`app budget: 30 s from SIGTERM to exit; ${t.budgetSource}`);
  });

  test('with appShutdownTime given (and a grace that fits), the timeline says so and keeps it', () => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', { containers: [{ image: 'x:1', portNumber: 8080 }] });
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.30', appShutdownTime: Duration.seconds(7) });
    const t = SidecarTimeline.of(dep);
    expect(t.appShutdownSeconds).toBe(7);
    expect(t.budgetSource).toBe('appShutdownTime 7s');
    expect(t.termination.find(e => e.role === 'app')?.exitSeconds).toBe(7);
  });
});
