#!/usr/bin/env bash
# `ward run -- /bin/true` inside a pod against the same on the host, in one
# run: the tier-1 pod of deploy/kubernetes/pod-t1.yaml (podman kube play of
# localhost/ward:latest, `make image`) and the host's ward at the same tier
# (--tier 1), interleaved rounds, each a loop of runs timed where it runs
# (so podman exec's own start-up is not counted). The pod's runs are under
# its managed ceiling; the host's under none. Root (rootful podman); the
# host's runs are made as the unprivileged user ward-test, as the pod's are
# as its user 1000 (root pays for stronger limits on some hosts:
# docs/hardening.md).
#   bench/pod.sh [WARD] [RUNS_PER_ROUND] [ROUNDS]
set -euo pipefail
WARD=$(realpath "${1:-build/ward}")
N=${2:-50}
ROUNDS=${3:-6}
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/tests/integration/podman-lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "bench/pod.sh: rootful podman needs root"; exit 1; }
podman image exists localhost/ward:latest || { echo "bench/pod.sh: no image (make image)"; exit 1; }
T=$(mktemp -d /tmp/ward-bench-pod.XXXXXX)
chmod 755 "$T"
podman_conf "$T/containers.conf"
mkdir -p "$T/seccomp" "$T/ws" "$T/home"
cp "$SRC/contrib/ward-seccomp.json" "$T/seccomp/"
id -u ward-test >/dev/null 2>&1 || useradd -m ward-test
cp "$WARD" "$T/ward"
chmod 755 "$T/ward"
chown ward-test: "$T/ws" "$T/home"
as_user() {
	(cd "$T/ws" && setpriv --reuid=ward-test --regid=ward-test --init-groups --reset-env \
		env HOME="$T/home" PATH="$T:/usr/bin:/bin" "$@")
}
manifest=$SRC/deploy/kubernetes/pod-t1.yaml
trap 'podman kube down "$manifest" >/dev/null 2>&1; rm -rf "$T"' EXIT
podman --runtime runc kube play --seccomp-profile-root "$T/seccomp" "$manifest" >/dev/null
C=ward-agent-t1-agent
# One round: N runs, the elapsed nanoseconds.
loop='s=$(date +%s%N); i=0; while [ $i -lt "$1" ]; do ward run --tier 1 -- /bin/true || exit 1; i=$((i+1)); done; echo $(( $(date +%s%N) - s ))'
podman exec $C ward run -- /bin/true
as_user ward run --tier 1 -- /bin/true
pod_ns=()
host_ns=()
for _ in $(seq "$ROUNDS"); do
	pod_ns+=("$(podman exec -w /workspace $C sh -c "$loop" sh "$N")")
	host_ns+=("$(as_user sh -c "$loop" sh "$N")")
done
python3 - "$N" "${pod_ns[*]}" "${host_ns[*]}" <<'PY'
import statistics, sys
n = int(sys.argv[1])
pod = [int(x) / n / 1e6 for x in sys.argv[2].split()]
host = [int(x) / n / 1e6 for x in sys.argv[3].split()]
p, h = statistics.median(pod), statistics.median(host)
print(f"ward run --tier 1 -- /bin/true, median of {len(pod)} rounds of {n} runs (ms per run):")
print(f"  in the pod (podman kube play, pod-t1.yaml)  {p:7.3f}")
print(f"  on the host                                 {h:7.3f}")
print(f"ratio pod/host: {p / h:.3f}  (target <= 1.1)")
PY
