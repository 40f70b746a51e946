import { ApiObject, Chart, Duration, JsonPatch, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { parse } from 'yaml';
import { readManifests } from './util/api-server-yaml';
import {
  containerOf, kplusWorkload, layoutOf, manifestOf, newChart, podMetadataOf, podSpecOf, rawDeployment, WorkloadKind,
} from './util/fixtures';
import { expectValidManifests, SCHEMA_RELEASES } from './util/k8s-schema';
// Imported module by module (not from '../src'), so that other constructs in progress cannot break this suite.
import { RANK } from '../src/engine/spec';
import { Images } from '../src/images';
import { SidecarBase, SidecarProps } from '../src/sidecar';
import { SidecarMode } from '../src/target/capabilities';
import { SidecarTimeline } from '../src/timeline';
import { SidecarWarnings } from '../src/warnings';
import { WithEnvoy } from '../src/with-envoy';
import { WithLogAgent } from '../src/with-log-agent';
import { OtlpProtocol, WithTracer, WithTracerProps } from '../src/with-tracer';

const ENDPOINT = 'otel-collector.observability:4317';
const NATIVE = '1.29';
const LEGACY = '1.27';

type Props = Partial<Omit<WithTracerProps, 'workload'>>;

/** A chart with one cdk8s-plus workload and a WithTracer on it. */
function setup(kind: WorkloadKind = 'Deployment', props: Props = {}) {
  const { chart } = newChart();
  const workload = kplusWorkload(chart, kind);
  const tracer = new WithTracer(chart, 'tracer', {
    workload,
    exporterEndpoint: ENDPOINT,
    kubernetesVersion: NATIVE,
    ...(kind === 'CronJob' || kind === 'Job' ? { allowLegacyOnJob: true } : {}),
    ...props,
  });
  return { chart, workload, tracer };
}

function synth(chart: Chart) {
  return Testing.synth(chart);
}

/** The workload manifest (the only one with a pod template). */
function workloadOf(manifests: any[]): any {
  const found = manifests.filter(m => ['Deployment', 'DaemonSet', 'StatefulSet', 'Job', 'CronJob', 'Pod'].includes(m.kind));
  expect(found).toHaveLength(1);
  return found[0];
}

/** The tracer's ConfigMap and its parsed collector config. */
function collectorConfig(manifests: any[]): { configMap: any; config: any; text: string } {
  const configMaps = manifests.filter(m => m.kind === 'ConfigMap' && m.data?.['config.yaml'] !== undefined);
  expect(configMaps).toHaveLength(1);
  const text = configMaps[0].data['config.yaml'];
  return { configMap: configMaps[0], config: parse(text), text };
}

function envOf(container: any): Record<string, any> {
  return Object.fromEntries((container.env ?? []).map((e: any) => [e.name, e.value ?? e.valueFrom]));
}

function envNames(container: any): string[] {
  return (container.env ?? []).map((e: any) => e.name);
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

/**
 * A stand-in for the proxy sidecar (WithEnvoy) with the proxy's rank: the order of the library's
 * sidecars is decided by rank alone, which is what these tests pin down.
 */
class FakeProxy extends SidecarBase {
  constructor(scope: Construct, id: string, props: SidecarProps) {
    super(scope, id, props, 'proxy');
    this._attach({
      kind: 'FakeProxy',
      rank: RANK.PROXY,
      image: 'envoyproxy/envoy:v1.36.4',
      args: [],
      user: 101,
      ports: [],
      health: { path: '/ready', port: 15021, startup: { periodSeconds: 1, failureThreshold: 3 } },
      resources: { limits: { cpu: '100m', memory: '64Mi' }, requests: { cpu: '10m', memory: '64Mi' } },
      volumes: [],
      shutdown: { stopSeconds: 2, readAfterAppExitSeconds: 0 },
    });
  }
}

// ---------------------------------------------------------------------------
// Snapshots: both layouts for Deployment, DaemonSet and CronJob
// ---------------------------------------------------------------------------

describe('snapshots', () => {
  const cases: Array<[WorkloadKind, string, string]> = [];
  for (const kind of ['Deployment', 'DaemonSet', 'CronJob'] as WorkloadKind[]) {
    cases.push([kind, 'native', NATIVE], [kind, 'legacy', LEGACY]);
  }
  test.each(cases)('%s, %s layout (Kubernetes %s)', (kind, _layout, version) => {
    // GIVEN
    const { chart } = setup(kind, { kubernetesVersion: version, exporterEndpoint: ENDPOINT });
    // WHEN
    const manifests = synth(chart);
    // THEN
    expectValidManifests(manifests, version);
    expect(manifests).toMatchSnapshot();
  });
});

describe('snapshot with holdApplicationUntilCollectorStarts', () => {
  test('Deployment, legacy layout (Kubernetes 1.27): the agent first, with its postStart wait', () => {
    const { chart } = setup('Deployment', { kubernetesVersion: LEGACY, holdApplicationUntilCollectorStarts: true });
    const manifests = synth(chart);
    expectValidManifests(manifests, LEGACY);
    expect(manifests).toMatchSnapshot();
  });
});

// ---------------------------------------------------------------------------
// Layout: started before the app, stopped after it
// ---------------------------------------------------------------------------

describe('layout', () => {
  test('native: the agent is an init container with restartPolicy Always, started (health check) before the app', () => {
    const { chart } = setup('Deployment', { kubernetesVersion: NATIVE });
    const m = workloadOf(synth(chart));
    expect(layoutOf(m)).toEqual({ init: ['tracer'], containers: ['app'] });
    const agent = containerOf(m, 'tracer');
    expect(agent.restartPolicy).toBe('Always');
    expect(agent.startupProbe).toEqual({ failureThreshold: 30, httpGet: { path: '/', port: 13133 }, periodSeconds: 1, timeoutSeconds: 1 });
    // not in the request path: a telemetry backend outage must not make the pod NotReady
    expect(agent.readinessProbe).toBeUndefined();
    // Native ordering does the shutdown work: no preStop delay.
    expect(agent.lifecycle).toBeUndefined();
  });

  test('legacy before 1.30: the agent follows the app and a busybox preStop sleep keeps it alive while the app shuts down', () => {
    const { chart } = setup('Deployment', { kubernetesVersion: LEGACY, appShutdownTime: Duration.seconds(12) });
    const m = workloadOf(synth(chart));
    expect(layoutOf(m)).toEqual({ init: ['sidecar-tools'], containers: ['app', 'tracer'] });
    const agent = containerOf(m, 'tracer');
    expect(agent.restartPolicy).toBeUndefined();
    // a plain delay: busybox sleep itself, no shell around it
    expect(agent.lifecycle).toEqual({ preStop: { exec: { command: ['/sidecar-tools/busybox', 'sleep', '12'] } } });
  });

  test('legacy from 1.30: the preStop delay is a sleep action (no shell in the distroless image)', () => {
    const { chart } = setup('Deployment', { kubernetesVersion: '1.30', mode: SidecarMode.LEGACY });
    const m = workloadOf(synth(chart));
    expect(layoutOf(m)).toEqual({ init: [], containers: ['app', 'tracer'] });
    expect(containerOf(m, 'tracer').lifecycle).toEqual({ preStop: { sleep: { seconds: 10 } } });
  });

  describe('holdApplicationUntilCollectorStarts', () => {
    /** The hook's argv: busybox's shell runs the wait script with the health URL and the tries as $1, $2. */
    const expectHold = (agent: any, url = 'http://127.0.0.1:13133/') => {
      const postStart = agent.lifecycle.postStart.exec.command;
      expect(postStart.slice(0, 3)).toEqual(['/sidecar-tools/busybox', 'sh', '-c']);
      expect(postStart[3]).toBe(
        'i=0; until /sidecar-tools/busybox wget -q -T 1 -O /dev/null "$1"; do i=$((i+1)); if [ $i -ge "$2" ]; then exit 0; fi; /sidecar-tools/busybox sleep 1; done',
      );
      // the startup probe's endpoint and budget (30 tries of a second)
      expect(postStart.slice(4)).toEqual(['sh', url, '30']);
      expect(url).toBe(`http://127.0.0.1:${agent.startupProbe.httpGet.port}${agent.startupProbe.httpGet.path}`);
      expect(agent.startupProbe.periodSeconds * agent.startupProbe.failureThreshold).toBe(30);
    };

    test('off by default: legacy keeps the agent after the app, without postStart', () => {
      const m = workloadOf(synth(setup('Deployment', { kubernetesVersion: LEGACY }).chart));
      expect(layoutOf(m).containers).toEqual(['app', 'tracer']);
      expect(containerOf(m, 'tracer').lifecycle.postStart).toBeUndefined();
    });

    test('legacy: the agent is FIRST in containers and its postStart waits for the health_check endpoint, so the app starts after it', () => {
      const m = workloadOf(synth(setup('Deployment', { kubernetesVersion: LEGACY, holdApplicationUntilCollectorStarts: true }).chart));
      expect(layoutOf(m)).toEqual({ init: ['sidecar-tools'], containers: ['tracer', 'app'] });
      const agent = containerOf(m, 'tracer');
      expectHold(agent);
      // the preStop delay is kept beside it
      expect(agent.lifecycle.preStop).toEqual({ exec: { command: ['/sidecar-tools/busybox', 'sleep', '10'] } });
      // busybox comes from the tools volume (the collector image has no shell)
      expect(agent.volumeMounts.map((v: any) => v.mountPath)).toContain('/sidecar-tools');
    });

    test('legacy from 1.30: the hold still needs busybox (the sleep action cannot wait for a URL), the preStop stays a sleep action', () => {
      const m = workloadOf(synth(setup('Deployment', { kubernetesVersion: '1.30', mode: SidecarMode.LEGACY, holdApplicationUntilCollectorStarts: true }).chart));
      expect(layoutOf(m)).toEqual({ init: ['sidecar-tools'], containers: ['tracer', 'app'] });
      expectHold(containerOf(m, 'tracer'));
      expect(containerOf(m, 'tracer').lifecycle.preStop).toEqual({ sleep: { seconds: 10 } });
    });

    test('the hold follows healthPort', () => {
      const m = workloadOf(synth(setup('Deployment', { kubernetesVersion: LEGACY, holdApplicationUntilCollectorStarts: true, healthPort: 13200 }).chart));
      expectHold(containerOf(m, 'tracer'), 'http://127.0.0.1:13200/');
    });

    test('with Envoy\'s hold too: both before the app (tracer, envoy, app), the log agent after it', () => {
      const { chart } = newChart();
      const workload = kplusWorkload(chart, 'Deployment');
      new WithEnvoy(chart, 'proxy', { workload, kubernetesVersion: LEGACY, appPort: 8080, appListensOnPodIp: true });
      new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: LEGACY, holdApplicationUntilCollectorStarts: true });
      new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: LEGACY });
      const manifests = synth(chart);
      expectValidManifests(manifests, LEGACY);
      expect(layoutOf(workloadOf(manifests)).containers).toEqual(['tracer', 'envoy', 'app', 'log-agent']);
    });

    test('native: no effect (the startup probe already starts the app after the agent); the manifest is the same as without it', () => {
      for (const version of [NATIVE, '1.33']) {
        const held = synth(setup('Deployment', { kubernetesVersion: version, holdApplicationUntilCollectorStarts: true }).chart);
        const plain = synth(setup('Deployment', { kubernetesVersion: version }).chart);
        expect(held).toEqual(plain);
        expect(layoutOf(workloadOf(held))).toEqual({ init: ['tracer'], containers: ['app'] });
        expect(containerOf(workloadOf(held), 'tracer').lifecycle).toBeUndefined();
      }
    });

    test('the API server reads the hook as written (argv with the URL and the tries)', () => {
      const { app } = (() => {
        const c = newChart();
        new WithTracer(c.chart, 'tracer', {
          workload: kplusWorkload(c.chart, 'Deployment'), exporterEndpoint: ENDPOINT, kubernetesVersion: LEGACY, holdApplicationUntilCollectorStarts: true,
        });
        return c;
      })();
      const read = readManifests(app.synthYaml()).filter(d => d !== null);
      const m = workloadOf(read);
      expect(layoutOf(m).containers).toEqual(['tracer', 'app']);
      expectHold(containerOf(m, 'tracer'));
    });

    test('the SidecarTimeline counts the hold: the app starts up to 59 s after the agent (30 tries of a 1 s request, a 1 s sleep between)', () => {
      const held = setup('Deployment', { kubernetesVersion: LEGACY, holdApplicationUntilCollectorStarts: true });
      synth(held.chart);
      const t = SidecarTimeline.of(held.workload);
      expect(t.startOrder.map(s => [s.name, s.role, s.startSeconds, s.startedSeconds])).toEqual([
        ['sidecar-tools', 'init', 0, 0], ['tracer', 'legacy sidecar', 0, 59], ['app', 'app', 59, 59],
      ]);
      expect(t.appStartSeconds).toBe(59);
      const plain = setup('Deployment', { kubernetesVersion: LEGACY });
      synth(plain.chart);
      expect(SidecarTimeline.of(plain.workload).appStartSeconds).toBe(0);
    });

    test('a legacy Job: the holding agent cannot exit with the app, so it is refused (naming the prop) unless allowLegacyOnJob', () => {
      const { chart } = newChart();
      new WithTracer(chart, 'tracer', { workload: kplusWorkload(chart, 'Job'), exporterEndpoint: ENDPOINT, kubernetesVersion: LEGACY, holdApplicationUntilCollectorStarts: true });
      expect(() => synth(chart)).toThrow(
        /WithTracer 'test\/tracer': a legacy sidecar on Job '.*' never exits, so the Job never completes; it holds the app until it is ready .*holdApplicationUntilCollectorStarts/,
      );
      const allowed = workloadOf(synth(setup('Job', { kubernetesVersion: LEGACY, holdApplicationUntilCollectorStarts: true }).chart));
      expect(layoutOf(allowed).containers).toEqual(['tracer', 'app']);
    });
  });

  test('with WithLogAgent, the native order is log agent then tracer (the tracer stops first, the log agent last)', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    // Created in the "wrong" order on purpose: the rank decides, not the creation order.
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE });
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: NATIVE });
    const manifests = synth(chart);
    expectValidManifests(manifests, NATIVE);
    // (no native sidecar has a preStop delay, issue 26; the tools run the log agent's SIGTERM hold, issue 51)
    expect(layoutOf(workloadOf(manifests))).toEqual({ init: ['sidecar-tools', 'log-agent', 'tracer'], containers: ['app'] });
  });

  test('with WithLogAgent, the legacy order is app, log agent, tracer', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: LEGACY });
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: LEGACY });
    const manifests = synth(chart);
    expectValidManifests(manifests, LEGACY);
    expect(layoutOf(workloadOf(manifests)).containers).toEqual(['app', 'log-agent', 'tracer']);
  });

  test('with a log agent and a proxy, the native order is log agent, tracer, proxy (stopped in reverse)', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new FakeProxy(chart, 'proxy', { workload, kubernetesVersion: NATIVE });
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE });
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: NATIVE });
    expect(layoutOf(workloadOf(synth(chart)))).toEqual({ init: ['sidecar-tools', 'log-agent', 'tracer', 'proxy'], containers: ['app'] });
  });

  test('with a log agent and a proxy, the legacy order is app, log agent, tracer, proxy', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new FakeProxy(chart, 'proxy', { workload, kubernetesVersion: LEGACY });
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: LEGACY });
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: LEGACY });
    expect(layoutOf(workloadOf(synth(chart))).containers).toEqual(['app', 'log-agent', 'tracer', 'proxy']);
  });

  test('the native agent comes before the user\'s init containers, so it serves them too', () => {
    const { chart, workload } = setup('Deployment');
    (workload as kplus.Deployment).addInitContainer({ name: 'migrate', image: 'ghcr.io/example/migrate:1.0.0' });
    expect(layoutOf(workloadOf(synth(chart))).init).toEqual(['tracer', 'migrate']);
  });

  test('the manifests validate against the strict schema of every release (AUTO mode)', () => {
    for (const version of SCHEMA_RELEASES) {
      const { chart } = setup('Deployment', { kubernetesVersion: version });
      const manifests = synth(chart);
      expectValidManifests(manifests, version);
      const layout = layoutOf(workloadOf(manifests));
      const native = Number(version.split('.')[1]) >= 29;
      expect(layout.init.includes('tracer')).toBe(native);
      expect(layout.containers.includes('tracer')).toBe(!native);
    }
  });

  test('the agent runs as the image\'s uid 10001 under the restricted Pod Security Standard, with its own small resources', () => {
    const agent = containerOf(workloadOf(synth(setup().chart)), 'tracer');
    expect(agent.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsGroup: 10001,
      runAsNonRoot: true,
      runAsUser: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(agent.resources).toEqual({ limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '50m', memory: '64Mi' } });
    expect(agent.image).toBe('otel/opentelemetry-collector:0.165.0');
    expect(agent.image).toBe(Images.OTEL_COLLECTOR);
    expect(agent.imagePullPolicy).toBe('IfNotPresent');
    // Only args: the image's own entrypoint (/otelcol, /otelcol-contrib, ...) runs.
    expect(agent.command).toBeUndefined();
    expect(agent.args).toEqual(['--config=/etc/otelcol/config.yaml']);
  });

  test('user and group can be set (a platform\'s uid range, a policy\'s uid); root is refused', () => {
    const agent = containerOf(workloadOf(synth(setup('Deployment', { user: 1000680000, group: 1000680001 }).chart)), 'tracer');
    const sc = agent.securityContext;
    expect([sc.runAsUser, sc.runAsGroup, sc.runAsNonRoot]).toEqual([1000680000, 1000680001, true]);
    const only = containerOf(workloadOf(synth(setup('Deployment', { user: 20000 }).chart)), 'tracer');
    expect([only.securityContext.runAsUser, only.securityContext.runAsGroup]).toEqual([20000, 20000]);
    expect(() => setup('Deployment', { user: 0 })).toThrow(/WithTracer 'test\/tracer': user 0 is not a non-root uid; use an integer from 1 to 2147483647 \(e\.g\. 10001\)/);
    expect(() => setup('Deployment', { group: -1 })).toThrow(/WithTracer 'test\/tracer': group -1 is not a gid/);
  });

  test('the image can be overridden', () => {
    const agent = containerOf(workloadOf(synth(setup('Deployment', { image: 'otel/opentelemetry-collector-contrib:0.139.0' }).chart)), 'tracer');
    expect(agent.image).toBe('otel/opentelemetry-collector-contrib:0.139.0');
  });
});

