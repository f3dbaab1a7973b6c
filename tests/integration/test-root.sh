#!/usr/bin/env bash
# A root caller gets no stronger sandbox than an unprivileged one (issue 8
# point 5). Every route to a set-uid or set-gid file leaves none on the host,
# for any caller; as root, root-only files of the system (/etc, /usr, /sys,
# /proc) are as unreadable inside as they are to an unprivileged user, while
# the caller's own workspace and home files work as before. Checks that need
# root say "as root" and are skipped otherwise.
. "$(dirname "$0")/lib.sh"
require_t2

export PATH=/usr/local/bin:/usr/bin:/bin
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "python3 not installed"
audit_log=$XDG_STATE_HOME/ward/audit.jsonl
last_start() { grep '"event":"start"' "$audit_log" | tail -1; }
hooks=no
if WARD_TEST_NO_HARDENING=1 "$WARD" run -- sh -c 'touch x; chmod 4755 x' 2>/dev/null &&
	[ -n "$(find x -perm -4000)" ]; then
	hooks=yes
fi
rm -f x

# A writable path outside the workspace, from the policy.
mkdir -p "$HOME/.cache/rw"
printf '{ "version": 1, "fs": { "read_write": ["~/.cache/rw"] } }\n' >"$T/rw.json"

# --- set-id files: every route, checked on the host ------------------------
suid_src=$(find /usr/bin -maxdepth 1 -type f -perm -4000 2>/dev/null | head -1)
# An archive whose members are set-uid and set-gid, made on the host.
"$PY" - "$T/setid.tar" <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    for name, mode in (("tar-suid", 0o4755), ("tar-sgid", 0o2755), ("tar-dir", 0o2775)):
        i = tarfile.TarInfo(name)
        i.mode = mode
        if name == "tar-dir":
            i.type = tarfile.DIRTYPE
            t.addfile(i)
        else:
            i.size = 3
            t.addfile(i, io.BytesIO(b"#!\n"))
EOF
cp "$T/setid.tar" "$WS/setid.tar"

cat >"$WS/setid.py" <<'EOF'
import ctypes, os, stat, sys
d = sys.argv[1]
def attempt(what, fn):
    try:
        fn()
        print(what + ": done")
    except OSError as e:
        print(what + ": " + (os.strerror(e.errno) if e.errno else str(e)))
