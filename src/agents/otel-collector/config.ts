/**
 * OpenTelemetry Collector (agent sidecar) config rendering. Pure: options in, config out.
 *
 * Every key emitted here was checked against the collector's documentation for the pinned
 * release (`DEFAULT_IMAGES.otelCollector`, src/facts/images.ts), and the real collector of that release, built with the
 * Collector Builder (scripts/build-otelcol.sh), validates and runs every config WithTracer emits
 * (test/collector.test.ts, `npm run test:collector`). The exporter is `otlp_grpc`, its name since
 * v0.144.0 (CHANGELOG.md of open-telemetry/opentelemetry-collector at v0.159.0, v0.144.0
 * "Deprecations": "Rename `otlp` exporter to `otlp_grpc` exporter and add deprecated alias `otlp`";
 * exporter/otlpexporter/metadata.yaml `type: otlp_grpc`, `deprecated_type: otlp`). The alias still
 * works at v0.165.0 but logs a deprecation at every start, once per exporter; a collector older
 * than 0.144.0 does not know `otlp_grpc` and refuses the config at start, hence the release range
 * (`DEFAULT_IMAGES.otelCollector.releases`, a warning for another image):
 * - otlp receiver `protocols.grpc.endpoint` / `protocols.http.endpoint`
 * - memory_limiter `check_interval`, `limit_mib`, `spike_limit_mib`
 *   (https://github.com/open-telemetry/opentelemetry-collector/tree/main/processor/memorylimiterprocessor)
 * - resource `attributes[].{key, value, action}` (action `insert`: a value the SDK already set wins)
 * - otlp_grpc exporter `endpoint` (host:port), `tls.insecure`, `headers`, and the exporterhelper
 *   settings `timeout` (`TimeoutConfig`), `sending_queue.{enabled, sizer, num_consumers, queue_size}`
 *   and `sending_queue.batch.{flush_timeout, sizer, min_size}` (`Config` and `BatchConfig`,
 *   `exporter/exporterhelper/internal/queuebatch/config.go`, v0.159.0 and v0.165.0): batching in the exporter,
 *   as collector RFC #15273 moves it, instead of the `batch` processor,
 *   `retry_on_failure.{enabled, initial_interval, max_interval, max_elapsed_time}`
 * - health_check extension `endpoint`, `path`
 * - `service.telemetry.metrics.level: none` (no internal metrics server, so no port 8888)
 * - `${env:NAME}` substitution (the env config provider) for secrets and downward-API values
 */
import { Json } from '../../private/json';
import { Memo, deepFreeze } from '../../private/memo';
import { setOwn, sortedKeys } from '../../private/order';
import { agentYaml } from '../../private/values';
import { ShutdownModel, shutdownModel } from '../shutdown-model';

/** The uid the collector images run as. */
export const OTEL_COLLECTOR_UID = 10001;

/** The component names used in the pipelines. */
export const COMPONENTS = {
  receiver: 'otlp',
  memoryLimiter: 'memory_limiter',
  resource: 'resource',
  /** One otlp_grpc exporter per signal (`otlp_grpc/traces`, ...), each with its own export timeout. */
  exporter: 'otlp_grpc',
  healthCheck: 'health_check',
} as const;

/** The signals the agent forwards: `OTEL_EXPORTER_OTLP_ENDPOINT` covers all three in the SDKs. */
export const SIGNALS = ['traces', 'metrics', 'logs'] as const;

export interface OtelCollectorConfigOptions {
  /** Loopback address the OTLP receivers bind to (e.g. `127.0.0.1`). */
  readonly receiverHost: string;
  readonly grpcPort: number;
  readonly httpPort: number;
  /** The health_check extension binds `0.0.0.0:<healthPort>` (the kubelet probes the pod IP). */
  readonly healthPort: number;
  readonly healthPath: string;
  /** `host:port` of the central collector or backend (gRPC). */
  readonly exporterEndpoint: string;
  readonly exporterTls: boolean;
  /** header name -> env var that holds its value (from a Secret). */
  readonly headerVars: Record<string, string>;
  /** resource attribute key -> env var (downward API) that holds its value. */
  readonly resourceVars: Record<string, string>;
  /** Per-attempt export timeout of each signal's exporter (see `otelCollectorShutdown`). */
  readonly exportTimeoutSeconds: Record<Signal, number>;
  /** Batches the exporter sends in parallel; also the queue's size in requests (see `otelCollectorShutdown`). */
  readonly exportConsumers: number;
  readonly memoryLimitMiB: number;
  readonly memorySpikeLimitMiB: number;
}

