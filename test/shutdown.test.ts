/**
 * Shutdown, end to end: each agent's budget against a timeline of its shutdown written from its
 * own code and the values read back from the rendered config, the grace budget against
 * the kubelet termination simulation (test/util/kubelet-termination.ts), and what is emitted.
 */
import { ApiObject, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { parse as parseYaml } from 'yaml';
import {
  LogAgent, LogOutput, SidecarMode, SidecarWarnings, WithEnvoy, WithLogAgent, WithTracer,
} from '../src';
import { containerOf, kplusWorkload, manifestOf, newChart, podSpecOf, rawDeployment } from './util/fixtures';
import { parseFluentConf } from './util/fluentd-conf';
import { SidecarTimeline } from '../src/timeline';
import { Behaviour, Simulation, cutShort, leastGrace, simulateTermination } from './util/kubelet-termination';
import { agentArgvOf, sigtermHoldOf } from './util/sigterm-hold';
import { applySidecars } from '../src/engine/pod-template';
import { RANK, SidecarSpec } from '../src/engine/spec';

const ENDPOINT = 'otel-collector.observability:4317';
type OutputName = 'stdout' | 'forward' | 'http' | 'loki' | 'elasticsearch' | 'opensearch';
const OUTPUTS: Record<OutputName, () => LogOutput> = {
  stdout: () => LogOutput.stdout(),
  forward: () => LogOutput.forward({ host: 'fluentd.logging' }),
  http: () => LogOutput.http({ host: 'logs.example.com' }),
  loki: () => LogOutput.loki({ host: 'loki.monitoring' }),
  elasticsearch: () => LogOutput.elasticsearch({ host: 'es.logging' }),
  opensearch: () => LogOutput.opensearch({ host: 'os.logging', tls: false }),
};
const PLUGIN_IMAGE = 'registry.local/fluentd-plugins:1.19.3';
const AGENTS = {
  'fluent-bit': () => LogAgent.fluentBit(),
  'vector': () => LogAgent.vector(),
  'fluentd': (o: OutputName) => LogAgent.fluentd(['loki', 'elasticsearch', 'opensearch'].includes(o) ? { image: PLUGIN_IMAGE } : {}),
};
type AgentName = keyof typeof AGENTS;
const COMBINATIONS = (Object.keys(AGENTS) as AgentName[]).flatMap(agent => (Object.keys(OUTPUTS) as OutputName[])
  .filter(output => !(agent === 'vector' && output === 'forward'))
  .map(output => [agent, output] as const));

/** The spec a construct hands to the engine (what the engine budgets). */
function specOf(construct: WithLogAgent | WithTracer | WithEnvoy): SidecarSpec['shutdown'] {
  return (construct as any)._agent.shutdown;
}

// ---------------------------------------------------------------------------
// Each agent's shutdown as a timeline, from its own code and the rendered config
// ---------------------------------------------------------------------------

/**
 * What an agent does after SIGTERM, step by step, written here from the agent's own shutdown code
 * at the pinned tag (NOT from src/agents/), with the values read back from the rendered config
 * text and container args. `stop` is the latest it can exit; `read` how long after the app's
 * last write it must still get no SIGTERM.
 */
interface Timeline {
  readonly stop: number;
  readonly read: number;
  readonly steps: string[];
}

/** Upstream facts that are not settings: each read in the agent's code at the pinned tag. */
const UPSTREAM = {
  // fluent/fluent-bit v5.1.1 (as v3.2.10) src/flb_output_thread.c cb_thread_sched_timer: a worker checks its
  // connections every 1.5 s; src/flb_upstream.c flb_upstream_conn_timeouts: deadlines in whole
  // seconds (time(NULL)): a timeout fires up to 1.5 + 1 s after it is due.
  fluentBitTimeoutLate: 1.5 + 1,
  // vectordotdev/vector v0.54.0 lib/file-source/src/file_server.rs: an idle file is polled with a
  // backoff that doubles up to 2048 ms, and the file server stops at SIGTERM.
  vectorPollBackoffMillis: 2048,
  // leaving the process once the agent's own shutdown is over (Envoy: source/server/server.cc
  // shuts down at once on SIGTERM, v1.36.4)
  exit: 1,
};

/** `key value` of an INI-like section (Fluent Bit classic config). */
function fluentBitValue(conf: string, section: string, key: string): string | undefined {
  const body = conf.slice(conf.indexOf(`[${section}]`)).split(/\n\s*\[/)[0];
  return new RegExp(`^\\s+${key.replace('.', '\\.')}\\s+(\\S+)$`, 'm').exec(body)?.[1];
}

const seconds = (v: string | undefined) => (v === undefined ? undefined : Number(/^(\d+)s?$/.exec(v)![1]));

/**
 * Fluent Bit v5.1.1 (as v3.2.10): at SIGTERM the engine pauses every input (src/flb_engine.c,
 * FLB_ENGINE_STOP -> flb_engine_stop_ingestion: nothing more is read); it re-checks each second and
 * stops at the first tick without tasks or buffered chunks, after
 * `Grace` ticks at the latest (at least one); then each worker output exits when none of its
 * connections is busy (src/flb_output_thread.c): a send started last may take its connect timeout
 * and its I/O timeout, each noticed late. A file is read on its inotify event or found at the next
 * scan (`Refresh_Interval`), so a last line needs the scan interval and a second. A multiline
 * parser holds the last record until its flush timeout (`FLB_ML_FLUSH_TIMEOUT` 4000 ms,
 * include/fluent-bit/multiline/flb_ml.h).
 */
function fluentBitTimeline(conf: string, output: OutputName, container: any): Timeline {
  const grace = Math.max(Number(fluentBitValue(conf, 'SERVICE', 'Grace')), 1);
  // native from 1.29: the wrapper keeps SIGTERM from it for its hold, while it still reads (issue 51)
  const hold = sigtermHoldOf(container);
  const steps = [`hold ${hold}s`, `engine ticks: ${grace}s`];
  let stop = hold + grace;
  if (output !== 'stdout') {
    const connect = seconds(fluentBitValue(conf, 'OUTPUT', 'net.connect_timeout'));
    const io = seconds(fluentBitValue(conf, 'OUTPUT', 'net.io_timeout'));
    // without them a stalled backend holds the worker until the kill: there is no bound to budget
    if (connect === undefined || io === undefined || io === 0) throw new Error(`no bound: net.connect_timeout ${connect}, net.io_timeout ${io}`);
    stop += connect + io + 2 * UPSTREAM.fluentBitTimeoutLate;
    steps.push(`in-flight send: connect ${connect}s + io ${io}s, each noticed up to ${UPSTREAM.fluentBitTimeoutLate}s late`);
  }
  stop += UPSTREAM.exit;
  const multiline = /^\s+multiline\.parser\s+\S/m.test(conf) ? 4 : 0;
  return { stop, read: Number(fluentBitValue(conf, 'INPUT', 'Refresh_Interval')) + 1 + multiline, steps };
}

/**
 * Vector v0.54.0: the topology waits for its components until `--graceful-shutdown-limit-secs`,
 * then kills them (src/topology/running.rs); the file source stops reading at SIGTERM, so a line
 * written during an idle backoff is read only if SIGTERM waits for the whole backoff.
 */
function vectorTimeline(container: any): Timeline {
  const args = agentArgvOf(container);
  const limit = Number(args[args.indexOf('--graceful-shutdown-limit-secs') + 1]);
  // native from 1.29: the wrapper keeps SIGTERM from Vector for its hold, while it still reads (issue 39)
  const hold = sigtermHoldOf(container);
  return { stop: hold + limit + UPSTREAM.exit, read: Math.ceil(UPSTREAM.vectorPollBackoffMillis / 1000), steps: [`hold ${hold}s`, `limit ${limit}s`] };
}

/**
 * Fluentd v1.19.3 (lib/fluent/root_agent.rb `shutdown`: inputs first, each plugin's
 * before_shutdown then shutdown): in_tail reads every watched file to its end
 * (lib/fluent/plugin/in_tail.rb `shutdown` -> `detach` -> a last `on_notify`); then the output's
 * `before_shutdown` -> `force_flush` -> `submit_flush_all` sends the queued chunks one attempt
 * each, `while !@retry && @buffer.queued?`, so it stops at the first failed attempt and makes
 * none when the backend was already failing; `after_shutdown` stops and joins the flush threads:
 * nothing is retried (lib/fluent/plugin/output.rb). It has no time limit of its own: what bounds
 * one attempt are the output's timeouts (read from the config); the kubelet's kill at the
 * `shutdownGrace` the library gives it bounds the rest (several chunks, an output without
 * timeouts such as fluent-plugin-grafana-loki). The budget must at least fit one attempt.
 */
function fluentdTimeline(conf: string, shutdownGrace: number): Timeline {
  const match = parseFluentConf(conf).find(d => d.name === 'match')!;
  const phases = ['open_timeout', 'ssl_timeout', 'read_timeout', 'connect_timeout', 'send_timeout', 'request_timeout']
    .filter(k => match.params[k] !== undefined).map(k => [k, Number(match.params[k].raw)] as const);
  const attempt = phases.reduce((a, [, v]) => a + v, 0);
  const attemptText = phases.map(([k, v]) => `${k} ${v}s`).join(' + ') || 'no network timeouts';
  const steps = [`one attempt: ${attemptText}`, `killed at shutdownGrace ${shutdownGrace}s`];
  return { stop: Math.max(shutdownGrace, attempt + UPSTREAM.exit), read: 0, steps };
}

/**
 * The collector v0.159.0 and v0.165.0: the receivers stop first, then the exporters one after another
 * (service/internal/graph/graph.go ShutdownAll); each stops retrying and drains its queue
 * (exporter/exporterhelper): ceil(queue_size / num_consumers) rounds of its `timeout`. With
 * `sending_queue.batch` the queue has one consumer, but a request's room is freed only when its
 * export is done and, without `max_size`, a request is never split: at most `queue_size` batches,
 * exported by a pool of `num_consumers` workers (internal/queuebatch/queue_batch.go,
 * partition_batcher.go). With `max_size` or another sizer, the number of batches is not bounded
 * by the config and there is no bound to check.
 */
function collectorTimeline(configText: string): Timeline {
  const config = parseYaml(configText);
  const steps: string[] = [];
  let stop = 0;
  for (const [id, e] of Object.entries<any>(config.exporters)) {
    const q = e.sending_queue;
    if (q.batch !== undefined && (q.sizer !== 'requests' || (q.batch.max_size ?? 0) !== 0)) {
      throw new Error(`${id}: sending_queue.batch with sizer ${q.sizer} and max_size ${q.batch.max_size}: no bound on the batches`);
    }
    const rounds = Math.ceil(q.queue_size / q.num_consumers);
    const t = seconds(e.timeout)!;
    stop += rounds * t;
    steps.push(`${id}: ${rounds} x ${t}s`);
  }
  return { stop: stop + UPSTREAM.exit, read: 0, steps };
}

function synthLogAgent(agent: AgentName, output: OutputName, shutdownGrace?: number) {
  const { chart } = newChart();
  const construct = new WithLogAgent(chart, 'logs', {
    workload: kplusWorkload(chart, 'Deployment'),
    kubernetesVersion: '1.30',
    agent: shutdownGrace === undefined ? AGENTS[agent](output) : LogAgent.fluentd({
      shutdownGrace: Duration.seconds(shutdownGrace), ...(['loki', 'elasticsearch', 'opensearch'].includes(output) ? { image: PLUGIN_IMAGE } : {}),
    }),
    output: OUTPUTS[output](),
  });
  const out = Testing.synth(chart);
  return { construct, data: manifestOf(out, 'ConfigMap').data, container: containerOf(manifestOf(out, 'Deployment'), 'log-agent') };
}

describe('each agent\'s shutdown: the budget is the end of its timeline (upstream code + the rendered config)', () => {
  test.each(COMBINATIONS)('%s with the %s output', (agent, output) => {
    const { construct, data, container } = synthLogAgent(agent, output);
    const timeline = {
      'fluent-bit': () => fluentBitTimeline(data['fluent-bit.conf'], output, container),
      'vector': () => vectorTimeline(container),
      // LogAgent.fluentd()'s documented default shutdownGrace
      'fluentd': () => fluentdTimeline(data['fluent.conf'], 10),
    }[agent]();
    const budgeted = specOf(construct);
    // the engine's budget in this layout (1.30, native): the model, plus the SIGTERM hold where it runs the agent under one
    const entry = SidecarTimeline.of(construct.node.scope!.node.findChild('web')).termination.find(e => e.name === 'log-agent')!;
    expect({ stop: entry.exitSeconds - entry.sigtermSeconds, read: budgeted.readAfterAppExitSeconds ?? 0 })
      .toEqual({ stop: Math.ceil(timeline.stop), read: timeline.read });
  });

  test('Fluentd with a short shutdownGrace: the budget still fits one attempt (every phase at least 1 s)', () => {
    for (const output of ['http', 'forward', 'elasticsearch', 'stdout'] as const) {
      const { construct, data } = synthLogAgent('fluentd', output, 2);
      expect(specOf(construct).stopSeconds).toBe(fluentdTimeline(data['fluent.conf'], 2).stop);
    }
  });

  test('the tracer: its exporters stop one after another, each within its rendered timeout; drainTime + 1 s as documented', () => {
    for (const drain of [3, 10, 11, 41]) {
      const { chart } = newChart();
      const tracer = new WithTracer(chart, 'tracer', {
        workload: kplusWorkload(chart, 'Deployment'), exporterEndpoint: ENDPOINT, kubernetesVersion: '1.30', drainTime: Duration.seconds(drain),
      });
      const timeline = collectorTimeline(manifestOf(Testing.synth(chart), 'ConfigMap').data['config.yaml']);
      expect(specOf(tracer).stopSeconds).toBe(timeline.stop);
      expect(specOf(tracer).readAfterAppExitSeconds ?? 0).toBe(timeline.read);
      // README: "drainTime + 1 s"
      expect(timeline.stop).toBe(drain + 1);
    }
  });

  test('Envoy: exits at once on SIGTERM; its drain runs in preStop', () => {
    const { chart } = newChart();
    const envoy = new WithEnvoy(chart, 'envoy', { workload: kplusWorkload(chart, 'Deployment'), appPort: 8080, appListensOnPodIp: true, kubernetesVersion: '1.30' });
    const c = containerOf(manifestOf(Testing.synth(chart), 'Deployment'), 'envoy');
    expect(JSON.stringify(c.lifecycle.preStop)).toMatch(/drain_listeners/);
    expect(specOf(envoy).stopSeconds).toBe(UPSTREAM.exit);
  });
});

describe('the timeouts the timelines rest on are in the rendered config', () => {
  test.each(Object.keys(OUTPUTS) as OutputName[])('Fluent Bit, %s: a network output has both timeouts (else no bound)', output => {
    const { data, container } = synthLogAgent('fluent-bit', output);
    const conf = data['fluent-bit.conf'];
    if (output === 'stdout') {
      expect(fluentBitValue(conf, 'OUTPUT', 'net.io_timeout')).toBeUndefined();
    } else {
      expect(() => fluentBitTimeline(conf, output, container)).not.toThrow();
    }
  });

  // docs/log-agents.md "Fluentd's shutdown": connect phases share shutdownGrace (10 s) less 1 s,
  // the wait for the answer is requestTimeout (15 s), 1 s to exit.
  test.each([
    ['http', 4 + 4 + 15 + 1],
    ['forward', 9 + 15 + 1],
    ['elasticsearch', 15 + 1],
    ['opensearch', 15 + 1],
  ] as const)('Fluentd, %s: one whole attempt and the exit fit (the documented %d s)', (output, documented) => {
    const conf = synthLogAgent('fluentd', output).data['fluent.conf'];
    const match = parseFluentConf(conf).find(d => d.name === 'match')!;
    const phases = ['open_timeout', 'ssl_timeout', 'read_timeout', 'connect_timeout', 'send_timeout', 'request_timeout'].filter(k => match.params[k] !== undefined);
    // out_http.rb, out_forward.rb: without these an attempt has no bound of its own
    expect(phases.length).toBeGreaterThan(0);
    expect(fluentdTimeline(conf, 10).stop).toBe(documented);
  });
});

// ---------------------------------------------------------------------------
// The kubelet termination simulation itself, against the kubelet's code read by hand
// ---------------------------------------------------------------------------

describe('the termination simulation follows the kubelet', () => {
  const pod = (grace: number) => ({
    terminationGracePeriodSeconds: grace,
    containers: [{ name: 'app' }, { name: 'legacy', lifecycle: { preStop: { sleep: { seconds: 10 } } } }],
    initContainers: [
      { name: 'tools' },
      { name: 'n1', restartPolicy: 'Always' },
      { name: 'n2', restartPolicy: 'Always', lifecycle: { preStop: { exec: { command: ['/sidecar-tools/busybox', 'sleep', '1'] } } } },
    ],
  });
  const exits: Record<string, number> = { app: 10, legacy: 3, n1: 4, n2: 2 };
  const behaviour = (name: string): Behaviour => ({ exitAfterSigterm: exits[name] });
  const timeline = (minor: number, grace: number, minimumGrace = true) => {
    const sim = simulateTermination({ spec: pod(grace), minor, behaviour, minimumGrace });
    return Object.fromEntries([...sim.containers.values()].map(c => [c.name, [c.sigterm, c.exit, c.killed]]));
  };

  test('1.29+: spec.containers at once (after their preStop), then the native sidecars in reverse order', () => {
    // legacy: preStop 10, SIGTERM 10, exit 13; n2 waits for both, SIGTERM 13, exit 15; n1 after n2: 15, 19
    expect(timeline(29, 30)).toEqual({ app: [0, 10, false], legacy: [10, 13, false], n2: [13, 15, false], n1: [15, 19, false] });
  });

  test('before 1.29 (also 1.28 with the gate): everything at once, each after its own preStop', () => {
    expect(timeline(28, 30)).toEqual({ app: [0, 10, false], legacy: [10, 13, false], n2: [1, 3, false], n1: [0, 4, false] });
  });

  test('a grace period that runs out while a sidecar waits: SIGTERM early, with the kubelet\'s 2-second minimum', () => {
    // n1 waits from 0 for 15 s, but only 17 are left after n2... grace 17: n1 waits 15, has 2 left, needs 4
    expect(timeline(29, 17).n1).toEqual([15, 17, true]);
    // grace 12: n2 waits until 12 (early), gets the minimum 2 s and exits at 14; n1 waits for it until 12, then 2 s
    expect(timeline(29, 12)).toMatchObject({ n2: [12, 14, false], n1: [12, 14, true] });
    // without the minimum (how the budget is derived), the kill comes at the end of the grace period
    expect(timeline(29, 12, false)).toMatchObject({ n2: [12, 12, true], n1: [12, 12, true] });
    expect(leastGrace({ spec: pod(0), minor: 29, behaviour })).toBe(19);
  });
});

// ---------------------------------------------------------------------------
// The grace budget (issue 14, point 1) and the last line
// ---------------------------------------------------------------------------

/** How each container of a synthesized pod behaves: the sidecars as their models say, the app exits `appExit` s after SIGTERM. */
function behaviours(spec: any, constructs: Array<WithLogAgent | WithTracer | WithEnvoy>, appExit: number, others: Record<string, number> = {}) {
  // a native agent under the SIGTERM hold exits that much later (read from the manifest)
  const held = (name: string) => sigtermHoldOf([...spec.initContainers ?? [], ...spec.containers].find((c: any) => c.name === name));
  const stops = new Map(constructs.map(c => [c.containerName, specOf(c).stopSeconds + held(c.containerName)]));
  return (name: string): Behaviour => ({ exitAfterSigterm: stops.get(name) ?? others[name] ?? appExit });
}

/** The least grace period the synthesized pod needs, in the simulated kubelet, with the app taking `app` seconds. */
type Sidecar = WithLogAgent | WithTracer | WithEnvoy;
function simulatedNeed(spec: any, minor: number, constructs: Sidecar[], app: number, others: Record<string, number> = {}) {
  return leastGrace({ spec, minor, behaviour: behaviours(spec, constructs, app, others) }, sim => lastLineMissed(sim, constructs, others));
}

/**
 * The sidecars that got SIGTERM before they could read the app's last line: written when the
 * last app container exits in the simulation (after its own preStop hook and its shutdown).
 */
function lastLineMissed(sim: Simulation, constructs: Sidecar[], others: Record<string, number> = {}): string[] {
  const ours = new Set(constructs.map(c => c.containerName));
  const appExit = Math.max(0, ...[...sim.containers.values()].filter(c => c.kind === 'container' && !ours.has(c.name) && !(c.name in others)).map(c => c.exit));
  return constructs.flatMap(c => {
    const t = sim.containers.get(c.containerName)!;
    // a native sidecar from 1.29 is stopped after the app (its turn); one stopped with the app
    // must outlive it by the agent's read delay
    const read = t.kind === 'native' && sim.ordered ? 0 : specOf(c).readAfterAppExitSeconds ?? 0;
    return t.sigterm < appExit + read ? [`${c.containerName} stopped reading at ${t.sigterm}s, before the app's last line (at ${appExit}s) was in (${appExit + read}s)`] : [];
  });
}

describe('native and legacy sidecars in one pod (1.29+): the budget follows the kubelet\'s order', () => {
  function issueExample(grace?: number) {
    const { chart } = newChart();
    const workload = new kplus.Deployment(chart, 'web', {
      containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', portNumber: 8080 }],
      ...(grace !== undefined ? { terminationGracePeriod: Duration.seconds(grace) } : {}),
    });
    const appShutdownTime = Duration.seconds(30);
    const logs = new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.30', appShutdownTime });
    const tracer = new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.30', mode: SidecarMode.LEGACY, appShutdownTime });
    return { chart, constructs: [logs, tracer] };
  }

  test('issue 14\'s example: 1.30, the log agent native, the tracer LEGACY, appShutdownTime 30 s', () => {
    const { chart, constructs } = issueExample();
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    // the tracer exits at 30 + 11 = 41 s; only then does the log agent get SIGTERM and need its 8 s
    // (its SIGTERM held 2 s, then Grace 5 + exit 1)
    const need = simulatedNeed(spec, 30, constructs, 30);
    expect(need).toBe(49);
    expect(spec.terminationGracePeriodSeconds).toBe(need);
    // with what the library used to write, the log agent is killed before it has flushed
    const old = simulateTermination({ spec: { ...spec, terminationGracePeriodSeconds: 41 }, minor: 30, behaviour: behaviours(spec, constructs, 30) });
    expect(cutShort(old).join('\n')).toMatch(/'log-agent' is killed/);
  });

  test('issue 14\'s example with an explicit 45 s: an error with the arithmetic', () => {
    const { chart } = issueExample(45);
    expect(() => Testing.synth(chart)).toThrow(
      'terminationGracePeriodSeconds is 45, but its sidecars need 49 (native: every container of spec.containers 41s + log-agent 8s; ' +
      'legacy tracer: preStop delay 30s + stop 11s)',
    );
  });

  test('the user\'s own native sidecars (after ours in initContainers, so stopped before ours) count too', () => {
    const { chart } = newChart();
    const raw = rawDeployment(chart, 'raw', {
      containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0' }],
      initContainers: [{
        name: 'mesh',
        image: 'ghcr.io/example/mesh:1.0.0',
        restartPolicy: 'Always',
        startupProbe: { tcpSocket: { port: 15000 } },
      }],
    });
    const tracer = new WithTracer(chart, 'tracer', {
      workload: raw, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.30', appShutdownTime: Duration.seconds(20), userSidecarStopTime: Duration.seconds(7),
    });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    // the app's 20 s, the user's mesh (its 7 s, as the user says), then the tracer's 11 s
    const need = simulatedNeed(spec, 30, [tracer], 20, { mesh: 7 });
    expect(need).toBe(38);
    expect(spec.terminationGracePeriodSeconds).toBe(need);
  });
});

// ---------------------------------------------------------------------------
// The app's own preStop hook, an explicit grace above the need, the user's own native sidecars
// ---------------------------------------------------------------------------

/** A raw Deployment whose pod spec is `pod` (the app container named 'web'). */
function rawWebDeployment(chart: any, app: object = {}, pod: object = {}) {
  return new ApiObject(chart, 'web', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27', ...app }], ...pod } },
    },
  });
}

