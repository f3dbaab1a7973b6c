#!/usr/bin/env bash
# ward-runner.exe (the sandbox-user tier's command runner), ward-helper.exe
# (the privileged helper) and ward.exe's side of their pipes, under Wine. Wine has no second user to log on as and
# hands out the unrestricted token whatever was asked: so the runner is
# started by win-runner-peer.exe with plain CreateProcessW (the same
# win32_runner_run() ward.exe uses, minus CreateProcessWithLogonW), and
# what is shown is the protocol and that every hostile or broken step is
# REFUSED (exit 125, the command never ran: its marker file is absent on
# the host side). Nothing here claims isolation.
#
# Needs WARD_WIN_BIN (ward-runner.exe, ward-runner-test.exe,
# win-runner-peer.exe, ward-helper.exe, ward-helper-test.exe,
# win-helper-peer.exe, win-child.exe); skips when Wine cannot start.
set -u
# shellcheck source=tests/windows/wine-common.sh
. "$(dirname "$0")/wine-common.sh"
wine_setup runner ward.exe ward-test.exe ward-runner.exe ward-runner-test.exe win-runner-peer.exe \
	ward-helper.exe ward-helper-test.exe win-helper-peer.exe win-child.exe

SYN=S-1-15-3-1024-1111-2222-3333-4444-5555-6666-7777-8888
RUN=00000000000000aa
ws=$T/ws state=$T/state
mkdir -p "$ws" "$state" "$T/bin"
cp "$bin/ward-runner.exe" "$bin/ward-runner-test.exe" "$bin/win-runner-peer.exe" \
	"$bin/ward-helper.exe" "$bin/ward-helper-test.exe" "$bin/win-helper-peer.exe" "$T/bin/"
cp "$bin/win-child.exe" "$ws/"
printf '%s\n' "$SYN" >"$state/sandbox-sid"
WS=$(winpath "$ws")
STATE=$(winpath "$state")
# request FILE [SID] [APP] [CMDLINE]: the runner's request format
# (win-runner-proto.h); the command writes the marker, then exits 7.
request() {
	printf 'ward-runner 1\nrun %s\nsid %s\napp %s\ncwd %s\ncmdline %s\nenv SYSTEMROOT=C:\\windows\nend\n' \
		"$RUN" "${2:-$SYN}" "${3:-$WS\\win-child.exe}" "$WS" \
		"${4:-win-child.exe write $WS\\marker}" >"$1"
}
# peer RUNNER REQUEST [OPTION]...: ward's side, output in $T/out.
peer() {
	local runner=$1 req=$2
	shift 2
	rm -f "$ws/marker"
	(cd "$T" && wine "$T/bin/win-runner-peer.exe" "$(winpath "$T/bin/$runner")" "$STATE" "$RUN" \
		"$(winpath "$req")" "$@") >"$T/out" 2>&1
}
# refused DESC EXPECTED RUNNER REQUEST [OPTION]...: exit 125, the command
# never ran, EXPECTED in the output.
refused() {
	local d=$1 want=$2 rc
	shift 2
	FAULT=${FAULT:-token-echo}
	WARD_TEST_WIN_FAULT=$FAULT peer "$@"
	rc=$?
	if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] && grep -q -- "$want" "$T/out"; then
		ok "$d"
	else
		not_ok "$d (exit $rc)"
		show "$T/out"
	fi
}

echo "1..47"

request "$T/good"
# Wine reports every token elevated. The real runner refuses to run
# elevated (the sandbox user is a standard user), before it connects.
WARD_TEST_WIN_FAULT='' peer ward-runner.exe "$T/good"
rc=$?
if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] && grep -q "the runner's token is elevated" "$T/out" &&
	grep -q "the runner ended before it connected" "$T/out"; then
	ok "ward-runner.exe: an elevated runner refuses before it connects; ward refuses the run"
else
	not_ok "ward-runner.exe elevated under Wine was not refused (exit $rc)"
	show "$T/out"
