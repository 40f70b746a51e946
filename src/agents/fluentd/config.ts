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
 * - `<buffer>` `@type file`, `path`, `flush_mode interval`, `flush_interval`, `flush_thread_count`, `flush_at_shutdown`,
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
import { SidecarError } from '../../private/errors';
import { asciiJson, badCharacter, showValue } from '../../private/values';
import { LogOutputConfig } from '../log-output-config';
import { ShutdownModel, shutdownModel } from '../shutdown-model';

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
  /** The other agents that ship to the output, as a message offers them (`LogAgentSpec.render`'s `others`). */
  readonly otherAgents: string;
  /** Directory the app writes its log files into. */
  readonly logDirectory: string;
  /** Glob of the files to tail inside logDirectory. */
  readonly filePattern: string;
  /** in_tail's position file, on the shared volume. */
  readonly posFile: string;
  /** The output's file buffer (a directory on the shared volume, not tailed). */
  readonly bufferPath: string;
  /** `total_limit_size` of the file buffer, in MiB: a share of the log volume. */
  readonly bufferLimitMiB: number;
  readonly flushIntervalSeconds: number;
  /** The time Fluentd gets after SIGTERM (`shutdownGrace`): the connect phases of an attempt share it. */
  readonly shutdownGraceSeconds: number;
  /** How long one request may wait for the backend's answer (`requestTimeout`), at all times. */
  readonly requestTimeoutSeconds: number;
  /** Port of in_monitor_agent on 0.0.0.0 (the kubelet probes `/api/plugins.json`). */
  readonly monitorPort: number;
  readonly output: LogOutputConfig;
  /** secret id -> env var name (see outputSecretEnv) */
  readonly secretVars: Record<string, string>;
  /** The capture files' glob and the pod-logs env var, when those sources are on (`AgentSources`). */
  readonly sources?: { readonly capture?: string; readonly podLogsEnv?: string };
}

type Param = [string, string | number | boolean];
interface Directive {
  readonly name: string;
  readonly arg?: string;
  readonly params: Param[];
  readonly children?: Directive[];
}

const SAFE = /^[A-Za-z0-9_.\/:*@+=,-]+$/;

/** A Fluentd config value (in a ConfigMap): the renderer quotes it; the ConfigMap must carry it. */
function fluentdValueProblem(v: string): string | undefined {
  return badCharacter(v)?.why;
}

/**
 * A user-supplied string as a literal: bare when that is unambiguous, otherwise single-quoted
 * (no embedded Ruby in single quotes; only `\'` and `\\` are escapes).
 */
export function fluentLiteral(s: string): string {
  const why = fluentdValueProblem(s);
  if (why !== undefined) throw new SidecarError({ problem: `Fluentd's config (in a ConfigMap) cannot hold ${showValue(s)}: it ${why}`, value: s, fix: 'give a value without it' });
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

interface BufferOptions {
  readonly flushIntervalSeconds: number;
  readonly path: string;
  readonly limitMiB: number;
}

function buffer(b: BufferOptions): Directive {
  return {
    // Chunked per tag (the Elasticsearch and OpenSearch plugins require a tag or _index key).
    name: 'buffer',
    arg: 'tag',
    params: [
      // On the log volume, not in memory: in_tail's position file records lines as read, so
      // what a memory buffer held was lost when the agent restarted (OOM, crash) before it was
      // delivered; file chunks are resumed by the next start (lib/fluent/plugin/buf_file.rb
      // `resume`, v1.19.3). The volume outlives the container, not the pod.
      ['@type', 'file'],
      ['path', fluentLiteral(b.path)],
      ['flush_mode', 'interval'],
      ['flush_interval', `${b.flushIntervalSeconds}s`],
      // Four requests at a time, also at shutdown (output.rb `submit_flush_all` wakes the flush
      // threads in turn): with one, a backend answering after 10 s got one chunk per 10 s while
      // one a second was queued, and at SIGTERM the queue was longer than the stop time (the real
      // Fluentd lost 40 of 96 lines; with four, none, stopping after 22 s). Chunks may then
      // arrive out of order; the lines within a chunk keep theirs.
      ['flush_thread_count', 4],
      ['flush_at_shutdown', true],
      ['chunk_limit_size', '1m'],
      // A quarter of the log volume (sizeLimit), the rest is the app's; at least one chunk.
      ['total_limit_size', `${b.limitMiB}m`],
      // Back-pressure on in_tail instead of dropping: the lines stay in the files.
      ['overflow_action', 'block'],
      ['retry_max_interval', '30s'],
    ],
  };
}

function basicAuth(vars: Record<string, string>, user: string, pass: string): Param[] {
  return vars.username ? [[user, envValue(vars.username)], [pass, envValue(vars.password)]] : [];
}

/** out_http's `retryable_response_codes`: request timeout, too many requests, server errors except 501. */
export const HTTP_RETRYABLE = [408, 429, 500, 502, 503, 504];

/**
 * The Ruby expression Fluentd evaluates for a search output's user or password: the variable's
 * value, or a config error at start when the value holds a placeholder. fluent-plugin-elasticsearch
 * (v6.0.0) and fluent-plugin-opensearch (v1.1.6) replace a `user`/`password` matching
 * `/%{(?<user>.*)}/` with the URL-encoded text between the braces (lib/fluent/plugin/out_*.rb
 * `configure`), so such a value would reach the backend mangled; the value comes from a Secret,
 * unknown when the manifest is made, so Fluentd refuses it when it reads its config.
 */
export function searchCredential(plugin: string, variable: string, otherAgents: string): string {
  const why = `Secret value in ${variable} holds a placeholder, which ${plugin} replaces with its URL-encoded inner text ` +
    '(out_' + plugin.replace('fluent-plugin-', '') + '.rb configure): change the Secret, or use ' + otherAgents;
  return `"#{ENV['${variable}'].match?(/%[{].*[}]/) ? raise(Fluent::ConfigError, '${why}') : ENV['${variable}']}"`;
}

function searchAuth(type: 'elasticsearch' | 'opensearch', vars: Record<string, string>, otherAgents: string): Param[] {
  const plugin = FLUENTD_OUTPUT_PLUGIN[type]!;
  return vars.username ? [['user', searchCredential(plugin, vars.username, otherAgents)], ['password', searchCredential(plugin, vars.password, otherAgents)]] : [];
}

function output(o: LogOutputConfig, vars: Record<string, string>, b: BufferOptions, otherAgents: string): Directive {
  const head: Param[] = [['@id', FLUENTD_IDS.output]];
  const buf = buffer(b);
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
    case 'http':
      return httpOutput(o, vars, head, buf, json);
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
      return searchOutput(o, vars, head, buf, otherAgents);
  }
}

