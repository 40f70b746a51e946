/**
 * OpenTelemetry Collector (agent sidecar) config rendering. Pure: options in, config out.
 *
 * Every key emitted here was checked against the collector's documentation for the pinned
 * release (see `OTEL_COLLECTOR_IMAGE`):
 * - otlp receiver `protocols.grpc.endpoint` / `protocols.http.endpoint`
 * - memory_limiter `check_interval`, `limit_mib`, `spike_limit_mib`
 *   (https://github.com/open-telemetry/opentelemetry-collector/tree/main/processor/memorylimiterprocessor)
 * - resource `attributes[].{key, value, action}` (action `insert`: a value the SDK already set wins)
 * - batch `timeout`, `send_batch_size`, `send_batch_max_size`
 * - otlp exporter `endpoint` (host:port), `tls.insecure`, `headers`, and the exporterhelper
 *   settings `timeout`, `sending_queue.{enabled, num_consumers, queue_size}`,
 *   `retry_on_failure.{enabled, initial_interval, max_interval, max_elapsed_time}`
 * - health_check extension `endpoint`, `path`
 * - `service.telemetry.metrics.level: none` (no internal metrics server, so no port 8888)
 * - `${env:NAME}` substitution (the env config provider) for secrets and downward-API values
 */
import { Yaml } from 'cdk8s';
import { Json } from '../engine/spec';

/**
 * The default collector image: the CORE distribution, pinned.
 *
 * Why core and not contrib: the core distribution's manifest for this release
 * (opentelemetry-collector-releases `distributions/otelcol/manifest.yaml`, v0.139.0) ships every
 * component the rendered config uses: the otlp receiver, the memory_limiter, batch and resource
 * processors, the otlp exporter and the health_check extension (the last two contrib modules
 * are part of the core distribution). It is a much smaller image than contrib. The image runs
 * as uid 10001 (`USER 10001` in its Dockerfile), has no shell, and its entrypoint is `/otelcol`.
 */
export const OTEL_COLLECTOR_IMAGE = 'otel/opentelemetry-collector:0.139.0';

/** The uid the collector images run as. */
export const OTEL_COLLECTOR_UID = 10001;

/** The component names used in the pipelines. */
export const COMPONENTS = {
  receiver: 'otlp',
  memoryLimiter: 'memory_limiter',
  resource: 'resource',
  batch: 'batch',
  exporter: 'otlp',
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
  /** Per-attempt export timeout (the drain bound is derived from it). */
  readonly exportTimeoutSeconds: number;
  /** Requests the exporter sends in parallel; also the queue's size (see `drainBoundSeconds`). */
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

/**
 * The worst-case time the collector needs to drain after SIGTERM when the backend does not
 * answer: receivers stop, the batch processor flushes into the exporter's queue, and the
 * exporter first stops retrying, then sends what is queued. With `queue_size` equal to
 * `num_consumers`, that is at most two rounds of attempts (the ones in flight, then the queued
 * ones), each bounded by the export timeout.
 */
export function drainBoundSeconds(exportTimeoutSeconds: number): number {
  return 2 * exportTimeoutSeconds;
}

/** The collector's `config.yaml`. */
export function renderOtelCollectorConfig(o: OtelCollectorConfigOptions): OtelCollectorConfig {
  // Values come from env vars only, so that every workload of a kind shares one config text.
  const attributes = Object.keys(o.resourceVars).sort().map(key => ({ action: 'insert', key, value: env(o.resourceVars[key]) }));
  const headers: Record<string, string> = {};
  for (const name of Object.keys(o.headerVars).sort()) headers[name] = env(o.headerVars[name]);

  const exporter: Json = {
    endpoint: o.exporterEndpoint,
    tls: { insecure: !o.exporterTls },
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    timeout: `${o.exportTimeoutSeconds}s`,
    sending_queue: { enabled: true, num_consumers: o.exportConsumers, queue_size: o.exportConsumers },
    retry_on_failure: { enabled: true, initial_interval: '1s', max_interval: '10s', max_elapsed_time: '60s' },
  };

  const processors = [COMPONENTS.memoryLimiter, COMPONENTS.resource, COMPONENTS.batch];
  const pipelines: Json = {};
  for (const signal of SIGNALS) {
    pipelines[signal] = { receivers: [COMPONENTS.receiver], processors: [...processors], exporters: [COMPONENTS.exporter] };
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
      [COMPONENTS.batch]: { timeout: '1s', send_batch_size: 512, send_batch_max_size: 1024 },
    },
    exporters: { [COMPONENTS.exporter]: exporter },
    service: {
      extensions: [COMPONENTS.healthCheck],
      telemetry: { metrics: { level: 'none' } },
      pipelines,
    },
  };
  return { config, yaml: stringifyOnce(config) };
}

/**
 * YAML of a config, kept per distinct config: a platform app gives hundreds of workloads the
 * same collector config (everything workload-specific comes from env vars), and YAML
 * serialization is the costly part of building one.
 */
const yamlCache = new Map<string, string>();
function stringifyOnce(config: object): string {
  const key = JSON.stringify(config);
  let yaml = yamlCache.get(key);
  if (yaml === undefined) {
    yaml = Yaml.stringify(config);
    if (yamlCache.size >= 256) yamlCache.clear();
    yamlCache.set(key, yaml);
  }
  return yaml;
}
