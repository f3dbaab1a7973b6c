#!/usr/bin/env bash
# `ward.exe run` with paths only the privileged helper may change (under
# Program Files): ward.exe starts ward-helper.exe through UAC
# (ShellExecuteExW, verb "runas"), connects to the run's pipe (its server
# must be the process started), journals each grant before asking, reads
# the DACL back itself, and revokes at the end; `ward.exe cleanup` starts
# the helper for a dead run's standing grants. Under Wine: the PLUMBING
# (Wine's ShellExecuteExW "runas" starts the program unelevated and its
# token reads back elevated anyway; Wine keeps no DACL), and every
# fail-closed path, each showing the command's marker absent on the host.
#
# ward-test.exe starts ward-helper-test.exe; WARD_TEST_HELPER_FAULT is the
# helper's fault list (else it takes WARD_TEST_WIN_FAULT, ward-test.exe's).
# Needs WARD_WIN_BIN (ward-test.exe, ward-helper-test.exe, win-child.exe);
# skips when Wine cannot start.
set -u
# shellcheck source=tests/windows/wine-common.sh
. "$(dirname "$0")/wine-common.sh"
wine_setup helper ward-test.exe ward-helper-test.exe win-child.exe

ws=$T/ws
mkdir -p "$ws" "$T/bin" "$T/nohelper"
cp "$bin/ward-test.exe" "$bin/ward-helper-test.exe" "$bin/win-child.exe" "$T/bin/"
cp "$bin/ward-test.exe" "$bin/win-child.exe" "$T/nohelper/"
mkdir -p "$T/prefix/drive_c/Program Files/wardx"
PF='C:\Program Files\wardx'
WS=$(winpath "$ws")
child=$(winpath "$T/bin/win-child.exe")
# W2's plumbing under Wine: profile, ACLs, job and token echoed, the child
# started with ward's own token (Wine has no AppContainer).
BASE=job-echo,profile-echo,acl-echo,spawn-plain
run() { # EXE [ARGS...]: a W2 run reading $PF, the command writes $ws/marker
	local exe=$1
	shift
	rm -f "$ws/marker" "$ws/r.json"
	(cd "$ws" && WARD_TEST_HELPER_LOG="$(winpath "$T/helper.log")" wine "$exe" run --tier W2 --read "$PF" --result "$WS\\r.json" "$@" -- \
		"$child" write "$WS\\marker") >"$T/out" 2>&1
}
step() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("setup_step") or "")' "$ws/r.json" 2>/dev/null; }
# refused DESC STEP TEXT: exit 125 at STEP, TEXT said, the marker absent.
refused() {
	if [ "$rc" -eq 125 ] && [ ! -e "$ws/marker" ] && [ "$(step)" = "$2" ] && grep -q -- "$3" "$T/out"; then
		ok "$1"
	else
		not_ok "$1 (exit $rc, step '$(step)')"
		show "$T/out"
	fi
}

