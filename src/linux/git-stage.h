/* "git": "commit" without letting the command plant configuration: a git
 * dir is mounted as an overlay whose upper layer is a staging directory in
 * ward's state dir, with its objects/, refs/ and logs/ bound writable on
 * top. After the run, ward copies back only the top-level files git writes
 * for commits (index, HEAD, packed-refs, ORIG_HEAD, COMMIT_EDITMSG, ...);
 * config, hooks, info, commondir, rebase todo lists and everything else the
 * command wrote there stay in the staging layer and are dropped. So a name
 * that did not exist (.git/commondir, .git/rebase-merge) cannot be created
 * on the host, which a read-only mount alone could not promise. */
#pragma once

#include <stdbool.h>

typedef struct GitStage {
	char *gitdir;  /* host git dir, real path */
	char *base;    /* <state>/git-stage */
	char *root;    /* base/<pid>-XXXXXX, NULL until acquired */
	char *upper;   /* root/upper */
	char *work;    /* root/work */
	int gitdir_fd; /* the git dir, opened when staged (O_PATH) */
	bool keep;     /* something was not applied: git_stage_done keeps root */
} GitStage;

/* Plan a staging layer for @gitdir under @state_dir: records the paths,
 * touches nothing on the host. */
int git_stage_plan(const char *state_dir, const char *gitdir, GitStage *ret);

/* Acquire it (before the run): make the staging directory (root, upper,
 * work; git_stage_done removes it), create @gitdir/logs when missing (git
 * creates it on the first ref update; an empty one changes nothing for
 * git) so it can be bound writable, and scrub (git_stage_scrub) what a
 * killed run may have left. Removes the staging directories of dead runs,
 * except those that hold files they did not apply: those get a line in
 * @notes. Idempotent. */
int git_stage_acquire(GitStage *s, char ***notes);

/* After a run: copy the allow-listed files from the upper layer into the git
 * dir (each through NAME.lock, as git does, so a git working on the host at
 * the same time is not overwritten: that file is skipped with a line and
 * -EBUSY) and apply their removals. @ret_lines gets one line naming what
 * was written there and not applied. Returns the number of files applied,
 * or -errno; 0 when the stage was never acquired. */
int git_stage_apply(GitStage *s, char ***ret_lines);

/* Remove every symlink, FIFO or socket beneath the git dir's objects/, refs/
 * and logs/ (the trees bound writable): git makes none there, and the
 * host's git writes through them. Before a run (a run killed with SIGKILL
 * may have left some) and after. One line in @ret_lines when something was
 * removed. */
int git_stage_scrub(const GitStage *s, char ***ret_lines);

/* Remove the staging directory (unless something in it was not applied);
 * NULL-safe fields. */
void git_stage_done(GitStage *s);

/* Is @name a top-level git dir entry that commit mode applies? */
bool git_stage_name_applies(const char *name);
