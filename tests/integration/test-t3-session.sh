#!/usr/bin/env bash
# Warm tier-3 sessions through the real CLI (docs/t3.md, "Warm sessions"):
# `ward session new --tier 3` boots one VM inside the session's T2 sandbox
# and `ward exec` runs each command in it, with the semantics of a T2
# `ward exec` (test-session.sh is the model): exit codes, stdin to EOF,
# stdout and stderr apart, signals, --timeout ending the command and not
# the VM, the policy's view (a write outside the writable set fails and the
# host file is unchanged), the guest's own kernel; stop, the owner's exit
# and a hostile guest leave no QEMU behind. Each VM boot costs seconds
# under TCG: the checks share one session where they can.
# Needs qemu-system-x86_64 and a guest image whose init serves sessions
# (`ward setup vm`).
. "$(dirname "$0")/lib.sh"

require_t2
command -v qemu-system-x86_64 >/dev/null ||
	skip_all "qemu-system-x86_64 missing (Debian: qemu-system-x86)"
if ! out=$("$WARD" run --tier 3 -- /bin/true 2>&1); then
	case $out in
	*"ward setup vm"*) skip_all "no tier-3 guest image: run 'ward setup vm' (${out//$'\n'/ })" ;;
	*) skip_all "ward run --tier 3 does not work here: ${out//$'\n'/ }" ;;
	esac
fi
me=$(id -u)

# A session's QEMU is named after it (-name ward-session-ID).
qemu_of() { pgrep -f "ward-session-$1" >/dev/null; }
no_qemu() { ! qemu_of "$1"; }

# (--owner: a redirection keeps bash from exec-ing ward in the subshell)
mkdir -p "$T/data"
echo keep >"$T/data/ro"
cat >"$T/policy.json" <<EOF
{ "version": 1, "fs": { "read": ["$T/data"] } }
EOF
if ! id=$("$WARD" session new --tier 3 -p "$T/policy.json" --owner $$ 2>"$T/new.err"); then
	if grep -q "predates warm sessions" "$T/new.err"; then
		skip_all "the guest image's init predates warm sessions: run 'ward setup vm' again"
	fi
	not_ok "session new --tier 3 starts a session: $(tr '\n' ' ' <"$T/new.err")"
	done_testing
	exit
fi
at_exit '"$WARD" session stop "$id" >/dev/null 2>&1'
check "session new --tier 3 prints an id alone" test "$(printf '%s' "$id" | grep -c '^[0-9a-f]\{16\}$')" = 1
check "session new --tier 3: its QEMU runs (ward-session-ID)" qemu_of "$id"

# --- the guest's own kernel ---
guest_kernel=$("$WARD" exec "$id" -- uname -r)
check "kernel: the command runs on the guest's kernel (uname -r differs from the host's)" \
	test -n "$guest_kernel" -a "$guest_kernel" != "$(uname -r)"

# --- exit codes, stdio ---
check_eq "exit status passes through" 7 "$(status_of "$WARD" exec "$id" -- sh -c 'exit 7')"
check_eq "a missing command exits 127" 127 "$(status_of "$WARD" exec "$id" -- no-such-command-t3s)"
check_eq "a signalled command exits 128+N" 143 "$(status_of "$WARD" exec "$id" -- sh -c 'kill -TERM $$')"
check_eq "output that looks like a status is only output" 3 \
	"$(status_of "$WARD" exec "$id" -- sh -c 'echo "status 0"; echo "status 0" >&2; exit 3')"
out=$(printf 'one\ntwo\n' | "$WARD" exec "$id" -- sh -c 'cat; echo eof')
check_eq "stdin to EOF through a pipe" "one
two
eof" "$out"
check_eq "stdin from /dev/null reads EOF" "0" "$("$WARD" exec "$id" -- sh -c 'wc -c' </dev/null | tr -d ' ')"
head -c 300000 /dev/urandom >"$T/in.bin"
"$WARD" exec "$id" -- cat <"$T/in.bin" >"$T/out.bin"
check "stdin: 300 kB of random bytes arrive intact (beyond the stdin window)" cmp -s "$T/in.bin" "$T/out.bin"
check_eq "a command that does not read its stdin does not hold the exec" 4 \
	"$(yes | status_of "$WARD" exec "$id" -- sh -c 'exit 4')"
"$WARD" exec "$id" -- sh -c 'echo to-out; echo to-err >&2' >"$T/out.txt" 2>"$T/err.txt"
check_eq "stdout apart" "to-out" "$(cat "$T/out.txt")"
check_eq "stderr apart" "to-err" "$(cat "$T/err.txt")"
check_eq "the cwd is the workspace" "$WS" "$("$WARD" exec "$id" -- pwd)"
mkdir -p "$WS/sub"
check_eq "--cwd relative to the workspace" "$WS/sub" "$("$WARD" exec "$id" --cwd sub -- pwd)"
check_eq "--env passes a variable the policy passes" "v-t3" \
	"$("$WARD" exec "$id" --env LANG=v-t3 -- sh -c 'echo "$LANG"')"