// ---------------------------------------------------------------------------
// Ports and bind addresses
// ---------------------------------------------------------------------------

describe('ports and bind addresses', () => {
  test('only the health port is a container port; the OTLP receivers listen on the loopback only', () => {
    const manifests = synth(setup().chart);
    const agent = containerOf(workloadOf(manifests), 'tracer');
    expect(agent.ports).toEqual([{ containerPort: 13133, name: 'otel-health', protocol: 'TCP' }]);
    const { config } = collectorConfig(manifests);
    expect(config.receivers.otlp.protocols).toEqual({
      grpc: { endpoint: '127.0.0.1:4317' },
      http: { endpoint: '127.0.0.1:4318' },
    });
  });

  test('the health_check extension listens on all interfaces, on the port and path the probes use', () => {
    const manifests = synth(setup('Deployment', { healthPort: 14000 }).chart);
    const agent = containerOf(workloadOf(manifests), 'tracer');
    const { config } = collectorConfig(manifests);
    expect(config.extensions.health_check).toEqual({ endpoint: '0.0.0.0:14000', path: '/' });
    expect(agent.startupProbe.httpGet).toEqual({ path: config.extensions.health_check.path, port: 14000 });
    expect(agent.ports).toEqual([{ containerPort: 14000, name: 'otel-health', protocol: 'TCP' }]);
  });

  test('the collector\'s own metrics server is off (no port 8888 to collide with the app)', () => {
    const { config, text } = collectorConfig(synth(setup().chart));
    expect(config.service.telemetry).toEqual({ metrics: { level: 'none' } });
    expect(text).not.toContain('8888');
  });

  test.each([4317, 4318])('an app port %d collides with the agent\'s loopback receiver', (port) => {
    const { chart } = newChart();
    const workload = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', portNumber: port }] });
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE });
    expect(() => synth(chart)).toThrow(new RegExp(`WithTracer 'test/tracer': port ${port} of sidecar 'tracer' is also a port of container 'app'`));
  });

  test('an app port 13133 collides with the health port; healthPort moves it', () => {
    const make = (healthPort?: number) => {
      const { chart } = newChart();
      const workload = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', portNumber: 13133 }] });
      new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE, healthPort });
      return chart;
    };
    expect(() => synth(make())).toThrow(/port 13133 of sidecar 'tracer' is also a port of container 'app'/);
    expect(() => synth(make(13134))).not.toThrow();
  });
});