/** The rendered config: as an object (for tests and callers) and as the YAML file. */
export interface OtelCollectorConfig {
  readonly config: Json;
  readonly yaml: string;
}

const env = (name: string) => `\${env:${name}}`;

export type Signal = typeof SIGNALS[number];

/** The exporter of one signal, e.g. `otlp_grpc/traces`. */
export function exporterId(signal: Signal): string {
  return `${COMPONENTS.exporter}/${signal}`;
}

/** The least drain time: every signal's export attempt needs a whole second. */
export const MIN_DRAIN_SECONDS = SIGNALS.length;

/**
 * The export timeout of each signal: `drainSeconds` split into whole seconds, the larger shares
 * first (10 s: traces 4, metrics 3, logs 3), so that they add up to `drainSeconds`.
 */
export function exportTimeouts(drainSeconds: number): Record<Signal, number> {
  const n = SIGNALS.length;
  const out = {} as Record<Signal, number>;
  SIGNALS.forEach((signal, i) => { out[signal] = Math.floor(drainSeconds / n) + (i < drainSeconds % n ? 1 : 0); });
  return out;
}

/**
 * The collector's shutdown (open-telemetry/opentelemetry-collector v0.165.0: go.opentelemetry.io/collector/exporter/exporterhelper
 * v0.165.0 and service v0.165.0 from the Go module proxy; the same at v0.159.0), with a backend
 * that does not answer. Batching is in each exporter's `sending_queue.batch`; the paths below are
 * under `exporter/exporterhelper/internal/` unless said otherwise.
 * - Reads: the OTLP receivers stop first (`Graph.ShutdownAll`, `service/internal/graph/graph.go`:
 *   components in topological order, one after another). The app's SDK has sent its spans and
 *   metrics before it exited, so nothing is read after SIGTERM. The processors hold nothing.
 * - Then each exporter shuts down, ONE AFTER ANOTHER (traces, metrics, logs: one exporter
 *   instance per signal). It first stops its retries (`BaseExporter.Shutdown`, `base_exporter.go`
 *   l. 163-175: a retry waiting for its backoff returns at once, `retry_sender.go`), then the
 *   queue, then the batcher (`QueueBatch.Shutdown`, `queuebatch/queue_batch.go` l. 95-99): the
 *   queue's one consumer (`num_consumers` forced to 1 with batching and no partitioner, l. 56-60,
 *   collector#12473) hands every queued request to the batcher and exits (`queue/async_queue.go`
 *   l. 36-48 and 66-70, `queue/memory_queue.go` `Read` l. 164-188 returns queued items after
 *   `stopped`); the batcher (from v0.160-v0.165 a `shardedBatcher` of one `partitionBatcher` when
 *   there is no partitioner, `queuebatch/batcher.go`, `sharded_batcher.go`) flushes its partial
 *   batch once more and waits for every export it started (`queuebatch/partition_batcher.go`
 *   `shutdownInternal` l. 233-247, `flush` l. 288-294).
 * - One round: a queued request's room is freed only when the export that carries it is done
 *   (`onDone`, `queue/memory_queue.go`), so with the `requests` sizer at most `queue_size`
 *   requests are queued, batched or in flight. Without `max_size` a request is never split
 *   (`queuebatch/traces_batch.go` `MergeSplit` l. 37-40, the same for metrics and logs), so every
 *   batch holds at least one of them: at most `queue_size` batches. The batcher's worker pool
 *   has `num_consumers` workers as configured, not the forced 1 (`NewBatcher` gets `maxWorkers:
 *   cfg.NumConsumers` at `queue_batch.go` l. 49, before l. 59 sets it to 1), and `flush` waits
 *   for a free worker (`workerPool.execute`, l. 308-316). With `queue_size` = `num_consumers`
 *   every batch gets a worker at once: all exports run together, one attempt each, bounded by
 *   the signal's export `timeout`.
 * - Bound: the sum of the three export timeouts (= `drainTime`), plus a second to exit.
 */
