# Sourced by the Wine test scripts (test-wine*.sh): TAP helpers and a
# throwaway Wine prefix. After it: $bin (the .exe directory), ok, not_ok,
# check, skip_all, strip_cr, show, winpath; wine_setup NAME FILE... skips
# (TAP "1..0 # SKIP") unless each FILE is in $bin and Wine starts in a
# fresh prefix under $T (/tmp/ward-wine-NAME.*, removed on exit by
# wine_cleanup, which a script with more to stop calls from its own trap);
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
	if ! wineboot -i >"$T/boot.log" 2>&1 || ! wine cmd /c exit 0 >/dev/null 2>&1; then
		skip_all "wine cannot start here: $(tail -1 "$T/boot.log")"
	fi
}
wine_cleanup() {
	upstream_stop
	wineserver -k >/dev/null 2>&1
	rm -rf "$T"
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
