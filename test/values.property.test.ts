/**
 * Hostile values through every string prop of the constructs and factories (issue 24): C0 and C1
 * controls, U+2028/2029, lone surrogates, a BOM, Go-integer-like strings (`0o17`, `0x1F`,
 * `1_000`, `-0b1`), YAML indicators, shell metacharacters, `$(`, `${`, `#{`, `@INCLUDE`, newlines.
 * For every value, either
 * - it is refused with an Error (never a TypeError or URIError) whose message names the construct
 *   path (or the factory), or
 * - the synthesized YAML (`App.synthYaml()`, what `cdk8s synth` writes), read back by the API
 *   server's own reader (test/go-yaml-reader), equals the JS objects (`toJson()`), and the agent's
 *   config, read from that API-server-read ConfigMap with the agent's grammar
 *   (test/util/fluent-bit-conf.ts, fluentd-conf.ts; a YAML 1.2 reader for Vector), holds the value.
 * The YAML of all cases goes to the reader in one call. FC_NUM_RUNS sets the runs per prop,
 * FC_SEED replays.
 */
import { isDeepStrictEqual } from 'util';
import { App, Chart, Testing } from 'cdk8s';
import * as fc from 'fast-check';
import * as YAML from 'yaml';
import { NativeSidecarGuard } from '../src/guard';
import { LogAgent } from '../src/log-agent';
import { LogOutput } from '../src/log-output';
import { WithEnvoy } from '../src/with-envoy';
import { WithLogAgent } from '../src/with-log-agent';
import { SidecarCheck, SidecarQuit, SidecarVolume, WithSidecar } from '../src/with-sidecar';
import { WithTracer } from '../src/with-tracer';
import { describeOracle, readStreamsAsApiServer } from './util/api-server-yaml';
import { isLibraryError } from './util/catalogue';
import { kplusWorkload } from './util/fixtures';
import { fluentBitLokiLabels, parseFluentBitConf } from './util/fluent-bit-conf';
import { fluentValue, parseFluentConf } from './util/fluentd-conf';

const RUNS = process.env.FC_NUM_RUNS ? Number(process.env.FC_NUM_RUNS) : 20;
const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;

const PIECES = [
  // C0, DEL, C1 (NEL among them), line and paragraph separators, lone surrogates, BOM, noncharacters
  '\u0000', '\u0001', '\u0007', '\u0009', '\u000b', '\u000d', '\u001b', '\u007f', '\u0080', '\u0085', '\u009f', '\u00a0',
  '\u2028', '\u2029', '\ud800', '\udfff', '\ufeff', '\ufffe', '\u{1F600}',
  // YAML indicators and words
  ':', ': ', '-', '- ', '?', '#', ' #', '&', '*', '!', '|', '>', "'", '"', '%', '@', '`', '{', '}', '[', ']', ',', '~', 'on', 'null', '---',
  // shell and templates
  ';', '&&', '$', '$(', '${', '#{', '{{', '\\', '@INCLUDE ', '@SET ', '\n', ' ',
  // letters and digits of names
  'a', 'z', '0', '1', '7', 'o', 'x', 'b', 'e', '_', '.',
];
/** Go's integer (and float) grammar, which yaml.v2 applies to plain scalars. */
const goNumberish = fc.tuple(
  fc.constantFrom('', '', '-', '+'),
  fc.constantFrom('0o', '0O', '0b', '0B', '0x', '0X', '0', '', '_'),
  fc.array(fc.constantFrom('0', '1', '7', 'f', 'F', '_', 'e3', '.5'), { minLength: 1, maxLength: 4 }),
).map(([s, p, d]) => s + p + d.join(''));
const hostile: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: goNumberish, weight: 2 },
  { arbitrary: fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 6 }).map(a => a.join('')), weight: 4 },
  { arbitrary: fc.array(fc.constantFrom(...PIECES), { maxLength: 3 }).map(a => `a${a.join('')}b`), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 6 }), weight: 1 },
);

const IMAGE = 'ghcr.io/example/proxy:1.0.0';
const ENDPOINT = 'otel-gateway.observability.svc:4317';
const SECRET = { secret: { name: 'creds' }, key: 'token' };

