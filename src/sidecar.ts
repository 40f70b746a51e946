import { createHash } from 'crypto';
import { ApiObject, Chart, Duration } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { LivenessTiming } from './agents/liveness';
import { RenderedSidecar, SidecarSource, WorkloadBinding, workloadApiObject } from './bind/binding';
import { checkBoolean, checkDnsLabel, checkImage, checkString, describeValue, durationSeconds, isPropsObject, snapshot } from './bind/checks';
import { AgentConfigMap } from './bind/hooks';
import { checkManifestData, cutTextCarried } from './bind/manifest-values';
import { TargetReader, checkSameApp } from './bind/target-reader';
import { graceWrittenByDefault, processNamespaceWrittenByDefault } from './bind/workload-defaults';
import { CaptureSpec, PodLogsSpec } from './engine/capture';
import { defaultPullPolicy } from './engine/pull-policy';
import { restrictedSecurityContext, shutdownOf } from './engine/shutdown';
import { AgentSpec, HoldSpec, QuitSpec, ShutdownSpec, SidecarSpec } from './engine/spec';
import { Where, internalError } from './private/errors';
import { Json } from './private/json';
import { CutText, KeyMemo, Memo, deepFreeze, joinCut } from './private/memo';
import { setOwn, sortedKeys } from './private/order';
import { DefaultResources, SidecarResources, renderResources, resourceWarnings } from './resources';
import { SidecarLayout, formatVersion } from './target/capabilities';
import { SidecarTargetOptions } from './target/resolver';

/**
 * Props shared by every sidecar construct, but for the container's name (see `SidecarProps`,
 * `AdoptSidecarProps`).
 */
export interface SidecarCommonProps extends SidecarTargetOptions {
  /**
   * The workload to attach the sidecar to: a Deployment, StatefulSet, DaemonSet, Job, CronJob
   * or Pod of any cdk8s-plus major (27 to 34), or any cdk8s `ApiObject` of one of those kinds, a ReplicaSet or a ReplicationController
   * (a raw `KubeDeployment`, objects from `Include` or `Helm`).
   */
  readonly workload: IConstruct;

  /**
   * Resource requests and limits of the sidecar container (a cdk8s-plus `ContainerResources`
   * of any major is one).
   * @default - small requests and limits of the agent's own (not cdk8s-plus's 1 CPU / 512Mi)
   */
  readonly resources?: SidecarResources;

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
   * Keep a legacy sidecar on a Job or CronJob as it is: the app stops the sidecar itself. A legacy
   * sidecar never exits by itself, so without this flag the library runs it under a wrapper that
   * stops it once the app's processes are gone (`restartPolicy: Never`; the pod shares its process
   * namespace for it), and refuses where that cannot work (`restartPolicy: OnFailure`, a sidecar
   * that holds the app, an image whose entrypoint is not known): docs/shutdown.md, "A legacy
   * sidecar on a Job".
   * @default false
   */
  readonly allowLegacyOnJob?: boolean;

  /**
   * Native layout: place the sidecar right after this init container of the workload (e.g. one
   * that fetches a secret the sidecar needs), instead of before every init container of the
   * user's. Checked against the workload at synthesis (an error names the init containers
   * present). Legacy layout: the sidecar is in `spec.containers`, which start after every init
   * container anyway; the name is still checked.
   * @default - before the workload's own init containers
   */
  readonly after?: string;

  /**
   * Native layout: the workload's init containers that start after the sidecar get what the app
   * containers get (the log directory mount, the `OTEL_*` env, ...). Native sidecars start before
   * them, so they can be served; refused in the legacy layout (an entry of `spec.containers`
   * starts only after every init container).
   * @default false
   */
  readonly serveInitContainers?: boolean;

  /**
   * Native layout on Kubernetes 1.36+: when the sidecar exits with one of these codes, the kubelet
   * restarts every container of the pod in place (then starts them again from the init containers), instead of the sidecar
   * alone: a `restartPolicyRules` entry with the `RestartAllContainers` action (KEP-5532,
   * RestartAllContainersOnContainerExits, beta and on from 1.36). For a sidecar the app cannot run
   * without (a proxy that holds its credentials). The library warns: the kubelet then stops the
   * other containers with no `preStop`; SIGTERM with the kubelet's 2 s minimum, one container after
   * another, app containers first (no ordered stop of the sidecars after the app), so a log agent
   * or collector loses what it has buffered. 0, 137 and 143 are refused (a clean exit, and the codes
   * of a stop by the kubelet). An error on a target below 1.36 or in the legacy layout.
   * @see https://github.com/kubernetes/enhancements/tree/master/keps/sig-node/5532-restart-pod-on-container-exits
   * @default - none: the kubelet restarts the sidecar alone
   */
  readonly restartPodOnExitCodes?: number[];
}

/**
 * Props shared by every sidecar construct that creates its container.
 */
