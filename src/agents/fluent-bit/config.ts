/**
 * Fluent Bit config rendering, in the classic format (`fluent-bit.conf`) or the YAML one
 * (`fluent-bit.yaml`): the same sections and properties either way. Pure: options in, file text out.
 * @see https://docs.fluentbit.io/manual/administration/configuring-fluent-bit/classic-mode
 * @see https://docs.fluentbit.io/manual/administration/configuring-fluent-bit/yaml
 */
import { SidecarError } from '../../private/errors';
import { Memo } from '../../private/memo';
import { badCharacter, showValue } from '../../private/values';
import { LogOutputConfig, indexDateLength } from '../log-output-config';
import { ShutdownModel, shutdownModel } from '../shutdown-model';

export interface FluentBitConfigOptions {
  /** Directory the app writes its log files into. */
  readonly logDirectory: string;
  /** Glob of the files to tail inside logDirectory. */
  readonly filePattern: string;
  /** Size limit of the log volume in MiB: the filesystem buffer takes a quarter of it. */
  readonly logVolumeSizeLimitMiB: number;
  /** Built-in multiline parsers (`multiline.parser`), in order; none when empty. */
  readonly multilineParsers: readonly string[];
  readonly flushSeconds: number;
  /** How long Fluent Bit keeps flushing after SIGTERM. */
  readonly graceSeconds: number;
  /** Port of the HTTP server that serves /api/v1/health. */
  readonly httpPort: number;
  readonly output: LogOutputConfig;
  /** secret id -> env var name (see outputSecretEnv) */
  readonly secretVars: Record<string, string>;
  /** The capture files' glob and the pod-logs env var, when those sources are on (`AgentSources`). */
  readonly sources?: { readonly capture?: string; readonly podLogsEnv?: string };
  /** The file's format: `classic` (`[SECTION]` and `Key Value` lines, the default) or `yaml`. */
  readonly format?: FluentBitConfigFormatName;
}

/** The two formats Fluent Bit reads a config file in, chosen by the file's extension. */
export type FluentBitConfigFormatName = 'classic' | 'yaml';

/** The file each format is written to: Fluent Bit reads `.yaml` and `.yml` as YAML, any other name as classic (src/config_format/flb_config_format.c `flb_cf_create_from_file`, v5.1.1). */
export const FLUENT_BIT_CONFIG_FILE: Record<FluentBitConfigFormatName, string> = { classic: 'fluent-bit.conf', yaml: 'fluent-bit.yaml' };

type Section = Array<[string, string | number]>;
type SectionName = 'SERVICE' | 'INPUT' | 'FILTER' | 'OUTPUT';

function section(name: SectionName, entries: Section): string {
  const width = Math.max(...entries.map(([k]) => k.length));
  return `[${name}]\n${entries.map(([k, v]) => `    ${k.padEnd(width)} ${v}`).join('\n')}\n`;
}

/**
 * The same sections as a YAML config (fluent/fluent-bit v5.1.1, src/config_format/flb_cf_yaml.c):
 * `service` is a map of properties; `pipeline` holds the `inputs`, `filters` and `outputs`
 * lists, one map per plugin. A key given more than once in the classic format (`Record`,
 * `Header`) is one key with a list: each entry is set as one property of that key, as a repeated
 * classic line is (`configure_plugins_type`, src/flb_config.c: `CFL_VARIANT_ARRAY`). Every
 * value is read as the text of its scalar whatever its YAML type, and `${NAME}` is replaced by
 * the environment when the property is set (`flb_config_set_property`, `flb_input_set_property`,
 * `flb_filter_set_property`, `flb_output_set_property`: `flb_env_var_translate`), as in the
 * classic format. Keys are matched without regard to case (`prop_key_check`); they are written
 * in lower case, as Fluent Bit's YAML documentation does. Strings are double-quoted (JSON's
 * escapes are YAML's), numbers plain.
 */
