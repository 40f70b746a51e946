/**
 * Malformed props from JavaScript callers (issue 24, points 6-11): jsii checks the types of the
 * other languages' callers, a JavaScript caller can pass anything. Each case is a mistake
 * that was accepted (and came out wrong) or crashed with a raw TypeError/URIError; each must
 * now be refused as the bad-input catalogue (test/bad-input.test.ts) refuses: the user's
 * program fails, one message line holds the construct (its path), the bad value and what to do,
 * in that order, and nothing is written.
 */
import { ApiObject, App, Chart, Duration, JsonPatch, Lazy, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { AdoptSidecar } from '../src/adopt-sidecar';
import { NativeSidecarGuard } from '../src/guard';
import { LogOutput } from '../src/log-output';
import { Sidecars } from '../src/settings';
import { SidecarValidation } from '../src/validation';
import { WithEnvoy } from '../src/with-envoy';
import { WithLogAgent } from '../src/with-log-agent';
import { SidecarCheck, SidecarQuit, SidecarVolume, WithSidecar } from '../src/with-sidecar';
import { WithTracer } from '../src/with-tracer';
import { APP, Case, ENDPOINT, ctx, expectRefused, withoutVersionEnv } from './util/catalogue';
import { containerEnvironment } from './util/env-expansion';

withoutVersionEnv();

const IMAGE = 'ghcr.io/example/proxy:1.0.0';
/** What JavaScript can pass where TypeScript would not let it. */
const js = (x: unknown): any => x;

const CASES: Case[] = [
  // ---------------------------------------------------------------- types (point 8, 11)
  {
    name: "sidecarContainersGate: 'false' (a string, so truthy)",
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), kubernetesVersion: '1.28', sidecarContainersGate: js('false') }),
    message: ["WithLogAgent 'test/logs'", 'sidecarContainersGate "false" is not a boolean', 'use true or false'],
  },
  {
    name: "Sidecars.configure with sidecarContainersGate: 'false'",
    build: c => Sidecars.configure(c.app, { kubernetesVersion: '1.28', sidecarContainersGate: js('false') }),
    message: ['Sidecars.configure(the App)', 'sidecarContainersGate "false" is not a boolean', 'use true or false'],
  },
  {
    name: "WithTracer holdApplicationUntilCollectorStarts: 'false' (a string, so truthy: the agent would hold the app)",
    build: c => new WithTracer(c.chart, 'tracer', {
      workload: c.deployment(), exporterEndpoint: ENDPOINT, kubernetesVersion: '1.27', holdApplicationUntilCollectorStarts: js('false'),
    }),
    message: ["WithTracer 'test/tracer'", 'holdApplicationUntilCollectorStarts "false" is not a boolean', 'use true or false'],
  },
  {
    name: "WithEnvoy holdApplicationUntilProxyStarts: 'false' (a string, so truthy: the hold the user turned off would stay)",
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, kubernetesVersion: '1.27', holdApplicationUntilProxyStarts: js('false') }),
    message: ["WithEnvoy 'test/envoy'", 'holdApplicationUntilProxyStarts "false" is not a boolean', 'use true or false'],
  },
  {
    name: 'appShutdownTime Duration.seconds(1e21) (written as 1e+21)',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), kubernetesVersion: '1.29', appShutdownTime: Duration.seconds(1e21) }),
    message: ["WithLogAgent 'test/logs'", 'appShutdownTime 1e+21s is above 2147483647s', 'Duration.seconds(10)'],
  },
  {
    name: 'an Envoy drainTime of 1e21 s (Envoy "1e+21s")',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, kubernetesVersion: '1.29', streamIdleTimeout: Duration.seconds(1e21) }),
    message: ["WithEnvoy 'test/envoy'", 'streamIdleTimeout 1e+21s is above', 'Duration.seconds(10)'],
  },
  {
    name: 'a check timeout of 3e9 s (failureThreshold above int32)',
    build: () => SidecarCheck.http(9090, { timeout: Duration.seconds(3e9) }),
    message: ['SidecarCheck', 'timeout 3000000000s is above 2147483647s', 'Duration.seconds(10)'],
  },
  {
    name: 'Size.mebibytes(Infinity) as a memory limit ("InfinityMi")',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), kubernetesVersion: '1.29', resources: { memory: { limit: Size.mebibytes(Infinity) } } }),
    message: ["WithLogAgent 'test/logs'", 'resources.memory.limit Infinity KiB is not a size', 'Size.mebibytes(64)'],
  },
  {
    name: 'Size.mebibytes(Infinity) as an emptyDir sizeLimit',
    build: () => SidecarVolume.emptyDir('cache', '/var/cache/proxy', { sizeLimit: Size.mebibytes(Infinity) }),
    message: ["SidecarVolume.emptyDir('cache')", 'sizeLimit Infinity KiB is not a size', 'Size.mebibytes(16)'],
  },
  {
    name: 'servicePort() nodePort 99999',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, kubernetesVersion: '1.29' }).servicePort({ nodePort: 99999 }),
    message: ["WithEnvoy 'test/envoy'", 'service nodePort 99999 is not a valid port', 'from 1 to 65535 (the API server\'s default --service-node-port-range is 30000-32767'],
  },
  {
    name: 'servicePort() nodePort NaN (written as .nan)',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, kubernetesVersion: '1.29' }).servicePort({ nodePort: NaN }),
    message: ["WithEnvoy 'test/envoy'", 'service nodePort NaN is not a valid port', 'use an integer from 1 to 65535'],
  },
  {
    name: "exposeVia() name 'Bad_Name!'",
    build: c => {
      const envoy = new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, kubernetesVersion: '1.29' });
      envoy.exposeVia(new kplus.Service(c.chart, 'svc', { ports: [{ port: 9999, targetPort: 8080 }] }), { name: 'Bad_Name!' });
    },
    message: ["WithEnvoy 'test/envoy'", 'service port name "Bad_Name!" is not a port name', "e.g. 'https'"],
  },
  {
    name: 'a hole in NativeSidecarGuard namespaces',
    // eslint-disable-next-line no-sparse-arrays
    build: c => new NativeSidecarGuard(c.chart, 'guard', { namespaces: js(['shop', , 'web']) }),
    message: ["NativeSidecarGuard 'test/guard'", 'namespaces[1] is a hole', 'remove the empty entry'],
  },
  {
    name: 'null in NativeSidecarGuard namespaces',
    build: c => new NativeSidecarGuard(c.chart, 'guard', { namespaces: js(['shop', null]) }),
    message: ["NativeSidecarGuard 'test/guard'", 'namespaces[1] is null', 'remove the empty entry'],
  },
  {
    name: 'null in WithEnvoy upstreams',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, kubernetesVersion: '1.29', upstreams: js([null]) }),
    message: ["WithEnvoy 'test/envoy'", 'upstreams[0] is null', 'remove the empty entry'],
  },
  {
    name: 'null in the workload\'s containers',
    build: c => new WithSidecar(c.chart, 'proxy', { workload: c.raw({ containers: [APP, null] }), image: IMAGE, kubernetesVersion: '1.29' }),
    // (cdk8s' own writer turns the null into undefined)
    message: ["Deployment 'raw'", 'spec.containers[1] is undefined, not an object', 'remove it'],
  },
  {
    name: 'null in the workload\'s initContainers',
    build: c => new WithSidecar(c.chart, 'proxy', { workload: c.raw({ containers: [APP], initContainers: [null] }), image: IMAGE, kubernetesVersion: '1.29' }),
    message: ["Deployment 'raw'", 'spec.initContainers[0] is undefined, not an object', 'remove it'],
  },
  {
    name: 'a hole in the workload\'s volumes',
    // eslint-disable-next-line no-sparse-arrays
    build: c => new WithSidecar(c.chart, 'proxy', { workload: c.raw({ containers: [APP], volumes: [, { name: 'x', emptyDir: {} }] }), image: IMAGE, kubernetesVersion: '1.29' }),
    message: ["Deployment 'raw'", 'spec.volumes[0] is', 'remove it'],
  },
  {
    name: 'a plain object as output',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), kubernetesVersion: '1.29', output: js({ type: 'loki', host: 'loki' }) }),
    message: ["WithLogAgent 'test/logs'", 'output {"type":"loki","host":"loki"} was not made by', 'make it with one of them'],
  },
  {
    name: 'a plain object as agent',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: c.deployment(), kubernetesVersion: '1.29', agent: js({ name: 'fluent-bit' }) }),
    message: ["WithLogAgent 'test/logs'", 'agent {"name":"fluent-bit"} was not made by', 'LogAgent.fluentBit()'],
  },
  {
    name: 'a Lazy as serviceName (x.trim is not a function)',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29', serviceName: js(Lazy.any({ produce: () => 'web' })) }),
    message: ["WithTracer 'test/tracer'", 'serviceName a Lazy is not a string', 'give the value itself'],
  },
  {
    name: 'a number as exporterEndpoint',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: js(4317), kubernetesVersion: '1.29' }),
    message: ["WithTracer 'test/tracer'", 'exporterEndpoint 4317 is not a string', "'otel-collector.observability:4317'"],
  },
  {
    name: 'a number as containerName (accepted as the name "5")',
    build: c => new WithSidecar(c.chart, 'proxy', { workload: c.deployment(), image: IMAGE, kubernetesVersion: '1.29', containerName: js(5) }),
    message: ["WithSidecar 'test/proxy'", 'containerName 5 is not a string', "'log-agent'"],
  },
  {
    name: 'a number as a SidecarVolume name (accepted as "5")',
    build: () => SidecarVolume.configMap(js(5), 'proxy-config', '/etc/proxy'),
    message: ["SidecarVolume '5'", 'name 5 is not a string', "give a string, e.g. 'log-agent'"],
  },
  {
    name: 'AdoptSidecar without props (props.containerName of undefined)',
    build: c => new AdoptSidecar(c.chart, 'adopt', js(undefined)),
    message: ["AdoptSidecar 'test/adopt'", 'containerName is required', "e.g. 'cloud-sql-proxy'"],
  },
  {
    name: 'workload: undefined',
    build: c => new WithLogAgent(c.chart, 'logs', { workload: js(undefined), kubernetesVersion: '1.29' }),
    message: ["WithLogAgent 'test/logs'", 'workload undefined is not a construct', 'give the workload'],
  },
  {
    name: 'a lone surrogate in resourceAttributes (URIError)',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: ENDPOINT, kubernetesVersion: '1.29', resourceAttributes: { team: 'a\uD800' } }),
    message: ["WithTracer 'test/tracer'", "resourceAttributes 'team' value \"a\\ud800\" holds a lone UTF-16 surrogate", 'remove the character'],
  },
  // ---------------------------------------------------------------- own properties (point 6)
  {
    name: "a '__proto__' configFiles key from JSON.parse (vanished)",
    build: c => new WithSidecar(c.chart, 'proxy', { workload: c.deployment(), image: IMAGE, kubernetesVersion: '1.29', configFiles: JSON.parse('{"__proto__": "x", "a.conf": "y"}') }),
    message: ["WithSidecar 'test/proxy'", 'configFiles has a key "__proto__"', 'rename the key'],
  },
  {
    name: "a '__proto__' secretHeaders name from JSON.parse (vanished)",
    build: () => LogOutput.http({ host: 'logs.example.com', secretHeaders: JSON.parse('{"__proto__": {"secret": {"name": "s"}, "key": "k"}}') }),
    message: ['LogOutput.http()', 'secretHeaders has a key "__proto__"', 'rename the key'],
  },
  // ---------------------------------------------------------------- collisions (point 9)
  {
    name: 'an ephemeral container named like the sidecar',
    build: c => new WithSidecar(c.chart, 'proxy', {
      workload: c.raw({ containers: [APP], ephemeralContainers: [{ name: 'proxy', image: 'busybox' }] }), image: IMAGE, containerName: 'proxy', kubernetesVersion: '1.29',
    }),
    message: ["WithSidecar 'test/proxy'", "container name 'proxy' is already used by an ephemeral container", 'choose another containerName'],
  },
  {
    name: "a WithSidecar appMountPath at WithLogAgent's logDirectory",
    build: c => {
      const workload = c.deployment();
      new WithLogAgent(c.chart, 'logs', { workload, kubernetesVersion: '1.29' });
      new WithSidecar(c.chart, 'proxy', {
        workload, image: IMAGE, kubernetesVersion: '1.29', volumes: [SidecarVolume.emptyDir('shared', '/shared', { appMountPath: '/var/log/app' })],
      });
    },
    message: ["WithSidecar 'test/proxy'", "mounts volume 'shared' at /var/log/app in the app containers", 'give one of them another directory'],
  },
  {
    name: 'a volume mounted over /',
    build: () => SidecarVolume.emptyDir('root', '/'),
    message: ["SidecarVolume 'root'", "mountPath '/' is the container's root directory", 'use a directory of its own'],
  },
  {
    name: 'a Windows pod',
    build: c => new WithSidecar(c.chart, 'proxy', { workload: c.raw({ containers: [APP], os: { name: 'windows' } }), image: IMAGE, kubernetesVersion: '1.29' }),
    message: ["Deployment 'raw'", 'is a Windows pod (spec.os.name: windows)', 'attach no sidecar to a Windows workload'],
  },
  // ---------------------------------------------------------------- read otherwise by the consumer (point 10)
  ...['LOCALHOST:4317', '0.0.0.0:4317', '[::ffff:127.0.0.1]:4317'].map((endpoint): Case => ({
    name: `a tracer endpoint that is its own receiver: ${endpoint}`,
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: endpoint, kubernetesVersion: '1.29' }),
    message: ["WithTracer 'test/tracer'", `exporterEndpoint '${endpoint}' is the agent's own receiver`, "Give the central collector's address"],
  })),
  {
    name: 'a tracer endpoint 127.1:4317 (inet_aton: 127.0.0.1)',
    build: c => new WithTracer(c.chart, 'tracer', { workload: c.deployment(), exporterEndpoint: '127.1:4317', kubernetesVersion: '1.29' }),
    message: ["WithTracer 'test/tracer'", "exporterEndpoint '127.1:4317' has host '127.1', which the collector (Go: an address is four decimal numbers) looks up as a DNS name", "reads it as 127.0.0.1; as 127.0.0.1:4317 it would be the agent's own receiver", "Give the central collector's address"],
  },
  ...['012', '0x1F', '10.1', '4294967295'].map((host): Case => ({
    name: `a log host the C resolver reads as IPv4: ${host}`,
    build: () => LogOutput.loki({ host }),
    message: ['LogOutput.loki()', `host "${host}" is ambiguous`, 'give the address as four decimal numbers'],
  })),
  ...['#x', 'Example/Fluent-Bit:3', '\u{1F600}', `${'a'.repeat(300)}:1`].map((image): Case => ({
    name: `an image that is not a reference: ${image.slice(0, 24)}`,
    build: c => new WithSidecar(c.chart, 'proxy', { workload: c.deployment(), image, kubernetesVersion: '1.29' }),
    message: ["WithSidecar 'test/proxy'", image.length > 255 ? 'image is 300 characters before its tag' : `image ${JSON.stringify(image)} is not an image reference`, 'use e.g.'],
  })),
  {
    name: "containerName '1proxy' with jobQuit (env var 1PROXY_QUIT_URL)",
    build: c => new WithSidecar(c.chart, 'proxy', {
      workload: c.raw({ containers: [APP], restartPolicy: 'Never' }, 'Job'),
      image: IMAGE,
      containerName: '1proxy',
      kubernetesVersion: '1.27',
      jobQuit: SidecarQuit.http(9091, '/quitquitquit'),
    }),
    message: ["WithSidecar 'test/proxy'", "the env var '1PROXY_QUIT_URL' (from containerName '1proxy')", "SidecarQuit.http(port, path, 'PROXY_QUIT_URL')"],
  },
  {
    name: 'tls: null on WithEnvoy (plain HTTP on envoy-https)',
    build: c => new WithEnvoy(c.chart, 'envoy', { workload: c.deployment(), appPort: 8080, kubernetesVersion: '1.29', tls: js(null) }),
    message: ["WithEnvoy 'test/envoy'", 'tls null is not TLS options', 'leave tls out'],
  },
];

