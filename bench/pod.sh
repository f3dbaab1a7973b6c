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
# price the runtime's filter), the host; and in the same rounds a bare
# /bin/true in the pod and on the host, which separates what the container
# adds to any exec from what it adds to ward's own work (the run less the
# bare exec, pod against host); and a fourth ward arm: the pod's
# namespaces and cgroups entered from the host with nsenter (its overlay
# root, its mounts, its v1 or v2 cgroups, uid 1000), without the
# runtime's exec path (its seccomp filter, no-new-privileges, dropped
# bounding set, rlimits, conmon), which splits what the container's
# file systems and cgroups cost from what the runtime's exec adds.
# Two figures per run: wall time,
# and CPU time (user + system of the loop and its children, from bash's
# `time`), which is what to compare on a loaded machine, where wall time
# is mostly waiting for a core.
# Then tier 2 and warm sessions (a live session needs tier 2): pod.yaml's
# T2 envelope started with podman run (podman 4.3's kube play ignores
# procMount), its ceiling on both sides: cold `ward run -- /bin/true`, and
# `ward exec ID -- /bin/true` in a live session (session new --live
# --owner 1 in the container, one on the host).
# WARD_BENCH_POD_CPU=N pins every timed loop, in the pod and on the host,
# to CPU N (taskset), so that where the scheduler puts a run's processes
# (a fork on the idle CPU, cold caches; it may differ between the pod's
# nested cgroups and the host's) is taken out of the comparison.
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
	podman rm -f -t 0 ward-bench-t2 >/dev/null 2>&1 || true
	podman image unmount localhost/ward:latest >/dev/null 2>&1 || true
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

# The host's /etc: the image's, with ward-test added and the pod's ceiling,
# its audit stream to a FIFO that cat drains (as the pod's PID 1 or conmon
# drain the pod's), in $T/audit (the pod's /run/ward-audit).
mnt=$(podman image mount localhost/ward:latest)
cp -a "$mnt/etc" "$T/etc-t1"
podman image unmount localhost/ward:latest >/dev/null
getent passwd ward-test >>"$T/etc-t1/passwd"
getent group ward-test >>"$T/etc-t1/group"
cp -a "$T/etc-t1" "$T/etc-t2"
mkdir -p "$T/etc-t1/ward" "$T/etc-t2/ward" "$T/audit"
chmod 777 "$T/audit"
host_ceiling() { # MANAGED.JSON > the host's
	sed -e 's#"/proc/1/fd/1"#"'"$T"'/audit/stream"#' -e 's#/run/ward-audit#'"$T"'/audit#g' "$1"
}
host_ceiling "$T/managed.json" >"$T/etc-t1/ward/managed.json"
/usr/bin/python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "ConfigMap":
        sys.stdout.write(d["data"]["managed.json"])' "$SRC/deploy/kubernetes/pod.yaml" >"$T/managed-t2.json"
host_ceiling "$T/managed-t2.json" >"$T/etc-t2/ward/managed.json"
chmod 644 "$T"/etc-t?/ward/managed.json
mkfifo -m 666 "$T/audit/stream"
cat <>"$T/audit/stream" >/dev/null &
reader=$!
HOST_ETC=$T/etc-t1
as_host() {
	unshare -m --propagation private sh -c 'mount --bind "$1" /etc && cd "$0/ws" &&
		shift && exec setpriv --reuid=ward-test --regid=ward-test --init-groups --reset-env \
		env HOME="$0/home" PATH=/usr/bin:/bin "$@"' "$T" "$HOST_ETC" "$@"
}

