#!/usr/bin/env bash
# ward policy check/show through the real CLI, the load order (defaults,
# presets, the user's file), a broken policy running nothing, the
# environment filter, and the audit log's policy hash matching
# `ward policy show`. Runs at --tier 0 where the sandbox is not the point,
# so it works on any kernel.
. "$(dirname "$0")/lib.sh"

D="$WARD_SRC/tests/data/policies"
quiet() { "$@" >/dev/null 2>&1; }

# check: ok and error lines
out=$("$WARD" policy check "$D/valid-full.json" 2>&1)
check_eq "check accepts a valid file" "0 $D/valid-full.json: ok" "$? $out"

out=$("$WARD" policy check "$D/invalid-relative-read.json" 2>&1)
rc=$?
check_eq "check rejects a relative path with 125" 125 "$rc"
check_eq "the error names file, JSON path and expectation" \
	"ward: $D/invalid-relative-read.json: fs.read[2]: expected an absolute path or one starting with \"~/\", got \"foo\"" \
	"$out"

check_eq "check of a missing file exits 125" 125 "$(status_of "$WARD" policy check "$T/nope.json")"
check_eq "check without a file is a usage error" 2 "$(status_of "$WARD" policy check)"
check_eq "a directory is not a policy" 125 "$(status_of "$WARD" policy check "$T")"
mkfifo "$T/fifo"
check_eq "a FIFO is refused, not waited on" 125 "$(status_of timeout 20 "$WARD" policy check "$T/fifo")"
check "policy --help works" quiet "$WARD" policy --help
check "policy show --help works" quiet "$WARD" policy show --help
check "policy check --help works" quiet "$WARD" policy check --help

# One option parser for every subcommand: exact names only (getopt_long
# took any unique prefix), the unknown option named, a usage error (2;
# 125 for ward run, with the --result record still written).
check_eq "policy show: an abbreviation is unknown" 2 \
	"$(status_of "$WARD" policy show --pres node)"
"$WARD" policy show --pres node >/dev/null 2>"$T/abbr.err"
check "the error names the abbreviation" grep -q "unknown option '--pres'" "$T/abbr.err"
check_eq "policy check: an abbreviation is unknown" 2 \
	"$(status_of "$WARD" policy check --he "$D/valid-full.json")"
check_eq "policy check: an option of policy show is unknown" 2 \
	"$(status_of "$WARD" policy check -w "$T" "$D/valid-full.json")"
check_eq "probe: an abbreviation is unknown" 2 "$(status_of "$WARD" probe --js)"
check_eq "probe: a value for a flag is refused" 2 "$(status_of "$WARD" probe --quick=no)"
check_eq "policy check: '--' ends the options" 125 \
	"$(status_of "$WARD" policy check -- --help)"
check_eq "ward run: an abbreviation is unknown (125)" 125 \
	"$(status_of "$WARD" run --tier 0 --result "$T/abbr.json" --allow-d x.org -- touch "$T/abbr-ran")"
check_not "ward run: nothing ran" test -e "$T/abbr-ran"
check "ward run: the --result record names the option" \
	grep -q "unknown option '--allow-d'" "$T/abbr.json"
# shellcheck disable=SC2016 # $0 and $@ are the inner shell's
check_eq "ward run: options after the command are the command's" 0 \
	"$(status_of "$WARD" run --tier 0 sh -c 'echo "$@" >"$0"' "$T/args" -w x --help --)"
check_eq "ward run: ... passed on untouched" "-w x --help --" "$(cat "$T/args" 2>&1)"

# show: valid JSON, reloadable, with ~ expanded against $HOME
"$WARD" policy show --preset node >"$T/show.json" 2>"$T/show.err"
check_eq "show exits 0" 0 $?
check "show prints valid JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/show.json"
check "show expands ~ against HOME (node preset: ~/.npm)" grep -qF "\"$HOME/.npm\"" "$T/show.json"
check "show output passes policy check" quiet "$WARD" policy check "$T/show.json"
check_eq "unknown --preset exits 125" 125 "$(status_of "$WARD" policy show --preset ruby)"

