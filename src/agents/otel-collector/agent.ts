/**
 * The OpenTelemetry Collector as a log agent (`LogAgent.otelCollector()`), all of it but the
 * config writer (./logs.ts): its options, its default image, the factory's checks and the
 * container it runs in. The same folder holds the collector's config as `WithTracer`'s agent
 * (./config.ts); the two share the uid, not the image or the release range.
 */
import { Duration } from 'cdk8s';
import { OTEL_COLLECTOR_UID } from './config';
import { OTEL_LOG_OUTPUTS, otelCollectorLogShutdown, renderOtelCollectorLogConfig } from './logs';
import { checkImage, checkListenPort, positiveSeconds } from '../../bind/checks';
import { DefaultImage, releaseRangeWarning } from '../../facts/images';
import { Where } from '../../private/errors';
import { LogAgentSpec, agentDiskRequest } from '../log-agent-spec';

/**
 * Options of the OpenTelemetry Collector log agent (`LogAgent.otelCollector()`).
 */
export interface OtelCollectorLogOptions {
  /**
   * The collector image: a distribution with the file_log receiver, the file_storage and
   * health_check extensions and the debug and otlp_http exporters. The config is written for
   * the collector 0.150.0 up to, not including, 0.166.0; another release is a warning.
   * @default 'otel/opentelemetry-collector-k8s:0.165.0'
   */
  readonly image?: string;
  /**
   * How long one export to the backend may take before it fails and is retried later (the
   * otlp_http exporter's `timeout`). At shutdown the attempt in flight is waited for: it counts
   * toward the pod's grace period, with a second to exit.
   * @default Duration.seconds(5)
   */
  readonly exportTimeout?: Duration;
  /**
   * Port of the health_check extension on 0.0.0.0 (the probes).
   * 1024 or above: the agent runs as non-root without NET_BIND_SERVICE.
   * @default 13133
   */
  readonly healthPort?: number;
}

/**
 * The default image: the collector's Kubernetes distribution (otelcol-k8s), whose manifest ships
 * every component the log config uses, which the core distribution of `WithTracer`'s image does
 * not (no filelog receiver, no file_storage). It runs as uid 10001 (`USER 10001:10001`), from
 * scratch (no shell), entrypoint `/otelcol-k8s`: distributions/otelcol-k8s/Dockerfile.
 */
const IMAGE = {
  image: 'otel/opentelemetry-collector-k8s:0.165.0',
  usedBy: 'LogAgent.otelCollector()',
  source: 'the OpenTelemetry Collector release v0.165.0 (Go module proxy, as the core image\'s), pushed as ' +
    'otel/opentelemetry-collector-k8s:<version> by open-telemetry/opentelemetry-collector-releases ' +
    '(distributions/otelcol-k8s/.goreleaser.yaml docker_manifests, manifest.yaml: filelogreceiver, filestorage, debugexporter, otlphttpexporter)',
  // the receiver type `file_log` is in the releases from 0.150.0 (./logs.ts): an older collector may refuse the config
  releases: { program: 'OpenTelemetry Collector', from: '0.150.0', below: '0.166.0', checked: 'the receiver type file_log from 0.150.0; the keys read at v0.165.0; every config validated and run by a collector built from its components at v0.165.0' },
} as const satisfies DefaultImage;

/** The path the health_check extension answers on (`/` is its default; the probes ask for it). */
const HEALTH_PATH = '/';

/** The OpenTelemetry Collector as a log agent, registered in src/agents/registry.ts (`LogAgent.otelCollector()`). */
export const OTEL_COLLECTOR_LOG_AGENT: LogAgentSpec<OtelCollectorLogOptions> = {
  name: 'otel-collector',
  factory: 'otelCollector',
  title: 'OpenTelemetry Collector',
  // the folder is shared with WithTracer's collector, which with-tracer.ts names: only the log agent's own words
  names: ['LogAgent.otelCollector', 'OtelCollectorLogOptions', 'OTEL_COLLECTOR_K8S', 'filelog', 'file_log'],
  image: IMAGE,
  outputs: OTEL_LOG_OUTPUTS,
  options: { image: 'string', exportTimeout: 'duration', healthPort: 'number' },

  check(who: Where, options: OtelCollectorLogOptions): void {
    checkImage(who, 'image', options.image ?? IMAGE.image, IMAGE.image);
    if (options.healthPort !== undefined) checkListenPort(who, 'healthPort', options.healthPort);
    positiveSeconds(who, 'exportTimeout', options.exportTimeout, 5, 'an export needs time to be answered');
  },

  render(options, ctx, others) {
    const exportSeconds = positiveSeconds(ctx.who, 'otelCollector exportTimeout', options.exportTimeout, 5, 'an export needs time to be answered');
    const healthPort = options.healthPort ?? 13133;
    const image = options.image ?? IMAGE.image;
    const warning = releaseRangeWarning(ctx.who, image, IMAGE);
    if (!OTEL_LOG_OUTPUTS.includes(ctx.output.type)) {
      throw ctx.who.error(
        `LogAgent.otelCollector() cannot use LogOutput.${ctx.output.type}(): the collector's distribution has no exporter for it ` +
        '(it has debug for stdout and otlp_http, which Loki 3 takes on its OTLP endpoint)',
        ctx.output.type, `ship with LogOutput.stdout() or LogOutput.loki(), or keep LogOutput.${ctx.output.type}() with ${others(ctx.output.type)}`, '. ',
      );
    }
    // the persistent queue's limit: a quarter of the log volume, as the other agents' disk buffers
    const queueMiB = Math.max(1, Math.floor(ctx.logVolumeSizeLimitMiB / 4));
    let config: string;
    try {
      config = renderOtelCollectorLogConfig({
        logDirectory: ctx.logDirectory,
        filePattern: ctx.filePattern,
        stateDirectory: `${ctx.logDirectory}/.otel-collector`,
        healthPort,
        healthPath: HEALTH_PATH,
        queueBytes: queueMiB * 1024 * 1024,
        exportTimeoutSeconds: exportSeconds,
        output: ctx.output,
        secretVars: ctx.secretVars,
        sources: ctx.sources ?? {},
      });
    } catch (e) {
      throw ctx.who.place(e); // an output it cannot serve, with the construct's path
    }
    return {
      image,
      command: ['/otelcol-k8s'],
      args: ['--config', `${ctx.configDirectory}/config.yaml`],
      files: { 'config.yaml': config },
      healthPort,
      healthPath: HEALTH_PATH,
      healthPortName: 'otel-health',
      // Liveness on the same endpoint: health_check answers from the collector's status, not from
      // the exporters' errors (a backend that is down does not make it fail).
      uid: OTEL_COLLECTOR_UID,
      shutdown: otelCollectorLogShutdown(exportSeconds, ctx.output.type),
      env: [],
      defaultResources: {
        cpuRequest: '20m',
        cpuLimit: '250m',
        memoryRequest: '64Mi',
        memoryLimit: '256Mi',
        // the persistent sending queue (stdout has none) and the offsets, in file_storage's bbolt files
        ephemeralStorageRequest: agentDiskRequest(ctx.output.type === 'stdout' ? 0 : queueMiB),
      },
      ...(warning ? { warnings: [warning] } : {}),
    };
  },
};
