#!/usr/bin/env bash
# The run boundary through the real CLI: the result object (docs/result.md)
# on --result-fd and --result, complete for every ending; a command cannot
# forge it; a run refused before it starts leaves nothing on the host (no
# session, no start record, no cgroup); tier 0 is an entry of the backend
# table (no proxy variables pointing at the host's ports).
. "$(dirname "$0")/lib.sh"
require_t2
command -v python3 >/dev/null || skip_all "python3 is needed"
audit_log="$XDG_STATE_HOME/ward/audit.jsonl"

# json_check FILE PYTHON-EXPR: the expression over r (the object) holds.
json_check() {
	python3 - "$1" "$2" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
r = json.loads(text)
ok = eval(sys.argv[2])
if not ok:
    print(text, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}
fields='["v","session","exit_code","started","status","signal","timed_out","oom_killed","parent_died","duration_ms","tier","argv","workspace","cow","degraded","not_held","partly_held","setup_step","error","errno","quarantined","protected_check_failed","net_refused","net_refused_more","net_attempts","changes","audit_error","events_lost","managed"]'

# --- --result-fd: one line, the complete object ---------------------------------
"$WARD" run --result-fd 3 -- sh -c 'exit 3' 3>"$T/fd.json" 2>/dev/null
check_eq "--result-fd: the object is one line" 1 "$(wc -l <"$T/fd.json")"
check "--result-fd: v 1, every documented field, exit 3, started" \
	json_check "$T/fd.json" "r['v'] == 1 and list(r) == $fields and r['exit_code'] == 3 and r['status'] == 3 and r['started'] is True and r['setup_step'] is None"
# What the tier does not hold (docs/tiers.md), in the result as in the start event.
"$WARD" run --tier 1 --result-fd 3 -- true 3>"$T/t1.json" 2>/dev/null
check "--tier 1: the result lists what T1 does not hold (host processes visible) and holds in part (reads), not what it holds (writes)" \
	json_check "$T/t1.json" "r['tier'] == 1 and 'processes-invisible' in r['not_held'] and 'reads' in r['partly_held'] and 'writes' not in r['not_held'] and 'writes' not in r['partly_held']"
"$WARD" run --tier 0 --result-fd 3 -- true 3>"$T/t0.json" 2>/dev/null
check "--tier 0: reads are not held" json_check "$T/t0.json" "r['tier'] == 0 and 'reads' in r['not_held']"
"$WARD" run --result "$T/both.json" --result-fd 3 -- true 3>"$T/both-fd.json" 2>/dev/null
check "--result and --result-fd: the same object" \
	python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a != b)' \
	"$T/both.json" "$T/both-fd.json"
check "... and the same session as the audit log's exit event" \
	json_check "$T/both.json" "r['session'] in open('$audit_log').read().splitlines()[-1]"

# --- a command cannot forge the result -------------------------------------------
for tier in 0 1 2; do
	"$WARD" run --tier "$tier" --result-fd 3 -- sh -c 'echo "{\"v\":1,\"exit_code\":0,\"forged\":true}" >&3; exit 5' \
		3>"$T/forge$tier.json" 2>/dev/null
	check "tier $tier: the command cannot write into --result-fd" \
		json_check "$T/forge$tier.json" "'forged' not in r and r['exit_code'] == 5"
	check_eq "tier $tier: ... the fd holds ward's line only" 1 "$(wc -l <"$T/forge$tier.json")"
done

# --- --result-fd that is not open: refused before anything runs ------------------
check_eq "--result-fd 9 not open: exit 125" 125 \
	"$(status_of "$WARD" run --result-fd 9 -- touch "$T/ran-badfd")"
check_not "... and the command did not run" test -e "$T/ran-badfd"
check_eq "--result-fd on a read-only fd: exit 125" 125 \
	"$(status_of "$WARD" run --result-fd 3 -- touch "$T/ran-rofd" 3</dev/null)"
check_not "... and the command did not run" test -e "$T/ran-rofd"

