/* path_real(): realpath(3), component by component, with one thread's
 * answers kept for the scope of a run's planning. See path-real.h. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/path-real.h"

#define MAX_LINKS 40 /* the kernel's and glibc's limit */

typedef struct Answer {
	char *path;   /* an absolute path without "." or ".." components */
	char *target; /* its symlink target, NULL when it is not a symlink */
	int error;    /* readlink's errno other than EINVAL, or 0 */
} Answer;

static __thread struct {
	unsigned depth;
	Answer *a;
	size_t n, cap;
} cache;

void path_real_begin(void)
{
	cache.depth++;
}

void path_real_end(void)
{
	if (cache.depth == 0 || --cache.depth > 0)
		return;
	for (size_t i = 0; i < cache.n; i++) {
		free(cache.a[i].path);
		free(cache.a[i].target);
	}
	free(cache.a);
	cache.a = NULL;
	cache.n = cache.cap = 0;
}

/* The answer for @path (asked of the kernel when not known yet), or NULL
 * for out of memory. */
static const Answer *answer(const char *path)
{
	char buf[PATH_MAX];
	Answer x = {};
	ssize_t k;

	for (size_t i = 0; i < cache.n; i++)
		if (strcmp(cache.a[i].path, path) == 0)
			return &cache.a[i];
	k = readlink(path, buf, sizeof(buf) - 1);
	if (k >= (ssize_t)sizeof(buf) - 1)
		x.error = ENAMETOOLONG;
	else if (k >= 0) {
		buf[k] = 0;
		x.target = strdup(buf);
		if (!x.target)
			return NULL;
	} else if (errno != EINVAL)
		x.error = errno;
	x.path = strdup(path);
	if (x.path && cache.n == cache.cap) {
		size_t cap = cache.cap ? cache.cap * 2 : 64;
		Answer *a = realloc(cache.a, cap * sizeof(*a));
		if (a) {
			cache.a = a;
			cache.cap = cap;
		}
	}
	if (!x.path || cache.n == cache.cap) {
		free(x.path);
		free(x.target);
		return NULL;
	}
	cache.a[cache.n] = x;
	return &cache.a[cache.n++];
}

/* Does what follows a component ask for it to be a directory: a trailing
 * slash, or a "." or ".." next? realpath(3) checks that with a stat; this
 * leaves those paths to it. */
static bool needs_dir_check(const char *p)
{
	const char *q = p;
	size_t n;

	while (*q == '/')
		q++;
	if (q == p)
		return false;
	n = strcspn(q, "/");
	return n == 0 || (n == 1 && q[0] == '.') || (n == 2 && q[0] == '.' && q[1] == '.');
}

/* @path resolved component by component; NULL with errno set, or with
 * *ret_fallback set when realpath(3) must answer instead. */
static char *resolve(const char *path, bool *ret_fallback)
{
	char out[PATH_MAX] = "", rest[PATH_MAX], next[PATH_MAX];
	size_t len = 0;
	int links = 0;

	if (strlen(path) >= sizeof(rest)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	strcpy(rest, path);
	for (char *p = rest;;) {
		const Answer *a;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		if (n == 1 && p[0] == '.') {
			p += n;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
			out[len] = 0;
			p += n;
			continue;
		}
		if (len + 1 + n >= sizeof(out)) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		out[len] = '/';
		memcpy(out + len + 1, p, n);
		out[len + 1 + n] = 0;
		p += n;
		a = answer(out);
		if (!a) {
			errno = ENOMEM;
			return NULL;
		}
		if (a->error) {
			errno = a->error;
			return NULL;
		}
		if (!a->target) {
			if (needs_dir_check(p)) {
				*ret_fallback = true;
				return NULL;
			}
			len += 1 + n;
			continue;
		}
		/* A symlink: its target, then what was left. */
		if (++links > MAX_LINKS) {
			errno = ELOOP;
			return NULL;
		}
		/* (@p is empty or starts with the slash after the link.) */
		if (strlen(a->target) + strlen(p) >= sizeof(next)) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		strcpy(next, a->target);
		strcat(next, p);
		strcpy(rest, next);
		p = rest;
		if (rest[0] == '/')
			len = 0;
		out[len] = 0;
	}
	return strdup(len ? out : "/");
}

char *path_real(const char *path)
{
	bool fallback = false;
	char *r;

	/* Outside a run's scope, and for a relative path (the working
	 * directory's business): realpath(3) itself. */
	if (!path || cache.depth == 0 || path[0] != '/')
		return realpath(path, NULL);
	r = resolve(path, &fallback);
	return fallback ? realpath(path, NULL) : r;
}
