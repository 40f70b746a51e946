#!/usr/bin/env bash
# Builds the real `helm` of the pinned Helm 3 and Helm 4 releases from the Go module proxy, as the
# project's Makefile builds a release (CGO_ENABLED=0, -trimpath, -ldflags "-w -s" and the version
# variables), for `npm run test:helm` (test/helm/*.helm-test.ts, docs/cli.md).
#
#   bash scripts/build-helm.sh 3|4|all    (prints one line per binary: <major> <path>)
#
# Pins (the module proxy serves them; go install MODULE@VERSION builds with the release's own
# go.mod and go.sum, so every dependency is the one the release was tested with):
#   helm.sh/helm/v3 v3.21.4 (Makefile at v3.21.4: LDFLAGS, K8S_MODULES_VER from k8s.io/client-go)
#   helm.sh/helm/v4 v4.3.2  (Makefile at v4.3.2: LDFLAGS; Helm 4 reads client-go's version from
#                            the binary's build info itself, internal/version/version.go)
# Needs Go (the releases' go.mod say go 1.26.0) and the Go module proxy. Cached: each binary lives
# in ${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}/helm/<version>/helm and is built once;
# Go's own module and build caches serve the rest. Built under `nice -n 19` with GOFLAGS=-p=2.
# A cold build (empty Go caches) takes minutes: CONTRIBUTING.md has the measured figures.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM3_VERSION=v3.21.4
HELM4_VERSION=v4.3.2
CACHE=${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}/helm

build() {
  local major=$1 version=$2
  local out="$CACHE/$version"
  if [ -x "$out/helm" ]; then
    echo "$major $out/helm"
    return
  fi
  command -v go >/dev/null || {
    echo "build-helm: Go is not installed (Debian: apt-get install golang-go; or https://go.dev/doc/install); it is needed to build helm $version" >&2
    exit 1
  }
  local module="helm.sh/helm/v$major"
  local ldflags="-w -s -X $module/internal/version.version=$version -X $module/internal/version.metadata= -X $module/internal/version.gitTreeState=clean"
  if [ "$major" = 3 ]; then
    # Helm 3's Makefile: the default Kubernetes version of `helm template` (.Capabilities.KubeVersion)
    # and of lint is client-go's v0.X.Y read as 1.X (K8S_MODULES_VER, pkg/chartutil/capabilities.go).
    local clientgo
    clientgo=$(GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
    clientgo=$(sed -n 's/^\tk8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$clientgo")
    [ -n "$clientgo" ] || { echo "build-helm: cannot read k8s.io/client-go's version from helm $version's go.mod" >&2; exit 1; }
    ldflags="$ldflags -X $module/pkg/lint/rules.k8sVersionMajor=1 -X $module/pkg/lint/rules.k8sVersionMinor=$clientgo"
    ldflags="$ldflags -X $module/pkg/chartutil.k8sVersionMajor=1 -X $module/pkg/chartutil.k8sVersionMinor=$clientgo"
  fi
  mkdir -p "$out.tmp"
  trap 'rm -rf "$out.tmp"' EXIT
  local start=$SECONDS
  echo "build-helm: building helm $version from the Go module proxy (a cold build takes minutes)" >&2
  CGO_ENABLED=0 GOFLAGS="-p=2 -buildvcs=false" GOBIN="$out.tmp" \
    nice -n 19 go install -trimpath -ldflags "$ldflags" "$module/cmd/helm@$version" >&2
  "$out.tmp/helm" version --short >&2
  mkdir -p "$out"
  mv "$out.tmp/helm" "$out/helm"
  rm -rf "$out.tmp"
  trap - EXIT
  echo "build-helm: helm $version built in $((SECONDS - start)) s: $out/helm" >&2
  echo "$major $out/helm"
}

case "${1:-all}" in
  3) build 3 "$HELM3_VERSION" ;;
  4) build 4 "$HELM4_VERSION" ;;
  all) build 3 "$HELM3_VERSION"; build 4 "$HELM4_VERSION" ;;
  *) echo "build-helm: usage: bash scripts/build-helm.sh 3|4|all" >&2; exit 2 ;;
esac
