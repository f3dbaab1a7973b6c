#!/usr/bin/env bash
# Crash safety: `ward apply` (and `ward undo`) of a few hundred files is
# killed with SIGKILL at random moments; the next ward command on the
# session recovers, and every file must then be exactly its old or its new
# version (checked on the host), with the whole apply either rolled back or
# complete. Bounded: a fixed number of trials.
. "$(dirname "$0")/lib.sh"

require_t2
# Overlay leaves work/work with mode 000 in each session: let the cleanup in.
at_exit 'chmod -R u+rwx "$XDG_STATE_HOME" 2>/dev/null'

N=${WARD_CRASH_FILES:-300}
TRIALS=${WARD_CRASH_TRIALS:-30}

mkdir -p sub
for ((i = 1; i <= N; i++)); do printf 'old %d\n' "$i" >"f$i"; done
for ((i = 1; i <= 40; i++)); do printf 'gone %d\n' "$i" >"sub/g$i"; done
sleep 0.05

id=$("$WARD" session new --storage-only --cow) || { not_ok "session new"; done_testing; exit 1; }
"$WARD" run --session "$id" -- sh -c '
	i=1; while [ $i -le '"$N"' ]; do printf "new %d\n" $i >f$i; i=$((i + 1)); done
	rm -rf sub
	mkdir added; i=1; while [ $i -le 40 ]; do printf "add %d\n" $i >added/a$i; i=$((i + 1)); done
' >"$T/populate.out" 2>&1
st=$?
if [ "$st" -ne 0 ]; then
	not_ok "populate the session with ward run (status $st)"
	while IFS= read -r line; do diag "$line"; done <"$T/populate.out"
	done_testing
	exit 1
fi

# old: every file old, sub/ present, added/ absent. new: the opposite.
# Prints "old", "new", "mixed" or "bad: <file>".
state() {
	local i v o=0 n=0
	for ((i = 1; i <= N; i++)); do
		v=$(<"f$i") || { echo "bad: f$i missing"; return; }
		if [ "$v" = "old $i" ]; then o=$((o + 1));
		elif [ "$v" = "new $i" ]; then n=$((n + 1));
		else echo "bad: f$i='$v'"; return; fi
	done
	for ((i = 1; i <= 40; i++)); do
		if [ -e "sub/g$i" ]; then
			[ "$(<"sub/g$i")" = "gone $i" ] || { echo "bad: sub/g$i"; return; }
			o=$((o + 1))
		else n=$((n + 1)); fi
		if [ -e "added/a$i" ]; then
			[ "$(<"added/a$i")" = "add $i" ] || { echo "bad: added/a$i"; return; }
			n=$((n + 1))
		else o=$((o + 1)); fi
	done
	[ -z "$(find . -name '.#ward-*' -print -quit)" ] || { echo "bad: temporary file left"; return; }
	if [ "$n" -eq 0 ]; then echo old; elif [ "$o" -eq 0 ]; then echo new; else echo mixed; fi
}

check_eq "before: all old" old "$(state)"

# How long one apply takes, to spread the kills over it.
start=$(date +%s%N)
"$WARD" apply "$id" >/dev/null || not_ok "calibration apply"
t_apply=$((($(date +%s%N) - start) / 1000))
check_eq "calibration apply: all new" new "$(state)"
"$WARD" undo "$id" >/dev/null || not_ok "calibration undo"
check_eq "calibration undo: all old" old "$(state)"
diag "one apply of $((N + 80)) entries takes ${t_apply}us"

kill_at() { # kill_at MICROSECONDS CMD...: run CMD, SIGKILL it after the delay
	local us=$1
	shift
	"$@" >/dev/null 2>&1 &
	local pid=$!
	sleep "$(printf '0.%06d' "$us")"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

bad=0 killed_mid=0
for ((t = 1; t <= TRIALS; t++)); do
	us=$(((RANDOM * 32768 + RANDOM) % (t_apply + 1)))
	if ((t % 3 == 0)); then
		# Kill an undo: apply first, then interrupt the undo.
		"$WARD" apply "$id" >/dev/null 2>&1
		kill_at "$us" "$WARD" undo "$id"
	else
		kill_at "$us" "$WARD" apply "$id"
	fi
	interrupted=$(cd / && "$WARD" sessions | awk -v id="$id" '$1 == id { print $6 }')
	[ "$interrupted" = interrupted ] && killed_mid=$((killed_mid + 1))
	# Any command on the session recovers it.
	err=$("$WARD" diff "$id" --stat 2>&1 >/dev/null) || diag "trial $t: recovery failed: $err"
	s=$(state)
	case "$s" in
	old) ;;
	new) "$WARD" undo "$id" >/dev/null 2>&1 ;; # killed too late (or too early for undo)
	*) diag "trial $t (kill after ${us}us): $s"; bad=$((bad + 1)) ;;
	esac
	s=$(state)
	if [ "$s" != old ]; then
		diag "trial $t: not back to old after recovery+undo: $s"
		bad=$((bad + 1))
		break
	fi
done
check_eq "every SIGKILL trial left every file old or new, never mixed" 0 "$bad"
diag "$killed_mid of $TRIALS trials were killed mid-operation (journal left behind)"

# Deterministic interruptions (test hook: the process dies right before
# step K), so that recovery from a half-done operation is tested whatever
# the timing above did.
if [ "$(state)" = old ]; then
	for k in 0 1 17 150 $((N + 20)); do
		WARD_TEST_COW_KILL_AFTER=$k "$WARD" apply "$id" >/dev/null 2>&1
		st=$?
		if [ "$st" -eq 99 ]; then
			check_eq "apply died before step $k: journal left" interrupted \
				"$(cd / && "$WARD" sessions | awk -v id="$id" '$1 == id { print $6 }')"
			"$WARD" diff "$id" --stat >/dev/null 2>"$T/recover.err"
			check "apply died before step $k: recovery says so" grep -q "rolled back" "$T/recover.err"
			check_eq "apply died before step $k: rolled back to old" old "$(state)"
		else
			check_eq "apply finished before step $k" new "$(state)"
			"$WARD" undo "$id" >/dev/null 2>&1
		fi
		"$WARD" apply "$id" >/dev/null 2>&1
		WARD_TEST_COW_KILL_AFTER=$k "$WARD" undo "$id" >/dev/null 2>&1
		"$WARD" diff "$id" --stat >/dev/null 2>&1
		check_eq "undo died before step $k: finished, all old" old "$(state)"
	done
fi
check_not "no journal left after recovery" test -e "$XDG_STATE_HOME/ward/sessions/$id/journal.jsonl"

done_testing
