/**
 * Shutdown, end to end: each agent's shutdown model against numbers worked out by hand from the
 * agent's own code, the timeouts the renderers set for those models, the grace budget against
 * the kubelet termination simulation (test/util/kubelet-termination.ts), and what is emitted.
 */
import { ApiObject, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { parse as parseYaml } from 'yaml';
import {
  LogAgent, LogOutput, SidecarMode, WithEnvoy, WithLogAgent, WithTracer,
} from '../src';
import { containerOf, kplusWorkload, manifestOf, newChart, podSpecOf } from './util/fixtures';
import { parseFluentConf } from './util/fluentd-conf';
import { Behaviour, cutShort, leastGrace, simulateTermination } from './util/kubelet-termination';
import { envoyShutdown } from '../src/agents/envoy-shutdown';
import { FLUENT_BIT_SHUTDOWN, fluentBitShutdown } from '../src/agents/fluent-bit';
import { fluentdShutdown } from '../src/agents/fluentd';
import { otelCollectorShutdown } from '../src/agents/otel-collector';
import { vectorShutdown } from '../src/agents/vector';
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

/**
 * Worked out by hand from each agent's code at the pinned tag (see the models in src/agents/), with
 * the defaults: Fluent Bit Grace 5, Vector limit 5, Fluentd shutdownGrace 10.
 */
const BY_HAND: Record<AgentName, (o: OutputName) => { stop: number; read: number }> = {
  // 5 ticks of the engine, then an in-flight send: connect 5 + io 5, each noticed up to 2.5 s late
  // (1.5 s checks, whole-second deadlines), then exit 1. stdout has no connection.
  // Reading stops at SIGTERM: a new file is found within Refresh_Interval 1 s, + 1 s.
  'fluent-bit': o => ({ stop: o === 'stdout' ? 5 + 1 : 5 + 5 + 5 + 2.5 + 2.5 + 1, read: 2 }),
  // the graceful shutdown limit, then exit; the poll backoff is 2048 ms: 3 whole seconds
  'vector': () => ({ stop: 5 + 1, read: 3 }),
  // no limit of its own: the kubelet's kill at shutdownGrace; in_tail reads to the end at shutdown
  'fluentd': () => ({ stop: 10, read: 0 }),
};

describe('each agent\'s shutdown model: the budgeted stop time is the model\'s bound', () => {
  test.each(COMBINATIONS)('%s with the %s output', (agent, output) => {
    const { chart } = newChart();
    const construct = new WithLogAgent(chart, 'logs', {
      workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.30', agent: AGENTS[agent](output), output: OUTPUTS[output](),
    });
    const budgeted = specOf(construct);
    const model = {
      'fluent-bit': () => fluentBitShutdown(5, output),
      'vector': () => vectorShutdown(5),
      'fluentd': () => fluentdShutdown(10, construct.output._config),
    }[agent]();
    const hand = BY_HAND[agent](output);
    expect(model.stopSeconds).toBe(hand.stop);
    expect(model.readAfterAppExitSeconds).toBe(hand.read);
    expect(budgeted.stopSeconds).toBe(model.stopSeconds);
    expect(budgeted.readAfterAppExitSeconds ?? 0).toBe(model.readAfterAppExitSeconds);
  });

  test('the tracer: three exporters stopped one after another, timeouts adding up to drainTime, + 1 s to exit', () => {
    for (const drain of [3, 10, 11, 41]) {
      const { chart } = newChart();
      const tracer = new WithTracer(chart, 'tracer', {
        workload: kplusWorkload(chart, 'Deployment'), exporterEndpoint: ENDPOINT, kubernetesVersion: '1.30', drainTime: Duration.seconds(drain),
      });
      expect(otelCollectorShutdown(drain).stopSeconds).toBe(drain + 1);
      expect(specOf(tracer).stopSeconds).toBe(drain + 1);
      const config = parseYaml(manifestOf(Testing.synth(chart), 'ConfigMap').data['config.yaml']);
      const timeouts = ['traces', 'metrics', 'logs'].map(signal => Number(/^(\d+)s$/.exec(config.exporters[`otlp/${signal}`].timeout)![1]));
      expect(timeouts.reduce((a, b) => a + b, 0)).toBe(drain);
      expect(Math.min(...timeouts)).toBeGreaterThanOrEqual(1);
    }
  });

  test('Envoy: exits at once (its drain runs in preStop)', () => {
    const { chart } = newChart();
    const envoy = new WithEnvoy(chart, 'envoy', { workload: kplusWorkload(chart, 'Deployment'), appPort: 8080, kubernetesVersion: '1.30' });
    expect(envoyShutdown().stopSeconds).toBe(1);
    expect(specOf(envoy).stopSeconds).toBe(1);
  });

  test('Fluentd: shutdownGrace is all it gets, so each phase of one flush attempt gets a share of it', () => {
    const http = LogOutput.http({ host: 'logs.example.com' })._config;
    expect(fluentdShutdown(10, http).stopSeconds).toBe(10);
    // too short for one attempt of three 1-second phases and the exit: the bound is the attempt
    expect(fluentdShutdown(2, http).stopSeconds).toBe(3 + 1);
    expect(fluentdShutdown(2, LogOutput.stdout()._config).stopSeconds).toBe(2);
  });
});

describe('the timeouts the models rest on are in the rendered config', () => {
  function configOf(agent: AgentName, output: OutputName, file: string): string {
    const { chart } = newChart();
    new WithLogAgent(chart, 'logs', {
      workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.30', agent: AGENTS[agent](output), output: OUTPUTS[output](),
    });
    return manifestOf(Testing.synth(chart), 'ConfigMap').data[file];
  }

  test.each(Object.keys(OUTPUTS) as OutputName[])('Fluent Bit, %s: net.connect_timeout and net.io_timeout on every network output', output => {
    const conf = configOf('fluent-bit', output, 'fluent-bit.conf');
    const outputSection = conf.slice(conf.indexOf('[OUTPUT]'));
    const value = (key: string) => new RegExp(`^\\s+${key.replace('.', '\\.')}\\s+(\\S+)$`, 'm').exec(outputSection)?.[1];
    if (output === 'stdout') {
      expect(value('net.io_timeout')).toBeUndefined();
    } else {
      expect(value('net.connect_timeout')).toBe(`${FLUENT_BIT_SHUTDOWN.connectTimeoutSeconds}s`);
      expect(value('net.io_timeout')).toBe(`${FLUENT_BIT_SHUTDOWN.ioTimeoutSeconds}s`);
    }
    expect(/^\s+Refresh_Interval\s+1$/m.test(conf)).toBe(true);
  });

  test.each([
    // shutdownGrace 10, less 1 s to exit, shared by the phases of one attempt
    ['http', { open_timeout: '3', ssl_timeout: '3', read_timeout: '3' }],
    ['forward', { connect_timeout: '4', send_timeout: '4' }],
    ['elasticsearch', { request_timeout: '9' }],
    ['opensearch', { request_timeout: '9' }],
    ['loki', {}],
    ['stdout', {}],
  ] as const)('Fluentd, %s: %j', (output, expected) => {
    const conf = parseFluentConf(configOf('fluentd', output, 'fluent.conf'));
    const match = conf.find(d => d.name === 'match')!;
    const keys = ['open_timeout', 'ssl_timeout', 'read_timeout', 'connect_timeout', 'send_timeout', 'request_timeout'];
    const got = Object.fromEntries(keys.filter(k => match.params[k] !== undefined).map(k => [k, match.params[k].raw]));
    expect(got).toEqual(expected);
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
function behaviours(constructs: Array<WithLogAgent | WithTracer | WithEnvoy>, appExit: number, others: Record<string, number> = {}) {
  const stops = new Map(constructs.map(c => [c.containerName, specOf(c).stopSeconds]));
  return (name: string): Behaviour => ({ exitAfterSigterm: stops.get(name) ?? others[name] ?? appExit });
}

/** The least grace period the synthesized pod needs, in the simulated kubelet, with the app taking `app` seconds. */
type Sidecar = WithLogAgent | WithTracer | WithEnvoy;
function simulatedNeed(spec: any, minor: number, constructs: Sidecar[], app: number, others: Record<string, number> = {}) {
  const reads = new Map(constructs.map(c => [c.containerName, specOf(c).readAfterAppExitSeconds ?? 0]));
  return leastGrace({ spec, minor, behaviour: behaviours(constructs, app, others) }, sim => [...reads].flatMap(([name, read]) => {
    const c = sim.containers.get(name)!;
    return c.sigterm < app + read ? [`${name} stopped reading at ${c.sigterm}s`] : [];
  }));
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
    // the tracer exits at 30 + 11 = 41 s; only then does the log agent get SIGTERM and need its 6 s
    const need = simulatedNeed(spec, 30, constructs, 30);
    expect(need).toBe(47);
    expect(spec.terminationGracePeriodSeconds).toBe(need);
    // with what the library used to write, the log agent is killed before it has flushed
    const old = simulateTermination({ spec: { ...spec, terminationGracePeriodSeconds: 41 }, minor: 30, behaviour: behaviours(constructs, 30) });
    expect(cutShort(old).join('\n')).toMatch(/'log-agent' is killed/);
  });

  test('issue 14\'s example with an explicit 45 s: an error with the arithmetic', () => {
    const { chart } = issueExample(45);
    expect(() => Testing.synth(chart)).toThrow(
      'terminationGracePeriodSeconds is 45, but its sidecars need 47 (native: every container of spec.containers 41s + log-agent 6s; ' +
      'legacy tracer: preStop delay 30s + stop 11s)',
    );
  });

  test('the user\'s own native sidecars (after ours in initContainers, so stopped before ours) count too', () => {
    const { chart } = newChart();
    const raw = new ApiObject(chart, 'raw', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'raw' },
      spec: {
        selector: { matchLabels: { app: 'raw' } },
        template: {
          metadata: { labels: { app: 'raw' } },
          spec: {
            containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0' }],
            initContainers: [{
              name: 'mesh',
              image: 'ghcr.io/example/mesh:1.0.0',
              restartPolicy: 'Always',
              startupProbe: { tcpSocket: { port: 15000 } },
            }],
          },
        },
      },
    });
    const tracer = new WithTracer(chart, 'tracer', { workload: raw, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.30', appShutdownTime: Duration.seconds(20) });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
    // the app's 20 s, the user's mesh (the kubelet's minimum, 2 s), then the tracer's 11 s
    const need = simulatedNeed(spec, 30, [tracer], 20, { mesh: 2 });
    expect(need).toBe(33);
    expect(spec.terminationGracePeriodSeconds).toBe(need);
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
        const sim = simulateTermination({ spec, minor, behaviour: behaviours(constructs, appExit) });
        expect(cutShort(sim)).toEqual([]);
        for (const c of constructs) {
          const t = sim.containers.get(c.containerName)!;
          // still reading when the app's last line can be read, and its flush within the model's bound ends before the kill
          expect(t.sigterm).toBeGreaterThanOrEqual(appExit + (specOf(c).readAfterAppExitSeconds ?? 0));
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
    expect(envoy[3]).toMatch(/drain_listeners.*; \/sidecar-tools\/busybox sleep 10$/);
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