export interface SidecarProps extends SidecarCommonProps {
  /**
   * Name of the sidecar container: a DNS-1123 label of at most 53 characters, so that the volume
   * names derived from it (`<containerName>-config`, `-logs`, `-tmp`, `-tls`, `-client-ca`) are
   * DNS-1123 labels of at most 63 characters too, as the API server requires.
   * @default - the construct's own default, e.g. 'log-agent'
   */
  readonly containerName?: string;
}

/**
 * The types of the props every sidecar construct shares, for JavaScript callers (jsii checks the
 * other languages): a name that is not a string, `'false'` (a string, so true) as a boolean, a Duration that is not one.
 */
function checkCommonProps(who: Where, props: SidecarProps): void {
  if (!isPropsObject(props)) throw who.error(`the props ${describeValue(props)} are not an object`, props, 'give e.g. { workload: deployment }');
  // (the workload: workloadApiObject, src/bind/binding.ts)
  checkString(who, 'containerName', props.containerName, "'log-agent'");
  checkString(who, 'after', props.after, "'fetch-secrets'");
  checkString(who, 'kubernetesVersion', props.kubernetesVersion, "'1.29'");
  checkString(who, 'toolsImage', props.toolsImage, "'registry.example.com/mirror/busybox:1.36.1-musl'");
  for (const flag of ['allowLegacyOnJob', 'serveInitContainers', 'sidecarContainersGate', 'overrideAppTarget'] as const) checkBoolean(who, flag, props[flag]);
  if (props.appShutdownTime !== undefined) durationSeconds(who, 'appShutdownTime', props.appShutdownTime, 0);
  checkRestartPodOnExitCodes(who, props.restartPodOnExitCodes);
}

/** `restartPodOnExitCodes`: 1-255 (validation.go allows at most 255 values), none of 0, 137 or 143. */
function checkRestartPodOnExitCodes(who: Where, codes: unknown): void {
  if (codes === undefined) return;
  if (!Array.isArray(codes) || codes.length === 0 || codes.length > 255) {
    throw who.error(`restartPodOnExitCodes ${describeValue(codes)} is not a list of 1 to 255 exit codes`, codes, 'give e.g. [1] or leave it out');
  }
  for (const code of codes) {
    if (!Number.isInteger(code) || code < 1 || code > 255) {
      throw who.error(`restartPodOnExitCodes has ${describeValue(code)}, not an exit code from 1 to 255`, code, 'give e.g. [1]');
    }
    if (code === 137 || code === 143) {
      throw who.error(
        `restartPodOnExitCodes has ${code}, the code a sidecar exits with when the kubelet stops it (${code === 137 ? 'SIGKILL' : 'SIGTERM'}): ` +
        'the pod would restart whenever its sidecar is stopped',
        code, "Give the codes of the sidecar's own failures (e.g. [1])", '. ',
      );
    }
  }
}

const NO_WARNINGS: readonly string[] = Object.freeze([]);

/** Defaults shared by all agents. @internal */
const DEFAULT_APP_SHUTDOWN_SECONDS = 10;

/**
 * Volume names are `<containerName><suffix>`, and the API server requires each to be a DNS-1123
 * label of at most 63 characters (kubernetes pkg/apis/core/validation/validation.go,
 * ValidateVolumes). The longest suffix is WithEnvoy's `-client-ca`.
 */
const MAX_CONTAINER_NAME_LENGTH = 63 - '-client-ca'.length;

/**
 * A volume of the agent's container. The agent's config volume is the entry without `source`.
 * @internal
 */
export interface AgentVolume {
  /** Appended to the container name to name the volume, e.g. `-tls`. */
  readonly suffix: string;
  /** The volume source, e.g. `{ emptyDir: {} }`; omitted for the ConfigMap of the agent's files. */
  readonly source?: Json;
  /** Where the agent's container mounts it. */
  readonly mountPath: string;
  readonly readOnly?: boolean;
  /** Also mounted at `mountPath` into every app container (e.g. a shared log directory). */
  readonly shareWithApp?: boolean;
}

/**
 * A sidecar agent described as data: what `SidecarBase._attach()` turns into the container, the
 * config ConfigMap and volume, the checksum annotation and the engine's spec. Everything here is
 * checked by the construct before it attaches. `WithSidecar`-style constructs hand a user-given
 * container over as the same fields.
 * @internal
 */
