#!/usr/bin/env bash
# Seams (issue 8 points 2 and 3, issue 19 points 5 and 6): nothing the
# command plants redirects ward, deny holds in both walls whatever the
# harness hands in on its descriptors, only real workspaces are accepted,
# and ward's own configuration cannot be written from inside. Every check
# looks at the host afterwards: the secret not printed, the log's records
# intact, the victim file unchanged, the planted policy absent.
. "$(dirname "$0")/lib.sh"
require_t2

export PATH=/usr/local/bin:/usr/bin:/bin
quiet() { "$@" >/dev/null 2>&1; }
policy() { # policy NAME JSON: write a policy file outside the workspace
	printf '%s\n' "$2" >"$T/$1.json"
	echo "$T/$1.json"
}
# Do the test-only switches exist in this build? (-Dtest_hooks)
hooks=no
if WARD_TEST_NO_MASKS=1 "$WARD" run -- true 2>&1 | grep -q WARD_TEST_NO_MASKS; then
	hooks=yes
fi

# A denied file of the test's own, readable by the test user: the only
# thing between the command and it is ward's deny. Under /var/tmp, not
# /tmp: inside, /tmp is a writable tmpfs, and Landlock rights follow the
# view's mounts, so a bind beneath it would inherit them (docs/hardening.md).
D=$(mktemp -d /var/tmp/ward-seams.XXXXXX)
at_exit 'rm -rf "$D"'
chmod 755 "$D"
mkdir -p "$D/data/sub"
echo "SECRET-$$-TOKEN" >"$D/data/secret"
echo "SECRET-$$-TOKEN" >"$D/data/sub/secret2"
echo visible >"$D/data/open"
echo visible2 >"$D/data/sub/open2"
deny_pol=$(policy deny "{\"version\":1,\"fs\":{\"read\":[\"$D/data\"],\"deny\":[\"$D/data/secret\",\"$D/data/sub/secret2\"]}}")
secret_seen() { grep -q "SECRET-$$-TOKEN" <<<"$1"; }

