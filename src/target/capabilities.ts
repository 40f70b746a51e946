/**
 * Layer 1: the target Kubernetes release and what it allows.
 *
 * Pure functions over a parsed version. This is the ONE place where the native/legacy
 * decision is made (`resolveLayout`). See SIDECARS.md §2 for the version matrix.
 */

/**
 * How a construct chooses the layout of its sidecar.
 */
export enum SidecarMode {
  /**
   * Native on Kubernetes >= 1.29, native on 1.28 only when the SidecarContainers feature gate
   * is on across the cluster, legacy otherwise.
   */
  AUTO = 'AUTO',
  /**
   * Always native (`initContainers` with `restartPolicy: Always`). An error on a target that
   * would drop or reject the field (<= 1.27, or 1.28 without the feature gate).
   */
  NATIVE = 'NATIVE',
  /**
   * Always legacy (one more entry in `containers`), whatever the target.
   */
  LEGACY = 'LEGACY',
}

/**
 * The layout a sidecar is emitted in.
 */
export enum SidecarLayout {
  /**
   * An init container with `restartPolicy: Always`: started before the app, stopped after it,
   * does not block Job completion.
   * @see https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/
   */
  NATIVE = 'NATIVE',
  /**
   * One more entry in `spec.containers`, with a `preStop` delay so it outlives the app.
   */
  LEGACY = 'LEGACY',
}

/**
 * The release the library emits for when nothing else says: the release cdk8s-plus-27 is for
 * (public as `Sidecars.DEFAULT_KUBERNETES_VERSION`).
 * @internal
 */
export const DEFAULT_KUBERNETES_VERSION = '1.27';

/**
 * The oldest minor release the library emits for: 1.27, the release cdk8s-plus-27 is for.
 * @internal
 */
export const OLDEST_SUPPORTED_MINOR = 27;

/** A parsed Kubernetes release. @internal */
export interface KubeVersion {
  readonly major: number;
  readonly minor: number;
  /** The patch release when the user gave one (`1.29.3` -> 3); used for the known-bugs check. */
  readonly patch?: number;
  /** as the user wrote it */
  readonly raw: string;
}

/** A release version: `x.y` or `x.y.z`, with an optional `v`. */
export interface Release {
  readonly major: number;
  readonly minor: number;
  readonly patch?: number;
}

/**
 * The release a text starts with (`1.29`, `v1.29.3`, a mesh's `2.19`, an image tag's
 * `v1.19.3-debian-2.2`, a node's `v1.29.3-eks-adc7111`): the one grammar of a release version,
 * with the text it takes (`text`) and what follows (`rest`), which each caller judges. Undefined
 * when the text does not start with one.
 * @internal
 */
export function parseReleasePrefix(raw: string): (Release & { readonly text: string; readonly rest: string }) | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(raw);
  if (!m) return undefined;
  return {
    major: Number(m[1]),
    minor: Number(m[2]),
    ...(m[3] !== undefined ? { patch: Number(m[3]) } : {}),
    text: m[0],
    rest: raw.slice(m[0].length),
  };
}

/**
 * `x.y` or `x.y.z`, with an optional `v` (`1.29`, `v1.29.3`, a mesh's `2.19`), and nothing else.
 * Returns undefined for anything else.
 * @internal
 */
export function parseRelease(raw: string): Release | undefined {
  const p = parseReleasePrefix(raw);
  if (!p || p.rest !== '') return undefined;
  return { major: p.major, minor: p.minor, ...(p.patch !== undefined ? { patch: p.patch } : {}) };
}

/**
 * Parses `1.29`, `v1.29`, `1.29.3` or `v1.29.3`. Returns undefined for anything else.
 * @internal
 */
export function parseKubernetesVersion(raw: string): KubeVersion | undefined {
  const r = parseRelease(raw);
  if (!r) return undefined;
  const { major, minor, patch } = r;
  if (major !== 1 || minor > 99) return undefined;
  if (patch === undefined) return { major, minor, raw };
  if (patch > 999) return undefined;
  return { major, minor, patch, raw };
}

/** `1.29` @internal */
export function formatVersion(v: KubeVersion): string {
  return `${v.major}.${v.minor}`;
}

/** `1.29.3`, or `1.29` when no patch was given. @internal */
export function formatFullVersion(v: KubeVersion): string {
  return v.patch === undefined ? formatVersion(v) : `${v.major}.${v.minor}.${v.patch}`;
}

/**
 * What a target release does with sidecars (SIDECARS.md §2). Every version fact the library
 * relies on is here; the engine asks these instead of comparing version numbers.
 * @internal
 */
