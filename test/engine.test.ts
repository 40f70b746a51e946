/**
 * The pod-template engine on plain JSON: no cdk8s involved.
 */
import { applySidecars } from '../src/engine/pod-template';
import { checkPodSpec } from '../src/engine/rules';
import { TOOLS, graceNeed } from '../src/engine/shutdown';
import { RANK, SidecarSpec } from '../src/engine/spec';
import { podTemplateOf } from '../src/facts/kinds';
import { Json } from '../src/private/json';

function sidecar(name: string, rank: number, over: Partial<SidecarSpec> = {}): SidecarSpec {
  return {
    owner: `With '${name}'`,
    kind: `Kind-${name}`,
    rank,
    container: {
      name,
      image: `example/${name}:1`,
      ports: [{ containerPort: 9000 + rank, name: `${name.slice(0, 10)}-p` }],
      startupProbe: { httpGet: { path: '/ready', port: 9000 + rank } },
    },
    volumes: [{ name: `${name}-config`, configMap: { name: `${name}-cm` } }],
    appMounts: [],
    appEnv: [],
    podAnnotations: {},
    shutdown: { stopSeconds: 5, appShutdownSeconds: 10 },
    layout: 'NATIVE',
    allowLegacyOnJob: false,
    ...over,
  };
}

function deployment(spec: Json = {}): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'app', image: 'app:1', ports: [{ containerPort: 8080 }] }], ...spec },
      },
    },
  };
}

const T29 = { minor: 29, gate: false };
const T27 = { minor: 27, gate: false };
const names = (cs: Json[] = []) => cs.map(c => c.name);

describe('podTemplateOf', () => {
  test.each([
    ['Pod', { kind: 'Pod', spec: { containers: [] } }, (m: Json) => m.spec],
    ['Deployment', deployment(), (m: Json) => m.spec.template.spec],
    ['CronJob', { kind: 'CronJob', spec: { jobTemplate: { spec: { template: { spec: { containers: [] } } } } } }, (m: Json) => m.spec.jobTemplate.spec.template.spec],
  ])('%s', (_k, manifest, get) => {
    expect(podTemplateOf(manifest as Json)!.spec).toBe(get(manifest as Json));
  });
  test('kinds without a pod template', () => {
    expect(podTemplateOf({ kind: 'Service' })).toBeUndefined();
    const r = applySidecars({ kind: 'Service', metadata: { name: 's' } }, [sidecar('a', 1)], T29);
    expect(r.errors).toEqual(["Service 's': kind Service has no pod template; supported kinds: Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, ReplicationController."]);
  });
});

