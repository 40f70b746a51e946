/**
 * The default image of each agent, as public names (`Images.FLUENT_BIT`, ...): jsii gives a static
 * member to every language, where a module-level constant would not exist in Python, Java or Go. The
 * images themselves, with the upstream source of each tag and the releases each config is written
 * for, are facts: src/facts/images.ts.
 */
import { checkImage, checkString, describeValue } from './bind/checks';
import { DEFAULT_IMAGES, SHA256_DIGEST } from './facts/images';
import { Where } from './private/errors';

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

  /** The default image of the `sidecar-tools` init container (a static busybox; `Sidecars.configure`'s `toolsImage`). */
  public static readonly SIDECAR_TOOLS: string = DEFAULT_IMAGES.busybox.image;

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
