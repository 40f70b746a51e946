/**
 * Values as the API server and the agents read them (issue 24, points 1 and 3): every expected
 * value here comes from the API server's own YAML reader (test/go-yaml-reader: sigs.k8s.io/yaml
 * over yaml.v2, see test/util/api-server-yaml.ts), from a YAML 1.2 / 1.1 reader for the agents'
 * YAML, or from the agents' grammars (test/util/fluent-bit-conf.ts), never from src/private/values.ts.
 */
import { ApiObject, App, Chart, Testing, Yaml } from 'cdk8s';
import * as fc from 'fast-check';
import * as YAML from 'yaml';
import { checkManifestData, cutTextCarried, manifestStringProblem } from '../src/bind/manifest-values';
import { NativeSidecarGuard } from '../src/guard';
import { LogAgent } from '../src/log-agent';
import { LogOutput } from '../src/log-output';
import { Where } from '../src/private/errors';
import { agentYaml, characterProblem, showValue } from '../src/private/values';
import { WithLogAgent } from '../src/with-log-agent';
import { SidecarVolume, WithSidecar } from '../src/with-sidecar';
import { WithTracer } from '../src/with-tracer';
import { describeOracle, readAsApiServer, readStreamsAsApiServer } from './util/api-server-yaml';
import { kplusWorkload } from './util/fixtures';
import { fluentBitLokiLabels, parseFluentBitConf } from './util/fluent-bit-conf';

const IMAGE = 'ghcr.io/example/proxy:1.0.0';
const ENDPOINT = 'otel-gateway.observability.svc:4317';

function chart(): { app: App; chart: Chart } {
  const app = Testing.app();
  return { app, chart: new Chart(app, 'test') };
}

/** The app's manifests as cdk8s writes them (`cdk8s synth`), read back by the API server's reader. */
function asTheClusterReadsIt(app: App): any[] {
  return readAsApiServer(app.synthYaml());
}

/** Every document of the app equals its JS object: what was accepted arrives intact. */
function expectIntact(app: App): any[] {
  const read = asTheClusterReadsIt(app);
  const objects = app.charts.flatMap(c => c.toJson());
  expect(read).toEqual(JSON.parse(JSON.stringify(objects)));
  return read;
}

const configMapText = (manifests: any[], file: string): string => {
  const cm = manifests.find(m => m?.kind === 'ConfigMap' && m.data?.[file] !== undefined);
  if (!cm) throw new Error(`no ConfigMap with ${file}`);
  return cm.data[file];
};

