import { createHash } from 'crypto';
import { ApiObject, Chart, Cron, Duration, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { EnvoyAppProtocol, EnvoyUpstream, SidecarMode, SidecarWarnings, WithEnvoy, WithEnvoyProps, WithLogAgent, WithTracer } from '../src';
import { readDoc } from './util/docs';
import { envoyBootstrapErrors, envoyMessageErrors, expectValidEnvoyBootstrap } from './util/envoy-proto';
import {
  APP_CONTAINER, WorkloadKind, containerOf, kplusWorkload as anyWorkload, layoutOf, manifestOf, newChart, podMetadataOf, podSpecOf, rawDeployment,
} from './util/fixtures';
import { SCHEMA_RELEASES, expectValidManifests } from './util/k8s-schema';
import { EnvoyBootstrapOptions, envoyConfigFiles, renderEnvoyConfigFiles } from '../src/agents/envoy/config';

type Extra = Partial<Omit<WithEnvoyProps, 'workload'>>;

/**
 * The app as the README tells users to write it behind Envoy: it listens on 127.0.0.1:8080 and
 * declares the port with `ports`, not `portNumber` (whose TCP startup probe on the pod IP could
 * never pass). The shared fixture's `portNumber: 8080` is that trap (see 'the app side' below).
 */
const appBehindEnvoy = (appPort = 8080): kplus.ContainerProps => ({ ...APP_CONTAINER, portNumber: undefined, ports: [{ number: appPort }] });

function kplusWorkload(scope: Construct, kind: WorkloadKind, id = 'web', appPort = 8080): kplus.AbstractPod {
  const containers = [appBehindEnvoy(appPort)];
  switch (kind) {
    case 'Deployment': return new kplus.Deployment(scope, id, { containers });
    case 'StatefulSet': {
      const service = new kplus.Service(scope, `${id}-svc`, { ports: [{ port: appPort }], clusterIP: 'None' });
      return new kplus.StatefulSet(scope, id, { containers, service });
    }
    case 'Job': return new kplus.Job(scope, id, { containers });
    default: return anyWorkload(scope, kind, id);
  }
}
type Kind = 'Deployment' | 'StatefulSet' | 'Job';

const TLS = { secret: { name: 'web-tls' }, clientCaSecret: { name: 'web-client-ca' } };
const PAYMENTS: EnvoyUpstream = { name: 'payments', localPort: 9001, host: 'payments.shop.svc.cluster.local', port: 8080 };
const PARTNER: EnvoyUpstream = { name: 'partner-api', localPort: 9002, host: 'api.partner.example.com', tls: true };

function synthEnvoy(kind: Kind, version: string, extra: Extra = {}) {
  const { chart } = newChart();
  const workload = kplusWorkload(chart, kind, 'web', extra.appPort);
  const envoy = new WithEnvoy(chart, 'envoy', { workload, kubernetesVersion: version, appPort: 8080, ...extra });
  const manifests = Testing.synth(chart);
  return { chart, workload, envoy, manifests, workloadManifest: manifestOf(manifests, kind) };
}

/** The files of the Envoy ConfigMap, parsed. */
function envoyFiles(manifests: any[]): Record<string, any> {
  const cm = manifests.find(m => m.kind === 'ConfigMap' && m.metadata.name.includes('envoy'));
  if (!cm) throw new Error('no Envoy ConfigMap');
  return Object.fromEntries(Object.entries(cm.data).map(([k, v]) => [k, JSON.parse(v as string)]));
}

function bootstrapOf(manifests: any[]): any {
  return envoyFiles(manifests)['envoy.json'];
}

/**
 * Construction renders the config once per distinct props and puts each workload's name in
 * afterwards (src/agents/envoy/config.ts envoyConfigFiles): the text must be what a render
 * for that workload gives, whichever workload came first.
 */
test('workloads with the same props get the same Envoy config but for node.id and node.cluster, their own names', () => {
  const { chart } = newChart();
  const propSets = [{}, { tls: TLS, upstreams: [PAYMENTS, PARTNER] }, {}, { tls: TLS, upstreams: [PAYMENTS, PARTNER] }, { upstreams: [PAYMENTS] }];
  propSets.forEach((extra, i) => {
    const workload = kplusWorkload(chart, 'Deployment', `web${i}`);
    new WithEnvoy(chart, `envoy${i}`, { workload, kubernetesVersion: '1.29', appPort: 8080, ...extra });
  });
  const manifests = Testing.synth(chart);
  const configs = propSets.map((_x, i) => {
    const dep = manifests.find((m: any) => m.kind === 'Deployment' && m.metadata.name.includes(`web${i}`));
    const volume = podSpecOf(dep).volumes.find((v: any) => v.name === 'envoy-config');
    const cm = manifests.find((m: any) => m.kind === 'ConfigMap' && m.metadata.name === volume.configMap.name);
    expect(Object.values(cm.data).join('')).not.toMatch(/\\u0000|\u0000/);
    const bootstrap = JSON.parse(cm.data['envoy.json']);
    expect(bootstrap.node).toEqual({ cluster: dep.metadata.name, id: dep.metadata.name });
    return { ...cm.data, 'envoy.json': JSON.stringify({ ...bootstrap, node: undefined }) };
  });
  expect(configs[2]).toEqual(configs[0]);
  expect(configs[3]).toEqual(configs[1]);
  expect(configs[1]).not.toEqual(configs[0]);
  expect(configs[4]).not.toEqual(configs[0]);
  expect(configs[4]).not.toEqual(configs[1]);
});

test('the memoized config files are byte for byte a direct render, for many option sets and names (JSON-escaped ones too)', () => {
  const base: EnvoyBootstrapOptions = {
    nodeId: 'web',
    nodeCluster: 'web',
    adminPort: 9901,
    listenerPort: 10000,
    appPort: 8080,
    appProtocol: 'HTTP1',
    healthPort: 15021,
    healthPath: '/ready',
    upstreams: [],
    accessLog: true,
    configDirectory: '/etc/envoy',
    maxHeapBytes: 200 * 1024 * 1024,
  };
  const variants: Array<Partial<EnvoyBootstrapOptions>> = [
    {},
    { tls: { certDirectory: '/etc/envoy/tls', clientCaDirectory: '/etc/envoy/client-ca' }, listenerPort: 8443 },
    { upstreams: [{ name: 'payments', localPort: 9001, host: 'payments.shop.svc.cluster.local', port: 8080, tls: false }] },
    { appProtocol: 'HTTP2', accessLog: false, xffNumTrustedHops: 2, streamIdleTimeoutSeconds: 300, appIdleTimeoutSeconds: 4 },
  ];
  const names = ['web', 'shop-web-c8a1b2c3', 'a.b', 'we"b\\x', 'a\u2028b', 'node-id'];
  for (const v of variants) {
    for (const name of names) {
      const o = { ...base, ...v, nodeId: name, nodeCluster: `${name}-cluster` };
      expect(envoyConfigFiles(o)).toEqual(renderEnvoyConfigFiles(o).files);
    }
  }
});

const listener = (b: any, name: string) => b.static_resources.listeners.find((l: any) => l.name === name);
const cluster = (b: any, name: string) => b.static_resources.clusters.find((c: any) => c.name === name);
const hcmOf = (l: any) => l.filter_chains[0].filters[0].typed_config;

const ADMIN = 'http://127.0.0.1:9901';
const POST = "/sidecar-tools/busybox wget -q -T 2 -O /dev/null --post-data ''";
// the URLs are the script's arguments ($1, $2), never spliced into it
const DRAIN_SCRIPT = `${POST} "$1"; ${POST} "$2"`;
const DRAIN_URLS = [`${ADMIN}/healthcheck/fail`, `${ADMIN}/drain_listeners?inboundonly&graceful`];
const shell = (script: string) => ({ exec: { command: ['/sidecar-tools/busybox', 'sh', '-c', script, 'sh', ...DRAIN_URLS] } });

describe('WithEnvoy snapshots: both layouts for Deployment, StatefulSet and Job', () => {
  for (const kind of ['Deployment', 'StatefulSet', 'Job'] as const) {
    test(`${kind}, Kubernetes 1.27 (legacy)`, () => {
      const { manifests, envoy } = synthEnvoy(kind, '1.27', {
        tls: TLS, upstreams: [PAYMENTS, PARTNER], ...(kind === 'Job' ? { allowLegacyOnJob: true } : {}),
      });
      expect(envoy.layout).toBe('LEGACY');
      expectValidManifests(manifests, '1.27');
      expect(manifests).toMatchSnapshot();
    });
    test(`${kind}, Kubernetes 1.29 (native)`, () => {
      const { manifests, envoy } = synthEnvoy(kind, '1.29', { tls: TLS, upstreams: [PAYMENTS, PARTNER] });
      expect(envoy.layout).toBe('NATIVE');
      expectValidManifests(manifests, '1.29');
      expect(manifests).toMatchSnapshot();
    });
  }
});

describe('native layout: Envoy is ready before the app and stopped after it', () => {
  test('Envoy is an init container with restartPolicy Always, a startupProbe, a readinessProbe and a livenessProbe on the health listener', () => {
    const { workloadManifest } = synthEnvoy('Deployment', '1.29');
    expect(layoutOf(workloadManifest)).toEqual({ init: ['sidecar-tools', 'envoy'], containers: ['app'] });
    const envoy = containerOf(workloadManifest, 'envoy');
    expect(envoy.restartPolicy).toBe('Always');
    // The kubelet starts the next container (the app) only once this probe succeeds.
    expect(envoy.startupProbe).toEqual({ failureThreshold: 120, httpGet: { path: '/ready', port: 15021 }, periodSeconds: 1, timeoutSeconds: 1 });
    expect(envoy.readinessProbe).toEqual({ failureThreshold: 3, httpGet: { path: '/ready', port: 15021 }, periodSeconds: 5, timeoutSeconds: 1 });
    // A hung Envoy is restarted (issue 28): the health listener, never the admin (test/liveness.test.ts).
    expect(envoy.livenessProbe).toEqual({ failureThreshold: 6, httpGet: { path: '/ready', port: 15021 }, periodSeconds: 10, timeoutSeconds: 5 });
  });

  test('preStop fails the health check and starts the graceful inbound drain; no delay, no postStart', () => {
    const { workloadManifest } = synthEnvoy('Deployment', '1.29');
    const envoy = containerOf(workloadManifest, 'envoy');
    expect(envoy.lifecycle).toEqual({ preStop: shell(DRAIN_SCRIPT) });
    expect(envoy.volumeMounts).toContainEqual({ mountPath: '/sidecar-tools', name: 'sidecar-tools', readOnly: true });
  });

  test('the drain lasts drainTime and empties every connection at once (--drain-strategy immediate)', () => {
    const { workloadManifest } = synthEnvoy('Deployment', '1.29', { drainTime: Duration.seconds(8) });
    const args: string[] = containerOf(workloadManifest, 'envoy').args;
    expect(args.slice(args.indexOf('--drain-time-s'), args.indexOf('--drain-time-s') + 2)).toEqual(['--drain-time-s', '8']);
    expect(args.slice(args.indexOf('--drain-strategy'), args.indexOf('--drain-strategy') + 2)).toEqual(['--drain-strategy', 'immediate']);
    expect(args).toContain('--disable-hot-restart');
  });

  test('order among the library\'s sidecars: log agent, then Envoy (Envoy stops first after the app)', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment') as kplus.Deployment;
    // created in the "wrong" order on purpose: ranks decide
    new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: '1.29', appPort: 8080 });
    new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: '1.29' });
    const manifests = Testing.synth(chart);
    const m = manifestOf(manifests, 'Deployment');
    expect(layoutOf(m)).toEqual({ init: ['sidecar-tools', 'log-agent', 'envoy'], containers: ['app'] });
    expectValidManifests(manifests, '1.29');
  });

  test('all three agents: log agent, tracer, Envoy in both layouts (the README table)', () => {
    for (const [version, expected] of [
      ['1.29', { init: ['sidecar-tools', 'log-agent', 'tracer', 'envoy'], containers: ['app'] }],
      ['1.27', { init: ['sidecar-tools'], containers: ['envoy', 'app', 'log-agent', 'tracer'] }],
    ] as const) {
      const { chart } = newChart();
      const dep = kplusWorkload(chart, 'Deployment');
      new WithEnvoy(chart, 'proxy', { workload: dep, kubernetesVersion: version, appPort: 8080 });
      new WithTracer(chart, 'tracer', { workload: dep, kubernetesVersion: version, exporterEndpoint: 'otel-collector.observability:4317' });
      new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: version });
      const manifests = Testing.synth(chart);
      expect(layoutOf(manifestOf(manifests, 'Deployment'))).toEqual(expected);
      expectValidManifests(manifests, version);
    }
  });

  test('Envoy goes before the user\'s own init containers (they can use its outbound routes)', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment') as kplus.Deployment;
    dep.addInitContainer({ name: 'migrate', image: 'ghcr.io/example/migrate:1', securityContext: { user: 1000 } });
    new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: '1.30', appPort: 8080, upstreams: [PAYMENTS] });
    const m = manifestOf(Testing.synth(chart), 'Deployment');
    expect(layoutOf(m).init).toEqual(['sidecar-tools', 'envoy', 'migrate']);
  });

  test('holdApplicationUntilProxyStarts does not apply: native always starts Envoy first', () => {
    const { workloadManifest } = synthEnvoy('Deployment', '1.29', { holdApplicationUntilProxyStarts: false });
    expect(layoutOf(workloadManifest)).toEqual({ init: ['sidecar-tools', 'envoy'], containers: ['app'] });
    expect(containerOf(workloadManifest, 'envoy').lifecycle.postStart).toBeUndefined();
  });

  test('a native Envoy on a Job does not block completion and needs no allowLegacyOnJob', () => {
    const { workloadManifest, manifests } = synthEnvoy('Job', '1.29');
    expect(layoutOf(workloadManifest)).toEqual({ init: ['sidecar-tools', 'envoy'], containers: ['app'] });
    expect(podSpecOf(workloadManifest).restartPolicy).toBe('Never');
    expectValidManifests(manifests, '1.29');
  });
});