export interface AgentDescription {
  /** One per workload: the engine refuses a second sidecar of the same kind. Fixed per class, e.g. 'WithEnvoy'. */
  readonly kind: string;
  /** Order among the sidecars (engine `RANK`). */
  readonly rank: number;
  readonly image: string;
  readonly command?: string[];
  readonly args: string[];
  /** `runAsUser` (and `runAsGroup` unless `group` is given). */
  readonly user: number;
  readonly group?: number;
  /** The agent container's env. */
  readonly env?: Json[];
  /** Declared container ports (pod-facing). */
  readonly ports: Json[];
  /**
   * HTTP health endpoint: a startup probe always, a readiness probe when `readiness` is set, a
   * liveness probe when `liveness` is set (on the same port: one the kubelet reaches on the pod
   * IP, never an admin interface). Leave it out only when `containerOverrides` brings the probes
   * (the engine needs a startupProbe).
   */
  readonly health?: {
    readonly path: string;
    readonly port: number;
    readonly startup: { readonly periodSeconds: number; readonly failureThreshold: number };
    readonly readiness?: { readonly periodSeconds: number; readonly failureThreshold: number };
    /** The liveness probe: its own path (one that does not fail while the backend is down) and timing (src/agents/liveness.ts). */
    readonly liveness?: { readonly path: string } & LivenessTiming;
  };
  /** The container's requests and limits (see `_resources`). */
  readonly resources: Json;
  /** Files of the agent's config ConfigMap (mounted by the volume without `source`). */
  readonly files?: Record<string, string>;
  /**
   * The files hold the workload's own values (e.g. its name), so their texts differ per workload:
   * they are not kept for the next sidecar (checked and hashed each time, with no look-up first).
   */
  readonly filesPerWorkload?: boolean;
  /**
   * The files as cut texts (instead of `files`): the base joins them, and hashes the shared texts
   * of a cut once for the checksum.
   */
  readonly fileCuts?: Record<string, CutText>;
  readonly volumes: AgentVolume[];
  /** Ports bound on localhost only (not declared), checked against the app's ports. */
  readonly localPorts?: number[];
  /** Ports the app must listen on (no sidecar may bind them). */
  readonly appPorts?: number[];
  /** Env added to every app container. */
  readonly appEnv?: Json[];
  /**
   * The agent's stop time: seconds it needs after SIGTERM to flush and exit, and how long it must
   * keep reading after the app's last write (the shutdown model beside its renderer, src/agents/).
   */
  readonly shutdown: { readonly stopSeconds: number; readonly readAfterAppExitSeconds: number };
  /** POSTs to localhost at preStop, in both layouts. */
  readonly preStopPosts?: string[];
  /** The image's entrypoint (`argv[0]` of the agent) when `command` is not set (for `watchAppExit`). */
  readonly entrypoint?: string;
  /** Legacy only: hold the app until the agent is ready. */
  readonly hold?: HoldSpec;
  /**
   * Fields of a user-given container that the description has no field for (`workingDir`,
   * `envFrom`, an exec `startupProbe`, ...), set over the built container. Not `name`,
   * `restartPolicy` or `lifecycle` (the base and the engine own those).
   */
  readonly containerOverrides?: Json;
  /**
   * Warnings about the agent as given (e.g. an image outside the releases its config was written
   * for): reported with the workload's other warnings (`SidecarWarnings`, stderr) at synthesis.
   */
  readonly warnings?: string[];
  /** Run the app containers' commands under the capture wrapper (`WithLogAgent` `captureStdout`). */
  readonly capture?: CaptureSpec;
  /** Give the agent the glob of an app container's kubelet log files (`WithLogAgent` `podLogs`). */
  readonly podLogs?: PodLogsSpec;
}

/**
 * A whole container as data, for `SidecarBase._attachContainer` (see the engine's `SidecarSpec`
 * for each field).
 * @internal
 */
export interface ContainerDescription {
  readonly kind: string;
  readonly rank: number;
  /** The container without `restartPolicy` and `lifecycle`; for `adopt`, only the fields laid over the workload's. */
  readonly container: Json;
  /** Files of a ConfigMap of the sidecar's own, mounted read-only at `filesMountPath`. */
  readonly files?: Record<string, string>;
  readonly filesMountPath?: string;
  /** Pod volumes the sidecar brings. */
  readonly volumes: Json[];
  readonly appMounts?: Json[];
  readonly appEnv?: Json[];
  readonly localPorts?: number[];
  readonly shutdown: Omit<ShutdownSpec, 'appShutdownSeconds'>;
  readonly hold?: HoldSpec;
  readonly adopt?: boolean;
  readonly quit?: QuitSpec;
}

/**
 * The base of every sidecar construct: target resolution, the container, config volume and
 * checksum built from the agent's description, and the binding to the workload. A subclass checks
 * its props, describes its agent and calls `_attach()` as the LAST step of its constructor, so a
 * constructor that throws leaves nothing behind.
 */
export abstract class SidecarBase extends Construct {
  /**
   * The binding's view of a construct: a class, whose methods V8 compiles once per process (a
   * closure made per construct is compiled again for every App once the collector has freed the
   * last one: bench/README.md, "The optimizing compiler"). Inside the class body, it reaches the construct's
   * protected checks.
   */
  private static readonly Source = class implements SidecarSource {
    public constructor(private readonly construct: SidecarBase) {}
    public get node(): IConstruct['node'] {
      return this.construct.node;
    }
    public renderSidecar(): RenderedSidecar {
      return this.construct.renderSidecar();
    }
    public checkWorkload(spec: Json | undefined): string[] {
      return this.construct._checkWorkload(spec);
    }
    public workloadWarnings(spec: Json | undefined, labels: Record<string, string>): string[] {
      return this.construct._workloadWarnings(spec, labels);
    }
  };

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

