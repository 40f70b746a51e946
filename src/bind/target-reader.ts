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
import { SidecarError, Where } from '../private/errors';
import {
  KubeVersion, LayoutDecision, SidecarLayout, SidecarMode, formatFullVersion, formatVersion, resolveLayout,
} from '../target/capabilities';
import {
  DEFAULT_TARGET_NOTICE, KUBERNETES_VERSION_ENV, ResolvedTarget, SIDECAR_CONTAINERS_GATE_ENV, SidecarTargetOptions, TargetRequest, VersionSource,
  assembleTarget, checkVersion, gateSetInEnvironment, targetGate, targetReading, targetVersion,
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

  constructor(private readonly scope: IConstruct, private readonly options: SidecarTargetOptions, private readonly who: () => Where) {}

  /** The target as it resolves now (no check of the mode). */
  public resolved(): ResolvedTarget {
    return resolveTarget(this.scope, this.options);
  }

  /** The target, or an error when it cannot run the requested mode. */
  public decide(): ResolvedTarget {
    const t = this.resolved();
    if (t.decision.error !== undefined) throw this.who().place(t.decision.error);
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
    if (target.overrides !== undefined) {
      printSynthesisNotice(this.scope, `${this.scope.node.path}: ${target.overrides}; emitted for the construct's own ` +
        `(overrideAppTarget: true), Kubernetes ${formatFullVersion(target.version)}, as asked.`);
    }
    const layout = target.decision.layout!;
    const read = this.layoutRead;
    if (read && read.layout !== layout) {
      throw this.who().error(
        `\`layout\` was read as ${read.layout} (Kubernetes ${read.version}, from ${read.source}), but at synthesis ` +
        `the target is Kubernetes ${formatVersion(target.version)} from ${SOURCE_TEXT[target.source]}, which makes it ${layout}: code ` +
        'that branched on `layout` would be wrong',
        layout, 'Set the target (Sidecars.configure, kubernetesVersion or the environment) before reading `layout`, or branch at synthesis instead', '. ',
      );
    }
    return target;
  }
}

/**
 * A construct and its workload must be in one cdk8s App: the binding wraps the workload's
 * `toJson()`, and another App never validates this construct, so nothing would be emitted.
 */
