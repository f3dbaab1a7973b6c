#!/usr/bin/env bash
# Limits that are the sandbox's own (issue 19 points 3 and 4, issue 8 points
# 7 and 8): a share of the per-user kernel counters, so that the user's
# host processes keep working while the command exhausts its share; memory
# that counts shared memory or is reported degraded (--strict refuses); cpu
# and io the same; the tier-0 timeout that ends the whole tree; and an audit
# log that never loses a record silently on a full file system. Each check
# is confirmed on the host.
. "$(dirname "$0")/lib.sh"

export PATH=/usr/local/bin:/usr/bin:/bin
: "${WARD_HELPERS:?WARD_HELPERS must point at the built helpers}"
for h in share-hog memhog; do
	[ -x "$WARD_HELPERS/$h" ] || skip_all "helper $h not built"
	cp "$WARD_HELPERS/$h" "$WS/$h"
done
audit_log=$XDG_STATE_HOME/ward/audit.jsonl
quiet() { "$@" >/dev/null 2>&1; }
last_event() { grep "\"event\":\"$1\"" "$audit_log" | tail -1; }
policy() { # policy NAME JSON: write a policy file outside the workspace
	printf '%s\n' "$2" >"$T/$1.json"
	echo "$T/$1.json"
}
# json_get FILE-OR-- EXPR: a value out of one JSON object (python3).
json_get() {
	python3 -c 'import json,sys
d = json.loads(sys.stdin.read())
for k in sys.argv[1].split("."):
    d = d.get(k) if isinstance(d, dict) else None
print("" if d is None else json.dumps(d) if not isinstance(d, str) else d)' "$1"
}

# --- tier 0: the timeout ends the whole tree ---------------------------------
# A command that ignores SIGALRM and SIGTERM and leaves a double-forked,
# setsid grandchild behind. Tagged names so that pgrep sees only ours.
tag=ward-t0-$$
out=$("$WARD" run --tier 0 --timeout 2 --result "$T/t0.json" -- bash -c "
	trap '' ALRM TERM HUP
	(setsid bash -c 'exec -a $tag-grandchild sleep 600' &)
	exec -a $tag-child sleep 600" 2>&1)
st=$?
check_eq "tier 0: a command ignoring SIGALRM times out with 124" 124 "$st"
check_eq "tier 0: --result says timed_out" true "$(json_get timed_out <"$T/t0.json")"
check_eq "tier 0: the audit exit event says timed_out" true \
	"$(last_event exit | json_get timed_out)"
check_not "tier 0: nothing of the tree is left on the host (pgrep $tag)" quiet pgrep -f "$tag"
# A command that ends by itself still takes what it left behind with it.
"$WARD" run --tier 0 -- bash -c "(setsid bash -c 'exec -a $tag-daemon sleep 600' &); exit 3" \
	>/dev/null 2>&1
st=$?
check_eq "tier 0: the command's own status is kept" 3 "$st"
check_not "tier 0: a daemon it left is gone when the run ends" quiet pgrep -f "$tag-daemon"
# Control: the same tree outside ward does leave the grandchild.
bash -c "(setsid bash -c 'exec -a $tag-control sleep 600' &)"
for _ in $(seq 50); do pgrep -f "$tag-control" >/dev/null && break; sleep 0.1; done
check "control: without ward the double-forked grandchild survives" quiet pgrep -f "$tag-control"
pkill -f "$tag-control"

# --- audit: a full file system ------------------------------------------------
# A tiny tmpfs as the state directory, in a user + mount namespace of the
# test's own (works as root and unprivileged). The log's last page is left
# with 100 bytes free and no free page: a record must not leave a fragment.
if unshare -Urm true 2>/dev/null; then
	cat >"$T/full.sh" <<'EOF'
set -u
W=$1 d=$2 mode=$3 result=$4
mount -t tmpfs -o size=64k tmpfs "$d" || exit 99
mkdir -p "$d/ward"
export XDG_STATE_HOME=$d
head -c $((8192 - 101)) /dev/zero | tr '\0' x >"$d/ward/audit.jsonl"
echo >>"$d/ward/audit.jsonl"
fill() { dd if=/dev/zero of="$d/fill" bs=4k 2>/dev/null; :; }
case $mode in
start) # no room even for the start record
	fill
	"$W" run --tier 0 -- touch "$d/ran" 2>"$result.err"
	echo "status=$?"
	test -e "$d/ran" && echo ran ;;
exit) # the start record fits; the command leaves 50 bytes in the log's
	# last page and fills the file system
	cat >"$d/cmd.sh" <<'EOS'
