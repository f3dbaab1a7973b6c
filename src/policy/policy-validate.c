/* Value validators shared by the parser and policy_finalize(), and
 * policy_finalize() itself: "~" expansion, normalization, deduplication and
 * the rules that need the workspace. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "common/path-util.h"
#include "common/strv.h"
#include "policy/policy-internal.h"

#define PATH_MAX_LEN 4095

/* clang-format off */
static const PolicyLimitRange limit_ranges[] = {
	/* 30 days: longer is a mistake, not a build. */
	{ "timeout_s",       1, 30ULL * 24 * 3600 },
	/* 16 TiB */
	{ "memory_mb",       1, 16ULL * 1024 * 1024 },
	/* PID_MAX_LIMIT on 64-bit kernels */
	{ "pids",            1, 4194304 },
	/* 1 TiB of tmpfs */
	{ "tmp_mb",          1, 1024ULL * 1024 },
	/* below 16 even the dynamic loader and init fail; 1048576 is fs.nr_open's default */
	{ "nofile",         16, 1048576 },
	{ "shm_mb",          1, 1024ULL * 1024 },
	/* the kernel's own ceilings are INT_MAX; these are sanity bounds */
	{ "inotify_instances", 1, 1048576 },
	{ "inotify_watches", 1, 16777216 },
	{ "sigpending",      1, 16777216 },
	{ "msgqueue_kb",     1, 1024ULL * 1024 },
	{ "memlock_kb",      1, 16ULL * 1024 * 1024 },
	/* a live session idle longer than a week is one forgotten */
	{ "session_idle_s",  1, 7ULL * 24 * 3600 },
	/* percent of one CPU: 1024 CPUs */
	{ "cpu_percent",     1, 102400 },
	/* cgroup v2 io.weight's range */
	{ "io_weight",       1, 10000 },
	{ "max_connections", 1, 65536 },
};
/* clang-format on */

const PolicyLimitRange *policy_limit_range(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(limit_ranges); i++)
		if (strcmp(limit_ranges[i].name, name) == 0)
			return &limit_ranges[i];
	return NULL;
}

static bool why(char *buf, size_t n, const char *msg)
{
	snprintf(buf, n, "%s", msg);
	return false;
}

bool policy_valid_fs_path(const char *s, char *w, size_t n)
{
	if (!*s)
		return why(w, n, "expected an absolute path or one starting with \"~/\"");
	if (strlen(s) > PATH_MAX_LEN)
		return why(w, n, "path too long");
	if (path_has_wildcard(s))
		return why(w, n,
			   "wildcard patterns are not supported yet because they cannot be enforced "
			   "for files created during the run");
	if (policy_host_absolute(s))
		return true;
	if (s[0] == '~' && (s[1] == '\0' || s[1] == '/'))
		return true;
	return why(w, n, "expected an absolute path or one starting with \"~/\"");
}

bool policy_valid_protected(const char *s, char *w, size_t n)
{
	_cleanup_free_ char *norm = NULL;

	if (!*s || s[0] == '/' || s[0] == '~')
		return why(w, n, "expected a path relative to the workspace");
	if (strlen(s) > PATH_MAX_LEN)
		return why(w, n, "path too long");
	if (path_has_wildcard(s))
		return why(w, n,
			   "wildcard patterns are not supported yet because they cannot be enforced "
			   "for files created during the run");
	if (path_normalize(s, &norm) < 0)
		return why(w, n, "out of memory");
	if (strcmp(norm, ".") == 0 || path_escapes(norm))
		return why(w, n, "expected a path inside the workspace, not the workspace itself or above it");
	return true;
}

