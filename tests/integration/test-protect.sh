#!/usr/bin/env bash
# Protected paths at any depth, and nothing of ward's in the workspace
# (issues 8.1, 9.1, 19.5): repository metadata and the agent and editor
# configurations that run commands are read-only where they exist, and
# whatever the command makes under a protected name does not survive the
# run. Every check looks on the host: git run there executes nothing the
# command wrote (a marker file stays absent), files are unchanged, and the
# workspace holds nothing ward put there, during and after a run.
. "$(dirname "$0")/lib.sh"
require_t2
command -v git >/dev/null || skip_all "git is not installed"

export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
export GIT_CONFIG_NOSYSTEM=1
sha() { sha256sum "$1" | cut -d' ' -f1; }
alive() { pgrep -f "$1" >/dev/null; }
M="$T/marker" # what a planted git config would create on the host
Q="$XDG_STATE_HOME/ward/quarantine"
# The listing of a directory, hidden names included, recursively.
tree() { (cd "$1" && find . -mindepth 1 -not -path './.git/*' | LC_ALL=C sort); }

# --- a superproject with a submodule and a nested repository -------------
git init -q -b main "$T/subsrc"
echo lib >"$T/subsrc/f"
git -C "$T/subsrc" add f && git -C "$T/subsrc" commit -qm lib
git init -q -b main "$WS"
echo top >"$WS/top.txt"
git -C "$WS" add top.txt && git -C "$WS" commit -qm top
git -C "$WS" -c protocol.file.allow=always submodule add -q "$T/subsrc" lib >/dev/null 2>&1
git -C "$WS" commit -qm sub
git init -q -b main "$WS/vendor/x"
echo vendor/ >>"$WS/.git/info/exclude"
mkdir -p "$WS/vendor/x/.git/hooks"
check "setup: lib/.git is a gitfile of a submodule" test -f "$WS/lib/.git"
h_gitmodules=$(sha "$WS/.gitmodules")
h_modcfg=$(sha "$WS/.git/modules/lib/config")
h_vxcfg=$(sha "$WS/vendor/x/.git/config")
h_gitfile=$(sha "$WS/lib/.git")

