/**
 * The target as a construct reads it: what `Sidecars.configure()` put on the scopes
 * (`configureScope`), resolved with the construct's props and the environment by the one reader
 * of the sources, src/target/resolver.ts (`resolveTarget`). `TargetReader` resolves it afresh at
 * every call (so `Sidecars.configure()` and the environment count whenever they are set), fixes
 * the layout once read through `layout` (a later target that flips it is an error at synthesis,
 * naming both), and checks that the workload is in the construct's own App. Shared by the sidecar
 * constructs (SidecarBase), WithMeshProxy, SidecarValidation, NativeSidecarGuard and
 * `Sidecars.targetOf`, which read the target the same way.
 */
import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import { printSynthesisNotice } from './binding';
import { DEFAULT_KUBERNETES_VERSION, SidecarLayout, SidecarMode, formatVersion, resolveLayout } from '../target/capabilities';
import {
  DEFAULT_TARGET_NOTICE, KUBERNETES_VERSION_ENV, ResolvedTarget, SidecarTargetOptions, VersionSource, checkVersion, targetGate, targetVersion,
} from '../target/resolver';

/** Where a target came from, for messages. */
const SOURCE_TEXT: Record<VersionSource, string> = {
  prop: 'its kubernetesVersion prop',
  env: `the environment variable ${KUBERNETES_VERSION_ENV}`,
  configure: 'Sidecars.configure() on an enclosing scope',
  default: 'the default',
};

export class TargetReader {
  /** The layout once read through `layout()` (a later change of the target is an error). */
  private layoutRead?: { readonly layout: SidecarLayout; readonly version: string; readonly source: string };

  constructor(private readonly scope: IConstruct, private readonly options: SidecarTargetOptions, private readonly who: () => string) {}

  /** The target as it resolves now (no check of the mode). */
  public resolved(): ResolvedTarget {
    return resolveTarget(this.scope, this.options);
  }

  /** The target, or an error when it cannot run the requested mode. */
  public decide(): ResolvedTarget {
    const t = this.resolved();
    if (t.decision.error !== undefined) throw new Error(`${this.who()}: ${t.decision.error}`);
    return t;
  }

  /** The layout, read by user code: fixed from now on. */
  public layout(): SidecarLayout {
    const t = this.decide();
    const layout = t.decision.layout!;
    this.layoutRead ??= { layout, version: formatVersion(t.version), source: SOURCE_TEXT[t.source] };
    return layout;
  }

  /**
   * The target at synthesis: `decide()`, and an error when a layout read earlier has flipped. A
   * target that no prop, environment variable or `Sidecars.configure()` set prints the notice of
   * the default (docs/target.md, "No target set").
   */
  public atSynthesis(): ResolvedTarget {
    const target = this.decide();
    if (target.source === 'default') printSynthesisNotice(this.scope, DEFAULT_TARGET_NOTICE);
    const layout = target.decision.layout!;
    const read = this.layoutRead;
    if (read && read.layout !== layout) {
      throw new Error(
        `${this.who()}: \`layout\` was read as ${read.layout} (Kubernetes ${read.version}, from ${read.source}), but at synthesis ` +
        `the target is Kubernetes ${formatVersion(target.version)} from ${SOURCE_TEXT[target.source]}, which makes it ${layout}: code ` +
        'that branched on `layout` would be wrong. Set the target (Sidecars.configure, kubernetesVersion or the environment) ' +
        'before reading `layout`, or branch at synthesis instead.',
      );
    }
    return target;
  }
}

/**
 * A construct and its workload must be in one cdk8s App: the binding wraps the workload's
 * `toJson()`, and another App never validates this construct, so nothing would be emitted.
 */
export function checkSameApp(who: string, self: IConstruct, workload: ApiObject): void {
  if (self.node.root !== workload.node.root) {
    throw new Error(
      `${who}: workload '${workload.node.path}' belongs to another cdk8s App than this construct, so this sidecar would never ` +
      "be synthesized. Create the construct in the workload's App (e.g. in the workload's chart).",
    );
  }
}

const CONFIGURED = Symbol.for('cdk8s-sidecars.defaults');

/** Records `Sidecars.configure()`'s options (checked there) on the scope itself. */
export function configureScope(scope: IConstruct, options: SidecarTargetOptions): void {
  (scope as any)[CONFIGURED] = { ...options };
}

/** What `Sidecars.configure()` set on this very scope (not its parents), if anything. */
export function configuredOn(scope: IConstruct): SidecarTargetOptions | undefined {
  return (scope as any)[CONFIGURED];
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
    const c = configuredOn(scope);
    if (!c) continue;
    Object.assign(inherited, stripUndefined(c));
  }
  // The one reader of the sources (src/target/resolver.ts); the default when none sets the version.
  const reading = {
    fail: (problem: string) => new Error(`${self.node.path}: ${problem}`),
    versionFallback: 'Sidecars.configure() or the default 1.27',
    gateFallback: 'Sidecars.configure() or the default false',
  };
  const given = { version: props.kubernetesVersion, gate: props.sidecarContainersGate, configured: inherited };
  const { raw, source } = targetVersion(given, reading) ?? { raw: DEFAULT_KUBERNETES_VERSION, source: 'default' as VersionSource };
  // (a version from the environment was checked by the resolver, which names the variable)
  const version = checkVersion(self.node.path, raw);
  const mode = props.mode ?? inherited.mode ?? SidecarMode.AUTO;
  const gate = targetGate(given, reading) ?? false;
  const toolsImage = props.toolsImage ?? inherited.toolsImage;
  const watchAppExit = props.watchAppExit ?? inherited.watchAppExit ?? false;
  const decision = resolveLayout(version, mode, gate);
  return { version, source, mode, gate, decision, watchAppExit, ...(toolsImage !== undefined ? { toolsImage } : {}) };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