/** Fluentd's out_http: the JSON lines, the secret headers and basic auth from the environment. */
function httpOutput(o: Extract<LogOutputConfig, { type: 'http' }>, vars: Record<string, string>, head: Param[], buf: Directive, json: Directive): Directive {
  const url = fluentLiteral(`${o.tls ? 'https' : 'http'}://${o.host}:${o.port}${o.uri}`);
  const names = Object.keys(o.headers);
  // `headers` is a hash: as a double-quoted string it is evaluated (embedded Ruby) and then
  // parsed as JSON, so the secret values are JSON-escaped by `to_json`. Each value is
  // stripped first: a Secret made from a file (`kubectl create secret --from-file`) usually
  // ends in a newline, and Net::HTTP refuses a header value with CR or LF on every request
  // (ruby net/http/header.rb `initialize_http_header`: ArgumentError), so nothing would be
  // sent; white space at either end is not part of a field value anyway (RFC 9110 5.5).
  const headers = names.length === 0 ? [] : [[
    'headers',
    `"{${names.map(h => `${JSON.stringify(JSON.stringify(h)).slice(1, -1)}:#{ENV['${vars[`header_${h}`]}'].strip.to_json}`).join(',')}}"`,
  ] as Param];
  return {
    name: 'match',
    arg: FLUENTD_IDS.match,
    params: [
      ['@type', 'http'], ...head,
      ['endpoint', url],
      ['http_method', 'post'],
      ['json_array', false],
      // Set, so that Fluentd v1.19 does not warn that its default ([503]) changes in v2
      // (out_http.rb `configure`); the codes a backend sends when it is overloaded or
      // restarting, as the other agents retry them. Any other 4xx/5xx drops the chunk
      // (`error_response_as_unrecoverable` true).
      ['retryable_response_codes', fluentJson(HTTP_RETRYABLE)],
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

/** out_elasticsearch / out_opensearch: the index (dated or not), TLS, credentials and `@timestamp`. */
function searchOutput(o: Extract<LogOutputConfig, { type: 'elasticsearch' | 'opensearch' }>, vars: Record<string, string>, head: Param[], buf: Directive,
  otherAgents: string): Directive {
  return {
    name: 'match',
    arg: FLUENTD_IDS.match,
    params: [
      ['@type', o.type], ...head,
      ['host', fluentLiteral(o.host)],
      ['port', o.port],
      ['scheme', o.tls ? 'https' : 'http'],
      ...(o.tls ? [['ssl_verify', true]] as Param[] : []),
      ...searchAuth(o.type, vars, otherAgents),
      // a dated index: each record's own time, UTC (utc_index, default true): out_elasticsearch.rb / out_opensearch.rb
      ...(o.indexDateFormat !== undefined
        ? [['logstash_format', true], ['logstash_prefix', fluentLiteral(o.index)], ['logstash_prefix_separator', fluentLiteral('-')],
          ['logstash_dateformat', fluentLiteral(o.indexDateFormat)]] as Param[]
        : [['index_name', fluentLiteral(o.index)]] as Param[]),
      ['suppress_type_name', true],
      // An `@timestamp` field (the event time, ISO 8601) in every document, as the other agents
      // write one: without it a document has no time field at all
      // (out_elasticsearch.rb / out_opensearch.rb `include_timestamp`, default false).
      ['include_timestamp', true],
    ],
    children: [buf],
  };
}

/** The ids and tags of the other sources (`captureStdout`, `podLogs`); their tags start with `app.` so the filter and output match them. */
export const FLUENTD_SOURCE_IDS = {
  capture: 'in_tail_stdout',
  podLogs: 'in_tail_pod_logs',
  concat: 'filter_cri_partial',
  captureTag: 'app.stdout.*',
  podLogsTag: 'app.pod.*',
} as const;

/**
 * The capture files (in_tail like the app's files), and the kubelet's log files of the app
 * container: the path from the env var (embedded Ruby in a double-quoted string, evaluated once when
 * the config is read), each CRI line `<time> <stream> <P|F> <log>` parsed by a regexp (the kubelet's
 * format: kubernetes pkg/kubelet/kuberuntime/logs/logs.go, v1.37.2), then the partial (P) records
 * joined with the full one after them by fluent-plugin-concat's filter in its CRI mode (`key`,
 * `use_partial_cri_logtag`, `partial_cri_logtag_key`, `partial_cri_stream_key`, `separator`; 2.5.0 and
 * later; the gem is not in the default image: LogAgent.fluentd refuses it there).
 */
function otherSources(o: FluentdConfigOptions): Directive[] {
  const out: Directive[] = [];
  const tail = (id: string, path: string, pos: string, tag: string, parse: Directive): Directive => ({
    name: 'source',
    params: [
      ['@type', 'tail'], ['@id', id], ['path', path], ['pos_file', fluentLiteral(pos)], ['tag', tag],
      ['read_from_head', true], ['follow_inodes', true], ['refresh_interval', '1s'], ['path_key', 'file'],
    ],
    children: [parse],
  });
  if (o.sources?.capture !== undefined) {
    out.push(tail(FLUENTD_SOURCE_IDS.capture, fluentLiteral(o.sources.capture), `${o.logDirectory}/.fluentd-stdout.pos`,
      FLUENTD_SOURCE_IDS.captureTag, { name: 'parse', params: [['@type', 'none']] }));
  }
  if (o.sources?.podLogsEnv !== undefined) {
    out.push(tail(FLUENTD_SOURCE_IDS.podLogs, envValue(o.sources.podLogsEnv), `${o.logDirectory}/.fluentd-pod.pos`, FLUENTD_SOURCE_IDS.podLogsTag, {
      name: 'parse',
      params: [
        ['@type', 'regexp'],
        ['expression', '/^(?<time>[^ ]+) (?<stream>stdout|stderr) (?<logtag>[PF]) ?(?<log>.*)$/'],
        ['time_format', '%Y-%m-%dT%H:%M:%S.%N%:z'],
      ],
    }));
    out.push({
      name: 'filter',
      arg: FLUENTD_SOURCE_IDS.podLogsTag.replace(/\*$/, '**'),
      params: [
        // the plugin's own CRI mode (fluent-plugin-concat 2.5.0 and later, README "Handle containerd/cri in
        // Kubernetes"): a record whose `logtag` is P is kept until the F record of the same `stream`
        ['@type', 'concat'], ['@id', FLUENTD_SOURCE_IDS.concat], ['key', 'log'], ['use_partial_cri_logtag', true],
        ['partial_cri_logtag_key', 'logtag'], ['partial_cri_stream_key', 'stream'], ['separator', '""'],
      ],
    });
  }
  return out;
}

/** The `fluent.conf` file. */
export function renderFluentdConfig(o: FluentdConfigOptions): string {
  const path = `${o.logDirectory}/${o.filePattern}`;
  const directives: Directive[] = [
    {
      // No startup dump of the config: Fluentd logs the whole config at start ("using
      // configuration file", lib/fluent/engine.rb `run_configure`) with only the parameters its
      // plugins declare `secret: true` masked, so the header values (out_http `headers`) and
      // the user names would reach `kubectl logs` in clear text.
      name: 'system',
      params: [['suppress_config_dump', true]],
    },
    {
      name: 'source',
      params: [
        ['@type', 'tail'],
        ['@id', FLUENTD_IDS.tail],
        ['path', fluentLiteral(path)],
        ['exclude_path', fluentJson([o.posFile, `${o.bufferPath}/*`])],
        ['pos_file', fluentLiteral(o.posFile)],
        ['tag', FLUENTD_IDS.tag],
        ['read_from_head', true],
        ['follow_inodes', true],
        // New log files are found by scanning: every second, so a short Job's last file is not missed.
        ['refresh_interval', '1s'],
      ],
      children: [{ name: 'parse', params: [['@type', 'none']] }],
    },
    ...otherSources(o),
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
    withAttemptTimeouts(
      output(o.output, o.secretVars, { flushIntervalSeconds: o.flushIntervalSeconds, path: o.bufferPath, limitMiB: o.bufferLimitMiB }, o.otherAgents),
      o.output, o.shutdownGraceSeconds, o.requestTimeoutSeconds,
    ),
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
 * `request_timeout`, the whole request). stdout has no network; fluent-plugin-grafana-loki has
 * no timeout setting. `connect` phases end fast against a healthy backend and share
 * `shutdownGrace`; the `request` phase waits for the backend's answer and gets `requestTimeout`.
 */
export function fluentdAttemptTimeouts(out: LogOutputConfig): Array<{ key: string; phase: 'connect' | 'request' }> {
  switch (out.type) {
    case 'http': return [
      { key: 'open_timeout', phase: 'connect' },
      ...(out.tls ? [{ key: 'ssl_timeout', phase: 'connect' as const }] : []),
      { key: 'read_timeout', phase: 'request' },
    ];
    case 'forward': return [{ key: 'connect_timeout', phase: 'connect' }, { key: 'send_timeout', phase: 'request' }];
    case 'elasticsearch':
    case 'opensearch': return [{ key: 'request_timeout', phase: 'request' }];
    case 'loki':
    case 'stdout': return [];
  }
}

/** Leaving the process once the buffers are flushed. */
const FLUENTD_EXIT_SECONDS = 1;

/** Each connect-phase timeout: an equal share of `shutdownGrace` minus the exit, at least 1 s. */
export function fluentdConnectTimeoutSeconds(shutdownGraceSeconds: number, out: LogOutputConfig): number {
  const phases = fluentdAttemptTimeouts(out).filter(t => t.phase === 'connect').length;
  return phases === 0 ? 0 : Math.max(1, Math.floor((shutdownGraceSeconds - FLUENTD_EXIT_SECONDS) / phases));
}

function withAttemptTimeouts(d: Directive, out: LogOutputConfig, shutdownGraceSeconds: number, requestTimeoutSeconds: number): Directive {
  const connect = fluentdConnectTimeoutSeconds(shutdownGraceSeconds, out);
  const timeouts = fluentdAttemptTimeouts(out).map((t): Param => [t.key, t.phase === 'connect' ? connect : requestTimeoutSeconds]);
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
 *   (`lib/fluent/plugin/output.rb`). What is left stays in the file buffer on the log volume,
 *   while the pos file has moved past those lines: resent if the container starts again in the
 *   same pod, lost when the pod goes.
 * - Bound: Fluentd has no time limit of its own, and no shorter timeout at shutdown than in
 *   normal operation (the timeouts are set once, when the output starts). One attempt is
 *   bounded by the output's timeouts: the connect phases share `shutdownGrace` less a second
 *   to exit, the wait for the answer is `requestTimeout` (the same in normal operation, where
 *   a shorter one would fail every flush to a slow backend, which then never gets anything).
 *   The stop time is `shutdownGrace`, or one whole attempt and the exit when that is longer,
 *   so one attempt at the first chunk always fits; the kubelet's kill then bounds the rest
 *   (several chunks: one per file; a long read at shutdown; Ruby's own `write_timeout`, 60 s,
 *   and fluent-plugin-grafana-loki, which has no timeout setting).
 */
export function fluentdShutdown(shutdownGraceSeconds: number, out: LogOutputConfig, requestTimeoutSeconds: number): ShutdownModel {
  const keys = fluentdAttemptTimeouts(out);
  const connect = fluentdConnectTimeoutSeconds(shutdownGraceSeconds, out);
  const attempt = keys.reduce((sum, t) => sum + (t.phase === 'connect' ? connect : requestTimeoutSeconds), 0);
  const terms: Array<readonly [string, number]> = attempt + FLUENTD_EXIT_SECONDS > shutdownGraceSeconds
    ? [[`one flush attempt (${keys.map(t => t.key).join(' + ')})`, attempt], ['exit', FLUENTD_EXIT_SECONDS]]
    : [['shutdownGrace (no limit of its own: the kubelet kills it then)', shutdownGraceSeconds]];
  return shutdownModel(terms, 0);
}
