#!/usr/bin/env bash
# The audit log through the real CLI: dozens of concurrent runs leave a
# well-formed log (no interleaved, torn or lost line) while it rotates;
# --events-fd delivers the run's events live (a refused connection before
# the command ends), survives a reader that is slow or gone, and never
# reaches the sandboxed command; `ward log` filters, escapes and follows.
. "$(dirname "$0")/lib.sh"

require_t2
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "python3 is needed to check the JSON lines"

state() { echo "$XDG_STATE_HOME/ward"; }

# check_log DIR: every line of DIR/audit.jsonl* is one JSON object with the
# envelope; prints "lines sessions complete" where complete counts the
# sessions with exactly one start and one exit.
check_log() {
	"$PY" - "$1" <<'PYEOF'
import glob, json, sys, collections
d = sys.argv[1]
lines = 0
starts = collections.Counter()
exits = collections.Counter()
for p in sorted(glob.glob(d + "/audit.jsonl*")):
    with open(p, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        print("torn-tail", p); sys.exit(1)
    for raw in data.split(b"\n")[:-1]:
        o = json.loads(raw)
        assert isinstance(o, dict) and o["v"] == 1 and "ts" in o and "event" in o, raw
        lines += 1
        if o["event"] == "start": starts[o["session"]] += 1
        if o["event"] == "exit": exits[o["session"]] += 1
complete = sum(1 for s in set(starts) | set(exits) if starts[s] == 1 and exits[s] == 1)
print(lines, len(set(starts) | set(exits)), complete)
PYEOF
}

# --- 40 concurrent runs, rotating at 16 KiB (KEEP large enough for all) ---
N=40
export WARD_AUDIT_MAX_SIZE=16K WARD_AUDIT_KEEP=100
concurrent_runs() {
	local i p
	local -a pids=()
	rm -rf "$(state)" "$T/conc"
	mkdir -p "$T/conc"
	for i in $(seq 1 "$N"); do
		"$WARD" run -- sh -c "echo run $i >/dev/null" 2>"$T/conc/$i.err" &
		pids+=($!)
	done
	fails=0
	i=0
	for p in "${pids[@]}"; do
		i=$((i + 1))
		wait "$p" || { fails=$((fails + 1)); grep -v 'PATH entries' "$T/conc/$i.err" | sed 's/^/# run '"$i"': /' | head -5; }
	done
}
concurrent_runs
# One of the 40 used to fail now and then in full CI runs: another run's
# recovery of abandoned guard records took this run's record lock between
# its create and its flock (EAGAIN), and the run refused to start.
# quarantine.c now renames the record into place already locked; a failed
# run prints its stderr above.
check_eq "all $N concurrent runs exited 0" 0 "$fails"
res=$(check_log "$(state)") || res="malformed: $res"
check_eq "$N concurrent runs: every line whole, one start and one exit per session" \
	"$((2 * N)) $N $N" "$res"
check "the log rotated while they ran (audit.jsonl.1 exists)" test -f "$(state)/audit.jsonl.1"
rot_size=$(stat -c %s "$(state)/audit.jsonl.1")
check "a rotated file stays within WARD_AUDIT_MAX_SIZE ($rot_size bytes)" test "$rot_size" -le 16384
check_eq "rotated files keep mode 0600" 600 "$(stat -c %a "$(state)/audit.jsonl.1")"

# --- ward log reads the rotated files too, oldest first ---
all=$("$WARD" log --json)
check_eq "ward log --json shows every line of every file" "$((2 * N))" "$(printf '%s\n' "$all" | grep -c .)"
sid=$(printf '%s\n' "$all" | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline())["session"])')
one=$("$WARD" log --json --session "$sid")
check_eq "--session ID: that session's start and exit" "start exit" \
	"$(printf '%s\n' "$one" | "$PY" -c 'import json,sys; print(" ".join(json.loads(l)["event"] for l in sys.stdin))')"
check_eq "--session with a prefix of the id" "$one" "$("$WARD" log --json --session "${sid:0:6}")"
check_eq "--event exit: one per run" "$N" "$("$WARD" log --json --event exit | grep -c '"event":"exit"')"
check_eq "--event start,exit: both" "$((2 * N))" "$("$WARD" log --json --event start,exit | grep -c .)"
check_eq "--event start --event exit: both" "$((2 * N))" "$("$WARD" log --json --event start --event exit | grep -c .)"
check_eq "--event net: none here" "" "$("$WARD" log --json --event net)"
check_eq "--since in the future: nothing" "" "$("$WARD" log --json --since 2999-01-01T00:00:00Z)"
check_eq "--since 1h: everything" "$((2 * N))" "$("$WARD" log --json --since 1h | grep -c .)"
check_eq "--since 2000-01-01: everything" "$((2 * N))" "$("$WARD" log --json --since 2000-01-01 | grep -c .)"
table=$("$WARD" log --session "$sid")
check "the table has a header" grep -q '^TIME .*SESSION .*EVENT .*DETAILS' <<<"$table"
check "the table shows the start with its command" grep -q "$sid start .*: sh -c 'echo run" <<<"$table"
check "the table shows the exit" grep -q "$sid exit .*exit 0 (status 0)" <<<"$table"
check_eq "ward log --event bogus: a usage error" 2 "$(status_of "$WARD" log --event bogus)"
check_eq "ward log --since junk: a usage error" 2 "$(status_of "$WARD" log --since junk)"
check_eq "ward log with an argument: a usage error" 2 "$(status_of "$WARD" log foo)"
check "ward log --since junk says what it expects" \
	grep -q "RFC 3339" <<<"$("$WARD" log --since junk 2>&1)"