# the user's default file is read; -p replaces it
mkdir -p "$XDG_CONFIG_HOME/ward"
echo '{ "limits": { "pids": 77 } }' >"$XDG_CONFIG_HOME/ward/policy.json"
out=$("$WARD" policy show)
check "show reads \$XDG_CONFIG_HOME/ward/policy.json" grep -q '"pids":[[:space:]]*77' <<<"$out"
echo '{ "limits": { "pids": 88 } }' >"$T/other.json"
out=$("$WARD" policy show -p "$T/other.json")
check "-p FILE is used" grep -q '"pids":[[:space:]]*88' <<<"$out"
check_not "-p FILE replaces the default file" grep -q '"pids":[[:space:]]*77' <<<"$out"

# a deny that contains the workspace is refused
echo "{ \"fs\": { \"deny\": [\"$T\"] } }" >"$T/deny-ws.json"
check_eq "deny containing the workspace exits 125" 125 \
	"$(status_of "$WARD" policy show -p "$T/deny-ws.json" -w "$WS")"

# a broken policy runs nothing (confirmed on the host: no marker file)
echo '{ "fs": { "read": ["relative/path"] } }' >"$XDG_CONFIG_HOME/ward/policy.json"
rc=$(status_of "$WARD" run --tier 0 -- touch "$WS/marker-tier0")
check_eq "ward run with a broken default policy exits 125" 125 "$rc"
check_not "...and ran nothing" test -e "$WS/marker-tier0"
rc=$(status_of "$WARD" run -- touch "$WS/marker-tier2")
check_eq "the same at the default tier" 125 "$rc"
check_not "...and ran nothing" test -e "$WS/marker-tier2"
echo '{ "presets": ["nope"] }' >"$T/bad-preset.json"
rc=$(status_of "$WARD" run --tier 0 -p "$T/bad-preset.json" -- touch "$WS/marker-preset")
check_eq "an unknown preset in -p FILE exits 125" 125 "$rc"
check_not "...and ran nothing" test -e "$WS/marker-preset"
rm -f "$XDG_CONFIG_HOME/ward/policy.json"

# the environment filter (tier 0 filters the environment too)
env_out=$(env GITHUB_TOKEN=ghp_x AWS_SECRET_ACCESS_KEY=a OPENAI_API_KEY=o MY_PASSWORD=p \
	SSH_AUTH_SOCK=/tmp/s UNLISTED_VAR=u LC_ALL=C "$WARD" run --tier 0 -- env)
check "PATH passes" grep -q '^PATH=' <<<"$env_out"
check "LC_* passes" grep -q '^LC_ALL=C$' <<<"$env_out"
for v in GITHUB_TOKEN AWS_SECRET_ACCESS_KEY OPENAI_API_KEY MY_PASSWORD SSH_AUTH_SOCK UNLISTED_VAR; do
	check_not "$v is absent" grep -q "^$v=" <<<"$env_out"
done
env_out=$(env UNLISTED_VAR=u "$WARD" run --tier 0 --env UNLISTED_VAR --env NEW_ONE=1 -- env)
check "--env NAME copies a variable" grep -q '^UNLISTED_VAR=u$' <<<"$env_out"
check "--env NAME=VALUE sets one" grep -q '^NEW_ONE=1$' <<<"$env_out"

# the audit log: modes, JSON lines, and the hash of the effective policy
"$WARD" run --tier 0 -- /bin/true
LOG="$XDG_STATE_HOME/ward/audit.jsonl"
check "the audit log exists" test -f "$LOG"
check_eq "the audit log is mode 600" 600 "$(stat -c %a "$LOG" 2>/dev/null)"
check_eq "the state dir is mode 700" 700 "$(stat -c %a "$XDG_STATE_HOME/ward" 2>/dev/null)"
check "every line is a JSON object with v, ts, event" python3 - "$LOG" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines
for l in lines:
    o = json.loads(l)
    assert list(o)[:3] == ["v", "ts", "event"], o
    assert o["v"] == 1
PY
want=$("$WARD" policy show | head -c -1 | sha256sum | cut -d' ' -f1)
got=$(python3 -c '
import json, sys
starts = [json.loads(l) for l in open(sys.argv[1]) if "\"start\"" in l]
print(starts[-1]["policy_hash"])' "$LOG")
check_eq "start.policy_hash is the SHA-256 of 'ward policy show'" "$want" "$got"

done_testing