describe('legacy layout', () => {
  test('by default Envoy is the FIRST container and its postStart waits until it is ready', () => {
    const { workloadManifest } = synthEnvoy('Deployment', '1.27');
    expect(layoutOf(workloadManifest)).toEqual({ init: ['sidecar-tools'], containers: ['envoy', 'app'] });
    const spec = podSpecOf(workloadManifest);
    for (const c of [...spec.initContainers, ...spec.containers]) expect(c.restartPolicy).toBeUndefined();
    const postStart = containerOf(workloadManifest, 'envoy').lifecycle.postStart.exec.command;
    expect(postStart.slice(0, 3)).toEqual(['/sidecar-tools/busybox', 'sh', '-c']);
    expect(postStart[3]).toContain('/sidecar-tools/busybox wget -q -T 1 -O /dev/null "$1"');
    expect(postStart[3]).toContain('if [ $i -ge "$2" ]; then exit 0; fi');
    expect(postStart.slice(4)).toEqual(['sh', 'http://127.0.0.1:15021/ready', '60']);
  });

  test('preStop: the same drain, then the app\'s shutdown time before Envoy gets SIGTERM', () => {
    const { workloadManifest } = synthEnvoy('Deployment', '1.27', { appShutdownTime: Duration.seconds(20) });
    expect(containerOf(workloadManifest, 'envoy').lifecycle.preStop).toEqual(shell(`${DRAIN_SCRIPT}; /sidecar-tools/busybox sleep 20`));
  });

  test('the drain script runs through busybox also from 1.30 (the sleep action cannot POST)', () => {
    const { workloadManifest, manifests } = synthEnvoy('Deployment', '1.31', { mode: SidecarMode.LEGACY });
    expect(containerOf(workloadManifest, 'envoy').lifecycle.preStop).toEqual(shell(`${DRAIN_SCRIPT}; /sidecar-tools/busybox sleep 10`));
    expectValidManifests(manifests, '1.31');
  });

  test('holdApplicationUntilProxyStarts: false puts Envoy last, without postStart', () => {
    const { workloadManifest } = synthEnvoy('Deployment', '1.27', { holdApplicationUntilProxyStarts: false });
    expect(layoutOf(workloadManifest).containers).toEqual(['app', 'envoy']);
    expect(containerOf(workloadManifest, 'envoy').lifecycle.postStart).toBeUndefined();
  });

  test('a legacy Envoy on a Job is refused unless allowLegacyOnJob (the app then calls /quitquitquit)', () => {
    const { chart } = newChart();
    new WithEnvoy(chart, 'envoy', { workload: kplusWorkload(chart, 'Job'), kubernetesVersion: '1.27', appPort: 8080 });
    expect(() => Testing.synth(chart)).toThrow(
      /\[test\/web\/Resource\] WithEnvoy 'test\/envoy': a legacy sidecar on Job 'test-web-c8\w+' never exits, so the Job never completes; it holds the app until it is ready/,
    );
    const allowed = synthEnvoy('Job', '1.27', { allowLegacyOnJob: true });
    expect(layoutOf(allowed.workloadManifest).containers).toEqual(['envoy', 'app']);
  });

  test('mode NATIVE on 1.27 is an error that says why', () => {
    const { chart } = newChart();
    const envoy = new WithEnvoy(chart, 'envoy', {
      workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.27', mode: SidecarMode.NATIVE, appPort: 8080,
    });
    expect(() => envoy.layout).toThrow(/WithEnvoy 'test\/envoy': mode NATIVE on Kubernetes 1\.27: native sidecars need 1\.29/);
  });
});

describe('grace period arithmetic', () => {
  test('the drain fits in the app\'s share; Envoy adds one second to exit after it', () => {
    const props = { appShutdownTime: Duration.seconds(40), drainTime: Duration.seconds(25) };
    // native: app 40 + envoy 1
    expect(podSpecOf(synthEnvoy('Deployment', '1.29', props).workloadManifest).terminationGracePeriodSeconds).toBe(41);
    // legacy: preStop delay 40 + envoy 1
    expect(podSpecOf(synthEnvoy('Deployment', '1.27', props).workloadManifest).terminationGracePeriodSeconds).toBe(41);
    // defaults (app 10 + 1) stay under Kubernetes' 30
    expect(podSpecOf(synthEnvoy('Deployment', '1.29').workloadManifest).terminationGracePeriodSeconds).toBe(30);
  });

  test('with a log agent: native stops them one after the other, legacy in parallel', () => {
    const synth = (version: string) => {
      const { chart } = newChart();
      const dep = kplusWorkload(chart, 'Deployment');
      const appShutdownTime = Duration.seconds(40);
      new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: version, appPort: 8080, appShutdownTime, drainTime: Duration.seconds(30) });
      new WithLogAgent(chart, 'logs', { workload: dep, kubernetesVersion: version, appShutdownTime });
      return podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).terminationGracePeriodSeconds;
    };
    // app, then Envoy (1s), then Fluent Bit (its SIGTERM held 2 s, Grace 5 + 1): no preStop delays a native sidecar (issue 26)
    expect(synth('1.29')).toBe(40 + 1 + 2 + 6);
    expect(synth('1.27')).toBe(40 + 2 + 6); // max(40 + 1, 40 + 2 + 6)
  });

  test('for every drainTime the grace period covers preStop (drain) plus Envoy\'s exit', () => {
    for (const drain of [1, 5, 10, 29, 30]) {
      for (const version of ['1.27', '1.29']) {
        const { workloadManifest } = synthEnvoy('Deployment', version, { drainTime: Duration.seconds(drain), appShutdownTime: Duration.seconds(30) });
        expect(podSpecOf(workloadManifest).terminationGracePeriodSeconds).toBeGreaterThanOrEqual(drain + 1);
      }
    }
  });

  test('a user grace period that is too short is an error that explains the sum', () => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', {
      containers: [{ name: 'app', image: 'ghcr.io/example/app:1', ports: [{ number: 8080 }], securityContext: { user: 1000 } }],
      terminationGracePeriod: Duration.seconds(20),
    });
    new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: '1.29', appPort: 8080, appShutdownTime: Duration.seconds(25) });
    expect(() => Testing.synth(chart)).toThrow(/terminationGracePeriodSeconds is 20, but its sidecars need 26 \(native: app 25s \+ envoy 1s\)/);
  });
});

