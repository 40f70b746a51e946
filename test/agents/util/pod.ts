/**
 * Pod emulation for `npm run test:agents`, shared by every agent's module: the library's own
 * manifest, synthesized for a workload with a `WithLogAgent`, run on this machine.
 *
 * - The log emptyDir is a temporary directory, mode 0777 as the kubelet creates it (kubernetes
 *   pkg/volume/emptydir/empty_dir.go); it is the `logDirectory` itself, so the config's paths are
 *   the real ones. The ConfigMap's files go into another directory, which stands for its mount
 *   (`/etc/log-agent`): the container's args are rewritten from the mount path to it.
 * - The container's command is the agent's binary given to the suite (`FLUENT_BIT=...`); its
 *   args, env (downward API fields and Secret keys filled in) and config are the manifest's.
 * - It runs as the container's `runAsUser`/`runAsGroup` when the suite runs as root (else as the
 *   current user), with nothing else writable but the volumes: no root filesystem is emulated.
 * - Termination: `terminate()` follows the kubelet's timeline for the pod
 *   (test/util/kubelet-termination.ts): SIGTERM at the container's time, SIGKILL at its deadline.
 */
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { App, Chart, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { LogAgent, LogOutput, WithLogAgent } from '../../../src';

export const POD_FIELDS: Record<string, string> = {
  'metadata.name': 'web-7d9f-x2x4q', 'metadata.namespace': 'shop', 'spec.nodeName': 'node-a', 'metadata.uid': '6f1c2b9e-1d2a-4c1e-9b5a-0a1b2c3d4e5f',
};

export interface PodOptions {
  readonly agent: LogAgent;
  readonly output: (chart: Chart) => LogOutput;
  readonly kubernetesVersion?: string;
  readonly filePattern?: string;
  readonly appShutdownTime?: Duration;
  /** `secretName/key` -> value. */
  readonly secrets?: Record<string, string>;
  /** `WithLogAgent` `captureStdout` (the app container runs `/app/run`). */
  readonly captureStdout?: ConstructorParameters<typeof WithLogAgent>[2]['captureStdout'];
  /** `WithLogAgent` `podLogs`: the node's `/var/log/pods` is `<root>/pods` here. */
  readonly podLogs?: ConstructorParameters<typeof WithLogAgent>[2]['podLogs'];
}

export interface LogPod {
  /** The temporary root (removed by `cleanup`). */
  readonly root: string;
  readonly logDirectory: string;
  readonly configDirectory: string;
  readonly podSpec: any;
  readonly container: any;
  readonly files: Record<string, string>;
  readonly env: Record<string, string>;
  readonly minor: number;
  /** The app container as synthesized. */
  readonly app: any;
  /** What stands for the node's `/var/log/pods`. */
  readonly podLogsRoot: string;
}

/** Synthesizes the workload and lays its volumes out on disk. */
export function synthLogPod(o: PodOptions): LogPod {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-agents-'));
  fs.chmodSync(root, 0o755);
  const logDirectory = path.join(root, 'logs');
  const configDirectory = path.join(root, 'config');
  fs.mkdirSync(logDirectory);
  fs.chmodSync(logDirectory, 0o777);
  fs.mkdirSync(configDirectory);
  const kubernetesVersion = o.kubernetesVersion ?? '1.29';
  const app = new App();
  const chart = new Chart(app, 'pod');
  const web = new kplus.Deployment(chart, 'web', {
    containers: [{ name: 'web', image: 'ghcr.io/example/web:1.0.0', portNumber: 8080, ...(o.captureStdout ? { command: ['/app/run'] } : {}) }],
  });
  new WithLogAgent(chart, 'logs', {
    workload: web,
    kubernetesVersion,
    agent: o.agent,
    output: o.output(chart),
    logDirectory,
    filePattern: o.filePattern,
    appShutdownTime: o.appShutdownTime,
    captureStdout: o.captureStdout,
    podLogs: o.podLogs,
  });
  const manifests = Testing.synth(chart);
  const workload = manifests.find((m: any) => m.kind === 'Deployment');
  const configMap = manifests.find((m: any) => m.kind === 'ConfigMap');
  const podSpec = workload.spec.template.spec;
  const container = [...podSpec.initContainers ?? [], ...podSpec.containers].find((c: any) => c.name === 'log-agent');
  // Secret volumes (a `secret`, or `projected` secret sources) the agent mounts: their files laid out
  // in a directory of their own, mode 0644 as the kubelet writes them (projected volumes' default
  // mode); the config's references to the mount path point there instead.
  const secretMounts: Array<[string, string]> = [];
  for (const m of container.volumeMounts ?? []) {
    const volume = podSpec.volumes.find((v: any) => v.name === m.name);
    const sources: any[] = volume?.projected?.sources?.filter((x: any) => x.secret).map((x: any) => x.secret)
      ?? (volume?.secret ? [{ ...volume.secret, name: volume.secret.secretName }] : []);
    if (sources.length === 0) continue;
    const dir = path.join(root, m.name);
    fs.mkdirSync(dir, { mode: 0o755 });
    for (const src of sources) {
      for (const item of src.items ?? []) {
        const v = o.secrets?.[`${src.name}/${item.key}`];
        if (v === undefined) throw new Error(`the test gives no value for Secret key ${src.name}/${item.key}`);
        fs.writeFileSync(path.join(dir, item.path), v, { mode: 0o644 });
      }
    }
    secretMounts.push([m.mountPath, dir]);
  }
  const files: Record<string, string> = configMap.data;
  for (const [name, text] of Object.entries(files)) {
    let local = text;
    for (const [from, to] of secretMounts) local = local.split(JSON.stringify(from)).join(JSON.stringify(to));
    fs.writeFileSync(path.join(configDirectory, name), local, { mode: 0o644 });
  }
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const podLogsRoot = path.join(root, 'pods');
  for (const e of container.env ?? []) {
    if (e.value !== undefined) {
      // the kubelet's `$(NAME)` from the variables before it; the node's /var/log/pods is podLogsRoot
      env[e.name] = String(e.value).replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m: string, n: string) => env[n] ?? m).replace(/^\/var\/log\/pods\//, `${podLogsRoot}/`);
    } else if (e.valueFrom?.fieldRef) {
      env[e.name] = POD_FIELDS[e.valueFrom.fieldRef.fieldPath];
    } else if (e.valueFrom?.secretKeyRef) {
      const id = `${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`;
      const v = o.secrets?.[id];
      if (v === undefined) throw new Error(`the test gives no value for Secret key ${id}`);
      env[e.name] = v;
    }
  }
  const appContainer = podSpec.containers.find((c: any) => c.name === 'web');
  return { root, logDirectory, configDirectory, podSpec, container, files, env, minor: Number(kubernetesVersion.split('.')[1]), app: appContainer, podLogsRoot };
}

