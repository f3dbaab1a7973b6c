/* JSON text -> policy: walks the cJSON tree key by key, validates every
 * value and merges it into a copy of the policy, which replaces the original
 * only when the whole document was accepted. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/path-util.h"
#include "common/strv.h"
#include "policy/policy-internal.h"

typedef struct Parser {
	WardPolicy *p; /* the copy being built */
	const char *file;
	PolicyError *e;
} Parser;

typedef int (*KeyFn)(Parser *ps, const char *path, cJSON *v);

typedef struct KeyHandler {
	const char *key;
	KeyFn fn;
} KeyHandler;

_printf_(3, 4) static int fail(Parser *ps, const char *path, const char *fmt, ...)
{
	char msg[sizeof(ps->e->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return policy_error_set(ps->e, ps->file, path, "%s", msg);
}

static int fail_oom(Parser *ps, const char *path)
{
	(void)fail(ps, path, "out of memory");
	return -ENOMEM;
}

/* What a JSON value is, for "got ..." in messages. */
static void describe(const cJSON *v, char *buf, size_t n)
{
	if (cJSON_IsString(v))
		policy_quote(v->valuestring, buf, n);
	else if (cJSON_IsNumber(v))
		snprintf(buf, n, "%g", v->valuedouble);
	else if (cJSON_IsTrue(v))
		snprintf(buf, n, "true");
	else if (cJSON_IsFalse(v))
		snprintf(buf, n, "false");
	else if (cJSON_IsNull(v))
		snprintf(buf, n, "null");
	else if (cJSON_IsArray(v))
		snprintf(buf, n, "an array");
	else if (cJSON_IsObject(v))
		snprintf(buf, n, "an object");
	else
		snprintf(buf, n, "an invalid value");
}

static int fail_type(Parser *ps, const char *path, const char *expected, const cJSON *v)
{
	char got[160];

	describe(v, got, sizeof(got));
	return fail(ps, path, "expected %s, got %s", expected, got);
}

/* "a.b" + "c" -> "a.b.c"; control characters in keys become '?'. */
static void path_key(char *buf, size_t n, const char *path, const char *key)
{
	size_t o;

	snprintf(buf, n, "%s%s", path, *path ? "." : "");
	o = strlen(buf);
	for (const char *k = key; *k && o + 1 < n; k++)
		buf[o++] = (unsigned char)*k < 0x20 || *k == 0x7f ? '?' : *k;
	buf[o] = '\0';
}

static void path_index(char *buf, size_t n, const char *path, int i)
{
	/* Using the result tells gcc that truncation is handled (it is: a
	 * truncated path in a message is still useful). */
	if (snprintf(buf, n, "%s[%d]", path, i) >= (int)n)
		buf[n - 1] = '\0';
}

/* cJSON keeps duplicate keys; they are refused instead of guessing which
 * one wins. */
static bool is_duplicate(const cJSON *obj, const cJSON *c)
{
	for (const cJSON *d = obj->child; d != c; d = d->next)
		if (strcmp(d->string, c->string) == 0)
			return true;
	return false;
}

static int parse_object(Parser *ps, const char *path, cJSON *obj, const KeyHandler *h, size_t nh)
{
	if (!cJSON_IsObject(obj))
		return fail_type(ps, path, "an object", obj);

	for (cJSON *c = obj->child; c; c = c->next) {
		char sub[256];
		const KeyHandler *found = NULL;
		int r;

		path_key(sub, sizeof(sub), path, c->string);
		if (is_duplicate(obj, c))
			return fail(ps, sub, "duplicate key");
		for (size_t i = 0; i < nh; i++)
			if (strcmp(h[i].key, c->string) == 0)
				found = &h[i];
		if (!found) {
			char keys[256] = "";
			for (size_t i = 0; i < nh; i++)
				snprintf(keys + strlen(keys), sizeof(keys) - strlen(keys), "%s%s",
					 i ? ", " : "", h[i].key);
			return fail(ps, sub, "unknown key (expected one of: %s)", keys);
		}
		r = found->fn(ps, sub, c);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Call @each for each string of the array @v. */
static int parse_str_list(Parser *ps, const char *path, cJSON *v,
			  int (*each)(Parser *ps, const char *path, const char *s))
{
	int i = 0;

	if (!cJSON_IsArray(v))
		return fail_type(ps, path, "an array of strings", v);
	for (cJSON *c = v->child; c; c = c->next, i++) {
		char sub[256];
		int r;

		path_index(sub, sizeof(sub), path, i);
		if (!cJSON_IsString(c))
			return fail_type(ps, sub, "a string", c);
		r = each(ps, sub, c->valuestring);
		if (r < 0)
			return r;
	}
	return 0;
}

static int get_uint(Parser *ps, const char *path, cJSON *v, uint64_t min, uint64_t max,
		    uint64_t *ret)
{
	char exp[96];
	double d = cJSON_IsNumber(v) ? v->valuedouble : -1;

	/* In range first, so that the cast below is defined; then integral. */
	if (cJSON_IsNumber(v) && d >= (double)min && d <= (double)max &&
	    d == (double)(uint64_t)d) {
		*ret = (uint64_t)d;
		return 0;
	}
	snprintf(exp, sizeof(exp), "an integer from %llu to %llu", (unsigned long long)min,
		 (unsigned long long)max);
	return fail_type(ps, path, exp, v);
}

/* ---- top level ---- */

static int on_version(Parser *ps, const char *path, cJSON *v)
{
	if (!cJSON_IsNumber(v) || v->valuedouble != 1.0) {
		if (cJSON_IsNumber(v))
			return fail(ps, path, "unsupported version %g (this ward reads version 1)",
				    v->valuedouble);
		return fail_type(ps, path, "the number 1", v);
	}
	return 0;
}

static int each_preset(Parser *ps, const char *path, const char *s)
{
	bool known = false;
	char q[160];
	int r;

	for (const char *const *n = policy_preset_names(); *n; n++)
		if (strcmp(*n, s) == 0)
			known = true;
	if (!known) {
		policy_quote(s, q, sizeof(q));
		return fail(ps, path, "unknown preset %s (known: git, node, python, rust, go)", q);
	}
	r = policy_apply_preset(ps->p, s, NULL);
	return r < 0 ? fail_oom(ps, path) : 0;
}

static int on_presets(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_preset);
}

/* ---- fs ---- */

static int add_fs(Parser *ps, const char *path, const char *s, char ***l)
{
	char why[200], q[160];

	if (!policy_valid_fs_path(s, why, sizeof(why))) {
		policy_quote(s, q, sizeof(q));
		return fail(ps, path, "%s, got %s", why, q);
	}
	return policy_add_unique(l, s) < 0 ? fail_oom(ps, path) : 0;
}

static int each_read(Parser *ps, const char *path, const char *s)
{
	return add_fs(ps, path, s, &ps->p->fs_read);
}
static int each_read_exec(Parser *ps, const char *path, const char *s)
{
	return add_fs(ps, path, s, &ps->p->fs_read_exec);
}
static int each_read_write(Parser *ps, const char *path, const char *s)
{
	return add_fs(ps, path, s, &ps->p->fs_read_write);
}
static int each_cache(Parser *ps, const char *path, const char *s)
{
	return add_fs(ps, path, s, &ps->p->fs_cache);
}
static int each_sanitize(Parser *ps, const char *path, const char *s)
{
	return add_fs(ps, path, s, &ps->p->fs_sanitize);
}
static int each_deny(Parser *ps, const char *path, const char *s)
{
	return add_fs(ps, path, s, &ps->p->fs_deny);
}

static int each_protected(Parser *ps, const char *path, const char *s)
{
	_cleanup_free_ char *norm = NULL;
	char why[200], q[160];

	if (!policy_valid_protected(s, why, sizeof(why))) {
		policy_quote(s, q, sizeof(q));
		return fail(ps, path, "%s, got %s", why, q);
	}
	if (path_normalize(s, &norm) < 0 || policy_add_unique(&ps->p->fs_protected, norm) < 0)
		return fail_oom(ps, path);
	return 0;
}

static int on_fs_read(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_read);
}
static int on_fs_read_exec(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_read_exec);
}
static int on_fs_read_write(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_read_write);
}
static int on_fs_cache(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_cache);
}
static int on_fs_sanitize(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_sanitize);
}
static int on_fs_deny(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_deny);
}
static int on_fs_protected(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_protected);
}

