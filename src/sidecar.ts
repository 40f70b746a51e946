import { createHash } from 'crypto';
import { ApiObject, Chart, Duration } from 'cdk8s';
import { ContainerResources } from 'cdk8s-plus-27';
import { Construct, IConstruct } from 'constructs';
import { RenderedSidecar, SidecarSource, WorkloadBinding, workloadApiObject } from './binding';
import { KUBERNETES_DEFAULT_GRACE_SECONDS } from './engine/shutdown';
import { AgentSpec, Json, SidecarSpec } from './engine/spec';
import { ResolvedTarget, SidecarTargetOptions, resolveTarget } from './settings';
import { SidecarLayout, formatVersion } from './target';

/**
 * Props shared by every sidecar construct.
 */
export interface SidecarProps extends SidecarTargetOptions {
  /**
   * The workload to attach the sidecar to: a cdk8s-plus-27 Deployment, StatefulSet, DaemonSet,
   * Job, CronJob or Pod, or any cdk8s `ApiObject` of one of those kinds, a ReplicaSet or a ReplicationController
   * (a raw `KubeDeployment`, objects from `Include` or `Helm`).
   */
  readonly workload: IConstruct;

  /**
   * Name of the sidecar container: a DNS-1123 label of at most 53 characters, so that the volume
   * names derived from it (`<containerName>-config`, `-logs`, `-tmp`, `-tls`, `-client-ca`) are
   * DNS-1123 labels of at most 63 characters too, as the API server requires.
   * @default - the construct's own default, e.g. 'log-agent'
   */
  readonly containerName?: string;

  /**
   * Resource requests and limits of the sidecar container.
   * @default - small requests and limits of the agent's own (not cdk8s-plus's 1 CPU / 512Mi)
   */
  readonly resources?: ContainerResources;

  /**
   * How long the app takes to shut down after SIGTERM. The kubelet runs the app container's own
   * `preStop` hook first and sends SIGTERM after it: a hook whose duration can be read (the
   * `sleep` action, or an exec of exactly `sleep N` / `/bin/sleep N`) is added to this. For any
   * other hook (an exec of another program, `httpGet`) this must cover the hook AND the app's
   * shutdown after it; leaving it unset then is an error. Legacy layout: the sidecars'
   * `preStop` delay keeps them alive until then. Native layout: the share of the grace period
   * the app gets before the sidecars are stopped. Counts toward `terminationGracePeriodSeconds`;
   * a workload's own grace period above what the sidecars need is given to the app too.
   * @default Duration.seconds(10)
   */
  readonly appShutdownTime?: Duration;

  /**
   * How long each of the workload's OWN native sidecars (init containers with `restartPolicy:
   * Always` that are not this library's) takes from SIGTERM to its exit. From Kubernetes 1.29
   * they are stopped before the library's native sidecars, which wait for them; the library
   * cannot read it from the manifest, so with such sidecars and a native sidecar of the
   * library's on 1.29+ it is required. Counted once per such sidecar in
   * `terminationGracePeriodSeconds`.
   * @default - none: an error when the workload has native sidecars of its own (1.29+)
   */
  readonly userSidecarStopTime?: Duration;

  /**
   * Accept a legacy sidecar on a Job or CronJob. A legacy sidecar never exits, so the pod never
   * completes unless the app stops the sidecar itself; without this flag that is an error.
   * @default false
   */
  readonly allowLegacyOnJob?: boolean;
}

/** Defaults shared by all agents. @internal */
const DEFAULT_APP_SHUTDOWN_SECONDS = 10;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Volume names are `<containerName><suffix>`, and the API server requires each to be a DNS-1123
 * label of at most 63 characters (kubernetes pkg/apis/core/validation/validation.go,
 * ValidateVolumes). The longest suffix is WithEnvoy's `-client-ca`.
 */
const MAX_CONTAINER_NAME_LENGTH = 63 - '-client-ca'.length;

/**
 * The base of every sidecar construct: target resolution, workload binding, the config
 * ConfigMap and the checks every agent shares. Subclasses describe their agent as data.
 */
export abstract class SidecarBase extends Construct {
  /**
   * The name of the sidecar container.
   */
  public readonly containerName: string;

  /**
   * The ApiObject whose pod template receives the sidecar.
   */
  public readonly workloadObject: ApiObject;

  /** @internal */
  protected readonly _props: SidecarProps;

  /**
   * The agent as data (what the layout and target do not decide). Each construct sets it at
   * the end of its constructor.
   * @internal
   */
  protected _agent?: AgentSpec;

  /** The rendered sidecar per resolved target (the target is resolved anew at every synthesis). */
  private readonly rendered = new Map<string, RenderedSidecar>();

