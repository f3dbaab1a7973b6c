/* File system primitives for apply, undo and discard that never follow a
 * symlink: parents are resolved with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS) or, without openat2, by a walk of O_NOFOLLOW
 * directory fds; the last component is only ever handled by *at() calls
 * that do not follow it (renameat, unlinkat, mkdirat, symlinkat, O_EXCL
 * creation). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "cow/cow-fsops.h"
#include "cow/cow-internal.h"

static int sys_openat2(int dirfd, const char *path, struct open_how *how)
{
#ifdef SYS_openat2
	return (int)syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
#else
	errno = ENOSYS;
	return -1;
#endif
}

static int walk_nofollow(int root, const char *path)
{
	_cleanup_free_ char *p = strdup(path);
	_cleanup_close_ int fd = -EBADF;
	char *save = NULL;

	if (!p)
		return -ENOMEM;
	fd = fcntl(root, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	for (char *c = strtok_r(p, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, "..") == 0 || strcmp(c, ".") == 0)
			return -EXDEV;
		int n = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (n < 0)
			return errno == ENOTDIR ? -ELOOP : -errno;
		close(fd);
		fd = n;
	}
	return TAKE_FD(fd);
}

int cow_open_dir_beneath(int root, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (!path[0])
		return RET_NERRNO(fcntl(root, F_DUPFD_CLOEXEC, 3));
	fd = sys_openat2(root, path, &how);
	if (fd >= 0)
		return fd;
	/* ENOSYS: kernel < 5.6; EPERM: a seccomp filter that hides it. */
	if (errno == ENOSYS || errno == EPERM)
		return walk_nofollow(root, path);
	return -errno;
}

int cow_open_parent(int root, const char *path, const char **ret_name)
{
	_cleanup_free_ char *dir = NULL;
	const char *slash = strrchr(path, '/');

	if (!slash) {
		*ret_name = path;
		return cow_open_dir_beneath(root, "");
	}
	dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	*ret_name = slash + 1;
	return cow_open_dir_beneath(root, dir);
}

int cow_copy_fd(int in, int out)
{
	char buf[64 * 1024];

	for (;;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
		if (n > 0)
			continue;
		if (n == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP && errno != ENOSYS)
			return -errno;
		break;
	}
	for (;;) {
		ssize_t n = RETRY_EINTR(read(in, buf, sizeof(buf)));
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		for (ssize_t w = 0; w < n;) {
			ssize_t m = RETRY_EINTR(write(out, buf + w, (size_t)(n - w)));
			if (m < 0)
				return -errno;
			w += m;
		}
	}
}

int cow_make_tmp_copy(int src_dfd, const char *src_name, const struct stat *src_st, int dst_dfd,
		      const char *tmp, mode_t mode)
{
	if (S_ISLNK(src_st->st_mode)) {
		char target[PATH_MAX + 1];
		ssize_t n = readlinkat(src_dfd, src_name, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		if (symlinkat(target, dst_dfd, tmp) < 0)
			return -errno;
		return 0;
	}
	if (!S_ISREG(src_st->st_mode))
		return -EBADFD;

	_cleanup_close_ int in = -EBADF, out = -EBADF;
	struct stat st;
	int r;

	in = openat(src_dfd, src_name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return -errno;
	/* The entry may have been swapped since it was examined. */
	if (fstat(in, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADFD;
	out = openat(dst_dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	r = cow_copy_fd(in, out);
	if (r >= 0 && fchmod(out, mode) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dst_dfd, tmp, 0);
	return r;
}

int cow_chmod_at(int dfd, const char *name, mode_t mode)
{
	_cleanup_close_ int fd = -EBADF;
	struct stat st;
	char p[64];

#ifdef SYS_fchmodat2
	if (syscall(SYS_fchmodat2, dfd, name, mode, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP && errno != EPERM)
		return -errno;
#endif
	/* Pin the inode with O_PATH|O_NOFOLLOW, make sure it is not a symlink,
	 * then chmod it through its /proc magic link. */
	fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return RET_NERRNO(chmod(p, mode));
}

/* Deeper than this, a directory is moved up to @top and removed later, so
 * that a hostile tree thousands of levels deep never needs more open fds
 * than this (one per level). */
#define RM_MAX_DEPTH 64

static int rm_rf(int dfd, const char *name, int depth, int top, unsigned *moved)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	struct stat st;
	int r = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	if (depth >= RM_MAX_DEPTH) {
		char n[64];
		snprintf(n, sizeof(n), ".ward-rm-%d-%u", (int)getpid(), (*moved)++);
		return RET_NERRNO(renameat(dfd, name, top, n));
	}
	/* Overlay work dirs hold "work/work" with mode 000: make every
	 * directory readable and writable before descending. */
	if ((st.st_mode & 0700) != 0700)
		(void)cow_chmod_at(dfd, name, 0700);
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d)
		return -errno;
	fd = -EBADF; /* owned by d now */
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		int k = rm_rf(dirfd(d), de->d_name, depth + 1, top, moved);
		if (k < 0 && r == 0)
			r = k;
	}
	if (r == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

int cow_rm_rf_at(int dfd, const char *name, int depth)
{
	unsigned moved = 0, done = 0;
	int r;

	(void)depth;
	r = rm_rf(dfd, name, 0, dfd, &moved);
	/* Then the subtrees moved up from below RM_MAX_DEPTH; removing them may
	 * move more. Names are numbered, so this ends when the numbers do. */
	while (r >= 0 && done < moved) {
		char n[64];
		snprintf(n, sizeof(n), ".ward-rm-%d-%u", (int)getpid(), done++);
		r = rm_rf(dfd, n, 0, dfd, &moved);
	}
	return r;
}
