#!/usr/bin/env bash
# A terminal through `ward exec` (docs/sessions.md, "Terminals"): the
# command gets a pty of the sandbox's own as its controlling terminal, as
# with `ward run` (test-terminal.sh); ^C reaches the foreground command
# only (not the session, not a background command), ^Z stops it as a job
# and fg continues it, the terminal's modes come back. Terminals come from
# tmux (CI has none); the checks look at the pane's terminal from the host.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
require_t2
. "$HERE/tmux-lib.sh"

id=$("$WARD" session new --owner $$ 2>"$T/new.err") || { cat "$T/new.err" >&2; skip_all "no live session here"; }
at_exit '"$WARD" session stop "$id" >/dev/null 2>&1'
btag=$((6000000 + RANDOM))
"$WARD" exec "$id" --background -- sleep "$btag"

# --- 1. A terminal on stdio: a pty of the sandbox's own, relayed. ---
tty_relay_checks "exec tty" '/dev/pts/[0-9]*' "$WARD" exec "$id"
check "exec tty: ^C did not reach the session's background command" sh -c "pgrep -f -x 'sleep $btag' >/dev/null"
check_eq "exec tty: the session survives ^C" "alive" "$("$WARD" exec "$id" -- echo alive </dev/null)"

# --- 2. ^C in a pipeline of the session's commands: the foreground one. ---
cat >"$T/fg.sh" <<EOF
cd "$WS"
"$WARD" exec "$id" -- sh -c "trap 'echo INT >fgint.out; exit 4' INT; touch ready2; while :; do sleep 0.1; done"
echo \$? >"$T/fg.rc"
EOF
rm -f "$WS/ready2"
pane fg "$T/fg.sh"
wait_for "$WS/ready2"
keys fg C-c
wait_for "$T/fg.rc"
check_eq "exec ^C: the foreground command's trap ran, its status is ward exec's" "4 INT" \
	"$(cat "$T/fg.rc" 2>/dev/null) $(cat "$WS/fgint.out" 2>/dev/null)"
check "exec ^C: the background command still runs" sh -c "pgrep -f -x 'sleep $btag' >/dev/null"

# --- 3. Job control: ^Z stops the job, fg continues it, modes restored. ---
jtag=$((5000000 + RANDOM))
cat >"$T/job.sh" <<EOF
cd "$WS"; stty -g >"$T/job.mode0"
set -m
"$WARD" exec "$id" -- sh -c 'touch ready3; exec sleep $jtag'
echo \$? >"$T/job.rc1"
stty -g >"$T/job.mode1"
ps -o stat= -p "\$(pgrep -f -x 'sleep $jtag')" >"$T/job.stat"
touch "$T/job.stopped"
fg
echo \$? >"$T/job.rc2"
EOF
rm -f "$WS/ready3"
pane job "$T/job.sh"
wait_for "$WS/ready3"
keys job C-z
wait_for "$T/job.stopped"
check_eq "exec ^Z: the job stops as a job does (148)" "148" "$(cat "$T/job.rc1" 2>/dev/null)"
check_eq "exec ^Z: the terminal's modes are back while it is stopped" "$(cat "$T/job.mode0")" \
	"$(cat "$T/job.mode1" 2>/dev/null)"
check_eq "exec ^Z: the command is stopped too" "T" "$(cut -c1 "$T/job.stat")"
sleep_pid=$(pgrep -f -x "sleep $jtag")
for _ in $(seq 1 100); do
	[ "$(ps -o stat= -p "$sleep_pid" 2>/dev/null | cut -c1)" = S ] && break
	sleep 0.1
done
keys job C-c
wait_for "$T/job.rc2"
check_eq "exec fg: the job continued, and ^C ended it (130)" "130" "$(cat "$T/job.rc2" 2>/dev/null)"

# --- 4. Piped stdio from a terminal: no pty, output as it was. ---
cat >"$T/pipe.sh" <<EOF
cd "$WS"
"$WARD" exec "$id" -- sh -c 'tty; seq 1 1000' | cat >"$T/seq.out"
echo "\${PIPESTATUS[*]}" >"$T/pipe.rc"
EOF
pane pipe "$T/pipe.sh"
wait_for "$T/pipe.rc"
check_eq "exec pipeline: ward exec | cat completes" "0 0" "$(cat "$T/pipe.rc" 2>/dev/null)"
check_eq "exec pipeline: stdout is the pipe, all the output" "not a tty 1000" \
	"$(head -1 "$T/seq.out") $(tail -1 "$T/seq.out")"

done_testing
