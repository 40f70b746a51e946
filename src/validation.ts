import { ApiObject } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { manifestToRead, markSynthesisFailed, printSynthesisWarnings, watchApp } from './bind/binding';
import { resolveTarget } from './bind/target-reader';
import { hasRecordedWarnings, ignoredRules, recordValidationWarnings, recordWarnings, tagWarning } from './bind/warnings';
import { ruleOfCheck, ruleSuffixOfCheck } from './engine/check-rules';
import { checkManifest, checkManifestSet } from './engine/manifests-check';
import { SUPPORTED_KINDS } from './facts/kinds';
import { Where, recordRefusals } from './private/errors';
import { formatVersion } from './target/capabilities';
import { SidecarTargetOptions, checkVersion } from './target/resolver';

/**
 * The release-aware checks the constructs run on the workloads they touch (the API server's
 * rules for pod specs, and the fields the target release does not know), for anything else.
 */
export class SidecarValidation {
  /**
   * Checks every workload (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob,
   * ReplicationController) inside `scope` at synthesis, after every sidecar is in place, whether or not a sidecar
   * construct touched it (your own `restartPolicy: Always` init containers, objects from
   * `Include` or `Helm`, ...). Problems fail synthesis before any file is written. It also checks
   * the objects around the workloads (docs/around-the-sidecar.md): the app's Services (named
   * `targetPort`s, readiness probes of native sidecars no Service targets), HorizontalPodAutoscalers
   * and VerticalPodAutoscalers; their warnings, and a workload's own ones where no sidecar construct
   * reports them, are printed once per synthesis (in an app without sidecar constructs, whose
   * synthesis ends unseen, once per App) and readable with `SidecarWarnings.of`.
   *
   * The target is resolved like a construct's: `options`, then
   * `CDK8S_SIDECARS_KUBERNETES_VERSION`, then `Sidecars.configure()`, then 1.27.
   *
   * @example
   * SidecarValidation.addTo(app);
   */
  public static addTo(scope: IConstruct, options: SidecarTargetOptions = {}): void {
    const who = new Where(`SidecarValidation.addTo(${scope.node.path === '' ? 'app' : `'${scope.node.path}'`})`);
    if (options.kubernetesVersion !== undefined) {
      checkVersion(who, options.kubernetesVersion);
    }
    // cdk8s prefixes each error with the path of the construct that registered the validation:
    // on the App (path '') that is a bare `[]`, so there the validation sits on a child of its own.
    const holder = scope.node.path === '' ? new Construct(scope, uniqueId(scope, 'SidecarValidation')) : scope;
    // its warnings are printed through the App's state, also in an app without sidecars
    watchApp(scope);
    holder.node.addValidation({
      validate: () => {
        let target;
        try {
          target = resolveTarget(scope, options, { checksOnly: true });
        } catch (e) {
          return [(e as Error).message];
        }
        const errors: string[] = [];
        const version = formatVersion(target.version);
        const objects: Array<{ obj: ApiObject; path: string; manifest: any; bound?: boolean }> = [];
        for (const obj of scope.node.findAll()) {
          if (!ApiObject.isApiObject(obj)) continue;
          const workload = SUPPORTED_KINDS.includes(obj.kind);
          const appWide = (obj.kind === 'Service' && obj.apiVersion === 'v1') ||
            (obj.kind === 'HorizontalPodAutoscaler' && obj.apiVersion.startsWith('autoscaling/')) ||
            (obj.kind === 'VerticalPodAutoscaler' && obj.apiVersion.startsWith('autoscaling.k8s.io/'));
          if (!workload && !appWide) continue;
          let manifest: any;
          try {
            manifest = manifestToRead(obj);
          } catch (e) {
            if (!workload) continue; // a Service or HPA that cannot render reports its own error
            const message = (e as Error).message;
            // A workload with sidecars reports its own errors (the binding's validation, under the
            // sidecar construct's path): do not list them a second time.
            if (message.startsWith('cdk8s-sidecars: ')) continue;
            errors.push(`${obj.node.path}: ${message}`);
            continue;
          }
          // (after toJson: a workload with sidecar constructs has had them record their warnings)
          objects.push({ obj, path: obj.node.path, manifest, bound: workload && hasRecordedWarnings(obj) });
        }
        // The one check of a set of manifests (src/engine/manifests-check.ts), also behind `cdk8s-sidecars check`.
        const findings = checkManifestSet(objects, target.version.minor, target.gate);
        const hints = new Map<number, string>();
        const warnings = new Map<number, string[]>();
        for (const f of findings) {
          const o = objects[f.index];
          if (f.level === 'error') {
            if (f.source === 'object' && !hints.has(f.index)) hints.set(f.index, pinnedHint(o.obj, version));
            errors.push(...recordRefusals([`${who}, Kubernetes ${version}: ${o.path}: ${f.message}${f.source === 'object' ? hints.get(f.index) : ''}${ruleSuffixOfCheck(f.rule)}`]));
          } else if (f.source !== 'object' || !o.bound) {
            // A workload's own warnings (the Job podFailurePolicy and preStop ones) reach
            // SidecarWarnings through its sidecar constructs where it has some; here they are recorded
            // for the workloads without, and the app-wide ones (Services', HPAs', VPAs', readiness) for all.
            // (with the rule `check` finds it by: printed beside it, silenced by the object's check-ignore annotation)
            (warnings.get(f.index) ?? warnings.set(f.index, []).get(f.index)!).push(tagWarning(`${o.path}: ${f.message}`, ruleOfCheck(f.rule).id));
          }
        }
        for (const [i, o] of objects.entries()) {
          const mine = warnings.get(i) ?? [];
          if (SUPPORTED_KINDS.includes(o.obj.kind)) {
            recordValidationWarnings(o.obj, mine);
          } else {
            recordWarnings(o.obj, mine);
          }
          printSynthesisWarnings(o.obj, mine, ignoredRules(o.manifest));
        }
        if (errors.length > 0) markSynthesisFailed(scope);
        return errors;
      },
    });
  }

