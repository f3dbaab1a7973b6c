#!/usr/bin/env bash
# Red team: a malicious command inside `ward run` (default policy unless a
# check says otherwise) tries to break out; each result is confirmed on the
# host (the file is unchanged, the listener saw nothing, the audit log holds
# no forged line). test-sandbox.sh and test-hardening.sh cover the basics
# (secrets by path/symlink/hardlink/proc root, .git, signals, seccomp
# classes, TIOCSTI); this file covers what they do not.
#
# Known escapes are reported with known_escape: "not ok ... # TODO" while the
# escape works (TAP: an expected failure, so the suite stays green and the
# finding stays visible), and "ok ... # TODO" once fixed (meson reports an
# unexpected pass: turn the check into a plain one then). The findings of
# the first round (init hijack through /proc/1/mem, /proc/1/environ, init's
# inherited fds, nested protected paths, the placeholder cleanup) were
# fixed in dd89032, 41bac4c and 9f4a891 (kill(0) to the harness's process
# group) and are plain checks now.
. "$(dirname "$0")/lib.sh"
require_t2

export PATH=/usr/local/bin:/usr/bin:/bin
: "${WARD_HELPERS:?WARD_HELPERS must point at the built helpers}"
for h in init-hijack sys-probe; do
	[ -x "$WARD_HELPERS/$h" ] || skip_all "helper $h not built"
	cp "$WARD_HELPERS/$h" "$WS/$h"
done
audit_log=$XDG_STATE_HOME/ward/audit.jsonl
policy() { # policy NAME JSON: a policy file outside the workspace
	printf '%s\n' "$2" >"$T/$1.json"
	echo "$T/$1.json"
}
# known_escape DESC CMD...: CMD succeeds when the sandbox holds.
known_escape() {
	local desc=$1
	shift
	_tap_n=$((_tap_n + 1))
	if "$@"; then
		echo "ok $_tap_n - $desc # TODO fixed? make it a plain check"
	else
		echo "not ok $_tap_n - $desc # TODO known escape, see the red-team report"
	fi
}
no_forged() { ! grep -q "\"forged\"" "$audit_log" 2>/dev/null; }
hooks=no
if WARD_TEST_NO_HARDENING=1 "$WARD" run -- ./sys-probe personality 2>&1 |
	grep -q '^personality: ok$'; then
	hooks=yes
fi

mkdir -p "$T/hostdir"
echo "HARNESS-SECRET-$$" >"$T/harness-secret"
chmod 600 "$T/harness-secret"

# --- fds the harness left open ------------------------------------------
# A harness that forgot O_CLOEXEC: a secret file (fd 7) and a host
# directory (fd 8).
out=$("$WARD" run -- sh -c 'ls /proc/self/fd' 7<"$T/harness-secret" 8<"$T/hostdir" 2>&1)
check_eq "the command inherits only stdin, stdout and stderr" "0 1 2 3" "$(echo $out)"

out=$("$WARD" run -- sh -c 'ls -l /proc/1/fd/' 7<"$T/harness-secret" 8<"$T/hostdir" 2>&1)
check "init (pid 1) holds no fd from the harness or ward (audit log, cgroup)" \
	eval '! grep -q "harness-secret\|hostdir\|audit.jsonl\|cgroup" <<<"$out"'

out=$("$WARD" run -- sh -c 'cat /proc/1/fd/7; echo "{\"event\":\"forged\"}" >>/proc/1/fd/3; : >/proc/1/fd/8/planted' \
	7<"$T/harness-secret" 8<"$T/hostdir" 2>&1)
check_not "reopening init's inherited fd through /proc/1/fd does not read the secret" \
	grep -q HARNESS-SECRET <<<"$out"
check "...and no line was forged into the audit log through /proc/1/fd/3" no_forged
check_not "...and nothing was created in the host dir through /proc/1/fd/8" \
	test -e "$T/hostdir/planted"

