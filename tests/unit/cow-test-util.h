/* Helpers for the cow unit tests: build lower/upper trees by hand. Header
 * only, included by test-cow-*.c. */
#pragma once

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "cow/cow-internal.h"

static inline char *tu_path(const char *root, const char *rel)
{
	char *p;
	if (asprintf(&p, "%s/%s", root, rel) < 0)
		abort();
	return p;
}

static inline void tu_file(const char *root, const char *rel, const char *content, mode_t mode)
{
	char *p = tu_path(root, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, content, strlen(content)) != (ssize_t)strlen(content))
		abort();
	close(fd);
	if (chmod(p, mode) < 0)
		abort();
	free(p);
}

static inline void tu_dir(const char *root, const char *rel, mode_t mode)
{
	char *p = tu_path(root, rel);
	if (mkdir(p, mode) < 0 || chmod(p, mode) < 0)
		abort();
	free(p);
}

static inline void tu_symlink(const char *root, const char *rel, const char *target)
{
	char *p = tu_path(root, rel);
	if (symlink(target, p) < 0)
		abort();
	free(p);
}

/* A whiteout: a 0:0 character device where mknod is allowed (root), else
 * the xattr form newer kernels also use. */
static inline void tu_whiteout(const char *root, const char *rel)
{
	char *p = tu_path(root, rel);
	if (mknod(p, S_IFCHR | 0, makedev(0, 0)) < 0) {
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			abort();
		close(fd);
		if (setxattr(p, "user.overlay.whiteout", "", 0, 0) < 0)
			abort();
	}
	free(p);
}

static inline void tu_opaque(const char *root, const char *rel)
{
	char *p = tu_path(root, rel);
	if (setxattr(p, "user.overlay.opaque", "y", 1, 0) < 0)
		abort();
	free(p);
}

static inline char *tu_read(const char *root, const char *rel)
{
	char *p = tu_path(root, rel), *buf = calloc(1, 65536);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	free(p);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	ssize_t n = read(fd, buf, 65535);
	close(fd);
	if (n < 0)
		abort();
	return buf;
}

static inline mode_t tu_mode(const char *root, const char *rel)
{
	char *p = tu_path(root, rel);
	struct stat st;
	int r = lstat(p, &st);
	free(p);
	return r < 0 ? 0 : st.st_mode;
}

static inline char *tu_mkdtemp(void)
{
	char *t = strdup("/tmp/ward-cow-unit.XXXXXX");
	if (!t || !mkdtemp(t))
		abort();
	return t;
}

static inline void tu_rm_rf(const char *p)
{
	char *cmd;
	if (asprintf(&cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", p, p) < 0)
		abort();
	if (system(cmd) != 0)
		abort();
	free(cmd);
}

static inline const CowChange *tu_find(const CowChangeList *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i].path, path) == 0)
			return &l->items[i];
	return NULL;
}

static inline int tu_scan(const char *upper, const char *lower, char *const *prot,
			  CowChangeList *l)
{
	int u = open(upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int w = open(lower, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = cow_scan(u, w, prot, l);
	close(u);
	close(w);
	return r;
}
