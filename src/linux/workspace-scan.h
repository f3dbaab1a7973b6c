/* Which protected paths exist in a workspace: one walk with getdents64 that
 * reads no file and stats only what it reports, does not descend into what
 * it reports (a protected path is covered as a whole) nor into
 * "node_modules" (docs/sandbox.md says why). Before a run it says what to
 * bind read-only; after a run, compared with the first walk, what the
 * command created under a protected name (quarantine.c).
 *
 * Not a general file walker: symlinks are never followed, and the walk
 * works on an fd of the workspace, so nothing above it is looked at. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef enum ScanKind {
	SCAN_PROTECTED,      /* matched by fs.protected (protected.h) */
	SCAN_GITDIR,         /* a directory git takes for a repository (HEAD and
	                      * objects + refs, or commondir), not named .git */
	SCAN_GITDIR_PART,    /* config, hooks, HEAD... of the workspace root when
	                      * the root itself is a git dir (it stays writable) */
	SCAN_LINKED_PARENT,  /* a symlink where a parent of an anchored entry
	                      * belongs: host tools would follow it */
	SCAN_TOO_DEEP,       /* a directory deeper than WORKSPACE_SCAN_MAX_DEPTH:
	                      * not walked */
	_SCAN_KIND_MAX,
	_SCAN_KIND_INVALID = -22,
} ScanKind;

const char *scan_kind_to_string(ScanKind k);

typedef struct ScanItem {
	char *rel;  /* relative to the workspace, no leading '/' */
	dev_t dev;
	ino_t ino;
	mode_t mode;
	ScanKind kind;
} ScanItem;

typedef struct WorkspaceScan {
	ScanItem *items; /* sorted by rel once the walk is done */
	size_t n, cap;
	size_t n_dirs;   /* directories read (for the cost figures) */
} WorkspaceScan;

/* Deeper than this, the walk reports the directory as SCAN_TOO_DEEP and
 * does not enter it (a hostile tree must not exhaust the stack, nor hide a
 * name where the check cannot see: the directory itself is reported). */
#define WORKSPACE_SCAN_MAX_DEPTH 1024

/* Walk the directory @ws_fd (not consumed) and report every path that
 * @protected (fs.protected) covers, every git dir and every symlinked
 * parent of an anchored entry. On error @reterr_rel names the relative
 * path involved (caller frees). */
int workspace_scan(int ws_fd, char *const *protected, WorkspaceScan *ret, char **reterr_rel);
void workspace_scan_done(WorkspaceScan *s);

/* The item for @rel, or NULL. */
const ScanItem *workspace_scan_find(const WorkspaceScan *s, const char *rel);

/* The names in a git dir that git reads configuration or runs code from:
 * what the quarantine moves out of a git dir the command made. */
extern const char *const gitdir_exec_parts[];
