/**
 * The one reader of the target's sources, used by the constructs (src/bind/target-reader.ts
 * `resolveTarget`), SidecarTimeline, the CLI's `check`/`timeline` and `render`. One precedence:
 * what is given where the target is read (a construct's prop, a `--kubernetes-version` or
 * `--gate` flag, a render config key), then the environment variable, then
 * `Sidecars.configure()` (the constructs only: the others have no scope). One rule for the
 * environment: a variable is read only where it counts (after what is given); unset, it says
 * nothing; set but empty (or blank) it is an error, since a pipeline that meant to set it has a
 * bug and a silent fallback would hide it; a version read from it is checked here, so that a bad one
 * reads the same wherever it is read; the gate is `true` or `false`, nothing else.
 *
 * `assembleTarget` is the one function that makes a target of them: the version checked, the gate,
 * and what nothing set means, in one place (the default release, `DEFAULT_KUBERNETES_VERSION`,
 * unless the reader must be told the release: then its own error).
 */
import {
  DEFAULT_KUBERNETES_VERSION, KubeVersion, LayoutDecision, OLDEST_SUPPORTED_MINOR, SidecarMode, parseKubernetesVersion, parseReleasePrefix,
} from './capabilities';
import { SidecarError, Where } from '../private/errors';

/** The environment variable a pipeline sets to synthesize the same app for another cluster. */
export const KUBERNETES_VERSION_ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';

/** The environment variable that says whether the 1.28 SidecarContainers feature gate is on. */
export const SIDECAR_CONTAINERS_GATE_ENV = 'CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE';

/**
 * The target cluster: which Kubernetes release to emit for and how to choose the layout.
 */
export interface SidecarTargetOptions {
  /**
   * The LOWEST version among the target cluster's API server and nodes
   * (`1.29`, `v1.29`, `1.29.3` or `v1.29.3`), 1.27 or later. Native sidecars need every kubelet
   * to be new enough, not only the control plane. With a patch version (`1.29.3`) the emitted
   * pods are also checked against the known bugs of that patch release.
   *
   * The app-level target (the environment variable `CDK8S_SIDECARS_KUBERNETES_VERSION`, else
   * `Sidecars.configure()` on an enclosing scope) is the documented way to set it; given on a
   * construct, it must agree with the app's target where one is set, unless `overrideAppTarget`
   * is true (docs/target.md, "One target per app"). Precedence: this prop on a construct, then the
   * environment variable, then `Sidecars.configure()`, then `1.27` with a notice on stderr that
   * says so and how to choose (docs/target.md, "No target set").
   *
   * @default - the environment variable CDK8S_SIDECARS_KUBERNETES_VERSION if set, else the
   * value given to Sidecars.configure() on an enclosing scope, else '1.27' (legacy layout, with a notice)
   */
  readonly kubernetesVersion?: string;

  /**
   * This construct's own `kubernetesVersion` or `sidecarContainersGate` is meant to differ from the
   * app's target (the environment variable, else `Sidecars.configure()`): e.g. a workload pinned to
   * a node pool of a newer release than the rest of the cluster. Without it such a disagreement is
   * an error at synthesis, since one code base synthesized for several clusters must not have a
   * construct silently keep its own release (docs/target.md, "One target per app"); with it the
   * construct's prop wins and a notice says so. Read by the sidecar constructs; `Sidecars.configure()`
   * refuses it, and `SidecarValidation.addTo`'s own version is the release it checks against, which
   * may differ from the app's without it.
   * @default false
   */
  readonly overrideAppTarget?: boolean;

  /**
   * How to choose between the native and the legacy layout.
   * @default SidecarMode.AUTO
   */
  readonly mode?: SidecarMode;

  /**
   * Whether the SidecarContainers feature gate is on across the cluster (API server,
   * controller manager, scheduler and every kubelet). Only matters for 1.28, where the gate is
   * alpha and off by default.
   *
   * Precedence: this prop on a construct, then the environment variable
   * `CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE` (`true` or `false`), then `Sidecars.configure()`
   * on an enclosing scope, then `false`. Given on a construct, it must agree with the app's
   * (the variable, else `Sidecars.configure()`) where one is set, unless `overrideAppTarget` is true.
   *
   * @default - the environment variable CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE if set, else the
   * value given to Sidecars.configure() on an enclosing scope, else false
   */
  readonly sidecarContainersGate?: boolean;

