# Terminals for the integration tests, from tmux (CI has none): each case
# runs a small script in a tmux pane, and the checks look at the pane's
# terminal from the host (its foreground process group, its modes) and at
# files. Sourced after lib.sh, which provides $T, at_exit and skip_all.
# shellcheck shell=bash

PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "python3 not installed (make test-deps)"
command -v tmux >/dev/null || skip_all "tmux not installed (make test-deps)"

# Wait (bounded, not timed: the bound only keeps a broken run from hanging)
# until a file exists.
wait_for() {
	for _ in $(seq 1 300); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
TM=(tmux -S "$T/tmux.sock" -f /dev/null)
at_exit '"${TM[@]}" kill-server >/dev/null 2>&1'
# pane NAME SCRIPT: run SCRIPT in a new 80x24 tmux window, no status line.
pane() {
	if "${TM[@]}" has-session 2>/dev/null; then
		"${TM[@]}" new-window -d -n "$1" "bash $2"
	else
		"${TM[@]}" new-session -d -s w -n "$1" -x 80 -y 24 "bash $2"
		"${TM[@]}" set -g status off
		"${TM[@]}" set -g remain-on-exit off
	fi
}
pane_tty() { "${TM[@]}" display-message -p -t "w:$1" '#{pane_tty}'; }
keys() { "${TM[@]}" send-keys -t "w:$1" "${@:2}" 2>/dev/null; }
pane_fg() { ps -o tpgid= -p "$("${TM[@]}" display-message -p -t "w:$1" '#{pane_pid}')" | tr -d ' '; }

# tty_relay_checks LABEL TTY_RE LAUNCH...: in a pane, LAUNCH (`ward run`
# or `ward exec ID`) runs a script with the pane's terminal on its stdio;
# checks that the command gets a pty of the sandbox's own (its path
# matching TTY_RE) and nothing of the caller's, that the terminal's
# foreground stays LAUNCH's own group, the window size and its changes
# pass, TIOCSTI is refused, ^C reaches the command and its status is
# LAUNCH's, and the terminal's modes come back.
tty_relay_checks() {
	local label=$1 tty_re=$2 tty_path fg_during pid pgid m0 m1
	shift 2
	cat >"$WS/inner.sh" <<'INNER'
tty >tty.out
stty size >size1.out
for f in 0 1 2; do stat -L -c %d "/proc/self/fd/$f"; done >fds.out
# The command may do what it likes with its own terminal.
/usr/bin/python3 -c '
import fcntl, os, termios
fd = os.open("/dev/tty", os.O_RDWR)
t = termios.tcgetattr(fd); t[3] &= ~(termios.ECHO | termios.ICANON)
termios.tcsetattr(fd, termios.TCSANOW, t)
try:
    fcntl.ioctl(fd, termios.TIOCSTI, b"x"); print("sti-ok")
except OSError as e: print("sti-refused")
' >sti.out
trap 'stty size >size2.out' WINCH
trap 'echo INT >int.out; exit 3' INT
touch ready
while :; do sleep 0.1; done
INNER
	cat >"$T/inter.sh" <<OUTER
cd "$WS"; mode0=\$(stty -g)
$* -- sh inner.sh
rc=\$?
echo "\$mode0 \$(stty -g)" >"$T/inter.mode"
echo \$rc >"$T/inter.rc"
OUTER
	rm -f "$WS/ready" "$T/inter.rc"
	pane inter "$T/inter.sh"
	wait_for "$WS/ready"
	tty_path=$(pane_tty inter)
	fg_during=$(pane_fg inter)
	pid=$(pgrep -o -f -- "$* -- sh inner.sh")
	pgid=$(ps -o pgid= -p "$pid" | tr -d ' ')
	check_eq "$label: the real terminal's foreground stays ward's own group" "$pgid" "$fg_during"
	check "$label: the command's terminal is a pty of the sandbox's devpts ($(cat "$WS/tty.out" 2>/dev/null))" \
		grep -qx "$tty_re" "$WS/tty.out"
	check_not "$label: no fd of the command is on the caller's devpts" \
		grep -qx "$(stat -c %d "$tty_path")" "$WS/fds.out"
	check_eq "$label: the window size passes" "24 80" "$(cat "$WS/size1.out")"
	check_eq "$label: TIOCSTI is refused even on its own pty" "sti-refused" "$(cat "$WS/sti.out")"
	"${TM[@]}" resize-window -t w:inter -x 100 -y 40
	wait_for "$WS/size2.out"
	check_eq "$label: a window-size change passes" "40 100" "$(cat "$WS/size2.out" 2>/dev/null)"
	keys inter C-c
	wait_for "$T/inter.rc"
	check_eq "$label: ^C reaches the command" "INT" "$(cat "$WS/int.out" 2>/dev/null)"
	check_eq "$label: ward exits with the command's status" "3" "$(cat "$T/inter.rc")"
	read -r m0 m1 <"$T/inter.mode"
	check_eq "$label: the terminal's modes are restored (the command changed its own)" "$m0" "$m1"
}