describe('the app\'s own preStop hook runs before its SIGTERM (kubelet killContainer: preStop, then SIGTERM)', () => {
  // The review's case: `preStop: sleep 20`, the app then takes its default 10 s: it exits at 30 s.
  test.each([
    ['1.30', { sleep: { seconds: 20 } }],
    ['1.33', { sleep: { seconds: 20 } }],
    ['1.29', { exec: { command: ['/bin/sleep', '20'] } }],
    ['1.29', { exec: { command: ['sleep', '20'] } }],
    ['1.27', { exec: { command: ['sleep', '20'] } }],
  ])('%s, preStop %j, with WithLogAgent: the log agent outlives the app and reads its last line', (version, preStop) => {
    const { chart } = newChart();
    const logs = new WithLogAgent(chart, 'logs', { workload: rawWebDeployment(chart, { lifecycle: { preStop } }), kubernetesVersion: version });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    const minor = Number(version.split('.')[1]);
    const sim = simulateTermination({ spec, minor, behaviour: behaviours(spec, [logs], 10) });
    // the simulated kubelet: the app's hook 20 s, then SIGTERM, exit 10 s later
    expect(sim.containers.get('web')).toMatchObject({ sigterm: 20, exit: 30, killed: false });
    expect(cutShort(sim)).toEqual([]);
    expect(lastLineMissed(sim, [logs])).toEqual([]);
    expect(spec.terminationGracePeriodSeconds).toBe(simulatedNeed(spec, minor, [logs], 10));
  });

  test('a hook whose duration cannot be read (ingress-nginx\'s /wait-shutdown), without appShutdownTime: bounded by the grace period, with a warning', () => {
    for (const [preStop, grace] of [
      [{ exec: { command: ['/wait-shutdown'] } }, undefined], [{ httpGet: { path: '/drain', port: 8080 } }, 60], [{ exec: { command: ['sh', '-c', 'sleep 5'] } }, 45],
    ] as const) {
      const { chart } = newChart();
      const logs = new WithLogAgent(chart, 'logs', {
        workload: rawWebDeployment(chart, { lifecycle: { preStop } }, grace === undefined ? {} : { terminationGracePeriodSeconds: grace }), kubernetesVersion: '1.30',
      });
      const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
      // the vendor's grace (Kubernetes' 30 s when unset) is the app's budget, hook included
      const budget = grace ?? 30;
      expect(SidecarWarnings.of(chart)).toEqual([expect.stringContaining(
        `Deployment 'web'): no appShutdownTime given, so the workload's ${grace === undefined ? "Kubernetes' default " : ''}terminationGracePeriodSeconds ${budget}s is taken as the app's own budget ` +
        "(its preStop hook included: container(s) 'web' have one whose duration the library cannot read",
      )]);
      // the simulated kubelet: however the budget splits between the hook and the app's shutdown, nobody is cut short and the last line is read
      const app = (hook: number) => (n: string): Behaviour => n === 'web' ? { exitAfterSigterm: budget - hook, preStopSeconds: hook } : behaviours(spec, [logs], 0)(n);
      expect(spec.terminationGracePeriodSeconds).toBe(leastGrace({ spec, minor: 30, behaviour: app(0) }, sim => lastLineMissed(sim, [logs])));
      for (const hook of [0, budget / 2, budget]) {
        const sim = simulateTermination({ spec, minor: 30, behaviour: app(hook) });
        expect(sim.containers.get('web')!.exit).toBe(budget);
        expect(cutShort(sim)).toEqual([]);
        expect(lastLineMissed(sim, [logs])).toEqual([]);
      }
    }
  });

  test('with appShutdownTime covering the hook and the app\'s shutdown, the sidecars outlive both', () => {
    const { chart } = newChart();
    const workload = rawWebDeployment(chart, { lifecycle: { preStop: { exec: { command: ['/wait-shutdown'] } } } }, { terminationGracePeriodSeconds: 300 });
    const logs = new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.30', appShutdownTime: Duration.seconds(280), agent: LogAgent.vector() });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    // the hook takes 250 s (the simulation cannot read it: the behaviour says it), the app 30 s more
    const sim = simulateTermination({ spec, minor: 30, behaviour: n => n === 'web' ? { exitAfterSigterm: 30, preStopSeconds: 250 } : behaviours(spec, [logs], 0)(n) });
    expect(sim.containers.get('web')!.exit).toBe(280);
    expect(cutShort(sim)).toEqual([]);
    expect(lastLineMissed(sim, [logs])).toEqual([]);
  });
});