describe('ports: admin on localhost only, health listener for the kubelet', () => {
  test('admin listens on 127.0.0.1 and is never a container port; it is declared as a local port', () => {
    const { workloadManifest, manifests } = synthEnvoy('Deployment', '1.29', { upstreams: [PAYMENTS] });
    const b = bootstrapOf(manifests);
    expect(b.admin).toEqual({ address: { socket_address: { address: '127.0.0.1', port_value: 9901 } } });
    const envoy = containerOf(workloadManifest, 'envoy');
    expect(envoy.ports).toEqual([
      { containerPort: 10000, name: 'envoy-http', protocol: 'TCP' },
      { containerPort: 15021, name: 'envoy-health', protocol: 'TCP' },
    ]);
  });

  test('only the inbound and health listeners face the pod IP; outbound routes are on 127.0.0.1', () => {
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29', { upstreams: [PAYMENTS, PARTNER] }).manifests);
    const bound = b.static_resources.listeners.map((l: any) => [l.name, l.address.socket_address.address, l.address.socket_address.port_value]);
    expect(bound).toEqual([
      ['inbound', '0.0.0.0', 10000],
      ['health', '0.0.0.0', 15021],
      ['outbound-payments', '127.0.0.1', 9001],
      ['outbound-partner-api', '127.0.0.1', 9002],
    ]);
  });

  test('the health listener answers /ready itself (health_check filter, no pass-through)', () => {
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29').manifests);
    const health = listener(b, 'health');
    expect(health.traffic_direction).toBe('INBOUND');
    const filters = hcmOf(health).http_filters;
    expect(filters.map((f: any) => f.name)).toEqual(['envoy.filters.http.health_check', 'envoy.filters.http.router']);
    expect(filters[0].typed_config.pass_through_mode).toBe(false);
    expect(filters[0].typed_config.headers).toEqual([{ name: ':path', string_match: { exact: '/ready' } }]);
  });

  test('the drain spares outbound routes: inbound listeners are INBOUND, outbound ones OUTBOUND and MODIFY_ONLY', () => {
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29', { upstreams: [PAYMENTS] }).manifests);
    expect(listener(b, 'inbound').traffic_direction).toBe('INBOUND');
    expect(listener(b, 'inbound').drain_type).toBeUndefined();
    expect(listener(b, 'outbound-payments')).toMatchObject({ traffic_direction: 'OUTBOUND', drain_type: 'MODIFY_ONLY' });
  });

  test('custom ports end up in the container, the probes, the hooks and the bootstrap', () => {
    const { workloadManifest, manifests } = synthEnvoy('Deployment', '1.27', { listenerPort: 9443, adminPort: 19000, healthPort: 19021, appPort: 3000 });
    const envoy = containerOf(workloadManifest, 'envoy');
    expect(envoy.ports.map((p: any) => p.containerPort)).toEqual([9443, 19021]);
    expect(envoy.startupProbe.httpGet.port).toBe(19021);
    expect(envoy.lifecycle.preStop.exec.command).toContain('http://127.0.0.1:19000/drain_listeners?inboundonly&graceful');
    expect(envoy.lifecycle.postStart.exec.command).toContain('http://127.0.0.1:19021/ready');
    const b = bootstrapOf(manifests);
    expect(b.admin.address.socket_address.port_value).toBe(19000);
    expect(cluster(b, 'local-app').load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address)
      .toEqual({ address: '127.0.0.1', port_value: 3000 });
  });

  test('the listener port must not be a port of the app: the error names both containers', () => {
    const { chart } = newChart();
    new WithEnvoy(chart, 'envoy', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', appPort: 3000, listenerPort: 8080 });
    expect(() => Testing.synth(chart)).toThrow(
      /\[test\/web\/Resource\] WithEnvoy 'test\/envoy': port 8080 of sidecar 'envoy' is also a port of container 'app' on Deployment 'test-web-c8\w+'; choose another port for one of them\./,
    );
  });

  test('the localhost-only ports (admin, outbound routes) are checked against the app\'s ports too', () => {
    for (const extra of [{ adminPort: 8080 }, { upstreams: [{ ...PAYMENTS, localPort: 8080 }] }]) {
      const { chart } = newChart();
      new WithEnvoy(chart, 'envoy', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', appPort: 3000, ...extra });
      expect(() => Testing.synth(chart)).toThrow(/port 8080 of sidecar 'envoy' is also a port of container 'app'/);
    }
  });

  test('a second WithEnvoy on the same workload is an error that names both', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment');
    new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: '1.29', appPort: 8080 });
    new WithEnvoy(chart, 'envoy2', {
      workload: dep, kubernetesVersion: '1.29', appPort: 8080, containerName: 'envoy2', listenerPort: 10001, adminPort: 9902, healthPort: 15022,
    });
    expect(() => Testing.synth(chart)).toThrow(
      /WithEnvoy 'test\/envoy2': Deployment 'test-web-c8\w+' already has one: WithEnvoy 'test\/envoy'; attach one WithEnvoy per workload\./,
    );
  });
});

describe('TLS and mutual TLS', () => {
  test('plain: no transport socket on the listener, and no Secret volume', () => {
    const { manifests, workloadManifest } = synthEnvoy('Deployment', '1.29');
    const inbound = listener(bootstrapOf(manifests), 'inbound');
    expect(inbound.filter_chains[0].transport_socket).toBeUndefined();
    expect(hcmOf(inbound).forward_client_cert_details).toBe('SANITIZE');
    expect(podSpecOf(workloadManifest).volumes.filter((v: any) => v.secret)).toEqual([]);
    expect(Object.keys(envoyFiles(manifests))).toEqual(['envoy.json']);
  });

  test('TLS: the certificate comes from the Secret through file SDS that watches the mount (rotation without restart)', () => {
    const { manifests, workloadManifest } = synthEnvoy('Deployment', '1.29', { tls: { secret: { name: 'web-tls' } } });
    const files = envoyFiles(manifests);
    const inbound = listener(files['envoy.json'], 'inbound');
    const tls = inbound.filter_chains[0].transport_socket.typed_config;
    expect(tls['@type']).toBe('type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext');
    expect(tls.require_client_certificate).toBeUndefined();
    expect(tls.common_tls_context.tls_certificate_sds_secret_configs).toEqual([{
      name: 'server-cert',
      sds_config: { path_config_source: { path: '/etc/envoy/config/sds-server-cert.json' }, resource_api_version: 'V3' },
    }]);
    expect(files['sds-server-cert.json'].resources[0].tls_certificate).toEqual({
      certificate_chain: { filename: '/etc/envoy/tls/tls.crt' },
      private_key: { filename: '/etc/envoy/tls/tls.key' },
      watched_directory: { path: '/etc/envoy/tls' },
    });
    // the Secret is mounted read-only into Envoy only
    expect(podSpecOf(workloadManifest).volumes).toContainEqual({
      name: 'envoy-tls',
      secret: { items: [{ key: 'tls.crt', path: 'tls.crt' }, { key: 'tls.key', path: 'tls.key' }], secretName: 'web-tls' },
    });
    expect(containerOf(workloadManifest, 'envoy').volumeMounts).toContainEqual({ mountPath: '/etc/envoy/tls', name: 'envoy-tls', readOnly: true });
    expect(JSON.stringify(containerOf(workloadManifest, 'app'))).not.toContain('envoy-tls');
    // defaults that follow from TLS
    expect(inbound.address.socket_address.port_value).toBe(8443);
    expect(containerOf(workloadManifest, 'envoy').ports[0]).toEqual({ containerPort: 8443, name: 'envoy-https', protocol: 'TCP' });
  });

  test('mutual TLS: client certificates are required, verified against ca.crt, and passed to the app', () => {
    const { manifests, workloadManifest } = synthEnvoy('Deployment', '1.29', { tls: TLS });
    const files = envoyFiles(manifests);
    const inbound = listener(files['envoy.json'], 'inbound');
    const tls = inbound.filter_chains[0].transport_socket.typed_config;
    expect(tls.require_client_certificate).toBe(true);
    expect(tls.common_tls_context.validation_context_sds_secret_config.name).toBe('client-ca');
    expect(files['sds-client-ca.json'].resources[0].validation_context).toEqual({
      trusted_ca: { filename: '/etc/envoy/client-ca/ca.crt' },
      watched_directory: { path: '/etc/envoy/client-ca' },
    });
    expect(hcmOf(inbound).forward_client_cert_details).toBe('SANITIZE_SET');
    expect(hcmOf(inbound).set_current_client_cert_details).toEqual({ dns: true, subject: true, uri: true });
    expect(podSpecOf(workloadManifest).volumes).toContainEqual({
      name: 'envoy-client-ca', secret: { items: [{ key: 'ca.crt', path: 'ca.crt' }], secretName: 'web-client-ca' },
    });
  });

  test('no certificate material is ever copied into the ConfigMap', () => {
    const { manifests } = synthEnvoy('Deployment', '1.29', { tls: TLS });
    const cm = JSON.stringify(manifests.filter(m => m.kind === 'ConfigMap'));
    expect(cm).not.toMatch(/BEGIN|inline_string|inline_bytes|secretKeyRef/);
  });

  test('every file the config refers to is provided by a volume mounted into Envoy', () => {
    const { manifests, workloadManifest } = synthEnvoy('Deployment', '1.29', { tls: TLS, upstreams: [PAYMENTS, PARTNER] });
    const files = envoyFiles(manifests);
    const envoy = containerOf(workloadManifest, 'envoy');
    const volumes: any[] = podSpecOf(workloadManifest).volumes;
    const configMap = manifests.find(m => m.kind === 'ConfigMap' && m.metadata.name.includes('envoy'));
    const provided = new Set<string>();
    for (const mount of envoy.volumeMounts) {
      const v = volumes.find(x => x.name === mount.name);
      const keys: string[] = v.configMap ? (v.configMap.name === configMap.metadata.name ? Object.keys(configMap.data) : [])
        : v.secret ? v.secret.items.map((i: any) => i.path) : [];
      for (const k of keys) provided.add(`${mount.mountPath}/${k}`);
    }
    const referenced: string[] = [];
    const walk = (x: any): void => {
      if (Array.isArray(x)) { x.forEach(walk); return; }
      if (x && typeof x === 'object') {
        for (const [k, v] of Object.entries(x)) {
          if ((k === 'filename' || (k === 'path' && typeof v === 'string' && v.startsWith('/etc/'))) && typeof v === 'string') referenced.push(v);
          walk(v);
        }
      }
    };
    walk(files);
    const fromImage = ['/etc/ssl/certs/ca-certificates.crt'];
    const dirs = [...provided].map(p => p.slice(0, p.lastIndexOf('/')));
    const missing = referenced.filter(f => !provided.has(f) && !fromImage.includes(f) && !dirs.includes(f));
    expect(referenced.length).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });
});

