/* Which git directories the workspace's repository needs, wherever its
 * layout puts them: the workspace's own .git, the enclosing repository of a
 * workspace that is a subdirectory, a linked worktree's per-worktree git dir
 * and the main repository's common dir, a submodule's git dir in the
 * superproject's .git/modules. Reads the host (lstat, realpath, small
 * pointer files) and changes nothing. Not a git implementation: it follows
 * only the pointers git itself writes, checks that each end is a real git
 * directory that points back, and refuses everything else with a line that
 * says why. */
#pragma once

#include <stdbool.h>

typedef struct GitLayout {
	/* The enclosing repository's working tree when the workspace is a
	 * subdirectory of it (real path), else NULL. */
	char *worktree;
	/* The git dirs the repository uses, real paths, most specific first:
	 * its git dir, then (linked worktree) the common dir. Empty when the
	 * workspace is not in a repository. */
	char **gitdirs;
	/* One line each: a pointer or directory that was not exposed, and why. */
	char **notes;
} GitLayout;

typedef struct GitLayoutInput {
	const char *workspace; /* canonical */
	const char *home;
	char *const *hidden;   /* real paths the sandbox must never see */
} GitLayoutInput;

/* Discover the layout. Returns 0 (also when there is no repository, or when
 * a pointer was refused: see ret->notes), -ENOMEM. */
int git_layout_discover(const GitLayoutInput *in, GitLayout *ret);
void git_layout_done(GitLayout *l);

/* Is @path a git directory (HEAD, objects/, refs/)? */
bool git_is_git_dir(const char *path);

/* After a failed run: one line (caller frees) saying which repository
 * metadata is protected and how to allow writing it, when the command
 * looks like git (its program, or a word of a shell command line) and
 * failed with a code git or a tool uses for errors; else NULL. A hint, not
 * a diagnosis: the kernel does not report which writes it refused. */
char *git_layout_hint(const GitLayout *l, int git_mode_read_only, char *const *argv,
		      int exit_code);