  /**
   * The image of the `sidecar-tools` init container, which copies a static busybox for the
   * hooks of distroless agents (delays below 1.30, Envoy's drain, the legacy hold): set it to a
   * copy in your registry for air-gapped clusters or registry mirrors. It must hold a static
   * `/bin/busybox` (e.g. a mirror of `busybox:1.36.1-musl`). Read by the sidecar constructs only.
   *
   * Precedence: this prop on a construct, then `Sidecars.configure()` on an enclosing scope.
   * @default - the value given to Sidecars.configure() on an enclosing scope, else 'busybox:1.36.1-musl'
   */
  readonly toolsImage?: string;

  /**
   * Legacy layout (and 1.28 with the gate, where sidecars are stopped with the app): end a
   * sidecar's `preStop` wait as soon as the app's processes are gone, instead of waiting the whole
   * `appShutdownTime` (then its read delay, as before). The pod gets `shareProcessNamespace: true`
   * and the hook looks every second for a process of a container other than the sidecars'; the
   * wait is still bounded by `appShutdownTime`, so the grace period does not change. The
   * trade-off: every container of the pod sees (and, as the same user, can signal) every other
   * container's processes, and their files through `/proc/<pid>/root`: see docs/security.md. No
   * effect in the native layout (1.29+), where the kubelet stops the sidecars after the app.
   *
   * Precedence: this prop on a construct, then `Sidecars.configure()` on an enclosing scope.
   * Only the sidecar constructs read it (`SidecarValidation` and `SidecarTimeline` do not).
   * @default false
   */
  readonly watchAppExit?: boolean;
}

/** Where the target version came from, for messages. */
export type VersionSource = 'prop' | 'env' | 'configure' | 'default';

/** A construct's resolved target. @internal */
export interface ResolvedTarget {
  readonly version: KubeVersion;
  readonly source: VersionSource;
  readonly mode: SidecarMode;
  readonly gate: boolean;
  readonly decision: LayoutDecision;
  /** The sidecar tools' image (`toolsImage`), when given on the construct or by `Sidecars.configure()`. */
  readonly toolsImage?: string;
  /** `watchAppExit` (the prop, else `Sidecars.configure()`, else false). */
  readonly watchAppExit: boolean;
  /**
   * Where the construct's own version or gate differs from the app's target and `overrideAppTarget`
   * lets it: what the app's target was, for the notice at synthesis.
   */
  readonly overrides?: string;
}

/** The sources of a target, besides the environment. */
export interface TargetSources {
  /** The version given where the target is read (a prop, a flag, a config key). */
  readonly version?: string;
  /** The gate given there. */
  readonly gate?: boolean;
  /** What `Sidecars.configure()` set on the enclosing scopes (the nearest wins), for the constructs. */
  readonly configured?: { readonly kubernetesVersion?: string; readonly sidecarContainersGate?: boolean };
}

/**
 * How a caller reports a problem with the environment (a SidecarError without a place: the caller
 * places it at a construct's path, `SidecarTimeline.ofManifest`, or the CLI's usage error), and
 * what an unset variable falls back to there, for the message.
 */
export interface TargetReading {
  readonly fail: (e: SidecarError) => Error;
  /** e.g. 'Sidecars.configure() or the default 1.27' */
  readonly versionFallback: string;
  /** e.g. 'Sidecars.configure() or the default false' */
  readonly gateFallback: string;
  /** The environment (default: the process's). */
  readonly env?: { readonly [name: string]: string | undefined };
}

/** A variable of ours: undefined when unset; set but empty is an error. */
function envValue(r: TargetReading, name: string, example: string, fallback: string): string | undefined {
  const value = (r.env ?? process.env)[name];
  if (value === undefined) return undefined;
  if (value.trim() === '') {
    throw r.fail(new SidecarError({
      problem: `environment variable ${name} is set but empty`, value, fix: `Set it (e.g. ${name}=${example}) or unset it to use ${fallback}`, sep: '. ',
    }));
  }
  return value;
}

