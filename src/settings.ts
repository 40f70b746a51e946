/**
 * `Sidecars`: the target of the sidecar constructs in a scope, and what it resolves to. The
 * options and their checks are the resolver's (src/target/resolver.ts), the resolution of a
 * construct's target is the bind layer's (src/bind/target-reader.ts `resolveTarget`).
 */
import { IConstruct } from 'constructs';
import { checkBoolean, checkImage, checkString, describeValue, isPropsObject } from './bind/checks';
import { configureScope, configuredOn, resolveTarget } from './bind/target-reader';
import { Where } from './private/errors';
import { DEFAULT_KUBERNETES_VERSION, SidecarLayout, SidecarMode, formatFullVersion } from './target/capabilities';
import { KUBERNETES_VERSION_ENV, SIDECAR_CONTAINERS_GATE_ENV, SidecarTargetOptions, checkVersion } from './target/resolver';

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
    const who = new Where(`Sidecars.configure(${describe(scope)})`);
    if (!isPropsObject(options)) throw who.error(`the options ${describeValue(options)} are not an object`, options, "give e.g. { kubernetesVersion: '1.29' }");
    checkString(who, 'kubernetesVersion', options.kubernetesVersion, "'1.29'");
    checkBoolean(who, 'sidecarContainersGate', options.sidecarContainersGate);
    if (options.overrideAppTarget !== undefined) {
      throw who.error(`overrideAppTarget ${describeValue(options.overrideAppTarget)} is a construct's prop: Sidecars.configure() sets the app's target itself`,
        options.overrideAppTarget, 'Remove it here; give it on the construct whose own kubernetesVersion is meant to differ from the app\'s', '. ');
    }
    checkString(who, 'toolsImage', options.toolsImage, "'registry.example.com/mirror/busybox:1.36.1-musl'");
    if (options.kubernetesVersion !== undefined) {
      checkVersion(who, options.kubernetesVersion);
    }
    if (options.toolsImage !== undefined) {
      checkImage(who, 'toolsImage', options.toolsImage, 'registry.example.com/mirror/busybox:1.36.1-musl');
    }
    configureScope(scope, options);
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
    return configuredOn(scope);
  }

  private constructor() {}
}

function describe(scope: IConstruct): string {
  return scope.node.path === '' ? 'the App' : `'${scope.node.path}'`;
}
