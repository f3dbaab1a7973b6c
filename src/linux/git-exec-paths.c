/* core.hooksPath and include.path targets in the workspace (git-exec-paths.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/path-util.h"
#include "common/strv.h"
#include "linux/git-exec-paths.h"

/* Includes pulling in includes: as deep as git itself goes is far more
 * than any real setup; a cycle stops here too. */
#define INCLUDE_MAX_DEPTH 5

typedef struct Ctx {
	const char *ws;
	size_t wl;
	const char *home;
	WorkspaceScan *scan;
	char ***extra;
	char **global_hooks; /* core.hooksPath values of the global configs, raw */
} Ctx;

/* A value as git reads it: quotes removed, escapes, comments dropped. */
static void unquote(char *v)
{
	const char *in = v;
	char *out = v;
	bool q = false;

	while (isspace((unsigned char)*in))
		in++;
	for (; *in; in++) {
		if (*in == '"') {
			q = !q;
			continue;
		}
		if (*in == '\\' && in[1]) {
			in++;
			*out++ = *in == 'n' ? '\n' : *in == 't' ? '\t' : *in;
			continue;
		}
		if (!q && (*in == '#' || *in == ';'))
			break;
		*out++ = *in;
	}
	*out = '\0';
}

static void rtrim(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/* @value resolved against @base (a directory), "~/" against home; the
 * result canonical where it exists (git follows symlinks), else lexical. */
static char *resolve(const Ctx *c, const char *value, const char *base)
{
	_cleanup_free_ char *joined = NULL;
	char *norm = NULL, *real;

	if (!*value)
		return NULL;
	if (value[0] == '~' && value[1] == '/') {
		if (!c->home || asprintf(&joined, "%s/%s", c->home, value + 2) < 0)
			return NULL;
	} else if (value[0] == '/')
		joined = strdup(value);
	else if (!base || asprintf(&joined, "%s/%s", base, value) < 0)
		return NULL;
	if (!joined)
		return NULL;
	real = realpath(joined, NULL);
	if (real)
		return real;
	if (path_normalize(joined, &norm) < 0)
		return NULL;
	return norm;
}

static bool covered(const WorkspaceScan *s, const char *rel)
{
	size_t n = strlen(rel);

	for (size_t i = 0; i < s->n; i++) {
		size_t m = strlen(s->items[i].rel);
		if (m <= n && strncmp(rel, s->items[i].rel, m) == 0 && (rel[m] == '\0' || rel[m] == '/'))
			return true;
	}
	return false;
}

static int push(WorkspaceScan *s, const char *rel, const struct stat *st)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		ScanItem *v = realloc(s->items, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->items = v;
		s->cap = cap;
	}
	s->items[s->n] = (ScanItem){ .rel = strdup(rel), .dev = st->st_dev, .ino = st->st_ino,
				     .mode = st->st_mode, .kind = SCAN_PROTECTED };
	if (!s->items[s->n].rel)
		return -ENOMEM;
	s->n++;
	return 0;
}

/* A path git reads code or configuration from: protected if in the workspace. */
static int add(Ctx *c, const char *abs)
{
	const char *rel;
	struct stat st;
	int r;

	if (!abs || strncmp(abs, c->ws, c->wl) != 0 || abs[c->wl] != '/' || !abs[c->wl + 1])
		return 0;
	rel = abs + c->wl + 1;
	/* Anchored (protected.h): at the root, "name/" and not the name at
	 * any depth. */
	if (!strchr(rel, '/')) {
		_cleanup_free_ char *a = NULL;
		if (asprintf(&a, "%s/", rel) < 0)
			return -ENOMEM;
		r = strv_extend_unique(c->extra, a);
	} else
		r = strv_extend_unique(c->extra, rel);
	if (r < 0)
		return r;
	if (lstat(abs, &st) < 0 || covered(c->scan, rel))
		return 0;
	return push(c->scan, rel, &st);
}

/* Read @path; hooksPath relative to @hooks_base, includes relative to the
 * file's directory. With @global, a relative core.hooksPath is collected
 * raw instead (it is relative to each repository). */
static int read_config(Ctx *c, const char *path, const char *hooks_base, bool global, int depth)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL, *dir = NULL;
	char section[32] = "";
	size_t cap = 0;
	int r;

	if (depth > INCLUDE_MAX_DEPTH || !(f = fopen(path, "re")))
		return 0;
	dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	*strrchr(dir, '/') = '\0';
	while (getline(&line, &cap, f) > 0) {
		char *p = line, *key, *eq, *value;
		rtrim(p);
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '[') {
			size_t n = 0;
			for (p++; *p && *p != ']' && *p != '"' && !isspace((unsigned char)*p) &&
				  n + 1 < sizeof(section);
			     p++)
				section[n++] = (char)tolower((unsigned char)*p);
			section[n] = '\0';
			/* [includeIf "gitdir:..."]: any condition may hold. */
			continue;
		}
		if (!*p || *p == '#' || *p == ';' || !(eq = strchr(p, '=')))
			continue;
		key = p;
		*eq = '\0';
		rtrim(key);
		value = eq + 1;
		unquote(value);
		rtrim(value);
		for (char *k = key; *k; k++)
			*k = (char)tolower((unsigned char)*k);
		if (strcmp(section, "core") == 0 && strcmp(key, "hookspath") == 0) {
			if (global && value[0] != '/' && value[0] != '~') {
				if ((r = strv_extend_unique(&c->global_hooks, value)) < 0)
					return r;
				continue;
			}
			_cleanup_free_ char *h = resolve(c, value, hooks_base);
			if ((r = add(c, h)) < 0)
				return r;
		} else if ((strcmp(section, "include") == 0 || strcmp(section, "includeif") == 0) &&
			   strcmp(key, "path") == 0) {
			_cleanup_free_ char *inc = resolve(c, value, dir);
			if ((r = add(c, inc)) < 0)
				return r;
			if (inc && (r = read_config(c, inc, hooks_base, global, depth + 1)) < 0)
				return r;
		}
	}
	return 0;
}

