/**
 * The real Fluent Bit on every config variant the library emits (issue 25): `npm run test:agents`
 * with `FLUENT_BIT=/path/to/fluent-bit` (scripts/build-fluent-bit.sh builds it from a source tree
 * at the pinned tag). Without it, one test says "skipped: ..." and passes.
 *
 * Each run is the library's own manifest on this machine (./util/pod.ts: the container's command,
 * args, env and config, its user when run as root) against a backend on loopback
 * (./util/sink.ts). What is checked: `--dry-run` of every variant; every record with its fields,
 * labels, index and headers at the backend; long lines; the agent's own files never tailed; a
 * 60 s backend outage and an agent killed while the backend is down (0 lines lost); the shutdown
 * in both layouts on the kubelet's timeline (test/util/kubelet-termination.ts), against a
 * hand-written legacy sidecar; liveness probed as the kubelet does through an outage, a refusing
 * backend and a stopped agent (issue 28). The figures are printed (`[fluent-bit] ...`) for docs/log-agents.md.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Chart, Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { FluentBitConfigFormat, FluentBitMultilineParser, LogAgent, LogOutput, WithLogAgent } from '../../src';
import { LivenessRun, httpGetProbe, watchLiveness } from '../util/kubelet-prober';
import { simulateTermination } from '../util/kubelet-termination';
import {
  LogPod, POD_FIELDS, appendLines, cleanup, freePort, reachable, runAgentSync, selfSignedCert, sleep, startAgent, synthLogPod, waitFor, writeLines,
} from './util/pod';
import { Received, Sink, SinkKind } from './util/sink';
import { agentArgvOf, sigtermHoldOf } from '../util/sigterm-hold';

const BIN = process.env.FLUENT_BIT;
const SECRETS = { 'log-basic/user': 'shipper', 'log-basic/pass': 's3cr3t', 'log-token/key': 'key-123' };
const ref = (chart: Chart, name: string, key: string) => ({ secret: kplus.Secret.fromSecretName(chart, `${name}-${key}`, name), key });
const basicAuth = (chart: Chart) => ({ username: ref(chart, 'log-basic', 'user'), password: ref(chart, 'log-basic', 'pass') });
const BASIC = `Basic ${Buffer.from('shipper:s3cr3t').toString('base64')}`;
const HOST = '127.0.0.1';

interface Variant {
  readonly name: string;
  readonly sink: SinkKind | 'stdout';
  readonly tls: boolean;
  readonly output: (chart: Chart, port: number) => LogOutput;
  /** What the backend must see besides the record's fields. */
  readonly check?: (r: Received) => void;
}

/** Every output the library renders for Fluent Bit, with and without TLS and credentials. */
const VARIANTS: Variant[] = [
  { name: 'stdout', sink: 'stdout', tls: false, output: () => LogOutput.stdout() },
  { name: 'forward', sink: 'forward', tls: false, output: (_, port) => LogOutput.forward({ host: HOST, port }), check: r => expect(r.tag).toMatch(/^app\./) },
  { name: 'forward tls', sink: 'forward', tls: true, output: (_, port) => LogOutput.forward({ host: HOST, port, tls: true }) },
  {
    name: 'http basic',
    sink: 'http',
    tls: false,
    output: (c, port) => LogOutput.http({ host: HOST, port, tls: false, uri: '/ingest?src=k8s', basicAuth: basicAuth(c) }),
    check: r => { expect(r.path).toBe('/ingest?src=k8s'); expect(r.headers?.authorization).toBe(BASIC); expect(typeof r.record.timestamp).toBe('string'); },
  },
  {
    name: 'http header tls',
    sink: 'http',
    tls: true,
    output: (c, port) => LogOutput.http({ host: HOST, port, uri: '/ingest', secretHeaders: { 'X-Api-Key': ref(c, 'log-token', 'key') } }),
    check: r => { expect(r.headers?.['x-api-key']).toBe('key-123'); expect(r.headers?.authorization).toBeUndefined(); },
  },
  {
    name: 'loki',
    sink: 'loki',
    tls: false,
    output: (_, port) => LogOutput.loki({ host: HOST, port, labels: { team: 'shop', app: 'web' }, tenantId: 'shop' }),
    check: r => { expect(r.meta).toEqual({ team: 'shop', app: 'web' }); expect(r.headers?.['x-scope-orgid']).toBe('shop'); },
  },
  {
    name: 'loki basic tls',
    sink: 'loki',
    tls: true,
    output: (c, port) => LogOutput.loki({ host: HOST, port, tls: true, basicAuth: basicAuth(c) }),
    check: r => { expect(r.meta).toEqual({ job: 'cdk8s-sidecars' }); expect(r.headers?.authorization).toBe(BASIC); },
  },
  {
    name: 'elasticsearch basic',
    sink: 'elasticsearch',
    tls: false,
    output: (c, port) => LogOutput.elasticsearch({ host: HOST, port, tls: false, index: 'shop-web', basicAuth: basicAuth(c) }),
    check: r => { expect(Object.values(r.meta ?? {})[0]).toEqual({ _index: 'shop-web' }); expect(r.headers?.authorization).toBe(BASIC); },
  },
  {
    // the longest index Fluent Bit writes intact (FLUENT_BIT_MAX_INDEX): the bulk body keeps its newlines
    name: 'elasticsearch tls, 139-character index',
    sink: 'elasticsearch',
    tls: true,
    output: (_, port) => LogOutput.elasticsearch({ host: HOST, port, index: 'i'.repeat(139) }),
    check: r => expect(Object.values(r.meta ?? {})[0]).toEqual({ _index: 'i'.repeat(139) }),
  },
  {
    // issue 39: a dated index (Logstash_Format): the record's own day, UTC
    name: 'elasticsearch daily index',
    sink: 'elasticsearch',
    tls: false,
    output: (_, port) => LogOutput.elasticsearch({ host: HOST, port, tls: false, index: 'web', indexDateFormat: '%Y.%m.%d' }),
    check: r => {
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10).replace(/-/g, '.');
      expect([day(Date.now()), day(Date.now() - 60_000)].map(d => `web-${d}`)).toContain((Object.values(r.meta ?? {})[0] as any)?._index);
    },
  },
  {
    name: 'opensearch',
    sink: 'opensearch',
    tls: false,
    output: (_, port) => LogOutput.opensearch({ host: HOST, port, tls: false }),
    check: r => expect(Object.values(r.meta ?? {})[0]).toEqual({ _index: 'app-logs' }),
  },
  {
    name: 'opensearch tls basic, 254-character index',
    sink: 'opensearch',
    tls: true,
    output: (c, port) => LogOutput.opensearch({ host: HOST, port, index: 'o'.repeat(254), basicAuth: basicAuth(c) }),
    check: r => { expect(Object.values(r.meta ?? {})[0]).toEqual({ _index: 'o'.repeat(254) }); expect(r.headers?.authorization).toBe(BASIC); },
  },
];

