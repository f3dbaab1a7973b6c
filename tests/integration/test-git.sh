#!/usr/bin/env bash
# git in every common layout, through the real CLI: a repository root, a
# subdirectory of a repository, a linked worktree, a superproject and its
# submodule, an empty directory. Read commands inside give the host's
# output; writes to repository metadata are refused in the default
# "read-only" mode with a hint line; "commit" mode commits while config,
# hooks and every other name git reads settings from stay out of reach
# (checked on the host); hostile gitfiles expose nothing; ward leaves
# nothing a host `git status` taken during a run would see.
. "$(dirname "$0")/lib.sh"
require_t2
command -v git >/dev/null || skip_all "git is not installed"

git config --global user.name "Ward Test"
git config --global user.email "ward-test@example.org"
git config --global init.defaultBranch main
git config --global protocol.file.allow always

R="$T/repos"
mkdir -p "$R"
# The repository root: two commits, a subdirectory, a modified file.
git init -q "$R/main"
(
	cd "$R/main" &&
		mkdir -p pkg/src && printf 'one\ntwo\n' >pkg/src/a.txt && echo top >top.txt &&
		git add -A && git commit -qm first &&
		echo three >>pkg/src/a.txt && git commit -qam second &&
		echo dirty >>top.txt && echo change >>pkg/src/a.txt
) || { echo "Bail out! could not build the test repository"; exit 1; }
git -C "$R/main" worktree add -q "$R/wt" -b wt-branch
echo wt-dirty >>"$R/wt/top.txt"
git init -q "$R/lib"
(cd "$R/lib" && echo lib >lib.txt && git add -A && git commit -qm lib)
git init -q "$R/super"
(
	cd "$R/super" && echo s >s.txt && git add -A && git commit -qm super &&
		git submodule add -q "$R/lib" lib && git commit -qm "add lib" &&
		echo lib-dirty >>lib/lib.txt
) || { echo "Bail out! could not build the submodule repository"; exit 1; }
mkdir -p "$R/empty"

# ward leaves no marks of protected paths in the workspace (issue 9
# point 1, docs/sandbox.md): what git prints must match exactly.

# start_run DIR ARGS...: `ward ARGS` in DIR in the background, its stdin
# and stdout (with stderr) on FIFOs: fd 8 writes to it, fd 7 reads it. No
# timing: the script waits for what the command prints.
start_run() {
	local dir=$1
	shift
	rm -f "$T/run.in" "$T/run.out"
	mkfifo "$T/run.in" "$T/run.out"
	(cd "$dir" && exec "$WARD" "$@" <"$T/run.in" >"$T/run.out" 2>&1) &
	run_pid=$!
	exec 8>"$T/run.in" 7<"$T/run.out"
}
# finish_run: end its input, collect the rest of its output in $run_out.
finish_run() {
	echo go >&8
	exec 8>&-
	run_out=$(cat <&7)
	exec 7<&-
	wait "$run_pid"
}

# same DIR DESC ARGS...: `git ARGS` in DIR inside ward prints what it prints on the host.
same() {
	local dir=$1 desc=$2 host inside hs is
	shift 2
	host=$(cd "$dir" && git "$@" 2>&1)
	hs=$?
	inside=$(cd "$dir" && "$WARD" run --preset git -- git "$@" 2>&1)
	is=$?
	if [ "$host" = "$inside" ] && [ "$hs" = "$is" ]; then
		ok "$desc"
	else
		not_ok "$desc"
		while read -r l; do diag "host ($hs): $l"; done <<<"$host"
		while read -r l; do diag "inside ($is): $l"; done <<<"$inside"
	fi
}

