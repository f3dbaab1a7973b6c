/* Places outside a git dir from which git still runs code or reads
 * executable configuration: the hooks directory core.hooksPath names
 * (husky, ".githooks") and the files include.path / includeIf.*.path pull
 * in (a tracked ".gitconfig" beside the repository). When one lies in the
 * workspace, it is as sensitive as .git itself.
 *
 * Read from each repository the walk found (its config and
 * config.worktree, following includes a few levels) and from the user's
 * global and the system config. A small reader of git's config syntax for
 * these keys only, not a general parser. */
#pragma once

#include "linux/workspace-scan.h"

/* For every such path inside @workspace: append its path relative to the
 * workspace to @ret_extra (anchored fs.protected entries for this run),
 * and, where it exists and is not covered already, a SCAN_PROTECTED item
 * to @scan (kept sorted). @home may be NULL. */
int git_exec_paths(const char *workspace, const char *home, WorkspaceScan *scan, char ***ret_extra);