const MULTILINE = [FluentBitMultilineParser.JAVA, FluentBitMultilineParser.GO, FluentBitMultilineParser.PYTHON];
/** Both config formats (configFormat): `--dry-run`, the delivery of every output and the long-line and multiline test run over each. */
const FORMATS = [FluentBitConfigFormat.CLASSIC, FluentBitConfigFormat.YAML];
/** The config file of the pod (`fluent-bit.conf` or `fluent-bit.yaml`) and whether it is YAML. */
function configFile(pod: LogPod): { file: string; yaml: boolean } {
  const yaml = fs.existsSync(path.join(pod.configDirectory, 'fluent-bit.yaml'));
  return { file: path.join(pod.configDirectory, yaml ? 'fluent-bit.yaml' : 'fluent-bit.conf'), yaml };
}
const report = (line: string) => process.stdout.write(`[fluent-bit] ${line}\n`);

/** Waits until `done()` resolves true or `timeoutMs` passes, every 200 ms. */
async function waitForAsync(done: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await done()) return true;
    await sleep(200);
  }
  return done();
}

/**
 * The harness trusts its own certificate: the library's config trusts the system store
 * (`tls.ca_file` unset), which a test must not change, so the run's copy gets `tls.ca_file`.
 */
function trust(pod: LogPod, certFile: string): void {
  const { file, yaml } = configFile(pod);
  const text = yaml
    ? fs.readFileSync(file, 'utf8').replace(/^( +)tls\.verify_hostname: "On"$/m, `$&\n$1tls.ca_file: ${JSON.stringify(certFile)}`)
    : fs.readFileSync(file, 'utf8').replace(/^( +)tls\.verify_hostname( +)On$/m, `$&\n$1tls.ca_file$2${certFile}`);
  if (!text.includes('tls.ca_file')) throw new Error('no TLS section to add the CA to');
  fs.writeFileSync(file, text);
}

/**
 * The run's copy listens on loopback only: the HTTP server (health) on a free port of 127.0.0.1
 * instead of 0.0.0.0:2020 (the pod IP, in a pod), so that runs on a shared machine never meet.
 */
async function localize(pod: LogPod): Promise<LogPod> {
  const { file, yaml } = configFile(pod);
  const port = await freePort();
  const text = yaml
    ? fs.readFileSync(file, 'utf8').replace(/^( +http_listen: )"0\.0\.0\.0"$/m, '$1"127.0.0.1"').replace(/^( +http_port: )\d+$/m, `$1${port}`)
    : fs.readFileSync(file, 'utf8').replace(/^( +HTTP_Listen +)0\.0\.0\.0$/m, '$1127.0.0.1').replace(/^( +HTTP_Port +)\d+$/m, `$1${port}`);
  if (!text.includes('127.0.0.1')) throw new Error('no HTTP_Listen to move to loopback');
  fs.writeFileSync(file, text);
  return pod;
}

/**
 * The agent's own command and args: native from 1.29 the manifest runs it under the SIGTERM hold
 * (issue 51), whose script the test that checks the hold runs itself.
 */
