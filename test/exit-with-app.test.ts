/**
 * A legacy sidecar that exits with the app (issue 27): on a Job, CronJob or completing Pod in the
 * legacy layout (1.27, 1.28 without the gate), the library's sidecars run under a busybox wrapper
 * that stops the agent once the app's processes are gone, so the pod completes; refused where
 * that cannot work (restartPolicy OnFailure, a sidecar that holds the app, an unknown program).
 *
 * The wrapper is RUN under a real busybox sh (Debian package `busybox`; `.ci/run` installs it)
 * over a fake /proc of a pod (as test/watch-app-exit.test.ts), with a real child process as the
 * agent: it must stop the agent after the read delay once the app is gone and exit 0, forward a
 * SIGTERM at once, and pass on the agent's own exit status when the agent exits by itself.
 */
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { ApiObject, Chart, Testing } from 'cdk8s';
import { LogAgent, Mesh, SidecarCheck, SidecarTimeline, SidecarValidation, SidecarWarnings, WithEnvoy, WithLogAgent, WithMeshProxy, WithSidecar, WithTracer } from '../src';
import { containerEnvironment, expand } from './util/env-expansion';
import { containerOf, manifestOf, newChart, podSpecOf } from './util/fixtures';
import { schemaErrors } from './util/k8s-schema';
import { restrictedViolations, volumeViolations } from './util/pss';
import { agentArgvOf, sigtermHoldOf } from './util/sigterm-hold';
import { noteSkipped } from './util/skips';
import { StartedCheck, TOOLS, exitWithAppScript, startedCheck } from '../src/engine/shutdown';

const ENDPOINT = 'otel-collector.observability:4317';

function job(chart: Chart, podSpec: any, kind: 'Job' | 'CronJob' | 'Pod' = 'Job'): ApiObject {
  const template = { metadata: { labels: { app: 'report' } }, spec: podSpec };
  const spec = kind === 'Job' ? { template } : kind === 'CronJob' ? { schedule: '0 3 * * *', jobTemplate: { spec: { template } } } : podSpec;
  return new ApiObject(chart, 'report', { apiVersion: kind === 'CronJob' ? 'batch/v1' : kind === 'Pod' ? 'v1' : 'batch/v1', kind, metadata: { name: 'report' }, spec });
}

const APP = { name: 'report', image: 'ghcr.io/example/report:1.0.0', command: ['/report'] };

function synth(version: string, options: { restartPolicy?: string; kind?: 'Job' | 'CronJob' | 'Pod'; agent?: LogAgent; tracer?: boolean; podSpec?: any } = {}) {
  const { chart } = newChart();
  const workload = job(chart, { containers: [APP], restartPolicy: options.restartPolicy ?? 'Never', ...(options.podSpec ?? {}) }, options.kind);
  new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version, ...(options.agent ? { agent: options.agent } : {}) });
  if (options.tracer) new WithTracer(chart, 'tracer', { workload, kubernetesVersion: version, exporterEndpoint: ENDPOINT });
  return { chart, workload, manifests: Testing.synth(chart) };
}

test('startedCheck: the liveness URL (else the startup one) on loopback, a named port resolved, the startup budget; none where it cannot be spliced or fetched', () => {
  const probe = (httpGet: any) => ({ httpGet, periodSeconds: 2, failureThreshold: 15 });
  const ports = [{ name: 'http', containerPort: 2020 }];
  expect(startedCheck({ ports, startupProbe: probe({ port: 'http', path: '/api/v1/health' }), livenessProbe: { httpGet: { port: 'http', path: '/api/v1/uptime' } } }))
    .toEqual({ url: 'http://127.0.0.1:2020/api/v1/uptime', seconds: 30 });
  expect(startedCheck({ ports, startupProbe: probe({ port: 2021, path: '/ready' }), livenessProbe: { exec: { command: ['true'] } } }))
    .toEqual({ url: 'http://127.0.0.1:2021/ready', seconds: 30 });
  expect(startedCheck({ ports, startupProbe: probe({ port: 2020, path: '/x', scheme: 'HTTPS' }) })).toBeUndefined();
  expect(startedCheck({ ports, startupProbe: probe({ port: 'admin', path: '/x' }) })).toBeUndefined();
  expect(startedCheck({ ports, startupProbe: probe({ port: 2020, path: "/x'; reboot; '" }) })).toBeUndefined();
  expect(startedCheck({ ports, startupProbe: { tcpSocket: { port: 2020 } } })).toBeUndefined();
});

