#!/usr/bin/env bash
# A live session's commands and /proc (docs/sessions.md, "Each command's
# /proc"): each command sees a /proc of its own pid namespace, with the
# masks of a cold run's — `ps`, /proc/self and /proc/$$ name the command's
# own processes, never the session's pid 1, another command or a
# background one. Both ways a command starts are checked: the spare (stdin
# a pipe) and an init made for the request (stdin a read-only file).
# And the session's pid 1, seen from the host: no capability but those it
# needs to make the next command's init, and a seccomp filter of its own.
. "$(dirname "$0")/lib.sh"
require_t2

LIVE="$XDG_STATE_HOME/ward/live"
TAG="wardproc$$x$RANDOM"
running() { pgrep -f "$1" >/dev/null; }

id=$("$WARD" session new)
check "session new prints an id" test -n "$id"
sup=$(cat "$LIVE/$id/pid" 2>/dev/null)
at_exit '"$WARD" session stop "$id" >/dev/null 2>&1'
echo "ro-$TAG" >"$T/in.txt"

# Two ways in: "spare" (a pipe on stdin) and "own init" (a read-only file).
ex() { # WAY CMD...
	local way=$1
	shift
	if [ "$way" = spare ]; then
		printf '' | "$WARD" exec "$id" -- "$@"
	else
		"$WARD" exec "$id" -- "$@" <"$T/in.txt"
	fi
}

# A background command and a foreground one that stay while the checks run.
"$WARD" exec "$id" --background -- sh -c "sleep 1000; : bg-$TAG"
"$WARD" exec "$id" -- sh -c "sleep 1000; : fg-$TAG" </dev/null >/dev/null 2>&1 &
fg=$!
at_exit "kill $fg 2>/dev/null"
check "control: the background command runs (host)" wait_until running "bg-$TAG"
check "control: the other foreground command runs (host)" wait_until running "fg-$TAG"

for way in spare own; do
	# shellcheck disable=SC2016 # expanded inside
	out=$(ex "$way" sh -c 'tr "\0" " " </proc/$$/cmdline; echo' 2>&1)
	check "$way: /proc/\$\$ is the command's own shell" grep -q "cmdline" <<<"$out"
	# shellcheck disable=SC2016
	check_eq "$way: /proc/self is the shell's own pid (\$\$)" "same" \
		"$(ex "$way" sh -c 'read -r p _ </proc/self/stat; test "$p" = $$ && echo same' 2>&1)"
	out=$(ex "$way" ps -e -o pid=,args= 2>&1)
	st=$?
	check_eq "$way: ps works" 0 "$st"
	check "$way: ps lists itself" grep -q "ps -e" <<<"$out"
	check_not "$way: ps does not list the background command" grep -q "bg-$TAG" <<<"$out"
	check_not "$way: ps does not list another running command" grep -q "fg-$TAG" <<<"$out"
	# pid 1 is the command's own init; the only processes are its own.
	check_eq "$way: ps lists pid 1 (the command's init) and itself only" "2" \
		"$(grep -c . <<<"$out")"
	# shellcheck disable=SC2016
	out=$(ex "$way" sh -c 'cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\0" " "' 2>&1)
	check_not "$way: no /proc entry of the background command" grep -q "bg-$TAG" <<<"$out"
	check_not "$way: no /proc entry of another command" grep -q "fg-$TAG" <<<"$out"
	# The cold run's walls on /proc: read-only entries, masks.
	check_not "$way: /proc/sys is read-only" ex "$way" sh -c "echo x > /proc/sys/kernel/hostname"
	check_not "$way: /proc/sysrq-trigger is read-only" ex "$way" sh -c "echo h > /proc/sysrq-trigger"
done
check "the background command still runs after those (host)" running "bg-$TAG"