  /**
   * Checks one manifest (plain Kubernetes JSON, e.g. parsed from a YAML file) for the given
   * target release. Returns one message per problem; an empty list when it is fine or when
   * the object carries no pod template. A `kind: List` (what `kubectl get -o yaml` prints) is
   * checked item by item.
   *
   * @param manifest a Kubernetes object as plain JSON
   * @param kubernetesVersion the lowest minor version of the cluster's API server and nodes
   * @param sidecarContainersGate the SidecarContainers gate is on (only matters for 1.28)
   */
  public static checkManifest(manifest: any, kubernetesVersion: string, sidecarContainersGate?: boolean): string[] {
    const v = checkVersion(new Where('SidecarValidation.checkManifest'), kubernetesVersion);
    return checkManifest(manifest, v.minor, sidecarContainersGate ?? false);
  }

  private constructor() {}
}

/** `base`, or `base2`, `base3`, ... : the first id no child of `scope` has. */
function uniqueId(scope: IConstruct, base: string): string {
  let id = base;
  for (let i = 2; scope.node.tryFindChild(id) !== undefined; i++) id = `${base}${i}`;
  return id;
}

/**
 * The sidecar constructs on `obj` that were given their own `kubernetesVersion` (or mode or gate)
 * and so emit for another release than the validation checks for: named with the prop to remove.
 */
function pinnedHint(obj: ApiObject, version: string): string {
  const pinned: string[] = [];
  for (const c of obj.node.root.node.findAll()) {
    // only the library's constructs on `obj` (a Sidecar's `_props`, WithMeshProxy's `props`), never cdk8s' own fields
    if ((c as any).workloadObject !== obj) continue;
    const props = (c as any)._props ?? (c as any).props;
    if (!props) continue;
    const own = (['kubernetesVersion', 'mode', 'sidecarContainersGate', 'overrideAppTarget'] as const).filter(k => props[k] !== undefined);
    if (own.length === 0) continue;
    let theirs = '';
    try {
      theirs = formatVersion(resolveTarget(c, props).version);
    } catch {
      theirs = '?';
    }
    const given = own.map(k => `${k}: ${JSON.stringify(props[k])}`).join(', ');
    pinned.push(`${(c as any).constructor.name} '${c.node.path}' (${given}${theirs !== version ? `, Kubernetes ${theirs}` : ''})`);
  }
  if (pinned.length === 0) return '';
  return ` The sidecars of this workload were pinned by ${pinned.join(', ')}: remove those props (kubernetesVersion, and ` +
    'overrideAppTarget where it lets a construct override the app\'s target) so that they follow the same target as SidecarValidation ' +
    '(Sidecars.configure or CDK8S_SIDECARS_KUBERNETES_VERSION), or give SidecarValidation.addTo the release the cluster runs.';
}
