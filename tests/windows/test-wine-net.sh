#!/usr/bin/env bash
# The network walls and ward-setup.exe under Wine: what Wine can show is
# the fail-closed path (and DPAPI, which Wine implements). Wine 8's fwpuclnt.dll answers FwpmEngineOpen0 with
# RPC_S_CANNOT_SUPPORT (1764) and has FwpmFilterGetByKey0 as an
# unimplemented stub; it has no firewallapi.dll (no loopback exemption).
# So: net-check must report both unavailable and exit 125, and
# `ward.exe cleanup` must keep every journal entry it cannot prove removed
# (the journal on the host side is unchanged), refuse a malformed journal
# without touching it, and succeed when there is nothing to do.
#
# Needs WARD_WIN_BIN (a directory with ward.exe); skips when Wine cannot start.
set -u
# shellcheck source=tests/windows/wine-common.sh
. "$(dirname "$0")/wine-common.sh"
wine_setup net ward.exe
ward() { wine "$bin/ward.exe" "$@"; }

echo "1..19"

ward net-check >"$T/out" 2>&1
rc=$?
show "$T/out"
if [ $rc -eq 125 ] && grep -q '^wfp: unavailable: .*FwpmEngineOpen0: error 1764' "$T/out"; then
	ok "net-check: WFP refused (Wine's FwpmEngineOpen0 returns 1764), exit 125"
else
	not_ok "net-check: WFP not refused as expected (exit $rc)"
fi
if grep -q '^loopback exemption: unavailable: .*NetworkIsolationGetAppContainerConfig' "$T/out" &&
	grep -q '^network walls: unavailable' "$T/out"; then
	ok "net-check: the loopback exemption API is missing: refused"
else
	not_ok "net-check: the loopback exemption was not refused"
fi