export function checkSameApp(who: Where, self: IConstruct, workload: ApiObject): void {
  if (self.node.root !== workload.node.root) {
    throw who.error(
      `workload '${workload.node.path}' belongs to another cdk8s App than this construct, so this sidecar would never be synthesized`,
      workload, "Create the construct in the workload's App (e.g. in the workload's chart)", '. ',
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
export function resolveTarget(self: IConstruct, props: SidecarTargetOptions, options: { readonly checksOnly?: boolean } = {}): ResolvedTarget {
  // (read at every render of every sidecar: without copies of the options, and each version
  // string and layout decision worked out once, since an app of hundreds of workloads reads it thousands of times)
  let inherited: Mutable<SidecarTargetOptions> | undefined;
  // outermost first, so that nearer scopes overwrite
  for (const scope of self.node.scopes) {
    const c = configuredOn(scope);
    if (!c) continue;
    inherited ??= {};
    for (const key of Object.keys(c) as Array<keyof SidecarTargetOptions>) {
      if (c[key] !== undefined) (inherited as any)[key] = c[key];
    }
  }
  inherited ??= NOTHING_CONFIGURED;
  // The one assembly of a target (src/target/resolver.ts): the prop, the environment, Sidecars.configure(), the default.
  const request: TargetRequest = {
    version: props.kubernetesVersion,
    gate: props.sidecarContainersGate,
    configured: inherited,
    where: new Where(self.node.path),
    fail: (e: SidecarError) => e.placedAt(self.node.path),
  };
  const { version, source, gate } = assembleTarget(request);
  const mode = props.mode ?? inherited.mode ?? SidecarMode.AUTO;
  // (SidecarValidation emits nothing: its own version is the release it checks against, checksOnly)
  const overrides = !options.checksOnly && (props.kubernetesVersion !== undefined || props.sidecarContainersGate !== undefined)
    ? disagreement(self, props, inherited, targetReading(request), version, gate) : undefined;
  const toolsImage = props.toolsImage ?? inherited.toolsImage;
  const watchAppExit = props.watchAppExit ?? inherited.watchAppExit ?? false;
  const decision = layoutDecision(version, mode, gate);
  return {
    version, source, mode, gate, decision, watchAppExit, ...(toolsImage !== undefined ? { toolsImage } : {}), ...(overrides ? { overrides } : {}),
  };
}

/**
 * One target per app (docs/target.md, "One target per app"): a construct's own `kubernetesVersion`
 * or `sidecarContainersGate` that differs from the app's target (the environment variable, else
 * `Sidecars.configure()`) is an error unless `overrideAppTarget` says it is meant; then the text of
 * the app's target, for the notice. Nothing when no app-level target is set or they agree.
 */
function disagreement(
  self: IConstruct, props: SidecarTargetOptions, inherited: SidecarTargetOptions,
  reading: Parameters<typeof targetVersion>[1], version: KubeVersion, gate: boolean,
): string | undefined {
  const app = { configured: inherited };
  const differences: string[] = [];
  if (props.kubernetesVersion !== undefined) {
    const appVersion = targetVersion(app, reading);
    if (appVersion) {
      const theirs = checkVersion(new Where(appVersion.source === 'env' ? `environment variable ${KUBERNETES_VERSION_ENV}` : 'Sidecars.configure()'), appVersion.raw);
      if (formatFullVersion(theirs) !== formatFullVersion(version)) {
        differences.push(`kubernetesVersion '${props.kubernetesVersion}' differs from the app's target, Kubernetes ${formatFullVersion(theirs)} ` +
          `from ${SOURCE_TEXT[appVersion.source]}` + layoutsText(version, theirs, props, gate));
      }
    }
  }
  if (props.sidecarContainersGate !== undefined) {
    const appGate = targetGate(app, reading);
    if (appGate !== undefined && appGate !== props.sidecarContainersGate) {
      const from = gateSetInEnvironment(reading) ? `the environment variable ${SIDECAR_CONTAINERS_GATE_ENV}` : SOURCE_TEXT.configure;
      differences.push(`sidecarContainersGate ${props.sidecarContainersGate} differs from the app's, ${appGate} from ${from}`);
    }
  }
  if (differences.length === 0) return undefined;
  const text = differences.join('; ');
  if (props.overrideAppTarget === true) return text;
  throw new Where(self.node.path === '' ? 'the App' : self.node.path).error(
    `${text}: the construct's own prop would win in silence, and a pipeline that synthesizes the app for each cluster would ship ` +
    'this workload for another release than the rest',
    props.kubernetesVersion ?? props.sidecarContainersGate,
    'Remove the prop so that the construct follows the app\'s target (Sidecars.configure or the environment variable: one target per app, ' +
    'docs/target.md), or set overrideAppTarget: true on the construct if this workload really runs on nodes of another release',
    '. ',
  );
}

/** ' (native here, legacy there)' where the two releases give different layouts. */
function layoutsText(mine: KubeVersion, theirs: KubeVersion, props: SidecarTargetOptions, gate: boolean): string {
  const mode = props.mode ?? SidecarMode.AUTO;
  const a = resolveLayout(mine, mode, gate).layout;
  const b = resolveLayout(theirs, mode, gate).layout;
  return a && b && a !== b ? ` (the construct's gives the ${a} layout, the app's the ${b} one)` : '';
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
const NOTHING_CONFIGURED: SidecarTargetOptions = Object.freeze({});
/** `resolveLayout`'s decisions that are no error (frozen), by version, mode and gate. */
const DECISIONS = new Map<string, LayoutDecision>();

function layoutDecision(version: KubeVersion, mode: SidecarMode, gate: boolean): LayoutDecision {
  const key = `${version.minor}|${mode}|${gate}`;
  let decision = DECISIONS.get(key);
  if (!decision) {
    decision = resolveLayout(version, mode, gate);
    // an error is made afresh each time (it is placed at the construct that reads it)
    if (decision.error !== undefined) return decision;
    decision = Object.freeze(decision);
    if (DECISIONS.size >= 64) DECISIONS.clear();
    DECISIONS.set(key, decision);
  }
  return decision;
}
