#!/usr/bin/env bash
# Helpers for the integration tests (TAP). Source it first thing:
#   . "$(dirname "$0")/lib.sh"
# It makes a private temp dir $T with a fake $HOME ($T/home), XDG dirs, a
# workspace ($T/ws, the cwd) and removes it all on exit. Checks are
# confirmed on the host side: look at files, listeners and processes after
# the sandboxed command ran, not only at what it printed.
set -u

: "${WARD:?WARD must point at the ward binary}"
# This directory (the helper files beside lib.sh), before the cd below.
_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T=$(mktemp -d /tmp/ward-it.XXXXXX)
chmod 755 "$T"
export HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" XDG_STATE_HOME="$T/home/.local/state"
# The PATH a harness gives (as run-unpriv.sh does for the unprivileged
# runs): entries of the caller's own (a pyenv shim dir under /root) would
# make every `ward run` report them on stderr (run-hints.c).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p "$HOME" "$T/ws"
cd "$T/ws" || exit 1
# shellcheck disable=SC2034 # used by the scripts that source this file
WS="$T/ws"

_tap_n=0
_tap_fail=0
_cleanups=()

at_exit() { _cleanups+=("$1"); }
_lib_exit() {
	local c
	for c in "${_cleanups[@]}"; do eval "$c" || true; done
	# overlayfs leaves a mode-000 work/work directory that an unprivileged
	# user cannot remove without making it accessible first.
	rm -rf "$T" 2>/dev/null || { chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"; }
}
trap _lib_exit EXIT

# A process's identity beyond its pid: pids are reused (pid_max is 32768
# here), so a cleanup that kills a remembered pid later could hit another
# test's process. proc_id PID prints "PID:STARTTIME"; kill_id SIG ID
# signals it only while that same process still holds the pid.
_proc_start() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) && s=${s##*) } && echo "$s" | cut -d' ' -f20; }
proc_id() { local st; st=$(_proc_start "$1") && [ -n "$st" ] && echo "$1:$st"; }
kill_id() {
	local pid=${2%%:*} start=${2#*:} now
	[ -n "$pid" ] && [ "$pid" != "$2" ] || return 1
	now=$(_proc_start "$pid") || return 1
	[ "$now" = "$start" ] && kill "-$1" "$pid" 2>/dev/null
}
ok() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
not_ok() { _tap_n=$((_tap_n + 1)); _tap_fail=$((_tap_fail + 1)); echo "not ok $_tap_n - $*"; }
ok_skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $*"; }
diag() { echo "# $*"; }

# check DESC CMD...: ok when CMD succeeds. CMD's stdout goes to stderr:
# only TAP lines may reach stdout (a bare `pgrep` pid is "Unknown TAP output").
check() {
	local desc=$1
	shift
	if "$@" >&2; then ok "$desc"; else not_ok "$desc"; fi
}
# check_not DESC CMD...: ok when CMD fails.
check_not() {
	local desc=$1
	shift
	if "$@" >&2; then not_ok "$desc"; else ok "$desc"; fi
}
# check_todo DESC WHY CMD...: a known-open check. "not ok ... # TODO WHY"
# while CMD fails (meson: expected failure, listed by tests/known-open.py
# after `make test`), "ok ... # TODO" once it passes (meson reports an
# unexpected pass: make it a plain check then).
check_todo() {
	local desc=$1 why=$2
	shift 2
	_tap_n=$((_tap_n + 1))
	if "$@" >&2; then
		echo "ok $_tap_n - $desc # TODO fixed? make it a plain check ($why)"
	else
		echo "not ok $_tap_n - $desc # TODO $why"
	fi
}
# check_eq DESC EXPECTED ACTUAL
# (A multi-line value is shown on one line, newlines as \n: a TAP line
# must not break.)
check_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (expected '${2//$'\n'/\\n}', got '${3//$'\n'/\\n}')"; fi
}
assert_file_has_content() { grep -q -e "$2" "$1"; }

skip_all() {
	if [ -n "${WARD_MUST_WORK:-}" ]; then
		echo "Bail out! $* (WARD_MUST_WORK is set)"
		exit 1
	fi
	echo "1..0 # SKIP $*"
	exit 0
}

# Skip (or fail under WARD_MUST_WORK) when this machine cannot run T2.
require_t2() {
	local out
	if ! out=$("$WARD" run -- /bin/true 2>&1); then
		skip_all "ward run does not work here: $out"
	fi
}

# The status of a command, without set -e getting in the way.
# wait_until CMD...: until CMD succeeds, at most 300 tries 0.1 s apart
# (bounded, not timed: the bound only keeps a broken run from hanging).
wait_until() {
	for _ in $(seq 1 300); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

status_of() {
	"$@" >/dev/null 2>&1
	echo $?
}

done_testing() {
	echo "1..$_tap_n"
	[ "$_tap_fail" -eq 0 ]
}

# start_http_servers SAN [--sni]: a self-signed certificate for SAN (e.g.
# "DNS:secure.test") in $T/cert.pem and $T/key.pem, and http-servers.py's
# plain, TLS and echo servers on the host's loopback, stopped at exit.
# Sets HP, SP and EP to their ports; skips the test where they cannot
# start.
start_http_servers() {
	local san=$1
	shift
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=secure.test \
		-addext "subjectAltName=$san" -keyout "$T/key.pem" -out "$T/cert.pem" >/dev/null 2>&1 ||
		skip_all "openssl cannot make a certificate"
	python3 "$_lib_dir/http-servers.py" "$T" "$@" &
	at_exit "kill_id TERM $(proc_id "$!")"
	for _ in $(seq 100); do [ -e "$T/ports" ] && break; sleep 0.1; done
	[ -e "$T/ports" ] || skip_all "test servers did not start"
	# shellcheck disable=SC2034 # used by the scripts that call this
	read -r HP SP EP <"$T/ports"
	touch "$T/requests.log"
}