/** The container's mounts on this machine: mount path -> directory. */
function mountMap(pod: LogPod): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const m of pod.container.volumeMounts ?? []) {
    if (m.mountPath === pod.logDirectory) continue;
    if (m.name.endsWith('-config')) out.push([m.mountPath, pod.configDirectory]);
  }
  return out;
}

/** The container's args with its mount paths replaced by the directories that stand for them. */
export function hostArgs(pod: LogPod, extra: string[] = []): string[] {
  const mounts = mountMap(pod);
  return [...pod.container.args, ...extra].map(a => {
    for (const [from, to] of mounts) if (a === from || a.startsWith(`${from}/`)) return to + a.slice(from.length);
    return a;
  });
}

/** uid/gid for spawn: the container's user when we may switch to it. */
function identity(pod: LogPod): { uid?: number; gid?: number } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const sc = pod.container.securityContext ?? {};
  return { uid: sc.runAsUser, gid: sc.runAsGroup ?? sc.runAsUser };
}

export interface RunningAgent {
  readonly child: ChildProcess;
  /** Resolves with the exit code or signal and the time (Date.now()) of the exit. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** stdout and stderr so far. */
  output(): string;
  stdout(): string;
}

/**
 * The binary as the container's user can run it: a binary the user cannot reach (e.g. under root's
 * 0700 home, where the suite's builds are cached) is copied into the pod's directory (0755) first.
 */