describe('inbound route and outbound routes', () => {
  test('inbound forwards everything to the app on 127.0.0.1 without Envoy\'s 15 s route timeout', () => {
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29').manifests);
    const hcm = hcmOf(listener(b, 'inbound'));
    expect(hcm.route_config.virtual_hosts[0].routes).toEqual([{
      match: { prefix: '/' },
      route: { cluster: 'local-app', retry_policy: { num_retries: 2, retry_on: 'reset-before-request' }, timeout: '0s' },
    }]);
    expect(cluster(b, 'local-app').typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'].explicit_http_config)
      .toEqual({ http_protocol_options: {} });
  });

  test('appProtocol HTTP2 talks h2c to the app (gRPC)', () => {
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29', { appProtocol: EnvoyAppProtocol.HTTP2 }).manifests);
    expect(cluster(b, 'local-app').typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'].explicit_http_config)
      .toEqual({
        http2_protocol_options: { initial_connection_window_size: 1048576, initial_stream_window_size: 65536, max_concurrent_streams: 1024 },
      });
  });

  test('a TLS upstream: SNI and a SAN check on the host, system CAs, Host header rewritten', () => {
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29', { upstreams: [PARTNER] }).manifests);
    const c = cluster(b, 'outbound-partner-api');
    expect(c.type).toBe('STRICT_DNS');
    expect(c.dns_lookup_family).toBe('V4_PREFERRED');
    expect(c.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address).toEqual({ address: 'api.partner.example.com', port_value: 443 });
    const tls = c.transport_socket.typed_config;
    expect(tls.sni).toBe('api.partner.example.com');
    expect(tls.common_tls_context.validation_context).toEqual({
      match_typed_subject_alt_names: [{ matcher: { exact: 'api.partner.example.com' }, san_type: 'DNS' }],
      trusted_ca: { filename: '/etc/ssl/certs/ca-certificates.crt' },
    });
    const route = hcmOf(listener(b, 'outbound-partner-api')).route_config.virtual_hosts[0].routes[0].route;
    expect(route).toEqual({
      cluster: 'outbound-partner-api',
      host_rewrite_literal: 'api.partner.example.com',
      retry_policy: { num_retries: 2, retry_on: 'reset-before-request' },
      timeout: '0s',
    });
  });

  test('a plain upstream on a non-default port keeps the port in the Host header; an IPv4 host is STATIC', () => {
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29', {
      upstreams: [PAYMENTS, { name: 'legacy', localPort: 9003, host: '10.0.0.7', port: 8443, tls: true }],
    }).manifests);
    expect(hcmOf(listener(b, 'outbound-payments')).route_config.virtual_hosts[0].routes[0].route.host_rewrite_literal)
      .toBe('payments.shop.svc.cluster.local:8080');
    expect(cluster(b, 'outbound-payments').transport_socket).toBeUndefined();
    const ip = cluster(b, 'outbound-legacy');
    expect(ip.type).toBe('STATIC');
    expect(ip.dns_lookup_family).toBeUndefined();
    expect(ip.transport_socket.typed_config.sni).toBeUndefined();
    expect(ip.transport_socket.typed_config.common_tls_context.validation_context.match_typed_subject_alt_names)
      .toEqual([{ matcher: { exact: '10.0.0.7' }, san_type: 'IP_ADDRESS' }]);
  });

  test('accessLog: false removes the access logs', () => {
    const withLog = JSON.stringify(bootstrapOf(synthEnvoy('Deployment', '1.29', { upstreams: [PAYMENTS] }).manifests));
    const without = JSON.stringify(bootstrapOf(synthEnvoy('Deployment', '1.29', { upstreams: [PAYMENTS], accessLog: false }).manifests));
    expect(withLog).toContain('envoy.access_loggers.stdout');
    expect(without).not.toContain('access_log');
  });
});

describe('the Envoy config is valid against Envoy\'s v3 API (strict proto3 JSON parse and PGV rules over the xDS protos)', () => {
  const tlsVariants: Array<[string, Extra]> = [
    ['plain', {}],
    ['TLS', { tls: { secret: { name: 'web-tls' } } }],
    ['mTLS', { tls: TLS }],
  ];
  const upstreamVariants: Array<[string, EnvoyUpstream[]]> = [
    ['no upstreams', []],
    ['outbound routes', [PAYMENTS, PARTNER, { name: 'legacy', localPort: 9003, host: '10.0.0.7', port: 8443, tls: true }, { name: 'cache', localPort: 9004, host: '10.0.0.8' }]],
  ];
  for (const [tlsName, tlsProps] of tlsVariants) {
    for (const [upName, upstreams] of upstreamVariants) {
      for (const appProtocol of [EnvoyAppProtocol.HTTP1, EnvoyAppProtocol.HTTP2]) {
        for (const accessLog of [true, false]) {
          test(`${tlsName}, ${upName}, ${appProtocol}, accessLog ${accessLog}`, () => {
            const { manifests } = synthEnvoy('Deployment', '1.29', { ...tlsProps, upstreams, appProtocol, accessLog });
            const files = envoyFiles(manifests);
            expectValidEnvoyBootstrap(files['envoy.json']);
            for (const [name, body] of Object.entries(files)) {
              if (name === 'envoy.json') continue;
              expect(envoyMessageErrors('envoy.service.discovery.v3.DiscoveryResponse', body)).toEqual([]);
            }
          });
        }
      }
    }
  }

  test('control: the check does catch a misspelled field in what the construct renders', () => {
    const { manifests } = synthEnvoy('Deployment', '1.29', { tls: TLS, upstreams: [PARTNER] });
    const files = envoyFiles(manifests);
    const b = files['envoy.json'];
    b.static_resources.listeners[0].traffic_directon = b.static_resources.listeners[0].traffic_direction;
    delete b.static_resources.listeners[0].traffic_direction;
    expect(envoyBootstrapErrors(b)).toEqual(['cannot decode message envoy.config.listener.v3.Listener from JSON: key "traffic_directon" is unknown']);
    const sds = files['sds-server-cert.json'];
    sds.resources[0].tls_certificate.private_ky = sds.resources[0].tls_certificate.private_key;
    delete sds.resources[0].tls_certificate.private_key;
    expect(envoyMessageErrors('envoy.service.discovery.v3.DiscoveryResponse', sds))
      .toEqual(['cannot decode message envoy.extensions.transport_sockets.tls.v3.TlsCertificate from JSON: key "private_ky" is unknown']);
  });
});

describe('Kubernetes schema per target release', () => {
  for (const release of SCHEMA_RELEASES) {
    test(`${release}: ${Number(release.split('.')[1]) >= 29 ? 'native' : 'legacy'} layout is valid (strict)`, () => {
      const { manifests, envoy } = synthEnvoy('Deployment', release, { tls: TLS, upstreams: [PAYMENTS] });
      expect(envoy.layout).toBe(Number(release.split('.')[1]) >= 29 ? 'NATIVE' : 'LEGACY');
      expectValidManifests(manifests, release);
    });
  }

  test('1.28 with the SidecarContainers gate: native, still a preStop delay (termination is not ordered there)', () => {
    const { manifests, envoy, workloadManifest } = synthEnvoy('Deployment', '1.28', { sidecarContainersGate: true });
    expect(envoy.layout).toBe('NATIVE');
    expect(containerOf(workloadManifest, 'envoy').lifecycle.preStop).toEqual(shell(`${DRAIN_SCRIPT}; /sidecar-tools/busybox sleep 10`));
    expectValidManifests(manifests, '1.28');
  });
});

