#!/usr/bin/env bash
# The caller's terminal, session and scheduling state, and a harness that
# dies. Terminals come from tmux (CI has none): each case runs a small
# script in a tmux pane, and the checks look at the pane's terminal from
# the host (its foreground process group, its modes) and at files.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
require_t2
. "$HERE/tmux-lib.sh"

# --- 1. Piped stdio inside a terminal: the command gets no terminal. ---
cat >"$T/attack.py" <<'EOF'
import fcntl, os, signal, termios, time
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
signal.signal(signal.SIGTTIN, signal.SIG_IGN)
got = []
open("ready", "w").close()
try:
    fd = os.open("/dev/tty", os.O_RDWR)
    got.append("opened-dev-tty")
    try:
        os.tcsetpgrp(fd, os.getpgrp()); got.append("tcsetpgrp")
    except OSError: pass
    try:
        t = termios.tcgetattr(fd); t[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSANOW, t); got.append("tcsetattr")
    except OSError: pass
    time.sleep(3)
    try:
        os.set_blocking(fd, False); got.append("read:" + os.read(fd, 100).decode())
    except OSError: pass
except OSError:
    pass
for fd in range(3):
    for req, name in ((termios.TIOCSCTTY, "sctty"), (termios.TIOCSTI, "sti")):
        try:
            fcntl.ioctl(fd, req, b"x" if name == "sti" else 0); got.append(f"{name}:{fd}")
        except OSError: pass
try:
    os.setsid()
    for fd in range(3):
        try: fcntl.ioctl(fd, termios.TIOCSCTTY, 1); got.append(f"sctty-after-setsid:{fd}")
        except OSError: pass
except OSError: pass
open("result", "w").write(" ".join(got) + "\n")
EOF
cp "$T/attack.py" "$WS/attack.py"
cat >"$T/piped.sh" <<EOF
cd "$WS"; fg0=\$(ps -o tpgid= -p \$\$ | tr -d ' '); mode0=\$(stty -g)
"$WARD" run -- "$PY" attack.py </dev/null >"$T/piped.out" 2>&1
echo \$? >"$T/piped.rc"
fg1=\$(ps -o tpgid= -p \$\$ | tr -d ' '); mode1=\$(stty -g)
echo "\$fg0 \$fg1" >"$T/piped.fg"; echo "\$mode0 \$mode1" >"$T/piped.mode"
read -r -t 30 line; echo "\$line" >"$T/piped.typed"
EOF
pane piped "$T/piped.sh"
if wait_for "$WS/ready"; then
	keys piped "typed-by-the-user" Enter
fi
wait_for "$T/piped.typed"
check_eq "piped stdio: the command ran" "0" "$(cat "$T/piped.rc" 2>/dev/null)"
check_eq "piped stdio: no route to the caller's terminal (/dev/tty, TIOCSCTTY, TIOCSTI)" "" \
	"$(cat "$WS/result" 2>/dev/null || echo missing)"
read -r fg0 fg1 <"$T/piped.fg"
check_eq "piped stdio: the terminal's foreground group is unchanged" "$fg0" "$fg1"
read -r m0 m1 <"$T/piped.mode"
check_eq "piped stdio: the terminal's modes are unchanged" "$m0" "$m1"
check_eq "piped stdio: what the user typed was not read by the sandbox" "typed-by-the-user" \
	"$(cat "$T/piped.typed")"
rm -f "$WS/ready" "$WS/result"

# --- 2. A terminal on stdio: a pty of the sandbox's own, relayed. ---
tty_relay_checks tty /dev/pts/0 "$WARD" run

