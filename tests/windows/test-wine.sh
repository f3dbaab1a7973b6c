#!/usr/bin/env bash
# ward.exe under Wine: the plumbing Wine implements and the fail-closed
# paths. Wine enforces none of the Windows security mechanisms (tokens,
# integrity levels, AppContainer, DACLs for arbitrary SIDs), so nothing
# here claims isolation: the isolation checks are that ward.exe REFUSES
# (exit 125, the command never ran) wherever Wine cannot prove a tier.
#
# Needs WARD_WIN_BIN: a directory with ward.exe, ward-test.exe and
# win-child.exe (`make windows-test` stages it; run-unpriv.sh passes it as
# WARD_HELPERS). Skips, with the reason, when Wine cannot start.
set -u
# shellcheck source=tests/windows/wine-common.sh
. "$(dirname "$0")/wine-common.sh"
docs=$(cd "$(dirname "$0")/../.." && pwd)/docs/tiers.md
wine_setup main ward.exe ward-test.exe win-child.exe

# The workspace and the programs, as Windows paths (Z: is Wine's /).
ws=$T/ws
mkdir -p "$ws" "$T/bin"
cp "$bin/ward.exe" "$bin/ward-test.exe" "$bin/win-child.exe" "$T/bin/"
cp "$bin/win-child.exe" "$ws/"
WS=$(winpath "$ws")
cd "$ws" || exit 1
ward() { wine "$T/bin/ward.exe" "$@"; }
# ward-test.exe: WARD_TEST_WIN_FAULT=job-echo gets past Wine's
# QueryInformationJobObject, which returns zeros (see the W0 test below).
wardt() { WARD_TEST_WIN_FAULT=${FAULT:-job-echo} wine "$T/bin/ward-test.exe" "$@"; }
child() { wine "$T/bin/win-child.exe" "$@"; }

echo "1..44"

out=$(ward --version 2>&1 | strip_cr)
check "ward.exe starts under wine ($out)" test "$out" = "ward 0.1.0 (Windows)"

# Never pretend: Wine gives no tier that isolates, and probe must say so.
ward probe >"$T/probe" 2>&1
strip_cr <"$T/probe" | sed 's/^/# /'
check "probe: W2 unavailable under wine" grep -q '^W2 .*unavailable' "$T/probe"
check "probe: W1 unavailable under wine (the read-back sees the token unchanged)" \
	grep -q '^W1 .*unavailable: .*integrity level' "$T/probe"
check "probe: W1-write unavailable under wine" grep -q '^W1-write .*unavailable' "$T/probe"
check "probe: no default tier under wine" grep -q '^default tier: none' "$T/probe"

# Fail closed, natural: each tier ward.exe cannot prove is refused, and
# the command never ran (its marker file is absent, on the host side).
refused() { # DESC EXPECTED-STEP ward-args...
	local d=$1 step=$2 rc
	shift 2
	rm -f "$ws/marker"
	"$@" -- "$WS\\win-child.exe" write "$WS\\marker" >"$T/out" 2>&1
	rc=$?
	if [ "$rc" -eq 125 ] && [ ! -e "$ws/marker" ] && grep -q "$step" "$T/out"; then
		ok "$d"
	else
		not_ok "$d (exit $rc)"
		strip_cr <"$T/out" | sed 's/^/# /'
	fi
}
refused "default W2 refused: userenv has no CreateAppContainerProfile" \
	"appcontainer: .*CreateAppContainerProfile" ward run
refused "W1 refused: wine cannot read the label back, or the token" \
	"label\\|token-readback" ward run --tier W1
refused "W1-write refused: the DACL or token reads back wrong" \
	"readback" ward run --tier W1-write
refused "W0 refused by ward.exe: wine cannot prove the job's kill-on-close" \
	"job-readback" ward run --tier W0