// ---------------------------------------------------------------------------
// App env
// ---------------------------------------------------------------------------

describe('app env', () => {
  test('every app container gets the SDK variables, pointing at the local agent over gRPC', () => {
    const manifests = synth(setup().chart);
    const m = workloadOf(manifests);
    const env = envOf(containerOf(m, 'app'));
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://127.0.0.1:4317');
    expect(env.OTEL_EXPORTER_OTLP_PROTOCOL).toBe('grpc');
    // the name cdk8s generated ('test-web-c8ba1bf5') is not the service's: the workload's construct id is (issue 39)
    expect(m.metadata.name).toMatch(/^test-web-[0-9a-f]{8}$/);
    expect(env.OTEL_SERVICE_NAME).toBe('web');
    expect(env.OTEL_RESOURCE_ATTRIBUTES).toBe(
      'k8s.namespace.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAMESPACE),k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),' +
      'k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),k8s.pod.uid=$(OTEL_RESOURCE_ATTRIBUTES_POD_UID),' +
      `k8s.deployment.name=${m.metadata.name}`,
    );
    expect(env.OTEL_RESOURCE_ATTRIBUTES_POD_NAME).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(env.OTEL_RESOURCE_ATTRIBUTES_POD_NAMESPACE).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
    expect(env.OTEL_RESOURCE_ATTRIBUTES_NODE_NAME).toEqual({ fieldRef: { fieldPath: 'spec.nodeName' } });
    expect(env.OTEL_RESOURCE_ATTRIBUTES_POD_UID).toEqual({ fieldRef: { fieldPath: 'metadata.uid' } });
    // No sampler unless asked for.
    expect(env.OTEL_TRACES_SAMPLER).toBeUndefined();
    expect(env.OTEL_TRACES_SAMPLER_ARG).toBeUndefined();
  });

  test('the variables that OTEL_RESOURCE_ATTRIBUTES references come before it (the kubelet expands $(VAR) only from earlier ones)', () => {
    const app = containerOf(workloadOf(synth(setup().chart)), 'app');
    const names = envNames(app);
    const value: string = envOf(app).OTEL_RESOURCE_ATTRIBUTES;
    const refs = [...value.matchAll(/\$\(([A-Z_]+)\)/g)].map(r => r[1]);
    expect(refs).toHaveLength(4);
    for (const ref of refs) {
      expect(names.indexOf(ref)).toBeGreaterThanOrEqual(0);
      expect(names.indexOf(ref)).toBeLessThan(names.indexOf('OTEL_RESOURCE_ATTRIBUTES'));
    }
  });

  test('a container added to the workload AFTER the construct gets the env too', () => {
    const { chart, workload } = setup();
    (workload as kplus.Deployment).addContainer({ name: 'worker', image: 'ghcr.io/example/worker:1.0.0', portNumber: 9090 });
    const m = workloadOf(synth(chart));
    expect(layoutOf(m).containers).toEqual(['app', 'worker']);
    const env = envOf(containerOf(m, 'worker'));
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://127.0.0.1:4317');
    // the name cdk8s generated ('test-web-c8ba1bf5') is not the service's: the workload's construct id is (issue 39)
    expect(m.metadata.name).toMatch(/^test-web-[0-9a-f]{8}$/);
    expect(env.OTEL_SERVICE_NAME).toBe('web');
    expect(env.OTEL_RESOURCE_ATTRIBUTES).toContain('k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME)');
  });

  test('a value the user already set on a container wins; the other variables are still added', () => {
    const { chart } = newChart();
    const workload = new kplus.Deployment(chart, 'web', {
      containers: [
        {
          name: 'app',
          image: 'ghcr.io/example/app:1.0.0',
          portNumber: 8080,
          envVariables: {
            OTEL_SERVICE_NAME: kplus.EnvValue.fromValue('checkout'),
            OTEL_EXPORTER_OTLP_PROTOCOL: kplus.EnvValue.fromValue('http/protobuf'),
          },
        },
        { name: 'sidecar-of-the-app', image: 'ghcr.io/example/helper:1.0.0' },
      ],
    });
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE, serviceName: 'ours' });
    const m = workloadOf(synth(chart));
    const app = containerOf(m, 'app');
    expect(app.env.filter((e: any) => e.name === 'OTEL_SERVICE_NAME')).toEqual([{ name: 'OTEL_SERVICE_NAME', value: 'checkout' }]);
    expect(app.env.filter((e: any) => e.name === 'OTEL_EXPORTER_OTLP_PROTOCOL')).toEqual([{ name: 'OTEL_EXPORTER_OTLP_PROTOCOL', value: 'http/protobuf' }]);
    expect(envOf(app).OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://127.0.0.1:4317');
    // The other container did not set it, so it gets ours.
    expect(envOf(containerOf(m, 'sidecar-of-the-app')).OTEL_SERVICE_NAME).toBe('ours');
  });

  test('OtlpProtocol.HTTP_PROTOBUF points the app at the HTTP receiver', () => {
    const { chart, tracer } = setup('Deployment', { protocol: OtlpProtocol.HTTP_PROTOBUF });
    const env = envOf(containerOf(workloadOf(synth(chart)), 'app'));
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://127.0.0.1:4318');
    expect(env.OTEL_EXPORTER_OTLP_PROTOCOL).toBe('http/protobuf');
    expect(tracer.appEndpoint).toBe('http://127.0.0.1:4318');
  });

  test('serviceName and resourceAttributes are passed on; values are percent-encoded and `$` is escaped', () => {
    const { chart, tracer } = setup('Deployment', {
      serviceName: 'pay$ments',
      resourceAttributes: { 'deployment.environment.name': 'prod', 'team': 'a,b=c $(X)' },
    });
    const env = envOf(containerOf(workloadOf(synth(chart)), 'app'));
    expect(tracer.serviceName).toBe('pay$ments');
    expect(env.OTEL_SERVICE_NAME).toBe('pay$$ments');
    expect(env.OTEL_RESOURCE_ATTRIBUTES).toMatch(/,deployment\.environment\.name=prod,team=a%2Cb%3Dc%20%24\(X\)$/);
  });

  test('samplingRatio sets parent-based head sampling in the SDK', () => {
    const env = envOf(containerOf(workloadOf(synth(setup('Deployment', { samplingRatio: 0.25 }).chart)), 'app'));
    expect(env.OTEL_TRACES_SAMPLER).toBe('parentbased_traceidratio');
    expect(env.OTEL_TRACES_SAMPLER_ARG).toBe('0.25');
    const zero = envOf(containerOf(workloadOf(synth(setup('Deployment', { samplingRatio: 0 }).chart)), 'app'));
    expect(zero.OTEL_TRACES_SAMPLER_ARG).toBe('0');
  });

  test('the workload attribute follows the kind; a bare Pod has none', () => {
    const expected: Array<[WorkloadKind, string | undefined]> = [
      ['Deployment', 'k8s.deployment.name'], ['StatefulSet', 'k8s.statefulset.name'], ['DaemonSet', 'k8s.daemonset.name'],
      ['Job', 'k8s.job.name'], ['CronJob', 'k8s.cronjob.name'], ['Pod', undefined],
    ];
    for (const [kind, attribute] of expected) {
      const manifests = synth(setup(kind).chart);
      const m = workloadOf(manifests);
      const attrs: string = envOf(containerOf(m, 'app')).OTEL_RESOURCE_ATTRIBUTES;
      const { config } = collectorConfig(manifests);
      const keys = config.processors.resource.attributes.map((a: any) => a.key);
      if (attribute) {
        expect(attrs).toContain(`${attribute}=${m.metadata.name}`);
        // the config only refers to an env var, so every workload of a kind shares one config text
        expect(config.processors.resource.attributes).toContainEqual({ action: 'insert', key: attribute, value: '${env:K8S_WORKLOAD_NAME}' });
        expect(envOf(containerOf(m, 'tracer')).K8S_WORKLOAD_NAME).toBe(m.metadata.name);
      } else {
        expect(attrs).not.toMatch(/k8s\.[a-z]+\.name=(?!\$)/);
        expect(keys).toEqual(['k8s.namespace.name', 'k8s.node.name', 'k8s.pod.name', 'k8s.pod.uid']);
      }
    }
  });

  test('init containers are not app containers: they get no SDK env', () => {
    const { chart, workload } = setup();
    (workload as kplus.Deployment).addInitContainer({ name: 'migrate', image: 'ghcr.io/example/migrate:1.0.0' });
    expect(envOf(containerOf(workloadOf(synth(chart)), 'migrate')).OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------
// Collector config
// ---------------------------------------------------------------------------

describe('collector config', () => {
  test('every pipeline names only defined receivers, processors and exporters; every extension is enabled', () => {
    const secret = (chart: Chart) => kplus.Secret.fromSecretName(chart, 'auth', 'otel-auth');
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithTracer(chart, 'tracer', {
      workload, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE, exporterHeaders: { authorization: { secret: secret(chart), key: 'token' } },
    });
    const { config } = collectorConfig(synth(chart));
    const pipelines = Object.entries<any>(config.service.pipelines);
    expect(pipelines.map(([name]) => name).sort()).toEqual(['logs', 'metrics', 'traces']);
    for (const [name, p] of pipelines) {
      expect({ name, receivers: p.receivers.length > 0, exporters: p.exporters.length > 0 }).toEqual({ name, receivers: true, exporters: true });
      for (const r of p.receivers) expect(Object.keys(config.receivers)).toContain(r);
      for (const x of p.processors) expect(Object.keys(config.processors)).toContain(x);
      for (const e of p.exporters) expect(Object.keys(config.exporters)).toContain(e);
      // memory_limiter first (it pushes back on the receivers); batching is in the exporters.
      expect(p.processors[0]).toBe('memory_limiter');
      expect(p.processors).not.toContain('batch');
    }
    expect([...config.service.extensions].sort()).toEqual(Object.keys(config.extensions).sort());
    // Nothing defined and left unused.
    const used = (kind: string) => new Set(pipelines.flatMap(([, p]) => p[kind] ?? []));
    expect(Object.keys(config.receivers).every(r => used('receivers').has(r))).toBe(true);
    expect(Object.keys(config.processors).every(r => used('processors').has(r))).toBe(true);
    expect(Object.keys(config.exporters).every(r => used('exporters').has(r))).toBe(true);
  });

  test('the exporters (one per signal) send to exporterEndpoint over TLS by default', () => {
    const { config } = collectorConfig(synth(setup().chart));
    expect(Object.keys(config.exporters)).toEqual(['otlp_grpc/traces', 'otlp_grpc/metrics', 'otlp_grpc/logs']);
    for (const signal of ['traces', 'metrics', 'logs']) {
      const exporter = config.exporters[`otlp_grpc/${signal}`];
      expect(config.service.pipelines[signal].exporters).toEqual([`otlp_grpc/${signal}`]);
      expect(exporter.endpoint).toBe(ENDPOINT);
      expect(exporter.tls).toEqual({ insecure: false });
      expect(exporter.headers).toBeUndefined();
    }
  });

  test('exporterTls: false makes the exporter plaintext', () => {
    const { config } = collectorConfig(synth(setup('Deployment', { exporterTls: false }).chart));
    for (const exporter of Object.values<any>(config.exporters)) expect(exporter.tls).toEqual({ insecure: true });
  });

  test('headers come from Secrets through env vars; the ConfigMap holds only ${env:...} references', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    const secret = kplus.Secret.fromSecretName(chart, 'auth', 'backend-credentials');
    new WithTracer(chart, 'tracer', {
      workload,
      exporterEndpoint: 'api.backend.example:443',
      kubernetesVersion: NATIVE,
      exporterHeaders: {
        'authorization': { secret, key: 'bearer-token' },
        'x-api-key': { secret, key: 'api-key' },
      },
    });
    const manifests = synth(chart);
    const agent = containerOf(workloadOf(manifests), 'tracer');
    const { config, configMap } = collectorConfig(manifests);
    expect(config.exporters['otlp_grpc/traces'].headers).toEqual({
      'authorization': '${env:OTEL_EXPORTER_HEADER_AUTHORIZATION}',
      'x-api-key': '${env:OTEL_EXPORTER_HEADER_X_API_KEY}',
    });
    const env = envOf(agent);
    expect(env.OTEL_EXPORTER_HEADER_AUTHORIZATION).toEqual({ secretKeyRef: { key: 'bearer-token', name: 'backend-credentials' } });
    expect(env.OTEL_EXPORTER_HEADER_X_API_KEY).toEqual({ secretKeyRef: { key: 'api-key', name: 'backend-credentials' } });
    // The secret itself is nowhere in the ConfigMap, and no env var of the app carries it.
    expect(JSON.stringify(configMap)).not.toMatch(/backend-credentials|bearer-token|api-key"/);
    expect(envOf(containerOf(workloadOf(manifests), 'app')).OTEL_EXPORTER_HEADER_AUTHORIZATION).toBeUndefined();
  });

  test('resource attributes come from the downward API of the agent container', () => {
    const manifests = synth(setup().chart);
    const agent = containerOf(workloadOf(manifests), 'tracer');
    const { config } = collectorConfig(manifests);
    const env = envOf(agent);
    expect(config.processors.resource.attributes.every((a: any) => String(a.value).startsWith('${env:'))).toBe(true);
    const fromEnv = config.processors.resource.attributes.filter((a: any) => a.key !== 'k8s.deployment.name');
    expect(fromEnv.map((a: any) => a.key)).toEqual(['k8s.namespace.name', 'k8s.node.name', 'k8s.pod.name', 'k8s.pod.uid']);
    const fieldPaths: Record<string, string> = {
      'k8s.namespace.name': 'metadata.namespace',
      'k8s.node.name': 'spec.nodeName',
      'k8s.pod.name': 'metadata.name',
      'k8s.pod.uid': 'metadata.uid',
    };
    for (const a of fromEnv) {
      const name = /^\$\{env:([A-Z_]+)\}$/.exec(a.value)![1];
      expect(env[name]).toEqual({ fieldRef: { fieldPath: fieldPaths[a.key] } });
      // insert: a value the SDK already set wins.
      expect(a.action).toBe('insert');
    }
  });

  test('two workloads of a kind share one config text (the ConfigMaps are byte-identical)', () => {
    const { chart } = newChart();
    for (const id of ['a', 'b']) {
      const workload = kplusWorkload(chart, 'Deployment', id);
      new WithTracer(chart, `${id}-tracer`, { workload, exporterEndpoint: 'otel-collector.observability:4317' });
    }
    const configs = synth(chart).filter(m => m.kind === 'ConfigMap').map(m => m.data['config.yaml']);
    expect(configs).toHaveLength(2);
    expect(configs[0]).toBe(configs[1]);
  });

  test('every ${env:VAR} in the config is defined on the agent container', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    const secret = kplus.Secret.fromSecretName(chart, 'auth', 'otel-auth');
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE, exporterHeaders: { 'x-key': { secret, key: 'k' } } });
    const manifests = synth(chart);
    const names = envNames(containerOf(workloadOf(manifests), 'tracer'));
    const refs = [...collectorConfig(manifests).text.matchAll(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)].map(r => r[1]);
    expect(refs.length).toBeGreaterThan(0);
    for (const r of refs) expect(names).toContain(r);
  });

  test('the config is mounted read-only where --config points, from the ConfigMap the construct owns', () => {
    const { chart, tracer } = setup();
    const manifests = synth(chart);
    const m = workloadOf(manifests);
    const agent = containerOf(m, 'tracer');
    const { configMap } = collectorConfig(manifests);
    expect(agent.volumeMounts).toEqual([{ mountPath: '/etc/otelcol', name: 'tracer-config', readOnly: true }]);
    expect(podSpecOf(m).volumes).toContainEqual({ configMap: { name: configMap.metadata.name }, name: 'tracer-config' });
    expect(tracer.node.findAll().some(c => ApiObject.isApiObject(c) && c.kind === 'ConfigMap')).toBe(true);
    // The checksum annotation rolls the pods when the config changes.
    const annotation = podMetadataOf(m).annotations['checksum.sidecars.cdk8s.io/tracer'];
    expect(annotation).toMatch(/^[0-9a-f]{64}$/);
    const other = workloadOf(synth(setup('Deployment', { exporterEndpoint: 'elsewhere:4317' }).chart));
    expect(podMetadataOf(other).annotations['checksum.sidecars.cdk8s.io/tracer']).not.toBe(annotation);
  });

  test('the ConfigMap lives in the workload\'s namespace', () => {
    const { chart } = newChart();
    const workload = new kplus.Deployment(chart, 'web', { metadata: { namespace: 'shop' }, containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', portNumber: 8080 }] });
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE });
    expect(collectorConfig(synth(chart)).configMap.metadata.namespace).toBe('shop');
  });

  test('memory_limiter and GOMEMLIMIT follow the container\'s memory limit', () => {
    const check = (props: Props, limit: number, spike: number) => {
      const manifests = synth(setup('Deployment', props).chart);
      const { config } = collectorConfig(manifests);
      expect(config.processors.memory_limiter).toEqual({ check_interval: '1s', limit_mib: limit, spike_limit_mib: spike });
      expect(envOf(containerOf(workloadOf(manifests), 'tracer')).GOMEMLIMIT).toBe(`${limit}MiB`);
    };
    check({}, 102, 20);
    check({ resources: { memory: { limit: Size.mebibytes(512) } } }, 409, 81);
  });
});

// ---------------------------------------------------------------------------
// Graceful shutdown
// ---------------------------------------------------------------------------

describe('graceful shutdown', () => {
  test('the drain is bounded: the exporters, stopped one after another, share drainTime as their timeouts; one round each', () => {
    const timeouts = (c: any) => ['traces', 'metrics', 'logs'].map(signal => c.exporters[`otlp_grpc/${signal}`].timeout);
    const { config } = collectorConfig(synth(setup().chart));
    expect(timeouts(config)).toEqual(['4s', '3s', '3s']);
    for (const exporter of Object.values<any>(config.exporters)) {
      // Batching in the exporter (collector RFC #15273), no max_size: a request is never split,
      // so at most queue_size batches for num_consumers workers (one round).
      const batch = { flush_timeout: '1s', sizer: 'items', min_size: 512 };
      expect(exporter.sending_queue).toEqual({ enabled: true, sizer: 'requests', num_consumers: 10, queue_size: 10, batch });
    }
    expect(config.processors.batch).toBeUndefined();
    for (const pipeline of Object.values<any>(config.service.pipelines)) expect(pipeline.processors).toEqual(['memory_limiter', 'resource']);
    const custom = collectorConfig(synth(setup('Deployment', { drainTime: Duration.seconds(7) }).chart)).config;
    expect(timeouts(custom)).toEqual(['3s', '2s', '2s']);
    const least = collectorConfig(synth(setup('Deployment', { drainTime: Duration.seconds(3) }).chart)).config;
    expect(timeouts(least)).toEqual(['1s', '1s', '1s']);
  });

  test('the drain counts toward the grace period (native: app, then the agent)', () => {
    const m = workloadOf(synth(setup('Deployment', { drainTime: Duration.seconds(40) }).chart));
    // app 10 s + drain 40 s + 1 s to exit
    expect(podSpecOf(m).terminationGracePeriodSeconds).toBe(51);
    // an odd drainTime too: drainTime + 1 s (it was 2 * floor(D / 2) + 1)
    const odd = workloadOf(synth(setup('Deployment', { drainTime: Duration.seconds(41) }).chart));
    expect(podSpecOf(odd).terminationGracePeriodSeconds).toBe(52);
  });

  test('a grace period shorter than the agent needs: with appShutdownTime an error that names the agent; without, the app\'s budget', () => {
    const make = (appShutdownTime?: Duration) => {
      const { chart } = newChart();
      const workload = new kplus.Deployment(chart, 'web', {
        containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', portNumber: 8080 }],
        terminationGracePeriod: Duration.seconds(15),
      });
      new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE, appShutdownTime });
      return chart;
    };
    expect(() => synth(make(Duration.seconds(10)))).toThrow(/terminationGracePeriodSeconds is 15, but its sidecars need 21 \(native: app 10s \+ tracer 11s\)/);
    // without it the vendor's 15 s is the app's; the collector's budgeted 11 s (docs/shutdown.md) comes on top
    const chart = make();
    expect(podSpecOf(manifestOf(synth(chart), 'Deployment')).terminationGracePeriodSeconds).toBe(26);
    expect(SidecarWarnings.of(chart)).toEqual([expect.stringMatching(/terminationGracePeriodSeconds 15s is taken as the app's own budget.*: terminationGracePeriodSeconds 26 \(native: the app within its terminationGracePeriodSeconds 15s \+ tracer 11s\)/)]);
  });
});

// ---------------------------------------------------------------------------
// Other workloads
// ---------------------------------------------------------------------------

describe('workloads', () => {
  test('a raw ApiObject Deployment (Include/Helm) works the same', () => {
    const { chart } = newChart();
    const raw = rawDeployment(chart);
    new WithTracer(chart, 'tracer', { workload: raw, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE });
    const manifests = synth(chart);
    expectValidManifests(manifests, NATIVE);
    const m = manifestOf(manifests, 'Deployment');
    expect(layoutOf(m)).toEqual({ init: ['tracer'], containers: ['app'] });
    expect(envOf(containerOf(m, 'app')).OTEL_SERVICE_NAME).toBe('raw');
  });

  test('a CronJob in the legacy layout: the default collector (entrypoint /otelcol) exits with the app; another image (entrypoint not known) is refused', () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'CronJob');
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: LEGACY });
    expect(containerOf(manifestOf(synth(chart), 'CronJob'), 'tracer').command.slice(4, 6)).toEqual(['sh', '/otelcol']);
    const other = newChart();
    new WithTracer(other.chart, 'tracer', {
      workload: kplusWorkload(other.chart, 'CronJob'), exporterEndpoint: ENDPOINT, kubernetesVersion: LEGACY, image: 'otel/opentelemetry-collector-contrib:0.159.0',
    });
    expect(() => synth(other.chart)).toThrow(/WithTracer 'test\/tracer': a legacy sidecar on CronJob '.*' never exits, so the Job never completes; the program its image runs is not known/);
  });

  test('one WithTracer per workload', () => {
    const { chart, workload } = setup();
    new WithTracer(chart, 'tracer2', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE, containerName: 'tracer2' });
    expect(() => synth(chart)).toThrow(/WithTracer 'test\/tracer2': Deployment '.*' already has one: WithTracer 'test\/tracer'; attach one WithTracer per workload\./);
  });
});

