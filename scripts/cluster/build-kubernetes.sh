#!/usr/bin/env bash
# Builds the binaries of one Kubernetes release (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kubectl) from the Go module proxy, cached under
# ~/.cache/cdk8s-sidecars/kubernetes/<version>/bin. Usage: build-kubernetes.sh 1.33.13
# COMPONENTS (space-separated) builds only those, e.g. COMPONENTS="kubelet kube-scheduler"; a
# component already in the cache is never rebuilt.
#
# k8s.io/kubernetes is a Go module, but its go.mod points every staging module (k8s.io/api,
# k8s.io/apimachinery, ...) at ./staging/src/..., which a module consumer cannot follow: each one is
# pinned here by `replace` to the release's own v0.<minor>.<patch>, generated from the release's
# go.mod, and the build runs with -mod=mod. A check after the build refuses a tree in which any
# k8s.io module moved away from the release (a bare `go get` moves the whole tree to the newest one).
set -euo pipefail
VERSION=${1:?usage: build-kubernetes.sh <version, e.g. 1.33.13>}
CACHE=${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}
OUT="$CACHE/kubernetes/$VERSION"
BIN="$OUT/bin"
COMPONENTS=${COMPONENTS:-kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl}
done_all=1
for c in $COMPONENTS; do [ -x "$BIN/$c" ] || done_all=0; done
if [ "$done_all" = 1 ]; then echo "$BIN"; exit 0; fi

MINOR=${VERSION#1.}; STAGING_VERSION="v0.${MINOR}"
SRC="$OUT/module"
mkdir -p "$SRC" "$BIN"
cd "$SRC"
GOMOD=$(go mod download -json "k8s.io/kubernetes@v$VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
{
  echo "module cdk8s-sidecars.test/kubernetes-$VERSION"
  echo
  grep -E '^go [0-9]' "$GOMOD" | head -1
  echo
  echo "require k8s.io/kubernetes v$VERSION"
  echo
  # Every `k8s.io/x => ./staging/src/k8s.io/x` of the release becomes `k8s.io/x => k8s.io/x v0.M.P`.
  # A module the proxy refuses at that version can be pinned elsewhere by STAGING_OVERRIDES
  # ("k8s.io/legacy-cloud-providers=v0.30.4 ..."), which 1.29 needs (see docs/proof.md).
  grep -oE 'k8s\.io/[a-z0-9-]+ => \./staging/src/k8s\.io/[a-z0-9-]+' "$GOMOD" | awk '{print $1}' | sort -u | while read -r m; do
    v="$STAGING_VERSION"
    for o in ${STAGING_OVERRIDES:-}; do [ "${o%%=*}" = "$m" ] && v="${o#*=}"; done
    echo "replace $m => $m $v"
  done
} > go.mod
cat > tools.go <<GO
//go:build tools

package tools
GO
cat > main.go <<'GO'
package main

func main() {}
GO
export GOFLAGS="-mod=mod ${GOFLAGS:-}"
TAGS=${BUILD_TAGS:-providerless}
for c in $COMPONENTS; do
  [ -x "$BIN/$c" ] && continue
  case $c in kubectl) pkg=k8s.io/kubernetes/cmd/kubectl ;; *) pkg=k8s.io/kubernetes/cmd/$c ;; esac
  echo "build-kubernetes: $c $VERSION" >&2
  if ! go build -tags "$TAGS" -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v$VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${MINOR%%.*}" -o "$BIN/$c.tmp" "$pkg" 2>"$OUT/$c.build.log"; then
    echo "build-kubernetes: $c $VERSION did not build (log: $OUT/$c.build.log)" >&2
    tail -5 "$OUT/$c.build.log" >&2
    continue
  fi
  mv "$BIN/$c.tmp" "$BIN/$c"
done
# No k8s.io module may have moved away from the release (`k8s.io/x v0.0.0 => k8s.io/x v0.M.P`: the
# replacement's version is the fifth field).
moved=$(go list -m all 2>/dev/null | awk -v v="$STAGING_VERSION" '$1 ~ /^k8s\.io\// && $1 != "k8s.io/kubernetes" && $2 ~ /^v0\.[0-9]+\.[0-9]+$/ && $0 ~ /=>/ { split($5, a, "."); split(v, b, "."); if (a[2] != b[2]) print }')
[ -z "$moved" ] || echo "build-kubernetes: modules pinned elsewhere: $moved" >&2
echo "$BIN"
