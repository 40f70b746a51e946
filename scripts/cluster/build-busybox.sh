#!/usr/bin/env bash
# The busybox of the test cluster's images: Debian's busybox-static (bookworm, 1.35.0) rebuilt from
# its Debian source package with CONFIG_FEATURE_WGET_TIMEOUT=y. Debian's own build leaves the option
# out (until 1.36.1-5), and its `wget -T N` then crashes (SIGSEGV: getopt32 writes the value through
# a NULL destination); the library's hooks call `busybox wget -q -T 1` (the legacy hold) and
# `-T 2` (Envoy's drain POSTs), and busybox:1.36.1-musl, the image the library emits, has the option.
# The source comes from Debian's apt (deb-src of bookworm, under a private apt state directory: the
# machine's apt sources are left alone). Prints the path of the binary (cached).
set -euo pipefail
CACHE=${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}
VERSION=1.35.0-4+deb12u1
OUT="$CACHE/busybox/busybox-$VERSION-wget-timeout"
if [ -x "$OUT" ]; then echo "$OUT"; exit 0; fi
log() { echo "build-busybox: $*" >&2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/parts" "$work/lists/partial" "$(dirname "$OUT")"
cat > "$work/parts/src.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
APT=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/parts" -o "Dir::State::Lists=$work/lists" -o APT::Sandbox::User=root)
log "busybox $VERSION source (Debian apt, deb-src bookworm)"
apt-get "${APT[@]}" update >&2
(cd "$work" && apt-get "${APT[@]}" source --download-only "busybox=1:$VERSION" >&2 && dpkg-source -x "busybox_$VERSION.dsc" src >&2)
cd "$work/src"
cp debian/config/pkg/static .config
grep -q '^# CONFIG_FEATURE_WGET_TIMEOUT is not set' .config || { log "Debian's static config changed: check CONFIG_FEATURE_WGET_TIMEOUT"; exit 1; }
sed -i 's/^# CONFIG_FEATURE_WGET_TIMEOUT is not set/CONFIG_FEATURE_WGET_TIMEOUT=y/' .config
(yes '' || true) | make oldconfig > /dev/null
log "building (about 5 min on a loaded 2-core machine)"
nice make -j2 busybox > "$work/build.log" 2>&1 || { tail -20 "$work/build.log" >&2; exit 1; }
file busybox | grep -q 'statically linked' || { log "busybox is not static"; exit 1; }
install -m 0755 busybox "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
echo "$OUT"
