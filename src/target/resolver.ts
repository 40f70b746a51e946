/**
 * The one reader of the target's sources, used by the constructs (src/settings.ts
 * `resolveTarget`), SidecarTimeline, the CLI's `check`/`timeline` and `render`. One precedence:
 * what is given where the target is read (a construct's prop, a `--kubernetes-version` or
 * `--gate` flag, a render config key), then the environment variable, then
 * `Sidecars.configure()` (the constructs only: the others have no scope). One rule for the
 * environment: a variable is read only where it counts (after what is given); unset, it says
 * nothing; set but empty (or blank) it is an error, since a pipeline that meant to set it has a
 * bug and a silent fallback would hide it; the gate is `true` or `false`, nothing else.
 *
 * What happens when nothing sets the version is each caller's (the constructs and SidecarTimeline
 * emit for the default release, the CLI asks for a version): these functions then return
 * undefined.
 */
import { SidecarError } from '../private/errors';

/** The environment variable a pipeline sets to synthesize the same app for another cluster. */
export const KUBERNETES_VERSION_ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';

/** The environment variable that says whether the 1.28 SidecarContainers feature gate is on. */
export const SIDECAR_CONTAINERS_GATE_ENV = 'CDK8S_SIDECARS_SIDECAR_CONTAINERS_GATE';

/** Where the target version came from, for messages. */
export type VersionSource = 'prop' | 'env' | 'configure' | 'default';

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
  if (env !== undefined) return { raw: env, source: 'env' };
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
