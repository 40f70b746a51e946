/**
 * The log agents as the real programs see them (issue 11): each rendered config read back with the
 * agent's own grammar, checked against the keys the pinned agent version defines, and the
 * run-time facts (temporary directory, file permissions, TLS host names) simulated from the
 * upstream sources named beside each check.
 */
import { spawnSync } from 'child_process';
import { Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import * as fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { FluentBitConfigFormat, FluentBitMultilineParser, LogAgent, LogOutput, WithLogAgent, WithTracer } from '../src';
import { LogOutputConfig } from '../src/agents/log-output-config';
import { VECTOR_SECRETS } from '../src/agents/vector/config';
import { AgentSources } from '../src/log-agent';
import { outputSecretEnv } from '../src/log-output';
import { APP_CONTAINER, containerOf, kplusWorkload, manifestOf, newChart, podSpecOf } from './util/fixtures';
import { fluentBitEnv, fluentBitLokiLabels, fluentBitSlist1, parseFluentBitConf, parseFluentBitYaml } from './util/fluent-bit-conf';
import { FluentDirective, fluentValue, parseFluentConf } from './util/fluentd-conf';
import { VECTOR_ENV_REFERENCE, vectorLoad } from './util/vector-config';
import { Where } from '../src/private/errors';

const WHO = "WithLogAgent 'test/logs'";
const PLUGIN_IMAGE = 'registry.local/fluentd-plugins:1.0.0';

const AGENTS = {
  fluentBit: () => LogAgent.fluentBit(),
  vector: () => LogAgent.vector(),
  fluentd: () => LogAgent.fluentd({ image: PLUGIN_IMAGE }),
};
type AgentName = keyof typeof AGENTS;
const AGENT_NAMES = Object.keys(AGENTS) as AgentName[];

/** The agent's config text for an output, as WithLogAgent asks for it. */
function render(agent: AgentName, output: LogOutput, logDirectory = '/var/log/app', filePattern = '*.log', sources?: AgentSources) {
  // WithLogAgent refuses an empty host before it renders (with-log-agent.test.ts 'bad input')
  if ('host' in output._config && output._config.host === '') throw new Error(`${WHO}: the output needs a host`);
  const secrets = outputSecretEnv(output._config);
  const env: Record<string, string> = { POD_NAME: 'web-1', POD_NAMESPACE: 'shop', NODE_NAME: 'node-a', POD_LOG_PATH: '/var/log/pods/shop_web-1_u1/web/*.log' };
  for (const e of secrets.env) env[e.name] = `secret of ${e.name}`;
  const r = AGENTS[agent]()._render({
    who: new Where(WHO),
    logDirectory,
    filePattern,
    logVolumeSizeLimitMiB: 1024,
    configDirectory: '/etc/log-agent',
    output: output._config,
    secretVars: secrets.vars,
    ...(sources ? { sources } : {}),
  });
  // an agent that reads the secrets as files finds the same values there (WithLogAgent mounts them)
  const files = Object.fromEntries(Object.keys(secrets.refs).map(name => [`${r.secretDirectory}/${name}`, env[name]]));
  return { text: Object.values(r.files)[0], env, secrets, files };
}

/** The case with the other sources on (`captureStdout`, `podLogs`), output stdout. */
const STDOUT_SOURCES_CASE = 'stdout, with the capture files and the pod logs';
function renderCase(agent: AgentName, type: string) {
  if (type === STDOUT_SOURCES_CASE) return render(agent, LogOutput.stdout(), '/var/log/app', '*.log', { capture: '/var/log/app/.stdout-*/*.log', podLogsEnv: 'POD_LOG_PATH' });
  return render(agent, ALL_OUTPUTS[type as keyof typeof ALL_OUTPUTS]());
}

const secret = (name: string, key: string) => ({ secret: kplus.Secret.fromSecretName(newChart().chart, `${name}-${key}`, name), key });
const basicAuth = { username: secret('log-basic', 'user'), password: secret('log-basic', 'pass') };

// ---------------------------------------------------------------------------------------------
// Readers: Vector's interpolation and template grammar, the URL every agent builds

/** vector.yaml as Vector 0.57 loads it (test/util/vector-config.ts): no `${NAME}` left to it, the secrets read from their files. */
/** The secrets of `env` as the files WithLogAgent mounts for Vector. */
const vectorSecretFiles = (env: Record<string, string>) =>
  Object.fromEntries(Object.entries(env).map(([name, value]) => [`${VECTOR_SECRETS.directory}/${name}`, value]));

function vectorRead(text: string, files: Record<string, string>, interpolated?: Record<string, string>): any {
  if (interpolated === undefined) {
    expect(text).not.toMatch(VECTOR_ENV_REFERENCE);
    return vectorLoad(text, files);
  }
  // started with VECTOR_DANGEROUSLY_ALLOW_ENV_VAR_INTERPOLATION (podLogs): `${NAME}` from the env, before the secrets
  return vectorLoad(text.replace(/\$\{([A-Za-z0-9_]+)\}/g, (_m, n: string) => {
    if (!(n in interpolated)) throw new Error(`Vector would not find \${${n}}`);
    return interpolated[n];
  }), files);
}

/**
 * A Vector template that renders to itself: no `{{ field }}` (src/template.rs `RE`, v0.54.0) and
 * no strftime item (`%` starts one: `parse_literal`).
 */
function vectorStatic(template: string): string {
  if (/\{\{[^}]+\}\}/.test(template) || template.includes('%')) throw new Error(`Vector template ${JSON.stringify(template)} is not static`);
  return template;
}

const url = (o: { tls: boolean; host: string; port: number }, p = '') => `${o.tls ? 'https' : 'http'}://${o.host}:${o.port}${p}`;

/** The values of an output as each agent reads them back from its config. */
interface ReadBack {
  host?: string;
  url?: string;
  uri?: string;
  headers?: Record<string, string>;
  labels?: Record<string, string>;
  tenantId?: string;
  index?: string;
}

function readFluentBit(text: string, env: Record<string, string>, type: LogOutputConfig['type']): ReadBack {
  const sections = parseFluentBitConf(text);
  expect(sections.map(s => s.name)).toEqual(['SERVICE', 'INPUT', 'FILTER', 'OUTPUT']);
  const out = sections[3].props;
  const one = (k: string) => {
    expect({ k, values: out[k]?.length }).toEqual({ k, values: 1 });
    return fluentBitEnv(out[k][0], env);
  };
  const r: ReadBack = {};
  if (type === 'stdout') return r;
  r.host = one('host');
  if (type === 'http') {
    r.uri = one('uri');
    r.headers = Object.fromEntries((out.header ?? []).map(h => fluentBitSlist1(fluentBitEnv(h, env))));
  }
  if (type === 'loki') {
    r.labels = fluentBitLokiLabels(one('labels'));
    if (out.tenant_id) r.tenantId = one('tenant_id');
  }
  if (type === 'elasticsearch' || type === 'opensearch') r.index = one('index');
  return r;
}

function readVector(text: string, env: Record<string, string>, type: LogOutputConfig['type']): ReadBack {
  const sink = vectorRead(text, vectorSecretFiles(env)).sinks.output;
  switch (type) {
    case 'http':
      return { url: vectorStatic(sink.uri), headers: sink.request?.headers ?? {} };
    case 'loki':
      return {
        url: sink.endpoint,
        labels: Object.fromEntries(Object.entries<string>(sink.labels).map(([k, v]) => [vectorStatic(k), vectorStatic(v)])),
        ...(sink.tenant_id !== undefined ? { tenantId: vectorStatic(sink.tenant_id) } : {}),
      };
    case 'elasticsearch':
    case 'opensearch':
      return { url: sink.endpoints[0], index: vectorStatic(sink.bulk.index) };
    default:
      return {};
  }
}

function readFluentd(text: string, env: Record<string, string>, type: LogOutputConfig['type']): ReadBack {
  const conf = parseFluentConf(text);
  expect(conf.map(d => d.name)).toEqual(['system', 'source', 'source', 'filter', 'match']);
  const match = conf[4];
  const v = (d: FluentDirective, k: string) => fluentValue(d.params[k], env);
  switch (type) {
    case 'forward':
      return { host: v(match.children.find(c => c.name === 'server')!, 'host') };
    case 'http':
      return { url: v(match, 'endpoint'), headers: match.params.headers ? JSON.parse(v(match, 'headers')) : {} };
    case 'loki':
      return {
        url: v(match, 'url'),
        labels: JSON.parse(v(match, 'extra_labels')),
        ...(match.params.tenant ? { tenantId: v(match, 'tenant') } : {}),
      };
    case 'elasticsearch':
    case 'opensearch':
      return { host: v(match, 'host'), index: v(match, 'index_name') };
    default:
      return {};
  }
}

