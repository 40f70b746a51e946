/**
 * Layer 2: proxies that a service mesh injects at admission (Istio, Linkerd), as data.
 *
 * The engine never adds these containers (the mesh's webhook does, after synthesis), but it
 * accounts for them: their ports in the collision checks, their stop time in the grace budget,
 * their place relative to the library's sidecars, and the per-pod annotations that make the
 * injector use the same layout as the library's own sidecars.
 *
 * Every fact below was read in the meshes' sources; the file and tag is named beside it.
 */
import { capabilities } from '../target';
import { EngineTarget, Json, Layout, SidecarSpec } from './spec';

/** The meshes whose injection the library can steer. */
export type MeshKind = 'ISTIO' | 'LINKERD';

/**
 * The pod-template annotation listing the init containers the library emitted as native
 * sidecars (comma-separated, in `initContainers` order), for `NativeSidecarGuard` to check
 * after every mutating webhook has run. Written only in the native layout.
 */
export const NATIVE_SIDECARS_ANNOTATION = 'sidecars.cdk8s.io/native-sidecars';

/** A port the injected proxy binds, and what it is (for messages). */
export interface MeshPort {
  readonly port: number;
  readonly what: string;
}

/** What the library knows of a mesh's injected proxy. */
export interface MeshFacts {
  readonly label: string;
  /** The injected proxy container. */
  readonly proxyName: string;
  /** Init containers the injector adds besides the proxy. */
  readonly initNames: readonly string[];
  readonly ports: readonly MeshPort[];
}

export const MESH_FACTS: Record<MeshKind, MeshFacts> = {
  ISTIO: {
    label: 'Istio',
    // istio/istio 1.24.0..1.28.0 manifests/charts/istio-control/istio-discovery/files/injection-template.yaml:
    // `- name: istio-proxy`, `- name: istio-init` (`istio-validation` with the CNI plugin).
    proxyName: 'istio-proxy',
    initNames: ['istio-init', 'istio-validation'],
    // istio/istio pilot/cmd/pilot-agent/status/server.go (master @86c9f01, after 1.30): the
    // ports the agent reserves; defaults also in pkg/config/mesh/mesh.go (ProxyAdminPort 15000,
    // StatusPort 15020, ProxyListenPort 15001, ProxyInboundListenPort 15006) at 1.28.0.
    ports: [
      { port: 15000, what: 'Envoy admin' },
      { port: 15001, what: 'outbound traffic capture' },
      { port: 15004, what: 'pilot debug' },
      { port: 15006, what: 'inbound traffic capture' },
      { port: 15008, what: 'HBONE tunnel' },
      { port: 15020, what: 'pilot-agent status / merged Prometheus' },
      { port: 15021, what: 'Envoy health' },
      { port: 15053, what: 'DNS proxy' },
      { port: 15090, what: 'Envoy Prometheus' },
    ],
  },
  LINKERD: {
    label: 'Linkerd',
    // linkerd/linkerd2 version-2.15..version-2.20 charts/partials/templates/_proxy.tpl
    // (`_pod_containerName` linkerd-proxy), _proxy-init.tpl (linkerd-init),
    // _network-validator.tpl (linkerd-network-validator, with the CNI plugin).
    proxyName: 'linkerd-proxy',
    initNames: ['linkerd-init', 'linkerd-network-validator'],
    // linkerd/linkerd2 charts/linkerd-control-plane/values.yaml `proxy.ports` (version-2.20).
    ports: [
      { port: 4140, what: 'outbound' },
      { port: 4143, what: 'inbound' },
      { port: 4190, what: 'control' },
      { port: 4191, what: 'admin' },
    ],
  },
};

/** A proxy a mesh will inject into the workload's pods, as the engine sees it. */
export interface InjectedProxy {
  /** The construct that declared it (its path), for messages. */
  readonly owner: string;
  readonly mesh: MeshKind;
  /** The layout the injector is told to use (the library's decision for the target). */
  readonly layout: Layout;
  /** Seconds the proxy needs after SIGTERM to drain and exit. */
  readonly stopSeconds: number;
  /** How long the app takes to shut down (counts like a sidecar's `appShutdownSeconds`). */
  readonly appShutdownSeconds: number;
  /** Hold the app until the proxy is ready. */
  readonly holdApplication: boolean;
  /** The user accepted a legacy proxy on a Job/CronJob (the pod never completes). */
  readonly allowLegacyOnJob: boolean;
}

