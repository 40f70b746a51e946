/**
 * The default image of each agent, as public names (`Images.FLUENT_BIT`, ...): jsii gives a static
 * member to every language, where a module-level constant would not exist in Python, Java or Go. The
 * images themselves, with the upstream source of each tag and the releases each config is written
 * for, are facts: src/facts/images.ts.
 */
import { DEFAULT_IMAGES } from './facts/images';

/**
 * The default image of each agent, pinned, one name each (`Images.FLUENT_BIT`, ...): what a
 * construct uses when its `image` prop is not given.
 */
export class Images {
  /** The default Fluent Bit image of `LogAgent.fluentBit()` (pinned). */
  public static readonly FLUENT_BIT: string = DEFAULT_IMAGES.fluentBit.image;

  /** The default Vector image of `LogAgent.vector()` (pinned). */
  public static readonly VECTOR: string = DEFAULT_IMAGES.vector.image;

  /** The default Fluentd image of `LogAgent.fluentd()` (pinned; core plugins only). */
  public static readonly FLUENTD: string = DEFAULT_IMAGES.fluentd.image;

  /** The default Envoy image of `WithEnvoy` (pinned). `drain_listeners?inboundonly&graceful` needs Envoy 1.34 or later. */
  public static readonly ENVOY: string = DEFAULT_IMAGES.envoy.image;

  /** The default OpenTelemetry Collector image of `WithTracer` (the core distribution, pinned). */
  public static readonly OTEL_COLLECTOR: string = DEFAULT_IMAGES.otelCollector.image;

  private constructor() {}
}
