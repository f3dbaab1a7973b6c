#!/usr/bin/env bash
# ward mcp (issue 10, point 4), through the real CLI: a scripted MCP client
# (mcp-client.py, Python standard library) drives full sessions over pipes
# and checks on the host what happened: a run, a diff, an apply and a
# discard; hostile and malformed JSON-RPC (an error each time, never a
# crash); requests that try to widen the sandbox (workspace outside the
# root, a symlink out, a timeout above the server's, policy arguments,
# another workspace's session); and a client that vanishes mid-call (EOF,
# EPIPE, the server killed, a cancellation), after which no process of the
# command remains on the host.
# ward-test: stage
# (run-unpriv.sh calls `test-mcp.sh --stage DIR` as root first: the test
# ceilings, managed-lib.sh.)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/managed-lib.sh"
if [ "${1:-}" = --stage ]; then
	managed_stage
	exit 0
fi
. "$(dirname "$0")/lib.sh"

require_t2
at_exit 'chmod -R u+rwx "$XDG_STATE_HOME" 2>/dev/null'
command -v python3 >/dev/null || skip_all "python3 is missing"

# The workspace root the server is given, and a directory beside it that
# must stay out of reach.
ROOT="$T/root"
OUT="$T/outside"
mkdir -p "$ROOT" "$OUT"

client() {
	local scenario=$1 line
	while IFS= read -r line; do
		case $line in
		"# "*) echo "$line" ;;
		"ok "*) ok "$scenario: ${line#ok }" ;;
		"not ok "*) not_ok "$scenario: ${line#not ok }" ;;
		*) diag "$line" ;;
		esac
	done < <(python3 "$HERE/mcp-client.py" "$scenario" "$ROOT" "$OUT" 2>&1 ||
		echo "not ok the client failed (exit $?)")
}

client session
client malformed
client widen
client queue
if command -v curl >/dev/null; then
	client denials
else
	ok_skip "curl is not installed"
fi
client vanish
client live
if managed_dir; then
	MANAGED_DIR=$MANAGED client managed
else
	ok_skip "no root-made directory with the test ceilings"
fi

# The server refuses bad flags at start, before reading anything.
check_eq "--timeout 0 is a usage error" 2 "$(status_of "$WARD" mcp --timeout 0 </dev/null)"
check_eq "a bad --net is a usage error" 2 "$(status_of "$WARD" mcp --net everywhere </dev/null)"
check_eq "an unknown option is a usage error" 2 "$(status_of "$WARD" mcp --cow-please </dev/null)"
printf '{"version": 1, "fs": {"read": ["relative"]}}\n' >"$T/bad-policy.json"
check_eq "an invalid policy stops the server at start" 2 \
	"$(status_of "$WARD" mcp -p "$T/bad-policy.json" </dev/null)"
check_eq "ward mcp exits 0 at once on an empty stdin" 0 "$(status_of "$WARD" mcp -w "$ROOT" </dev/null)"

done_testing