/**
 * What Envoy's HTTP connection manager does to the headers the app receives, modelled on
 * envoyproxy/envoy `source/common/http/conn_manager_utility.cc` (`mutateRequestHeaders`, v1.36):
 * with `use_remote_address` Envoy appends the peer to X-Forwarded-For, overwrites X-Forwarded-Proto
 * from the connection unless `xff_num_trusted_hops` > 0, and (an "edge request") replaces
 * x-request-id unless `preserve_external_request_id`; without it, it only fills in a missing
 * X-Forwarded-Proto / x-request-id.
 */
function headersSeenByApp(hcm: any, request: Record<string, string>, peer: string, tls: boolean): Record<string, string> {
  const out = { ...request };
  const trustedHops = hcm.xff_num_trusted_hops ?? 0;
  const useRemote = hcm.use_remote_address === true;
  if (useRemote) {
    if (!hcm.skip_xff_append) out['x-forwarded-for'] = out['x-forwarded-for'] ? `${out['x-forwarded-for']}, ${peer}` : peer;
    if (trustedHops === 0 || !out['x-forwarded-proto']) out['x-forwarded-proto'] = tls ? 'https' : 'http';
  }
  if (!out['x-forwarded-proto']) out['x-forwarded-proto'] = tls ? 'https' : 'http';
  // A peer on the pod network is "internal" only with a single XFF address; the Ingress's request
  // carries the client's public address, so it is an external (edge) request when useRemote.
  const edge = useRemote;
  if ((edge && !hcm.preserve_external_request_id) || !out['x-request-id']) out['x-request-id'] = 'generated-by-envoy';
  return out;
}

