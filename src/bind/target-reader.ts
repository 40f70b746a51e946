/**
 * The target as a construct reads it: resolved afresh at every call (so `Sidecars.configure()` and
 * the environment count whenever they are set), the layout fixed once read through `layout`
 * (a later target that flips it is an error at synthesis, naming both), and the check that the
 * workload is in the construct's own App. Shared by the sidecar constructs (SidecarBase) and
 * WithMeshProxy, which read the target the same way.
 */
import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import { Where } from '../private/errors';
// The one arrow up, until the resolver moves to src/target/ (issue 35 point 4): settings.ts holds it today.
// eslint-disable-next-line import/no-restricted-paths
import { DEFAULT_TARGET_NOTICE, ResolvedTarget, SidecarTargetOptions, resolveTarget } from '../settings';
import { printSynthesisNotice } from './binding';
import { SidecarLayout, formatVersion } from '../target/capabilities';
import { KUBERNETES_VERSION_ENV, VersionSource } from '../target/resolver';

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