// ---------------------------------------------------------------------------
// Validation: each message names the construct, the bad value and the fix
// ---------------------------------------------------------------------------

describe('validation', () => {
  const who = "WithTracer 'test/tracer'";
  const secretOf = (chart: Chart) => kplus.Secret.fromSecretName(chart, 'auth', 'otel-auth');
  const make = (props: Partial<WithTracerProps>) => () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    const resolved = typeof (props as any).exporterHeaders === 'function' ? { ...props, exporterHeaders: (props as any).exporterHeaders(chart) } : props;
    new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: NATIVE, ...resolved } as WithTracerProps);
  };

  test.each([
    ['', `${who}: exporterEndpoint is empty; give the host:port of the central collector or backend (OTLP/gRPC), e.g. 'otel-collector.observability:4317'.`],
    ['https://api.example:443', `${who}: exporterEndpoint 'https://api.example:443' has a scheme ('https://'); give host:port only, e.g. 'otel-collector.observability:4317', and choose TLS with exporterTls.`],
    ['otel-collector.observability', `${who}: exporterEndpoint 'otel-collector.observability' is not host:port (the port is required); use e.g. 'otel-collector.observability:4317'.`],
    ['bad_host:4317', `${who}: exporterEndpoint 'bad_host:4317' has an invalid host 'bad_host'; use a DNS name or an IP address (IPv6 in brackets) followed by ':port', e.g. 'otel-collector.observability:4317'.`],
    ['collector:70000', `${who}: exporterEndpoint 'collector:70000' port 70000 is not a valid port; use an integer from 1 to 65535.`],
    ['collector:0', `${who}: exporterEndpoint 'collector:0' port 0 is not a valid port; use an integer from 1 to 65535.`],
    ['localhost:4317', `${who}: exporterEndpoint 'localhost:4317' is the agent's own receiver: the agent would export to itself in a loop. Give the central collector's address, e.g. 'otel-collector.observability:4317'.`],
    ['127.0.0.1:4318', `${who}: exporterEndpoint '127.0.0.1:4318' is the agent's own receiver: the agent would export to itself in a loop. Give the central collector's address, e.g. 'otel-collector.observability:4317'.`],
  ])('exporterEndpoint %j', (endpoint, message) => {
    expect(errorOf(make({ exporterEndpoint: endpoint }))).toBe(message);
  });

  test('valid endpoints: DNS name, IPv4, bracketed IPv6', () => {
    for (const endpoint of ['collector:4317', 'otel-collector.observability.svc.cluster.local:4317', '10.0.0.7:4317', '[fd00::7]:4317', 'localhost:14317']) {
      expect(make({ exporterEndpoint: endpoint })).not.toThrow();
    }
  });

  test.each([-0.1, 1.5, NaN, Infinity])('samplingRatio %p', (ratio) => {
    expect(errorOf(make({ samplingRatio: ratio }))).toBe(
      `${who}: samplingRatio ${ratio} is out of range; use a number from 0 (no traces) to 1 (every trace), e.g. 0.1.`,
    );
  });

  test.each([
    ['bad header', `${who}: exporterHeaders name 'bad header' is not a valid gRPC header name; use letters, digits, '-', '_' and '.', e.g. 'authorization' or 'x-api-key'.`],
    [':authority', `${who}: exporterHeaders name ':authority' is not a valid gRPC header name; use letters, digits, '-', '_' and '.', e.g. 'authorization' or 'x-api-key'.`],
    ['grpc-timeout', `${who}: exporterHeaders name 'grpc-timeout' is reserved by gRPC ('grpc-' prefix) or marks a binary value ('-bin' suffix); use a plain text header name.`],
    ['x-token-bin', `${who}: exporterHeaders name 'x-token-bin' is reserved by gRPC ('grpc-' prefix) or marks a binary value ('-bin' suffix); use a plain text header name.`],
  ])('exporterHeaders name %j', (name, message) => {
    expect(errorOf(make({ exporterHeaders: ((chart: Chart) => ({ [name]: { secret: secretOf(chart), key: 'k' } })) as any }))).toBe(message);
  });

  test('exporterHeaders that are one header for gRPC', () => {
    const headers = (chart: Chart) => {
      const secret = secretOf(chart);
      return { 'X-Key': { secret, key: 'a' }, 'x-key': { secret, key: 'b' } };
    };
    expect(errorOf(make({ exporterHeaders: headers as any }))).toBe(
      `${who}: exporterHeaders 'X-Key' and 'x-key' are the same header for gRPC (names are case-insensitive, and '-', '_', '.' map to one environment variable); keep one of them.`,
    );
  });

  test('exporterHeaders must be Secret values', () => {
    expect(errorOf(make({ exporterHeaders: { authorization: 'Bearer abc' as any } }))).toBe(
      `${who}: exporterHeaders 'authorization' needs a Secret reference ({ secret, key }, e.g. { secret: { name: 'otel-auth' }, key: 'token' }); values come only from Secrets.`,
    );
  });

  test('drainTime', () => {
    expect(errorOf(make({ drainTime: Duration.seconds(2) }))).toBe(
      `${who}: drainTime 2s is too short: it is split among the traces, metrics and logs exporters, which the collector stops ` +
      'one after another, and each export attempt needs a second; use at least Duration.seconds(3).',
    );
    expect(errorOf(make({ drainTime: Duration.millis(2500) }))).toBe(
      `${who}: drainTime 2.5s is not a whole, non-negative number of seconds; use e.g. Duration.seconds(10).`,
    );
  });

  test('holdApplicationUntilCollectorStarts must be a boolean (a JavaScript caller\'s \'false\' is truthy)', () => {
    expect(errorOf(make({ holdApplicationUntilCollectorStarts: 'false' as any }))).toBe(
      `${who}: holdApplicationUntilCollectorStarts "false" is not a boolean; use true or false (without quotes).`,
    );
  });

  test('healthPort', () => {
    expect(errorOf(make({ healthPort: 4317 }))).toBe(
      `${who}: healthPort 4317 is taken by the agent's OTLP receivers (4317, 4318); choose another port.`,
    );
    expect(errorOf(make({ healthPort: 0 }))).toBe(`${who}: healthPort 0 is not a valid port; use an integer from 1 to 65535.`);
  });

  test('serviceName', () => {
    expect(errorOf(make({ serviceName: ' ' }))).toBe(
      `${who}: serviceName ' ' must be a non-empty name without leading or trailing spaces or control characters, e.g. 'checkout'.`,
    );
  });

  test('resourceAttributes', () => {
    expect(errorOf(make({ resourceAttributes: { 'k8s.pod.name': 'x' } }))).toBe(
      `${who}: resourceAttributes key 'k8s.pod.name' is set by the construct (k8s.* from the downward API, service.name from serviceName); remove it, or use serviceName for the service name.`,
    );
    expect(errorOf(make({ resourceAttributes: { 'service.name': 'x' } }))).toMatch(/resourceAttributes key 'service.name' is set by the construct/);
    expect(errorOf(make({ resourceAttributes: { 'a=b': 'x' } }))).toBe(
      `${who}: resourceAttributes key 'a=b' is not a valid attribute key; use letters, digits, '.', '_' and '-', e.g. 'deployment.environment.name'.`,
    );
  });

  test('memory limit', () => {
    expect(errorOf(make({ resources: { memory: { limit: Size.mebibytes(32) } } }))).toBe(
      `${who}: memory limit 32Mi is too small for the collector (its process needs ~50 MiB besides its data); give resources.memory.limit at least Size.mebibytes(64).`,
    );
  });

  test('image', () => {
    expect(errorOf(make({ image: 'otel/opentelemetry-collector: 1' }))).toBe(
      `${who}: image 'otel/opentelemetry-collector: 1' is not an image reference; use e.g. 'otel/opentelemetry-collector:0.165.0'.`,
    );
  });

  test('containerName', () => {
    expect(errorOf(make({ containerName: 'Tracer' }))).toMatch(/^WithTracer 'test\/tracer': containerName 'Tracer' is not a valid DNS-1123 label/);
  });
});