/**
 * The injected proxy as a sidecar spec, for the grace budget only (never placed): it stops
 * like one of the library's sidecars in its layout. Native: the injector puts it after its own
 * init containers (istio-init / istio-validation, linkerd-init) and before every other init
 * container, ours included (Istio `reorderPod`: "{istio-init/istio-validation} => proxy => rest";
 * see `injectedLayout`), so the kubelet stops it LAST, after the app and after the library's
 * sidecars. Legacy: it gets SIGTERM with the app and, with the annotations
 * below, outlives the app's shutdown by its own stop time, like a legacy sidecar's preStop delay.
 */
export function asGraceSpec(p: InjectedProxy): SidecarSpec {
  return {
    owner: p.owner,
    kind: `mesh:${p.mesh}`,
    rank: 0,
    container: { name: MESH_FACTS[p.mesh].proxyName },
    volumes: [],
    appMounts: [],
    appEnv: [],
    podAnnotations: {},
    shutdown: { stopSeconds: p.stopSeconds, appShutdownSeconds: p.appShutdownSeconds },
    layout: p.layout,
    allowLegacyOnJob: true,
  };
}

/**
 * The per-pod annotations that make the injector follow the library's decision.
 * `appShutdown` is the workload's (the largest of its sidecars'). The proxy gets SIGTERM
 * together with the app in the legacy layout and in the native one on 1.28 (unordered stop):
 * there it must outlive the app's shutdown by its own stop time.
 */
export function meshAnnotations(p: InjectedProxy, appShutdown: number, target: EngineTarget): Record<string, string> {
  const native = p.layout === 'NATIVE';
  const delayed = !native || !capabilities(target.minor, target.gate).orderedTermination;
  if (p.mesh === 'ISTIO') {
    // istio/istio 1.24.0 injection-template.yaml: `$nativeSidecar` follows the annotation
    // `sidecar.istio.io/nativeSidecar` ("true"/"false") over ENABLE_NATIVE_SIDECARS (the pod's
    // annotation wins; added by istio#53490, first in 1.24.0).
    // `proxy.istio.io/config` is a ProxyConfig (YAML or JSON) merged over the mesh defaults
    // (pkg/kube/inject/webhook.go reorderPod, mesh.ApplyProxyConfig): terminationDrainDuration
    // (default 5s, pkg/config/mesh/mesh.go) is how long pilot-agent drains after SIGTERM
    // (pkg/envoy/agent.go); holdApplicationUntilProxyStarts puts istio-proxy first in
    // `containers` with a blocking postStart `pilot-agent wait` (legacy only: the template's
    // `$holdProxy` is `and (...) (not $nativeSidecar)`).
    const config: Json = {};
    if (!native && p.holdApplication) config.holdApplicationUntilProxyStarts = true;
    config.terminationDrainDuration = `${delayed ? appShutdown + p.stopSeconds : p.stopSeconds}s`;
    return {
      'proxy.istio.io/config': JSON.stringify(config),
      'sidecar.istio.io/nativeSidecar': native ? 'true' : 'false',
    };
  }
  // linkerd/linkerd2 pkg/k8s/labels.go + pkg/inject/inject.go: the alpha name
  // `config.alpha.linkerd.io/proxy-enable-native-sidecar` is read by every release from
  // version-2.15 (edge-23.11.4, #11465) to version-2.20 (where the beta and GA names were added
  // and take precedence when present); strconv.ParseBool value.
  // `config.linkerd.io/proxy-await` ("enabled"/"disabled"): legacy, a postStart
  // `linkerd-await` and the proxy first in `containers`; native, the startupProbe on /ready
  // (_proxy.tpl `if and .Values.proxy.nativeSidecar .Values.proxy.await`).
  // `config.linkerd.io/shutdown-grace-period` (time.ParseDuration, since 2.12): how long the
  // proxy waits for open connections after SIGTERM.
  // `config.alpha.linkerd.io/proxy-wait-before-exit-seconds`: a preStop sleep, legacy only
  // (2.15 _proxy.tpl fails injection when it is set together with nativeSidecar).
  const out: Record<string, string> = {
    'config.alpha.linkerd.io/proxy-enable-native-sidecar': native ? 'true' : 'false',
    'config.linkerd.io/proxy-await': p.holdApplication ? 'enabled' : 'disabled',
    'config.linkerd.io/shutdown-grace-period': `${native && delayed ? appShutdown + p.stopSeconds : p.stopSeconds}s`,
  };
  if (!native && appShutdown > 0) out['config.alpha.linkerd.io/proxy-wait-before-exit-seconds'] = `${appShutdown}`;
  return out;
}

