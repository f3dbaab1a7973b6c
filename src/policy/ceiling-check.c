/* The narrowing rules of the managed ceiling (ceiling.h): what "within"
 * means for each kind of key, the narrowing of ward's own defaults, and
 * the bounded load order. A key the ceiling does not name is not bounded.
 *
 *  - paths: by level (read < read_exec < read_write); an entry at a level
 *    must lie beneath an entry of that level or a higher one, for every
 *    level the ceiling names, after resolving symlinks on both sides;
 *  - host patterns: "*.d" covers names below d, "host" without a port
 *    covers every port of host; network.commands may use network.allow
 *    and the ceiling's own list for that command;
 *  - scalars: network.mode none < proxy; git off < read-only < commit;
 *    the sandbox switches false < true; limits at most the maximum;
 *  - sets: tiers, presets, host_ports, hosts (exact pins);
 *  - floors: fs.deny, fs.protected, network.deny and env.strip of the
 *    ceiling are added to every run. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/path-real.h"
#include "common/path-util.h"
#include "common/strv.h"
#include "policy/ceiling-internal.h"
#include "policy/policy-internal.h"

enum { LV_READ, LV_EXEC, LV_WRITE, _LV_MAX };

static bool beneath_any(char *const *l, const char *path);

static const char *const level_key[_LV_MAX] = { "fs.read", "fs.read_exec", "fs.read_write" };

_printf_(4, 5) static int refuse(PolicyError *e, const char *source, const char *path,
				 const char *fmt, ...)
{
	va_list ap;

	if (e) {
		snprintf(e->file, sizeof(e->file), "%s", source);
		snprintf(e->path, sizeof(e->path), "%s", path);
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return -EPERM;
}

/* A short JSON rendering of the managed rule at @section.@key. */
static void rule_text(const Ceiling *c, const char *section, const char *key, char *buf, size_t n)
{
	const cJSON *s = section ? cJSON_GetObjectItemCaseSensitive(c->doc, section) : c->doc;
	const cJSON *v = s ? cJSON_GetObjectItemCaseSensitive(s, key) : NULL;
	_cleanup_free_ char *t = v ? cJSON_PrintUnformatted(v) : NULL;

	snprintf(buf, n, "%s%s%s %s", section ? section : "", section ? "." : "", key,
		 t ? t : "(not set)");
	if (strlen(buf) >= n - 1 && n > 4)
		memcpy(buf + n - 4, "...", 4);
}

char *ceiling_resolve_path(const char *path)
{
	_cleanup_free_ char *head = strdup(path);
	char *tail = NULL, *res, *out = NULL;

	if (!head)
		return NULL;
	for (;;) {
		char *slash;

		res = path_real(head[0] ? head : "/");
		if (res)
			break;
		slash = strrchr(head, '/');
		if (!slash || slash == head) {
			/* Nothing of it exists but "/". */
			res = strdup("/");
			if (!res)
				return free(tail), NULL;
			free(tail);
			tail = strdup(path + 1);
			if (!tail)
				return free(res), NULL;
			break;
		}
		*slash = '\0';
		free(tail);
		tail = strdup(path + strlen(head) + 1);
		if (!tail)
			return NULL;
	}
	if (!tail || !*tail)
		out = res;
	else {
		if (asprintf(&out, "%s%s%s", res, strcmp(res, "/") == 0 ? "" : "/", tail) < 0)
			out = NULL;
		free(res);
	}
	free(tail);
	if (out) {
		char *norm = NULL;
		if (path_normalize(out, &norm) < 0)
			norm = NULL;
		free(out);
		out = norm;
	}
	return out;
}

static int add_resolved(char ***dst, char *const *l)
{
	STRV_FOREACH(s, l)
	{
		char *r = ceiling_resolve_path(*s);
		if (!r || strv_consume(dst, r) < 0)
			return -ENOMEM;
	}
	return 0;
}