/** What each agent must read back, from the output as data. */
function expected(agent: AgentName, o: LogOutputConfig, env: Record<string, string>, vars: Record<string, string>): ReadBack {
  const headers = o.type === 'http' ? Object.fromEntries(Object.keys(o.headers).map(h => [h, env[vars[`header_${h}`]]])) : undefined;
  switch (o.type) {
    case 'stdout': return {};
    case 'forward': return { host: o.host };
    case 'http':
      return agent === 'fluentBit' ? { host: o.host, uri: o.uri, headers } : { url: url(o, o.uri), headers };
    case 'loki': {
      const tenant = o.tenantId !== undefined ? { tenantId: o.tenantId } : {};
      return agent === 'fluentBit' ? { host: o.host, labels: o.labels, ...tenant } : { url: url(o), labels: o.labels, ...tenant };
    }
    case 'elasticsearch':
    case 'opensearch':
      return agent === 'vector' ? { url: url(o), index: o.index } : { host: o.host, index: o.index };
  }
}

const READERS = { fluentBit: readFluentBit, vector: readVector, fluentd: readFluentd };

// ---------------------------------------------------------------------------------------------
// 8. User values never rewrite the agent config: read back exactly, or refused with a clear error

const NASTY = [
  '\n', '\r', '\t', '"', "'", '\\', '${', '#{', '#', '@include ', '@INCLUDE ', '[', ']', '<', '>', '</match>', '[OUTPUT]',
  '{{', '}}', '{', '}', '%', '%F', '$', '$$', ',', '=', ' ', '/', '?', ':', '&', '*', 'é', 'a', 'Z', '0', '-', '.', '_',
];
const nasty = fc.array(fc.constantFrom(...NASTY), { maxLength: 8 }).map(a => a.join(''));
const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/);
/** Characters the formats can hold once quoted: most values of this kind pass the factories. */
const HOLDABLE = ['a', 'Z', '0', '#', "'", '<', '>', '[', ']', '@include', '=', '\\', 'é', '-', '.', '/', ':', '?', '&', '*', 'x$y', 'x y', '(', ')', '!'];
const holdable = fc.array(fc.constantFrom(...HOLDABLE), { minLength: 1, maxLength: 6 }).map(a => a.join(''));
const anyValue = fc.oneof(nasty, word, holdable, fc.string({ maxLength: 12 }));
/** Mostly values that pass, so that the read-back is exercised; one in four anything. */
const mostly = (ok: fc.Arbitrary<string>) => fc.oneof({ arbitrary: ok, weight: 3 }, { arbitrary: anyValue, weight: 1 });
const hostArb = mostly(fc.tuple(word, word).map(([a, b]) => `${a}.${b}`));
const labelName = mostly(fc.stringMatching(/^[a-z_][a-z0-9_]{0,6}$/));

/** A factory call that shows its arguments in a counterexample. */
const call = <T>(args: T, make: (a: T) => LogOutput) => Object.assign(() => make(args), { [fc.toStringMethod]: () => JSON.stringify(args) });

/** The factories, from arbitrary values. */
const OUTPUT_ARBS: Record<string, fc.Arbitrary<() => LogOutput>> = {
  forward: fc.record({ host: hostArb, tls: fc.boolean() }).map(o => call(o, LogOutput.forward)),
  http: fc.record({
    host: hostArb,
    uri: mostly(holdable.map(u => `/${u}`)),
    headers: fc.dictionary(mostly(word), fc.constant(0), { maxKeys: 2 }),
  }).map(o => call(o, a => LogOutput.http({
    host: a.host,
    uri: a.uri,
    basicAuth,
    secretHeaders: Object.fromEntries(Object.keys(a.headers).map((h, i) => [h, secret('hdr', `k${i}`)])),
  }))),
  loki: fc.record({
    host: hostArb,
    labels: fc.dictionary(labelName, mostly(holdable), { minKeys: 0, maxKeys: 3 }),
    tenantId: fc.option(mostly(word), { nil: undefined }),
  }).map(o => call(o, a => LogOutput.loki({ host: a.host, labels: a.labels, tenantId: a.tenantId, basicAuth }))),
  elasticsearch: fc.record({ host: hostArb, index: mostly(word) }).map(o => call(o, a => LogOutput.elasticsearch({ ...a, basicAuth }))),
  opensearch: fc.record({ host: hostArb, index: mostly(word) }).map(o => call(o, a => LogOutput.opensearch({ ...a, tls: false }))),
};

describe('8. every user value reaches the agent exactly as given, or is refused with a clear error', () => {
  test.each(Object.keys(OUTPUT_ARBS))('%s: through every agent', (type) => {
    let accepted = 0;
    fc.assert(fc.property(OUTPUT_ARBS[type], (make) => {
      let output: LogOutput;
      try {
        output = make();
      } catch (e) {
        // refused at the factory, naming the factory, the value and an example
        expect((e as Error).message).toMatch(new RegExp(`^LogOutput\\.${type}\\(\\): .+ e\\.g\\. `, 's'));
        return;
      }
      accepted++;
      for (const agent of AGENT_NAMES) {
        let rendered;
        try {
          rendered = render(agent, output);
        } catch (e) {
          // refused by an agent whose format cannot hold the value (or that has no such output)
          expect((e as Error).message).toMatch(new RegExp(`^${WHO}: `));
          continue;
        }
        const { text, env, secrets } = rendered;
        expect({ agent, read: READERS[agent](text, env, output._config.type) })
          .toEqual({ agent, read: expected(agent, output._config, env, secrets.vars) });
      }
    }), { numRuns: 150 });
    // the property is not vacuous: values pass the factory too
    expect(accepted).toBeGreaterThan(5);
  });

  test('the attacks of the issue: a label value or an index with a newline and an [OUTPUT] section, ${VAR} in a label', () => {
    expect(() => LogOutput.loki({ host: 'loki', labels: { app: 'x\n[OUTPUT]\n    Name stdout\n    Match *' } }))
      .toThrow('LogOutput.loki(): label app value "x\\n[OUTPUT]\\n    Name stdout\\n    Match *" has a newline or another control character');
    expect(() => LogOutput.elasticsearch({ host: 'es', index: 'x\n[OUTPUT]\n    Name stdout' }))
      .toThrow('LogOutput.elasticsearch(): index "x\\n[OUTPUT]\\n    Name stdout" is not an index name every agent writes as given');
    expect(() => LogOutput.loki({ host: 'loki', labels: { app: '${LOG_OUTPUT_PASSWORD}' } }))
      .toThrow("LogOutput.loki(): label app value \"${LOG_OUTPUT_PASSWORD}\" starts with '$' or has '${'");
    expect(() => LogOutput.http({ host: 'h', uri: '/x\n</match>' })).toThrow('LogOutput.http(): uri "/x\\n</match>" is not a request path');
    expect(() => LogOutput.http({ host: 'h', secretHeaders: { 'X-A\n<match **>': secret('s', 'k') } }))
      .toThrow('LogOutput.http(): secretHeaders name "X-A\\n<match **>" is not an HTTP header name');
    expect(() => LogOutput.forward({ host: 'fluentd\n[OUTPUT]' })).toThrow('LogOutput.forward(): host "fluentd\\n[OUTPUT]" is not a DNS name or IPv4 address');
  });

  test('values the formats can hold with quoting are read back exactly ("#", quotes, "@include", "[", "<", "$", "=")', () => {
    const labels = { a: "it's #1 <b> [c] @include x", b: 'US$ 5=five', c: "\\'#{x}" };
    const output = LogOutput.loki({ host: 'loki.example.com', labels, tenantId: "t(e)n'ant*" });
    for (const agent of AGENT_NAMES) {
      if (agent === 'vector') {
        // 0.54 to 0.56 read '$' as an environment variable, 0.57 as itself: refused (the next test)
        expect(() => render(agent, output)).toThrow(`${WHO}: Vector cannot be given "US$ 5=five" as it is`);
        continue;
      }
      const { text, env, secrets } = render(agent, output);
      expect(READERS[agent](text, env, 'loki')).toEqual(expected(agent, output._config, env, secrets.vars));
    }
    const { text, env, secrets } = render('vector', LogOutput.loki({ host: 'loki.example.com', labels: { ...labels, b: 'US 5=five' }, tenantId: "t(e)n'ant*" }));
    expect(readVector(text, env, 'loki')).toEqual(expected('vector', LogOutput.loki({ host: 'loki.example.com', labels: { ...labels, b: 'US 5=five' }, tenantId: "t(e)n'ant*" })._config, env, secrets.vars));
  });

  test("Vector: a '$' in any value it is given is refused, SECRET[a.b] in a label by LogOutput (no one text means it to 0.54-0.56 and 0.57)", () => {
    expect(() => render('vector', LogOutput.http({ host: 'h', uri: '/in$gest' })))
      .toThrow(`${WHO}: Vector cannot be given "https://h:443/in$gest" as it is: Vector 0.54 to 0.56 read '$' in the config as an environment variable, ` +
        "0.57 and later as itself (vector src/config/loading/mod.rs, v0.57.0), so no one config means this value to every release; give a value without '$', " +
        'or use LogAgent.fluentBit() or LogAgent.fluentd().');
    expect(() => render('vector', LogOutput.http({ host: 'h', secretHeaders: { X$Key: secret('s', 'k') } }))).toThrow(`${WHO}: Vector cannot be given "X$Key"`);
    expect(() => render('vector', LogOutput.loki({ host: 'l', labels: { app: 'a$b' } }))).toThrow(`${WHO}: Vector cannot be given "a$b"`);
    // the other agents take them
    expect(() => render('fluentBit', LogOutput.http({ host: 'h', uri: '/in$gest' }))).not.toThrow();
    expect(() => LogOutput.loki({ host: 'l', labels: { app: 'x SECRET[log_output.LOG_OUTPUT_PASSWORD]' } }))
      .toThrow("LogOutput.loki(): label app value \"x SECRET[log_output.LOG_OUTPUT_PASSWORD]\" has 'SECRET[<name>.<key>]', which Vector replaces");
  });

  test('two header names that become one environment variable are refused', () => {
    expect(() => LogOutput.http({ host: 'h', secretHeaders: { 'X-Key': secret('s', 'a'), 'X_Key': secret('s', 'b') } }))
      .toThrow('LogOutput.http(): secretHeaders name "X_Key" and "X-Key" are the same header to the agent (both become LOG_OUTPUT_HEADER_X_KEY)');
  });

  test('Vector refuses a percent-encoded uri (its uri is a template, % starts a time format)', () => {
    expect(() => render('vector', LogOutput.http({ host: 'h', uri: '/a%20b' })))
      .toThrow(`${WHO}: Vector reads the http output's uri "/a%20b" as a template`);
    const { text, env } = render('fluentBit', LogOutput.http({ host: 'h', uri: '/a%20b' }));
    expect(readFluentBit(text, env, 'http').uri).toBe('/a%20b');
  });

  test.each([
    [{ logDirectory: '/var/log/a,b' }, 'logDirectory "/var/log/a,b" may hold only letters, digits'],
    [{ logDirectory: '/var/log/${HOME}' }, 'logDirectory "/var/log/${HOME}" may hold only'],
    [{ logDirectory: '/var/log/a b' }, 'logDirectory "/var/log/a b" may hold only'],
    [{ filePattern: '*.log,*.txt' }, 'filePattern "*.log,*.txt" may hold only letters'],
    [{ filePattern: '{a,b}.log' }, 'filePattern "{a,b}.log" may hold only'],
    [{ filePattern: '#{x}.log' }, 'filePattern "#{x}.log" may hold only'],
  ])('logDirectory and filePattern are written into every config: %o is refused', (props, message) => {
    const { chart } = newChart();
    expect(() => new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), ...props })).toThrow(`${WHO}: ${message}`);
  });
});