def p(n): return os.path.join(d, n)
open(p("py-chmod"), "w").close()
attempt("os.chmod 4755", lambda: os.chmod(p("py-chmod"), 0o4755))
attempt("os.chmod 2755", lambda: os.chmod(p("py-chmod"), 0o2755))
fd = os.open(p("py-fchmod"), os.O_WRONLY | os.O_CREAT, 0o755)
attempt("os.fchmod 6755", lambda: os.fchmod(fd, 0o6755))
os.close(fd)
attempt("os.open O_CREAT 4755", lambda: os.close(os.open(p("py-open"), os.O_WRONLY | os.O_CREAT, 0o4755)))
attempt("os.open O_TMPFILE 2755", lambda: os.close(os.open(d, os.O_WRONLY | os.O_TMPFILE, 0o2755)))
attempt("os.mknod S_IFREG 4755", lambda: os.mknod(p("py-mknod"), stat.S_IFREG | 0o4755))
dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
attempt("os.chmod dir_fd 4755", lambda: os.chmod("py-chmod", 0o4755, dir_fd=dfd))
# openat2(2): flags and mode in a struct the filter cannot read.
libc = ctypes.CDLL(None, use_errno=True)
how = (ctypes.c_uint64 * 3)(os.O_WRONLY | os.O_CREAT, 0o4755, 0)
n = libc.syscall(437, dfd, b"py-openat2", ctypes.byref(how), 24)
print("openat2: " + ("done" if n >= 0 else os.strerror(ctypes.get_errno())))
# File capabilities: a VFS_CAP_REVISION_2 blob granting cap_setuid.
blob = bytes([0, 0, 0, 2, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
open(p("py-fcap"), "w").close()
attempt("setxattr security.capability", lambda: os.setxattr(p("py-fcap"), "security.capability", blob))
EOF

setid_run() { # setid_run DIR: every route into DIR (a path the command may write)
	local d=$1
	cat <<EOF
cd '$d' || exit 1
cp /bin/true sh-chmod && chmod 4755 sh-chmod; echo "chmod 4755: \$?"
cp /bin/true sh-chmod-g && chmod g+s sh-chmod-g; echo "chmod g+s: \$?"
cp /bin/true sh-chmod-sym && chmod u=rwxs,go=rx sh-chmod-sym; echo "chmod u+s symbolic: \$?"
install -m 4755 /bin/true sh-install; echo "install -m 4755: \$?"
install -m 2755 /bin/true sh-install-g; echo "install -m 2755: \$?"
${suid_src:+cp -p '$suid_src' sh-cp-p; echo "cp -p: \$?"}
tar -xpf '$WS/setid.tar'; echo "tar -xp: \$?"
tar --same-permissions -xf '$WS/setid.tar' -C '$d' 2>/dev/null; echo "tar --same-permissions: \$?"
$PY '$WS/setid.py' '$d'
EOF
}
for where in workspace rw-path tmp-copied-out; do
	case $where in
	workspace) dir=$WS/setid-ws ;;
	rw-path) dir=$HOME/.cache/rw ;;
	tmp-copied-out) dir=$WS/setid-mv ;;
	esac
	mkdir -p "$dir"
	script=$(setid_run "$dir")
	if [ "$where" = tmp-copied-out ]; then
		# Made in the private /tmp, then moved into the workspace.
		script=$(setid_run /tmp/x)"
