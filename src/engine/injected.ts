/**
 * Layer 2: containers that an admission webhook injects (the meshes Istio, Linkerd, Consul and
 * Kuma, the OpenTelemetry operator, the GKE Cloud Storage FUSE driver, the Vault agent injector
 * and Datadog's admission controller), as data.
 *
 * The engine never adds these containers (the mesh's webhook does, after synthesis), but it
 * accounts for them: their ports in the collision checks, their stop time in the grace budget,
 * their place relative to the library's sidecars, and the per-pod annotations that make the
 * injector use the same layout as the library's own sidecars.
 *
 * Every fact below was read in the meshes' sources; the file and tag is named beside it.
 */
import { EngineTarget, Layout, SidecarSpec } from './spec';
import { COMPLETING_KINDS, podTemplateIn } from '../facts/kinds';
import { Json } from '../private/json';
import { capabilities } from '../target/capabilities';

/** The injectors the library accounts for (the values of the public `Mesh` enum). */
export type MeshKind = 'ISTIO' | 'LINKERD' | 'OPENTELEMETRY_OPERATOR' | 'CONSUL' | 'KUMA' | 'GCS_FUSE' | 'VAULT_AGENT' | 'DATADOG' | 'DAPR';

/**
 * How an injector picks native or legacy:
 * - `ANNOTATION`: per pod, from an annotation this library writes (`nativeNeedsDefaultOn`: and
 *   only where the cluster's version has native sidecars on by default, which the injector checks);
 * - `CLUSTER`: from the cluster (the API server's version, a control-plane flag), never per pod;
 * - `LEGACY_ONLY`: always one more entry of `spec.containers`.
 */
export type LayoutRule = 'ANNOTATION' | 'CLUSTER' | 'LEGACY_ONLY';

/** A port the injected proxy binds, and what it is (for messages). */
export interface MeshPort {
  readonly port: number;
  readonly what: string;
}

/** What the library knows of a mesh's injected proxy. */
export interface MeshFacts {
  readonly label: string;
  /** The release whose source the facts were read in (docs/meshes.md). */
  readonly release: string;
  /** The injected proxy container. */
  readonly proxyName: string;
  /** Init containers the injector adds besides the proxy. */
  readonly initNames: readonly string[];
  readonly ports: readonly MeshPort[];
  readonly layoutRule: LayoutRule;
  /** ANNOTATION: the injector also requires a cluster with native sidecars on by default (1.29+). */
  readonly nativeNeedsDefaultOn?: boolean;
  /** Native: the proxy goes before every other init container (else after all of them: it starts last and is stopped first). */
  readonly nativeFirst: boolean;
  /** It redirects the pod's traffic through itself: a native sidecar started before it cannot reach the network. */
  readonly interceptsTraffic: boolean;
  /** Legacy: the container exits by itself once the app is done (`JOB`: only in a pod a Job owns). */
  readonly legacyExits: 'NEVER' | 'JOB' | 'ALWAYS';
  /** CLUSTER: what decides it, for messages. */
  readonly clusterRule?: string;
  /**
   * ANNOTATION: the first release of the injector that reads its per-pod layout annotation
   * (`[major, minor]`); an older one (`meshRelease`) injects in its own default layout, always
   * legacy for the injectors here (Dapr before 1.18).
   */
  readonly annotationFrom?: readonly [number, number];
}