static const KeyHandler fs_keys[] = {
	{ "read", on_fs_read },		  { "read_exec", on_fs_read_exec },
	{ "read_write", on_fs_read_write }, { "deny", on_fs_deny },
	{ "protected", on_fs_protected }, { "cache", on_fs_cache },
	{ "sanitize", on_fs_sanitize },
};

static int on_fs(Parser *ps, const char *path, cJSON *v)
{
	return parse_object(ps, path, v, fs_keys, ELEMENTSOF(fs_keys));
}

/* ---- network ---- */

/* Validate and lowercase a host pattern into @buf (DNS names are
 * case-insensitive, and one spelling makes deduplication work). */
static int host_pattern(Parser *ps, const char *path, const char *s, char *buf, size_t n)
{
	char why[160], q[160];

	if (!policy_valid_host_pattern(s, why, sizeof(why))) {
		policy_quote(s, q, sizeof(q));
		return fail(ps, path,
			    "expected a host pattern (host, *.domain, host:port, an IPv4 address, "
			    "[IPv6] or [IPv6]:port): %s, got %s",
			    why, q);
	}
	snprintf(buf, n, "%s", s);
	for (char *c = buf; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	return 0;
}

/* An allow entry for the sandbox's own loopback would go through the
 * proxy to the host's, while clients (NO_PROXY) connect inside: refused,
 * with the way that works. */
static int allow_pattern(Parser *ps, const char *path, const char *s, char *h, size_t n)
{
	const char *lo;
	int r = host_pattern(ps, path, s, h, n);

	if (r < 0)
		return r;
	lo = policy_loopback_pattern(h);
	if (lo) {
		char q[160];
		policy_quote(s, q, sizeof(q));
		return fail(ps, path,
			    "%s names %s, which inside the sandbox is the sandbox's own; to reach a "
			    "service on the host's loopback use network.host_ports (--allow-host-port "
			    "PORT)",
			    q, lo);
	}
	return 0;
}

static int each_allow(Parser *ps, const char *path, const char *s)
{
	char h[256];
	int r = allow_pattern(ps, path, s, h, sizeof(h));
	if (r < 0)
		return r;
	return policy_add_unique(&ps->p->net_allow, h) < 0 ? fail_oom(ps, path) : 0;
}

static int each_net_deny(Parser *ps, const char *path, const char *s)
{
	char h[256];
	int r = host_pattern(ps, path, s, h, sizeof(h));
	if (r < 0)
		return r;
	return policy_add_unique(&ps->p->net_deny, h) < 0 ? fail_oom(ps, path) : 0;
}

static int on_net_mode(Parser *ps, const char *path, cJSON *v)
{
	NetMode m;

	if (!cJSON_IsString(v) || (m = net_mode_from_string(v->valuestring)) < 0)
		return fail_type(ps, path, "\"none\" or \"proxy\"", v);
	ps->p->net_mode = m;
	return 0;
}

static int on_net_allow(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_allow);
}

