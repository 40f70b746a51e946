/**
 * The test cluster's image list (scripts/cluster/images.list): every image reference the cluster's
 * registry serves, and the image scripts/cluster/images.sh builds for it.
 */
import * as fs from 'fs';
import * as path from 'path';

export const IMAGES_LIST = path.join(__dirname, '..', '..', 'scripts', 'cluster', 'images.list');

/** `reference -> image id`, in the list's order. */
export function clusterImageList(): Map<string, string> {
  const out = new Map<string, string>();
  for (const [i, raw] of fs.readFileSync(IMAGES_LIST, 'utf8').split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const fields = line.split(/\s+/);
    if (fields.length !== 2) throw new Error(`${IMAGES_LIST}:${i + 1}: want \`REFERENCE IMAGE\`, got '${line}'`);
    if (out.has(fields[0])) throw new Error(`${IMAGES_LIST}:${i + 1}: ${fields[0]} is listed twice`);
    out.set(fields[0], fields[1]);
  }
  return out;
}

/** The references the test cluster's registry serves (once built). */
export function servedByTestCluster(): Set<string> {
  return new Set(clusterImageList().keys());
}