if [ "$hooks" = yes ]; then
	# The first wall alone (no Landlock, no seccomp: what a kernel without
	# Landlock gets, degraded but still T2).
	out=$(WARD_TEST_NO_HARDENING=1 "$WARD" run -- sh -c 'cat /proc/1/fd/7; : >/proc/1/fd/8/planted-nohard' \
		7<"$T/harness-secret" 8<"$T/hostdir" 2>&1)
	check "without Landlock: /proc/1/fd/7 does not read the harness's secret" \
		eval '! grep -q HARNESS-SECRET <<<"$out"'
	check "without Landlock: nothing is created in the host dir via /proc/1/fd/8" \
		test ! -e "$T/hostdir/planted-nohard"
	rm -f "$T/hostdir/planted-nohard"
else
	ok_skip "built without -Dtest_hooks: no first-wall-only run"
fi

# The test-only switches exist only in test builds (-Dtest_hooks=true, off by
# default); where they do, one variable in ward's environment turns Landlock
# and seccomp off, so a run says so on stderr (and in its audit event).
if [ "$hooks" = yes ]; then
	err=$(WARD_TEST_NO_HARDENING=1 "$WARD" run -- true 2>&1 >/dev/null)
	check "a run with a test switch says so on stderr" grep -qi 'test' <<<"$err"
fi

# --- pid 1: take over init through /proc/1/mem --------------------------
# Init runs ward's code under the sandbox's Landlock and seccomp but holds
# the audit log, the result pipe and the harness's fds. A same-uid,
# dumpable init is open to /proc/1/mem writes (no ptrace syscall needed).
: >"$T/hijack.out"
"$WARD" run -- ./init-hijack 7 "hijack-$$" 7<"$T/harness-secret" >"$T/hijack.out" 2>&1
hst=$?
diag "init-hijack: status $hst: $(tr '\n' ' ' <"$T/hijack.out")"
if grep -q 'not applicable' "$T/hijack.out"; then
	ok_skip "init-hijack is x86-64 only"
	ok_skip "init-hijack is x86-64 only"
	ok_skip "init-hijack is x86-64 only"
else
	check "the command cannot write into init's memory (/proc/1/mem)" \
		eval '! grep -q "wrote .* bytes at" "$T/hijack.out"'
	check "a hijacked init does not read the harness's fd (host: secret not in output)" \
		eval '! grep -q HARNESS-SECRET "$T/hijack.out"'
	check "a hijacked init does not forge audit events (host: audit log)" \
		eval '! grep -q "\"forged\",\"tag\":\"hijack-$$" "$audit_log"'
fi
# A hijacked init clears its PR_SET_PDEATHSIG: SIGKILL ward, and the
# sandbox (init and everything in it) lives on, reparented on the host.
if grep -q 'not applicable' "$T/hijack.out"; then
	ok_skip "init-hijack is x86-64 only"
else
	tag="9$$"
	rm -f "$WS/hijacked"
	"$WARD" run -- sh -c "./init-hijack persist >/dev/null; : >hijacked; exec sleep 9876$tag" \
		>/dev/null 2>&1 &
	wpid=$!
	for _ in $(seq 100); do [ -e "$WS/hijacked" ] && break; sleep 0.1; done
	initpid=$(pgrep -P "$wpid" | head -1)
	init_id=$(proc_id "$initpid")
	kill -KILL "$wpid"
	wait "$wpid" 2>/dev/null
	for _ in $(seq 50); do pgrep -f "^sleep 9876$tag\$" >/dev/null || break; sleep 0.1; done
	check "the sandbox dies with ward even when the command took over init (host: pgrep)" \
		eval '! pgrep -f "^sleep 9876$tag\$" >/dev/null'
	# Clean up what survived: the sandbox's init, if it is still that
	# process (its pid may belong to another test's process by now).
	kill_id KILL "$init_id"