# The attack of issue 8: replace the submodule's gitfile (by every route)
# with a repository whose config runs a command.
"$WARD" run -- sh -c "
	plant() { git init -q \"\$1\" 2>/dev/null; git -C \"\$1\" config core.fsmonitor 'touch $M' 2>/dev/null; }
	rm -rf lib/.git; mv lib/.git lib/gitfile; echo 'gitdir: ../evil' >lib/.git
	git -C lib config core.fsmonitor 'touch $M'
	echo '[core] fsmonitor = touch $M' >>.git/modules/lib/config
	mv lib lib-old && mkdir lib && plant lib
	mv vendor vendor-old; mv vendor/x vendor/y
	echo '[core] fsmonitor = touch $M' >>vendor/x/.git/config
	printf '#!/bin/sh\ntouch $M\n' >vendor/x/.git/hooks/post-checkout
	printf '[submodule \"lib\"]\n\tpath = lib\n\turl = /evil\n' >.gitmodules
	true" >/dev/null 2>"$T/err"
check_eq "submodule gitfile unchanged (host)" "$h_gitfile" "$(sha "$WS/lib/.git")"
check_eq ".git/modules/lib/config unchanged (host)" "$h_modcfg" "$(sha "$WS/.git/modules/lib/config")"
check_eq "nested repository config unchanged (host)" "$h_vxcfg" "$(sha "$WS/vendor/x/.git/config")"
check_not "no hook planted in the nested repository (host)" test -e "$WS/vendor/x/.git/hooks/post-checkout"
check_eq ".gitmodules unchanged (host)" "$h_gitmodules" "$(sha "$WS/.gitmodules")"
check_not "the submodule's parent could not be renamed away (host)" test -e "$WS/lib-old"
git -C "$WS" status >/dev/null 2>&1
git -C "$WS/lib" status >/dev/null 2>&1
git -C "$WS/vendor/x" status >/dev/null 2>&1
check_not "host git status in the superproject, submodule and nested repo runs nothing planted" test -e "$M"

# Where a repository's config sends git outside .git: a hooks directory
# (core.hooksPath, as husky and ".githooks" setups do) and an included
# config file in the worktree. Both are as sensitive as .git.
mkdir -p "$WS/.githooks"
printf '#!/bin/sh\nexit 0\n' >"$WS/.githooks/pre-commit"
chmod +x "$WS/.githooks/pre-commit"
git -C "$WS" config core.hooksPath .githooks
git -C "$WS" config include.path ../shared.gitconfig
h_hook=$(sha "$WS/.githooks/pre-commit")
"$WARD" run -- sh -c "printf '#!/bin/sh\ntouch $M\n' >.githooks/pre-commit; printf '#!/bin/sh\ntouch $M\n' >.githooks/post-checkout
	chmod +x .githooks/post-checkout; printf '[core]\n\tfsmonitor = touch $M\n' >shared.gitconfig" >/dev/null 2>&1
check_eq "a hook in core.hooksPath (in the worktree) is unchanged (host)" "$h_hook" "$(sha "$WS/.githooks/pre-commit")"
check_not "...and no new hook appears there (host)" test -e "$WS/.githooks/post-checkout"
check_not "a missing file that include.path names does not survive the run (host)" test -e "$WS/shared.gitconfig"
git -C "$WS" status >/dev/null 2>&1
git -C "$WS" checkout -q main 2>/dev/null
check_not "...so host git runs nothing planted" test -e "$M"
git -C "$WS" config --unset core.hooksPath
git -C "$WS" config --unset include.path
rm -rf "$WS/.githooks"

# --- new repositories made by the command do not survive -----------------
out=$("$WARD" run -- sh -c "
	git init -q deep/a/b && git -C deep/a/b config core.fsmonitor 'touch $M' && echo made
	mkdir -p docs/objects docs/refs && echo 'ref: refs/heads/main' >docs/HEAD &&
	printf '[core]\n\tfsmonitor = touch $M\n\tbare = false\n\tworktree = .\n' >docs/config
	echo keep >docs/readme" 2>"$T/err")
check_eq "inside, git init at depth works" made "$out"
check_not "the command's deep/a/b/.git is gone from the workspace (host)" test -e "$WS/deep/a/b/.git"
check_eq "...so host git there finds the superproject" "$WS/.git" \
	"$(git -C "$WS/deep/a/b" rev-parse --absolute-git-dir 2>/dev/null)"
check "...kept in ward's quarantine" test -d "$Q"/*/deep/a/b/.git
check "...and said on stderr" grep -q "deep/a/b/.git" "$T/err"
check_not "docs/ made a repository by the command is not one any more (host: HEAD moved)" \
	test -e "$WS/docs/HEAD"
check "...and the command's own file there is kept" test -e "$WS/docs/readme"
git -C "$WS/deep/a/b" status >/dev/null 2>&1
git -C "$WS/docs" status >/dev/null 2>&1
git -C "$WS" status >/dev/null 2>&1
check_not "host git in the command's directories runs nothing planted" test -e "$M"
check "the quarantine is in the audit log" grep -q '"event":"quarantine".*"path":"deep/a/b/.git"' \
	"$XDG_STATE_HOME/ward/audit.jsonl"
check "...and counted in the exit event" grep -q '"event":"exit".*"quarantined":3' \
	"$XDG_STATE_HOME/ward/audit.jsonl"
rm -rf "$WS/deep" "$WS/docs"

# Hiding from the check: a directory made unreadable, a tree deeper than
# the walk goes. Neither keeps what it holds.
"$WARD" run -- sh -c "git init -q locked/r && git -C locked/r config core.fsmonitor 'touch $M' && chmod 000 locked
	python3 -c 'import os, subprocess
for _ in range(1100): os.mkdir(\"d\"); os.chdir(\"d\")
subprocess.run([\"git\", \"init\", \"-q\"])'" >/dev/null 2>"$T/err"
chmod -R u+rwx "$WS/locked" 2>/dev/null
check_not "a repository in a directory the command made unreadable is gone (host)" test -e "$WS/locked/r/.git"
check_eq "a repository deeper than the walk goes is gone (host)" "" \
	"$(cd "$WS" && find d -name .git 2>/dev/null)"
check "...and ward said it was too deep to check" grep -q "too deep" "$T/err"
rm -rf "$WS/locked" "$WS/d"

# --- agent and editor configurations, at the root and at depth -----------
mkdir -p "$WS/pkg/.vscode" "$T/linked"
echo mine >"$T/linked/f"
echo '{"version":"2.0.0"}' >"$WS/pkg/.vscode/tasks.json"
h_tasks=$(sha "$WS/pkg/.vscode/tasks.json")
"$WARD" run -- sh -c '
	for d in . a pkg/b; do
		mkdir -p $d/.claude $d/.gemini $d/.vscode $d/.cursor
		echo "{\"hooks\":{}}" >$d/.claude/settings.json
		echo "{\"mcpServers\":{}}" >$d/.mcp.json
		echo "{}" >$d/.gemini/settings.json
		echo "{}" >$d/.vscode/tasks.json
		echo "{}" >$d/.cursor/mcp.json
	done
	echo evil >pkg/.vscode/tasks.json; rm -rf pkg/.vscode; mv pkg pkg2
	ln -s "$0" .idea; mkdir -p c; ln -s ../pkg/.vscode c/.zed' "$T/linked" >/dev/null 2>"$T/err"
left=$(cd "$WS" && find . \( -name .claude -o -name .mcp.json -o -name .gemini -o -name .cursor \
	-o -name .idea -o -name .zed -o -path ./.vscode -o -path ./a/.vscode -o -path ./pkg/b/.vscode \) | sort)
check_eq "no agent or editor configuration left behind, at the root or at depth (host)" "" "$left"
check_eq "an existing pkg/.vscode/tasks.json is unchanged (host)" "$h_tasks" "$(sha "$WS/pkg/.vscode/tasks.json")"
check_not "...and its directory was not renamed away (host)" test -e "$WS/pkg2"
check "the symlink the command named .idea went, its target stayed (host)" \
	test "$(cat "$T/linked/f")" = mine
rm -rf "$WS/a" "$WS/pkg" "$WS/c"

# A policy adds to the list (an anchored path and a name).
mkdir -p "$WS/ci/.github/workflows"
echo original >"$WS/ci/.github/workflows/ci.yml"
printf '%s\n' '{"version":1,"fs":{"protected":["ci/.github/workflows",".tool-hooks"]}}' >"$T/pol.json"
"$WARD" run -p "$T/pol.json" -- sh -c 'echo evil >ci/.github/workflows/ci.yml
	mkdir -p z/.tool-hooks && echo x >z/.tool-hooks/run' >/dev/null 2>&1
check_eq "a policy's anchored entry is read-only (host)" original "$(cat "$WS/ci/.github/workflows/ci.yml")"
check_not "a policy's name entry matches at depth (host: z/.tool-hooks gone)" test -e "$WS/z/.tool-hooks"
rm -rf "$WS/ci" "$WS/z"

# --- nothing of ward's in the workspace, during and after a run ----------
git -C "$WS" add -A >/dev/null 2>&1 && git -C "$WS" commit -qm state >/dev/null 2>&1
before=$(tree "$WS")
rm -f "$T/out"
"$WARD" run -- sh -c 'git status --porcelain >&2; echo ready; while [ ! -e "$0" ]; do sleep 0.05; done' /tmp/never \
	>"$T/out" 2>"$T/inside" &
wpid=$!
for _ in $(seq 200); do grep -q ready "$T/out" 2>/dev/null && break; sleep 0.05; done
check "a run is alive" grep -q ready "$T/out"
check_eq "during a run, host git status --porcelain shows nothing ward made" "" \
	"$(git -C "$WS" status --porcelain 2>&1)"
check_eq "during a run, the workspace's listing is unchanged (host)" "$before" "$(tree "$WS")"
git -C "$WS" add -A >/dev/null 2>&1
check_eq "during a run, host git add -A stages nothing" "" "$(git -C "$WS" diff --cached --name-only)"
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null
check_eq "inside, git status --porcelain listed nothing of ward's" "" "$(cat "$T/inside")"
check_eq "after a SIGKILL of ward, the workspace's listing is unchanged (host)" "$before" "$(tree "$WS")"

# A SIGKILL of ward does not skip the check: the guard outlives it.
rm -f "$T/out"
"$WARD" run -- sh -c "git init -q k && git -C k config core.fsmonitor 'touch $M' && mkdir -p .claude &&
	echo ready && sleep 3607" >"$T/out" 2>/dev/null &
wpid=$!
for _ in $(seq 200); do grep -q ready "$T/out" 2>/dev/null && break; sleep 0.05; done
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null
for _ in $(seq 200); do [ -e "$WS/k/.git" ] || [ -e "$WS/.claude" ] || break; sleep 0.05; done
check_not "after a SIGKILL of ward, the command's k/.git is gone (host)" test -e "$WS/k/.git"
check_not "...and its .claude (host)" test -e "$WS/.claude"
git -C "$WS/k" status >/dev/null 2>&1
check_not "...and host git in k runs nothing planted" test -e "$M"
check_not "the sandbox died with ward" alive 'sleep 3607'
rm -rf "$WS/k"

# The guard itself killed (kill -9 of every process of the user): its
# record stays, and the next run in the workspace does the check it missed.
rm -f "$T/out"
"$WARD" run -- sh -c "git init -q g && git -C g config core.fsmonitor 'touch $M' && echo ready && sleep 3608" \
	>"$T/out" 2>/dev/null &
wpid=$!
for _ in $(seq 200); do grep -q ready "$T/out" 2>/dev/null && break; sleep 0.05; done
# (init leads a session of its own too, but in its own pid namespace: two
# NSpid fields.)
guard=$(for p in $(ps -o pid=,sid= --ppid "$wpid" | awk '$1 == $2 { print $1 }'); do
	awk -v p="$p" '/^NSpid:/ && NF == 2 { print p }' "/proc/$p/status"
done)
check "the guard is a child of ward in a session of its own" test -n "$guard"
[ -n "$guard" ] && kill -KILL "$guard"
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null
for _ in $(seq 100); do pgrep -f 'sleep 3608' >/dev/null || break; sleep 0.05; done
check "with the guard killed too, the command's g/.git is still there (host)" test -e "$WS/g/.git"
"$WARD" run -- true 2>"$T/err"
check_not "the next run did the check the dead guard missed (host: g/.git gone)" test -e "$WS/g/.git"
check "...and said so" grep -q "did not run" "$T/err"
git -C "$WS/g" status >/dev/null 2>&1
check_not "...so host git in g runs nothing planted" test -e "$M"
rm -rf "$WS/g"

# --- a workspace that is a subdirectory of a repository ------------------
mkdir -p "$WS/mono/pkg"
echo p >"$WS/mono/pkg/p.txt"
git -C "$WS" add -A >/dev/null 2>&1 && git -C "$WS" commit -qm mono >/dev/null 2>&1
rm -f "$T/out"
(cd "$WS/mono/pkg" && exec "$WARD" run -- sh -c 'echo ready; while [ ! -e "$0" ]; do sleep 0.05; done' /tmp/never \
	>"$T/out" 2>/dev/null) &
wpid=$!
for _ in $(seq 200); do grep -q ready "$T/out" 2>/dev/null && break; sleep 0.05; done
check "during a run in a repository's subdirectory, host git works there" \
	sh -c "git -C \"\$1\" status --porcelain >/dev/null" - "$WS/mono/pkg"
check_eq "...and shows nothing ward made" "" "$(git -C "$WS/mono/pkg" status --porcelain 2>&1)"
kill -KILL "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null

# --- an empty workspace: git init ------------------------------------------
mkdir -p "$T/empty"
out=$(cd "$T/empty" && "$WARD" run -- sh -c 'git init -q && git status --porcelain && echo inited' 2>"$T/err")
check_eq "in an empty workspace, git init works inside" inited "$out"
check_eq "...and the repository it made does not survive the run (host: workspace empty)" "" \
	"$(ls -A "$T/empty")"
check "...ward says where it went" grep -q "quarantine" "$T/err"

# --- copy-on-write: nothing of ward's in the upper layer -------------------
"$WARD" run --cow -- true 2>"$T/err"
sid=$(sed -n 's/^ward: session //p' "$T/err")
up="$XDG_STATE_HOME/ward/sessions/$sid/upper"
check "a copy-on-write session was made" test -d "$up"
check_eq "copy-on-write: the upper layer is empty after a run that wrote nothing" "" \
	"$(find "$up" -mindepth 1 2>/dev/null)"
"$WARD" run --session "$sid" -- sh -c 'echo x >lib/.git; echo y >>.git/config; ls -A' >"$T/out" 2>/dev/null
check_not "copy-on-write: the command sees no placeholder" grep -qx '\.ward\|\.claude\|\.harness' "$T/out"
check_eq "copy-on-write: the submodule gitfile is read-only too (upper has no lib/.git)" "" \
	"$(find "$up" -name .git 2>/dev/null)"

git -C "$WS" config core.hooksPath .hooks2
"$WARD" run --session "$sid" -- sh -c "mkdir -p .hooks2 && printf '#!/bin/sh\ntouch $M\n' >.hooks2/pre-commit && echo ok >plain.txt" \
	>/dev/null 2>&1
"$WARD" apply "$sid" >/dev/null 2>&1
check "copy-on-write: apply writes an ordinary change" test -e "$WS/plain.txt"
check_not "copy-on-write: apply refuses a hook made where core.hooksPath points (host)" \
	test -e "$WS/.hooks2/pre-commit"
git -C "$WS" config --unset core.hooksPath
rm -f "$WS/plain.txt"

# --- the scan refuses what it cannot make read-only ------------------------
mkdir -p "$T/dangle"
ln -s missing "$T/dangle/.vscode"
check_eq "a dangling symlink at a protected name is refused (exit 125)" 125 \
	"$(cd "$T/dangle" && status_of "$WARD" run -- true)"
mkdir -p "$T/lnk/conf"
echo orig >"$T/lnk/conf/settings.json"
ln -s conf "$T/lnk/.claude"
(cd "$T/lnk" && "$WARD" run -- sh -c 'echo evil >.claude/settings.json; echo evil >conf/settings.json') >/dev/null 2>&1
check_eq "a symlink at a protected name: its target in the workspace is read-only (host)" orig \
	"$(cat "$T/lnk/conf/settings.json")"

done_testing
