/**
 * What the Istio and Linkerd injectors do to a pod, written from their sources (not from this
 * library's code), so the engine's accounting for the injected proxy is tested against the real
 * layout. Each fact names its file and tag.
 */

type Json = { [key: string]: any };

/**
 * istio/istio 1.28.0
 * - manifests/charts/istio-control/istio-discovery/files/injection-template.yaml:
 *   `$nativeSidecar := ne (index .ObjectMeta.Annotations "sidecar.istio.io/nativeSidecar" | default ...) "false"`;
 *   `istio-init` (or `istio-validation` with CNI) in `initContainers`; `istio-proxy` under
 *   `initContainers` with `restartPolicy: Always` when native, else under `containers`;
 *   `ports: [{containerPort: 15090}]`; native: `preStop` `pilot-agent request POST drain`;
 *   legacy with hold: `postStart` `pilot-agent wait`; `$holdProxy := and (hold...) (not $nativeSidecar)`.
 * - pkg/kube/inject/webhook.go reorderPod: native: MoveFirst(enable-core-dump), MoveFirst(istio-proxy),
 *   MoveFirst(istio-validation), MoveFirst(istio-init) => "{istio-init/istio-validation} => proxy => rest";
 *   legacy: MoveFirst(istio-validation), MoveLast(istio-init); istio-proxy MoveLast in containers,
 *   MoveFirst when holdApplicationUntilProxyStarts.
 * - pkg/config/mesh/mesh.go: TerminationDrainDuration default 5s; pkg/envoy/agent.go: after
 *   SIGTERM the agent drains for terminationDrainDuration, then exits.
 */
export const ISTIO = {
  source: 'istio/istio 1.28.0 injection-template.yaml, pkg/kube/inject/webhook.go reorderPod, pkg/config/mesh/mesh.go',
  proxy: 'istio-proxy',
  init: 'istio-init',
  proxyPorts: [15090],
  defaultDrainSeconds: 5,
};

/**
 * linkerd/linkerd2 version-2.20
 * - charts/patch/templates/patch.json: `$initIndex := ternary "0" "-" nativeSidecar`; linkerd-init
 *   (or linkerd-network-validator) at `initContainers/$initIndex` (then $initIndex+1); the proxy at
 *   `initContainers/$initIndex` when native, `containers/0` when await, else `containers/-`.
 * - charts/partials/templates/_proxy.tpl: ports 4143 (inbound), 4191 (admin); `restartPolicy:
 *   Always` when nativeSidecar; legacy: `postStart` linkerd-await when await, `preStop` sleep
 *   waitBeforeExitSeconds; native + await: startupProbe on /ready.
 * - pkg/inject/inject.go: annotations config.linkerd.io/proxy-enable-native-sidecar (GA) over
 *   config.beta... over config.alpha.linkerd.io/proxy-enable-native-sidecar (strconv.ParseBool);
 *   config.linkerd.io/proxy-await enabled|disabled; config.linkerd.io/shutdown-grace-period
 *   (time.ParseDuration); config.alpha.linkerd.io/proxy-wait-before-exit-seconds.
 * - charts/linkerd-control-plane/values.yaml: await: true, nativeSidecar: true (2.20 defaults).
 */
export const LINKERD = {
  source: 'linkerd/linkerd2 version-2.20 charts/patch/templates/patch.json, charts/partials/templates/_proxy.tpl, pkg/inject/inject.go',
  proxy: 'linkerd-proxy',
  init: 'linkerd-init',
  proxyPorts: [4143, 4191],
  defaultNative: true,
  defaultAwait: true,
};

function moveFirst(list: Json[], name: string): Json[] {
  const i = list.findIndex(c => c.name === name);
  if (i < 0) return list;
  return [list[i], ...list.filter((_, j) => j !== i)];
}

function moveLast(list: Json[], name: string): Json[] {
  const i = list.findIndex(c => c.name === name);
  if (i < 0) return list;
  return [...list.filter((_, j) => j !== i), list[i]];
}

/** What the injector learned from the pod's annotations, for the shutdown simulation. */
export interface Injection {
  readonly spec: Json;
  readonly native: boolean;
  /** Seconds the proxy runs after SIGTERM. */
  readonly proxyStopSeconds: number;
  /** Legacy: seconds of preStop sleep before SIGTERM (Linkerd wait-before-exit). */
  readonly proxyPreStopSeconds: number;
}

function seconds(duration: string | undefined, fallback: number): number {
  if (duration === undefined) return fallback;
  const m = /^(\d+)s$/.exec(duration);
  if (!m) throw new Error(`cannot parse duration '${duration}'`);
  return Number(m[1]);
}