bool policy_valid_ip_literal(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

bool policy_valid_hostname(const char *s, bool allow_wildcard)
{
	size_t len, label = 0;

	if (allow_wildcard && s[0] == '*' && s[1] == '.')
		s += 2;
	len = strlen(s);
	if (len == 0 || len > 253)
		return false;
	for (size_t i = 0; i <= len; i++) {
		char c = s[i];

		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63 || s[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			return false;
		if (label == 0 && c == '-')
			return false;
		label++;
	}
	return true;
}

static bool valid_port(const char *s)
{
	unsigned long v = 0;
	size_t n = strlen(s);

	if (n == 0 || n > 5)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	return v >= 1 && v <= 65535;
}

static bool all_digits_and_dots(const char *s)
{
	return *s && strspn(s, "0123456789.") == strlen(s);
}

bool policy_valid_host_pattern(const char *s, char *w, size_t n)
{
	char host[256];
	const char *port = NULL;
	const char *colon;

	if (!*s)
		return why(w, n, "empty");
	if (strlen(s) >= sizeof(host))
		return why(w, n, "too long");
	if (strstr(s, "://"))
		return why(w, n,
			   "a URL scheme (\"http://\", \"https://\") is not allowed: write the host "
			   "alone, like example.org or example.org:8443");
	if (strchr(s, '/'))
		return why(w, n, "a path is not allowed: write the host alone, like example.org");

	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		unsigned char buf[16];

		if (!end)
			return why(w, n, "missing \"]\"");
		memcpy(host, s + 1, (size_t)(end - s - 1));
		host[end - s - 1] = '\0';
		if (inet_pton(AF_INET6, host, buf) != 1)
			return why(w, n, "not an IPv6 address inside the brackets");
		if (end[1] == '\0')
			return true;
		if (end[1] != ':' || !valid_port(end + 2))
			return why(w, n, "expected \":PORT\" with a port from 1 to 65535 after \"]\"");
		return true;
	}

	colon = strchr(s, ':');
	if (colon && strchr(colon + 1, ':'))
		return why(w, n, "IPv6 addresses must be written in brackets, like [::1]:443");
	if (colon) {
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = '\0';
		port = colon + 1;
		if (!valid_port(port))
			return why(w, n, "the port must be a number from 1 to 65535");
	} else
		snprintf(host, sizeof(host), "%s", s);

	if (all_digits_and_dots(host)) {
		unsigned char buf[4];
		if (inet_pton(AF_INET, host, buf) != 1)
			return why(w, n, "not a valid IPv4 address");
		return true;
	}
	if (strchr(host, '*') && !(host[0] == '*' && host[1] == '.' && !strchr(host + 1, '*')))
		return why(w, n, "\"*\" is allowed only as a whole first label, as in *.example.com");
	if (!policy_valid_hostname(host, true))
		return why(w, n, "not a valid host name");
	return true;
}

const char *policy_loopback_pattern(const char *pattern)
{
	char host[256];
	const char *colon;
	unsigned char a[16];
	size_t n;

	if (pattern[0] == '[') {
		const char *end = strchr(pattern, ']');
		n = end ? (size_t)(end - pattern - 1) : 0;
		if (n >= sizeof(host))
			return NULL;
		memcpy(host, pattern + 1, n);
		host[n] = '\0';
		if (inet_pton(AF_INET6, host, a) == 1 &&
		    (IN6_IS_ADDR_LOOPBACK((struct in6_addr *)a) ||
		     (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)a) && a[12] == 127)))
			return "the loopback address";
		return NULL;
	}
	colon = strchr(pattern, ':');
	n = colon ? (size_t)(colon - pattern) : strlen(pattern);
	if (n >= sizeof(host))
		return NULL;
	memcpy(host, pattern, n);
	host[n] = '\0';
	if (inet_pton(AF_INET, host, a) == 1)
		return a[0] == 127 ? "a loopback address" : NULL;
	/* RFC 6761: localhost and every name below it are loopback. */
	if (strcasecmp(host, "localhost") == 0 || strcasecmp(host, "localhost.") == 0 ||
	    (n > 10 && (strcasecmp(host + n - 10, ".localhost") == 0)) ||
	    (n > 11 && strcasecmp(host + n - 11, ".localhost.") == 0) ||
	    strcasecmp(host, "localhost.localdomain") == 0 || strcasecmp(host, "ip6-localhost") == 0 ||
	    strcasecmp(host, "ip6-loopback") == 0)
		return "localhost";
	return NULL;
}

