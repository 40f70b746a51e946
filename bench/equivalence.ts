/**
 * "The hand-written app and the library's legacy app emit the same thing", made precise.
 *
 * Both outputs are parsed and put through `project()`, and the projections must be deeply
 * equal (`util.isDeepStrictEqual`; object key order does not count, array order does). The
 * projection keeps EVERY field of every object, except these, which it removes or normalizes
 * on both sides:
 *
 * - the order of `volumes` in a pod spec: sorted by name (cdk8s-plus-27 lists volumes in the
 *   order its containers mount them; the library lists the user's, then each sidecar's; the
 *   order has no meaning to Kubernetes);
 * - `httpGet.scheme: HTTP` in probes and hooks: cdk8s-plus-27 always writes it, the library
 *   leaves the Kubernetes default (HTTP) implicit;
 * - `immutable: false` on ConfigMaps: `kplus.ConfigMap` always writes it, the default;
 * - `securityContext.seccompProfile` on containers: cdk8s-plus-27 cannot express it (the
 *   library sets `RuntimeDefault` on every container it adds, as the restricted Pod Security
 *   Standard asks); so the hand-written app is in fact a little LESS than the library's.
 * - an `emptyDir.sizeLimit` written in Gi by the library and in Mi by cdk8s-plus-27 (its `Size`
 *   always renders mebibytes): `1Gi` and `1024Mi` are the same quantity.
 *
 * Everything else must match exactly: the objects (kinds, names, count, order), every container
 * in order (name, image, pull policy, command, args, ports, env in order with its sources,
 * probes, lifecycle hooks, resources, the rest of the security context, volume mounts), the init
 * container, volume names and sources, pod annotations (config checksums), grace period, labels,
 * selectors, and the ConfigMaps' data byte for byte.
 *
 * Names: both variants use the same construct ids, so the Deployments' generated names (which
 * also appear in the config files and in OTEL_* values) are the same. The ConfigMaps' names are
 * `<chart>-<id>-config-<hash of the construct path>`, and `kplus.ConfigMap` adds a `Resource`
 * construct to the path, so only their 8-character hash suffix differs: the projection drops
 * that suffix from ConfigMap names and from every reference to them (after checking that the
 * shortened names are still unique).
 */
import { isDeepStrictEqual } from 'util';
// The benchmark is dev tooling, never packaged (bench/ is in .npmignore).
// eslint-disable-next-line import/no-extraneous-dependencies
import { parseAllDocuments } from 'yaml';

type Json = any;

export function parseYaml(text: string): Json[] {
  return parseAllDocuments(text).map(d => d.toJSON());
}

/** The normalized projection compared for equality (see the file comment). */
export function project(objects: Json[]): Json[] {
  const renames = new Map<string, string>();
  for (const o of objects) {
    if (o.kind !== 'ConfigMap') continue;
    renames.set(o.metadata.name, o.metadata.name.replace(/-[0-9a-f]{8}$/, ''));
  }
  if (new Set(renames.values()).size !== renames.size) throw new Error('ConfigMap names are not unique without their hash suffix');
  return objects.map(o => rename(normalize(structuredClone(o), []), renames));
}

/** Replaces every string equal to a key of `renames` (ConfigMap names and references to them). */
function rename(node: Json, renames: Map<string, string>): Json {
  if (typeof node === 'string') return renames.get(node) ?? node;
  if (Array.isArray(node)) return node.map(x => rename(x, renames));
  if (node === null || typeof node !== 'object') return node;
  for (const k of Object.keys(node)) node[k] = rename(node[k], renames);
  return node;
}

