/* The policy model: allocation, deep copy, the deduplicating adders that
 * every merge goes through, and error reporting. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/policy-internal.h"

static const char *const net_mode_table[_NET_MODE_MAX] = {
	[NET_MODE_NONE] = "none",
	[NET_MODE_PROXY] = "proxy",
};

const char *net_mode_to_string(NetMode m)
{
	if (m < 0 || m >= _NET_MODE_MAX)
		return NULL;
	return net_mode_table[m];
}

NetMode net_mode_from_string(const char *s)
{
	for (int i = 0; s && i < _NET_MODE_MAX; i++)
		if (strcmp(s, net_mode_table[i]) == 0)
			return (NetMode)i;
	return _NET_MODE_INVALID;
}

static const char *const git_mode_table[_GIT_MODE_MAX] = {
	[GIT_MODE_READ_ONLY] = "read-only",
	[GIT_MODE_COMMIT] = "commit",
	[GIT_MODE_OFF] = "off",
};

const char *git_mode_to_string(GitMode m)
{
	if (m < 0 || m >= _GIT_MODE_MAX)
		return NULL;
	return git_mode_table[m];
}

GitMode git_mode_from_string(const char *s)
{
	for (int i = 0; s && i < _GIT_MODE_MAX; i++)
		if (strcmp(s, git_mode_table[i]) == 0)
			return (GitMode)i;
	return _GIT_MODE_INVALID;
}

int policy_error_set(PolicyError *e, const char *file, const char *path, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -EINVAL;
	snprintf(e->file, sizeof(e->file), "%s", file ? file : "<policy>");
	snprintf(e->path, sizeof(e->path), "%s", path ? path : "");
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void policy_error_format(const PolicyError *e, char *buf, size_t n)
{
	if (!buf || n == 0)
		return;
	if (e->path[0])
		snprintf(buf, n, "%s: %s: %s", e->file, e->path, e->msg);
	else
		snprintf(buf, n, "%s: %s", e->file, e->msg);
}

void policy_quote(const char *s, char *buf, size_t n)
{
	size_t o = 0;
	const size_t max_chars = 120;

	if (n < 8) {
		if (n)
			buf[0] = '\0';
		return;
	}
	buf[o++] = '"';
	for (size_t i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i >= max_chars || o + 6 >= n) {
			/* Leave room for the ellipsis and the closing quote, and do
			 * not cut a UTF-8 sequence in half. */
			o = o + 5 < n ? o : n - 5;
			while (o > 1 && ((unsigned char)buf[o - 1] & 0xc0) == 0x80)
				o--;
			if (o > 1 && (unsigned char)buf[o - 1] >= 0xc0)
				o--;
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
			if (o + 5 >= n)
				break;
			o += (size_t)snprintf(buf + o, n - o, c == '"' || c == '\\' ? "\\%c" : "\\x%02x",
					      c);
		} else
			buf[o++] = (char)c;
	}
	buf[o++] = '"';
	buf[o] = '\0';
}

WardPolicy *policy_new_empty(void)
{
	WardPolicy *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->net_mode = NET_MODE_NONE;
	return p;
}

static void free_contents(WardPolicy *p)
{
	strv_free(p->fs_read);
	strv_free(p->fs_read_exec);
	strv_free(p->fs_read_write);
	strv_free(p->fs_cache);
	strv_free(p->fs_sanitize);
	strv_free(p->fs_deny);
	strv_free(p->fs_protected);
	strv_free(p->net_allow);
	strv_free(p->net_deny);
	for (size_t i = 0; i < p->n_net_commands; i++) {
		free(p->net_commands[i].name);
		strv_free(p->net_commands[i].allow);
	}
	free(p->net_commands);
	for (size_t i = 0; i < p->n_net_hosts; i++) {
		free(p->net_hosts[i].name);
		free(p->net_hosts[i].address);
	}
	free(p->net_hosts);
	free(p->net_local_ports);
	free(p->net_host_ports);
	free(p->net_capture_ports);
	strv_free(p->net_inspect);
	strv_free(p->net_upstream_ca);
	strv_free(p->net_credentials);
	strv_free(p->net_requests);
	strv_free(p->env_pass);
	strv_free(p->env_strip);
	strv_free(p->env_set);
	strv_free(p->presets);
	strv_free(p->sources);
}

WardPolicy *policy_free(WardPolicy *p)
{
	if (!p)
		return NULL;
	free_contents(p);
	free(p);
	return NULL;
}

void policy_replace(WardPolicy *dst, WardPolicy *src)
{
	free_contents(dst);
	*dst = *src;
	free(src);
}

static int copy_strv(char ***dst, char *const *src)
{
	if (!src) {
		*dst = NULL;
		return 0;
	}
	*dst = strv_copy(src);
	return *dst ? 0 : -ENOMEM;
}

