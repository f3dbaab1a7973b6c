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
#include <stdbool.h>
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

int cow_open_dir_nofollow(const char *abs_path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_free_ char *p = NULL;
	_cleanup_close_ int fd = -EBADF;
	char *save = NULL;

	if (abs_path[0] != '/')
		return -EINVAL;
	fd = sys_openat2(AT_FDCWD, abs_path, &how);
	if (fd >= 0)
		return TAKE_FD(fd);
	if (errno != ENOSYS && errno != EPERM)
		return errno == ENOTDIR ? -ENOTDIR : -errno;
	/* Without openat2: one O_NOFOLLOW directory open per component. */
	p = strdup(abs_path);
	if (!p)
		return -ENOMEM;
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (char *c = strtok_r(p, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		struct stat st;
		int n = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (n < 0) {
			int r = -errno;
			if (fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				return -ELOOP;
			return r;
		}
		close(fd);
		fd = n;
	}
	return RET_NERRNO(openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
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

/* Copy @len bytes at @off of @in to the same offset of @out. */
static int copy_range(int in, int out, off_t off, off_t len)
{
	char buf[64 * 1024];
	loff_t ioff = off, ooff = off;
	off_t end = off + len;
	bool plain = false;

	while (ioff < end) {
		size_t want = (size_t)(end - ioff < (1 << 30) ? end - ioff : (1 << 30));
		ssize_t n;

		if (!plain) {
			n = copy_file_range(in, &ioff, out, &ooff, want, 0);
			if (n > 0)
				continue;
			if (n == 0)
				return 0; /* the file shrank */
			if (errno == EINTR)
				continue;
			if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP &&
			    errno != ENOSYS)
				return -errno;
			plain = true;
		}
		n = RETRY_EINTR(pread(in, buf, want < sizeof(buf) ? want : sizeof(buf), ioff));
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		for (ssize_t w = 0; w < n;) {
			ssize_t m = RETRY_EINTR(pwrite(out, buf + w, (size_t)(n - w), ooff));
			if (m < 0)
				return -errno;
			w += m;
			ooff += m;
		}
		ioff += n;
	}
	return 0;
}

int cow_copy_fd(int in, int out)
{
	struct stat st;
	off_t pos = 0;
	int r;

	if (fstat(in, &st) < 0)
		return -errno;
	/* Only the data segments are copied and the size is set at the end, so
	 * holes stay holes: a sparse 5 GB file must not become 5 GB of blocks
	 * (copy_file_range alone fills them on file systems without reflink). */
	while (pos < st.st_size) {
		off_t data = lseek(in, pos, SEEK_DATA), hole;
		if (data < 0) {
			if (errno == ENXIO)
				break; /* only a hole is left */
			if (errno != EINVAL && errno != EOPNOTSUPP)
				return -errno;
			/* No SEEK_DATA here: one data segment. */
			data = pos;
			hole = st.st_size;
		} else {
			hole = lseek(in, data, SEEK_HOLE);
			if (hole < 0)
				hole = st.st_size;
		}
		if (hole > st.st_size)
			hole = st.st_size;
		if (hole <= data)
			break;
		r = copy_range(in, out, data, hole - data);
		if (r < 0)
			return r;
		pos = hole;
	}
	return RET_NERRNO(ftruncate(out, st.st_size));
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
		/* Its times, like a file's (best effort: not every file system
		 * keeps a symlink's). */
		const struct timespec lt[2] = { src_st->st_atim, src_st->st_mtim };
		(void)utimensat(dst_dfd, tmp, lt, AT_SYMLINK_NOFOLLOW);
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
	/* The copy keeps the source's times: an applied file is as old as the
	 * session made it (make compares them), and a backup restored by undo
	 * gets back the time it had. */
	const struct timespec t[2] = { st.st_atim, st.st_mtim };
	if (r >= 0 && futimens(out, t) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dst_dfd, tmp, 0);
	return r;
}

int cow_replace_with_copy(int src_dfd, const char *src_name, const struct stat *src_st,
			  int dst_dfd, const char *tmp, const char *name, mode_t mode)
{
	int r;

	r = cow_make_tmp_copy(src_dfd, src_name, src_st, dst_dfd, tmp, mode);
	if (r < 0)
		return r;
	if (renameat(dst_dfd, tmp, dst_dfd, name) < 0) {
		r = -errno;
		(void)unlinkat(dst_dfd, tmp, 0);
		return r;
	}
	return 0;
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