describe('an explicit grace period above the need: the app may use it, and the sidecars still outlive it', () => {
  /**
   * Whether some preStop delay of each sidecar (searched, not computed) lets the pod serve an app
   * that exits at `appExit`: nobody cut short and every last line read.
   */
  function servable(spec: any, minor: number, constructs: Sidecar[], appExit: number): boolean {
    const names = constructs.map(c => c.containerName);
    const grace = spec.terminationGracePeriodSeconds;
    const tryDelays = (i: number, s: any): boolean => {
      if (i === names.length) {
        const sim = simulateTermination({ spec: s, minor, behaviour: behaviours(s, constructs, appExit) });
        return cutShort(sim).length === 0 && lastLineMissed(sim, constructs).length === 0;
      }
      for (let d = 0; d <= grace; d++) {
        const withHook = (c: any) => c.name !== names[i] ? c : { ...c, lifecycle: d > 0 ? { preStop: { sleep: { seconds: d } } } : undefined };
        if (tryDelays(i + 1, { ...s, containers: s.containers.map(withHook), initContainers: (s.initContainers ?? []).map(withHook) })) return true;
      }
      return false;
    };
    return tryDelays(0, spec);
  }

  test.each([
    ['1.30', {}],
    ['1.30', { mode: SidecarMode.LEGACY }],
    ['1.33', { agent: LogAgent.vector() }],
  ] as const)('%s %j: every app exit time that some choice of delays could serve within 60 s is served', (version, extra) => {
    const { chart } = newChart();
    const logs = new WithLogAgent(chart, 'logs', { workload: rawWebDeployment(chart, {}, { terminationGracePeriodSeconds: 60 }), kubernetesVersion: version, ...extra });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    expect(spec.terminationGracePeriodSeconds).toBe(60);
    const minor = Number(version.split('.')[1]);
    let latest = -1;
    for (let appExit = 0; appExit <= 60; appExit++) {
      if (!servable(spec, minor, [logs], appExit)) break;
      latest = appExit;
      const sim = simulateTermination({ spec, minor, behaviour: behaviours(spec, [logs], appExit) });
      expect([appExit, ...cutShort(sim), ...lastLineMissed(sim, [logs])]).toEqual([appExit]);
    }
    // well beyond the default appShutdownTime of 10 s
    expect(latest).toBeGreaterThan(40);
  });
});