static int on_net_deny(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_net_deny);
}

static int on_net_commands(Parser *ps, const char *path, cJSON *v)
{
	if (!cJSON_IsObject(v))
		return fail_type(ps, path, "an object mapping program names to host lists", v);
	for (cJSON *c = v->child; c; c = c->next) {
		char sub[256];
		int i = 0;

		path_key(sub, sizeof(sub), path, c->string);
		if (is_duplicate(v, c))
			return fail(ps, sub, "duplicate key");
		if (!policy_valid_command_name(c->string))
			return fail(ps, sub, "expected a program name (without \"/\") as the key");
		if (!cJSON_IsArray(c))
			return fail_type(ps, sub, "an array of host patterns", c);
		if (policy_add_command_host(ps->p, c->string, NULL) < 0)
			return fail_oom(ps, sub);
		for (cJSON *h = c->child; h; h = h->next, i++) {
			char hsub[256], buf[256];
			int r;

			path_index(hsub, sizeof(hsub), sub, i);
			if (!cJSON_IsString(h))
				return fail_type(ps, hsub, "a string", h);
			r = allow_pattern(ps, hsub, h->valuestring, buf, sizeof(buf));
			if (r < 0)
				return r;
			if (policy_add_command_host(ps->p, c->string, buf) < 0)
				return fail_oom(ps, hsub);
		}
	}
	return 0;
}

static int on_net_hosts(Parser *ps, const char *path, cJSON *v)
{
	if (!cJSON_IsObject(v))
		return fail_type(ps, path, "an object mapping host names to IP addresses", v);
	for (cJSON *c = v->child; c; c = c->next) {
		char sub[256], name[256];

		path_key(sub, sizeof(sub), path, c->string);
		if (is_duplicate(v, c))
			return fail(ps, sub, "duplicate key");
		if (strlen(c->string) >= sizeof(name) || !policy_valid_hostname(c->string, false))
			return fail(ps, sub, "expected a host name (no wildcard, no port) as the key");
		if (!cJSON_IsString(c) || !policy_valid_ip_literal(c->valuestring))
			return fail_type(ps, sub, "an IP address like \"192.0.2.1\" or \"2001:db8::1\"",
					 c);
		snprintf(name, sizeof(name), "%s", c->string);
		for (char *x = name; *x; x++)
			if (*x >= 'A' && *x <= 'Z')
				*x = (char)(*x - 'A' + 'a');
		if (policy_set_host(ps->p, name, c->valuestring) < 0)
			return fail_oom(ps, sub);
	}
	return 0;
}

static int parse_ports(Parser *ps, const char *path, cJSON *v, uint64_t min, uint16_t **l,
		       size_t *n)
{
	int i = 0;

	if (!cJSON_IsArray(v))
		return fail_type(ps, path, "an array of TCP port numbers", v);
	for (cJSON *c = v->child; c; c = c->next, i++) {
		char sub[256];
		uint64_t port;
		int r;

		path_index(sub, sizeof(sub), path, i);
		r = get_uint(ps, sub, c, min, 65535, &port);
		if (r < 0)
			return r;
		if (policy_add_port(l, n, (uint16_t)port) < 0)
			return fail_oom(ps, sub);
	}
	return 0;
}

