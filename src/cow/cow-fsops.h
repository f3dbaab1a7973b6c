/* Symlink-proof file system primitives for apply, undo and discard. Every
 * path is relative to a root directory fd and must stay beneath it. */
#pragma once

#include <sys/stat.h>

/* An O_PATH fd for directory @path beneath @root ("" is @root itself),
 * refusing symlinks anywhere (-ELOOP) and escapes (-EXDEV). */
int cow_open_dir_beneath(int root, const char *path);
/* An O_RDONLY directory fd for the absolute @abs_path, refusing a symlink
 * in any component (-ELOOP): openat2(RESOLVE_NO_SYMLINKS), or a walk of
 * O_NOFOLLOW opens from "/". */
int cow_open_dir_nofollow(const char *abs_path);
/* Like cow_open_dir_beneath for @path's parent; *@ret_name points into
 * @path at the last component. */
int cow_open_parent(int root, const char *path, const char **ret_name);
/* Create @tmp in @dst_dfd (O_EXCL, never followed) as a copy of the regular
 * file or symlink @src_name in @src_dfd, with @mode (files), the source's
 * access and modification times, and its holes. Not fsync'd:
 * callers flush a whole batch with syncfs(2) at the point that needs it. */
int cow_make_tmp_copy(int src_dfd, const char *src_name, const struct stat *src_st, int dst_dfd,
		      const char *tmp, mode_t mode);
/* Replace @name in @dst_dfd with a copy made as @tmp (cow_make_tmp_copy,
 * same arguments), renamed over @name; @tmp is removed when the rename
 * fails. -EEXIST means @tmp existed: renaming a file or symlink never
 * fails with EEXIST. */
int cow_replace_with_copy(int src_dfd, const char *src_name, const struct stat *src_st,
			  int dst_dfd, const char *tmp, const char *name, mode_t mode);
/* Copy all of @in to @out (a new, empty file), keeping holes: only the
 * data segments (SEEK_DATA/SEEK_HOLE) are copied (copy_file_range, falling
 * back to pread/pwrite), then @out is given @in's size. */
int cow_copy_fd(int in, int out);
/* chmod @name in @dfd without following a symlink (-ELOOP for one). */
int cow_chmod_at(int dfd, const char *name, mode_t mode);
/* Remove @name in @dfd recursively, never following symlinks, making
 * unreadable directories (overlay's work/work, mode 000) accessible first.
 * Subtrees deeper than 64 levels are moved up into @dfd (".ward-rm-*") and
 * removed from there, so any depth works with few fds. @depth is unused. */
int cow_rm_rf_at(int dfd, const char *name, int depth);