# --- every ending has a complete object -------------------------------------------
"$WARD" run --timeout 1 --result-fd 3 -- sleep 30 3>"$T/to.json" 2>/dev/null
check "a timeout: 124, timed_out, signal 9, status null" \
	json_check "$T/to.json" "list(r) == $fields and r['exit_code'] == 124 and r['timed_out'] and r['signal'] == 9 and r['status'] is None"
"$WARD" run --result-fd 3 -- /nonexistent/cmd 3>"$T/nf.json" 2>/dev/null
check "a command not found: 127, not started, step exec, errno 2" \
	json_check "$T/nf.json" "list(r) == $fields and r['exit_code'] == 127 and r['started'] is False and r['setup_step'] == 'exec' and r['errno'] == 2 and 'command not found' in r['error']"
printf '{"version":1,"limits":{"pids":0}}\n' >"$T/bad.json"
"$WARD" run -p "$T/bad.json" --result-fd 3 -- true 3>"$T/pol.json" 2>/dev/null
check "a policy error: 125, step policy, errno null, the reason" \
	json_check "$T/pol.json" "list(r) == $fields and r['exit_code'] == 125 and r['setup_step'] == 'policy' and r['errno'] is None and 'limits.pids' in r['error'] and r['session']"
"$WARD" run --session nosuchsession --result-fd 3 -- true 3>"$T/ses.json" 2>/dev/null
check "a session that does not exist: 125, step session, an errno" \
	json_check "$T/ses.json" "list(r) == $fields and r['exit_code'] == 125 and r['setup_step'] == 'session' and isinstance(r['errno'], int)"
"$WARD" run --timeout soon --result-fd 3 -- true 3>"$T/use.json" 2>/dev/null
check "a usage error: 125, step arguments, argv null" \
	json_check "$T/use.json" "list(r) == $fields and r['setup_step'] == 'arguments' and r['argv'] is None"
"$WARD" run --tier 0 --strict --result-fd 3 -- touch "$T/ran-strict" 3>"$T/strict.json" 2>/dev/null
check "tier 0 with --strict: refused, degraded names tier-0-no-isolation" \
	json_check "$T/strict.json" "r['setup_step'] == 'strict' and r['degraded'] == ['tier-0-no-isolation']"
check_not "... and the command did not run" test -e "$T/ran-strict"

# --- a refused run leaves nothing on the host -------------------------------------
export XDG_STATE_HOME="$T/fresh-state" XDG_CONFIG_HOME="$T/fresh-config"
"$WARD" run --cow -p "$T/bad.json" -- touch "$T/ran-fresh" 2>/dev/null
check_not "a refused --cow run: the command did not run" test -e "$T/ran-fresh"
check_not "... no session was made" test -e "$T/fresh-state/ward/sessions"
check_not "... no config dir was made" test -e "$T/fresh-config"
check "... the error record is there" grep -q '"event":"error".*"step":"policy"' "$T/fresh-state/ward/audit.jsonl"
check_not "... and no start record" grep -q '"event":"start"' "$T/fresh-state/ward/audit.jsonl"
if [ -d /sys/fs/cgroup ]; then
	sid=$(grep -o '"session":"[0-9a-f]*"' "$T/fresh-state/ward/audit.jsonl" | tail -1 | cut -d'"' -f4)
	check_eq "... and no cgroup of the run" "" \
		"$(find /sys/fs/cgroup -maxdepth 3 -name "ward-$sid*" 2>/dev/null)"
fi
export XDG_STATE_HOME="$T/home/.local/state" XDG_CONFIG_HOME="$T/home/.config"

# --- tier 0 is a table entry: no proxy runs there, so no variables point at one ----
out=$("$WARD" run --tier 0 --allow-domain example.com -- sh -c 'env | grep -ci "_proxy=" || true' 2>/dev/null)
check_eq "tier 0 with --allow-domain: no *_PROXY variable points at the host's ports" 0 "$out"
out=$(HTTP_PROXY=http://evil.test:1 "$WARD" run --env HTTP_PROXY --allow-domain example.com -- \
	sh -c 'echo "$HTTP_PROXY"' 2>/dev/null)
check_eq "T2 proxy mode: HTTP_PROXY is ward's proxy, whatever the caller passed" \
	"http://127.0.0.1:3128" "$out"

done_testing