/** The version as given, with its source; undefined when nothing sets it (the caller's default applies). */
export function targetVersion(s: TargetSources, r: TargetReading): { readonly raw: string; readonly source: VersionSource } | undefined {
  if (s.version !== undefined) return { raw: s.version, source: 'prop' };
  const env = envValue(r, KUBERNETES_VERSION_ENV, '1.29', r.versionFallback);
  if (env !== undefined) {
    try {
      checkVersion(new Where(`environment variable ${KUBERNETES_VERSION_ENV}`), env);
    } catch (e) {
      throw e instanceof SidecarError ? r.fail(e) : e;
    }
    return { raw: env, source: 'env' };
  }
  if (s.configured?.kubernetesVersion !== undefined) return { raw: s.configured.kubernetesVersion, source: 'configure' };
  return undefined;
}

/** The SidecarContainers gate as given; undefined when nothing sets it (then it is off). */
export function targetGate(s: TargetSources, r: TargetReading): boolean | undefined {
  if (s.gate !== undefined) return s.gate;
  const raw = envValue(r, SIDECAR_CONTAINERS_GATE_ENV, 'true', r.gateFallback);
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw !== undefined) {
    throw r.fail(new SidecarError({
      problem: `environment variable ${SIDECAR_CONTAINERS_GATE_ENV} is '${raw}'`,
      value: raw,
      fix: "use 'true' (the SidecarContainers feature gate is on in the API server and every kubelet) or 'false'",
    }));
  }
  return s.configured?.sidecarContainersGate;
}

/** Whether the gate's environment variable is set (where an app-level gate came from, for messages). */
export function gateSetInEnvironment(r: Pick<TargetReading, 'env'>): boolean {
  return (r.env ?? process.env)[SIDECAR_CONTAINERS_GATE_ENV] !== undefined;
}

/** What a reader of the target gives `assembleTarget`: its sources and how it reports a problem. */
export interface TargetRequest extends TargetSources {
  /** Where a version given to the reader (not from the environment) is named in an error. */
  readonly where: Where;
  /** How a problem with the environment is reported (placed at the reader, or worded by a tool). */
  readonly fail: (e: SidecarError) => Error;
  /** How a bad version given to the reader is reported (default: as it is, placed at `where`). */
  readonly failGiven?: (e: SidecarError) => Error;
  /**
   * What nothing set means. Undefined: the default release (`DEFAULT_KUBERNETES_VERSION`, source
   * 'default'), as the library's API does (docs/target.md, "No target set"). Given: the error of a
   * reader that must be told the release (the CLI, a render config, the validation plugin), since a
   * pipeline that lost its target would otherwise emit the legacy layout with only a notice.
   */
  readonly unset?: () => Error;
  /** What an empty variable's message says to use instead, for a reader with `unset`: its own name (`--kubernetes-version`). */
  readonly versionName?: string;
  /** The name of the reader's own gate (`--gate`), for the same message. */
  readonly gateName?: string;
  /** The environment (default: the process's). */
  readonly env?: { readonly [name: string]: string | undefined };
}

/** A target as `assembleTarget` makes it. */
export interface AssembledTarget {
  /** The version as given (`1.29`, `v1.29.3`). */
  readonly raw: string;
  readonly version: KubeVersion;
  readonly source: VersionSource;
  /** The SidecarContainers gate: as set, else false. */
  readonly gate: boolean;
  /** Whether a source set the gate (else `gate` is the default, false). */
  readonly gateSet: boolean;
}

/** What an empty variable falls back to, for its message (`TargetReading`), as `r` would fall back. */
export function targetReading(r: TargetRequest): TargetReading {
  const configure = r.configured !== undefined ? 'Sidecars.configure() or ' : '';
  return {
    fail: r.fail,
    versionFallback: r.unset !== undefined ? r.versionName ?? 'the reader\'s kubernetesVersion' : `${configure}the default ${DEFAULT_KUBERNETES_VERSION}`,
    gateFallback: `${configure}${r.gateName !== undefined ? `${r.gateName} or ` : ''}the default false`,
    ...(r.env !== undefined ? { env: r.env } : {}),
  };
}

