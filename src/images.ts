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
}

/** @internal */
export const DEFAULT_IMAGES = {
  fluentBit: {
    image: 'fluent/fluent-bit:3.2.10',
    usedBy: 'LogAgent.fluentBit()',
    // dockerfiles/Dockerfile at the tag: production stage FROM gcr.io/distroless/cc-debian12.
    source: 'fluent/fluent-bit release v3.2.10 (git tag v3.2.10; images built from dockerfiles/Dockerfile, pushed as fluent/fluent-bit:<version>)',
  },
  vector: {
    image: 'timberio/vector:0.54.0-distroless-libc',
    usedBy: 'LogAgent.vector()',
    // Not bumped to v0.57.0 (2026-07-14, the newest tag on 2026-12-01): read at v0.57.0,
    // src/config/api.rs has only `enabled` and `address`, and src/api/grpc_server.rs serves the
    // gRPC Observability service (events included) and the HTTP `/health` on that one port, so
    // the probes' port still cannot be limited to /health (exposeGrpcApi opts in). 0.54 gets no
    // patch release (Vector releases only the newest line): a probe that needs no API is the way on.
    // distribution/docker/distroless-libc/Dockerfile at v0.54.0 and v0.57.0: FROM
    // gcr.io/distroless/cc-debian12, no USER; the library runs it as 65532.
    source: 'vectordotdev/vector release v0.54.0 (git tag v0.54.0; distribution/docker/distroless-libc/Dockerfile, pushed as timberio/vector:<version>-distroless-libc)',
  },
  fluentd: {
    // Not v1.19.3-debian-2.4: the -2.4 suffix belonged to v1.19.2 and was never published for v1.19.3.
    // Checked 2026-12-01: v1.19.3 (2026-08-07) is the newest tag of fluent/fluentd, and
    // v1.19.3-2.2 the newest of fluent/fluentd-docker-image (README "Supported tags" at its head);
    // v1.19/debian/Dockerfile at v1.19.3-2.2: `useradd -r` fluent, USER fluent, tini.
    image: 'fluent/fluentd:v1.19.3-debian-2.2',
    usedBy: 'LogAgent.fluentd()',
    source: 'fluent/fluentd-docker-image README.md "Supported tags" (`v1.19.3-debian-2.2`) and git tag v1.19.3-2.2 (v1.19/debian/Dockerfile)',
  },
  envoy: {
    image: 'envoyproxy/envoy:v1.37.11',
    usedBy: 'WithEnvoy',
    // Checked 2026-12-01. The 1.37 line, not 1.39/1.40: the newest line whose API could be read here.
    // Every field the library emits is in the vendored protos (@grpc/grpc-js-xds 1.14.1) and, not
    // deprecated, in envoyproxy/data-plane-api mirrored from envoy f126920c (2026-01-29, after
    // 1.37.0); v3 removes no field, so the set holds at 1.37.x (test/envoy-api.test.ts). The
    // Envoy repository itself (1.7 GB) could not be fetched, so 1.38-1.40's protos were not read.
    source: 'envoyproxy.io version history (docs v1.37.11): v1.37: 1.37.11 (October 26, 2026), the newest release of the 1.37 line, ' +
      'supported beside 1.38-1.40 (docs v1.40.2); envoyproxy/envoy:v<version> is pushed per release',
  },
  otelCollector: {
    image: 'otel/opentelemetry-collector:0.139.0',
    usedBy: 'WithTracer',
    source: 'open-telemetry/opentelemetry-collector-releases release v0.139.0 (distributions/otelcol, pushed as otel/opentelemetry-collector:<version>)',
  },
  busybox: {
    image: 'busybox:1.36.1-musl',
    usedBy: 'the hook tools init container (legacy preStop/postStart before Kubernetes 1.30)',
    source: 'docker-library/docs busybox/README.md "Supported tags" (`busybox:1.36.1-musl`), Docker official image library/busybox',
  },
} as const satisfies Record<string, DefaultImage>;

// The default image of each agent, exported as `<AGENT>_IMAGE` (the one naming scheme).

/** The default Fluent Bit image of `LogAgent.fluentBit()` (pinned). */
export const FLUENT_BIT_IMAGE: string = DEFAULT_IMAGES.fluentBit.image;

/** The default Vector image of `LogAgent.vector()` (pinned; the last release whose API can be limited to `/health`). */
export const VECTOR_IMAGE: string = DEFAULT_IMAGES.vector.image;

/** The default Fluentd image of `LogAgent.fluentd()` (pinned; core plugins only). */
export const FLUENTD_IMAGE: string = DEFAULT_IMAGES.fluentd.image;

/** The default Envoy image of `WithEnvoy` (pinned). `drain_listeners?inboundonly&graceful` needs Envoy 1.34 or later. */
export const ENVOY_IMAGE: string = DEFAULT_IMAGES.envoy.image;

/** The default OpenTelemetry Collector image of `WithTracer` (the core distribution, pinned). */
export const OTEL_COLLECTOR_IMAGE: string = DEFAULT_IMAGES.otelCollector.image;