  /** The agent as the engine takes it, frozen once attached (the same content for every synthesis). */
  private attached?: AgentSpec & { readonly kind: string };
  /** `AgentDescription.warnings` of the attached agent. */
  private agentWarnings: readonly string[] = [];
  /** The spec per layout: derived from the frozen agent, so never stale. */
  private readonly specs = new Map<string, SidecarSpec>();
  /** The target as this construct reads it (the layout fixed once read). */
  private readonly target: TargetReader;
  /** How messages name this construct (`describe()`). */
  private readonly description: string;
  /** `describe()` as a `Where`, made once (it is immutable). */
  private readonly where: Where;

  protected constructor(scope: Construct, id: string, props: SidecarProps, private readonly defaultContainerName: string) {
    super(scope, id);
    // A construct's class and path never change: written once (every check's message starts with it).
    this.description = `${this.constructor.name} '${this.node.path}'`;
    this.where = new Where(this.description);
    // A copy, each prop read once: checked and used from here on, read at synthesis too, so a props
    // object changed after construction (or a getter that answers differently) changes nothing here.
    this._props = snapshot(props);
    checkCommonProps(this._where(), this._props);
    this.target = new TargetReader(this, this._props, () => this._where());
    this.containerName = this._props.containerName ?? this.defaultContainerName;
    this.workloadObject = workloadApiObject(this._where(), this._props.workload);
    checkSameApp(this._where(), this, this.workloadObject);
    checkDnsLabel(this._where(), 'containerName', this.containerName, MAX_CONTAINER_NAME_LENGTH);
    if (this._props.after !== undefined) checkDnsLabel(this._where(), 'after', this._props.after);
    this.userSidecarStopSeconds(); // checked here, before anything is attached
    // An explicit version is checked at once; inherited ones at synthesis.
    this.target.resolved();
    if (props.toolsImage !== undefined) checkImage(this._where(), 'toolsImage', props.toolsImage, 'registry.example.com/mirror/busybox:1.36.1-musl');
  }

  /**
   * The layout this sidecar is emitted in, resolved from the target. Reading it fixes it: a
   * target that changes afterwards (`Sidecars.configure()` on an enclosing scope) so that the
   * layout would differ is an error at synthesis, which names both. Throws when the target
   * cannot run the requested mode.
   */
  public get layout(): SidecarLayout {
    return this.target.layout();
  }

  /**
   * The Kubernetes minor version this sidecar targets, e.g. `1.29`.
   */
  public get targetVersion(): string {
    return formatVersion(this.target.resolved().version);
  }

  /**
   * The agent as attached (frozen; undefined before `_attach`), for tests.
   * @internal
   */
  public get _agent(): AgentSpec | undefined {
    return this.attached;
  }

  /**
   * How messages name this construct, e.g. `WithLogAgent 'chart/logs'`.
   */
  protected describe(): string {
    return this.description;
  }

  /**
   * `describe()` as the place the input checks name (src/private/errors.ts).
   * @internal
   */
  protected _where(): Where {
    return this.where;
  }

  /**
   * Builds the agent's container, config ConfigMap and checksum from `agent` and attaches the
   * sidecar to the workload. Call it once, as the last step of the constructor, after every
   * prop has been checked.
   * @internal
   */
  protected _attach(agent: AgentDescription): void {
    // (the contract of a subclass: a bug of the subclass, not a prop)
    if (this.attached) throw internalError(`${this.describe()}: the sidecar is already attached`);
    const files = agent.fileCuts ? joinCuts(agent.fileCuts) : agent.files;
    const a = agent;
    checkManifestData(this._where(), 'the agent\'s', {
      image: a.image,
      command: a.command,
      args: a.args,
      env: a.env,
      ports: a.ports,
      health: a.health?.path,
      liveness: a.health?.liveness?.path,
      files: files && !a.filesPerWorkload ? filesToCheck(files) : files && agent.fileCuts ? cutFilesToCheck(agent.fileCuts, files) : files,
      volumes: a.volumes,
      appEnv: a.appEnv,
      containerOverrides: a.containerOverrides,
    });
    if (files && !a.filesPerWorkload) passedFiles(files);
    const config = files ? this.configMap(files, !agent.filesPerWorkload, agent.fileCuts) : undefined;
    const { volumes, mounts, appMounts } = this.agentVolumes(agent, config);
    const container = this.agentContainer(agent, mounts);
    // (a new object from shutdownOf, completed by assignments: no spread of one object into another)
    const shutdown: ReturnType<typeof shutdownOf> & Json = shutdownOf(agent.shutdown);
    shutdown.appShutdownSeconds = this.appShutdownSeconds();
    shutdown.preStopPosts = agent.preStopPosts;
    if (agent.entrypoint !== undefined) shutdown.entrypoint = agent.entrypoint;
    const attached: Json = {
      kind: agent.kind,
      rank: agent.rank,
      container,
      localPorts: agent.localPorts,
      appPorts: agent.appPorts,
      volumes,
      appMounts,
      appEnv: agent.appEnv ?? [],
      podAnnotations: config?.annotations ?? {},
      shutdown,
      hold: agent.hold,
      after: this._props.after,
      serveInitContainers: this._props.serveInitContainers,
    };
    if (agent.capture !== undefined) attached.capture = agent.capture;
    if (agent.podLogs !== undefined) attached.podLogs = agent.podLogs;
    if (this._props.restartPodOnExitCodes !== undefined) attached.restartPodOnExitCodes = [...this._props.restartPodOnExitCodes];
    this.attached = deepFreeze(attached) as AgentSpec & { readonly kind: string };
    // (a request or limit above what a node of the usual sizes offers: src/resources.ts)
    const sized = this._props.resources === undefined ? [] : resourceWarnings(this._where(), agent.resources);
    this.agentWarnings = agent.warnings || sized.length > 0 ? Object.freeze([...agent.warnings ?? [], ...sized]) : NO_WARNINGS;
    this._bind(new SidecarBase.Source(this));
  }