test('a Job with an explicit grace period of 120 s: its pod still completes soon after its app (the slack is not given to the app)', () => {
  const { chart } = newChart();
  const job = new kplus.Job(chart, 'job', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0' }], terminationGracePeriod: Duration.seconds(120) });
  const logs = new WithLogAgent(chart, 'logs', { workload: job, kubernetesVersion: '1.30' });
  const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Job'));
  // the app completes: the kubelet stops the sidecars as in a termination that starts then
  const completed = { ...spec, containers: [] };
  const sim = simulateTermination({ spec: completed, minor: 30, behaviour: behaviours(completed, [logs], 0) });
  expect(sim.end).toBeLessThan(30);
});

describe('the user\'s own native sidecars: their stop time is the user\'s to say', () => {
  const mesh = { name: 'mesh', image: 'ghcr.io/example/tail:1', command: ['sh', '-c', 'tail -F /var/log/app/app.log'], restartPolicy: 'Always' };

  test('1.29+, with a native sidecar of ours that waits for them, without userSidecarStopTime: 10 s each is counted, with a warning', () => {
    const { chart } = newChart();
    const logs = new WithLogAgent(chart, 'logs', { workload: rawWebDeployment(chart, {}, { initContainers: [mesh, { ...mesh, name: 'mesh-2' }] }), kubernetesVersion: '1.30' });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    expect(SidecarWarnings.of(chart)).toEqual([
      "'test/web' (Deployment 'web'): has native sidecars of its own ('mesh', 'mesh-2'), which Kubernetes 1.30 stops one at a time with the library's ('log-agent'), " +
      'in reverse order of initContainers; how long each takes to stop after SIGTERM cannot be read from the manifest, so 10s each is counted in ' +
      'terminationGracePeriodSeconds. Set `userSidecarStopTime` on one of the sidecar constructs to the longest time one of them takes.',
    ]);
    // the simulated kubelet with each of them taking the documented 10 s (docs/target.md)
    expect(spec.terminationGracePeriodSeconds).toBe(simulatedNeed(spec, 30, [logs], 10, { 'mesh': 10, 'mesh-2': 10 }));
  });

  test('a sidecar that ignores SIGTERM (tail -F as PID 1) and is killed after the 7 s the user gives it: ours still get their time', () => {
    const { chart } = newChart();
    const logs = new WithLogAgent(chart, 'logs', {
      workload: rawWebDeployment(chart, {}, { initContainers: [mesh] }), kubernetesVersion: '1.30', userSidecarStopTime: Duration.seconds(7), appShutdownTime: Duration.seconds(20),
    });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    const need = simulatedNeed(spec, 30, [logs], 20, { mesh: 7 });
    expect(spec.terminationGracePeriodSeconds).toBe(need);
    // what the 2 s the library used to count would have left: the log agent killed
    const short = { ...spec, terminationGracePeriodSeconds: need - 5 };
    const sim = simulateTermination({ spec: short, minor: 30, behaviour: behaviours(short, [logs], 20, { mesh: 7 }) });
    expect(cutShort(sim).join('\n')).toMatch(/'log-agent' is killed/);
  });

  test('legacy sidecars of ours, or 1.28 (no ordered stop): no error, ours do not wait for them', () => {
    for (const [version, extra] of [['1.30', { mode: SidecarMode.LEGACY }], ['1.28', { sidecarContainersGate: true }]] as const) {
      const { chart } = newChart();
      new WithLogAgent(chart, 'logs', { workload: rawWebDeployment(chart, {}, { initContainers: [mesh] }), kubernetesVersion: version, ...extra });
      expect(() => Testing.synth(chart)).not.toThrow();
    }
  });
});

describe('the last line written at the app\'s exit is read and flushed before each agent\'s deadline', () => {
  const TARGETS = [
    ['1.27', {}],
    ['1.28', { sidecarContainersGate: true }],
    ['1.29', {}],
    ['1.30', {}],
    ['1.30', { mode: SidecarMode.LEGACY }],
  ] as const;

  test.each(COMBINATIONS.flatMap(([agent, output]) => TARGETS.map(([version, extra]) => [agent, output, version, extra] as const)))(
    '%s, %s output, Kubernetes %s %j, with a tracer and Envoy', (agent, output, version, extra) => {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, 'Deployment');
      const common = { workload, kubernetesVersion: version, ...extra };
      const constructs = [
        new WithLogAgent(chart, 'logs', { ...common, agent: AGENTS[agent](output), output: OUTPUTS[output]() }),
        new WithTracer(chart, 'tracer', { ...common, exporterEndpoint: ENDPOINT }),
        new WithEnvoy(chart, 'envoy', { ...common, appPort: 8080, appListensOnPodIp: true }),
      ];
      const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
      const minor = Number(version.split('.')[1]);
      // the app (10 s by default) may exit at once or use all of its time
      for (const appExit of [0, 5, 10]) {
        const sim = simulateTermination({ spec, minor, behaviour: behaviours(spec, constructs, appExit) });
        expect(cutShort(sim)).toEqual([]);
        for (const c of constructs) {
          const t = sim.containers.get(c.containerName)!;
          // still reading when the app's last line can be read, and its flush within the model's bound ends before the kill
          // (native from 1.29: its turn after the app; stopped with the app: the app's exit + the read delay)
          expect(t.sigterm).toBeGreaterThanOrEqual(appExit + (t.kind === 'native' && sim.ordered ? 0 : specOf(c).readAfterAppExitSeconds ?? 0));
          expect(t.sigterm + specOf(c).stopSeconds).toBeLessThanOrEqual(t.deadline);
        }
      }
    });
});

