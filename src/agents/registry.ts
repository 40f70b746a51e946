/**
 * The registry of the log agents: each agent is one folder (src/agents/<agent>/: options, default
 * image, factory checks and container in `agent.ts`, config writer and shutdown model in
 * `config.ts`), listed here once. The construct, the CLI's config schema, the README's image table,
 * the cluster's image list and the tests read `LogAgent._registered`; no other file of src/ names a
 * log agent (test/agent-folders.test.ts).
 *
 * The public names jsii needs declared in a class are here too: `LogAgent`'s static factories and
 * `Images`' static members (jsii gives a static member to every language, where a module-level
 * constant would not exist in Python, Java or Go).
 */
import { FLUENT_BIT_AGENT } from './fluent-bit/agent';
import { FLUENTD_AGENT } from './fluentd/agent';
import { LogAgentContext, LogAgentRendering, LogAgentSpec } from './log-agent-spec';
import { LogOutputConfig } from './log-output-config';
import { OTEL_COLLECTOR_LOG_AGENT } from './otel-collector/agent';
import { VECTOR_AGENT } from './vector/agent';
import { checkImage, checkString, describeValue, snapshot } from '../bind/checks';
import { DEFAULT_IMAGES, DefaultImage, SHA256_DIGEST } from '../facts/images';
import { Where } from '../private/errors';
import type { FluentBitOptions } from './fluent-bit/agent';
import type { FluentdOptions } from './fluentd/agent';
import type { OtelCollectorLogOptions } from './otel-collector/agent';
import type { VectorOptions } from './vector/agent';

export { FluentBitConfigFormat, FluentBitMultilineParser, FluentBitOptions } from './fluent-bit/agent';
export { VectorOptions } from './vector/agent';
export { FluentdOptions } from './fluentd/agent';
export { OtelCollectorLogOptions } from './otel-collector/agent';

/** The log agents, in the order of `LogAgent`'s factories; the first is `WithLogAgent`'s default. */
const LOG_AGENTS: ReadonlyArray<LogAgentSpec<any>> = [FLUENT_BIT_AGENT, VECTOR_AGENT, FLUENTD_AGENT, OTEL_COLLECTOR_LOG_AGENT];

/**
 * The log shipper that runs in the sidecar. Choose one with a static method.
 */
export abstract class LogAgent {
  /**
   * Every registered agent, in the order of the factories below (the CLI's config schema, the
   * image table, the cluster's image list and the tests read this list).
   * @internal
   */
  public static readonly _registered: ReadonlyArray<LogAgentSpec<any>> = LOG_AGENTS;

  /**
   * Fluent Bit: tails the log files, keeps offsets and a filesystem buffer in `.fluent-bit/` on
   * the shared volume (retrying without a count limit, so an outage or a restart loses nothing
   * the buffer holds), flushes for `grace` after SIGTERM, and serves `/api/v1/health` for the probes.
   * @see https://docs.fluentbit.io/manual/
   */
  public static fluentBit(options: FluentBitOptions = {}): LogAgent {
    return registered(FLUENT_BIT_AGENT, options);
  }

  /**
   * Vector: tails the log files with its file source (checkpoints in its data_dir on the
   * shared volume), adds the pod's identity with a remap transform, drains for
   * `gracefulShutdownLimit` after SIGTERM, and answers the probes' `GET /health` with an
   * http_server source (Vector's API stays off). Ships to
   * stdout, HTTP, Loki, Elasticsearch and OpenSearch; Vector has no Fluent forward sink.
   * @see https://vector.dev/docs/
   */
  public static vector(options: VectorOptions = {}): LogAgent {
    return registered(VECTOR_AGENT, options);
  }

  /**
   * Fluentd: tails the log files with in_tail (position file on the shared volume), adds the
   * pod's identity with record_transformer, buffers in files on the log volume (resumed after a
   * restart) and flushes them at shutdown, and serves
   * in_monitor_agent's `GET /api/plugins.json` for the probes.
   * @see https://docs.fluentd.org/
   */
  public static fluentd(options: FluentdOptions = {}): LogAgent {
    return registered(FLUENTD_AGENT, options);
  }

  /**
   * The OpenTelemetry Collector as a log shipper: tails the log files with the filelog receiver
   * (offsets in file_storage on the shared volume), keeps what it could not send in a persistent
   * sending queue there (sent after a restart), and serves the health_check extension for the
   * probes. Ships to stdout (the debug exporter) and to Loki 3's OTLP endpoint (otlp_http; the
   * labels become resource attributes); the other outputs have no exporter in its distribution.
   * @see https://opentelemetry.io/docs/collector/
   */
  public static otelCollector(options: OtelCollectorLogOptions = {}): LogAgent {
    return registered(OTEL_COLLECTOR_LOG_AGENT, options);
  }

  /**
   * The agent `WithLogAgent` runs when none is given: the registry's first.
   * @internal
   */
  public static _default(): LogAgent {
    return registered(LOG_AGENTS[0], {});
  }

  /** The agent's name, e.g. `fluent-bit`. */
  public abstract readonly name: string;

  /** @internal */
  public abstract _render(ctx: LogAgentContext): LogAgentRendering;
}

/** An agent of the registry with its options, checked. */
class RegisteredAgent<O> extends LogAgent {
  public readonly name: string;