// ---------------------------------------------------------------------------------------------
// 4. Loki labels, per agent grammar, at the factory call

describe('4. Loki labels are refused at the factory when an agent would refuse them or read them differently', () => {
  test.each([
    [{}, 'labels is empty; Loki needs at least one stream label'],
    [{ 'app-name': 'x' }, 'label name "app-name" is not a Loki label name'],
    [{ '0app': 'x' }, 'label name "0app" is not a Loki label name'],
    [{ __name: 'x' }, 'label name "__name" is not a Loki label name'],
    [{ app: '' }, 'label app value "" is empty'],
    [{ app: ' web' }, 'label app value " web" starts or ends with white space'],
    [{ app: 'a,b=c' }, "label app value \"a,b=c\" has a ','"],
    [{ app: '$kubernetes' }, "label app value \"$kubernetes\" starts with '$'"],
    [{ app: 'a"b' }, 'label app value "a\\"b" has a \'"\''],
    [{ app: '{{ host }}' }, "label app value \"{{ host }}\" has '{{' or '%'"],
    [{ app: 'web-%F' }, "label app value \"web-%F\" has '{{' or '%'"],
  ])('%o', (labels, message) => {
    expect(() => LogOutput.loki({ host: 'loki', labels })).toThrow(`LogOutput.loki(): ${message}`);
  });

  test('accepted labels satisfy Vector valid_label_name and Fluent Bit parse_kv (property)', () => {
    fc.assert(fc.property(fc.dictionary(labelName, mostly(holdable), { minKeys: 1, maxKeys: 3 }), (labels) => {
      try {
        LogOutput.loki({ host: 'loki', labels });
      } catch {
        return;
      }
      for (const [k, v] of Object.entries(labels)) {
        // vector src/sinks/loki/config.rs valid_label_name (v0.54.0)
        expect(/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(k.trim())).toBe(true);
        // plugins/out_loki/loki.c parse_kv (v5.1.1 as v3.2.10), through the CLIST split
        expect(fluentBitLokiLabels(`${k}=${v}`)).toEqual({ [k]: v });
      }
    }), { numRuns: 300 });
  });

  test('tenant IDs follow Loki (grafana/dskit tenant.ValidTenantID)', () => {
    expect(() => LogOutput.loki({ host: 'loki', tenantId: 'a/b' })).toThrow('LogOutput.loki(): tenantId "a/b" is not a Loki tenant ID');
    expect(() => LogOutput.loki({ host: 'loki', tenantId: '..' })).toThrow('is not a Loki tenant ID');
    expect(() => LogOutput.loki({ host: 'loki', tenantId: 'x'.repeat(151) })).toThrow('is not a Loki tenant ID');
    expect(LogOutput.loki({ host: 'loki', tenantId: "team-a_(1)!*'." }).type).toBe('loki');
  });
});

// ---------------------------------------------------------------------------------------------
// issue 16, point 2: empty or malformed Secret references

describe('Secret references in the log outputs are refused at the factory when the API server would reject them', () => {
  const bad = (name: string, key: string) => ({ secret: kplus.Secret.fromSecretName(newChart().chart, 'ref', name), key });
  test.each([
    ['basic auth, empty Secret name', () => LogOutput.loki({ host: 'l', basicAuth: { username: bad('', 'u'), password: secret('s', 'p') } }),
      'LogOutput.loki(): basicAuth.username: Secret name "" is not the name of a Secret'],
    ['basic auth, empty key', () => LogOutput.http({ host: 'h', basicAuth: { username: secret('s', 'u'), password: bad('creds', '') } }),
      'LogOutput.http(): basicAuth.password: key "" is not a key of a Secret\'s data'],
    ['header, empty key', () => LogOutput.http({ host: 'h', secretHeaders: { Authorization: bad('tok', '') } }),
      'LogOutput.http(): secretHeaders["Authorization"]: key "" is not a key'],
    ['header, upper-case Secret name', () => LogOutput.http({ host: 'h', secretHeaders: { Authorization: bad('Tok', 'k') } }),
      'LogOutput.http(): secretHeaders["Authorization"]: Secret name "Tok" is not the name of a Secret'],
    ['search, key with a slash', () => LogOutput.elasticsearch({ host: 'es', basicAuth: { username: bad('creds', 'a/b'), password: secret('s', 'p') } }),
      'LogOutput.elasticsearch(): basicAuth.username: key "a/b" is not a key'],
  ])('%s', (_, make, message) => {
    expect(make).toThrow(message);
  });
});

// ---------------------------------------------------------------------------------------------
// 1. Fluentd's /tmp is a directory Ruby's Dir.tmpdir accepts

/**
 * The mode of an emptyDir's root as the kubelet makes it (kubernetes pkg/volume/emptydir/
 * empty_dir.go): a directory chmod'ed to `perm` 0777; with `medium: Memory` a tmpfs mounted with
 * only `size=`/`noswap` options, whose root keeps tmpfs's default mode 1777.
 */
function emptyDirRootMode(emptyDir: { medium?: string }): number {
  return emptyDir.medium === 'Memory' ? 0o1777 : 0o777;
}

/** Whether a permission bit is set. */
// eslint-disable-next-line no-bitwise
const bit = (mode: number, b: number) => (mode & b) !== 0;

/** ruby/tmpdir lib/tmpdir.rb `Dir.tmpdir`: a world-writable directory without the sticky bit is skipped. */
function rubyAcceptsTmpdir(mode: number): boolean {
  const worldWritable = bit(mode, 0o002);
  const sticky = bit(mode, 0o1000);
  return !(worldWritable && !sticky);
}

