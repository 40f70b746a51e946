/**
 * Fluentd config rendering (`fluent.conf`, v1 syntax). Pure: options in, file text out.
 *
 * Every directive and parameter emitted here was checked against the Fluentd documentation
 * (fluent/fluentd-docs-gitbook) and, for the third-party outputs, the plugins' sources:
 * - in_tail `path`, `pos_file`, `exclude_path`, `tag` (`*` expands to the file path),
 *   `read_from_head`, `follow_inodes`, `refresh_interval`, `<parse> @type none`
 * - filter_record_transformer `<record>` with embedded Ruby `"#{ENV['NAME']}"` (evaluated in
 *   double-quoted strings only, once, when the config is read)
 * - in_monitor_agent `bind`, `port` (`GET /api/plugins.json` for the probes), `include_config`,
 *   `include_debug_info` (1.19.3+: keep secrets out of the response)
 * - `<buffer>` `@type memory`, `flush_mode interval`, `flush_interval`, `flush_at_shutdown`,
 *   `chunk_limit_size`, `total_limit_size`, `overflow_action`, `retry_max_interval`
 * - out_stdout `<format> @type json`
 * - out_forward `transport tls`, `tls_verify_hostname`, `<server> host port`
 * - out_http `endpoint`, `http_method`, `headers` (hash type: a string that starts with `{` is
 *   parsed as JSON, so the double-quoted form can carry embedded Ruby), `json_array`,
 *   `tls_verify_mode`, `<format> @type json`, `<auth> method username password`
 * - fluent-plugin-grafana-loki `url`, `username`, `password`, `tenant`, `extra_labels`,
 *   `line_format`, `insecure_tls`
 * - fluent-plugin-elasticsearch / fluent-plugin-opensearch `host`, `port`, `scheme`,
 *   `ssl_verify`, `user`, `password`, `index_name`, `suppress_type_name`
 */
import { LogOutputConfig } from '../log-output';
import { ShutdownModel, shutdownModel } from './shutdown-model';
import { asciiJson, fluentdValueProblem, showValue } from '../private/values';

/** The `@id`s and the tag of the rendered config. */
export const FLUENTD_IDS = {
  tail: 'in_tail_app',
  monitor: 'in_monitor_agent',
  filter: 'filter_pod_metadata',
  output: 'out_logs',
  /** in_tail's tag: `*` is replaced with the file path (`/` -> `.`). */
  tag: 'app.*',
  /** What the filter and the output match. */
  match: 'app.**',
} as const;

/** The gem each output needs; `undefined` for the outputs Fluentd ships in its core. */
export const FLUENTD_OUTPUT_PLUGIN: Record<LogOutputConfig['type'], string | undefined> = {
  stdout: undefined,
  forward: undefined,
  http: undefined,
  loki: 'fluent-plugin-grafana-loki',
  elasticsearch: 'fluent-plugin-elasticsearch',
  opensearch: 'fluent-plugin-opensearch',
};

export interface FluentdConfigOptions {
  /** Directory the app writes its log files into. */
  readonly logDirectory: string;
  /** Glob of the files to tail inside logDirectory. */
  readonly filePattern: string;
  /** in_tail's position file, on the shared volume. */
  readonly posFile: string;
  readonly flushIntervalSeconds: number;
  /** The time Fluentd gets after SIGTERM (`shutdownGrace`): one flush attempt must fit in it. */
  readonly shutdownGraceSeconds: number;
  /** Port of in_monitor_agent on 0.0.0.0 (the kubelet probes `/api/plugins.json`). */
  readonly monitorPort: number;
  readonly output: LogOutputConfig;
  /** secret id -> env var name (see outputSecretEnv) */
  readonly secretVars: Record<string, string>;
}

type Param = [string, string | number | boolean];
interface Directive {
  readonly name: string;
  readonly arg?: string;
  readonly params: Param[];
  readonly children?: Directive[];
}

const SAFE = /^[A-Za-z0-9_.\/:*@+=,-]+$/;