/* 0 is an ephemeral bind (docs/network.md). */
static int on_net_local_ports(Parser *ps, const char *path, cJSON *v)
{
	return parse_ports(ps, path, v, 0, &ps->p->net_local_ports, &ps->p->n_net_local_ports);
}

static int on_net_host_ports(Parser *ps, const char *path, cJSON *v)
{
	int r = parse_ports(ps, path, v, 1, &ps->p->net_host_ports, &ps->p->n_net_host_ports);

	if (r >= 0 && ps->p->n_net_host_ports > POLICY_HOST_PORTS_MAX)
		return fail(ps, path, "at most %d host ports", POLICY_HOST_PORTS_MAX);
	return r;
}

static int on_net_capture(Parser *ps, const char *path, cJSON *v)
{
	if (!cJSON_IsBool(v))
		return fail_type(ps, path, "true or false", v);
	ps->p->net_no_capture = !cJSON_IsTrue(v);
	return 0;
}

static int on_net_capture_ports(Parser *ps, const char *path, cJSON *v)
{
	int r = parse_ports(ps, path, v, 1, &ps->p->net_capture_ports, &ps->p->n_net_capture_ports);

	if (r >= 0 && ps->p->n_net_capture_ports > POLICY_CAPTURE_PORTS_MAX)
		return fail(ps, path, "at most %d capture ports", POLICY_CAPTURE_PORTS_MAX);
	return r;
}

static int on_net_max_connections(Parser *ps, const char *path, cJSON *v)
{
	const PolicyLimitRange *l = policy_limit_range("max_connections");
	return get_uint(ps, path, v, l->min, l->max, &ps->p->max_connections);
}

/* network.inspect: host names or "*.domain", no port. */
static int each_inspect(Parser *ps, const char *path, const char *s)
{
	char h[256], q[160];

	if (strlen(s) >= sizeof(h) || !policy_valid_hostname(s, true)) {
		policy_quote(s, q, sizeof(q));
		return fail(ps, path, "expected a host name or \"*.domain\" (no port), got %s", q);
	}
	snprintf(h, sizeof(h), "%s", s);
	for (char *c = h; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	return policy_add_unique(&ps->p->net_inspect, h) < 0 ? fail_oom(ps, path) : 0;
}

static int on_net_inspect(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_inspect);
}

static int each_upstream_ca(Parser *ps, const char *path, const char *s)
{
	char q[160];

	if (s[0] != '/') {
		policy_quote(s, q, sizeof(q));
		return fail(ps, path, "expected an absolute path to a PEM certificate file, got %s", q);
	}
	return policy_add_unique(&ps->p->net_upstream_ca, s) < 0 ? fail_oom(ps, path) : 0;
}

static int on_net_upstream_ca(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_upstream_ca);
}

/* An HTTP token (RFC 9110): header names and methods. */
static bool valid_token(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("!#$%&'*+-.^_`|~", *s)))
			return false;
	return true;
}

/* A path prefix: starts with '/', printable ASCII without spaces. */
static bool valid_path_prefix(const char *s)
{
	if (s[0] != '/' || strlen(s) > 1024)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f || *s == '#')
			return false;
	return true;
}

/* The value of key @key of object @o as a string, or NULL when absent;
 * -EINVAL (reported) when present and not a string. */
static int get_str_key(Parser *ps, const char *path, cJSON *o, const char *key, const char **ret)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	char sub[256];

	*ret = NULL;
	if (!v)
		return 0;
	path_key(sub, sizeof(sub), path, key);
	if (!cJSON_IsString(v))
		return fail_type(ps, sub, "a string", v);
	*ret = v->valuestring;
	return 0;
}

/* Every key of @o is one of @keys (NULL-terminated). */
static int only_keys(Parser *ps, const char *path, cJSON *o, const char *const *keys)
{
	for (cJSON *c = o->child; c; c = c->next) {
		char sub[256];
		bool known = false;

		path_key(sub, sizeof(sub), path, c->string);
		if (is_duplicate(o, c))
			return fail(ps, sub, "duplicate key");
		for (const char *const *k = keys; *k; k++)
			known = known || strcmp(*k, c->string) == 0;
		if (!known)
			return fail(ps, sub, "unknown key");
	}
	return 0;
}

static int add_canonical(Parser *ps, const char *path, char ***list, cJSON *o)
{
	_cleanup_free_ char *text = cJSON_PrintUnformatted(o);

	cJSON_Delete(o);
	if (!text || policy_add_unique(list, text) < 0)
		return fail_oom(ps, path);
	return 0;
}