describe('1. Fluentd starts: its /tmp passes Dir.tmpdir', () => {
  test('the /tmp volume is one Ruby accepts (a disk emptyDir, 0777 without the sticky bit, is not)', () => {
    expect(rubyAcceptsTmpdir(0o777)).toBe(false);
    const { chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', agent: LogAgent.fluentd() });
    const m = manifestOf(Testing.synth(chart), 'Deployment');
    const agent = containerOf(m, 'log-agent');
    const tmpMount = agent.volumeMounts.find((vm: any) => vm.mountPath === '/tmp');
    const volume = podSpecOf(m).volumes.find((v: any) => v.name === tmpMount.name);
    expect(volume.emptyDir).toBeDefined();
    expect(rubyAcceptsTmpdir(emptyDirRootMode(volume.emptyDir))).toBe(true);
    // TMPDIR/TMP/TEMP would be tried first (Tmpname::TMPDIR_CANDIDATES): none points elsewhere
    expect((agent.env ?? []).map((e: any) => e.name)).not.toEqual(expect.arrayContaining(['TMPDIR']));
    // small: the pages count toward the agent's memory limit
    expect(volume.emptyDir.sizeLimit).toBe('16Mi');
  });
});

// ---------------------------------------------------------------------------------------------
// 3. TLS verifies the host name wherever it verifies the chain, in every agent

describe('3. TLS: chain verification always comes with host-name verification', () => {
  const TLS_OUTPUTS = {
    forward: () => LogOutput.forward({ host: 'fluentd.logging', tls: true }),
    http: () => LogOutput.http({ host: 'logs.example.com' }),
    loki: () => LogOutput.loki({ host: 'loki.monitoring', tls: true }),
    elasticsearch: () => LogOutput.elasticsearch({ host: 'es.logging' }),
    opensearch: () => LogOutput.opensearch({ host: 'os.logging' }),
  };
  test.each(Object.keys(TLS_OUTPUTS))('Fluent Bit %s: tls.verify On and tls.verify_hostname On (off by default: src/flb_output.c v5.1.1, as v3.2.10)', (type) => {
    const { text } = render('fluentBit', TLS_OUTPUTS[type as keyof typeof TLS_OUTPUTS]());
    const out = parseFluentBitConf(text).find(s => s.name === 'OUTPUT')!.props;
    expect({ tls: out.tls, verify: out['tls.verify'], hostname: out['tls.verify_hostname'] })
      .toEqual({ tls: ['On'], verify: ['On'], hostname: ['On'] });
  });

  test.each(Object.keys(TLS_OUTPUTS).filter(t => t !== 'forward'))('Vector %s: verify_certificate and verify_hostname', (type) => {
    const { text, files } = render('vector', TLS_OUTPUTS[type as keyof typeof TLS_OUTPUTS]());
    expect(vectorRead(text, files).sinks.output.tls).toEqual({ verify_certificate: true, verify_hostname: true });
  });

  test.each([
    // out_forward: transport tls verifies the chain; tls_verify_hostname (default true) the name
    ['forward', 'tls_verify_hostname', 'true'],
    // out_http: tls_verify_mode peer; Net::HTTP checks the host name of a verified peer
    ['http', 'tls_verify_mode', 'peer'],
    // fluent-plugin-grafana-loki: insecure_tls false keeps Net::HTTP's verification (chain and name)
    ['loki', 'insecure_tls', 'false'],
    ['elasticsearch', 'ssl_verify', 'true'],
    ['opensearch', 'ssl_verify', 'true'],
  ])('Fluentd %s: %s %s', (type, key, value) => {
    const { text, env } = render('fluentd', TLS_OUTPUTS[type as keyof typeof TLS_OUTPUTS]());
    const match = parseFluentConf(text).find(d => d.name === 'match')!;
    expect(fluentValue(match.params[key], env)).toBe(value);
  });
});

// ---------------------------------------------------------------------------------------------
// 5. Vector tells every file apart, whatever its first line

/**
 * The two strategies of vector 0.54 (src/sources/file.rs `FingerprintConfig`,
 * lib/file-source-common/src/fingerprinter.rs): `checksum` over the first `lines` (default 1)
 * complete lines, none until they exist; `device_and_inode` from the file's identity.
 */
function vectorFingerprint(strategy: any, file: { dev: number; ino: number; content: string }): string | undefined {
  if (strategy?.strategy === 'device_and_inode') return `${file.dev}:${file.ino}`;
  const lines = strategy?.lines ?? 1;
  const parts = file.content.split('\n');
  if (parts.length <= lines) return undefined; // not enough complete lines: not read at all
  return `checksum:${parts.slice(0, lines).join('\n')}`;
}

test('5. Vector: the fingerprint neither skips a file without a complete first line nor merges files with equal first lines', () => {
  const { text } = render('vector', LogOutput.stdout());
  const source = parseYaml(text).sources.app_logs;
  // one of the strategies 0.54 has
  expect(['checksum', 'device_and_inode']).toContain(source.fingerprint?.strategy ?? 'checksum');
  const files = [
    { dev: 1, ino: 10, content: 'starting server v1.2\nrequest a\n' },
    { dev: 1, ino: 11, content: 'starting server v1.2\nrequest b\n' }, // the same first line after a restart
    { dev: 1, ino: 12, content: 'partial line, no newline yet' },
  ];
  const prints = files.map(f => vectorFingerprint(source.fingerprint, f));
  expect(prints.every(p => p !== undefined)).toBe(true);
  expect(new Set(prints).size).toBe(files.length);
});

// ---------------------------------------------------------------------------------------------
// 6. The agent can read files the app writes 0640 / 0600, in the documented ways

interface Proc { uid: number; gid: number; groups: number[] }
interface File { uid: number; gid: number; mode: number }

/** POSIX read permission (owner, then group incl. supplementary, then others). */
function canRead(p: Proc, f: File): boolean {
  if (p.uid === f.uid) return bit(f.mode, 0o400);
  if (p.gid === f.gid || p.groups.includes(f.gid)) return bit(f.mode, 0o040);
  return bit(f.mode, 0o004);
}

/**
 * A file the app creates in the log emptyDir, and the agent process, as the kubelet sets them up:
 * with a pod fsGroup the volume root gets that group and the setgid bit (pkg/volume/
 * volume_linux.go SetVolumeOwnership), so new files get the fsGroup; every container gets the
 * fsGroup as a supplementary group.
 */
function setup(extra: Partial<ConstructorParameters<typeof WithLogAgent>[2]>, fsGroup: number | undefined, mode: number) {
  const { chart } = newChart();
  const workload = new kplus.Deployment(chart, 'web', {
    containers: [APP_CONTAINER], ...(fsGroup !== undefined ? { securityContext: { fsGroup } } : {}),
  });
  new WithLogAgent(chart, 'logs', { workload, kubernetesVersion: '1.29', ...extra });
  const m = manifestOf(Testing.synth(chart), 'Deployment');
  const pod = podSpecOf(m);
  const app = containerOf(m, 'app').securityContext;
  const agent = containerOf(m, 'log-agent').securityContext;
  const podFsGroup: number | undefined = pod.securityContext?.fsGroup;
  const file: File = { uid: app.runAsUser, gid: podFsGroup ?? app.runAsGroup, mode };
  const proc: Proc = { uid: agent.runAsUser, gid: agent.runAsGroup, groups: podFsGroup !== undefined ? [podFsGroup] : [] };
  return { file, proc, agent };
}

describe('6. reading the app\'s log files', () => {
  test('0644 files are readable by default; 0640 and 0600 are not (the silent loss the README warns about)', () => {
    expect(canRead(setup({}, undefined, 0o644).proc, setup({}, undefined, 0o644).file)).toBe(true);
    const s = setup({}, undefined, 0o640);
    expect(canRead(s.proc, s.file)).toBe(false);
  });

  test('a pod fsGroup makes 0640 files readable without any option', () => {
    const s = setup({}, 2000, 0o640);
    expect(s.file.gid).toBe(2000);
    expect(canRead(s.proc, s.file)).toBe(true);
  });

  test("agentGroup: the app's gid makes 0640 files readable", () => {
    const s = setup({ agentGroup: APP_CONTAINER.securityContext!.group! }, undefined, 0o640);
    expect(s.agent.runAsGroup).toBe(1000);
    expect(s.agent.runAsUser).toBe(65532);
    expect(canRead(s.proc, s.file)).toBe(true);
  });

  test("agentUser: the app's uid makes 0600 files readable (still non-root)", () => {
    expect(canRead(setup({ agentGroup: 1000 }, 2000, 0o600).proc, setup({ agentGroup: 1000 }, 2000, 0o600).file)).toBe(false);
    const s = setup({ agentUser: 1000 }, undefined, 0o600);
    expect(s.agent).toMatchObject({ runAsUser: 1000, runAsNonRoot: true });
    expect(canRead(s.proc, s.file)).toBe(true);
  });

  test.each([
    [{ agentUser: 0 }, "agentUser 0 is not a non-root uid; use an integer from 1 to 2147483647 (e.g. the app's uid)."],
    [{ agentUser: 1.5 }, 'agentUser 1.5 is not a non-root uid'],
    [{ agentGroup: -1 }, "agentGroup -1 is not a gid; use an integer from 0 to 2147483647 (e.g. the app's gid)."],
  ])('%o is refused', (props, message) => {
    const { chart } = newChart();
    expect(() => new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), ...props })).toThrow(`${WHO}: ${message}`);
  });
});

// ---------------------------------------------------------------------------------------------
// 7. The log emptyDir has a size limit

describe('7. the log emptyDir has a sizeLimit', () => {
  const logVolume = (props: Partial<ConstructorParameters<typeof WithLogAgent>[2]> = {}) => {
    const { chart } = newChart();
    new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', ...props });
    return podSpecOf(manifestOf(Testing.synth(chart), 'Deployment')).volumes.find((v: any) => v.name === 'log-agent-logs');
  };
  test('1Gi by default, overridable', () => {
    expect(logVolume().emptyDir).toEqual({ sizeLimit: '1Gi' });
    expect(logVolume({ logVolumeSizeLimit: Size.mebibytes(300) }).emptyDir).toEqual({ sizeLimit: '300Mi' });
    expect(logVolume({ logVolumeSizeLimit: Size.gibibytes(5) }).emptyDir).toEqual({ sizeLimit: '5Gi' });
  });
  test('less than 1 MiB is refused', () => {
    expect(() => logVolume({ logVolumeSizeLimit: Size.kibibytes(512) })).toThrow(`${WHO}: logVolumeSizeLimit must be at least 1 MiB (got 0 MiB), e.g. Size.gibibytes(1).`);
  });
});