export const MESH_FACTS: Record<MeshKind, MeshFacts> = {
  DAPR: {
    label: 'Dapr',
    release: 'dapr v1.18.3 (native from v1.18.0, dapr#9450)',
    // v1.18.3 pkg/injector/consts/consts.go SidecarContainerName "daprd"; no init container of its own.
    proxyName: 'daprd',
    initNames: [],
    // v1.18.3 pkg/injector/patcher/sidecar.go defaults: SidecarHTTPPort 3500, SidecarPublicPort 3501,
    // dapr.io/grpc-port 50001, dapr.io/internal-grpc-port 50002, dapr.io/metrics-port 9090.
    ports: [
      { port: 3500, what: 'Dapr HTTP API' },
      { port: 3501, what: 'Dapr public (health) port' },
      { port: 9090, what: 'Dapr metrics' },
      { port: 50001, what: 'Dapr gRPC API' },
      { port: 50002, what: 'Dapr internal gRPC' },
    ],
    // v1.18.3 pkg/injector/patcher/sidecar.go `dapr.io/enable-native-sidecar` (the control plane's
    // NATIVE_SIDECAR_ENABLED, default off, when absent: pkg/injector/service/config.go);
    // sidecar_patcher.go: native, APPENDED to initContainers ("/-") with restartPolicy Always
    // (sidecar_container.go), readiness and liveness probes but no startupProbe; legacy, appended to containers.
    layoutRule: 'ANNOTATION',
    annotationFrom: [1, 18],
    nativeFirst: false,
    interceptsTraffic: false,
    legacyExits: 'NEVER',
  },
  ISTIO: {
    label: 'Istio',
    release: 'istio 1.28.0',
    layoutRule: 'ANNOTATION',
    // pkg/kube/inject/webhook.go reorderPod (1.28.0): "{istio-init/istio-validation} => proxy => rest"
    nativeFirst: true,
    interceptsTraffic: true,
    legacyExits: 'NEVER',
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
    release: 'linkerd2 version-2.20',
    layoutRule: 'ANNOTATION',
    nativeFirst: true,
    interceptsTraffic: true,
    legacyExits: 'NEVER',
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
  OPENTELEMETRY_OPERATOR: {
    label: 'OpenTelemetry operator',
    release: 'opentelemetry-operator v0.158.0',
    // v0.158.0 internal/naming/main.go Container(): "otc-container"; pkg/sidecar/pod.go add():
    // the CR's own initContainers, then (native) the collector are APPENDED to initContainers,
    // else the collector is appended to containers.
    proxyName: 'otc-container',
    initNames: [],
    // v0.158.0 internal/manifests/collector/container.go: the ports of the collector's config
    // (getConfigContainerPorts) plus `metrics` (8888 unless the config says otherwise); OTLP
    // 4317/4318 are the ports of the otlp receiver of the operator's samples (config/samples/sidecar.yaml).
    ports: [
      { port: 4317, what: 'OTLP gRPC receiver (the otlp receiver of its config)' },
      { port: 4318, what: 'OTLP HTTP receiver (the otlp receiver of its config)' },
      { port: 8888, what: 'collector metrics' },
    ],
    // v0.158.0 internal/autodetect/main.go NativeSidecarSupport: the API server's version >= 1.29.0,
    // nothing per pod (pkg/sidecar/pod.go reads only cfg.Internal.NativeSidecarSupport).
    layoutRule: 'CLUSTER',
    clusterRule: 'native when the API server is 1.29+ (the kubelets are not checked)',
    nativeFirst: false,
    interceptsTraffic: false,
    legacyExits: 'NEVER',
  },
  CONSUL: {
    label: 'Consul',
    release: 'consul-k8s v2.0.3 (native from v1.9.0)',
    // v2.0.3 control-plane/connect-inject/webhook/mesh_webhook.go: `sidecarContainer = "consul-dataplane"`;
    // container_init.go `injectInitContainerName = "consul-connect-inject-init"`, APPENDED to
    // initContainers; the dataplane then: native (enable-consul-dataplane-as-sidecar) APPENDED
    // to initContainers, legacy FIRST in containers with the lifecycle on (chart default), else last.
    proxyName: 'consul-dataplane',
    initNames: ['consul-connect-inject-init'],
    // v2.0.3 control-plane/connect-inject/constants/constants.go ProxyDefaultInboundPort 20000,
    // ProxyDefaultHealthPort 21000, DefaultGracefulPort 20600; consul_dataplane_sidecar.go
    // `-envoy-admin-bind-port=19000`; charts/consul/values.yaml defaultPrometheusScrapePort 20200;
    // webhook/redirect_traffic.go ProxyOutboundPort = iptables.DefaultTProxyOutboundPort (15001).
    ports: [
      { port: 15001, what: 'transparent-proxy outbound' },
      { port: 19000, what: 'Envoy admin' },
      { port: 20000, what: 'inbound' },
      { port: 20200, what: 'merged Prometheus metrics' },
      { port: 20600, what: 'graceful shutdown/startup' },
      { port: 21000, what: 'proxy health' },
    ],
    // v2.0.3 control-plane/connect-inject/lifecycle/lifecycle_configuration.go
    // EnableConsulDataplaneAsSidecar: the pod annotation (strconv.ParseBool) over the chart's
    // connectInject.dataplaneAsSidecarInitContainer.defaultEnabled (false); absent before v1.9.0.
    layoutRule: 'ANNOTATION',
    nativeFirst: false,
    interceptsTraffic: true,
    legacyExits: 'NEVER',
  },
  KUMA: {
    label: 'Kuma',
    release: 'kuma v2.14.3',
    // v2.14.3 pkg/plugins/runtime/k8s/util/names.go kuma-sidecar, kuma-init, kuma-validation (CNI);
    // webhooks/injector/injector.go: with sidecar containers, kuma-init then kuma-sidecar are
    // PREPENDED to initContainers (preStop `killall -USR2 kuma-dp`); else kuma-sidecar FIRST in
    // containers and kuma-init appended to initContainers (first with kuma.io/init-first).
    proxyName: 'kuma-sidecar',
    initNames: ['kuma-init', 'kuma-validation'],
    // v2.14.3 pkg/config/app/kuma-cp/kuma-cp.defaults.yaml: redirectPortOutbound 15001,
    // redirectPortInbound 15006, adminPort 9901, readinessPort 9902,
    // applicationProbeProxyPort 9001, builtinDNS port 15053.
    ports: [
      { port: 9001, what: 'application probe proxy' },
      { port: 9901, what: 'Envoy admin' },
      { port: 9902, what: 'readiness reporter' },
      { port: 15001, what: 'outbound redirect' },
      { port: 15006, what: 'inbound redirect' },
      { port: 15053, what: 'DNS proxy' },
    ],
    // v2.14.3 pkg/plugins/runtime/k8s/plugin.go: sidecar containers when the API server is
    // >= 1.29.0 AND the control plane's experimental.sidecarContainers (default true in v2.14.3,
    // false in v2.13.10 and earlier); no pod annotation.
    layoutRule: 'CLUSTER',
    clusterRule: 'native when the API server is 1.29+ and the control plane sets experimental.sidecarContainers (default true from Kuma 2.14, false before)',
    nativeFirst: true,
    interceptsTraffic: true,
    legacyExits: 'NEVER',
  },
  GCS_FUSE: {
    label: 'GKE Cloud Storage FUSE',
    release: 'gcs-fuse-csi-driver v1.24.4',
    // v1.24.4 pkg/webhook/sidecar_spec.go GcsFuseSidecarName "gke-gcsfuse-sidecar",
    // MetadataPrefetchSidecarName "gke-gcsfuse-metadata-prefetch"; injection.go: inserted at
    // index 0 of initContainers (native) or containers (legacy), after istio-proxy if present.
    proxyName: 'gke-gcsfuse-sidecar',
    initNames: ['gke-gcsfuse-metadata-prefetch'],
    // no containerPort in sidecar_spec.go (v1.24.4)
    ports: [],
    // v1.24.4 pkg/webhook/injection.go injectAsNativeSidecar: the annotation
    // gke-gcsfuse/enable-native-sidecar (default true) AND supportsNativeSidecar: the API server
    // and every node's kubelet >= 1.29.0 (parsers.go minimumSupportedVersion).
    layoutRule: 'ANNOTATION',
    nativeNeedsDefaultOn: true,
    nativeFirst: true,
    interceptsTraffic: false,
    // v1.24.4 cmd/sidecar_mounter/main.go: legacy, the mounter exits once the exit file says
    // every other container has terminated (Jobs complete).
    legacyExits: 'ALWAYS',
  },
  VAULT_AGENT: {
    label: 'Vault agent injector',
    release: 'vault-k8s v1.7.6',
    // v1.7.6 agent-inject/agent/container_sidecar.go Name "vault-agent", container_init_sidecar.go
    // "vault-agent-init"; agent.go Patch: vault-agent-init APPENDED to initContainers (first with
    // vault.hashicorp.com/agent-init-first), vault-agent APPENDED to containers. No restartPolicy
    // anywhere in agent-inject/: legacy only.
    proxyName: 'vault-agent',
    initNames: ['vault-agent-init'],
    // v1.7.6 agent-inject/agent/agent.go DefaultAgentCacheListenerPort "8200" (with agent-cache-enable)
    ports: [{ port: 8200, what: 'agent cache listener (with vault.hashicorp.com/agent-cache-enable)' }],
    layoutRule: 'LEGACY_ONLY',
    nativeFirst: false,
    interceptsTraffic: false,
    legacyExits: 'NEVER',
  },
  DATADOG: {
    label: 'Datadog admission controller (agent sidecar)',
    release: 'datadog-agent main, 2026 (read file by file: no tag, the repository is too large to fetch here)',
    // DataDog/datadog-agent (main, 2026) pkg/clusteragent/admission/mutate/agent_sidecar/constants.go
    // agentSidecarContainerName "datadog-agent-injected"; agent_sidecar.go injectAgentSidecar:
    // APPENDED to containers, `init-copy-agent-config` appended to initContainers (read-only root
    // filesystem); DD_AUTO_EXIT_NOPROCESS_ENABLED when a Job owns the pod. No restartPolicy: legacy only.
    proxyName: 'datadog-agent-injected',
    initNames: ['init-copy-agent-config'],
    // pkg/config/setup/config.go: cmd_port 5001, dogstatsd_port 8125; apm.go apm_config.receiver_port 8126
    ports: [
      { port: 5001, what: 'agent command API' },
      { port: 8125, what: 'DogStatsD' },
      { port: 8126, what: 'APM receiver' },
    ],
    layoutRule: 'LEGACY_ONLY',
    nativeFirst: false,
    interceptsTraffic: false,
    legacyExits: 'JOB',
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
  /**
   * CLUSTER-rule injectors (the OpenTelemetry operator, Kuma): the layout the user says the
   * cluster makes it inject; undefined: unknown (the engine warns where it matters).
   */
  readonly declaredLayout?: Layout;
  /**
   * The injector's release (`[major, minor]`), where its annotations changed: Linkerd reads
   * `config.linkerd.io/proxy-enable-native-sidecar` from 2.20 (older releases the alpha name
   * only); Dapr reads `dapr.io/enable-native-sidecar` from 1.18. Undefined: the release the
   * facts were read in (MESH_FACTS.release).
   */
  readonly meshRelease?: readonly [number, number];
}

/** Whether `release` is at least `[major, minor]` (an unknown release counts as the facts' release: yes). */
export function releaseAtLeast(release: readonly [number, number] | undefined, major: number, minor: number): boolean {
  return release === undefined || release[0] > major || (release[0] === major && release[1] >= minor);
}

/** The layout an injector will really use in this pod, and whether the manifest decides it. */
export interface InjectorLayout {
  readonly layout: Layout;
  /** False: it depends on the cluster (its version or the injector's configuration), which the library cannot see. */
  readonly certain: boolean;
}

/**
 * The layout the injector will use, from its rule (MESH_FACTS.layoutRule) and the target
 * (the lowest minor among the API server and the kubelets, so the API server is at least that).
 */
export function injectorLayout(p: InjectedProxy, target: EngineTarget): InjectorLayout {
  const facts = MESH_FACTS[p.mesh];
  const defaultOn = capabilities(target.minor, target.gate).nativeByDefault;
  switch (facts.layoutRule) {
    case 'LEGACY_ONLY':
      return { layout: 'LEGACY', certain: true };
    case 'ANNOTATION':
      // an injector older than its layout annotation injects in its own (legacy) default
      if (facts.annotationFrom && !releaseAtLeast(p.meshRelease, ...facts.annotationFrom)) return { layout: 'LEGACY', certain: true };
      // the annotation says the library's layout; GCS FUSE also needs 1.29+ everywhere (a 1.28
      // target has a 1.28 component, which its webhook checks: legacy for certain)
      if (p.layout === 'NATIVE' && facts.nativeNeedsDefaultOn && !defaultOn) return { layout: 'LEGACY', certain: true };
      return { layout: p.layout, certain: true };
    case 'CLUSTER':
      if (p.declaredLayout !== undefined) return { layout: p.declaredLayout, certain: true };
      // the OpenTelemetry operator reads only the API server's version: a 1.29+ target means a
      // 1.29+ API server, so native for certain; below, the API server may be newer than the target
      if (p.mesh === 'OPENTELEMETRY_OPERATOR' && defaultOn) return { layout: 'NATIVE', certain: true };
      return { layout: p.layout, certain: false };
  }
}

/**
 * The injected proxy as a sidecar spec, for the grace budget only (never placed): it stops
 * like one of the library's sidecars in its layout. Native: the injector puts it after its own
 * init containers (istio-init / istio-validation, linkerd-init) and before every other init
 * container, ours included (Istio `reorderPod`: "{istio-init/istio-validation} => proxy => rest";
 * see `injectedLayout`), so the kubelet stops it LAST, after the app and after the library's
 * sidecars (the OpenTelemetry operator and Consul append theirs instead: stopped first, which
 * the budget, a sum of the native stops, does not depend on). The layout is the one the
 * injector really uses (`injectorLayout`: Vault and Datadog are always legacy). Legacy: it gets SIGTERM with the app and, with the annotations
 * below, outlives the app's shutdown by its own stop time, like a legacy sidecar's preStop delay.
 */
export function asGraceSpec(p: InjectedProxy, target: EngineTarget): SidecarSpec {
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
    layout: injectorLayout(p, target).layout,
    allowLegacyOnJob: true,
  };
}

/**
 * The per-pod annotations that make the injector follow the library's decision.
 * `appShutdown` is the workload's (the largest of its sidecars'). The proxy gets SIGTERM
 * together with the app in the legacy layout and in the native one on 1.28 (unordered stop):
 * there it must outlive the app's shutdown by its own stop time. `nativeStops`: the sum of
 * the stop times of the library's native sidecars (Kuma's drain must outlast them).
 */
export function meshAnnotations(p: InjectedProxy, appShutdown: number, target: EngineTarget, nativeStops = 0): Record<string, string> {
  const native = p.layout === 'NATIVE';
  const delayed = !native || !capabilities(target.minor, target.gate).orderedTermination;
  const byMesh: Partial<Record<MeshKind, (m: MeshAnnotationInput) => Record<string, string>>> = {
    ISTIO: istioAnnotations,
    CONSUL: consulAnnotations,
    KUMA: kumaAnnotations,
    DAPR: daprAnnotations,
    GCS_FUSE: gcsFuseAnnotations,
    LINKERD: linkerdAnnotations,
  };
  const of = Object.prototype.hasOwnProperty.call(byMesh, p.mesh) ? byMesh[p.mesh] : undefined;
  // the OpenTelemetry operator, the Vault agent injector and Datadog read no per-pod layout or
  // stop annotation (their sources above): nothing to write
  if (of === undefined) return {};
  return of({ p, appShutdown, nativeStops, native, delayed });
}

/** What each mesh's annotations are made from (see meshAnnotations). */
interface MeshAnnotationInput {
  readonly p: InjectedProxy;
  readonly appShutdown: number;
  readonly nativeStops: number;
  readonly native: boolean;
  /** The proxy gets SIGTERM with the app (legacy, or native without ordered termination). */
  readonly delayed: boolean;
}

function istioAnnotations({ p, appShutdown, native, delayed }: MeshAnnotationInput): Record<string, string> {
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

function consulAnnotations({ p, appShutdown, native, delayed }: MeshAnnotationInput): Record<string, string> {
  // consul-k8s v2.0.3 control-plane/connect-inject/constants/annotations_and_labels.go:
  // enable-consul-dataplane-as-sidecar (strconv.ParseBool, lifecycle_configuration.go; from
  // v1.9.0); enable-sidecar-proxy-lifecycle (the chart's default is on: the dataplane drains on
  // SIGTERM, first in `containers` when legacy); sidecar-proxy-lifecycle-shutdown-grace-period-seconds
  // (chart default 30): how long the dataplane keeps serving after SIGTERM.
  return {
    'consul.hashicorp.com/enable-consul-dataplane-as-sidecar': native ? 'true' : 'false',
    'consul.hashicorp.com/enable-sidecar-proxy-lifecycle': 'true',
    'consul.hashicorp.com/sidecar-proxy-lifecycle-shutdown-grace-period-seconds': `${delayed ? appShutdown + p.stopSeconds : p.stopSeconds}`,
  };
}

function kumaAnnotations({ p, appShutdown, nativeStops, native }: MeshAnnotationInput): Record<string, string> {
  // kuma v2.14.3 pkg/plugins/runtime/k8s/metadata/annotations.go `kuma.io/sidecar-drain-time`
  // (containers/factory.go GetDurationWithDefault, default drainTime 30s; Envoy's
  // `--drain-time-s`, app/kuma-dp/pkg/dataplane/envoy/envoy.go). app/kuma-dp/cmd/run.go: legacy,
  // SIGTERM fails the health checks and waits the drain time, then exits; native, the
  // injector's preStop (`killall -USR2 kuma-dp`) starts Envoy's drain when the pod's
  // termination starts and SIGTERM at the proxy's turn exits at once ("already drained"): the
  // drain must then last until the library's native sidecars, stopped before it, are gone.
  // metadata/annotations.go `kuma.io/wait-for-dataplane-ready` (GetEnabledWithDefault:
  // enabled/disabled; default the control plane's waitForDataplaneReady, false):
  // containers/factory.go then gives kuma-sidecar a postStart `kuma-dp wait` on /ready, which
  // holds the next container in either layout (legacy: it is first in `containers`).
  return {
    'kuma.io/sidecar-drain-time': `${appShutdown + (native ? nativeStops : 0) + p.stopSeconds}s`,
    'kuma.io/wait-for-dataplane-ready': p.holdApplication ? 'enabled' : 'disabled',
  };
}

function daprAnnotations({ p, appShutdown, native, delayed }: MeshAnnotationInput): Record<string, string> {
  // dapr v1.18.3 pkg/injector/annotations/annotations.go KeyEnableNativeSidecar `dapr.io/enable-native-sidecar`
  // (from v1.18.0, dapr#9450) and KeyGracefulShutdownSeconds `dapr.io/graceful-shutdown-seconds`, passed to
  // daprd as --dapr-graceful-shutdown-seconds (sidecar_container.go): how long daprd keeps serving after
  // SIGTERM (pkg/runtime/config.go, default 5 s). Before 1.18 the layout annotation is not read (legacy).
  const out: Record<string, string> = { 'dapr.io/graceful-shutdown-seconds': `${delayed ? appShutdown + p.stopSeconds : p.stopSeconds}` };
  if (releaseAtLeast(p.meshRelease, 1, 18)) out['dapr.io/enable-native-sidecar'] = native ? 'true' : 'false';
  return out;
}

function gcsFuseAnnotations({ native }: MeshAnnotationInput): Record<string, string> {
  // gcs-fuse-csi-driver v1.24.4 pkg/webhook/mutatingwebhook.go GcsFuseNativeSidecarEnableAnnotation
  // `gke-gcsfuse/enable-native-sidecar` (ParseBool; default true), injection.go injectAsNativeSidecar.
  return { 'gke-gcsfuse/enable-native-sidecar': native ? 'true' : 'false' };
}

function linkerdAnnotations({ p, appShutdown, native, delayed }: MeshAnnotationInput): Record<string, string> {
  // linkerd/linkerd2 pkg/k8s/labels.go + pkg/inject/inject.go: version-2.20 reads
  // `config.linkerd.io/proxy-enable-native-sidecar` (ProxyEnableNativeSidecarAnnotation, over the
  // deprecated beta and alpha names: "ProxyEnableNativeSidecarAnnotation should take precedence");
  // version-2.15 (edge-23.11.4, #11465) to 2.19 read only the alpha (2.19 also a beta) name
  // `config.alpha.linkerd.io/proxy-enable-native-sidecar`. strconv.ParseBool value. The current
  // name from 2.20, only the alpha one below 2.20; with no meshRelease both (2.20 gives the
  // current name precedence and still reads the alpha one, version-2.20 inject.go), so the
  // layout holds on every release from 2.15.
  // `config.linkerd.io/proxy-await` ("enabled"/"disabled"): legacy, a postStart
  // `linkerd-await` and the proxy first in `containers`; native, the startupProbe on /ready
  // (_proxy.tpl `if and .Values.proxy.nativeSidecar .Values.proxy.await`).
  // `config.linkerd.io/shutdown-grace-period` (time.ParseDuration, since 2.12): how long the
  // proxy waits for open connections after SIGTERM.
  // `config.alpha.linkerd.io/proxy-wait-before-exit-seconds`: a preStop sleep, legacy only
  // (2.15 _proxy.tpl fails injection when it is set together with nativeSidecar).
  const layoutKeys = p.meshRelease === undefined
    ? ['config.linkerd.io/proxy-enable-native-sidecar', 'config.alpha.linkerd.io/proxy-enable-native-sidecar']
    : [releaseAtLeast(p.meshRelease, 2, 20)
      ? 'config.linkerd.io/proxy-enable-native-sidecar' : 'config.alpha.linkerd.io/proxy-enable-native-sidecar'];
  const out: Record<string, string> = {
    ...Object.fromEntries(layoutKeys.map(k => [k, native ? 'true' : 'false'])),
    'config.linkerd.io/proxy-await': p.holdApplication ? 'enabled' : 'disabled',
    'config.linkerd.io/shutdown-grace-period': `${native && delayed ? appShutdown + p.stopSeconds : p.stopSeconds}s`,
  };
  if (!native && appShutdown > 0) out['config.alpha.linkerd.io/proxy-wait-before-exit-seconds'] = `${appShutdown}`;
  return out;
}

/**
 * Checks the injected proxies against the workload: ports, container names, annotations the
 * template already sets, layout, Jobs. `boundPorts` gives the ports a library sidecar binds.
 * Errors where the outcome is certain; warnings where it depends on the cluster.
 */
export function checkInjected(
  where: string, manifest: Json, template: { metadata: Json; spec: Json }, proxies: InjectedProxy[],
  sidecars: SidecarSpec[], boundPorts: (s: SidecarSpec) => readonly number[], target: EngineTarget,
): { errors: string[]; warnings: string[] } {
  // every check below is of a proxy (most workloads have none)
  if (proxies.length === 0) return { errors: [], warnings: [] };
  const errors: string[] = [];
  const warnings: string[] = [];
  const user: Json[] = [...(template.spec.containers ?? []), ...(template.spec.initContainers ?? [])];
  const native = sidecars.filter(s => s.layout === 'NATIVE');
  const pod: MeshedPod = {
    where,
    manifest,
    template,
    target,
    bound: [
      ...user.flatMap(c => (c.ports ?? []).map((x: Json) => ({ port: x.containerPort as number, by: `container '${c.name}'`, owner: undefined as string | undefined }))),
      ...sidecars.flatMap(s => boundPorts(s).map(port => ({ port, by: `sidecar '${s.container.name}' (${s.owner})`, owner: s.owner }))),
    ],
    names: [...user.map(c => c.name as string), ...sidecars.map(s => s.container.name as string)],
    completes: COMPLETING_KINDS.has(manifest.kind) ||
      (manifest.kind === 'Pod' && template.spec.restartPolicy !== undefined && template.spec.restartPolicy !== 'Always'),
    ownedByJob: COMPLETING_KINDS.has(manifest.kind),
    native,
    nativeOwners: `${native.map(s => s.owner).join(', ')} ${native.length > 1 ? 'are' : 'is'} native`,
    errors,
    warnings,
  };
  const seen = new Map<MeshKind, string>();
  for (const p of proxies) {
    const facts = MESH_FACTS[p.mesh];
    const first = seen.get(p.mesh);
    if (first !== undefined) {
      errors.push(`${p.owner}: ${where} is already declared as meshed by ${facts.label} (${first}); declare it once.`);
      continue;
    }
    seen.set(p.mesh, p.owner);
    proxyCollisions(pod, p, facts);
    const real = injectorLayout(p, target);
    proxyLayoutFindings(pod, p, facts, real);
    proxyCompletionFindings(pod, p, facts, real);
  }
  return { errors, warnings };
}

/** What checkInjected knows of the pod, and where it writes its findings. */
interface MeshedPod {
  readonly where: string;
  readonly manifest: Json;
  readonly template: { metadata: Json; spec: Json };
  readonly target: EngineTarget;
  /** Every port bound in the pod, by whom (a container, or a sidecar and its construct). */
  readonly bound: ReadonlyArray<{ port: number; by: string; owner: string | undefined }>;
  /** Every container name of the pod (the workload's and the library's sidecars'). */
  readonly names: readonly string[];
  /** The pod runs to completion (a Job's, a CronJob's, a Pod with restartPolicy other than Always). */
  readonly completes: boolean;
  readonly ownedByJob: boolean;
  readonly native: readonly SidecarSpec[];
  readonly nativeOwners: string;
  readonly errors: string[];
  readonly warnings: string[];
}

/** Ports, container names and annotations the injector would take that the pod already has. */
function proxyCollisions(pod: MeshedPod, p: InjectedProxy, facts: MeshFacts): void {
  const { where, bound, names, template, target, errors } = pod;
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
}

/**
 * One layout per pod: an injected container in the legacy layout next to the library's native
 * sidecars, one the cluster may inject natively before a kubelet can run it, one appended after
 * the library's native sidecars.
 */
function proxyLayoutFindings(pod: MeshedPod, p: InjectedProxy, facts: MeshFacts, real: InjectorLayout): void {
  const { where, target, native, nativeOwners, errors, warnings } = pod;
  const defaultOn = capabilities(target.minor, target.gate).nativeByDefault;
  // One layout per pod: an injected container in the legacy layout next to the library's
  // native sidecars (istio#49054, cloud-sql-proxy-operator#641: a native sidecar started before
  // the mesh's redirect init container and its proxy cannot reach the network). Certain: an
  // error; where the cluster decides (CLUSTER rule, not declared): a warning.
  const mayBeLegacy = real.certain ? real.layout === 'LEGACY' : true;
  if (mayBeLegacy && native.length > 0) {
    const why = facts.interceptsTraffic
      ? 'the injector then puts its traffic-redirect init container after the native sidecars and starts its proxy only with the app, ' +
        'so connections the native sidecars open in between are redirected to a proxy that is not running'
      : `${facts.initNames.length > 0 ? `its init container (${facts.initNames.join(', ')}) then runs after the native sidecars, and ` : ''}its legacy container gets SIGTERM ` +
        'with the app while the native sidecars outlive it, so the pod has two shutdown orders';
    const tooOld = facts.annotationFrom !== undefined && !releaseAtLeast(p.meshRelease, ...facts.annotationFrom);
    const fix = tooOld
      ? `the ${facts.label} reads its layout annotation only from ${facts.annotationFrom!.join('.')} and meshRelease is ${p.meshRelease!.join('.')}: ` +
        `upgrade it to ${facts.annotationFrom!.join('.')}+ (and drop meshRelease), or give the workload's sidecar constructs \`mode: SidecarMode.LEGACY\``
      : facts.layoutRule === 'LEGACY_ONLY'
        ? `the ${facts.label} injects in the legacy layout only (${facts.release}): give the workload's sidecar constructs \`mode: SidecarMode.LEGACY\``
        : facts.layoutRule === 'CLUSTER'
          ? `the ${facts.label} decides its layout from the cluster (${facts.clusterRule}; ${facts.release}): give the workload's sidecar constructs \`mode: SidecarMode.LEGACY\`, or change the cluster`
          : facts.nativeNeedsDefaultOn && p.layout === 'NATIVE'
            ? `the ${facts.label} injects natively only where the API server and every kubelet are 1.29+ (${facts.release}), and the target is 1.${target.minor}: ` +
            'target 1.29+, or give the workload\'s sidecar constructs `mode: SidecarMode.LEGACY`'
            : 'give the mesh construct and the sidecars the same mode';
    const text = `${p.owner}: the ${facts.label} ${facts.interceptsTraffic ? 'proxy' : 'container'} ${real.certain ? 'is' : 'may be'} injected in the legacy layout but ${nativeOwners} on ${where}: ${why}. ${fix[0].toUpperCase()}${fix.slice(1)}.`;
    if (real.certain) errors.push(text);
    else warnings.push(`${text} This construct cannot see the cluster: pass \`injectorLayout\` to say which layout it makes the ${facts.label} use.`);
  } else if (!real.certain && p.layout === 'LEGACY' && !defaultOn) {
    // The library's sidecars are legacy, as the target needs: a native injected container next
    // to them would be fine, but the OpenTelemetry operator and Kuma read only the API server's
    // version, and a kubelet older than it keeps a native sidecar as a blocking init container.
    warnings.push(
      `${p.owner}: the ${facts.label} decides its layout from the cluster (${facts.clusterRule}), not from the pod; the target is 1.${target.minor}, ` +
      `so where the API server is already 1.29+ it injects '${facts.proxyName}' as a native sidecar, which a kubelet below 1.28 (or 1.28 without the ` +
      `SidecarContainers gate) runs as a blocking init container: the pod of ${where} hangs in Init on those nodes. Upgrade every kubelet before the API server, ` +
      'or pass `injectorLayout` to WithMeshProxy once you know the layout it uses.',
    );
  }
  // Appended after every init container: the library's native sidecars start before its
  // redirect and are stopped after its proxy (reverse order of initContainers).
  if (real.layout === 'NATIVE' && !facts.nativeFirst && facts.interceptsTraffic && native.length > 0) {
    warnings.push(
      `${p.owner}: ${facts.label} appends '${facts.proxyName}' after every init container (${facts.release}), so ${nativeOwners} on ${where}, start before its ` +
      'redirect and are stopped after its proxy: with transparent proxy on, their connections at start-up and during the shutdown go to a proxy that is not ' +
      'running. Keep this workload legacy (`mode: SidecarMode.LEGACY` on its constructs and the mesh construct) or exclude their destinations from the redirect.',
    );
  }
}

/** A legacy injected container never exits: the Job or the completing pod never completes. */
function proxyCompletionFindings(pod: MeshedPod, p: InjectedProxy, facts: MeshFacts, real: InjectorLayout): void {
  const { where, manifest, completes, ownedByJob, errors, warnings } = pod;
  const exits = facts.legacyExits === 'ALWAYS' || (facts.legacyExits === 'JOB' && ownedByJob);
  if (!real.certain && real.layout === 'NATIVE' && completes && !p.allowLegacyOnJob && !exits) {
    warnings.push(
      `${p.owner}: the ${facts.label} decides its layout from the cluster (${facts.clusterRule}); where it injects '${facts.proxyName}' in the legacy layout, ` +
      `the container never exits and the ${manifest.kind === 'Pod' ? 'pod' : 'Job'} of ${where} never completes. Pass \`injectorLayout\` to say which layout it uses.`,
    );
  }
  if (real.layout === 'LEGACY' && completes && !p.allowLegacyOnJob && !exits) {
    errors.push(
      `${p.owner}: a legacy ${facts.label} ${facts.interceptsTraffic ? 'proxy' : 'container'} on ${where} never exits, so the ${manifest.kind === 'Pod' ? 'pod' : 'Job'} never completes. ` +
      (facts.layoutRule === 'LEGACY_ONLY'
        ? `The ${facts.label} injects in the legacy layout only: set \`allowLegacyOnJob: true\` if the app stops it itself` +
          (p.mesh === 'VAULT_AGENT' ? ' (or annotate the pod `vault.hashicorp.com/agent-pre-populate-only: "true"`: the init container only, no agent).' : '.')
        : 'Target Kubernetes 1.29+ (the proxy is then injected as a native sidecar), or set `allowLegacyOnJob: true` if the app stops the proxy itself.'),
    );
  }
}

/**
 * The names for `NATIVE_SIDECARS_ANNOTATION`: the native injected proxies and the library's
 * native sidecars, in `initContainers` order.
 */
export function nativeSidecarNames(proxies: InjectedProxy[], native: Json[], target: EngineTarget): string[] {
  // only those the injector will inject natively for certain (a guard must not refuse a pod for
  // a layout the cluster chose); first those it puts before every init container, last the appended ones
  if (proxies.length === 0) return native.map(nameOf);
  return [...nativeProxyNames(proxies, target, true), ...native.map(nameOf), ...nativeProxyNames(proxies, target, false)];
}

const nameOf = (c: Json): string => c.name;

function nativeProxyNames(proxies: InjectedProxy[], target: EngineTarget, first: boolean): string[] {
  return proxies
    .filter(p => MESH_FACTS[p.mesh].nativeFirst === first && injectorLayout(p, target).certain && injectorLayout(p, target).layout === 'NATIVE')
    .map(p => MESH_FACTS[p.mesh].proxyName);
}

/**
 * The stop times of the proxies a mesh injects at admission, as `name=Ns` entries of
 * STOP_TIMES_ANNOTATION: what `withInjectedContainers` gives the timeline, so that the timeline of
 * the admitted pod (`kubectl get pod -o yaml`) reads them back.
 */
export function injectedStopTimes(proxies: InjectedProxy[], target: EngineTarget, appShutdown: number): string[] {
  const out: string[] = [];
  for (const p of proxies) out.push(`${MESH_FACTS[p.mesh].proxyName}=${injectedStopSeconds(p, target, appShutdown)}s`);
  return out;
}

/** An injected proxy's stop time (legacy, the annotated injectors keep it alive for the app's shutdown too). */
function injectedStopSeconds(p: InjectedProxy, target: EngineTarget, appShutdown: number): number {
  return injectorLayout(p, target).layout === 'NATIVE' || !MESH_FACTS[p.mesh].interceptsTraffic ? p.stopSeconds : appShutdown + p.stopSeconds;
}

/**
 * The pod as the injectors will admit it, for the timeline: each injected container (a stand-in
 * with its name, no image of ours) where its injector puts it (native: before or after every init
 * container, `nativeFirst`; legacy: in `containers`), its stop time (legacy, the annotated
 * injectors keep it alive for the app's shutdown too: Istio, Linkerd, Consul, Kuma), and notes.
 */
export function withInjectedContainers(manifest: Json, proxies: InjectedProxy[], target: EngineTarget, appShutdown: number):
{ manifest: Json; stopSeconds: Record<string, number>; legacy: string[]; notes: string[] } {
  if (proxies.length === 0) return { manifest, stopSeconds: {}, legacy: [], notes: [] };
  const out: Json = structuredClone(manifest);
  const spec = podTemplateIn(out)?.spec;
  const stopSeconds: Record<string, number> = {};
  const legacy: string[] = [];
  const notes: string[] = [];
  for (const p of proxies) {
    const facts = MESH_FACTS[p.mesh];
    const real = injectorLayout(p, target);
    const c: Json = { name: facts.proxyName, image: `(injected by ${facts.label})` };
    if (spec === undefined) continue;
    if (real.layout === 'NATIVE') {
      c.restartPolicy = 'Always';
      const init: Json[] = spec.initContainers ?? [];
      spec.initContainers = facts.nativeFirst ? [c, ...init] : [...init, c];
    } else {
      spec.containers = [...(spec.containers ?? []), c];
      legacy.push(facts.proxyName);
    }
    stopSeconds[facts.proxyName] = injectedStopSeconds(p, target, appShutdown);
    notes.push(
      `'${facts.proxyName}' is injected by ${facts.label} at admission (${real.layout.toLowerCase()}${real.certain ? '' : ', if the cluster makes it so'}); ` +
      `shown where it puts it, with its stop time ${stopSeconds[facts.proxyName]}s`,
    );
  }
  return { manifest: out, stopSeconds, legacy, notes };
}