/** Where a value was put, and what names the owner in a refusal. */
interface Slot {
  readonly name: string;
  /** Substrings one of which a refusal must contain (the construct path, or the factory). */
  readonly who: string | string[];
  readonly build: (chart: Chart, value: string) => void;
  /** The value as the agent reads it from its (API-server-read) config, when the slot reaches one. */
  readonly agentRead?: (files: Record<string, string>) => string | undefined;
}

const wl = (c: Chart) => kplusWorkload(c, 'Deployment');
const V = '1.29';
const sidecar = (extra: (v: string) => object) => (c: Chart, v: string) =>
  new WithSidecar(c, 'proxy', { workload: wl(c), kubernetesVersion: V, image: IMAGE, ...extra(v) });

const lokiLabelRead: Record<string, (files: Record<string, string>) => string | undefined> = {
  fluentBit: f => fluentBitLokiLabels(parseFluentBitConf(f['fluent-bit.conf']).find(s => s.name === 'OUTPUT')!.props.labels[0]).job,
  vector: f => YAML.parse(f['vector.yaml']).sinks.output.labels.job.replace(/\$\$/g, '$'),
  fluentd: f => {
    const match = parseFluentConf(f['fluent.conf']).find(d => d.name === 'match')!;
    return JSON.parse(fluentValue(match.params.extra_labels)).job;
  },
};

const fluentBitOutput = (f: Record<string, string>, key: string) =>
  parseFluentBitConf(f['fluent-bit.conf']).find(s => s.name === 'OUTPUT')!.props[key][0];
const vectorSink = (f: Record<string, string>) => YAML.parse(f['vector.yaml']).sinks.output;
const fluentdMatch = (f: Record<string, string>, key: string) =>
  fluentValue(parseFluentConf(f['fluent.conf']).find(d => d.name === 'match')!.params[key]);
const unVector = (s: string) => s.replace(/\$\$/g, '$');

const tenantRead: Record<string, (files: Record<string, string>) => string | undefined> = {
  fluentBit: f => fluentBitOutput(f, 'tenant_id'),
  vector: f => unVector(vectorSink(f).tenant_id),
  fluentd: f => fluentdMatch(f, 'tenant'),
};
const indexRead: Record<string, (files: Record<string, string>) => string | undefined> = {
  fluentBit: f => fluentBitOutput(f, 'index'),
  vector: f => unVector(vectorSink(f).bulk.index),
  fluentd: f => fluentdMatch(f, 'index_name'),
};