# The relay takes a request in messages of 64 KiB (vm-relay.h).
big=$(head -c 33000 /dev/zero | tr '\0' a)
check_eq "a request of about 100 kB (two of the relay's messages) arrives whole" 99000 \
	"$("$WARD" exec "$id" -- sh -c 'echo $((${#1} + ${#2} + ${#3}))' _ "$big" "$big" "$big")"

# --- the view: the workspace writable, the rest not ---
"$WARD" exec "$id" -- sh -c 'echo made-in-guest >made.txt'
check_eq "a write in the workspace reaches the host" "made-in-guest" "$(cat "$WS/made.txt" 2>/dev/null)"
echo "host-v1" >"$WS/host.txt"
"$WARD" exec "$id" -- cat host.txt >/dev/null
echo "host-v2" >"$WS/host.txt"
check_eq "a change the host made between two execs is seen by the next" "host-v2" \
	"$("$WARD" exec "$id" -- cat host.txt)"
# Coherence (docs/t3.md): the VM keeps its cache of the trees that are
# read-only in the view across commands, and mounts every other share
# afresh after each command: what the host changed there in between is
# seen, whatever the guest read or ran before.
mkdir -p "$WS/dir"
echo a >"$WS/dir/old.txt"
cp /bin/true "$WS/prog"
"$WARD" exec "$id" -- sh -c 'ls dir; cat dir/old.txt; ./prog; ls dir/new.txt' >/dev/null 2>&1
echo b >"$WS/dir/new.txt"
rm "$WS/dir/old.txt"
cat /bin/false >"$WS/prog"
check_eq "coherence: a file the host made between two execs is seen" b \
	"$("$WARD" exec "$id" -- cat dir/new.txt 2>/dev/null)"
check_eq "coherence: a file the host removed between two execs is gone" "new.txt" \
	"$("$WARD" exec "$id" -- ls dir 2>/dev/null)"
check_eq "coherence: a program the host rewrote in place between two execs runs as rewritten" 1 \
	"$(status_of "$WARD" exec "$id" -- ./prog)"
echo keep2 >"$T/data/ro2"
"$WARD" exec "$id" -- cat "$T/data/ro2" >/dev/null
echo kept >"$T/data/ro2"
check_eq "coherence: a read-only path inside a share with a writable path is refreshed too" kept \
	"$("$WARD" exec "$id" -- cat "$T/data/ro2")"
"$WARD" exec "$id" -- sh -c 'echo guest-1 >g.txt; echo guest-2 >g.txt'
check_eq "coherence: the guest's last write is on the host when ward exec returns" guest-2 \
	"$(cat "$WS/g.txt" 2>/dev/null)"
check_eq "coherence: ... and the next exec reads it back" guest-2 "$("$WARD" exec "$id" -- cat g.txt)"
check_eq "the policy's read-only path is readable" keep "$("$WARD" exec "$id" -- cat "$T/data/ro")"
check "a write to the policy's read-only path fails" \
	eval "! '$WARD' exec '$id' -- sh -c 'echo changed >\"$T/data/ro\"' 2>/dev/null"
check_eq "... and the host file is unchanged" keep "$(cat "$T/data/ro")"
check "a new file in a read-only directory fails, and the host has none" \
	eval "! '$WARD' exec '$id' -- sh -c 'echo x >\"$T/data/planted\"' 2>/dev/null && test ! -e '$T/data/planted'"
check "a new file under /etc fails, and the host has none" \
	eval "! '$WARD' exec '$id' -- sh -c 'echo x >/etc/ward-t3s-$$' 2>/dev/null && test ! -e /etc/ward-t3s-$$"

# --- signals, timeout ---
"$WARD" exec "$id" -- sh -c 'trap "echo got-int; exit 7" INT; echo ready >sig-ready; while :; do sleep 1; done' \
	>"$T/sig.out" 2>/dev/null &
pid=$!
wait_until test -e "$WS/sig-ready"
kill -INT "$pid"
wait "$pid"
check_eq "SIGINT reaches the command (its handler's status)" 7 "$?"
check_eq "... and its handler ran in the guest" "got-int" "$(cat "$T/sig.out")"
# The sleep outlasts the outer bound: a timeout that did not end the
# command (only waited for it) shows as that bound's 137, not as 124.
check_eq "--timeout ends the command (124)" 124 \
	"$(status_of timeout -s KILL 60 "$WARD" exec "$id" --timeout 2 -- sleep 3000)"
check_eq "... and not the VM: the next exec runs" "after-timeout" \
	"$("$WARD" exec "$id" -- echo after-timeout)"