int ceiling_bind(Ceiling *c, const PolicyContext *ctx, PolicyError *e)
{
	int r;

	policy_free(c->bound);
	strv_free(c->rd);
	strv_free(c->rx);
	strv_free(c->rw);
	c->rd = c->rx = c->rw = NULL;
	c->bound = policy_copy(c->pol);
	if (!c->bound)
		return -ENOMEM;
	if ((r = policy_finalize(c->bound, ctx, e)) < 0)
		return r;
	/* Each level allows what it names and what the levels above do. */
	if (add_resolved(&c->rw, c->bound->fs_read_write) < 0 ||
	    add_resolved(&c->rx, c->bound->fs_read_write) < 0 ||
	    add_resolved(&c->rx, c->bound->fs_read_exec) < 0 || add_resolved(&c->rd, c->rx) < 0 ||
	    add_resolved(&c->rd, c->bound->fs_read) < 0)
		return -ENOMEM;
	/* A ceiling that lets a run rewrite it bounds nothing. */
	_cleanup_free_ char *self = ceiling_resolve_path(c->file);
	if (!self)
		return -ENOMEM;
	if (beneath_any(c->rw, self))
		return policy_error_set(e, c->file, "fs.read_write",
					"makes the managed policy itself writable to the runs it bounds"),
		       -EPERM;
	return 0;
}

static bool level_bounded(const Ceiling *c, int lv)
{
	return lv == LV_READ ? c->has_read : lv == LV_EXEC ? c->has_read_exec : c->has_read_write;
}

static char *const *level_allowed(const Ceiling *c, int lv)
{
	return lv == LV_READ ? c->rd : lv == LV_EXEC ? c->rx : c->rw;
}

static bool beneath_any(char *const *l, const char *path)
{
	STRV_FOREACH(s, l)
	if (path_is_beneath(path, *s))
		return true;
	return false;
}

/* -1 if the resolved @path is within every bounded level up to @lv, else
 * the highest level it is outside of (the rule that would have to grant it). */
static int path_outside(const Ceiling *c, const char *path, int lv)
{
	for (int k = lv; k >= LV_READ; k--)
		if (level_bounded(c, k) && !beneath_any(level_allowed(c, k), path))
			return k;
	return -1;
}

static int check_path(const Ceiling *c, const char *path, int lv, const char *source,
		      const char *key, PolicyError *e)
{
	_cleanup_free_ char *res = ceiling_resolve_path(path);
	char rule[400];
	int k;

	if (!res)
		return -ENOMEM;
	k = path_outside(c, res, lv);
	if (k < 0)
		return 0;
	rule_text(c, "fs", level_key[k] + 3, rule, sizeof(rule));
	/* Name what grants that level: the levels above allow it too. */
	return refuse(e, source, key,
		      "\"%s\"%s%s%s is outside the managed ceiling %s (managed rule %s%s)", path,
		      strcmp(res, path) ? " (resolves to \"" : "", strcmp(res, path) ? res : "",
		      strcmp(res, path) ? "\")" : "", c->file, rule,
		      k < LV_WRITE ? ", or a level above it" : "");
}

/* ---- host patterns ---- */

/* Split "host", "host:port", "[v6]", "[v6]:port" into @host and the port
 * text ("" if none). */
static void split_host(const char *s, char *host, size_t n, const char **port)
{
	const char *colon;

	*port = "";
	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		size_t len = end ? (size_t)(end - s + 1) : strlen(s);
		snprintf(host, n, "%.*s", (int)len, s);
		if (end && end[1] == ':')
			*port = end + 2;
		return;
	}
	colon = strchr(s, ':');
	snprintf(host, n, "%.*s", colon ? (int)(colon - s) : (int)strlen(s), s);
	if (colon)
		*port = colon + 1;
}

bool ceiling_host_covers(const char *c, const char *e)
{
	char ch[260], eh[260];
	const char *cp, *ep;
	size_t lc, le;

	split_host(c, ch, sizeof(ch), &cp);
	split_host(e, eh, sizeof(eh), &ep);
	if (cp[0] && strcmp(cp, ep) != 0)
		return false;
	if (strcasecmp(ch, eh) == 0)
		return true;
	/* "*.d" covers "x.d", "a.x.d" and "*.x.d", never "d" itself. */
	if (strncmp(ch, "*.", 2) != 0)
		return false;
	lc = strlen(ch + 1);
	le = strlen(eh);
	return le > lc && strcasecmp(eh + le - lc, ch + 1) == 0;
}