f=$1/ward/audit.jsonl
pad=$((4096 - $(stat -c %s "$f") % 4096 - 50))
[ "$pad" -lt 2 ] && pad=$((pad + 4096))
{ head -c $((pad - 1)) /dev/zero | tr '\0' x; echo; } >>"$f"
dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
exit 7
EOS
	"$W" run --tier 0 --result "$result" -- sh "$d/cmd.sh" "$d" 2>"$result.err"
	echo "status=$?" ;;
esac
echo "size=$(stat -c %s "$d/ward/audit.jsonl")"
echo "last=$(tail -c 1 "$d/ward/audit.jsonl" | od -An -c | tr -d ' ')"
python3 -c '
import json, sys
for n, l in enumerate(open(sys.argv[1]), 1):
    if l.strip() and not l.startswith("x"):
        json.loads(l)
print("lines=ok")' "$d/ward/audit.jsonl" 2>/dev/null || echo "lines=broken"
sed 's/^/err: /' "$result.err"
EOF
	mkdir "$T/full"
	out=$(unshare -Urm bash "$T/full.sh" "$WARD" "$T/full" start "$T/r1.json" 2>&1)
	check "audit full: the run is refused (125)" grep -qx 'status=125' <<<"$out"
	check_not "audit full: the command did not run" grep -qx ran <<<"$out"
	check "audit full: no fragment was left (size unchanged)" grep -qx 'size=8092' <<<"$out"
	check "audit full: the log ends with a newline" grep -qx 'last=\\n' <<<"$out"
	check "audit full: stderr says the log could not be written" \
		grep -q 'err: .*Failed to write the audit log.*No space left' <<<"$out"
	out=$(unshare -Urm bash "$T/full.sh" "$WARD" "$T/full" exit "$T/r2.json" 2>&1)
	check "audit full at exit: the command's status is kept (7)" grep -qx 'status=7' <<<"$out"
	check "audit full at exit: every line is whole JSON" grep -qx 'lines=ok' <<<"$out"
	check "audit full at exit: the log ends with a newline" grep -qx 'last=\\n' <<<"$out"
	check "audit full at exit: stderr says records were lost" \
		grep -q 'err: .*audit log .* is incomplete' <<<"$out"
	check "audit full at exit: --result carries audit_error" \
		grep -q '"audit_error":.*No space left' "$T/r2.json"
else
	ok_skip "audit full: unshare -Urm is not available here"
fi

# --- the rest needs T2 ----------------------------------------------------------
if ! "$WARD" run -- /bin/true >/dev/null 2>&1; then
	[ -n "${WARD_MUST_WORK:-}" ] && { not_ok "ward run does not work here"; done_testing; exit; }
	ok_skip "T2 does not work here"
	done_testing
	exit
fi

# --- audit: a review command that cannot write its record -----------------------
# The session lives in the state dir as usual; only the audit log sits on a
# full tmpfs (bound over it in a user + mount namespace of the test's own).
if unshare -Urm true 2>/dev/null; then
	mkdir -p "$T/rv/ws" "$T/rv/small"
	cat >"$T/rv.sh" <<'EOF'
set -u
W=$1 d=$2
export XDG_STATE_HOME=$d/state
cd "$d/ws" || exit 99
"$W" run --cow -- sh -c 'echo applied >f' 2>"$d/err1" || exit 98
id=$(sed -n 's/^ward: session \([0-9a-f]*\)$/\1/p' "$d/err1")
f=$d/state/ward/audit.jsonl
mount -t tmpfs -o size=64k tmpfs "$d/small" || exit 99
cp "$f" "$d/small/audit.jsonl"
mount --bind "$d/small/audit.jsonl" "$f" || exit 99
pad=$((4096 - $(stat -c %s "$f") % 4096 - 20))
[ "$pad" -lt 2 ] && pad=$((pad + 4096))
{ head -c $((pad - 1)) /dev/zero | tr '\0' x; echo; } >>"$f"
dd if=/dev/zero of="$d/small/fill" bs=1k 2>/dev/null
size=$(stat -c %s "$f")
"$W" apply "$id" >/dev/null 2>"$d/err2"
echo "apply=$?"
test "$(stat -c %s "$f")" = "$size" && echo same-size
sed 's/^/err: /' "$d/err2"
EOF
	out=$(unshare -Urm bash "$T/rv.sh" "$WARD" "$T/rv" 2>&1)
	check "audit full: ward apply exits 1 when its record is lost" grep -qx 'apply=1' <<<"$out"
	check "audit full: ward apply says so on stderr" \
		grep -q "err: .*Failed to write the 'apply' record.*No space left" <<<"$out"
	check "audit full: ward apply left no fragment" grep -qx same-size <<<"$out"
	check_eq "audit full: the change itself was applied" applied "$(cat "$T/rv/ws/f" 2>&1)"
