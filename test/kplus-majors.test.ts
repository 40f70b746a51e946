/**
 * Every cdk8s-plus major (27 to 34) and plain ApiObjects (issue 20): the same workload built with
 * each major, with its own Secret references, resources and Services, synthesized in both
 * layouts and checked against the schema of the major's own release; and what differs between
 * the majors' output (grace period, shareProcessNamespace, container restartPolicy).
 */
import { ApiObject, Chart, Cron, Duration, Size, Testing } from 'cdk8s';
import * as kplus27 from 'cdk8s-plus-27';
import * as kplus28 from 'cdk8s-plus-28';
import * as kplus29 from 'cdk8s-plus-29';
import * as kplus30 from 'cdk8s-plus-30';
import * as kplus31 from 'cdk8s-plus-31';
import * as kplus32 from 'cdk8s-plus-32';
import * as kplus33 from 'cdk8s-plus-33';
import * as kplus34 from 'cdk8s-plus-34';
import { Construct } from 'constructs';
import {
  LogAgent, LogOutput, SecretKeyReference, SidecarResources, SidecarServicePort, SidecarWarnings, WithEnvoy, WithLogAgent, WithSidecar, WithTracer,
} from '../src';
import { expectValidManifests } from './util/k8s-schema';
import { graceWrittenByDefault } from '../src/bind/workload-defaults';

/** Each major's module, used alike: the parts of the API this test calls exist in all of them. */
const MAJORS: Array<[number, any]> = [
  [27, kplus27], [28, kplus28], [29, kplus29], [30, kplus30], [31, kplus31], [32, kplus32], [33, kplus33], [34, kplus34],
];

const SIDECARS = ['log-agent', 'tracer', 'envoy'];

/** The app, its sidecars, a Service via servicePort() and one via exposeVia(), with major `kplus`'s own types. */
function build(kplus: any, kubernetesVersion: string, extra: { grace?: Duration; raw?: boolean } = {}) {
  const app = Testing.app();
  const chart = new Chart(app, 'test');
  const deployment = (scope: Construct) => new kplus.Deployment(scope, 'web', {
    metadata: { name: 'web' },
    terminationGracePeriod: extra.grace,
    containers: [{ name: 'app', image: 'ghcr.io/example/web:1.0.0', args: ['--listen=127.0.0.1:8080'], ports: [{ number: 8080 }] }],
  });
  let web: any = deployment(extra.raw ? new Chart(Testing.app(), 'test') : chart);
  if (extra.raw) {
    // The same Deployment as a raw ApiObject, without terminationGracePeriodSeconds (unset).
    const json = ApiObject.of(web).toJson();
    delete json.spec.template.spec.terminationGracePeriodSeconds;
    web = new ApiObject(chart, 'web', json);
  }
  const creds = kplus.Secret.fromSecretName(chart, 'creds', 'log-creds');
  const resources = {
    cpu: { request: kplus.Cpu.millis(50), limit: kplus.Cpu.units(1) },
    memory: { request: Size.mebibytes(48), limit: Size.mebibytes(96) },
  };
  new WithLogAgent(chart, 'logs', {
    workload: web,
    kubernetesVersion,
    agent: LogAgent.fluentBit(),
    resources,
    output: LogOutput.http({ host: 'logs.example.com', basicAuth: { username: { secret: creds, key: 'user' }, password: { secret: creds, key: 'password' } } }),
  });
  new WithTracer(chart, 'tracer', {
    workload: web,
    kubernetesVersion,
    exporterEndpoint: 'otel-collector.observability:4317',
    exporterTls: false,
    exporterHeaders: { authorization: { secret: kplus.Secret.fromSecretName(chart, 'otel', 'otel-auth'), key: 'token' } },
  });
  const envoy = new WithEnvoy(chart, 'envoy', { workload: web, kubernetesVersion, appPort: 8080, tls: { secret: { name: 'web-tls' } } });
  if (!extra.raw) {
    new kplus.Service(chart, 'svc', { metadata: { name: 'web' }, selector: web, ports: [envoy.servicePort()] });
    const other = new kplus.Service(chart, 'other', { metadata: { name: 'web-alt' }, selector: web, ports: [{ name: 'metrics', port: 9090 }] });
    envoy.exposeVia(other, { name: 'https-alt', port: 8443 });
  }
  return { chart, web, envoy };
}

