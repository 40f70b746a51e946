/**
 * Issue 18, engine level (plain JSON, no cdk8s): adopt a container of the workload, place a
 * native sidecar after a named user init container, serve the user's init containers, the quit
 * endpoint of a legacy sidecar on a Job. The grace budgets are checked against the kubelet
 * simulation (test/util/kubelet-termination.ts), not against the engine's formula.
 */
import { cutShort, leastGrace, simulateTermination } from './util/kubelet-termination';
import { applySidecars } from '../src/engine/pod-template';
import { checkPodSpec } from '../src/engine/rules';
import { TOOLS } from '../src/engine/shutdown';
import { SidecarSpec } from '../src/engine/spec';
import { podTemplateOf } from '../src/facts/kinds';
import { Json } from '../src/private/json';

function sidecar(name: string, over: Partial<SidecarSpec> = {}): SidecarSpec {
  return {
    owner: `WithSidecar '${name}'`,
    kind: `WithSidecar '${name}'`,
    rank: 400,
    container: {
      name,
      image: `example/${name}:1`,
      startupProbe: { tcpSocket: { port: 7000 } },
    },
    volumes: [],
    appMounts: [],
    appEnv: [],
    podAnnotations: {},
    shutdown: { stopSeconds: 5, appShutdownSeconds: 10 },
    layout: 'NATIVE',
    allowLegacyOnJob: false,
    ...over,
  };
}

const APP = { name: 'app', image: 'app:1', ports: [{ containerPort: 8080 }] };

function workload(kind: 'Deployment' | 'Job', podSpec: Json): Json {
  return {
    apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1',
    kind,
    metadata: { name: 'w' },
    spec: { template: { metadata: {}, spec: { ...(kind === 'Job' ? { restartPolicy: 'Never' } : {}), ...podSpec } } },
  };
}

const T27 = { minor: 27, gate: false };
const T29 = { minor: 29, gate: false };
const T30 = { minor: 30, gate: false };
const podOf = (m: Json) => podTemplateOf(m)!.spec;
const names = (cs: Json[] = []) => cs.map(c => c.name);

/** A vendor's legacy sidecar, as a Helm chart or a vendor YAML ships it. */
const VENDOR_SIDECAR: Json = {
  name: 'proxy',
  image: 'vendor/proxy:2.3.1',
  args: ['--port=7000', '--verbose'],
  env: [{ name: 'MODE', value: 'sidecar' }],
  ports: [{ containerPort: 7000, name: 'proxy' }],
  readinessProbe: { httpGet: { path: '/ready', port: 7000 } },
  resources: { limits: { cpu: '200m', memory: '64Mi' }, requests: { cpu: '20m', memory: '32Mi' } },
  securityContext: { runAsNonRoot: true, runAsUser: 1000 },
  volumeMounts: [{ mountPath: '/etc/proxy', name: 'proxy-config', readOnly: true }],
};

function vendorPod(kind: 'Deployment' | 'Job' = 'Deployment', extra: Json = {}): Json {
  return workload(kind, {
    containers: [structuredClone(VENDOR_SIDECAR), APP],
    volumes: [{ name: 'proxy-config', configMap: { name: 'proxy' } }],
    ...extra,
  });
}

const LEGACY = { layout: 'LEGACY' } as const;
const adoptProxy = (over: Partial<SidecarSpec> = {}) => sidecar('proxy', { adopt: true, container: { name: 'proxy' }, ...over });