describe('malformed props from JavaScript', () => {
  test.each(CASES.map(c => [c.name, c] as const))('%s', (_name, c) => {
    // never a raw TypeError, RangeError or URIError
    expectRefused(c, { tmpPrefix: 'sidecars-types-', plainError: true });
  });
});

describe('SidecarValidation.checkManifest of malformed manifests', () => {
  test('a Pod with containers: [null] is reported, not a TypeError', () => {
    const problems = SidecarValidation.checkManifest({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [null] } }, '1.29');
    expect(problems).toEqual([expect.stringContaining("Pod 'p': spec.containers[0] is null, not an object; remove it")]);
  });
});

describe('own properties only (point 6)', () => {
  test.each(['constructor', 'toString', 'hasOwnProperty'])("secretEnv '%s' is not taken for an env var of Object.prototype", name => {
    const chart = new Chart(Testing.app(), 'test');
    const workload = ctx(chart.node.root as App, chart).raw({ containers: [APP] });
    new WithSidecar(chart, 'proxy', {
      workload,
      image: IMAGE,
      containerName: 'proxy',
      kubernetesVersion: '1.29',
      env: { MODE: 'x' },
      secretEnv: { [name]: { secret: { name: 'db' }, key: 'k' } },
    });
    const proxy = Testing.synth(chart)[0].spec.template.spec.initContainers.find((c: any) => c.name === 'proxy');
    expect(proxy.env).toEqual([{ name, valueFrom: { secretKeyRef: { key: 'k', name: 'db' } } }, { name: 'MODE', value: 'x' }]);
  });
});

