/**
 * The checks of a set of plain manifests (no cdk8s here): each workload through the API server's
 * rules, the fields the target does not know and the Job podFailurePolicy check (src/engine), then
 * the app-wide checks of src/facts/known-bugs.ts: each Service against the pods it selects
 * (checkServiceTargetPorts) and each HorizontalPodAutoscaler against the pods it scales
 * (checkAutoscalerRequests), in the same namespace; then the checks of src/engine/around.ts: a native
 * sidecar's preStop that stops its own process (per object), a readiness probe on a native sidecar
 * that no Service of the set sends traffic to (checkSidecarReadiness) and each VerticalPodAutoscaler
 * against the pods it targets (checkVerticalAutoscaler). THE one implementation behind both
 * `SidecarValidation.addTo` (the app's objects) and `cdk8s-sidecars check` (the objects of the
 * files given). Internal: the CLI and addTo are its only users, and a public jsii API would need
 * structs and an API.md change for no caller yet.
 */
import { checkSelfStoppingPreStops, checkSidecarReadiness, checkVerticalAutoscaler } from './around';
import { controllerVolumesOf, describeObject } from './pod-template';
import { checkJobPodFailurePolicy, checkPodSpecByRule } from './rules';
import { COMPLETING_KINDS, SUPPORTED_KINDS, podTemplateView } from '../facts/kinds';
import type { WorkloadOfApp } from '../facts/known-bugs';
import { WorkloadIndex } from '../facts/workload-index';
import { Json } from '../private/json';

// The known-bug tables when a manifest set is checked (SidecarValidation, the CLI), not when a
// synthesis loads the rule ids (what importing the library costs).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const knownBugs = (): typeof import('../facts/known-bugs') => require('../facts/known-bugs');

/** One object to check: how messages name it (a construct path, `Deployment 'web'`) and its JSON. @internal */
export interface ManifestToCheck {
  readonly path: string;
  readonly manifest: Json;
}

/** A problem found, with the index (in the list given) of the object it is about. @internal */
export interface ManifestFinding {
  readonly index: number;
  readonly level: 'error' | 'warning';
  /**
   * 'object': the object's own checks (the constructs make them too, for the workloads they touch);
   * 'service', 'autoscaler' (HPA and VPA), 'readiness' (about a workload, against the set's Services):
   * the app-wide ones.
   */
  readonly source: 'object' | 'service' | 'autoscaler' | 'readiness';
  /**
   * What found it: the `name` of a row of the engine's `POD_SPEC_RULES` (or its shape rule), or one
   * of `SET_RULES` (the `cdk8s-sidecars check` rule ids are given by these, src/engine/check-rules.ts).
   */
  readonly rule: string;
  readonly message: string;
}

/** The names of the checks beyond the pod spec rules (the `rule` of their findings). @internal */
export const SET_RULES = {
  jobPodFailurePolicy: 'a Job podFailurePolicy rule without containerName matches the native sidecars',
  selfStoppingPreStop: "a native sidecar's preStop stops its own process",
  serviceTargetPort: "a Service's targetPort reaches the pods it selects",
  autoscalerRequests: 'an HPA on utilization needs requests on every container it counts',
  verticalAutoscaler: 'a VPA of a pod with native sidecars',
  sidecarReadiness: 'a readiness probe on a native sidecar that no Service sends traffic to',
} as const;

/**
 * Every object's own checks (in the order given), then the Services', then the HPAs' and VPAs',
 * then the readiness findings (under the workload's index). A `kind: List` counts as its items,
 * whose findings carry the List's index. Service, HPA, VPA and readiness messages are not prefixed
 * with the object's path (they name the Service/HPA/VPA and the workload).
 * @internal
 */
