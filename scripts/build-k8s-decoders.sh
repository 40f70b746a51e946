#!/usr/bin/env bash
# Builds the strict Kubernetes decoder (test/k8s-api/decoder) once per supported release, each
# against the k8s.io/api and k8s.io/apimachinery of that release's tag (from the Go module proxy),
# and prints the directory that holds decoder-1.27 ... decoder-1.37.
#
#   bash scripts/build-k8s-decoders.sh      (run by `npm run test:k8s-api`)
#
# Needs Go 1.25+ and the Go module proxy. Cached in
# ${K8S_DECODERS_CACHE:-$HOME/.cache/cdk8s-sidecars/k8s-decoders}/<source hash>/; Go's module and
# build caches serve the rest. The first build takes minutes (CONTRIBUTING.md).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=test/k8s-api/decoder
# The newest patch of each minor on the module proxy (checked 2026-12-01); k8s.io/api v0.X is
# Kubernetes 1.X. 1.27-1.35 are the releases the library's tests target; 1.36 and 1.37 are the
# newest releases, where the same manifests must still decode.
RELEASES="1.27:v0.27.16 1.28:v0.28.15 1.29:v0.29.15 1.30:v0.30.14 1.31:v0.31.14 1.32:v0.32.13 1.33:v0.33.13 1.34:v0.34.13 1.35:v0.35.10 1.36:v0.36.6 1.37:v0.37.2"
HASH=$( (echo "$RELEASES"; cat "$SRC/go.mod" "$SRC/go.sum" "$SRC"/*.go) | sha256sum | cut -c1-12)
OUT="${K8S_DECODERS_CACHE:-$HOME/.cache/cdk8s-sidecars/k8s-decoders}/$HASH"
command -v go > /dev/null || { echo "build-k8s-decoders: Go is not installed (https://go.dev/doc/install)" >&2; exit 1; }
mkdir -p "$OUT"
for pair in $RELEASES; do
  release=${pair%%:*}; tag=${pair##*:}
  [ -x "$OUT/decoder-$release" ] && continue
  echo "build-k8s-decoders: decoder-$release (k8s.io/api $tag)" >&2
  work=$(mktemp -d "${TMPDIR:-/tmp}/k8s-decoder.XXXXXX")
  cp "$SRC"/go.mod "$SRC"/go.sum "$SRC"/*.go "$work/"
  (cd "$work" && go get "k8s.io/api@$tag" "k8s.io/apimachinery@$tag" > /dev/null 2>&1 && go mod tidy > /dev/null 2>&1 \
    && go build -o "$OUT/decoder-$release.tmp" . && mv "$OUT/decoder-$release.tmp" "$OUT/decoder-$release") >&2 \
    || { rm -rf "$work"; echo "build-k8s-decoders: building decoder-$release failed" >&2; exit 1; }
  rm -rf "$work"
done
echo "$OUT"