export function reachable(pod: LogPod, binary: string): string {
  const id = identity(pod);
  if (id.uid === undefined) return binary;
  const abs = path.resolve(binary);
  // the bits of "others": a directory they may enter (x), a program they may read and run (r, x)
  const others = (p: string) => fs.statSync(p).mode % 8;
  const open = (p: string) => others(p) % 2 === 1;
  let ok = others(abs) === 5 || others(abs) === 7;
  for (let d = path.dirname(abs); ok; d = path.dirname(d)) {
    ok = open(d);
    if (d === path.dirname(d)) break;
  }
  if (ok) return binary;
  const copy = path.join(pod.root, 'bin', path.basename(abs));
  if (!fs.existsSync(copy)) {
    fs.mkdirSync(path.dirname(copy), { recursive: true, mode: 0o755 });
    fs.copyFileSync(abs, copy);
    fs.chmodSync(copy, 0o755);
  }
  return copy;
}

export function startAgent(pod: LogPod, binary: string, extraArgs: string[] = []): RunningAgent {
  const child = spawn(reachable(pod, binary), hostArgs(pod, extraArgs), { env: pod.env, cwd: pod.root, stdio: ['ignore', 'pipe', 'pipe'], ...identity(pod) });
  let out = '';
  let err = '';
  child.stdout!.on('data', d => { out += d; });
  child.stderr!.on('data', d => { err += d; });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve, reject) => {
    child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() }));
    // a program that cannot be started (EACCES, ENOENT) fails the test at once, not at its timeout
    child.on('error', e => reject(new Error(`${binary} could not be started as uid ${identity(pod).uid ?? process.getuid?.()}: ${e.message}`)));
  });
  exited.catch(() => undefined);
  return { child, output: () => out + err, stdout: () => out, exited };
}

/**
 * Runs the agent to completion without blocking this process (`vector validate` queries the
 * backend stub, which runs in this process): SIGKILL after `timeoutMs`.
 */
export async function runAgent(
  pod: LogPod, binary: string, extraArgs: string[], timeoutMs = 30_000,
): Promise<{ status: number | null; output: string }> {
  const agent = startAgent(pod, binary, extraArgs);
  const timer = setTimeout(() => agent.child.kill('SIGKILL'), timeoutMs);
  try {
    const { code } = await agent.exited;
    return { status: code, output: agent.output() };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the agent to completion (e.g. `--dry-run`), bounded; blocks this process (no stub may answer it). */
export function runAgentSync(pod: LogPod, binary: string, extraArgs: string[], timeoutMs = 30_000) {
  const r = spawnSync(reachable(pod, binary), hostArgs(pod, extraArgs), { env: pod.env, cwd: pod.root, encoding: 'utf8', timeout: timeoutMs, ...identity(pod) });
  return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

/** The app: appends lines to a file of the log directory (created 0644, as with umask 022). */
export function appendLines(pod: LogPod, file: string, lines: string[]): void {
  if (lines.length === 0) return;
  fs.appendFileSync(path.join(pod.logDirectory, file), lines.map(l => `${l}\n`).join(''), { mode: 0o644 });
}

export const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/** The app writing `perSecond` lines a second (`line <i>`) to `app.log` for `seconds`, numbered from `from`; returns the next number. */
export async function writeLines(pod: LogPod, from: number, seconds: number, perSecond = 10): Promise<number> {
  let n = from;
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    appendLines(pod, 'app.log', [`line ${n++}`]);
    await sleep(1000 / perSecond);
  }
  return n;
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>(resolve => server.close(() => resolve()));
  return port;
}

/** Waits until `done()` or `timeoutMs`, polling every 100 ms. */
export async function waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (done()) return true;
    await sleep(100);
  }
  return done();
}

export function cleanup(pod: LogPod): void {
  fs.rmSync(pod.root, { recursive: true, force: true });
}

/** A throwaway CA-free certificate for 127.0.0.1 (openssl from Debian), for the TLS runs. */
export function selfSignedCert(dir: string, san: string): { key: string; cert: string; certFile: string } | undefined {
  const key = path.join(dir, 'sink.key');
  const cert = path.join(dir, 'sink.crt');
  const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
    '-subj', '/CN=sink', '-addext', `subjectAltName=${san}`], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  fs.chmodSync(cert, 0o644);
  return { key: fs.readFileSync(key, 'utf8'), cert: fs.readFileSync(cert, 'utf8'), certFile: cert };
}
