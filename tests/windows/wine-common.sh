# Sourced by the Wine test scripts (test-wine*.sh): TAP helpers and a
# throwaway Wine prefix. After it: $bin (the .exe directory), ok, not_ok,
# check, skip_all, strip_cr, show, winpath; wine_setup NAME FILE... skips
# (TAP "1..0 # SKIP") unless each FILE is in $bin and Wine starts in a
# fresh prefix under $T (/tmp/ward-wine-NAME.*, with its own watched
# wineserver: wine_server_start; removed on exit by wine_cleanup, which a
# script with more to stop calls from its own trap); wine_kill_prefix;
# upstream_start LOG / upstream_stop: the proxy tests' upstream server.
# shellcheck shell=bash
bin=${WARD_WIN_BIN:-${WARD_HELPERS:-}}
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
check() {
	local d=$1
	shift
	if "$@" >&2; then ok "$d"; else not_ok "$d"; fi
}
skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}
strip_cr() { tr -d '\r'; }
show() { strip_cr <"$1" | sed 's/^/# /'; }
# A Unix path as Wine sees it (Z: is Wine's /).
winpath() { printf 'Z:%s' "$(printf '%s' "$1" | tr / '\\')"; }

wine_setup() {
	local name=$1 f
	shift
	[ -n "$bin" ] || skip_all "no WARD_WIN_BIN (make windows)"
	for f in "$@"; do
		[ -f "$bin/$f" ] || skip_all "no $f (make windows)"
	done
	command -v wine >/dev/null || skip_all "wine is not installed (make windows-test installs wine64)"
	T=$(mktemp -d "/tmp/ward-wine-$name.XXXXXX")
	# Wine decodes the Unix argv with the Unix locale: UTF-8, whoever runs us.
	export LANG=C.UTF-8 WINEPREFIX=$T/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
	trap wine_cleanup EXIT
	wine_server_start || skip_all "the wineserver does not start here: $(tail -1 "$T/wineserver.log")"
	if ! wineboot -i >"$T/boot.log" 2>&1 || ! wine cmd /c exit 0 >/dev/null 2>&1; then
		if [ -e "$T/wineserver.died" ]; then
			echo "Bail out! the wineserver died while the prefix booted"
			exit 1
		fi
		skip_all "wine cannot start here: $(tail -1 "$T/boot.log")"
	fi
}

# One wineserver for the whole script, started here rather than by the first
# wine command: persistent, in the foreground of a watchdog subshell, its
# messages in $T/wineserver.log. If it dies while the script runs, Wine's
# clients would wait for it forever (seen here: Wine 8.0's wineserver
# aborting on an assertion in server/sock.c, and the script hanging until
# CI's limit); the watchdog says so in the TAP stream and ends every Wine
# process of the prefix, so each wine command fails at once instead, and
# the script fails at its end (wine_cleanup) whatever its checks said.
wine_server_start() {
	local pid
	mkdir -p "$WINEPREFIX"
	: >"$T/wineserver.log"
	(
		wineserver -f -p >>"$T/wineserver.log" 2>&1
		rc=$?
		[ -e "$T/wineserver.stopping" ] && exit 0
		: >"$T/wineserver.died"
		echo "# the wineserver died (exit $rc): $(tail -1 "$T/wineserver.log"); ending the prefix's Wine processes"
		wine_kill_prefix "$WINEPREFIX"
	) &
	wine_watchdog=$!
	# Up when its socket is: in its working directory, wherever that is
	# (Debian's Wine picks /run/user/UID/wine or a random one under /tmp).
	for _ in $(seq 200); do
		pid=$(pgrep -P "$wine_watchdog" wineserver) && [ -S "/proc/$pid/cwd/socket" ] && return 0
		kill -0 "$wine_watchdog" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
# wine_kill_prefix PREFIX: every Wine process (wine64, wineserver64) whose
# WINEPREFIX starts with PREFIX (a script: its own; run-wine-tests.sh: all
# of the scripts', after each).
wine_kill_prefix() {
	local p exe v
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		case $exe in /usr/lib/wine/* | */wine64* | */wineserver*) ;; *) continue ;; esac
		v=$(tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -m1 '^WINEPREFIX=') || continue
		case ${v#WINEPREFIX=} in "$1"*) kill -9 "${p#/proc/}" 2>/dev/null || true ;; esac
	done
}
wine_cleanup() {
	local died=false
	upstream_stop
	if [ -n "${wine_watchdog:-}" ]; then
		: >"$T/wineserver.stopping"
		timeout 20 wineserver -k >/dev/null 2>&1
		wine_kill_prefix "$WINEPREFIX"
		wait "$wine_watchdog" 2>/dev/null
		wine_watchdog=
		[ -e "$T/wineserver.died" ] && died=true
	fi
	rm -rf "$T"
	if $died; then
		echo "# the wineserver died during this script: it fails"
		exit 1
	fi
}

# The loopback upstream (upstream-server.py): the request line of every
# connection it gets goes to LOG (emptied first); its port in $SP. It runs
# until upstream_stop (wine_cleanup stops it too).
upstream_start() {
	: >"$1"
	python3 "$(dirname "$0")/upstream-server.py" "$1" >"$T/upstream.port" &
	upstream_pid=$!
	for _ in $(seq 50); do [ -s "$T/upstream.port" ] && break; sleep 0.1; done
	# shellcheck disable=SC2034 # the calling script's
	SP=$(cat "$T/upstream.port")
}
upstream_stop() {
	[ -n "${upstream_pid:-}" ] || return 0
	kill "$upstream_pid" 2>/dev/null
	wait "$upstream_pid" 2>/dev/null
	upstream_pid=
}
