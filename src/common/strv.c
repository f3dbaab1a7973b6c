#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strv.h"

void strv_free(char **l)
{
	if (!l)
		return;
	for (char **p = l; *p; p++)
		free(*p);
	free(l);
}

size_t strv_length(char *const *l)
{
	size_t n = 0;
	while (l && l[n])
		n++;
	return n;
}

int strv_consume(char ***l, char *s)
{
	size_t n;
	char **nl;

	if (!s)
		return -ENOMEM;
	n = strv_length(*l);
	nl = realloc(*l, sizeof(char *) * (n + 2));
	if (!nl) {
		free(s);
		return -ENOMEM;
	}
	nl[n] = s;
	nl[n + 1] = NULL;
	*l = nl;
	return 0;
}

int strv_extend(char ***l, const char *s)
{
	return strv_consume(l, strdup(s));
}

int strv_extendfv(char ***l, const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		return -ENOMEM;
	return strv_consume(l, s);
}

int strv_extendf(char ***l, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = strv_extendfv(l, fmt, ap);
	va_end(ap);
	return r;
}

int strv_extend_strv(char ***l, char *const *other)
{
	for (size_t i = 0; other && other[i]; i++) {
		int r = strv_extend(l, other[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

int strv_extend_unique(char ***l, const char *s)
{
	if (strv_contains(*l, s))
		return 0;
	return strv_extend(l, s);
}

bool strv_contains(char *const *l, const char *s)
{
	for (size_t i = 0; l && l[i]; i++)
		if (strcmp(l[i], s) == 0)
			return true;
	return false;
}

size_t strv_remove(char **l, const char *s)
{
	size_t r = 0, w = 0;

	if (!l)
		return 0;
	for (size_t i = 0; l[i]; i++) {
		if (strcmp(l[i], s) == 0) {
			free(l[i]);
			r++;
		} else
			l[w++] = l[i];
	}
	l[w] = NULL;
	return r;
}

char **strv_copy(char *const *l)
{
	char **n = calloc(1, sizeof(char *));
	if (!n)
		return NULL;
	if (strv_extend_strv(&n, l) < 0) {
		strv_free(n);
		return NULL;
	}
	return n;
}
