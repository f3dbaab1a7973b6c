/* The sandboxed command's environment: an allowlist (env.pass) minus a
 * denylist (env.strip), plus explicit additions (env.set, --env). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/env-filter.h"

bool env_name_matches(const char *pattern, const char *name)
{
	/* Iterative glob with one backtrack point: '*' matches any run,
	 * everything else matches itself (case-sensitive). */
	const char *star = NULL, *retry = NULL;

	while (*name) {
		if (*pattern == '*') {
			star = pattern++;
			retry = name;
		} else if (*pattern == *name) {
			pattern++;
			name++;
		} else if (star) {
			pattern = star + 1;
			name = ++retry;
		} else
			return false;
	}
	while (*pattern == '*')
		pattern++;
	return *pattern == '\0';
}

static bool matches_any(char *const *patterns, const char *name)
{
	STRV_FOREACH(p, patterns)
		if (env_name_matches(*p, name))
			return true;
	return false;
}

/* Index of the entry named @name (length @n) in @l, or -1. */
static ssize_t find(char *const *l, const char *name, size_t n)
{
	for (size_t i = 0; l && l[i]; i++)
		if (strncmp(l[i], name, n) == 0 && l[i][n] == '=')
			return (ssize_t)i;
	return -1;
}

/* Put "NAME=VALUE" @kv into @l, replacing an entry of the same name in its
 * place (stable order, later wins). Takes ownership of @kv. */
static int put(char ***l, char *kv)
{
	const char *eq;
	ssize_t i;

	if (!kv)
		return -ENOMEM;
	eq = strchr(kv, '=');
	i = find(*l, kv, (size_t)(eq - kv));
	if (i >= 0) {
		free((*l)[i]);
		(*l)[i] = kv;
		return 0;
	}
	return strv_consume(l, kv);
}

char **env_filter(const WardPolicy *p, char *const *envp, char *const *extra)
{
	_cleanup_strv_ char **out = calloc(1, sizeof(char *));

	if (!out)
		return NULL;

	STRV_FOREACH(e, envp) {
		const char *eq = strchr(*e, '=');
		_cleanup_free_ char *name = NULL;

		/* Entries without '=' or with an empty name are not variables. */
		if (!eq || eq == *e)
			continue;
		name = strndup(*e, (size_t)(eq - *e));
		if (!name)
			return NULL;
		if (!matches_any(p->env_pass, name) || matches_any(p->env_strip, name))
			continue;
		if (put(&out, strdup(*e)) < 0)
			return NULL;
	}

	/* env.set and --env are explicit choices, so env.strip does not apply. */
	STRV_FOREACH(s, p->env_set)
		if (strchr(*s, '=') && put(&out, strdup(*s)) < 0)
			return NULL;

	STRV_FOREACH(x, extra) {
		if (strchr(*x, '=')) {
			if (**x != '=' && put(&out, strdup(*x)) < 0)
				return NULL;
			continue;
		}
		/* A bare NAME copies the variable from @envp; of duplicates the
		 * last wins, as in the filtering above. */
		size_t n = strlen(*x);
		const char *found = NULL;

		if (n == 0)
			continue;
		STRV_FOREACH(e, envp)
			if (strncmp(*e, *x, n) == 0 && (*e)[n] == '=')
				found = *e;
		if (found && put(&out, strdup(found)) < 0)
			return NULL;
	}
	return TAKE_PTR(out);
}

static const char *const ca_vars[] = {
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
	"CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
};

int env_ca_paths(char *const *envp, char ***ret)
{
	_cleanup_strv_ char **out = calloc(1, sizeof(char *));

	if (!out)
		return -ENOMEM;
	STRV_FOREACH(e, envp)
	{
		for (size_t i = 0; i < sizeof(ca_vars) / sizeof(*ca_vars); i++) {
			size_t n = strlen(ca_vars[i]);
			_cleanup_free_ char *v = NULL;
			char *save = NULL;

			if (strncmp(*e, ca_vars[i], n) != 0 || (*e)[n] != '=')
				continue;
			v = strdup(*e + n + 1);
			if (!v)
				return -ENOMEM;
			/* OpenSSL reads SSL_CERT_DIR as a ':'-separated list. */
			for (char *t = strtok_r(v, ":", &save); t; t = strtok_r(NULL, ":", &save))
				if (t[0] == '/' && strv_extend_unique(&out, t) < 0)
					return -ENOMEM;
		}
	}
	*ret = TAKE_PTR(out);
	return 0;
}
