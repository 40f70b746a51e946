import { ApiObject } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { SUPPORTED_KINDS, controllerVolumesOf, describeObject, podTemplateOf } from './engine/pod-template';
import { checkJobPodFailurePolicy, checkPodSpec } from './engine/rules';
import { WorkloadOfApp, checkAutoscalerRequests, checkServiceTargetPorts } from './known-bugs';
import { SidecarTargetOptions, checkVersion, resolveTarget } from './settings';
import { formatVersion } from './target';
import { printWarnings, recordWarnings } from './warnings';

/**
 * The release-aware checks the constructs run on the workloads they touch (the API server's
 * rules for pod specs, and the fields the target release does not know), for anything else.
 */
export class SidecarValidation {
  /**
   * Checks every workload (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob,
   * ReplicationController) inside `scope` at synthesis, after every sidecar is in place, whether or not a sidecar
   * construct touched it (your own `restartPolicy: Always` init containers, objects from
   * `Include` or `Helm`, ...). Problems fail synthesis before any file is written.
   *
   * The target is resolved like a construct's: `options`, then
   * `CDK8S_SIDECARS_KUBERNETES_VERSION`, then `Sidecars.configure()`, then 1.27.
   *
   * @example
   * SidecarValidation.addTo(app);
   */
  public static addTo(scope: IConstruct, options: SidecarTargetOptions = {}): void {
    const who = `SidecarValidation.addTo(${scope.node.path === '' ? 'app' : `'${scope.node.path}'`})`;
    if (options.kubernetesVersion !== undefined) {
      checkVersion(who, options.kubernetesVersion);
    }
    // cdk8s prefixes each error with the path of the construct that registered the validation:
    // on the App (path '') that is a bare `[]`, so there the validation sits on a child of its own.
    const holder = scope.node.path === '' ? new Construct(scope, uniqueId(scope, 'SidecarValidation')) : scope;
    holder.node.addValidation({
      validate: () => {
        let target;
        try {
          target = resolveTarget(scope, options);
        } catch (e) {
          return [(e as Error).message];
        }
        const errors: string[] = [];
        const workloads: WorkloadOfApp[] = [];
        const services: ApiObject[] = [];
        const autoscalers: ApiObject[] = [];
        for (const obj of scope.node.findAll()) {
          if (ApiObject.isApiObject(obj) && obj.kind === 'Service' && obj.apiVersion === 'v1') services.push(obj);
          if (ApiObject.isApiObject(obj) && obj.kind === 'HorizontalPodAutoscaler' && obj.apiVersion.startsWith('autoscaling/')) autoscalers.push(obj);
          if (!ApiObject.isApiObject(obj) || !SUPPORTED_KINDS.includes(obj.kind)) continue;
          let manifest: any;
          try {
            manifest = obj.toJson();
          } catch (e) {
            const message = (e as Error).message;
            // A workload with sidecars reports its own errors (the binding's validation, under the
            // sidecar construct's path): do not list them a second time.
            if (message.startsWith('cdk8s-sidecars: ')) continue;
            errors.push(`${obj.node.path}: ${message}`);
            continue;
          }
          workloads.push({ path: obj.node.path, manifest });
          const problems = checkManifest(manifest, target.version.minor, target.gate);
          const hint = problems.length > 0 ? pinnedHint(obj, formatVersion(target.version)) : '';
          for (const problem of problems) {
            errors.push(`${who}, Kubernetes ${formatVersion(target.version)}: ${obj.node.path}: ${problem}${hint}`);
          }
        }
        // The app's Services against the pods they select (src/known-bugs.ts checkServiceTargetPorts).
        for (const svc of services) {
          let found;
          try {
            found = checkServiceTargetPorts(svc.toJson(), workloads, target.version.minor);
          } catch {
            continue; // a Service that cannot render reports its own error
          }
          for (const e of found.errors) errors.push(`${who}, Kubernetes ${formatVersion(target.version)}: ${svc.node.path}: ${e}`);
          const warnings = found.warnings.map(w => `${svc.node.path}: ${w}`);
          recordWarnings(svc, warnings);
          printWarnings(svc.node.root, warnings);
        }
        // The app's HPAs against the requests of the pods they scale.
        for (const hpa of autoscalers) {
          let found: string[];
          try {
            found = checkAutoscalerRequests(hpa.toJson(), workloads);
          } catch {
            continue;
          }
          const warnings = found.map(w => `${hpa.node.path}: ${w}`);
          recordWarnings(hpa, warnings);
          printWarnings(hpa.node.root, warnings);
        }
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
    const v = checkVersion('SidecarValidation.checkManifest', kubernetesVersion);
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
    const props = (c as any)._props ?? (c as any).props;
    if ((c as any).workloadObject !== obj || !props) continue;
    const own = (['kubernetesVersion', 'mode', 'sidecarContainersGate'] as const).filter(k => props[k] !== undefined);
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
  return ` The sidecars of this workload were pinned by ${pinned.join(', ')}: remove those props so that they follow the ` +
    'same target as SidecarValidation (Sidecars.configure), or give SidecarValidation.addTo the release the cluster runs.';
}

function checkManifest(manifest: any, minor: number, gate: boolean): string[] {
  if (!manifest || typeof manifest !== 'object') return [];
  // What `kubectl get -o yaml` prints for several objects: `kind: List` (or `<Kind>List`) with `items`.
  if (typeof manifest.kind === 'string' && manifest.kind.endsWith('List') && Array.isArray(manifest.items)) {
    return manifest.items.flatMap((item: any, i: number) =>
      checkManifest(item, minor, gate).map(problem => `${manifest.kind} items[${i}]: ${problem}`));
  }
  if (!SUPPORTED_KINDS.includes(manifest.kind)) return [];
  const template = podTemplateOf(structuredClone(manifest));
  if (!template) return [];
  const context = { kind: manifest.kind, controllerVolumes: controllerVolumesOf(manifest) };
  return [
    ...checkPodSpec(template.spec, { minor, gate }, describeObject(manifest), context),
    // the error half only: this list is of problems that fail synthesis
    ...checkJobPodFailurePolicy(manifest, describeObject(manifest)).errors,
  ];
}
