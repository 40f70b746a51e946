/**
 * One real single-node cluster per release for the cluster suite (scripts/cluster/cluster.sh):
 * started in namespaces of its own (no route out), stopped by PID, also when a test fails or the
 * run is killed (the script's watchdog follows this process).
 */
import { ChildProcess, execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CLUSTER_IMAGES_DIR, clusterImageList } from '../util/cluster-images';

const ROOT = path.join(__dirname, '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'cluster', 'cluster.sh');
export const CACHE = process.env.CDK8S_SIDECARS_CACHE ?? path.join(os.homedir(), '.cache', 'cdk8s-sidecars');

/** Seconds since the machine booted: the clock the containers stamp their lines with. */
export function uptime(): number {
  return Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
}

const K8S = path.join(CACHE, 'kubernetes');
const has = (v: string, c: string) => fs.existsSync(path.join(K8S, v, 'bin', c));

/**
 * The releases whose binaries are built (scripts/cluster/build-kubernetes.sh), newest first. A
 * release whose own controller-manager does not build (1.29.6 from the module proxy) runs with the
 * oldest newer one that is built (`standInControllerManager`), an unsupported skew docs/proof.md names.
 */
export function builtReleases(): string[] {
  if (!fs.existsSync(K8S)) return [];
  const components = ['kube-apiserver', 'kube-scheduler', 'kubelet', 'kubectl'];
  return fs.readdirSync(K8S)
    .filter(v => /^1\.\d+\.\d+$/.test(v))
    .filter(v => components.every(c => has(v, c)))
    .filter(v => has(v, 'kube-controller-manager') || standInControllerManager(v) !== undefined)
    .sort((a, b) => Number(b.split('.')[1]) - Number(a.split('.')[1]));
}

/** The release whose controller-manager stands in for `version`'s, or undefined: its own is built. */
export function standInControllerManager(version: string): string | undefined {
  if (has(version, 'kube-controller-manager')) return undefined;
  const minor = Number(version.split('.')[1]);
  return fs.readdirSync(K8S)
    .filter(v => /^1\.\d+\.\d+$/.test(v) && Number(v.split('.')[1]) > minor && has(v, 'kube-controller-manager'))
    .sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]))[0];
}

/** The images every run imports (scripts/cluster/base-images.sh): `name=archive` pairs. */
export function baseImages(): string {
  return execFileSync('bash', [path.join(ROOT, 'scripts', 'cluster', 'base-images.sh')], { encoding: 'utf8' }).trim();
}

/**
 * The registry of the real programs' images (scripts/cluster/images.sh: Fluent Bit, Envoy, the
 * collector, Fluentd, the example app's stand-ins), served on 127.0.0.1:5000 inside the cluster's
 * namespace: `<command>` to which cluster.sh appends the address, or undefined when not built.
 */