describe('a transparent sidecar: what Envoy changes and leaves alone on the way to the app', () => {
  const INGRESS_REQUEST = { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-request-id': 'ingress-4711' };

  test('the Ingress\'s X-Forwarded-For / -Proto and x-request-id reach the app unchanged (conn_manager_utility.cc)', () => {
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29').manifests);
    const hcm = hcmOf(listener(b, 'inbound'));
    // The Ingress terminated TLS and talks plain HTTP to the pod from its own pod IP.
    expect(headersSeenByApp(hcm, INGRESS_REQUEST, '10.1.2.3', false)).toEqual(INGRESS_REQUEST);
    // Istio's sidecars: PILOT_SIDECAR_USE_REMOTE_ADDRESS defaults to false (pilot/pkg/features/xds.go).
    expect(hcm.use_remote_address).toBe(false);
    // A request without them still gets both (Envoy fills in what is missing).
    expect(headersSeenByApp(hcm, {}, '10.1.2.3', true)).toEqual({ 'x-forwarded-proto': 'https', 'x-request-id': 'generated-by-envoy' });
  });

  test('trustedProxyHops sets xff_num_trusted_hops (Envoy\'s view of the client only); 0 by default', () => {
    const plain = hcmOf(listener(bootstrapOf(synthEnvoy('Deployment', '1.29').manifests), 'inbound'));
    expect(plain.xff_num_trusted_hops ?? 0).toBe(0);
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29', { trustedProxyHops: 1 }).manifests);
    const hcm = hcmOf(listener(b, 'inbound'));
    expect(hcm.xff_num_trusted_hops).toBe(1);
    expect(headersSeenByApp(hcm, INGRESS_REQUEST, '10.1.2.3', false)).toEqual(INGRESS_REQUEST);
    expect(() => synthEnvoy('Deployment', '1.29', { trustedProxyHops: -1 })).toThrow(/trustedProxyHops -1 is not a number of proxies/);
  });

  test('long streams live: stream_idle_timeout is off (Envoy\'s default is 5 min, http_connection_manager.proto) unless set', () => {
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29', { upstreams: [PAYMENTS] }).manifests);
    for (const name of ['inbound', 'outbound-payments']) {
      // 0s disables the timeout (http_connection_manager.proto: "A value of 0 will completely disable ...").
      expect(hcmOf(listener(b, name)).stream_idle_timeout).toBe('0s');
    }
    const set = bootstrapOf(synthEnvoy('Deployment', '1.29', { streamIdleTimeout: Duration.hours(1) }).manifests);
    expect(hcmOf(listener(set, 'inbound')).stream_idle_timeout).toBe('3600s');
  });

  test('no circuit breaker trips under load: every cluster allows 2^32-1 connections, pending requests, requests and retries (Istio)', () => {
    // Envoy's defaults (envoy/config/cluster/v3/circuit_breaker.proto): 1024 / 1024 / 1024 / 3.
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29', { upstreams: [PAYMENTS, PARTNER] }).manifests);
    const concurrent = 100_000; // WebSockets or gRPC streams open at once
    for (const c of b.static_resources.clusters) {
      const [t] = c.circuit_breakers.thresholds;
      for (const field of ['max_connections', 'max_pending_requests', 'max_requests', 'max_retries']) {
        expect(t[field]).toBe(2 ** 32 - 1);
        expect(t[field]).toBeGreaterThan(concurrent);
      }
    }
  });

  test('an idle keep-alive the app closes never takes a request: idle timeout below 2 s, reset-before-request retries (Istio inbound)', () => {
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29', { upstreams: [PAYMENTS] }).manifests);
    const opts = cluster(b, 'local-app').typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'];
    // Shorter than gunicorn's 2 s, uvicorn's and Node's 5 s keep-alive (Envoy's default: 1 h).
    const idle = Number(/^(\d+)s$/.exec(opts.common_http_protocol_options.idle_timeout)![1]);
    expect(idle).toBeGreaterThan(0);
    expect(idle).toBeLessThan(2);
    // istio pilot/pkg/networking/core/route/retry/retry.go: defaultInboundRetryOn = "reset-before-request".
    for (const name of ['inbound', 'outbound-payments']) {
      expect(hcmOf(listener(b, name)).route_config.virtual_hosts[0].routes[0].route.retry_policy.retry_on).toBe('reset-before-request');
    }
    const longer = bootstrapOf(synthEnvoy('Deployment', '1.29', { appIdleTimeout: Duration.seconds(4) }).manifests);
    expect(cluster(longer, 'local-app').typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions']
      .common_http_protocol_options.idle_timeout).toBe('4s');
    expect(() => synthEnvoy('Deployment', '1.29', { appIdleTimeout: Duration.seconds(0) })).toThrow(/appIdleTimeout must be at least 1 second/);
  });

  test('Envoy stays inside its memory limit: overload manager on a heap below the limit, bounded buffers and HTTP/2 windows (edge best practices)', () => {
    for (const [resources, limitMi] of [[undefined, 256], [{ memory: { limit: Size.mebibytes(512) } }, 512]] as const) {
      const b = bootstrapOf(synthEnvoy('Deployment', '1.29', { upstreams: [PAYMENTS], resources: resources as any }).manifests);
      const om = b.overload_manager;
      const heap = om.resource_monitors.find((m: any) => m.name === 'envoy.resource_monitors.fixed_heap');
      expect(heap.typed_config.max_heap_size_bytes).toBeLessThan(limitMi * 1024 * 1024);
      expect(heap.typed_config.max_heap_size_bytes).toBeGreaterThan(limitMi * 1024 * 1024 / 2);
      const actions = Object.fromEntries(om.actions.map((a: any) => [a.name, a.triggers[0].threshold.value]));
      expect(actions['envoy.overload_actions.stop_accepting_requests']).toBeLessThan(1);
      expect(actions['envoy.overload_actions.shrink_heap']).toBeLessThan(actions['envoy.overload_actions.stop_accepting_requests']);
      // Worst case of one connection's buffers (Envoy's default per_connection_buffer_limit_bytes is 1 MiB).
      for (const l of b.static_resources.listeners.filter((x: any) => x.name !== 'health')) expect(l.per_connection_buffer_limit_bytes).toBe(32768);
      for (const c of b.static_resources.clusters) expect(c.per_connection_buffer_limit_bytes).toBe(32768);
      // HTTP/2: Envoy 1.36's defaults are 16 MiB per stream and 24 MiB per connection
      // (changelogs/1.36.0.yaml): a dozen uploading clients could fill the whole 256Mi limit.
      // The connection window bounds what one connection buffers, whatever the stream count.
      const h2 = hcmOf(listener(b, 'inbound')).http2_protocol_options;
      expect(h2.initial_connection_window_size).toBeLessThanOrEqual(1024 * 1024);
      expect(h2.initial_stream_window_size).toBeLessThanOrEqual(h2.initial_connection_window_size);
      // ... while a gRPC client may still multiplex as many long-lived streams as Envoy 1.36 allows.
      expect(h2.max_concurrent_streams).toBeGreaterThanOrEqual(1024);
    }
  });

  test('WebSocket upgrades pass on every listener, the outbound routes included', () => {
    const b = bootstrapOf(synthEnvoy('Deployment', '1.29', { upstreams: [PAYMENTS, PARTNER] }).manifests);
    for (const name of ['inbound', 'outbound-payments', 'outbound-partner-api']) {
      expect(hcmOf(listener(b, name)).upgrade_configs).toEqual([{ upgrade_type: 'websocket' }]);
    }
  });

  test('every option combination still validates against Envoy\'s v3 protos', () => {
    for (const extra of [
      { trustedProxyHops: 2, streamIdleTimeout: Duration.minutes(30), appIdleTimeout: Duration.seconds(3) },
      { appProtocol: EnvoyAppProtocol.HTTP2, upstreams: [PAYMENTS, PARTNER], tls: TLS, resources: { memory: { limit: Size.mebibytes(128) } } },
    ] as Extra[]) {
      expectValidEnvoyBootstrap(bootstrapOf(synthEnvoy('Deployment', '1.29', extra).manifests));
    }
  });

  test('the docs say the app must keep accepting requests for drainTime after SIGTERM (README and docs/envoy.md)', () => {
    const readme = readDoc('README.md');
    const section = readme.slice(readme.indexOf('## WithEnvoy'), readme.indexOf('## WithTracer'));
    expect(section).toMatch(/keep accepting[^.]*requests[^.]*drainTime[^.]*SIGTERM/);
    const envoy = readDoc('docs/envoy.md');
    expect(envoy).toMatch(/keep accepting[^.]*requests[^.]*drainTime[^.]*SIGTERM/);
    expect(envoy).toMatch(/503 `UF`/);
  });
});

describe('the app side: probes and ports Envoy can see', () => {
  const synthWith = (containers: kplus.ContainerProps[], extra: Extra = {}) => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', { containers });
    new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: '1.29', appPort: 8080, ...extra });
    return () => Testing.synth(chart);
  };
  const app = (more: Partial<kplus.ContainerProps>): kplus.ContainerProps => ({ name: 'app', image: 'ghcr.io/example/app:1', securityContext: { user: 1000 }, ...more });

  test('portNumber on appPort (cdk8s-plus-27 adds a TCP startupProbe on the pod IP) is an error that says what to do', () => {
    expect(synthWith([app({ portNumber: 8080 })])).toThrow(
      /WithEnvoy 'test\/envoy': container 'app' has a startupProbe \(tcpSocket\) on appPort 8080\. The kubelet probes the pod IP.*leave portNumber out.*appListensOnPodIp: true/,
    );
  });

  test('the README\'s WithEnvoy examples synthesize, and no app container has a probe on the pod IP it cannot pass', () => {
    // The two README examples (WithEnvoy, "All three agents on one workload"), written out.
    const { chart } = newChart();
    const web = new kplus.Deployment(chart, 'web', {
      containers: [{ name: 'app', image: 'ghcr.io/example/web:2.3.0', args: ['--listen=127.0.0.1:8080'], ports: [{ number: 8080 }] }],
    });
    const envoy = new WithEnvoy(chart, 'envoy', {
      workload: web,
      kubernetesVersion: '1.29',
      appPort: 8080,
      tls: { secret: { name: 'web-tls' }, clientCaSecret: { name: 'web-client-ca' } },
      upstreams: [
        { name: 'partner', localPort: 9001, host: 'api.partner.example.com', tls: true },
        { name: 'payments', localPort: 9002, host: 'payments.shop.svc.cluster.local', port: 8080 },
      ],
      appShutdownTime: Duration.seconds(20),
      drainTime: Duration.seconds(10),
    });
    new kplus.Service(chart, 'web-svc', { selector: web, ports: [envoy.servicePort()] });
    const checkout = new kplus.Deployment(chart, 'checkout', {
      metadata: { name: 'checkout' },
      containers: [{ name: 'app', image: 'ghcr.io/example/checkout:1.4.2', ports: [{ number: 8080 }] }],
    });
    new WithLogAgent(chart, 'logs', { workload: checkout, kubernetesVersion: '1.29' });
    new WithTracer(chart, 'tracer', { workload: checkout, kubernetesVersion: '1.29', exporterEndpoint: 'otel-collector.observability:4317', exporterTls: false });
    new WithEnvoy(chart, 'proxy', { workload: checkout, kubernetesVersion: '1.29', appPort: 8080 });
    const manifests = Testing.synth(chart);
    for (const m of manifests.filter(x => x.kind === 'Deployment')) {
      const appContainer = podSpecOf(m).containers.find((c: any) => c.name === 'app');
      // The app listens on 127.0.0.1 only: any probe on the pod IP would fail forever.
      for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) expect(appContainer[probe]).toBeUndefined();
    }
  });

  test('appListensOnPodIp: true is the documented opt-out', () => {
    expect(synthWith([app({ portNumber: 8080 })], { appListensOnPodIp: true })).not.toThrow();
  });

  test('an httpGet probe on appPort by port name is caught too; a probe with host, an exec probe or another port is not', () => {
    const named = app({ ports: [{ number: 8080, name: 'http' }], readiness: kplus.Probe.fromHttpGet('/healthz', { port: 8080 }) });
    expect(synthWith([named])).toThrow(/container 'app' has a readinessProbe \(httpGet\) on appPort 8080/);
    expect(synthWith([app({ ports: [{ number: 8080 }], liveness: kplus.Probe.fromCommand(['/bin/true']) })])).not.toThrow();
    expect(synthWith([app({ ports: [{ number: 8080 }], liveness: kplus.Probe.fromTcpSocket({ port: 8080, host: '10.0.0.1' }) })])).not.toThrow();
    expect(synthWith([app({ ports: [{ number: 8080 }, { number: 9090 }], startup: kplus.Probe.fromTcpSocket({ port: 9090 }) })])).not.toThrow();
  });

  test('a probe the manifest itself declares on appPort (raw ApiObject: Include / Helm) is kept, with a warning; cdk8s-plus\' own probe is still an error', () => {
    // GIVEN a vendor manifest whose app probes appPort by its port name, and a Service of the app on that port
    const { chart } = newChart();
    const probe = { httpGet: { path: '/', port: 'http' } };
    const raw = rawDeployment(chart, 'raw', { containers: [{ name: 'web', image: 'x', ports: [{ containerPort: 8080, name: 'http' }], readinessProbe: probe }] });
    new ApiObject(chart, 'svc', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'raw' }, spec: { selector: { app: 'raw' }, ports: [{ port: 80, targetPort: 'http' }] } });
    new WithEnvoy(chart, 'envoy', { workload: raw, kubernetesVersion: '1.29', appPort: 8080 });
    // WHEN
    const out = Testing.synth(chart);
    // THEN the probe is the vendor's, unchanged, and the warnings say what was inferred and which Service bypasses Envoy
    const web = containerOf(manifestOf(out, 'Deployment'), 'web');
    expect(web.readinessProbe).toEqual(probe);
    expect(SidecarWarnings.of(chart)).toEqual([
      expect.stringMatching(/^WithEnvoy 'test\/envoy': the manifest probes appPort 8080 on the pod IP \('web' readinessProbe \(httpGet\)\).*taken as appListensOnPodIp: true.*bypasses Envoy/),
      expect.stringMatching(/^WithEnvoy 'test\/envoy': Service 'test\/svc' selects the workload's pods and sends traffic to appPort 8080.*targetPort to Envoy's listener \(10000\)/),
    ]);
    // gRPC probes on the port number count too
    const c3 = newChart().chart;
    const grpc = rawDeployment(c3, 'grpc', {
      containers: [{ name: 'api', image: 'x', ports: [{ containerPort: 8080 }], livenessProbe: { grpc: { port: 8080 } }, readinessProbe: { exec: { command: ['/ready'] } } }],
    });
    new WithEnvoy(c3, 'envoy', { workload: grpc, kubernetesVersion: '1.29', appPort: 8080 });
    expect(() => Testing.synth(c3)).not.toThrow();
    expect(SidecarWarnings.of(c3)).toEqual([expect.stringMatching(/'api' livenessProbe \(grpc\)/)]);

    // a cdk8s-plus workload: cdk8s-plus adds a TCP startupProbe for portNumber by itself, which proves nothing
    const c2 = newChart().chart;
    const cron = new kplus.CronJob(c2, 'nightly', { containers: [app({ portNumber: 8080 })], schedule: Cron.daily() });
    new WithEnvoy(c2, 'envoy', { workload: cron, kubernetesVersion: '1.29', appPort: 8080 });
    expect(() => Testing.synth(c2)).toThrow(/container 'app' has a startupProbe \(tcpSocket\) on appPort 8080/);
  });

  test('a Service that targets appPort of a cdk8s-plus workload behind Envoy is warned; one on the listener is not', () => {
    const { chart } = newChart();
    const dep = new kplus.Deployment(chart, 'web', { containers: [app({ ports: [{ number: 8080 }], readiness: kplus.Probe.fromCommand(['/ready']) })] });
    const envoy = new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: '1.29', appPort: 8080 });
    new kplus.Service(chart, 'good', { selector: dep, ports: [envoy.servicePort()] });
    Testing.synth(chart);
    expect(SidecarWarnings.of(chart)).toEqual([]);
    new kplus.Service(chart, 'bad', { selector: dep, ports: [{ port: 80, targetPort: 8080 }] });
    Testing.synth(chart);
    expect(SidecarWarnings.of(chart)).toEqual([expect.stringMatching(/Service 'test\/bad\/Resource' selects the workload's pods and sends traffic to appPort 8080/)]);
  });

  test('an appPort that none of the declared ports matches is reported; an app that declares none is fine', () => {
    expect(synthWith([app({ ports: [{ number: 9090 }] })])).toThrow(
      /appPort 8080 is none of the ports the app's containers declare \(9090 \('app'\)\)/,
    );
    expect(synthWith([app({})])).not.toThrow();
    expect(synthWith([app({ ports: [{ number: 8080 }] }), app({ name: 'metrics', ports: [{ number: 9100 }] })])).not.toThrow();
  });

  test('empty Secret names in the TLS references are refused at once', () => {
    for (const tls of [{ secret: { name: '' } }, { secret: { name: 'web-tls' }, clientCaSecret: { name: '' } }]) {
      const { chart } = newChart();
      const dep = new kplus.Deployment(chart, 'web', { containers: [app({})] });
      expect(() => new WithEnvoy(chart, 'envoy', { workload: dep, appPort: 8080, tls })).toThrow(/is not a Secret name/);
    }
  });
});