else
	ok_skip "audit full (apply): unshare -Urm is not available here"
fi

# --- per-user counters: inotify -----------------------------------------------
# The command takes every inotify instance the kernel gives it and holds
# them; meanwhile a host process of the same user creates one.
mkfifo "$WS/ready" "$WS/go"
"$WARD" run -- ./share-hog inotify "$WS" >"$T/hog.out" 2>&1 &
ward_pid=$!
# (timeout: only a safety net should the run fail before it opens the FIFO)
held=$(timeout 120 cat "$WS/ready")
"$WS/share-hog" one-inotify >"$T/host.out" 2>&1
host=$?
timeout 120 sh -c ': >"$1"' sh "$WS/go"
wait "$ward_pid"
n=$(sed -n 's/^held \([0-9]*\) .*/\1/p' <<<"$held")
share=$(last_event start | json_get limits.inotify_instances.value)
check_eq "inotify: the host created an instance while the sandbox held its share" 0 "$host"
check "inotify: the sandbox got no more than its share ($n <= $share)" \
	test -n "$n" -a -n "$share" -a "${n:-999}" -le "${share:-0}"
check "inotify: the sandbox could use its share (got $n)" test "${n:-0}" -ge 8
check "inotify: the share is at most half the user's limit" \
	test "$((share * 2))" -le "$(cat /proc/sys/user/max_inotify_instances)"
# A policy gives a smaller share.
small=$(policy inotify '{"version":1,"limits":{"inotify_instances":5}}')
check_eq "inotify: limits.inotify_instances 5 holds" "held 5 EMFILE" \
	"$("$WARD" run -p "$small" -- ./share-hog inotify 2>&1)"

# --- per-user counters: pending signals, message queues, namespaces ---------
out=$("$WARD" run -- ./share-hog sigpending 2>&1)
n=$(sed -n 's/^held \([0-9]*\) EAGAIN$/\1/p' <<<"$out")
share=$(last_event start | json_get limits.sigpending.value)
check "sigpending: queued signals stop at the share ($n <= $share)" \
	test -n "$n" -a -n "$share" -a "${n:-999}" -le "${share:-0}"
check "sigpending: the share is at most half the user's limit" \
	test "$((share * 2))" -le "$(ulimit -i)"
check_eq "msgqueue: RLIMIT_MSGQUEUE inside is the share (limits.msgqueue_kb 100)" 102400 \
	"$("$WARD" run -p "$(policy mq '{"version":1,"limits":{"msgqueue_kb":100}}')" -- \
		bash -c 'ulimit -q' 2>&1)"
host_l=$(ulimit -l)
in_l=$("$WARD" run -- bash -c 'ulimit -l' 2>&1)
check "memlock: RLIMIT_MEMLOCK inside ($in_l KiB) is at most half the user's ($host_l)" \
	test "$host_l" = unlimited -o "$((${in_l:-999999999} * 2))" -le "${host_l/unlimited/0}"
check "namespaces: the sandbox's user namespace has a share of max_user_namespaces" \
	test "$("$WARD" run -- cat /proc/sys/user/max_user_namespaces 2>&1)" -le 64
check_eq "the shares cannot be raised from inside" "denied" \
	"$("$WARD" run -- sh -c '{ echo 100000 >/proc/sys/user/max_inotify_instances; } 2>/dev/null && echo written || echo denied')"

# --- memory: shared memory counted, or the run reported degraded -------------
mem=$(policy mem '{"version":1,"limits":{"memory_mb":64}}')
"$WARD" run -p "$mem" -- true >/dev/null 2>&1
mech=$(last_event start | json_get limits.memory_mb.mechanism)
degraded=$(last_event start | json_get degraded)
case $mech in
cgroup | cgroup-v1)
	for kind in memfd shared shm; do
		out=$("$WARD" run -p "$mem" -- ./memhog 320 "$kind" 2>&1)
		st=$?
		top=$(sed -n 's/^memhog: at \([0-9]*\) MiB$/\1/p' <<<"$out" | tail -1)
		check "memory ($kind): stopped below 320 MiB (status $st)" \
			test "$st" = 137 -o "$st" = 0
		check "memory ($kind): got no further than the limit (${top:-0} MiB)" \
			test "${top:-0}" -le 64
		if [ "$st" = 137 ]; then
			check_eq "memory ($kind): the exit event says oom_killed" true \
				"$(last_event exit | json_get oom_killed)"
		fi
	done
	check_not "memory: held by a cgroup, not reported degraded" \
		grep -q limit-memory <<<"$degraded"
	;;
