/**
 * The test cluster's image list (scripts/cluster/images.list): every image reference the cluster's
 * registry serves, and the image scripts/cluster/images.sh builds for it.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
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

const ROOT = path.join(__dirname, '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'cluster', 'images.sh');
const OCI = path.join(process.env.CDK8S_SIDECARS_CACHE ?? path.join(os.homedir(), '.cache', 'cdk8s-sidecars'), 'images', 'oci');

/** The directory of the built images (scripts/cluster/images.sh build). */
export const CLUSTER_IMAGES_DIR = OCI;

/** Whether the image served for `reference` is built here, and this process may run it (root: chroot, namespaces). */
export function runnableImage(reference: string): string | undefined {
  const id = clusterImageList().get(reference);
  // not a silent skip: an image the list lacks is a failure of the list, not a missing build
  if (id === undefined) throw new Error(`${reference} is not in ${IMAGES_LIST}`);
  return process.getuid?.() === 0 && fs.existsSync(path.join(OCI, id, 'index.json')) ? id : undefined;
}

/**
 * Each agent's program in the mode that reads its whole config and stops (the agent's command and
 * args from the manifest, unmodified, plus the mode flag): the image ids scripts/cluster/images.list uses.
 */
const VALIDATE: Record<string, (command: string[], args: string[]) => string[]> = {
  'fluent-bit': (c, a) => [...c, ...a, '--dry-run'],
  'fluentd': (c, a) => [...c, ...a, '--dry-run'],
  'envoy': (c, a) => [...c, ...a, '--mode', 'validate'],
  // the image's entrypoint is /otelcol; `validate` takes the same --config
  'otelcol': (c, a) => [...(c.length > 0 ? c : ['/otelcol']), 'validate', ...a],
};

/**
 * The agent's own command under a wrapper the library puts around it (`/sidecar-tools/busybox sh -c
 * SCRIPT sh PROGRAM ARGS...`: the native SIGTERM hold, a legacy Job's exit-with-app): the
 * tools volume is empty here, and the wrapper only passes the program its arguments.
 */
function unwrapped(command: string[]): string[] {
  const [tool, sh, flag, , name] = command;
  if (tool?.startsWith('/sidecar-tools/') && sh === 'sh' && flag === '-c' && name === 'sh') return command.slice(5);
  return command;
}

/**
 * Runs one container of a synthesized pod in its built image as the pod would run it
 * (`images.sh run`: its ConfigMap volumes' files bound read-only at their mount paths, its
 * emptyDir and Secret volumes as empty writable directories, its env, a read-only root, uid
 * 65532, no network), with the program's validate flag. `objects` are the manifest's objects
 * (the ConfigMaps). Undefined when the image is not one of VALIDATE's.
 */
export function validateInImage(podSpec: any, container: any, objects: any[]): { id: string; status: number | null; output: string } | undefined {
  const id = clusterImageList().get(container.image);
  if (id === undefined || VALIDATE[id] === undefined) return undefined;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-image-config-'));
  try {
    fs.chmodSync(tmp, 0o755);
    const opts: string[] = [];
    for (const m of container.volumeMounts ?? []) {
      const v = (podSpec.volumes ?? []).find((x: any) => x.name === m.name);
      if (v?.configMap) {
        const cm = objects.find((o) => o?.kind === 'ConfigMap' && o.metadata?.name === v.configMap.name);
        if (!cm) throw new Error(`no ConfigMap ${v.configMap.name} for ${container.name}`);
        const dir = path.join(tmp, m.name);
        fs.mkdirSync(dir, { mode: 0o755 });
        const items: Array<{ key: string; path: string }> = v.configMap.items ?? Object.keys(cm.data ?? {}).map((k) => ({ key: k, path: k }));
        for (const it of items) fs.writeFileSync(path.join(dir, it.path), cm.data[it.key], { mode: 0o644 });
        opts.push('-v', `${dir}:${m.mountPath}`);
      } else {
        opts.push('-w', m.mountPath);
      }
    }
    for (const e of container.env ?? []) {
      // a field or a secret the kubelet would fill: a stand-in value of the same shape
      opts.push('-e', `${e.name}=${e.value ?? (e.valueFrom?.fieldRef ? `${e.name.toLowerCase().replace(/_/g, '-')}` : 'secret')}`);
    }
    const command = VALIDATE[id](unwrapped(container.command ?? []), container.args ?? []);
    const r = spawnSync('bash', [SCRIPT, 'run', id, ...opts, '--', ...command], { encoding: 'utf8', timeout: 120_000 });
    return { id, status: r.status, output: `${r.stdout}${r.stderr}` };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