# 1. Plumbing: the helper started by ShellExecuteExW(runas), the grant
# asked for and answered "ok" by it (it reads back with acl-echo), ward's
# own read-back through helper-echo, the command runs, the grant revoked.
WARD_TEST_WIN_FAULT=$BASE,helper-echo run "$T/bin/ward-test.exe"
rc=$?
state=$(echo "$T"/prefix/drive_c/users/*/AppData/Local/ward)
if [ $rc -eq 0 ] && [ -e "$ws/marker" ] && ! ls "$state"/journal-* >/dev/null 2>&1 &&
	grep -q 'the client is gone: 0 standing grant(s) revoked and read back, 0 failed' "$T/helper.log"; then
	ok "a run reading under Program Files: ward-helper.exe started, grant 'ok' and read back, the command ran, the journal gone"
else
	not_ok "helper plumbing in a run (exit $rc)"
	show "$T/out"
	[ -f "$T/helper.log" ] && show "$T/helper.log"
fi

# 2. The real helper's refusal: its own read-back fails (Wine keeps no
# DACL); ward refuses at "helper", the command never ran.
rm -f "$T/helper.log"
WARD_TEST_HELPER_FAULT=job-echo WARD_TEST_WIN_FAULT=$BASE,helper-echo run "$T/bin/ward-test.exe"
rc=$?
refused "the helper refusing the grant: exit 125 at helper, the command never ran" helper \
	"ward-helper.exe did not grant .* the helper refused: the allow ACE"
# 3. The helper says "ok" and the DACL does not read back in ward.exe
# (without helper-echo, ward reads Wine's real, unchanged DACL).
WARD_TEST_WIN_FAULT=$BASE run "$T/bin/ward-test.exe"
rc=$?
refused "a grant the helper answered 'ok' that does not read back: exit 125 at helper-readback" \
	helper-readback "is not what the helper reported"
# 4. The UAC prompt declined (ERROR_CANCELLED, injected: Wine never asks).
WARD_TEST_WIN_FAULT=$BASE,helper-echo,helper-declined run "$T/bin/ward-test.exe"
rc=$?
refused "the elevation declined: exit 125 at helper, naming the paths" helper \
	"the elevation of ward-helper.exe was declined"
# 5. No helper next to ward.exe.
WARD_TEST_WIN_FAULT=$BASE,helper-echo run "$T/nohelper/ward-test.exe"
rc=$?
refused "no ward-helper.exe next to ward.exe: exit 125 at helper" helper "ward-helper-test.exe is not there"
# 6. The helper's pipe name taken by another process first: the helper
# cannot create it, ward finds a server that is not the helper and never
# talks to it.
WARD_TEST_WIN_FAULT=$BASE,helper-echo,helper-squat run "$T/bin/ward-test.exe"
rc=$?
refused "a squatted helper pipe: exit 125 at helper, its server is not the helper started" helper \
	"the pipe's server is process"
# Nothing a refused run journaled is left.
if ! ls "$state"/journal-* >/dev/null 2>&1; then
	ok "no journal left by the refused runs"
else
	not_ok "a refused run left a journal"
	ls "$state" | sed 's/^/# /'
fi

# 7. A run killed together with its helper left a grant standing (seeded
# with WARD_TEST_ACL_SEED: Wine keeps no DACL) and its journal. The next
# run, unelevated, cannot take it back: refused, naming `ward.exe
# cleanup`, the journal kept. `ward.exe cleanup` starts the helper for
# the revocation only, reads it back, and removes the journal.
DEAD=S-1-15-2-9-9-9-9-9-9-9
printf 'ward-windows-journal 1\nsids\t%s\nhelper\t%s\t00000000000000dd %s\n' "$DEAD" "$PF" "$DEAD" \
	>"$state/journal-00000000000000dd"
export WARD_TEST_ACL_SEED="$PF|D:(A;OICI;0x120089;;;$DEAD)(A;OICI;FA;;;SY)"
WARD_TEST_WIN_FAULT=$BASE,helper-echo run "$T/bin/ward-test.exe"
rc=$?
if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] && [ -f "$state/journal-00000000000000dd" ] &&
	grep -q 'run `ward.exe cleanup`' "$T/out"; then
	ok "a dead run's standing helper grant: the next run refuses, names ward.exe cleanup, keeps the journal"
else
	not_ok "a dead run's standing grant at the next run (exit $rc)"
	show "$T/out"
fi
rm -f "$T/helper.log"
(cd "$ws" && WARD_TEST_HELPER_FAULT=acl-echo WARD_TEST_WIN_FAULT=helper-echo \
	WARD_TEST_HELPER_LOG="$(winpath "$T/helper.log")" wine "$T/bin/ward-test.exe" cleanup) >"$T/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ ! -e "$state/journal-00000000000000dd" ] &&
	grep -q "dead runs' undo journals: none left" "$T/out" && [ -f "$T/helper.log" ]; then
	ok "ward.exe cleanup: the helper started for the revocation, read back, the journal removed"
else
	not_ok "ward.exe cleanup of a dead run's helper grant (exit $rc)"
	show "$T/out"
	[ -f "$T/helper.log" ] && show "$T/helper.log"
fi
unset WARD_TEST_ACL_SEED
# The usual end of a killed run: the helper revoked when its client went;
# the next run's recovery reads that back and needs no helper.
printf 'ward-windows-journal 1\nsids\t%s\nhelper\t%s\t00000000000000dd %s\n' "$DEAD" "$PF" "$DEAD" \
	>"$state/journal-00000000000000dd"
WARD_TEST_WIN_FAULT=$BASE,helper-echo run "$T/bin/ward-test.exe"
rc=$?
if [ $rc -eq 0 ] && [ -e "$ws/marker" ] && [ ! -e "$state/journal-00000000000000dd" ]; then
	ok "a dead run's grant already revoked: the next run's recovery removes its journal and runs"
else
	not_ok "recovery of an already revoked helper grant (exit $rc)"
	show "$T/out"
fi
# 8. A malformed helper entry is refused, never guessed: kept.
printf 'ward-windows-journal 1\nhelper\t%s\t00000000000000dd S-1-1-0\n' "$PF" >"$state/journal-00000000000000ee"
(cd "$ws" && WARD_TEST_WIN_FAULT=helper-echo wine "$T/bin/ward-test.exe" cleanup) >"$T/out" 2>&1
rc=$?
if [ $rc -eq 125 ] && [ -f "$state/journal-00000000000000ee" ]; then
	ok "ward.exe cleanup: a helper entry naming Everyone is refused, the journal kept (exit 125)"
else
	not_ok "cleanup of a malformed helper entry (exit $rc)"
	show "$T/out"
fi
rm -f "$state/journal-00000000000000ee"

echo "1..$n"
[ "$fails" -eq 0 ]