fi
# The test build, told to go on elevated (WARD_TEST_RUNNER_ELEVATED, set
# for every run below): the token it made reads back unrestricted (Wine
# ignores restricted tokens): refused, the command never resumed.
export WARD_TEST_RUNNER_ELEVATED=1
WARD_TEST_WIN_FAULT='' peer ward-runner-test.exe "$T/good"
rc=$?
if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] &&
	grep -q "the runner refused: the command's token read back: " "$T/out"; then
	ok "runner: Wine's unrestricted token is refused at the read-back, the command never ran"
else
	not_ok "runner under Wine was not refused at the token read-back (exit $rc)"
	show "$T/out"
fi

# Plumbing, past the token check (ward-runner-test.exe, token-echo): the
# request over the pipe, the command runs in the requested directory with
# the requested environment, "started" then "exit 7", the exit code relayed.
request "$T/env" "" "" "win-child.exe env $WS\\env.out"
WARD_LEAK_CHECK=leaked WARD_TEST_WIN_FAULT=token-echo peer ward-runner-test.exe "$T/env"
rc=$?
# Wine adds its own WINE* variables to every process; ward's (the peer's
# and the runner's) environment must not reach the command.
if [ $rc -eq 0 ] && grep -q 'peer: exit 0' "$T/out" && strip_cr <"$ws/env.out" | grep -qix 'SYSTEMROOT=C:\\windows' &&
	! grep -q WARD_LEAK_CHECK "$ws/env.out"; then
	ok "plumbing: the command gets the request's environment, not the runner's; exit relayed"
else
	not_ok "plumbing: environment (exit $rc)"
	show "$T/out"
	[ -f "$ws/env.out" ] && show "$ws/env.out"
fi
request "$T/exit7" "" "" "win-child.exe exit 7"
WARD_TEST_WIN_FAULT=token-echo peer ward-runner-test.exe "$T/exit7"
rc=$?
if [ $rc -eq 7 ] && grep -q 'peer: exit 7' "$T/out"; then
	ok "plumbing: the command's exit code (7) comes back over the pipe and as the runner's"
else
	not_ok "plumbing: exit code (exit $rc)"
	show "$T/out"
fi

# Hostile or malformed requests: the runner refuses before any token.
request "$T/badsid" S-1-15-3-1024-9-9-9-9-9-9-9-9
refused "a synthetic SID that is not the recorded one is refused" \
	"is not the synthetic SID ward-setup.exe recorded" ward-runner-test.exe "$T/badsid"
request "$T/everyone" S-1-1-0
refused "a SID that is not synthetic (Everyone) is refused" \
	"malformed request: line 3" ward-runner-test.exe "$T/everyone"
request "$T/understate" "" "$STATE\\win-child.exe"
cp "$ws/win-child.exe" "$state/"
refused "a program under ward's state dir is refused" \
	"the program or directory is under" ward-runner-test.exe "$T/understate"
printf 'hello\n' >"$T/junk"
refused "a request that is not the format is refused" \
	"malformed request: not a ward-runner 1 request" ward-runner-test.exe "$T/junk"
{ cat "$T/good"; printf 'env X=1\n'; } >"$T/trailing"
refused "anything after 'end' is refused" "expected 'end' as the last line" \
	ward-runner-test.exe "$T/trailing"
head -c 70000 /dev/zero | tr '\0' a >"$T/big"
refused "a request longer than 64 KiB is refused" "request longer than 65536 bytes" \
	ward-runner-test.exe "$T/big"

# The wrong peer: each side checks the other.
refused "ward: a client on the pipe that is not the runner it started is refused" \
	"the pipe's client is process .*, not the expected process" \
	ward-runner-test.exe "$T/good" --decoy "$(winpath "$ws/win-child.exe")"
refused "ward: a runner that runs as another user than the sandbox user is refused" \
	"the runner runs as .*, not as S-1-5-21-1-2-3-1001" \
	ward-runner-test.exe "$T/good" --expect-user S-1-5-21-1-2-3-1001
refused "ward: a pipe name already taken (a squatter) refuses the run (FIRST_PIPE_INSTANCE)" \
	"CreateNamedPipeW (FILE_FLAG_FIRST_PIPE_INSTANCE)" ward-runner-test.exe "$T/good" --squat
refused "runner: a pipe server that is not the process named on its command line gets no word and a refusal" \
	"the runner closed the pipe before .* (it exited 125)" ward-runner-test.exe "$T/good" --server-pid 4
