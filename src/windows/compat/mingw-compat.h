/* What the portable sources use from POSIX that mingw-w64's C library
 * lacks. Force-included (-include) by the Windows build only, so no Linux
 * file needs an #ifdef. */
#pragma once

#include <stdlib.h>
#include <string.h>

static inline char *ward_strndup(const char *s, size_t n)
{
	size_t l = strnlen(s, n);
	char *d = malloc(l + 1);

	if (d) {
		memcpy(d, s, l);
		d[l] = '\0';
	}
	return d;
}
#define strndup ward_strndup

static inline char *ward_strchrnul(const char *s, int c)
{
	while (*s && *s != (char)c)
		s++;
	return (char *)s;
}
#define strchrnul ward_strchrnul

/* The absolute form of @p (no symlinks to resolve the POSIX way: the policy
 * loader only records it); NULL, like realpath(3), when it cannot. */
static inline char *ward_realpath(const char *p, char *buf)
{
	return buf ? NULL : _fullpath(NULL, p, 0);
}
#define realpath ward_realpath

/* The HTTP head parser (net/http-parse.c) looks for the head's end. */
static inline void *ward_memmem(const void *hay, size_t hn, const void *needle, size_t nn)
{
	const char *h = hay;

	if (nn == 0)
		return (void *)h;
	for (size_t i = 0; nn <= hn && i <= hn - nn; i++)
		if (h[i] == *(const char *)needle && memcmp(h + i, needle, nn) == 0)
			return (void *)(h + i);
	return NULL;
}
#define memmem ward_memmem