# One round: N runs of "$@" (its first word: ward, its path), in bash,
# whose `time` reads getrusage (microseconds; the `times` of sh counts
# clock ticks, 10 ms, too coarse for a loop of a few dozen runs); prints
# the user and system seconds of the loop (the shell and its children),
# then the wall nanoseconds.
loop='n=$1; shift; i=0; TIMEFORMAT="%3U %3S"; s=$(date +%s%N)
{ time { while [ $i -lt "$n" ]; do "$@" >/dev/null 2>&1 || exit 1; i=$((i+1)); done; }; } 2>&1
e=$(date +%s%N); echo $((e - s))'
# ms per run from a round's output: "wall cpu"
per_run() {
	/usr/bin/python3 -c '
import sys
lines = sys.stdin.read().split("\n")
n = int(sys.argv[1])
cpu = sum(float(x) for x in lines[0].split())
print(f"{int(lines[1]) / n / 1e6:.4f} {cpu / n * 1e3:.4f}")' "$N"
}
PIN=()
[ -z "${WARD_BENCH_POD_CPU:-}" ] || PIN=(taskset -c "$WARD_BENCH_POD_CPU")
round() { # ARM in_pod CONTAINER | ARM as_host: a round of ward "${RUN[@]}"
	local arm=$1 w=ward
	shift
	[ "$1" = as_host ] && w=$T/bin/ward
	"$@" "${PIN[@]}" bash -c "$loop" bash "$N" "$w" "${RUN[@]}" | per_run >>"$T/$arm"
}
bare() { # ARM in_pod CONTAINER | ARM as_host: a round of bare /bin/true
	local arm=$1
	shift
	"$@" "${PIN[@]}" bash -c "$loop" bash "$N" /bin/true | per_run >>"$T/$arm"
}
in_pod() { podman exec -w /workspace "$1" "${@:2}"; }
# in_ns CMD...: CMD in the first pod's namespaces and cgroups, as its uid,
# from the host (nsenter -w: PID 1's working directory, /workspace).
ns_pid=$(podman inspect -f '{{.State.Pid}}' "${PODS[0]}")
cat >"$T/arm-ns" <<EOF
while IFS=: read -r _ ctl path; do
	case \$ctl in
	"") d=/sys/fs/cgroup; [ -e \$d/cgroup.procs ] || d=/sys/fs/cgroup/unified ;;
	name=*) d=/sys/fs/cgroup/\${ctl#name=} ;;
	*) d=/sys/fs/cgroup/\${ctl%%,*} ;;
	esac
	[ -e "\$d\$path/cgroup.procs" ] || continue
	echo \$\$ >"\$d\$path/cgroup.procs" || exit 1
done </proc/$ns_pid/cgroup
exec nsenter -t $ns_pid -m -u -i -n -p -w setpriv --reuid=1000 --regid=1000 --clear-groups \\
	env -i HOME=/home/agent PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "\$@"
EOF
in_ns() { sh "$T/arm-ns" "$@"; }

RUN=(run --tier 1 -- /bin/true)
for c in "${PODS[@]}"; do
	in_pod "$c" ward "${RUN[@]}"
	[ "$(in_pod "$c" ward probe --json | jq -r .tier)" = 1 ] || { echo "bench/pod.sh: $c is not at tier 1"; exit 1; }
done
as_host "$T/bin/ward" "${RUN[@]}"
# The ceiling binds the host's runs: its allowed_tiers refuses tier 2.
st=0
as_host "$T/bin/ward" run --tier 2 -- /bin/true 2>/dev/null || st=$?
[ "$st" = 125 ] || { echo "bench/pod.sh: the host's runs are not under the pod's ceiling"; exit 1; }