// ---------------------------------------------------------------------------------------------
// Every key the library writes is one the pinned agent defines

/**
 * Fluent Bit v5.1.1 keys (compared without case, as Fluent Bit does). Sources: [SERVICE]
 * src/flb_config.c `service_configs` (names in include/fluent-bit/flb_config.h); common input,
 * filter and output properties src/flb_input.c, src/flb_filter.c, src/flb_output.c (their config
 * maps and `prop_key_check`) plus `name`; TLS src/flb_output.c `prop_key_check`; plugins: their
 * `config_map`s. Re-read at v5.1.1 from those files (the lists of v3.2.10 gained keys, lost none
 * the library writes); `npm run test:agents` also runs every variant through `--dry-run`.
 */
const FLUENT_BIT_KEYS = {
  service: ['flush', 'flush.adaptive', 'flush.adaptive.min_interval', 'flush.adaptive.max_interval', 'flush.adaptive.low_pressure',
    'flush.adaptive.medium_pressure', 'flush.adaptive.high_pressure', 'flush.adaptive.up_steps', 'flush.adaptive.down_steps', 'grace',
    'json.convert_nan_to_null', 'security.fips_mode', 'daemon', 'log_file', 'parsers_file', 'plugins_file', 'log_level', 'http_server',
    'http_listen', 'http_port', 'health_check', 'hc_errors_count', 'hc_retry_failure_count', 'hc_period', 'dns.mode', 'dns.resolver',
    'dns.prefer_ipv4', 'dns.prefer_ipv6', 'storage.path', 'storage.sync', 'storage.metrics', 'storage.checksum', 'storage.backlog.mem_limit',
    'storage.backlog.flush_on_shutdown', 'storage.max_chunks_up', 'storage.delete_irrecoverable_chunks', 'storage.trim_files', 'storage.type',
    'storage.inherit', 'storage.keep.rejected', 'storage.rejected.path', 'storage.rejected.limit', 'coro_stack_size', 'multiline_buffer_limit',
    'scheduler.cap', 'scheduler.base', 'json.escape_unicode', 'streams_file', 'sp.convert_from_str_to_num', 'enable_chunk_trace',
    'windows.maxstdio', 'hot_reload', 'hot_reload.ensure_thread_safety', 'hot_reload.timeout'],
  input: ['name', 'tag', 'log_level', 'log_suppress_interval', 'routable', 'alias', 'mem_buf_limit', 'listen', 'host', 'port', 'ipv6',
    'storage.type', 'threaded', 'storage.pause_on_chunks_overlimit', 'rate_gate', 'rate_gate.backpressure', 'rate_gate.max_bytes',
    'rate_gate.max_records', 'rate_gate.resume_ratio', 'rate_window', 'thread.ring_buffer.capacity', 'thread.ring_buffer.window'],
  filter: ['name', 'match', 'match_regex', 'alias', 'log_level', 'log_suppress_interval'],
  output: ['name', 'match', 'match_regex', 'alias', 'log_level', 'log_suppress_interval', 'host', 'port', 'ipv6', 'retry_limit',
    'storage.total_limit_size', 'workers',
    // the network settings of every output with an upstream: src/flb_upstream.c `upstream_net[]` config map
    'net.connect_timeout', 'net.connect_timeout_log_error', 'net.io_timeout', 'net.keepalive', 'net.keepalive_idle_timeout',
    'net.keepalive_max_recycle', 'net.max_worker_connections', 'net.source_address'],
  tls: ['tls', 'tls.verify', 'tls.debug', 'tls.ca_file', 'tls.ca_path', 'tls.crt_file', 'tls.key_file', 'tls.key_passwd', 'tls.vhost',
    'tls.verify_hostname', 'tls.ciphers', 'tls.min_version', 'tls.max_version'],
  plugins: {
    // plugins/in_tail/tail.c
    tail: ['path', 'exclude_path', 'key', 'read_from_head', 'read_newly_discovered_files_from_head', 'refresh_interval', 'watcher_interval',
      'progress_check_interval', 'progress_check_interval_nsec', 'rotate_wait', 'docker_mode', 'docker_mode_flush', 'docker_mode_parser',
      'path_key', 'offset_key', 'ignore_older', 'ignore_active_older_files', 'buffer_chunk_size', 'buffer_max_size', 'static_batch_size',
      'event_batch_size', 'skip_long_lines', 'exit_on_eof', 'skip_empty_lines', 'truncate_long_lines', 'file_cache_advise', 'inotify_watcher',
      'parser', 'tag_regex', 'db', 'db.sync', 'db.locking', 'db.journal_mode', 'db.compare_filename', 'multiline', 'multiline_flush',
      'parser_firstline', 'multiline.parser', 'unicode.encoding', 'generic.encoding'],
    // plugins/filter_record_modifier/filter_modifier.c
    record_modifier: ['record', 'remove_key', 'allowlist_key', 'whitelist_key', 'uuid_key'],
    // plugins/out_stdout/stdout.c
    stdout: ['format', 'json_date_format', 'json_date_key'],
    // plugins/out_forward/forward.c
    forward: ['time_as_integer', 'retain_metadata_in_forward_mode', 'shared_key', 'self_hostname', 'empty_shared_key', 'send_options',
      'require_ack_response', 'username', 'password', 'unix_path', 'upstream', 'tag', 'compress', 'fluentd_compat', 'add_option'],
    // plugins/out_http/http.c (the oauth2.* keys left out: the library writes none)
    http: ['proxy', 'allow_duplicated_headers', 'log_response_payload', 'http_user', 'http_passwd', 'aws_auth', 'aws_service', 'header_tag',
      'format', 'json_date_format', 'json_date_key', 'compress', 'header', 'uri', 'gelf_timestamp_key', 'gelf_host_key',
      'gelf_short_message_key', 'gelf_full_message_key', 'gelf_level_key', 'body_key', 'headers_key', 'http_method',
      'http.read_idle_timeout', 'http.response_timeout'],
    // plugins/out_loki/loki.c
    loki: ['uri', 'tenant_id', 'tenant_id_key', 'tenant_id_key_error_handling', 'labels', 'structured_metadata', 'structured_metadata_map_keys',
      'auto_kubernetes_labels', 'drop_single_key', 'label_keys', 'remove_keys', 'line_format', 'label_map_path', 'http_user', 'http_passwd',
      'buffer_size', 'bearer_token', 'header', 'compress'],
    // plugins/out_es/es.c
    es: ['index', 'type', 'suppress_type_name', 'http_user', 'http_passwd', 'http_api_key', 'compress', 'cloud_id', 'cloud_auth', 'aws_auth',
      'aws_region', 'aws_sts_endpoint', 'aws_role_arn', 'aws_external_id', 'aws_service_name', 'aws_profile', 'logstash_format',
      'logstash_prefix', 'logstash_prefix_separator', 'logstash_prefix_key', 'logstash_dateformat', 'time_key', 'time_key_format',
      'time_key_nanos', 'include_tag_key', 'tag_key', 'buffer_size', 'path', 'pipeline', 'generate_id', 'write_operation', 'id_key',
      'replace_dots', 'current_time_index', 'trace_output', 'trace_error', 'upstream'],
    // plugins/out_opensearch/opensearch.c
    opensearch: ['index', 'type', 'suppress_type_name', 'http_user', 'http_passwd', 'aws_auth', 'aws_region', 'aws_profile',
      'aws_sts_endpoint', 'aws_role_arn', 'aws_external_id', 'aws_service_name', 'logstash_format', 'logstash_prefix',
      'logstash_prefix_separator', 'logstash_prefix_key', 'logstash_dateformat', 'time_key', 'time_key_format', 'time_key_nanos',
      'include_tag_key', 'tag_key', 'buffer_size', 'path', 'pipeline', 'generate_id', 'write_operation', 'id_key', 'replace_dots',
      'current_time_index', 'trace_output', 'trace_error', 'compress'],
  } as Record<string, string[]>,
};

const ALL_OUTPUTS = {
  stdout: () => LogOutput.stdout(),
  forward: () => LogOutput.forward({ host: 'fluentd.logging', tls: true }),
  http: () => LogOutput.http({ host: 'logs.example.com', uri: '/ingest', secretHeaders: { 'X-Api-Key': secret('tok', 'header') }, basicAuth }),
  loki: () => LogOutput.loki({ host: 'loki.monitoring', labels: { team: 'shop' }, tenantId: 'shop', basicAuth, tls: true }),
  elasticsearch: () => LogOutput.elasticsearch({ host: 'es.logging', index: 'web', basicAuth }),
  opensearch: () => LogOutput.opensearch({ host: 'os.logging', tls: false }),
  // issue 39: dated indices (Logstash_Format, logstash_format, Vector's template)
  elasticsearchDaily: () => LogOutput.elasticsearch({ host: 'es.logging', index: 'web', indexDateFormat: '%Y.%m.%d', basicAuth }),
  opensearchDaily: () => LogOutput.opensearch({ host: 'os.logging', index: 'web', indexDateFormat: '%Y-%m' }),
};

