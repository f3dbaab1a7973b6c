#!/usr/bin/env bash
# The managed ceiling (docs/policy.md, "The managed ceiling") through the
# real CLI: every source (a workspace policy file, the user's default file,
# flags, presets, session requests) may only narrow within it; a widening
# exits 125 before anything runs, naming the managed rule and the source,
# and the command's marker is checked absent on the host. A ceiling file
# that anyone but root could have written is refused. ward mcp and libward
# are covered in test-mcp.sh and test-libward.sh.
# ward-test: stage
# (run-unpriv.sh calls `test-managed.sh --stage DIR` as root first: the
# ceilings must be root's, in directories only root can write.)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/managed-lib.sh"
if [ "${1:-}" = --stage ]; then
	managed_stage
	exit 0
fi
. "$HERE/lib.sh"
require_t2
managed_dir || skip_all "no root-made directory with the test ceilings (run as root or through run-unpriv.sh)"
M=$MANAGED

# wm CEILING ARGS...: ward with the test ceiling $M/CEILING.
wm() {
	local f=$1
	shift
	WARD_TEST_MANAGED_FILE="$M/$f" "$WARD" "$@"
}

# refused DESC MARKER RULE SOURCE CMD...: CMD exits 125, its stderr names
# the managed rule and the source that asked for more, and MARKER (what
# the command would have made) does not exist on the host.
refused() {
	local desc=$1 marker=$2 rule=$3 src=$4 rc
	shift 4
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	check_eq "$desc: exit 125" 125 "$rc"
	check "$desc: names the managed rule ($rule)" grep -qF -- "$rule" "$T/err"
	check "$desc: names the source ($src)" grep -qF -- "$src" "$T/err"
	check_not "$desc: the command did not run" test -e "$marker"
	[ "$rc" = 125 ] || sed 's/^/# stderr: /' "$T/err"
}

sha=$(sha256sum "$M/main.json" | cut -d' ' -f1)
outside=/var/tmp/ward-managed-marker.$$
at_exit "rm -f '$outside'"

# --- narrowing works ---
check_eq "within the ceiling a run works" 0 "$(status_of wm main.json run -- sh -c 'echo in > in-ws')"
check_eq "and wrote its workspace" in "$(cat "$WS/in-ws" 2>/dev/null)"
check_eq "a flag that narrows (a domain the ceiling allows) works" 0 \
	"$(status_of wm main.json run --allow-domain api.example.com -- sh -c 'echo n > narrow')"
check "and ran" test -f "$WS/narrow"
check_eq "a preset the ceiling allows works" 0 "$(status_of wm main.json run --preset git -- true)"
check_eq "a lower timeout than the ceiling's works" 0 "$(status_of wm main.json run --timeout 30 -- true)"

# --- the ceiling's floors and defaults ---
if [ -r /etc/hostname ] && "$WARD" run -- cat /etc/hostname >/dev/null 2>&1; then
	check_not "the ceiling's fs.deny hides /etc/hostname" wm main.json run -- cat /etc/hostname
else
	ok_skip "/etc/hostname is not readable in a run without the ceiling"
fi
wm main.json policy show >"$T/show.json" 2>"$T/show.err"
check_eq "policy show: the ceiling's maximum is the default timeout" 600 \
	"$(jq -r .limits.timeout_s "$T/show.json")"
check_eq "policy show: the managed file's digest" "$sha" "$(jq -r .managed.sha256 "$T/show.json")"
check "policy show: marks fs.deny as from the ceiling" \
	jq -e '.managed.from_ceiling | map(select(startswith("fs.deny"))) | length == 1' "$T/show.json"
check "policy show: the deny entry is in the policy" \
	jq -e '.fs.deny | index("/etc/hostname")' "$T/show.json"

