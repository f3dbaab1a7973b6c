/* Resolving host paths without following planted symlinks: safe-path.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "common/safe-path.h"

#define MAX_SYMLINK_HOPS 40

/* clang-format off */
static const char *const system_trees[] = {
	"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
	"/dev", "/proc", "/sys", "/run",
};
static const char *const system_tops[] = {
	"/", "/var", "/var/lib", "/var/tmp", "/var/cache", "/var/log", "/var/spool",
	"/var/mail", "/var/local", "/var/opt", "/home", "/opt", "/srv", "/mnt", "/media",
	"/tmp", "/root", "/snap",
};
/* clang-format on */

static bool at_or_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool path_is_system_dir(const char *path)
{
	for (size_t i = 0; i < ELEMENTSOF(system_trees); i++)
		if (at_or_below(path, system_trees[i]))
			return true;
	for (size_t i = 0; i < ELEMENTSOF(system_tops); i++)
		if (strcmp(path, system_tops[i]) == 0)
			return true;
	return false;
}

/* Could only the system have made the symlink @lst in directory @dirfd
 * (canonical path @dir)? */
static bool symlink_trusted(int dirfd, const char *dir, const struct stat *lst)
{
	struct stat dst;

	if (lst->st_uid != 0 || fstat(dirfd, &dst) < 0)
		return false;
	if (dst.st_uid != 0 || (dst.st_mode & 0022))
		return false;
	/* A sandbox of a root caller is uid 0 too: root-owned proves nothing
	 * outside the directories no workspace can be. */
	return getuid() != 0 || path_is_system_dir(dir);
}

static int set_dup(char **ret, const char *s)
{
	if (!ret)
		return 0;
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

/* @dir + "/" + @name into @buf (PATH_MAX). */
static int join_into(char *buf, const char *dir, const char *name)
{
	int n = snprintf(buf, PATH_MAX, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

int path_open_trusted(const char *path, char **ret_real, char **reterr_link,
		      char **reterr_target)
{
	_cleanup_close_ int cur = -EBADF;
	char real[PATH_MAX] = "/", todo[PATH_MAX], next[PATH_MAX];
	char *rest;
	int hops = 0, r;

	if (!path || path[0] != '/')
		return -EINVAL;
	if (strlen(path) >= sizeof(todo))
		return -ENAMETOOLONG;
	strcpy(todo, path);
	cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;

	rest = todo;
	for (;;) {
		char name[NAME_MAX + 1];
		struct stat st;
		size_t n;
		int fd;

		while (*rest == '/')
			rest++;
		if (!*rest)
			break;
		n = strcspn(rest, "/");
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(name, rest, n);
		name[n] = '\0';
		rest += n;
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			char *sl = strrchr(real, '/');
			fd = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				return -errno;
			(void)close(cur);
			cur = fd;
			if (sl == real)
				real[1] = '\0';
			else
				*sl = '\0';
			continue;
		}
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t k = readlinkat(cur, name, target, sizeof(target) - 1);
			if (k < 0)
				return -errno;
			target[k] = '\0';
			if (!symlink_trusted(cur, real, &st)) {
				if ((r = join_into(next, real, name)) < 0)
					return r;
				if ((r = set_dup(reterr_link, next)) < 0 ||
				    (r = set_dup(reterr_target, target)) < 0)
					return r;
				return -ELOOP;
			}
			if (++hops > MAX_SYMLINK_HOPS)
				return -ELOOP;
			/* Continue with the target, then what was left. */
			if ((size_t)snprintf(next, sizeof(next), "%s/%s", target, rest) >= sizeof(next))
				return -ENAMETOOLONG;
			strcpy(todo, next);
			rest = todo;
			if (target[0] == '/') {
				fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (fd < 0)
					return -errno;
				(void)close(cur);
				cur = fd;
				strcpy(real, "/");
			}
			continue;
		}
		fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		(void)close(cur);
		cur = fd;
		if ((r = join_into(next, real, name)) < 0)
			return r;
		strcpy(real, next);
	}
	if (ret_real && (r = set_dup(ret_real, real)) < 0)
		return r;
	return TAKE_FD(cur);
}

int write_file_safe(const char *path, const char *data, size_t len, unsigned mode,
		    char **reterr_link, char **reterr_target)
{
	_cleanup_free_ char *dir = NULL, *tmp = NULL;
	_cleanup_close_ int dfd = -EBADF, fd = -EBADF;
	const char *base, *sl;
	struct stat st;
	int r;

	if (!path || path[0] != '/')
		return -EINVAL;
	sl = strrchr(path, '/');
	base = sl + 1;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return -EISDIR;
	dir = sl == path ? strdup("/") : strndup(path, (size_t)(sl - path));
	if (!dir)
		return -ENOMEM;
	dfd = path_open_trusted(dir, NULL, reterr_link, reterr_target);
	if (dfd < 0)
		return dfd;
	/* O_PATH is enough for the *at() calls below only through a real
	 * directory: reopen it as one. */
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	(void)close(dfd);
	dfd = TAKE_FD(fd);

	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t k = readlinkat(dfd, base, target, sizeof(target) - 1);
			target[k < 0 ? 0 : k] = '\0';
			if ((r = set_dup(reterr_link, path)) < 0 ||
			    (r = set_dup(reterr_target, target)) < 0)
				return r;
			return -ELOOP;
		}
		if (!S_ISREG(st.st_mode))
			return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	} else if (errno != ENOENT)
		return -errno;

	if (asprintf(&tmp, ".%s.ward-XXXXXX", base) < 0)
		return -ENOMEM;
	/* A name of our own, created exclusively: nothing planted is opened. */
	for (int tries = 0;; tries++) {
		unsigned v = (unsigned)getpid() * 2654435761U ^ (unsigned)tries * 40503U;
		snprintf(tmp + strlen(tmp) - 6, 7, "%06x", v & 0xffffffU);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0)
			break;
		if (errno != EEXIST || tries > 100)
			return -errno;
	}
	for (size_t off = 0; off < len;) {
		ssize_t k = write(fd, data + off, len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			r = k < 0 ? -errno : -EIO;
			(void)unlinkat(dfd, tmp, 0);
			return r;
		}
		off += (size_t)k;
	}
	if (close(TAKE_FD(fd)) < 0 || renameat(dfd, tmp, dfd, base) < 0) {
		r = -errno;
		(void)unlinkat(dfd, tmp, 0);
		return r;
	}
	return 0;
}
