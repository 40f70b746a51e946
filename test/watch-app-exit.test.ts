/**
 * `watchAppExit` (issue 26, point 2): in the legacy layout a sidecar's preStop wait ends once the
 * app's processes are gone (shareProcessNamespace), still bounded by the app's end.
 *
 * The hook's wait is run for real under busybox's sh (Debian package `busybox`; `.ci/run`
 * installs it): over a fake /proc of a pod, as `shareProcessNamespace` shows it (PID 1 the
 * sandbox, one cgroup per container), it must end about a second after the app's last process is
 * gone, whatever the sidecars' processes do, and never outlast its bound.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Duration, Testing } from 'cdk8s';
import { LogAgent, SidecarMode, SidecarTimeline, Sidecars, WithEnvoy, WithLogAgent, WithTracer } from '../src';
import { containerOf, kplusWorkload, manifestOf, newChart, podSpecOf, rawDeployment } from './util/fixtures';
import { restrictedViolations } from './util/pss';
import { noteSkipped } from './util/skips';
import { TOOLS, appWatchScript } from '../src/engine/shutdown';

const ENDPOINT = 'otel-collector.observability:4317';

function synth(version: string, watch: boolean | undefined, extra: { mode?: SidecarMode; configure?: boolean; podSpec?: any } = {}) {
  const { app, chart } = newChart();
  if (extra.configure) Sidecars.configure(app, { watchAppExit: watch });
  const workload = kplusWorkload(chart, 'Deployment');
  const common = {
    workload, kubernetesVersion: version, ...(extra.configure ? {} : { watchAppExit: watch }), ...(extra.mode ? { mode: extra.mode } : {}),
  };
  new WithLogAgent(chart, 'logs', { ...common, agent: LogAgent.fluentBit() });
  new WithTracer(chart, 'tracer', { ...common, exporterEndpoint: ENDPOINT });
  new WithEnvoy(chart, 'envoy', { ...common, appPort: 8080, appListensOnPodIp: true });
  return podSpecOf(manifestOf(Testing.synth(chart), 'Deployment'));
}

describe('the manifest', () => {
  test('legacy (1.27): shareProcessNamespace, each sidecar\'s wait bounded by the app\'s end, then its read delay; the grace period unchanged', () => {
    const spec = synth('1.27', true);
    const plain = synth('1.27', undefined);
    expect(spec.shareProcessNamespace).toBe(true);
    expect(plain.shareProcessNamespace).toBeUndefined();
    expect(spec.terminationGracePeriodSeconds).toBe(plain.terminationGracePeriodSeconds);
    const B = TOOLS.busybox;
    const logs = containerOf({ kind: 'Pod', spec }, 'log-agent');
    const [bin, sh, c, script] = logs.lifecycle.preStop.exec.command;
    expect([bin, sh, c]).toEqual([B, 'sh', '-c']);
    // app 10 s (the bound), then Fluent Bit's read delay of 2 s; the programs of the three sidecars
    expect(script).toMatch(new RegExp(`^${B} timeout 10 ${B} sh -c '.*case "\\$a" in /fluent-bit/bin/fluent-bit\\|/otelcol\\|/usr/local/bin/envoy\\) .*' \\|\\| true; ${B} sleep 2$`));
    // Envoy keeps its drain requests first
    // (the drain URLs are the script's arguments: "$1", "$2")
    const envoyStop = containerOf({ kind: 'Pod', spec }, 'envoy').lifecycle.preStop.exec.command;
    expect(envoyStop[3]).toMatch(/^.*wget .*"\$1"; .*wget .*"\$2"; .* timeout 10 /);
    expect(envoyStop.slice(4)).toEqual(['sh', 'http://127.0.0.1:9901/healthcheck/fail', 'http://127.0.0.1:9901/drain_listeners?inboundonly&graceful']);
    // the timeline reads the hook's worst case: the bound, then the read delay
    const t = SidecarTimeline.ofManifest({ kind: 'Pod', metadata: { name: 'p' }, spec }, { kubernetesVersion: '1.27', legacySidecars: ['log-agent', 'tracer', 'envoy'] });
    expect(t.termination.find(e => e.name === 'log-agent')).toMatchObject({ hookStartSeconds: 0, hookEndSeconds: 12 });
    expect(t.assumptions.filter(a => a.includes('preStop'))).toEqual([]);
    // the added containers still meet the restricted profile (shareProcessNamespace is not a PSS control)
    for (const name of ['log-agent', 'tracer', 'envoy', 'sidecar-tools']) {
      expect(restrictedViolations(containerOf({ kind: 'Pod', spec }, name), name)).toEqual([]);
    }
  });

  test('from Sidecars.configure; no effect in the native layout (1.29), where the kubelet stops the sidecars after the app', () => {
    expect(synth('1.27', true, { configure: true }).shareProcessNamespace).toBe(true);
    expect(synth('1.30', true, { configure: true, mode: SidecarMode.LEGACY }).shareProcessNamespace).toBe(true);
    const native = synth('1.29', true, { configure: true });
    expect(native.shareProcessNamespace).toBeUndefined();
    expect(native).toEqual(synth('1.29', undefined));
  });

  test('a workload that sets shareProcessNamespace: false: an error that says what to drop', () => {
    const { chart } = newChart();
    const workload = rawDeployment(chart, 'web', { containers: [{ name: 'app', image: 'x:1' }], shareProcessNamespace: false });
    new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.27', watchAppExit: true, appShutdownTime: Duration.seconds(20) });
    expect(() => Testing.synth(chart)).toThrow(/Deployment 'web': sets shareProcessNamespace: false, but WithLogAgent 'test\/logs' has watchAppExit, which needs the containers to see each other's processes\. Drop shareProcessNamespace from the workload, or watchAppExit\./);
  });
});

// ---------------------------------------------------------------------------
// The wait, run under a real busybox
// ---------------------------------------------------------------------------

const BUSYBOX = ['/usr/bin/busybox', '/bin/busybox'].find(p => fs.existsSync(p));
const runIt = BUSYBOX ? describe : describe.skip;
if (!BUSYBOX) {
  const message = 'busybox not found (Debian: apt-get install busybox); the hook\'s wait is not run';
  if (process.env.CI === 'true') throw new Error(`test/watch-app-exit.test.ts: ${message}`);
  noteSkipped(message);
}

/** A fake /proc of a pod sharing its process namespace: pid -> [argv, cgroup]. */
function fakeProc(processes: Record<string, [string[], string]>, own: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sidecars-proc-'));
  for (const [pid, [argv, cgroup]] of Object.entries({ ...processes, self: [['sh'], own] as [string[], string] })) {
    fs.mkdirSync(path.join(dir, pid));
    fs.writeFileSync(path.join(dir, pid, 'cmdline'), argv.map(a => `${a}\0`).join(''));
    fs.writeFileSync(path.join(dir, pid, 'cgroup'), `0::${cgroup}\n`);
  }
  return dir;
}