# --- the digest in --result and the start event ---
wm main.json run --result "$T/res.json" --events-fd 3 -- true 3>"$T/events" 2>/dev/null
check_eq "--result records the ceiling's sha256" "$sha" "$(jq -r .managed.sha256 "$T/res.json")"
check_eq "--result records the ceiling's file" "$M/main.json" "$(jq -r .managed.file "$T/res.json")"
check_eq "the start event records the ceiling's sha256" "$sha" \
	"$(jq -r 'select(.event == "start") | .managed.sha256' "$T/events")"
"$WARD" run --result "$T/res0.json" -- true 2>/dev/null
check_eq "without a ceiling --result has managed: null" null "$(jq -c .managed "$T/res0.json")"

# --- each source that widens is refused ---
cat >"$WS/ward-policy.json" <<JSON
{ "fs": { "read_write": ["/var/tmp"] } }
JSON
refused "a workspace policy (-p) writable outside" "$outside" "fs.read_write" "$WS/ward-policy.json" \
	wm main.json run -p "$WS/ward-policy.json" -- touch "$outside"
check_eq "policy check refuses that file too" 125 \
	"$(status_of wm main.json policy check "$WS/ward-policy.json")"
mkdir -p "$XDG_CONFIG_HOME/ward"
echo '{ "network": { "mode": "proxy", "allow": ["evil.org"] } }' >"$XDG_CONFIG_HOME/ward/policy.json"
refused "the user's default policy file" "$WS/m-default" "network.allow" \
	"$XDG_CONFIG_HOME/ward/policy.json" wm main.json run -- touch "$WS/m-default"
rm -f "$XDG_CONFIG_HOME/ward/policy.json"
refused "--allow-domain outside the allowed domains" "$WS/m-dom" "*.example.com" "<command line>" \
	wm main.json run --allow-domain evil.org -- touch "$WS/m-dom"
refused "--allow-domain the apex of a wildcard" "$WS/m-apex" "network.allow" "<command line>" \
	wm main.json run --allow-domain example.com -- touch "$WS/m-apex"
refused "--tier 0" "$WS/m-t0" "allowed_tiers" "<command line>" \
	wm main.json run --tier 0 -- touch "$WS/m-t0"
refused "--preset outside allowed_presets" "$WS/m-pre" "allowed_presets" "node" \
	wm main.json run --preset node -- touch "$WS/m-pre"
refused "--git commit above git read-only" "$WS/m-git" "git \"read-only\"" "<command line>" \
	wm main.json run --git commit -- touch "$WS/m-git"
refused "--timeout above the maximum" "$WS/m-to" "limits.timeout_s" "<command line>" \
	wm main.json run --timeout 601 -- touch "$WS/m-to"
echo '{ "limits": { "pids": 4096 } }' >"$T/pids.json"
refused "a file's limit above the maximum" "$WS/m-pids" "limits.pids" "$T/pids.json" \
	wm main.json run -p "$T/pids.json" -- touch "$WS/m-pids"
refused "--net proxy above network.mode none" "$WS/m-net" "network.mode" "<command line>" \
	wm netnone.json run --net proxy -- touch "$WS/m-net"
refused "--allow-host-port under network.mode none" "$WS/m-hp" "network.host_ports" "<command line>" \
	wm netnone.json run --allow-host-port 5432 -- touch "$WS/m-hp"
ows=/var/tmp/ward-managed-ws.$$
mkdir -p "$ows"
at_exit "rm -rf '$ows'"
refused "a workspace outside the writable paths" "$ows/m" "fs.read_write" "workspace" \
	wm main.json run -w "$ows" -- touch "$ows/m"
# A symlink inside an allowed tree that leads out of it is outside.
mkdir -p "$ows/dir"
ln -s "$ows/dir" "$WS/link-out"
echo "{ \"fs\": { \"read_write\": [\"$WS/link-out\"] } }" >"$T/link.json"
refused "a writable path through a symlink leading out" "$ows/dir/m" "resolves to" "$T/link.json" \
	wm main.json run -p "$T/link.json" -- touch "$WS/link-out/m"
