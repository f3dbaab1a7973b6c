/* Tier 1's wall for file metadata. Landlock decides what a process may
 * open, create, rename and remove, but not chmod, chown, utimes or xattr
 * writes: with Landlock alone a T1 command could change the mode, owner,
 * times or xattrs of any file it can name, hidden or read-only (and, run
 * by root, the host's /dev/null). At T2 the read-only binds refuse them
 * (EROFS). At T1 a second seccomp filter hands these calls to the
 * supervisor (user notification): it resolves the target to an inode it
 * holds, allows the change only inside the writable set and only with the
 * permission the command itself has (owner, group membership, write
 * access), and makes the change itself on that inode. It never lets the
 * kernel redo the call (no CONTINUE): the path could point elsewhere by
 * then. docs/tiers.md, "Metadata at tier 1". */
#pragma once

#include <stddef.h>

typedef struct MetaGuard MetaGuard;

/* Parent side, before the fork: @writable are canonical absolute paths
 * whose hierarchies the command may write (Landlock's read-write grants).
 * Allocates everything the child and the serving need. */
int meta_guard_new(char *const *writable, size_t n_writable, MetaGuard **ret);
MetaGuard *meta_guard_free(MetaGuard *g);

/* Child side, after the main seccomp filter, before execve: install the
 * notification filter. Returns the listener (close-on-exec), which the
 * child must hand to the supervisor and close. No allocation; no call
 * the filter catches may follow in this process before execve while the
 * supervisor cannot serve (vfork). */
int meta_guard_install(const MetaGuard *g);

/* Supervisor side: answer one notification waiting on @listener. 0, or
 * -errno when the listener is unusable (every confined task is gone). */
int meta_guard_serve(MetaGuard *g, int listener);

/* How many calls were refused and allowed, for the run's record. */
void meta_guard_counts(const MetaGuard *g, unsigned *ret_allowed, unsigned *ret_refused);