state=$(echo "$T"/prefix/drive_c/users/*/AppData/Local/ward)
check "a refused run leaves no protected path, journal or lock behind" \
	bash -c "[ ! -e '$ws/.git' ] && [ ! -e '$ws/.codex' ] && ! ls '$state' | grep -q -e journal -e lock"

# Fail closed, injected: the launcher refuses when a read-back disagrees,
# when a userenv function is missing, when the process attribute is
# rejected; in each case the child was never resumed.
FAULT=job-echo,token-lie refused "token read back disagrees: refused before resume" \
	"token-readback" wardt run --tier W0
FAULT=userenv-missing refused "userenv function missing: refused" \
	"CreateAppContainerProfile (injected)" wardt run
FAULT=job-echo,attr-rejected refused "process attribute rejected: refused" \
	"UpdateProcThreadAttribute" wardt run --tier W0
FAULT=job-lie refused "job read back without kill-on-close: refused" \
	"job-readback" wardt run --tier W0

# The policy: the same parser as Linux (src/policy/). A bad policy is
# refused before anything runs, naming the file, the JSON path and what
# was expected (W0 + job-echo: the command would run if it were accepted).
policy_refused() { # DESC PATTERN ward-args...
	local d=$1 pat=$2 rc
	shift 2
	rm -f "$ws/marker"
	wardt run --tier W0 "$@" -- "$WS\\win-child.exe" write "$WS\\marker" >"$T/out" 2>&1
	rc=$?
	if [ "$rc" -eq 125 ] && [ ! -e "$ws/marker" ] && grep -q -- "$pat" "$T/out"; then
		ok "$d"
	else
		not_ok "$d (exit $rc)"
		strip_cr <"$T/out" | sed 's/^/# /'
	fi
}
echo '{"fs": {"read": 3}}' >"$T/bad-type.json"
policy_refused "policy: a wrong type names the file, the JSON path and what was expected" \
	"Invalid policy: .*bad-type.json: fs.read: expected an array of strings, got 3" \
	--policy "$(winpath "$T/bad-type.json")"
echo '{"fs": ' >"$T/bad-syntax.json"
policy_refused "policy: broken JSON names the file and the line" \
	"Invalid policy: .*bad-syntax.json: invalid JSON at line 2" \
	--policy "$(winpath "$T/bad-syntax.json")"
policy_refused "policy: a missing --policy file is an error, not the defaults" \
	"Invalid policy: .*absent.json: cannot open" --policy "$(winpath "$T/absent.json")"
policy_refused "policy: an unknown preset is refused, naming the known ones" \
	'unknown preset "nope" (known: git' --preset nope
policy_refused "policy: the git preset needs fs.sanitize, which ward.exe refuses, not ignores" \
	"fs.sanitize: not available on Windows" --preset git
mkdir -p "$ws/data"
printf '{"env": {"set": {"FROM_POLICY": "yes"}, "pass": ["KEEP_ME"]}, "fs": {"read": ["%s", "~/Documents"]}}' \
	"$(winpath "$ws/data" | sed 's/\\/\\\\/g')" >"$T/good.json"
KEEP_ME=1 wardt run --tier W0 --policy "$(winpath "$T/good.json")" -- \
	"$WS\\win-child.exe" env "$WS\\env2" 2>/dev/null
check "policy: env.set and env.pass of a --policy file reach the command" \
	bash -c "strip_cr() { tr -d '\r'; }; strip_cr <'$ws/env2' | grep -qx FROM_POLICY=yes && strip_cr <'$ws/env2' | grep -qx KEEP_ME=1"
ward run --dry-run --policy "$(winpath "$T/good.json")" -- "$WS\\win-child.exe" exit 0 \
	2>&1 | strip_cr >"$T/plan"
check "policy: fs.read is planned as a read grant; ~ is the user's profile" \
	bash -c "grep -qxF 'grant $WS\\data read (fs.read)' '$T/plan' && grep -q '^grant C:\\\\users\\\\[^\\\\]*\\\\Documents read (fs.read)$' '$T/plan'"

config=$(echo "$T"/prefix/drive_c/users/*/AppData/Roaming)/ward
mkdir -p "$config"
echo '{"env": {"set": {"DEFAULT_POLICY": "loaded"}}}' >"$config/policy.json"
wardt run --tier W0 -- "$WS\\win-child.exe" env "$WS\\env3" 2>/dev/null
rm -f "$config/policy.json"
check "policy: without --policy, %APPDATA%\\ward\\policy.json is the policy" \
	bash -c "tr -d '\r' <'$ws/env3' | grep -qx DEFAULT_POLICY=loaded"

