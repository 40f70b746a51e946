/**
 * What six more admission webhooks do to a pod, written from their sources (not from this
 * library's code), so the engine's accounting for what they inject is tested against their real
 * behaviour. Each fact names its file and release; `cluster` stands for what the webhook reads
 * from the cluster (the API server's version, the nodes' kubelets, its own configuration).
 */
import { Injection } from './mesh-injection';

type Json = { [key: string]: any };

/** What the webhooks read from the cluster and their own configuration. */
export interface Cluster {
  /** The API server's minor version. */
  readonly apiServerMinor: number;
  /** The lowest kubelet minor version among the nodes. */
  readonly kubeletMinor: number;
  /** Kuma's control plane `experimental.sidecarContainers` (kuma-cp.defaults.yaml: true in v2.14.3). */
  readonly kumaSidecarContainers?: boolean;
}

/** Go's strconv.ParseBool (the accepted spellings), as the webhooks use it. */
function parseBool(value: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  throw new Error(`strconv.ParseBool: parsing "${value}": invalid syntax`);
}

/**
 * opentelemetry-operator v0.158.0
 * - internal/autodetect/main.go NativeSidecarSupport: API server version >= 1.29.0.
 * - pkg/sidecar/pod.go add(): native: restartPolicy Always, startupProbe = readinessProbe when
 *   absent, APPENDED to initContainers; else APPENDED to containers.
 * - internal/naming/main.go Container(): "otc-container"; collector/container.go: metrics port 8888.
 */
export function injectOtelOperator(_metadata: Json, spec: Json, cluster: Cluster, stopSeconds: number): Injection {
  const native = cluster.apiServerMinor >= 29;
  const c: Json = { name: 'otc-container', image: 'otel/opentelemetry-collector', ports: [{ containerPort: 4317 }, { containerPort: 8888 }] };
  if (native) c.restartPolicy = 'Always';
  return {
    spec: native
      ? { ...spec, initContainers: [...(spec.initContainers ?? []), c] }
      : { ...spec, containers: [...spec.containers, c] },
    native,
    proxyStopSeconds: stopSeconds,
    proxyPreStopSeconds: 0,
  };
}

/**
 * consul-k8s v2.0.3 control-plane/connect-inject
 * - webhook/mesh_webhook.go (single port): `consul-connect-inject-init` APPENDED to
 *   initContainers; the dataplane: lifecycle on and not as-sidecar: FIRST in containers;
 *   as-sidecar: APPENDED to initContainers; else appended to containers.
 * - lifecycle/lifecycle_configuration.go: enable-consul-dataplane-as-sidecar (ParseBool) over the
 *   chart default false (charts/consul/values.yaml dataplaneAsSidecarInitContainer.defaultEnabled);
 *   enable-sidecar-proxy-lifecycle over the chart default true; shutdown grace period seconds
 *   annotation over the chart default 30.
 * - webhook/consul_dataplane_sidecar.go: as-sidecar: restartPolicy Always, startupProbe
 *   `consul-dataplane -check-proxy-health`.
 */
export function injectConsul(metadata: Json, spec: Json): Injection {
  const a = metadata.annotations ?? {};
  const native = a['consul.hashicorp.com/enable-consul-dataplane-as-sidecar'] ? parseBool(a['consul.hashicorp.com/enable-consul-dataplane-as-sidecar']) : false;
  const lifecycle = a['consul.hashicorp.com/enable-sidecar-proxy-lifecycle'] ? parseBool(a['consul.hashicorp.com/enable-sidecar-proxy-lifecycle']) : true;
  const shutdown = Number(a['consul.hashicorp.com/sidecar-proxy-lifecycle-shutdown-grace-period-seconds'] ?? 30);
  const init: Json[] = [...(spec.initContainers ?? []), { name: 'consul-connect-inject-init', image: 'consul-k8s-control-plane' }];
  const dataplane: Json = { name: 'consul-dataplane', image: 'consul-dataplane', ports: [{ containerPort: 20200 }] };
  let containers: Json[] = [...spec.containers];
  if (native) {
    dataplane.restartPolicy = 'Always';
    dataplane.startupProbe = { exec: { command: ['/usr/local/bin/consul-dataplane', '-check-proxy-health'] } };
    init.push(dataplane);
  } else if (lifecycle) {
    containers = [dataplane, ...containers];
  } else {
    containers.push(dataplane);
  }
  return { spec: { ...spec, initContainers: init, containers }, native, proxyStopSeconds: shutdown, proxyPreStopSeconds: 0 };
}

