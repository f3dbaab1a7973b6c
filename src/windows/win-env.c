/* Case-insensitive names over env_filter(): fold everything to upper case
 * first, then filter with the shared rules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/env-filter.h"
#include "windows/win-env.h"

/* A copy of @l with the name part (before '=', or all) upper-cased. */
static char **upper_names(char *const *l)
{
	_cleanup_strv_ char **out = strv_copy(l);

	if (!out)
		return NULL;
	STRV_FOREACH(s, out)
		for (char *c = *s; *c && *c != '='; c++)
			if (*c >= 'a' && *c <= 'z')
				*c = (char)(*c - 'a' + 'A');
	return TAKE_PTR(out);
}

static int cmp_name(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	/* Sorted by name: '=' ends a name, so it sorts before any character. */
	for (;; x++, y++) {
		unsigned char cx = *x == '=' ? 0 : (unsigned char)*x;
		unsigned char cy = *y == '=' ? 0 : (unsigned char)*y;

		if (cx != cy || cx == 0)
			return (int)cx - (int)cy;
	}
}

int win_env_build(const WardPolicy *p, char *const *envp, char *const *extra, char *const *set,
		  char ***ret)
{
	_cleanup_strv_ char **pass = upper_names(p->env_pass), **strip = upper_names(p->env_strip),
			    **pset = upper_names(p->env_set), **env = upper_names(envp),
			    **ext = upper_names(extra), **out = NULL;
	WardPolicy q = *p;
	int r;

	if ((p->env_pass && !pass) || (p->env_strip && !strip) || (p->env_set && !pset) ||
	    (envp && !env) || (extra && !ext))
		return -ENOMEM;
	q.env_pass = pass;
	q.env_strip = strip;
	q.env_set = pset;
	/* env_filter keeps the last of duplicate names in the first one's
	 * place; after folding, "Path" and "PATH" are duplicates. */
	out = env_filter(&q, env, ext);
	if (!out)
		return -ENOMEM;
	r = win_env_set(&out, set);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(out);
	return 0;
}

int win_env_set(char ***env, char *const *set)
{
	_cleanup_strv_ char **more = upper_names(set);

	if (set && !more)
		return -ENOMEM;
	STRV_FOREACH(s, more) {
		size_t n = strcspn(*s, "=");
		bool replaced = false;

		for (size_t i = 0; *env && (*env)[i]; i++)
			if (strncmp((*env)[i], *s, n) == 0 && (*env)[i][n] == '=') {
				char *c = strdup(*s);

				if (!c)
					return -ENOMEM;
				free((*env)[i]);
				(*env)[i] = c;
				replaced = true;
			}
		if (!replaced && strv_extend(env, *s) < 0)
			return -ENOMEM;
	}
	if (*env)
		qsort(*env, strv_length(*env), sizeof(char *), cmp_name);
	return 0;
}

const char *win_env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	STRV_FOREACH(e, env)
		if (strncasecmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

char *win_env_block(char *const *env, size_t *ret_len)
{
	size_t len = 1;
	char *b, *p;

	STRV_FOREACH(e, env)
		len += strlen(*e) + 1;
	if (len == 1)
		len = 2; /* an empty block is two NULs */
	b = calloc(1, len);
	if (!b)
		return NULL;
	p = b;
	STRV_FOREACH(e, env) {
		size_t n = strlen(*e) + 1;

		memcpy(p, *e, n);
		p += n;
	}
	*ret_len = len;
	return b;
}