function normalize(node: Json, path: string[]): Json {
  if (Array.isArray(node)) return node.map((x, i) => normalize(x, [...path, String(i)]));
  if (node === null || typeof node !== 'object') return node;
  const key = path[path.length - 1];
  if (key === 'httpGet' && node.scheme === 'HTTP') delete node.scheme;
  if (node.kind === 'ConfigMap' && node.immutable === false) delete node.immutable;
  if (key === 'securityContext' && isContainer(path)) delete node.seccompProfile;
  if (key === 'emptyDir' && typeof node.sizeLimit === 'string') node.sizeLimit = node.sizeLimit.replace(/^(\d+)Gi$/, (_: string, n: string) => `${Number(n) * 1024}Mi`);
  for (const k of Object.keys(node)) node[k] = normalize(node[k], [...path, k]);
  if (Array.isArray(node.volumes) && Array.isArray(node.containers)) {
    node.volumes = [...node.volumes].sort((a: Json, b: Json) => a.name.localeCompare(b.name));
  }
  return node;
}

/** `... containers/<i>/securityContext` or `... initContainers/<i>/securityContext` */
function isContainer(path: string[]): boolean {
  const list = path[path.length - 3];
  return list === 'containers' || list === 'initContainers';
}

/** The first differences between two values, as `path: a !== b` lines. */
export function differences(a: Json, b: Json, path = '', out: string[] = [], max = 10): string[] {
  if (out.length >= max || isDeepStrictEqual(a, b)) return out;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) differences(a[k], b[k], `${path}/${k}`, out, max);
    return out;
  }
  out.push(`${path || '/'}: ${JSON.stringify(a)?.slice(0, 200)} !== ${JSON.stringify(b)?.slice(0, 200)}`);
  return out;
}

/** `Deployment: 100, ConfigMap: 300` */
export function census(objects: Json[]): string {
  const counts = new Map<string, number>();
  for (const o of objects) counts.set(o.kind, (counts.get(o.kind) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k}: ${n}`).join(', ');
}

/**
 * Throws unless the hand-written and the library's legacy output are equivalent (see the file
 * comment). Returns a one-line summary.
 */
export function checkEquivalent(hand: Json[], lib: Json[]): string {
  const a = project(hand);
  const b = project(lib);
  if (!isDeepStrictEqual(a, b)) {
    throw new Error(`hand-written and library (legacy) outputs differ:\n  ${differences(a, b).join('\n  ')}`);
  }
  // The check must be able to fail: one changed value deep in the last Deployment is caught.
  const changed = structuredClone(hand);
  const last = [...changed].reverse().find(o => o.kind === 'Deployment');
  last.spec.template.spec.containers.at(-1).env.at(-1).value += ' ';
  if (isDeepStrictEqual(project(changed), b)) throw new Error('the equivalence check does not see a changed env value');
  return `${census(hand)}; projections deep-equal (and a one-character change is caught)`;
}

/**
 * The library's native output has the same objects as its legacy output and the same
 * containers, in another layout (a sanity check: the native app is not comparable field by
 * field with a hand-written one, which cdk8s-plus-27 cannot express).
 */
export function checkSameWorkloads(native: Json[], legacy: Json[]): string {
  const objects = (x: Json[]) => x.map(o => `${o.kind}/${o.metadata.name}`);
  if (!isDeepStrictEqual(objects(native), objects(legacy))) throw new Error('native and legacy outputs have different objects');
  const names = (x: Json[]) => x.filter(o => o.kind === 'Deployment').map(o => {
    const spec = o.spec.template.spec;
    return [...(spec.initContainers ?? []), ...spec.containers].map((c: Json) => c.name).sort().join(',');
  });
  if (!isDeepStrictEqual(names(native), names(legacy))) throw new Error('native and legacy outputs have different containers');
  const nativeSidecars = native.filter(o => o.kind === 'Deployment')
    .every(o => o.spec.template.spec.initContainers.filter((c: Json) => c.restartPolicy === 'Always').length === 3);
  if (!nativeSidecars) throw new Error('native output: not every Deployment has 3 init containers with restartPolicy Always');
  return `${census(native)}; same objects and containers as legacy, 3 native sidecars per Deployment`;
}
