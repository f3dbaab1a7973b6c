/* A tier 1 run's private TMPDIR, <state>/tmp/<pid>-XXXXXX, and its reuse.
 *
 * Removing a directory frees its inode and its block; making one takes
 * both again. On some file systems that is slow (ext4 without a journal
 * discards the freed block synchronously with `discard`, 1 to 3 ms of
 * waiting per run on this project's test VM, and scans the inodes
 * deleted in the last 30 s for a free one). So a run that ended cleanly
 * leaves its emptied TMPDIR as <state>/tmp/spare, and the next run
 * renames it to its own name instead of making a new one.
 *
 * Only when nothing of the previous run can reach it: the spare is left
 * only after the run's whole process tree was killed and reaped (no
 * process holds the old run's Landlock grant on the inode or a file
 * descriptor of it), and only when the directory is exactly as it was
 * made: empty, the same owner, group and mode, the same inode flags,
 * project and extended attributes (a default ACL, a setgid bit or a
 * casefold flag set by the old run would shape the next run's files).
 * Anything else is removed as before. The next run checks again that
 * the spare is an empty directory of its own with mode 0700. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What a made directory looked like; the spare must look the same. */
typedef struct RunTmpdir {
	char *path;       /* <state>/tmp/<pid>-XXXXXX; NULL: none made */
	dev_t dev;
	ino_t ino;
	uid_t uid;
	gid_t gid;
	mode_t mode;
	int flags_err;    /* 0, or the errno of FS_IOC_GETFLAGS */
	unsigned flags;
	int fsx_err;      /* 0, or the errno of FS_IOC_FSGETXATTR */
	unsigned fsx[4];  /* fsx_xflags, fsx_extsize, fsx_projid, fsx_cowextsize */
	char *xattrs;     /* names and values, NULL when there are none */
	size_t n_xattrs;
	bool reusable;    /* all of the above could be read */
	bool reused;      /* taken over from a spare, not made */
} RunTmpdir;

/* Make (or take over the spare as) the run's TMPDIR under
 * @state_dir/tmp, after removing those of wards that are gone. */
int run_tmpdir_make(const char *state_dir, RunTmpdir *ret);

/* Remove the run's TMPDIR; @tree_gone: every process of the run was
 * killed and reaped, so the emptied directory may stay as the spare. */
void run_tmpdir_remove(RunTmpdir *t, bool tree_gone);
