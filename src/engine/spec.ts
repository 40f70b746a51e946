/**
 * Layer 2 (pod-template engine): the data a construct hands to the engine.
 *
 * Everything here is plain Kubernetes JSON: no cdk8s types, so the engine can be tested (and
 * reused on YAML files) on its own.
 */
import { CaptureSpec, PodLogsSpec } from './capture';
import { Json } from '../private/json';

/** Which layout a sidecar is placed in (mirrors the public `SidecarLayout`). */
export type Layout = 'NATIVE' | 'LEGACY';

/**
 * Ranks of the library's own sidecars: lower comes first in `initContainers` (native) and is
 * therefore stopped LAST. Log agent, then tracer, then Envoy: Envoy stops first after the app,
 * the log agent last (it tails only the log directory, not the other sidecars' stdout).
 */
export const RANK = {
  LOG_AGENT: 100,
  TRACER: 200,
  PROXY: 300,
  /** The user's own sidecars (WithSidecar, AdoptSidecar): after ours, so stopped before them. */
  CUSTOM: 400,
} as const;

/** How a sidecar shuts down. All times in seconds. */
export interface ShutdownSpec {
  /**
   * How long the agent needs after SIGTERM to flush / drain and exit
   * (a log agent's grace, the collector's drain, Envoy's exit).
   */
  readonly stopSeconds: number;

  /**
   * How long the agent must keep reading after the app's last write before it gets SIGTERM
   * (a file poll backoff or a file scan interval, where the agent stops reading at SIGTERM). Where
   * the sidecar is stopped together with the app (legacy; native on 1.28), the engine adds it to
   * the `preStop` delay that outlives the app. Native from 1.29 the sidecar gets SIGTERM at its
   * turn after the app's exit and no `preStop` delays it (`preStopDelayOf`).
   * @default 0
   */
  readonly readAfterAppExitSeconds?: number;

  /**
   * The agent polls its files and reads nothing after SIGTERM (`ShutdownModel.holdSigtermInNative`);
   * the construct turns it into `sigtermHoldSeconds` for a native target from 1.29.
   */
  readonly holdSigtermInNative?: boolean;

  /**
   * Native from 1.29: the engine runs the agent under a wrapper that holds its SIGTERM back this
   * long (`holdSigtermScript`: it keeps reading, so a line the app wrote just before exiting is
   * read), and `stopSeconds` includes it (the grace period and the timeline count it).
   * @default 0
   */
  readonly sigtermHoldSeconds?: number;

  /**
   * How long the app is given to shut down. Legacy: the `preStop` delay that keeps the sidecar
   * alive while the app shuts down. Native: the share of the grace period the app gets before
   * the sidecars are stopped.
   */
  readonly appShutdownSeconds: number;

  /**
   * Whether the user gave `appShutdownSeconds` (`appShutdownTime`), rather than the default: an
   * app `preStop` hook whose duration cannot be read needs it (src/engine/shutdown.ts,
   * `unknownHookErrors`). Undefined: not known (e.g. a mesh proxy), counts neither way.
   */
  readonly appShutdownGiven?: boolean;

  /**
   * How long each of the user's own native sidecars (init containers with `restartPolicy:
   * Always` that are not the library's) takes from SIGTERM to its exit (`userSidecarStopTime`).
   * From 1.29 the library's native sidecars wait for them. Undefined: not given.
   */
  readonly userSidecarStopSeconds?: number;

  /**
   * URLs (on 127.0.0.1) to POST to, in order, at `preStop` in BOTH layouts, before any legacy
   * delay, e.g. Envoy's `/drain_listeners?graceful`. The engine sends them with the sidecar
   * tools (busybox wget), so the agent's image needs no shell.
   */
  readonly preStopPosts?: string[];

  /**
   * Whether the sidecar must outlive the app's shutdown where it is stopped together with the
   * app (legacy; native on 1.28 without ordered termination): a `preStop` delay of
   * `appShutdownSeconds`. `false`: it gets SIGTERM with the app (after its own read delay).
   * Native from 1.29 it is stopped after the app anyway.
   * @default true
   */
  readonly outliveApp?: boolean;

  /**
   * Where the sidecar is stopped together with the app (legacy; native on 1.28): end the `preStop`
   * wait for the app as soon as no process of a container other than the sidecars' is left
   * (`shareProcessNamespace`), bounded by the app's end as before (`watchAppExit`).
   * @default false
   */
  readonly watchAppExit?: boolean;

  /**
   * The program the sidecar's main process runs (`argv[0]`) when `container.command` does not
   * say it (the image's entrypoint), so that `watchAppExit` hooks can tell its processes from the app's.
   * @default - `container.command[0]`, else unknown (its container then counts as the app's)
   */
  readonly entrypoint?: string;
}

/** Legacy-only: hold the app containers until this sidecar is ready (Istio's holdApplicationUntilProxyStarts). */
export interface HoldSpec {
  /** `http://127.0.0.1:<port><path>` that answers 200 once the sidecar is ready. */
  readonly readyUrl: string;
  /** Give up (and let the app start) after this many seconds. */
  readonly timeoutSeconds: number;
}

