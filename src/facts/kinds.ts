/**
 * The Kubernetes kinds that carry a pod template, and where (the API's types: apps/v1, batch/v1,
 * core/v1), with the one accessor of a manifest's pod template.
 */
import { Json } from '../private/json';

/** Kinds that carry a pod template, and where. */
export const TEMPLATE_PATHS: Record<string, string[]> = {
  Pod: [],
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
  ReplicationController: ['spec', 'template'],
};

/** The kinds the engine accepts (every kind with a pod template). */
export const SUPPORTED_KINDS = Object.keys(TEMPLATE_PATHS);

/** Kinds whose pods are meant to complete. */
export const COMPLETING_KINDS: ReadonlySet<string> = new Set(['Job', 'CronJob']);

const isObject = (v: unknown): boolean => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The path of a kind's pod template, or undefined when the kind has none. */
function templatePath(manifest: Json): readonly string[] | undefined {
  const kind = manifest?.kind;
  return typeof kind === 'string' && Object.prototype.hasOwnProperty.call(TEMPLATE_PATHS, kind) ? TEMPLATE_PATHS[kind] : undefined;
}

/**
 * The one walk of a manifest to a node of its kind's path: undefined when a node on the way (or
 * the last) is not an object. `create` creates the missing ones (as `{}`) on the manifest.
 */
function walk(manifest: Json, path: readonly string[], create: boolean): Json | undefined {
  let node = manifest;
  for (const key of path) {
    if (create) node[key] = node[key] ?? {};
    node = node?.[key];
    if (!isObject(node)) return undefined; // `spec: 5`: no template (the API server refuses the object's type)
  }
  return node;
}

/**
 * The node that holds a manifest's pod template (its `metadata` and `spec`, either possibly
 * missing), read only: nothing is created on it, nothing copied. Undefined when the kind has no pod
 * template or the manifest lacks one. The readers' accessor; the engine writes through `podTemplateOf`.
 */
export function podTemplateIn(manifest: Json): Json | undefined {
  const path = templatePath(manifest);
  return path && walk(manifest, path, false);
}

/**
 * The pod template (its `metadata` and `spec`) of a manifest, or undefined when the kind has
 * none. Missing `metadata` / `spec` objects are created on the manifest (a copy of the user's:
 * the engine's), which the caller writes into.
 */
export function podTemplateOf(manifest: Json): { metadata: Json; spec: Json } | undefined {
  const path = templatePath(manifest);
  const node = path && walk(manifest, path, true);
  if (!node) return undefined;
  node.metadata = node.metadata ?? {};
  node.spec = node.spec ?? {};
  if (!isObject(node.metadata) || !isObject(node.spec)) return undefined;
  return { metadata: node.metadata, spec: node.spec };
}

/**
 * `podTemplateOf` of a deep copy of `value` (any value: undefined unless an object), for a reader
 * that wants `metadata` and `spec` always there and may keep or change what it gets.
 */
export function podTemplateCopy(value: unknown): { metadata: Json; spec: Json } | undefined {
  return isObject(value) ? podTemplateOf(structuredClone(value as Json)) : undefined;
}

/**
 * The spec of a Job (`spec`) or of a CronJob's jobs (`spec.jobTemplate.spec`), read only, with its
 * path (for messages): the node that holds the pod template. Undefined for the other kinds.
 */
export function jobSpecIn(manifest: Json): { readonly spec: Json; readonly path: string } | undefined {
  const path = templatePath(manifest);
  if (!path || !COMPLETING_KINDS.has(manifest.kind)) return undefined;
  const jobPath = path.slice(0, -1);
  const spec = walk(manifest, jobPath, false);
  return spec && { spec, path: jobPath.join('.') };
}

/**
 * What `podTemplateOf` gives for a copy of the manifest, without the copy: the pod template read
 * only, a missing (or null) node on the way, `metadata` or `spec` read as a new empty object, and
 * nothing created on the manifest. For the checks, which read templates and never change them
 * (a copy per check made `check` copy every workload five times; test/manifests-check.test.ts runs
 * them on frozen manifests).
 */
export function podTemplateView(manifest: Json): { metadata: Json; spec: Json } | undefined {
  const path = templatePath(manifest);
  if (!path) return undefined;
  let node = manifest;
  for (const key of path) {
    node = node[key] ?? {};
    if (!isObject(node)) return undefined;
  }
  const metadata = node.metadata ?? {};
  const spec = node.spec ?? {};
  if (!isObject(metadata) || !isObject(spec)) return undefined;
  return { metadata, spec };
}