describe('placement and order', () => {
  const log = sidecar('log-agent', RANK.LOG_AGENT);
  const tracer = sidecar('tracer', RANK.TRACER);
  const proxy = sidecar('envoy', RANK.PROXY);

  test('native: ours first, in the order log agent, tracer, proxy, whatever order they came in; then the user\'s init containers', () => {
    const input = deployment({ initContainers: [{ name: 'migrate', image: 'm:1' }] });
    const r = applySidecars(input, [proxy, log, tracer], T29);
    expect(r.errors).toEqual([]);
    const spec = r.manifest.spec.template.spec;
    expect(names(spec.initContainers)).toEqual(['log-agent', 'tracer', 'envoy', 'migrate']);
    expect(spec.initContainers.slice(0, 3).map((c: Json) => c.restartPolicy)).toEqual(['Always', 'Always', 'Always']);
    expect(spec.initContainers[3].restartPolicy).toBeUndefined();
    expect(names(spec.containers)).toEqual(['app']);
  });

  test('legacy: after the app; a sidecar that holds the app goes first', () => {
    const legacy = (s: SidecarSpec, over: Partial<SidecarSpec> = {}) => ({ ...s, layout: 'LEGACY' as const, ...over });
    const r = applySidecars(deployment(), [
      legacy(proxy, { hold: { readyUrl: 'http://127.0.0.1:15021/ready', timeoutSeconds: 60 } }),
      legacy(tracer), legacy(log),
    ], T27);
    expect(r.errors).toEqual([]);
    const spec = r.manifest.spec.template.spec;
    expect(names(spec.containers)).toEqual(['envoy', 'app', 'log-agent', 'tracer']);
    expect(names(spec.initContainers)).toEqual([TOOLS.containerName]);
    const envoy = spec.containers[0];
    expect(envoy.lifecycle.postStart.exec.command[3]).toContain('wget -q -T 1 -O /dev/null "$1"');
    expect(envoy.lifecycle.postStart.exec.command.slice(4, 6)).toEqual(['sh', 'http://127.0.0.1:15021/ready']);
  });

  test('the input is not modified', () => {
    const input = deployment();
    const copy = JSON.parse(JSON.stringify(input));
    applySidecars(input, [log], T29);
    expect(input).toEqual(copy);
  });

  test('volumes are appended after the user\'s; app mounts and env go to every app container, user env wins', () => {
    const input = deployment({
      containers: [
        { name: 'app', image: 'a', env: [{ name: 'OTEL_SERVICE_NAME', value: 'mine' }] },
        { name: 'worker', image: 'w' },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    });
    const s = sidecar('tracer', RANK.TRACER, {
      appMounts: [{ name: 'tracer-config', mountPath: '/shared' }],
      appEnv: [{ name: 'OTEL_SERVICE_NAME', value: 'web' }, { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://localhost:4317' }],
    });
    const spec = applySidecars(input, [s], T29).manifest.spec.template.spec;
    expect(names(spec.volumes)).toEqual(['data', 'tracer-config']);
    expect(spec.containers[0].env).toEqual([
      { name: 'OTEL_SERVICE_NAME', value: 'mine' },
      { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://localhost:4317' },
    ]);
    expect(spec.containers[1].env).toEqual([
      { name: 'OTEL_SERVICE_NAME', value: 'web' },
      { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://localhost:4317' },
    ]);
    expect(spec.containers[1].volumeMounts).toEqual([{ mountPath: '/shared', name: 'tracer-config' }]);
    // the init containers do not get them
    expect(spec.initContainers[0].env).toBeUndefined();
  });

  test('annotations merge into the pod template\'s', () => {
    const r = applySidecars(deployment(), [sidecar('a', 1, { podAnnotations: { 'x/y': '1' } })], T29);
    expect(r.manifest.spec.template.metadata).toEqual({
      annotations: { 'x/y': '1', 'sidecars.cdk8s.io/native-sidecars': 'a', 'sidecars.cdk8s.io/stop-times': 'a=5s', 'sidecars.cdk8s.io/app-shutdown-time': '10s' }, labels: { app: 'web' },
    });
  });
});

describe('shutdown', () => {
  const DRAIN = 'http://127.0.0.1:9901/drain';
  // the URL is the script's argument $1, never spliced into it
  const POST = '/sidecar-tools/busybox wget -q -T 2 -O /dev/null --post-data \'\' "$1"';

  test('native: preStop POSTs go through the tools; without them there is no hook', () => {
    const r = applySidecars(deployment(), [
      sidecar('log-agent', RANK.LOG_AGENT),
      sidecar('envoy', RANK.PROXY, { shutdown: { stopSeconds: 6, appShutdownSeconds: 10, preStopPosts: [DRAIN] } }),
    ], T29);
    const init = r.manifest.spec.template.spec.initContainers;
    expect(names(init)).toEqual([TOOLS.containerName, 'log-agent', 'envoy']);
    expect(init[1].lifecycle).toBeUndefined();
    expect(init[2].lifecycle).toEqual({ preStop: { exec: { command: ['/sidecar-tools/busybox', 'sh', '-c', POST, 'sh', DRAIN] } } });
  });

  test('legacy: the POSTs, then the delay', () => {
    const r = applySidecars(deployment(), [sidecar('envoy', RANK.PROXY, { layout: 'LEGACY', shutdown: { stopSeconds: 2, appShutdownSeconds: 15, preStopPosts: [DRAIN] } })], { minor: 31, gate: false });
    expect(r.manifest.spec.template.spec.containers[1].lifecycle.preStop.exec.command[3]).toBe(`${POST}; /sidecar-tools/busybox sleep 15`);
  });

  test('legacy: every sidecar waits out the workload\'s longest app shutdown time, not only its own', () => {
    const r = applySidecars(deployment(), [
      sidecar('log-agent', RANK.LOG_AGENT, { layout: 'LEGACY', shutdown: { stopSeconds: 6, appShutdownSeconds: 10 } }),
      sidecar('envoy', RANK.PROXY, { layout: 'LEGACY', shutdown: { stopSeconds: 1, appShutdownSeconds: 40 } }),
    ], { minor: 31, gate: false });
    const containers = r.manifest.spec.template.spec.containers;
    expect(containers.map((c: Json) => c.lifecycle?.preStop)).toEqual([undefined, { sleep: { seconds: 40 } }, { sleep: { seconds: 40 } }]);
    // 40 s app + the slowest stop (6 s)
    expect(r.manifest.spec.template.spec.terminationGracePeriodSeconds).toBe(46);
  });

  test('legacy with no app shutdown time: no delay at all (a 0 s sleep is rejected before 1.33)', () => {
    const zero = sidecar('log-agent', RANK.LOG_AGENT, { layout: 'LEGACY', shutdown: { stopSeconds: 6, appShutdownSeconds: 0 } });
    for (const minor of [27, 31, 33]) {
      const r = applySidecars(deployment(), [zero], { minor, gate: false });
      expect(r.errors).toEqual([]);
      expect(r.manifest.spec.template.spec.containers[1].lifecycle).toBeUndefined();
      expect(r.manifest.spec.template.spec.initContainers).toBeUndefined();
    }
  });

  test('grace arithmetic: native = app + sum of stops; legacy = max(app + stop)', () => {
    const a = sidecar('a', 1, { shutdown: { stopSeconds: 5, appShutdownSeconds: 10 } });
    const b = sidecar('b', 2, { shutdown: { stopSeconds: 7, appShutdownSeconds: 20 } });
    expect(graceNeed([a, b], T29).seconds).toBe(20 + 5 + 7);
    expect(graceNeed([{ ...a, layout: 'LEGACY' }, { ...b, layout: 'LEGACY' }], T29).seconds).toBe(27);
    // 1.28 with the gate: native, but stopped together with the app
    expect(graceNeed([a, b], { minor: 28, gate: true }).seconds).toBe(27);
  });

  test('native on 1.28 (gate on): sidecars are not stopped after the app, so they get the preStop delay', () => {
    const r = applySidecars(deployment(), [sidecar('log-agent', RANK.LOG_AGENT)], { minor: 28, gate: true });
    expect(r.errors).toEqual([]);
    const init = r.manifest.spec.template.spec.initContainers;
    expect(names(init)).toEqual([TOOLS.containerName, 'log-agent']);
    expect(init[1].restartPolicy).toBe('Always');
    // a plain delay runs busybox sleep itself, without a shell around it
    expect(init[1].lifecycle.preStop).toEqual({ exec: { command: ['/sidecar-tools/busybox', 'sleep', '10'] } });
  });

  test('unset grace is raised; the default value of a generator can stand for unset', () => {
    const s = sidecar('a', 1, { shutdown: { stopSeconds: 30, appShutdownSeconds: 20 } });
    expect(applySidecars(deployment(), [s], T29).manifest.spec.template.spec.terminationGracePeriodSeconds).toBe(50);
    const written = deployment({ terminationGracePeriodSeconds: 30 });
    expect(applySidecars(written, [s], T29).errors[0]).toMatch(/terminationGracePeriodSeconds is 30, but its sidecars need 50/);
    expect(applySidecars(written, [s], { ...T29, graceWrittenByDefault: 30 }).manifest.spec.template.spec.terminationGracePeriodSeconds).toBe(50);
  });
});

describe('collisions', () => {
  test('container, volume and port collisions with the user\'s pod name both sides', () => {
    const input = deployment({
      containers: [{ name: 'log-agent', image: 'x', ports: [{ containerPort: 9100 }] }],
      volumes: [{ name: 'log-agent-config', emptyDir: {} }],
    });
    const r = applySidecars(input, [sidecar('log-agent', 100)], T29);
    expect(r.errors).toEqual(expect.arrayContaining([
      "With 'log-agent': container name 'log-agent' is already used by a container of Deployment 'web'; choose another containerName.",
      "With 'log-agent': volume name 'log-agent-config' is already used by Deployment 'web'; choose another containerName (volume names derive from it).",
      "With 'log-agent': port 9100 of sidecar 'log-agent' is also a port of container 'log-agent' on Deployment 'web'; choose another port for one of them.",
    ]));
  });

  test('localhost-only ports count too', () => {
    const r = applySidecars(deployment(), [sidecar('envoy', 300, { localPorts: [8080] })], T29);
    expect(r.errors).toEqual(["With 'envoy': port 8080 of sidecar 'envoy' is also a port of container 'app' on Deployment 'web'; choose another port for one of them."]);
  });

  test('two sidecars of one kind on a workload', () => {
    const a = sidecar('a', 1);
    const b = { ...sidecar('b', 2), kind: a.kind, owner: "With 'b'" };
    expect(applySidecars(deployment(), [a, b], T29).errors).toContain(
      "With 'b': Deployment 'web' already has one: With 'a'; attach one Kind-a per workload.",
    );
  });

  test('hostNetwork pods are refused: the sidecars would listen on the node', () => {
    const r = applySidecars(deployment({ hostNetwork: true }), [sidecar('a', 1)], T29);
    expect(r.errors).toEqual([
      "Deployment 'web': uses hostNetwork: true, so its sidecars would listen on the node's network (admin and receiver ports " +
      "on the node's loopback, open to every host-network process; health ports on the node IP, colliding between pods on one node). " +
      'Drop hostNetwork from the workload, or attach no sidecar to it.',
    ]);
  });

  test('a bare Pod meant to complete (restartPolicy Never/OnFailure) is treated like a Job', () => {
    const pod = (restartPolicy?: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'a' }], restartPolicy } });
    const legacy = sidecar('a', 1, { layout: 'LEGACY' });
    expect(applySidecars(pod('Never'), [legacy], T27).errors[0]).toMatch(/^With 'a': a legacy sidecar on Pod 'p' never exits, so the pod \(restartPolicy Never\) never completes; the program its image runs is not known/);
    expect(applySidecars(pod('OnFailure'), [legacy], T27).errors[0]).toMatch(/restartPolicy OnFailure/);
    expect(applySidecars(pod('Always'), [legacy], T27).errors).toEqual([]);
    expect(applySidecars(pod(), [legacy], T27).errors).toEqual([]);
  });

  test('legacy sidecars on Jobs', () => {
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { containers: [{ name: 'app', image: 'a' }], restartPolicy: 'Never' } } } };
    const legacy = sidecar('a', 1, { layout: 'LEGACY' });
    expect(applySidecars(job, [legacy], T27).errors[0]).toMatch(/^With 'a': a legacy sidecar on Job 'j' never exits/);
    expect(applySidecars(job, [{ ...legacy, allowLegacyOnJob: true }], T27).errors).toEqual([]);
    // with its program known: it exits with the app (test/exit-with-app.test.ts), with a warning
    const known = applySidecars(job, [{ ...legacy, container: { ...legacy.container, command: ['/agent'] } }], T27);
    expect(known.errors).toEqual([]);
    expect(known.warnings!.join()).toMatch(/^Job 'j': its pods complete, and in the legacy layout a sidecar never exits by itself, so 'a' is run under a wrapper/);
    expect(applySidecars(job, [sidecar('a', 1)], T29).errors).toEqual([]);
  });
});