describeOracle('the API server reader, as observed (what src/private/values.ts rests on)', () => {
  test('cdk8s writes Go-integer strings unquoted and the API server reads numbers (if cdk8s starts quoting them, this fails: relax the rule)', () => {
    const values = ['0o17', '0O17', '0B1', '0X1F', '-0o7', '+0o17', '0O1_7', '-_1', '-_1e3'];
    const read = readAsApiServer(Yaml.stringify(...values.map(v => ({ v }))));
    expect(read.map((d: any) => d.v)).toEqual([15, 15, 1, 31, -7, 15, 15, -1, -1000]);
  });

  test('the characters refused in the manifest are exactly those the writer and the reader do not carry (BMP code points, three positions)', () => {
    const codePoints: number[] = [];
    for (let c = 0; c < 0x3000; c++) codePoints.push(c);
    for (let c = 0xd7f0; c < 0xe010; c++) codePoints.push(c);
    for (let c = 0xfe00; c <= 0xffff; c++) codePoints.push(c);
    const shapes = [(ch: string) => `a${ch}b`, (ch: string) => `a${ch}\nb\n`, (ch: string) => `${ch}`];
    const cases = codePoints.flatMap(c => shapes.map(shape => shape(String.fromCharCode(c))));
    // a key below the document's first line, as every user key of a manifest is (a BOM that
    // starts a document is dropped by the reader, but no manifest starts with a user's key)
    const streams = cases.flatMap(v => [Yaml.stringify({ v }), Yaml.stringify({ m: { [v]: 'x' } })]);
    const read = readStreamsAsApiServer(streams);
    const broken = new Set<number>();
    cases.forEach((v, i) => {
      const [value, key] = [read[2 * i][0], read[2 * i + 1][0]];
      const valueOk = value.error === undefined && (value.ok as any)?.v === v;
      const keyOk = key.error === undefined && Object.keys((key.ok as any).m)[0] === v;
      if (!valueOk || !keyOk) broken.add(codePoints[Math.floor(i / shapes.length)]);
    });
    // lone surrogates, U+0085, U+2028/9, DEL and C1, U+FFFE/F
    const refused = codePoints.filter(c => characterProblem(`a${String.fromCharCode(c)}b`) !== undefined);
    expect(refused).toEqual([...broken].sort((x, y) => x - y));
    expect(refused.length).toBeGreaterThan(2048);
  });

  test('an astral character (a surrogate pair) is carried', () => {
    expect(readAsApiServer(Yaml.stringify({ v: 'a\u{1F600}b', w: '\u{10FFFD}' }))).toEqual([{ v: 'a\u{1F600}b', w: '\u{10FFFD}' }]);
    expect(characterProblem('a\u{1F600}b')).toBeUndefined();
  });

  test('multi-line texts with tabs: refused wherever the API server cannot read the manifest (found by the property test: WithSidecar appEnv "\\t\\n;")', () => {
    const heads = ['', '\t', '\t\t', ' \t', 'a', 'a\t', ';', '\n', '\n\t'];
    const tails = ['', '\n', '\nx', '\n\tx', '\n\n', 'x\n;', '\t\n', ' \n\t'];
    const values = [...new Set(heads.flatMap(h => tails.map(t => h + t)))].filter(v => v.length > 0);
    const read = readStreamsAsApiServer(values.map(v => Yaml.stringify({ v })));
    const lost = values.filter((v, i) => read[i][0].error !== undefined || (read[i][0].ok as any)?.v !== v);
    const refused = values.filter(v => manifestStringProblem(v) !== undefined);
    // every text the reader cannot take is refused; the rule refuses a few more of the same shape
    // (the writer quotes some of them), and none without a tab at the start of its first line
    expect(lost.filter(v => !refused.includes(v))).toEqual([]);
    expect(refused.filter(v => !/^[ \n]*\t/.test(v))).toEqual([]);
    expect(lost).toContain('\t\nx');
    expect(lost.length).toBeGreaterThan(5);
    const app = Testing.app();
    const c = new Chart(app, 'c');
    expect(() => new WithSidecar(c, 's', {
      workload: kplusWorkload(c, 'Deployment'), containerName: 'helper', image: 'example/helper:1.0.0', appEnv: { X: '\t\n;' },
    })).toThrow(/spans lines and its first line starts with a tab.*start the first line with another character than a tab/);
  });

  test('Go-integer-like strings: refused exactly when the API server would not get the string', () => {
    const prefixes = ['', '-', '+'];
    const bases = ['', '0', '0o', '0O', '0b', '0B', '0x', '0X', '_', '0_'];
    const digits = ['1', '17', '1_0', '_1', '1_', 'F', 'f', '8', '1e3', '1.5', '.5', '1.', '1e+3', '9223372036854775808', '18446744073709551616', 'ffffffffffffffff', 'inf', '.inf', 'nan'];
    const values = prefixes.flatMap(p => bases.flatMap(b => digits.map(d => p + b + d)));
    const read = readAsApiServer(Yaml.stringify(...values.map(v => ({ v }))));
    const lost = values.filter((v, i) => (read[i] as any).v !== v);
    const refused = values.filter(v => manifestStringProblem(v) !== undefined);
    expect(refused).toEqual(lost);
    expect(lost.length).toBeGreaterThan(40);
  });
});