static int each_credential(Parser *ps, const char *path, cJSON *c)
{
	static const char *const keys[] = { "host", "path", "env", "from_env", "from_file",
					    "as", "header", "username", "preset", NULL };
	const char *host, *pfx, *env, *from_env, *from_file, *as, *header, *user, *preset;
	char sub[256], h[256];
	cJSON *o;
	int r;

	if (!cJSON_IsObject(c))
		return fail_type(ps, path, "an object with \"host\", \"env\" and \"from_env\" or \"from_file\"", c);
	if ((r = only_keys(ps, path, c, keys)) < 0 ||
	    (r = get_str_key(ps, path, c, "host", &host)) < 0 ||
	    (r = get_str_key(ps, path, c, "path", &pfx)) < 0 ||
	    (r = get_str_key(ps, path, c, "env", &env)) < 0 ||
	    (r = get_str_key(ps, path, c, "from_env", &from_env)) < 0 ||
	    (r = get_str_key(ps, path, c, "from_file", &from_file)) < 0 ||
	    (r = get_str_key(ps, path, c, "as", &as)) < 0 ||
	    (r = get_str_key(ps, path, c, "header", &header)) < 0 ||
	    (r = get_str_key(ps, path, c, "username", &user)) < 0 ||
	    (r = get_str_key(ps, path, c, "preset", &preset)) < 0)
		return r;
	/* Presets fill what the tool expects (docs/network.md). */
	path_key(sub, sizeof(sub), path, "preset");
	if (preset && strcmp(preset, "git") == 0) {
		env = env ? env : "WARD_GIT_TOKEN";
		as = as ? as : "basic";
		user = user ? user : "x-access-token";
	} else if (preset && strcmp(preset, "npm") == 0) {
		env = env ? env : "NPM_TOKEN";
		as = as ? as : "bearer";
	} else if (preset && strcmp(preset, "pip") == 0) {
		env = env ? env : "WARD_PIP_PASSWORD";
		as = as ? as : "basic";
		user = user ? user : "ward";
	} else if (preset)
		return fail(ps, sub, "expected \"git\", \"npm\" or \"pip\"");
	path_key(sub, sizeof(sub), path, "host");
	if (!host || strlen(host) >= sizeof(h) || !policy_valid_hostname(host, false))
		return fail(ps, sub, "expected a host name (no wildcard, no port)");
	snprintf(h, sizeof(h), "%s", host);
	for (char *x = h; *x; x++)
		if (*x >= 'A' && *x <= 'Z')
			*x = (char)(*x - 'A' + 'a');
	path_key(sub, sizeof(sub), path, "path");
	if (pfx && !valid_path_prefix(pfx))
		return fail(ps, sub, "expected a path prefix starting with \"/\"");
	path_key(sub, sizeof(sub), path, "env");
	if (!env || !policy_valid_env_name(env))
		return fail(ps, sub, "expected the name of the variable the command reads the "
				     "credential from ([A-Za-z0-9_])");
	if (!from_env == !from_file)
		return fail(ps, path, "expected exactly one of \"from_env\" (a variable of ward's "
				      "own environment) and \"from_file\" (a file on the host)");
	path_key(sub, sizeof(sub), path, from_env ? "from_env" : "from_file");
	if (from_env && !policy_valid_env_name(from_env))
		return fail(ps, sub, "expected a variable name ([A-Za-z0-9_])");
	if (from_file && from_file[0] != '/')
		return fail(ps, sub, "expected an absolute path");
	path_key(sub, sizeof(sub), path, "as");
	if (!as)
		as = "bearer";
	if (strcmp(as, "bearer") != 0 && strcmp(as, "basic") != 0 && strcmp(as, "header") != 0)
		return fail(ps, sub, "expected \"bearer\", \"basic\" or \"header\"");
	path_key(sub, sizeof(sub), path, "header");
	if ((strcmp(as, "header") == 0) != !!header)
		return fail(ps, sub, "\"header\" (a header name) goes with \"as\": \"header\", and only there");
	if (header && !valid_token(header))
		return fail(ps, sub, "expected a header name");
	path_key(sub, sizeof(sub), path, "username");
	if (user && (strcmp(as, "basic") != 0 || strchr(user, ':') || strpbrk(user, "\r\n")))
		return fail(ps, sub, "a user name without ':' goes with \"as\": \"basic\" only");

	o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "host", h) ||
	    (pfx && !cJSON_AddStringToObject(o, "path", pfx)) ||
	    !cJSON_AddStringToObject(o, "env", env) ||
	    (from_env && !cJSON_AddStringToObject(o, "from_env", from_env)) ||
	    (from_file && !cJSON_AddStringToObject(o, "from_file", from_file)) ||
	    !cJSON_AddStringToObject(o, "as", as) ||
	    (header && !cJSON_AddStringToObject(o, "header", header)) ||
	    (user && !cJSON_AddStringToObject(o, "username", user)) ||
	    (preset && !cJSON_AddStringToObject(o, "preset", preset))) {
		cJSON_Delete(o);
		return fail_oom(ps, path);
	}
	return add_canonical(ps, path, &ps->p->net_credentials, o);
}