*)
	check_eq "memory without a cgroup: mechanism rlimit" rlimit "$mech"
	check "memory without a cgroup: reported degraded" grep -q '"limit-memory"' <<<"$degraded"
	check "memory without a cgroup: the reason names shared memory" \
		grep -q 'shared memory' <<<"$(last_event start | json_get limits.memory_mb.reason)"
	rm -f "$T/ran"
	"$WARD" run --strict -p "$mem" -- touch "$WS/ran" >/dev/null 2>&1
	st=$?
	check_eq "memory without a cgroup: --strict refuses (125)" 125 "$st"
	check_not "memory without a cgroup: --strict did not run the command" test -e "$WS/ran"
	;;
esac
# Every tmpfs the sandbox gets is bounded by the memory limit.
sizes=$("$WARD" run -p "$mem" -- sh -c 'df -m /tmp /dev/shm "$HOME" | awk "NR>1{print \$2}"' 2>&1)
check "memory: /tmp, /dev/shm and \$HOME are at most 64 MiB ($(echo $sizes))" \
	test "$(sort -n <<<"$sizes" | tail -1)" -le 64 -a "$(wc -l <<<"$sizes")" -eq 3
out=$("$WARD" run -p "$mem" -- sh -c 'head -c 100M /dev/zero >/dev/shm/x; echo $?' 2>&1)
check "memory: 100 MiB do not fit in /dev/shm" test "$(tail -1 <<<"$out")" != 0
check_eq "shm_mb: /dev/shm has the size asked" 16 \
	"$("$WARD" run -p "$(policy shm '{"version":1,"limits":{"shm_mb":16}}')" -- \
		sh -c 'df -m /dev/shm | awk "NR>1{print \$2}"' 2>&1)"

# --- cpu and io: held by a cgroup or reported ----------------------------------
cpu=$(policy cpu '{"version":1,"limits":{"cpu_percent":50}}')
"$WARD" run -p "$cpu" -- true >/dev/null 2>&1
mech=$(last_event start | json_get limits.cpu_percent.mechanism)
case $mech in
cgroup | cgroup-v1)
	# Read the quota on the host while the run holds its cgroup.
	"$WARD" run -p "$cpu" -- sh -c 'cat /proc/self/cgroup >ready; cat go >/dev/null' \
		>/dev/null 2>&1 &
	ward_pid=$!
	cgl=$(timeout 120 cat "$WS/ready")
	if [ "$mech" = cgroup ]; then
		quota=$(cat "$(last_event start | json_get limits.cgroup)/cpu.max" 2>&1)
		want="50000 100000"
	else
		quota=$(cat "/sys/fs/cgroup/cpu$(sed -n 's/^[0-9]*:[^:]*\bcpu\b[^:]*:\(.*\)/\1/p' \
			<<<"$cgl")/cpu.cfs_quota_us" 2>&1)
		want=50000
	fi
	timeout 120 sh -c ': >"$1"' sh "$WS/go"
	wait "$ward_pid"
	check_eq "cpu: the run's cgroup has the quota ($mech)" "$want" "$quota"
	check "cpu: not reported degraded" test -z "$(last_event start | json_get degraded |
		grep limit-cpu)" ;;
*)
	check_eq "cpu without a cgroup: mechanism none" none "$mech"
	check "cpu without a cgroup: reported degraded" \
		grep -q '"limit-cpu"' <<<"$(last_event start | json_get degraded)"
	check_eq "cpu without a cgroup: --strict refuses (125)" 125 \
		"$(status_of "$WARD" run --strict -p "$cpu" -- true)" ;;
esac
io=$(policy io '{"version":1,"limits":{"io_weight":100}}')
"$WARD" run -p "$io" -- true >/dev/null 2>&1
mech=$(last_event start | json_get limits.io_weight.mechanism)
check "io: the start event says what holds io_weight (got '$mech')" \
	test "$mech" = cgroup -o "$mech" = cgroup-v1 -o "$mech" = none
if [ "$mech" = none ]; then
	check_eq "io without a cgroup: --strict refuses (125)" 125 \
		"$(status_of "$WARD" run --strict -p "$io" -- true)"
fi

# --- bad values: refused, naming the file and the key --------------------------
for kv in '"cpu_percent":0' '"io_weight":20000' '"inotify_instances":-1' '"shm_mb":"64"' \
	'"sigpending":1.5'; do
	bad=$(policy bad "{\"version\":1,\"limits\":{$kv}}")
	out=$("$WARD" run -p "$bad" -- true 2>&1)
	st=$?
	key=${kv%%:*}
	key=${key//\"/}
	check_eq "bad limits.$key is refused (125)" 125 "$st"
	check "bad limits.$key: the error names the file and limits.$key" \
		grep -q "$bad.*limits\.$key" <<<"$out"
done

done_testing
