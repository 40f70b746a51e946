/**
 * The OpenTelemetry Collector as a log agent (`LogAgent.otelCollector()`): its `config.yaml`
 * and its shutdown model. Pure: options in, config out. The keys were read at v0.165.0 in the
 * modules the Go module proxy serves (contrib pkg/stanza, receiver/filelogreceiver,
 * extension/storage/filestorage, extension/healthcheckextension; core exporter/debugexporter,
 * exporter/otlphttpexporter, exporter/exporterhelper), and the collector built from exactly those
 * components (test/collector/logs-builder-manifest.yaml) validates and runs every variant
 * (test/agents/otel-collector.agent-test.ts):
 * - `file_log` receiver (renamed from `filelog` by contrib PR #46750, released by 0.150.0, where the
 *   release range starts; `filelog`, a deprecated alias, logs a warning at every start:
 *   filelogreceiver/metadata.yaml `deprecated_type`): `include`, `start_at`, `poll_interval`,
 *   `max_log_size`, `storage`, `include_file_path`, `resource` (fileconsumer/config.go, operator/helper/identifier.go), and
 *   the `container` parser operator (`add_metadata_from_filepath`; its `format` detected,
 *   operator/parser/container/config.go) for the kubelet's files;
 * - `file_storage` extension: `directory`, `create_directory` (extension/storage/filestorage/config.go);
 * - `debug` exporter: `verbosity`, `use_internal_logger: false` (then it writes to stdout,
 *   debugexporter/config.go `OutputPaths`, default `["stdout"]`);
 * - `otlp_http` exporter (its type since 0.144.0, renamed from `otlphttp`, otlphttpexporter/metadata.yaml):
 *   `endpoint` (the logs go to `<endpoint>/v1/logs`), `headers`, `timeout`,
 *   `sending_queue.{enabled, storage, sizer, queue_size, num_consumers}`,
 *   `retry_on_failure.{enabled, initial_interval, max_interval, max_elapsed_time}`;
 * - `health_check` extension `endpoint`, `path`; `${env:NAME}` values (the env config provider).
 */
import { SidecarError } from '../../private/errors';
import { Json } from '../../private/json';
import { agentYaml } from '../../private/values';
import { LogOutputConfig } from '../log-output-config';
import { ShutdownModel, shutdownModel } from '../shutdown-model';

/** The component names of the log pipeline. */
export const OTEL_LOG_COMPONENTS = {
  files: 'file_log',
  capture: 'file_log/stdout',
  podLogs: 'file_log/pod',
  storage: 'file_storage',
  healthCheck: 'health_check',
  stdout: 'debug',
  loki: 'otlp_http/loki',
} as const;

/** The outputs the collector's distribution has an exporter for; the others are refused. */
export const OTEL_LOG_OUTPUTS: ReadonlyArray<LogOutputConfig['type']> = ['stdout', 'loki'];

/** The values the shutdown model rests on; the renderer emits the same ones. */
export const OTEL_LOG_SHUTDOWN = {
  /** filelog `poll_interval` (its default, fileconsumer/config.go `defaultPollInterval`, 200 ms). */
  pollIntervalMs: 200,
  /** A last line without a newline is emitted after `force_flush_period` (500 ms, reader/factory.go `DefaultFlushPeriod`). */
  flushPeriodMs: 500,
  /** Leaving the process after the pipelines have stopped. */
  exitSeconds: 1,
} as const;

export interface OtelCollectorLogConfigOptions {
  readonly logDirectory: string;
  readonly filePattern: string;
  /** The agent's own directory on the log volume (offsets and the sending queue), never tailed. */
  readonly stateDirectory: string;
  readonly healthPort: number;
  readonly healthPath: string;
  /** The persistent sending queue's limit, in bytes of the records it holds. */
  readonly queueBytes: number;
  /** One export attempt's timeout. */
  readonly exportTimeoutSeconds: number;
  readonly output: LogOutputConfig;
  /** secret id -> env var name (see outputSecretEnv). */
  readonly secretVars: Record<string, string>;
  readonly sources: { readonly capture?: string; readonly podLogsEnv?: string };
}