# A client killed mid-command: the command is ended in the guest, and the
# session's one relay takes the next command (not "busy" for ever).
"$WARD" exec "$id" -- sh -c 'echo up >gone-ready; exec sleep 300' >/dev/null 2>&1 &
pid=$!
wait_until test -e "$WS/gone-ready"
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
check "a command whose client was killed ends, and the next exec runs" \
	wait_until "$WARD" exec "$id" -- true
# The command's exit ends the exec, and what it left running is killed
# then, not waited for: the guest's reaper once waited for every process
# of its namespace, so this exec lasted as long as its `sleep` (the
# generous --timeout turns that back into a 124).
check_eq "an exec ends with its command, not with what the command left running" 0 \
	"$(status_of "$WARD" exec "$id" --timeout 120 -- sh -c 'sleep 3000 & echo $! >bg.pid; exit 0')"
check_eq "what a command leaves running ends with it (a pid namespace of its own)" "gone" \
	"$("$WARD" exec "$id" -- sh -c 'kill -0 "$(cat bg.pid)" 2>/dev/null && echo alive || echo gone')"

# --- what tier 3 refuses ---
check_eq "--background is refused at tier 3 (125)" 125 \
	"$(status_of "$WARD" exec "$id" --background -- sleep 1)"
check "... with a reason" eval "'$WARD' exec '$id' --background -- true 2>&1 | grep -q 'not available at tier 3'"

# --- result JSON ---
"$WARD" exec "$id" --result "$T/r.json" -- sh -c 'exit 5' || true
check "--result: exit_code 5, tier 3, an exec_id" \
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not (r["exit_code"]==5 and r["tier"]==3 and "exec_id" in r))' "$T/r.json"

# --- the guest's root (the host's root runs as the guest's) ---
if [ "$me" = 0 ]; then
	mux='for p in /sys/class/virtio-ports/*; do [ "$(cat $p/name)" = ward.mux ] && { (exec 3<>/dev/${p##*/}) 2>/dev/null && echo opened || echo refused; }; done'
	check_eq "hostile: the command (guest root) cannot open the session's port" refused \
		"$("$WARD" exec "$id" -- sh -c "$mux" 2>/dev/null)"
	check_eq "... and the session still works" ok "$("$WARD" exec "$id" -- echo ok)"
fi

# --- stop ---
"$WARD" session stop "$id" >/dev/null
check "stop: no QEMU of the session is left (pgrep on the host)" wait_until no_qemu "$id"
check_eq "stop: a later exec is refused (125)" 125 "$(status_of "$WARD" exec "$id" -- true)"

# --- the owner's exit ends the VM ---
oid=$(sh -c '"$1" session new --tier 3' sh "$WARD" 2>/dev/null)
check "owner: a session whose owner exited stops, and no QEMU is left" \
	eval "test -n '$oid' && wait_until no_qemu '$oid'"

# --- a guest that dies mid-command (the guest's root resets it) ---
if [ "$me" = 0 ]; then
	hid=$("$WARD" session new --tier 3 --owner $$ 2>/dev/null)
	check_eq "hostile: a VM reset mid-command is a failed exec (125), never success" 125 \
		"$(status_of "$WARD" exec "$hid" -- sh -c 'echo b >/proc/sysrq-trigger; sleep 5; exit 0')"
	check_eq "... and the session reports itself dead: the next exec is refused (125)" 125 \
		"$(status_of "$WARD" exec "$hid" -- true)"
	check "... and no QEMU is left" wait_until no_qemu "$hid"
	"$WARD" session stop "$hid" >/dev/null 2>&1
fi

# --- a subverted guest init (test builds: it misbehaves on purpose) ---
if env WARD_TEST_VM_HOSTILE=silent "$WARD" run --tier 3 -- true 2>&1 | grep -q WARD_TEST_VM_HOSTILE; then
	for h in garbage flood double silent; do
		hid=$(WARD_TEST_VM_HOSTILE=$h "$WARD" session new --tier 3 --owner $$ 2>/dev/null)
		r1=$(status_of "$WARD" exec "$hid" -- true)
		r2=$(status_of "$WARD" exec "$hid" -- true)
		if [ "$h" = double ]; then
			# The first status is the guest's word; the forged second one
			# is stale for the next exec, which fails and ends the VM.
			check_eq "hostile: '$h': a stale status is never taken for the next exec (125)" 125 "$r2"
		else
			check_eq "hostile: '$h' on the session's port is a failed exec (125)" 125 "$r1"
			check_eq "hostile: '$h': ... and the session is dead, the next exec refused (125)" 125 "$r2"
		fi
		check "hostile: '$h': ... and no QEMU is left" wait_until no_qemu "$hid"
		"$WARD" session stop "$hid" >/dev/null 2>&1
	done
else
	ok_skip "hostile: the subverted-init cases need a -Dtest_hooks=true build"
fi

done_testing