  /** The agent's pod volumes (its config ConfigMap for a volume without a source), its mounts and those it shares with the app. */
  private agentVolumes(agent: AgentDescription, config: { readonly name: string } | undefined):
  { volumes: Json[]; mounts: Json[]; appMounts: Json[] } {
    const volumes: Json[] = [];
    const mounts: Json[] = [];
    const appMounts: Json[] = [];
    for (const v of agent.volumes) {
      const name = `${this.containerName}${v.suffix}`;
      if (v.source === undefined && !config) throw internalError(`${this.describe()}: volume '${name}' has no source and the agent has no files`);
      volumes.push(v.source === undefined ? { configMap: { name: config!.name }, name } : namedVolume(v.source, name));
      mounts.push(volumeMount(v.mountPath, name, v.readOnly === true));
      if (v.shareWithApp) appMounts.push(volumeMount(v.mountPath, name, undefined));
    }
    return { volumes, mounts, appMounts };
  }

  /** The agent's container, its fields in the order of the manifest's keys, the overrides laid over it. */
  private agentContainer(agent: AgentDescription, mounts: Json[]): Json {
    const health = agent.health;
    for (const owned of ['name', 'restartPolicy', 'lifecycle']) {
      if (agent.containerOverrides?.[owned] !== undefined) throw internalError(`${this.describe()}: the container's ${owned} is set by the library`);
    }
    // (assigned in the order of the manifest's keys: no object spread per optional field)
    let container: Json = { args: agent.args };
    if (agent.command) container.command = agent.command;
    if (agent.env && agent.env.length > 0) container.env = agent.env;
    container.image = agent.image;
    container.imagePullPolicy = defaultPullPolicy(agent.image);
    container.name = this.containerName;
    container.ports = agent.ports;
    if (health?.liveness) container.livenessProbe = agentProbe(health.liveness.path, health.port, health.liveness);
    if (health?.readiness) container.readinessProbe = agentProbe(health.path, health.port, health.readiness);
    container.resources = agent.resources;
    container.securityContext = securityContextOf(agent.user, agent.group);
    if (health) container.startupProbe = agentProbe(health.path, health.port, health.startup);
    container.volumeMounts = mounts;
    if (agent.containerOverrides) container = { ...container, ...agent.containerOverrides };
    return container;
  }

  /**
   * The other way in: a whole container given as data (WithSidecar) or a container of the
   * workload to adopt (AdoptSidecar). The files, if any, go into the config ConfigMap, mounted at
   * `filesMountPath`. Like `_attach`, the last step of the constructor.
   * @internal
   */
  protected _attachContainer(d: ContainerDescription): void {
    if (this.attached) throw internalError(`${this.describe()}: the sidecar is already attached`);
    checkManifestData(this._where(), 'the sidecar\'s', { container: d.container, files: d.files, volumes: d.volumes, appEnv: d.appEnv, appMounts: d.appMounts });
    const config = d.files ? this.configMap(d.files) : undefined;
    const container: Json = { ...d.container };
    const volumes = [...d.volumes];
    if (config) {
      const name = `${this.containerName}-config`;
      volumes.push({ configMap: { name: config.name }, name });
      container.volumeMounts = [...(container.volumeMounts ?? []), { mountPath: d.filesMountPath, name, readOnly: true }];
    }
    this.attached = deepFreeze({
      kind: d.kind,
      rank: d.rank,
      container,
      localPorts: d.localPorts,
      volumes,
      appMounts: d.appMounts ?? [],
      appEnv: d.appEnv ?? [],
      podAnnotations: config?.annotations ?? {},
      shutdown: { ...d.shutdown, appShutdownSeconds: this.appShutdownSeconds() },
      hold: d.hold,
      adopt: d.adopt,
      after: this._props.after,
      serveInitContainers: this._props.serveInitContainers,
      ...(this._props.restartPodOnExitCodes !== undefined ? { restartPodOnExitCodes: [...this._props.restartPodOnExitCodes] } : {}),
      quit: d.quit,
    });
    this._bind(new SidecarBase.Source(this));
  }