# --- 3. Job control: ^Z stops the job, fg continues it, modes restored. ---
jtag=$((5000000 + RANDOM))
cat >"$T/job.sh" <<EOF
cd "$WS"; stty -g >"$T/job.mode0"
set -m
"$WARD" run -- sh -c 'touch ready; exec sleep $jtag'
echo \$? >"$T/job.rc1"
stty -g >"$T/job.mode1"
ps -o stat= -p "\$(pgrep -f -x 'sleep $jtag')" >"$T/job.stat"
touch "$T/job.stopped"
fg
echo \$? >"$T/job.rc2"
EOF
rm -f "$WS/ready"
pane job "$T/job.sh"
wait_for "$WS/ready"
keys job C-z
wait_for "$T/job.stopped"
check_eq "^Z: the job stops as a job does (148)" "148" "$(cat "$T/job.rc1" 2>/dev/null)"
check_eq "^Z: the terminal's modes are back while it is stopped" "$(cat "$T/job.mode0")" \
	"$(cat "$T/job.mode1" 2>/dev/null)"
check_eq "^Z: the command is stopped too" "T" "$(cut -c1 "$T/job.stat")"
# After fg the job runs again: ^C now ends it.
sleep_pid=$(pgrep -f -x "sleep $jtag")
for _ in $(seq 1 100); do
	[ "$(ps -o stat= -p "$sleep_pid" 2>/dev/null | cut -c1)" = S ] && break
	sleep 0.1
done
keys job C-c
wait_for "$T/job.rc2"
check_eq "fg: the job continued, and ^C ended it (130)" "130" "$(cat "$T/job.rc2" 2>/dev/null)"

# --- 4. Pipelines in a terminal (issue 9.7). ---
cat >"$T/pipe.sh" <<EOF
cd "$WS"; mode0=\$(stty -g)
"$WARD" run -- seq 1 1000 | cat >"$T/seq.out"
echo "\${PIPESTATUS[*]}" >"$T/pipe.rc"
"$WARD" run -- seq 1 1000 | less
echo "\${PIPESTATUS[*]}" >"$T/less.rc"
echo "\$mode0 \$(stty -g)" >"$T/pipe.mode"
EOF
pane pipe "$T/pipe.sh"
wait_for "$T/pipe.rc"
check_eq "pipeline: ward | cat completes" "0 0" "$(cat "$T/pipe.rc" 2>/dev/null)"
check_eq "pipeline: all the output" "1000" "$(wc -l <"$T/seq.out")"
for _ in $(seq 1 100); do
	"${TM[@]}" capture-pane -p -t w:pipe 2>/dev/null | grep -qx 23 && break
	sleep 0.1
done
keys pipe q
wait_for "$T/pipe.mode"
check_eq "pipeline: ward | less completes after q" "0 0" "$(cat "$T/less.rc" 2>/dev/null)"
read -r m0 m1 <"$T/pipe.mode"
check_eq "pipeline: the terminal's modes are as before" "$m0" "$m1"

# The same at --tier 0, where the command gets the real terminal: it stays
# in ward's process group, so less keeps the terminal.
cat >"$T/pipe0.sh" <<EOF
cd "$WS"; mode0=\$(stty -g)
"$WARD" run --tier 0 -- seq 1 1000 2>/dev/null | less
echo "\${PIPESTATUS[*]}" >"$T/less0.rc"
echo "\$mode0 \$(stty -g)" >"$T/pipe0.mode"
EOF
pane pipe0 "$T/pipe0.sh"
for _ in $(seq 1 100); do
	"${TM[@]}" capture-pane -p -t w:pipe0 2>/dev/null | grep -qx 23 && break
	sleep 0.1
done
keys pipe0 q
wait_for "$T/pipe0.mode"
check_eq "tier 0 pipeline: ward | less completes after q" "0 0" "$(cat "$T/less0.rc" 2>/dev/null)"
read -r m0 m1 <"$T/pipe0.mode"
check_eq "tier 0 pipeline: the terminal's modes are as before" "$m0" "$m1"

