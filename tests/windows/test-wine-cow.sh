#!/usr/bin/env bash
# Copy-on-write on Windows under Wine (`ward.exe run --cow`, run
# --session, diff, apply, undo, discard, the session lock): the PLUMBING of the launch sequence (suspended create ->
# job -> inject ward-redirect.dll -> its hooks -> its readiness line on
# ward's pipe -> resume), the redirect (a write lands in the upper, the
# workspace file is unchanged, a read sees the upper copy), and every
# fail-closed path (injection refused, DLL missing, no readiness line,
# readiness too late): the run exits 125 and the command never ran.
#
# Wine enforces no ACL, so nothing here shows isolation: the workspace's
# read-only ACL, which is the boundary on Windows, is only planned (the
# --dry-run checks) and not verified until a real Windows machine runs
# it. The runs use ward-test.exe --tier W0 with WARD_TEST_WIN_FAULT=job-echo
# (Wine's QueryInformationJobObject reads zeros, see test-wine.sh).
#
# Needs WARD_WIN_BIN (ward.exe, ward-test.exe, ward-redirect.dll,
# win-child.exe); skips when Wine cannot start.
set -u
# shellcheck source=tests/windows/wine-common.sh
. "$(dirname "$0")/wine-common.sh"
wine_setup cow ward.exe ward-test.exe ward-redirect.dll win-child.exe

ws=$T/ws
mkdir -p "$ws/.git" "$ws/sub" "$T/bin" "$T/out" "$T/nodll"
cp "$bin/ward.exe" "$bin/ward-test.exe" "$bin/ward-redirect.dll" "$bin/win-child.exe" "$T/bin/"
cp "$bin/ward-test.exe" "$bin/win-child.exe" "$T/nodll/"
WS=$(winpath "$ws")
B=$(winpath "$T/bin")
OUT=$(winpath "$T/out")
cd "$ws" || exit 1
ward() { wine "$T/bin/ward.exe" "$@"; }
cow() { WARD_TEST_WIN_FAULT=${FAULT:-job-echo} wine "${EXE:-$T/bin/ward-test.exe}" run --tier W0 --cow "$@"; }
child() { printf '%s' "$B\\win-child.exe"; }
# ward's state dir, once a run has made it.
state=
session_of() { grep -o 'session [0-9a-f]\{16\}' "$1" | head -1 | cut -d' ' -f2; }
seed() {
	printf 'original\n' >"$ws/f.txt"
	printf 'keep\n' >"$ws/g.txt"
	printf 'in sub\n' >"$ws/sub/x.txt"
	printf '[core]\n' >"$ws/.git/config"
}

echo "1..45"

# The plan: the workspace read-only (the boundary), the session's upper and
# whiteout dirs the only writable place, the DLL readable, the pipe named
# per run. Planned only: Wine enforces none of it.
seed
ward run --dry-run --cow -- "$(child)" exit 0 2>&1 | strip_cr >"$T/plan"
check "plan (W2 --cow): the workspace is granted read+execute only, not modify" \
	bash -c "grep -qF 'grant $WS read+execute (workspace (copy-on-write: read-only))' '$T/plan' &&
		! grep -qF 'grant $WS modify' '$T/plan'"
check "plan (W2 --cow): modify on the session's upper and whiteout dirs, read+execute on the DLL, the readiness pipe per run" \
	bash -c "grep -q '^grant .*\\\\sessions\\\\[0-9a-f]*\\\\upper modify (cow upper)' '$T/plan' &&
		grep -q '^grant .*\\\\sessions\\\\[0-9a-f]*\\\\whiteout modify (cow whiteouts)' '$T/plan' &&
		grep -q '^grant .*ward-redirect.dll read+execute (cow redirector)' '$T/plan' &&
		grep -q '^cow inject .*ward-redirect.dll ready [\\\\][\\\\][.][\\\\]pipe[\\\\]ward-cow-[0-9a-f]\\{16\\}$' '$T/plan'"
show "$T/plan"