  /**
   * Checks of the workload's own pod spec at synthesis, before the sidecars are added (none by
   * default). The binding runs them in every render, on the manifest it renders anyway, so a
   * check costs no extra `toJson()` of the workload.
   * @internal
   */
  protected _checkWorkload(_podSpec: Json | undefined): string[] {
    return [];
  }

  /**
   * What the construct infers from the workload's own pod spec at synthesis where no prop says it
   * (same input as `_checkWorkload`; none by default): warnings that say what was inferred.
   * @internal
   */
  protected _workloadWarnings(_podSpec: Json | undefined, _podLabels: Record<string, string>): string[] {
    return [];
  }

  /**
   * Registers with the workload's binding (the last step of `_attach`).
   * @internal
   */
  protected _bind(source: SidecarSource): void {
    // cdk8s-plus (every major) writes terminationGracePeriodSeconds: 30 when its prop is unset, so
    // on its workloads 30 means "unset" and is raised when the sidecars need more.
    WorkloadBinding.of(this.workloadObject, {
      graceWrittenByDefault: graceWrittenByDefault(this._props.workload),
      processNamespaceWrittenByDefault: processNamespaceWrittenByDefault(this._props.workload),
    }).add(source);
  }

  private renderSidecar(): RenderedSidecar {
    const target = this.target.atSynthesis();
    const layout = target.decision.layout!;
    const agent = this.attached;
    if (!agent) throw internalError(`${this.describe()}: the construct did not attach its agent`);
    // Native from 1.29 (the kubelet stops the sidecar right after the app, and no preStop can wait
    // for the app), an agent that polls its files gets its SIGTERM held back by its read delay
    // (docs/shutdown.md, the polling agent's last line); the hold is part of its stop time.
    const hold = layout === 'NATIVE' && target.version.minor >= 29 && agent.shutdown.holdSigtermInNative
      ? agent.shutdown.readAfterAppExitSeconds ?? 0 : 0;
    const key = `${layout}|${target.watchAppExit}|${target.toolsImage ?? ''}|${hold}`;
    let spec = this.specs.get(key);
    if (!spec) {
      // (built by assignment, in the order a spread of the agent gives: no copy of an object into
      // another; every part of the agent is frozen already, so only the new objects are frozen here)
      const shutdown: Record<string, unknown> = {};
      for (const k in agent.shutdown) if (hasOwnKey(agent.shutdown, k)) shutdown[k] = (agent.shutdown as unknown as Record<string, unknown>)[k];
      if (hold > 0) {
        shutdown.stopSeconds = agent.shutdown.stopSeconds + hold;
        shutdown.sigtermHoldSeconds = hold;
      }
      // whether appShutdownTime was given, and the user's own native sidecars' stop time (src/engine/shutdown.ts)
      shutdown.appShutdownGiven = this._props.appShutdownTime !== undefined;
      shutdown.userSidecarStopSeconds = this.userSidecarStopSeconds();
      if (target.watchAppExit) shutdown.watchAppExit = true;
      const built: Record<string, unknown> = {};
      for (const k in agent) {
        if (k !== 'kind' && hasOwnKey(agent, k)) built[k] = k === 'shutdown' ? shutdown : (agent as Record<string, unknown>)[k];
      }
      built.owner = this.describe();
      built.kind = agent.kind;
      built.layout = layout;
      built.allowLegacyOnJob = this._props.allowLegacyOnJob ?? false;
      if (target.toolsImage !== undefined) built.toolsImage = target.toolsImage;
      spec = deepFreeze(built) as unknown as SidecarSpec;
      this.specs.set(key, spec);
    }
    return { spec, minor: target.version.minor, patch: target.version.patch, gate: target.gate, warnings: [...this.agentWarnings] };
  }

  /**
   * The app's shutdown time in seconds (`appShutdownTime`, validated).
   */
  protected appShutdownSeconds(): number {
    return durationSeconds(this._where(), 'appShutdownTime', this._props.appShutdownTime, DEFAULT_APP_SHUTDOWN_SECONDS);
  }

  /** `userSidecarStopTime` in seconds (validated), or undefined when not given. */
  private userSidecarStopSeconds(): number | undefined {
    const t = this._props.userSidecarStopTime;
    return t === undefined ? undefined : durationSeconds(this._where(), 'userSidecarStopTime', t, 0);
  }