/**
 * One sidecar, as data. The engine places it, adds its volumes, mounts and env, its shutdown
 * handling, and checks the result.
 */
export interface SidecarSpec {
  /** The construct that asked for it (its path), for messages. */
  readonly owner: string;

  /** What kind of construct, for messages and "the same construct twice" checks, e.g. `WithEnvoy`. */
  readonly kind: string;

  /** Order among the library's sidecars (see RANK). */
  readonly rank: number;

  /**
   * The container, WITHOUT `restartPolicy` and `lifecycle` (the engine sets those per layout).
   * Must have `name`, `image`, `resources`, `securityContext` and a `startupProbe`.
   */
  readonly container: Json;

  /**
   * Ports the agent binds but does not declare as container ports (localhost-only admin or
   * receiver ports): checked for collisions with the app's ports like the declared ones.
   */
  readonly localPorts?: number[];

  /**
   * Ports the sidecar expects the APP to listen on (Envoy forwards to `127.0.0.1:<appPort>`): no
   * other sidecar may bind them, or its traffic would reach that sidecar instead of the app.
   */
  readonly appPorts?: number[];

  /** Pod volumes this sidecar needs (names must not collide with the user's). */
  readonly volumes: Json[];

  /** Mounts added to every app container (`spec.containers`, not init containers). */
  readonly appMounts: Json[];

  /** Env added to every app container; a variable the container already sets wins. */
  readonly appEnv: Json[];

  /** Annotations on the pod template (e.g. the config checksum that rolls the pods). */
  readonly podAnnotations: Record<string, string>;

  readonly shutdown: ShutdownSpec;

  /** Legacy only: hold the app until this sidecar is ready. */
  readonly hold?: HoldSpec;

  /** The layout this sidecar is emitted in (decided by the target layer). */
  readonly layout: Layout;

  /** The user accepted a legacy sidecar on a Job/CronJob (the pod never completes). */
  readonly allowLegacyOnJob: boolean;

  /**
   * The image of the `sidecar-tools` init container, when this sidecar's hooks need the tools.
   * @default - TOOLS.image (src/engine/shutdown.ts)
   */
  readonly toolsImage?: string;

  /**
   * Adopt a container the workload already has: `container.name` names an entry of
   * `spec.containers`, which is taken out of there and placed as this sidecar with every one of
   * its own fields kept; the fields of `container` are laid over it (e.g. a `startupProbe`).
   * `container` then needs only `name`, and `volumes` is empty (the pod has its volumes).
   * @default false
   */
  readonly adopt?: boolean;

  /**
   * Native layout: place the sidecar right after this init container of the user's (e.g. one
   * that fetches a secret the sidecar needs), instead of before every user init container.
   * Checked against the workload at synthesis. Legacy layout: the sidecar is in
   * `spec.containers`, which start after every init container anyway; the name is still checked.
   */
  readonly after?: string;

  /**
   * Native layout: the user's init containers that start after the sidecar get what the app
   * containers get (`appMounts`, `appEnv`). Refused in the legacy layout, where the sidecar
   * starts after every init container and cannot serve them.
   * @default false
   */
  readonly serveInitContainers?: boolean;

  /**
   * Native layout from 1.36: the exit codes on which the sidecar's exit restarts the whole pod in
   * place (a `restartPolicyRules` entry with the `RestartAllContainers` action, KEP-5532), instead
   * of the sidecar alone. Checked against the layout and the target by the engine.
   * @default - none: the kubelet restarts the sidecar alone
   */
  readonly restartPodOnExitCodes?: number[];

  /**
   * Legacy layout on a Job / CronJob / completing Pod: the app stops the sidecar through this
   * endpoint (e.g. the Cloud SQL Auth Proxy's `/quitquitquit`), so the pod can complete; the
   * engine gives every app container the URL in `env`. Native layout: unused (native sidecars
   * do not block completion).
   */
  readonly quit?: QuitSpec;

  /**
   * Run the app containers' own commands under the capture wrapper (src/engine/capture.ts), so
   * that their stdout and stderr also reach files in the log directory (`WithLogAgent` `captureStdout`).
   * @default - the app's commands are left as they are
   */
  readonly capture?: CaptureSpec;

  /**
   * Give the sidecar the glob of one app container's kubelet log files in an env var (`WithLogAgent` `podLogs`).
   * @default - none
   */
  readonly podLogs?: PodLogsSpec;
}

/** How the app stops a legacy sidecar on a Job (see `SidecarSpec.quit`). */
export interface QuitSpec {
  /** `http://127.0.0.1:<port><path>` the app sends a request to when it is done. */
  readonly url: string;
  /** The env var of the app containers that carries `url`. */
  readonly env: string;
}

/** The target release as the engine needs it (its capabilities come from the target layer). */
export interface EngineTarget {
  /** Kubernetes minor version (1.x). */
  readonly minor: number;
  /** The SidecarContainers gate is on (only matters for 1.28). */
  readonly gate: boolean;
}

/** What a construct describes of its agent: the spec without what the base and target decide. */
export type AgentSpec = Omit<SidecarSpec, 'layout' | 'allowLegacyOnJob' | 'owner' | 'kind'>;