describe('props are copied at construction (point 7)', () => {
  /** The synthesized workload of a construct made from `props`, `mutate`d afterwards (or not). */
  function synthWith(make: (chart: Chart, props: any) => void, props: () => any, mutate?: (p: any) => void): string {
    const chart = new Chart(Testing.app(), 'test');
    const p = props();
    p.workload = ctx(chart.node.root as App, chart).raw({ containers: [APP] });
    make(chart, p);
    mutate?.(p);
    return JSON.stringify(Testing.synth(chart));
  }

  test('WithSidecar: changing the props object (version, env, appShutdownTime, volumes) afterwards changes nothing', () => {
    const make = (chart: Chart, p: any) => new WithSidecar(chart, 'proxy', p);
    const props = () => ({
      image: IMAGE,
      kubernetesVersion: '1.27',
      env: { MODE: 'a' },
      appShutdownTime: Duration.seconds(20),
      allowLegacyOnJob: false,
      volumes: [SidecarVolume.emptyDir('cache', '/var/cache/proxy')],
      localPorts: [5432],
    });
    const expected = synthWith(make, props);
    const got = synthWith(make, props, p => {
      p.kubernetesVersion = '1.29';
      p.env.MODE = 'b';
      p.appShutdownTime = Duration.seconds(90);
      p.volumes.push(SidecarVolume.emptyDir('more', '/more'));
      p.localPorts[0] = 6000;
      p.containerName = 'other';
    });
    expect(got).toBe(expected);
  });

  test('WithLogAgent and WithTracer: a version changed on the props object afterwards does not change the layout', () => {
    for (const make of [
      (chart: Chart, p: any) => new WithLogAgent(chart, 'logs', p),
      (chart: Chart, p: any) => new WithTracer(chart, 'tracer', { exporterEndpoint: ENDPOINT, ...p }),
    ]) {
      const props = () => ({ kubernetesVersion: '1.27', appShutdownTime: Duration.seconds(20) });
      const expected = synthWith(make, props);
      const got = synthWith(make, props, p => { p.kubernetesVersion = '1.29'; p.sidecarContainersGate = true; });
      expect(got).toBe(expected);
    }
  });

  test('NativeSidecarGuard: namespaces changed afterwards change nothing', () => {
    const synth = (mutate: boolean) => {
      const chart = new Chart(Testing.app(), 'test');
      const props = { namespaces: ['shop'], kubernetesVersion: '1.30' };
      new NativeSidecarGuard(chart, 'guard', props);
      if (mutate) { props.namespaces.push('web'); props.kubernetesVersion = '1.29'; }
      return JSON.stringify(Testing.synth(chart));
    };
    expect(synth(true)).toBe(synth(false));
  });
});