export function registryCommand(): string | undefined {
  try {
    const cmd = execFileSync('bash', [path.join(ROOT, 'scripts', 'cluster', 'images.sh'), 'registry'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return cmd && fs.existsSync(cmd.split(' ')[0]) ? cmd : undefined;
  } catch {
    return undefined;
  }
}

/** The images every cluster imports itself (scripts/cluster/base-images.sh), not served by the registry. */
const BASE_IMAGES = ['busybox:1.36.1-musl', 'cdk8s-sidecars-test/pause:1'];

/** An image reference as scripts/cluster/images.list writes it: no `docker.io/`, no `library/`. */
const shortRef = (image: string) => image.replace(/^docker\.io\//, '').replace(/^library\//, '');

/**
 * The references a cluster can pull: the base images, and what the registry serves (the `names`
 * file scripts/cluster/images.sh writes in `oci`: `REFERENCE IMAGE` of each built image).
 */
export function servedImages(oci: string = CLUSTER_IMAGES_DIR): Set<string> {
  const served = new Set(BASE_IMAGES);
  const names = path.join(oci, 'names');
  if (!fs.existsSync(names)) return served;
  for (const line of fs.readFileSync(names, 'utf8').split('\n')) {
    const [ref, id] = line.trim().split(/\s+/);
    if (ref && id && fs.existsSync(path.join(oci, id, 'index.json'))) served.add(ref);
  }
  return served;
}

/** Every container image of the manifests (pods, pod templates, at any depth), sorted, once each. */
export function imagesOf(manifests: any[]): string[] {
  const found = new Set<string>();
  const walk = (v: any): void => {
    if (typeof v !== 'object' || v === null) return;
    for (const [k, x] of Object.entries(v)) {
      if ((k === 'containers' || k === 'initContainers') && Array.isArray(x)) {
        for (const c of x) if (typeof c?.image === 'string') found.add(c.image);
      }
      walk(x);
    }
  };
  walk(manifests);
  return [...found].sort();
}

/**
 * Throws, before a cluster starts or an object is applied, when an image of the manifests is
 * neither a base image nor served by the registry: its pod would wait in ImagePullBackOff until the
 * test's timeout, which names nothing. The message names each image and the command that builds it.
 */
export function requireServed(manifests: any[], what: string, oci: string = CLUSTER_IMAGES_DIR): void {
  const served = servedImages(oci);
  const missing = imagesOf(manifests).map(shortRef).filter(ref => !served.has(ref));
  if (missing.length === 0) return;
  const list = clusterImageList();
  const ids = [...new Set(missing.map(ref => list.get(ref)).filter(Boolean))];
  const unknown = missing.filter(ref => !list.has(ref));
  const steps = [
    ...(ids.length ? [`bash scripts/cluster/images.sh build ${ids.join(' ')}`] : []),
    ...(unknown.length ? [`list ${unknown.join(', ')} in scripts/cluster/images.list and build it with scripts/cluster/images.sh`] : []),
  ];
  throw new Error(`${what}: the test registry does not serve ${missing.join(', ')} (not built in ${oci}), so its pods would wait in ImagePullBackOff; ` +
    `first ${steps.join('; ')} (CONTRIBUTING.md, "The test cluster's images")`);
}

export interface WatchEvent {
  /** /proc/uptime when the event arrived. */
  readonly at: number;
  readonly type: string;
  readonly object: any;
}

export class Cluster {
  public static start(version: string, images: string): Cluster {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `k8s-${version}-`));
    const t0 = uptime();
    const standIn = standInControllerManager(version);
    execFileSync('bash', [SCRIPT, 'up', version, dir, String(process.pid)], {
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 300_000,
      env: {
        ...process.env,
        CLUSTER_IMAGES: images,
        CLUSTER_REGISTRY: registryCommand() ?? '',
        ...(standIn ? { CLUSTER_CONTROLLER_MANAGER: path.join(K8S, standIn, 'bin', 'kube-controller-manager') } : {}),
      },
    });
    return new Cluster(version, dir, uptime() - t0, standIn);
  }

  private readonly watches: ChildProcess[] = [];

  private constructor(
    public readonly version: string, public readonly dir: string, public readonly startSeconds: number,
    /** The release whose controller-manager ran instead of this one's. */
    public readonly controllerManagerOf: string | undefined,
  ) {}

  public get minor(): number {
    return Number(this.version.split('.')[1]);
  }

  /** kubectl inside the cluster's network namespace. */
  public kubectl(args: string[], input?: string): string {
    return execFileSync('bash', [SCRIPT, 'exec', this.dir, 'kubectl', ...args], {
      input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], timeout: 120_000, maxBuffer: 64 * 1024 * 1024,
    });
  }

  /** kubectl, returning its exit status and output instead of throwing. */
  public tryKubectl(args: string[], input?: string): { status: number; stdout: string; stderr: string } {
    try {
      return { status: 0, stdout: this.kubectl(args, input), stderr: '' };
    } catch (e: any) {
      return { status: e.status ?? 1, stdout: String(e.stdout ?? ''), stderr: String(e.stderr ?? '') };
    }
  }

  /** Applies the manifests to the namespace, once every image they name is one the cluster can pull (`requireServed`). */
  public apply(manifests: any[], namespace: string): void {
    requireServed(manifests, `${this.version}: applying ${manifests.map(m => `${m.kind}/${m.metadata?.name}`).join(', ')} in ${namespace}`);
    this.kubectl(['apply', '-n', namespace, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }));
  }

  /**
   * Watches objects (`kubectl get --watch -o json`), stamping every event with the uptime at which
   * it arrived. Stop it with the returned function.
   */
  public watch(args: string[]): { events: WatchEvent[]; stop: () => void } {
    const events: WatchEvent[] = [];
    const p = spawn('bash', [SCRIPT, 'exec', this.dir, 'kubectl', 'get', '--watch', '--output-watch-events', '-o', 'json', ...args], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    this.watches.push(p);
    let buf = '';
    let depth = 0;
    let inString = false;
    let escaped = false;
    let start = 0;
    p.stdout!.setEncoding('utf8');
    p.stdout!.on('data', (chunk: string) => {
      const at = uptime();
      const from = buf.length;
      buf += chunk;
      // split the stream of concatenated JSON objects
      for (let i = from; i < buf.length; i++) {
        const c = buf[i];
        if (inString) {
          if (escaped) escaped = false;
          else if (c === '\\') escaped = true;
          else if (c === '"') inString = false;
          continue;
        }
        if (c === '"') {inString = true;} else if (c === '{') { if (depth++ === 0) start = i; } else if (c === '}' && --depth === 0) {
          const e = JSON.parse(buf.slice(start, i + 1));
          events.push({ at, type: e.type, object: e.object });
        }
      }
      if (depth === 0) { buf = ''; }
    });
    return { events, stop: () => { if (p.pid) try { process.kill(p.pid); } catch { /* gone */ } } };
  }

  /** Follows one container's log until it ends. */
  public follow(namespace: string, pod: string, container: string): { lines: string[]; done: Promise<void> } {
    const lines: string[] = [];
    const p = spawn('bash', [SCRIPT, 'exec', this.dir, 'kubectl', 'logs', '-f', '-n', namespace, pod, '-c', container], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    this.watches.push(p);
    let rest = '';
    p.stdout!.setEncoding('utf8');
    p.stdout!.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      lines.push(...parts);
    });
    const done = new Promise<void>(resolve => p.on('exit', () => { if (rest) lines.push(rest); resolve(); }));
    return { lines, done };
  }

  /**
   * Runs a command inside the cluster's network namespace (`cluster.sh exec`), in the background:
   * its output lines as they come, and its end. Stopped with the cluster if still running.
   */
  public spawnInside(command: string[]): { lines: string[]; done: Promise<number> } {
    const lines: string[] = [];
    const p = spawn('bash', [SCRIPT, 'exec', this.dir, ...command], { stdio: ['ignore', 'pipe', 'inherit'] });
    this.watches.push(p);
    let rest = '';
    p.stdout!.setEncoding('utf8');
    p.stdout!.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop()!;
      lines.push(...parts);
    });
    const done = new Promise<number>(resolve => p.on('exit', code => { if (rest) lines.push(rest); resolve(code ?? 1); }));
    return { lines, done };
  }

  /** Polls until `check` returns a value (not undefined), or throws after `seconds`. */
  public async until<T>(what: string, seconds: number, check: () => T | undefined): Promise<T> {
    const end = Date.now() + seconds * 1000;
    for (;;) {
      const v = check();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`${this.version}: ${what} did not happen within ${seconds} s`);
      await new Promise(r => setTimeout(r, 100));
    }
  }

  public stop(): void {
    for (const w of this.watches) if (w.pid && w.exitCode === null) try { process.kill(w.pid); } catch { /* gone */ }
    execFileSync('bash', [SCRIPT, 'down', this.dir], {
      stdio: 'inherit', timeout: 120_000, env: { ...process.env, CLUSTER_LOGS_TO: path.join(CACHE, 'cluster-logs', this.version) },
    });
  }
}

