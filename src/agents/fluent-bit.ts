/**
 * Fluent Bit classic-mode config rendering. Pure: options in, file text out.
 * @see https://docs.fluentbit.io/manual/administration/configuring-fluent-bit/classic-mode
 */
import { LogOutputConfig } from '../log-output';

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
  // eslint-disable-next-line no-control-regex
  if (v === '' || v.trim() !== v || /[\u0000-\u001f\u007f]/.test(v) || v.includes('${')) {
    throw new Error(
      `Fluent Bit's classic config cannot hold the ${what} ${JSON.stringify(v)} (empty, white space at either end, a newline or ` +
      "another control character, or '${'); give a value without them",
    );
  }
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
      ['Refresh_Interval', 1],
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
    section('OUTPUT', outputSection(o.output, o.secretVars)),
  ].join('\n');
}
