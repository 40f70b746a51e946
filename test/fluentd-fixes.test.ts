/**
 * Issue 25, point 3: what the real Fluentd v1.19.3 did with the library's config (run from
 * source, see docs/log-agents.md) and how the config now handles each case. The expected values
 * come from Fluentd's and its plugins' sources at the pinned tags, named beside each test, and
 * from the embedded Ruby as Ruby evaluates it (test/util/fluentd-conf.ts `evalRuby`).
 */
import { Duration, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { LogAgent, LogOutput, WithLogAgent } from '../src';
import { kplusWorkload, manifestOf, newChart } from './util/fixtures';
import { FluentDirective, fluentValue, parseFluentConf } from './util/fluentd-conf';
import { HTTP_RETRYABLE } from '../src/agents/fluentd/config';

const PLUGIN_IMAGE = 'registry.local/fluentd-plugins:1.0.0';
const secret = (name: string, key: string) => ({ secret: kplus.Secret.fromSecretName(newChart().chart, `${name}-${key}`, name), key });
const basicAuth = { username: secret('log-basic', 'user'), password: secret('log-basic', 'pass') };

function conf(output: LogOutput, agent = LogAgent.fluentd({ image: PLUGIN_IMAGE })): FluentDirective[] {
  const { chart } = newChart();
  new WithLogAgent(chart, 'logs', { workload: kplusWorkload(chart, 'Deployment'), kubernetesVersion: '1.29', agent, output });
  return parseFluentConf(manifestOf(Testing.synth(chart), 'ConfigMap').data['fluent.conf']);
}
const match = (c: FluentDirective[]) => c.find(d => d.name === 'match')!;
const ENV = { POD_NAME: 'web-1', POD_NAMESPACE: 'shop', NODE_NAME: 'node-a' };

describe('Fluentd: a Secret header value that ends in a newline', () => {
  // `kubectl create secret generic tok --from-file=token=./token` keeps the file's last newline;
  // Net::HTTP refuses a header value with CR/LF on every request (net/http/header.rb), so the
  // real Fluentd sent 0 of 8 records. The value is stripped in the config (RFC 9110 5.5: white
  // space around a field value is not part of it).
  test.each([
    ['Bearer abc\n', 'Bearer abc'],
    ['Bearer abc\r\n', 'Bearer abc'],
    ['  Bearer abc \t\n', 'Bearer abc'],
    ['Bearer a b', 'Bearer a b'],
  ])('%j is sent as %j', (value, sent) => {
    const m = match(conf(LogOutput.http({ host: 'logs.example.com', secretHeaders: { 'X-Token': secret('tok', 'token') } })));
    const headers = JSON.parse(fluentValue(m.params.headers, { ...ENV, LOG_OUTPUT_HEADER_X_TOKEN: value }));
    expect(headers).toEqual({ 'X-Token': sent });
  });
});

describe('Fluentd: a placeholder in an Elasticsearch/OpenSearch user or password', () => {
  // out_elasticsearch.rb (v6.0.0) and out_opensearch.rb (v1.1.6) `configure`: a user or password
  // matching /%{(?<user>.*)}/ becomes URI.encode_www_form_component of the text between the
  // braces, e.g. 'ab%{cd}ef' -> 'cd'. The value is only known at run time: Fluentd refuses it
  // when it reads the config, with the reason.
  test.each(['elasticsearch', 'opensearch'] as const)('%s: refused at start with the reason, other values pass unchanged', (type) => {
    const m = match(conf(LogOutput[type]({ host: 'es.logging', basicAuth })));
    for (const key of ['user', 'password']) {
      const variable = key === 'user' ? 'LOG_OUTPUT_USERNAME' : 'LOG_OUTPUT_PASSWORD';
      const env = (value: string) => ({ ...ENV, LOG_OUTPUT_USERNAME: 'u', LOG_OUTPUT_PASSWORD: 'p', [variable]: value });
      expect(() => fluentValue(m.params[key], env('ab%{cd}ef'))).toThrow(
        `Fluent::ConfigError: Secret value in ${variable} holds a placeholder, which fluent-plugin-${type} replaces with its URL-encoded inner text`);
      for (const fine of ['p@ss: "w\\ord" #1', '%{', '}%{', '100%', 'a%b{c}']) {
        expect(fluentValue(m.params[key], env(fine))).toBe(fine);
      }
    }
  });
});

describe('Fluentd: secretHeaders Authorization and basicAuth together', () => {
  // out_http.rb `set_auth` runs after `set_headers` and overwrites the header: the real Fluentd
  // dropped the secret header silently.
  test.each(['Authorization', 'authorization', 'AUTHORIZATION'])('refused at the factory (%s)', (name) => {
    expect(() => LogOutput.http({ host: 'logs.example.com', secretHeaders: { [name]: secret('tok', 'token') }, basicAuth })).toThrow(
      `LogOutput.http(): secretHeaders name "${name}" comes with basicAuth, which sends an Authorization header of its own`);
  });
  test('each alone is accepted', () => {
    expect(() => LogOutput.http({ host: 'logs.example.com', secretHeaders: { Authorization: secret('tok', 'token') } })).not.toThrow();
    expect(() => LogOutput.http({ host: 'logs.example.com', secretHeaders: { 'X-Api-Key': secret('tok', 'token') }, basicAuth })).not.toThrow();
  });
});

describe('Fluentd: no config dump at start', () => {
  // lib/fluent/engine.rb `run_configure` logs "using configuration file: <conf>" unless
  // suppress_config_dump; only `secret: true` parameters are masked (out_http `headers` and the
  // user names are not), so `kubectl logs -c log-agent` showed them.
  test.each(['stdout', 'http', 'elasticsearch'] as const)('%s: <system> suppress_config_dump true comes first', (type) => {
    const output = type === 'stdout' ? LogOutput.stdout() : type === 'http'
      ? LogOutput.http({ host: 'h.example', secretHeaders: { 'X-Api-Key': secret('tok', 'token') }, basicAuth })
      : LogOutput.elasticsearch({ host: 'es', basicAuth });
    const c = conf(output);
    expect(c[0].name).toBe('system');
    expect(c[0].params.suppress_config_dump.raw).toBe('true');
    expect(c.filter(d => d.name === 'system')).toHaveLength(1);
  });
});

describe('Fluentd: a time field in every Elasticsearch/OpenSearch document', () => {
  // out_elasticsearch.rb / out_opensearch.rb: `@timestamp` only with logstash_format or
  // include_timestamp (default false); the real Fluentd's documents were {message, pod, namespace, node}.
  test.each(['elasticsearch', 'opensearch'] as const)('%s: include_timestamp true', (type) => {
    expect(match(conf(LogOutput[type]({ host: 'es' }))).params.include_timestamp?.raw).toBe('true');
  });
});

describe('Fluentd http: retryable_response_codes set (no v2 deprecation warning)', () => {
  // out_http.rb `configure`: when retryable_response_codes is nil it warns that 503 leaves the default in v2.
  test('the codes a busy or restarting backend answers, as JSON', () => {
    const m = match(conf(LogOutput.http({ host: 'h.example' })));
    expect(JSON.parse(fluentValue(m.params.retryable_response_codes))).toEqual([408, 429, 500, 502, 503, 504]);
    expect(HTTP_RETRYABLE).not.toContain(501);
  });
});

describe('Fluentd: the wait for an answer is requestTimeout, not a share of shutdownGrace', () => {
  // The real Fluentd with read_timeout 4 s (http) or request_timeout 9 s (Elasticsearch) against
  // a backend that answers after 10 s: every flush failed, 121 of 176 lines lost. The timeouts are
  // set once when the output starts (out_http.rb `start`: Net::HTTP read_timeout), so the same
  // value holds at shutdown.
  test.each([
    ['http', 'read_timeout'],
    ['forward', 'send_timeout'],
    ['elasticsearch', 'request_timeout'],
    ['opensearch', 'request_timeout'],
  ] as const)('%s: %s is 15 s by default, above a 10 s answer, and follows requestTimeout', (type, key) => {
    const output = () => type === 'http' ? LogOutput.http({ host: 'h.example' }) : type === 'forward'
      ? LogOutput.forward({ host: 'f.example' }) : LogOutput[type]({ host: 'es' });
    expect(Number(match(conf(output())).params[key].raw)).toBe(15);
    const slower = LogAgent.fluentd({ image: PLUGIN_IMAGE, requestTimeout: Duration.seconds(40), shutdownGrace: Duration.seconds(5) });
    expect(Number(match(conf(output(), slower)).params[key].raw)).toBe(40);
  });
  test('requestTimeout below 1 s is refused', () => {
    expect(() => LogAgent.fluentd({ requestTimeout: Duration.millis(500) })).toThrow('LogAgent.fluentd(): requestTimeout');
  });
});