/** Fluent Bit's config for an output in both formats, as WithLogAgent asks for it: file name, args and text. */
function fluentBitBoth(output: LogOutput, multilineParsers: FluentBitMultilineParser[] = [], sources?: { capture?: string; podLogsEnv?: string }) {
  const secrets = outputSecretEnv(output._config);
  const one = (configFormat?: FluentBitConfigFormat) => LogAgent.fluentBit({ multilineParsers, ...(configFormat ? { configFormat } : {}) })._render({
    who: new Where(WHO),
    logDirectory: '/var/log/app',
    filePattern: '*.log',
    logVolumeSizeLimitMiB: 1024,
    configDirectory: '/etc/log-agent',
    output: output._config,
    secretVars: secrets.vars,
    ...(sources ? { sources } : {}),
  });
  return { classic: one(), yaml: one(FluentBitConfigFormat.YAML), explicitClassic: one(FluentBitConfigFormat.CLASSIC) };
}
const sectionsOf = (s: ReturnType<typeof parseFluentBitConf>) => s.map(({ name, props }) => ({ name, props }));

describe("Fluent Bit's YAML format: the same config as the classic one (configFormat)", () => {
  test.each(Object.keys(ALL_OUTPUTS))('%s: every section (in order), key and value; file fluent-bit.yaml', (type) => {
    for (const ml of [[], [FluentBitMultilineParser.JAVA, FluentBitMultilineParser.GO]]) {
      const { classic, yaml, explicitClassic } = fluentBitBoth(ALL_OUTPUTS[type as keyof typeof ALL_OUTPUTS](), ml);
      expect(Object.keys(classic.files)).toEqual(['fluent-bit.conf']);
      expect(classic.args).toEqual(['--config', '/etc/log-agent/fluent-bit.conf']);
      expect(explicitClassic.files).toEqual(classic.files);
      expect(Object.keys(yaml.files)).toEqual(['fluent-bit.yaml']);
      expect(yaml.args).toEqual(['--config', '/etc/log-agent/fluent-bit.yaml']);
      const read = sectionsOf(parseFluentBitYaml(yaml.files['fluent-bit.yaml']));
      expect(read).toEqual(sectionsOf(parseFluentBitConf(classic.files['fluent-bit.conf'])));
      expect(read.map(x => x.name)).toEqual(['SERVICE', 'INPUT', 'FILTER', 'OUTPUT']);
      // the keys given more than once are lists (each entry one property, as a repeated classic line)
      expect(yaml.files['fluent-bit.yaml']).toMatch(/^ {6}record:\n {8}- "pod \$\{POD_NAME\}"$/m);
      // everything else of the agent is the same
      const rest = (r: typeof classic) => ({ ...r, files: undefined, args: undefined });
      expect(rest(yaml)).toEqual(rest(classic));
    }
  });

  test('with the other sources (captureStdout, podLogs): their inputs too, in order', () => {
    const { classic, yaml } = fluentBitBoth(ALL_OUTPUTS.loki(), [], { capture: '/var/log/app/.stdout/*', podLogsEnv: 'POD_LOG_PATH' });
    const read = sectionsOf(parseFluentBitYaml(yaml.files['fluent-bit.yaml']));
    expect(read).toEqual(sectionsOf(parseFluentBitConf(classic.files['fluent-bit.conf'])));
    expect(read.map(x => x.name)).toEqual(['SERVICE', 'INPUT', 'INPUT', 'INPUT', 'FILTER', 'OUTPUT']);
  });

  test('every value the factories accept reads back the same from both formats (property)', () => {
    let compared = 0;
    for (const arb of Object.values(OUTPUT_ARBS)) {
      fc.assert(fc.property(arb, (make) => {
        let output: LogOutput;
        let both;
        try {
          output = make();
          both = fluentBitBoth(output);
        } catch {
          return; // refused by the factory or by Fluent Bit's renderer: the same refusal for both formats
        }
        compared++;
        expect(sectionsOf(parseFluentBitYaml(both.yaml.files['fluent-bit.yaml']))).toEqual(sectionsOf(parseFluentBitConf(both.classic.files['fluent-bit.conf'])));
      }), { numRuns: 60 });
    }
    expect(compared).toBeGreaterThan(50);
  });

  test('a format that is not one is refused', () => {
    expect(() => LogAgent.fluentBit({ configFormat: 'toml' as any }))
      .toThrow('LogAgent.fluentBit(): configFormat "toml" is not a config format of Fluent Bit; use FluentBitConfigFormat values (classic, yaml).');
  });

  test('the reader refuses what Fluent Bit would read otherwise or the library never writes', () => {
    expect(() => parseFluentBitYaml('service:\n  flush: 1\n  Flush: 2\npipeline:\n  inputs: []\n')).toThrow('given twice');
    expect(() => parseFluentBitYaml('env:\n  A: b\npipeline:\n  inputs: []\n')).toThrow('top-level key env');
    expect(() => parseFluentBitYaml('pipeline:\n  outputs:\n    - name: x\n      a: &x "1"\n      b: *x\n')).toThrow(/anchor|alias/);
    expect(() => parseFluentBitYaml('pipeline:\n  outputs:\n    - match: "*"\n')).toThrow('has no name');
  });
});