# The same /proc mounts as a cold run's: what covers /proc (its options),
# the read-only entries and the masks beneath it, compared mount by mount.
# shellcheck disable=SC2016
tree='awk '\''{ m[$1] = $5; p[$1] = $2; o[$1] = $6 } $5 == "/proc" { top = $1 }
	END { for (i in m) { j = i; while (j != "" && j != top) j = p[j]; if (j == top) print m[i], o[i] } }'\'' /proc/self/mountinfo | sort'
cold=$("$WARD" run -- sh -c "$tree" 2>&1)
check "control: the cold run lists its /proc mounts" grep -q "^/proc/sys ro" <<<"$cold"
for way in spare own; do
	check_eq "$way: the /proc mounts are the cold run's" "$cold" "$(ex "$way" sh -c "$tree" 2>&1)"
done
if [ "$(id -u)" = 0 ]; then
	# shellcheck disable=SC2016
	leak='find /proc -xdev \( -path "/proc/[0-9]*" -o -path /proc/self -o -path /proc/thread-self \
		-o -path /proc/net -o -path /proc/sys/net \) -prune -o -type f -user 0 -perm -u=r ! -perm -o=r -print 2>/dev/null |
	while read -r f; do n=$(timeout 1 head -c 1 "$f" 2>/dev/null | wc -c); [ "$n" -gt 0 ] && echo "$f"; done'
	for way in spare own; do
		check_eq "$way as root: no root-only /proc entry is readable" "" "$(ex "$way" sh -c "$leak" 2>&1)"
	done
else
	ok_skip "not root: no root masks"
	ok_skip "not root: no root masks"
fi

# Past the point where pid 1 builds its shared ruleset afresh (every 256
# inits, sandbox-serve.c): commands still get their /proc, both ways.
for _ in $(seq 1 130); do
	ex spare true
	ex own true
done 2>/dev/null
for way in spare own; do
	# shellcheck disable=SC2016
	check_eq "$way, after 260 commands: /proc/self is the shell's own" "same" \
		"$(ex "$way" sh -c 'read -r p _ </proc/self/stat; test "$p" = $$ && echo same' 2>&1)"
	check_eq "$way, after 260 commands: ps lists pid 1 and itself" "2" \
		"$(ex "$way" ps -e -o pid= 2>&1 | grep -c .)"
done

# --- the session's pid 1, from the host ---
pid1=""
for p in $(pgrep -P "$sup"); do
	grep -q '^NSpid:.*[[:space:]]1$' "/proc/$p/status" 2>/dev/null && pid1=$p
done
check "the session's pid 1 is found" test -n "$pid1"
capeff=$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$pid1/status")
capprm=$(sed -n 's/^CapPrm:[[:space:]]*//p' "/proc/$pid1/status")
capbnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' "/proc/$pid1/status")
# CAP_SYS_ADMIN (21: a pid and a mount namespace, /proc for each command)
# and CAP_SETPCAP (8: the command's init drops the bounding set): 0x200100.
check_eq "pid 1's effective capabilities: CAP_SYS_ADMIN and CAP_SETPCAP only" "0000000000200100" "$capeff"
check_eq "pid 1's permitted capabilities: the same" "0000000000200100" "$capprm"
check_eq "pid 1's bounding set: the same" "0000000000200100" "$capbnd"
check_eq "pid 1 runs under a seccomp filter" "2" "$(sed -n 's/^Seccomp:[[:space:]]*//p' "/proc/$pid1/status")"
check_eq "pid 1 is no_new_privs" "1" "$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' "/proc/$pid1/status")"
# Its filter leaves the commands whole: a command still runs as before.
check_eq "a command still runs under pid 1's filter" "ok" "$(ex spare sh -c 'echo ok')"
check_eq "and one with its own init" "ok" "$(ex own sh -c 'echo ok')"

"$WARD" session stop "$id" >/dev/null 2>&1
gone() { ! pgrep -f "$1" >/dev/null; }
check "stop: the background command is gone (host)" wait_until gone "bg-$TAG"
done_testing