/* The git dir a .git entry stands for ("gitdir: X" in a gitfile). */
static char *gitdir_of(const Ctx *c, const char *dotgit, const char *worktree)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	struct stat st;

	if (lstat(dotgit, &st) < 0)
		return NULL;
	if (S_ISDIR(st.st_mode))
		return strdup(dotgit);
	if (!S_ISREG(st.st_mode) || !(f = fopen(dotgit, "re")) || getline(&line, &cap, f) <= 0 ||
	    strncmp(line, "gitdir:", 7) != 0)
		return NULL;
	rtrim(line);
	char *v = line + 7;
	while (isspace((unsigned char)*v))
		v++;
	return resolve(c, v, worktree);
}

static int read_repository(Ctx *c, const char *gitdir, const char *worktree)
{
	_cleanup_free_ char *cfg = NULL, *wcfg = NULL, *cdfile = NULL, *common = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	const char *hooks_base = worktree ? worktree : gitdir;
	int r;

	/* A linked worktree's config is its main repository's (commondir). */
	if (asprintf(&cdfile, "%s/commondir", gitdir) < 0)
		return -ENOMEM;
	if ((f = fopen(cdfile, "re"))) {
		_cleanup_free_ char *line = NULL;
		size_t cap = 0;
		if (getline(&line, &cap, f) > 0) {
			rtrim(line);
			common = resolve(c, line, gitdir);
		}
	}
	if (asprintf(&cfg, "%s/config", common ? common : gitdir) < 0 ||
	    asprintf(&wcfg, "%s/config.worktree", gitdir) < 0)
		return -ENOMEM;
	if ((r = read_config(c, cfg, hooks_base, false, 0)) < 0 ||
	    (r = read_config(c, wcfg, hooks_base, false, 0)) < 0)
		return r;
	STRV_FOREACH(h, c->global_hooks)
	{
		_cleanup_free_ char *p = resolve(c, *h, hooks_base);
		if ((r = add(c, p)) < 0)
			return r;
	}
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp(((const ScanItem *)a)->rel, ((const ScanItem *)b)->rel);
}

int git_exec_paths(const char *workspace, const char *home, WorkspaceScan *scan, char ***ret_extra)
{
	Ctx c = { .ws = workspace, .wl = strlen(workspace), .home = home, .scan = scan,
		  .extra = ret_extra };
	_cleanup_free_ char *xdg = NULL, *dot = NULL;
	const char *x = getenv("XDG_CONFIG_HOME");
	size_t n = scan->n;
	int r = 0;

	/* The global and system configs: outside the workspace, but their
	 * relative core.hooksPath applies to every repository in it. */
	if (x && x[0] == '/')
		r = asprintf(&xdg, "%s/git/config", x);
	else if (home)
		r = asprintf(&xdg, "%s/.config/git/config", home);
	if (r < 0 || (home && asprintf(&dot, "%s/.gitconfig", home) < 0))
		return -ENOMEM;
	if ((r = read_config(&c, "/etc/gitconfig", NULL, true, 0)) < 0 ||
	    (xdg && (r = read_config(&c, xdg, NULL, true, 0)) < 0) ||
	    (dot && (r = read_config(&c, dot, NULL, true, 0)) < 0))
		goto out;

	for (size_t i = 0; i < n; i++) {
		const ScanItem *it = &scan->items[i];
		_cleanup_free_ char *abs = NULL, *wt = NULL, *gd = NULL;
		const char *base = strrchr(it->rel, '/');

		base = base ? base + 1 : it->rel;
		if (asprintf(&abs, "%s/%s", workspace, it->rel) < 0) {
			r = -ENOMEM;
			goto out;
		}
		if (it->kind == SCAN_GITDIR)
			r = read_repository(&c, abs, NULL);
		else if (it->kind == SCAN_PROTECTED && strcmp(base, ".git") == 0) {
			wt = strndup(abs, strlen(abs) - 5);
			gd = wt ? gitdir_of(&c, abs, wt) : NULL;
			r = gd ? read_repository(&c, gd, wt) : wt ? 0 : -ENOMEM;
		} else if (it->kind == SCAN_GITDIR_PART && strcmp(it->rel, "HEAD") == 0)
			r = read_repository(&c, workspace, NULL);
		if (r < 0)
			goto out;
	}
	if (scan->n > n)
		qsort(scan->items, scan->n, sizeof(ScanItem), cmp_item);
out:
	strv_free(c.global_hooks);
	return r;
}