describe('adopt: a container of spec.containers becomes a version-aware sidecar', () => {
  test('1.29: moved to initContainers with restartPolicy Always, every original field kept, the startup check as its startupProbe', () => {
    const startupProbe = { httpGet: { path: '/ready', port: 7000 }, periodSeconds: 1, failureThreshold: 60 };
    const r = applySidecars(vendorPod(), [adoptProxy({ container: { name: 'proxy', startupProbe } })], T29);
    expect(r.errors).toEqual([]);
    const pod = podOf(r.manifest);
    expect(names(pod.containers)).toEqual(['app']);
    expect(names(pod.initContainers)).toEqual(['proxy']);
    const { restartPolicy, startupProbe: probe, ...rest } = pod.initContainers[0];
    expect(restartPolicy).toBe('Always');
    expect(probe).toEqual(startupProbe);
    // the original, field by field (the engine adds no preStop: on 1.29 it stops after the app)
    expect(rest).toEqual(VENDOR_SIDECAR);
    expect(pod.volumes).toEqual([{ name: 'proxy-config', configMap: { name: 'proxy' } }]);
    expect(checkPodSpec(pod, T29, 'w')).toEqual([]);
  });

  test('1.27: left in spec.containers (after the app), with the preStop delay that keeps it through the app\'s shutdown', () => {
    const r = applySidecars(vendorPod(), [adoptProxy(LEGACY)], T27);
    expect(r.errors).toEqual([]);
    const pod = podOf(r.manifest);
    expect(names(pod.containers)).toEqual(['app', 'proxy']);
    expect(pod.initContainers).toEqual([expect.objectContaining({ name: TOOLS.containerName })]);
    const proxy = pod.containers[1];
    expect(proxy.restartPolicy).toBeUndefined();
    expect(proxy.lifecycle.preStop.exec.command).toEqual([TOOLS.busybox, 'sleep', '10']);
    expect(proxy.args).toEqual(VENDOR_SIDECAR.args);
    expect(checkPodSpec(pod, T27, 'w')).toEqual([]);
  });

  test('1.27 with outliveApp false: no preStop delay, SIGTERM with the app', () => {
    const r = applySidecars(vendorPod(), [adoptProxy({ ...LEGACY, shutdown: { stopSeconds: 5, appShutdownSeconds: 10, outliveApp: false } })], T27);
    expect(r.errors).toEqual([]);
    const pod = podOf(r.manifest);
    expect(pod.containers[1].lifecycle).toBeUndefined();
    expect(pod.initContainers).toBeUndefined();
  });

  test('legacy with the hold: first in spec.containers, kubectl pointed at the app', () => {
    const r = applySidecars(vendorPod(), [adoptProxy({ ...LEGACY, hold: { readyUrl: 'http://127.0.0.1:7000/ready', timeoutSeconds: 60 } })], T27);
    expect(r.errors).toEqual([]);
    const pod = podOf(r.manifest);
    expect(names(pod.containers)).toEqual(['proxy', 'app']);
    expect(pod.containers[0].lifecycle.postStart.exec.command.join(' ')).toContain('http://127.0.0.1:7000/ready');
    expect(r.manifest.spec.template.metadata.annotations['kubectl.kubernetes.io/default-container']).toBe('app');
  });

  test('a name the workload does not have: the error names it and the containers present', () => {
    const r = applySidecars(vendorPod(), [sidecar('pxy', { adopt: true, container: { name: 'pxy' } })], T29);
    expect(r.errors).toEqual([
      "WithSidecar 'pxy': Deployment 'w' has no container named 'pxy' to adopt; its spec.containers are 'proxy', 'app'. " +
      'Name one of them as containerName (the name in the manifest, e.g. from `kubectl get -o yaml`).',
    ]);
  });

  test('an init container (already native): refused, with what adopt takes', () => {
    const m = workload('Deployment', { containers: [APP], initContainers: [{ ...VENDOR_SIDECAR, restartPolicy: 'Always' }] });
    expect(applySidecars(m, [adoptProxy()], T29).errors[0]).toMatch(/'proxy' is an init container of Deployment 'w' \(a native sidecar already\), not an entry of spec.containers; adopt takes one of spec.containers \('app'\)/);
  });

  test('adopting the only container leaves no app: refused', () => {
    const m = workload('Deployment', { containers: [VENDOR_SIDECAR] });
    expect(applySidecars(m, [adoptProxy()], T29).errors).toEqual([
      "Deployment 'w': adopting 'proxy' as sidecar leaves no app container in spec.containers; a sidecar needs an app to serve. Adopt only the sidecars, not the app.",
    ]);
  });

  test('its own preStop where the legacy layout needs one: an error that says how to resolve it; kept on 1.29 where none is needed', () => {
    const withHook = vendorPod();
    podOf(withHook).containers[0].lifecycle = { preStop: { exec: { command: ['/bin/drain'] } } };
    expect(applySidecars(withHook, [adoptProxy(LEGACY)], T27).errors).toEqual([
      "WithSidecar 'proxy': adopted container 'proxy' has its own lifecycle.preStop, but in the legacy layout at Kubernetes 1.27 the library " +
      "needs that hook (to keep it alive through the app's shutdown). Remove lifecycle.preStop from the manifest (e.g. with a JSON patch), or set outliveApp: false.",
    ]);
    const r = applySidecars(withHook, [adoptProxy()], T29);
    expect(r.errors).toEqual([]);
    expect(podOf(r.manifest).initContainers[0].lifecycle).toEqual({ preStop: { exec: { command: ['/bin/drain'] } } });
  });

  test('its own postStart with the legacy hold: an error naming the prop to drop', () => {
    const withHook = vendorPod();
    podOf(withHook).containers[0].lifecycle = { postStart: { exec: { command: ['/bin/warm-up'] } } };
    const hold = { readyUrl: 'http://127.0.0.1:7000/ready', timeoutSeconds: 60 };
    const shutdown = { stopSeconds: 5, appShutdownSeconds: 10, outliveApp: false };
    expect(applySidecars(withHook, [adoptProxy({ ...LEGACY, hold, shutdown })], T27).errors)
      .toEqual([expect.stringMatching(/has its own lifecycle.postStart, .* Remove lifecycle.postStart from the manifest \(e.g. with a JSON patch\), or drop holdApplicationUntilStarted\.$/)]);
  });

  test('the input is not changed', () => {
    const m = vendorPod();
    const before = structuredClone(m);
    applySidecars(m, [adoptProxy()], T29);
    expect(m).toEqual(before);
  });
});