describe('every config key the library emits is one the pinned agent defines', () => {
  test.each([...Object.keys(ALL_OUTPUTS), STDOUT_SOURCES_CASE])('Fluent Bit 5.1.1, %s', (type) => {
    const sections = parseFluentBitConf(renderCase('fluentBit', type).text);
    for (const s of sections) {
      const kind = s.name.toLowerCase();
      const plugin = kind === 'service' ? undefined : s.props.name[0];
      const allowed = new Set([
        ...(kind === 'service' ? FLUENT_BIT_KEYS.service : []),
        ...(kind === 'input' ? [...FLUENT_BIT_KEYS.input, ...FLUENT_BIT_KEYS.tls] : []),
        ...(kind === 'filter' ? FLUENT_BIT_KEYS.filter : []),
        ...(kind === 'output' ? [...FLUENT_BIT_KEYS.output, ...FLUENT_BIT_KEYS.tls] : []),
        ...(plugin ? FLUENT_BIT_KEYS.plugins[plugin] ?? [] : []),
      ]);
      if (plugin) expect({ plugin, known: plugin in FLUENT_BIT_KEYS.plugins }).toEqual({ plugin, known: true });
      for (const key of Object.keys(s.props)) {
        expect({ section: s.name, plugin, key, defined: allowed.has(key) }).toEqual({ section: s.name, plugin, key, defined: true });
      }
    }
  });

  /**
   * Vector's config structs (serde names) at v0.57.0, the pinned tag, each the same at v0.54.0, the
   * lowest release of the range (the option names of website/cue/reference/components/<kind>/generated/<type>.cue
   * at both tags): global data_dir lib/vector-core/src/config/global_options.rs; api src/config/api.rs
   * (0.55 removed graphql and playground); file source src/sources/file.rs (FingerprintConfig tag
   * `strategy`); http_server source src/sources/http_server.rs SimpleHttpConfig; remap
   * src/transforms/remap.rs; sinks src/sinks/{console,http,loki,elasticsearch,blackhole}/config.rs,
   * bulk src/sinks/elasticsearch/config.rs BulkConfig; tls lib/vector-core/src/tls/settings.rs; auth
   * src/http.rs (tag `strategy`, basic: user, password); request src/sinks/util/http.rs
   * RequestConfig; encoding lib/codecs/src/encoding (tag `codec`; framing tag `method`). Per
   * component type: a key of another type's struct is an unknown field to Vector.
   */
  const TLS = { verify_certificate: true, verify_hostname: true };
  const AUTH = { strategy: true, user: true, password: true };
  const SINK = { type: true, inputs: true, acknowledgements: { enabled: true } };
  // secret backends: src/secrets/mod.rs (tag `type`), directory src/secrets/directory.rs
  const VECTOR_GLOBAL: Record<string, unknown> = {
    data_dir: true, api: { enabled: true, address: true }, secret: { '*': { type: true, path: true, remove_trailing_whitespace: true } },
  };
  const VECTOR_KEYS: Record<string, Record<string, unknown>> = {
    sources: {
      file: {
        type: true,
        include: true,
        exclude: true,
        read_from: true,
        max_line_bytes: true,
        fingerprint: { strategy: true, lines: true, ignored_header_bytes: true },
        // src/sources/file.rs `multiline`, src/sources/util/multiline_config.rs MultilineConfig (v0.57.0)
        multiline: { start_pattern: true, condition_pattern: true, mode: true, timeout_ms: true },
      },
      http_server: { type: true, address: true, method: true, path: true, strict_path: true, response_code: true },
    },
    transforms: { remap: { type: true, inputs: true, source: true } },
    sinks: {
      console: { ...SINK, target: true, encoding: { codec: true } },
      http: { ...SINK, uri: true, method: true, encoding: { codec: true }, framing: { method: true }, request: { headers: '*' }, auth: AUTH, tls: TLS },
      loki: { ...SINK, endpoint: true, encoding: { codec: true }, labels: '*', tenant_id: true, auth: AUTH, tls: TLS },
      elasticsearch: { ...SINK, endpoints: true, mode: true, api_version: true, bulk: { index: true, action: true }, auth: AUTH, tls: TLS },
      blackhole: { ...SINK, print_interval_secs: true, rate: true },
    },
  };
  function walk(obj: any, allowed: any, at: string[], bad: string[]): void {
    for (const [k, v] of Object.entries(obj)) {
      const rule = allowed === '*' ? '*' : allowed[k] ?? allowed['*'];
      if (rule === undefined) { bad.push([...at, k].join('.')); continue; }
      if (rule === '*' || rule === true) continue;
      if (v && typeof v === 'object' && !Array.isArray(v)) walk(v, rule, [...at, k], bad);
    }
  }
  test.each([...Object.keys(ALL_OUTPUTS).filter(t => t !== 'forward'), STDOUT_SOURCES_CASE])('Vector 0.57.0 (and 0.54.0), %s', (type) => {
    const { text, env, files } = renderCase('vector', type);
    const config = vectorRead(text, files, type === STDOUT_SOURCES_CASE ? env : undefined);
    const bad: string[] = [];
    const { sources, transforms, sinks, ...global } = config;
    walk(global, VECTOR_GLOBAL, [], bad);
    for (const [kind, components] of Object.entries<any>({ sources, transforms, sinks })) {
      for (const [id, c] of Object.entries<any>(components)) {
        const keys = VECTOR_KEYS[kind][c.type];
        if (keys === undefined) bad.push(`${kind}.${id}: type ${c.type}`);
        else walk(c, keys, [kind, id], bad);
      }
    }
    expect(bad).toEqual([]);
  });

  /**
   * Fluentd v1.19.3 `config_param`s and `config_section`s (lib/fluent/plugin/*.rb at the tag;
   * buffer: output.rb `<buffer>` and buffer.rb; `@type`, `@id` are system directives), and the
   * output gems: fluent-plugin-grafana-loki (grafana/loki clients/cmd/fluentd/lib/fluent/plugin/out_loki.rb),
   * fluent-plugin-elasticsearch v6.0.0 and fluent-plugin-opensearch v1.1.6 (lib/fluent/plugin/out_*.rb).
   */
  const SYSTEM = ['@type', '@id', '@label', '@log_level'];
  const FLUENTD_KEYS: Record<string, string[]> = {
    'source/tail': ['path', 'path_delimiter', 'glob_policy', 'tag', 'exclude_path', 'rotate_wait', 'pos_file', 'pos_file_compaction_interval',
      'read_from_head', 'refresh_interval', 'read_lines_limit', 'read_bytes_limit_per_second', 'multiline_flush_interval',
      'emit_unmatched_lines', 'enable_watch_timer', 'enable_stat_watcher', 'encoding', 'from_encoding', 'path_key', 'open_on_every_update',
      'limit_recently_modified', 'skip_refresh_on_startup', 'ignore_repeated_permission_error', 'path_timezone', 'follow_inodes', 'max_line_size'],
    'source/monitor_agent': ['bind', 'port', 'tag', 'emit_interval', 'include_config', 'include_retry', 'include_debug_info'],
    'filter/record_transformer': ['remove_keys', 'keep_keys', 'renew_record', 'renew_time_key', 'enable_ruby', 'auto_typecast'],
    // fluent-plugin-concat lib/fluent/plugin/filter_concat.rb (2.5.0 and later: the CRI mode)
    'filter/concat': ['key', 'separator', 'n_lines', 'multiline_start_regexp', 'multiline_end_regexp', 'continuous_line_regexp',
      'stream_identity_key', 'flush_interval', 'timeout_label', 'use_first_timestamp', 'partial_key', 'partial_value', 'keep_partial_key',
      'use_partial_metadata', 'partial_metadata_format', 'keep_partial_metadata', 'use_partial_cri_logtag', 'partial_cri_logtag_key',
      'partial_cri_stream_key'],
    // lib/fluent/plugin/parser_regexp.rb and parser.rb (time_format: TimeParser's)
    'parse/regexp': ['expression', 'ignorecase', 'multiline', 'time_key', 'time_format', 'time_type', 'keep_time_key', 'null_value_pattern',
      'null_empty_string', 'estimate_current_event', 'types', 'timezone', 'localtime', 'utc'],
    'match/stdout': ['use_logger'],
    'match/forward': ['transport', 'send_timeout', 'connect_timeout', 'heartbeat_type', 'heartbeat_interval', 'recover_wait', 'hard_timeout',
      'phi_threshold', 'phi_failure_detector', 'require_ack_response', 'ack_response_timeout', 'read_interval_msec', 'read_length',
      'expire_dns_cache', 'dns_round_robin', 'ignore_network_errors_at_startup', 'verify_connection_at_startup', 'compress', 'tls_version',
      'tls_ciphers', 'tls_insecure_mode', 'tls_allow_self_signed_cert', 'tls_verify_hostname', 'tls_ca_cert_path', 'tls_cert_path',
      'tls_client_cert_path', 'tls_client_private_key_path', 'tls_client_private_key_passphrase', 'tls_cert_thumbprint',
      'tls_cert_logical_store_name', 'tls_cert_use_enterprise_store', 'keepalive', 'keepalive_timeout'],
    'match/http': ['endpoint', 'http_method', 'proxy', 'content_type', 'json_array', 'headers', 'headers_from_placeholders', 'compress',
      'allowed_hosts', 'open_timeout', 'read_timeout', 'ssl_timeout', 'reuse_connections', 'tls_ca_cert_path', 'tls_client_cert_path',
      'tls_private_key_path', 'tls_private_key_passphrase', 'tls_verify_mode', 'tls_version', 'tls_ciphers', 'error_response_as_unrecoverable',
      'retryable_response_codes'],
    'match/loki': ['url', 'username', 'password', 'bearer_token_file', 'cert', 'key', 'ca_cert', 'ciphers', 'min_version', 'insecure_tls',
      'custom_headers', 'compress', 'tenant', 'extra_labels', 'line_format', 'extract_kubernetes_labels', 'remove_keys', 'drop_single_key',
      'include_thread_label'],
    'match/elasticsearch': ['host', 'port', 'scheme', 'ssl_verify', 'user', 'password', 'index_name', 'suppress_type_name', 'request_timeout',
      'include_timestamp', 'logstash_format', 'logstash_prefix', 'logstash_prefix_separator', 'logstash_dateformat'],
    'match/opensearch': ['host', 'port', 'scheme', 'ssl_verify', 'user', 'password', 'index_name', 'suppress_type_name', 'request_timeout',
      'include_timestamp', 'logstash_format', 'logstash_prefix', 'logstash_prefix_separator', 'logstash_dateformat'],
    // lib/fluent/system_config.rb (the top-level <system> directive has no @type)
    'system': ['workers', 'restart_worker_interval', 'root_dir', 'log_level', 'suppress_repeated_stacktrace', 'ignore_repeated_log_interval',
      'ignore_same_log_interval', 'emit_error_log_interval', 'suppress_config_dump', 'log_event_verbose', 'without_source',
      'with_source_only', 'rpc_endpoint', 'enable_get_dump', 'process_name', 'strict_config_value', 'enable_msgpack_time_support',
      'disable_shared_socket', 'enable_input_metrics', 'enable_size_metrics', 'enable_jit', 'file_permission', 'dir_permission',
      'config_include_dir'],
    // buf_file.rb `path` (the file buffer's own parameter)
    'buffer': ['path', 'flush_at_shutdown', 'flush_mode', 'flush_interval', 'flush_thread_count', 'flush_thread_interval', 'flush_thread_burst_interval',
      'delayed_commit_timeout', 'overflow_action', 'retry_forever', 'retry_timeout', 'retry_max_times', 'retry_secondary_threshold',
      'retry_type', 'retry_wait', 'retry_exponential_backoff_base', 'retry_max_interval', 'retry_randomize', 'timekey', 'timekey_wait',
      'timekey_use_utc', 'timekey_zone', 'chunk_limit_size', 'total_limit_size', 'queue_limit_length', 'chunk_limit_records',
      'chunk_full_threshold', 'queued_chunks_limit_size', 'compress', 'decompression_size_limit', 'disable_chunk_backup'],
    'server': ['host', 'name', 'port', 'shared_key', 'username', 'password', 'standby', 'weight'],
    'auth': ['method', 'username', 'password', 'aws_service', 'aws_region', 'aws_role_arn'],
    'format': [],
    'parse': [],
    // record_transformer reads every key of <record> as a field name (conf.elements 'record')
    'record': ['*'],
  };
  const SECTIONS: Record<string, string[]> = {
    'source/tail': ['parse'],
    'match/stdout': ['format', 'buffer'],
    'match/forward': ['server', 'buffer'],
    'match/http': ['format', 'auth', 'buffer'],
    'match/loki': ['buffer'],
    'match/elasticsearch': ['buffer'],
    'match/opensearch': ['buffer'],
    'filter/record_transformer': ['record'],
  };
  test.each([...Object.keys(ALL_OUTPUTS), STDOUT_SOURCES_CASE])('Fluentd 1.19.3, %s', (type) => {
    const conf = parseFluentConf(renderCase('fluentd', type).text);
    const check = (d: FluentDirective, id: string) => {
      if (id === 'parse' && d.params['@type']?.raw === 'regexp') id = 'parse/regexp';
      const allowed = FLUENTD_KEYS[id];
      expect({ id, known: allowed !== undefined }).toEqual({ id, known: true });
      for (const key of Object.keys(d.params)) {
        const ok = allowed.includes('*') || SYSTEM.includes(key) || allowed.includes(key);
        expect({ id, key, defined: ok }).toEqual({ id, key, defined: true });
      }
      for (const child of d.children) {
        expect({ id, section: child.name, defined: (SECTIONS[id] ?? []).includes(child.name) }).toEqual({ id, section: child.name, defined: true });
        check(child, child.name);
      }
    };
    for (const d of conf) check(d, d.name === 'system' ? 'system' : `${d.name}/${d.params['@type'].raw}`);
  });

  /**
   * OpenTelemetry Collector v0.159.0 `mapstructure` names, the same at v0.165.0 (open-telemetry/opentelemetry-collector at
   * v0.159.0, and the modules of v0.165.0 from the Go module proxy, every `mapstructure` tag diffed: only keys the
   * library does not write were added (confighttp `keepalive` for `keep_alives_enabled`, exporterhelper partition
   * `cache_size`/`idle_timeout`, configgrpc `dialer_middleware`, memorylimiter `garbage_collector`): receiver/otlpreceiver/config.go, config/confignet, config/configgrpc, config/configtls,
   * internal/memorylimiter/config.go, exporter/otlpexporter/config.go
   * with exporterhelper TimeoutConfig, QueueBatchConfig (internal/queuebatch/config.go) and
   * config/configretry/backoff.go, service/config.go, service/pipelines/config.go,
   * service/telemetry/otelconftelemetry/config.go; contrib: extension/healthcheckextension/config.go,
   * processor/resourceprocessor with internal/coreinternal/attraction (key, value, action)).
   */
  const OTEL_KEYS = {
    extensions: { health_check: { endpoint: true, path: true } },
    receivers: { otlp: { protocols: { grpc: { endpoint: true }, http: { endpoint: true } } } },
    processors: {
      memory_limiter: { check_interval: true, limit_mib: true, spike_limit_mib: true, limit_percentage: true, spike_limit_percentage: true },
      resource: { attributes: true },
    },
    exporters: {
      // exporter/otlpexporter (type otlp_grpc since v0.144.0; `otlp` is its deprecated alias)
      otlp_grpc: {
        endpoint: true,
        tls: { insecure: true },
        headers: '*',
        timeout: true,
        compression: true,
        sending_queue: {
          enabled: true,
          num_consumers: true,
          queue_size: true,
          sizer: true,
          batch: { flush_timeout: true, sizer: true, min_size: true, max_size: true },
        },
        retry_on_failure: {
          enabled: true, initial_interval: true, max_interval: true, max_elapsed_time: true, multiplier: true, randomization_factor: true,
        },
      },
    },
    service: { extensions: true, telemetry: { metrics: { level: true } }, pipelines: '*' },
  };
  test("OpenTelemetry Collector 0.165.0, the tracer's config", () => {
    const { chart } = newChart();
    const workload = kplusWorkload(chart, 'Deployment');
    new WithTracer(chart, 'tracer', { workload, kubernetesVersion: '1.29', exporterEndpoint: 'otel-gateway.observability.svc:4317' });
    const configMap = Testing.synth(chart).find((m: any) => m.kind === 'ConfigMap' && m.metadata.name.includes('tracer'));
    const config = parseYaml(Object.values<string>(configMap.data)[0]);
    const bad: string[] = [];
    // A component ID is `type[/name]` (component/identifiable.go): `otlp_grpc/traces` is an
    // otlp_grpc exporter, checked against that exporter's keys.
    const { service, ...components } = config;
    for (const [kind, byId] of Object.entries<any>(components)) {
      const types = (OTEL_KEYS as any)[kind];
      if (types === undefined) { bad.push(kind); continue; }
      for (const [id, body] of Object.entries<any>(byId)) {
        const rule = types[id.split('/')[0]];
        if (rule === undefined) bad.push(`${kind}.${id}`);
        else if (rule !== true && body) walk(body, rule, [kind, id], bad);
      }
    }
    walk({ service }, { service: OTEL_KEYS.service }, [], bad);
    expect(bad).toEqual([]);
    for (const a of config.processors.resource.attributes) expect(Object.keys(a).every(k => ['key', 'value', 'action'].includes(k))).toBe(true);
    for (const p of Object.values<any>(config.service.pipelines)) expect(Object.keys(p).sort()).toEqual(['exporters', 'processors', 'receivers']);
  });
});