for layout in "main:root" "main/pkg:subdirectory" "main/pkg/src:nested subdirectory" \
	"wt:linked worktree" "super:superproject" "super/lib:submodule"; do
	d="$R/${layout%%:*}"
	name=${layout#*:}
	same "$d" "$name: git status" status
	same "$d" "$name: git status --porcelain" status --porcelain
	same "$d" "$name: git diff" diff
	same "$d" "$name: git log" log --stat
	same "$d" "$name: git show" show HEAD
done
same "$R/main" "root: git blame" blame HEAD -- pkg/src/a.txt
same "$R/main/pkg/src" "subdirectory: git blame" blame HEAD -- a.txt
same "$R/wt" "linked worktree: git blame" blame HEAD -- top.txt
same "$R/super" "superproject: git submodule status" submodule status
same "$R/super" "superproject: git diff --submodule" diff --submodule=diff
# An empty directory: git fails as on the host (the message names the
# mount point it stopped at instead of the parent directories).
out=$(cd "$R/empty" && "$WARD" run --preset git -- git status 2>&1)
rc=$?
if [ "$rc" = 128 ] && grep -q '^fatal: not a git repository' <<<"$out" && ! grep -q '^ward: hint' <<<"$out"; then
	ok "empty directory: git status fails as on the host (128, not a git repository, no hint)"
else
	not_ok "empty directory: git status fails as on the host ($rc: $(head -1 <<<"$out"))"
fi

# The enclosing repository of a subdirectory workspace: read-only.
before=$(cd "$R/main" && git status --porcelain && cat top.txt)
(cd "$R/main/pkg" && "$WARD" run -- sh -c 'echo x >>../top.txt; echo y >../new.txt; rm -f ../top.txt' >/dev/null 2>&1)
check_eq "subdirectory workspace: the enclosing tree is read-only" "$before" \
	"$(cd "$R/main" && git status --porcelain && cat top.txt)"
check_not "subdirectory workspace: nothing created beside it" test -e "$R/main/new.txt"
check "subdirectory workspace: the workspace itself is writable" \
	bash -c "cd '$R/main/pkg' && '$WARD' run -- sh -c 'echo w >w.txt && rm w.txt'"

# read-only (the default): a commit and a stash are refused, with a hint.
head=$(git -C "$R/main" rev-parse HEAD)
err=$(cd "$R/main" && "$WARD" run --preset git -- git commit -qam refused 2>&1 >/dev/null)
check_eq "read-only: git commit fails, HEAD unchanged on the host" "$head" "$(git -C "$R/main" rev-parse HEAD)"
check "read-only: the hint names ward, the metadata and --git commit" \
	grep -q "^ward: hint: .*'$R/main/.git' is read-only.*--git commit" <<<"$err"
err=$(cd "$R/main" && "$WARD" run --preset git -- sh -c 'git stash' 2>&1 >/dev/null)
check "read-only: git stash (in sh -c) fails with the hint" grep -q '^ward: hint: ' <<<"$err"
check_eq "read-only: no stash on the host" "" "$(git -C "$R/main" stash list)"
check "read-only: the work tree change is still there" grep -q dirty "$R/main/top.txt"
err=$(cd "$R/wt" && "$WARD" run --preset git -- git commit -qam refused 2>&1 >/dev/null)
check "read-only: a linked worktree's commit names the common dir" \
	grep -q "^ward: hint: .*'$R/main/.git' is read-only" <<<"$err"
check_eq "read-only: no hint after a successful git command" "" \
	"$(cd "$R/main" && "$WARD" run --preset git -- git log -1 2>&1 >/dev/null)"

# commit: objects, refs, index and logs writable; nothing git reads
# settings or programs from.
cfg=$(md5sum <"$R/main/.git/config")
out=$(cd "$R/main" && "$WARD" run --preset git --git commit -- sh -c '
	git commit -qam "from ward" || exit 1
	echo "[core]" >>.git/config; printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" >.git/config
	mkdir -p .git/hooks; printf "#!/bin/sh\ntouch /tmp/pwned\n" >.git/hooks/post-checkout
	chmod +x .git/hooks/post-checkout
	echo ../evil >.git/commondir; mkdir -p .git/rebase-merge .git/info
	echo "exec touch /tmp/pwned" >.git/rebase-merge/git-rebase-todo
	echo "*.txt filter=evil" >.git/info/attributes
	mkdir -p .git/modules/x && echo "[core]" >.git/modules/x/config
	echo 0 >.git/config.worktree; echo ok' 2>&1)
check "commit: git commit works inside" grep -q '^ok$' <<<"$out"
check_eq "commit: the commit is on the host's branch" "from ward" "$(git -C "$R/main" log -1 --format=%s)"
check_eq "commit: the host index has it (status is clean)" "" \
	"$(git -C "$R/main" status --porcelain --untracked-files=no)"
check_eq "commit: .git/config unchanged on the host" "$cfg" "$(md5sum <"$R/main/.git/config")"
check_not "commit: no hook planted on the host" test -e "$R/main/.git/hooks/post-checkout"
check_not "commit: no commondir on the host" test -e "$R/main/.git/commondir"
check_not "commit: no rebase todo list on the host" test -e "$R/main/.git/rebase-merge"
check_not "commit: no info/attributes on the host" test -e "$R/main/.git/info/attributes"
check_not "commit: no submodule config on the host" test -e "$R/main/.git/modules"
check_not "commit: no config.worktree on the host" test -e "$R/main/.git/config.worktree"
check "commit: ward names what it did not apply" \
	grep -q "^ward: git: not applied to '$R/main/.git'.*config" <<<"$out"
check "commit: host git fsck passes on the repository" \
	bash -c "git -C '$R/main' fsck --no-progress >/dev/null 2>&1"
check_not "commit: nothing ran on the host" test -e /tmp/pwned
out=$(cd "$R/wt" && "$WARD" run --preset git --git commit -- git commit -qam "wt from ward" 2>&1)
check_eq "commit: a linked worktree commits into the main repository" "wt from ward" \
	"$(git -C "$R/main" log -1 --format=%s wt-branch)"
check_eq "commit: the linked worktree's index is updated" "" \
	"$(git -C "$R/wt" status --porcelain --untracked-files=no)"
out=$(cd "$R/main" && "$WARD" run --preset git --git commit -- sh -c 'echo x >>.git/hooks/pre-commit.sample; rm -rf .git/hooks' 2>&1)
check "commit: existing hooks cannot be changed or removed" test -s "$R/main/.git/hooks/pre-commit.sample"
check_not "commit: nor an existing hook's content" grep -q '^x$' "$R/main/.git/hooks/pre-commit.sample"
# Staging layers: none left after a run; one a killed run left is removed.
stage="$XDG_STATE_HOME/ward/git-stage"
check_eq "commit: no staging directory left after the runs" "" "$(ls -A "$stage")"
sh -c 'exit 0' &
dead=$!
wait "$dead"
mkdir -p "$stage/$dead-zzzzzz/upper"
(cd "$R/main" && "$WARD" run --git commit -- true)
check_not "commit: a dead run's staging directory is removed" test -e "$stage/$dead-zzzzzz"
# A git working on the host when the run ends holds index.lock: ward does
# not overwrite the index under it, keeps its copy and says where.
echo locked >>"$R/main/top.txt"
start_run "$R/main" run --preset git --git commit -- sh -c 'git commit -qam locked; echo ready; read -r x'
read -r line <&7
idx=$(md5sum <"$R/main/.git/index")
: >"$R/main/.git/index.lock"
finish_run
check_eq "commit: the locked run started" ready "$line"
check "commit: an index locked on the host is not overwritten (ward says so)" \
	grep -q "^ward: git: '$R/main/.git/index' was not applied: 'index.lock' exists" <<<"$run_out"
check_eq "commit: the host's index is unchanged" "$idx" "$(md5sum <"$R/main/.git/index")"
check "commit: the lock is still the host's (empty)" test ! -s "$R/main/.git/index.lock"
rm -f "$R/main/.git/index.lock"
out=$(cd "$R/main" && "$WARD" run --git commit -- true 2>&1)
check "commit: the next run names the kept staging directory" \
	grep -q "^ward: git: a commit-mode run that was killed left repository files" <<<"$out"
rm -rf "${stage:?}"/*
git -C "$R/main" reset -q

echo keep >"$T/victim"
mkdir -p "$T/victimdir"
out=$(cd "$R/main" && "$WARD" run --preset git --git commit -- sh -c "
	rm -f .git/logs/HEAD && ln -s '$T/victim' .git/logs/HEAD
	rm -rf .git/objects/ee && ln -s '$T/victimdir' .git/objects/ee
	mkfifo .git/refs/heads/fifo" 2>&1)
check_not "commit: a symlinked reflog left by the command is removed" test -L "$R/main/.git/logs/HEAD"
check_not "commit: a symlinked object directory is removed" test -L "$R/main/.git/objects/ee"
check_not "commit: a FIFO among the refs is removed" test -p "$R/main/.git/refs/heads/fifo"
check "commit: ward says it removed them" grep -q "^ward: git: removed 3 " <<<"$out"
(cd "$R/main" && echo more >>top.txt && git commit -qam host-after && git gc -q --prune=now) >/dev/null 2>&1
check_eq "commit: the host's next commit wrote nothing through them" "keep" "$(cat "$T/victim")"
check_eq "commit: nor into the directory" "" "$(ls -A "$T/victimdir")"
check_eq "commit: refused with a copy-on-write session (125)" 125 \
	"$(cd "$R/main" && status_of "$WARD" run --cow --git commit -- true)"

# Copy-on-write runs see the same layouts.
check_eq "--cow: a linked worktree's log" "$(git -C "$R/wt" log --oneline)" \
	"$(cd "$R/wt" && "$WARD" run --cow -- git log --oneline 2>/dev/null)"

# off: ward adds nothing outside the workspace.
check_not "off: a linked worktree's git dir is not visible" \
	bash -c "cd '$R/wt' && '$WARD' run --git off -- test -e '$R/main/.git/HEAD'"
check "read-only: it is visible" bash -c "cd '$R/wt' && '$WARD' run -- test -e '$R/main/.git/HEAD'"
check_not "read-only: the main repository's work tree is not" \
	bash -c "cd '$R/wt' && '$WARD' run -- test -e '$R/main/top.txt'"

# Policy and flag errors.
echo '{ "version": 1, "git": "write" }' >"$T/bad.json"
err=$("$WARD" run -p "$T/bad.json" -- true 2>&1)
check_eq "a bad \"git\" value in a policy exits 125" 125 "$(status_of "$WARD" run -p "$T/bad.json" -- true)"
check "the error names the file, the key and the values" \
	grep -q "$T/bad.json: git: expected \"read-only\", \"commit\" or \"off\"" <<<"$err"
check_eq "--git with a bad value exits 125" 125 "$(status_of "$WARD" run --git yes -- true)"
echo '{ "version": 1, "git": "commit" }' >"$T/commit.json"
check "policy show prints the mode" bash -c "'$WARD' policy show -p '$T/commit.json' | grep -q '\"git\":[[:space:]]*\"commit\"'"

# Hostile pointers: a gitfile may name anything; only a git dir tied to
# this workspace by git's own layout is shown.
mkdir -p "$T/evil" "$HOME/.ssh"
echo secret >"$HOME/.ssh/id_test"
git init -q "$T/other"
(cd "$T/other" && echo secret >s && git add s && git commit -qm s)
echo "gitdir: $T/other/.git" >"$T/evil/.git"
err=$(cd "$T/evil" && "$WARD" run -- cat "$T/other/s" 2>&1)
check_not "gitfile to another repository: not visible" grep -q '^secret$' <<<"$err"
check "gitfile to another repository: ward says why" \
	grep -q "ward: git: not exposing '$T/other/.git'" <<<"$err"
echo "gitdir: $HOME/.ssh" >"$T/evil/.git"
check_not "gitfile to ~/.ssh: not visible" bash -c "cd '$T/evil' && '$WARD' run -- cat '$HOME/.ssh/id_test'"
mkdir -p "$T/other/.git/worktrees/evil"
echo ../.. >"$T/other/.git/worktrees/evil/commondir"
echo "ref: refs/heads/main" >"$T/other/.git/worktrees/evil/HEAD"
echo "$T/somewhere/.git" >"$T/other/.git/worktrees/evil/gitdir"
echo "gitdir: $T/other/.git/worktrees/evil" >"$T/evil/.git"
check_not "a worktree git dir that does not point back: not visible" \
	bash -c "cd '$T/evil' && '$WARD' run -- test -e '$T/other/.git/HEAD'"
echo "gitdir: ../other/.git/modules/x" >"$T/evil/.git"
mkdir -p "$T/other/.git/modules/x" && cp -r "$T/other/.git/"{HEAD,objects,refs} "$T/other/.git/modules/x/"
check_not "a module git dir of a repository that is not above: not visible" \
	bash -c "cd '$T/evil' && '$WARD' run -- test -e '$T/other/.git/modules/x/HEAD'"

# A repository that contains the home directory (dotfiles in ~) is never
# shown for a workspace beneath it.
git init -q "$HOME"
echo dot >"$HOME/.dotfile"
git -C "$HOME" add .dotfile && git -C "$HOME" commit -qm dot
mkdir -p "$HOME/proj"
out=$(cd "$HOME/proj" && "$WARD" run -- sh -c "cat '$HOME/.dotfile'; test -e '$HOME/.git/HEAD' && echo gitdir-visible" 2>&1)
check_not "home repository: its files are not visible" grep -q '^dot$' <<<"$out"
check_not "home repository: its git dir is not visible" grep -q gitdir-visible <<<"$out"
check "home repository: ward says why" \
	grep -q "ward: git: not exposing the repository '$HOME' .*contains the home directory" <<<"$out"
rm -rf "$HOME/.git" "$HOME/proj" "$HOME/.dotfile"

# During a run, the host's git status shows nothing ward made.
before=$(git -C "$R/main" status --porcelain --ignored)
start_run "$R/main/pkg" run -- sh -c 'echo ready; read -r x'
read -r line <&7
during=$(git -C "$R/main" status --porcelain --ignored)
finish_run
if [ "$line" != ready ]; then
	not_ok "host git status during a run (the run did not start)"
elif [ "$before" = "$during" ]; then
	ok "host git status during a run shows nothing ward made"
else
	not_ok "host git status during a run shows nothing ward made"
	while read -r l; do diag "during: $l"; done <<<"$during"
fi
check_eq "host git status after the run is as before" "$before" "$(git -C "$R/main" status --porcelain --ignored)"

done_testing
