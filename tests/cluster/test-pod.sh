#!/usr/bin/env bash
# ward in Kubernetes pods, without a cluster (docs/kubernetes.md): `make
# image` builds localhost/ward:latest offline, `podman kube play` runs the
# manifests of deploy/kubernetes/ (Pod and ConfigMap YAML, hostUsers: false
# and the seccomp annotation honoured; podman 4.3 ignores procMount and the
# readiness probe, so the probe's command is run by hand), and inside each
# pod: the tier `ward probe` reports against docs/kubernetes.md, a run that
# works, a workspace policy and a flag that widen the ceiling refused (125,
# checked in the pod that nothing happened), a managed file not root's
# refused, the audit lines in `podman logs` (runs started with podman exec,
# as with kubectl exec), the readiness verdict. pod.yaml's T2 envelope also
# with podman run and its equivalent settings (procMount honoured): tier 2,
# a run, the negative checks, ward exec in a live session and the ceiling
# refusing a widening; the tier-2 probe's cache under the pod's filter.
# Then `podman kube down`, the ConfigMaps' volumes removed, and nothing
# left. The agent-sandbox manifests are checked against the CRDs of
# agent-sandbox v0.5.6 (crds/). Run by .ci/run, as root:
#   WARD_BIN=build/ward bash tests/cluster/test-pod.sh
# (the release build: the image gets no test switches).
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
: "${WARD:=${WARD_BIN:-$SRC/build/ward}}"
WARD=$(realpath "$WARD" 2>/dev/null || echo "$WARD")
export WARD
. "$SRC/tests/integration/lib.sh"
. "$SRC/tests/integration/podman-lib.sh"
start=$(date +%s)

podman_require
command -v mmdebstrap >/dev/null || skip_all "mmdebstrap not installed (apt-get install mmdebstrap)"
/usr/bin/python3 -c 'import yaml, jsonschema' 2>/dev/null ||
	skip_all "python3-yaml and python3-jsonschema are needed"
[ -x "$WARD" ] || skip_all "no ward binary at $WARD (make build)"

# --- the agent-sandbox manifests against the CRDs of a named release ---
while IFS= read -r line; do
	case $line in
	"ok "*) ok "agent-sandbox CRDs: ${line#ok [0-9]* - }" ;;
	"not ok "*) not_ok "agent-sandbox CRDs: ${line#not ok [0-9]* - }" ;;
	esac
done < <(/usr/bin/python3 "$HERE/validate-crds.py" "$HERE/crds/agent-sandbox-v0.5.6" \
	"$SRC/deploy/kubernetes/agent-sandbox.yaml")
sed -e 's/procMount: Unmasked/procMont: Unmasked/' "$SRC/deploy/kubernetes/agent-sandbox.yaml" >"$T/typo.yaml"
check_not "the CRD check refuses a misspelt field" \
	/usr/bin/python3 "$HERE/validate-crds.py" "$HERE/crds/agent-sandbox-v0.5.6" "$T/typo.yaml"

# --- this host's podman: a subordinate range for user namespaces, limits ---
# hostUsers: false takes its ids from the user "containers" (podman's
# --userns=auto); added where missing.
for f in /etc/subuid /etc/subgid; do
	grep -q '^containers:' "$f" 2>/dev/null || echo 'containers:2147483647:2147483648' >>"$f"
done
podman_conf "$T/containers.conf"
mkdir -p "$T/seccomp"
cp "$SRC/contrib/ward-seccomp.json" "$T/seccomp/ward-seccomp.json"

# --- the image ---
# WARD_TEST_REUSE_IMAGE=1 (for a quicker loop while working on this test):
# the image there is, with WARD's binary copied over its own.
t0=$(date +%s)
if [ "${WARD_TEST_REUSE_IMAGE:-}" = 1 ] && podman image exists localhost/ward:latest; then
	c=$(podman create localhost/ward:latest true)
	podman cp "$WARD" "$c:/usr/local/bin/ward"
	podman commit -q "$c" localhost/ward:latest >/dev/null
	podman rm "$c" >/dev/null
	diag "WARD_TEST_REUSE_IMAGE: the existing image with $WARD"