describe('the manifest', () => {
  test.each(['1.27', '1.28'])('a Job at %s: the log agent and the tracer run under the wrapper; shareProcessNamespace; valid, restricted, byte-identical twice', (version) => {
    const { chart, workload, manifests } = synth(version, { tracer: true });
    const m = manifestOf(manifests, 'Job');
    const spec = podSpecOf(m);
    expect(spec.shareProcessNamespace).toBe(true);
    expect(spec.containers.map((c: any) => c.name)).toEqual(['report', 'log-agent', 'tracer']);
    expect(spec.initContainers.map((c: any) => c.name)).toEqual([TOOLS.containerName]);
    const logs = containerOf(m, 'log-agent');
    const [bin, sh, c, script, zero, ...argv] = logs.command;
    expect([bin, sh, c, zero]).toEqual([TOOLS.busybox, 'sh', '-c', 'sh']);
    // the agent's own argv, unchanged, as the wrapper's arguments; no args left beside it
    expect(argv).toEqual(['/fluent-bit/bin/fluent-bit', '--config', '/etc/log-agent/fluent-bit.conf']);
    expect(logs.args).toBeUndefined();
    // Fluent Bit's read delay (2 s), and every program of the pod's sidecars with the tools' busybox
    expect(script).toContain(`${TOOLS.busybox} sleep 2 & wait $!`);
    expect(script).toContain('case "$a" in /fluent-bit/bin/fluent-bit|/otelcol|/sidecar-tools/busybox)');
    // an agent not started yet by the app's exit is waited for: its liveness URL (Fluent Bit's uptime, which a
    // backend outage does not fail; the probe itself is left out on a Job), its startup budget (30 s)
    expect(logs.startupProbe).toMatchObject({ httpGet: { port: 2020 }, periodSeconds: 1, failureThreshold: 30 });
    expect(script).toContain(`[ $i -lt 30 ] && kill -0 $c 2>/dev/null && ! ${TOOLS.busybox} wget -q -T 1 -O /dev/null 'http://127.0.0.1:2020/api/v1/uptime'`);
    expect(logs.volumeMounts).toContainEqual({ mountPath: TOOLS.mountPath, name: TOOLS.volumeName, readOnly: true });
    const tracer = containerOf(m, 'tracer');
    expect(tracer.command.slice(5)).toEqual(['/otelcol', '--config=/etc/otelcol/config.yaml']);
    expect(tracer.command[3]).not.toContain('sleep 0');
    // the kubelet's $(VAR) expansion leaves the wrapper's command as it is (no `$$`, no `$(NAME)`)
    for (const x of [logs, tracer]) {
      const env = containerEnvironment(x.env ?? []);
      expect(x.command.map((w: string) => expand(w, env))).toEqual(x.command);
    }
    // valid for the release (strict schema, API server rules), the sidecars PSS restricted
    expect(schemaErrors(m, version)).toEqual([]);
    expect(SidecarValidation.checkManifest(m, version)).toEqual([]);
    for (const x of [...spec.initContainers, logs, tracer]) expect(restrictedViolations(x, {})).toEqual([]);
    for (const v of spec.volumes.filter((x: any) => x.name !== 'x')) expect(volumeViolations(v)).toEqual([]);
    expect(Testing.synth(chart)).toEqual(manifests);
    expect(JSON.stringify(Testing.synth(chart))).toBe(JSON.stringify(manifests));
    // what was done and why, as a warning
    expect(SidecarWarnings.of(workload).join('\n')).toMatch(/\(Job 'report'\): its pods complete, and in the legacy layout a sidecar never exits by itself, so 'log-agent', 'tracer' are run under a wrapper that exits with the app/);
    expect(m).toMatchSnapshot();
  });

  test('a CronJob at 1.27 and a Pod with restartPolicy Never: wrapped the same way', () => {
    for (const kind of ['CronJob', 'Pod'] as const) {
      const spec = podSpecOf(manifestOf(synth('1.27', { kind }).manifests, kind));
      expect(spec.shareProcessNamespace).toBe(true);
      expect(containerOf({ kind: 'Pod', spec }, 'log-agent').command.slice(0, 3)).toEqual([TOOLS.busybox, 'sh', '-c']);
    }
  });

  test('native targets (1.28 with the gate, 1.29) and Deployments: nothing changes', () => {
    for (const [version, gate] of [['1.28', true], ['1.29', false]] as const) {
      const { chart } = newChart();
      const workload = job(chart, { containers: [APP], restartPolicy: 'Never' });
      new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: version, sidecarContainersGate: gate });
      const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Job'));
      expect(spec.shareProcessNamespace).toBeUndefined();
      // no exit-with-app wrapper: the agent itself (from 1.29 under the SIGTERM hold, issue 51)
      const agent = spec.initContainers.find((c: any) => c.name === 'log-agent');
      expect(agentArgvOf(agent)[0]).toBe('/fluent-bit/bin/fluent-bit');
      expect(sigtermHoldOf(agent)).toBe(version === '1.29' ? 2 : 0);
    }
  });

  test('restartPolicy OnFailure: refused, with why and what to do', () => {
    expect(() => synth('1.27', { restartPolicy: 'OnFailure' })).toThrow(
      /WithLogAgent 'test\/logs': a legacy sidecar on Job 'report' never exits, so the Job never completes; with restartPolicy OnFailure the library cannot make it exit with the app: the kubelet restarts a failed app container in place.*Set restartPolicy: Never on the pod template.*Target Kubernetes 1\.29\+.*allowLegacyOnJob: true/,
    );
    expect(() => synth('1.28', { kind: 'Pod', restartPolicy: 'OnFailure' })).toThrow(/the pod \(restartPolicy OnFailure\) never completes; with restartPolicy OnFailure/);
  });

  test('shareProcessNamespace: false on the workload: refused', () => {
    expect(() => synth('1.27', { podSpec: { shareProcessNamespace: false } })).toThrow(/needs the containers to see each other's processes, but the workload sets shareProcessNamespace: false\. Drop shareProcessNamespace from the workload\./);
  });

  test.each([[Mesh.GCS_FUSE, 'gke-gcsfuse-sidecar'], [Mesh.DATADOG, 'datadog-agent-injected']])('%s injected beside it (a legacy container that exits once the others have): refused, each would wait for the other', (mesh, container) => {
    const { chart } = newChart();
    const workload = job(chart, { containers: [APP], restartPolicy: 'Never' });
    new WithMeshProxy(chart, 'mesh', { workload, mesh, kubernetesVersion: '1.27' });
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.27' });
    expect(() => Testing.synth(chart)).toThrow(new RegExp(`WithLogAgent 'test/logs': .*the library would make it exit with the app, but '${container}' \\(.*\\) is injected beside it in the legacy layout.*neither would exit`));
  });

  test('Istio injected beside it, the app stopping the proxy itself (allowLegacyOnJob): wrapped as without it', () => {
    const { chart } = newChart();
    const workload = job(chart, { containers: [APP], restartPolicy: 'Never' });
    new WithMeshProxy(chart, 'mesh', { workload, mesh: Mesh.ISTIO, kubernetesVersion: '1.27', allowLegacyOnJob: true });
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.27' });
    expect(containerOf(manifestOf(Testing.synth(chart), 'Job'), 'log-agent').command[0]).toBe(TOOLS.busybox);
  });

  test('a sidecar that holds the app, and one whose program is not known: refused', () => {
    const { chart } = newChart();
    const workload = job(chart, { containers: [APP], restartPolicy: 'Never' });
    new WithEnvoy(chart, 'envoy', { workload, kubernetesVersion: '1.27', appPort: 8080, holdApplicationUntilProxyStarts: true });
    expect(() => Testing.synth(chart)).toThrow(/WithEnvoy 'test\/envoy': .*it holds the app until it is ready \(it starts before the app\)/);
    const other = newChart();
    const w2 = job(other.chart, { containers: [APP], restartPolicy: 'Never' });
    new WithSidecar(other.chart, 'proxy', { workload: w2, kubernetesVersion: '1.27', containerName: 'proxy', image: 'ghcr.io/example/proxy:1.0.0' });
    expect(() => Testing.synth(other.chart)).toThrow(/WithSidecar 'test\/proxy': .*the program its image runs is not known \(no command\)/);
  });

  test('WithSidecar with a command: wrapped, its args after its command', () => {
    const { chart } = newChart();
    const workload = job(chart, { containers: [APP], restartPolicy: 'Never' });
    new WithSidecar(chart, 'proxy', { workload, kubernetesVersion: '1.27', containerName: 'proxy', image: 'ghcr.io/example/proxy:1.0.0', command: ['/proxy'], args: ['--port', '5432'] });
    const proxy = containerOf(manifestOf(Testing.synth(chart), 'Job'), 'proxy');
    expect(proxy.command.slice(4)).toEqual(['sh', '/proxy', '--port', '5432']);
    expect(proxy.args).toBeUndefined();
  });

  test('no livenessProbe on a legacy sidecar of a restartPolicy Never pod (never restarted: a failed probe would fail the Job); native and Deployments keep it', () => {
    const legacy = manifestOf(synth('1.27', { tracer: true }).manifests, 'Job');
    for (const name of ['log-agent', 'tracer']) expect(containerOf(legacy, name).livenessProbe).toBeUndefined();
    const native = manifestOf(synth('1.29', { tracer: true }).manifests, 'Job');
    for (const name of ['log-agent', 'tracer']) expect(containerOf(native, name).livenessProbe).toBeDefined();
    const { chart } = newChart();
    const deployment = new ApiObject(chart, 'web', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [APP] } } },
    });
    new WithLogAgent(chart, 'logs', { workload: deployment, kubernetesVersion: '1.27' });
    expect(containerOf(manifestOf(Testing.synth(chart), 'Deployment'), 'log-agent').livenessProbe).toBeDefined();
  });

  test('a WithSidecar livenessCheck on a legacy Job sidecar: left out, with a warning that says why and what to do', () => {
    const { chart } = newChart();
    const workload = job(chart, { containers: [APP], restartPolicy: 'Never' });
    new WithSidecar(chart, 'proxy', {
      workload,
      kubernetesVersion: '1.27',
      containerName: 'proxy',
      image: 'ghcr.io/example/proxy:1.0.0',
      command: ['/proxy'],
      ports: [{ number: 9090, name: 'health' }],
      livenessCheck: SidecarCheck.http(9090, { path: '/healthz' }),
    });
    const proxy = containerOf(manifestOf(Testing.synth(chart), 'Job'), 'proxy');
    expect(proxy.livenessProbe).toBeUndefined();
    expect(SidecarWarnings.of(workload).join('\n')).toMatch(/WithSidecar 'test\/proxy': the livenessProbe is left out on .*restartPolicy Never.*drop livenessCheck/);
  });

  test('allowLegacyOnJob keeps the sidecar as it was (no wrapper, no shared process namespace)', () => {
    const { chart } = newChart();
    const workload = job(chart, { containers: [APP], restartPolicy: 'OnFailure' });
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.27', allowLegacyOnJob: true });
    const spec = podSpecOf(manifestOf(Testing.synth(chart), 'Job'));
    expect(spec.shareProcessNamespace).toBeUndefined();
    expect(containerOf({ kind: 'Pod', spec }, 'log-agent').command).toEqual(['/fluent-bit/bin/fluent-bit']);
  });
});