static bool host_in(char *const *l, const char *e)
{
	STRV_FOREACH(s, l)
	if (ceiling_host_covers(*s, e))
		return true;
	return false;
}

static const NetCommand *command_of(const WardPolicy *p, const char *name)
{
	for (size_t i = 0; i < p->n_net_commands; i++)
		if (strcmp(p->net_commands[i].name, name) == 0)
			return &p->net_commands[i];
	return NULL;
}

static int check_network(const Ceiling *c, const WardPolicy *p, const char *source, PolicyError *e)
{
	const WardPolicy *b = c->bound;
	char rule[400], key[128];

	if (c->has_net_mode && b->net_mode == NET_MODE_NONE && p->net_mode != NET_MODE_NONE) {
		rule_text(c, "network", "mode", rule, sizeof(rule));
		return refuse(e, source, "network.mode",
			      "\"%s\" is above the managed ceiling %s (managed rule %s)",
			      net_mode_to_string(p->net_mode), c->file, rule);
	}
	for (size_t i = 0; i < p->n_net_host_ports; i++) {
		bool ok = false;

		if (!c->has_host_ports && !(c->has_net_mode && b->net_mode == NET_MODE_NONE))
			break;
		for (size_t j = 0; j < b->n_net_host_ports; j++)
			ok = ok || b->net_host_ports[j] == p->net_host_ports[i];
		if (!ok) {
			rule_text(c, "network", c->has_host_ports ? "host_ports" : "mode", rule,
				  sizeof(rule));
			return refuse(e, source, "network.host_ports",
				      "port %u of the host is outside the managed ceiling %s (managed "
				      "rule %s)",
				      p->net_host_ports[i], c->file, rule);
		}
	}
	if (c->has_net_allow) {
		STRV_FOREACH(a, p->net_allow)
		if (!host_in(b->net_allow, *a)) {
			rule_text(c, "network", "allow", rule, sizeof(rule));
			return refuse(e, source, "network.allow",
				      "\"%s\" is outside the managed ceiling %s (managed rule %s)", *a,
				      c->file, rule);
		}
		for (size_t i = 0; i < p->n_net_commands; i++) {
			const NetCommand *pc = &p->net_commands[i], *bc = command_of(b, pc->name);

			STRV_FOREACH(a, pc->allow)
			if (!host_in(b->net_allow, *a) && !(bc && host_in(bc->allow, *a))) {
				snprintf(key, sizeof(key), "network.commands.%s", pc->name);
				rule_text(c, "network", "allow", rule, sizeof(rule));
				return refuse(e, source, key,
					      "\"%s\" is outside the managed ceiling %s (managed rule "
					      "%s, or network.commands.%s)",
					      *a, c->file, rule, pc->name);
			}
		}
	}
	if (c->has_net_allow || c->has_hosts)
		for (size_t i = 0; i < p->n_net_hosts; i++) {
			bool ok = false;

			for (size_t j = 0; j < b->n_net_hosts; j++)
				ok = ok || (strcasecmp(b->net_hosts[j].name, p->net_hosts[i].name) == 0 &&
					    strcmp(b->net_hosts[j].address, p->net_hosts[i].address) == 0);
			if (!ok) {
				rule_text(c, "network", "hosts", rule, sizeof(rule));
				return refuse(e, source, "network.hosts",
					      "pinning \"%s\" to %s is outside the managed ceiling %s "
					      "(managed rule %s; a pin redirects an allowed name)",
					      p->net_hosts[i].name, p->net_hosts[i].address, c->file, rule);
			}
		}
	if (c->has_upstream_ca)
		STRV_FOREACH(f, p->net_upstream_ca)
		if (!strv_contains(b->net_upstream_ca, *f)) {
			rule_text(c, "network", "upstream_ca", rule, sizeof(rule));
			return refuse(e, source, "network.upstream_ca",
				      "trusting \"%s\" is outside the managed ceiling %s (managed rule "
				      "%s)",
				      *f, c->file, rule);
		}
	return 0;
}

/* ---- scalars ---- */

