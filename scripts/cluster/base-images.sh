#!/usr/bin/env bash
# Builds the two images every cluster run needs, as OCI archives under
# ~/.cache/cdk8s-sidecars/cluster-images/: the pod sandbox's pause (a tiny static C program) and
# busybox under the name the library emits (`busybox:1.36.1-musl`, src/facts/images.ts): Debian's
# busybox-static rebuilt with `wget -T` (scripts/cluster/build-busybox.sh). Prints `name=archive`
# pairs for cluster.sh's CLUSTER_IMAGES.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}
OUT="$CACHE/cluster-images"
BUSYBOX_NAME=${BUSYBOX_NAME:-docker.io/library/busybox:1.36.1-musl}
mkdir -p "$OUT"
if [ ! -f "$OUT/pause.tar" ]; then
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  cat > "$work/pause.c" <<'C'
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static void reap(int s) { (void)s; while (waitpid(-1, 0, WNOHANG) > 0) {} }
static void bye(int s) { (void)s; _exit(0); }
int main(void) {
  signal(SIGINT, bye); signal(SIGTERM, bye); signal(SIGCHLD, reap);
  for (;;) pause();
}
C
  mkdir -p "$work/root"
  gcc -static -Os -o "$work/root/pause" "$work/pause.c"
  python3 "$HERE/oci-archive.py" "$work/root" docker.io/cdk8s-sidecars-test/pause:1 "$OUT/pause.tar" '["/pause"]'
fi
BUSYBOX=$(bash "$HERE/build-busybox.sh")
# rebuilt when the binary changes
if [ ! -f "$OUT/busybox.tar" ] || [ "$(cat "$OUT/busybox.sha256" 2>/dev/null)" != "$(sha256sum < "$BUSYBOX")" ]; then
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/root/bin" "$work/root/tmp" "$work/root/etc"
  cp "$BUSYBOX" "$work/root/bin/busybox"
  for a in $("$work/root/bin/busybox" --list); do [ "$a" = busybox ] || ln -s busybox "$work/root/bin/$a"; done
  chmod 1777 "$work/root/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' > "$work/root/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' > "$work/root/etc/group"
  python3 "$HERE/oci-archive.py" "$work/root" "$BUSYBOX_NAME" "$OUT/busybox.tar" '' '["sh"]'
  sha256sum < "$BUSYBOX" > "$OUT/busybox.sha256"
fi
echo "docker.io/cdk8s-sidecars-test/pause:1=$OUT/pause.tar $BUSYBOX_NAME=$OUT/busybox.tar"
