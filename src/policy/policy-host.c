/* How a policy meets the host's file system (POSIX): which fs paths are
 * absolute, and reading a policy file the way only its owner could have
 * written it. The Windows build has its own (src/windows/win-policy-host.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/safe-path.h"
#include "policy/policy-internal.h"

bool policy_host_absolute(const char *s)
{
	return s[0] == '/';
}

/* Policies are small; a bigger file is a mistake (or an attack on the parser). */
#define POLICY_MAX_SIZE (1024 * 1024)

/* Could someone other than the user (or root) have written @st? */
static int check_owner(const char *path, const struct stat *st, const char *what, PolicyError *e)
{
	if (st->st_uid != getuid() && st->st_uid != 0)
		return policy_error_set(e, path, "", "%s is owned by uid %u, not by you or root",
					what, (unsigned)st->st_uid);
	if (st->st_mode & 0022)
		return policy_error_set(e, path, "",
					"%s is writable by group or others (mode %04o); "
					"chmod go-w it",
					what, (unsigned)(st->st_mode & 07777));
	return 0;
}

/* The default policy, $XDG_CONFIG_HOME/ward/policy.json, is loaded only if
 * nothing a sandboxed run could have written leads to it: no untrusted
 * symlink on the way (safe-path.h), the file itself no symlink, and the
 * directory and the file the user's (or root's) and writable by nobody
 * else. ward masks its configuration directory in every run, so no run can
 * write there. -ENOENT (no error set) when there is no such file. */
static int open_default(const char *path, PolicyError *e)
{
	_cleanup_free_ char *dir = strdup(path), *link = NULL, *target = NULL;
	_cleanup_close_ int dfd = -EBADF;
	struct stat st;
	char *sl;
	int fd, r;

	if (!dir)
		return -ENOMEM;
	sl = strrchr(dir, '/');
	*sl = '\0';
	dfd = path_open_trusted(dir[0] ? dir : "/", NULL, &link, &target);
	if (dfd == -ENOENT)
		return -ENOENT;
	if (dfd == -ELOOP && link)
		return policy_error_set(e, path, "",
					"'%s' is a symlink to '%s' that a sandboxed command could "
					"have made; not loading the policy through it",
					link, target),
		       -ELOOP;
	if (dfd < 0)
		return policy_error_set(e, path, "", "cannot open: %s", strerror(-dfd)), dfd;
	if (fstat(dfd, &st) < 0)
		return -errno;
	if ((r = check_owner(path, &st, "its directory", e)) < 0)
		return r;
	fd = openat(dfd, sl + 1, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0 && errno == ELOOP)
		return policy_error_set(e, path, "",
					"is a symlink; the default policy must be a regular file "
					"(or name the file with --policy)"),
		       -ELOOP;
	if (fd < 0) {
		r = -errno;
		return policy_error_set(e, path, "", "cannot open: %s", strerror(-r)), r;
	}
	return fd;
}

int policy_read_file(const char *path, bool is_default, char **ret, PolicyError *e)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t n = 0;
	int r;

	/* O_NONBLOCK: a FIFO given as the policy must fail the S_ISREG check
	 * below, not hang in open(); it does not affect regular files. */
	if (is_default)
		fd = open_default(path, e);
	else {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			r = -errno;
			return policy_error_set(e, path, "", "cannot open: %s", strerror(-r)), r;
		}
	}
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		return policy_error_set(e, path, "", "cannot stat: %s", strerror(-r)), r;
	}
	if (!S_ISREG(st.st_mode))
		return policy_error_set(e, path, "", "not a regular file");
	/* A policy anyone else could have written is not the user's. */
	if ((r = check_owner(path, &st, "the file", e)) < 0)
		return r;
	if (st.st_size > POLICY_MAX_SIZE)
		return policy_error_set(e, path, "", "larger than %d bytes", POLICY_MAX_SIZE);

	buf = malloc(POLICY_MAX_SIZE + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t k = read(fd, buf + n, POLICY_MAX_SIZE + 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = -errno;
			return policy_error_set(e, path, "", "cannot read: %s", strerror(-r)), r;
		}
		if (k == 0)
			break;
		n += (size_t)k;
		if (n > POLICY_MAX_SIZE)
			return policy_error_set(e, path, "", "larger than %d bytes",
						POLICY_MAX_SIZE);
	}
	buf[n] = '\0';
	if (strlen(buf) != n)
		return policy_error_set(e, path, "", "contains a NUL byte");
	*ret = TAKE_PTR(buf);
	return 0;
}

