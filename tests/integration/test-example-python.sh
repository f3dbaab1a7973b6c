#!/usr/bin/env bash
# examples/python/harness.py, the minimal harness of the README, runs as a
# user would run it: a command's result and live events, and in
# copy-on-write mode the pending diff (with the workspace untouched).
. "$(dirname "$0")/lib.sh"

require_t2
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "python3 is needed for the example"
H="$WARD_SRC/examples/python/harness.py"

out=$("$PY" "$H" --ward "$WARD" -- sh -c 'echo hello; exit 3' 2>&1)
rc=$?
check_eq "the harness exits with the command's status" 3 "$rc"
check "it shows the command's output" grep -q '^stdout| hello$' <<<"$out"
check "it shows the start event" grep -q '^event | started (tier 2' <<<"$out"
check "it shows the exit event" grep -q '^event | ended: exit 3 (status 3)' <<<"$out"
check "it shows the result" grep -q '^result| {"exit_code": 3, "status": 3' <<<"$out"

out=$("$PY" "$H" --ward "$WARD" --cow -- sh -c 'echo new >made.txt' 2>&1)
check_eq "--cow: exit 0" 0 "$?"
check "--cow: the start event says copy-on-write" grep -q '^event | started .*copy-on-write' <<<"$out"
check "--cow: the pending change is listed" grep -q '^review| added made.txt$' <<<"$out"
check "--cow: and its diff shown" grep -q '^diff  | +new$' <<<"$out"
check_not "--cow: the workspace on the host is untouched" test -e "$WS/made.txt"

if "$WARD" run --net proxy -- /bin/true >/dev/null 2>&1 && command -v curl >/dev/null; then
	out=$("$PY" "$H" --ward "$WARD" --net proxy -- curl -s -o /dev/null http://refused.example/ 2>&1)
	check "a refused connection is shown as an event" \
		grep -q '^event | connection REFUSED to refused.example:80' <<<"$out"
else
	ok_skip "--net proxy or curl unavailable"
fi

out=$("$PY" "$H" --ward "$WARD" -- /nonexistent-command 2>&1)
check_eq "a command that is not found: 127" 127 "$?"
check "... shown as an error event" grep -q '^event | ward could not run it (exec)' <<<"$out"

done_testing