# Readable paths: a file, and the certificate variables ward makes readable.
echo secret >"$ows/ca.pem"
echo "{ \"fs\": { \"read\": [\"$ows/ca.pem\"] } }" >"$T/read.json"
refused "a readable path outside fs.read" "$WS/m-read" "fs.read" "$T/read.json" \
	wm reads.json run -p "$T/read.json" -- sh -c "cat '$ows/ca.pem' > '$WS/m-read'"
refused "SSL_CERT_FILE naming a file outside fs.read" "$WS/m-ca" "fs.read" "the environment" \
	env SSL_CERT_FILE="$ows/ca.pem" WARD_TEST_MANAGED_FILE="$M/reads.json" "$WARD" run -- \
	sh -c "cat '$ows/ca.pem' > '$WS/m-ca'"
check_eq "a run within the readable paths works" 0 \
	"$(status_of wm reads.json run -- sh -c 'cat /etc/passwd > reads-ok')"
check "and read what it may" test -s "$WS/reads-ok"
wm main.json run --result "$T/res-ref.json" --allow-domain evil.org -- true 2>/dev/null
check_eq "a refused run's result names the step" ceiling "$(jq -r .setup_step "$T/res-ref.json")"
check_eq "and records the ceiling's sha256" "$sha" "$(jq -r .managed.sha256 "$T/res-ref.json")"

# --- tiers: the default becomes an allowed one ---
wm tier1.json run --result "$T/res-t1.json" -- true 2>/dev/null
check_eq "allowed_tiers [1]: a run without --tier gets tier 1" 1 "$(jq -r .tier "$T/res-t1.json")"
refused "allowed_tiers [1]: --tier 2" "$WS/m-t2" "allowed_tiers" "<command line>" \
	wm tier1.json run --tier 2 -- touch "$WS/m-t2"

# --- the readiness probe ---
out=$(wm tier1.json probe --ready)
check_eq "probe --ready: allowed_tiers [1] is ready here" 0 "$?"
check "probe --ready: names the tier and the ceiling ($out)" grep -q "tier 1 within the managed ceiling" <<<"$out"
check_eq "probe --ready: a refused managed file is not ready" 125 "$(status_of wm groupw.json probe --ready)"

# --- sessions: copy-on-write required ---
refused "require_cow: a plain run" "$WS/m-cow" "require_cow" "cow" \
	wm cow.json run -- touch "$WS/m-cow"
check_eq "require_cow: ward session new without --cow is refused" 125 \
	"$(status_of wm cow.json session new --storage-only)"
check_eq "require_cow: a live ward session new without --cow is refused" 125 \
	"$(status_of wm cow.json session new)"
plain=$("$WARD" session new --storage-only 2>/dev/null)
refused "require_cow: a run in a plain session" "$WS/m-plain" "require_cow" "cow" \
	wm cow.json run --session "$plain" -- touch "$WS/m-plain"
check_eq "require_cow: a --cow run works" 0 "$(status_of wm cow.json run --cow -- sh -c 'echo c > cowed')"
check_not "and its write stayed in the session" test -e "$WS/cowed"
sid=$(wm cow.json session new --storage-only --cow 2>/dev/null)
check_eq "require_cow: ward session new --cow works" 16 "${#sid}"
check_eq "require_cow: a run in that session works" 0 \
	"$(status_of wm cow.json run --session "$sid" -- sh -c 'echo s > in-session')"
check_not "and its write stayed in the session" test -e "$WS/in-session"
refused "a run in a session that widens" "$WS/m-sess" "network.allow" "<command line>" \
	wm main.json run --session "$sid" --allow-domain evil.org -- touch "$WS/m-sess"

# --- who may have written the ceiling ---
refused "a group-writable managed file" "$WS/m-gw" "writable by its group" "$M/groupw.json" \
	wm groupw.json run -- touch "$WS/m-gw"
refused "a managed file owned by another user" "$WS/m-uid" "owned by uid 65534" "$M/other.json" \
	wm other.json run -- touch "$WS/m-uid"