describe('a Service in front of Envoy', () => {
  test('servicePort(): 443 -> listener with TLS, 80 -> listener without', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment');
    const tls = new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: '1.29', appPort: 8080, tls: { secret: { name: 'web-tls' } } });
    // No protocol: a cdk8s-plus Protocol is each major's own enum; a Service port is TCP by default.
    expect(tls.servicePort()).toEqual({ name: 'https', nodePort: undefined, port: 443, targetPort: 8443 });
    const { chart: c2 } = newChart();
    const plain = new WithEnvoy(c2, 'envoy', { workload: kplusWorkload(c2, 'Deployment'), kubernetesVersion: '1.29', appPort: 8080 });
    expect(plain.servicePort({ port: 8000, name: 'web', nodePort: 30080 })).toEqual({ name: 'web', nodePort: 30080, port: 8000, targetPort: 10000 });
  });

  test('the README recipe: a Service that selects the pods and targets Envoy\'s listener', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment');
    const envoy = new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: '1.29', appPort: 8080, tls: { secret: { name: 'web-tls' } } });
    new kplus.Service(chart, 'svc', { selector: dep, ports: [envoy.servicePort()] });
    const manifests = Testing.synth(chart);
    const svc = manifestOf(manifests, 'Service');
    expect(svc.spec.ports).toEqual([{ name: 'https', port: 443, targetPort: 8443 }]);
    expect(svc.spec.selector).toEqual(podMetadataOf(manifestOf(manifests, 'Deployment')).labels);
    expectValidManifests(manifests, '1.29');
  });

  test('exposeVia() adds the port to an existing Service', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment');
    const envoy = new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: '1.27', appPort: 8080 });
    const svc = new kplus.Service(chart, 'svc', { selector: dep });
    envoy.exposeVia(svc, { port: 8080 });
    expect(manifestOf(Testing.synth(chart), 'Service').spec.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP', targetPort: 10000 }]);
  });

  test('cdk8s-plus refuses deployment.exposeViaService() towards Envoy (it checks only its own containers): hence the recipe', () => {
    const { chart } = newChart();
    const dep = kplusWorkload(chart, 'Deployment') as kplus.Deployment;
    const envoy = new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: '1.29', appPort: 8080 });
    expect(() => dep.exposeViaService({ ports: [envoy.servicePort()] })).toThrow(/Port 10000 is not exposed by any container/);
  });
});

describe('the container', () => {
  test('runs envoy directly as uid 10101 under the restricted Pod Security Standard, config mounted read-only', () => {
    const { workloadManifest } = synthEnvoy('Deployment', '1.29');
    const envoy = containerOf(workloadManifest, 'envoy');
    expect(envoy.image).toBe('envoyproxy/envoy:v1.40.0');
    expect(envoy.command).toEqual(['/usr/local/bin/envoy']);
    expect(envoy.args.slice(0, 2)).toEqual(['--config-path', '/etc/envoy/config/envoy.json']);
    expect(envoy.securityContext).toMatchObject({
      allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true, runAsNonRoot: true, runAsUser: 10101, runAsGroup: 10101,
    });
    // kube-score's container-security-context-user-group-id asks for 10000 or more (docs/envoy.md "The user Envoy runs as")
    expect(WithEnvoy.UID).toBe(10101);
    expect(envoy.volumeMounts).toContainEqual({ mountPath: '/etc/envoy/config', name: 'envoy-config', readOnly: true });
    expect(envoy.resources).toEqual({ limits: { cpu: '1000m', memory: '256Mi' }, requests: { cpu: '100m', memory: '64Mi' } });
  });

  test('user and group are configurable, never root', () => {
    const user = containerOf(synthEnvoy('Deployment', '1.29', { user: 1000680000 }).workloadManifest, 'envoy').securityContext;
    expect([user.runAsUser, user.runAsGroup]).toEqual([1000680000, 1000680000]);
    const both = containerOf(synthEnvoy('Deployment', '1.27', { user: 20000, group: 30000 }).workloadManifest, 'envoy').securityContext;
    expect([both.runAsUser, both.runAsGroup, both.runAsNonRoot]).toEqual([20000, 30000, true]);
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    expect(() => new WithEnvoy(chart, 'root', { workload, appPort: 8080, user: 0 })).toThrow(/WithEnvoy 'test\/root': user 0 is not a non-root uid; use an integer from 1 to 2147483647 \(e\.g\. 10101\)/);
    expect(() => new WithEnvoy(chart, 'half', { workload, appPort: 8080, group: 1.5 })).toThrow(/WithEnvoy 'test\/half': group 1\.5 is not a gid/);
  });

  test('image, concurrency, containerName and resources are configurable', () => {
    const { workloadManifest } = synthEnvoy('Deployment', '1.29', {
      image: 'registry.example.com/envoy:v1.36.4',
      concurrency: 4,
      containerName: 'proxy',
      resources: { cpu: { request: kplus.Cpu.millis(250), limit: kplus.Cpu.millis(2000) } },
    });
    const proxy = containerOf(workloadManifest, 'proxy');
    expect(proxy.image).toBe('registry.example.com/envoy:v1.36.4');
    expect(proxy.args.slice(proxy.args.indexOf('--concurrency'), proxy.args.indexOf('--concurrency') + 2)).toEqual(['--concurrency', '4']);
    expect(proxy.resources.requests.cpu).toBe('250m');
    expect(podSpecOf(workloadManifest).volumes.map((v: any) => v.name)).toContain('proxy-config');
  });

  test('a config change rolls the pods (checksum annotation); the same config keeps it', () => {
    const annotation = (extra: Extra) => podMetadataOf(synthEnvoy('Deployment', '1.29', extra).workloadManifest).annotations['checksum.sidecars.cdk8s.io/envoy'];
    expect(annotation({ upstreams: [PAYMENTS] })).toMatch(/^[0-9a-f]{64}$/);
    expect(annotation({ upstreams: [PAYMENTS] })).toBe(annotation({ upstreams: [PAYMENTS] }));
    expect(annotation({ upstreams: [PAYMENTS] })).not.toBe(annotation({ upstreams: [PARTNER] }));
  });

  // The checksum of Envoy's files is hashed from the memoized texts' escapes and the workload's
  // name (src/sidecar.ts cutChecksum), not from their JSON: it must be the SHA-256 of the JSON.
  test.each([
    ['plain', {}],
    ['TLS, three files', { tls: TLS }],
    ['upstreams', { upstreams: [PAYMENTS, PARTNER] }],
  ])('the checksum annotation is the SHA-256 of the ConfigMap data as JSON (%s)', (_name, extra) => {
    const { manifests, workloadManifest } = synthEnvoy('Deployment', '1.29', extra as Extra);
    const cm = manifests.find((m: any) => m.kind === 'ConfigMap' && m.metadata.name.includes('envoy'));
    const expected = createHash('sha256').update(JSON.stringify(cm.data)).digest('hex');
    expect(podMetadataOf(workloadManifest).annotations['checksum.sidecars.cdk8s.io/envoy']).toBe(expected);
  });

  test('works on a raw ApiObject (Include / Helm) and puts the ConfigMap in its namespace', () => {
    const { chart } = newChart();
    const raw = new ApiObject(chart, 'raw', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'shop-web', namespace: 'shop' },
      spec: {
        selector: { matchLabels: { app: 'shop-web' } },
        template: {
          metadata: { labels: { app: 'shop-web' } },
          spec: { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ containerPort: 8080 }] }] },
        },
      },
    });
    new WithEnvoy(chart, 'envoy', { workload: raw, kubernetesVersion: '1.29', appPort: 8080, listenerPort: 8443 });
    const manifests = Testing.synth(chart);
    expect(layoutOf(manifestOf(manifests, 'Deployment'))).toEqual({ init: ['sidecar-tools', 'envoy'], containers: ['app'] });
    expect(manifestOf(manifests, 'ConfigMap').metadata.namespace).toBe('shop');
    expectValidManifests(manifests, '1.29');
  });
});

