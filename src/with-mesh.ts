import { ApiObject, Duration } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { RenderedSidecar, WorkloadBinding, workloadApiObject } from './bind/binding';
import { checkBoolean, checkString, describeValue, durationSeconds, isPropsObject, positiveSeconds, snapshot } from './bind/checks';
import { TargetReader, checkSameApp } from './bind/target-reader';
import { graceWrittenByDefault, processNamespaceWrittenByDefault } from './bind/workload-defaults';
import { InjectedProxy, MESH_FACTS } from './engine/injected';
import { Where } from './private/errors';
import { SidecarLayout, formatVersion, parseRelease } from './target/capabilities';
import { SidecarTargetOptions } from './target/resolver';

/**
 * A service mesh, operator or driver whose admission webhook injects a sidecar into pods.
 * Each value names the release whose source its facts were read in (docs/meshes.md).
 */
export enum Mesh {
  /**
   * Istio (sidecar mode). The per-pod layout annotation `sidecar.istio.io/nativeSidecar` is
   * honoured from Istio 1.24.
   */
  ISTIO = 'ISTIO',
  /**
   * Linkerd. The per-pod layout annotation `config.linkerd.io/proxy-enable-native-sidecar` is
   * read from Linkerd 2.20; before, from 2.15 (edge-23.11.4), the deprecated
   * `config.alpha.linkerd.io/proxy-enable-native-sidecar`. The library writes both names without
   * `meshRelease` (2.20 gives the current one precedence), only the alpha one below 2.20.
   */
  LINKERD = 'LINKERD',
  /**
   * The OpenTelemetry operator's collector sidecar (`otc-container`; opentelemetry-operator
   * v0.158.0). Native when the API server is 1.29+, appended after every init container; no
   * per-pod layout annotation (say the cluster's with `injectorLayout` below 1.29).
   */
  OPENTELEMETRY_OPERATOR = 'OPENTELEMETRY_OPERATOR',
  /**
   * Consul's `consul-dataplane` (consul-k8s v2.0.3). The per-pod layout annotation
   * `consul.hashicorp.com/enable-consul-dataplane-as-sidecar` is honoured from consul-k8s 1.9.0.
   */
  CONSUL = 'CONSUL',
  /**
   * Kuma's `kuma-sidecar` (kuma v2.14.3). Native when the API server is 1.29+ and the control
   * plane sets `experimental.sidecarContainers` (default from Kuma 2.14); no per-pod layout annotation.
   */
  KUMA = 'KUMA',
  /**
   * The GKE Cloud Storage FUSE CSI driver's `gke-gcsfuse-sidecar` (gcs-fuse-csi-driver v1.24.4).
   * The annotation `gke-gcsfuse/enable-native-sidecar` can ask for legacy; native needs the API
   * server and every kubelet at 1.29+.
   */
  GCS_FUSE = 'GCS_FUSE',
  /** The Vault agent injector's `vault-agent` (vault-k8s v1.7.6): legacy layout only. */
  VAULT_AGENT = 'VAULT_AGENT',
  /**
   * Datadog's admission controller agent sidecar `datadog-agent-injected`: legacy layout only.
   * Read in DataDog/datadog-agent's main branch (2026), not at a release tag: the repository is too
   * large to fetch here; recheck at the agent release you run.
   */
  DATADOG = 'DATADOG',
  /**
   * Dapr's `daprd` (dapr v1.18.3). The per-pod layout annotation `dapr.io/enable-native-sidecar`
   * is read from Dapr 1.18.0 (dapr#9450); its native `daprd` is APPENDED after every init container
   * (started last, stopped first among the native sidecars). Before 1.18 (`meshRelease`) always legacy.
   */
  DAPR = 'DAPR',
}

/**
 * Props of `WithMeshProxy`.
 */
export interface WithMeshProxyProps extends SidecarTargetOptions {
  /**
   * The workload the mesh injects its proxy into: a Deployment, StatefulSet, DaemonSet,
   * Job, CronJob or Pod of any cdk8s-plus major (27 to 34), or an `ApiObject` of one of those kinds or a ReplicaSet.
   */
  readonly workload: IConstruct;

  /** The mesh (or operator, or driver) whose injector adds the proxy. */
  readonly mesh: Mesh;

  /**
   * The layout the cluster makes the injector use, for the injectors that decide it from the
   * cluster and not from the pod: `Mesh.OPENTELEMETRY_OPERATOR` (native when the API server is
   * 1.29+) and `Mesh.KUMA` (also its control plane's `experimental.sidecarContainers`). With it
   * the engine refuses a layout mix for certain; without it, it warns where the pod's layout
   * depends on the cluster. Refused for the other meshes (their layout is written per pod, or is
   * always legacy).
   * @default - unknown: warnings where the outcome depends on the cluster
   */
  readonly injectorLayout?: SidecarLayout;