# WARD_BENCH_POD_COUNT=1: instead of timing, count what one tier 1 run does
# in the pod and on the host: syscalls (strace -f -c from the host), then
# perf stat's task-clock and page faults. The pod's side is entered with
# nsenter into the agent container's namespaces as its uid (so its paths
# are looked up on the image's overlay root; the runtime's seccomp filter
# and cgroup are not entered), the host's as the timed rounds run it. Each
# syscall count is less that of the same wrapper running /bin/true.
if [ -n "${WARD_BENCH_POD_COUNT:-}" ]; then
	pid=$(podman inspect -f '{{.State.Pid}}' "${PODS[0]}")
	printf '%s\n' "exec nsenter -t $pid -m -u -i -n -p -w --setuid 1000 --setgid 1000 \\" \
		'	env -i HOME=/home/agent PATH=/usr/local/bin:/usr/bin:/bin "$@"' >"$T/arm-pod"
	printf '%s\n' "exec unshare -m --propagation private sh -c 'mount --bind \"$HOST_ETC\" /etc &&" \
		"	cd \"$T/ws\" && exec setpriv --reuid=ward-test --regid=ward-test --init-groups \\" \
		"	--reset-env env HOME=\"$T/home\" PATH=/usr/bin:/bin \"\$@\"' sh \"\$@\"" >"$T/arm-host"
	count() { # ARM WARD: the syscalls of a run less the wrapper's own
		strace -f -c -o "$T/strace-$1" sh "$T/arm-$1" "$2" run --tier 1 -- /bin/true \
			>/dev/null 2>&1
		strace -f -c -o "$T/strace-$1-base" sh "$T/arm-$1" /bin/true >/dev/null 2>&1
		/usr/bin/python3 -c '
import re, sys
def calls(f):
    d = {}
    for l in open(f):
        m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", l)
        if m and m.group(2) != "total":
            d[m.group(2)] = int(m.group(1))
    return d
a, b = calls(sys.argv[1]), calls(sys.argv[2])
diff = {k: a.get(k, 0) - b.get(k, 0) for k in set(a) | set(b)}
top = sorted(diff.items(), key=lambda kv: -kv[1])[:8]
print(f"  {sum(diff.values())} syscalls:", ", ".join(f"{k} {v}" for k, v in top))' \
			"$T/strace-$1" "$T/strace-$1-base"
	}
	echo "syscalls of one ward run --tier 1 -- /bin/true, less its wrapper's:"
	echo " in the pod's namespaces (nsenter; the image's overlay root):"
	count pod /usr/local/bin/ward
	echo " on the host (the image's /etc bound over the host's):"
	count host "$T/bin/ward"
	echo "perf stat -r $N: the run, then its wrapper alone:"
	for arm in pod host; do
		w=/usr/local/bin/ward
		[ $arm = host ] && w=$T/bin/ward
		for cmd in "$w run --tier 1 -- /bin/true" /bin/true; do
			# shellcheck disable=SC2086 # the words of $cmd
			perf stat -r "$N" -e task-clock,page-faults -- sh "$T/arm-$arm" $cmd \
				2>&1 >/dev/null | grep -E 'task-clock|page-faults' | sed "s/^ */  $arm: /"
		done
	done
	exit 0
fi
for _ in $(seq "$ROUNDS"); do
	round run-pod in_pod "${PODS[0]}"
	round run-unconfined in_pod "${PODS[1]}"
	round run-ns in_ns
	round run-host as_host
	bare bare-pod in_pod "${PODS[0]}"
	bare bare-host as_host
done