export function checkManifestSet(objects: readonly ManifestToCheck[], minor: number, gate: boolean): ManifestFinding[] {
  const out: ManifestFinding[] = [];
  const workloads: WorkloadOfApp[] = [];
  const services: Array<[number, Json]> = [];
  const autoscalers: Array<[number, Json]> = [];
  const verticals: Array<[number, Json]> = [];
  const workloadIndex: number[] = [];
  objects.forEach((o, index) => {
    for (const { rule, message } of checkManifestByRule(o.manifest, minor, gate)) out.push({ index, level: 'error', source: 'object', rule, message });
    for (const { rule, message } of objectWarnings(o.manifest)) out.push({ index, level: 'warning', source: 'object', rule, message });
    for (const [where, item] of itemsOf(o.manifest, o.path)) {
      if (item.kind === 'Service' && item.apiVersion === 'v1') services.push([index, item]);
      if (item.kind === 'HorizontalPodAutoscaler' && typeof item.apiVersion === 'string' && item.apiVersion.startsWith('autoscaling/')) autoscalers.push([index, item]);
      if (item.kind === 'VerticalPodAutoscaler' && typeof item.apiVersion === 'string' && item.apiVersion.startsWith('autoscaling.k8s.io/')) verticals.push([index, item]);
      if (SUPPORTED_KINDS.includes(item.kind)) {
        workloads.push({ path: where, manifest: item });
        workloadIndex.push(index);
      }
    }
  });
  // The workloads indexed once (by namespace and pod label, by kind and name): each Service, autoscaler
  // and workload looks up its counterparts instead of scanning the set (linear in the set, not quadratic).
  const index = new WorkloadIndex(workloads);
  for (const [at, svc] of services) {
    const found = knownBugs().checkServiceTargetPorts(svc, index, minor);
    for (const message of found.errors) out.push({ index: at, level: 'error', source: 'service', rule: SET_RULES.serviceTargetPort, message });
    for (const message of found.warnings) out.push({ index: at, level: 'warning', source: 'service', rule: SET_RULES.serviceTargetPort, message });
  }
  for (const [at, hpa] of autoscalers) {
    for (const message of knownBugs().checkAutoscalerRequests(hpa, index)) out.push({ index: at, level: 'warning', source: 'autoscaler', rule: SET_RULES.autoscalerRequests, message });
  }
  for (const [at, vpa] of verticals) {
    for (const message of checkVerticalAutoscaler(vpa, index)) out.push({ index: at, level: 'warning', source: 'autoscaler', rule: SET_RULES.verticalAutoscaler, message });
  }
  for (const { workload, message } of checkSidecarReadiness(index, services.map(([, svc]) => svc))) {
    out.push({ index: workloadIndex[workload], level: 'warning', source: 'readiness', rule: SET_RULES.sidecarReadiness, message });
  }
  return out;
}

/** The objects of a manifest (the items of a `kind: List`), each with how messages name it. */
function itemsOf(manifest: Json, where: string): Array<[string, Json]> {
  if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest)) return [];
  if (typeof manifest.kind === 'string' && manifest.kind.endsWith('List') && Array.isArray(manifest.items)) {
    return manifest.items.flatMap((item: Json, i: number) => itemsOf(item, `${where} items[${i}]`));
  }
  return [[where, manifest]];
}

/**
 * The warning halves of the Job podFailurePolicy check and of the self-stopping preStop check (their
 * error halves are in checkManifest).
 */
function objectWarnings(manifest: Json): RuleFinding[] {
  if (!manifest || typeof manifest !== 'object') return [];
  if (typeof manifest.kind === 'string' && manifest.kind.endsWith('List') && Array.isArray(manifest.items)) {
    return manifest.items.flatMap((item: Json, i: number) => objectWarnings(item).map(w => ({ ...w, message: `${manifest.kind} items[${i}]: ${w.message}` })));
  }
  if (!SUPPORTED_KINDS.includes(manifest.kind)) return [];
  return [
    ...(COMPLETING_KINDS.has(manifest.kind) ? checkJobPodFailurePolicy(manifest, describeObject(manifest)).warnings : [])
      .map(message => ({ rule: SET_RULES.jobPodFailurePolicy, message })),
    ...checkSelfStoppingPreStops(manifest).warnings.map(message => ({ rule: SET_RULES.selfStoppingPreStop, message })),
  ];
}

/** A message with the name of the check that found it. */
interface RuleFinding {
  readonly rule: string;
  readonly message: string;
}

/**
 * One manifest's errors (what `SidecarValidation.checkManifest` returns): the pod spec rules and
 * the error halves of the Job podFailurePolicy check and of the self-stopping preStop check. @internal
 */
export function checkManifest(manifest: Json, minor: number, gate: boolean): string[] {
  return checkManifestByRule(manifest, minor, gate).map(f => f.message);
}

/** `checkManifest`, each message with the name of the check that found it. */
function checkManifestByRule(manifest: Json, minor: number, gate: boolean): RuleFinding[] {
  if (!manifest || typeof manifest !== 'object') return [];
  // What `kubectl get -o yaml` prints for several objects: `kind: List` (or `<Kind>List`) with `items`.
  if (typeof manifest.kind === 'string' && manifest.kind.endsWith('List') && Array.isArray(manifest.items)) {
    return manifest.items.flatMap((item: Json, i: number) =>
      checkManifestByRule(item, minor, gate).map(f => ({ ...f, message: `${manifest.kind} items[${i}]: ${f.message}` })));
  }
  if (!SUPPORTED_KINDS.includes(manifest.kind)) return [];
  const template = podTemplateView(manifest);
  if (!template) return [];
  const context = { kind: manifest.kind, controllerVolumes: controllerVolumesOf(manifest) };
  return [
    ...checkPodSpecByRule(template.spec, { minor, gate }, describeObject(manifest), context),
    // the error halves only: this list is of problems that fail synthesis
    ...checkJobPodFailurePolicy(manifest, describeObject(manifest)).errors.map(message => ({ rule: SET_RULES.jobPodFailurePolicy, message })),
    ...checkSelfStoppingPreStops(manifest).errors.map(message => ({ rule: SET_RULES.selfStoppingPreStop, message })),
  ];
}
