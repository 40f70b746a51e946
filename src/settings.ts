import { IConstruct } from 'constructs';
import {
  DEFAULT_KUBERNETES_VERSION, KubeVersion, LayoutDecision, SidecarMode,
  parseKubernetesVersion, resolveLayout,
} from './target';

/**
 * The target cluster: which Kubernetes release to emit for and how to choose the layout.
 */
export interface SidecarTargetOptions {
  /**
   * The LOWEST minor version among the target cluster's API server and nodes
   * (`1.29`, `v1.29`, `1.29.3` or `v1.29.3`). Native sidecars need every kubelet to be new
   * enough, not only the control plane.
   *
   * Precedence: this prop on a construct, then the environment variable
   * `CDK8S_SIDECARS_KUBERNETES_VERSION`, then `Sidecars.configure()` on an enclosing scope,
   * then `1.27`.
   *
   * @default - see precedence above; finally '1.27' (legacy layout)
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
   * @default false
   */
  readonly sidecarContainersGate?: boolean;
}

/** The environment variable a pipeline sets to synthesize the same app for another cluster. */
export const KUBERNETES_VERSION_ENV = 'CDK8S_SIDECARS_KUBERNETES_VERSION';

const DEFAULTS = Symbol.for('cdk8s-sidecars.defaults');

/**
 * Defaults for every sidecar construct in a scope.
 */
export class Sidecars {
  /**
   * Sets the target for every sidecar construct inside `scope` (an App, a Chart or any
   * construct), whether those constructs are created before or after this call: the target is
   * read at synthesis. A nearer scope's settings win over an outer one's.
   *
   * @example
   * Sidecars.configure(app, { kubernetesVersion: '1.29' });
   */
  public static configure(scope: IConstruct, options: SidecarTargetOptions): void {
    if (options.kubernetesVersion !== undefined) {
      checkVersion(`Sidecars.configure(${describe(scope)})`, options.kubernetesVersion);
    }
    (scope as any)[DEFAULTS] = { ...options };
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
export function checkVersion(who: string, raw: string): KubeVersion {
  const v = parseKubernetesVersion(raw);
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
  return v;
}

/** Where the target version came from, for messages. @internal */
export type VersionSource = 'prop' | 'env' | 'configure' | 'default';

/** A construct's resolved target. @internal */
export interface ResolvedTarget {
  readonly version: KubeVersion;
  readonly source: VersionSource;
  readonly mode: SidecarMode;
  readonly gate: boolean;
  readonly decision: LayoutDecision;
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
    Object.assign(inherited, stripUndefined(c));
  }
  const env = process.env[KUBERNETES_VERSION_ENV];

  let raw: string;
  let source: VersionSource;
  if (props.kubernetesVersion !== undefined) {
    raw = props.kubernetesVersion; source = 'prop';
  } else if (env !== undefined && env !== '') {
    raw = env; source = 'env';
  } else if (inherited.kubernetesVersion !== undefined) {
    raw = inherited.kubernetesVersion; source = 'configure';
  } else {
    raw = DEFAULT_KUBERNETES_VERSION; source = 'default';
  }
  const who = source === 'env' ? `${self.node.path}: environment variable ${KUBERNETES_VERSION_ENV}` : self.node.path;
  const version = checkVersion(who, raw);
  const mode = props.mode ?? inherited.mode ?? SidecarMode.AUTO;
  const gate = props.sidecarContainersGate ?? inherited.sidecarContainersGate ?? false;
  return { version, source, mode, gate, decision: resolveLayout(version, mode, gate) };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
