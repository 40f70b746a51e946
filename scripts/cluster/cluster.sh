#!/usr/bin/env bash
# One single-node Kubernetes cluster of a given release, in namespaces of its own.
#
#   cluster.sh up <version> <state-dir> [owner-pid]   start it; returns once the node is Ready
#   cluster.sh down <state-dir>                        stop everything it started, remove its state
#   cluster.sh exec <state-dir> <command...>           run a command inside its network namespace
#                                                      (KUBECONFIG set: `cluster.sh exec DIR kubectl get pods`)
#
# Everything runs under ONE process tree: `unshare --net --pid --mount --fork`, whose PID 1 (the
# supervisor below) starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# containerd and the kubelet. The network namespace has a loopback, a veth pair for the node IP
# (10.200.0.2; the kernel here has no dummy device) and the CNI bridge for the pods, and NO
# default route: nothing in it can reach any other address. `down` kills the supervisor by its
# PID; the kernel then kills every process of the PID namespace (containerd's shims and the
# containers included) and drops the network and mount namespaces. The supervisor also stops by
# itself when the owner process (the test run) is gone, so a killed test run leaves nothing behind.
#
# Binaries: ~/.cache/cdk8s-sidecars/kubernetes/<version>/bin (scripts/cluster/build-kubernetes.sh),
# Debian's etcd, containerd, runc and CNI plugins. Images: containerd's mirror for every registry
# name the library's manifests use (docker.io) is a registry on 127.0.0.1:5000 inside the
# namespace, started when CLUSTER_REGISTRY names a program (`<program> <listen-address>`), and the
# OCI archives in CLUSTER_IMAGES (space-separated `name=archive.tar`) are imported at start.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${CDK8S_SIDECARS_CACHE:-$HOME/.cache/cdk8s-sidecars}
NODE_IP=10.200.0.2
NODE_NAME=node
CMD=${1:?usage: cluster.sh up|down|exec ...}
shift

log() { echo "cluster: $*" >&2; }

init_pid() { cat "$1/init.pid" 2>/dev/null || true; }

# Runs a command in the cluster's network namespace (host mount namespace: the state dir is visible).
in_ns() {
  local dir=$1; shift
  local pid; pid=$(init_pid "$dir")
  [ -n "$pid" ] || { log "no cluster in $dir"; return 1; }
  KUBECONFIG="$dir/pki/admin.kubeconfig" PATH="$(cat "$dir/bin.path"):$PATH" nsenter -t "$pid" -n -- "$@"
}

