/**
 * The real OpenTelemetry Collector as a log agent (`LogAgent.otelCollector()`): `npm run test:agents`
 * with `OTELCOL_LOGS=/path/to/otelcol`, or the collector `bash scripts/build-otelcol.sh logs` built
 * and cached (exactly the components of the default image the config uses:
 * test/collector/logs-builder-manifest.yaml). Without one, one test prints "[otel-collector]
 * skipped: ..." and passes.
 *
 * Each run is the library's own manifest on this machine (./util/pod.ts) against a backend on
 * loopback (./util/sink.ts, `otlp`: Loki's OTLP endpoint). The run's copy of config.yaml differs
 * from the ConfigMap's only in the health_check endpoint (127.0.0.1 and a free port); TLS trusts
 * the test's certificate through `SSL_CERT_FILE` (Go's system roots), the config unchanged. Checked:
 * - `otelcol validate` of every variant, and no warning at start (no deprecated component type);
 * - delivery: every line, once, with the pod's identity and Loki's labels as resource attributes,
 *   the tenant header, the file path; the kubelet's CRI files of `podLogs`, a split line joined;
 * - an outage across a restart: lines read while the backend is down wait in the persistent
 *   queue on the log volume, the probes' endpoint still answers 200, the agent stops within its
 *   shutdown model's time, and its next start sends them; against a backend that never answers,
 *   the stop waits for the attempt in flight up to `exportTimeout`, its records kept for the next start;
 * - the native last line through the library's SIGTERM hold.
 * The figures are printed (`[otel-collector] ...`) for docs/log-agents.md.
 */
import { spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as http from 'http';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { Chart, Duration } from 'cdk8s';
import { Images, LogAgent, LogOutput } from '../../src';
import { agentArgvOf, sigtermHoldOf } from '../util/sigterm-hold';
import {
  LogPod, POD_FIELDS, appendLines, cleanup, freePort, hostArgs, reachable, selfSignedCert, sleep, startAgent, synthLogPod, waitFor,
} from './util/pod';
import { Received, Sink } from './util/sink';

const VERSION = /:(\d+\.\d+\.\d+)/.exec(Images.OTEL_COLLECTOR_K8S)![1];
const MANIFEST = path.join(__dirname, '..', 'collector', 'logs-builder-manifest.yaml');

/** The binary: OTELCOL_LOGS, or the cached build of scripts/build-otelcol.sh logs (its path: version and manifest hash). */
function binary(): string | undefined {
  if (process.env.OTELCOL_LOGS) return process.env.OTELCOL_LOGS;
  const hash = crypto.createHash('sha256').update(fs.readFileSync(MANIFEST)).digest('hex').slice(0, 12);
  const cache = process.env.OTELCOL_CACHE ?? path.join(process.env.CDK8S_SIDECARS_CACHE ?? path.join(os.homedir(), '.cache', 'cdk8s-sidecars'), 'otelcol');
  const cached = path.join(cache, `logs-${VERSION}-${hash}`, 'otelcol');
  return fs.existsSync(cached) ? cached : undefined;
}
const BIN = binary();
const HOST = '127.0.0.1';
const report = (line: string) => process.stdout.write(`[otel-collector] ${line}\n`);

/** The run's copy: the health_check endpoint on loopback and a free port. */
async function collectorPod(o: Parameters<typeof synthLogPod>[0], certFile?: string): Promise<LogPod> {
  const pod = synthLogPod(o);
  const file = path.join(pod.configDirectory, 'config.yaml');
  const port = await freePort();
  const text = fs.readFileSync(file, 'utf8').replace(/^( +"endpoint": )"0\.0\.0\.0:13133"$/m, `$1"${HOST}:${port}"`);
  if (!text.includes(`${HOST}:${port}`)) throw new Error('no health_check endpoint to move to loopback');
  fs.writeFileSync(file, text);
  // the agent's own argv (a native sidecar's is wrapped in the SIGTERM hold: tests that want it run it)
  const argv = agentArgvOf(pod.container);
  const env = certFile ? { ...pod.env, SSL_CERT_FILE: certFile } : pod.env;
  return { ...pod, env, container: { ...pod.container, command: [argv[0]], args: argv.slice(1) } };
}

const config = (pod: LogPod) => path.join(pod.configDirectory, 'config.yaml');

/** The debug exporter's records on stdout (`verbosity: detailed`): each `Body: Str(...)`. */
function stdoutBodies(text: string): string[] {
  return [...text.matchAll(/^Body: Str\((.*)\)$/gm)].map(m => m[1]);
}

function expectPodResource(r: Received, labels: Record<string, string>): void {
  expect(r.meta).toEqual({
    ...labels,
    'k8s.pod.name': POD_FIELDS['metadata.name'],
    'k8s.namespace.name': POD_FIELDS['metadata.namespace'],
    'k8s.node.name': POD_FIELDS['spec.nodeName'],
  });
}

interface Variant {
  readonly name: string;
  readonly tls: boolean;
  readonly output: (chart: Chart, port: number) => LogOutput;
  readonly labels: Record<string, string>;
  readonly tenant?: string;
}

const VARIANTS: Variant[] = [
  { name: 'loki', tls: false, output: (_, port) => LogOutput.loki({ host: HOST, port, tls: false }), labels: { job: 'cdk8s-sidecars' } },
  {
    name: 'loki tenant labels',
    tls: false,
    // a `$$` reaches Loki as written (the config doubles every `$`)
    output: (_, port) => LogOutput.loki({ host: HOST, port, tls: false, labels: { team: 'shop', app: 'web', cost: 'a$$b$x' }, tenantId: 'shop' }),
    labels: { team: 'shop', app: 'web', cost: 'a$$b$x' },
    tenant: 'shop',
  },
  { name: 'loki tls', tls: true, output: (_, port) => LogOutput.loki({ host: HOST, port, tls: true, tenantId: 't-1' }), labels: { job: 'cdk8s-sidecars' }, tenant: 't-1' },
];

if (!BIN) {
  test('skipped: no collector binary', () => {
    report('skipped: set OTELCOL_LOGS=/path/to/otelcol or run `bash scripts/build-otelcol.sh logs` (Go and the Go module proxy; CONTRIBUTING.md)');
  });
} else {
  const bin = BIN;
  const version = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000 }).stdout ?? '';
  let cert: ReturnType<typeof selfSignedCert>;
  let certDir: string;

  beforeAll(() => {
    certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-agents-tls-'));
    fs.chmodSync(certDir, 0o755);
    cert = selfSignedCert(certDir, 'IP:127.0.0.1');
    if (!cert) throw new Error('openssl (Debian: apt-get install openssl) could not make the test certificate');
    report(`binary ${bin}: ${version.trim() || 'version unknown'}`);
  });
  afterAll(() => fs.rmSync(certDir, { recursive: true, force: true }));

  test(`the binary is the collector ${VERSION}, the release of Images.OTEL_COLLECTOR_K8S`, () => {
    expect(version.trim()).toMatch(new RegExp(` ${VERSION.replace(/\./g, '\\.')}$`));
  });

  test('stdout: validate passes, every line on the agent\'s stdout with the pod\'s identity, no warning at start', async () => {
    const pod = await collectorPod({ agent: LogAgent.otelCollector(), output: () => LogOutput.stdout(), kubernetesVersion: '1.28' });
    const agent = startAgent(pod, bin);
    try {
      const v = spawnSync(bin, ['validate', '--config', config(pod)], { env: pod.env, encoding: 'utf8', timeout: 30_000 });
      expect({ status: v.status, output: `${v.stdout}${v.stderr}` }).toEqual({ status: 0, output: '' });
      const lines = ['plain', 'quotes "q" and \\ backslash', 'unicode ✓ ünï', `long ${'x'.repeat(5000)}`];
      appendLines(pod, 'app.log', lines);
      appendLines(pod, 'other.txt', ['not a *.log file']);
      await waitFor(() => stdoutBodies(agent.stdout()).length >= lines.length, 30_000);
      agent.child.kill('SIGTERM');
      const exit = await agent.exited;
      expect(exit.code).toBe(0);
      expect(stdoutBodies(agent.stdout())).toEqual(lines);
      for (const [k, v2] of [['k8s.pod.name', POD_FIELDS['metadata.name']], ['k8s.namespace.name', 'shop'], ['k8s.node.name', 'node-a']]) {
        expect(agent.stdout()).toContain(`-> ${k}: Str(${v2})`);
      }
      expect(agent.stdout()).toContain(`-> log.file.path: Str(${pod.logDirectory}/app.log)`);
      // no deprecated component type, no other warning or error of the collector's own
      expect(agent.output().split('\n').filter(l => /\t(warn|error)\t/.test(l))).toEqual([]);
    } finally {
      if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
      cleanup(pod);
    }
  }, 120_000);

  test.each(VARIANTS.map(v => [v.name, v] as const))('%s: validate passes, the backend gets every line once with the pod\'s identity and labels', async (_, v) => {
    const sink = new Sink('otlp', v.tls ? { tls: cert! } : {});
    await sink.up();
    const pod = await collectorPod({ agent: LogAgent.otelCollector(), output: c => v.output(c, sink.port) }, v.tls ? cert!.certFile : undefined);
    let agent: ReturnType<typeof startAgent> | undefined;
    try {
      const val = spawnSync(bin, ['validate', '--config', config(pod)], { env: pod.env, encoding: 'utf8', timeout: 30_000 });
      expect({ status: val.status, output: `${val.stdout}${val.stderr}` }).toEqual({ status: 0, output: '' });
      agent = startAgent(pod, bin);
      const lines = Array.from({ length: 50 }, (_x, i) => `${v.name} line ${i}`);
      appendLines(pod, 'app.log', lines);
      await waitFor(() => sink.received.length >= lines.length, 60_000);
      agent.child.kill('SIGTERM');
      await agent.exited;
      if (sink.received.length < lines.length) report(`${v.name}: ${agent.output().slice(-3000)}`);
      expect({ problems: sink.problems, lines: sink.received.map(r => r.record.body) }).toEqual({ problems: [], lines });
      for (const r of sink.received) {
        expectPodResource(r, v.labels);
        expect(r.record['log.file.path']).toBe(`${pod.logDirectory}/app.log`);
        expect(r.headers?.['x-scope-orgid']).toBe(v.tenant);
        expect(r.headers?.['content-encoding']).toBe('gzip');
      }
      report(`${v.name}: ${sink.received.length} records at POST /otlp/v1/logs${v.tls ? ' over TLS' : ''}, tenant ${v.tenant ?? 'none'}`);
    } finally {
      if (agent && agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
      await sink.down();
      cleanup(pod);
    }
  }, 120_000);

  test('podLogs: the kubelet\'s CRI lines of the app container, a split line joined, other pods\' files not read', async () => {
    const sink = new Sink('otlp');
    await sink.up();
    const pod = await collectorPod({ agent: LogAgent.otelCollector(), output: () => LogOutput.loki({ host: HOST, port: sink.port, tls: false }), podLogs: {}, captureStdout: { command: ['/app/run'] } });
    let agent: ReturnType<typeof startAgent> | undefined;
    try {
      const val = spawnSync(bin, ['validate', '--config', config(pod)], { env: pod.env, encoding: 'utf8', timeout: 30_000 });
      expect({ status: val.status, output: `${val.stdout}${val.stderr}` }).toEqual({ status: 0, output: '' });
      const dir = path.join(pod.podLogsRoot, `${POD_FIELDS['metadata.namespace']}_${POD_FIELDS['metadata.name']}_${POD_FIELDS['metadata.uid']}`, 'web');
      expect(pod.env.POD_LOG_PATH).toBe(`${dir}/*.log`);
      fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
      const other = path.join(pod.podLogsRoot, 'shop_other-pod_0000', 'web');
      fs.mkdirSync(other, { recursive: true });
      fs.writeFileSync(path.join(other, '0.log'), '2026-12-07T04:00:00.000000000Z stdout F lnum=999999;\n');
      const t = () => new Date().toISOString().replace('Z', '000000Z');
      const cri = (stream: string, tag: string, text: string) => `${t()} ${stream} ${tag} ${text}\n`;
      const long = 'y'.repeat(40000);
      fs.appendFileSync(path.join(dir, '0.log'), Array.from({ length: 100 }, (_x, i) => cri(i % 2 ? 'stderr' : 'stdout', 'F', `lnum=${i + 1};`)).join('') +
        cri('stdout', 'P', `lnum=long;${long.slice(0, 16384)}`) + cri('stdout', 'P', long.slice(16384, 32768)) + cri('stdout', 'F', long.slice(32768)), { mode: 0o640 });
      agent = startAgent(pod, bin);
      await waitFor(() => sink.received.length >= 101, 30_000);
      await sleep(1000);
      agent.child.kill('SIGTERM');
      await agent.exited;
      const bodies = sink.received.map(r => r.record.body);
      expect(bodies).toEqual([...Array.from({ length: 100 }, (_x, i) => `lnum=${i + 1};`), `lnum=long;${long}`]);
      expect(sink.received[1].record['log.iostream']).toBe('stderr');
      report(`podLogs: ${bodies.length} records, the split line ${bodies[100].length} characters in one record`);
    } finally {
      if (agent && agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
      await sink.down();
      cleanup(pod);
    }
  }, 120_000);

  test('an outage across a restart: the lines read while the backend is down are sent by the next start, the stop within the model', async () => {
    const sink = new Sink('otlp');
    await sink.up();
    await sink.down(); // the port is kept: the backend is down from the start
    const pod = await collectorPod({ agent: LogAgent.otelCollector(), output: () => LogOutput.loki({ host: HOST, port: sink.port, tls: false }) });
    let agent = startAgent(pod, bin);
    try {
      const lines = Array.from({ length: 200 }, (_x, i) => `outage line ${i}`);
      appendLines(pod, 'app.log', lines);
      await sleep(3000); // read, queued, the first attempts refused
      // the probes' endpoint does not follow the exporter's failures: no restart for an outage
      const health = /"endpoint": "127\.0\.0\.1:(\d+)"/.exec(fs.readFileSync(config(pod), 'utf8'))![1];
      const probe = await new Promise<number | undefined>(resolve => http.get(`http://${HOST}:${health}/`, r => { r.resume(); resolve(r.statusCode); }).on('error', () => resolve(undefined)));
      expect(probe).toBe(200);
      agent.child.kill('SIGTERM');
      const termAt = Date.now();
      const stopped = await agent.exited;
      const stopSeconds = (stopped.at - termAt) / 1000;
      const queue = fs.readdirSync(path.join(pod.logDirectory, '.otel-collector'));
      expect(sink.received).toEqual([]);
      await sink.up();
      agent = startAgent(pod, bin);
      await waitFor(() => sink.received.length >= lines.length, 60_000);
      await sleep(1500);
      agent.child.kill('SIGTERM');
      await agent.exited;
      const got = sink.received.map(r => r.record.body);
      const twice = got.length - new Set(got).size;
      report(`outage: stopped ${stopSeconds.toFixed(1)} s after SIGTERM with the backend down (state files: ${queue.join(', ')}); ` +
        `after the restart ${new Set(got).size} of ${lines.length} lines sent, ${twice} twice`);
      expect(stopped.code).toBe(0);
      // the model: one export attempt (5 s) and the exit (1 s)
      expect(stopSeconds).toBeLessThan(6.5);
      expect([...new Set(got)].sort()).toEqual([...lines].sort());
      expect(twice).toBe(0);
    } finally {
      if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
      await sink.down();
      cleanup(pod);
    }
  }, 180_000);

  test('a backend that never answers: the stop waits for the attempt in flight up to exportTimeout, and the next start sends its records', async () => {
    // accepts connections and requests, answers none
    const sockets = new Set<net.Socket>();
    const silent = net.createServer(c => { sockets.add(c); c.on('error', () => undefined); });
    await new Promise<void>(resolve => silent.listen(0, HOST, () => resolve()));
    const port = (silent.address() as net.AddressInfo).port;
    const pod = await collectorPod({
      agent: LogAgent.otelCollector({ exportTimeout: Duration.seconds(3) }),
      output: () => LogOutput.loki({ host: HOST, port, tls: false }),
    });
    let agent = startAgent(pod, bin);
    const sink = new Sink('otlp');
    try {
      const lines = Array.from({ length: 20 }, (_x, i) => `silent line ${i}`);
      appendLines(pod, 'app.log', lines);
      await waitFor(() => sockets.size > 0, 10_000);
      await sleep(1000); // the request is in flight
      agent.child.kill('SIGTERM');
      const termAt = Date.now();
      const stopped = await agent.exited;
      const stopSeconds = (stopped.at - termAt) / 1000;
      for (const c of sockets) c.destroy();
      await new Promise<void>(resolve => silent.close(() => resolve()));
      sink.port = port;
      await sink.up();
      agent = startAgent(pod, bin);
      await waitFor(() => sink.received.length >= lines.length, 60_000);
      agent.child.kill('SIGTERM');
      await agent.exited;
      const got = sink.received.map(r => r.record.body);
      report(`silent backend: stopped ${stopSeconds.toFixed(1)} s after SIGTERM with an attempt in flight (exportTimeout 3 s); the next start sent ${new Set(got).size} of ${lines.length}`);
      expect(stopped.code).toBe(0);
      // the model: the attempt in flight (3 s) and the exit (1 s)
      expect(stopSeconds).toBeLessThan(4.5);
      expect([...new Set(got)].sort()).toEqual([...lines].sort());
    } finally {
      if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
      for (const c of sockets) c.destroy();
      silent.close();
      await sink.down();
      cleanup(pod);
    }
  }, 180_000);

  test('native: the last line written at the app\'s exit is shipped through the SIGTERM hold (3 runs)', async () => {
    const busybox = ['/usr/bin/busybox', '/bin/busybox'].find(p => fs.existsSync(p));
    if (!busybox) throw new Error('busybox not found (Debian: apt-get install busybox)');
    const results: Array<{ hold: number; shipped: boolean; stoppedAfter: number; code: number | null }> = [];
    for (let i = 0; i < 3; i++) {
      const sink = new Sink('otlp');
      await sink.up();
      const o = { agent: LogAgent.otelCollector(), output: () => LogOutput.loki({ host: HOST, port: sink.port, tls: false }), kubernetesVersion: '1.29' };
      const synthesized = synthLogPod(o);
      cleanup(synthesized);
      const hold = sigtermHoldOf(synthesized.container);
      const pod = await collectorPod(o);
      const script = String(synthesized.container.command[3]).split('/sidecar-tools/busybox').join(busybox);
      const agent = startAgent({ ...pod, container: { ...pod.container, args: ['sh', '-c', script, 'sh', reachable(pod, bin), ...hostArgs(pod)] } }, busybox);
      try {
        appendLines(pod, 'app.log', ['first']);
        await waitFor(() => sink.received.some(r => r.record.body === 'first'), 30_000);
        await sleep(2000);
        appendLines(pod, 'app.log', ['last words']);
        const exitAt = Date.now();
        await sleep(200);
        agent.child.kill('SIGTERM');
        const exit = await agent.exited;
        await sleep(300);
        results.push({ hold, shipped: sink.received.some(r => r.record.body === 'last words'), stoppedAfter: (exit.at - exitAt) / 1000, code: exit.code });
      } finally {
        if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
        await sink.down();
        cleanup(pod);
      }
    }
    report(`native last line through the ${results[0].hold} s hold: ${results.map(r => `${r.shipped ? 'shipped' : 'LOST'} (exit ${r.stoppedAfter.toFixed(1)} s after the line)`).join(', ')}`);
    for (const r of results) {
      expect({ hold: r.hold, shipped: r.shipped, code: r.code }).toEqual({ hold: 1, shipped: true, code: 0 });
      // the hold (1 s), then the stop: one export attempt (5 s) and the exit (1 s)
      expect(r.stoppedAfter).toBeLessThan(7.5);
    }
  }, 300_000);
}
