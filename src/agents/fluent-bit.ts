/**
 * Fluent Bit classic-mode config rendering. Pure: options in, file text out.
 * @see https://docs.fluentbit.io/manual/administration/configuring-fluent-bit/classic-mode
 */
import { LogOutputConfig } from '../log-output';
import { ShutdownModel, shutdownModel } from './shutdown-model';
import { fluentBitValueProblem, showValue } from '../private/values';

export interface FluentBitConfigOptions {
  /** Directory the app writes its log files into. */
  readonly logDirectory: string;
  /** Glob of the files to tail inside logDirectory. */
  readonly filePattern: string;
  /** Offsets database on the shared volume. */
  readonly dbPath: string;
  readonly flushSeconds: number;
  /** How long Fluent Bit keeps flushing after SIGTERM. */
  readonly graceSeconds: number;
  /** Port of the HTTP server that serves /api/v1/health. */
  readonly httpPort: number;
  readonly output: LogOutputConfig;
  /** secret id -> env var name (see outputSecretEnv) */
  readonly secretVars: Record<string, string>;
}

type Section = Array<[string, string | number]>;

function section(name: string, entries: Section): string {
  const width = Math.max(...entries.map(([k]) => k.length));
  return `[${name}]\n${entries.map(([k, v]) => `    ${k.padEnd(width)} ${v}`).join('\n')}\n`;
}

const env = (name: string) => `\${${name}}`;

/**
 * A user-given value, as the classic format reads it back: the rest of the line after the key,
 * trimmed, with `${NAME}` replaced by the environment (fluent/fluent-bit
 * src/config_format/flb_cf_fluentbit.c and flb_config_format.c, v3.2.10). The format has no
 * escapes, so a value it cannot hold is refused (LogOutput and WithLogAgent refuse them first).
 */
function given(what: string, v: string): string {
  const why = fluentBitValueProblem(v);
  if (why !== undefined) throw new Error(`Fluent Bit's classic config (in a ConfigMap) cannot hold the ${what} ${showValue(v)}: it ${why}; give a value without them`);
  return v;
}

function outputSection(o: LogOutputConfig, vars: Record<string, string>): Section {
  // `tls.verify` checks the chain only; the host name is checked only with `tls.verify_hostname`,
  // which is off by default (fluent/fluent-bit src/tls/flb_tls.c, v3.2.10).
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
    case 'opensearch':
      return [
        ['Name', o.type === 'elasticsearch' ? 'es' : 'opensearch'], ['Match', '*'], ['Host', given('host', o.host)], ['Port', o.port],
        ['Index', given('index', o.index)], ['Suppress_Type_Name', 'On'], ...tls(o.tls), ...basic('HTTP_User', 'HTTP_Passwd'),
      ];
  }
}

/** The `fluent-bit.conf` file. */
export function renderFluentBitConfig(o: FluentBitConfigOptions): string {
  return [
    section('SERVICE', [
      ['Flush', o.flushSeconds],
      ['Grace', o.graceSeconds],
      ['Daemon', 'Off'],
      ['Log_Level', 'info'],
      ['HTTP_Server', 'On'],
      ['HTTP_Listen', '0.0.0.0'],
      ['HTTP_Port', o.httpPort],
      ['Health_Check', 'On'],
    ]),
    section('INPUT', [
      ['Name', 'tail'],
      ['Tag', 'app.*'],
      ['Path', given('path', `${o.logDirectory}/${o.filePattern}`)],
      ['DB', given('offsets file', o.dbPath)],
      ['DB.locking', 'true'],
      // New log files are found by scanning: every second, so a short Job's last file is not missed.
      ['Refresh_Interval', FLUENT_BIT_SHUTDOWN.refreshIntervalSeconds],
      ['Read_from_Head', 'true'],
      ['Skip_Long_Lines', 'On'],
      ['Mem_Buf_Limit', '16MB'],
    ]),
    section('FILTER', [
      ['Name', 'record_modifier'],
      ['Match', '*'],
      ['Record', `pod ${env('POD_NAME')}`],
      ['Record', `namespace ${env('POD_NAMESPACE')}`],
      ['Record', `node ${env('NODE_NAME')}`],
    ]),
    // Every network output gets connect and I/O timeouts: they bound the shutdown (fluentBitShutdown).
    section('OUTPUT', [...outputSection(o.output, o.secretVars), ...(o.output.type === 'stdout' ? [] : netTimeouts())]),
  ].join('\n');
}

// ---------------------------------------------------------------------------
// Shutdown model (fluent/fluent-bit v3.2.10)
// ---------------------------------------------------------------------------

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

/** `net.*` timeouts of a network output (keys of `src/flb_upstream.c` `upstream_net`, v3.2.10). */
function netTimeouts(): Section {
  return [
    ['net.connect_timeout', `${FLUENT_BIT_SHUTDOWN.connectTimeoutSeconds}s`],
    ['net.io_timeout', `${FLUENT_BIT_SHUTDOWN.ioTimeoutSeconds}s`],
  ];
}

/**
 * Fluent Bit's shutdown (v3.2.10):
 * - Reads: nothing after SIGTERM. The engine pauses every input at once (`flb_input_pause_all`,
 *   `src/flb_engine.c`, FLB_ENGINE_STOP). Before it, `tail` reads a watched file on its inotify
 *   event (`plugins/in_tail/tail_fs_inotify.c`) and finds a new file at the next scan
 *   (`Refresh_Interval`, 1 s): a line written at the app's exit is read within
 *   `Refresh_Interval` + 1 s, so the agent must get SIGTERM that long after the app's exit.
 * - Flushes: the chunks already read, for up to `Grace` seconds: the engine re-checks every
 *   second and stops at the first tick without running tasks, at the latest after `Grace`
 *   ticks (at least one; retries are rescheduled at once, `flb_engine_reschedule_retries`).
 *   A chunk the engine has not dispatched by then is lost, so `Grace` should exceed `Flush`.
 * - Then `flb_engine_shutdown` stops the outputs: a worker thread (http, es, opensearch, loki,
 *   forward) exits only when none of its connections is busy (`src/flb_output_thread.c`). A
 *   send started just before the end of `Grace` can take `net.connect_timeout` + `net.io_timeout`
 *   (the I/O deadline is renewed by every read and write, `src/flb_io.c`), each detected up
 *   to 2.5 s late. Without `net.io_timeout` (default 0) a stalled backend holds the worker until
 *   the kubelet kills it, which is why the renderer sets it.
 * - The `stdout` output has no connections: the bound is the grace loop and the exit.
 */
export function fluentBitShutdown(graceSeconds: number, output: LogOutputConfig['type']): ShutdownModel {
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
  return shutdownModel(terms, f.refreshIntervalSeconds + 1);
}