static const struct {
	const char *section, *key;
	size_t off;
} limits[] = {
	{ "limits", "timeout_s", offsetof(WardPolicy, timeout_s) },
	{ "limits", "memory_mb", offsetof(WardPolicy, memory_mb) },
	{ "limits", "pids", offsetof(WardPolicy, pids) },
	{ "limits", "tmp_mb", offsetof(WardPolicy, tmp_mb) },
	{ "limits", "nofile", offsetof(WardPolicy, nofile) },
	{ "limits", "shm_mb", offsetof(WardPolicy, shm_mb) },
	{ "limits", "inotify_instances", offsetof(WardPolicy, inotify_instances) },
	{ "limits", "inotify_watches", offsetof(WardPolicy, inotify_watches) },
	{ "limits", "sigpending", offsetof(WardPolicy, sigpending) },
	{ "limits", "msgqueue_kb", offsetof(WardPolicy, msgqueue_kb) },
	{ "limits", "memlock_kb", offsetof(WardPolicy, memlock_kb) },
	{ "limits", "cpu_percent", offsetof(WardPolicy, cpu_percent) },
	{ "limits", "io_weight", offsetof(WardPolicy, io_weight) },
	{ "network", "max_connections", offsetof(WardPolicy, max_connections) },
};

static uint64_t *limit_of(WardPolicy *p, size_t i)
{
	return (uint64_t *)((char *)p + limits[i].off);
}

static int git_rank(GitMode m)
{
	return m == GIT_MODE_OFF ? 0 : m == GIT_MODE_READ_ONLY ? 1 : 2;
}

static bool tier_allowed(const Ceiling *c, int tier)
{
	if (!c->has_tiers)
		return true;
	for (size_t i = 0; i < c->n_tiers; i++)
		if (c->tiers[i] == tier)
			return true;
	return false;
}

static int check_scalars(const Ceiling *c, const WardPolicy *p, const char *source, PolicyError *e)
{
	const WardPolicy *b = c->bound;
	char rule[400], key[64];

	for (size_t i = 0; i < ELEMENTSOF(limits); i++) {
		uint64_t max = *limit_of((WardPolicy *)b, i), v = *limit_of((WardPolicy *)p, i);

		if (max == 0 || (v != 0 && v <= max))
			continue;
		snprintf(key, sizeof(key), "%s.%s", limits[i].section, limits[i].key);
		rule_text(c, limits[i].section, limits[i].key, rule, sizeof(rule));
		if (v == 0)
			return refuse(e, source, key,
				      "no limit is above the managed ceiling %s (managed rule %s)",
				      c->file, rule);
		return refuse(e, source, key, "%llu is above the managed ceiling %s (managed rule %s)",
			      (unsigned long long)v, c->file, rule);
	}
	if (c->has_git && git_rank(p->git_mode) > git_rank(b->git_mode)) {
		rule_text(c, NULL, "git", rule, sizeof(rule));
		return refuse(e, source, "git", "\"%s\" is above the managed ceiling %s (managed rule %s)",
			      git_mode_to_string(p->git_mode), c->file, rule);
	}
	if (c->has_nested && !b->allow_nested_sandbox && p->allow_nested_sandbox) {
		rule_text(c, "sandbox", "allow_nested_sandbox", rule, sizeof(rule));
		return refuse(e, source, "sandbox.allow_nested_sandbox",
			      "true is above the managed ceiling %s (managed rule %s)", c->file, rule);
	}
	if (c->has_ptrace && !b->allow_ptrace && p->allow_ptrace) {
		rule_text(c, "sandbox", "allow_ptrace", rule, sizeof(rule));
		return refuse(e, source, "sandbox.allow_ptrace",
			      "true is above the managed ceiling %s (managed rule %s)", c->file, rule);
	}
	if (p->has_tier && !tier_allowed(c, p->tier)) {
		rule_text(c, NULL, "allowed_tiers", rule, sizeof(rule));
		return refuse(e, source, "tier", "tier %d is outside the managed ceiling %s (managed rule %s)",
			      p->tier, c->file, rule);
	}
	if (c->has_presets)
		STRV_FOREACH(n, p->presets)
		if (!strv_contains(c->presets, *n)) {
			rule_text(c, NULL, "allowed_presets", rule, sizeof(rule));
			return refuse(e, source, "presets",
				      "preset \"%s\" is outside the managed ceiling %s (managed rule %s)",
				      *n, c->file, rule);
		}
	return 0;
}