static int each_request_rule(Parser *ps, const char *path, cJSON *c)
{
	static const char *const keys[] = { "host", "methods", "paths", "action", NULL };
	cJSON *methods = cJSON_GetObjectItemCaseSensitive(c, "methods");
	cJSON *paths = cJSON_GetObjectItemCaseSensitive(c, "paths");
	const char *host, *action;
	char sub[256], h[256];
	cJSON *o, *ma, *pa;
	int r, i;

	if (!cJSON_IsObject(c))
		return fail_type(ps, path, "an object with \"host\" and \"methods\" or \"paths\"", c);
	if ((r = only_keys(ps, path, c, keys)) < 0 ||
	    (r = get_str_key(ps, path, c, "host", &host)) < 0 ||
	    (r = get_str_key(ps, path, c, "action", &action)) < 0)
		return r;
	path_key(sub, sizeof(sub), path, "host");
	if (!host || strlen(host) >= sizeof(h) || !policy_valid_hostname(host, true))
		return fail(ps, sub, "expected a host name or \"*.domain\" (no port)");
	snprintf(h, sizeof(h), "%s", host);
	for (char *x = h; *x; x++)
		if (*x >= 'A' && *x <= 'Z')
			*x = (char)(*x - 'A' + 'a');
	path_key(sub, sizeof(sub), path, "action");
	if (action && strcmp(action, "allow") != 0 && strcmp(action, "deny") != 0)
		return fail(ps, sub, "expected \"allow\" or \"deny\"");
	if (!methods && !paths)
		return fail(ps, path, "expected \"methods\", \"paths\" or both");

	o = cJSON_CreateObject();
	if (!o || !cJSON_AddStringToObject(o, "host", h) ||
	    !cJSON_AddStringToObject(o, "action", action ? action : "allow") ||
	    !cJSON_AddItemToObject(o, "methods", ma = cJSON_CreateArray()) ||
	    !cJSON_AddItemToObject(o, "paths", pa = cJSON_CreateArray())) {
		cJSON_Delete(o);
		return fail_oom(ps, path);
	}
	path_key(sub, sizeof(sub), path, "methods");
	if (cJSON_IsString(methods) && strcmp(methods->valuestring, "read-only") == 0) {
		cJSON_AddItemToArray(ma, cJSON_CreateString("GET"));
		cJSON_AddItemToArray(ma, cJSON_CreateString("HEAD"));
		cJSON_AddItemToArray(ma, cJSON_CreateString("OPTIONS"));
	} else if (methods) {
		if (!cJSON_IsArray(methods)) {
			cJSON_Delete(o);
			return fail_type(ps, sub, "\"read-only\" or an array of methods like \"GET\" ([]: every method)", methods);
		}
		i = 0;
		for (cJSON *m = methods->child; m; m = m->next, i++) {
			char msub[256], up[80];
			path_index(msub, sizeof(msub), sub, i);
			if (!cJSON_IsString(m) || !valid_token(m->valuestring)) {
				cJSON_Delete(o);
				return fail_type(ps, msub, "an HTTP method like \"GET\"", m);
			}
			snprintf(up, sizeof(up), "%s", m->valuestring);
			for (char *x = up; *x; x++)
				if (*x >= 'a' && *x <= 'z')
					*x = (char)(*x - 'a' + 'A');
			cJSON_AddItemToArray(ma, cJSON_CreateString(up));
		}
	}
	path_key(sub, sizeof(sub), path, "paths");
	if (paths) {
		if (!cJSON_IsArray(paths)) {
			cJSON_Delete(o);
			return fail_type(ps, sub, "an array of path prefixes like \"/api/\" ([]: every path)", paths);
		}
		i = 0;
		for (cJSON *m = paths->child; m; m = m->next, i++) {
			char msub[256];
			path_index(msub, sizeof(msub), sub, i);
			if (!cJSON_IsString(m) || !valid_path_prefix(m->valuestring)) {
				cJSON_Delete(o);
				return fail_type(ps, msub, "a path prefix starting with \"/\"", m);
			}
			cJSON_AddItemToArray(pa, cJSON_CreateString(m->valuestring));
		}
	}
	return add_canonical(ps, path, &ps->p->net_requests, o);
}

static int parse_obj_list(Parser *ps, const char *path, cJSON *v,
			  int (*each)(Parser *ps, const char *path, cJSON *c))
{
	int i = 0;

	if (!cJSON_IsArray(v))
		return fail_type(ps, path, "an array of objects", v);
	for (cJSON *c = v->child; c; c = c->next, i++) {
		char sub[256];
		int r;

		path_index(sub, sizeof(sub), path, i);
		if ((r = each(ps, sub, c)) < 0)
			return r;
	}
	return 0;
}