describe('values the kubelet would expand (point 10)', () => {
  test('a $(VAR) in a SidecarQuit path reaches the app as written ($$ in the manifest)', () => {
    const chart = new Chart(Testing.app(), 'test');
    const workload = ctx(chart.node.root as App, chart).raw({ containers: [{ ...APP, env: [{ name: 'HOME', value: '/root' }] }], restartPolicy: 'Never' }, 'Job');
    new WithSidecar(chart, 'proxy', {
      workload, image: IMAGE, containerName: 'proxy', kubernetesVersion: '1.27', jobQuit: SidecarQuit.http(9091, '/quit?x=$(HOME)&y=$$'),
    });
    const app = Testing.synth(chart)[0].spec.template.spec.containers.find((c: any) => c.name === 'app');
    // read as the kubelet reads it (test/util/env-expansion.ts)
    expect(containerEnvironment(app.env).get('PROXY_QUIT_URL')).toBe('http://127.0.0.1:9091/quit?x=$(HOME)&y=$$');
  });
});

describe('a JSON patch of the workload\'s namespace (point 9)', () => {
  test('the agent\'s ConfigMap lands in the namespace the patch sets', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'test');
    const workload = ctx(app, chart).raw({ containers: [APP] });
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.29' });
    workload.addJsonPatch(JsonPatch.add('/metadata/namespace', 'shop'));
    const objects = Testing.synth(chart);
    expect(objects.find((o: any) => o.kind === 'Deployment').metadata.namespace).toBe('shop');
    expect(objects.find((o: any) => o.kind === 'ConfigMap').metadata.namespace).toBe('shop');
  });

  test('a patch that targets a sidecar (patches run before the sidecars are added) says so', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'test');
    const workload = ctx(app, chart).raw({ containers: [APP] });
    new WithSidecar(chart, 'proxy', { workload, image: IMAGE, containerName: 'proxy', kubernetesVersion: '1.29' });
    workload.addJsonPatch(JsonPatch.replace('/spec/template/spec/initContainers/0/image', 'x'));
    expect(() => Testing.synth(chart)).toThrow(/'test\/raw': a JSON patch of the workload failed: patch 1 of 1 .*applied to its own manifest BEFORE the sidecars are added/);
  });
});

describe('props objects', () => {
  test('props built with a class (TypeScript allows it) are taken like a plain object', () => {
    const chart = new Chart(Testing.app(), 'test');
    const deployment = ctx(chart.node.root as App, chart).raw({ containers: [APP] });
    class ProxyProps {
      public readonly image = IMAGE;
      public readonly kubernetesVersion = '1.29';
      constructor(public readonly workload: ApiObject) {}
    }
    new WithSidecar(chart, 'proxy', new ProxyProps(deployment));
    expect(Testing.synth(chart)[0].spec.template.spec.initContainers.map((c: any) => c.name)).toEqual(['sidecar']);
  });
});