# --- 5. Scheduling and session state (issue 19.2). ---
if [ -r /proc/self/autogroup ]; then
	before=$(sed 's/.*nice //' /proc/$$/autogroup)
	inside=$("$WARD" run -- sh -c 'echo 19 >/proc/self/autogroup; cat /proc/self/autogroup' 2>&1)
	case $inside in
	*"nice 19"*) ok "autogroup: the command set its own session's nice" ;;
	*) not_ok "autogroup: the write inside did not take ($inside)" ;;
	esac
	check_eq "autogroup: the caller's session keeps its nice" "$before" \
		"$(sed 's/.*nice //' /proc/$$/autogroup)"
else
	ok_skip "no /proc/self/autogroup on this kernel"
	ok_skip "no /proc/self/autogroup on this kernel"
fi
nice0=$(ps -o ni= -p $$ | tr -d ' ')
"$WARD" run -- sh -c "renice -n 15 -u $(id -u); renice -n 15 -g 0; renice -n 15 -p 1" \
	>/dev/null 2>&1
check_eq "renice of the user, group and pid 1 inside leaves the caller's nice" "$nice0" \
	"$(ps -o ni= -p $$ | tr -d ' ')"
out=$("$WARD" run -- sh -c 'ps -o sid=,pgid= -p $$' 2>/dev/null | tr -s ' ')
check_eq "the sandbox is a session of its own (sid 1, init's)" " 1 2" "$out"

# --- 6. Nothing outlives its harness (issue 8.6). ---
tag=$((7000000 + RANDOM))
bash -c '"$1" run -- sh -c "exec sleep $2" 2>/dev/null & wait' _ "$WARD" "$tag" &
harness=$!
for _ in $(seq 1 300); do
	pgrep -f -x "sleep $tag" >/dev/null && break
	sleep 0.1
done
ward_pid=$(pgrep -o -f -- "run -- sh -c exec sleep $tag")
running() { pgrep -f -x "$1" >/dev/null; }
check "harness: the command runs" running "sleep $tag"
kill -KILL "$harness"
wait "$harness" 2>/dev/null
for _ in $(seq 1 300); do
	pgrep -f -x "sleep $tag" >/dev/null || { [ -n "$ward_pid" ] && kill -0 "$ward_pid" 2>/dev/null; } || break
	sleep 0.1
done
check_not "harness killed: no process of the sandbox is left" running "sleep $tag"
check_not "harness killed: ward exited" kill -0 "${ward_pid:-999999999}" 2>/dev/null
check "harness killed: the audit log's exit event says so" \
	grep -rqs '"parent_died":true' "$XDG_STATE_HOME/ward"

tag=$((7000000 + RANDOM))
bash -c '"$1" run --tier 0 -- sh -c "exec sleep $2" 2>/dev/null & wait' _ "$WARD" "$tag" &
harness=$!
for _ in $(seq 1 300); do
	running "sleep $tag" && break
	sleep 0.1
done
ward_pid=$(pgrep -o -f -- "run --tier 0 -- sh -c exec sleep $tag")
kill -KILL "$harness"
wait "$harness" 2>/dev/null
for _ in $(seq 1 300); do
	running "sleep $tag" || { [ -n "$ward_pid" ] && kill -0 "$ward_pid" 2>/dev/null; } || break
	sleep 0.1
done
check_not "tier 0, harness killed: the command is gone" running "sleep $tag"
check_not "tier 0, harness killed: ward exited" kill -0 "${ward_pid:-999999999}" 2>/dev/null

# A threaded harness: the thread that started ward exits, the process lives.
"$PY" - "$WARD" "$T/thread.out" <<'EOF'
import subprocess, sys, threading
procs = []
t = threading.Thread(target=lambda: procs.append(subprocess.Popen(
    [sys.argv[1], "run", "--", "sh", "-c", "sleep 1; echo finished"],
    stdout=open(sys.argv[2], "w"))))
t.start(); t.join()
sys.exit(procs[0].wait())
EOF
check_eq "threaded harness: a thread's exit does not kill the run" "finished" \
	"$(cat "$T/thread.out")"

done_testing