static int on_net_credentials(Parser *ps, const char *path, cJSON *v)
{
	return parse_obj_list(ps, path, v, each_credential);
}

static int on_net_requests(Parser *ps, const char *path, cJSON *v)
{
	return parse_obj_list(ps, path, v, each_request_rule);
}

static const KeyHandler network_keys[] = {
	{ "mode", on_net_mode },
	{ "allow", on_net_allow },
	{ "deny", on_net_deny },
	{ "commands", on_net_commands },
	{ "hosts", on_net_hosts },
	{ "local_ports", on_net_local_ports },
	{ "host_ports", on_net_host_ports },
	{ "max_connections", on_net_max_connections },
	{ "capture", on_net_capture },
	{ "capture_ports", on_net_capture_ports },
	{ "inspect", on_net_inspect },
	{ "upstream_ca", on_net_upstream_ca },
	{ "credentials", on_net_credentials },
	{ "requests", on_net_requests },
};

static int on_network(Parser *ps, const char *path, cJSON *v)
{
	return parse_object(ps, path, v, network_keys, ELEMENTSOF(network_keys));
}

/* ---- env ---- */

static int each_env_pass(Parser *ps, const char *path, const char *s)
{
	char q[160];

	if (!policy_valid_env_pattern(s, false)) {
		policy_quote(s, q, sizeof(q));
		return fail(ps, path,
			    "expected a variable name ([A-Za-z0-9_]) or a prefix ending in \"*\" "
			    "(like LC_*), got %s",
			    q);
	}
	return policy_add_unique(&ps->p->env_pass, s) < 0 ? fail_oom(ps, path) : 0;
}

static int each_env_strip(Parser *ps, const char *path, const char *s)
{
	char q[160];

	if (!policy_valid_env_pattern(s, true)) {
		policy_quote(s, q, sizeof(q));
		return fail(ps, path,
			    "expected a variable name pattern ([A-Za-z0-9_] and \"*\"), got %s", q);
	}
	return policy_add_unique(&ps->p->env_strip, s) < 0 ? fail_oom(ps, path) : 0;
}

static int on_env_pass(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_env_pass);
}

static int on_env_strip(Parser *ps, const char *path, cJSON *v)
{
	return parse_str_list(ps, path, v, each_env_strip);
}

static int on_env_set(Parser *ps, const char *path, cJSON *v)
{
	if (!cJSON_IsObject(v))
		return fail_type(ps, path, "an object mapping variable names to strings", v);
	for (cJSON *c = v->child; c; c = c->next) {
		char sub[256];

		path_key(sub, sizeof(sub), path, c->string);
		if (is_duplicate(v, c))
			return fail(ps, sub, "duplicate key");
		if (!policy_valid_env_name(c->string))
			return fail(ps, sub,
				    "expected a variable name ([A-Za-z_][A-Za-z0-9_]*) as the key");
		if (!cJSON_IsString(c))
			return fail_type(ps, sub, "a string", c);
		if (policy_set_env(ps->p, c->string, c->valuestring) < 0)
			return fail_oom(ps, sub);
	}
	return 0;
}

static const KeyHandler env_keys[] = {
	{ "pass", on_env_pass },
	{ "set", on_env_set },
	{ "strip", on_env_strip },
};

static int on_env(Parser *ps, const char *path, cJSON *v)
{
	return parse_object(ps, path, v, env_keys, ELEMENTSOF(env_keys));
}

/* ---- limits ---- */

static int on_limit(Parser *ps, const char *path, cJSON *v)
{
	/* clang-format off */
	static const struct { const char *name; size_t offset; } fields[] = {
		{ "timeout_s",         offsetof(WardPolicy, timeout_s) },
		{ "memory_mb",         offsetof(WardPolicy, memory_mb) },
		{ "pids",              offsetof(WardPolicy, pids) },
		{ "tmp_mb",            offsetof(WardPolicy, tmp_mb) },
		{ "nofile",            offsetof(WardPolicy, nofile) },
		{ "shm_mb",            offsetof(WardPolicy, shm_mb) },
		{ "inotify_instances", offsetof(WardPolicy, inotify_instances) },
		{ "inotify_watches",   offsetof(WardPolicy, inotify_watches) },
		{ "sigpending",        offsetof(WardPolicy, sigpending) },
		{ "msgqueue_kb",       offsetof(WardPolicy, msgqueue_kb) },
		{ "memlock_kb",        offsetof(WardPolicy, memlock_kb) },
		{ "session_idle_s",    offsetof(WardPolicy, session_idle_s) },
		{ "cpu_percent",       offsetof(WardPolicy, cpu_percent) },
		{ "io_weight",         offsetof(WardPolicy, io_weight) },
	};
	/* clang-format on */
	const PolicyLimitRange *l = policy_limit_range(v->string);

	for (size_t i = 0; i < ELEMENTSOF(fields); i++)
		if (strcmp(fields[i].name, v->string) == 0)
			return get_uint(ps, path, v, l->min, l->max,
					(uint64_t *)((char *)ps->p + fields[i].offset));
	return -EINVAL; /* not reached: parse_object knows only limits_keys */
}