/** Runs the hook's wait (its busybox path replaced by the local one) under `timeout bound`; resolves to the seconds it took. */
function runWait(programs: string[], proc: string, bound: number): Promise<number> {
  const script = appWatchScript(programs, proc).split(TOOLS.busybox).join(BUSYBOX!);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(BUSYBOX!, ['timeout', String(bound), BUSYBOX!, 'sh', '-c', script], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', () => resolve((Date.now() - started) / 1000));
  });
}

runIt('the watchAppExit wait under busybox sh', () => {
  const PROGRAMS = ['/fluent-bit/bin/fluent-bit', '/otelcol', '/usr/local/bin/envoy'];
  const pod = (): Record<string, [string[], string]> => ({
    1: [['/pause'], '/../pause.scope'],
    7: [['/fluent-bit/bin/fluent-bit', '--config', '/x'], '/'],
    9: [['/otelcol', '--config=/c'], '/../tracer.scope'],
    11: [['/usr/local/bin/envoy', '-c', '/e'], '/../envoy.scope'],
    12: [['/sidecar-tools/busybox', 'sleep', '10'], '/../envoy.scope'],
    20: [['java', '-jar', 'app.jar'], '/../app.scope'],
    21: [['sh', '-c', 'worker'], '/../app.scope'],
  });

  test('ends about a second after the app\'s last process is gone, while the sidecars (and their hooks) still run', async () => {
    const proc = fakeProc(pod(), '/');
    try {
      const done = runWait(PROGRAMS, proc, 20);
      await new Promise(r => setTimeout(r, 1500));
      fs.rmSync(path.join(proc, '20'), { recursive: true });
      await new Promise(r => setTimeout(r, 1000));
      fs.rmSync(path.join(proc, '21'), { recursive: true });
      const took = await done;
      // the app's last process left at 2.5 s; the wait polls every second
      expect(took).toBeGreaterThanOrEqual(2.5);
      expect(took).toBeLessThan(4.5);
    } finally {
      fs.rmSync(proc, { recursive: true, force: true });
    }
  }, 30_000);

  test('an app that does not exit: the wait runs to its bound', async () => {
    const proc = fakeProc(pod(), '/');
    try {
      const took = await runWait(PROGRAMS, proc, 3);
      expect(took).toBeGreaterThanOrEqual(2.9);
      expect(took).toBeLessThan(4);
    } finally {
      fs.rmSync(proc, { recursive: true, force: true });
    }
  }, 30_000);

  test('a sidecar whose program is not known counts as the app (the wait then runs to its bound, as without the option)', async () => {
    const proc = fakeProc({ ...pod(), 20: [['/otelcol-contrib'], '/../tracer2.scope'] }, '/');
    fs.rmSync(path.join(proc, '21'), { recursive: true });
    try {
      expect(await runWait(PROGRAMS, proc, 2)).toBeGreaterThanOrEqual(1.9);
      fs.rmSync(path.join(proc, '20'), { recursive: true });
      expect(await runWait(PROGRAMS, proc, 5)).toBeLessThan(1.5);
    } finally {
      fs.rmSync(proc, { recursive: true, force: true });
    }
  }, 30_000);

  test('the script is valid busybox sh', () => {
    const r = spawnSync(BUSYBOX!, ['sh', '-n', '-c', appWatchScript(PROGRAMS)]);
    expect(r.status).toBe(0);
  });
});
