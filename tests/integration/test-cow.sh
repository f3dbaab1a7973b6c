#!/usr/bin/env bash
# Copy-on-write sessions through the real CLI: writes stay in the layer
# until apply (checked on the host by checksum), diff shows every kind of
# change, apply refuses protected paths and conflicts, undo restores
# byte-for-byte including modes, discard leaves nothing behind.
. "$(dirname "$0")/lib.sh"

require_t2
# Overlay leaves work/work with mode 000 in each session: let the cleanup in.
at_exit 'chmod -R u+rwx "$XDG_STATE_HOME" 2>/dev/null'

STATE="$XDG_STATE_HOME/ward"
mkdir -p "$T/outside"
echo "outside secret" >"$T/outside/secret"
outside_sum=$(sha256sum <"$T/outside/secret")

# The workspace: every kind of entry the sandbox will change.
printf 'alpha\n' >a
printf 'beta\n' >b
chmod 600 b
printf 'mode\n' >m
printf 'rename me\n' >ren
mkdir d rd
printf 'x\n' >d/x
printf 'y\n' >rd/y
printf 'file to symlink\n' >fs
printf 'conflict base\n' >c
mkdir -p .git/hooks
printf '[core]\n' >.git/config

# Everything that identifies the tree: type, mode, symlink target, content.
snap() {
	(cd "$WS" && find . -printf '%p %y %m %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
}
before=$(snap)
# Session setup must not be older than the files (ctime) by accident.
sleep 0.05

id=$("$WARD" session new --storage-only --cow)
check "session new prints an id alone" test "$(printf '%s' "$id" | grep -c '^[0-9a-f]\{16\}$')" = 1
upper="$STATE/sessions/$id/upper"
check "the upper dir is in the state dir, outside the workspace" test -d "$upper"

"$WARD" run --session "$id" -- sh -c '
	printf "more\n" >>a
	rm b
	chmod 700 m
	mv ren ren2
	mkdir -p newdir/sub && printf "n\n" >newdir/sub/n
	rm -rf rd && printf "now a file\n" >rd
	rm fs && ln -s a fs
	ln -s '"$T/outside/secret"' outlink
	printf "sandbox\n" >c
	rm -rf d && mkdir d && printf "z\n" >d/z
	touch "$(printf "odd\nname")"
' >"$T/run.out" 2>&1
check_eq "the command ran in the session" 0 $?
check_eq "the workspace is untouched after the run" "$before" "$(snap)"

out=$("$WARD" run --session "$id" -- cat a ren2 2>/dev/null)
check_eq "a second run sees the first run's writes" "$(printf 'alpha\nmore\nrename me')" "$out"

# What a sandbox could not do through the read-only bind, injected straight
# into the layer: apply must still refuse it.
mkdir -p "$upper/.git/hooks"
printf '#!/bin/sh\necho pwned\n' >"$upper/.git/hooks/pre-commit"
chmod 755 "$upper/.git/hooks/pre-commit"

stat=$("$WARD" diff "$id" --summary)
check_eq "diff --summary exits 0" 0 $?
has() { printf '%s\n' "$stat" | grep -qxF -- "$1"; }
check "diff: modified" has "modified        a"
check "diff: deleted" has "deleted         b"
check "diff: mode changed" has "mode-changed    m"
check "diff: rename is delete + add (old)" has "deleted         ren"
check "diff: rename is delete + add (new)" has "added           ren2"
check "diff: new directory" has "added           newdir/"
check "diff: new file in new directory" has "added           newdir/sub/n"
check "diff: directory replaced by a file" has "type-changed    rd"
check "diff: file replaced by a symlink" has "type-changed    fs"
check "diff: new symlink" has "added           outlink"
check "diff: directory replaced (opaque)" has "dir-replaced    d/"
check "diff: its old entry deleted" has "deleted         d/x"
check "diff: its new entry added" has "added           d/z"
check "diff: odd name quoted" has 'added           "odd\nname"'
check "diff: protected path refused" has "added           .git/hooks/pre-commit  [refused: protected]"
check_not "diff: no placeholder shows up" has "added           .ward"

sub=$("$WARD" diff "$id" --name-only d)
check_eq "diff DIR selects its subtree" 3 "$(printf '%s\n' "$sub" | wc -l)"
full=$("$WARD" diff "$id" a)
check "diff PATH shows a unified diff" sh -c 'printf "%s\n" "$1" | grep -qx "+more"' _ "$full"
check "diff PATH selects only that path" sh -c '! printf "%s\n" "$1" | grep -q "ren2"' _ "$full"
kinds=$("$WARD" diff "$id" --json | python3 -c '
import json, sys
print(" ".join(sorted(c["path"] + "=" + c["kind"] for c in json.load(sys.stdin))))')
check "diff --json lists kinds" sh -c 'case "$1" in *"rd=type-changed"*"ren2=added"*) exit 0;; esac; exit 1' _ "$kinds"
check_eq "diff of an unknown session fails" 1 "$(status_of "$WARD" diff 0123456789abcdef)"
check_eq "diff without an id is a usage error" 2 "$(status_of "$WARD" diff)"
check_eq "diff --help" 0 "$(status_of "$WARD" diff --help)"
check_eq "an unknown option is a usage error" 2 "$(status_of "$WARD" apply "$id" --bogus)"

# A host edit of c during the session.
printf 'host edit\n' >c
before_apply=$(snap)

# Subset: only newdir.
"$WARD" apply "$id" newdir >/dev/null
check_eq "apply of a subset exits 0" 0 $?
check "subset: newdir/sub/n applied" test "$(cat newdir/sub/n)" = n
check_eq "subset: a untouched" "alpha" "$(cat a)"
check "subset: b still there" test -f b

"$WARD" apply "$id" >"$T/apply.out" 2>"$T/apply.err"
check_eq "apply with refusals exits 3" 3 $?
check "apply names the protected path" grep -q "pre-commit: repository metadata" "$T/apply.err"
check "apply names the conflict" grep -q "Refused c: conflict" "$T/apply.err"
check_not "nothing written into .git/hooks" test -e .git/hooks/pre-commit
check_eq "conflicting host edit kept" "host edit" "$(cat c)"
check_eq "a applied" "$(printf 'alpha\nmore')" "$(cat a)"
check_not "b deleted" test -e b
check_eq "m mode applied" 700 "$(stat -c %a m)"
check_not "ren gone" test -e ren
check_eq "ren2 there" "rename me" "$(cat ren2)"
check "rd is a file" test -f rd
check "fs is a symlink" test -L fs
check_eq "fs points at a" a "$(readlink fs)"
check "outlink applied as a symlink" test -L outlink
check_eq "outlink target kept" "$T/outside/secret" "$(readlink outlink)"
check_eq "the outside file is unchanged" "$outside_sum" "$(sha256sum <"$T/outside/secret")"
check "odd name applied" test -e "$(printf 'odd\nname')"
check_not "replaced dir: old entry gone" test -e d/x
check_eq "replaced dir: new entry there" z "$(cat d/z)"

check_eq "apply of the conflict with --force" 0 "$(status_of "$WARD" apply "$id" c --force)"
check_eq "forced apply wrote c" sandbox "$(cat c)"

# Undo the forced apply, then the main one, then the subset.
check_eq "undo 1" 0 "$(status_of "$WARD" undo "$id")"
check_eq "undo 1 restored c" "host edit" "$(cat c)"
check_eq "undo 2" 0 "$(status_of "$WARD" undo "$id")"
check_eq "undo 3" 0 "$(status_of "$WARD" undo "$id")"
check_eq "undo restores byte for byte, modes included" "$before_apply" "$(snap)"
check_eq "nothing left to undo" 1 "$(status_of "$WARD" undo "$id")"

# Undo refuses a file changed again since the apply.
"$WARD" apply "$id" a >/dev/null
sleep 0.05
printf 'edited after apply\n' >a
check_eq "undo refuses a file changed since apply" 3 "$(status_of "$WARD" undo "$id")"
check_eq "the later edit is kept" "edited after apply" "$(cat a)"

# Sessions list, then discard.
list=$("$WARD" sessions)
check "sessions lists the session" sh -c 'printf "%s\n" "$1" | grep -q "^$2 .* $3\$"' _ "$list" "$id" "$WS"
"$WARD" discard "$id"
check_eq "discard exits 0" 0 $?
check_not "discard removed the session dir" test -e "$STATE/sessions/$id"
check_eq "the session is gone" 1 "$(status_of "$WARD" diff "$id")"
check "audit has apply, undo and discard events" sh -c \
	'grep -q "\"event\":\"apply\"" "$1" && grep -q "\"event\":\"undo\"" "$1" && grep -q "\"event\":\"discard\"" "$1"' \
	_ "$STATE/audit.jsonl"

# A workspace directory swapped for a symlink to the outside after the
# sandbox wrote into it: apply must not write through it, even forced.
mkdir esc
printf 'e\n' >esc/e
sleep 0.05
eid=$("$WARD" session new --storage-only --cow)
"$WARD" run --session "$eid" -- sh -c 'printf "pwned\n" >esc/evil' >/dev/null 2>&1
rm -rf esc
ln -s "$T/outside" esc
check_eq "apply over a swapped-in symlink is refused" 3 "$(status_of "$WARD" apply "$eid")"
"$WARD" apply "$eid" --force >/dev/null 2>&1
check_not "forced apply did not write through the symlink" test -e "$T/outside/evil"
check_eq "the outside file is still unchanged" "$outside_sum" "$(sha256sum <"$T/outside/secret")"
check "esc is a real directory now, holding the new file" test -d esc -a ! -L esc -a -f esc/evil
"$WARD" discard "$eid"

# ward run --cow makes its own session and prints the id on stderr.
"$WARD" run --cow -- sh -c 'echo cow >cowfile' 2>"$T/cow.err"
check_eq "run --cow exits 0" 0 $?
cid=$(grep -o '[0-9a-f]\{16\}' "$T/cow.err" | head -n1)
check "run --cow printed a session id" test -n "$cid"
check_not "run --cow left the workspace alone" test -e cowfile
check "the write is pending in that session" sh -c '"$1" diff "$2" --stat | grep -q cowfile' _ "$WARD" "$cid"
"$WARD" discard "$cid"
check_not "discarded; nothing applied" test -e cowfile

# An edit made just before a session is no conflict: an agent's own write
# followed at once by `ward run --cow` (the start was once taken 20 ms
# early, which refused such files nine times in ten).
fresh_ok=0
for i in 1 2 3 4 5; do
	printf 'agent %s\n' "$i" >fresh
	"$WARD" run --cow -- sh -c 'echo sandbox >>fresh' >/dev/null 2>"$T/fresh.err"
	fid=$(grep -o '[0-9a-f]\{16\}' "$T/fresh.err" | head -n1)
	[ -n "$fid" ] && "$WARD" apply "$fid" >"$T/fresh.out" 2>&1 && fresh_ok=$((fresh_ok + 1))
done
check_eq "an edit right before run --cow is no conflict (5 of 5 applied)" 5 "$fresh_ok"
[ "$fresh_ok" -eq 5 ] || sed 's/^/# /' "$T/fresh.out"
check_eq "... and the applied file holds both writes" "agent 5 sandbox" "$(tr '\n' ' ' <fresh | sed 's/ $//')"

done_testing
