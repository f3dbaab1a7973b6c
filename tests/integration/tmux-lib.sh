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