down() {
  local dir=$1
  local pid; pid=$(init_pid "$dir")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    # the supervisor (PID 1 of the cluster's PID namespace) stops the components, then kills
    # every process left there; unshare, killed, takes it down with SIGKILL (--kill-child)
    local sup; sup=$(cat "$dir/supervisor.pid" 2>/dev/null || true)
    [ -n "$sup" ] && kill -TERM "$sup" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  # the cgroups the kubelet made for the pods (cgroup v1: one tree per hierarchy), deepest first
  local id; id=$(cat "$dir/cgroup.id" 2>/dev/null || true)
  if [ -n "$id" ]; then
    for h in /sys/fs/cgroup/*/; do
      [ -d "$h$id" ] && find "$h$id" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
  fi
  # its components' logs, kept where CLUSTER_LOGS_TO says (the suite keeps the last run's)
  if [ -n "${CLUSTER_LOGS_TO:-}" ] && [ -d "$dir/logs" ]; then rm -rf "$CLUSTER_LOGS_TO"; mkdir -p "$(dirname "$CLUSTER_LOGS_TO")"; cp -r "$dir/logs" "$CLUSTER_LOGS_TO"; fi
  # No mount of the cluster's is visible here (they lived in its private mount namespace).
  if grep -q " $dir" /proc/self/mountinfo; then log "mounts left under $dir: not removing it"; return 1; fi
  rm -rf "$dir"
}

case $CMD in
  down) down "${1:?state dir}"; exit 0 ;;
  exec) dir=${1:?state dir}; shift; in_ns "$dir" "$@"; exit $? ;;
  up) ;;
  supervise) ;;
  *) echo "usage: cluster.sh up|down|exec" >&2; exit 2 ;;
esac

if [ "$CMD" = up ]; then
  VERSION=${1:?version}; DIR=${2:?state dir}; OWNER=${3:-$PPID}
  BIN="$CACHE/kubernetes/$VERSION/bin"
  # 1.29's own controller-manager does not build from the module proxy: a newer one may stand in
  # (CLUSTER_CONTROLLER_MANAGER), an unsupported skew that docs/proof.md names.
  for c in kube-apiserver kube-scheduler kubelet kubectl ${CLUSTER_CONTROLLER_MANAGER:+x}kube-controller-manager; do
    [ "$c" = xkube-controller-manager ] && c=$CLUSTER_CONTROLLER_MANAGER
    [ -x "$BIN/$c" ] || [ -x "$c" ] || { log "missing $BIN/$c (scripts/cluster/build-kubernetes.sh $VERSION)"; exit 3; }
  done
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  echo "$BIN" > "$DIR/bin.path"
  echo "$VERSION" > "$DIR/version"
  trap 'st=$?; if [ $st -ne 0 ]; then log "start failed ($st); logs in $DIR/logs, stopping"; cp -r "$DIR/logs" "${DIR}.failed-logs" 2>/dev/null || true; down "$DIR" || true; fi' EXIT
  mkdir -p "$DIR/logs"
  # the supervisor: PID 1 of new PID, mount and network namespaces
  setsid unshare --net --pid --mount --propagation private --fork --kill-child -- \
    bash "$HERE/cluster.sh" supervise "$VERSION" "$DIR" "$OWNER" > "$DIR/logs/supervisor.log" 2>&1 < /dev/null &
  echo $! > "$DIR/init.pid"
  for _ in $(seq 1 50); do
    sup=$(cat "/proc/$(init_pid "$DIR")/task/$(init_pid "$DIR")/children" 2>/dev/null | awk '{print $1}')
    [ -n "$sup" ] && break; sleep 0.1
  done
  echo "$sup" > "$DIR/supervisor.pid"
  # the owner's watchdog: once the test run is gone, the cluster goes too (it ends with the cluster)
  ( while kill -0 "$OWNER" 2>/dev/null && kill -0 "$(init_pid "$DIR")" 2>/dev/null; do sleep 1; done
    kill -0 "$(init_pid "$DIR")" 2>/dev/null && "$HERE/cluster.sh" down "$DIR" ) > /dev/null 2>&1 < /dev/null &
  # wait for the API server, then the node
  ok=0
  for _ in $(seq 1 240); do
    kill -0 "$(init_pid "$DIR")" 2>/dev/null || { log "supervisor exited"; tail -20 "$DIR/logs/supervisor.log" >&2; exit 1; }
    if [ -f "$DIR/ready" ] && in_ns "$DIR" kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -q True; then ok=1; break; fi
    sleep 0.5
  done
  [ $ok = 1 ] || { log "node not Ready after 120 s"; tail -5 "$DIR"/logs/*.log >&2; exit 1; }
  trap - EXIT
  echo "$DIR"
  exit 0
fi

# ---- supervise: PID 1 of the cluster's namespaces ----
VERSION=$1; DIR=$2
BIN=$(cat "$DIR/bin.path")
MINOR=$(echo "$VERSION" | cut -d. -f2)
CM_BIN=${CLUSTER_CONTROLLER_MANAGER:-$BIN/kube-controller-manager}
LOGS="$DIR/logs"
PIDS=()
stop_all() {
  trap - TERM INT EXIT
  for ((i=${#PIDS[@]}-1; i>=0; i--)); do kill -TERM "${PIDS[$i]}" 2>/dev/null || true; done
  sleep 1
  kill -KILL -1 2>/dev/null || true   # every process of this PID namespace (we are its PID 1)
  exit 0
}
trap stop_all TERM INT EXIT
start() { local name=$1; shift; "$@" > "$LOGS/$name.log" 2>&1 & PIDS+=($!); echo $! > "$DIR/$name.pid"; }

mount -t proc proc /proc
# runc's state (/run/containerd), the pods' logs (/var/log/pods): private to this cluster
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /var/log
# The kubelet's kernel tunables (vm.overcommit_memory=1, vm.panic_on_oom=0, kernel.panic=10,
# kernel.panic_on_oops=1) would be written machine-wide: bind-mount files with its values over
# them here, in this mount namespace only; the kubelet then finds them set and writes nothing.
mkdir -p "$DIR/sysctl"
for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
  k=${kv%%=*}; v=${kv#*=}
  [ "$(cat "/proc/sys/$k")" = "$v" ] && continue
  f="$DIR/sysctl/${k//\//.}"; echo "$v" > "$f"; mount --bind "$f" "/proc/sys/$k"
done

# network: loopback, the node IP on a veth pair, no default route
ip link set lo up
ip link add veth-node type veth peer name veth-peer
ip addr add "$NODE_IP/24" dev veth-node
ip link set veth-node up; ip link set veth-peer up
if ip route show default | grep -q .; then echo "a default route exists in the cluster's namespace" >&2; exit 1; fi

# certificates
P="$DIR/pki"; mkdir -p "$P"
ossl() { openssl "$@" 2>>"$LOGS/openssl.log"; }
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$P/ca.key" -out "$P/ca.crt" -days 2 -subj "/CN=cdk8s-sidecars-test-ca"
cert() { # name CN O [SANs]
  local n=$1 cn=$2 o=$3 san=${4:-}
  ossl req -newkey rsa:2048 -nodes -keyout "$P/$n.key" -out "$P/$n.csr" -subj "/CN=$cn${o:+/O=$o}"
  if [ -n "$san" ]; then printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" > "$P/$n.ext"
  else printf 'extendedKeyUsage=clientAuth\n' > "$P/$n.ext"; fi
  ossl x509 -req -in "$P/$n.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -out "$P/$n.crt" -days 2 -extfile "$P/$n.ext"
}
cert apiserver kube-apiserver "" "IP:$NODE_IP,IP:127.0.0.1,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:localhost"
cert admin cluster-admin system:masters
cert kubelet "system:node:$NODE_NAME" system:nodes
cert apiserver-kubelet kube-apiserver-kubelet-client system:masters
ossl genrsa -out "$P/sa.key" 2048
ossl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub"
kubeconfig() { # name user
  cat > "$P/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://$NODE_IP:6443", certificate-authority: "$P/ca.crt"}
users:
- name: u
  user: {client-certificate: "$P/$2.crt", client-key: "$P/$2.key"}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
EOF
}
kubeconfig admin admin
kubeconfig kubelet kubelet

# etcd
start etcd env ETCD_UNSUPPORTED_ARCH= etcd --data-dir "$DIR/etcd" --listen-client-urls http://127.0.0.1:2379 \
  --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
  --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster default=http://127.0.0.1:2380 --name default

# kube-apiserver
APISERVER_EXTRA=()
if [ "$MINOR" -lt 30 ]; then
  # ValidatingAdmissionPolicy is beta (off by default) before 1.30
  APISERVER_EXTRA+=(--feature-gates=ValidatingAdmissionPolicy=true --runtime-config=admissionregistration.k8s.io/v1beta1=true)
fi
start kube-apiserver "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
  --bind-address="$NODE_IP" --advertise-address="$NODE_IP" --secure-port=6443 \
  --service-cluster-ip-range=10.96.0.0/16 \
  --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
  --kubelet-client-certificate="$P/apiserver-kubelet.crt" --kubelet-client-key="$P/apiserver-kubelet.key" \
  --kubelet-preferred-address-types=InternalIP \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --service-account-issuer=https://kubernetes.default.svc \
  --authorization-mode=Node,RBAC --allow-privileged=false "${APISERVER_EXTRA[@]}"
for _ in $(seq 1 120); do
  "$BIN/kubectl" --kubeconfig "$P/admin.kubeconfig" get --raw /readyz >/dev/null 2>&1 && break; sleep 0.5
done

start kube-controller-manager "$CM_BIN" --kubeconfig="$P/admin.kubeconfig" --leader-elect=false \
  --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" --use-service-account-credentials=false \
  --bind-address=127.0.0.1
start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$P/admin.kubeconfig" --leader-elect=false --bind-address=127.0.0.1

# containerd: CRI with restrict_oom_score_adj (the VM lacks CAP_SYS_RESOURCE), cgroupfs, the
# registry on 127.0.0.1:5000 as the mirror of every registry name the manifests use (the library's
# images: docker.io; the example app's: ghcr.io; and the other public ones, so nothing is pulled from outside)
mkdir -p "$DIR/containerd" "$DIR/cni/net.d"
cat > "$DIR/containerd/config.toml" <<EOF
version = 2
root = "$DIR/containerd/root"
state = "$DIR/containerd/state"
[grpc]
  address = "$DIR/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/cdk8s-sidecars-test/pause:1"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$DIR/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
    endpoint = ["http://127.0.0.1:5000"]
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."ghcr.io"]
    endpoint = ["http://127.0.0.1:5000"]
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."registry.k8s.io"]
    endpoint = ["http://127.0.0.1:5000"]
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."quay.io"]
    endpoint = ["http://127.0.0.1:5000"]
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."gcr.io"]
    endpoint = ["http://127.0.0.1:5000"]
  [plugins."io.containerd.grpc.v1.cri".registry.configs."127.0.0.1:5000".tls]
    insecure_skip_verify = true
EOF
cat > "$DIR/cni/net.d/10-bridge.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "pods", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$DIR/cni/ipam", "ranges": [[{"subnet": "10.88.0.0/16"}]]}},
  {"type": "loopback"}]}
EOF
start containerd containerd --config "$DIR/containerd/config.toml"
for _ in $(seq 1 60); do [ -S "$DIR/containerd/containerd.sock" ] && break; sleep 0.5; done
CTR=(ctr --address "$DIR/containerd/containerd.sock" -n k8s.io)
if [ -n "${CLUSTER_REGISTRY:-}" ]; then start registry $CLUSTER_REGISTRY 127.0.0.1:5000; fi
# each archive names its image (the io.containerd.image.name annotation of scripts/cluster/oci-archive.py)
for spec in ${CLUSTER_IMAGES:-}; do
  "${CTR[@]}" images import "${spec#*=}" >> "$LOGS/images.log" 2>&1
done

# kubelet: cgroupfs on cgroup v1, its pods under a cgroup root of this cluster's own
ID="cdk8s-sidecars-$(basename "$DIR")"
echo "$ID" > "$DIR/cgroup.id"
for h in /sys/fs/cgroup/*/; do
  case $h in */unified/) continue ;; esac
  mkdir -p "$h$ID"
  # cpuset: a new cgroup has no CPUs or memory nodes until they are copied from its parent
  [ -f "$h$ID/cpuset.cpus" ] && cat "${h}cpuset.cpus" > "$h$ID/cpuset.cpus" && cat "${h}cpuset.mems" > "$h$ID/cpuset.mems"
done
CGV1=""
[ "$MINOR" -ge 35 ] && CGV1="failCgroupV1: false"
mkdir -p "$DIR/kubelet"
cat > "$DIR/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$P/ca.crt"}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: /$ID
cgroupsPerQOS: true
failSwapOn: false
$CGV1
containerRuntimeEndpoint: unix://$DIR/containerd/containerd.sock
resolvConf: ""
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
protectKernelDefaults: false
volumePluginDir: "$DIR/kubelet/volume-plugins"
EOF
start kubelet "$BIN/kubelet" --config="$DIR/kubelet/config.yaml" --kubeconfig="$P/kubelet.kubeconfig" \
  --root-dir="$DIR/kubelet/root" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" -v="${KUBELET_V:-2}"
touch "$DIR/ready"

# run until told to stop (the watchdog outside stops it once the owner is gone), or until a
# component dies
while true; do
  for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null || { echo "component $p exited" >&2; stop_all; }; done
  sleep 1
done