/**
 * Checks the injected proxies against the workload: ports, container names, annotations the
 * template already sets, layout, Jobs. `boundPorts` gives the ports a library sidecar binds.
 */
export function checkInjected(
  where: string, manifest: Json, template: { metadata: Json; spec: Json }, proxies: InjectedProxy[],
  sidecars: SidecarSpec[], boundPorts: (s: SidecarSpec) => number[], target: EngineTarget,
): string[] {
  // every check below is of a proxy (most workloads have none)
  if (proxies.length === 0) return [];
  const errors: string[] = [];
  const user: Json[] = [...(template.spec.containers ?? []), ...(template.spec.initContainers ?? [])];
  const bound = [
    ...user.flatMap(c => (c.ports ?? []).map((x: Json) => ({ port: x.containerPort as number, by: `container '${c.name}'`, owner: undefined as string | undefined }))),
    ...sidecars.flatMap(s => boundPorts(s).map(port => ({ port, by: `sidecar '${s.container.name}' (${s.owner})`, owner: s.owner }))),
  ];
  const names = [...user.map(c => c.name as string), ...sidecars.map(s => s.container.name as string)];
  const completes = manifest.kind === 'Job' || manifest.kind === 'CronJob' ||
    (manifest.kind === 'Pod' && template.spec.restartPolicy !== undefined && template.spec.restartPolicy !== 'Always');
  const seen = new Map<MeshKind, string>();
  for (const p of proxies) {
    const facts = MESH_FACTS[p.mesh];
    const first = seen.get(p.mesh);
    if (first !== undefined) {
      errors.push(`${p.owner}: ${where} is already declared as meshed by ${facts.label} (${first}); declare it once.`);
      continue;
    }
    seen.set(p.mesh, p.owner);
    for (const { port, what } of facts.ports) {
      for (const b of bound.filter(x => x.port === port)) {
        errors.push(
          `${p.owner}: port ${port} is bound by the injected ${facts.label} proxy ('${facts.proxyName}', ${what}) and also by ${b.by} on ${where}; ` +
          `they share the pod's network, so one of them cannot bind it. ${b.owner !== undefined ? `Give ${b.owner} another port` : `Move the app's port ${port}`} ` +
          `(${facts.label} reserves ${facts.ports.map(x => x.port).join(', ')}).`,
        );
      }
    }
    for (const name of [facts.proxyName, ...facts.initNames].filter(n => names.includes(n))) {
      errors.push(`${p.owner}: container name '${name}' on ${where} is the name of a container the ${facts.label} injector adds; rename your container.`);
    }
    const own = template.metadata.annotations ?? {};
    for (const key of Object.keys(meshAnnotations(p, 0, target)).filter(k => own[k] !== undefined)) {
      errors.push(
        `${p.owner}: ${where} already sets the annotation '${key}' ('${own[key]}') on its pod template, which this construct sets ` +
        'from the target; remove it from the workload (use the construct\'s props instead).',
      );
    }
    if (p.layout === 'LEGACY') {
      const native = sidecars.filter(s => s.layout === 'NATIVE');
      if (native.length > 0) {
        errors.push(
          `${p.owner}: the ${facts.label} proxy is injected in the legacy layout but ${native.map(s => s.owner).join(', ')} ` +
          `${native.length > 1 ? 'are' : 'is'} native on ${where}: the injector then puts its traffic-redirect init container after ` +
          'the native sidecars and starts its proxy only with the app, so connections the native sidecars open in between ' +
          'are redirected to a proxy that is not running. Give the mesh construct and the sidecars the same mode.',
        );
      }
      if (completes && !p.allowLegacyOnJob) {
        errors.push(
          `${p.owner}: a legacy ${facts.label} proxy on ${where} never exits, so the ${manifest.kind === 'Pod' ? 'pod' : 'Job'} never completes. ` +
          'Target Kubernetes 1.29+ (the proxy is then injected as a native sidecar), or set `allowLegacyOnJob: true` if the app stops the proxy itself.',
        );
      }
    }
  }
  return errors;
}

/**
 * The names for `NATIVE_SIDECARS_ANNOTATION`: the native injected proxies (the injector puts
 * them first) and the library's native sidecars, in `initContainers` order.
 */
export function nativeSidecarNames(proxies: InjectedProxy[], native: Json[]): string[] {
  return [...proxies.filter(p => p.layout === 'NATIVE').map(p => MESH_FACTS[p.mesh].proxyName), ...native.map(c => c.name as string)];
}