if grep -q "the pipe's server is process .*, not 4" "$T/out"; then
	ok "runner: its refusal names the server it found and the one it was told"
else
	not_ok "runner: the wrong-server refusal does not say why"
fi

# Started by hand, without ward's arguments: refused, nothing read.
(cd "$T" && wine "$T/bin/ward-runner.exe" --pipe 'Z:\x' --server-pid 1 --state 'C:\x') >"$T/out" 2>&1
rc=$?
if [ $rc -eq 125 ] && grep -q usage "$T/out"; then
	ok "ward-runner.exe without a run pipe's name refuses (exit 125)"
else
	not_ok "ward-runner.exe with bad arguments (exit $rc)"
	show "$T/out"
fi

# The privileged helper (ward-helper.exe), through win-helper-peer.exe
# (ward's side: connects, checks the server is the helper it started).
# What the run may ask is on the helper's command line: run $HRUN, the
# package SID $PKG, read-exec on $PF, read on $PD.
HRUN=00000000000000bb
PKG=S-1-15-2-1-2-3-4-5-6-7
mkdir -p "$T/prefix/drive_c/ProgramData/ward-pf" "$T/prefix/drive_c/ProgramData/ward-pd"
PF='C:\ProgramData\ward-pf'
PD='C:\ProgramData\ward-pd'
hreq() { # FILE OP PATH [SID] [RUN]
	printf 'ward-helper 1\nop %s\nrun %s\nsid %s\npath %s\nend\n' "$2" "${5:-$HRUN}" "${4:-$PKG}" "$3" >"$1"
}
hpeer() { # HELPER REQUEST-FILE...: replies in $T/out
	local helper=$1
	shift
	local reqs=()
	for f in "$@"; do reqs+=("$(winpath "$f")"); done
	(cd "$T" && wine "$T/bin/win-helper-peer.exe" "$(winpath "$T/bin/$helper")" "$HRUN" \
		"--sid $PKG --read-exec $PF --read $PD" "${reqs[@]}") >"$T/out" 2>&1
}
hreq "$T/h-grant" grant-read-exec "$PF"
hreq "$T/h-revoke" revoke "$PF"
hreq "$T/h-grant-pd" grant-read "$PD"
# The real helper: Wine keeps no DACL, so the grant does not read back.
WARD_TEST_WIN_FAULT='' hpeer ward-helper.exe "$T/h-grant"
if grep -q '^reply: refused the allow ACE for S-1-15-2-1-2-3-4-5-6-7 (mask 0x1200a9) is missing' "$T/out" &&
	grep -q '^helper exit 125' "$T/out"; then
	ok "helper: a grant that does not read back (Wine keeps no DACL) is refused, exit 125"
else
	not_ok "helper: the grant was not refused at its read-back"
	show "$T/out"
fi
# Plumbing past the read-back (ward-helper-test.exe, acl-echo).
WARD_TEST_WIN_FAULT=acl-echo hpeer ward-helper-test.exe "$T/h-grant" "$T/h-revoke" "$T/h-grant" "$T/h-grant-pd"
if [ "$(strip_cr <"$T/out" | grep -c '^reply: ok$')" -eq 4 ] && grep -q '^helper exit 0' "$T/out" &&
	grep -q 'the client is gone: 2 standing grant(s) revoked and read back, 0 failed' "$T/out"; then
	ok "helper plumbing: grant, revoke, grant each 'ok'; the grants still standing are revoked when the client goes"
else
	not_ok "helper plumbing"
	show "$T/out"
fi
# hrefused DESC EXPECTED REQUEST...: the first request is refused, the
# conversation ends there (a later request gets no reply), exit 125.
hrefused() {
	local d=$1 want=$2
	shift 2
	WARD_TEST_WIN_FAULT=acl-echo hpeer ward-helper-test.exe "$@" "$T/h-grant"
	if grep -q -- "^reply: refused .*$want" "$T/out" && ! grep -q '^reply: ok' "$T/out" &&
		grep -q '^helper exit 125' "$T/out"; then
		ok "$d"
	else
		not_ok "$d"
		show "$T/out"
	fi
}
hreq "$T/h-parent" grant-read 'C:\ProgramData'
hrefused "helper: a path the run's policy did not send (its parent) is refused" \
	"is not a path the run's policy sends to the helper" "$T/h-parent"