unset WARD_AUDIT_MAX_SIZE WARD_AUDIT_KEEP

# --- an invalid rotation setting: the run does not start, and says why ---
out=$(WARD_AUDIT_MAX_SIZE=lots "$WARD" run -- touch "$WS/bad-setting" 2>&1)
check_eq "WARD_AUDIT_MAX_SIZE=lots: exit 125" 125 "$(WARD_AUDIT_MAX_SIZE=lots status_of "$WARD" run -- true)"
check "... naming the variable" grep -q "WARD_AUDIT_MAX_SIZE='lots'" <<<"$out"
check_not "... and the command did not run" test -e "$WS/bad-setting"

# --- a command's argv cannot drive the reader's terminal ---
esc=$'\e]0;owned\a\e[2J'
"$WARD" run -- true "$esc" 2>/dev/null
shown=$("$WARD" log --event start | tail -n 1)
check_not "ward log prints no raw escape character from a command's argv" grep -q $'\e' <<<"$shown"
check "... but an escaped form of it" grep -qF '\x1b]0;owned\x07\x1b[2J' <<<"$shown"

# --- --events-fd: the same lines as the log ---
rm -rf "$(state)"
"$WARD" run --events-fd 3 -- sh -c 'exit 3' 3>"$T/events.jsonl" 2>/dev/null
check_eq "--events-fd to a file: the same lines as the audit log" \
	"$(cat "$(state)/audit.jsonl")" "$(cat "$T/events.jsonl")"
check "... start and exit" grep -q '"event":"exit".*"exit_code":3' "$T/events.jsonl"
"$WARD" run --events-fd 1 -- true 2>/dev/null >"$T/events-stdout.jsonl"
check "--events-fd 1 (stdout) works too" grep -q '"event":"exit"' "$T/events-stdout.jsonl"

# A run that fails before the command starts still reports on the fd.
"$WARD" run --events-fd 3 -p "$T/no-such-policy.json" -- true 3>"$T/events-err.jsonl" 2>/dev/null
check "a policy error reaches the events fd as an error event" \
	grep -q '"event":"error".*"step":"policy"' "$T/events-err.jsonl"
check_eq "--events-fd 9 (not open): exit 125" 125 "$(status_of "$WARD" run --events-fd 9 -- true)"
check_eq "--events-fd on a read-only fd: exit 125" 125 \
	"$(status_of "$WARD" run --events-fd 3 -- true 3<"$T/events.jsonl")"
check_eq "--events-fd -1: a usage error (125)" 125 "$(status_of "$WARD" run --events-fd -1 -- true)"

# --- protected paths: the after-run check's quarantine events (written by
# the guard, a process of its own) reach the fd, before the exit event ---
"$WARD" run --events-fd 3 -- sh -c 'mkdir -p sub/.git && echo x >sub/.git/config' \
	3>"$T/events-q.jsonl" 2>/dev/null
check_eq "a protected name made by the command: quarantine then exit on the fd" "start quarantine:sub/.git exit" \
	"$("$PY" -c 'import json,sys
print(" ".join(o["event"] + (":" + o["path"] if o["event"] == "quarantine" else "") for o in map(json.loads, open(sys.argv[1]))))' "$T/events-q.jsonl")"
check_not "... and it was moved out of the workspace" test -e "$WS/sub/.git"
rm -rf "$WS/sub"

# --- the sandboxed command cannot write to the events fd (forged events) ---
for tier in 2 0; do
	: >"$T/ev-forge.jsonl"
	"$WARD" run --tier "$tier" --events-fd 3 -- sh -c \
		'echo "{\"v\":1,\"event\":\"exit\",\"forged\":true}" >&3; echo "{\"forged\":true}" >/proc/self/fd/3' \
		3>>"$T/ev-forge.jsonl" 2>/dev/null
	# (ward's own start event quotes the argv: only a line of its own counts)
	check_not "tier $tier: the command cannot write a forged event to the events fd" \
		grep -q '^{"forged"\|^{"v":1,"event"' "$T/ev-forge.jsonl"
	check "tier $tier: ward's own events are there" grep -q '"event":"exit"' "$T/ev-forge.jsonl"
done