fi
# Controls that do hold today: ptrace and pidfd_getfd are filtered.
out=$("$WARD" run -- python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
pfd = os.pidfd_open(1)
r = libc.syscall(438, pfd, 7, 0)
print("getfd", r, ctypes.get_errno())
r = libc.ptrace(16, 1, 0, 0)
print("attach", r, ctypes.get_errno())
' 7<"$T/harness-secret" 2>&1)
check "pidfd_getfd(init, 7) is refused with EPERM" grep -q '^getfd -1 1$' <<<"$out"
check "ptrace(PTRACE_ATTACH, 1) is refused with EPERM" grep -q '^attach -1 1$' <<<"$out"

# --- signalling init -----------------------------------------------------
st=$(status_of "$WARD" run -- sh -c 'kill -KILL 1; kill -STOP 1; kill -SEGV 1; sleep 0.2; exit 9' "sig-init-$$")
check_eq "signals to init from inside are ignored: the command's status comes back" 9 "$st"
check_not "...and nothing of that run is left" eval 'pgrep -f "exit 9 sig-init-$$" >/dev/null'


# --- the harness's process group ------------------------------------------
# The command stays in the harness's process group, so kill(0, SIG) from
# inside the pid namespace reaches host processes of that group. Run the
# group under setsid (this script is not in it) with a sentinel that logs
# the signals it gets: SIGHUP from the sandbox, then SIGURG from the host
# as a marker (pending signals are handled lowest number first, so once
# "urg" is logged a HUP sent before it would be logged too).
pg_run() { # pg_run TAG [ENV...]: runs the group, leaves the log in $T/pg-TAG.log
	local log=$T/pg-$1.log pid
	: >"$log"
	setsid env "${@:2}" bash -c '
		bash -c "trap \"echo hup >>$0\" HUP; trap \"echo urg >>$0\" URG; echo \$\$ >$0.pid; while :; do sleep 0.05; done" "$0" &
		while [ ! -s "$0.pid" ]; do sleep 0.05; done
		"$1" run -- sh -c "kill -HUP 0" >/dev/null 2>&1; true' "$log" "$WARD" </dev/null >/dev/null 2>&1
	pid=$(cat "$log.pid")
	kill -URG "$pid"
	for _ in $(seq 100); do grep -q urg "$log" && break; sleep 0.05; done
	kill "$pid" 2>/dev/null
}
pg_run 1 WARD_X=1
check "control: the sentinel logged the host's marker" grep -q urg "$T/pg-1.log"
check_not "kill(0) from inside does not reach a host process in the harness's process group" \
	grep -q hup "$T/pg-1.log"
if [ "$hooks" = yes ]; then
	pg_run 2 WARD_TEST_NO_HARDENING=1
	check "without Landlock's signal scope: kill(0) does not reach the harness's group" \
		eval '! grep -q hup "$T/pg-2.log"'
else
	ok_skip "built without -Dtest_hooks"
fi

# --- /proc: host-wide knobs -----------------------------------------------
if [ "$(id -u)" -eq 0 ]; then
	cp_before=$(cat /proc/sys/kernel/core_pattern)
	at_exit "[ \"\$(cat /proc/sys/kernel/core_pattern)\" = '$cp_before' ] || echo '$cp_before' >/proc/sys/kernel/core_pattern"
	"$WARD" run -- sh -c 'echo "|/bin/sh -c touch\ /tmp/ward-core-$$" >/proc/sys/kernel/core_pattern' >/dev/null 2>&1
	check_eq "root inside cannot set the host's kernel.core_pattern" "$cp_before" \
		"$(cat /proc/sys/kernel/core_pattern)"
fi
out=$("$WARD" run -- sh -c 'echo h >/proc/sysrq-trigger && echo SYSRQ-OK; echo 1 >/proc/sys/vm/drop_caches && echo DROP-OK' 2>&1)
check_not "/proc/sysrq-trigger and /proc/sys are not writable" grep -q -- '-OK' <<<"$out"
# Init is forked from ward without an exec: its environment is the
# harness's, unfiltered, and readable as /proc/1/environ.
out=$(env ANTHROPIC_API_KEY="sk-ant-RED-$$" GITHUB_TOKEN="ghp_RED$$" "$WARD" run -- sh -c \
	'env; tr "\0" "\n" </proc/1/environ' 2>&1)
check_not "control: the filtered environment of the command has no token" \
	grep -q '^GITHUB_TOKEN=' <<<"$(env GITHUB_TOKEN="ghp_RED$$" "$WARD" run -- env 2>&1)"
check "stripped variables cannot be read from init's /proc/1/environ" \
	eval '! grep -q "RED-$$\|ghp_RED$$" <<<"$out"'

# --- the masks over denied paths --------------------------------------------
echo "DENIED-$$" >"$WS/denied.txt"
pol=$(policy deny "{\"version\":1,\"fs\":{\"deny\":[\"$WS/denied.txt\"]}}")
out=$("$WARD" run -p "$pol" -- sh -c '
umount /ws-denied 2>/dev/null; umount "$PWD/denied.txt" 2>&1; umount -l "$PWD/denied.txt" 2>&1
mount -o remount,rw "$PWD/denied.txt" 2>&1; cat denied.txt; echo END' 2>&1)
check_not "a masked file cannot be unmounted, remounted or read" grep -q "DENIED-$$" <<<"$out"
out=$("$WARD" run -p "$pol" -- python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class H(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("f", ctypes.c_ubyte * 128)]
h = H(); h.bytes = 128; mid = ctypes.c_int()
# a handle for a visible workspace file: the real file system underneath
r = libc.name_to_handle_at(-100, b"init-hijack", ctypes.byref(h), ctypes.byref(mid), 0)
print("n2h", r, ctypes.get_errno())
mfd = os.open(".", os.O_RDONLY)
r = libc.open_by_handle_at(mfd, ctypes.byref(h), os.O_RDONLY)
print("obh", r, ctypes.get_errno())
' 2>&1)
check "open_by_handle_at is refused (EPERM: no CAP_DAC_READ_SEARCH)" grep -q '^obh -1 1$' <<<"$out"
check_eq "the denied file is unchanged on the host" "DENIED-$$" "$(cat "$WS/denied.txt")"
rm -f "$WS/denied.txt"

# --- abstract unix sockets and the host ----------------------------------
if command -v socat >/dev/null; then
	name="ward-red-$$"
	: >"$T/abs.log"
	socat -u "ABSTRACT-LISTEN:$name,fork" "OPEN:$T/abs.log,append" &
	spid=$!
	at_exit "kill_id TERM $(proc_id "$spid")"
	for _ in $(seq 50); do
		grep -q "@$name" /proc/net/unix 2>/dev/null && break
		sleep 0.1
	done
	echo control | socat -u - "ABSTRACT-CONNECT:$name" 2>/dev/null
	for _ in $(seq 50); do [ -s "$T/abs.log" ] && break; sleep 0.1; done
	check_eq "control: the host listener receives from the host" control "$(cat "$T/abs.log")"
	: >"$T/abs.log"
	"$WARD" run -- sh -c "echo FROM-SANDBOX | socat -u - ABSTRACT-CONNECT:$name" >/dev/null 2>&1
	check_not "an abstract unix socket on the host is unreachable (host: listener saw nothing)" \
		grep -q FROM-SANDBOX "$T/abs.log"
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
else
	ok_skip "socat missing"
	ok_skip "socat missing"
fi

# A host process listening on a unix socket inside the workspace (a dev
# server, git's fsmonitor daemon in .git): the netns does not cover
# pathname sockets and Landlock (ABI <= 7) has no right for them.
if command -v socat >/dev/null; then
	: >"$T/unix.log"
	socat -u "UNIX-LISTEN:$WS/app.sock,fork" "OPEN:$T/unix.log,append" &
	upid=$!
	at_exit "kill_id TERM $(proc_id "$upid")"
	for _ in $(seq 50); do [ -S "$WS/app.sock" ] && break; sleep 0.1; done
	"$WARD" run -- sh -c 'echo FROM-SANDBOX | socat -u - UNIX-CONNECT:app.sock' >/dev/null 2>&1
	echo marker | socat -u - "UNIX-CONNECT:$WS/app.sock" 2>/dev/null
	for _ in $(seq 50); do grep -q marker "$T/unix.log" && break; sleep 0.1; done
	check "control: the host listener in the workspace got the host's marker" grep -q marker "$T/unix.log"
	known_escape "a host unix socket in the workspace is unreachable (host: listener saw nothing)" \
		eval '! grep -q FROM-SANDBOX "$T/unix.log"'
	kill "$upid" 2>/dev/null
	wait "$upid" 2>/dev/null
	rm -f "$WS/app.sock"
fi

# --- protected paths and placeholders ------------------------------------
# An existing .git: a hard link to one of its files would be a writable
# name outside the read-only mount.
mkdir -p "$WS/.git/hooks"
echo "[core]" >"$WS/.git/config"
printf '#!/bin/sh\nexit 0\n' >"$WS/.git/hooks/pre-commit"
h1=$(sha256sum <"$WS/.git/config") h2=$(sha256sum <"$WS/.git/hooks/pre-commit")
"$WARD" run -- sh -c 'ln .git/config cfg; ln .git/hooks/pre-commit pc; echo evil >>cfg; echo evil >>pc
cp -a .git g2 && rm -rf g2/hooks && mount --bind g2 .git; mv .git/hooks/pre-commit x
python3 -c "import os; os.rename(\".git/config\", \"c2\")"' >/dev/null 2>&1
check_eq "no hard link, bind or rename changes .git/config (host)" "$h1" "$(sha256sum <"$WS/.git/config")"
check_eq "...nor .git/hooks/pre-commit (host)" "$h2" "$(sha256sum <"$WS/.git/hooks/pre-commit")"
check_eq "...and no hard link to them exists (host: link counts)" "1 1" \
	"$(stat -c %h "$WS/.git/config") $(stat -c %h "$WS/.git/hooks/pre-commit")"
rm -rf "$WS/.git" "$WS/g2" "$WS/cfg" "$WS/pc" "$WS/x" "$WS/c2"

# A protected path below a directory of the workspace: renaming the
# ancestor moves the read-only mount away, and a fresh directory takes
# its place.
mkdir -p "$WS/.github/workflows"
echo original >"$WS/.github/workflows/ci.yml"
pol=$(policy nested '{"version":1,"fs":{"protected":[".git",".github/workflows"]}}')
"$WARD" run -p "$pol" -- sh -c 'echo x >.github/workflows/ci.yml
mv .github .github-moved && mkdir -p .github/workflows && echo evil >.github/workflows/ci.yml' >/dev/null 2>&1
check "a nested protected path cannot be replaced by renaming its parent (host: ci.yml unchanged)" \
	test "$(cat "$WS/.github/workflows/ci.yml")" = original
rm -rf "$WS/.github" "$WS/.github-moved"

# A missing nested protected path: nothing is made for it. The command
# puts a symlink to a host directory where its parent belongs: the
# after-run check moves the symlink out and never follows it.
mkdir -p "$T/victim"
: >"$T/victim/inner"
pol=$(policy ph '{"version":1,"fs":{"protected":[".git","sub/inner"]}}')
"$WARD" run -p "$pol" -- sh -c "ln -s '$T/victim' sub" >/dev/null 2>&1
check "the quarantine does not follow a symlinked parent (host: victim/inner kept)" \
	test -e "$T/victim/inner"
check_not "...and the symlink in place of the protected path's parent is gone (host)" \
	test -L "$WS/sub"
rm -rf "$WS/sub"

# A repository that ships the parent of a nested protected path as a
# symlink to a host directory: refused before any sandbox exists.
mkdir -p "$T/victim2"
ln -s "$T/victim2" "$WS/sub"
check_eq "a symlinked parent of a protected path is refused (exit 125)" 125 \
	"$(status_of "$WARD" run -p "$pol" -- sh -c "echo x >sub/inner")"
check "...and nothing is written through it (host: victim2/inner)" test ! -e "$T/victim2/inner"
rm -f "$WS/sub" "$T/victim2/inner"

# A missing top-level protected name (the default policy): no placeholder;
# what the command makes there, hard links included, does not survive.
out=$("$WARD" run -- sh -c 'echo data >.ward; mkdir -p .agents; ln .ward .harness; ln -s .ward .codex; ls -A' 2>&1)
check_not "no .ward left after a default run (host)" test -e "$WS/.ward"
check_not "...nor a hard link to it under another protected name (host)" test -e "$WS/.harness"
check_not "...nor a symlink (host)" test -L "$WS/.codex"
check_not "...nor a directory (host)" test -e "$WS/.agents"

# --- /dev -----------------------------------------------------------------
out=$("$WARD" run -- sh -c 'mknod /dev/sda2 b 8 2 2>&1; : >/dev/newnode 2>&1; mknod ./blk b 8 0 2>&1; ls /dev' 2>&1)
check_not "no device node can be made in /dev or the workspace (host)" test -e "$WS/blk"
check_not "/dev stays minimal" grep -q 'newnode\|sda2' <<<"$("$WARD" run -- ls /dev 2>&1)"
# The nodes are the host's inodes, owned by the sandbox's root when the
# caller is root: their mode, owner and times must not change through the
# view (a rw bind let `chmod 600 /dev/null` inside change the host's).
dev_before=$(stat -c '%a %u %g %Y %Z' /dev/full /dev/null)
sleep 0.01
"$WARD" run -- sh -c 'chmod 666 /dev/full; touch -d 2001-01-01 /dev/full; chown 0:0 /dev/full;
	chmod 666 /dev/null; touch /dev/null' >/dev/null 2>&1
dev_after=$(stat -c '%a %u %g %Y %Z' /dev/full /dev/null)
[ "$(stat -c %Y /dev/full)" = 978307200 ] && touch /dev/full # a regression's damage undone
check_eq "/dev nodes: mode, owner and times unchanged on the host" "$dev_before" "$dev_after"
check "/dev/null is still written and /dev/urandom read" \
	"$WARD" run -- sh -c 'echo x >/dev/null && head -c 8 /dev/urandom | wc -c | grep -q 8'
# The same for a file the policy makes readable: at T2 a read-only bind.
mkdir -p "$T/ro"
echo keep >"$T/ro/f"
chmod 644 "$T/ro/f"
printf '{ "version": 1, "fs": { "read": ["%s"] } }\n' "$T/ro" >"$T/ro.json"
ro_before=$(stat -c '%a %Y %Z' "$T/ro/f")
sleep 0.01
"$WARD" run -p "$T/ro.json" -- sh -c "chmod 600 '$T/ro/f'; touch -d 2001-01-01 '$T/ro/f'; exec 3<'$T/ro/f';
	python3 -c 'import os; os.fchmod(3, 0o600)'" >/dev/null 2>&1
check_eq "a read-only file's mode and times unchanged on the host" "$ro_before" "$(stat -c '%a %Y %Z' "$T/ro/f")"

# --- environment ----------------------------------------------------------
out=$(env DB_PASS=x1 MYCORP_CREDS=x2 KUBECONFIG=/k VAULT_ADDR=v SSH_AGENT_PID=1 \
	NPM_CONFIG__AUTH=x3 PGPASSWORD=x4 "$WARD" run -- env 2>&1)
check_not "variables not on env.pass do not reach the command" \
	grep -q '^DB_PASS=\|^MYCORP_CREDS=\|^KUBECONFIG=\|^VAULT_ADDR=\|^SSH_AGENT_PID=\|^NPM_CONFIG__AUTH=\|^PGPASSWORD=' <<<"$out"
check_not "XDG dirs (where ward keeps its state) are not passed" grep -q '^XDG_' <<<"$out"

# --- ward's own state ---------------------------------------------------
before=$(sha256sum "$audit_log" | cut -d' ' -f1)
"$WARD" run -- sh -c "ls -la '$XDG_STATE_HOME' 2>&1; echo x >>'$audit_log' 2>&1; ls /proc/*/fd/ -l 2>/dev/null | grep -c audit" >"$T/state.out" 2>&1
after_lines=$(grep -vc '"event"' "$audit_log")
check_eq "the audit log holds only ward's events (host)" 0 "$after_lines"
[ -n "$before" ] || true

done_testing