// ---------------------------------------------------------------------------
// Emit only what changes behaviour (issue 16, point 8)
// ---------------------------------------------------------------------------

describe('emit only what changes behaviour', () => {
  test('an unset grace period stays unset when Kubernetes\' 30 s are enough; raised when not', () => {
    const raw = (appShutdown: number) => {
      const { chart } = newChart();
      const workload = new ApiObject(chart, 'raw', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'raw' },
        spec: { selector: { matchLabels: { app: 'raw' } }, template: { metadata: { labels: { app: 'raw' } }, spec: { containers: [{ name: 'app', image: 'x' }] } } },
      });
      new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.30', appShutdownTime: Duration.seconds(appShutdown) });
      return podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).terminationGracePeriodSeconds;
    };
    expect(raw(10)).toBeUndefined(); // 10 + 11 = 21 <= 30
    expect(raw(19)).toBeUndefined(); // 30
    expect(raw(20)).toBe(31);
  });

  test('cdk8s-plus-27\'s own 30 stays as it wrote it (it is the same as unset)', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.30' });
    expect(podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).terminationGracePeriodSeconds).toBe(30);
  });

  test('a plain preStop delay before 1.30 runs busybox sleep without a shell; the Envoy POSTs still need one', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.27' });
    new WithEnvoy(chart, 'envoy', { workload, appPort: 8080, appListensOnPodIp: true, kubernetesVersion: '1.27' });
    const m = manifestOf(Testing.synth(chart), 'Deployment');
    expect(containerOf(m, 'tracer').lifecycle.preStop).toEqual({ exec: { command: ['/sidecar-tools/busybox', 'sleep', '10'] } });
    const envoy = containerOf(m, 'envoy').lifecycle.preStop.exec.command;
    expect(envoy.slice(0, 3)).toEqual(['/sidecar-tools/busybox', 'sh', '-c']);
    // the drain URLs are the script's arguments ($1, $2), the sleep after them
    expect(envoy[3]).toMatch(/"\$2"; \/sidecar-tools\/busybox sleep 10$/);
    expect(envoy.slice(4)).toEqual(['sh', 'http://127.0.0.1:9901/healthcheck/fail', 'http://127.0.0.1:9901/drain_listeners?inboundonly&graceful']);
  });

  test('engine: a sidecar that needs no delay gets no hook', () => {
    const spec = {
      owner: 'test',
      kind: 'Test',
      rank: RANK.TRACER,
      layout: 'NATIVE' as const,
      allowLegacyOnJob: false,
      container: { name: 'agent', image: 'x' },
      volumes: [],
      appMounts: [],
      appEnv: [],
      podAnnotations: {},
      shutdown: { stopSeconds: 3, appShutdownSeconds: 10 },
    };
    const input = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'x' }] } };
    const r = applySidecars(input, [spec], { minor: 30, gate: false });
    expect(r.errors).toEqual([]);
    expect(r.manifest.spec.initContainers[0].lifecycle).toBeUndefined();
    expect(r.manifest.spec.terminationGracePeriodSeconds).toBeUndefined();
  });
});