/** The stamps a container printed (`<name>-<event> <uptime>`), by `<name>-<event>`. */
export function stamps(log: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of log.split('\n')) {
    const m = /^([a-z]+-[a-z]+) ([0-9.]+)$/.exec(line.trim());
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

/** One request of `httpLoadScript`'s clients: start and end (uptime, s), and whether it succeeded. */
export interface LoadRequest {
  readonly start: number;
  readonly end: number;
  readonly ok: boolean;
  /** The status, or the error's code (`ECONNREFUSED`, `ECONNRESET`, `TIMEOUT`). */
  readonly detail: string;
}

/**
 * A small HTTP load client for `node -e` (run in the cluster's network namespace with
 * `spawnInside`): `node -e SCRIPT URL CLIENTS PERIOD SECONDS`. CLIENTS loops, each starting a
 * request every PERIOD seconds at most (one at a time, keep-alive connections as a load balancer
 * keeps them), for SECONDS; a request is ok when it is answered 200 within 5 s. Prints `ready`
 * at its first answer, then one line per request: `<start> <end> <ok 0|1> <detail>` (uptime).
 */
export const HTTP_LOAD_SCRIPT = `
const http = require('http');
const fs = require('fs');
const [url, clients, period, seconds] = process.argv.slice(1);
const base = Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]) - performance.now() / 1000;
const now = () => base + performance.now() / 1000;
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(clients) });
const until = now() + Number(seconds);
let ready = false;
const once = () => new Promise(resolve => {
  const start = now();
  let settled = false;
  const done = (ok, detail) => { if (settled) return; settled = true; resolve({ start, end: now(), ok, detail }); };
  const req = http.get(url, { agent, timeout: 5000 }, res => {
    res.resume();
    res.on('end', () => done(res.statusCode === 200, String(res.statusCode)));
    res.on('error', e => done(false, e.code || 'ERROR'));
  });
  req.on('timeout', () => { req.destroy(); done(false, 'TIMEOUT'); });
  req.on('error', e => done(false, e.code || 'ERROR'));
});
const loop = async () => {
  while (now() < until) {
    const r = await once();
    if (r.ok && !ready) { ready = true; process.stdout.write('ready\\n'); }
    process.stdout.write(r.start.toFixed(3) + ' ' + r.end.toFixed(3) + ' ' + (r.ok ? 1 : 0) + ' ' + r.detail + '\\n');
    const wait = r.start + Number(period) - now();
    if (wait > 0) await new Promise(res => setTimeout(res, wait * 1000));
  }
};
Promise.all(Array.from({ length: Number(clients) }, loop)).then(() => agent.destroy());
`;

/** The requests `HTTP_LOAD_SCRIPT` printed. */
export function loadRequests(lines: string[]): LoadRequest[] {
  const out: LoadRequest[] = [];
  for (const line of lines) {
    const m = /^([0-9.]+) ([0-9.]+) ([01]) (\S+)$/.exec(line.trim());
    if (m) out.push({ start: Number(m[1]), end: Number(m[2]), ok: m[3] === '1', detail: m[4] });
  }
  return out;
}