# Tier 2 and warm sessions (a live session needs tier 2): pod.yaml's T2
# envelope started with podman run (kube play of podman 4.3 ignores
# procMount; tests/cluster/test-pod.sh checks the same), its ceiling, the
# workspace on the host's /tmp; the host with the same ceiling.
C2=ward-bench-t2
mkdir -p "$T/pod-ws2"
mapfile -t t2cmd < <(/usr/bin/python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Pod":
        print("\n".join(d["spec"]["containers"][0]["command"]))' "$SRC/deploy/kubernetes/pod.yaml")
mkdir -p "$T/etc-ward-t2"
cp "$T/managed-t2.json" "$T/etc-ward-t2/managed.json"
chmod 755 "$T/etc-ward-t2"
chmod 644 "$T/etc-ward-t2/managed.json"
podman --runtime runc run -d --name $C2 --userns=auto \
	--security-opt unmask=/proc/* --security-opt seccomp="$SRC/contrib/ward-seccomp.json" \
	--cap-drop=all --security-opt no-new-privileges --user 1000:1000 \
	-e HOME=/home/agent -w /workspace -v "$T/etc-ward-t2:/etc/ward:ro" \
	-v "$T/pod-ws2:/workspace:U" -v "$T/bin/ward:/usr/local/bin/ward:ro" \
	--tmpfs /run/ward-audit:rw,mode=1777 localhost/ward:latest "${t2cmd[@]}" >/dev/null
HOST_ETC=$T/etc-t2
RUN=(run -- /bin/true)
in_pod $C2 ward "${RUN[@]}"
as_host "$T/bin/ward" "${RUN[@]}"
sp=$(in_pod $C2 ward session new --live --owner 1)
sh_=$(as_host "$T/bin/ward" session new --live --owner $$)
for _ in $(seq "$ROUNDS"); do
	RUN=(run -- /bin/true)
	round t2-pod in_pod $C2
	round t2-host as_host
	bare t2bare-pod in_pod $C2
	bare t2bare-host as_host
	RUN=(exec "$sp" -- /bin/true)
	round exec-pod in_pod $C2
	RUN=(exec "$sh_" -- /bin/true)
	round exec-host as_host
done
in_pod $C2 ward session stop "$sp" >/dev/null 2>&1 || true
as_host "$T/bin/ward" session stop "$sh_" >/dev/null 2>&1 || true

/usr/bin/python3 - "$T" "$N" "$ROUNDS" <<'PY'
import statistics, sys
t, n, rounds = sys.argv[1:]
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
def split(r, run_pod, run_host, bare_pod, bare_host):
    """The container's own cost (a bare exec in and out) apart from ward's."""
    for i, what in ((0, "wall"), (1, "cpu")):
        bp, bh = r[bare_pod][i], r[bare_host][i]
        wp, wh = r[run_pod][i] - bp, r[run_host][i] - bh
        print(f"  {what}: bare /bin/true pod/host {bp / bh:.3f}; ward's own time (run less bare) "
              f"in the pod {wp:.3f} ms, on the host {wh:.3f} ms, pod/host {wp / wh:.3f}")
r = table("ward run --tier 1 -- /bin/true, the same ceiling on both sides:",
          [("run-pod", "in the pod (pod-t1.yaml, RuntimeDefault seccomp)"),
           ("run-unconfined", "in the pod, seccomp unconfined"),
           ("run-ns", "in the pod's namespaces and cgroups (nsenter)"),
           ("run-host", "on the host"),
           ("bare-pod", "bare /bin/true in the pod"),
           ("bare-host", "bare /bin/true on the host")])
print(f"ratio pod/host: wall {r['run-pod'][0] / r['run-host'][0]:.3f}, "
      f"cpu {r['run-pod'][1] / r['run-host'][1]:.3f}  (target <= 1.1)")
split(r, "run-pod", "run-host", "bare-pod", "bare-host")
print(f"the runtime's seccomp filter: cpu {r['run-pod'][1] - r['run-unconfined'][1]:+.3f} ms per run")
print(f"the pod's namespaces and cgroups alone (nsenter) against the host: cpu "
      f"{r['run-ns'][1] / r['run-host'][1]:.3f}; the runtime's exec path beyond them: "
      f"{r['run-pod'][1] - r['run-ns'][1]:+.3f} ms per run")
for arm, title in (("t2", "ward run -- /bin/true at tier 2, pod.yaml's envelope and ceiling on both sides:"),
                   ("exec", "ward exec ID -- /bin/true in a live session (warm), the same:")):
    arms = [(f"{arm}-pod", "in the container (podman run, pod.yaml's envelope)"),
            (f"{arm}-host", "on the host")]
    if arm == "t2":
        arms += [("t2bare-pod", "bare /bin/true in the container"),
                 ("t2bare-host", "bare /bin/true on the host")]
    r = table(title, arms)
    print(f"ratio pod/host: wall {r[f'{arm}-pod'][0] / r[f'{arm}-host'][0]:.3f}, "
          f"cpu {r[f'{arm}-pod'][1] / r[f'{arm}-host'][1]:.3f}")
    if arm == "t2":
        split(r, "t2-pod", "t2-host", "t2bare-pod", "t2bare-host")
PY