describe('API server rules (SIDECARS.md §4)', () => {
  const where = "Deployment 'web'";
  test.each<[string, Json, number, string]>([
    ['init restartPolicy other than Always', { initContainers: [{ name: 'i', restartPolicy: 'OnFailure' }], containers: [] }, 29,
      "Deployment 'web': init container 'i' has restartPolicy 'OnFailure': only 'Always' is allowed on init containers" +
      " in Kubernetes 1.29 (OnFailure and Never from 1.35). Remove restartPolicy for an init container that runs once before the app (its own restarts follow the pod's restartPolicy), set 'Always' for a sidecar that runs beside it, or target 1.35+."],
    ['restartPolicy on a regular container', { containers: [{ name: 'c', restartPolicy: 'Always' }] }, 29,
      "Deployment 'web': container 'c' sets restartPolicy 'Always': restartPolicy may not be set for non-init containers in Kubernetes 1.29 (allowed from 1.35). Remove it."],
    ['probes on a plain init container', { initContainers: [{ name: 'i', readinessProbe: {} }], containers: [] }, 29,
      "Deployment 'web': init container 'i' sets readinessProbe, which is forbidden on init containers without restartPolicy 'Always'."],
    ['lifecycle on a plain init container', { initContainers: [{ name: 'i', lifecycle: {} }], containers: [] }, 29,
      "Deployment 'web': init container 'i' sets lifecycle, which is forbidden on init containers without restartPolicy 'Always'."],
    ['duplicate names across init and regular', { initContainers: [{ name: 'x' }], containers: [{ name: 'x' }] }, 29,
      "Deployment 'web': container name 'x' is used 2 times; names must be unique across initContainers and containers: rename all but one of them."],
    ['duplicate volumes', { containers: [], volumes: [{ name: 'v' }, { name: 'v' }] }, 29,
      "Deployment 'web': volume name 'v' is used 2 times; volume names must be unique."],
    ['mount of a missing volume', { containers: [{ name: 'c', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }] }, 29,
      "Deployment 'web': container 'c' mounts volume 'nope', which is not a volume of the pod."],
    ['resizePolicy on an init container before 1.33', { initContainers: [{ name: 'i', restartPolicy: 'Always', resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }] }], containers: [] }, 32,
      "Deployment 'web': init container 'i' sets resizePolicy, which Kubernetes 1.32 refuses on init containers (allowed from 1.33). Remove it or target 1.33+."],
    ['host port collision', { containers: [{ name: 'a', ports: [{ containerPort: 1, hostPort: 80 }] }, { name: 'b', ports: [{ containerPort: 2, hostPort: 80 }] }] }, 29,
      "Deployment 'web': hostPort 80/TCP is used by both 'a' and 'b', which the API server rejects (one host port per pod); give 'b' another hostPort, or drop hostPort (the pod IP and Services reach containerPort without it)."],
    ['restartPolicy Always on 1.27', { initContainers: [{ name: 'i', restartPolicy: 'Always' }], containers: [] }, 27,
      "Deployment 'web': init container 'i' has restartPolicy 'Always' (a native sidecar), which Kubernetes 1.27 does not know (its API server drops the field, " +
      'or rejects the object under strict field validation): without the field it runs as an ordinary init container; if it never exits (a sidecar does not), ' +
      "the pod hangs in Init. Either move 'i' to spec.containers (it then runs beside the app, but neither starts before nor stops after it), " +
      'or target Kubernetes 1.29 or later if every node runs it.'],
    ['sleep action before 1.30', { containers: [{ name: 'c', lifecycle: { preStop: { sleep: { seconds: 1 } } } }] }, 29,
      "Deployment 'web': container 'c' uses the preStop sleep action, which Kubernetes 1.29 does not have (beta from 1.30). Use an exec hook or target 1.30+."],
    ['a 0 s sleep before 1.33', { containers: [{ name: 'c', lifecycle: { preStop: { sleep: { seconds: 0 } } } }] }, 32,
      "Deployment 'web': container 'c' has a preStop sleep of 0 seconds, which Kubernetes 1.32 rejects (allowed from 1.33). Sleep at least 1 second or drop the hook."],
  ])('%s', (_name, spec, minor, message) => {
    expect(checkPodSpec(spec, { minor, gate: false }, where)).toEqual([message]);
  });

  test('a valid native spec passes', () => {
    const spec = applySidecars(deployment(), [sidecar('a', 1)], T29).manifest.spec.template.spec;
    expect(checkPodSpec(spec, { minor: 29, gate: false }, where)).toEqual([]);
  });

  test('1.28 with the gate accepts restartPolicy Always', () => {
    const spec = { initContainers: [{ name: 'i', restartPolicy: 'Always' }], containers: [] };
    expect(checkPodSpec(spec, { minor: 28, gate: true }, where)).toEqual([]);
    expect(checkPodSpec(spec, { minor: 28, gate: false }, where)[0]).toMatch(/drops without the SidecarContainers feature gate/);
  });
});

test('the hook tools are a static busybox (the musl build): they must run inside FROM-scratch agent images', () => {
  const r = applySidecars(deployment(), [sidecar('a', 1, { layout: 'LEGACY' })], T27);
  const tools = r.manifest.spec.template.spec.initContainers[0];
  expect(tools.name).toBe(TOOLS.containerName);
  expect(tools.image).toMatch(/^busybox:\d+\.\d+\.\d+-(musl|uclibc)$/);
});