WardPolicy *policy_copy(const WardPolicy *p)
{
	WardPolicy *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;

	/* Scalars first, then every owned pointer is replaced by a copy; on
	 * failure the remaining ones are reset so that policy_free() is safe. */
	*c = *p;
	c->net_commands = NULL;
	c->n_net_commands = 0;
	c->net_hosts = NULL;
	c->n_net_hosts = 0;
	c->net_local_ports = NULL;
	c->n_net_local_ports = 0;
	c->net_host_ports = NULL;
	c->n_net_host_ports = 0;
	c->net_capture_ports = NULL;
	c->n_net_capture_ports = 0;
	c->fs_read = c->fs_read_exec = c->fs_read_write = c->fs_deny = c->fs_protected = NULL;
	c->fs_cache = c->fs_sanitize = NULL;
	c->net_allow = c->net_deny = NULL;
	c->net_inspect = c->net_upstream_ca = c->net_credentials = c->net_requests = NULL;
	c->env_pass = c->env_strip = c->env_set = NULL;
	c->presets = c->sources = NULL;

	if (copy_strv(&c->fs_read, p->fs_read) < 0 ||
	    copy_strv(&c->fs_read_exec, p->fs_read_exec) < 0 ||
	    copy_strv(&c->fs_read_write, p->fs_read_write) < 0 ||
	    copy_strv(&c->fs_cache, p->fs_cache) < 0 ||
	    copy_strv(&c->fs_sanitize, p->fs_sanitize) < 0 ||
	    copy_strv(&c->fs_deny, p->fs_deny) < 0 ||
	    copy_strv(&c->fs_protected, p->fs_protected) < 0 ||
	    copy_strv(&c->net_allow, p->net_allow) < 0 ||
	    copy_strv(&c->net_deny, p->net_deny) < 0 ||
	    copy_strv(&c->net_inspect, p->net_inspect) < 0 ||
	    copy_strv(&c->net_upstream_ca, p->net_upstream_ca) < 0 ||
	    copy_strv(&c->net_credentials, p->net_credentials) < 0 ||
	    copy_strv(&c->net_requests, p->net_requests) < 0 ||
	    copy_strv(&c->env_pass, p->env_pass) < 0 ||
	    copy_strv(&c->env_strip, p->env_strip) < 0 ||
	    copy_strv(&c->env_set, p->env_set) < 0 || copy_strv(&c->presets, p->presets) < 0 ||
	    copy_strv(&c->sources, p->sources) < 0)
		return policy_free(c);

	for (size_t i = 0; i < p->n_net_commands; i++) {
		/* Create the entry even for an empty list: "no network" is meaningful. */
		if (policy_add_command_host(c, p->net_commands[i].name, NULL) < 0)
			return policy_free(c);
		STRV_FOREACH(h, p->net_commands[i].allow)
			if (policy_add_command_host(c, p->net_commands[i].name, *h) < 0)
				return policy_free(c);
	}
	for (size_t i = 0; i < p->n_net_hosts; i++)
		if (policy_set_host(c, p->net_hosts[i].name, p->net_hosts[i].address) < 0)
			return policy_free(c);
	for (size_t i = 0; i < p->n_net_local_ports; i++)
		if (policy_add_local_port(c, p->net_local_ports[i]) < 0)
			return policy_free(c);
	for (size_t i = 0; i < p->n_net_host_ports; i++)
		if (policy_add_port(&c->net_host_ports, &c->n_net_host_ports,
				    p->net_host_ports[i]) < 0)
			return policy_free(c);
	for (size_t i = 0; i < p->n_net_capture_ports; i++)
		if (policy_add_port(&c->net_capture_ports, &c->n_net_capture_ports,
				    p->net_capture_ports[i]) < 0)
			return policy_free(c);
	return c;
}

int policy_add_unique(char ***l, const char *s)
{
	return strv_extend_unique(l, s);
}

int policy_set_env(WardPolicy *p, const char *name, const char *value)
{
	size_t n = strlen(name);
	char *kv;

	if (asprintf(&kv, "%s=%s", name, value) < 0)
		return -ENOMEM;
	for (size_t i = 0; p->env_set && p->env_set[i]; i++)
		if (strncmp(p->env_set[i], name, n) == 0 && p->env_set[i][n] == '=') {
			free(p->env_set[i]);
			p->env_set[i] = kv;
			return 0;
		}
	return strv_consume(&p->env_set, kv);
}

/* @pattern NULL: make sure the command exists, add nothing. */
int policy_add_command_host(WardPolicy *p, const char *cmd, const char *pattern)
{
	NetCommand *c = NULL;

	for (size_t i = 0; i < p->n_net_commands; i++)
		if (strcmp(p->net_commands[i].name, cmd) == 0)
			c = &p->net_commands[i];
	if (!c) {
		NetCommand *n = realloc(p->net_commands, sizeof(*n) * (p->n_net_commands + 1));
		char *name = strdup(cmd);
		char **allow = calloc(1, sizeof(char *));

		if (n)
			p->net_commands = n;
		if (!n || !name || !allow) {
			free(name);
			free(allow);
			return -ENOMEM;
		}
		c = &p->net_commands[p->n_net_commands++];
		c->name = name;
		c->allow = allow;
	}
	if (!pattern)
		return 0;
	return strv_extend_unique(&c->allow, pattern);
}

int policy_set_host(WardPolicy *p, const char *name, const char *address)
{
	char *a = strdup(address);
	char *nm;
	NetHost *n;

	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_net_hosts; i++)
		if (strcmp(p->net_hosts[i].name, name) == 0) {
			free(p->net_hosts[i].address);
			p->net_hosts[i].address = a;
			return 0;
		}
	nm = strdup(name);
	n = realloc(p->net_hosts, sizeof(*n) * (p->n_net_hosts + 1));
	if (n)
		p->net_hosts = n;
	if (!n || !nm) {
		free(a);
		free(nm);
		return -ENOMEM;
	}
	p->net_hosts[p->n_net_hosts].name = nm;
	p->net_hosts[p->n_net_hosts].address = a;
	p->n_net_hosts++;
	return 0;
}

int policy_add_port(uint16_t **l, size_t *n, uint16_t port)
{
	uint16_t *a;

	for (size_t i = 0; i < *n; i++)
		if ((*l)[i] == port)
			return 0;
	a = realloc(*l, sizeof(*a) * (*n + 1));
	if (!a)
		return -ENOMEM;
	*l = a;
	a[(*n)++] = port;
	return 0;
}

int policy_add_local_port(WardPolicy *p, uint16_t port)
{
	return policy_add_port(&p->net_local_ports, &p->n_net_local_ports, port);
}