describe('the timeline', () => {
  test('a wrapped Job completes: the agent gets SIGTERM at most 1 s (its look) + its read delay after the app, and exits within its stop time', () => {
    const { workload } = synth('1.27', { agent: LogAgent.fluentBit() });
    const t = SidecarTimeline.of(workload);
    expect(t.completes).toBe(true);
    // Fluent Bit with the stdout output: read delay 2 s, stop time 6 s (docs/shutdown.md's table)
    const step = t.completion.find(s => s.name === 'log-agent')!;
    expect(step).toMatchObject({ sigtermSeconds: 3, exitSeconds: 9, killed: false });
    // then the kubelet's three pod syncs after the last exit (1 s each at most: docs/shutdown.md)
    expect(t.completionSeconds).toBe(12);
    expect(t.toTable()).toMatch(/completion \(seconds from the app's exit\): the pod completes 12 s after its app, the Job at 13 s\n.*\n  log-agent +legacy sidecar +- +- +3 +- +9\n/);
  });

  test('allowLegacyOnJob: the timeline still says the pod never completes by itself', () => {
    const { chart } = newChart();
    const workload = job(chart, { containers: [APP], restartPolicy: 'Never' });
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.27', allowLegacyOnJob: true });
    Testing.synth(chart);
    expect(SidecarTimeline.of(workload).completionSeconds).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------
// The wrapper, run under a real busybox
// ---------------------------------------------------------------------------

const BUSYBOX = ['/usr/bin/busybox', '/bin/busybox'].find(p => fs.existsSync(p));
const runIt = BUSYBOX ? describe : describe.skip;
if (!BUSYBOX) {
  const message = 'busybox not found (Debian: apt-get install busybox); the wrapper is not run';
  if (process.env.CI === 'true') throw new Error(`test/exit-with-app.test.ts: ${message}`);
  noteSkipped(message);
}

/** A fake /proc of a pod sharing its process namespace: pid -> [argv, cgroup]; `self` is the wrapper's container. */
function fakeProc(processes: Record<string, [string[], string]>, own: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-exit-'));
  for (const [pid, [argv, cgroup]] of Object.entries({ ...processes, self: [['sh'], own] as [string[], string] })) {
    fs.mkdirSync(path.join(dir, pid));
    fs.writeFileSync(path.join(dir, pid, 'cmdline'), argv.map(a => `${a}\0`).join(''));
    fs.writeFileSync(path.join(dir, pid, 'cgroup'), `0::${cgroup}\n`);
  }
  return dir;
}

/**
 * An "agent": a busybox sh that records when it gets SIGTERM (a file `term` in `dir`), then takes
 * `stopSeconds` and exits with `code`; without SIGTERM it runs until it is killed, or exits by
 * itself after `exitAfter` seconds with `code`.
 */
function agentArgv(dir: string, stopSeconds: number, code: number, exitAfter?: number): string[] {
  const B = BUSYBOX!;
  const body = exitAfter === undefined
    ? `while :; do ${B} sleep 0.1 & wait $!; done`
    : `${B} sleep ${exitAfter} & wait $!; exit ${code}`;
  return [B, 'sh', '-c', `trap '${B} touch "$1/term"; ${B} sleep ${stopSeconds}; exit ${code}' TERM; ${body}`, 'agent', dir];
}

interface Run { child: ChildProcess; done: Promise<{ code: number | null; seconds: number; stderr: string }>; started: number }

/** Every wrapper started (each in a process group of its own, with its agent), for the clean-up. */
const RUNS: Run[] = [];

function runWrapper(proc: string, readSeconds: number, argv: string[], stopSeconds?: number, check?: StartedCheck): Run {
  const script = exitWithAppScript(['/fluent-bit/bin/fluent-bit', TOOLS.busybox], readSeconds, proc, stopSeconds, check).split(TOOLS.busybox).join(BUSYBOX!)
    // Debian's busybox is built without wget's -T (its `wget -T 1` crashes: scripts/cluster/build-busybox.sh); the tools' image has it
    .split(' wget -q -T 1 ').join(' wget -q ');
  const started = Date.now();
  const child = spawn(BUSYBOX!, ['sh', '-c', script, 'sh', ...argv], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr!.on('data', d => (stderr += String(d)));
  const done = new Promise<{ code: number | null; seconds: number; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    // 'exit', not 'close': a grandchild left behind (the agent's own sleep, the bound's) may hold stderr open
    child.on('exit', code => {
      const seconds = (Date.now() - started) / 1000;
      setTimeout(() => resolve({ code, seconds, stderr }), 200);
    });
  });
  const run = { child, done, started };
  RUNS.push(run);
  return run;
}

/** Seconds from `run`'s start until `file` exists (polled every 50 ms), or undefined after `limit` s. */
async function appears(file: string, run: Run, limit: number): Promise<number | undefined> {
  while ((Date.now() - run.started) / 1000 < limit) {
    if (fs.existsSync(file)) return (Date.now() - run.started) / 1000;
    await new Promise(r => setTimeout(r, 50));
  }
  return undefined;
}

runIt('the wrapper under busybox sh', () => {
  const pod = (): Record<string, [string[], string]> => ({
    1: [['/pause'], '/../pause.scope'],
    9: [['/otelcol', '--config=/c'], '/../tracer.scope'],
    // another wrapped sidecar: its first process is the tools' busybox (here the local one, as in the script run)
    10: [[BUSYBOX!, 'sh', '-c', 'wrapper'], '/../tracer2.scope'],
    20: [['java', '-jar', 'report.jar'], '/../app.scope'],
    21: [['sh', '-c', 'worker'], '/../app.scope'],
  });
  let work: string;
  let proc: string;
  beforeEach(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-agent-'));
    // /otelcol is not among the programs given below: pid 9's container counts as the app's, so drop it
    const p = pod();
    delete p[9];
    proc = fakeProc(p, '/');
  });
  afterEach(() => {
    // a wrapper a failed test left running (its agent is its child: the signal is forwarded)
    for (const r of RUNS.splice(0)) {
      try {
        process.kill(-r.child.pid!, 'SIGKILL');
      } catch {
        // the group has exited
      }
    }
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(proc, { recursive: true, force: true });
  });

  test('the app exits: after its read delay the agent gets SIGTERM, the wrapper waits for it and exits 0 (the agent\'s own code aside)', async () => {
    const run = runWrapper(proc, 2, agentArgv(work, 1, 3));
    await new Promise(r => setTimeout(r, 1500));
    fs.rmSync(path.join(proc, '20'), { recursive: true });
    fs.rmSync(path.join(proc, '21'), { recursive: true });
    const appGone = 1.5;
    const term = await appears(path.join(work, 'term'), run, 15);
    const { code, seconds } = await run.done;
    expect(term).toBeDefined();
    // the wrapper looks once a second: SIGTERM between read delay and read delay + 1 s (+ slack) after the app's exit
    expect(term! - appGone).toBeGreaterThanOrEqual(2);
    expect(term! - appGone).toBeLessThan(3.8);
    // it waited for the agent's stop (1 s) and exited 0 although the agent exited 3
    expect(seconds - term!).toBeGreaterThanOrEqual(0.9);
    expect(code).toBe(0);
  }, 30_000);

  test('an app already gone at the first look: the agent is stopped after the read delay', async () => {
    fs.rmSync(path.join(proc, '20'), { recursive: true });
    fs.rmSync(path.join(proc, '21'), { recursive: true });
    const run = runWrapper(proc, 1, agentArgv(work, 0, 0));
    const term = await appears(path.join(work, 'term'), run, 10);
    const { code } = await run.done;
    expect(term).toBeGreaterThanOrEqual(1);
    expect(term).toBeLessThan(2.5);
    expect(code).toBe(0);
  }, 30_000);

  /** An agent's check on loopback that answers 503 until `ready()` was called, then 200. */
  async function check(): Promise<{ url: string; ready: () => void; close: () => Promise<void> }> {
    let up = false;
    const server = http.createServer((_req, res) => { res.statusCode = up ? 200 : 503; res.end(); });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as { port: number }).port;
    return { url: `http://127.0.0.1:${port}/api/v1/uptime`, ready: () => { up = true; }, close: () => new Promise(resolve => server.close(() => resolve())) };
  }

  test('(found on the cluster) an agent that has not started by the app\'s exit is waited for: SIGTERM only once its check answers, after the read delay', async () => {
    const agentCheck = await check();
    try {
      fs.rmSync(path.join(proc, '20'), { recursive: true });
      fs.rmSync(path.join(proc, '21'), { recursive: true });
      const run = runWrapper(proc, 1, agentArgv(work, 0, 0), undefined, { url: agentCheck.url, seconds: 30 });
      await new Promise(r => setTimeout(r, 3000));
      expect(fs.existsSync(path.join(work, 'term'))).toBe(false);
      agentCheck.ready();
      const term = await appears(path.join(work, 'term'), run, 15);
      const { code } = await run.done;
      // started at 3 s (seen within the next second's try), then the read delay (1 s)
      expect(term).toBeGreaterThanOrEqual(4);
      expect(term).toBeLessThan(6.5);
      expect(code).toBe(0);
    } finally {
      await agentCheck.close();
    }
  }, 30_000);

  test('an agent whose check never answers is stopped once its startup budget is spent (2 tries)', async () => {
    const agentCheck = await check();
    await agentCheck.close();
    fs.rmSync(path.join(proc, '20'), { recursive: true });
    fs.rmSync(path.join(proc, '21'), { recursive: true });
    const run = runWrapper(proc, 0, agentArgv(work, 0, 0), undefined, { url: agentCheck.url, seconds: 2 });
    const term = await appears(path.join(work, 'term'), run, 15);
    const { code } = await run.done;
    expect(term).toBeGreaterThanOrEqual(1.8);
    expect(term).toBeLessThan(4.5);
    expect(code).toBe(0);
  }, 30_000);

  test('the app still runs: SIGTERM to the wrapper reaches the agent at once, and the wrapper exits 143 although the agent exits 0 (stopped, not done: a pod whose agent was killed is not Succeeded)', async () => {
    const run = runWrapper(proc, 2, agentArgv(work, 1, 0));
    await new Promise(r => setTimeout(r, 1200));
    const sent = (Date.now() - run.started) / 1000;
    run.child.kill('SIGTERM');
    const term = await appears(path.join(work, 'term'), run, 10);
    const { code, seconds } = await run.done;
    expect(term! - sent).toBeLessThan(0.5);
    expect(seconds - term!).toBeGreaterThanOrEqual(0.9);
    expect(code).toBe(143);
    // the app's processes still there: the wrapper did not stop the agent by itself
    expect(fs.existsSync(path.join(proc, '20'))).toBe(true);
  }, 30_000);

  test('the app still runs and no one signals: the agent keeps running (the wrapper does not give up)', async () => {
    const run = runWrapper(proc, 1, agentArgv(work, 0, 0));
    expect(await appears(path.join(work, 'term'), run, 4)).toBeUndefined();
    run.child.kill('SIGTERM');
    // stopped from outside while the app runs
    expect((await run.done).code).toBe(143);
  }, 30_000);

  test('an agent that hangs on its way out (it takes 30 s after SIGTERM) is killed once its stop time (2 s) has passed, and the wrapper exits 0', async () => {
    fs.rmSync(path.join(proc, '20'), { recursive: true });
    fs.rmSync(path.join(proc, '21'), { recursive: true });
    const run = runWrapper(proc, 0, agentArgv(work, 30, 3), 2);
    const term = await appears(path.join(work, 'term'), run, 10);
    const { code, seconds, stderr } = await run.done;
    // and says so in the container's log
    expect(stderr).toContain('exit-with-app: the agent did not stop within 2 s of its SIGTERM: SIGKILL');
    expect(term).toBeDefined();
    // SIGKILL 2 s after SIGTERM (+ slack), far before the agent's own 30 s
    expect(seconds - term!).toBeGreaterThanOrEqual(1.9);
    expect(seconds - term!).toBeLessThan(4);
    expect(code).toBe(0);
  }, 30_000);

  test('a SIGTERM from outside once the app is gone (the agent stopping): the wrapper still exits 0', async () => {
    fs.rmSync(path.join(proc, '20'), { recursive: true });
    fs.rmSync(path.join(proc, '21'), { recursive: true });
    const run = runWrapper(proc, 0, agentArgv(work, 2, 0), 10);
    const term = await appears(path.join(work, 'term'), run, 10);
    expect(term).toBeDefined();
    run.child.kill('SIGTERM');
    expect((await run.done).code).toBe(0);
  }, 30_000);

  test('an agent that stops within its stop time is not killed: the wrapper returns at its exit, not at the bound', async () => {
    fs.rmSync(path.join(proc, '20'), { recursive: true });
    fs.rmSync(path.join(proc, '21'), { recursive: true });
    const run = runWrapper(proc, 0, agentArgv(work, 1, 0), 10);
    const term = await appears(path.join(work, 'term'), run, 10);
    const { code, seconds, stderr } = await run.done;
    expect(stderr).toBe('');
    expect(seconds - term!).toBeGreaterThanOrEqual(0.9);
    expect(seconds - term!).toBeLessThan(3);
    expect(code).toBe(0);
  }, 30_000);

  test('the agent exits by itself: the wrapper exits with its status, without waiting for the app', async () => {
    const run = runWrapper(proc, 1, agentArgv(work, 0, 7, 1));
    const { code, seconds } = await run.done;
    expect(code).toBe(7);
    expect(seconds).toBeLessThan(3.5);
  }, 30_000);

  test('another wrapped sidecar (its process the tools\' busybox) does not count as the app', async () => {
    fs.rmSync(path.join(proc, '20'), { recursive: true });
    fs.rmSync(path.join(proc, '21'), { recursive: true });
    // pid 10 (the other wrapper) stays
    const run = runWrapper(proc, 0, agentArgv(work, 0, 0));
    const { code, seconds } = await run.done;
    expect(code).toBe(0);
    expect(seconds).toBeLessThan(2);
  }, 30_000);

  test('the script is valid busybox sh', () => {
    const r = spawnSync(BUSYBOX!, ['sh', '-n', '-c', exitWithAppScript(['/a', '/b'], 2)]);
    expect(r.status).toBe(0);
  });
});