describe('legacy sidecars on Jobs: a quit endpoint, or the refusal', () => {
  const quit = { url: 'http://127.0.0.1:9091/quitquitquit', env: 'PROXY_QUIT_URL' };

  test('without one: refused as before', () => {
    expect(applySidecars(vendorPod('Job'), [adoptProxy(LEGACY)], T27).errors[0]).toMatch(/never exits, so the Job never completes/);
  });

  test('with one: accepted, and every app container gets the URL', () => {
    const r = applySidecars(vendorPod('Job'), [adoptProxy({ ...LEGACY, quit })], T27);
    expect(r.errors).toEqual([]);
    const pod = podOf(r.manifest);
    expect(pod.containers.find((c: Json) => c.name === 'app').env).toEqual([{ name: 'PROXY_QUIT_URL', value: quit.url }]);
    expect(pod.containers.find((c: Json) => c.name === 'proxy').env).toEqual(VENDOR_SIDECAR.env);
  });

  test('native: no URL (the sidecar does not block completion; a quit would only restart it)', () => {
    const r = applySidecars(vendorPod('Job'), [adoptProxy({ quit })], T29);
    expect(r.errors).toEqual([]);
    expect(podOf(r.manifest).containers[0].env).toBeUndefined();
  });

  test('not on a Deployment either (its pods never complete)', () => {
    const r = applySidecars(vendorPod(), [adoptProxy({ ...LEGACY, quit })], T27);
    expect(podOf(r.manifest).containers.find((c: Json) => c.name === 'app').env).toBeUndefined();
  });
});

describe('position: after a named user init container', () => {
  const init = [
    { name: 'fetch-secret', image: 'fetch:1' },
    { name: 'migrate', image: 'migrate:1' },
  ];

  test('native: right after it, the other sidecars keep their place before the user\'s init containers', () => {
    const r = applySidecars(workload('Deployment', { containers: [APP], initContainers: init }), [
      sidecar('b', { after: 'fetch-secret', rank: 500, container: { name: 'b', image: 'b:1' } }),
      sidecar('a', { after: 'fetch-secret' }),
      sidecar('first', { rank: 100, container: { name: 'first', image: 'f:1', ports: [{ containerPort: 7100 }] } }),
    ], T29);
    expect(r.errors).toEqual([]);
    expect(names(podOf(r.manifest).initContainers)).toEqual(['first', 'fetch-secret', 'a', 'b', 'migrate']);
  });

  test('a name the workload does not have: the error names it and the init containers present', () => {
    const r = applySidecars(workload('Deployment', { containers: [APP], initContainers: init }), [sidecar('a', { after: 'fetch' })], T29);
    expect(r.errors).toEqual([
      "WithSidecar 'a': after 'fetch' names no init container of Deployment 'w'; its init containers are 'fetch-secret', 'migrate'. Name one of them, or drop `after`.",
    ]);
    expect(applySidecars(workload('Deployment', { containers: [APP] }), [sidecar('a', { after: 'fetch' })], T29).errors[0])
      .toMatch(/its init containers are none/);
  });

  test('legacy: the name is checked; the sidecar is in spec.containers, after every init container anyway', () => {
    const r = applySidecars(workload('Deployment', { containers: [APP], initContainers: init }), [sidecar('a', { after: 'migrate', layout: 'LEGACY' })], T27);
    expect(r.errors).toEqual([]);
    expect(names(podOf(r.manifest).containers)).toEqual(['app', 'a']);
    expect(applySidecars(workload('Deployment', { containers: [APP] }), [sidecar('a', { after: 'x', layout: 'LEGACY' })], T27).errors).toHaveLength(1);
  });
});