  /**
   * Creates the ConfigMap that holds the agent's generated config, in the workload's
   * namespace. Returns its name and a checksum annotation that rolls the pods on change.
   * @internal
   */
  private configMap(data: Record<string, string>, recurring = true, cuts?: Record<string, CutText>): SidecarConfig {
    const sorted: Record<string, string> = {};
    for (const k of sortedKeys(data)) setOwn(sorted, k, data[k]);
    const namespace = this.workloadObject.metadata.namespace;
    const chartNamespace = Chart.of(this).namespace;
    if (namespace === undefined && chartNamespace !== undefined) {
      // cdk8s would put the ConfigMap into this construct's chart's namespace, where the pod cannot mount it.
      throw this._where().error(
        `the workload '${this.workloadObject.node.path}' has no namespace, but this construct's chart puts ` +
        `objects into namespace '${chartNamespace}', so the agent's ConfigMap would not be in the pod's namespace`,
        chartNamespace, "Create the construct in the workload's chart, or give the workload a namespace", '. ',
      );
    }
    // The ConfigMap follows the namespace the workload is emitted in (src/bind/hooks.ts).
    const workload = this.workloadObject;
    const cm = new AgentConfigMap(this, 'config', namespace, sorted, new EmittedNamespace(workload));
    const checksum = (cuts && cutChecksum(sorted, cuts)) ?? configChecksum(sorted, recurring);
    return {
      name: cm.name,
      annotations: { [`checksum.sidecars.cdk8s.io/${this.containerName}`]: checksum },
    };
  }

  /** Renders the resources prop, falling back to the agent's defaults. @internal */
  protected _resources(defaults: DefaultResources): Json {
    return renderResources(this._where(), this._props.resources, defaults);
  }
}

/**
 * The namespace a workload is emitted in, read from its binding when its ConfigMap is emitted (a
 * class, not a closure per construct: see `SidecarBase.Source`).
 */
class EmittedNamespace {
  public constructor(private readonly workload: ApiObject) {}
  public emittedNamespace(): string | undefined {
    return WorkloadBinding.of(this.workload).emittedNamespace();
  }
}

/** Checksums of one-file configs, by file name and text: most sidecars of a kind share one text. */
const oneFileChecksums = new Map<string, Memo<string>>();

/**
 * The SHA-256 of a config's files (`JSON.stringify` of the name -> text map, keys sorted), the pod
 * template's `checksum.sidecars.cdk8s.io/<container>` annotation. A one-file config's is kept per
 * (name, text) when its text is `recurring` (the same in other sidecars); every input is in that key.
 */
function configChecksum(sorted: Record<string, string>, recurring: boolean): string {
  const compute = () => createHash('sha256').update(JSON.stringify(sorted)).digest('hex');
  const names = Object.keys(sorted);
  if (names.length !== 1 || !recurring) return compute();
  let byText = oneFileChecksums.get(names[0]);
  if (!byText) {
    byText = new Memo<string>();
    oneFileChecksums.set(names[0], byText);
  }
  return byText.get(sorted[names[0]], compute);
}

/** `joinCut` of each file. */
const hasOwnKey = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

function joinCuts(cuts: Record<string, CutText>): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of Object.keys(cuts)) setOwn(files, name, joinCut(cuts[name]));
  return files;
}

/**
 * `configChecksum` of files some of which are cut texts (`sorted[name]` is `joinCut(cuts[name])`),
 * without the JSON text of the whole: the same bytes go into the hash, the JSON escapes of a
 * cut's shared texts made once (as UTF-8) and kept with them. Undefined (then the whole is
 * hashed) where a part begins or ends with a UTF-16 surrogate, since JSON.stringify escapes a
 * lone surrogate but not a pair that a cut would split.
 */
function cutChecksum(sorted: Record<string, string>, cuts: Record<string, CutText>): string | undefined {
  const hash = createHash('sha256');
  hash.update('{');
  let first = true;
  // (the keys in the order JSON.stringify writes them)
  for (const name of Object.keys(sorted)) {
    hash.update(`${first ? '' : ','}${JSON.stringify(name)}:`);
    first = false;
    const cut = Object.prototype.hasOwnProperty.call(cuts, name) ? cuts[name] : undefined;
    if (!cut) {
      hash.update(JSON.stringify(sorted[name]));
      continue;
    }
    const texts = escapedTexts(cut.texts);
    if (!texts || cut.values.some(v => !cuttable(v))) return undefined;
    hash.update('"');
    hash.update(texts[0]);
    for (let i = 0; i < cut.values.length; i++) {
      hash.update(JSON.stringify(cut.values[i]).slice(1, -1));
      hash.update(texts[i + 1]);
    }
    hash.update('"');
  }
  hash.update('}');
  return hash.digest('hex');
}

/** The JSON escapes of shared texts, as UTF-8 (null: a text that a cut cannot escape alone). */
const ESCAPED_TEXTS = new WeakMap<readonly string[], readonly Buffer[] | null>();
function escapedTexts(texts: readonly string[]): readonly Buffer[] | undefined {
  let escaped = ESCAPED_TEXTS.get(texts);
  if (escaped === undefined) {
    escaped = Object.isFrozen(texts) && texts.every(cuttable) ? texts.map(t => Buffer.from(JSON.stringify(t).slice(1, -1), 'utf8')) : null;
    if (Object.isFrozen(texts)) ESCAPED_TEXTS.set(texts, escaped);
  }
  return escaped ?? undefined;
}

