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