export interface TargetCapabilities {
  /** `initContainers[].restartPolicy: Always` is kept and honoured (1.29+, 1.28 with the gate). */
  readonly nativeSidecars: boolean;
  /** Native sidecars are stopped after the app containers, in reverse order (1.29+). */
  readonly orderedTermination: boolean;
  /**
   * The SidecarContainers gate is on by default (beta from 1.29): the version at which injectors
   * that read the cluster's version (the OpenTelemetry operator, Kuma, GCS FUSE) inject natively.
   */
  readonly nativeByDefault: boolean;
  /** The `sleep` lifecycle action (beta, on by default, from 1.30). */
  readonly sleepAction: boolean;
  /** `sleep` with 0 seconds (PodLifecycleSleepActionAllowZero, beta from 1.33). */
  readonly sleepZero: boolean;
  /**
   * `resizePolicy` on init containers (AllowSidecarResizePolicy follows InPlacePodVerticalScaling,
   * beta and on by default from 1.33).
   */
  readonly initContainerResizePolicy: boolean;
  /**
   * `restartPolicy` (Always, OnFailure, Never) on every container, not only `Always` on init
   * containers (ContainerRestartRules: alpha and off in 1.34, beta and on from 1.35).
   */
  readonly containerRestartPolicy: boolean;
  /**
   * `restartPolicyRules` (action `Restart` on exit codes) on containers that have a container
   * `restartPolicy` (ContainerRestartRules: alpha and off in 1.34, beta and on from 1.35; the
   * field does not exist before 1.34: kubernetes v1.35.0 pkg/features/kube_features.go).
   */
  readonly containerRestartRules: boolean;
  /**
   * The `RestartAllContainers` rule action, also on native sidecars, which then restart the
   * whole pod in place when they exit (RestartAllContainersOnContainerExits, KEP-5532: alpha and
   * off in 1.35, beta and on from 1.36: kubernetes v1.36.0 pkg/features/kube_features.go).
   */
  readonly restartAllContainers: boolean;
  /**
   * `resizePolicy` with `restartPolicy: RestartContainer` on an init container that is not a
   * native sidecar is refused (kubernetes#137458, first in v1.36.0 validation.go
   * validateInitContainers; allowed, and meaningless, in 1.33-1.35).
   */
  readonly initResizeRestartContainerRefused: boolean;
  /**
   * `lifecycle.stopSignal` (ContainerStopSignals, KEP-4960): alpha and off by default from 1.33
   * through 1.37 (kubernetes v1.37.2 pkg/features/kube_features.go has no beta entry), so no
   * release the library knows keeps it with its default gates; none before 1.33 has the field.
   */
  readonly stopSignal: boolean;
  /**
   * Pod-level `spec.resources` (PodLevelResources, KEP-2837: alpha and off in 1.32-1.33, beta and
   * on from 1.34; still beta in v1.37.2).
   */
  readonly podLevelResources: boolean;
  /**
   * The `podCertificate` projected volume source (PodCertificateRequest: alpha 1.34, beta and off
   * 1.35-1.36, GA and on from 1.37: kubernetes v1.37.2 pkg/features/kube_features.go).
   */
  readonly podCertificateProjection: boolean;
  /**
   * The `clusterTrustBundle` projected volume source (ClusterTrustBundleProjection: alpha 1.29,
   * beta and off 1.33-1.36, GA and on from 1.37).
   */
  readonly clusterTrustBundleProjection: boolean;
}

/** @internal */
export function capabilities(minor: number, gate: boolean): TargetCapabilities {
  return {
    nativeSidecars: minor >= 29 || (minor === 28 && gate),
    orderedTermination: minor >= 29,
    nativeByDefault: minor >= 29,
    sleepAction: minor >= 30,
    sleepZero: minor >= 33,
    initContainerResizePolicy: minor >= 33,
    containerRestartPolicy: minor >= 35,
    containerRestartRules: minor >= 35,
    restartAllContainers: minor >= 36,
    initResizeRestartContainerRefused: minor >= 36,
    stopSignal: false,
    podLevelResources: minor >= 34,
    podCertificateProjection: minor >= 37,
    clusterTrustBundleProjection: minor >= 37,
  };
}

/** The outcome of the layout decision. @internal */
export type LayoutDecision =
  | { readonly layout: SidecarLayout; readonly error?: undefined }
  | { readonly layout?: undefined; readonly error: string };

/**
 * THE native/legacy decision (SIDECARS.md §2).
 * @internal
 */
export function resolveLayout(v: KubeVersion, mode: SidecarMode, gate: boolean): LayoutDecision {
  const nativeWorks = capabilities(v.minor, gate).nativeSidecars;
  switch (mode) {
    case SidecarMode.LEGACY:
      return { layout: SidecarLayout.LEGACY };
    case SidecarMode.AUTO:
      return { layout: nativeWorks ? SidecarLayout.NATIVE : SidecarLayout.LEGACY };
    case SidecarMode.NATIVE:
      if (nativeWorks) return { layout: SidecarLayout.NATIVE };
      if (v.minor === 28) {
        return {
          error:
            `mode NATIVE on Kubernetes ${formatVersion(v)} without the SidecarContainers feature gate: ` +
            'the API server silently drops `restartPolicy: Always` from init containers, so the sidecar becomes a ' +
            'blocking init container (the pod hangs in Init) or is rejected for its probes. ' +
            'Set `sidecarContainersGate: true` if the gate is on in the API server and every kubelet, ' +
            'target 1.29 or later, or use SidecarMode.AUTO / SidecarMode.LEGACY.',
        };
      }
      return {
        error:
          `mode NATIVE on Kubernetes ${formatVersion(v)}: native sidecars need 1.29 (or 1.28 with the ` +
          'SidecarContainers feature gate); this release does not know `initContainers[].restartPolicy`, so the ' +
          'API server drops it (or rejects the object under strict field validation) and the pod hangs in Init. ' +
          'Target 1.29 or later, or use SidecarMode.AUTO / SidecarMode.LEGACY.',
      };
    default:
      return { error: `unknown mode '${mode}'; use SidecarMode.AUTO, SidecarMode.NATIVE or SidecarMode.LEGACY` };
  }
}