function unheld(pod: LogPod): LogPod {
  const argv = agentArgvOf(pod.container);
  return { ...pod, container: { ...pod.container, command: [argv[0]], args: argv.slice(1) } };
}

/** The pod, its config on loopback. */
const fbPod = async (o: Parameters<typeof synthLogPod>[0]) => unheld(await localize(synthLogPod(o)));

/** Records printed by the stdout output (json_lines). */
function stdoutRecords(text: string): Received[] {
  return text.split('\n').filter(l => l.startsWith('{')).map(l => ({ record: JSON.parse(l) }));
}

function expectPodFields(r: Received): void {
  expect({ pod: r.record.pod, namespace: r.record.namespace, node: r.record.node })
    .toEqual({ pod: POD_FIELDS['metadata.name'], namespace: POD_FIELDS['metadata.namespace'], node: POD_FIELDS['spec.nodeName'] });
}

if (!BIN) {
  test('skipped: set FLUENT_BIT=/path/to/fluent-bit (scripts/build-fluent-bit.sh SRC OUT builds it; see CONTRIBUTING.md)', () => {
    process.stdout.write('[fluent-bit] skipped: set FLUENT_BIT=/path/to/fluent-bit (scripts/build-fluent-bit.sh SRC OUT builds it; see CONTRIBUTING.md)\n');
  });
} else {
  const bin = BIN;
  const version = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000 }).stdout ?? '';
  let certs: { ip: ReturnType<typeof selfSignedCert>; dns: ReturnType<typeof selfSignedCert> };
  let certDir: string;

  beforeAll(() => {
    certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-agents-tls-'));
    fs.chmodSync(certDir, 0o755);
    const dir = (name: string) => {
      const d = path.join(certDir, name);
      fs.mkdirSync(d, { mode: 0o755 });
      return d;
    };
    certs = { ip: selfSignedCert(dir('ip'), 'IP:127.0.0.1'), dns: selfSignedCert(dir('dns'), 'DNS:logs.example.com') };
    if (!certs.ip || !certs.dns) throw new Error('openssl (Debian: apt-get install openssl) could not make the test certificates');
    report(`binary ${bin}: ${/Fluent Bit v[\d.]+/.exec(version)?.[0] ?? 'version unknown'}`);
  });
  afterAll(() => fs.rmSync(certDir, { recursive: true, force: true }));

  describe('--dry-run: every variant, every key known', () => {
    const cases = FORMATS.flatMap(f => VARIANTS.flatMap(v => [[], MULTILINE].flatMap(ml => ['*.log', '.*'].map(fp => [f, v, ml, fp] as const))));
    test.each(cases.map(([f, v, ml, fp]) => [`${f}: ${v.name}, multiline ${ml.length > 0 ? ml.join('+') : 'off'}, filePattern ${fp}`, f, v, ml, fp] as const))(
      '%s', (_, f, v, ml, fp) => {
        const agent = LogAgent.fluentBit({ multilineParsers: [...ml], configFormat: f });
        const pod = unheld(synthLogPod({ agent, output: c => v.output(c, 9), filePattern: fp, secrets: SECRETS }));
        try {
          expect(configFile(pod).yaml).toBe(f === FluentBitConfigFormat.YAML);
          const r = runAgentSync(pod, bin, ['--dry-run']);
          expect({ status: r.status, output: r.output }).toEqual({ status: 0, output: expect.stringContaining('configuration test is successful') });
          expect(r.output).not.toMatch(/unknown configuration property|\[error\]/i);
        } finally {
          cleanup(pod);
        }
      });
    afterAll(() => report(`--dry-run: ${cases.length} variants (${FORMATS.join(' and ')}) passed`));
  });

  describe('ships every record with its fields to a backend on loopback', () => {
    test.each(FORMATS.flatMap(f => VARIANTS.map(v => [`${f}: ${v.name}`, f, v] as const)))('%s', async (_, f, v) => {
      const cert = v.tls ? certs.ip! : undefined;
      const sink = v.sink === 'stdout' ? undefined : new Sink(v.sink, cert ? { tls: cert } : {});
      await sink?.up();
      const pod = await fbPod({ agent: LogAgent.fluentBit({ configFormat: f }), output: c => v.output(c, sink?.port ?? 0), secrets: SECRETS });
      expect(configFile(pod).yaml).toBe(f === FluentBitConfigFormat.YAML);
      if (cert) trust(pod, cert.certFile);
      const agent = startAgent(pod, bin);
      try {
        const lines = Array.from({ length: 20 }, (_x, i) => `${v.name} line ${i}`);
        await sleep(1000);
        appendLines(pod, 'app.log', lines);
        const got = () => (sink ? sink.received : stdoutRecords(agent.stdout()));
        await waitFor(() => got().length >= lines.length, 30_000);
        agent.child.kill('SIGTERM');
        await agent.exited;
        const records = got();
        expect({ problems: sink?.problems ?? [], lines: records.map(r => r.record.log) }).toEqual({ problems: [], lines });
        for (const r of records) {
          expectPodFields(r);
          v.check?.(r);
        }
      } finally {
        if (agent.child.exitCode === null) agent.child.kill('SIGKILL');
        await sink?.down();
        cleanup(pod);
      }
    });
  });

  test('TLS verifies the name: an IPv4 host against the certificate\'s IP address; a certificate without it gets nothing', async () => {
    const run = async (cert: NonNullable<ReturnType<typeof selfSignedCert>>) => {
      const sink = new Sink('http', { tls: cert });
      await sink.up();
      const pod = await fbPod({ agent: LogAgent.fluentBit(), output: () => LogOutput.http({ host: HOST, port: sink.port }) });
      trust(pod, cert.certFile);
      const agent = startAgent(pod, bin);
      await sleep(1000);
      appendLines(pod, 'app.log', ['tls 1', 'tls 2']);
      await waitFor(() => sink.received.length >= 2, 10_000);
      agent.child.kill('SIGTERM');
      await agent.exited;
      await sink.down();
      cleanup(pod);
      return sink.received.length;
    };
    expect(await run(certs.ip!)).toBe(2);
    expect(await run(certs.dns!)).toBe(0);
  });

  test.each(FORMATS)('%s: long lines: up to 1 MiB whole, a longer one cut, the next lines intact; multiline joins a stack trace', async (f) => {
    const sink = new Sink('http');
    await sink.up();
    const output = () => LogOutput.http({ host: HOST, port: sink.port, tls: false });
    const pod = await fbPod({ agent: LogAgent.fluentBit({ configFormat: f }), output });
    const agent = startAgent(pod, bin);
    try {
      await sleep(1000);
      const near = 'a'.repeat(1024 * 1024 - 2);
      const over = 'b'.repeat(3 * 1024 * 1024);
      appendLines(pod, 'app.log', ['before', near, over, 'after']);
      // Records of very different sizes go out in different chunks: they may arrive in any order.
      await waitFor(() => sink.lines().length >= 4, 30_000);
      await sleep(2000);
      const got = sink.lines();
      report(`long lines (${f}): lines of 6, ${near.length}, ${over.length} and 5 characters arrived as ${got.map(l => l.length).sort((a, b) => a - b).join(', ')}`);
      const cut = got.filter(l => l.length > 'before'.length && l !== near);
      expect({ before: got.includes('before'), near: got.includes(near), after: got.includes('after'), count: got.length })
        .toEqual({ before: true, near: true, after: true, count: 4 });
      // cut to Buffer_Max_Size - 1 bytes (plugins/in_tail/tail_file.c: eff_max = buf_max_size - 1)
      expect(cut.map(l => [/^b+$/.test(l), l.length])).toEqual([[true, 1024 * 1024 - 1]]);
    } finally {
      agent.child.kill('SIGTERM');
      await agent.exited;
      await sink.down();
      cleanup(pod);
    }

    const sink2 = new Sink('http');
    await sink2.up();
    const pod2 = await fbPod({
      agent: LogAgent.fluentBit({ multilineParsers: MULTILINE, configFormat: f }),
      output: () => LogOutput.http({ host: HOST, port: sink2.port, tls: false }),
    });
    const agent2 = startAgent(pod2, bin);
    try {
      await sleep(1000);
      appendLines(pod2, 'app.log', [
        'starting',
        'Exception in thread "main" java.lang.IllegalStateException: boom',
        '\tat com.example.Shop.checkout(Shop.java:42)',
        '\tat com.example.Main.main(Main.java:7)',
        'done',
      ]);
      await waitFor(() => sink2.lines().includes('done'), 20_000);
      const got = sink2.lines();
      expect(got.length).toBe(3);
      // one record for the trace: its three lines (the parser keeps the newlines, the last one included)
      expect(got[1].replace(/\n$/, '').split('\n')).toHaveLength(3);
    } finally {
      agent2.child.kill('SIGTERM');
      await agent2.exited;
      await sink2.down();
      cleanup(pod2);
    }
  });

  test.each(['.*', '*'])("filePattern '%s': the agent never tails its own offsets DB or buffer", async (filePattern) => {
    const sink = new Sink('http');
    await sink.up();
    const pod = await fbPod({ agent: LogAgent.fluentBit(), output: () => LogOutput.http({ host: HOST, port: sink.port, tls: false }), filePattern });
    const agent = startAgent(pod, bin);
    try {
      await sleep(1000);
      appendLines(pod, '.hidden.log', ['one']);
      appendLines(pod, 'app.log', ['two']);
      await sleep(5000);
      const own = fs.readdirSync(path.join(pod.logDirectory, '.fluent-bit'));
      expect(own).toEqual(expect.arrayContaining(['offsets.db', 'storage']));
      expect(sink.lines().sort()).toEqual(filePattern === '.*' ? ['one'] : ['two']);
    } finally {
      agent.child.kill('SIGTERM');
      await agent.exited;
      await sink.down();
      cleanup(pod);
    }
  });

  const write = writeLines;

  const missingOf = (sink: Sink, want: string[]) => {
    const got = new Set(sink.lines());
    return want.filter(l => !got.has(l));
  };

  const missing = (sink: Sink, n: number) => {
    const got = new Set(sink.lines());
    return Array.from({ length: n }, (_x, i) => `line ${i}`).filter(l => !got.has(l));
  };

  test('a backend outage of 60 s while the app writes: 0 lines lost', async () => {
    const sink = new Sink('http');
    await sink.up();
    const pod = await fbPod({ agent: LogAgent.fluentBit(), output: () => LogOutput.http({ host: HOST, port: sink.port, tls: false }) });
    const agent = startAgent(pod, bin);
    try {
      await sleep(1000);
      let n = await write(pod, 0, 5);
      await sink.down();
      const downAt = n;
      n = await write(pod, n, 60);
      const upAt = n;
      await sink.up();
      n = await write(pod, n, 5);
      const t0 = Date.now();
      await waitFor(() => missing(sink, n).length === 0, 90_000);
      report(`outage 60 s: ${n} lines written (${upAt - downAt} during the outage), ${missing(sink, n).length} lost, ` +
        `${sink.lines().length - new Set(sink.lines()).size} duplicates, all in ${((Date.now() - t0) / 1000).toFixed(1)} s after the writes`);
      expect(missing(sink, n)).toEqual([]);
    } finally {
      agent.child.kill('SIGTERM');
      await agent.exited;
      await sink.down();
      cleanup(pod);
    }
  });

  test('the agent killed (SIGKILL) and restarted while the backend is down: 0 lines lost', async () => {
    const sink = new Sink('loki');
    await sink.up();
    const pod = await fbPod({ agent: LogAgent.fluentBit(), output: () => LogOutput.loki({ host: HOST, port: sink.port }) });
    let agent = startAgent(pod, bin);
    try {
      await sleep(1000);
      let n = await write(pod, 0, 3);
      await waitFor(() => missing(sink, n).length === 0, 10_000);
      await sink.down();
      n = await write(pod, n, 5);
      await sleep(3000);
      agent.child.kill('SIGKILL');
      await agent.exited;
      n = await write(pod, n, 3);
      agent = startAgent(pod, bin);
      await sleep(3000);
      await sink.up();
      const t0 = Date.now();
      await waitFor(() => missing(sink, n).length === 0, 90_000);
      report(`restart while down: ${n} lines written, ${missing(sink, n).length} lost, ` +
        `${sink.lines().length - new Set(sink.lines()).size} duplicates, all in ${((Date.now() - t0) / 1000).toFixed(1)} s after the backend was back`);
      expect(missing(sink, n)).toEqual([]);
    } finally {
      agent.child.kill('SIGTERM');
      await agent.exited;
      await sink.down();
      cleanup(pod);
    }
  });

  /**
   * Liveness (issue 28), probed as the kubelet does (test/util/kubelet-prober.ts: a GET every
   * periodSeconds with the probe's timeout, a restart after failureThreshold failures in a row),
   * with the manifest's livenessProbe, while the app writes 10 lines a second:
   * - the backend down (connection refused) for 60 s;
   * - the backend up but refusing every request with 403 (expired credentials) for 80 s: the
   *   http output's flushes fail for good (FLB_ERROR, plugins/out_http/http.c v5.1.1), so
   *   /api/v1/health, the endpoint the library did NOT pick, answers 500 and the same probe on it
   *   would have restarted the agent;
   * - the agent stopped (SIGSTOP): the liveness endpoint no longer answers, and the kubelet
   *   restarts it.
   */
  test('liveness: the probe passes through a 60 s outage and a refusing backend (where /api/v1/health fails); a stopped agent is restarted', async () => {
    const sink = new Sink('http');
    await sink.up();
    const pod = await fbPod({ agent: LogAgent.fluentBit(), output: () => LogOutput.http({ host: HOST, port: sink.port, tls: false }) });
    const probe = pod.container.livenessProbe;
    expect(probe.httpGet.path).toBe('/api/v1/uptime');
    const port = Number(/^ +HTTP_Port +(\d+)$/m.exec(fs.readFileSync(path.join(pod.configDirectory, 'fluent-bit.conf'), 'utf8'))![1]);
    const url = (p: string) => `http://127.0.0.1:${port}${p}`;
    const agent = startAgent(pod, bin);
    const summary = (r: LivenessRun) => `${r.probes.filter(p => p.ok).length}/${r.probes.length} probes passed` +
      (r.restartAfter === undefined ? ', no restart' : `, restarted after ${r.restartAfter.toFixed(1)} s`);
    try {
      expect(await waitForAsync(async () => (await httpGetProbe(url(pod.container.startupProbe.httpGet.path), 1)).ok, 30_000)).toBe(true);
      let n = await write(pod, 0, 3);
      await sink.down();
      let written = n;
      const [down, downHealth] = await Promise.all([
        watchLiveness(url(probe.httpGet.path), probe, 60),
        watchLiveness(url('/api/v1/health'), probe, 60),
        write(pod, n, 60).then(x => { written = x; }),
      ]);
      n = written;
      report(`liveness, backend down 60 s: /api/v1/uptime ${summary(down)}; /api/v1/health ${summary(downHealth)}`);
      sink.rejectWith = 403;
      await sink.up();
      const [refused, refusedHealth] = await Promise.all([
        watchLiveness(url(probe.httpGet.path), probe, 80),
        watchLiveness(url('/api/v1/health'), probe, 80),
        write(pod, n, 80).then(x => { written = x; }),
      ]);
      report(`liveness, backend refusing (403) 80 s: /api/v1/uptime ${summary(refused)}; /api/v1/health ${summary(refusedHealth)}`);
      sink.rejectWith = undefined;
      agent.child.kill('SIGSTOP');
      const hung = await watchLiveness(url(probe.httpGet.path), probe, 120);
      agent.child.kill('SIGCONT');
      report(`liveness, agent stopped (SIGSTOP): ${summary(hung)} (period ${probe.periodSeconds} s, timeout ${probe.timeoutSeconds} s, threshold ${probe.failureThreshold})`);
      expect({ down: down.restartAfter, refused: refused.restartAfter }).toEqual({ down: undefined, refused: undefined });
      expect([...down.probes, ...refused.probes].filter(p => !p.ok)).toEqual([]);
      // the endpoint the library did not pick would have restarted a healthy agent
      expect(refusedHealth.restartAfter).toBeDefined();
      expect(refusedHealth.probes.some(p => p.status === 500)).toBe(true);
      expect(hung.restartAfter).toBeDefined();
      expect(hung.restartAfter!).toBeLessThanOrEqual(90);
    } finally {
      agent.child.kill('SIGCONT');
      agent.child.kill('SIGKILL');
      await agent.exited;
      await sink.down();
      cleanup(pod);
    }
  }, 400_000);

  /**
   * One pod termination on the kubelet's timeline: the app logs every 50 ms, for 2 s before the
   * pod's deletion and until it exits, 3 s after its SIGTERM; the agent gets SIGTERM and SIGKILL at
   * its times. Returns the lines lost.
   */
  async function terminationRun(pod: LogPod, sink: Sink, agentStart: () => ReturnType<typeof startAgent>, baseline: boolean) {
    const app = pod.podSpec.containers.find((c: any) => c.name !== 'log-agent').name;
    const sim = simulateTermination({
      spec: baseline ? { ...pod.podSpec, initContainers: [], containers: pod.podSpec.containers.map((c: any) => ({ name: c.name })) } : pod.podSpec,
      minor: pod.minor,
      behaviour: name => ({ exitAfterSigterm: name === app ? 3 : 60 }),
    });
    const a = sim.containers.get(app)!;
    const ag = baseline ? { sigterm: 0, deadline: sim.grace } : sim.containers.get('log-agent')!;
    const agent = agentStart();
    await sleep(1500);
    // 2 s of normal logging, then the pod's deletion (t0)
    let n = 0;
    for (const end = Date.now() + 2000; Date.now() < end;) {
      appendLines(pod, 'app.log', [`line ${n++}`]);
      await sleep(50);
    }
    const t0 = Date.now();
    const sigterm = setTimeout(() => agent.child.kill('SIGTERM'), ag.sigterm * 1000);
    const kill = setTimeout(() => agent.child.kill('SIGKILL'), ag.deadline * 1000);
    while (Date.now() - t0 < (a.sigterm + 3) * 1000) {
      appendLines(pod, 'app.log', [`line ${n++}`]);
      await sleep(50);
    }
    const exit = await agent.exited;
    clearTimeout(sigterm);
    clearTimeout(kill);
    await sleep(500);
    return { written: n, lost: missing(sink, n).length, agentSigterm: ag.sigterm, stopped: (exit.at - t0) / 1000 - ag.sigterm, killed: exit.signal === 'SIGKILL' };
  }

  test.each(['1.27', '1.29'])('shutdown, Kubernetes %s: every line the app writes until its exit is shipped (3 runs)', async (kubernetesVersion) => {
    for (let run = 0; run < 3; run++) {
      const sink = new Sink('http');
      await sink.up();
      const pod = await fbPod({
        agent: LogAgent.fluentBit(),
        output: () => LogOutput.http({ host: HOST, port: sink.port, tls: false }),
        kubernetesVersion,
        appShutdownTime: Duration.seconds(3),
      });
      try {
        const r = await terminationRun(pod, sink, () => startAgent(pod, bin), false);
        report(`shutdown ${kubernetesVersion} run ${run + 1}: SIGTERM at ${r.agentSigterm}s, stopped ${r.stopped.toFixed(1)}s later` +
          `${r.killed ? ' (killed)' : ''}, ${r.lost} of ${r.written} lines lost`);
        expect({ lost: r.lost, killed: r.killed }).toEqual({ lost: 0, killed: false });
      } finally {
        await sink.down();
        cleanup(pod);
      }
    }
  });

  test('baseline: a hand-written legacy sidecar (SIGTERM with the app, memory buffer, default Grace) loses the shutdown lines', async () => {
    let lostRuns = 0;
    for (let run = 0; run < 3; run++) {
      const sink = new Sink('http');
      await sink.up();
      const pod = synthLogPod({ agent: LogAgent.fluentBit(), output: () => LogOutput.http({ host: HOST, port: sink.port, tls: false }), kubernetesVersion: '1.27' });
      // A careful sidecar written by hand: tail (from the head, scanning every second) + http, memory
      // buffering, the default Grace, no preStop and no ordering: SIGTERM comes with the app's.
      fs.writeFileSync(path.join(pod.configDirectory, 'fluent-bit.conf'), [
        '[SERVICE]', '    Flush 1', '    Log_Level info',
        '[INPUT]', '    Name tail', `    Path ${pod.logDirectory}/*.log`, `    DB ${pod.logDirectory}/offsets.db`, '    Read_from_Head true',
        '    Refresh_Interval 1',
        '[OUTPUT]', '    Name http', '    Match *', `    Host ${HOST}`, `    Port ${sink.port}`, '    Format json_lines', '',
      ].join('\n'));
      try {
        const r = await terminationRun(pod, sink, () => startAgent(pod, bin), true);
        report(`baseline run ${run + 1}: SIGTERM at 0s with the app, ${r.lost} of ${r.written} lines lost (the app logs 3 s after it)`);
        if (r.lost > 0) lostRuns++;
      } finally {
        await sink.down();
        cleanup(pod);
      }
    }
    expect(lostRuns).toBeGreaterThan(0);
  });

  /**
   * A Job at 1.27 (issue 27): the log agent runs under the library's exit-with-app wrapper. Here the
   * wrapper is the Job's own container command, run with the local busybox over a fake /proc of
   * the pod (the app's process an entry that is removed when the app exits), the real Fluent Bit as
   * its child with the container's own args: every line the app writes until its exit is shipped,
   * and the wrapper exits 0 by itself.
   */
  test('a Job at 1.27: the real Fluent Bit under the exit-with-app wrapper ships every line and the wrapper exits 0 after the app (3 runs)', async () => {
    const busybox = ['/usr/bin/busybox', '/bin/busybox'].find(p => fs.existsSync(p));
    if (!busybox) throw new Error('busybox not found (Debian: apt-get install busybox)');
    for (let run = 0; run < 3; run++) {
      const sink = new Sink('http');
      await sink.up();
      const output = () => LogOutput.http({ host: HOST, port: sink.port, tls: false });
      const pod = await fbPod({ agent: LogAgent.fluentBit(), output, kubernetesVersion: '1.27' });
      // the Job's log-agent container, as the library writes it
      const chart = new Chart(new App(), 'job');
      const job = new kplus.Job(chart, 'report', { containers: [{ image: 'ghcr.io/example/report:1.0.0', securityContext: { user: 1000 } }] });
      new WithLogAgent(chart, 'logs', { workload: job, kubernetesVersion: '1.27', output: output(), logDirectory: pod.logDirectory });
      const jobSpec = Testing.synth(chart).find((m: any) => m.kind === 'Job').spec.template.spec;
      const wrapped = jobSpec.containers.find((c: any) => c.name === 'log-agent');
      expect(wrapped.command.slice(5)).toEqual([...pod.container.command, ...pod.container.args]);
      const proc = fs.mkdtempSync(path.join(os.tmpdir(), 'cdk8s-agents-proc-'));
      // (run as root, the agent runs as the container's user: it must read the fake /proc)
      fs.chmodSync(proc, 0o755);
      const entry = (pid: string, argv: string[], cgroup: string) => {
        fs.mkdirSync(path.join(proc, pid));
        fs.writeFileSync(path.join(proc, pid, 'cmdline'), argv.map(a => `${a}\0`).join(''));
        fs.writeFileSync(path.join(proc, pid, 'cgroup'), `0::${cgroup}\n`);
      };
      entry('1', ['/pause'], '/../pause.scope');
      entry('self', ['sh'], '/');
      entry('20', ['/report'], '/../app.scope');
      // the wrapper waits for the agent's HTTP server (its uptime endpoint) before the read delay: on
      // the port the run's copy listens on (localize), not the pod's
      const port = /^ +HTTP_Port +(\d+)$/m.exec(fs.readFileSync(configFile(pod).file, 'utf8'))?.[1];
      expect(String(wrapped.command[3])).toContain("'http://127.0.0.1:2020/api/v1/uptime'");
      const script = String(wrapped.command[3]).replace(/^P=\/proc;/, `P=${proc};`).split('/sidecar-tools/busybox').join(busybox)
        .split('http://127.0.0.1:2020/').join(`http://127.0.0.1:${port}/`)
        // Debian's busybox is built without wget's -T (its `wget -T 1` crashes: scripts/cluster/build-busybox.sh); the tools' image has it
        .split(' wget -q -T 1 ').join(' wget -q ');
      expect(script).toContain(` wget -q -O /dev/null 'http://127.0.0.1:${port}/api/v1/uptime'`);
      const agent = startAgent({ ...pod, container: { ...pod.container, args: ['sh', '-c', script, 'sh', reachable(pod, bin), ...pod.container.args] } }, busybox);
      try {
        await sleep(1500);
        let n = 0;
        for (const end = Date.now() + 3000; Date.now() < end;) {
          appendLines(pod, 'app.log', [`line ${n++}`]);
          await sleep(50);
        }
        // the app exits
        const appExit = Date.now();
        fs.rmSync(path.join(proc, '20'), { recursive: true });
        const exit = await Promise.race([agent.exited, sleep(60_000).then(() => undefined)]);
        const lost = missing(sink, n).length;
        if (exit?.code !== 0 || lost > 0) report(agent.output().slice(-3000));
        report(`Job 1.27 under the wrapper, run ${run + 1}: wrapper exit ${exit?.code ?? 'none in 60 s'} ` +
          `${exit ? ((exit.at - appExit) / 1000).toFixed(1) : '-'}s after the app, ${lost} of ${n} lines lost`);
        expect({ code: exit?.code, lost }).toEqual({ code: 0, lost: 0 });
        // the read delay (2 s) before the agent's SIGTERM, and within its budgeted stop (6 s stdout, 21 s http) after it
        expect(exit!.at - appExit).toBeGreaterThanOrEqual(2000);
        expect(exit!.at - appExit).toBeLessThan((1 + 2 + 21) * 1000);
      } finally {
        agent.child.kill('SIGKILL');
        await sink.down();
        cleanup(pod);
        fs.rmSync(proc, { recursive: true, force: true });
      }
    }
  }, 240_000);
  /**
   * The native last file (Kubernetes 1.29+, issue 51): the app creates a new file in its last
   * second (the capture's first file, the next after a rotation) and exits; the kubelet sends the
   * native sidecar SIGTERM ~1 s later. Fluent Bit pauses its inputs at SIGTERM and finds a new file
   * only at its next 1 s scan, so SIGTERM straight to it (0.3 s after the file) can lose the file;
   * through the library's SIGTERM hold (2 s, the manifest's own script) it reads every line.
   */
  test('native: a file created just before the app\'s exit is shipped through the SIGTERM hold (3 runs; without the hold, measured)', async () => {
    const busybox = ['/usr/bin/busybox', '/bin/busybox'].find(p => fs.existsSync(p));
    if (!busybox) throw new Error('busybox not found (Debian: apt-get install busybox)');
    const run = async (held: boolean) => {
      const sink = new Sink('http');
      await sink.up();
      const output = () => LogOutput.http({ host: HOST, port: sink.port, tls: false });
      const synthesized = synthLogPod({ agent: LogAgent.fluentBit(), output, kubernetesVersion: '1.29' });
      const hold = sigtermHoldOf(synthesized.container);
      const script = String(synthesized.container.command[3]).split('/sidecar-tools/busybox').join(busybox);
      cleanup(synthesized);
      const pod = await fbPod({ agent: LogAgent.fluentBit(), output, kubernetesVersion: '1.29' });
      const agent = held
        ? startAgent({ ...pod, container: { ...pod.container, args: ['sh', '-c', script, 'sh', reachable(pod, bin), ...pod.container.args] } }, busybox)
        : startAgent(pod, bin);
      const n = 500;
      try {
        appendLines(pod, 'first.log', ['first']);
        await waitFor(() => missingOf(sink, ['first']).length === 0, 30_000);
        // the app's last second: a new file, its lines, the app's exit; SIGTERM 0.3 s later
        appendLines(pod, 'last.log', Array.from({ length: n }, (_, i) => `last ${i}`));
        const exitAt = Date.now();
        await sleep(300);
        agent.child.kill('SIGTERM');
        const exit = await agent.exited;
        await sleep(300);
        const lost = missingOf(sink, Array.from({ length: n }, (_, i) => `last ${i}`)).length;
        return { hold, lost, stoppedAfter: (exit.at - exitAt) / 1000, code: exit.code, output: agent.output() };
      } finally {
        if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
        await sink.down();
        cleanup(pod);
      }
    };
    const held: Array<Awaited<ReturnType<typeof run>>> = [];
    const bare: Array<Awaited<ReturnType<typeof run>>> = [];
    for (let i = 0; i < 3; i++) {
      held.push(await run(true));
      bare.push(await run(false));
    }
    const line = (rs: typeof held) => rs.map(r => `${r.lost} of 500 lost (exit ${r.stoppedAfter.toFixed(1)} s after the file)`).join(', ');
    report(`native new last file through the ${held[0].hold} s hold: ${line(held)}`);
    report(`native new last file, SIGTERM straight to Fluent Bit 0.3 s after it: ${line(bare)}`);
    expect(held[0].hold).toBe(2);
    for (const r of held) {
      if (r.lost > 0) report(r.output.slice(-3000));
      expect({ lost: r.lost, code: r.code }).toEqual({ lost: 0, code: 0 });
      // the hold, then the stop: within the budget the library gives it (2 s hold + 21 s http + 1 s)
      expect(r.stoppedAfter).toBeLessThan(2 + 21 + 1);
    }
  }, 600_000);
}