const SLOTS: Slot[] = [
  { name: 'WithSidecar image', who: 'test/proxy', build: sidecar(v => ({ image: v })) },
  { name: 'WithSidecar containerName', who: 'test/proxy', build: sidecar(v => ({ containerName: v })) },
  { name: 'WithSidecar env value', who: 'test/proxy', build: sidecar(v => ({ env: { MODE: v } })) },
  { name: 'WithSidecar env name', who: 'test/proxy', build: sidecar(v => ({ env: { [v]: 'x' } })) },
  { name: 'WithSidecar appEnv value', who: 'test/proxy', build: sidecar(v => ({ appEnv: { PROXY: v } })) },
  { name: 'WithSidecar args', who: 'test/proxy', build: sidecar(v => ({ args: ['--x', v] })) },
  { name: 'WithSidecar command', who: 'test/proxy', build: sidecar(v => ({ command: [v] })) },
  { name: 'WithSidecar configFiles key', who: 'test/proxy', build: sidecar(v => ({ configFiles: { [v]: 'x' } })) },
  { name: 'WithSidecar configFiles content', who: 'test/proxy', build: sidecar(v => ({ configFiles: { 'a.conf': v } })) },
  { name: 'WithSidecar port name', who: 'test/proxy', build: sidecar(v => ({ ports: [{ number: 9090, name: v }] })) },
  { name: 'WithSidecar secretEnv Secret key', who: 'test/proxy', build: sidecar(v => ({ secretEnv: { TOKEN: { secret: { name: 'creds' }, key: v } } })) },
  { name: 'SidecarCheck.exec command', who: 'SidecarCheck.exec()', build: sidecar(v => ({ startupCheck: SidecarCheck.exec(['/bin/check', v]) })) },
  { name: 'SidecarCheck.http path', who: 'SidecarCheck.http()', build: sidecar(v => ({ startupCheck: SidecarCheck.http(9090, { path: `/${v}` }) })) },
  { name: 'SidecarQuit.http path', who: 'SidecarQuit.http()', build: (c, v) => new WithSidecar(c, 'proxy', { workload: kplusWorkload(c, 'Job'), kubernetesVersion: V, image: IMAGE, jobQuit: SidecarQuit.http(9091, `/${v}`) }) },
  { name: 'WithSidecar secretEnv Secret name', who: 'test/proxy', build: sidecar(v => ({ secretEnv: { TOKEN: { secret: { name: v }, key: 'token' } } })) },
  { name: 'WithSidecar configDirectory', who: 'test/proxy', build: sidecar(v => ({ configDirectory: `/etc/${v}`, configFiles: { 'a.conf': 'x' } })) },
  { name: 'SidecarVolume mountPath', who: 'SidecarVolume', build: sidecar(v => ({ volumes: [SidecarVolume.emptyDir('data', `/data/${v}`)] })) },
  { name: 'SidecarVolume appMountPath', who: 'SidecarVolume', build: sidecar(v => ({ volumes: [SidecarVolume.emptyDir('data', '/data', { appMountPath: `/app/${v}` })] })) },
  { name: 'SidecarVolume configMap name', who: 'SidecarVolume', build: sidecar(v => ({ volumes: [SidecarVolume.configMap('cfg', v, '/cfg')] })) },
  { name: 'SidecarVolume name', who: 'SidecarVolume', build: sidecar(v => ({ volumes: [SidecarVolume.emptyDir(v, '/data')] })) },
  { name: 'SidecarVolume Secret name', who: 'SidecarVolume', build: sidecar(v => ({ volumes: [SidecarVolume.secret('creds', { name: v }, '/creds')] })) },
  { name: 'WithTracer serviceName', who: 'test/tracer', build: (c, v) => new WithTracer(c, 'tracer', { workload: wl(c), kubernetesVersion: V, exporterEndpoint: ENDPOINT, serviceName: v }) },
  { name: 'WithTracer resourceAttributes value', who: 'test/tracer', build: (c, v) => new WithTracer(c, 'tracer', { workload: wl(c), kubernetesVersion: V, exporterEndpoint: ENDPOINT, resourceAttributes: { team: v } }) },
  {
    name: 'WithTracer exporterEndpoint',
    who: 'test/tracer',
    build: (c, v) => new WithTracer(c, 'tracer', { workload: wl(c), kubernetesVersion: V, exporterEndpoint: v }),
    agentRead: f => YAML.parse(f['config.yaml']).exporters['otlp_grpc/traces'].endpoint,
  },
  { name: 'WithTracer exporterHeaders name', who: 'test/tracer', build: (c, v) => new WithTracer(c, 'tracer', { workload: wl(c), kubernetesVersion: V, exporterEndpoint: ENDPOINT, exporterHeaders: { [v]: SECRET } }) },
  { name: 'WithEnvoy upstream name', who: 'test/envoy', build: (c, v) => new WithEnvoy(c, 'envoy', { workload: wl(c), kubernetesVersion: V, appPort: 8080, upstreams: [{ name: v, localPort: 9100, host: 'payments.shop' }] }) },
  { name: 'WithTracer exporterHeaders key', who: 'test/tracer', build: (c, v) => new WithTracer(c, 'tracer', { workload: wl(c), kubernetesVersion: V, exporterEndpoint: ENDPOINT, exporterHeaders: { 'x-token': { secret: { name: 'creds' }, key: v } } }) },
  { name: 'WithEnvoy upstream host', who: 'test/envoy', build: (c, v) => new WithEnvoy(c, 'envoy', { workload: wl(c), kubernetesVersion: V, appPort: 8080, upstreams: [{ name: 'payments', localPort: 9100, host: v }] }) },
  { name: 'WithEnvoy tls clientCaSecret name', who: 'test/envoy', build: (c, v) => new WithEnvoy(c, 'envoy', { workload: wl(c), kubernetesVersion: V, appPort: 8080, tls: { secret: { name: 'web-tls' }, clientCaSecret: { name: v } } }) },
  { name: 'WithEnvoy containerName', who: 'test/envoy', build: (c, v) => new WithEnvoy(c, 'envoy', { workload: wl(c), kubernetesVersion: V, appPort: 8080, containerName: v }) },
  { name: 'WithTracer containerName', who: 'test/tracer', build: (c, v) => new WithTracer(c, 'tracer', { workload: wl(c), kubernetesVersion: V, exporterEndpoint: ENDPOINT, containerName: v }) },
  { name: 'WithEnvoy tls secret name', who: 'test/envoy', build: (c, v) => new WithEnvoy(c, 'envoy', { workload: wl(c), kubernetesVersion: V, appPort: 8080, tls: { secret: { name: v } } }) },
  { name: 'NativeSidecarGuard name', who: 'test/guard', build: (c, v) => new NativeSidecarGuard(c, 'guard', { namespaces: ['shop'], name: v, kubernetesVersion: '1.30' }) },
  { name: 'NativeSidecarGuard namespaces', who: 'test/guard', build: (c, v) => new NativeSidecarGuard(c, 'guard', { namespaces: [v], kubernetesVersion: '1.30' }) },
  ...(['fluentBit', 'vector', 'fluentd'] as const).flatMap((agent): Slot[] => {
    // the default Fluentd image has no Loki or Elasticsearch plugin (a refusal of its own)
    const image = agent === 'fluentd' ? { image: 'ghcr.io/example/fluentd-plugins:1.19.3' } : {};
    const a = () => LogAgent[agent](image);
    return [
      {
        name: `${agent} Loki label value`,
        // the factory's grammar, or the construct's for the agent it meets (Vector: no '$')
        who: ['LogOutput.loki()', 'test/logs'],
        build: (c, v) => new WithLogAgent(c, 'logs', { workload: wl(c), kubernetesVersion: V, agent: a(), output: LogOutput.loki({ host: 'loki', labels: { job: v } }) }),
        agentRead: lokiLabelRead[agent],
      },
      { name: `${agent} Loki tenantId`, who: ['LogOutput.loki()', 'test/logs'], build: (c, v) => new WithLogAgent(c, 'logs', { workload: wl(c), kubernetesVersion: V, agent: a(), output: LogOutput.loki({ host: 'loki', tenantId: v }) }), agentRead: tenantRead[agent] },
      { name: `${agent} index`, who: ['LogOutput.elasticsearch()', 'test/logs'], build: (c, v) => new WithLogAgent(c, 'logs', { workload: wl(c), kubernetesVersion: V, agent: a(), output: LogOutput.elasticsearch({ host: 'es', index: v }) }), agentRead: indexRead[agent] },
      { name: `${agent} basicAuth key`, who: 'LogOutput.http()', build: (c, v) => new WithLogAgent(c, 'logs', { workload: wl(c), kubernetesVersion: V, agent: LogAgent[agent](), output: LogOutput.http({ host: 'logs', basicAuth: { username: { secret: { name: 'creds' }, key: v }, password: SECRET } }) }) },
      { name: `${agent} basicAuth Secret name`, who: 'LogOutput.http()', build: (c, v) => new WithLogAgent(c, 'logs', { workload: wl(c), kubernetesVersion: V, agent: LogAgent[agent](), output: LogOutput.http({ host: 'logs', basicAuth: { username: { secret: { name: v }, key: 'user' }, password: SECRET } }) }) },
      { name: `${agent} secretHeaders name`, who: ['LogOutput.http()', 'test/logs'], build: (c, v) => new WithLogAgent(c, 'logs', { workload: wl(c), kubernetesVersion: V, agent: LogAgent[agent](), output: LogOutput.http({ host: 'logs', secretHeaders: { [v]: SECRET } }) }) },
      { name: `${agent} http uri`, who: ['LogOutput.http()', 'test/logs'], build: (c, v) => new WithLogAgent(c, 'logs', { workload: wl(c), kubernetesVersion: V, agent: LogAgent[agent](), output: LogOutput.http({ host: 'logs', uri: `/${v}` }) }) },
      { name: `${agent} host`, who: ['LogOutput.http()', 'test/logs'], build: (c, v) => new WithLogAgent(c, 'logs', { workload: wl(c), kubernetesVersion: V, agent: LogAgent[agent](), output: LogOutput.http({ host: v }) }) },
      { name: `${agent} containerName`, who: 'test/logs', build: (c, v) => new WithLogAgent(c, 'logs', { workload: wl(c), kubernetesVersion: V, agent: LogAgent[agent](), containerName: v }) },
      { name: `${agent} logDirectory`, who: 'test/logs', build: (c, v) => new WithLogAgent(c, 'logs', { workload: wl(c), kubernetesVersion: V, agent: LogAgent[agent](), logDirectory: `/var/log/${v}` }) },
      { name: `${agent} filePattern`, who: 'test/logs', build: (c, v) => new WithLogAgent(c, 'logs', { workload: wl(c), kubernetesVersion: V, agent: LogAgent[agent](), filePattern: v }) },
    ];
  }),
];