cd / && cp -a /tmp/x/. '$dir'/ 2>/dev/null; mv /tmp/x/* '$dir'/ 2>/dev/null; true"
		script="mkdir -p /tmp/x; $script"
	fi
	out=$("$WARD" run -p "$T/rw.json" -- sh -c "$script" 2>&1)
	found=$(find "$dir" -perm /6000 -printf '%m %p\n' 2>/dev/null)
	check_eq "set-id ($where): no set-uid or set-gid file on the host after every route" "" "$found"
	for route in "chmod 4755" "chmod g+s" "chmod u+s symbolic" "install -m 4755" "os.chmod 4755" \
		"os.fchmod 6755" "os.open O_CREAT 4755" "os.mknod S_IFREG 4755"; do
		line=$(grep -m1 "^$route: " <<<"$out")
		case $line in
		"$route: done" | "$route: 0") not_ok "set-id ($where): $route reported success" ;;
		"") not_ok "set-id ($where): $route did not run: $out" ;;
		*) ok "set-id ($where): $route refused ($line)" ;;
		esac
	done
	check_eq "set-id ($where): openat2 answers ENOSYS (callers fall back to openat)" \
		"openat2: Function not implemented" "$(grep -m1 '^openat2: ' <<<"$out")"
	check_not "set-id ($where): openat2 created nothing" test -e "$dir/py-openat2"
	fcap=$("$PY" -c 'import os,sys
try: os.getxattr(sys.argv[1], "security.capability"); print("present")
except OSError: print("absent")' "$dir/py-fcap" 2>&1)
	check_eq "set-id ($where): no file capability on the host" absent "$fcap"
	check "set-id ($where): tar still extracts the member (without set-id)" \
		test -f "$dir/tar-suid"
done
if [ -n "$suid_src" ]; then
	check "set-id: cp -p of $suid_src made a copy (permissions refused, file kept)" \
		test -f "$WS/setid-ws/sh-cp-p"
else
	ok_skip "no set-uid binary in /usr/bin to copy"
fi
# Ordinary modes, sticky bit and directories without set-gid still pass.
out=$("$WARD" run -- sh -c 'mkdir -p m/d && touch m/f && chmod 1777 m/d && chmod 0640 m/f &&
	chmod -R u+rwX,go+rX m && stat -c %a m/d m/f' 2>&1)
check_eq "ordinary chmod (sticky, 0640, -R u+rwX) still works" "1777 644" "$(echo $out)"

if [ "$hooks" = yes ]; then
	rm -rf "$WS/ctl"
	mkdir "$WS/ctl"
	WARD_TEST_NO_HARDENING=1 "$WARD" run -- sh -c "cd ctl && $(setid_run "$WS/ctl")" >/dev/null 2>&1
	check "control: without the filter, the same routes leave set-id files" \
		test -n "$(find "$WS/ctl" -perm /6000)"
else
	ok_skip "control needs the test switches (-Dtest_hooks)"
fi

# --- as root: root-only system files are as hidden as to anyone ---------
if [ "$(id -u)" -ne 0 ]; then
	# Unprivileged runs are unchanged: the whole /sys, no root view.
	"$WARD" run -- true
	check_not "unprivileged: no root-system-files entry in the start event" \
		grep -q root-system-files <<<"$(last_start)"
	check "unprivileged: /sys is the whole sysfs (/sys/kernel, /sys/devices/system)" \
		"$WARD" run -- test -d /sys/kernel -a -d /sys/devices/system/cpu -a -d /sys/class
	for n in 1 2 3 4 5 6; do ok_skip "as root only ($n)"; done
	done_testing
	exit
fi

tag=ward-it-$$-$RANDOM
secret_f=/etc/$tag-0600
secret_g=/etc/$tag-0640
secret_d=/etc/$tag-dir
at_exit "rm -rf '$secret_f' '$secret_g' '$secret_d' '/usr/local/share/$tag'"
echo ROOTSECRET >"$secret_f" && chmod 600 "$secret_f"
echo ROOTSECRET >"$secret_g" && chmod 640 "$secret_g"
mkdir -m 700 "$secret_d" && echo ROOTSECRET >"$secret_d/inner" && chmod 644 "$secret_d/inner"
mkdir -p "/usr/local/share/$tag" && echo ROOTSECRET >"/usr/local/share/$tag/key" &&
	chmod 600 "/usr/local/share/$tag/key"
echo mine >"$WS/own-0600" && chmod 600 "$WS/own-0600"
mkdir -p "$HOME/.config/tool" && echo homefile >"$HOME/.config/tool/conf" &&
	chmod 600 "$HOME/.config/tool/conf"
printf '{ "version": 1, "fs": { "read": ["~/.config/tool"] } }\n' >"$T/home.json"

out=$("$WARD" run -p "$T/home.json" -- sh -c "
	cat '$secret_f' '$secret_g' '$secret_d/inner' '/usr/local/share/$tag/key' 2>/dev/null
	cat own-0600 ~/.config/tool/conf; ls /usr/bin/ls >/dev/null && echo exec-ok" 2>&1)
check_not "as root: 0600, 0640 root files and a 0700 root dir under /etc, /usr are unreadable" \
	grep -q ROOTSECRET <<<"$out"
check "as root: the workspace's own 0600 file stays readable" grep -qx mine <<<"$out"
check "as root: a 0600 file of the caller's under \$HOME named by the policy stays readable" \
	grep -qx homefile <<<"$out"
check "as root: programs in /usr still run" grep -qx exec-ok <<<"$out"
check "control: the secret is readable on the host" grep -q ROOTSECRET "$secret_f"
start=$(last_start)
if grep -q '"degraded":\[[^]]*"root-system-files"' <<<"$start"; then
	ok_skip "as root: idmapped mounts unavailable here (reported degraded)"
else
	check "as root: the start event lists root-system-files as enforced" \
		grep -q '"enforced":\[[^]]*"root-system-files"' <<<"$start"
fi

# /sys and /proc: no entry that only root can read gives root its content.
# shellcheck disable=SC2016 # expanded inside
leak=$("$WARD" run -- sh -c '
	find /sys /proc/sys /proc/tty /proc -xdev \( -path "/proc/[0-9]*" -o -path /proc/self \
		-o -path /proc/thread-self -o -path /proc/net -o -path /proc/sys/net \) -prune -o \
		-type f -user 0 -perm -u=r ! -perm -o=r -print 2>/dev/null |
	while read -r f; do
		n=$(timeout 1 head -c 1 "$f" 2>/dev/null | wc -c)
		[ "$n" -gt 0 ] && echo "$f"
	done' 2>&1)
check_eq "as root: no root-only /sys or /proc entry is readable inside" "" "$leak"
host=$(find /sys/firmware /sys/kernel/slab /proc/slabinfo /proc/timer_list -maxdepth 3 -type f \
	-perm -u=r ! -perm -o=r 2>/dev/null | head -1)
if [ -n "$host" ] && [ "$(head -c 1 "$host" | wc -c)" -gt 0 ]; then
	check_eq "as root: $host (readable by root on the host) gives nothing inside" 0 \
		"$("$WARD" run -- sh -c "head -c 1 '$host' 2>/dev/null | wc -c")"
else
	ok_skip "no root-only /sys or /proc file on this host"
fi
# The /proc/sys masks are kept between runs in /run/ward/proc-sys-masks
# while provably the same (src/linux/root-masks-cache.h). A cache that is
# not provably this kernel's, or that anyone but root could have written,
# is never believed: each is offered with no masks at all, and the run
# must still mask every root-only sysctl (it walks /proc/sys again).
sysctl_leak() {
	# shellcheck disable=SC2016 # expanded inside
	"$WARD" run -- sh -c '
	find /proc/sys -xdev -path /proc/sys/net -prune -o \
		-type f -user 0 -perm -u=r ! -perm -o=r -print 2>/dev/null |
	while read -r f; do
		n=$(timeout 1 head -c 1 "$f" 2>/dev/null | wc -c)
		[ "$n" -gt 0 ] && echo "$f"
	done; echo done' 2>&1
}
cache=/run/ward/proc-sys-masks
"$WARD" run -- true
ro_sysctl=$(find /proc/sys -xdev -path /proc/sys/net -prune -o -type f -user 0 -perm -u=r \
	! -perm -o=r -print 2>/dev/null | head -1)
if [ -f "$cache" ] && [ -n "$ro_sysctl" ]; then
	key=$(head -1 "$cache")
	check "the cache lists $ro_sysctl" grep -qx "F /newroot$ro_sysctl" "$cache"
	printf 'ward-proc-sys-masks 1 %064d\n' 0 >"$cache.test" && mv -f "$cache.test" "$cache"
	check_eq "a cache for another kernel or boot, without masks: still masked" "done" "$(sysctl_leak)"
	check_eq "... and the run wrote the cache for this one again" "$key" "$(head -1 "$cache")"
	printf '%s\n' "$key" >"$cache.test" && chmod 666 "$cache.test" && mv -f "$cache.test" "$cache"
	check_eq "this kernel's key, no masks, writable by others: not believed" "done" "$(sysctl_leak)"
	printf '%s\n' "$key" >"$T/forged" && chmod 600 "$T/forged" && ln -sf "$T/forged" "$cache"
	check_eq "this kernel's key, no masks, a symlink: not believed" "done" "$(sysctl_leak)"
	rm -f "$cache"
	check_eq "no cache: walked, masked" "done" "$(sysctl_leak)"
	check_eq "... and cached again" "$key" "$(head -1 "$cache")"
	check_eq "from the cache: masked" "done" "$(sysctl_leak)"
else
	for n in 1 2 3 4 5 6 7 8; do ok_skip "no root-only sysctl here, or no cache ($n)"; done
fi
check_eq "as root: tools still see CPUs (nproc, /sys/devices/system/cpu/online)" "$(nproc) ok" \
	"$("$WARD" run -- sh -c 'nproc; test -r /sys/devices/system/cpu/online && echo ok' | tr '\n' ' ' |
		sed 's/ $//')"
done_testing