  protected constructor(scope: Construct, id: string, props: SidecarProps, private readonly defaultContainerName: string) {
    super(scope, id);
    this._props = props;
    this.containerName = props.containerName ?? this.defaultContainerName;
    this.workloadObject = workloadApiObject(this.describe(), props.workload);
    checkDnsLabel(this.describe(), 'containerName', this.containerName, MAX_CONTAINER_NAME_LENGTH);
    // An explicit version is checked at once; inherited ones at synthesis.
    this.resolved();
    const source: SidecarSource = { node: this.node, renderSidecar: () => this.renderSidecar() };
    // cdk8s-plus-27 writes terminationGracePeriodSeconds: 30 when its prop is unset, so on its
    // workloads 30 means "unset" and is raised when the sidecars need more.
    const isKplus = !ApiObject.isApiObject(props.workload);
    WorkloadBinding.of(this.workloadObject, { graceWrittenByDefault: isKplus ? KUBERNETES_DEFAULT_GRACE_SECONDS : undefined }).add(source);
  }

  /**
   * The layout this sidecar is emitted in, resolved from the target (read at synthesis, so
   * `Sidecars.configure()` and `CDK8S_SIDECARS_KUBERNETES_VERSION` count whenever they are set).
   * Throws when the target cannot run the requested mode.
   */
  public get layout(): SidecarLayout {
    const t = this.resolved();
    if (t.decision.error !== undefined) throw new Error(`${this.describe()}: ${t.decision.error}`);
    return t.decision.layout;
  }

  /**
   * The Kubernetes minor version this sidecar targets, e.g. `1.29`.
   */
  public get targetVersion(): string {
    return formatVersion(this.resolved().version);
  }

  /**
   * How messages name this construct, e.g. `WithLogAgent 'chart/logs'`.
   */
  protected describe(): string {
    return `${this.constructor.name} '${this.node.path}'`;
  }

  private resolved(): ResolvedTarget {
    return resolveTarget(this, this._props);
  }

  private renderSidecar(): RenderedSidecar {
    const target = this.resolved();
    if (target.decision.error !== undefined) {
      throw new Error(`${this.describe()}: ${target.decision.error}`);
    }
    const key = `${target.version.minor}|${target.version.patch}|${target.gate}|${target.decision.layout}`;
    const cached = this.rendered.get(key);
    if (cached) return cached;
    if (!this._agent) throw new Error(`${this.describe()}: the construct did not describe its agent`);
    const spec: SidecarSpec = {
      ...this._agent,
      // whether appShutdownTime was given, and the user's own native sidecars' stop time (src/engine/shutdown.ts)
      shutdown: {
        ...this._agent.shutdown,
        appShutdownGiven: this._props.appShutdownTime !== undefined,
        userSidecarStopSeconds: this.userSidecarStopSeconds(),
      },
      owner: this.describe(),
      kind: this.constructor.name,
      layout: target.decision.layout,
      allowLegacyOnJob: this._props.allowLegacyOnJob ?? false,
    };
    const rendered = { spec, minor: target.version.minor, patch: target.version.patch, gate: target.gate };
    this.rendered.set(key, rendered);
    return rendered;
  }

  /**
   * The app's shutdown time in seconds (`appShutdownTime`, validated).
   */
  protected appShutdownSeconds(): number {
    return durationSeconds(this.describe(), 'appShutdownTime', this._props.appShutdownTime, DEFAULT_APP_SHUTDOWN_SECONDS);
  }

  /** `userSidecarStopTime` in seconds (validated), or undefined when not given. */
  private userSidecarStopSeconds(): number | undefined {
    const t = this._props.userSidecarStopTime;
    return t === undefined ? undefined : durationSeconds(this.describe(), 'userSidecarStopTime', t, 0);
  }

