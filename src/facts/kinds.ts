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

/**
 * The pod spec of a manifest, read only (nothing is created on it), or undefined when the kind
 * has no pod template or the manifest lacks one.
 */
export function podSpecIn(manifest: Json): Json | undefined {
  return templateIn(manifest)?.spec;
}

/**
 * The pod template's metadata of a manifest, read only (nothing is created on it), or undefined
 * when the kind has no pod template or the manifest lacks one.
 */
export function podMetadataIn(manifest: Json): Json | undefined {
  return templateIn(manifest)?.metadata;
}

/** The node that holds a manifest's pod template (`metadata` and `spec`), read only. */
function templateIn(manifest: Json): Json | undefined {
  const kind = manifest?.kind;
  if (typeof kind !== 'string' || !Object.prototype.hasOwnProperty.call(TEMPLATE_PATHS, kind)) return undefined;
  let node: Json | undefined = manifest;
  for (const key of TEMPLATE_PATHS[kind]) node = node?.[key];
  return node;
}

/**
 * The pod template (its `metadata` and `spec`) of a manifest, or undefined when the kind has
 * none. Missing `metadata` / `spec` objects are created on the (already cloned) manifest.
 */
export function podTemplateOf(manifest: Json): { metadata: Json; spec: Json } | undefined {
  const path = TEMPLATE_PATHS[manifest.kind];
  if (!path) return undefined;
  const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
  let node = manifest;
  for (const key of path) {
    node[key] = node[key] ?? {};
    node = node[key];
    if (!isObject(node)) return undefined; // `spec: 5`: no template (the API server refuses the object's type)
  }
  node.metadata = node.metadata ?? {};
  node.spec = node.spec ?? {};
  if (!isObject(node.metadata) || !isObject(node.spec)) return undefined;
  return { metadata: node.metadata, spec: node.spec };
}

/**
 * What `podTemplateOf` gives for a copy of the manifest, without the copy: the pod template read
 * only, a missing (or null) node on the way, `metadata` or `spec` read as a new empty object, and
 * nothing created on the manifest. For the checks, which read templates and never change them
 * (issue 36: `check` copied every workload five times; test/manifests-check.test.ts runs them on
 * frozen manifests).
 */
export function podTemplateView(manifest: Json): { metadata: Json; spec: Json } | undefined {
  const path = TEMPLATE_PATHS[manifest.kind];
  if (!path) return undefined;
  const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
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