refused "a managed file in a group-writable directory" "$WS/m-gd" "writable by its group" \
	"$M/groupdir" wm groupdir/main.json run -- touch "$WS/m-gd"
mkdir -p "$T/mine"
echo '{}' >"$T/mine/managed.json"
refused "a managed file of the caller's, under /tmp" "$WS/m-mine" "refusing the managed policy" \
	"$T/mine/managed.json" env WARD_TEST_MANAGED_FILE="$T/mine/managed.json" "$WARD" run -- touch "$WS/m-mine"
check_eq "policy show refuses it too" 125 \
	"$(status_of env WARD_TEST_MANAGED_FILE="$T/mine/managed.json" "$WARD" policy show)"
# In a user namespace of the caller's (unshare -U -r), root's files show as
# uid 65534, an owner no process there can be: accepted, and the rules hold.
if unshare -U -r true 2>/dev/null; then
	out=$(unshare -U -r env WARD_TEST_MANAGED_FILE="$M/main.json" "$WARD" policy show 2>&1)
	check_eq "unshare -U -r: root's ceiling (shown as uid 65534, unmapped) is accepted" 0 "$?"
	check "... and applied" grep -q '"sha256"' <<<"$out"
	check_eq "unshare -U -r: a group-writable one is still refused" 125 \
		"$(status_of unshare -U -r env WARD_TEST_MANAGED_FILE="$M/groupw.json" "$WARD" policy show)"
	check_eq "unshare -U -r: the caller's own file (shown as root there) under /tmp is still refused" 125 \
		"$(status_of unshare -U -r env WARD_TEST_MANAGED_FILE="$T/mine/managed.json" "$WARD" policy show)"
else
	ok_skip "unprivileged user namespaces are not available"
fi
check_eq "no managed file: runs as before" 0 \
	"$(status_of env WARD_TEST_MANAGED_FILE=/nonexistent/managed.json "$WARD" run -- true)"

# --- shipping the audit log (WARD_AUDIT_STREAM, the ceiling's audit.stream) ---
# jl FILE FILTER: FILTER true for the JSON lines of FILE (ward's own
# messages on stderr are not JSON).
jl() { grep '^{' "$1" | jq -e -s "map($2) | any" >/dev/null; }
WARD_AUDIT_STREAM=stderr "$WARD" run -- sh -c 'echo out' >"$T/as.out" 2>"$T/as.err"
check "WARD_AUDIT_STREAM=stderr: the start event on stderr" \
	jl "$T/as.err" '.event == "start" and .argv == ["sh", "-c", "echo out"]'
check "and the exit event" jl "$T/as.err" '.event == "exit" and .exit_code == 0'
check_eq "stdout is the command's alone" out "$(cat "$T/as.out")"
: >"$T/sink.log"
WARD_AUDIT_STREAM="$T/sink.log" "$WARD" run -- true 2>/dev/null
check_eq "WARD_AUDIT_STREAM=PATH: the lines are appended there" 2 \
	"$(jq -r 'select(.event == "start" or .event == "exit") | .event' "$T/sink.log" | wc -l)"
refused "WARD_AUDIT_STREAM naming no existing sink" "$WS/m-sink" "audit stream" "$T/no-such-sink" \
	env WARD_AUDIT_STREAM="$T/no-such-sink" "$WARD" run -- touch "$WS/m-sink"
check_not "and it was not created" test -e "$T/no-such-sink"
WARD_AUDIT_STREAM='' wm audit.json run -- true >/dev/null 2>"$T/as2.err"
check "the ceiling's audit.stream sends the lines, whatever the environment says" \
	jl "$T/as2.err" '.event == "start" and (.managed.sha256 | length) == 64'
wm audit.json run --tier 0 -- true >/dev/null 2>"$T/as3.err"
check "a refused run's error event is shipped too" \
	jl "$T/as3.err" '.event == "error" and .step == "ceiling"'

done_testing
