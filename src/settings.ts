import { IConstruct } from 'constructs';
import { checkBoolean, checkImage, checkString, describeValue, isPropsObject } from './bind/checks';
import {
  DEFAULT_KUBERNETES_VERSION, KubeVersion, LayoutDecision, OLDEST_SUPPORTED_MINOR, SidecarLayout, SidecarMode,
  formatFullVersion, parseKubernetesVersion, resolveLayout,
} from './target/capabilities';
import { KUBERNETES_VERSION_ENV, SIDECAR_CONTAINERS_GATE_ENV, VersionSource, targetGate, targetVersion } from './target/resolver';

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
   * Precedence: this prop on a construct, then the environment variable
   * `CDK8S_SIDECARS_KUBERNETES_VERSION`, then `Sidecars.configure()` on an enclosing scope,
   * then `1.27` with a notice on stderr that says so and how to choose (docs/target.md, "No target set").
   *
   * @default - the environment variable CDK8S_SIDECARS_KUBERNETES_VERSION if set, else the
   * value given to Sidecars.configure() on an enclosing scope, else '1.27' (legacy layout, with a notice)
   */
  readonly kubernetesVersion?: string;

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
   * on an enclosing scope, then `false`.
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

const DEFAULTS = Symbol.for('cdk8s-sidecars.defaults');

/**
 * The target a scope resolves to (`Sidecars.targetOf`): what a sidecar construct created there
 * without target props of its own emits for.
 */
export interface SidecarTarget {
  /** The version, as the constructs read it: `'1.29'`, or `'1.29.3'` when a patch was given. */
  readonly kubernetesVersion: string;
  /** The minor version, e.g. `29`. */
  readonly minor: number;
  /**
   * The patch version, when the target names one (then the pods are checked for known bugs).
   * @default - none: the target is a bare minor
   */
  readonly patch?: number;
  /** Whether the SidecarContainers feature gate is taken to be on (only matters for 1.28). */
  readonly sidecarContainersGate: boolean;
  /** The mode (`Sidecars.configure()`'s, else `SidecarMode.AUTO`). */
  readonly mode: SidecarMode;
  /**
   * The layout that mode gives at this target.
   * @default - none: the mode cannot be emitted at this target (`SidecarMode.NATIVE` below 1.29
   * without the gate), which a construct reports as an error
   */
  readonly layout?: SidecarLayout;
  /** Where the version came from: `'env'` (CDK8S_SIDECARS_KUBERNETES_VERSION), `'configure'` or `'default'`. */
  readonly source: string;
}

/**
 * Defaults for every sidecar construct in a scope.
 */
export class Sidecars {
  /** The environment variable a pipeline sets to synthesize the same app for another cluster. */
  public static readonly KUBERNETES_VERSION_ENV: string = KUBERNETES_VERSION_ENV;

  /**
   * The environment variable a pipeline sets (`true` or `false`) to say whether the 1.28
   * SidecarContainers feature gate is on; the counterpart of `sidecarContainersGate`.
   */
  public static readonly SIDECAR_CONTAINERS_GATE_ENV: string = SIDECAR_CONTAINERS_GATE_ENV;

  /** The release the library emits for when nothing else says: the release cdk8s-plus-27 is for. */
  public static readonly DEFAULT_KUBERNETES_VERSION: string = DEFAULT_KUBERNETES_VERSION;

  /**
   * Sets the target for every sidecar construct inside `scope` (an App, a Chart or any
   * construct), whether those constructs are created before or after this call: the target is
   * read at synthesis. A nearer scope's settings win over an outer one's.
   *
   * @example
   * Sidecars.configure(app, { kubernetesVersion: '1.29' });
   */
  public static configure(scope: IConstruct, options: SidecarTargetOptions): void {
    const who = `Sidecars.configure(${describe(scope)})`;
    if (!isPropsObject(options)) throw new Error(`${who}: the options ${describeValue(options)} are not an object; give e.g. { kubernetesVersion: '1.29' }.`);
    checkString(who, 'kubernetesVersion', options.kubernetesVersion, "'1.29'");
    checkBoolean(who, 'sidecarContainersGate', options.sidecarContainersGate);
    checkString(who, 'toolsImage', options.toolsImage, "'registry.example.com/mirror/busybox:1.36.1-musl'");
    if (options.kubernetesVersion !== undefined) {
      checkVersion(`Sidecars.configure(${describe(scope)})`, options.kubernetesVersion);
    }
    if (options.toolsImage !== undefined) {
      checkImage(`Sidecars.configure(${describe(scope)})`, 'toolsImage', options.toolsImage, 'registry.example.com/mirror/busybox:1.36.1-musl');
    }
    (scope as any)[DEFAULTS] = { ...options };
  }