  constructor(private readonly spec: LogAgentSpec<O>, private readonly options: O) {
    super();
    this.name = spec.name;
  }

  public _render(ctx: LogAgentContext): LogAgentRendering {
    return this.spec.render(this.options, ctx, output => otherAgents(this.spec, output));
  }
}

/** The registered agents but `spec` that ship to `output` with their default image, as a message offers them. */
function otherAgents(spec: LogAgentSpec<any>, output?: LogOutputConfig['type']): string {
  const calls = LOG_AGENTS.filter(a => a !== spec && (output === undefined || a.outputs.includes(output))).map(a => `LogAgent.${a.factory}()`);
  return calls.length <= 1 ? calls.join('') : `${calls.slice(0, -1).join(', ')} or ${calls[calls.length - 1]}`;
}

/** `LogAgent.<factory>(options)`: each option read once (checked and used, the same value), checked before any file is written. */
function registered<O>(spec: LogAgentSpec<O>, options: O): LogAgent {
  const o = snapshot(options);
  spec.check(new Where(`LogAgent.${spec.factory}()`), o);
  return new RegisteredAgent(spec, o);
}

/**
 * The default image of each agent, pinned, one name each (`Images.FLUENT_BIT`, ...): what a
 * construct uses when its `image` prop is not given.
 */
export class Images {
  /** The default Fluent Bit image of `LogAgent.fluentBit()` (pinned). */
  public static readonly FLUENT_BIT: string = FLUENT_BIT_AGENT.image.image;

  /** The default Vector image of `LogAgent.vector()` (pinned). */
  public static readonly VECTOR: string = VECTOR_AGENT.image.image;

  /** The default Fluentd image of `LogAgent.fluentd()` (pinned; core plugins only). */
  public static readonly FLUENTD: string = FLUENTD_AGENT.image.image;

  /** The default OpenTelemetry Collector image of `LogAgent.otelCollector()` (its Kubernetes distribution, pinned). */
  public static readonly OTEL_COLLECTOR_K8S: string = OTEL_COLLECTOR_LOG_AGENT.image.image;

  /** The default Envoy image of `WithEnvoy` (pinned). `drain_listeners?inboundonly&graceful` needs Envoy 1.34 or later. */
  public static readonly ENVOY: string = DEFAULT_IMAGES.envoy.image;

  /** The default OpenTelemetry Collector image of `WithTracer` (the core distribution, pinned). */
  public static readonly OTEL_COLLECTOR: string = DEFAULT_IMAGES.otelCollector.image;

  /** The default image of the `sidecar-tools` init container (a static busybox; `Sidecars.configure`'s `toolsImage`). */
  public static readonly SIDECAR_TOOLS: string = DEFAULT_IMAGES.busybox.image;

  /**
   * Every default image, the log agents' (in the registry's order) and then the others
   * (src/facts/images.ts): the README's image table and the cluster's image list.
   * @internal
   */
  public static readonly _all: readonly DefaultImage[] = [...LOG_AGENTS.map(a => a.image), ...Object.values(DEFAULT_IMAGES)];

  /**
   * `image` pinned by digest: `Images.pin(Images.ENVOY, 'sha256:<64 hex digits>')` gives
   * `envoyproxy/envoy:v1.40.0@sha256:...`, for a construct's `image` prop (or `toolsImage`).
   * The runtime then pulls exactly that image whatever the tag points at later; the tag stays, so
   * that the library still knows the release (its warnings about an image outside the releases a
   * config is written for) and people still read it.
   *
   * The library synthesizes offline and cannot look a digest up: take it from your registry (e.g.
   * `crane digest envoyproxy/envoy:v1.40.0`, or `docker buildx imagetools inspect` for the
   * multi-platform index), for the image your nodes pull (your mirror's copy, if you use one:
   * `Images.pin('registry.example.com/envoyproxy/envoy:v1.40.0', ...)`). Checked: `image` is an
   * image reference with a tag and no digest, and `digest` is `sha256:` and 64 lower-case hex digits.
   *
   * @example
   * new WithEnvoy(chart, 'envoy', {
   *   workload: web,
   *   appPort: 8080,
   *   image: Images.pin(Images.ENVOY, 'sha256:8d7f7a8c0f8e1b2a3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3'),
   * });
   */
  public static pin(image: string, digest: string): string {
    const who = new Where('Images.pin');
    checkString(who, 'image', image, `'${Images.ENVOY}'`);
    checkString(who, 'digest', digest, "'sha256:<64 hex digits>'");
    checkImage(who, 'image', image, Images.ENVOY);
    if (image.includes('@')) {
      throw who.error(`image '${image}' is already pinned by a digest`, image, `give the image with its tag only, e.g. '${Images.ENVOY}'`);
    }
    const name = image.slice(image.lastIndexOf('/') + 1);
    if (!name.includes(':')) {
      throw who.error(`image '${image}' has no tag`, image,
        `give it with the tag the digest belongs to, e.g. '${image}:<tag>' (the library reads the release from the tag)`);
    }
    if (!SHA256_DIGEST.test(digest)) {
      throw who.error(`digest ${describeValue(digest)} is not a sha256 digest`, digest,
        "give 'sha256:' and the 64 lower-case hex digits your registry shows for the image (e.g. `crane digest <image>`)");
    }
    return `${image}@${digest}`;
  }

  private constructor() {}
}