/**
 * The target of every reader (the constructs, SidecarTimeline, the CLI's `check`/`timeline`, a
 * render config, the validation plugin): the version from the first source that sets it (see
 * `targetVersion`), checked; the gate, else false; and when nothing sets the version, the default
 * release or `r.unset`'s error. Versions checked once are kept (frozen, shared by every reader).
 */
export function assembleTarget(r: TargetRequest): AssembledTarget {
  const reading = targetReading(r);
  const found = targetVersion(r, reading);
  if (found === undefined && r.unset !== undefined) throw r.unset();
  const { raw, source } = found ?? { raw: DEFAULT_KUBERNETES_VERSION, source: 'default' as VersionSource };
  let version = ACCEPTED_VERSIONS.get(raw);
  if (!version) {
    // (a version from the environment was checked by targetVersion, which names the variable)
    try {
      version = Object.freeze(checkVersion(r.where, raw));
    } catch (e) {
      throw e instanceof SidecarError && r.failGiven !== undefined ? r.failGiven(e) : e;
    }
    if (ACCEPTED_VERSIONS.size >= 64) ACCEPTED_VERSIONS.clear();
    ACCEPTED_VERSIONS.set(raw, version);
  }
  const gate = targetGate(r, reading);
  return { raw, version, source, gate: gate ?? false, gateSet: gate !== undefined };
}

/** Versions `checkVersion` accepted, by the text given (frozen: every reader with that text shares one). */
const ACCEPTED_VERSIONS = new Map<string, KubeVersion>();

/**
 * Throws unless `raw` is a version we accept.
 * @internal
 */
export function checkVersion(who: Where, raw: string): KubeVersion {
  const v = parseKubernetesVersion(raw);
  const vendor = parseReleasePrefix(raw);
  if (!v && vendor && /^[-+]/.test(vendor.rest)) {
    throw who.error(`kubernetesVersion '${raw}' carries a vendor suffix (as \`kubectl get nodes\` prints it)`, raw,
      `drop it and give the Kubernetes version alone, e.g. '${vendor.text}'`);
  }
  if (!v) {
    throw who.error(`kubernetesVersion '${raw}' is not a Kubernetes version`, raw,
      "Use the lowest minor version of the cluster's API server and nodes, e.g. '1.29', 'v1.29', '1.29.3' or 'v1.29.3'", '. ');
  }
  if (v.minor < OLDEST_SUPPORTED_MINOR) {
    // YAML and JSON read an unquoted 1.30 as the number 1.3, which arrives here as '1.3'.
    const yamlTrap = v.patch === undefined && /\.\d$/.test(raw) && v.minor * 10 >= OLDEST_SUPPORTED_MINOR
      ? `If the value came from YAML or JSON, an unquoted 1.${v.minor}0 is read as the number 1.${v.minor}: quote it ('1.${v.minor}0'). `
      : '';
    throw who.error(`kubernetesVersion '${raw}' is older than 1.${OLDEST_SUPPORTED_MINOR}, the oldest release this library supports`, raw,
      `${yamlTrap}Give the lowest minor version of the cluster's API server and nodes, 1.${OLDEST_SUPPORTED_MINOR} or later`, '. ');
  }
  return v;
}

/**
 * What a synthesis prints (once) when a sidecar construct had no target set: the layout it got
 * and how to choose (docs/target.md, "No target set": why a notice and not an error).
 * @internal
 */
export const DEFAULT_TARGET_NOTICE =
  `no target Kubernetes release is set (no kubernetesVersion prop, no ${KUBERNETES_VERSION_ENV}, no Sidecars.configure()), so the ` +
  `sidecars were emitted for the default, Kubernetes ${DEFAULT_KUBERNETES_VERSION}, the oldest release the library supports: the LEGACY ` +
  'layout (each sidecar one more entry of spec.containers, stopped together with the app; a Job\'s sidecars exit through a wrapper). ' +
  'A cluster whose API server and every kubelet run 1.29 or later takes native sidecars (started before the app, stopped after it): ' +
  `set its lowest release with Sidecars.configure(app, { kubernetesVersion: '1.35' }), or ${KUBERNETES_VERSION_ENV}=1.35 for one ` +
  'synthesis; `npx cdk8s-sidecars target` prints it for the cluster kubectl points at. ' +
  `Set '${DEFAULT_KUBERNETES_VERSION}' to keep the legacy layout without this notice.`;