/** A case that was accepted: its YAML and objects, to be read back with all the others. */
interface Accepted {
  readonly slot: Slot;
  readonly value: string;
  readonly yaml: string;
  readonly objects: unknown[];
}

describeOracle('every string prop: refused with the owner named, or read back intact by the API server and the agent', () => {
  test(`${SLOTS.length} props x ${RUNS} hostile values`, () => {
    const accepted: Accepted[] = [];
    const refusedBadly: string[] = [];
    let refused = 0;
    for (const slot of SLOTS) {
      fc.assert(fc.property(hostile, value => {
        const app: App = Testing.app();
        const chart = new Chart(app, 'test');
        try {
          slot.build(chart, value);
          const yaml = app.synthYaml();
          accepted.push({ slot, value, yaml, objects: JSON.parse(JSON.stringify(chart.toJson())) });
        } catch (e) {
          const err = e as Error;
          if (!isLibraryError(err) || ![slot.who].flat().some(w => err.message.includes(w))) {
            refusedBadly.push(`${slot.name} ${JSON.stringify(value)}: ${err.constructor.name}: ${err.message.slice(0, 300)}`);
          }
          refused++;
        }
      }), { numRuns: RUNS, seed: SEED });
    }
    const read = readStreamsAsApiServer(accepted.map(a => a.yaml));
    const wrong: string[] = [];
    let agentChecked = 0;
    accepted.forEach((a, i) => {
      const docs = read[i];
      const where = `${a.slot.name} ${JSON.stringify(a.value)}`;
      const error = docs.find(d => d.error !== undefined);
      if (error) { wrong.push(`${where}: the API server cannot read the manifest: ${error.error}`); return; }
      if (!isDeepStrictEqual(docs.map(d => d.ok), a.objects)) { // (Go's JSON has its keys sorted)
        wrong.push(`${where}: the API server reads another manifest than toJson() gives`);
        return;
      }
      if (a.slot.agentRead) {
        const files: Record<string, string> = {};
        for (const d of docs as Array<{ ok: any }>) if (d.ok?.kind === 'ConfigMap') Object.assign(files, d.ok.data);
        let got: string | undefined;
        try { got = a.slot.agentRead(files); } catch (e) { wrong.push(`${where}: the agent cannot read its config: ${(e as Error).message}`); return; }
        if (got !== a.value) wrong.push(`${where}: the agent reads ${JSON.stringify(got)}`);
        agentChecked++;
      }
    });
    expect({ refusedBadly, wrong }).toEqual({ refusedBadly: [], wrong: [] });
    // both outcomes are reached
    expect(accepted.length).toBeGreaterThan(SLOTS.length);
    expect(refused).toBeGreaterThan(SLOTS.length);
    expect(agentChecked).toBeGreaterThan(SLOTS.length / 4);
  });
});