hreq "$T/h-wider" grant-read-exec "$PD"
hrefused "helper: read-exec where the policy said read is refused" \
	"the policy grants read, not read-exec" "$T/h-wider"
hreq "$T/h-otherrun" grant-read "$PD" "" 00000000000000cc
hrefused "helper: another run's id is refused" "is not the client's run" "$T/h-otherrun"
hreq "$T/h-everyone" grant-read "$PD" S-1-1-0
hrefused "helper: a SID that is not a run's (Everyone) is refused" "sid" "$T/h-everyone"
hreq "$T/h-otherpkg" grant-read "$PD" S-1-15-2-9-9-9-9-9-9-9
hrefused "helper: another package SID is refused" "is not one of the run's SIDs" "$T/h-otherpkg"
printf 'ward-helper 1\nop grant-write\n' >"$T/h-junk"
hrefused "helper: a malformed request (op grant-write) is refused" "" "$T/h-junk"
head -c 5000 /dev/zero | tr '\0' a >"$T/h-big"
hrefused "helper: a request over 4096 bytes is refused" "request longer than 4096 bytes" "$T/h-big"
# The wrong client: a process that is not the one named, or another user.
PEER_CLIENT_PID=decoy:$(winpath "$ws/win-child.exe") WARD_TEST_WIN_FAULT=acl-echo \
	hpeer ward-helper-test.exe "$T/h-grant"
if grep -q "the pipe's client is process .*, not the expected process" "$T/out" &&
	! grep -q '^reply: ok' "$T/out" && grep -q '^helper exit 125' "$T/out"; then
	ok "helper: a client that is not the process named on its command line is refused"
else
	not_ok "helper: wrong client pid"
	show "$T/out"
fi
PEER_USER=S-1-5-21-1-2-3-1001 WARD_TEST_WIN_FAULT=acl-echo hpeer ward-helper-test.exe "$T/h-grant"
if grep -q "runs as .*, not as S-1-5-21-1-2-3-1001" "$T/out" && ! grep -q '^reply: ok' "$T/out" &&
	grep -q '^helper exit 125' "$T/out"; then
	ok "helper: a client of another user than --user is refused"
else
	not_ok "helper: wrong client user"
	show "$T/out"
fi
(cd "$T" && wine "$T/bin/ward-helper.exe" --pipe '\\.\pipe\ward-helper-00000000000000cc' \
	--client-pid 1 --user S-1-5-21-1-2-3-1001 --run "$HRUN" --sid "$PKG" --read "$PD") >"$T/out" 2>&1
rc=$?
if [ $rc -eq 125 ] && grep -q usage "$T/out"; then
	ok "helper: a pipe name that is not its run's is refused (usage, exit 125)"
else
	not_ok "helper: pipe name of another run (exit $rc)"
	show "$T/out"
fi