// ---------------------------------------------------------------------------
// The default service name (issue 39), in the OpenTelemetry Operator's order
// ---------------------------------------------------------------------------

/**
 * The expectations are the operator's `chooseServiceName` (open-telemetry/opentelemetry-operator
 * internal/instrumentation/sdk.go, v0.158.0): the annotation `resource.opentelemetry.io/service.name`
 * first, then the labels of `constants.LabelAppName` in order (`app.kubernetes.io/instance`, then
 * `app.kubernetes.io/name`), then `k8s.deployment.name` (the workload's name), ...: the first
 * non-empty one. The library's one departure: a name cdk8s generated is replaced by the construct id.
 */
describe('OTEL_SERVICE_NAME by default: the OpenTelemetry Operator\'s order (chooseServiceName)', () => {
  const OPERATOR_ORDER: Array<[string, { labels?: Record<string, string>; annotations?: Record<string, string>; name?: string }, string]> = [
    ['the annotation resource.opentelemetry.io/service.name first',
      { annotations: { 'resource.opentelemetry.io/service.name': 'from-annotation' }, labels: { 'app.kubernetes.io/instance': 'i', 'app.kubernetes.io/name': 'n' }, name: 'named' },
      'from-annotation'],
    ['then the label app.kubernetes.io/instance', { labels: { 'app.kubernetes.io/instance': 'shop-web-prod', 'app.kubernetes.io/name': 'shop-web' }, name: 'named' }, 'shop-web-prod'],
    ['then the label app.kubernetes.io/name', { labels: { 'app.kubernetes.io/name': 'shop-web' }, name: 'named' }, 'shop-web'],
    ['an empty label counts as none', { labels: { 'app.kubernetes.io/instance': '', 'app.kubernetes.io/name': 'shop-web' } }, 'shop-web'],
    ['then the workload\'s name, when the chart gives one', { name: 'named' }, 'named'],
    ['a generated name: the construct id', {}, 'web'],
  ];

  test.each(OPERATOR_ORDER)('cdk8s-plus Deployment: %s', (_n, given, want) => {
    const chart = new Chart(Testing.app(), 'test');
    const workload = new kplus.Deployment(chart, 'web', {
      ...(given.name ? { metadata: { name: given.name } } : {}),
      podMetadata: { labels: given.labels, annotations: given.annotations },
      containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', securityContext: { user: 1000, group: 1000 } }],
    });
    const tracer = new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29' });
    expect(tracer.serviceName).toBe(want);
    expect(envOf(containerOf(workloadOf(synth(chart)), 'app')).OTEL_SERVICE_NAME).toBe(want);
  });

  test.each(OPERATOR_ORDER)('raw ApiObject (Deployment, CronJob, Pod): %s', (_n, given, want) => {
    for (const kind of ['Deployment', 'CronJob', 'Pod']) {
      const chart = new Chart(Testing.app(), 'test');
      const template = { metadata: { labels: given.labels, annotations: given.annotations }, spec: { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0' }], restartPolicy: kind === 'Deployment' ? undefined : 'Never' } };
      const spec = kind === 'Pod' ? undefined : kind === 'CronJob' ? { schedule: '0 * * * *', jobTemplate: { spec: { template } } } : { selector: { matchLabels: { a: 'b' } }, template };
      const workload = new ApiObject(chart, 'web', {
        apiVersion: kind === 'Deployment' ? 'apps/v1' : kind === 'CronJob' ? 'batch/v1' : 'v1',
        kind,
        metadata: { ...(given.name ? { name: given.name } : {}), ...(kind === 'Pod' ? template.metadata : {}) },
        spec: kind === 'Pod' ? template.spec : spec,
      });
      const tracer = new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29' });
      expect({ kind, name: tracer.serviceName }).toEqual({ kind, name: want });
    }
  });

  test('a raw workload is read as its own toJson() gives it: a label its JSON patch sets counts, also when another sidecar is bound first (read without an emit)', () => {
    const chart = new Chart(Testing.app(), 'test');
    const workload = rawDeployment(chart, 'web');
    workload.addJsonPatch(JsonPatch.add('/spec/template/metadata/labels/app.kubernetes.io~1name', 'patched'));
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.29' });
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29' }).serviceName).toBe('patched');
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
    }
    expect(envOf(containerOf(workloadOf(synth(chart)), 'app')).OTEL_SERVICE_NAME).toBe('patched');
  });

  test('serviceName given: it wins', () => {
    const chart = new Chart(Testing.app(), 'test');
    const workload = new kplus.Deployment(chart, 'web', { podMetadata: { labels: { 'app.kubernetes.io/name': 'x' } }, containers: [{ image: 'ghcr.io/example/app:1.0.0' }] });
    expect(new WithTracer(chart, 'tracer', { workload, exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29', serviceName: 'checkout' }).serviceName).toBe('checkout');
  });
});
