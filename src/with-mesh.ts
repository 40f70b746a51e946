import { ApiObject, Duration } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { RenderedSidecar, WorkloadBinding, workloadApiObject } from './binding';
import { InjectedProxy, MESH_FACTS } from './engine/injected';
import { checkBoolean, checkString, copyData, describeValue, durationSeconds, isPropsObject, positiveSeconds } from './private/checks';
import { TargetReader, checkSameApp } from './private/target-reader';
import { SidecarTargetOptions } from './settings';
import { SidecarLayout, formatVersion } from './target';
import { graceWrittenByDefault } from './workload-defaults';

/**
 * A service mesh that injects its proxy into pods at admission.
 */
export enum Mesh {
  /**
   * Istio (sidecar mode). The per-pod layout annotation `sidecar.istio.io/nativeSidecar` is
   * honoured from Istio 1.24.
   */
  ISTIO = 'ISTIO',
  /**
   * Linkerd. The per-pod layout annotation `config.alpha.linkerd.io/proxy-enable-native-sidecar`
   * is honoured from Linkerd 2.15 (edge-23.11.4).
   */
  LINKERD = 'LINKERD',
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

  /** The mesh whose injector adds the proxy. */
  readonly mesh: Mesh;

  /**
   * How long the app takes to shut down after SIGTERM (as on the sidecar constructs: the
   * workload's largest value counts). Legacy layout: the proxy is kept alive this long
   * (Istio `terminationDrainDuration`, Linkerd `proxy-wait-before-exit-seconds`).
   * @default Duration.seconds(10)
   */
  readonly appShutdownTime?: Duration;

  /**
   * How long the proxy needs after SIGTERM to drain and exit: Istio's
   * `terminationDrainDuration`, Linkerd's `shutdown-grace-period`. Written into the pod's
   * annotations and counted toward `terminationGracePeriodSeconds`.
   * @default Duration.seconds(5) - Istio's default terminationDrainDuration
   */
  readonly proxyStopTime?: Duration;

  /**
   * Start the app only once the proxy is ready. Native layout: the proxy is an init container
   * whose startupProbe holds the app (Linkerd needs `proxy-await` for that probe). Legacy: Istio's
   * `holdApplicationUntilProxyStarts`, Linkerd's `proxy-await` (the proxy first in
   * `containers`, with a blocking postStart).
   * @default true
   */
  readonly holdApplication?: boolean;

  /**
   * Accept a legacy proxy on a Job or CronJob. A legacy proxy never exits, so the pod never
   * completes unless the app stops it (Istio's `/quitquitquit`, Linkerd's `/shutdown`).
   * @default false
   */
  readonly allowLegacyOnJob?: boolean;
}

const DEFAULT_APP_SHUTDOWN_SECONDS = 10;
const DEFAULT_PROXY_STOP_SECONDS = 5;

/**
 * Declares that a mesh (Istio or Linkerd) injects its proxy into a workload's pods, and makes
 * the injector follow the same native/legacy decision as this library's sidecars.
 *
 * It writes the mesh's per-pod annotations from the resolved target (native where the
 * library's sidecars are native, legacy otherwise, plus the startup hold and the drain time),
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
  /** The name of the container the injector adds (`istio-proxy`, `linkerd-proxy`). */
  public readonly proxyContainerName: string;

  private readonly props: WithMeshProxyProps;
  private readonly target: TargetReader;
  private readonly appShutdownSeconds: number;
  private readonly stopSeconds: number;

  constructor(scope: Construct, id: string, props: WithMeshProxyProps) {
    super(scope, id);
    const who = this.describe();
    if (!isPropsObject(props)) throw new Error(`${who}: the props ${describeValue(props)} are not an object; give e.g. { workload, mesh: Mesh.ISTIO }.`);
    // a copy, read at synthesis too: a props object changed afterwards changes nothing here
    props = copyData(props);
    for (const flag of ['sidecarContainersGate', 'holdApplication', 'allowLegacyOnJob'] as const) checkBoolean(who, flag, props[flag]);
    checkString(who, 'kubernetesVersion', props.kubernetesVersion, "'1.29'");
    if (!Object.values(Mesh).includes(props.mesh)) {
      throw new Error(`${who}: mesh '${props.mesh}' is not supported; use Mesh.ISTIO or Mesh.LINKERD.`);
    }
    this.props = props;
    this.mesh = props.mesh;
    this.proxyContainerName = MESH_FACTS[props.mesh].proxyName;
    this.appShutdownSeconds = durationSeconds(who, 'appShutdownTime', props.appShutdownTime, DEFAULT_APP_SHUTDOWN_SECONDS);
    this.stopSeconds = positiveSeconds(who, 'proxyStopTime', props.proxyStopTime, DEFAULT_PROXY_STOP_SECONDS, 'the proxy needs time to drain');
    this.workloadObject = workloadApiObject(who, props.workload);
    checkSameApp(who, this, this.workloadObject);
    this.target = new TargetReader(this, props, () => this.describe());
    // An explicit version is checked at once; inherited ones at synthesis.
    this.target.resolved();
    // the same "written by default" rule as the sidecar constructs (src/workload-defaults.ts)
    WorkloadBinding.of(this.workloadObject, { graceWrittenByDefault: graceWrittenByDefault(props.workload) })
      .add({ node: this.node, renderSidecar: () => this.render() });
  }

  /**
   * The layout the injector is told to use, resolved from the target like a sidecar's.
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
    };
    return { injected, minor: target.version.minor, patch: target.version.patch, gate: target.gate };
  }
}