# The run module (src/run/): exit codes, --result, the audit events and
# the tier's gaps come from the same code as on Linux.
json() { # FILE PYTHON-EXPR: true when the expression holds for the JSON in FILE (as j)
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
rm -f "$ws/marker" "$ws/r1.json"
ward run --result "$WS\\r1.json" -- "$WS\\win-child.exe" write "$WS\\marker" >/dev/null 2>&1
check "result: a refused W2 run says exit 125, not started, the step, tier 2; nothing ran" \
	bash -c "[ ! -e '$ws/marker' ] && $(declare -f json); json '$ws/r1.json' \"j['exit_code'] == 125 and j['started'] is False and j['setup_step'] == 'appcontainer' and j['tier'] == 2 and 'CreateAppContainerProfile' in j['error']\""
wardt run --tier W0 --result "$WS\\r2.json" -- "$WS\\win-child.exe" exit 7 >/dev/null 2>&1
check "result: a W0 run's exit code and status (7), tier 0, and the table's gaps in not_held" \
	json "$ws/r2.json" "j['exit_code'] == 7 and j['status'] == 7 and j['started'] and j['tier'] == 0 and {'reads', 'writes', 'network'} <= set(j['not_held']) and 'protected' in j['partly_held']"
session=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$ws/r2.json")
python3 - "$state/audit.jsonl" "$session" >"$T/audit" 2>&1 <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
mine = [e for e in ev if e.get("session") == sys.argv[2]]
start = [e for e in mine if e["event"] == "start"]
end = [e for e in mine if e["event"] == "exit"]
assert start and start[0]["windows_tier"] == "W0" and start[0]["tier"] == 0, mine
assert "reads" in start[0]["not_held"] and start[0]["degraded"], start
assert end and end[0]["exit_code"] == 7, mine
assert any(e["event"] == "error" and e.get("step") == "appcontainer" for e in ev), ev
PY
check "audit: start (windows_tier W0, not_held, degraded) and exit (7) for the run; error for the refused one" \
	test ! -s "$T/audit"
strip_cr <"$T/audit" | sed 's/^/# /'
rm -f "$ws/r3.json"
ward run --tier W9 --result "$WS\\r3.json" -- "$WS\\win-child.exe" exit 0 >"$T/out" 2>&1
rc=$?
check "a usage error exits 125 and still leaves its result (setup_step arguments)" \
	bash -c "[ $rc -eq 125 ] && $(declare -f json); json '$ws/r3.json' \"j['setup_step'] == 'arguments' and 'W9' in j['error']\""
policy_refused "--strict refuses W0's degraded protections before anything runs" \
	"Refusing to run with --strict: degraded protections" --strict
echo '{"tier": 0}' >"$T/tier0.json"
wardt run --policy "$(winpath "$T/tier0.json")" --result "$WS\\r4.json" -- "$WS\\win-child.exe" exit 3 \
	>/dev/null 2>&1
check "a policy's \"tier\": 0 chooses W0 when --tier is not given" \
	json "$ws/r4.json" "j['exit_code'] == 3 and j['tier'] == 0"
rm -f "$ws/r5.json"
wardt run --tier W1-write --result "$WS\\r5.json" -- "$WS\\win-child.exe" write "$WS\\marker" >/dev/null 2>&1
check "W1-write is tier 4 in the result; refused under wine, nothing ran" \
	bash -c "[ ! -e '$ws/marker' ] && $(declare -f json); json '$ws/r5.json' \"j['tier'] == 4 and j['exit_code'] == 125 and not j['started']\""

# The tier table: ward.exe prints the Windows rows of src/probe/tiers.c,
# which docs/tiers.md carries word for word.
ward probe --table 2>&1 | strip_cr >"$T/table"
if [ -r "$docs" ]; then
	check "probe --table: the Windows rows, with what is verified, as in docs/tiers.md" \
		bash -c "grep -q '^| guarantee (Windows) | W0 | W1 | W1-write | W2 | sandbox-user | verified |' '$T/table' && grep -Fxf '$T/table' '$docs' | diff -q - '$T/table' >/dev/null"
else # the unprivileged user's copy of the tests has no docs/ (the root run compares)
	check "probe --table: the Windows rows, with what is verified" \
		grep -q '^| guarantee (Windows) | W0 | W1 | W1-write | W2 | sandbox-user | verified |' "$T/table"
fi
ward probe --tier W2 2>&1 | strip_cr >"$T/facts"
check "probe --tier W2: what W2 holds, and that enforcement is not verified until real Windows" \
	bash -c "grep -q '^  reads confined .*held .*AppContainer' '$T/facts' && grep -q 'not verified until a real Windows machine' '$T/facts'"

# Plumbing (W0 + job-echo: no isolation claimed).
wardt run --tier W0 -- "$WS\\win-child.exe" exit 7 2>/dev/null
check "the command's exit code is ward's (7)" test $? -eq 7

# A grandchild dies with the job: first the control (without ward it
# survives its parent), then through ward.
child spawn-grandchild "$WS\\gc0" 2>/dev/null
gc0=$(strip_cr <"$ws/gc0")
check "control: a grandchild outlives its parent without a job" child alive "$gc0"
child kill "$gc0" >/dev/null 2>&1
wardt run --tier W0 -- "$WS\\win-child.exe" spawn-grandchild "$WS\\gc1" 2>/dev/null
gc1=$(strip_cr <"$ws/gc1")
if [ -n "$gc1" ] && ! child alive "$gc1"; then
	ok "the grandchild died with the job (kill-on-close)"
else
	not_ok "the grandchild $gc1 outlived the run"
	child kill "$gc1" >/dev/null 2>&1
fi

# Command lines through a real child's C runtime.
args=('a b' '' 'q"uote' 'back\slash' 'trail\' 'x\"y' '\\"' 'tab	x' '%PATH%' 'ünï' ' lead')
wardt run --tier W0 -- "$WS\\win-child.exe" argv "$WS\\argv" "${args[@]}" 2>/dev/null
want=$(for a in "${args[@]}"; do printf '%s' "$a" | od -An -tx1 | tr -d ' \n'; echo; done)
got=$(strip_cr <"$ws/argv" 2>/dev/null)
check "argv round-trips through CreateProcessW and the child's C runtime" test "$want" = "$got"

# The environment block: filtered as on Linux, case-insensitively.
# (Wine adds its own WINE* variables and SystemRoot to every process.)
gh_token=leak my_secret_key=leak tz=UTC-3 Foo=bar \
	wardt run --tier W0 -e Foo -- "$WS\\win-child.exe" env "$WS\\env" 2>/dev/null
strip_cr <"$ws/env" >"$T/env"
check "env: gh_token and my_secret_key stripped whatever their case" \
	bash -c "! grep -qi -e '^gh_token=' -e '^my_secret_key=' '$T/env'"
check "env: tz passed as TZ (env.pass is case-insensitive), FOO added by --env" \
	bash -c "grep -qx 'TZ=UTC-3' '$T/env' && grep -qx 'FOO=bar' '$T/env'"
check "env: TEMP is the run's own directory" grep -q '^TEMP=.*\\ward\\tmp\\run-[0-9a-f]\{16\}$' "$T/env"

# PATHEXT resolution: a bare name is found on the PATH the command gets,
# with PATHEXT's extensions; the workspace is not searched implicitly.
PATH_W="$(winpath "$T/bin")"
Path="$PATH_W;C:\\windows\\system32" wardt run --tier W0 -- win-child cwd "$WS\\cwd" 2>/dev/null
check "bare 'win-child' resolved through PATH and PATHEXT; cwd is the workspace" \
	bash -c "[ \"\$(strip_cr() { tr -d '\r'; }; strip_cr <'$ws/cwd')\" = '$WS' ]"
mv "$T/bin/win-child.exe" "$T/bin/hidden.exe"
Path="C:\\windows\\system32" wardt run --tier W0 -- win-child cwd "$WS\\cwd2" >"$T/out" 2>&1
rc=$?
check "the workspace's own win-child.exe is not found by a bare name (exit $rc)" \
	bash -c "[ $rc -eq 125 ] && [ ! -e '$ws/cwd2' ]"
mv "$T/bin/hidden.exe" "$T/bin/win-child.exe"

# A run that died left its journal (its liveness file is gone): the next
# run undoes it first: here, the placeholder it had made.
mkdir "$ws/.agents"
printf 'ward-windows-journal 1\nmkdir\t%s\\.agents\n' "$WS" >"$state/journal-00000000deadbeef"
wardt run --tier W0 -- "$WS\\win-child.exe" exit 0 2>/dev/null
check "a dead run's journal is undone by the next run (placeholder removed, journal gone)" \
	bash -c "[ ! -e '$ws/.agents' ] && [ ! -e '$state/journal-00000000deadbeef' ]"

# A protected path the command creates (.codex did not exist) is moved
# out of the workspace after the run, into ward's quarantine.
wardt run --tier W0 -- "$WS\\win-child.exe" write "$WS\\.codex" 2>"$T/out"
check "a protected path created by the command is quarantined after the run" \
	bash -c "[ ! -e '$ws/.codex' ] && ls '$state'/quarantine/*/.codex >/dev/null && grep -q quarantine '$T/out'"

# Batch files: cmd.exe's own expansion makes % arguments unsafe: refused.
printf '@echo %%1> "%s\\\\bat.out"\r\n' "$WS" >"$ws/b.bat"
wardt run --tier W0 -- "$WS\\b.bat" '%USERNAME%' >"$T/out" 2>&1
rc=$?
check "a batch file with a % argument is refused, not run (exit $rc)" \
	bash -c "[ $rc -eq 125 ] && [ ! -e '$ws/bat.out' ] && grep -q \"holds a '%'\" '$T/out'"

# The audit log's rotation on Windows (win-audit-os.c): renamed away under
# the log's lock, the oldest dropped, every line whole.
for _ in 1 2 3; do
	WARD_AUDIT_MAX_SIZE=300 WARD_AUDIT_KEEP=2 wardt run --tier W0 -- "$WS\\win-child.exe" exit 0 \
		>/dev/null 2>&1
done
check "audit: rotated at WARD_AUDIT_MAX_SIZE, WARD_AUDIT_KEEP files kept, every line whole" \
	bash -c "[ -s '$state/audit.jsonl.1' ] && [ -s '$state/audit.jsonl.2' ] && [ ! -e '$state/audit.jsonl.3' ] &&
		python3 -c 'import json,sys; [json.loads(l) for f in sys.argv[1:] for l in open(f)]' '$state'/audit.jsonl*"

[ "$fails" -eq 0 ]