/** Go's time.ParseDuration for the whole-second values used here ("30s"). */
function durationSeconds(value: string): number {
  const m = /^(\d+)s$/.exec(value);
  if (!m) throw new Error(`cannot parse duration '${value}'`);
  return Number(m[1]);
}

/**
 * kuma v2.14.3
 * - pkg/plugins/runtime/k8s/plugin.go: sidecar containers when the API server >= 1.29.0 and
 *   experimental.sidecarContainers.
 * - webhooks/injector/injector.go: sidecar containers: kuma-init then kuma-sidecar (restartPolicy
 *   Always, preStop `killall -USR2 kuma-dp`) PREPENDED to initContainers; else kuma-sidecar FIRST
 *   in containers, kuma-init APPENDED to initContainers.
 * - containers/factory.go: drain time from `kuma.io/sidecar-drain-time`, default 30s.
 * - app/kuma-dp/cmd/run.go: SIGUSR2 drains Envoy (DrainForever) and SIGTERM then exits at once;
 *   SIGTERM without it fails the health checks and waits the drain time.
 */
export function injectKuma(metadata: Json, spec: Json, cluster: Cluster): Injection {
  const a = metadata.annotations ?? {};
  const native = cluster.apiServerMinor >= 29 && (cluster.kumaSidecarContainers ?? true);
  const sidecar: Json = { name: 'kuma-sidecar', image: 'kuma-dp', ports: [{ containerPort: 9901 }] };
  const kumaInit = { name: 'kuma-init', image: 'kuma-init' };
  let init: Json[] = [...(spec.initContainers ?? [])];
  let containers: Json[] = [...spec.containers];
  // containers/factory.go: `kuma.io/wait-for-dataplane-ready` (true/yes/enabled, false/no/disabled;
  // default the control plane's waitForDataplaneReady: false) gives a postStart `kuma-dp wait`
  const wait = a['kuma.io/wait-for-dataplane-ready'] === undefined ? false : ['true', 'yes', 'enabled'].includes(a['kuma.io/wait-for-dataplane-ready']);
  if (wait) sidecar.lifecycle = { postStart: { exec: { command: ['kuma-dp', 'wait', '--url', 'http://localhost:9902/ready'] } } };
  if (native) {
    sidecar.restartPolicy = 'Always';
    sidecar.lifecycle = { ...(sidecar.lifecycle ?? {}), preStop: { exec: { command: ['killall', '-USR2', 'kuma-dp'] } } };
    init = [kumaInit, sidecar, ...init];
  } else {
    containers = [sidecar, ...containers];
    init = [...init, kumaInit];
  }
  const drain = a['kuma.io/sidecar-drain-time'] ? durationSeconds(a['kuma.io/sidecar-drain-time']) : 30;
  // app/kuma-dp/cmd/run.go: legacy, SIGTERM waits the drain time then exits; native, the preStop's
  // SIGUSR2 drained it already and SIGTERM exits at once
  return { spec: { ...spec, initContainers: init, containers }, native, proxyStopSeconds: native ? 0 : drain, proxyPreStopSeconds: 0 };
}

/**
 * gcs-fuse-csi-driver v1.24.4 pkg/webhook
 * - injection.go injectAsNativeSidecar: `gke-gcsfuse/enable-native-sidecar` (ParseBool, default
 *   true) AND supportsNativeSidecar (the API server and every node's kubelet >= 1.29.0, parsers.go).
 * - injection.go injectSidecarContainer: inserted at index 0 of initContainers (native) or
 *   containers (legacy), after `istio-proxy` when present (getInjectIndexAfterContainer).
 */