# --- live: a refused connection is on the fd while the command still runs ---
if "$WARD" run --net proxy -- /bin/true >/dev/null 2>&1 && command -v curl >/dev/null; then
	mkfifo "$WS/gate" "$T/ev"
	"$WARD" run --net proxy --events-fd 3 -- sh -c \
		'curl -s -o /dev/null http://denied.example/ ; cat "$0" >/dev/null; echo released >"$1"' \
		"$WS/gate" "$WS/released" 3>"$T/ev" 2>/dev/null &
	wpid=$!
	seen=""
	exec 4<"$T/ev"
	# A safety bound, not a timed assertion: without the event the
	# command blocks on the fifo forever.
	while IFS= read -r -t 120 line <&4; do
		case $line in *'"event":"net"'*'"verdict":"deny"'*) seen=$line; break ;; esac
	done
	check "the proxy's refusal arrives on the events fd" test -n "$seen"
	check "... naming the host" grep -q '"host":"denied.example"' <<<"$seen"
	check_not "... while the command still runs (it waits on a fifo)" test -e "$WS/released"
	echo go >"$WS/gate"
	rest=$(cat <&4)
	exec 4<&-
	wait "$wpid"
	check_eq "the run ends normally once released" 0 "$?"
	check "... and the exit event follows on the fd" grep -q '"event":"exit"' <<<"$rest"
	check "... the command ran to its end" test -e "$WS/released"
else
	ok_skip "--net proxy or curl unavailable: live refusal not tested"
fi

# --- a reader that is gone, and one that never reads ---
res=$("$PY" - "$WARD" "$T" <<'PYEOF'
import fcntl, json, os, subprocess, sys
ward, t = sys.argv[1], sys.argv[2]
# Gone: the read end is closed before ward starts.
r, w = os.pipe()
os.close(r)
p = subprocess.run([ward, "run", "--events-fd", str(w), "--result", t + "/gone.json", "--",
                    "sh", "-c", "exit 7"], pass_fds=[w], stderr=subprocess.DEVNULL)
os.close(w)
res = json.load(open(t + "/gone.json"))
print("gone", p.returncode, res.get("events_lost", 0) >= 1)
# Never reads: a 4 KiB pipe, kept open, and a run that logs more than that.
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
p = subprocess.run([ward, "run", "--events-fd", str(w), "--result", t + "/slow.json",
                    "--net", "proxy", "--", "sh", "-c",
                    "for i in $(seq 60); do curl -s -o /dev/null http://denied-$i.example/; done; exit 5"],
                   pass_fds=[w], stderr=subprocess.DEVNULL)
os.close(w)
os.set_blocking(r, False)
data = b""
try:
    while True:
        d = os.read(r, 65536)
        if not d: break
        data += d
except BlockingIOError:
    pass
whole = all(json.loads(l).get("v") == 1 for l in data.split(b"\n")[:-1]) and data.endswith(b"\n")
res = json.load(open(t + "/slow.json"))
print("slow", p.returncode, res.get("events_lost", 0) > 0, whole)
PYEOF
)
check_eq "reader gone: ward is not killed by SIGPIPE, exits with the command's status, counts the loss" \
	"gone 7 True" "$(sed -n 1p <<<"$res")"
if "$WARD" run --net proxy -- /bin/true >/dev/null 2>&1 && command -v curl >/dev/null; then
	check_eq "reader that never reads: the run finishes, losses counted in --result, only whole lines sent" \
		"slow 5 True True" "$(sed -n 2p <<<"$res")"
	check "... and in the exit event of the log" grep -q '"event":"exit".*"events_lost":[1-9]' "$(state)/audit.jsonl"
else
	ok_skip "--net proxy or curl unavailable"
	ok_skip "--net proxy or curl unavailable"
fi

# --- ward log --follow: new lines, across a rotation ---
rm -rf "$(state)"
"$WARD" run -- true 2>/dev/null
"$WARD" log --follow --json >"$T/follow.out" 2>"$T/follow.err" &
fpid=$!
at_exit "kill_id TERM $(proc_id "$fpid")"
wait_lines() { # N: until follow.out has N lines (bounded)
	local i
	for i in $(seq 1 600); do
		[ "$(grep -c . "$T/follow.out")" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
check "--follow shows what is there" wait_lines 2
"$WARD" run -- true 2>/dev/null
check "--follow shows a new run's events" wait_lines 4
# Each run now rotates the log (a limit below one start event).
for i in 1 2 3; do WARD_AUDIT_MAX_SIZE=100 WARD_AUDIT_KEEP=10 "$WARD" run -- true 2>/dev/null; done
check "the log rotated" test -f "$(state)/audit.jsonl.3"
check "--follow goes on across rotations, nothing lost" wait_lines 10
check_eq "--follow: no line twice, all of them" "10 10" \
	"$(sort -u "$T/follow.out" | grep -c .) $(cat "$(state)"/audit.jsonl* | grep -c .)"
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null

done_testing