const env = (name: string) => `\${env:${name}}`;
/**
 * A value as written, never expanded: the collector's config reads `$$` as one `$` (and `${...}` as
 * a reference; LogOutput refuses `${` in its values), so every `$` is doubled (the collector
 * 0.165.0 sent a label value `a$$b` as `a$b`; doubled, test/agents/otel-collector.agent-test.ts
 * gets it as written).
 */
const literal = (value: string) => value.split('$').join('$$');

/** The collector's `config.yaml` for the log agent. */
export function renderOtelCollectorLogConfig(o: OtelCollectorLogConfigOptions): string {
  const c = OTEL_LOG_COMPONENTS;
  // Every file source reads the same way: from the start of a file (a short Job's first lines are
  // not missed), new files looked for every poll, offsets in file_storage, lines up to 1 MiB whole
  // (a longer one is split, fileconsumer `max_log_size_behavior: split`, its default), and the
  // pod's identity as resource attributes (their values from the downward API's env).
  // Loki's labels go along as resource attributes too (Loki indexes those its `otlp_config` names).
  const labels = o.output.type === 'loki' ? Object.fromEntries(Object.entries(o.output.labels).map(([k, v]) => [k, literal(v)])) : {};
  const reading = (include: string): Json => ({
    include: [include],
    start_at: 'beginning',
    poll_interval: `${OTEL_LOG_SHUTDOWN.pollIntervalMs}ms`,
    max_log_size: '1MiB',
    storage: c.storage,
    resource: { ...labels, 'k8s.namespace.name': env('POD_NAMESPACE'), 'k8s.node.name': env('NODE_NAME'), 'k8s.pod.name': env('POD_NAME') },
  });
  const receivers: Json = {
    // the state directory starts with '.', and filePattern has no '/': no pattern reaches it
    [c.files]: { ...reading(literal(`${o.logDirectory}/${o.filePattern}`)), include_file_path: true },
  };
  if (o.sources.capture !== undefined) {
    // captureStdout (src/engine/capture.ts): the copiers' files, one per stream and number
    receivers[c.capture] = { ...reading(literal(o.sources.capture)), include_file_path: true };
  }
  if (o.sources.podLogsEnv !== undefined) {
    // podLogs: the kubelet's files of the app container, CRI lines `<time> <stream> <P|F> <log>`,
    // parsed and the partial (P) lines joined by the container parser (operator/parser/container;
    // no `format`: it tells containerd's and CRI-O's lines apart itself, and has no `cri`); the
    // path is the pod's own, so no metadata is read from it.
    receivers[c.podLogs] = { ...reading(env(o.sources.podLogsEnv)), operators: [{ type: 'container', add_metadata_from_filepath: false }] };
  }

  const config: Json = {
    extensions: {
      [c.healthCheck]: { endpoint: `0.0.0.0:${o.healthPort}`, path: o.healthPath },
      [c.storage]: { directory: literal(o.stateDirectory), create_directory: true },
    },
    receivers,
    exporters: exporter(o),
    service: {
      extensions: [c.healthCheck, c.storage],
      telemetry: { metrics: { level: 'none' } },
      pipelines: { logs: { receivers: Object.keys(receivers), exporters: [o.output.type === 'stdout' ? c.stdout : c.loki] } },
    },
  };
  // Every string double-quoted and escaped (src/private/values.ts): no value reads as another type.
  return agentYaml(config);
}