function yamlConfig(sections: Array<[SectionName, Section]>): string {
  const scalar = (v: string | number) => (typeof v === 'number' ? String(v) : JSON.stringify(v));
  const body = (entries: Section, indent: string, first: string): string[] => {
    const keys: string[] = [];
    const values = new Map<string, Array<string | number>>();
    for (const [k, v] of entries) {
      const key = k.toLowerCase();
      if (!values.has(key)) { keys.push(key); values.set(key, []); }
      values.get(key)!.push(v);
    }
    return keys.map((key, i) => {
      const vs = values.get(key)!;
      const lead = i === 0 ? first : indent;
      return vs.length === 1 ? `${lead}${key}: ${scalar(vs[0])}` : [`${lead}${key}:`, ...vs.map(v => `${indent}  - ${scalar(v)}`)].join('\n');
    });
  };
  const lines: string[] = [];
  for (const [, entries] of sections.filter(([n]) => n === 'SERVICE')) lines.push('service:', ...body(entries, '  ', '  '));
  lines.push('pipeline:');
  for (const [name, list] of [['INPUT', 'inputs'], ['FILTER', 'filters'], ['OUTPUT', 'outputs']] as const) {
    const of = sections.filter(([n]) => n === name);
    if (of.length === 0) continue;
    lines.push(`  ${list}:`);
    for (const [, entries] of of) lines.push(...body(entries, '      ', '    - '));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A value of Fluent Bit's classic config: the rest of the line after the key, trimmed, no escapes,
 * `${NAME}` replaced by the environment (fluent/fluent-bit src/config_format/flb_cf_fluentbit.c,
 * v3.2.10), in a ConfigMap (so also `checkManifestString`'s characters).
 */
function fluentBitValueProblem(v: string): string | undefined {
  const bad = badCharacter(v);
  if (bad) return bad.why;
  // eslint-disable-next-line no-control-regex
  if (v === '' || v.trim() !== v || /[\u0000-\u001f\u007f]/.test(v) || v.includes('${')) {
    return "is empty, has white space at either end, a newline or another control character, or has '${' (the classic format has no escapes)";
  }
  return undefined;
}

const env = (name: string) => `\${${name}}`;

/**
 * A user-given value, as the classic format reads it back: the rest of the line after the key,
 * trimmed, with `${NAME}` replaced by the environment (fluent/fluent-bit
 * src/config_format/flb_cf_fluentbit.c and flb_config_format.c, v5.1.1). The format has no
 * escapes, so a value it cannot hold is refused (LogOutput and WithLogAgent refuse them first).
 */
function given(what: string, v: string): string {
  const why = fluentBitValueProblem(v);
  if (why !== undefined) {
    throw new SidecarError({ problem: `Fluent Bit's classic config (in a ConfigMap) cannot hold the ${what} ${showValue(v)}: it ${why}`, value: v, fix: 'give a value without them' });
  }
  return v;
}

/**
 * What every tail input of the config shares (the app's files, the capture's, the pod's), after its
 * `Path`: the offsets DB, new files found every second (a short Job's last file is not missed),
 * read from the head, filesystem buffering. Lines up to 1 MiB are read whole (the buffer grows from
 * 32 KiB); a longer one is cut to its first 1 MiB - 1 byte (Truncate_Long_Lines,
 * plugins/in_tail/tail_file.c, v5.1.1) instead of dropped.
 */
function tailReading(offsetsFile: string): Section {
  return [
    ['DB', offsetsFile],
    ['DB.locking', 'true'],
    ['Refresh_Interval', FLUENT_BIT_SHUTDOWN.refreshIntervalSeconds],
    ['Read_from_Head', 'true'],
    ['Buffer_Chunk_Size', '32k'],
    ['Buffer_Max_Size', FLUENT_BIT_LONG_LINE.bufferMaxBytes],
    ['Truncate_Long_Lines', 'On'],
    ['Skip_Long_Lines', 'On'],
    ['storage.type', 'filesystem'],
  ];
}

/**
 * The longest index each search output writes intact (fluent/fluent-bit v5.1.1):
 * - es: the bulk header `{"create":{"_index":"<index>"}}\n` is printed into a 165-byte buffer
 *   (`flb_sds_create_size(ES_BULK_HEADER)`, plugins/out_es/es.c; `ES_BULK_HEADER 165`,
 *   plugins/out_es/es_bulk.h) by `flb_sds_snprintf` (src/flb_sds.c), which grows it only when
 *   `ret > size` and then prints with `size = ret`: a header of 165 characters or more loses its
 *   last character, the newline, to the terminating NUL. 25 characters besides the index: at most 139.
 * - opensearch: the index goes through `strftime(index_formatted, sizeof(index_formatted) - 1, ...)`
 *   with `char index_formatted[256]` (plugins/out_opensearch/opensearch.c): at most 254.
 */
export const FLUENT_BIT_MAX_INDEX = { elasticsearch: 139, opensearch: 254 } as const;

function outputSection(o: LogOutputConfig, vars: Record<string, string>): Section {
  // `tls.verify` checks the chain only; the host name is checked only with `tls.verify_hostname`,
  // which is off by default (fluent/fluent-bit src/tls/flb_tls.c, v5.1.1). An IPv4 host is
  // checked against the certificate's IP addresses (`X509_VERIFY_PARAM_set1_ip_asc`,
  // src/tls/openssl.c `setup_hostname_validation`, from v5.0.6; before, only against DNS names).
  const tls = (on: boolean): Section => (on ? [['tls', 'On'], ['tls.verify', 'On'], ['tls.verify_hostname', 'On']] : [['tls', 'Off']]);
  const basic = (user: string, pass: string): Section =>
    vars.username ? [[user, env(vars.username)], [pass, env(vars.password)]] : [];
  switch (o.type) {
    case 'stdout':
      return [['Name', 'stdout'], ['Match', '*'], ['Format', 'json_lines']];
    case 'forward':
      return [['Name', 'forward'], ['Match', '*'], ['Host', given('host', o.host)], ['Port', o.port], ...tls(o.tls)];
    case 'http':
      return [
        ['Name', 'http'], ['Match', '*'], ['Host', given('host', o.host)], ['Port', o.port], ['URI', given('uri', o.uri)],
        ['Format', 'json_lines'], ['Json_Date_Key', 'timestamp'], ['Json_Date_Format', 'iso8601'],
        ...tls(o.tls), ...basic('HTTP_User', 'HTTP_Passwd'),
        ...Object.keys(o.headers).map((h): [string, string] => ['Header', `${given('header name', h)} ${env(vars[`header_${h}`])}`]),
      ];
    case 'loki':
      return [
        ['Name', 'loki'], ['Match', '*'], ['Host', given('host', o.host)], ['Port', o.port], ...tls(o.tls),
        ['Labels', Object.entries(o.labels).map(([k, v]) => `${given('label name', k)}=${given(`label ${k} value`, v)}`).join(', ')],
        ['Line_Format', 'json'],
        ...(o.tenantId ? [['Tenant_ID', given('tenant ID', o.tenantId)] as [string, string]] : []),
        ...basic('HTTP_User', 'HTTP_Passwd'),
      ];
    case 'elasticsearch':
    case 'opensearch': {
      const max = FLUENT_BIT_MAX_INDEX[o.type];
      // a dated index: '<index>-' and the date, written into the same buffers (es.c / opensearch.c logstash_index, header)
      const length = o.index.length + (o.indexDateFormat !== undefined ? 1 + indexDateLength(o.indexDateFormat) : 0);
      if (length > max) {
        throw new SidecarError({
          value: o.index,
          problem: `Fluent Bit's ${o.type === 'elasticsearch' ? 'es' : 'opensearch'} output cannot write the index ${JSON.stringify(o.index)} ` +
          `${o.indexDateFormat !== undefined ? `with its date ${JSON.stringify(o.indexDateFormat)} ` : ''}` +
          `(${length} characters): past ${max} it corrupts or cuts the name (${o.type === 'elasticsearch'
            ? 'the bulk header loses its newline to a NUL: plugins/out_es/es.c ES_BULK_HEADER and src/flb_sds.c flb_sds_snprintf'
            : 'strftime into a 256-byte buffer: plugins/out_opensearch/opensearch.c'}, v5.1.1), and the backend still answers 200`,
          fix: `give an index of at most ${max} characters`,
        });
      }
      return [
        ['Name', o.type === 'elasticsearch' ? 'es' : 'opensearch'], ['Match', '*'], ['Host', given('host', o.host)], ['Port', o.port],
        // a dated index: Logstash_Format names each record's index from its own time, gmtime (plugins/out_es/es.c
        // es_format_logstash_index / opensearch.c: prefix, separator, strftime(dateformat), v5.1.1); Index alone would be
        // strftime'd with the flush time (es.c, when logstash_format is off)
        ...(o.indexDateFormat !== undefined
          ? [['Logstash_Format', 'On'], ['Logstash_Prefix', given('index', o.index)], ['Logstash_Prefix_Separator', '-'],
            ['Logstash_DateFormat', o.indexDateFormat]] as Section
          : [['Index', given('index', o.index)]] as Section),
        ['Suppress_Type_Name', 'On'], ...tls(o.tls), ...basic('HTTP_User', 'HTTP_Passwd'),
      ];
    }
  }
}

/** Where the agent keeps its own files: a directory of its own on the log volume, never tailed. */
export function fluentBitStateDirectory(logDirectory: string): string {
  return `${logDirectory}/.fluent-bit`;
}

/**
 * The filesystem buffer's limit (`storage.total_limit_size`, written as `<n>M`, which Fluent Bit
 * reads as n * 1000000 bytes: less than n MiB): a quarter of the log volume, at least 1. The rest stays for the app's files (current and rotated) and the offsets DB.
 * Fluent Bit may pass it by one chunk (up to about 2 MiB, `FLB_INPUT_CHUNK_FS_MAX_SIZE`,
 * include/fluent-bit/flb_input_chunk.h): it drops the oldest chunks of the output only when a new one
 * would not fit (src/flb_input_chunk.c `flb_input_chunk_find_space_new_data`).
 */
export function fluentBitBufferMiB(logVolumeSizeLimitMiB: number): number {
  return Math.max(1, Math.floor(logVolumeSizeLimitMiB / 4));
}

/** Chunks in memory at once (`storage.max_chunks_up`, default 128): up to ~2 MiB each, inside the 128 Mi limit. */
const MAX_CHUNKS_UP = 16;

const configMemo = new Memo<string>();

/**
 * The `fluent-bit.conf` file: rendered once per distinct options (every input is in the key, the
 * options being plain data), so that the sidecars of an app share one text (not one per workload). A throw
 * is not kept.
 */
export function renderFluentBitConfig(o: FluentBitConfigOptions): string {
  return configMemo.get(JSON.stringify(o, exactJson), () => render(o));
}

/** For the key: `undefined` (an own key the text may list) and the numbers JSON writes as null, kept apart. */
function exactJson(_key: string, value: unknown): unknown {
  return value === undefined ? '\u0000undefined' : typeof value === 'number' && !Number.isFinite(value) ? `\u0000${value}` : value;
}

function render(o: FluentBitConfigOptions): string {
  const sections = renderSections(o);
  return o.format === 'yaml' ? yamlConfig(sections) : sections.map(([name, entries]) => section(name, entries)).join('\n');
}

function renderSections(o: FluentBitConfigOptions): Array<[SectionName, Section]> {
  const state = fluentBitStateDirectory(o.logDirectory);
  return [
    ['SERVICE', [
      ['Flush', o.flushSeconds],
      ['Grace', o.graceSeconds],
      ['Daemon', 'Off'],
      ['Log_Level', 'info'],
      ['HTTP_Server', 'On'],
      ['HTTP_Listen', '0.0.0.0'],
      ['HTTP_Port', o.httpPort],
      ['Health_Check', 'On'],
      // Records are buffered in files on the log volume, so an agent restarted while the backend
      // is down resends them (the storage_backlog input reads them back at start).
      ['storage.path', given('storage path', `${state}/storage`)],
      ['storage.sync', 'normal'],
      ['storage.max_chunks_up', MAX_CHUNKS_UP],
      // Retries back off exponentially from scheduler.base (5 s) up to scheduler.cap (default
      // 2000 s): capped at 30 s, a backend that is back is retried within half a minute.
      ['scheduler.cap', FLUENT_BIT_RETRY.schedulerCapSeconds],
    ]],
    ['INPUT', [
      ['Name', 'tail'],
      ['Tag', 'app.*'],
      ['Path', given('path', `${o.logDirectory}/${o.filePattern}`)],
      // The offsets DB (and its -wal and -shm files) and the buffer live in a directory below the
      // tailed one: `Path` globs files of logDirectory only and keeps regular files
      // (plugins/in_tail/tail_scan_glob.c, v5.1.1), so no filePattern reaches them.
      ...tailReading(given('offsets file', `${state}/offsets.db`)),
      ...(o.multilineParsers.length > 0 ? [['multiline.parser', o.multilineParsers.join(', ')] as [string, string]] : []),
    ]],
    ...(o.sources?.capture !== undefined ? [['INPUT', [
      // captureStdout (src/engine/capture.ts): the copiers' files, one per stream and number, never
      // renamed; a deleted file is read to its end through the descriptor tail holds
      ['Name', 'tail'],
      ['Tag', 'stdout.*'],
      ['Path', given('path', o.sources.capture)],
      ['Path_Key', 'file'],
      ...tailReading(given('offsets file', `${state}/stdout-offsets.db`)),
    ]] as [SectionName, Section]] : []),
    ...(o.sources?.podLogsEnv !== undefined ? [['INPUT', [
      // podLogs: the kubelet's files of the app container (`${POD_LOG_PATH}`, built by the kubelet
      // from the downward API: src/engine/capture.ts podLogsEnv), CRI lines `<time> <stream> <P|F> <log>`
      // parsed and the partial (P) lines joined by the built-in `cri` multiline parser
      // (src/multiline/flb_ml_parser_cri.c, v5.1.1: FLB_ML_EQ on `_p` == "F", grouped by `stream`,
      // content in `log`); the kubelet renames a full file to `<n>.log.<time>`, which tail follows
      // by its inode (plugins/in_tail/tail_file.c `flb_tail_file_rotated`)
      ['Name', 'tail'],
      ['Tag', 'pod.*'],
      ['Path', env(o.sources.podLogsEnv)],
      ...tailReading(given('offsets file', `${state}/pod-offsets.db`)),
      ['multiline.parser', 'cri'],
    ]] as [SectionName, Section]] : []),
    ['FILTER', [
      ['Name', 'record_modifier'],
      ['Match', '*'],
      ['Record', `pod ${env('POD_NAME')}`],
      ['Record', `namespace ${env('POD_NAMESPACE')}`],
      ['Record', `node ${env('NODE_NAME')}`],
    ]],
    // Every network output gets connect and I/O timeouts: they bound the shutdown (fluentBitShutdown).
    ['OUTPUT', [
      ...outputSection(o.output, o.secretVars),
      ...(o.output.type === 'stdout' ? [] : netTimeouts()),
      // Retry until the buffer is full, not once (the default `Retry_Limit` is 1, src/flb_output.c
      // v5.1.1): a backend outage of minutes loses nothing while the buffer holds it; past the
      // limit, the oldest chunks are dropped.
      ['Retry_Limit', 'no_limits'],
      ['storage.total_limit_size', `${fluentBitBufferMiB(o.logVolumeSizeLimitMiB)}M`],
    ]],
  ];
}

// ---------------------------------------------------------------------------
// Shutdown model (fluent/fluent-bit v5.1.1)
// ---------------------------------------------------------------------------

/** Retries (fluent/fluent-bit v5.1.1 src/flb_scheduler.c: backoff from `scheduler.base` 5 s, capped). */
export const FLUENT_BIT_RETRY = { schedulerCapSeconds: 30 } as const;

/** Long lines (plugins/in_tail/tail.c and tail_file.c, v5.1.1). */
export const FLUENT_BIT_LONG_LINE = {
  /**
   * `Buffer_Max_Size` in bytes (1 MiB; written as a number: Fluent Bit's `k` and `M` are 1000 and
   * 1000000, src/flb_utils.c `flb_utils_size_to_bytes`): lines up to this long are read whole.
   */
  bufferMaxBytes: 1024 * 1024,
} as const;

/**
 * How long a multiline record waits for its next line before it is emitted: the built-in
 * parsers' `flush_ms` (`FLB_ML_FLUSH_TIMEOUT` 4000, include/fluent-bit/multiline/flb_ml.h, v5.1.1).
 */
export const FLUENT_BIT_MULTILINE_FLUSH_SECONDS = 4;

/** The values the shutdown model rests on; the renderer emits the same ones. */
export const FLUENT_BIT_SHUTDOWN = {
  /** tail `Refresh_Interval`: how often new files are looked for. */
  refreshIntervalSeconds: 1,
  /** `net.connect_timeout` of every network output (connect, DNS and TLS handshake; default 10 s). */
  connectTimeoutSeconds: 5,
  /** `net.io_timeout` of every network output (each read or write; default 0 = none). */
  ioTimeoutSeconds: 5,
  /**
   * How late a connection timeout can fire: a worker checks its connections every 1.5 s
   * (`cb_thread_sched_timer`, `src/flb_output_thread.c`) against deadlines in whole seconds
   * (`time(NULL)`, `flb_upstream_conn_timeouts`, `src/flb_upstream.c`).
   */
  timeoutLateSeconds: 2.5,
  /** Leaving the process after the engine has stopped. */
  exitSeconds: 1,
} as const;

/** `net.*` timeouts of a network output (keys of `src/flb_upstream.c` `upstream_net`, v5.1.1). */
function netTimeouts(): Section {
  return [
    ['net.connect_timeout', `${FLUENT_BIT_SHUTDOWN.connectTimeoutSeconds}s`],
    ['net.io_timeout', `${FLUENT_BIT_SHUTDOWN.ioTimeoutSeconds}s`],
  ];
}

/**
 * Fluent Bit's shutdown (v5.1.1; unchanged in what matters since v3.2.10):
 * - SIGTERM sets a flag (`flb_signal_handler_break_loop`, src/fluent-bit.c) that the main loop
 *   sees at once (the signal interrupts its `sleep(1)`); `flb_stop` (src/flb_lib.c) tells the
 *   engine to stop and joins it. Without `--supervisor` there is no parent process.
 * - Reads: nothing after SIGTERM. The engine flushes what it has and pauses every input at
 *   once (`flb_engine_stop_ingestion` -> `flb_input_pause_all`, src/flb_engine.c; no option
 *   keeps them reading). Before it, `tail` reads a watched file on its inotify event and finds a
 *   new file at the next scan (`Refresh_Interval`, 1 s): a line written at the app's exit is read
 *   within `Refresh_Interval` + 1 s, so the agent must get SIGTERM that long after the app's exit,
 *   in the native layout too (the SIGTERM hold). With a multiline parser, the app's last record is
 *   emitted only after the parser's flush timeout (4 s).
 * - Flushes: for up to `Grace` seconds: the engine re-checks every second and stops at the first
 *   tick with no running task and no chunk left in memory or on disk (`flb_task_running_count`,
 *   `flb_storage_chunk_count`), at the latest after `Grace` ticks (at least one; retries are
 *   rescheduled at once, `flb_engine_reschedule_retries`). With the backend down, the chunks
 *   stay in the filesystem buffer and are sent by the next start.
 * - Then `flb_engine_shutdown` stops the outputs: a worker thread (http, es, opensearch, loki,
 *   forward) exits only when none of its connections is busy (`src/flb_output_thread.c`). A
 *   send started just before the end of `Grace` can take `net.connect_timeout` + `net.io_timeout`
 *   (the I/O deadline is renewed by every read and write, `src/flb_io.c`), each detected up
 *   to 2.5 s late (`cb_thread_sched_timer` every 1500 ms). Without `net.io_timeout` (default 0) a
 *   stalled backend holds the worker until the kubelet kills it, which is why the renderer sets it.
 * - The `stdout` output has no connections: the bound is the grace loop and the exit.
 */
export function fluentBitShutdown(graceSeconds: number, output: LogOutputConfig['type'], multiline = false): ShutdownModel {
  const f = FLUENT_BIT_SHUTDOWN;
  const terms: Array<readonly [string, number]> = [['Grace (engine ticks of 1 s, at least one)', Math.max(graceSeconds, 1)]];
  if (output !== 'stdout') {
    terms.push(
      ['in-flight send: net.connect_timeout', f.connectTimeoutSeconds],
      ['in-flight send: net.io_timeout', f.ioTimeoutSeconds],
      ['both timeouts detected late (1.5 s checks, whole-second deadlines)', 2 * f.timeoutLateSeconds],
    );
  }
  terms.push(['exit', f.exitSeconds]);
  return shutdownModel(
    terms,
    f.refreshIntervalSeconds + 1 + (multiline ? FLUENT_BIT_MULTILINE_FLUSH_SECONDS : 0),
    // native too: the kubelet stops it ~1 s after the app, before the next scan has found a file
    // the app (or the capture wrapper, at its first line) created in its last second; proven on
    // the cluster (docs/proof.md, the seed's experiment: 1991 of 5000 lines lost without it)
    true,
  );
}