export function injectGcsFuse(metadata: Json, spec: Json, cluster: Cluster, stopSeconds: number): Injection {
  const a = metadata.annotations ?? {};
  const wanted = a['gke-gcsfuse/enable-native-sidecar'] === undefined ? true : parseBool(a['gke-gcsfuse/enable-native-sidecar']);
  const native = wanted && cluster.apiServerMinor >= 29 && cluster.kubeletMinor >= 29;
  const c: Json = { name: 'gke-gcsfuse-sidecar', image: 'gcs-fuse-csi-driver-sidecar-mounter' };
  const insertAfterIstio = (list: Json[]) => {
    const i = list.findIndex(x => x.name === 'istio-proxy');
    const at = i < 0 ? 0 : i + 1;
    return [...list.slice(0, at), c, ...list.slice(at)];
  };
  if (native) c.restartPolicy = 'Always';
  return {
    spec: native
      ? { ...spec, initContainers: insertAfterIstio(spec.initContainers ?? []) }
      : { ...spec, containers: insertAfterIstio(spec.containers) },
    native,
    proxyStopSeconds: stopSeconds,
    proxyPreStopSeconds: 0,
  };
}

/**
 * vault-k8s v1.7.6 agent-inject/agent/agent.go Patch: `vault-agent-init` APPENDED to
 * initContainers (first with agent-init-first), `vault-agent` APPENDED to containers (not with
 * agent-pre-populate-only). No restartPolicy in agent-inject/.
 */
export function injectVault(metadata: Json, spec: Json, stopSeconds: number): Injection {
  const a = metadata.annotations ?? {};
  const only = a['vault.hashicorp.com/agent-pre-populate-only'] ? parseBool(a['vault.hashicorp.com/agent-pre-populate-only']) : false;
  const init: Json[] = [...(spec.initContainers ?? []), { name: 'vault-agent-init', image: 'vault' }];
  const containers: Json[] = only ? [...spec.containers] : [...spec.containers, { name: 'vault-agent', image: 'vault' }];
  return { spec: { ...spec, initContainers: init, containers }, native: false, proxyStopSeconds: stopSeconds, proxyPreStopSeconds: 0 };
}

/**
 * DataDog/datadog-agent (main, 2026) pkg/clusteragent/admission/mutate/agent_sidecar/agent_sidecar.go
 * injectAgentSidecar: `datadog-agent-injected` APPENDED to containers; no restartPolicy.
 */
export function injectDatadog(_metadata: Json, spec: Json, stopSeconds: number): Injection {
  return {
    spec: { ...spec, containers: [...spec.containers, { name: 'datadog-agent-injected', image: 'datadog/agent' }] },
    native: false,
    proxyStopSeconds: stopSeconds,
    proxyPreStopSeconds: 0,
  };
}

/**
 * dapr v1.18.3 (dapr#9450, first in v1.18.0), pkg/injector:
 * - patcher/sidecar.go: `dapr.io/enable-native-sidecar` (a bool annotation) over the control plane's
 *   NATIVE_SIDECAR_ENABLED (service/config.go, IsTruthy of an unset value: false); before v1.18 the
 *   annotation does not exist (legacy always).
 * - patcher/sidecar_patcher.go: native, `daprd` APPENDED to initContainers ("/-"); else to containers.
 * - patcher/sidecar_container.go: native, restartPolicy Always; readiness and liveness probes, no
 *   startupProbe; `--dapr-graceful-shutdown-seconds` from `dapr.io/graceful-shutdown-seconds`
 *   (default -1: daprd's 5 s, pkg/runtime/config.go DefaultGracefulShutdownDuration).
 */
export function injectDapr(metadata: Json, spec: Json, release: [number, number] = [1, 18], controlPlaneNative = false): Injection {
  const a = metadata.annotations ?? {};
  const reads = release[0] > 1 || release[1] >= 18;
  const flag = reads ? a['dapr.io/enable-native-sidecar'] : undefined;
  const native = reads && (flag === undefined ? controlPlaneNative : parseBool(flag));
  const grace = Number(a['dapr.io/graceful-shutdown-seconds'] ?? -1);
  const daprd: Json = { name: 'daprd', image: 'daprio/daprd', ports: [{ containerPort: 3500 }, { containerPort: 50001 }], readinessProbe: { httpGet: { path: '/v1.0/healthz', port: 3501 } } };
  if (native) daprd.restartPolicy = 'Always';
  return {
    spec: native
      ? { ...spec, initContainers: [...(spec.initContainers ?? []), daprd] }
      : { ...spec, containers: [...spec.containers, daprd] },
    native,
    proxyStopSeconds: grace < 0 ? 5 : grace,
    proxyPreStopSeconds: 0,
  };
}