/** Whether a part of a cut text neither begins nor ends with a UTF-16 surrogate (its JSON escape is then the same alone as in the whole). */
function cuttable(part: string): boolean {
  const surrogate = (c: number) => c >= 0xd800 && c <= 0xdfff;
  return typeof part === 'string' && (part.length === 0 || (!surrogate(part.charCodeAt(0)) && !surrogate(part.charCodeAt(part.length - 1))));
}

/** @internal */
export interface SidecarConfig {
  readonly name: string;
  readonly annotations: Record<string, string>;
}

/*
 * Parts of an agent's container that are the same in every workload (probes, security context,
 * mounts, volume sources), made once and frozen: `deepFreeze` and `checkManifestData` skip a
 * frozen object they have seen, and each workload allocates less (linear synthesis at thousands of
 * workloads). Each memo's key
 * holds every input of the part.
 */
const probes = new KeyMemo<Json>();
function sharedProbe(path: string, port: number, periodSeconds: number, failureThreshold: number, timeoutSeconds: number | undefined): Json {
  return probes.get([path, port, periodSeconds, failureThreshold, timeoutSeconds],
    () => deepFreeze(httpProbe(path, port, periodSeconds, failureThreshold, timeoutSeconds)));
}

/** An agent's probe of its health endpoint (`sharedProbe`). */
function agentProbe(path: string, port: number, p: { periodSeconds: number; failureThreshold: number; timeoutSeconds?: number }): Json {
  return sharedProbe(path, port, p.periodSeconds, p.failureThreshold, p.timeoutSeconds);
}

const securityContexts = new KeyMemo<Json>();
function securityContextOf(user: number, group: number | undefined): Json {
  return securityContexts.get([user, group], () => deepFreeze({
    ...restrictedSecurityContext(user),
    ...(group !== undefined ? { runAsGroup: group } : {}),
  }));
}

const mountsMemo = new KeyMemo<Json>();
/** `{ mountPath, name }` and `readOnly: true` when `readOnly` (the container's) or none (`undefined`: an app container's). */
function volumeMount(mountPath: string, name: string, readOnly: boolean | undefined): Json {
  return mountsMemo.get([readOnly, name, mountPath], () => deepFreeze({ mountPath, name, ...(readOnly ? { readOnly: true } : {}) }));
}

/** `{ ...source, name }`: one per frozen source and name (a source that is not frozen gets a copy each time). */
const namedVolumes = new WeakMap<object, Map<string, Json>>();
function namedVolume(source: Json, name: string): Json {
  if (!Object.isFrozen(source)) return { ...source, name };
  let byName = namedVolumes.get(source);
  if (!byName) {
    byName = new Map();
    namedVolumes.set(source, byName);
  }
  let volume = byName.get(name);
  if (!volume) {
    volume = deepFreeze({ ...source, name });
    byName.set(name, volume);
  }
  return volume;
}

/**
 * Config texts `checkManifestData` passed (most sidecars of a kind have the same text): checked
 * again they would pass again, so a later check gets a stand-in that passes at no cost (a frozen
 * empty object), under the same file name, which is still checked.
 */
const PASSED_TEXTS = new Set<string>();
const PASSED_TEXT = Object.freeze({});
function filesToCheck(files: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(files)) {
    const text = files[name];
    setOwn(out, name, typeof text === 'string' && PASSED_TEXTS.has(text) ? PASSED_TEXT : text);
  }
  return out;
}
/** Per-workload texts joined from shared cuts: a stand-in that passes where the cuts show the text passes (`cutTextCarried`). */
function cutFilesToCheck(cuts: Record<string, CutText>, files: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(files)) {
    const cut = cuts[name];
    setOwn(out, name, cut && cutTextCarried(cut.texts, cut.values, files[name]) ? PASSED_TEXT : files[name]);
  }
  return out;
}
function passedFiles(files: Record<string, string>): void {
  for (const name of Object.keys(files)) {
    const text = files[name];
    if (typeof text !== 'string' || text.length > 65536) continue;
    if (PASSED_TEXTS.size >= 256) PASSED_TEXTS.clear();
    PASSED_TEXTS.add(text);
  }
}

/** An HTTP GET probe on the agent's health endpoint. @internal */
export function httpProbe(path: string, port: number, periodSeconds: number, failureThreshold: number, timeoutSeconds: number = 1): Json {
  return { failureThreshold, httpGet: { path, port }, periodSeconds, timeoutSeconds };
}


/** An env var from the downward API. @internal */
export function fieldEnv(name: string, fieldPath: string): Json {
  // frozen and shared: the same entries in every workload (see `sharedProbe`)
  return fieldEnvs.get([name, fieldPath], () => deepFreeze({ name, valueFrom: { fieldRef: { fieldPath } } }));
}
const fieldEnvs = new KeyMemo<Json>();