# --- point 3: descriptors lead nowhere around deny ------------------------
out=$("$WARD" run -p "$deny_pol" -- sh -c "cat /proc/self/fd/0/secret; cat /proc/self/fd/0/sub/secret2; cat /dev/stdin/secret; cat $D/data/open" <"$D/data" 2>&1)
check_not "stdin a directory: /proc/self/fd/0/<denied> does not read the secret" secret_seen "$out"
check "stdin a directory: the allowed file still reads" grep -q visible <<<"$out"
check "stdin a directory: ward says it gave /dev/null instead" grep -q "fd 0 was a directory" <<<"$out"
# python will not start with a directory on stdin: the shell moves it to fd 5.
out=$("$WARD" run -p "$deny_pol" -- sh -c 'exec 5<&0 </dev/null; exec python3 -c "
import os
for p in (\"secret\", \"sub/secret2\"):
    try:
        fd = os.open(p, os.O_RDONLY, dir_fd=5); print(os.read(fd, 100))
    except OSError as e: print(\"refused\", p, e.errno)
print(\"fd0\", os.readlink(\"/proc/self/fd/5\"))"' <"$D/data" 2>&1)
check_not "stdin a directory: openat(0, <denied>) does not read the secret" secret_seen "$out"
check "stdin a directory: fd 0 inside is /dev/null" grep -q "fd0 /dev/null" <<<"$out"
out=$("$WARD" run -p "$deny_pol" -- sh -c 'cat /proc/self/fd/3/secret; [ -e /proc/self/fd/3 ] && echo FD3-OPEN' 3<"$D/data" 2>&1)
check_not "a directory on fd 3: the secret is not read" secret_seen "$out"
check_not "a directory on fd 3: the descriptor does not reach the command" grep -q FD3-OPEN <<<"$out"
# An O_PATH descriptor on stdin (bash cannot make one: python as the harness).
out=$(python3 - "$WARD" "$deny_pol" "$D/data" <<'EOF' 2>&1
import os, subprocess, sys
ward, pol, data = sys.argv[1:4]
fd = os.open(data, os.O_PATH)
r = subprocess.run([ward, "run", "-p", pol, "--", "sh", "-c",
                    "cat /proc/self/fd/0/secret; cat /proc/self/fd/0/sub/secret2; readlink /proc/self/fd/0"],
                   stdin=fd, capture_output=True, text=True)
print(r.stdout, r.stderr)
EOF
)
check_not "an O_PATH directory on stdin: the secret is not read" secret_seen "$out"
check "an O_PATH directory on stdin: replaced by /dev/null" grep -q "^/dev/null" <<<"$out"
out=$("$WARD" run -p "$deny_pol" -- sh -c "cat /proc/1/cwd/../data/secret /proc/self/root$D/data/secret /proc/self/root$D/data/sub/secret2 /proc/1/root$D/data/secret; cat /proc/self/cwd/../data/sub/secret2" 2>&1)
check_not "/proc/*/cwd and /proc/*/root do not reach a denied file" secret_seen "$out"
if [ "$(id -u)" -eq 0 ]; then
	shadow_line=$(head -c 12 /etc/shadow)
	out=$("$WARD" run -- sh -c 'cat /proc/self/fd/0/etc/shadow /proc/self/root/etc/shadow /proc/1/root/etc/shadow' </ 2>&1)
	check_not "as root, stdin /: /etc/shadow is not read through /proc/self/fd/0" \
		grep -qF "$shadow_line" <<<"$out"
else
	ok_skip "/etc/shadow through stdin /: root only (the secret file above covers it unprivileged)"
fi

# Landlock alone (the masks switched off by a test-only switch): a denied
# file beneath an allowed directory is still unreadable.
if [ "$hooks" = yes ]; then
	out=$(WARD_TEST_NO_MASKS=1 "$WARD" run -p "$deny_pol" -- sh -c "cat $D/data/secret $D/data/sub/secret2; cat $D/data/open $D/data/sub/open2; ls $D/data" 2>&1)
	check_not "without the masks, Landlock alone refuses the denied files" secret_seen "$out"
	check "without the masks, the allowed files beside them still read" \
		grep -q visible2 <<<"$out"
	check "without the masks, the directory still lists" grep -q "^open$" <<<"$out"
	if [ "$(id -u)" -eq 0 ]; then
		out=$(WARD_TEST_NO_MASKS=1 "$WARD" run -- sh -c 'cat /etc/shadow; cat /etc/hostname' 2>&1)
		check_not "as root, without the masks, Landlock alone refuses /etc/shadow" \
			grep -qF "$(head -c 12 /etc/shadow)" <<<"$out"
	else
		ok_skip "/etc/shadow with Landlock alone: root only"
	fi
	# A denied path beneath a writable grant cannot be cut out of Landlock:
	# the run says so.
	mkdir -p "$T/rw/keep"
	rw_pol=$(policy rw "{\"version\":1,\"fs\":{\"read_write\":[\"$T/rw\"],\"deny\":[\"$T/rw/keep\"]}}")
	"$WARD" run -p "$rw_pol" -- true 2>/dev/null
	check "a deny beneath a writable grant is reported degraded" \
		grep -q 'landlock-deny-under-writable' <(grep '"event":"start"' "$XDG_STATE_HOME/ward/audit.jsonl" | tail -1)
	check_eq "... and --strict refuses it" 125 "$(status_of "$WARD" run --strict -p "$rw_pol" -- true)"
else
	for _ in 1 2 3 4 5 6; do ok_skip "needs -Dtest_hooks (WARD_TEST_NO_MASKS)"; done
fi

# --- point 3: an append-only log stays append-only --------------------------
log=$T/harness.log
attacks=(
	': > /proc/self/fd/1'
	'truncate -s0 /proc/self/fd/1'
	'python3 -c "import os; os.ftruncate(1, 0)"'
	'python3 -c "import os, fcntl; fl = fcntl.fcntl(1, fcntl.F_GETFL); fcntl.fcntl(1, fcntl.F_SETFL, fl & ~os.O_APPEND); os.pwrite(1, b\"XXXXXXXXXXXXXXXX\", 0)"'
	'python3 -c "import os; fd = os.open(\"/proc/self/fd/1\", os.O_WRONLY | os.O_TRUNC); os.write(fd, b\"over\")"'
	'python3 -c "import os; fd = os.open(\"/dev/stderr\", os.O_RDWR); os.pwrite(fd, b\"XXXX\", 0)"'
)
for a in "${attacks[@]}"; do
	printf 'record-1\nrecord-2\n' >"$log"
	"$WARD" run -- sh -c "$a; echo after" >>"$log" 2>>"$log"
	check_eq "appended log keeps its records: $a" "record-1 record-2" "$(head -2 "$log" | tr '\n' ' ' | sed 's/ $//')"
	check "... and gets what the command wrote after" grep -q 'after$' "$log"
done
printf 'record-1\n' >"$log"
"$WARD" run -- sh -c 'echo one; echo two >&2; echo three' >>"$log" 2>&1
check_eq "stdout and stderr on one log keep their order" "record-1 one two three" "$(tr '\n' ' ' <"$log" | sed 's/ $//')"
head -c 3000000 /dev/zero | "$WARD" run -- cat >"$T/big"
check_eq "a large output reaches the file whole" 3000000 "$(stat -c %s "$T/big")"
printf 'input-data\n' >"$T/in"
check_eq "a regular file on stdin still reads" "input-data" "$("$WARD" run -- cat <"$T/in" 2>/dev/null)"
"$WARD" run -- sh -c 'echo gone > /proc/self/fd/0; : > /dev/stdin; echo x >&0' <>"$T/in" >/dev/null 2>&1
check_eq "a read-write stdin file cannot be written or truncated" "input-data" "$(cat "$T/in")"

# --- point 2: nothing planted redirects ward --------------------------------
mkdir -p "$T/victimdir"
echo keep >"$T/victimdir/file"
mkdir -p "$WS/project"
quiet "$WARD" run -- ln -s "$T/victimdir" "$WS/project/pkg"
check "the run planted a symlink in the workspace" test -L "$WS/project/pkg"
out=$("$WARD" run -w "$WS/project/pkg" -- touch planted 2>&1)
st=$?
check_eq "ward run -w <planted symlink> exits 125" 125 "$st"
check "... naming the symlink and its target" grep -q "'$WS/project/pkg' is a symlink to '$T/victimdir'" <<<"$out"
check_not "... and the target got nothing" test -e "$T/victimdir/planted"
check_eq "a path through the planted symlink is refused too" 125 \
	"$(status_of "$WARD" run -w "$WS/project/pkg/." -- touch planted2)"
check_eq "the current directory reached through it is refused too" 125 \
	"$(cd "$WS/project/pkg" && status_of "$WARD" run -- touch planted3)"
check_not "... and the target still got nothing" test -e "$T/victimdir/planted3"
check_eq "the real directory is accepted" 0 "$(status_of "$WARD" run -w "$T/victimdir" -- true)"

echo "precious" >"$T/victim"
quiet "$WARD" run -- ln -s "$T/victim" "$WS/result.json"
"$WARD" run --result "$WS/result.json" -- true 2>/dev/null
check_eq "--result through a planted symlink leaves the victim" "precious" "$(cat "$T/victim")"
"$WARD" run --result "$WS/r2.json" -- ln -s "$T/victim" "$WS/r2.json" 2>/dev/null
check_eq "--result planted during the same run leaves the victim" "precious" "$(cat "$T/victim")"
"$WARD" run --result "$WS/r3.json" -- mkfifo "$WS/r3.json" 2>/dev/null
check "--result that the command made a FIFO is not written (no hang)" test -p "$WS/r3.json"
mkdir -p "$WS/out"
quiet "$WARD" run -- sh -c "rmdir out && ln -s $T/victimdir out"
"$WARD" run --result "$WS/out/file" -- true 2>/dev/null
check_eq "--result beneath a planted directory symlink leaves the target" keep "$(cat "$T/victimdir/file")"
"$WARD" run --result "$T/res-ok.json" -- true
check "--result to an ordinary path is written" grep -q '"exit_code"' "$T/res-ok.json"

# --- issue 19 point 6: only real workspaces ---------------------------------
mkdir -p "$HOME/.ssh" "$HOME/.gnupg" "$WS/denied"
ws_deny=$(policy wsdeny "{\"version\":1,\"fs\":{\"deny\":[\"$WS/denied\"]}}")
for w in /etc /usr /usr/lib "$HOME" "$HOME/.ssh" "$HOME/.gnupg" "$T" /; do
	check_eq "-w $w is refused (125)" 125 "$(status_of "$WARD" run -w "$w" -- true)"
done
check_eq "-w a directory the policy denies is refused" 125 \
	"$(status_of "$WARD" run -p "$ws_deny" -w "$WS/denied" -- true)"
ln -s "$HOME" "$T/homelink"
check_eq "the home directory through a symlink is refused" 125 \
	"$(status_of "$WARD" run -w "$T/homelink" -- true)"
out=$("$WARD" run -w "$HOME/.ssh" -- true 2>&1)
check "the refusal says why" grep -q "credential store" <<<"$out"
check_eq "--allow-unsafe-workspace accepts ~/.ssh" 0 \
	"$(status_of "$WARD" run --allow-unsafe-workspace -w "$HOME/.ssh" -- true)"
check_eq "--allow-unsafe-workspace does not accept the home directory" 125 \
	"$(status_of "$WARD" run --allow-unsafe-workspace -w "$HOME" -- true)"

# --- issue 19 point 5: ward's own configuration -----------------------------
rm -rf "$XDG_CONFIG_HOME/ward"
mkdir -p "$XDG_CONFIG_HOME"
cfg_pol=$(policy cfg '{"version":1,"fs":{"read_write":["~/.config","~/.local/state"]}}')
quiet "$WARD" run -p "$cfg_pol" -- sh -c 'mkdir -p ~/.config/ward; echo "{\"version\":1,\"fs\":{\"read_write\":[\"~\"]}}" > ~/.config/ward/policy.json; echo x >> ~/.local/state/ward/audit.jsonl'
check_not "a run with ~/.config writable cannot create ward/policy.json" \
	test -e "$XDG_CONFIG_HOME/ward/policy.json"
check_not "... nor write ward's audit log" grep -q '^x$' "$XDG_STATE_HOME/ward/audit.jsonl"
# (A refused run creates nothing: ward's own dirs are made when a run starts.)
mkdir -p "$XDG_CONFIG_HOME/ward"
printf '{"version":1}\n' >"$XDG_CONFIG_HOME/ward/policy.json"
chmod 664 "$XDG_CONFIG_HOME/ward/policy.json"
out=$("$WARD" run -- true 2>&1)
check_eq "a group-writable policy is refused (125)" 125 "$(status_of "$WARD" run -- true)"
check "... saying why" grep -q "writable by group or others" <<<"$out"
rm -f "$XDG_CONFIG_HOME/ward/policy.json"
printf '{"version":1}\n' >"$WS/pol.json"
ln -s "$WS/pol.json" "$XDG_CONFIG_HOME/ward/policy.json"
check_eq "a default policy that is a symlink (into a workspace) is refused" 125 \
	"$(status_of "$WARD" run -- true)"
rm -f "$XDG_CONFIG_HOME/ward/policy.json"
if [ "$(id -u)" -eq 0 ]; then
	printf '{"version":1}\n' >"$XDG_CONFIG_HOME/ward/policy.json"
	chown nobody "$XDG_CONFIG_HOME/ward/policy.json"
	check_eq "as root: a policy owned by another user is refused" 125 "$(status_of "$WARD" run -- true)"
	rm -f "$XDG_CONFIG_HOME/ward/policy.json"
else
	ok_skip "a policy owned by another user: needs root to chown"
fi
printf '{"version":1}\n' >"$XDG_CONFIG_HOME/ward/policy.json"
chmod 644 "$XDG_CONFIG_HOME/ward/policy.json"
check_eq "control: the user's own 0644 policy is loaded" 0 "$(status_of "$WARD" run -- true)"

done_testing