describe('serveInitContainers: the user\'s init containers get what the app gets', () => {
  const logs = {
    volumes: [{ name: 'logs', emptyDir: {} }],
    appMounts: [{ mountPath: '/var/log/app', name: 'logs' }],
    appEnv: [{ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://127.0.0.1:4317' }],
  };
  const init = [
    { name: 'fetch-secret', image: 'fetch:1' },
    { name: 'migrate', image: 'migrate:1', env: [{ name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://mine:4317' }] },
  ];

  test('native: every user init container after the sidecar; its own env wins', () => {
    const r = applySidecars(workload('Deployment', { containers: [APP], initContainers: init }), [sidecar('agent', { ...logs, serveInitContainers: true })], T29);
    expect(r.errors).toEqual([]);
    const pod = podOf(r.manifest);
    expect(names(pod.initContainers)).toEqual(['agent', 'fetch-secret', 'migrate']);
    expect(pod.initContainers[1].volumeMounts).toEqual(logs.appMounts);
    expect(pod.initContainers[1].env).toEqual(logs.appEnv);
    expect(pod.initContainers[2].env).toEqual(init[1].env);
    expect(pod.initContainers[2].volumeMounts).toEqual(logs.appMounts);
    expect(pod.containers[0].volumeMounts).toEqual(logs.appMounts);
    expect(checkPodSpec(pod, T29, 'w')).toEqual([]);
  });

  test('without the option (the default) the init containers are left alone', () => {
    const r = applySidecars(workload('Deployment', { containers: [APP], initContainers: init }), [sidecar('agent', logs)], T29);
    expect(podOf(r.manifest).initContainers.slice(1)).toEqual(init);
  });

  test('with `after`: only the init containers after it (those before it run before it has started)', () => {
    const r = applySidecars(workload('Deployment', { containers: [APP], initContainers: init }),
      [sidecar('agent', { ...logs, serveInitContainers: true, after: 'fetch-secret' })], T29);
    const pod = podOf(r.manifest);
    expect(names(pod.initContainers)).toEqual(['fetch-secret', 'agent', 'migrate']);
    expect(pod.initContainers[0]).toEqual(init[0]);
    expect(pod.initContainers[2].volumeMounts).toEqual(logs.appMounts);
  });

  test('legacy: refused, with why and what to do', () => {
    const r = applySidecars(workload('Deployment', { containers: [APP], initContainers: init }),
      [sidecar('agent', { ...logs, serveInitContainers: true, layout: 'LEGACY' })], T27);
    expect(r.errors).toEqual([
      "WithSidecar 'agent': serveInitContainers asks the sidecar to serve the init containers of Deployment 'w', but in the legacy layout " +
      '(Kubernetes 1.27) it is an entry of spec.containers, which starts only after every init container has finished. ' +
      'Target Kubernetes 1.29 or later (native sidecars start before them), or drop serveInitContainers.',
    ]);
  });

  test('an init container that mounts another volume at the same path: refused', () => {
    const m = workload('Deployment', {
      containers: [APP],
      initContainers: [{ name: 'migrate', image: 'm:1', volumeMounts: [{ mountPath: '/var/log/app', name: 'mine' }] }],
      volumes: [{ name: 'mine', emptyDir: {} }],
    });
    expect(applySidecars(m, [sidecar('agent', { ...logs, serveInitContainers: true })], T29).errors).toEqual([
      "WithSidecar 'agent': init container 'migrate' of Deployment 'w' already mounts volume 'mine' at /var/log/app, where serveInitContainers " +
      "would mount the sidecar's; choose another directory for the sidecar.",
    ]);
  });
});

describe('the grace budget, against the kubelet simulation', () => {
  /** Each container's time after SIGTERM: the app 10 s, the sidecars their stop time, the user's own native sidecars 2 s. */
  const behaviour = (stops: Record<string, number>) => (name: string) => ({ exitAfterSigterm: stops[name] ?? 2 });

  // A user's native sidecar (e.g. a vendor's) and ours with a read delay; where ours goes changes
  // the kubelet's order: ours after it is stopped BEFORE it.
  const userNative = { name: 'vendor-agent', image: 'v:1', restartPolicy: 'Always' };
  // userSidecarStopSeconds: the user's native sidecars' stop time, which the manifest cannot tell (main's userSidecarStopTime)
  const ours = (after?: string) => sidecar('ours', { after, shutdown: { stopSeconds: 6, appShutdownSeconds: 10, readAfterAppExitSeconds: 3, userSidecarStopSeconds: 2 } });

  test.each([
    ['before the user\'s native sidecar (default)', undefined, ['ours', 'vendor-agent']],
    ['after it', 'vendor-agent', ['vendor-agent', 'ours']],
  ] as const)('ours %s: the emitted grace period is the least with which nobody is cut short', (_what, after, order) => {
    const m = workload('Deployment', { containers: [{ name: 'app', image: 'a:1' }], initContainers: [userNative] });
    const r = applySidecars(m, [ours(after)], T30);
    expect(r.errors).toEqual([]);
    const pod = podOf(r.manifest);
    expect(names(pod.initContainers)).toEqual(order);
    const b = behaviour({ app: 10, ours: 6 });
    const least = leastGrace({ spec: pod, minor: 30, behaviour: b }, sim => {
      // ours is stopped in order after the app (native, 1.30): SIGTERM no earlier than the app's
      // exit (its read delay counts only where it is stopped with the app, issue 26)
      const t = sim.containers.get('ours')!;
      return t.sigterm < 10 ? ['ours stopped reading too early'] : [];
    });
    expect(pod.terminationGracePeriodSeconds ?? 30).toBe(Math.max(30, least));
    expect(cutShort(simulateTermination({ spec: pod, minor: 30, behaviour: b }))).toEqual([]);
  });

  test('a long app shutdown: the budget rises above 30 and the simulation agrees in both orders', () => {
    for (const after of [undefined, 'vendor-agent']) {
      const m = workload('Deployment', { containers: [{ name: 'app', image: 'a:1' }], initContainers: [userNative] });
      const s = sidecar('ours', { after, shutdown: { stopSeconds: 6, appShutdownSeconds: 25, readAfterAppExitSeconds: 3, userSidecarStopSeconds: 2 } });
      const pod = podOf(applySidecars(m, [s], T30).manifest);
      const least = leastGrace({ spec: pod, minor: 30, behaviour: behaviour({ app: 25, ours: 6 }) },
        sim => (sim.containers.get('ours')!.sigterm < 25 ? ['read'] : []));
      expect(pod.terminationGracePeriodSeconds).toBe(least);
    }
  });

  test('an adopted legacy sidecar on 1.27 and its native self on 1.29: the simulation lets both stop in the emitted grace', () => {
    for (const target of [T27, T29]) {
      const pod = podOf(applySidecars(vendorPod('Deployment'), [adoptProxy({ shutdown: { stopSeconds: 25, appShutdownSeconds: 20 }, layout: target === T27 ? 'LEGACY' : 'NATIVE' })], target).manifest);
      const b = behaviour({ app: 20, proxy: 25 });
      const least = leastGrace({ spec: pod, minor: target.minor, behaviour: b });
      expect(pod.terminationGracePeriodSeconds).toBe(least);
      expect(cutShort(simulateTermination({ spec: pod, minor: target.minor, behaviour: b }))).toEqual([]);
    }
  });
});