state=$(echo "$T"/prefix/drive_c/users/*/AppData/Local/ward)
if [ ! -e "$state/network.journal" ]; then
	ok "net-check leaves no network journal behind"
else
	not_ok "net-check left a network journal"
	show "$state/network.journal"
fi

ward cleanup >"$T/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q 'none left' "$T/out"; then
	ok "cleanup with nothing tracked: exit 0"
else
	not_ok "cleanup with nothing tracked (exit $rc)"
	show "$T/out"
fi

# A journal as a crashed run (or ward-setup.exe) would leave it.
mkdir -p "$state"
printf 'ward-windows-net 1\nloopback\tS-1-15-2-1-2-3-4-5-6-7\nprovider\t{98d81c5c-73d9-86b8-9483-6b55c0230de7}\nsublayer\t{55256eba-7245-8de3-9e7a-586b5d3bb2c7}\nfilter\t{0a3c2a8b-4c1d-8e2f-9a00-112233445566}\tS-1-5-21-1-2-3-1001\tconnect-v4\n' >"$state/network.journal"
cp "$state/network.journal" "$T/journal.before"
ward cleanup >"$T/out" 2>&1
rc=$?
show "$T/out"
if [ $rc -eq 125 ] && grep -q '4 left' "$T/out" && cmp -s "$state/network.journal" "$T/journal.before"; then
	ok "cleanup that cannot prove a removal keeps every entry (exit 125, journal unchanged)"
else
	not_ok "cleanup dropped entries it could not remove (exit $rc)"
fi
if grep -q 'loopback.*NetworkIsolationGetAppContainerConfig\|loopback.*not available' "$T/out"; then
	ok "cleanup names the first entry it could not remove and why"
else
	not_ok "cleanup's report does not name the failing entry"
fi

printf 'ward-windows-net 1\nremove\teverything\n' >"$state/network.journal"
cp "$state/network.journal" "$T/journal.before"
ward cleanup >"$T/out" 2>&1
rc=$?
if [ $rc -eq 125 ] && grep -q 'malformed' "$T/out" && cmp -s "$state/network.journal" "$T/journal.before"; then
	ok "a malformed journal is refused and left as it was"
else
	not_ok "a malformed journal (exit $rc)"
	show "$T/out"
fi

# The walls in `ward.exe run` (W2, network none). Wine has no filtering
# engine: the plan's trial fails, so the run must say the wall is not held
# (degraded, the network row partly held) and --strict must refuse before
# anything runs; never a run that looks walled.
ws=$T/ws
mkdir -p "$ws"
WS=$(winpath "$ws")
wardt() { WARD_TEST_WIN_FAULT=$FAULT wine "$bin/ward-test.exe" "$@"; }
run_marker() { # CMD ARGS...: the command (cmd.exe) would write a marker
	rm -f "$ws/marker"
	(cd "$ws" && "$@" -- cmd /c "echo x> $WS\\marker") >"$T/out" 2>&1
}
run_marker ward run --strict
rc=$?
if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] && grep -q 'Refusing to run with --strict: degraded protections .*network wall: .*FwpmEngineOpen0: error 1764' "$T/out"; then
	ok "run --strict (W2, network none): the missing WFP walls refuse before anything runs"
else
	not_ok "run --strict did not refuse on the missing walls (exit $rc)"
	show "$T/out"
fi
(cd "$ws" && ward run --dry-run -- cmd /c exit 0) >"$T/out" 2>&1
if grep -q '^degraded network wall: the WFP filters on the run.s package SID cannot be put up' "$T/out" &&
	! grep -q '^wfp-walls' "$T/out"; then
	ok "run --dry-run says the wall is not held, and why"
else
	not_ok "run --dry-run does not report the missing wall"
	show "$T/out"
fi
rm -f "$ws/r.json"
run_marker ward run --result "$WS\\r.json"
if python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if "network" in j["partly_held"] and any(d.startswith("network wall:") for d in j["degraded"]) else 1)' "$ws/r.json" 2>/dev/null; then
	ok "the result says network partly held and the wall degraded (W2 itself is then refused by Wine's userenv)"
else
	not_ok "the result does not report the missing wall"
	[ -f "$ws/r.json" ] && show "$ws/r.json"
fi
# A WFP engine that reports every add and the commit done, and reads
# nothing back (Wine's habit, injected in ward-test.exe): refused at
# network-wall, before the AppContainer exists.
FAULT=job-echo,wfp-lie run_marker wardt run
rc=$?
if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] && grep -q '^ward: network-wall: .*FwpmFilterGetByKey0 .*the filter added is not there' "$T/out" &&
	! grep -q appcontainer "$T/out"; then
	ok "walls that do not read back refuse the run at network-wall (exit 125), before anything else"
else
	not_ok "a wall that does not read back was not refused (exit $rc)"
	show "$T/out"
fi
# An engine that holds what it is given: the walls pass, the plan says so,
# and the run goes on to its next step (W2's profile, which Wine lacks).
(cd "$ws" && FAULT=job-echo,wfp-echo wardt run --dry-run -- cmd /c exit 0) >"$T/out" 2>&1
if grep -q '^wfp-walls 10 filters on S-1-15-2-' "$T/out" && ! grep -q '^degraded network wall' "$T/out"; then
	ok "with an engine, the dry run plans 10 filters (connect, accept, tcp, udp, raw; v4 and v6) on the run's package SID, nothing degraded"
else
	not_ok "the dry run with an engine"
	show "$T/out"
fi
FAULT=job-echo,wfp-echo run_marker wardt run
rc=$?
if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] && grep -q '^ward: appcontainer:' "$T/out" && ! grep -q network-wall "$T/out"; then
	ok "walls up and read back, the run goes on to the AppContainer step (refused there by Wine)"
else
	not_ok "the run with walls held (exit $rc)"
	show "$T/out"
fi

# ward-setup.exe (the sandbox-user tier's elevated setup). Wine's
# NetUserAdd returns NERR_Success and creates nothing: the read-back must
# refuse, and --uninstall must undo what was journaled before that.
setup() { wine "$bin/ward-setup.exe" "$@"; }
rm -f "$state/network.journal"
setup probe >"$T/out" 2>&1
show "$T/out"
if grep -q '^dpapi: ok' "$T/out"; then
	ok "ward-setup probe: a credential record round-trips through DPAPI, not stored in clear"
else
	not_ok "ward-setup probe: DPAPI round trip"
fi
# The firewall variant of the walls: Wine's hnetcfg answers INetFwRules::Item
# with E_NOTIMPL; setup's walls step refuses there (unit test-win-setup:
# test_setup_firewall_fail_closed), the probe says why.
if grep -q '^firewall: unavailable: .*HRESULT 0x' "$T/out"; then
	ok "ward-setup probe: INetFwPolicy2 rules unreadable under Wine, reported unavailable"
else
	not_ok "ward-setup probe: firewall line"
fi
setup install --no-read-acls >"$T/out" 2>&1
rc=$?
show "$T/out"
if [ $rc -eq 125 ] && grep -q 'user WardSandboxOffline: reported created, but the account cannot be read back' "$T/out"; then
	ok "ward-setup install: Wine's NetUserAdd success without a user is refused (exit 125)"
else
	not_ok "ward-setup install was not refused at the user read-back (exit $rc)"
fi
if grep -q "^user	WardSandboxOffline\$" "$state/setup.journal" 2>/dev/null &&
	! grep -q '^credentials\|ready' "$T/out" && [ ! -e "$state/sandbox-users.dpapi" ]; then
	ok "the user was journaled before the attempt; no credential record was written"
else
	not_ok "the setup journal or the credential record is not as expected"
fi
setup probe >"$T/out" 2>&1
if grep -q '^offline user: absent' "$T/out"; then
	ok "no sandbox user exists afterwards (nothing claimed)"
else
	not_ok "a sandbox user appears to exist under Wine"
fi
setup --uninstall >"$T/out" 2>&1
rc=$?
show "$T/out"
if [ $rc -eq 0 ] && [ ! -e "$state/setup.journal" ] && [ ! -e "$state/sandbox-sid" ]; then
	ok "ward-setup --uninstall undoes the journal (synthetic SID file gone, journal gone)"
else
	not_ok "ward-setup --uninstall (exit $rc)"
fi

[ "$fails" -eq 0 ]