int ceiling_check(const Ceiling *c, const WardPolicy *p, const char *source, PolicyError *e)
{
	const struct {
		char *const *l;
		int lv;
		const char *key;
	} fs[] = {
		{ p->fs_read, LV_READ, "fs.read" },	       { p->fs_sanitize, LV_READ, "fs.sanitize" },
		{ p->fs_cache, LV_READ, "fs.cache" },	       { p->fs_read_exec, LV_EXEC, "fs.read_exec" },
		{ p->fs_read_write, LV_WRITE, "fs.read_write" },
	};
	int r;

	if (!c)
		return 0;
	for (size_t i = 0; i < ELEMENTSOF(fs); i++)
		STRV_FOREACH(s, fs[i].l)
	if ((r = check_path(c, *s, fs[i].lv, source, fs[i].key, e)) < 0)
		return r;
	if ((r = check_network(c, p, source, e)) < 0)
		return r;
	return check_scalars(c, p, source, e);
}

int ceiling_check_request(bool cow, const char *workspace, const char *home, PolicyError *e)
{
	Ceiling *c = NULL;
	PolicyContext ctx = { .home = home, .workspace = workspace };
	int r = ceiling_load_system(&c, e);

	if (r < 0 || !c)
		return r == -ENOMEM ? r : r < 0 ? -EPERM : 0;
	r = ceiling_bind(c, &ctx, e);
	if (r >= 0)
		r = ceiling_check_run(c, ceiling_default_tier(c), "the request", cow, workspace, e);
	ceiling_free(c);
	return r == -ENOMEM ? r : r < 0 ? -EPERM : 0;
}

int ceiling_default_tier(const Ceiling *c)
{
	if (!c || tier_allowed(c, 2))
		return 2;
	return c->tiers[0];
}

int ceiling_check_run(const Ceiling *c, int tier, const char *tier_source, bool cow,
		      const char *workspace, PolicyError *e)
{
	char rule[400];

	if (!c)
		return 0;
	if (!tier_allowed(c, tier)) {
		rule_text(c, NULL, "allowed_tiers", rule, sizeof(rule));
		return refuse(e, tier_source, "tier", "tier %d is outside the managed ceiling %s (managed rule %s)",
			      tier, c->file, rule);
	}
	if (c->require_cow && !cow)
		return refuse(e, "the request", "cow",
			      "the managed ceiling %s requires copy-on-write (managed rule require_cow "
			      "true): run with --cow or in a copy-on-write --session",
			      c->file);
	if (workspace)
		return check_path(c, workspace, LV_WRITE, "the workspace (-w or the current directory)",
				  "workspace", e);
	return 0;
}

/* ---- the defaults ---- */

static int note(Ceiling *c, const char *fmt, ...) _printf_(2, 3);
static int note(Ceiling *c, const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return strv_extend(&c->applied, buf);
}

static int narrow_list(Ceiling *c, char ***l, int lv, const char *key)
{
	_cleanup_strv_ char **out = NULL;

	STRV_FOREACH(s, *l)
	{
		_cleanup_free_ char *res = ceiling_resolve_path(*s);
		int k;

		if (!res)
			return -ENOMEM;
		k = path_outside(c, res, lv);
		if (k < 0) {
			if (policy_add_unique(&out, *s) < 0)
				return -ENOMEM;
			continue;
		}
		if (note(c, "%s: the default \"%s\" is outside the ceiling; narrowed to the ceiling's "
			    "entries beneath it",
			 key, *s) < 0)
			return -ENOMEM;
		STRV_FOREACH(x, level_allowed(c, k))
		if (path_is_beneath(*x, res) && path_outside(c, *x, lv) < 0 &&
		    (policy_add_unique(&out, *x) < 0 || note(c, "%s: \"%s\"", key, *x) < 0))
			return -ENOMEM;
	}
	strv_free(*l);
	*l = TAKE_PTR(out);
	return 0;
}