elif ! bash "$SRC/deploy/image/build.sh" "$WARD" >"$T/image.log" 2>&1; then
	sed 's/^/# /' "$T/image.log"
	skip_all "make image failed here (see above)"
fi
ok "make image built localhost/ward:latest in $(($(date +%s) - t0)) s"
check_eq "the image's PATH is set" \
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
	"$(podman image inspect localhost/ward:latest --format '{{range .Config.Env}}{{println .}}{{end}}' | grep '^PATH=')"

# configmaps MANIFEST: the names of its ConfigMaps. podman 4.3's kube play
# keeps each in a named volume that kube down leaves (kube down --force
# came later): down() removes them.
configmaps() {
	/usr/bin/python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if not d:
        continue
    if d.get("kind") == "ConfigMap":
        print(d["metadata"]["name"])
    if d.get("kind") == "Pod":
        for v in d["spec"].get("volumes", []):
            if "emptyDir" in v:
                print(v["name"])' "$1"
}
# down MANIFEST: its pod, then the volumes kube play made for its
# ConfigMaps and emptyDirs. kube down can return before the pod is gone
# (seen in CI): wait for it (30 s at most: the containers' main processes,
# `sleep infinity` and `cat` as pid 1, ignore SIGTERM, so each stop waits
# out podman's 10 s timeout; CI once saw a pod outlive a 10 s wait)
# before removing the volumes.
down() {
	local v name
	name=$(/usr/bin/python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "Pod":
        print(d["metadata"]["name"])' "$1")
	podman kube down "$1" >/dev/null 2>&1
	for _ in $(seq 150); do
		[ -z "$(podman pod ls -q --filter "name=^${name}\$")" ] && break
		sleep 0.2
	done
	for v in $(configmaps "$1"); do podman volume rm -f "$v" >/dev/null 2>&1; done
}
# play MANIFEST: start its pod; down MANIFEST at exit.
play() {
	at_exit "down '$1'"
	podman --runtime runc kube play --seccomp-profile-root "$T/seccomp" "$1" >"$T/play.log" 2>&1 ||
		{ sed 's/^/# /' "$T/play.log"; return 1; }
}
# The volumes there before, but for the ConfigMaps' and emptyDirs' of the
# manifests (left by an earlier run's kube down before it removed them).
ours=$(for m in "$SRC"/deploy/kubernetes/pod*.yaml; do configmaps "$m"; done)
volumes_before=$(podman volume ls -q | grep -vxF "$ours" | sort)
# readiness MANIFEST CONTAINER: run the readinessProbe's command of MANIFEST
# in CONTAINER (podman 4.3 does not run it); its output, then its status.
readiness() {
	local cmd
	mapfile -t cmd < <(/usr/bin/python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "Pod":
        print("\n".join(d["spec"]["containers"][0]["readinessProbe"]["exec"]["command"]))' "$1")
	podman exec "$2" "${cmd[@]}"
}
tier_of() { podman exec "$1" ward probe --json 2>/dev/null | jq -r .tier; }

# --- the tier-1 pod (restricted Pod Security Standard) ---
T1=$SRC/deploy/kubernetes/pod-t1.yaml
C1=ward-agent-t1-agent
if play "$T1"; then
	ok "kube play pod-t1.yaml"
	check_eq "T1 envelope: ward probe reports tier 1 (docs/kubernetes.md)" 1 "$(tier_of $C1)"
	check_eq "T1 envelope: runs as the non-root user" 1000 "$(podman exec $C1 id -u)"
	out=$(readiness "$T1" $C1)
	check_eq "T1 envelope: the readiness probe passes ($out)" 0 "$?"
	podman exec $C1 ward run -- sh -c 'echo made > /workspace/made' 2>"$T/run.err"
	check_eq "T1: a ward run works" 0 "$?"
	check_eq "T1: and wrote the workspace" made "$(podman exec $C1 cat /workspace/made)"
	podman exec $C1 sh -c 'echo "{\"fs\": {\"read_write\": [\"/home/agent\"]}}" > /workspace/ward.json'
	podman exec $C1 ward run -p /workspace/ward.json -- touch /home/agent/widened 2>"$T/w.err"
	check_eq "T1: a workspace policy widening the ceiling: 125" 125 "$?"
	check "T1: ... naming the managed rule and the file" \
		grep -q 'managed.*/workspace/ward.json.*fs.read_write' "$T/w.err"
	check_not "T1: ... and nothing was written" podman exec $C1 test -e /home/agent/widened
	podman exec $C1 ward run --allow-domain evil.org -- touch /workspace/flag 2>"$T/f.err"
	check_eq "T1: a flag widening the ceiling: 125" 125 "$?"
	check "T1: ... naming the managed rule and the command line" \
		grep -q 'managed.*<command line>.*network.allow' "$T/f.err"
	check_not "T1: ... and nothing ran" podman exec $C1 test -e /workspace/flag
	check_eq "T1: --tier 2, outside the pod's allowed_tiers: 125" 125 \
		"$(status_of podman exec $C1 ward run --tier 2 -- true)"
	sleep 1
	podman logs $C1 >"$T/logs" 2>&1
	check "T1: the start event of the run is in podman logs (via /proc/1/fd/1)" \
		grep -q '"event":"start".*"argv":\["sh","-c","echo made > /workspace/made"\]' "$T/logs"
	check "T1: ... with the ceiling's sha256" grep -q '"event":"start".*"managed":{"file":"/etc/ward/managed.json","sha256":"[0-9a-f]\{64\}"}' "$T/logs"
	check "T1: the refusals' error events too" grep -q '"event":"error".*"step":"ceiling"' "$T/logs"
else
	not_ok "kube play pod-t1.yaml"
fi

# --- the T2 envelope (pod.yaml): hostUsers: false, ward's seccomp profile ---
T2=$SRC/deploy/kubernetes/pod.yaml
C2=ward-agent-agent
if play "$T2"; then
	ok "kube play pod.yaml"
	check_not "T2 envelope: the pod has a user namespace of its own (hostUsers: false)" \
		podman exec $C2 grep -qE '^ +0 +0 +4294967295$' /proc/self/uid_map
	# podman 4.3 ignores procMount: /proc stays masked and tier 2 cannot
	# mount its own (docs/kubernetes.md); Kubernetes with ProcMountType
	# gives tier 2.
	check_eq "T2 envelope under podman 4.3 (procMount ignored): ward probe reports tier 1" 1 "$(tier_of $C2)"
	check "... naming mount-proc" eval "podman exec $C2 ward probe --json | grep -q '\"step\":\"mount-proc\"'"
	# The ConfigMap's file is the host's root's: unmapped in the pod's user
	# namespace it shows as uid 65534, an owner no process in the pod can be.
	check_eq "T2: the ConfigMap shows as owned by the unmapped uid 65534" 65534 \
		"$(podman exec $C2 stat -c %u /etc/ward/managed.json)"
	podman exec $C2 ward run -- touch /workspace/t2 2>"$T/t2.err"
	check_eq "T2: tier 2 is not available here: ward run refuses (125)" 125 "$?"
	check "T2: ... naming the step (mount-proc)" grep -q "mount-proc" "$T/t2.err"
	check_not "T2: ... and nothing ran" podman exec $C2 test -e /workspace/t2
	podman exec $C2 ward run --tier 1 -- touch /workspace/t2 2>"$T/t2b.err"
	check_eq "T2: --tier 1 is outside the ceiling's allowed_tiers [2]: 125" 125 "$?"
	check "T2: ... naming the managed rule" grep -q 'allowed_tiers' "$T/t2b.err"
	check_not "T2: ... and nothing ran" podman exec $C2 test -e /workspace/t2
	out=$(readiness "$T2" $C2)
	check_eq "T2: the readiness probe fails ($out)" 125 "$?"
	check "T2: ... saying tier 2 is needed" grep -q 'need tier 2' <<<"$out"
	# The probe's answer under the pod's seccomp filter: a negative one
	# is not cached (docs/containers.md); a positive one that is wrong
	# (forged here with this pod's key) fails the run at the refused
	# step, never a weaker sandbox.
	check_not "T2: the negative probe answer is not cached under the pod's filter" \
		podman exec $C2 test -e /home/agent/.local/state/ward/probe-t2
	podman exec -e WARD_EXE=ward $C2 sh -c "$(cat "$HERE/forge-probe-cache.sh")"
	podman exec $C2 ward run -- touch /workspace/forged 2>"$T/forged.err"
	check_eq "T2: a forged positive probe cache: the run still refuses (125)" 125 "$?"
	check "T2: ... at its own step (the cache was read: mount-view /proc)" \
		grep -q 'mount-view: /proc' "$T/forged.err"
	check_not "T2: ... and nothing ran" podman exec $C2 test -e /workspace/forged
	sleep 1
	podman logs $C2 >"$T/logs2" 2>&1
	check "T2: the refusal's error event is in podman logs (PID 1 relays the FIFO)" \
		grep -q '"event":"error".*"step":"tier"' "$T/logs2"
else
	not_ok "kube play pod.yaml"
fi

# --- the T2 envelope with procMount honoured: podman run ---
# podman 4.3's kube play ignores procMount, so pod.yaml's envelope is
# started here with podman run and its equivalents: a user namespace of its
# own (--userns=auto: hostUsers: false), /proc unmasked (procMount:
# Unmasked), ward's seccomp profile, every capability dropped, no
# privilege escalation, user 1000, the ceiling of pod.yaml's ConfigMap
# mounted read-only at /etc/ward, its audit relay (PID 1 and the FIFO in a
# memory-backed directory, the emptyDir).
mkdir -p "$T/etc-ward-t2"
/usr/bin/python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "ConfigMap":
        sys.stdout.write(d["data"]["managed.json"])
    if d and d["kind"] == "Pod":
        open(sys.argv[2], "w").write("\n".join(d["spec"]["containers"][0]["command"]))' \
	"$T2" "$T/t2-command" >"$T/etc-ward-t2/managed.json"
chmod 755 "$T/etc-ward-t2"
chmod 644 "$T/etc-ward-t2/managed.json"
mapfile -t t2cmd <"$T/t2-command"
C4=ward-agent-t2-run
at_exit "podman rm -f -t 0 $C4 >/dev/null 2>&1"
t2_run() {
	podman --runtime runc run -d --name $C4 --userns=auto \
		--security-opt unmask=/proc/* --security-opt seccomp="$SRC/contrib/ward-seccomp.json" \
		--cap-drop=all --security-opt no-new-privileges --user 1000:1000 \
		-e HOME=/home/agent -w /workspace -v "$T/etc-ward-t2:/etc/ward:ro" \
		--tmpfs /run/ward-audit:rw,mode=1777 \
		localhost/ward:latest "${t2cmd[@]}" >"$T/t2run.log" 2>&1
}
# runc's init has been seen to fail once at reopening /dev/null in a fresh
# user namespace: one more try.
t2_run || { podman rm -f -t 0 $C4 >/dev/null 2>&1; sed 's/^/# /' "$T/t2run.log"; t2_run; }
if [ "$?" -eq 0 ]; then
	ok "podman run with pod.yaml's envelope (procMount: Unmasked as unmask=/proc/*)"
	check_not "T2 (podman run): a user namespace of its own" \
		podman exec $C4 grep -qE '^ +0 +0 +4294967295$' /proc/self/uid_map
	check_eq "T2 (podman run): ward's seccomp profile is in force" 2 \
		"$(podman exec $C4 awk '/^Seccomp:/ {print $2}' /proc/self/status)"
	check_eq "T2 (podman run): no capability" 0000000000000000 \
		"$(podman exec $C4 awk '/^CapEff:/ {print $2}' /proc/self/status)"
	check_eq "T2 (podman run): ward probe reports tier 2 (docs/kubernetes.md)" 2 "$(tier_of $C4)"
	out=$(readiness "$T2" $C4)
	check_eq "T2 (podman run): the readiness probe passes ($out)" 0 "$?"
	podman exec $C4 ward run -- sh -c 'echo made > /workspace/made; ls /proc | grep -c "^[0-9]"' \
		>"$T/t2r.out" 2>"$T/t2r.err"
	check_eq "T2 (podman run): a ward run works" 0 "$?"
	check_eq "T2 (podman run): ... and wrote the workspace" made "$(podman exec $C4 cat /workspace/made)"
	check "T2 (podman run): ... in a pid namespace of its own (few pids in /proc)" \
		test "$(cat "$T/t2r.out")" -lt 5
	check "T2 (podman run): the positive probe answer is cached under the pod's filter" \
		podman exec $C4 grep -qP ' seccomp=2 .*\t1\t' /home/agent/.local/state/ward/probe-t2
	# The negative checks: what the ceiling hides, a write outside the
	# workspace, the ceiling itself. Checked in the container afterwards.
	podman exec $C4 sh -c 'echo keep > /home/agent/outside; sha256sum /home/agent/outside' >"$T/before"
	podman exec $C4 ward run -- sh -c '
		ls /run/ward-audit >/dev/null 2>&1 && echo audit-visible
		cat /etc/ward/managed.json >/dev/null 2>&1 && echo ceiling-readable
		echo changed > /home/agent/outside 2>/dev/null && echo home-written
		echo changed >> /etc/ward/managed.json 2>/dev/null && echo ceiling-written
		exit 0' >"$T/t2n.out" 2>"$T/t2n.err"
	check_eq "T2 (podman run): the hostile run ran" 0 "$?"
	check_not "T2 (podman run): the audit FIFO's directory is hidden from the run" grep -q audit-visible "$T/t2n.out"
	check_not "T2 (podman run): the ceiling (fs.deny /etc/ward) is not readable" grep -q ceiling-readable "$T/t2n.out"
	check_not "T2 (podman run): the ceiling cannot be written" grep -q ceiling-written "$T/t2n.out"
	check_eq "T2 (podman run): a file of the user outside the workspace is unchanged in the container" \
		"$(cat "$T/before")" "$(podman exec $C4 sha256sum /home/agent/outside)"
	check_eq "T2 (podman run): --tier 1 is outside the ceiling's allowed_tiers [2]: 125" 125 \
		"$(status_of podman exec $C4 ward run --tier 1 -- touch /workspace/t1)"
	check_not "T2 (podman run): ... and nothing ran" podman exec $C4 test -e /workspace/t1

	# --- ward exec in a live session: the container's PID 1 owns it ---
	sid=$(podman exec $C4 ward session new --live --owner 1 2>"$T/live.err")
	check_eq "T2 (podman run): ward session new --live works" 0 "$?"
	podman exec $C4 ward exec "$sid" -- sh -c 'echo warm > /workspace/warm' 2>"$T/exec.err"
	check_eq "T2: ward exec in the live session works" 0 "$?"
	check_eq "T2: ... and wrote the workspace" warm "$(podman exec $C4 cat /workspace/warm)"
	podman exec $C4 ward exec "$sid" -- sh -c 'echo changed > /home/agent/outside; echo changed >> /etc/ward/managed.json' 2>/dev/null
	check_eq "T2: ward exec: the file outside the workspace is unchanged" \
		"$(cat "$T/before")" "$(podman exec $C4 sha256sum /home/agent/outside)"
	podman exec $C4 ward exec "$sid" --timeout 100000 -- touch /workspace/longer 2>"$T/exec-w.err"
	check_eq "T2: ward exec --timeout beyond the session's (the ceiling's 1800 s): 125" 125 "$?"
	check_not "T2: ... and nothing ran" podman exec $C4 test -e /workspace/longer
	podman exec $C4 ward session new --live --owner 1 --allow-domain evil.org >/dev/null 2>"$T/live-w.err"
	check_eq "T2: a live session widening the ceiling (--allow-domain): 125" 125 "$?"
	check "T2: ... naming the managed rule and the command line" \
		grep -q 'managed.*<command line>.*network.allow' "$T/live-w.err"
	check_eq "T2: ... and no second live session is up" 1 \
		"$(podman exec $C4 sh -c 'ls /home/agent/.local/state/ward/live | wc -l')"
	podman exec $C4 ward session new --live >/dev/null 2>"$T/live-o.err"
	check_eq "T2: without --owner under podman exec (parent outside the pid namespace): usage error" 2 "$?"
	check "T2: ... saying to give --owner 1" grep -q -- '--owner 1' "$T/live-o.err"
	podman exec $C4 ward session stop "$sid" >/dev/null 2>&1
	sleep 1
	podman logs $C4 >"$T/logs4" 2>&1
	check "T2 (podman run): the run's start event is in podman logs (via the FIFO relay)" \
		grep -q '"event":"start".*"argv":\["sh","-c","echo made > /workspace/made' "$T/logs4"
	check "T2: ... and the exec's start" grep -q '"event":"start".*"argv":\["sh","-c","echo warm' "$T/logs4"
	check "T2: ... and its exit, with its exec_id" grep -q '"event":"exit".*"exec_id":1,' "$T/logs4"
	check "T2: ... and the refused session's error event" \
		grep -q '"event":"error".*"step":"ceiling".*evil.org' "$T/logs4"
	podman rm -f -t 0 $C4 >/dev/null 2>&1
else
	sed 's/^/# /' "$T/t2run.log"
	not_ok "podman run with pod.yaml's envelope"
fi

# --- a managed file that is not root's (a hostPath of uid 1000's) ---
mkdir -p "$T/etc-ward"
echo '{ "allowed_tiers": [1] }' >"$T/etc-ward/managed.json"
chown 1000:1000 "$T/etc-ward/managed.json"
chmod 755 "$T" "$T/etc-ward"
NR=$T/pod-nonroot.yaml
/usr/bin/python3 - "$T1" "$T/etc-ward" >"$NR" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "Pod"]
pod = docs[0]
pod["metadata"]["name"] = "ward-agent-nonroot"
pod["spec"]["volumes"] = [{"name": "managed", "hostPath": {"path": sys.argv[2], "type": "Directory"}}]
print(yaml.safe_dump(pod))
PY
C3=ward-agent-nonroot-agent
if play "$NR"; then
	podman exec $C3 ward run -- touch /workspace/nonroot 2>"$T/nr.err"
	check_eq "a managed file owned by uid 1000: ward run refuses (125)" 125 "$?"
	check "... saying why" grep -q 'owned by uid 1000, not root' "$T/nr.err"
	check_not "... and nothing ran" podman exec $C3 test -e /workspace/nonroot
	out=$(podman exec $C3 ward probe --ready)
	check_eq "... and the pod is not ready ($out)" 125 "$?"
	down "$NR"
else
	not_ok "kube play of a pod with a non-root managed file"
fi

# --- down, and nothing left ---
down "$T1"
down "$T2"
check_eq "after kube down: no pod left" "" "$(podman pod ls -q --filter name=ward-agent)"
check_eq "after kube down: no container left" "" "$(podman ps -aq --filter name=ward-agent)"
check_eq "after kube down: no volume left (the ConfigMaps' removed too)" "$volumes_before" "$(podman volume ls -q | sort)"
diag "tests/cluster took $(($(date +%s) - start)) s"
done_testing
