#!/usr/bin/env bash
# An API server without a node: etcd, kube-apiserver and kube-controller-manager of one release
# in new network, PID and mount namespaces (a loopback, nothing else), for the admission
# experiments (test/cluster/admission-policy.cluster-test.ts): the controllers create the pods of
# Deployments, Jobs and StatefulSets through admission; no kubelet runs them (they stay Pending).
#
#   scripts/cluster/apiserver.sh up VERSION DIR [OWNER_PID]   # prints nothing; DIR/pki/admin.kubeconfig
#   scripts/cluster/apiserver.sh exec DIR -- kubectl get pods # in the namespace
#   scripts/cluster/apiserver.sh down DIR
#
# EXTRA_APISERVER_FLAGS adds flags (e.g. --feature-gates=MutatingAdmissionPolicy=true
# --runtime-config=admissionregistration.k8s.io/v1beta1=true for 1.34-1.35). Binaries as
# scripts/cluster/cluster.sh: ~/.cache/cdk8s-sidecars/kubernetes/<version>/bin, Debian's etcd.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}
CMD=${1:?usage: apiserver.sh up|down|exec ...}
shift
log() { echo "apiserver: $*" >&2; }
init_pid() { cat "$1/init.pid" 2>/dev/null || true; }
in_ns() {
  local dir=$1; shift
  local pid; pid=$(init_pid "$dir")
  [ -n "$pid" ] || { log "no API server in $dir"; return 1; }
  KUBECONFIG="$dir/pki/admin.kubeconfig" PATH="$(cat "$dir/bin.path"):$PATH" nsenter -t "$pid" -n -- "$@"
}
down() {
  local dir=$1 pid; pid=$(init_pid "$dir")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$dir/init.pid"
}
case "$CMD" in
  down) down "${1:?DIR}"; exit 0 ;;
  exec) DIR=${1:?DIR}; shift; [ "${1:-}" = "--" ] && shift; in_ns "$DIR" "$@"; exit $? ;;
  up)
    VERSION=${1:?VERSION}; DIR=${2:?DIR}; OWNER=${3:-$PPID}
    BIN="$CACHE/kubernetes/$VERSION/bin"
    for c in kube-apiserver kube-controller-manager kubectl; do [ -x "$BIN/$c" ] || { log "missing $BIN/$c (scripts/cluster/build-kubernetes.sh $VERSION)"; exit 3; }; done
    command -v etcd >/dev/null || { log "missing etcd (apt-get install etcd-server)"; exit 3; }
    mkdir -p "$DIR/logs"; DIR=$(cd "$DIR" && pwd); echo "$BIN" > "$DIR/bin.path"
    # PID 1 of the new namespaces: --kill-child takes everything down with it
    setsid unshare --net --pid --mount --propagation private --fork --kill-child -- \
      env BIN="$BIN" DIR="$DIR" EXTRA="${EXTRA_APISERVER_FLAGS:-}" bash "$HERE/apiserver.sh" supervise > "$DIR/logs/supervisor.log" 2>&1 < /dev/null &
    echo $! > "$DIR/init.pid"
    ( while kill -0 "$OWNER" 2>/dev/null && kill -0 "$(init_pid "$DIR")" 2>/dev/null; do sleep 1; done
      "$HERE/apiserver.sh" down "$DIR" ) > /dev/null 2>&1 < /dev/null &
    for _ in $(seq 1 240); do
      kill -0 "$(init_pid "$DIR")" 2>/dev/null || { log "supervisor exited"; tail -20 "$DIR/logs/supervisor.log" >&2; exit 1; }
      [ -f "$DIR/ready" ] && in_ns "$DIR" kubectl get --raw /readyz >/dev/null 2>&1 && exit 0
      sleep 0.5
    done
    log "not ready after 120 s; logs in $DIR/logs"; down "$DIR"; exit 1 ;;
  supervise)
    ip link set lo up
    P="$DIR/pki"; mkdir -p "$P"
    ossl() { openssl "$@" 2>>"$DIR/logs/openssl.log"; }
    ossl req -x509 -newkey rsa:2048 -nodes -keyout "$P/ca.key" -out "$P/ca.crt" -days 2 -subj "/CN=cdk8s-sidecars-test-ca"
    cert() {
      local n=$1 cn=$2 o=$3 san=${4:-}
      ossl req -newkey rsa:2048 -nodes -keyout "$P/$n.key" -out "$P/$n.csr" -subj "/CN=$cn${o:+/O=$o}"
      if [ -n "$san" ]; then printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" > "$P/$n.ext"
      else printf 'extendedKeyUsage=clientAuth\n' > "$P/$n.ext"; fi
      ossl x509 -req -in "$P/$n.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -out "$P/$n.crt" -days 2 -extfile "$P/$n.ext"
    }
    cert apiserver kube-apiserver "" "IP:127.0.0.1,IP:10.96.0.1,DNS:kubernetes,DNS:localhost"
    cert admin cluster-admin system:masters
    ossl genrsa -out "$P/sa.key" 2048
    ossl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub"
    cat > "$P/admin.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: "$P/ca.crt"}
users:
- name: u
  user: {client-certificate: "$P/admin.crt", client-key: "$P/admin.key"}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
KC
    env ETCD_UNSUPPORTED_ARCH= etcd --data-dir "$DIR/etcd" --listen-client-urls http://127.0.0.1:2379 \
      --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
      --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster default=http://127.0.0.1:2380 --name default \
      > "$DIR/logs/etcd.log" 2>&1 &
    # shellcheck disable=SC2086
    "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
      --secure-port=6443 --service-cluster-ip-range=10.96.0.0/16 --endpoint-reconciler-type=none \
      --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
      --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
      --service-account-issuer=https://kubernetes.default.svc --authorization-mode=RBAC $EXTRA \
      > "$DIR/logs/kube-apiserver.log" 2>&1 &
    for _ in $(seq 1 240); do "$BIN/kubectl" --kubeconfig "$P/admin.kubeconfig" get --raw /readyz >/dev/null 2>&1 && break; sleep 0.5; done
    "$BIN/kube-controller-manager" --kubeconfig="$P/admin.kubeconfig" --leader-elect=false \
      --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" --use-service-account-credentials=false \
      --bind-address=127.0.0.1 --controllers=deployment,replicaset,job,statefulset,serviceaccount-token,serviceaccount,namespace \
      > "$DIR/logs/kube-controller-manager.log" 2>&1 &
    touch "$DIR/ready"
    wait ;;
  *) log "unknown command $CMD"; exit 2 ;;
esac