static int add_floor(Ceiling *c, char ***dst, char *const *src, const char *key)
{
	STRV_FOREACH(s, src)
	if (!strv_contains(*dst, *s) &&
	    (policy_add_unique(dst, *s) < 0 || note(c, "%s: \"%s\" added", key, *s) < 0))
		return -ENOMEM;
	return 0;
}

int ceiling_narrow_defaults(Ceiling *c, WardPolicy *p)
{
	const WardPolicy *b = c->bound;
	int r;

	if ((r = narrow_list(c, &p->fs_read, LV_READ, "fs.read")) < 0 ||
	    (r = narrow_list(c, &p->fs_sanitize, LV_READ, "fs.sanitize")) < 0 ||
	    (r = narrow_list(c, &p->fs_cache, LV_READ, "fs.cache")) < 0 ||
	    (r = narrow_list(c, &p->fs_read_exec, LV_EXEC, "fs.read_exec")) < 0 ||
	    (r = narrow_list(c, &p->fs_read_write, LV_WRITE, "fs.read_write")) < 0)
		return r;
	/* The ceiling's own entries, unexpanded, are finalized with the rest. */
	if ((r = add_floor(c, &p->fs_deny, c->pol->fs_deny, "fs.deny")) < 0 ||
	    (r = add_floor(c, &p->fs_protected, c->pol->fs_protected, "fs.protected")) < 0 ||
	    (r = add_floor(c, &p->net_deny, b->net_deny, "network.deny")) < 0 ||
	    (r = add_floor(c, &p->env_strip, b->env_strip, "env.strip")) < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(limits); i++) {
		uint64_t max = *limit_of((WardPolicy *)b, i), *v = limit_of(p, i);

		if (max == 0 || (*v != 0 && *v <= max))
			continue;
		*v = max;
		if (note(c, "%s.%s: %llu (the ceiling's maximum)", limits[i].section, limits[i].key,
			 (unsigned long long)max) < 0)
			return -ENOMEM;
	}
	if (c->has_git && git_rank(p->git_mode) > git_rank(b->git_mode)) {
		p->git_mode = b->git_mode;
		if (note(c, "git: \"%s\"", git_mode_to_string(b->git_mode)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* ---- the bounded load ---- */

typedef struct Stage {
	Ceiling *c;
	const PolicyContext *ctx;
} Stage;

static int check_stage(Ceiling *c, const WardPolicy *p, const char *source,
		       const PolicyContext *ctx, PolicyError *e)
{
	WardPolicy *f = policy_copy(p);
	int r;

	if (!f)
		return -ENOMEM;
	r = policy_finalize(f, ctx, e);
	if (r >= 0)
		r = ceiling_check(c, f, source, e);
	policy_free(f);
	return r;
}

static int on_stage(WardPolicy *p, bool is_defaults, const char *source, void *userdata,
		    PolicyError *e)
{
	Stage *st = userdata;

	if (is_defaults)
		return ceiling_narrow_defaults(st->c, p);
	return check_stage(st->c, p, source, st->ctx, e);
}

int policy_load_bounded(Ceiling *c, const char *file_or_null, char *const *flag_presets,
			const char *overrides, const char *overrides_source,
			const PolicyContext *ctx, WardPolicy **ret, PolicyError *e)
{
	_cleanup_free_ char *label = NULL;
	Stage st = { .c = c, .ctx = ctx };
	WardPolicy *p = NULL;
	int r;

	if (!overrides_source)
		overrides_source = "command line";
	/* Errors name it; "<...>" keeps it out of the policy's sources. */
	if (asprintf(&label, "<%s>", overrides_source) < 0)
		return -ENOMEM;
	if (c && (r = ceiling_bind(c, ctx, e)) < 0)
		return r;
	r = policy_load_staged(file_or_null, flag_presets, c ? on_stage : NULL, &st, &p, e);
	if (r < 0)
		return r;
	if (overrides && (r = policy_merge_json(p, label, overrides, e)) < 0)
		goto fail;
	if ((r = policy_finalize(p, ctx, e)) < 0)
		goto fail;
	if (c && (r = ceiling_check(c, p, overrides ? label : "the policy", e)) < 0)
		goto fail;
	*ret = p;
	return 0;
fail:
	policy_free(p);
	return r;
}
