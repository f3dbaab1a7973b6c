#!/usr/bin/env bash
# `make windows-test`: the Windows build's tests under Wine.
#  1. the plan layer's unit tests, cross-compiled (meson test -C build-win,
#     Wine as the cross file's exe_wrapper), in a throwaway WINEPREFIX;
#  2. test-wine.sh (plumbing and fail-closed through ward.exe), as the
#     invoking user and, when that is root, again as the unprivileged user
#     of tests/integration/run-unpriv.sh (Wine runs unprivileged on a
#     developer's machine; CI runs as root).
# Wine that cannot start here is a skip with the reason, not a failure.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build-win}
stage=$(mktemp -d /tmp/ward-winbin.XXXXXX)
export WINEPREFIX=$stage/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
cleanup() {
	wineserver -k >/dev/null 2>&1 || true
	rm -rf "$stage"
}
trap cleanup EXIT
status=0

if ! wineboot -i >"$stage/boot.log" 2>&1; then
	echo "windows-test: SKIP: wine cannot start here: $(tail -1 "$stage/boot.log")"
	exit 0
fi
echo "== plan-layer unit tests under wine"
meson test -C "$build" --suite windows-unit --print-errorlogs || status=1
wineserver -k >/dev/null 2>&1 || true

mkdir -p "$stage/bin"
cp "$build/src/windows/ward.exe" "$build/src/windows/ward-test.exe" \
	"$build/src/windows/ward-setup.exe" "$build/src/windows/ward-redirect.dll" \
	"$build/src/windows/ward-runner.exe" "$build/src/windows/ward-runner-test.exe" \
	"$build/src/windows/ward-helper.exe" "$build/src/windows/ward-helper-test.exe" \
	"$build/tests/windows/win-child.exe" "$build/tests/windows/win-runner-peer.exe" \
	"$build/tests/windows/win-helper-peer.exe" "$stage/bin/"
chmod -R a+rX "$stage"

# Each script is bounded: one that hangs fails, it does not hold CI (a
# script takes 10 to 90 s here, the whole Windows part about 4 minutes).
# Whatever Wine process a script left (its own cleanup ends them, but not
# when it was killed) is ended after it.
limit=300
# shellcheck source=tests/windows/wine-common.sh
. tests/windows/wine-common.sh
bounded() { # COMMAND...
	local rc=0
	timeout -k 10 "$limit" "$@" || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "Bail out! $*: still running after $limit s, stopped"
	fi
	wine_kill_prefix /tmp/ward-wine-
	return "$rc"
}
run() { # SCRIPT: as the invoking user
	WARD_WIN_BIN=$stage/bin bounded bash "tests/windows/$1" || status=1
}
echo "== test-wine.sh as $(id -un)"
run test-wine.sh
echo "== test-wine-net.sh (network walls and ward-setup.exe: the fail-closed paths)"
run test-wine-net.sh
echo "== test-wine-cow.sh (copy-on-write: the redirector's launch sequence, redirect, review, fail-closed)"
run test-wine-cow.sh
echo "== test-wine-proxy.sh (ward.exe's egress proxy; the run's proxy path: plumbing and fail-closed)"
run test-wine-proxy.sh
echo "== test-wine-runner.sh (the command runner, the privileged helper, their pipes: protocol and refusals)"
run test-wine-runner.sh
echo "== test-wine-helper.sh (ward.exe run and cleanup with the privileged helper: plumbing and fail-closed)"
run test-wine-helper.sh
if [ "$(id -u)" -eq 0 ]; then
	echo "== test-wine.sh as the unprivileged user"
	WARD=$stage/bin/ward.exe WARD_HELPERS=$stage/bin \
		bounded bash tests/integration/run-unpriv.sh tests/windows/test-wine.sh || status=1
fi
exit $status