  /**
   * How long the app takes to shut down after SIGTERM (as on the sidecar constructs: the
   * workload's largest value counts). Legacy layout: the proxy is kept alive this long
   * (Istio `terminationDrainDuration`, Linkerd `proxy-wait-before-exit-seconds`).
   * @default Duration.seconds(10)
   */
  readonly appShutdownTime?: Duration;

  /**
   * How long the proxy needs after SIGTERM to drain and exit: Istio's
   * `terminationDrainDuration`, Linkerd's `shutdown-grace-period`, Consul's
   * `sidecar-proxy-lifecycle-shutdown-grace-period-seconds`, Kuma's `sidecar-drain-time` (those
   * written into the pod's annotations); for the injectors without such an annotation
   * (OpenTelemetry operator, GCS FUSE, Vault, Datadog) only counted. Always counted toward
   * `terminationGracePeriodSeconds`.
   * @default Duration.seconds(5) - Istio's default terminationDrainDuration
   */
  readonly proxyStopTime?: Duration;

  /**
   * Start the app only once the proxy is ready. Native layout: the proxy is an init container
   * whose startupProbe holds the app (Linkerd needs `proxy-await` for that probe). Legacy: Istio's
   * `holdApplicationUntilProxyStarts`, Linkerd's `proxy-await` (the proxy first in
   * `containers`, with a blocking postStart); Kuma's `kuma.io/wait-for-dataplane-ready` (a
   * blocking postStart in both layouts). The other injectors read no such annotation (Consul puts
   * its legacy dataplane first in `containers` with no blocking hook: consul-k8s v2.0.3
   * consul_dataplane_sidecar.go; its native one has a startupProbe).
   * @default true
   */
  readonly holdApplication?: boolean;

  /**
   * Accept a legacy proxy on a Job or CronJob. A legacy proxy never exits, so the pod never
   * completes unless the app stops it (Istio's `/quitquitquit`, Linkerd's `/shutdown`).
   * @default false
   */
  readonly allowLegacyOnJob?: boolean;

  /**
   * The injector's release (`'2.19'`, `'1.17'`, a major.minor), where the annotations it reads
   * changed: Linkerd reads `config.linkerd.io/proxy-enable-native-sidecar` from 2.20 and the
   * deprecated `config.alpha.linkerd.io/...` name from 2.15 (the library writes both when this is
   * not given, the alpha one alone below 2.20, the current one alone from 2.20); Dapr
   * reads `dapr.io/enable-native-sidecar` from 1.18 (older: always legacy, which the engine then
   * checks like Vault's). Ignored by the other meshes.
   * @default - Linkerd: any release from 2.15 (both names); Dapr 1.18
   */
  readonly meshRelease?: string;
}

const DEFAULT_APP_SHUTDOWN_SECONDS = 10;
const DEFAULT_PROXY_STOP_SECONDS = 5;

/**
 * Declares that an injector (Istio, Linkerd, Consul, Kuma, the OpenTelemetry operator, GKE Cloud
 * Storage FUSE, the Vault agent injector, Datadog) adds its sidecar to a workload's pods, and
 * makes it follow the same native/legacy decision as this library's sidecars where it can be told.
 *
 * It writes the injector's per-pod annotations from the resolved target (native where the
 * library's sidecars are native, legacy otherwise, plus the startup hold and the drain time),
 * refuses a pod whose injected sidecar would run in the legacy layout next to native sidecars
 * (and warns where that depends on the cluster),
 * and the engine accounts for the proxy it cannot see: its ports in the collision checks, its
 * stop time in `terminationGracePeriodSeconds`, its place in the pod (native: before every
 * other init container, so it starts first and stops last).
 *
 * @example
 * new WithMeshProxy(chart, 'mesh', { workload: deployment, mesh: Mesh.ISTIO });
 */
export class WithMeshProxy extends Construct {
  /** The mesh. */
  public readonly mesh: Mesh;
  /** The ApiObject whose pod template receives the annotations. */
  public readonly workloadObject: ApiObject;
  /** The name of the container the injector adds (`istio-proxy`, `linkerd-proxy`, `consul-dataplane`, ...). */
  public readonly proxyContainerName: string;

  private readonly props: WithMeshProxyProps;
  private readonly target: TargetReader;
  private readonly appShutdownSeconds: number;
  private readonly stopSeconds: number;
  private readonly meshRelease?: [number, number];