describe('input errors name the construct, the bad value and the fix', () => {
  const make = (extra: Extra) => {
    const { chart } = newChart();
    return () => new WithEnvoy(chart, 'envoy', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', appPort: 8080, ...extra });
  };
  const W = "WithEnvoy 'test/envoy'";
  const cases: Array<[string, Extra, string]> = [
    ['appPort out of range', { appPort: 70000 }, `${W}: appPort 70000 is not a valid port; use an integer from 1 to 65535.`],
    ['appPort not an integer', { appPort: 80.5 }, `${W}: appPort 80.5 is not a valid port; use an integer from 1 to 65535.`],
    ['listenerPort invalid', { listenerPort: 0 }, `${W}: listenerPort 0 is not a valid port; use an integer from 1 to 65535.`],
    ['listenerPort = appPort', { listenerPort: 8080 },
      `${W}: listenerPort 8080 is also appPort; every port of the pod's network namespace can be bound once: choose another listenerPort.`],
    ['adminPort = healthPort', { adminPort: 15021 },
      `${W}: healthPort 15021 is also adminPort; every port of the pod's network namespace can be bound once: choose another healthPort.`],
    ['healthPort = appPort', { healthPort: 8080 },
      `${W}: healthPort 8080 is also appPort; every port of the pod's network namespace can be bound once: choose another healthPort.`],
    ['privileged listener port', { listenerPort: 443 },
      `${W}: listenerPort 443 is below 1024, which the agent (non-root, without NET_BIND_SERVICE) cannot bind; use a port from 1024 up (a Service can still expose 443 or 80: see servicePort()).`],
    ['upstream localPort = listenerPort', { upstreams: [{ ...PAYMENTS, localPort: 10000 }] },
      `${W}: upstreams[0] 'payments' localPort 10000 is also listenerPort; every port of the pod's network namespace can be bound once: choose another upstreams[0] 'payments' localPort.`],
    ['two upstreams on one localPort', { upstreams: [PAYMENTS, { ...PARTNER, localPort: 9001 }] },
      `${W}: upstreams[1] 'partner-api' localPort 9001 is also upstreams[0] 'payments' localPort; every port of the pod's network namespace can be bound once: choose another upstreams[1] 'partner-api' localPort.`],
    ['upstream name not a DNS label', { upstreams: [{ ...PAYMENTS, name: 'Payments_API' }] },
      `${W}: upstreams[0] name 'Payments_API' is not a valid DNS-1123 label; use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit (e.g. 'log-agent').`],
    ['upstream name too long', { upstreams: [{ ...PAYMENTS, name: 'a'.repeat(51) }] },
      `${W}: upstreams[0] name '${'a'.repeat(51)}' is 51 characters long; use at most 50 (Envoy limits listener and cluster names to 60, and 'outbound-' is prepended).`],
    ['duplicate upstream names', { upstreams: [PAYMENTS, { ...PARTNER, name: 'payments' }] },
      `${W}: upstreams[1] name 'payments' is also the name of upstreams[0]; give every upstream its own name.`],
    ['empty host', { upstreams: [{ ...PAYMENTS, host: ' ' }] },
      `${W}: upstreams[0] 'payments' has an empty host; set the upstream's DNS name or IPv4 address, e.g. 'payments.shop.svc.cluster.local'.`],
    ['host with scheme and port', { upstreams: [{ ...PAYMENTS, host: 'https://api.example.com:443' }] },
      `${W}: upstreams[0] 'payments' host 'https://api.example.com:443' is not a DNS name or IPv4 address; give the bare host (no scheme, port or path), e.g. 'api.example.com', and set port and tls separately.`],
    ['upstream port invalid', { upstreams: [{ ...PAYMENTS, port: 0 }] },
      `${W}: upstreams[0] 'payments' port 0 is not a valid port; use an integer from 1 to 65535.`],
    ['empty tls.secret name', { tls: { secret: { name: '' } } },
      `${W}: tls.secret.name '' is not a Secret name; use the name of a Secret in the workload's namespace (lower-case letters, digits, '-' and '.', e.g. 'web-tls').`],
    ['invalid tls.clientCaSecret name', { tls: { secret: { name: 'web-tls' }, clientCaSecret: { name: 'Client CA' } } },
      `${W}: tls.clientCaSecret.name 'Client CA' is not a Secret name; use the name of a Secret in the workload's namespace (lower-case letters, digits, '-' and '.', e.g. 'web-tls').`],
    ['drainTime longer than appShutdownTime', { drainTime: Duration.seconds(15) },
      `${W}: drainTime 15s is longer than appShutdownTime 10s: the listeners must finish draining while the app can still answer (Envoy is stopped once the app has shut down). Shorten drainTime to at most Duration.seconds(10) or raise appShutdownTime.`],
    ['drainTime zero', { drainTime: Duration.seconds(0) },
      `${W}: drainTime 0s leaves clients no time to move to other pods; use at least Duration.seconds(1).`],
    ['drainTime fractional', { drainTime: Duration.millis(1500) },
      `${W}: drainTime 1.5s is not a whole, non-negative number of seconds; use e.g. Duration.seconds(10).`],
    ['concurrency', { concurrency: 0 }, `${W}: concurrency 0 is not a number of worker threads; use an integer from 1 to 64 (e.g. 2).`],
    ['empty image', { image: '' }, `${W}: image '' is not an image reference; use e.g. 'envoyproxy/envoy:v1.40.0'.`],
  ];
  for (const [name, extra, message] of cases) {
    test(name, () => {
      expect(make(extra)).toThrow(message);
      // the whole message, not a prefix
      try { make(extra)(); } catch (e) { expect((e as Error).message).toBe(message); }
    });
  }

  test('servicePort() with an invalid port', () => {
    const { chart } = newChart();
    const envoy = new WithEnvoy(chart, 'envoy', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', appPort: 8080 });
    expect(() => envoy.servicePort({ port: 0 })).toThrow(`${W}: service port 0 is not a valid port; use an integer from 1 to 65535.`);
  });
});

describe('tls takes a Secret as every other prop does (issue 39: one form for basicAuth and tls)', () => {
  test('a cdk8s-plus ISecret or { name }: the same volumes', () => {
    const volumesOf = (tls: any) => {
      const chart = new Chart(Testing.app(), 'test');
      const dep = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', ports: [{ number: 8080 }] }] });
      new WithEnvoy(chart, 'envoy', { workload: dep, kubernetesVersion: '1.29', appPort: 8080, tls: typeof tls === 'function' ? tls(chart) : tls });
      return podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).volumes.filter((v: any) => v.secret);
    };
    const plain = volumesOf({ secret: { name: 'web-tls' }, clientCaSecret: { name: 'web-ca' } });
    expect(plain.map((v: any) => v.secret.secretName)).toEqual(['web-tls', 'web-ca']);
    expect(volumesOf((c: Chart) => ({ secret: kplus.Secret.fromSecretName(c, 'tls', 'web-tls'), clientCaSecret: kplus.Secret.fromSecretName(c, 'ca', 'web-ca') })))
      .toEqual(plain);
    // the same shape as LogOutput's basicAuth and WithSidecar's secretEnv: { secret: <the Secret>, key }
    expect(() => volumesOf({ secret: 'web-tls' })).toThrow("WithEnvoy 'test/envoy': tls.secret \"web-tls\" is not a Secret reference; give kplus.Secret.fromSecretName(scope, 'tls', 'web-tls') or { name: 'web-tls' }.");
  });
});

describe('the app behind Envoy without a readinessProbe of its own (Envoy\'s /ready answers whether or not the app is up)', () => {
  const app = (more: Partial<kplus.ContainerProps>): kplus.ContainerProps => ({ name: 'app', image: 'ghcr.io/example/app:1', securityContext: { user: 1000 }, ...more });
  const warningsOf = (build: (chart: Chart) => void): string[] => {
    const { chart } = newChart();
    build(chart);
    Testing.synth(chart);
    return SidecarWarnings.of(chart).filter(w => w.includes('readinessProbe'));
  };

  test.each(['1.27', '1.29'])('a Deployment whose app has none is warned, once, with the fix (%s)', (version) => {
    const warnings = warningsOf(chart => {
      const web = new kplus.Deployment(chart, 'web', { containers: [app({ ports: [{ number: 8080 }] }), app({ name: 'metrics', ports: [{ number: 9100 }] })] });
      new WithEnvoy(chart, 'envoy', { workload: web, kubernetesVersion: version, appPort: 8080 });
    });
    expect(warnings).toEqual([
      "WithEnvoy 'test/envoy': no app container ('app', 'metrics') has a readinessProbe, and Envoy's readiness (GET /ready on its health port) " +
      'answers 200 whether or not the app on 127.0.0.1:8080 is up: the pod is Ready, and gets traffic, as soon as Envoy is, also while the app ' +
      'starts and after it hangs. Give the app a readinessProbe of its own: an exec probe that calls 127.0.0.1:8080 (e.g. ' +
      '`wget -q -O /dev/null http://127.0.0.1:8080/ready`), or an httpGet on another port the app serves on the pod IP.',
    ]);
  });

  test('one app container with a readinessProbe is enough; a Job or CronJob is not warned; a raw manifest is read too', () => {
    expect(warningsOf(chart => {
      const web = new kplus.Deployment(chart, 'web', {
        containers: [app({ ports: [{ number: 8080 }] }), app({ name: 'metrics', ports: [{ number: 9100 }], readiness: kplus.Probe.fromHttpGet('/ready', { port: 9100 }) })],
      });
      new WithEnvoy(chart, 'envoy', { workload: web, kubernetesVersion: '1.29', appPort: 8080 });
    })).toEqual([]);
    expect(warningsOf(chart => {
      const job = new kplus.Job(chart, 'job', { containers: [app({ ports: [{ number: 8080 }] })] });
      new WithEnvoy(chart, 'envoy', { workload: job, kubernetesVersion: '1.29', appPort: 8080 });
    })).toEqual([]);
    expect(warningsOf(chart => {
      const cron = new kplus.CronJob(chart, 'cron', { containers: [app({ ports: [{ number: 8080 }] })], schedule: Cron.daily() });
      new WithEnvoy(chart, 'envoy', { workload: cron, kubernetesVersion: '1.29', appPort: 8080 });
    })).toEqual([]);
    expect(warningsOf(chart => {
      const raw = rawDeployment(chart, 'raw', { containers: [{ name: 'web', image: 'x', ports: [{ containerPort: 8080 }] }] });
      new WithEnvoy(chart, 'envoy', { workload: raw, kubernetesVersion: '1.29', appPort: 8080 });
    })).toEqual([expect.stringMatching(/^WithEnvoy 'test\/envoy': no app container \('web'\) has a readinessProbe/)]);
  });
});
