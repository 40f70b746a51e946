#!/usr/bin/env bash
# Builds the pipeline linters that `npm run test:linters` runs over the library's output
# (test/linters/*.linter-test.ts, docs/security.md "What the linters say"), from the Go module
# proxy at pinned versions, and fetches each tested release's OpenAPI document for kubeconform's
# schemas:
#
#   bash scripts/build-linters.sh      (prints the cache directory)
#
# - kubeconform (github.com/yannh/kubeconform) and kube-score (github.com/zegl/kube-score): the
#   newest versions the proxy serves (`go list -m -versions`, 2026-12-07: kubeconform v0.6.4 to
#   v0.8.0, kube-score v1.20.0 only), built with `go install`;
# - api/openapi-spec/swagger.json of the k8s.io/kubernetes module at each release the tests target
#   (the newest patch of 1.27, 1.29 and 1.33 the proxy serves); the test generates kubeconform's
#   strict schemas from it (test/linters/util/k8s-json-schema.ts), as yannh/kubernetes-json-schema
#   does with openapi2jsonschema.
# - kube-linter (golang.stackrox.io/kube-linter): the proxy refuses its module (403 "This module
#   version is not available", 2026-12-07), so it is built from a checkout of the pinned tag that
#   you name, its dependencies from the proxy:
#     git clone --depth 1 --branch v0.8.3 https://github.com/stackrox/kube-linter.git SRC
#     KUBE_LINTER_SRC=SRC bash scripts/build-linters.sh
#   (about 6 min here); without it and without the cached binary the kube-linter tests say they skip.
#
# Needs Go (1.24 or later) and the Go module proxy. Cached in
# ${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}/linters/ (bin/<tool>-<version>,
# swagger/v<release>.json); a cached file is never built or fetched again. Cold: about 3.5 min for
# kubeconform and 9 min for kube-score on a loaded 2-core machine (CONTRIBUTING.md "The pipeline
# linters"), plus about 17 MB of module download per release; the k8s.io/kubernetes modules stay
# in Go's module cache (about 90 MB each, extracted).
set -euo pipefail
# test/linters/util/linters.ts reads these three lines: a bump here is a bump there.
KUBECONFORM_VERSION=v0.8.0
KUBE_SCORE_VERSION=v1.20.0
KUBE_LINTER_VERSION=v0.8.3
KUBERNETES_RELEASES="1.27.16 1.29.15 1.33.13"

CACHE=${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}/linters
mkdir -p "$CACHE/bin" "$CACHE/swagger"
command -v go >/dev/null || { echo "build-linters: Go is not installed (https://go.dev/doc/install); it is needed to build the linters" >&2; exit 1; }

build() { # build NAME MODULE/cmd/NAME VERSION
  local name=$1 pkg=$2 version=$3 out="$CACHE/bin/$1-$3"
  [ -x "$out" ] && return 0
  local tmp
  tmp=$(mktemp -d "$CACHE/build.XXXXXX")
  local start=$SECONDS
  echo "build-linters: building $name $version ($pkg)" >&2
  if ! GOBIN="$tmp" go install "$pkg@$version" >&2; then
    rm -rf "$tmp"
    echo "build-linters: could not build $name $version" >&2
    return 1
  fi
  mv "$tmp/$name" "$out"
  rm -rf "$tmp"
  echo "build-linters: $name $version built in $((SECONDS - start)) s" >&2
}

build kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
build kube-score github.com/zegl/kube-score/cmd/kube-score "$KUBE_SCORE_VERSION"

out="$CACHE/bin/kube-linter-$KUBE_LINTER_VERSION"
if [ ! -x "$out" ] && [ -n "${KUBE_LINTER_SRC:-}" ]; then
  src=$(cd "$KUBE_LINTER_SRC" && pwd)
  grep -qx 'module golang.stackrox.io/kube-linter' "$src/go.mod" || { echo "build-linters: $src is not a kube-linter source tree" >&2; exit 1; }
  if [ -d "$src/.git" ] && [ "$(git -C "$src" describe --tags --exact-match 2>/dev/null)" != "$KUBE_LINTER_VERSION" ]; then
    echo "build-linters: $src is not checked out at $KUBE_LINTER_VERSION" >&2; exit 1
  fi
  start=$SECONDS
  echo "build-linters: building kube-linter $KUBE_LINTER_VERSION from $src" >&2
  (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-X golang.stackrox.io/kube-linter/internal/version.version=$KUBE_LINTER_VERSION" -o "$out.tmp" ./cmd/kube-linter) >&2
  mv "$out.tmp" "$out"
  echo "build-linters: kube-linter $KUBE_LINTER_VERSION built in $((SECONDS - start)) s" >&2
elif [ ! -x "$out" ]; then
  echo "build-linters: kube-linter $KUBE_LINTER_VERSION is not cached and KUBE_LINTER_SRC is not set: its tests will skip (see the top of this script)" >&2
fi

for release in $KUBERNETES_RELEASES; do
  out="$CACHE/swagger/v$release.json"
  [ -s "$out" ] && continue
  echo "build-linters: fetching k8s.io/kubernetes v$release for its swagger.json" >&2
  dir=$(go mod download -json "k8s.io/kubernetes@v$release" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  if [ -z "$dir" ] || [ ! -f "$dir/api/openapi-spec/swagger.json" ]; then
    echo "build-linters: the Go module proxy gave no api/openapi-spec/swagger.json for k8s.io/kubernetes v$release" >&2
    exit 1
  fi
  cp "$dir/api/openapi-spec/swagger.json" "$out.tmp"
  mv "$out.tmp" "$out"
done

echo "$CACHE"