export function otelCollectorShutdown(drainSeconds: number): ShutdownModel {
  const timeouts = exportTimeouts(drainSeconds);
  return shutdownModel([...SIGNALS.map(s => [`${exporterId(s)} timeout`, timeouts[s]] as const), ['exit', 1]], 0);
}

const configMemo = new Memo<OtelCollectorConfig>();

/**
 * The collector's `config.yaml`: rendered once per distinct options (every input is in the key),
 * the config object frozen, since every caller with those options gets the same one.
 */
export function renderOtelCollectorConfig(o: OtelCollectorConfigOptions): OtelCollectorConfig {
  return configMemo.get(JSON.stringify(o), () => {
    const rendered = renderConfig(o);
    return Object.freeze({ config: deepFreeze(rendered.config), yaml: rendered.yaml });
  });
}

function renderConfig(o: OtelCollectorConfigOptions): OtelCollectorConfig {
  // Values come from env vars only, so that every workload of a kind shares one config text.
  const attributes = sortedKeys(o.resourceVars).map(key => ({ action: 'insert', key, value: env(o.resourceVars[key]) }));
  const headers: Record<string, string> = {};
  for (const name of sortedKeys(o.headerVars)) setOwn(headers, name, env(o.headerVars[name]));

  const exporter = (signal: Signal): Json => ({
    endpoint: o.exporterEndpoint,
    tls: { insecure: !o.exporterTls },
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    timeout: `${o.exportTimeoutSeconds[signal]}s`,
    // `requests` (the default) made explicit, and no `batch.max_size`: the one-round drain rests
    // on both (see `otelCollectorShutdown`). A batch is flushed as soon as it holds `min_size`
    // items (`partition_batcher.go` l. 174, v0.165.0), so it is at most 511 items plus one request as the
    // SDK sent it; a request of 512 items or more goes out alone. `sizer: items` is needed: the
    // batch would take the queue's `requests` sizer (`Config.Unmarshal`), which it refuses.
    sending_queue: {
      enabled: true,
      sizer: 'requests',
      num_consumers: o.exportConsumers,
      queue_size: o.exportConsumers,
      batch: { flush_timeout: '1s', sizer: 'items', min_size: 512 },
    },
    retry_on_failure: { enabled: true, initial_interval: '1s', max_interval: '10s', max_elapsed_time: '60s' },
  });

  const processors = [COMPONENTS.memoryLimiter, COMPONENTS.resource];
  const pipelines: Json = {};
  for (const signal of SIGNALS) {
    pipelines[signal] = { receivers: [COMPONENTS.receiver], processors: [...processors], exporters: [exporterId(signal)] };
  }

  const config: Json = {
    extensions: {
      [COMPONENTS.healthCheck]: { endpoint: `0.0.0.0:${o.healthPort}`, path: o.healthPath },
    },
    receivers: {
      [COMPONENTS.receiver]: {
        protocols: {
          grpc: { endpoint: `${o.receiverHost}:${o.grpcPort}` },
          http: { endpoint: `${o.receiverHost}:${o.httpPort}` },
        },
      },
    },
    processors: {
      // First in every pipeline, so that it can push back on the receivers.
      [COMPONENTS.memoryLimiter]: { check_interval: '1s', limit_mib: o.memoryLimitMiB, spike_limit_mib: o.memorySpikeLimitMiB },
      [COMPONENTS.resource]: { attributes },
    },
    exporters: Object.fromEntries(SIGNALS.map(signal => [exporterId(signal), exporter(signal)])),
    service: {
      extensions: [COMPONENTS.healthCheck],
      telemetry: { metrics: { level: 'none' } },
      pipelines,
    },
  };
  // Every string double-quoted and escaped (src/private/values.ts), so that no value reads as
  // another type in the collector's YAML reader.
  return { config, yaml: agentYaml(config) };
}