// ---------------------------------------------------------------------------
// Dated indices (issue 39): what index each agent writes for a record, read from its own config
// ---------------------------------------------------------------------------

/** C's strftime (glibc, through python3's time.strftime) of `format` at `epoch` seconds, UTC; undefined without python3. */
function cStrftime(format: string, epoch: number): string | undefined {
  const out = spawnSync('python3', ['-c', 'import sys,time;sys.stdout.write(time.strftime(sys.argv[1],time.gmtime(int(sys.argv[2]))))', format, String(epoch)], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout : undefined;
}

describe('indexDateFormat: each agent names the index of a record from its own time, <index>-<date>', () => {
  // 2026-12-01 23:59:59 UTC: the day the record was written, in UTC
  const AT = Date.UTC(2026, 11, 1, 23, 59, 59) / 1000;
  test.each([['elasticsearch', '%Y.%m.%d', 'web-2026.12.01'], ['opensearch', '%Y-%m', 'web-2026-12'], ['elasticsearch', '%Y.%m.%d-%H', 'web-2026.12.01-23']] as const)(
    '%s, %s: %s', (type, format, want) => {
      const output = LogOutput[type]({ host: 'es.logging', index: 'web', indexDateFormat: format });
      // Fluent Bit (plugins/out_es/es.c and out_opensearch: Logstash_Prefix, Logstash_Prefix_Separator, strftime(Logstash_DateFormat, gmtime))
      const fb = parseFluentBitConf(render('fluentBit', output).text).find(s => s.name === 'OUTPUT')!;
      const p = (k: string) => fb.props[k.toLowerCase()]?.[0];
      expect([p('Logstash_Format'), p('Index')]).toEqual(['On', undefined]);
      const fluentBitIndex = `${p('Logstash_Prefix')}${p('Logstash_Prefix_Separator')}${cStrftime(p('Logstash_DateFormat')!, AT)}`;
      // Vector (src/template.rs: the template's strftime items over the event's timestamp)
      const vectorTemplate = parseYaml(render('vector', output).text).sinks.output.bulk.index;
      const vectorIndex = cStrftime(vectorTemplate, AT);
      // Fluentd (out_elasticsearch.rb / out_opensearch.rb: logstash_prefix + logstash_prefix_separator + time.strftime(logstash_dateformat), utc_index)
      const match = parseFluentConf(render('fluentd', output).text).find(d => d.name === 'match')!;
      const v = (k: string) => fluentValue(match.params[k], {});
      expect([v('logstash_format'), match.params.index_name]).toEqual(['true', undefined]);
      const fluentdIndex = `${v('logstash_prefix')}${v('logstash_prefix_separator')}${cStrftime(v('logstash_dateformat'), AT)}`;
      if (cStrftime('%Y', AT) === undefined) return; // no python3: the keys above still hold
      expect({ fluentBitIndex, vectorIndex, fluentdIndex }).toEqual({ fluentBitIndex: want, vectorIndex: want, fluentdIndex: want });
    });

  test('formats the agents would write differently, or not as an index name, are refused with the fix', () => {
    for (const bad of ['%y', '%b', '%Y/%m', 'daily', '%%', '%Y %m', '{{ date }}', '%Y.%m.%d%z']) {
      expect(() => LogOutput.elasticsearch({ host: 'es', indexDateFormat: bad })).toThrow(/LogOutput.elasticsearch\(\): indexDateFormat .* is not a date format every agent writes the same way: .* e.g. '%Y.%m.%d'/);
    }
  });

  test('Fluent Bit\'s index buffers count the date: an es index of 140 characters with its date is refused, naming both', () => {
    const name = 'a'.repeat(129);
    expect(() => render('fluentBit', LogOutput.elasticsearch({ host: 'es', index: name, indexDateFormat: '%Y.%m.%d' })))
      .toThrow('with its date "%Y.%m.%d" (140 characters)');
    expect(() => render('fluentBit', LogOutput.elasticsearch({ host: 'es', index: 'a'.repeat(128), indexDateFormat: '%Y.%m.%d' }))).not.toThrow();
  });
});