function find(manifests: any[], kind: string, name: string): any {
  const m = manifests.find(o => o.kind === kind && o.metadata.name === name);
  if (!m) throw new Error(`no ${kind} ${name} in ${manifests.map(o => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return m;
}

describe.each(MAJORS)('cdk8s-plus-%i', (major, kplus) => {
  // Native at the major's own release where it can be (1.29+), legacy at 1.27 (every major can
  // target an older cluster); each checked against the schema of the release it targets.
  const native = major >= 29 ? `1.${major}` : '1.29';
  const cases: Array<[string, string]> = [['LEGACY', '1.27'], ['NATIVE', native]];

  test.each(cases)('%s (target %s): sidecars placed, own types read, Services wired, schema-valid', (layout, version) => {
    const { chart } = build(kplus, version);
    const manifests = Testing.synth(chart);
    expectValidManifests(manifests, version);
    const spec = find(manifests, 'Deployment', 'web').spec.template.spec;
    const init = (spec.initContainers ?? []).filter((c: any) => SIDECARS.includes(c.name));
    if (layout === 'NATIVE') {
      expect(init.map((c: any) => [c.name, c.restartPolicy]).sort()).toEqual([['envoy', 'Always'], ['log-agent', 'Always'], ['tracer', 'Always']]);
      expect(spec.containers.map((c: any) => c.name)).toEqual(['app']);
    } else {
      expect(init).toEqual([]);
      expect(spec.containers.map((c: any) => c.name).sort()).toEqual(['app', 'envoy', 'log-agent', 'tracer']);
    }
    const all = [...spec.containers, ...(spec.initContainers ?? [])];
    const logAgent = all.find((c: any) => c.name === 'log-agent');
    // kplus Cpu.millis(50) / Cpu.units(1) and cdk8s Size, as Kubernetes quantities.
    // (the ephemeral-storage request is the agent's default: its disk buffer, docs/log-agents.md "Disk")
    expect(logAgent.resources).toEqual({ limits: { cpu: '1', memory: '96Mi' }, requests: { 'cpu': '50m', 'ephemeral-storage': '260Mi', 'memory': '48Mi' } });
    const secretRefs = (c: any) => (c.env ?? []).filter((e: any) => e.valueFrom?.secretKeyRef).map((e: any) => e.valueFrom.secretKeyRef);
    expect(secretRefs(logAgent)).toEqual(expect.arrayContaining([{ key: 'user', name: 'log-creds' }, { key: 'password', name: 'log-creds' }]));
    expect(secretRefs(all.find((c: any) => c.name === 'tracer'))).toEqual([{ key: 'token', name: 'otel-auth' }]);
    // The grace period: cdk8s-plus wrote its default 30, which the engine raised like an unset field.
    expect(spec.terminationGracePeriodSeconds).toBeGreaterThan(30);
    expect(find(manifests, 'Service', 'web').spec.ports).toEqual([{ name: 'https', port: 443, targetPort: 8443 }]);
    expect(find(manifests, 'Service', 'web-alt').spec.ports).toEqual([
      { name: 'metrics', port: 9090 },
      { name: 'https-alt', port: 8443, protocol: 'TCP', targetPort: 8443 },
    ]);
  });

  test('the default grace period is raised exactly as on a raw Deployment without one; an explicit one is kept', () => {
    const grace = (chart: Chart) => find(Testing.synth(chart), 'Deployment', 'web').spec.template.spec.terminationGracePeriodSeconds;
    const kplusBuilt = build(kplus, native);
    expect(graceWrittenByDefault(kplusBuilt.web)).toBe(30);
    const raw = grace(build(kplus, native, { raw: true }).chart);
    expect(raw).toBeGreaterThan(30);
    expect(grace(kplusBuilt.chart)).toBe(raw);

    // A grace the user chose (not 30) is theirs: too short for the sidecars, it is the app's budget and the sidecars' time is added.
    const explicit = build(kplus, native, { grace: Duration.seconds(12) });
    expect(graceWrittenByDefault(explicit.web)).toBeUndefined();
    expect(grace(explicit.chart)).toBeGreaterThan(12);
    expect(SidecarWarnings.of(explicit.chart)).toEqual(expect.arrayContaining([expect.stringContaining("terminationGracePeriodSeconds 12s is taken as the app's own budget")]));
  });
});

/**
 * Every major x every workload kind x the targets that change the layout (1.27 legacy, 1.28 with
 * the gate: native but stopped with the app, 1.29 ordered, 1.33 GA, 1.37 the newest release), each
 * kind with every sidecar construct: one app per (major, target) holding all the kinds, so the
 * 8 x 5 cells cost 40 syntheses, not 240. Issue 37: cdk8s-plus 29-34 write `shareProcessNamespace:
 * false` by default, which the Job and CronJob wrappers of 1.27 (and 1.28 with the gate) refused.
 */
describe('every workload kind of every major x every target: each sidecar construct synthesizes', () => {
  const KINDS = ['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'Pod'];
  const TARGETS: Array<[string, boolean]> = [['1.27', false], ['1.28', true], ['1.29', false], ['1.33', false], ['1.37', false]];
  const CONSTRUCTS = ['log-agent', 'tracer', 'envoy', 'probe'];
  const cells = MAJORS.flatMap(([major, kplus]) => TARGETS.map(([version, gate]) => [major, version, gate, kplus] as const));

  test.each(cells)('cdk8s-plus-%i at %s (gate %s)', (major, version, gate, kplus) => {
    const chart = new Chart(Testing.app(), 'test');
    const target = { kubernetesVersion: version, sidecarContainersGate: gate };
    for (const kind of KINDS) {
      const id = kind.toLowerCase();
      const containers = [{ name: 'app', image: 'ghcr.io/example/app:1.0.0', args: ['--listen=127.0.0.1:8080'], ports: [{ number: 8080 }] }];
      const props = kind === 'CronJob' ? { containers, schedule: Cron.daily() } : { containers };
      const workload = new kplus[kind](chart, id, props);
      new WithLogAgent(chart, `logs-${id}`, { workload, ...target });
      new WithTracer(chart, `tracer-${id}`, { workload, ...target, exporterEndpoint: 'otel-collector.observability:4317', exporterTls: false });
      // A Job's legacy Envoy cannot hold the app and exit with it (it starts first): the user's choice there.
      const completes = kind === 'Job' || kind === 'CronJob';
      new WithEnvoy(chart, `envoy-${id}`, { workload, ...target, appPort: 8080, ...(completes ? { holdApplicationUntilProxyStarts: false } : {}) });
      new WithSidecar(chart, `probe-${id}`, {
        workload, ...target, containerName: 'probe', image: 'ghcr.io/example/probe:1.0.0', command: ['/probe'], ports: [{ name: 'probe', number: 9100 }],
      });
    }
    const manifests = Testing.synth(chart);
    expectValidManifests(manifests, version);
    const pods = manifests.filter(m => KINDS.includes(m.kind)).map(m => [m.kind, m.kind === 'Pod' ? m.spec
      : m.kind === 'CronJob' ? m.spec.jobTemplate.spec.template.spec : m.spec.template.spec]);
    expect(pods.map(([kind]) => kind).sort()).toEqual([...KINDS].sort());
    const native = version !== '1.27';
    for (const [kind, spec] of pods) {
      const init = (spec.initContainers ?? []).filter((c: any) => CONSTRUCTS.includes(c.name)).map((c: any) => [c.name, c.restartPolicy]);
      const legacy = spec.containers.map((c: any) => c.name).filter((n: string) => CONSTRUCTS.includes(n));
      expect([major, kind, init.sort(), legacy.sort()]).toEqual(
        [major, kind, native ? CONSTRUCTS.map(n => [n, 'Always']).sort() : [], native ? [] : [...CONSTRUCTS].sort()]);
      // A completing pod's legacy sidecars exit with the app (shareProcessNamespace: true, over
      // cdk8s-plus 29+'s written-by-default false); elsewhere the pod keeps what cdk8s-plus wrote.
      const completes = kind === 'Job' || kind === 'CronJob';
      const wrapped = completes && !native;
      expect([major, kind, spec.shareProcessNamespace]).toEqual([major, kind, wrapped ? true : major >= 29 ? false : undefined]);
    }
  });

  test('cdk8s-plus-34 Job with shareProcessNamespace: false at 1.27: set to true, and the warning says it overrode the workload\'s false', () => {
    const chart = new Chart(Testing.app(), 'test');
    const job = new kplus34.Job(chart, 'job', { containers: [{ name: 'app', image: 'nginx' }], shareProcessNamespace: false });
    new WithLogAgent(chart, 'logs', { workload: job, kubernetesVersion: '1.27' });
    const spec = Testing.synth(chart).find((m: any) => m.kind === 'Job').spec.template.spec;
    expect(spec.shareProcessNamespace).toBe(true);
    expect(SidecarWarnings.of(chart)).toEqual(expect.arrayContaining([expect.stringMatching(
      /sets shareProcessNamespace: true over the workload's false, which cdk8s-plus 29\+ writes when none is given, so the library cannot tell it from a false you chose/)]));
  });

  test('an explicit shareProcessNamespace: false on a raw Job is still the user\'s, and refused at 1.27', () => {
    const chart = new Chart(Testing.app(), 'test');
    const json = ApiObject.of(new kplus27.Job(new Chart(Testing.app(), 'x'), 'job', { containers: [{ name: 'app', image: 'nginx' }] })).toJson();
    json.spec.template.spec.shareProcessNamespace = false;
    const job = new ApiObject(chart, 'job', json);
    new WithLogAgent(chart, 'logs', { workload: job, kubernetesVersion: '1.27' });
    expect(() => Testing.synth(chart)).toThrow(/the workload sets shareProcessNamespace: false/);
  });
});

describe('what differs between the majors', () => {
  function plain(kplus: any): any {
    const chart = new Chart(Testing.app(), 'test');
    new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'nginx', ports: [{ number: 8080 }] }] });
    return Testing.synth(chart)[0].spec.template.spec;
  }

  test('every major writes terminationGracePeriodSeconds: 30 by default; 29+ also shareProcessNamespace: false', () => {
    // Read from each major's output, not assumed: the binding's "written by default" rests on it.
    for (const [major, kplus] of MAJORS) {
      const spec = plain(kplus);
      expect([major, spec.terminationGracePeriodSeconds]).toEqual([major, 30]);
      expect([major, spec.shareProcessNamespace]).toEqual([major, major >= 29 ? false : undefined]);
      // Restricted-style container defaults and cdk8s-plus' 1 CPU / 512Mi requests in every major.
      const restricted = { allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, runAsNonRoot: true };
      expect([major, spec.containers[0].securityContext]).toEqual([major, restricted]);
      expect([major, spec.containers[0].resources.requests]).toEqual([major, { cpu: '1000m', memory: '512Mi' }]);
    }
  });

  test('a sidecar keeps the fields a later major writes (shareProcessNamespace)', () => {
    const spec = find(Testing.synth(build(kplus34, '1.34').chart), 'Deployment', 'web').spec.template.spec;
    expect(spec.shareProcessNamespace).toBe(false);
  });

  test('portNumber adds the TCP startup probe in every major: WithEnvoy reports it on appPort in each', () => {
    for (const [major, kplus] of MAJORS) {
      const chart = new Chart(Testing.app(), 'test');
      const web = new kplus.Deployment(chart, 'web', { containers: [{ name: 'app', image: 'nginx', portNumber: 8080 }] });
      new WithEnvoy(chart, 'envoy', { workload: web, appPort: 8080, kubernetesVersion: '1.29' });
      expect(() => Testing.synth(chart)).toThrow('container \'app\' has a startupProbe (tcpSocket) on appPort 8080');
      void major;
    }
  });

  test.each([28, 29, 34])('cdk8s-plus-%i: the user\'s own native sidecar (container restartPolicy, 28+) is kept beside the agents', (major) => {
    const kplus = MAJORS.find(([m]) => m === major)![1];
    const chart = new Chart(Testing.app(), 'test');
    const web = new kplus.Deployment(chart, 'web', {
      containers: [{ name: 'app', image: 'nginx', ports: [{ number: 8080 }] }],
      initContainers: [{ name: 'mine', image: 'busybox', restartPolicy: kplus.ContainerRestartPolicy.ALWAYS }],
    });
    // ours wait for it, and how long it takes after SIGTERM is the user's to say (userSidecarStopTime)
    new WithLogAgent(chart, 'logs', { workload: web, kubernetesVersion: '1.29', userSidecarStopTime: Duration.seconds(2) });
    const manifests = Testing.synth(chart);
    expectValidManifests(manifests, '1.29');
    const init = manifests[0].spec.template.spec.initContainers;
    expect(init.find((c: any) => c.name === 'mine').restartPolicy).toBe('Always');
    expect(init.find((c: any) => c.name === 'log-agent').restartPolicy).toBe('Always');
  });
});

describe('the API without cdk8s-plus: plain objects of the library\'s own types', () => {
  function rawDeployment(scope: Construct, grace?: number): ApiObject {
    return new ApiObject(scope, 'web', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { terminationGracePeriodSeconds: grace, containers: [{ name: 'app', image: 'nginx', ports: [{ containerPort: 8080 }] }] },
        },
      },
    });
  }

  test('Secret references, resources (with ephemeral storage) and a raw Service, without a cdk8s-plus object', () => {
    const chart = new Chart(Testing.app(), 'test');
    const web = rawDeployment(chart);
    const password: SecretKeyReference = { secret: { name: 'log-creds' }, key: 'password' };
    const resources: SidecarResources = {
      cpu: { request: { amount: '25m' }, limit: { amount: '0.5' } },
      ephemeralStorage: { request: Size.mebibytes(64), limit: Size.gibibytes(1) },
    };
    new WithLogAgent(chart, 'logs', {
      workload: web,
      kubernetesVersion: '1.29',
      resources,
      output: LogOutput.http({ host: 'logs.example.com', basicAuth: { username: { secret: { name: 'log-creds' }, key: 'user' }, password } }),
    });
    const envoy = new WithEnvoy(chart, 'envoy', { workload: web, kubernetesVersion: '1.29', appPort: 8080 });
    const svc = new ApiObject(chart, 'svc', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' } } });
    envoy.exposeVia(svc);
    const port: SidecarServicePort = envoy.servicePort({ port: 8080, name: 'alt' });
    envoy.exposeVia(svc, port);
    const manifests = Testing.synth(chart);
    expectValidManifests(manifests, '1.29');
    const spec = find(manifests, 'Deployment', 'web').spec.template.spec;
    const agent = spec.initContainers.find((c: any) => c.name === 'log-agent');
    expect(agent.resources).toEqual({
      limits: { 'cpu': '0.5', 'ephemeral-storage': '1024Mi', 'memory': expect.any(String) },
      requests: { 'cpu': '25m', 'ephemeral-storage': '64Mi', 'memory': expect.any(String) },
    });
    expect(agent.env).toEqual(expect.arrayContaining([expect.objectContaining({ valueFrom: { secretKeyRef: { key: 'password', name: 'log-creds' } } })]));
    expect(find(manifests, 'Service', 'web').spec.ports).toEqual([
      { name: 'http', port: 80, protocol: 'TCP', targetPort: 10000 },
      { name: 'alt', port: 8080, protocol: 'TCP', targetPort: 10000 },
    ]);
  });

  test('exposeVia: a port the Service has already, a non-Service, and a bad CPU amount are clear errors', () => {
    const chart = new Chart(Testing.app(), 'test');
    const web = rawDeployment(chart);
    const envoy = new WithEnvoy(chart, 'envoy', { workload: web, kubernetesVersion: '1.29', appPort: 8080 });
    const svc = new kplus34.Service(chart, 'svc', { selector: kplus34.Pods.select(chart, 'pods', { labels: { app: 'web' } }), ports: [{ name: 'http', port: 80 }] });
    envoy.exposeVia(svc);
    expect(() => Testing.synth(chart)).toThrow(
      "WithEnvoy 'test/envoy': Service 'test/svc/Resource' spec.ports[1] has the name 'http' of spec.ports[0]; the API server rejects duplicate port names. Give exposeVia() another name.",
    );
    expect(() => Testing.synth(chart)).toThrow('spec.ports[1] is port 80/TCP, as is spec.ports[0]; the API server rejects duplicate ports. Give exposeVia() another port.');
    expect(() => envoy.exposeVia(web)).toThrow(
      "WithEnvoy 'test/envoy': 'test/web' is a apps/v1 Deployment; pass a cdk8s-plus Service (any major) or a v1 Service ApiObject (e.g. a KubeService).",
    );
    expect(() => envoy.exposeVia(new Construct(chart, 'nothing'))).toThrow("'test/nothing' is neither a cdk8s-plus Service nor a cdk8s ApiObject");

    const c2 = new Chart(Testing.app(), 'test');
    expect(() => new WithTracer(c2, 'tracer', {
      workload: rawDeployment(c2), exporterEndpoint: 'otel:4317', kubernetesVersion: '1.29', resources: { cpu: { limit: { amount: '1 core' } } },
    })).toThrow(
      "WithTracer 'test/tracer': resources.cpu.limit \"1 core\" is not a CPU quantity; use e.g. { amount: '250m' } or cdk8s-plus Cpu.millis(250).",
    );
  });

  test('an ephemeral-storage request above its limit is refused', () => {
    const chart = new Chart(Testing.app(), 'test');
    expect(() => new WithLogAgent(chart, 'logs', {
      workload: rawDeployment(chart),
      kubernetesVersion: '1.29',
      resources: { ephemeralStorage: { request: Size.mebibytes(200), limit: Size.mebibytes(100) } },
    })).toThrow(
      "WithLogAgent 'test/logs': resources.ephemeralStorage request 200Mi is above the limit 100Mi, which the API server rejects; " +
      'set resources.ephemeralStorage.limit to at least 200Mi, or a smaller resources.ephemeralStorage.request.',
    );
  });

  test('only a workload that behaves like cdk8s-plus has a written-by-default grace: an explicit 30 elsewhere is the user\'s', () => {
    // A construct of the user's own around a raw Deployment with an explicit 30 (the old binding
    // took every non-ApiObject for a cdk8s-plus workload and silently raised it).
    class MyWorkload extends Construct {
      constructor(scope: Construct, id: string) {
        super(scope, id);
        this.node.defaultChild = rawDeployment(this, 30);
      }
    }
    const chart = new Chart(Testing.app(), 'test');
    const mine = new MyWorkload(chart, 'mine');
    expect(graceWrittenByDefault(mine)).toBeUndefined();
    new WithLogAgent(chart, 'logs', { workload: mine, kubernetesVersion: '1.29', appShutdownTime: Duration.seconds(30) });
    expect(() => Testing.synth(chart)).toThrow(/terminationGracePeriodSeconds is 30, but its sidecars need \d+/);
    expect(graceWrittenByDefault(rawDeployment(new Chart(Testing.app(), 'x')))).toBeUndefined();
  });
});

test('the cdk8s-plus-34 example of docs/cdk8s-plus.md, written out, synthesizes in both layouts', () => {
  for (const [version, native] of [['1.27', false], ['1.34', true]] as const) {
    const app = Testing.app();
    const chart = new Chart(app, 'shop');
    const web = new kplus34.Deployment(chart, 'web', {
      containers: [{ name: 'web', image: 'ghcr.io/example/web:1.0.0', args: ['--listen=127.0.0.1:8080'], ports: [{ number: 8080 }] }],
    });
    const creds = kplus34.Secret.fromSecretName(chart, 'creds', 'log-creds');
    new WithLogAgent(chart, 'logs', {
      workload: web,
      kubernetesVersion: version,
      resources: { cpu: { request: kplus34.Cpu.millis(50) }, memory: { limit: Size.mebibytes(128) } },
      output: LogOutput.http({ host: 'logs.example.com', basicAuth: { username: { secret: creds, key: 'user' }, password: { secret: creds, key: 'password' } } }),
    });
    new WithTracer(chart, 'tracer', { workload: web, kubernetesVersion: version, exporterEndpoint: 'otel-collector.observability:4317', exporterTls: false });
    const envoy = new WithEnvoy(chart, 'envoy', { workload: web, kubernetesVersion: version, appPort: 8080, tls: { secret: { name: 'web-tls' } } });
    new kplus34.Service(chart, 'web-svc', { selector: web, ports: [envoy.servicePort()] });
    const manifests = Testing.synth(chart);
    expectValidManifests(manifests, version);
    const spec = manifests.find(m => m.kind === 'Deployment').spec.template.spec;
    expect((spec.initContainers ?? []).filter((c: any) => c.restartPolicy === 'Always').length).toBe(native ? 3 : 0);
  }
});