  /**
   * Creates the ConfigMap that holds the agent's generated config, in the workload's
   * namespace. Returns its name and a checksum annotation that rolls the pods on change.
   * @internal
   */
  protected _configMap(data: Record<string, string>): SidecarConfig {
    const sorted: Record<string, string> = {};
    for (const k of Object.keys(data).sort()) sorted[k] = data[k];
    const namespace = this.workloadObject.metadata.namespace;
    const chartNamespace = Chart.of(this).namespace;
    if (namespace === undefined && chartNamespace !== undefined) {
      // cdk8s would put the ConfigMap into this construct's chart's namespace, where the pod cannot mount it.
      throw new Error(
        `${this.describe()}: the workload '${this.workloadObject.node.path}' has no namespace, but this construct's chart puts ` +
        `objects into namespace '${chartNamespace}', so the agent's ConfigMap would not be in the pod's namespace. ` +
        "Create the construct in the workload's chart, or give the workload a namespace.",
      );
    }
    const cm = new ApiObject(this, 'config', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: namespace ? { namespace } : {},
      data: sorted,
    });
    const checksum = createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
    return {
      name: cm.name,
      annotations: { [`checksum.sidecars.cdk8s.io/${this.containerName}`]: checksum },
    };
  }

  /** Renders the resources prop, falling back to the agent's defaults. @internal */
  protected _resources(defaults: { cpuRequest: string; cpuLimit: string; memoryRequest: string; memoryLimit: string }): Json {
    const who = this.describe();
    const r = this._props.resources;
    const memory = (size: any, prop: string, fallback: string) => {
      if (!size) return fallback;
      try {
        return `${size.toMebibytes()}Mi`;
      } catch {
        throw new Error(`${who}: resources.memory.${prop} ${size.toKibibytes()}Ki is not a whole number of mebibytes; use e.g. Size.mebibytes(64).`);
      }
    };
    const out = {
      limits: {
        cpu: r?.cpu?.limit?.amount ?? defaults.cpuLimit,
        memory: memory(r?.memory?.limit, 'limit', defaults.memoryLimit),
      },
      requests: {
        cpu: r?.cpu?.request?.amount ?? defaults.cpuRequest,
        memory: memory(r?.memory?.request, 'request', defaults.memoryRequest),
      },
    };
    // The API server rejects a request above its limit, also when one of them is the default.
    for (const [resource, given] of [['cpu', r?.cpu], ['memory', r?.memory]] as const) {
      const request: string = (out.requests as any)[resource];
      const limit: string = (out.limits as any)[resource];
      if (quantity(request) > quantity(limit)) {
        const dflt = (x: unknown) => (x === undefined ? ' (the default)' : '');
        throw new Error(
          `${who}: resources.${resource} request ${request}${dflt(given?.request)} is above the limit ${limit}${dflt(given?.limit)}, ` +
          `which the API server rejects; set resources.${resource}.limit to at least ${request}, or a smaller resources.${resource}.request.`,
        );
      }
    }
    return out;
  }
}

/** @internal */
export interface SidecarConfig {
  readonly name: string;
  readonly annotations: Record<string, string>;
}

/** @internal */
export function checkDnsLabel(who: string, prop: string, value: string, maxLength = 63): void {
  if (value.length > maxLength || !DNS_LABEL.test(value)) {
    const why = maxLength < 63 && value.length > maxLength && DNS_LABEL.test(value)
      ? ` is ${value.length} characters; names derived from it (volumes '<${prop}>-client-ca' and the like) must fit in 63, so`
      : ' is not a valid DNS-1123 label;';
    throw new Error(
      `${who}: ${prop} '${value}'${why} use at most ${maxLength} lower-case letters, digits ` +
      "and '-', starting and ending with a letter or digit (e.g. 'log-agent').",
    );
  }
}

/** @internal */
export function checkPort(who: string, prop: string, value: number): void {
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    throw new Error(`${who}: ${prop} ${value} is not a valid port; use an integer from 1 to 65535.`);
  }
}

/**
 * A port an agent listens on: it runs as non-root without NET_BIND_SERVICE, so it cannot bind
 * below 1024 (unless the runtime lowers `ip_unprivileged_port_start`, which containerd 1.x does
 * not do by default).
 * @internal
 */
export function checkListenPort(who: string, prop: string, value: number): void {
  checkPort(who, prop, value);
  if (value < 1024) {
    throw new Error(`${who}: ${prop} ${value} is below 1024, which the agent (non-root, without NET_BIND_SERVICE) cannot bind; use a port from 1024 up.`);
  }
}

/** A CPU ('500m', '1', '0.5') or memory ('64Mi') quantity as a number, for comparisons. */
function quantity(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(m|Mi)?$/.exec(q);
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === 'm' ? 1 : m[2] === 'Mi' ? 1 : 1000);
}

/** @internal */
export function durationSeconds(who: string, prop: string, d: Duration | undefined, fallback: number): number {
  if (d === undefined) return fallback;
  const s = d.toSeconds({ integral: false });
  if (!Number.isFinite(s) || s < 0 || !Number.isInteger(s)) {
    throw new Error(`${who}: ${prop} ${s}s is not a whole, non-negative number of seconds; use e.g. Duration.seconds(10).`);
  }
  return s;
}

/**
 * `durationSeconds` for a time that must be at least 1 second; `why` ends the message.
 * @internal
 */
export function positiveSeconds(who: string, prop: string, d: Duration | undefined, fallback: number, why?: string): number {
  const s = durationSeconds(who, prop, d, fallback);
  if (s < 1) throw new Error(`${who}: ${prop} must be at least 1 second (got ${s}s)${why ? `; ${why}` : ''}.`);
  return s;
}

/** An HTTP GET probe on the agent's health endpoint. @internal */
export function httpProbe(path: string, port: number, periodSeconds: number, failureThreshold: number): Json {
  return { failureThreshold, httpGet: { path, port }, periodSeconds, timeoutSeconds: 1 };
}

/** An env var from the downward API. @internal */
export function fieldEnv(name: string, fieldPath: string): Json {
  return { name, valueFrom: { fieldRef: { fieldPath } } };
}
