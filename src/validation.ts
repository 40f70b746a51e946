import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import { SUPPORTED_KINDS, controllerVolumesOf, describeObject, podTemplateOf } from './engine/pod-template';
import { checkPodSpec } from './engine/rules';
import { SidecarTargetOptions, checkVersion, resolveTarget } from './settings';

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
    if (options.kubernetesVersion !== undefined) {
      checkVersion(`SidecarValidation.addTo('${scope.node.path}')`, options.kubernetesVersion);
    }
    scope.node.addValidation({
      validate: () => {
        let target;
        try {
          target = resolveTarget(scope, options);
        } catch (e) {
          return [(e as Error).message];
        }
        const errors: string[] = [];
        for (const obj of scope.node.findAll()) {
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
          for (const problem of checkManifest(manifest, target.version.minor, target.gate)) {
            errors.push(`${obj.node.path}: ${problem}`);
          }
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
  return checkPodSpec(template.spec, { minor, gate }, describeObject(manifest), context);
}