bool policy_valid_env_name(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

bool policy_valid_env_pattern(const char *s, bool star_anywhere)
{
	size_t n = strlen(s);

	if (n == 0 || n > 255)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '*') {
			if (!star_anywhere && i != n - 1)
				return false;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

bool policy_valid_command_name(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 255 && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static int finalize_abs_list(char ***l, const char *key, const PolicyContext *ctx,
			     PolicyError *e)
{
	_cleanup_strv_ char **out = calloc(1, sizeof(char *));
	char q[160], w[200];

	if (!out)
		return -ENOMEM;
	STRV_FOREACH(s, *l) {
		_cleanup_free_ char *exp = NULL, *abs = NULL, *norm = NULL;
		int r;

		/* Flags may have added relative paths; files cannot (the parser
		 * refuses them), so this only resolves what the caller meant. */
		if (path_has_wildcard(*s) || strlen(*s) > PATH_MAX_LEN || !**s) {
			policy_quote(*s, q, sizeof(q));
			(void)policy_valid_fs_path(*s, w, sizeof(w));
			return policy_error_set(e, "<policy>", key, "%s, got %s", w, q);
		}
		r = path_expand_home(*s, ctx->home, &exp);
		if (r == -EINVAL) {
			policy_quote(*s, q, sizeof(q));
			return policy_error_set(e, "<policy>", key,
						"expected an absolute path or one starting with \"~/\", got %s",
						q);
		}
		if (r < 0)
			return r;
		if (!path_is_absolute(exp)) {
			r = path_join(ctx->workspace, exp, &abs);
			if (r < 0)
				return r;
		} else
			abs = TAKE_PTR(exp);
		r = path_normalize(abs, &norm);
		if (r < 0)
			return r;
		r = strv_extend_unique(&out, norm);
		if (r < 0)
			return r;
	}
	strv_free(*l);
	*l = TAKE_PTR(out);
	return 0;
}

static int finalize_protected(WardPolicy *p, PolicyError *e)
{
	_cleanup_strv_ char **out = calloc(1, sizeof(char *));
	char q[160], w[200];

	if (!out)
		return -ENOMEM;
	STRV_FOREACH(s, p->fs_protected) {
		_cleanup_free_ char *norm = NULL;
		int r;

		if (!policy_valid_protected(*s, w, sizeof(w))) {
			policy_quote(*s, q, sizeof(q));
			return policy_error_set(e, "<policy>", "fs.protected", "%s, got %s", w, q);
		}
		r = path_normalize(*s, &norm);
		if (r < 0)
			return r;
		r = strv_extend_unique(&out, norm);
		if (r < 0)
			return r;
	}
	strv_free(p->fs_protected);
	p->fs_protected = TAKE_PTR(out);
	return 0;
}

int policy_finalize(WardPolicy *p, const PolicyContext *ctx, PolicyError *reterr)
{
	_cleanup_free_ char *home = NULL, *ws = NULL;
	PolicyContext nctx;
	WardPolicy *c;
	int r;

	if (!ctx || !path_is_absolute(ctx->home) || !path_is_absolute(ctx->workspace))
		return policy_error_set(reterr, "<policy>", "",
					"internal error: home and workspace must be absolute paths");
	if (path_normalize(ctx->home, &home) < 0 || path_normalize(ctx->workspace, &ws) < 0)
		return -ENOMEM;
	nctx = (PolicyContext){ .home = home, .workspace = ws };

	/* Work on a copy so that a failure leaves @p as it was. */
	c = policy_copy(p);
	if (!c)
		return -ENOMEM;

	r = finalize_abs_list(&c->fs_read, "fs.read", &nctx, reterr);
	if (r >= 0)
		r = finalize_abs_list(&c->fs_read_exec, "fs.read_exec", &nctx, reterr);
	if (r >= 0)
		r = finalize_abs_list(&c->fs_read_write, "fs.read_write", &nctx, reterr);
	if (r >= 0)
		r = finalize_abs_list(&c->fs_cache, "fs.cache", &nctx, reterr);
	if (r >= 0)
		r = finalize_abs_list(&c->fs_sanitize, "fs.sanitize", &nctx, reterr);
	if (r >= 0)
		r = finalize_abs_list(&c->fs_deny, "fs.deny", &nctx, reterr);
	if (r >= 0)
		r = finalize_protected(c, reterr);
	if (r < 0) {
		policy_free(c);
		return r;
	}

	/* A denied directory is mounted over with an empty one; if it held the
	 * workspace, the workspace could not be mounted inside. */
	STRV_FOREACH(d, c->fs_deny)
		if (path_is_beneath(ws, *d)) {
			char q[160], qw[160];

			policy_quote(*d, q, sizeof(q));
			policy_quote(ws, qw, sizeof(qw));
			policy_error_set(reterr, "<policy>", "fs.deny",
					 "%s contains the workspace %s, which could then not be "
					 "mounted; deny something narrower",
					 q, qw);
			policy_free(c);
			return -EINVAL;
		}

	policy_replace(p, c);
	return 0;
}
