#!/usr/bin/env bash
# Builds the real OpenTelemetry Collector (otelcol) with exactly the components WithTracer uses,
# at the pinned release, with the OpenTelemetry Collector Builder from the Go module proxy; and
# the OTLP test tool of test/collector/otlp-tool (sink and sender for test/collector.test.ts).
#
#   bash scripts/build-otelcol.sh      (run by the `test:collector` task; prints the binary's path)
#   bash scripts/build-otelcol.sh logs (the collector of LogAgent.otelCollector(), for test:agents:
#                                       test/collector/logs-builder-manifest.yaml, no test tool)
#
# Needs Go (1.24 or later) and the Go module proxy. Cached: the binaries live in
# ${OTELCOL_CACHE:-$HOME/.cache/cdk8s-sidecars/otelcol}/<version>-<manifest hash>/ and are
# rebuilt only when test/collector/builder-manifest.yaml or the tool's sources change; Go's own
# module and build caches serve the rest. The first build takes minutes (see CONTRIBUTING.md).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MANIFEST=test/collector/builder-manifest.yaml
VERSION=$(sed -n 's/^  version: \(.*\)$/\1/p' "$MANIFEST")
HASH=$(cat "$MANIFEST" test/collector/otlp-tool/go.mod test/collector/otlp-tool/go.sum test/collector/otlp-tool/*.go | sha256sum | cut -c1-12)
CACHE=${OTELCOL_CACHE:-$HOME/.cache/cdk8s-sidecars/otelcol}
OUT="$CACHE/$VERSION-$HASH"
if [ "${1:-}" = logs ]; then
  MANIFEST=test/collector/logs-builder-manifest.yaml
  VERSION=$(sed -n 's/^  version: \(.*\)$/\1/p' "$MANIFEST")
  OUT="$CACHE/logs-$VERSION-$(sha256sum "$MANIFEST" | cut -c1-12)"
  if [ -x "$OUT/otelcol" ]; then echo "$OUT"; exit 0; fi
  command -v go >/dev/null || { echo "build-otelcol: Go is not installed (https://go.dev/doc/install); it is needed to build the collector" >&2; exit 1; }
  mkdir -p "$OUT.tmp"
  trap 'rm -rf "$OUT.tmp"' EXIT
  echo "build-otelcol: installing the collector builder v$VERSION" >&2
  GOBIN="$OUT.tmp/bin" go install "go.opentelemetry.io/collector/cmd/builder@v$VERSION" >&2
  sed "s|^dist:|dist:\n  output_path: $OUT.tmp/src|" "$MANIFEST" > "$OUT.tmp/manifest.yaml"
  echo "build-otelcol: building the log agent's otelcol $VERSION (components: $MANIFEST)" >&2
  "$OUT.tmp/bin/builder" --config "$OUT.tmp/manifest.yaml" >&2
  mkdir -p "$OUT"
  mv "$OUT.tmp/src/otelcol-logs" "$OUT/otelcol"
  echo "$OUT"
  exit 0
fi
if [ -x "$OUT/otelcol" ] && [ -x "$OUT/otlp-tool" ]; then
  echo "$OUT"
  exit 0
fi
command -v go >/dev/null || { echo "build-otelcol: Go is not installed (https://go.dev/doc/install); it is needed to build the collector" >&2; exit 1; }
mkdir -p "$OUT.tmp"
trap 'rm -rf "$OUT.tmp"' EXIT
# The builder of the same release (go.opentelemetry.io/collector/cmd/builder, tag cmd/builder/vX).
echo "build-otelcol: installing the collector builder v$VERSION" >&2
GOBIN="$OUT.tmp/bin" go install "go.opentelemetry.io/collector/cmd/builder@v$VERSION" >&2
{ cat "$MANIFEST"; } | sed "s|^dist:|dist:\n  output_path: $OUT.tmp/src|" > "$OUT.tmp/manifest.yaml"
echo "build-otelcol: building otelcol $VERSION (components: $MANIFEST)" >&2
"$OUT.tmp/bin/builder" --config "$OUT.tmp/manifest.yaml" >&2
echo "build-otelcol: building the OTLP test tool" >&2
(cd "$ROOT/test/collector/otlp-tool" && go build -o "$OUT.tmp/otlp-tool" .) >&2
mkdir -p "$OUT"
mv "$OUT.tmp/src/otelcol" "$OUT/otelcol"
mv "$OUT.tmp/otlp-tool" "$OUT/otlp-tool"
echo "$OUT"
