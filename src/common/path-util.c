#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path-util.h"

int path_normalize(const char *path, char **ret)
{
	size_t len;
	bool absolute;
	char *out;
	size_t o = 0;
	/* Number of leading ".." components in a relative result, which a
	 * later ".." must not cancel. */
	size_t n_up = 0;
	size_t n_comp = 0;

	if (!path || !*path)
		return -EINVAL;
	len = strlen(path);
	absolute = path[0] == '/';
	out = malloc(len + 2);
	if (!out)
		return -ENOMEM;
	if (absolute)
		out[o++] = '/';

	for (const char *s = path; *s;) {
		const char *e;
		size_t n;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		e = strchrnul(s, '/');
		n = (size_t)(e - s);

		if (n == 1 && s[0] == '.') {
			/* nothing */
		} else if (n == 2 && s[0] == '.' && s[1] == '.') {
			if (n_comp > n_up) {
				/* Drop the last component. */
				while (o > 0 && out[o - 1] != '/')
					o--;
				if (o > 0 && (!absolute || o > 1))
					o--;
				n_comp--;
			} else if (!absolute) {
				if (o > 0)
					out[o++] = '/';
				out[o++] = '.';
				out[o++] = '.';
				n_up++;
				n_comp++;
			}
			/* An absolute path cannot go above "/". */
		} else {
			if (o > 0 && out[o - 1] != '/')
				out[o++] = '/';
			memcpy(out + o, s, n);
			o += n;
			n_comp++;
		}
		s = e;
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = '\0';
	*ret = out;
	return 0;
}

int path_expand_home(const char *path, const char *home, char **ret)
{
	char *s;

	if (path[0] == '~') {
		if (path[1] != '\0' && path[1] != '/')
			return -EINVAL;
		if (!home || home[0] != '/')
			return -EINVAL;
		if (asprintf(&s, "%s%s", home, path + 1) < 0)
			return -ENOMEM;
	} else {
		s = strdup(path);
		if (!s)
			return -ENOMEM;
	}
	*ret = s;
	return 0;
}

int path_join(const char *a, const char *b, char **ret)
{
	size_t la = strlen(a);
	bool slash = la > 0 && a[la - 1] == '/';
	char *s;

	while (*b == '/' && slash)
		b++;
	if (asprintf(&s, "%s%s%s", a, slash || !*b ? "" : "/", b) < 0)
		return -ENOMEM;
	*ret = s;
	return 0;
}

bool path_is_beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	if (strcmp(dir, ".") == 0)
		return path[0] != '/' && !path_escapes(path);
	if (strncmp(path, dir, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/';
}

bool path_escapes(const char *path)
{
	return strcmp(path, "..") == 0 || strncmp(path, "../", 3) == 0;
}

bool path_has_wildcard(const char *path)
{
	return strpbrk(path, "*?[") != NULL;
}