# The whole sequence: the child sees the DLL loaded before its first
# instruction ran, its append lands in the upper, its read sees the upper
# copy, a new file is created in the upper; the workspace is unchanged.
cow --result "$OUT\\r1.json" -- "$(child)" loaded ward-redirect.dll + append "$WS\\f.txt" "added" + \
	cat "$WS\\f.txt" + write "$WS\\new.txt" + exists "$WS\\new.txt" >"$T/stdout" 2>"$T/err"
rc=$?
id=$(session_of "$T/err")
state=$(echo "$T"/prefix/drive_c/users/*/AppData/Local/ward)
up=$state/sessions/$id/upper
check "launch: suspended -> inject -> hook -> ready -> resume; the command ran with the DLL loaded (exit $rc)" \
	test "$rc" -eq 0 -a -n "$id"
check "a write lands in the upper: the upper's f.txt is the workspace's plus the append" \
	bash -c "printf 'original\nadded' | cmp -s - '$up/f.txt'"
check "the workspace's f.txt is unchanged, and new.txt is not in the workspace" \
	bash -c "printf 'original\n' | cmp -s - '$ws/f.txt' && [ ! -e '$ws/new.txt' ] && [ -e '$up/new.txt' ]"
check "a read after the write sees the upper copy" \
	bash -c "strip_cr() { tr -d '\r'; }; strip_cr <'$T/stdout' | grep -qx added"
check "result: cow true, the session id" \
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r.get('cow') is True and r.get('session')==sys.argv[2] else 1)" \
	"$T/out/r1.json" "$id"
[ "$rc" -eq 0 ] || show "$T/err"

# Delete and rename through the hooks: a whiteout, the new name in the
# upper; the workspace keeps both files. Protected paths and moves out of
# the workspace are refused, nothing reaches the host.
cow -- "$(child)" delete "$WS\\g.txt" + rename "$WS\\sub\\x.txt" "$WS\\sub\\y.txt" + \
	write "$WS\\made.txt" + ls "$WS" + ls "$WS\\sub" + exists "$WS\\g.txt" >"$T/ls" 2>"$T/err2"
rc=$?
id2=$(session_of "$T/err2")
check "delete and rename: the command no longer sees g.txt (exit $rc: 'exists' says 1)" test "$rc" -eq 1
check "delete and rename: the workspace keeps g.txt and sub/x.txt; the upper has sub/y.txt, whiteouts for both" \
	bash -c "[ -e '$ws/g.txt' ] && [ -e '$ws/sub/x.txt' ] && [ ! -e '$ws/sub/y.txt' ] &&
		[ -e '$state/sessions/$id2/upper/sub/y.txt' ] && [ -e '$state/sessions/$id2/whiteout/g.txt' ] &&
		[ -e '$state/sessions/$id2/whiteout/sub/x.txt' ]"
check "listings are merged: the workspace less the whiteouts plus the upper (g.txt, sub/x.txt gone; made.txt, sub/y.txt there)" \
	bash -c "tr -d '\r' <'$T/ls' | sort | tr '\n' ' ' | grep -qx '. . .. .. .git f.txt made.txt sub y.txt '"
tr -d '\r' <"$T/ls" | sed 's/^/# ls: /'
cow -- "$(child)" append "$WS\\.git\\config" "evil" >/dev/null 2>"$T/err3"
rc=$?
id3=$(session_of "$T/err3")
check "a write under .git is refused by the redirector (exit $rc), neither the workspace nor the upper has it" \
	bash -c "[ $rc -ne 0 ] && printf '[core]\n' | cmp -s - '$ws/.git/config' && [ ! -e '$state/sessions/$id3/upper/.git' ]"
cow -- "$(child)" rename "$WS\\f.txt" "$OUT\\stolen.txt" >/dev/null 2>&1
rc=$?
check "moving a workspace file out of the workspace is refused (exit $rc), the file stays" \
	bash -c "[ $rc -ne 0 ] && [ ! -e '$T/out/stolen.txt' ] && printf 'original\n' | cmp -s - '$ws/f.txt'"

# Review, with Linux's semantics and journal lines.
ward diff "$id2" --json >"$T/diff.json" 2>&1
check "diff --json: g.txt and sub/x.txt deleted, sub/y.txt and made.txt added" \
	python3 -c "import json,sys; d={(c['path'],c['kind']) for c in json.load(open(sys.argv[1]))}; sys.exit(0 if d=={('g.txt','deleted'),('sub\\\\x.txt','deleted'),('sub\\\\y.txt','added'),('made.txt','added')} else 1)" \
	"$T/diff.json"
show "$T/diff.json"
ward apply "$id" >"$T/apply" 2>&1
check "apply: f.txt modified and new.txt added in the workspace; then nothing is pending" \
	bash -c "printf 'original\nadded' | cmp -s - '$ws/f.txt' && [ -e '$ws/new.txt' ] &&
		wine '$T/bin/ward.exe' diff '$id' 2>&1 | tr -d '\r' | grep -qx '0 changes (0 refused)'"
check "apply's record is Linux's journal format: header, step, result, commit lines" \
	python3 -c "
import json,sys
ls=[json.loads(l) for l in open(sys.argv[1])]
ok=ls[0]=={'type':'apply','seq':1} and ls[-1]=={'commit':True} and any(l.get('op')=='put' and bytes.fromhex(l['p'])==b'f.txt' and l['ot']=='f' for l in ls) and any('d' in l for l in ls)
sys.exit(0 if ok else 1)" "$state/sessions/$id/ops/1.jsonl"
ward undo "$id" >"$T/undo" 2>&1
check "undo: the workspace is back byte for byte (f.txt original, new.txt gone)" \
	bash -c "printf 'original\n' | cmp -s - '$ws/f.txt' && [ ! -e '$ws/new.txt' ]"
ward undo "$id" >"$T/undo2" 2>&1
rc=$?
check "undo again: nothing to undo (exit $rc)" bash -c "[ $rc -eq 1 ] && grep -q 'nothing to undo' '$T/undo2'"
# A protected change in the upper (as a bypass could leave one): refused
# unless named.
mkdir -p "$state/sessions/$id/upper/.git"
printf 'planted\n' >"$state/sessions/$id/upper/.git/config"
ward apply "$id" >"$T/apply2" 2>&1
rc=$?
check "apply refuses a protected change (exit 3) and names it; .git/config unchanged" \
	bash -c "[ $rc -eq 3 ] && grep -q 'refused .git.config: a protected path' '$T/apply2' && printf '[core]\n' | cmp -s - '$ws/.git/config'"
# A conflict: g.txt, which session $id2 deleted, edited in the workspace
# after that session started: refused (exit 3), the edit kept; --force
# applies the deletion.
printf 'edited by the user\n' >"$ws/g.txt"
ward apply "$id2" g.txt >"$T/apply3" 2>&1
rc=$?
check "apply refuses a change whose workspace file was edited during the session (exit $rc); the edit stays" \
	bash -c "[ $rc -eq 3 ] && grep -q 'refused g.txt: changed in the workspace since the session started' '$T/apply3' &&
		printf 'edited by the user\n' | cmp -s - '$ws/g.txt'"
show "$T/apply3"
ward apply --force "$id2" g.txt >"$T/apply4" 2>&1
rc=$?
check "apply --force applies it over the edit (exit $rc)" bash -c "[ $rc -eq 0 ] && [ ! -e '$ws/g.txt' ]"
ward discard "$id" >/dev/null 2>&1
check "discard removes the session" test ! -e "$state/sessions/$id"

# Fail closed: the command must never run. Its marker is written OUTSIDE
# the workspace (not redirected), so a run that slipped through shows.
refused() { # DESC PATTERN
	local d=$1 pat=$2 rc
	rm -f "$T/out/marker"
	cow -- "$(child)" write "$OUT\\marker" >"$T/fout" 2>&1
	rc=$?
	if [ "$rc" -eq 125 ] && [ ! -e "$T/out/marker" ] && grep -q "cow-inject: .*$pat" "$T/fout"; then
		ok "$d"
	else
		not_ok "$d (exit $rc)"
		show "$T/fout"
	fi
}
FAULT=job-echo,inject-fail refused "injection refused: the child is killed, exit 125" \
	"CreateRemoteThread(LoadLibraryW): access denied (injected)"
FAULT=job-echo,ready-missing refused "no readiness line (the DLL cannot reach ward's pipe): exit 125" \
	"loader thread ended first"
FAULT=job-echo,ready-timeout refused "readiness not in time: exit 125" \
	"no readiness signal from the redirector within the time allowed"
EXE=$T/nodll/ward-test.exe refused "the DLL missing beside ward.exe: exit 125" "ward-redirect.dll"
# The readiness pipe against other processes (played by ward-test.exe,
# win32-inject.c's test hooks, so that they are there first every time):
# a name someone already holds is never joined; a client that is not the
# child is refused even with the child's exact line.
FAULT=job-echo,cow-squat refused "the readiness pipe's name squatted: FILE_FLAG_FIRST_PIPE_INSTANCE refuses, exit 125" \
	"CreateNamedPipeW (first instance)"
FAULT=job-echo,cow-intruder refused "a readiness client that is not the child (the child's line, another pid): exit 125" \
	"the client is process [0-9]*, not the child"
check "audit: the refused runs are error events naming the step cow-inject" \
	bash -c "[ \$(grep -c '\"cow-inject' '$state/audit.jsonl') -ge 6 ]"

# Several runs in one session (`run --session ID`): run 2 sees run 1's
# upper (a file it wrote, a file it deleted stays deleted), its writes add
# to the same upper, session.json counts the runs; the workspace is
# unchanged until apply. The workspace changing between runs: an edit to a
# file run 1 had taken is a conflict at apply; an edit to a file only run
# 2 took was seen by run 2 (its copy-up) and is none.
seed
rm -f "$ws/new.txt" "$ws/made.txt"
printf 'h\n' >"$ws/h.txt"
mkdir -p "$T/other"
ses() { WARD_TEST_WIN_FAULT=job-echo wine "$T/bin/ward-test.exe" run --tier W0 "$@"; }
cow -- "$(child)" write "$WS\\one.txt" + append "$WS\\f.txt" "run1" + delete "$WS\\g.txt" \
	>/dev/null 2>"$T/s1"
rc=$?
sid=$(session_of "$T/s1")
sdir=$state/sessions/$sid
printf 'edited between runs\n' >>"$ws/h.txt"
ses --session "$sid" --result "$OUT\\s2.json" -- "$(child)" cat "$WS\\one.txt" + append "$WS\\f.txt" "+run2" + \
	append "$WS\\h.txt" "run2" + cat "$WS\\f.txt" + exists "$WS\\g.txt" >"$T/s2out" 2>"$T/s2"
rc2=$?
check "run --session: run 2 reads the file run 1 wrote and run 1's change to f.txt, and g.txt stays deleted (exits $rc, $rc2: 'exists' says 1)" \
	bash -c "[ $rc -eq 0 ] && [ $rc2 -eq 1 ] && tr -d '\r' <'$T/s2out' | grep -qx 'xoriginal' &&
		tr -d '\r' <'$T/s2out' | grep -qx 'run1+run2'"
{ strip_cr <"$T/s2out"; echo; } | sed 's/^/# run 2: /'
[ "$rc2" -eq 1 ] || show "$T/s2"
check "run --session: run 2's writes are in the same upper (f.txt has both runs' appends); the workspace is unchanged" \
	bash -c "printf 'original\nrun1+run2' | cmp -s - '$sdir/upper/f.txt' && [ -e '$sdir/whiteout/g.txt' ] &&
		printf 'original\n' | cmp -s - '$ws/f.txt' && printf 'keep\n' | cmp -s - '$ws/g.txt' &&
		[ ! -e '$ws/one.txt' ] && printf 'h\nedited between runs\n' | cmp -s - '$ws/h.txt'"
check "session.json counts 2 runs and no run is open; every upper and whiteout entry has a baseline" \
	python3 -c "
import json,sys
j=json.load(open(sys.argv[1]+'/session.json'))
b={bytes.fromhex(json.loads(l)['p']).decode() for l in open(sys.argv[1]+'/baseline.jsonl')}
sys.exit(0 if j['runs']==2 and 'open_run' not in j and {'f.txt','one.txt','h.txt','g.txt'}<=b else 1)" "$sdir"
check "run 2's result: its session, cow, the session's pending changes (1 added, 2 modified, 1 deleted)" \
	python3 -c "
import json,sys
r=json.load(open(sys.argv[1])); c=r.get('changes') or {}
sys.exit(0 if r.get('session')==sys.argv[2] and r.get('cow') is True and c.get('total')==4 and c.get('added')==1 and c.get('modified')==2 and c.get('deleted')==1 else 1)" \
	"$T/out/s2.json" "$sid"
ward diff "$sid" --json >"$T/sdiff.json" 2>&1
check "diff after two runs: f.txt and h.txt modified, one.txt added, g.txt deleted" \
	python3 -c "import json,sys; d={(c['path'],c['kind']) for c in json.load(open(sys.argv[1]))}; sys.exit(0 if d=={('f.txt','modified'),('h.txt','modified'),('one.txt','added'),('g.txt','deleted')} else 1)" \
	"$T/sdiff.json"
# The workspace changes after both runs took their copies: f.txt (run 1's).
printf 'edited after run 1\n' >"$ws/f.txt"
ward apply "$sid" >"$T/sapply" 2>&1
rc=$?
check "apply after two runs (exit $rc): f.txt, edited after run 1 took it, is a conflict and keeps the edit; h.txt, edited before run 2 took it, is applied with that edit; one.txt added, g.txt removed" \
	bash -c "[ $rc -eq 3 ] && grep -q 'refused f.txt: changed in the workspace' '$T/sapply' &&
		! grep -q 'refused h.txt' '$T/sapply' && printf 'edited after run 1\n' | cmp -s - '$ws/f.txt' &&
		printf 'h\nedited between runs\nrun2' | cmp -s - '$ws/h.txt' &&
		printf 'x' | cmp -s - '$ws/one.txt' && [ ! -e '$ws/g.txt' ]"
show "$T/sapply"

(cd "$T/other" 2>/dev/null || cd /; ward run --dry-run --session "$sid" -- "$(child)" exit 0) 2>&1 | strip_cr >"$T/splan"
check "run --dry-run --session (from another directory): the plan is that session's (its upper writable, its workspace the cwd)" \
	bash -c "grep -q '^grant .*sessions.$sid.upper modify (cow upper)' '$T/splan' && grep -qxF 'cwd $WS' '$T/splan'"

# Refusals (exit 125, the command never ran: its marker is outside the
# workspace): an unknown id, not an id, another workspace, a discarded
# session.
refused_run() { # DESC PATTERN ARGS...
	local d=$1 pat=$2 rc
	shift 2
	rm -f "$T/out/marker"
	ses "$@" -- "$(child)" write "$OUT\\marker" >"$T/rout" 2>&1
	rc=$?
	if [ "$rc" -eq 125 ] && [ ! -e "$T/out/marker" ] && grep -q "$pat" "$T/rout"; then
		ok "$d"
	else
		not_ok "$d (exit $rc)"
		show "$T/rout"
	fi
}
refused_run "run --session with an unknown id: exit 125, nothing ran" \
	"Session '0123456789abcdef': no such copy-on-write session" --session 0123456789abcdef
refused_run "run --session with what is not an id (..\\x): exit 125" \
	"not a session id" --session '..\x'
refused_run "run --session from another workspace (-C): exit 125" \
	"belongs to workspace" --session "$sid" -C "$(winpath "$T/other")"
cow -- "$(child)" exit 0 >/dev/null 2>"$T/s3"
did=$(session_of "$T/s3")
ward discard "$did" >/dev/null 2>&1
refused_run "run --session of a discarded session: exit 125, the session is not made again" \
	"unknown or discarded" --session "$did"
check "discard removed the session's directory, lock file included, and the refused run did not make it again" \
	test ! -e "$state/sessions/$did"

# The session lock: while a run holds the session, a second run and every
# review (diff, apply, undo, discard) are refused at once, not waited on;
# the workspace and the session are unchanged. The holder waits for a
# file the test makes only after the checks (no timing involved).
rm -f "$T/out/started" "$T/out/go" "$T/out/marker"
ses --session "$sid" --cow -- "$(child)" write "$OUT\\started" + wait-for "$OUT\\go" \
	>/dev/null 2>"$T/hold" &
holder=$!
for _ in $(seq 1200); do [ -e "$T/out/started" ] && break; sleep 0.1; done
cp -r "$sdir" "$T/sdir-before"
cp -r "$ws" "$T/ws-before"
ward diff "$sid" >"$T/l1" 2>&1
r1=$?
ward apply "$sid" --force >"$T/l2" 2>&1
r2=$?
ward discard "$sid" >"$T/l3" 2>&1
r3=$?
ses --session "$sid" -- "$(child)" write "$OUT\\marker" >"$T/l4" 2>&1
r4=$?
check "while a run holds the session: diff, apply and discard are refused (exits $r1 $r2 $r3), a second run too (exit $r4, it never ran)" \
	bash -c "[ -e '$T/out/started' ] && [ $r1 -eq 1 ] && [ $r2 -eq 1 ] && [ $r3 -eq 1 ] && [ $r4 -eq 125 ] &&
		grep -q 'in use by another ward.exe run or review' '$T/l1' &&
		grep -q 'in use by another ward.exe run or review' '$T/l3' &&
		grep -q 'in use by another ward.exe run or review' '$T/l4' && [ ! -e '$T/out/marker' ]"
check "the refused commands changed nothing: the workspace and the session's upper, whiteouts and records are as they were" \
	bash -c "diff -r '$T/ws-before' '$ws' && diff -r -x lock '$T/sdir-before' '$sdir'"
touch "$T/out/go"
wait "$holder"
rc=$?
ward diff "$sid" >"$T/l5" 2>&1
r5=$?
check "the lock goes with the run (exit $rc): diff works again (exit $r5), session.json counts 3 runs" \
	bash -c "[ $rc -eq 0 ] && [ $r5 -eq 0 ] && python3 -c \"import json,sys; sys.exit(0 if json.load(open('$sdir/session.json'))['runs']==3 else 1)\""

# A run killed (SIGKILL to ward-test.exe: no clean-up of its own) lets go
# of the lock with its process; the run it did not end stays open in
# session.json, and the next run dates what it left from its start.
rm -f "$T/out/started" "$T/out/go"
(
	export WARD_TEST_WIN_FAULT=job-echo
	exec wine "$T/bin/ward-test.exe" run --tier W0 --session "$sid" -- "$(child)" \
		write "$WS\\killed.txt" + write "$OUT\\started" + wait-for "$OUT\\go"
) >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1200); do [ -e "$T/out/started" ] && break; sleep 0.1; done
kill -KILL "$holder"
wait "$holder" 2>/dev/null
touch "$T/out/go"
ward diff "$sid" >"$T/l6" 2>&1
r6=$?
check "a killed run's lock goes with its process: diff works (exit $r6); the session shows the run as not ended (open_run, 4 runs)" \
	bash -c "[ -e '$T/out/started' ] && [ $r6 -eq 0 ] && python3 -c \"import json,sys; j=json.load(open('$sdir/session.json')); sys.exit(0 if j['runs']==4 and 'open_run' in j else 1)\""
kopen=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('open_run','none'))" "$sdir/session.json")
ses --session "$sid" -- "$(child)" exists "$WS\\killed.txt" >/dev/null 2>&1
r7=$?
check "the next run sees what the killed run wrote (exit $r7), and closes the session's runs (5, none open; killed.txt dated from the killed run's start)" \
	python3 -c "
import json,sys
d=sys.argv[1]; j=json.load(open(d+'/session.json'))
b={bytes.fromhex(json.loads(l)['p']).decode(): json.loads(l)['t'] for l in reversed(open(d+'/baseline.jsonl').readlines())}
sys.exit(0 if int(sys.argv[2])==0 and j['runs']==5 and 'open_run' not in j and b.get('killed.txt')==sys.argv[3] else 1)" "$sdir" "$r7" "$kopen"

[ "$fails" -eq 0 ]