/**
 * A user-supplied string as a literal: bare when that is unambiguous, otherwise single-quoted
 * (no embedded Ruby in single quotes; only `\'` and `\\` are escapes).
 */
export function fluentLiteral(s: string): string {
  const why = fluentdValueProblem(s);
  if (why !== undefined) throw new Error(`Fluentd's config (in a ConfigMap) cannot hold ${showValue(s)}: it ${why}; give a value without it`);
  return SAFE.test(s) ? s : `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * A JSON value (array or hash parameter). Fluentd reads a value that starts with `[` or `{` as
 * JSON, but evaluates `#{...}` inside it as embedded Ruby and may take a `#` for a comment
 * (fluent/fluentd lib/fluent/config/literal_parser.rb `scan_json`, v1.19.3). A `#` can only be in
 * a JSON string, where `\u0023` is the same character: no `#` is left for Fluentd to read.
 */
export function fluentJson(v: unknown): string {
  // asciiJson: every non-ASCII character escaped too, so that the ConfigMap carries the text exactly.
  return asciiJson(v).replace(/#/g, '\\u0023');
}

/** A double-quoted string that evaluates to the value of an environment variable. */
const envValue = (name: string) => `"#{ENV['${name}']}"`;

function render(d: Directive, indent = ''): string {
  const open = `${indent}<${d.name}${d.arg ? ` ${d.arg}` : ''}>`;
  const inner = indent + '  ';
  const lines = d.params.map(([k, v]) => `${inner}${k} ${v}`);
  const children = (d.children ?? []).map(c => render(c, inner));
  return [open, ...lines, ...children, `${indent}</${d.name}>`].join('\n');
}

function buffer(flushIntervalSeconds: number): Directive {
  return {
    // Chunked per tag (the Elasticsearch and OpenSearch plugins require a tag or _index key).
    name: 'buffer',
    arg: 'tag',
    params: [
      ['@type', 'memory'],
      ['flush_mode', 'interval'],
      ['flush_interval', `${flushIntervalSeconds}s`],
      ['flush_at_shutdown', true],
      ['chunk_limit_size', '1m'],
      ['total_limit_size', '32m'],
      // Back-pressure on in_tail instead of dropping: the lines stay in the files.
      ['overflow_action', 'block'],
      ['retry_max_interval', '30s'],
    ],
  };
}

function basicAuth(vars: Record<string, string>, user: string, pass: string): Param[] {
  return vars.username ? [[user, envValue(vars.username)], [pass, envValue(vars.password)]] : [];
}

function output(o: LogOutputConfig, vars: Record<string, string>, flushIntervalSeconds: number): Directive {
  const head: Param[] = [['@id', FLUENTD_IDS.output]];
  const buf = buffer(flushIntervalSeconds);
  const json: Directive = { name: 'format', params: [['@type', 'json']] };
  const url = (d: { tls: boolean; host: string; port: number }, path = '') =>
    fluentLiteral(`${d.tls ? 'https' : 'http'}://${d.host}:${d.port}${path}`);
  switch (o.type) {
    case 'stdout':
      return { name: 'match', arg: FLUENTD_IDS.match, params: [['@type', 'stdout'], ...head], children: [json] };
    case 'forward':
      return {
        name: 'match',
        arg: FLUENTD_IDS.match,
        params: [
          ['@type', 'forward'], ...head,
          ...(o.tls ? [['transport', 'tls'], ['tls_verify_hostname', true]] as Param[] : []),
        ],
        children: [{ name: 'server', params: [['host', fluentLiteral(o.host)], ['port', o.port]] }, buf],
      };
    case 'http': {
      const names = Object.keys(o.headers);
      // `headers` is a hash: as a double-quoted string it is evaluated (embedded Ruby) and then
      // parsed as JSON, so the secret values are JSON-escaped by `to_json`.
      const headers = names.length === 0 ? [] : [[
        'headers',
        `"{${names.map(h => `${JSON.stringify(JSON.stringify(h)).slice(1, -1)}:#{ENV['${vars[`header_${h}`]}'].to_json}`).join(',')}}"`,
      ] as Param];
      return {
        name: 'match',
        arg: FLUENTD_IDS.match,
        params: [
          ['@type', 'http'], ...head,
          ['endpoint', url(o, o.uri)],
          ['http_method', 'post'],
          ['json_array', false],
          ...(o.tls ? [['tls_verify_mode', 'peer']] as Param[] : []),
          ...headers,
        ],
        children: [
          json,
          ...(vars.username ? [{ name: 'auth', params: [['method', 'basic'], ...basicAuth(vars, 'username', 'password')] as Param[] }] : []),
          buf,
        ],
      };
    }
    case 'loki':
      return {
        name: 'match',
        arg: FLUENTD_IDS.match,
        params: [
          ['@type', 'loki'], ...head,
          ['url', url(o)],
          ...basicAuth(vars, 'username', 'password'),
          ...(o.tenantId ? [['tenant', fluentLiteral(o.tenantId)]] as Param[] : []),
          // A JSON hash literal, `#` escaped (see fluentJson): static labels only.
          ['extra_labels', fluentJson(o.labels)],
          ['line_format', 'json'],
          ...(o.tls ? [['insecure_tls', false]] as Param[] : []),
        ],
        children: [buf],
      };
    case 'elasticsearch':
    case 'opensearch':
      return {
        name: 'match',
        arg: FLUENTD_IDS.match,
        params: [
          ['@type', o.type], ...head,
          ['host', fluentLiteral(o.host)],
          ['port', o.port],
          ['scheme', o.tls ? 'https' : 'http'],
          ...(o.tls ? [['ssl_verify', true]] as Param[] : []),
          ...basicAuth(vars, 'user', 'password'),
          ['index_name', fluentLiteral(o.index)],
          ['suppress_type_name', true],
        ],
        children: [buf],
      };
  }
}

/** The `fluent.conf` file. */
export function renderFluentdConfig(o: FluentdConfigOptions): string {
  const path = `${o.logDirectory}/${o.filePattern}`;
  const directives: Directive[] = [
    {
      name: 'source',
      params: [
        ['@type', 'tail'],
        ['@id', FLUENTD_IDS.tail],
        ['path', fluentLiteral(path)],
        ['exclude_path', fluentJson([o.posFile])],
        ['pos_file', fluentLiteral(o.posFile)],
        ['tag', FLUENTD_IDS.tag],
        ['read_from_head', true],
        ['follow_inodes', true],
        // New log files are found by scanning: every second, so a short Job's last file is not missed.
        ['refresh_interval', '1s'],
      ],
      children: [{ name: 'parse', params: [['@type', 'none']] }],
    },
    {
      name: 'source',
      params: [
        ['@type', 'monitor_agent'],
        ['@id', FLUENTD_IDS.monitor],
        ['bind', '0.0.0.0'],
        ['port', o.monitorPort],
        ['include_config', false],
        ['include_debug_info', false],
      ],
    },
    {
      name: 'filter',
      arg: FLUENTD_IDS.match,
      params: [['@type', 'record_transformer'], ['@id', FLUENTD_IDS.filter]],
      children: [{
        name: 'record',
        params: [['pod', envValue('POD_NAME')], ['namespace', envValue('POD_NAMESPACE')], ['node', envValue('NODE_NAME')]],
      }],
    },
    withAttemptTimeouts(output(o.output, o.secretVars, o.flushIntervalSeconds), o.output, o.shutdownGraceSeconds),
  ];
  return directives.map(d => render(d)).join('\n\n') + '\n';
}

// ---------------------------------------------------------------------------
// Shutdown model (fluent/fluentd v1.19.3)
// ---------------------------------------------------------------------------

/**
 * The timeouts that bound one flush attempt of an output, in the order an attempt meets them
 * (the keys exist at the pinned releases: out_http `open_timeout`, `ssl_timeout`, `read_timeout`
 * (`lib/fluent/plugin/out_http.rb`, v1.19.3); out_forward `connect_timeout`, `send_timeout`
 * (`lib/fluent/plugin/out_forward.rb`); fluent-plugin-elasticsearch / -opensearch
 * `request_timeout`). stdout has no network; fluent-plugin-grafana-loki has no timeout setting.
 */
export function fluentdAttemptTimeouts(out: LogOutputConfig): string[] {
  switch (out.type) {
    case 'http': return ['open_timeout', ...(out.tls ? ['ssl_timeout'] : []), 'read_timeout'];
    case 'forward': return ['connect_timeout', 'send_timeout'];
    case 'elasticsearch':
    case 'opensearch': return ['request_timeout'];
    case 'loki':
    case 'stdout': return [];
  }
}

/** Leaving the process once the buffers are flushed. */
const FLUENTD_EXIT_SECONDS = 1;

/** Each attempt timeout: an equal share of `shutdownGrace` minus the exit, at least 1 s. */
export function fluentdAttemptTimeoutSeconds(shutdownGraceSeconds: number, out: LogOutputConfig): number {
  const phases = fluentdAttemptTimeouts(out).length;
  return phases === 0 ? 0 : Math.max(1, Math.floor((shutdownGraceSeconds - FLUENTD_EXIT_SECONDS) / phases));
}

function withAttemptTimeouts(d: Directive, out: LogOutputConfig, shutdownGraceSeconds: number): Directive {
  const seconds = fluentdAttemptTimeoutSeconds(shutdownGraceSeconds, out);
  const timeouts = fluentdAttemptTimeouts(out).map((k): Param => [k, seconds]);
  return timeouts.length === 0 ? d : { ...d, params: [...d.params, ...timeouts] };
}

/**
 * Fluentd's shutdown (v1.19.3):
 * - Order: `lib/fluent/root_agent.rb` `shutdown` calls each plugin's `before_shutdown` and then
 *   its `shutdown`, inputs first, outputs last; then `after_shutdown`, `close`.
 * - Reads: every watched file to its end. in_tail's `shutdown` detaches each watcher after a
 *   last `on_notify` (`lib/fluent/plugin/in_tail.rb`), reading for up to 5 s
 *   (`IOHandler::SHUTDOWN_TIMEOUT`), and moves the pos file past what it read. A file created
 *   within the last `refresh_interval` (1 s) before SIGTERM is not watched yet and is not read.
 * - Flushes: ONE attempt per queued chunk, and no retry. The output's `before_shutdown` ->
 *   `force_flush` enqueues every chunk and `submit_flush_all` sends them
 *   `while !@retry && @buffer.queued?`: it stops at the first failed attempt, and makes none when
 *   the backend was already failing at SIGTERM (`@retry` set). `after_shutdown` sets
 *   `@output_flush_threads_running = false` and joins the flush threads, so nothing is retried
 *   (`lib/fluent/plugin/output.rb`). What is left in the memory buffer is then dropped, while
 *   the pos file has moved past those lines: they are lost.
 * - Bound: Fluentd has no time limit of its own; one attempt is bounded by the output's timeouts
 *   (the renderer gives each phase an equal share of `shutdownGrace` less a second to exit, so
 *   one attempt at the first chunk fits), and the kubelet's kill at `shutdownGrace` bounds the
 *   rest (several chunks: one per file; a long read at shutdown; Ruby's own `write_timeout`,
 *   60 s, and fluent-plugin-grafana-loki, which has no timeout setting).
 */
export function fluentdShutdown(shutdownGraceSeconds: number, out: LogOutputConfig): ShutdownModel {
  const keys = fluentdAttemptTimeouts(out);
  const attempt = keys.length * fluentdAttemptTimeoutSeconds(shutdownGraceSeconds, out);
  const terms: Array<readonly [string, number]> = attempt + FLUENTD_EXIT_SECONDS > shutdownGraceSeconds
    ? [[`one flush attempt (${keys.join(' + ')})`, attempt], ['exit', FLUENTD_EXIT_SECONDS]]
    : [['shutdownGrace (no limit of its own: the kubelet kills it then)', shutdownGraceSeconds]];
  return shutdownModel(terms, 0);
}