# The sandbox-user tier through ward.exe itself (ward-runner.exe beside
# it). Wine has no second user: what is shown is that each step before
# the logon refuses, with its name, and the command never runs.
cp "$bin/ward.exe" "$bin/ward-test.exe" "$T/bin/"
ustate=$(echo "$T"/prefix/drive_c/users/*/AppData/Local)/ward
mkdir -p "$ustate"
# urun DESC STEP EXPECTED: ward.exe run --tier sandbox-user refuses at STEP
# (the result's setup_step), tier 5, not started, the marker absent.
urun() {
	local d=$1 step=$2 want=$3 rc
	rm -f "$ws/marker" "$ws/r.json"
	(cd "$ws" && wine "$T/bin/${WARD_EXE:-ward.exe}" run --tier sandbox-user --result "$WS\\r.json" \
		${UPOL:+-p "$UPOL"} -- "$WS\\win-child.exe" write "$WS\\marker") >"$T/out" 2>&1
	rc=$?
	if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] && grep -q -- "$want" "$T/out" &&
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j["setup_step"] == sys.argv[2] and j["tier"] == 5 and j["started"] is False))' \
			"$ws/r.json" "$step"; then
		ok "$d"
	else
		not_ok "$d (exit $rc)"
		show "$T/out"
	fi
}
urun "sandbox-user: no setup on this host: refused, naming ward-setup.exe" "setup" \
	"run ward-setup.exe once"
printf '%s\n' "$SYN" >"$ustate/sandbox-sid"
urun "sandbox-user: no credential record: refused, naming ward-setup.exe" "setup" \
	"no credential record"
printf 'not a record' >"$ustate/sandbox-users.dpapi"
urun "sandbox-user: a record whose DACL does not read back as setup's: refused before it is read" \
	"credentials" "credential file:"
printf 'S-1-5-32-545\n' >"$ustate/sandbox-sid"
urun "sandbox-user: a sandbox-sid that is not a synthetic SID: refused" "setup" \
	"does not hold one synthetic SID"

# Past the record with ward-test.exe (setup-echo: the record's DACL reads
# back as setup sets it, DPAPI is the identity, the offline user exists as
# S-1-5-21-1-2-3-1005); then each later step refuses.
printf '%s\n' "$SYN" >"$ustate/sandbox-sid"
printf 'ward-sandbox-credentials 1\nWardSandboxOffline\tAb3!aaaaaaaaaaaaaaaaaaaa\nWardSandboxOnline\tCd4#bbbbbbbbbbbbbbbbbbbb\n' \
	>"$ustate/sandbox-users.dpapi"
export WARD_EXE=ward-test.exe
WARD_TEST_WIN_FAULT=setup-echo urun \
	"sandbox-user: no filtering engine (Wine's FwpmEngineOpen0): the offline user's walls unproven, refused" \
	"network-wall" "FwpmEngineOpen0"
WARD_TEST_WIN_FAULT=setup-echo,wfp-echo urun \
	"sandbox-user: ward-setup.exe's filters not there: refused before anything changes" \
	"network-wall" "not there (run ward-setup.exe again)"
# Everything before the logon held (the ACLs granted and journaled, the
# job read back): Wine's CreateProcessWithLogonW fails here (error 0; where
# it starts the runner as the calling user instead, the runner's token user
# is read back and refused, as win-runner-peer.exe shows above). Either
# way: refused at the runner step, the command never ran.
WARD_TEST_WIN_FAULT=setup-echo,wfp-setup,acl-echo,job-echo urun \
	"sandbox-user: the logon as the sandbox user failing (or not being that user) is refused, the command never ran" \
	"runner" "CreateProcessWithLogonW(WardSandboxOffline) failed\|S-1-5-21-1-2-3-1005"
# The ACLs the run granted are undone whatever the refusal: no ACE for the
# synthetic SID or the user stays in the journal.
if [ ! -e "$ustate/journal" ] && ! ls "$ustate"/journal* >/dev/null 2>&1; then
	ok "sandbox-user: nothing left behind (no undo journal after the refusal)"
else
	not_ok "sandbox-user: an undo journal was left"
	ls -la "$ustate" | sed 's/^/# /'
fi
# --dry-run: the plan is the user's: the recorded synthetic SID and the
# user's SID on the workspace, nothing changed, nothing run.
rm -f "$ws/marker"
(cd "$ws" && WARD_TEST_WIN_FAULT=setup-echo,wfp-setup wine "$T/bin/ward-test.exe" run --tier sandbox-user \
	--dry-run -- "$WS\\win-child.exe" write "$WS\\marker") >"$T/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ ! -e "$ws/marker" ] &&
	grep -q '^sandbox-user WardSandboxOffline S-1-5-21-1-2-3-1005' "$T/out" &&
	grep -q "^restricting-sid $SYN" "$T/out" &&
	[ "$(strip_cr <"$T/out" | grep -c '^grant .* modify (workspace)$')" -eq 2 ] &&
	grep -q '^deny .* all (ward config)' "$T/out"; then
	ok "sandbox-user --dry-run: the W1-write plan made the user's (the recorded synthetic SID, a workspace grant for each, deny-all for the user on ward's config), nothing run"
else
	not_ok "sandbox-user --dry-run (exit $rc)"
	show "$T/out"
fi

# The online user (network.mode proxy): the same steps, its own walls
# (the offline user's plus the two permits to the proxy's fixed port
# 47329), then ward.exe's proxy holding that port. Each refusal: exit 125,
# the step named, the command never ran.
printf '{"network": {"mode": "proxy", "allow": ["allowed.test:80"]}}\n' >"$ws/online.json"
export UPOL="$WS\\online.json"
rm -f "$ustate/sandbox-sid"
WARD_EXE=ward.exe urun "sandbox-user online: no setup: refused at setup, before the proxy starts" "setup" \
	"run ward-setup.exe once"
printf '%s\n' "$SYN" >"$ustate/sandbox-sid"
WARD_TEST_WIN_FAULT=setup-echo urun \
	"sandbox-user online: no filtering engine: the online user's walls unproven, refused (never degraded)" \
	"network-wall" "online user S-1-5-21-1-2-3-1006: .*FwpmEngineOpen0"
WARD_TEST_WIN_FAULT=setup-echo,wfp-echo urun \
	"sandbox-user online: ward-setup.exe's filters on the online user not there: refused" \
	"network-wall" "not there (run ward-setup.exe again)"
WARD_TEST_WIN_FAULT=setup-echo,wfp-setup,wfp-setup-port urun \
	"sandbox-user online: walls that permit another port than the proxy's: refused at their read-back" \
	"network-wall" "read-back proxy-v4"
# Another process holds the proxy's port (a host-side listener here; if
# its bind fails, someone else holds the port, which is the same case):
# the command could reach it, so the run is refused at the proxy step.
python3 -c '
import socket, sys, time
s = socket.socket()
try:
    s.bind(("127.0.0.1", 47329)); s.listen(1)
except OSError:
    pass
open(sys.argv[1], "w").close()
time.sleep(60)' "$T/held" &
holder=$!
for _ in $(seq 100); do [ -e "$T/held" ] && break; sleep 0.1; done
WARD_TEST_WIN_FAULT=setup-echo,wfp-setup urun \
	"sandbox-user online: the proxy's port held by another process: refused at proxy, the command never ran" \
	"proxy" "cannot hold 127.0.0.1 port 47329 exclusively"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
# The plan: the online user, its 12 filters, the proxy on the walls' port,
# the variables set for the command (--dry-run prints their names; their
# values are test-win-user's test_user_online_plan).
rm -f "$ws/marker"
(cd "$ws" && WARD_TEST_WIN_FAULT=setup-echo,wfp-setup wine "$T/bin/ward-test.exe" run --tier sandbox-user \
	--dry-run -p "$UPOL" -- "$WS\\win-child.exe" write "$WS\\marker") >"$T/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ ! -e "$ws/marker" ] &&
	grep -q '^sandbox-user WardSandboxOnline S-1-5-21-1-2-3-1006' "$T/out" &&
	grep -q '^walls 12 persistent filters on S-1-5-21-1-2-3-1006' "$T/out" &&
	grep -q '^proxy 127.0.0.1:47329 ' "$T/out" &&
	strip_cr <"$T/out" | grep -q '^env HTTP_PROXY$' && strip_cr <"$T/out" | grep -q '^env ALL_PROXY$' &&
	strip_cr <"$T/out" | grep -q '^env NO_PROXY$' &&
	[ "$(strip_cr <"$T/out" | grep -c '^grant .* modify (workspace)$')" -eq 2 ]; then
	ok "sandbox-user online --dry-run: the online user, its 12 filters, the proxy on port 47329, the proxy variables, nothing run"
else
	not_ok "sandbox-user online --dry-run (exit $rc)"
	show "$T/out"
fi
# Everything before the logon held: refused at the runner (Wine's logon),
# the command never ran, no undo journal left, and the proxy's port free
# again (the run's proxy stopped).
WARD_TEST_WIN_FAULT=setup-echo,wfp-setup,acl-echo,job-echo urun \
	"sandbox-user online: the logon as the online user failing is refused at runner, the command never ran" \
	"runner" "CreateProcessWithLogonW(WardSandboxOnline) failed\|S-1-5-21-1-2-3-1006"
if ! ls "$ustate"/journal* >/dev/null 2>&1 &&
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 47329))' 2>/dev/null; then
	ok "sandbox-user online: nothing left behind (no undo journal; the proxy's port free again)"
else
	not_ok "sandbox-user online: a journal or the proxy's port was left"
	ls -la "$ustate" | sed 's/^/# /'
fi

# The plumbing past the logon (ward-test.exe's logon-plain: the runner
# started as ward's own user, ward-runner-test.exe, its user unchecked;
# the command runs unconfined, Wine enforcing nothing): the command gets
# the proxy variables, reaches an allowed name through the run's proxy on
# the walls' port, a denied one is refused (403) and never reaches the
# server, both are in the audit log as `net` events, the refusal in
# --result's net_refused; the command's exit code comes back.
upstream_start "$T/server.log"
printf '{"network": {"mode": "proxy", "allow": ["allowed.test:%s"], "hosts": {"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1"}}}\n' \
	"$SP" >"$ws/online.json"
rm -f "$ws/env.txt" "$ws/got.txt" "$ws/denied.txt" "$ws/r.json"
audit_before=$(cat "$ustate/audit.jsonl" 2>/dev/null | wc -l)
(cd "$ws" && WARD_TEST_RUNNER_ELEVATED=1 \
	WARD_TEST_WIN_FAULT=setup-echo,wfp-setup,acl-echo,job-echo,logon-plain,token-echo \
	wine "$T/bin/ward-test.exe" run --tier sandbox-user --result "$WS\\r.json" -p "$UPOL" -- \
	"$WS\\win-child.exe" env "$WS\\env.txt" + proxy-get "allowed.test:$SP" "$WS\\got.txt" + \
	proxy-get "denied.test:$SP" "$WS\\denied.txt" + exit 7) >"$T/out" 2>&1
rc=$?
upstream_stop
if [ $rc -eq 7 ] && strip_cr <"$ws/env.txt" | grep -qx 'HTTP_PROXY=http://127.0.0.1:47329' &&
	strip_cr <"$ws/env.txt" | grep -qx 'HTTPS_PROXY=http://127.0.0.1:47329' &&
	strip_cr <"$ws/env.txt" | grep -qx 'ALL_PROXY=socks5h://127.0.0.1:47329' &&
	strip_cr <"$ws/env.txt" | grep -qx 'NO_PROXY='; then
	ok "sandbox-user online plumbing: the command gets the proxy variables for port 47329; its exit code (7) is the run's"
else
	not_ok "sandbox-user online plumbing: the variables or the exit code (exit $rc)"
	show "$T/out"
	[ -f "$ws/env.txt" ] && show "$ws/env.txt"
fi
if grep -q upstream-ok "$ws/got.txt" 2>/dev/null && grep -q '403' "$ws/denied.txt" 2>/dev/null &&
	grep -qx 'GET / HTTP/1.1\|GET / HTTP/1.0' "$T/server.log" && [ "$(wc -l <"$T/server.log")" -eq 1 ] &&
	python3 - "$ustate/audit.jsonl" "$audit_before" "$SP" "$ws/r.json" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]).readlines()[int(sys.argv[2]):]]
net = [e for e in ev if e.get("event") == "net"]
ok = any(e["host"] == "allowed.test" and e["verdict"] == "allow" and e["port"] == int(sys.argv[3]) for e in net) \
    and any(e["host"] == "denied.test" and e["verdict"] == "deny" for e in net)
start = [e for e in ev if e.get("event") == "start"]
ok = ok and start and start[-1].get("windows_tier") == "sandbox-user" and {"proxy", "wfp-walls"} <= set(start[-1].get("enforced", []))
r = json.load(open(sys.argv[4]))
ok = ok and r["tier"] == 5 and [x["host"] for x in r.get("net_refused") or []] == ["denied.test"]
sys.exit(0 if ok else 1)
EOF
then
	ok "sandbox-user online plumbing: allowed name reached through the run's proxy, denied one refused (403, the server saw nothing), both audited, net_refused in the result"
else
	not_ok "sandbox-user online plumbing: the proxy's answers, the audit or the result"
	show "$T/out"
	show "$T/server.log"
	[ -f "$ustate/audit.jsonl" ] && tail -5 "$ustate/audit.jsonl" | sed 's/^/# /'
	[ -f "$ws/r.json" ] && show "$ws/r.json"
fi
unset WARD_EXE UPOL

[ "$fails" -eq 0 ]