function exporter(o: OtelCollectorLogConfigOptions): Json {
  const out = o.output;
  if (out.type === 'stdout') {
    // one record per block on the agent's stdout, every attribute shown
    return { [OTEL_LOG_COMPONENTS.stdout]: { verbosity: 'detailed', use_internal_logger: false } };
  }
  if (out.type !== 'loki') {
    throw new SidecarError({
      value: out.type,
      problem: `the OpenTelemetry Collector's distribution has no exporter for LogOutput.${out.type}() (it ships OTLP: debug, otlp_grpc, otlp_http; ` +
        'open-telemetry/opentelemetry-collector-releases distributions/otelcol-k8s/manifest.yaml)',
      fix: `ship with LogOutput.stdout() or LogOutput.loki() (Loki's OTLP endpoint), or keep LogOutput.${out.type}() with another LogAgent`,
    });
  }
  if (out.basicAuth !== undefined) {
    throw new SidecarError({
      value: 'basicAuth',
      problem: 'LogAgent.otelCollector() cannot send basicAuth to Loki: the otlp_http exporter takes it only from the basicauth extension, ' +
        'which the agent\'s collector does not run',
      fix: 'leave basicAuth out (a tenantId is sent as X-Scope-OrgID), or use another LogAgent for a Loki that needs it',
    });
  }
  // Loki's OTLP endpoint (Loki 3): `<endpoint>/v1/logs` is `/otlp/v1/logs`. The labels become
  // resource attributes; Loki indexes those of its `otlp_config` as stream labels (docs/log-agents.md).
  const headers: Record<string, string> = out.tenantId !== undefined ? { 'X-Scope-OrgID': out.tenantId } : {};
  return {
    [OTEL_LOG_COMPONENTS.loki]: {
      endpoint: `${out.tls ? 'https' : 'http'}://${out.host}:${out.port}/otlp`,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      timeout: `${o.exportTimeoutSeconds}s`,
      // the queue on the log volume (file_storage): what was read but not delivered survives a
      // restart of the agent; its size is counted in bytes of the records, the disk request's part
      sending_queue: { enabled: true, storage: OTEL_LOG_COMPONENTS.storage, sizer: 'bytes', queue_size: o.queueBytes, num_consumers: 1 },
      retry_on_failure: { enabled: true, initial_interval: '1s', max_interval: '10s', max_elapsed_time: '0s' },
    },
  };
}

/**
 * The collector's shutdown as a log agent (v0.165.0, read in the modules of that release):
 * - Reads: nothing after SIGTERM. The receivers stop first (`Graph.ShutdownAll`, components in
 *   topological order); filelog's `Stop` cancels its poll loop and waits for it
 *   (pkg/stanza/fileconsumer/file.go:102-117), and a file being read stops at once
 *   (fileconsumer/internal/reader/reader.go:264-267, `ctx.Done()`), then the offsets are saved.
 *   Before that, new lines are found at the next poll (`poll_interval`, 200 ms) and a last line
 *   without a newline after `force_flush_period` (500 ms): the agent must get SIGTERM that long
 *   after the app's exit, in the native layout too (like a polling agent: `holdSigtermInNative`).
 * - Entries already read are handed on: the stanza emitter flushes its batch when it stops
 *   (pkg/stanza/operator/helper/emitter.go:173-181, a 5 s context).
 * - Sends: the exporter's persistent queue stops handing out requests at once
 *   (exporter/exporterhelper/internal/queue/persistent_queue.go:245-257 `stopped`, `Read`
 *   l. 326-328), and the queue waits for the requests in flight (async_queue.go:66-70): at most
 *   one export attempt, bounded by the exporter's `timeout`; retries stop at shutdown. What is
 *   still queued stays in file_storage on the log volume and is sent by the agent's next start (a
 *   restart of its container), as a disk buffer of the other agents is; it is lost with the pod.
 * - The `debug` exporter writes each batch as it comes: the bound is the exit.
 */
export function otelCollectorLogShutdown(exportTimeoutSeconds: number, output: LogOutputConfig['type']): ShutdownModel {
  const readSeconds = Math.ceil((OTEL_LOG_SHUTDOWN.pollIntervalMs + OTEL_LOG_SHUTDOWN.flushPeriodMs) / 1000);
  const terms: Array<readonly [string, number]> = output === 'stdout'
    ? [['exit', OTEL_LOG_SHUTDOWN.exitSeconds]]
    : [['otlp_http timeout (one attempt in flight)', exportTimeoutSeconds], ['exit', OTEL_LOG_SHUTDOWN.exitSeconds]];
  return shutdownModel(terms, readSeconds, true);
}