/** Istio's injection of a pod template (metadata + spec), per the facts above. */
export function injectIstio(metadata: Json, spec: Json, globalNative = false): Injection {
  const a = metadata.annotations ?? {};
  const native = (a['sidecar.istio.io/nativeSidecar'] ?? String(globalNative)) !== 'false';
  const config = a['proxy.istio.io/config'] ? JSON.parse(a['proxy.istio.io/config']) : {};
  const hold = config.holdApplicationUntilProxyStarts === true && !native;
  const proxy: Json = { name: ISTIO.proxy, image: 'proxyv2', ports: [{ containerPort: 15090 }] };
  if (native) {
    proxy.restartPolicy = 'Always';
    proxy.lifecycle = { preStop: { exec: { command: ['pilot-agent', 'request', 'POST', 'drain'] } } };
  } else if (hold) {
    proxy.lifecycle = { postStart: { exec: { command: ['pilot-agent', 'wait'] } } };
  }
  let init: Json[] = [...(spec.initContainers ?? []), { name: ISTIO.init, image: 'proxyv2' }];
  let containers: Json[] = [...spec.containers];
  if (native) init.push(proxy);
  else containers.push(proxy);
  if (native) {
    init = moveFirst(init, ISTIO.proxy);
    init = moveFirst(init, ISTIO.init);
  } else {
    init = moveLast(init, ISTIO.init);
    containers = hold ? moveFirst(containers, ISTIO.proxy) : moveLast(containers, ISTIO.proxy);
  }
  return {
    spec: { ...spec, initContainers: init, containers },
    native,
    proxyStopSeconds: seconds(config.terminationDrainDuration, ISTIO.defaultDrainSeconds),
    proxyPreStopSeconds: 0,
  };
}

/**
 * Linkerd's injection of a pod template, per the facts above. The layout annotation by release
 * (pkg/k8s/labels.go, pkg/inject/inject.go): version-2.20 reads `config.linkerd.io/...` over the
 * beta and alpha names; version-2.19 the beta over the alpha; 2.15-2.18 the alpha only. Native by
 * default from 2.20 (proxy.nativeSidecar), legacy before.
 */
export function injectLinkerd(metadata: Json, spec: Json, release: [number, number] = [2, 20]): Injection {
  const a = metadata.annotations ?? {};
  const minor = release[1];
  const flag = (minor >= 20 ? a['config.linkerd.io/proxy-enable-native-sidecar'] : undefined) ??
    (minor >= 19 ? a['config.beta.linkerd.io/proxy-enable-native-sidecar'] : undefined) ??
    a['config.alpha.linkerd.io/proxy-enable-native-sidecar'];
  const native = flag === undefined ? (minor >= 20 && LINKERD.defaultNative) : flag === 'true';
  const awaitOn = a['config.linkerd.io/proxy-await'] === undefined ? LINKERD.defaultAwait : a['config.linkerd.io/proxy-await'] === 'enabled';
  const wait = Number(a['config.alpha.linkerd.io/proxy-wait-before-exit-seconds'] ?? 0);
  if (native && wait > 0) throw new Error('linkerd 2.15 _proxy.tpl: proxy.nativeSidecar and waitBeforeExitSeconds cannot be used simultaneously');
  const proxy: Json = { name: LINKERD.proxy, image: 'proxy', ports: [{ containerPort: 4143 }, { containerPort: 4191 }] };
  if (native) proxy.restartPolicy = 'Always';
  if (native && awaitOn) proxy.startupProbe = { httpGet: { path: '/ready', port: 4191 } };
  if (!native && (awaitOn || wait > 0)) {
    proxy.lifecycle = {
      ...(awaitOn ? { postStart: { exec: { command: ['/usr/lib/linkerd/linkerd-await', '--timeout=2m', '--port=4191'] } } } : {}),
      ...(wait > 0 ? { preStop: { exec: { command: ['/bin/sleep', String(wait)] } } } : {}),
    };
  }
  const initC = { name: LINKERD.init, image: 'proxy-init' };
  let init: Json[] = [...(spec.initContainers ?? [])];
  let containers: Json[] = [...spec.containers];
  if (native) {
    init = [initC, proxy, ...init];
  } else {
    init = [...init, initC];
    containers = awaitOn ? [proxy, ...containers] : [...containers, proxy];
  }
  return {
    spec: { ...spec, initContainers: init, containers },
    native,
    proxyStopSeconds: seconds(a['config.linkerd.io/shutdown-grace-period'], 0),
    proxyPreStopSeconds: wait,
  };
}

/** A container's exit time in the simulation. */
export interface Exit {
  readonly name: string;
  readonly at: number;
}

/**
 * The kubelet's termination of an injected pod on Kubernetes >= 1.29 (KEP-753;
 * kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_termination_order.go): every preStop
 * starts at t=0; a regular container gets SIGTERM when its preStop ends; native sidecars
 * (restartPolicy Always) get SIGTERM only once every regular container has exited, one at a
 * time in reverse `initContainers` order. `stop(name)` is how long a container runs after
 * SIGTERM; `preStopSeconds(container)` reads the delay its preStop holds it for.
 */
export function simulateTermination(spec: Json, stop: (name: string) => number): Exit[] {
  const exits: Exit[] = [];
  let lastRegular = 0;
  for (const c of spec.containers) {
    const at = preStopSeconds(c) + stop(c.name);
    exits.push({ name: c.name, at });
    lastRegular = Math.max(lastRegular, at);
  }
  let t = lastRegular;
  const native = (spec.initContainers ?? []).filter((c: Json) => c.restartPolicy === 'Always');
  for (const c of [...native].reverse()) {
    t = Math.max(t, preStopSeconds(c)) + stop(c.name);
    exits.push({ name: c.name, at: t });
  }
  return exits;
}

/** The seconds a preStop hook holds a container (sleep action, busybox or /bin/sleep). */
export function preStopSeconds(c: Json): number {
  const hook = c.lifecycle?.preStop;
  if (!hook) return 0;
  if (hook.sleep) return hook.sleep.seconds;
  const cmd: string = (hook.exec?.command ?? []).join(' ');
  const m = /sleep'? '?(\d+)/.exec(cmd);
  return m ? Number(m[1]) : 0;
}