  constructor(scope: Construct, id: string, props: WithMeshProxyProps) {
    super(scope, id);
    const who = new Where(this.describe());
    // a copy, each prop read once, read at synthesis too: a props object changed afterwards changes nothing here
    props = snapshot(props);
    if (!isPropsObject(props)) throw who.error(`the props ${describeValue(props)} are not an object`, props, 'give e.g. { workload, mesh: Mesh.ISTIO }');
    for (const flag of ['sidecarContainersGate', 'overrideAppTarget', 'holdApplication', 'allowLegacyOnJob'] as const) checkBoolean(who, flag, props[flag]);
    checkString(who, 'kubernetesVersion', props.kubernetesVersion, "'1.29'");
    if (!Object.values(Mesh).includes(props.mesh)) {
      throw who.error(`mesh ${describeValue(props.mesh)} is not supported`, props.mesh, `use one of ${Object.values(Mesh).map(m => `Mesh.${m}`).join(', ')}`);
    }
    if (props.injectorLayout !== undefined) {
      if (!Object.values(SidecarLayout).includes(props.injectorLayout)) {
        throw who.error(`injectorLayout ${describeValue(props.injectorLayout)} is not a SidecarLayout`, props.injectorLayout, 'use SidecarLayout.NATIVE or SidecarLayout.LEGACY');
      }
      if (MESH_FACTS[props.mesh].layoutRule !== 'CLUSTER') {
        throw who.error(
          'injectorLayout is only for meshes that decide their layout from the cluster (Mesh.OPENTELEMETRY_OPERATOR, Mesh.KUMA); ' +
          `Mesh.${props.mesh} ${MESH_FACTS[props.mesh].layoutRule === 'LEGACY_ONLY' ? 'is always legacy' : 'follows the annotation this construct writes'}`,
          props.injectorLayout, 'remove injectorLayout', ': ',
        );
      }
    }
    checkString(who, 'meshRelease', props.meshRelease, "'2.19'");
    if (props.meshRelease !== undefined) this.meshRelease = parseMeshRelease(who, props.meshRelease);
    this.props = props;
    this.mesh = props.mesh;
    this.proxyContainerName = MESH_FACTS[props.mesh].proxyName;
    this.appShutdownSeconds = durationSeconds(who, 'appShutdownTime', props.appShutdownTime, DEFAULT_APP_SHUTDOWN_SECONDS);
    this.stopSeconds = positiveSeconds(who, 'proxyStopTime', props.proxyStopTime, DEFAULT_PROXY_STOP_SECONDS, 'the proxy needs time to drain');
    this.workloadObject = workloadApiObject(who, props.workload);
    checkSameApp(who, this, this.workloadObject);
    this.target = new TargetReader(this, props, () => new Where(this.describe()));
    // An explicit version is checked at once; inherited ones at synthesis.
    this.target.resolved();
    // the same "written by default" rule as the sidecar constructs (src/bind/workload-defaults.ts)
    WorkloadBinding.of(this.workloadObject, {
      graceWrittenByDefault: graceWrittenByDefault(props.workload),
      processNamespaceWrittenByDefault: processNamespaceWrittenByDefault(props.workload),
    })
      .add({ node: this.node, renderSidecar: () => this.render() });
  }

  /**
   * The layout the injector is told to use, resolved from the target like a sidecar's. Injectors
   * that cannot be told per pod (Vault and Datadog: legacy only; Kuma and the OpenTelemetry
   * operator: the cluster decides) may use another one: the engine refuses or warns about the mix.
   *
   * Reading it fixes it, as for a sidecar. Throws when the target cannot run the requested mode.
   */
  public get layout(): SidecarLayout {
    return this.target.layout();
  }

  /** The Kubernetes minor version this construct targets, e.g. `1.29`. */
  public get targetVersion(): string {
    return formatVersion(this.target.resolved().version);
  }

  private describe(): string {
    return `WithMeshProxy '${this.node.path}'`;
  }

  private render(): RenderedSidecar {
    const target = this.target.atSynthesis();
    const injected: InjectedProxy = {
      owner: this.describe(),
      mesh: this.mesh,
      layout: target.decision.layout!,
      stopSeconds: this.stopSeconds,
      appShutdownSeconds: this.appShutdownSeconds,
      holdApplication: this.props.holdApplication ?? true,
      allowLegacyOnJob: this.props.allowLegacyOnJob ?? false,
      ...(this.props.injectorLayout !== undefined ? { declaredLayout: this.props.injectorLayout } : {}),
      ...(this.meshRelease !== undefined ? { meshRelease: this.meshRelease } : {}),
    };
    return { injected, minor: target.version.minor, patch: target.version.patch, gate: target.gate };
  }
}

/** `meshRelease`: a major.minor such as '2.19' or 'v1.17' (a patch is accepted and ignored). */
function parseMeshRelease(who: Where, raw: string): [number, number] {
  const v = parseRelease(raw);
  if (!v) throw who.error(`meshRelease '${raw}' is not a release`, raw, "give the injector's major.minor, e.g. '2.19' (Linkerd) or '1.17' (Dapr)");
  return [v.major, v.minor];
}