static const KeyHandler limits_keys[] = {
	{ "timeout_s", on_limit },	   { "memory_mb", on_limit },	   { "pids", on_limit },
	{ "tmp_mb", on_limit },		   { "nofile", on_limit },	   { "shm_mb", on_limit },
	{ "inotify_instances", on_limit }, { "inotify_watches", on_limit }, { "sigpending", on_limit },
	{ "msgqueue_kb", on_limit },	   { "cpu_percent", on_limit },	   { "io_weight", on_limit },
	{ "memlock_kb", on_limit },	   { "session_idle_s", on_limit },
};

static int on_limits(Parser *ps, const char *path, cJSON *v)
{
	return parse_object(ps, path, v, limits_keys, ELEMENTSOF(limits_keys));
}

/* ---- sandbox ---- */

static int on_sandbox_bool(Parser *ps, const char *path, cJSON *v)
{
	if (!cJSON_IsBool(v))
		return fail_type(ps, path, "true or false", v);
	if (strcmp(v->string, "allow_nested_sandbox") == 0)
		ps->p->allow_nested_sandbox = cJSON_IsTrue(v);
	else
		ps->p->allow_ptrace = cJSON_IsTrue(v);
	return 0;
}

static const KeyHandler sandbox_keys[] = {
	{ "allow_nested_sandbox", on_sandbox_bool },
	{ "allow_ptrace", on_sandbox_bool },
};

static int on_sandbox(Parser *ps, const char *path, cJSON *v)
{
	return parse_object(ps, path, v, sandbox_keys, ELEMENTSOF(sandbox_keys));
}

/* ---- git ---- */

static int on_git(Parser *ps, const char *path, cJSON *v)
{
	GitMode m;

	if (!cJSON_IsString(v) || (m = git_mode_from_string(v->valuestring)) < 0)
		return fail_type(ps, path, "\"read-only\", \"commit\" or \"off\"", v);
	ps->p->git_mode = m;
	return 0;
}

/* ---- tier ---- */

static int on_tier(Parser *ps, const char *path, cJSON *v)
{
	if (!cJSON_IsNumber(v) || (v->valuedouble != 0 && v->valuedouble != 1 && v->valuedouble != 2 &&
				     v->valuedouble != 3))
		return fail_type(ps, path, "0, 1, 2 or 3", v);
	ps->p->has_tier = true;
	ps->p->tier = (int)v->valuedouble;
	return 0;
}

static const KeyHandler top_keys[] = {
	{ "version", on_version }, { "presets", on_presets }, { "fs", on_fs },
	{ "network", on_network }, { "env", on_env },	      { "limits", on_limits },
	{ "sandbox", on_sandbox }, { "git", on_git },	      { "tier", on_tier },
};

static void line_col(const char *text, const char *at, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (const char *s = text; s < at && *s; s++) {
		if (*s == '\n') {
			(*line)++;
			*col = 1;
		} else
			(*col)++;
	}
}

int policy_merge_json_as(WardPolicy *p, const char *filename, const char *source,
			 const char *text, PolicyError *reterr)
{
	_cleanup_cjson_ cJSON *root = NULL;
	const char *end = NULL;
	Parser ps = { .file = filename ? filename : "<policy>", .e = reterr };
	int r;

	root = cJSON_ParseWithOpts(text, &end, 1);
	if (!root) {
		int line, col;

		if (!end)
			end = text;
		line_col(text, end, &line, &col);
		return policy_error_set(reterr, ps.file, "", "invalid JSON at line %d, column %d",
					line, col);
	}
	if (!cJSON_IsObject(root)) {
		char got[160];
		describe(root, got, sizeof(got));
		return policy_error_set(reterr, ps.file, "", "expected a JSON object, got %s", got);
	}

	ps.p = policy_copy(p);
	if (!ps.p)
		return fail_oom(&ps, "");
	r = parse_object(&ps, "", root, top_keys, ELEMENTSOF(top_keys));
	if (r >= 0 && source && policy_add_unique(&ps.p->sources, source) < 0)
		r = fail_oom(&ps, "");
	if (r < 0) {
		policy_free(ps.p);
		return r;
	}
	policy_replace(p, ps.p);
	return 0;
}

int policy_merge_json(WardPolicy *p, const char *filename, const char *text, PolicyError *reterr)
{
	/* "<command line>" and the like name no file: keep them out of
	 * p->sources, which lists files (to hide them and to audit them). */
	const char *source = filename && filename[0] != '<' ? filename : NULL;
	return policy_merge_json_as(p, filename, source, text, reterr);
}
