#!/usr/bin/env bash
# `ward run -- /bin/true` inside a pod against the same on the host, in one
# run, made fair: what differs is the container and nothing else.
#  - the same ward binary (the image's is replaced by WARD's, bind-mounted);
#  - the same tier (--tier 1: the pod of deploy/kubernetes/pod-t1.yaml, as
#    kube play runs it) and the same user class (the pod's uid 1000, the
#    host's unprivileged ward-test; root pays for stronger limits on some
#    hosts, docs/hardening.md);
#  - the same policy: the pod's managed ceiling (its ConfigMap) is the
#    host's too, and the host's /etc is the image's /etc (bind-mounted in a
#    private mount namespace), so that the ceiling's deny of /etc/ward
#    splits the same entries; its audit stream goes to a pipe on both sides
#    (the pod's PID 1's stdout; on the host a FIFO drained by cat);
#  - the same workspace file system type: a directory of the host's /tmp on
#    both sides (a hostPath volume at /workspace in the pod).
# Three arms, interleaved rounds, each a loop of N runs timed where it runs
# (podman exec's own start-up not counted): the pod (the runtime's default
# seccomp profile, RuntimeDefault), the same pod with seccomp unconfined (to
# price the runtime's filter), the host. Two figures per run: wall time,
# and CPU time (user + system of the loop's children, from the shell's
# `times`), which is what to compare on a loaded machine, where wall time
# is mostly waiting for a core.
# With a warm session (issue 14), `ward exec ID -- /bin/true` the same way:
# a live session in the pod (session new --live), one on the host.
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
mkdir -p "$T/seccomp" "$T/ws" "$T/pod-ws" "$T/home" "$T/bin"
cp "$SRC/contrib/ward-seccomp.json" "$T/seccomp/"
id -u ward-test >/dev/null 2>&1 || useradd -m ward-test
cp "$WARD" "$T/bin/ward"
chmod 755 "$T/bin" "$T/bin/ward"
chown ward-test: "$T/ws" "$T/home"
chown 1000:1000 "$T/pod-ws"
manifest=$T/pods.yaml
reader=
cleanup() {
	podman kube down "$manifest" >/dev/null 2>&1 || true
	# podman 4.3's kube down leaves the ConfigMap's volume.
	podman volume rm -f ward-bench-managed >/dev/null 2>&1 || true
	[ -z "$reader" ] || kill "$reader" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

# The two pods: pod-t1.yaml with WARD's binary and the workspace on the
# host's /tmp; the second one also with seccomp unconfined.
/usr/bin/python3 - "$SRC/deploy/kubernetes/pod-t1.yaml" "$T" "$T/managed.json" >"$manifest" <<'PY'
import copy, sys, yaml
src, t, managed = sys.argv[1:]
docs = [d for d in yaml.safe_load_all(open(src)) if d]
cm = next(d for d in docs if d["kind"] == "ConfigMap")
pod = next(d for d in docs if d["kind"] == "Pod")
open(managed, "w").write(cm["data"]["managed.json"])
cm["metadata"]["name"] = "ward-bench-managed"
pod["spec"]["volumes"][0]["configMap"]["name"] = "ward-bench-managed"
out = [cm]
for name, seccomp in (("ward-bench-pod", None), ("ward-bench-unconfined", "unconfined")):
    p = copy.deepcopy(pod)
    p["metadata"]["name"] = name
    if seccomp:
        p["metadata"]["annotations"] = {"seccomp.security.alpha.kubernetes.io/pod": seccomp}
        del p["spec"]["securityContext"]["seccompProfile"]
    c = p["spec"]["containers"][0]
    c["volumeMounts"] += [{"name": "ws", "mountPath": "/workspace"},
                          {"name": "bin", "mountPath": "/usr/local/bin/ward", "readOnly": True}]
    p["spec"]["volumes"] += [{"name": "ws", "hostPath": {"path": t + "/pod-ws", "type": "Directory"}},
                             {"name": "bin", "hostPath": {"path": t + "/bin/ward", "type": "File"}}]
    out.append(p)
print(yaml.safe_dump_all(out))
PY
podman --runtime runc kube play --seccomp-profile-root "$T/seccomp" "$manifest" >/dev/null
PODS=(ward-bench-pod-agent ward-bench-unconfined-agent)

# The host's /etc: the image's, with ward-test added and the pod's ceiling
# (its stream to a FIFO that cat drains, as conmon drains the pod's).
mnt=$(podman image mount localhost/ward:latest)
cp -a "$mnt/etc" "$T/etc"
podman image unmount localhost/ward:latest >/dev/null
getent passwd ward-test >>"$T/etc/passwd"
getent group ward-test >>"$T/etc/group"
mkdir -p "$T/etc/ward"
sed 's#"/proc/1/fd/1"#"'"$T"'/audit.fifo"#' "$T/managed.json" >"$T/etc/ward/managed.json"
chmod 644 "$T/etc/ward/managed.json"
mkfifo -m 666 "$T/audit.fifo"
cat <>"$T/audit.fifo" >/dev/null &
reader=$!
as_host() {
	unshare -m --propagation private sh -c 'mount --bind "$0/etc" /etc && cd "$0/ws" &&
		exec setpriv --reuid=ward-test --regid=ward-test --init-groups --reset-env \
		env HOME="$0/home" PATH="$0/bin:/usr/bin:/bin" "$@"' "$T" "$@"
}

# One round: N runs of "$@"; prints the wall and the children's CPU
# nanoseconds (times: user and system of the waited children).
loop='n=$1; shift; i=0; s=$(date +%s%N)
while [ $i -lt "$n" ]; do "$@" >/dev/null 2>&1 || exit 1; i=$((i+1)); done
e=$(date +%s%N); echo $((e - s)); times'
# ms per run from a round's output: "wall cpu"
per_run() {
	/usr/bin/python3 -c '
import re, sys
lines = sys.stdin.read().split("\n")
n = int(sys.argv[1])
cpu = sum(int(m) * 60 + float(s) for m, s in re.findall(r"(\d+)m([\d.]+)s", lines[2]))
print(f"{int(lines[0]) / n / 1e6:.4f} {cpu / n * 1e3:.4f}")' "$N"
}
round() { # ARM COMMAND...: a round, appended to $T/ARM
	local arm=$1
	shift
	"$@" sh -c "$loop" sh "$N" "${RUN[@]}" | per_run >>"$T/$arm"
}
in_pod() { podman exec -w /workspace "$1" "${@:2}"; }

RUN=(ward run --tier 1 -- /bin/true)
for c in "${PODS[@]}"; do
	in_pod "$c" "${RUN[@]}"
	[ "$(in_pod "$c" ward probe --json | jq -r .tier)" = 1 ] || { echo "bench/pod.sh: $c is not at tier 1"; exit 1; }
done
as_host "${RUN[@]}"
# The ceiling binds the host's runs: its allowed_tiers refuses tier 2.
st=0
as_host ward run --tier 2 -- /bin/true 2>/dev/null || st=$?
[ "$st" = 125 ] || { echo "bench/pod.sh: the host's runs are not under the pod's ceiling"; exit 1; }
for _ in $(seq "$ROUNDS"); do
	round run-pod in_pod "${PODS[0]}"
	round run-unconfined in_pod "${PODS[1]}"
	round run-host as_host
done

# Warm: ward exec in a live session, in the pod and on the host.
EXEC=0
if in_pod "${PODS[0]}" ward session new --live >"$T/sid-pod" 2>"$T/sid.err" &&
	as_host ward session new --live >"$T/sid-host" 2>>"$T/sid.err"; then
	EXEC=1
	sp=$(tail -1 "$T/sid-pod")
	sh_=$(tail -1 "$T/sid-host")
	for _ in $(seq "$ROUNDS"); do
		RUN=(ward exec "$sp" -- /bin/true)
		round exec-pod in_pod "${PODS[0]}"
		RUN=(ward exec "$sh_" -- /bin/true)
		round exec-host as_host
	done
	in_pod "${PODS[0]}" ward session rm "$sp" >/dev/null 2>&1 || true
	as_host ward session rm "$sh_" >/dev/null 2>&1 || true
else
	sed 's/^/# /' "$T/sid.err"
fi

/usr/bin/python3 - "$T" "$N" "$ROUNDS" "$EXEC" <<'PY'
import statistics, sys
t, n, rounds, exec_ = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
def med(arm):
    rows = [tuple(map(float, l.split())) for l in open(f"{t}/{arm}")]
    return statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
print(f"median of {rounds} rounds of {n}, ms per run (wall, CPU = user + system):")
def table(title, arms):
    print(title)
    res = {a: med(a) for a, _ in arms}
    for a, label in arms:
        w, c = res[a]
        print(f"  {label:44} wall {w:7.3f}  cpu {c:7.3f}")
    return res
r = table("ward run --tier 1 -- /bin/true, the same ceiling on both sides:",
          [("run-pod", "in the pod (pod-t1.yaml, RuntimeDefault seccomp)"),
           ("run-unconfined", "in the pod, seccomp unconfined"),
           ("run-host", "on the host")])
print(f"ratio pod/host: wall {r['run-pod'][0] / r['run-host'][0]:.3f}, "
      f"cpu {r['run-pod'][1] / r['run-host'][1]:.3f}  (target <= 1.1)")
print(f"the runtime's seccomp filter: cpu {r['run-pod'][1] - r['run-unconfined'][1]:+.3f} ms per run")
if exec_:
    r = table("ward exec ID -- /bin/true in a live session (warm):",
              [("exec-pod", "in the pod"), ("exec-host", "on the host")])
    print(f"ratio pod/host: wall {r['exec-pod'][0] / r['exec-host'][0]:.3f}, "
          f"cpu {r['exec-pod'][1] / r['exec-host'][1]:.3f}")
PY