  /**
   * The target that a sidecar construct created in `scope` without target props of its own
   * resolves to now: the environment variables, then `Sidecars.configure()` on `scope` or an
   * enclosing scope, then the default (1.27). A code base that synthesizes for several clusters
   * can ask it before it creates a construct that exists only on some of them (e.g.
   * `NativeSidecarGuard`, which needs the policy API of 1.30). Throws the constructs' error when
   * the version (e.g. the environment variable) is invalid.
   *
   * @example
   * if (Sidecars.targetOf(app).minor >= 30) {
   *   new NativeSidecarGuard(platformChart, 'guard', { namespaces: ['shop'] });
   * }
   */
  public static targetOf(scope: IConstruct): SidecarTarget {
    const t = resolveTarget(scope, {});
    return {
      kubernetesVersion: formatFullVersion(t.version),
      minor: t.version.minor,
      patch: t.version.patch,
      sidecarContainersGate: t.gate,
      mode: t.mode,
      layout: t.decision.layout,
      source: t.source,
    };
  }

  /**
   * The settings `configure()` put on this very scope (not its parents), if any.
   */
  public static configured(scope: IConstruct): SidecarTargetOptions | undefined {
    return (scope as any)[DEFAULTS];
  }

  private constructor() {}
}

function describe(scope: IConstruct): string {
  return scope.node.path === '' ? 'the App' : `'${scope.node.path}'`;
}

/**
 * Throws unless `raw` is a version we accept.
 * @internal
 */
export function checkVersion(whoIs: string | (() => string), raw: string): KubeVersion {
  const v = parseKubernetesVersion(raw);
  if (v && v.minor >= OLDEST_SUPPORTED_MINOR) return v;
  const who = typeof whoIs === 'string' ? whoIs : whoIs();
  const vendor = /^(v?\d+\.\d+(?:\.\d+)?)[-+]/.exec(raw);
  if (!v && vendor) {
    throw new Error(
      `${who}: kubernetesVersion '${raw}' carries a vendor suffix (as \`kubectl get nodes\` prints it); ` +
      `drop it and give the Kubernetes version alone, e.g. '${vendor[1]}'.`,
    );
  }
  if (!v) {
    throw new Error(
      `${who}: kubernetesVersion '${raw}' is not a Kubernetes version. ` +
      "Use the lowest minor version of the cluster's API server and nodes, e.g. '1.29', 'v1.29', '1.29.3' or 'v1.29.3'.",
    );
  }
  if (v.minor < OLDEST_SUPPORTED_MINOR) {
    // YAML and JSON read an unquoted 1.30 as the number 1.3, which arrives here as '1.3'.
    const yamlTrap = v.patch === undefined && /\.\d$/.test(raw) && v.minor * 10 >= OLDEST_SUPPORTED_MINOR
      ? ` If the value came from YAML or JSON, an unquoted 1.${v.minor}0 is read as the number 1.${v.minor}: quote it ('1.${v.minor}0').`
      : '';
    throw new Error(
      `${who}: kubernetesVersion '${raw}' is older than 1.${OLDEST_SUPPORTED_MINOR}, the oldest release this library supports.` +
      `${yamlTrap} Give the lowest minor version of the cluster's API server and nodes, 1.${OLDEST_SUPPORTED_MINOR} or later.`,
    );
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
  `set its lowest release with Sidecars.configure(app, { kubernetesVersion: '1.35' }), ${KUBERNETES_VERSION_ENV}=1.35, or a construct's ` +
  'kubernetesVersion; `npx cdk8s-sidecars target` prints it for the cluster kubectl points at. ' +
  `Set '${DEFAULT_KUBERNETES_VERSION}' to keep the legacy layout without this notice.`;

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
}

/**
 * Resolves the target of the construct `self` at synthesis time (precedence documented on
 * `SidecarTargetOptions.kubernetesVersion`). Throws on an invalid version.
 * @internal
 */
export function resolveTarget(self: IConstruct, props: SidecarTargetOptions): ResolvedTarget {
  const inherited: SidecarTargetOptions = {};
  // outermost first, so that nearer scopes overwrite
  for (const scope of self.node.scopes) {
    const c = Sidecars.configured(scope);
    if (!c) continue;
    for (const [k, v] of Object.entries(c)) if (v !== undefined) (inherited as Record<string, unknown>)[k] = v;
  }
  // The one reader of the sources (src/target/resolver.ts); the default when none sets the version.
  const reading = {
    fail: (problem: string) => new Error(`${self.node.path}: ${problem}`),
    versionFallback: 'Sidecars.configure() or the default 1.27',
    gateFallback: 'Sidecars.configure() or the default false',
  };
  const given = { version: props.kubernetesVersion, gate: props.sidecarContainersGate, configured: inherited };
  const { raw, source } = targetVersion(given, reading) ?? { raw: DEFAULT_KUBERNETES_VERSION, source: 'default' as VersionSource };
  // (the path only for a message: a construct's path is read from the tree each time)
  const who = () => source === 'env' ? `${self.node.path}: environment variable ${KUBERNETES_VERSION_ENV}` : self.node.path;
  const version = checkVersion(who, raw);
  const mode = props.mode ?? inherited.mode ?? SidecarMode.AUTO;
  const gate = targetGate(given, reading) ?? false;
  const toolsImage = props.toolsImage ?? inherited.toolsImage;
  const watchAppExit = props.watchAppExit ?? inherited.watchAppExit ?? false;
  const decision = resolveLayout(version, mode, gate);
  return { version, source, mode, gate, decision, watchAppExit, ...(toolsImage !== undefined ? { toolsImage } : {}) };
}