describeOracle('point 1: characters the API server reads otherwise', () => {
  const NEL_INCLUDE = 'a\u0085\u0085@INCLUDE /var/log/app/evil.conf';

  test.each(['fluentBit', 'vector', 'fluentd'] as const)('a Loki label with NEL is refused before any agent (%s) gets it', agent => {
    const { chart: c } = chart();
    const build = () => new WithLogAgent(c, 'logs', {
      workload: kplusWorkload(c, 'Deployment'),
      kubernetesVersion: '1.29',
      agent: LogAgent[agent](),
      output: LogOutput.loki({ host: 'loki.monitoring', labels: { job: NEL_INCLUDE } }),
    });
    expect(build).toThrow('LogOutput.loki(): label job value "a\\u0085\\u0085@INCLUDE /var/log/app/evil.conf" holds U+0085 (NEL)');
  });

  test('on the old code, the same label reached Fluent Bit as an @INCLUDE line (the reason for the rule)', () => {
    // the Fluent Bit config text as the library wrote it before, read back by the cluster
    const text = `[OUTPUT]\n    Name   loki\n    Labels job=${NEL_INCLUDE}\n`;
    const [read] = readAsApiServer(Yaml.stringify({ data: { 'fluent-bit.conf': text } })) as any[];
    expect(() => parseFluentBitConf(read.data['fluent-bit.conf'])).toThrow(/@INCLUDE/);
  });

  test.each([
    ['env value', { env: { MODE: 'a\u2028b' } }, 'env \'MODE\' value "a\\u2028b" holds U+2028'],
    ['appEnv value', { appEnv: { MODE: 'a\u0085b' } }, 'appEnv \'MODE\' value "a\\u0085b" holds U+0085'],
    ['args', { args: ['--x=\ud800'] }, 'args[0] "--x=\\ud800" holds a lone UTF-16 surrogate'],
    ['command', { command: ['run\u009b'] }, 'command[0] "run\\u009b" holds U+009B'],
    ['image', { image: 'example/proxy:1\u0085' }, 'image "example/proxy:1\\u0085" holds U+0085'],
    ['configFiles content', { configFiles: { 'a.conf': 'x = 1\n\u2029\n' } }, 'configFiles \'a.conf\' content "x = 1\\n\\u2029\\n" holds U+2029'],
  ])('WithSidecar %s: refused with the path, the escaped value and the fix', (_name, props, message) => {
    const { chart: c } = chart();
    expect(() => new WithSidecar(c, 'proxy', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', image: IMAGE, ...props as any }))
      .toThrow(`WithSidecar 'test/proxy': ${message}`);
    expect(() => new WithSidecar(c, 'proxy2', { workload: kplusWorkload(c, 'Deployment', 'w2'), kubernetesVersion: '1.29', image: IMAGE, ...props as any }))
      .toThrow(/remove the character/);
  });

  test('WithTracer serviceName with NEL is refused; a resource attribute value with NEL is carried (percent-encoded)', () => {
    const { chart: c } = chart();
    expect(() => new WithTracer(c, 't1', { workload: kplusWorkload(c, 'Deployment', 'w1'), kubernetesVersion: '1.29', exporterEndpoint: ENDPOINT, serviceName: 'shop\u0085' }))
      .toThrow('WithTracer \'test/t1\': serviceName "shop\\u0085" holds U+0085');
    expect(() => new WithTracer(c, 't2', { workload: kplusWorkload(c, 'Deployment', 'w2'), kubernetesVersion: '1.29', exporterEndpoint: ENDPOINT, resourceAttributes: { team: 'x\udc00' } }))
      .toThrow('WithTracer \'test/t2\': resourceAttributes \'team\' value "x\\udc00" holds a lone UTF-16 surrogate');
    const { app: app2, chart: c2 } = chart();
    new WithTracer(c2, 't', { workload: kplusWorkload(c2, 'Deployment'), kubernetesVersion: '1.29', exporterEndpoint: ENDPOINT, resourceAttributes: { team: 'a\u0085b\u2028c' } });
    const read = expectIntact(app2);
    const env = read.find(m => m.kind === 'Deployment').spec.template.spec.containers[0].env;
    const attrs = env.find((e: any) => e.name === 'OTEL_RESOURCE_ATTRIBUTES').value as string;
    expect(attrs.split(',').map(kv => kv.split('=').map(decodeURIComponent))).toContainEqual(['team', 'a\u0085b\u2028c']);
  });

  test('accepted hostile values arrive intact (C0 controls, BOM, emoji, YAML indicators, 0x1F, on, ~)', () => {
    const { app, chart: c } = chart();
    new WithSidecar(c, 'proxy', {
      workload: kplusWorkload(c, 'Deployment'),
      kubernetesVersion: '1.29',
      image: IMAGE,
      env: { A: 'a\u0001b', B: '\ufeffx', C: '\u{1F600}', D: ': - ? # & * ! | > \' " % @ `', E: '0x1F', F: 'on', G: '~', H: '1_000', I: '2001-12-14', J: '$(X) ${Y} #{z}' },
      args: ['0777', 'y', 'null', '.5', '1e3'],
      configFiles: { 'a.conf': '\ta\u0007\n  b\u00a0\n' },
    });
    expectIntact(app);
  });
});

describeOracle('point 3: strings the API server reads as numbers', () => {
  const NUMBERISH = '0o17';
  test.each([
    ['WithSidecar containerName', (c: Chart) => new WithSidecar(c, 'p', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', image: IMAGE, containerName: NUMBERISH }), "WithSidecar 'test/p': containerName \"0o17\" is written unquoted by cdk8s' YAML writer"],
    ['WithLogAgent containerName', (c: Chart) => new WithLogAgent(c, 'l', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', containerName: NUMBERISH }), "WithLogAgent 'test/l': containerName \"0o17\""],
    ['WithSidecar env value', (c: Chart) => new WithSidecar(c, 'p', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', image: IMAGE, env: { MODE: '-0o7' } }), "env 'MODE' value \"-0o7\" is written unquoted"],
    ['WithSidecar env name', (c: Chart) => new WithSidecar(c, 'p', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', image: IMAGE, env: { '-0o7': 'x' } }), 'env "-0o7" is written unquoted'],
    ['WithSidecar args', (c: Chart) => new WithSidecar(c, 'p', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', image: IMAGE, args: ['0B1'] }), 'args[0] "0B1"'],
    ['WithSidecar image', (c: Chart) => new WithSidecar(c, 'p', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', image: '0X1F' }), 'image "0X1F"'],
    ['WithSidecar configFiles key', (c: Chart) => new WithSidecar(c, 'p', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', image: IMAGE, configFiles: { '0O17': 'x' } }), 'configFiles key "0O17"'],
    ['WithSidecar port name', (c: Chart) => new WithSidecar(c, 'p', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', image: IMAGE, ports: [{ number: 9090, name: '0o17' }] }), 'port name "0o17"'],
    ['WithTracer serviceName', (c: Chart) => new WithTracer(c, 't', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', exporterEndpoint: ENDPOINT, serviceName: '0o17' }), 'serviceName "0o17"'],
    ['SidecarVolume name', (_c: Chart) => SidecarVolume.emptyDir('0o17', '/data'), "SidecarVolume '0o17': name \"0o17\""],
    ['SidecarVolume Secret name', (_c: Chart) => SidecarVolume.secret('creds', { name: '0o17' }, '/creds'), 'Secret name "0o17"'],
    ['NativeSidecarGuard name', (c: Chart) => new NativeSidecarGuard(c, 'g', { namespaces: ['shop'], name: '0o17' }), 'name "0o17"'],
    ['NativeSidecarGuard namespaces', (c: Chart) => new NativeSidecarGuard(c, 'g', { namespaces: ['0o17'] }), 'namespaces entry "0o17"'],
  ])('%s \'0o17\'-like: refused, saying cdk8s writes it unquoted', (_name, build, message) => {
    const { chart: c } = chart();
    expect(() => build(c)).toThrow(message);
    expect(() => build(chart().chart)).toThrow(/strconv.ParseInt.*cdk8s gives no way to quote one value/);
  });

  test('the same names the cdk8s writer quotes are accepted and arrive intact (0x1f, 0b1, 1e3)', () => {
    const { app, chart: c } = chart();
    new WithSidecar(c, 'p', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', image: IMAGE, containerName: '0x1f', env: { A: '0x1F', B: '0b1' }, args: ['1e3'] });
    new NativeSidecarGuard(c, 'g', { namespaces: ['0b1', '1e3'], kubernetesVersion: '1.30' });
    expectIntact(app);
  });

  test.each([
    ['labels', { labels: { job: '0o17', env: 'on' } }, (cfg: any) => cfg.sinks.output.labels, { job: '0o17', env: 'on' }],
    ['tenantId', { tenantId: '0o17' }, (cfg: any) => cfg.sinks.output.tenant_id, '0o17'],
  ])('Vector: Loki %s stay strings for a YAML 1.2 and a 1.1 reader, read from the ConfigMap as the API server gives it', (_n, options, pick, want) => {
    const { app, chart: c } = chart();
    new WithLogAgent(c, 'logs', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', agent: LogAgent.vector(), output: LogOutput.loki({ host: 'loki', ...options }) });
    const text = configMapText(expectIntact(app), 'vector.yaml');
    expect(pick(YAML.parse(text))).toEqual(want);
    expect(pick(YAML.parse(text, { version: '1.1' }))).toEqual(want);
    expect(pick(readAsApiServer(text)[0])).toEqual(want); // a Go (yaml.v2) reader too
  });

  test('Vector: an index 0o17 stays a string', () => {
    const { app, chart: c } = chart();
    new WithLogAgent(c, 'logs', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', agent: LogAgent.vector(), output: LogOutput.elasticsearch({ host: 'es', index: '0o17' }) });
    const text = configMapText(expectIntact(app), 'vector.yaml');
    expect(YAML.parse(text).sinks.output.bulk.index).toBe('0o17');
  });

  test('collector: an exporter header named 0o17 stays a string', () => {
    const { app, chart: c } = chart();
    new WithTracer(c, 't', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', exporterEndpoint: ENDPOINT, exporterHeaders: { '0o17': { secret: { name: 'otel-auth' }, key: 'token' } } });
    const text = configMapText(expectIntact(app), 'config.yaml');
    for (const read of [YAML.parse(text), YAML.parse(text, { version: '1.1' }), readAsApiServer(text)[0] as any]) {
      expect(Object.keys(read.exporters['otlp_grpc/traces'].headers)).toEqual(['0o17']);
    }
  });

  test('Fluent Bit: Loki labels from the ConfigMap as the API server gives it, read with its grammar', () => {
    const { app, chart: c } = chart();
    new WithLogAgent(c, 'logs', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', output: LogOutput.loki({ host: 'loki', labels: { job: '0o17', team: 'a-b' } }) });
    const text = configMapText(expectIntact(app), 'fluent-bit.conf');
    const out = parseFluentBitConf(text).find(s => s.name === 'OUTPUT')!;
    expect(fluentBitLokiLabels(out.props.labels[0])).toEqual({ job: '0o17', team: 'a-b' });
  });
});

describeOracle('the agent YAML emitter (src/private/values.ts agentYaml)', () => {
  const json = fc.letrec(tie => ({
    value: fc.oneof({ depthSize: 'small' },
      fc.string({ unit: 'binary' }), fc.integer(), fc.boolean(), fc.constant(null),
      fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), tie('value'), { maxKeys: 3 })),
  })).value;
  const top = fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), json, { maxKeys: 4 });

  test('a YAML 1.2 reader, a YAML 1.1 reader and the Go reader (through a ConfigMap) get the data back', () => {
    const samples = fc.sample(top, { numRuns: 300, seed: 24 });
    const texts = samples.map(d => agentYaml(d));
    // the config text inside a manifest, as cdk8s writes it, then the API server reads it
    const read = readStreamsAsApiServer(texts.map(t => Yaml.stringify({ data: { 'agent.yaml': t } })));
    const goRead = readStreamsAsApiServer(read.map(r => (r[0].ok as any).data['agent.yaml']));
    samples.forEach((d, i) => {
      const expected = JSON.parse(JSON.stringify(d));
      expect((read[i][0].ok as any).data['agent.yaml']).toBe(texts[i]);
      expect(YAML.parse(texts[i], { uniqueKeys: false })).toEqual(expected);
      expect(YAML.parse(texts[i], { version: '1.1', uniqueKeys: false })).toEqual(expected);
      expect(goRead[i][0].ok ?? {}).toEqual(expected);
    });
  });

  test('the text is printable ASCII and every key and string is double-quoted', () => {
    const text = agentYaml({ on: ['0o17', '~', 'a\u0085\u2028b\u{1F600}'], n: { y: '' } });
    expect(text).toBe('"on":\n  - "0o17"\n  - "~"\n  - "a\\x85\\u2028b\\U0001f600"\n"n":\n  "y": ""\n');
    expect(showValue('a\u0085')).toBe('"a\\u0085"');
  });
});

test('the last line of defence (checkManifestData) names the JSON path of a value no prop check caught', () => {
  expect(() => checkManifestData(new Where("WithSidecar 'test/p'"), "the sidecar's", { container: { env: [{ name: 'A', value: 'x\u2028' }] } }))
    .toThrow("WithSidecar 'test/p': the sidecar's.container.env[0].value \"x\\u2028\" holds U+2028");
  expect(() => checkManifestData(new Where('W'), 'the agent\'s', { files: { 'a b': '0o17' } })).toThrow('the agent\'s.files["a b"] "0o17" is written unquoted');
  expect(() => checkManifestData(new Where('W'), 'x', { ok: ['0x1F', 'on', 5, null, { n: 'a\u0001' }] })).not.toThrow();
});

test('a text joined from shared cuts (Envoy\'s config) passes by its cuts only where the whole text passes (issue 36: no scan of the whole per workload)', () => {
  const cases: Array<[string[], string[]]> = [
    [['{\n  "id": "', '",\n  "c": "', '"\n}\n'], ['web', 'web']],
    [['{\n  "id": "', '"\n}\n'], ['a\u0085b']], // a refused character in a value
    [['{\n  "id": "\u2028', '"\n}\n'], ['web']], // ... in a piece
    [['{\n  "id": "\ud83d', '"\n}\n'], ['\ude00']], // a pair split at a joint (the whole passes, the cut check does not decide)
    [['{\n  "id": "\ud83d', '"\n}\n'], ['x']], // a lone surrogate at a joint
    [['\t{', '\n}'], ['x']], // a block scalar starting with a tab
    [['v', '1'], ['0o']], // one line: a number for the reader
    [['', '\n'], ['0o17']],
  ];
  for (const [texts, values] of cases) {
    let joined = texts[0];
    values.forEach((v, i) => { joined += v + texts[i + 1]; });
    if (cutTextCarried(texts, values, joined)) expect(manifestStringProblem(joined)).toBeUndefined();
  }
  expect(cases.map(([t, v]) => { let j = t[0]; v.forEach((x, i) => { j += x + t[i + 1]; }); return cutTextCarried(t, v, j); }))
    .toEqual([true, false, false, false, false, false, false, true]);
});

test('checkManifestData remembers only what cannot change: a frozen object passed once, and strings (issue 36: its cost per sidecar)', () => {
  const who = new Where('W');
  // an object that is not frozen is checked again each time: a value changed since is caught
  const open: any = { env: [{ name: 'A', value: 'ok' }] };
  checkManifestData(who, 'x', open);
  open.env[0].value = 'x\u2028';
  expect(() => checkManifestData(who, 'x', open)).toThrow('x.env[0].value "x\\u2028" holds U+2028');
  // a frozen object with a mutable object inside is not remembered either
  const inner: any = { value: 'ok' };
  const shell = Object.freeze({ inner });
  checkManifestData(who, 'x', shell);
  inner.value = 'a\u0085';
  expect(() => checkManifestData(who, 'x', shell)).toThrow('x.inner.value "a\\u0085" holds U+0085');
  // a frozen object that failed is not remembered as passed
  const bad = Object.freeze({ files: Object.freeze({ 'a.conf': '0o17' }) });
  expect(() => checkManifestData(who, 'x', bad)).toThrow('is written unquoted');
  expect(() => checkManifestData(who, 'x', bad)).toThrow('is written unquoted');
  // a string that failed fails again, also after strings that passed (the remembered ones)
  for (let i = 0; i < 3; i++) {
    expect(() => checkManifestData(who, 'x', { v: 'fine', w: '-_1e3' })).toThrow('x.w "-_1e3"');
  }
});

describeOracle('issue 39: nothing lost, nothing misread (each expectation read back by the API server\'s reader or the agent\'s grammar)', () => {
  test('a hole in args reaches the API server as null (cdk8s writes `- null`), so it is refused, index by index', () => {
    const { app, chart: c } = chart();
    // what the old code let through: the hole written by cdk8s' own writer
    // eslint-disable-next-line no-sparse-arrays
    new ApiObject(c, 'raw', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: {}, args: ['--a', , '--b'] } as any);
    expect(asTheClusterReadsIt(app)[0].args).toEqual(['--a', null, '--b']); // Go's decoder makes the null an empty argument
    const { chart: c2 } = chart();
    // eslint-disable-next-line no-sparse-arrays
    expect(() => new WithSidecar(c2, 'p', { workload: kplusWorkload(c2, 'Deployment'), kubernetesVersion: '1.29', image: IMAGE, args: ['--a', , '--b'] as string[] }))
      .toThrow("WithSidecar 'test/p': args[1] is a hole (an empty slot");
  });

  test('an env var named __proto__ (env is a list) arrives intact; a configFiles key __proto__ (a map) is still refused', () => {
    const { app, chart: c } = chart();
    new WithSidecar(c, 'p', {
      workload: kplusWorkload(c, 'Deployment'),
      kubernetesVersion: '1.29',
      image: IMAGE,
      env: JSON.parse('{"__proto__": "x", "A": "b"}'),
      appEnv: JSON.parse('{"__proto__": "y"}'),
    });
    const read = expectIntact(app);
    const pod = read.find(m => m.kind === 'Deployment').spec.template.spec;
    const sidecar = [...(pod.initContainers ?? []), ...pod.containers].find((x: any) => x.name === 'sidecar');
    expect(sidecar.env).toEqual(expect.arrayContaining([{ name: '__proto__', value: 'x' }, { name: 'A', value: 'b' }]));
    expect(pod.containers[0].env).toEqual(expect.arrayContaining([{ name: '__proto__', value: 'y' }]));
    const { chart: c2 } = chart();
    expect(() => new WithSidecar(c2, 'p', { workload: kplusWorkload(c2, 'Deployment'), kubernetesVersion: '1.29', image: IMAGE, configFiles: JSON.parse('{"__proto__": "x"}') }))
      .toThrow('configFiles has a key "__proto__"');
  });

  test('a configFiles key "constructor": refused up front, because cdk8s cannot write it in any ConfigMap', () => {
    // the consumer: cdk8s' own writer, on a ConfigMap of its own
    const { app, chart: c } = chart();
    new ApiObject(c, 'cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { constructor: 'a = 1' } } as any);
    expect(() => app.synthYaml()).toThrow("can't render non-simple object of type 'undefined'");
    const { chart: c2 } = chart();
    expect(() => new WithSidecar(c2, 'p', { workload: kplusWorkload(c2, 'Deployment'), kubernetesVersion: '1.29', image: IMAGE, configFiles: { constructor: 'a = 1' } as any }))
      .toThrow("WithSidecar 'test/p': configFiles key 'constructor' cannot be written by cdk8s in a ConfigMap's data");
  });

  /** An options object whose `host` is a checked value when first read and another one after. */
  const fickle = (first: string, later: string, extra: object = {}) => {
    let reads = 0;
    return { ...extra, get host() { reads++; return reads === 1 ? first : later; } } as any;
  };

  test.each([
    ['http', () => LogOutput.http(fickle('x.example.com', 'x.example.com/\n#')), (cfg: any) => cfg.sinks.output.uri, 'https://x.example.com:443/'],
    ['loki', () => LogOutput.loki(fickle('loki.example.com', 'loki.example.com/\n#')), (cfg: any) => cfg.sinks.output.endpoint, 'http://loki.example.com:3100'],
    ['elasticsearch', () => LogOutput.elasticsearch(fickle('es.example.com', 'es.example.com/\n#')), (cfg: any) => cfg.sinks.output.endpoints, ['https://es.example.com:9200']],
  ])('LogOutput.%s() reads each option once: a getter\'s later value never reaches vector.yaml', (_n, output, pick, want) => {
    const { app, chart: c } = chart();
    new WithLogAgent(c, 'logs', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', agent: LogAgent.vector(), output: output() });
    const text = configMapText(expectIntact(app), 'vector.yaml');
    expect(pick(YAML.parse(text))).toEqual(want);
    expect(text).not.toContain('#');
  });

  test('options given as a class instance (getters on its prototype) are read too, once each', () => {
    let reads = 0;
    class Options { public get host() { reads++; return 'logs.example.com'; } public get port() { return 8443; } }
    const { app, chart: c } = chart();
    new WithLogAgent(c, 'logs', { workload: kplusWorkload(c, 'Deployment'), kubernetesVersion: '1.29', agent: LogAgent.vector(), output: LogOutput.http(new Options() as any) });
    expect(YAML.parse(configMapText(expectIntact(app), 'vector.yaml')).sinks.output.uri).toBe('https://logs.example.com:8443/');
    expect(reads).toBe(1);
  });

  test('construct props: a getter is read once (WithSidecar containerName checked and written the same)', () => {
    let reads = 0;
    const { app, chart: c } = chart();
    const workload = kplusWorkload(c, 'Deployment');
    new WithSidecar(c, 'p', { workload, kubernetesVersion: '1.29', image: IMAGE, get containerName() { reads++; return reads === 1 ? 'proxy' : 'Proxy One'; } } as any);
    const pod = expectIntact(app).find(m => m.kind === 'Deployment').spec.template.spec;
    expect(pod.initContainers.map((x: any) => x.name)).toContain('proxy');
    expect(reads).toBe(1);
  });
});
