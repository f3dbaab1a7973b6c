/* Tier 1's Landlock rules from the policy, on host paths. See tier1-rules.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/path-real.h"
#include "common/macro.h"
#include "common/strv.h"
#include "linux/deny-split.h"
#include "linux/tier1-rules.h"

static bool at_or_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool in_list(const char *path, char *const *list)
{
	STRV_FOREACH(d, list)
	if (at_or_below(path, *d))
		return true;
	return false;
}

/* Is a path of @list strictly beneath @dir? */
static bool list_below(char *const *list, const char *dir)
{
	STRV_FOREACH(d, list)
	if (strcmp(*d, dir) != 0 && at_or_below(*d, dir))
		return true;
	return false;
}

static int add_typed_rule(void *userdata, const char *path, LandlockClass cls,
			  LandlockPathType type)
{
	Tier1Rules *r = userdata;

	if (r->n == r->cap) {
		size_t nc = r->cap ? r->cap * 2 : 64;
		LandlockPathRule *n = realloc(r->rules, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->rules = n;
		r->cap = nc;
	}
	r->rules[r->n].path = strdup(path);
	if (!r->rules[r->n].path)
		return -ENOMEM;
	r->rules[r->n].cls = cls;
	r->rules[r->n].type = type;
	r->n++;
	return 0;
}

static int add_rule(void *userdata, const char *path, LandlockClass cls)
{
	return add_typed_rule(userdata, path, cls, LANDLOCK_PATH_UNKNOWN);
}

/* A policy path: canonical, then granted minus what is hidden beneath.
 * A writable grant with a hidden path beneath cannot be split: refused. */
static int add_policy_path(Tier1Rules *ret, const char *path, LandlockClass cls,
			   char *const *hidden, char **reterr_path)
{
	_cleanup_free_ char *real = NULL;
	bool unsplit = false;
	int r;

	if (in_list(path, hidden))
		return 0; /* deny wins */
	real = path_real(path);
	if (!real)
		return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -errno;
	if (in_list(real, hidden))
		return 0;
	r = deny_split(real, real, cls, hidden, add_typed_rule, ret, &unsplit);
	if (r >= 0 && unsplit) {
		const char *denied = "?";
		STRV_FOREACH(h, hidden)
		if (strcmp(*h, real) != 0 && at_or_below(*h, real)) {
			denied = *h;
			break;
		}
		if (asprintf(reterr_path, "'%s' lies beneath the writable '%s'", denied, path) < 0)
			*reterr_path = NULL;
		return -EPERM;
	}
	return r;
}

/* The protected entries of the scan, as absolute paths. */
static int protected_paths(const Tier1RulesInput *in, char ***ret)
{
	const WorkspaceScan *s = in->protected_scan;

	for (size_t i = 0; s && i < s->n; i++) {
		const ScanItem *it = &s->items[i];
		char *p;

		if (it->kind != SCAN_PROTECTED && it->kind != SCAN_GITDIR && it->kind != SCAN_TOO_DEEP)
			continue;
		if (asprintf(&p, "%s/%s", in->workspace, it->rel) < 0)
			return -ENOMEM;
		if (strv_consume(ret, p) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Grant @dir read-write except the protected paths beneath it: they are
 * read-only, and every directory on the way to one is readable only, its
 * other entries read-write (see tier1-rules.h for why). */
static int add_workspace(Tier1Rules *ret, const char *dir, char *const *prot, int depth)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int r;

	if (in_list(dir, prot))
		return add_rule(ret, dir, LANDLOCK_CLASS_READ);
	if (!list_below(prot, dir))
		return add_rule(ret, dir, LANDLOCK_CLASS_READ_WRITE);
	if (depth > WORKSPACE_SCAN_MAX_DEPTH)
		return -EMLINK;
	r = add_rule(ret, dir, LANDLOCK_CLASS_READ_EXEC);
	if (r < 0)
		return r;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		_cleanup_free_ char *p = NULL;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* A symlink gets no rule: what it points to has its own. */
		if (de->d_type == DT_LNK)
			continue;
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0)
			return -ENOMEM;
		if (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN)
			r = add_workspace(ret, p, prot, depth + 1);
		else if (in_list(p, prot))
			r = add_rule(ret, p, LANDLOCK_CLASS_READ);
		else
			r = add_rule(ret, p, LANDLOCK_CLASS_READ_WRITE);
		if (r < 0)
			return r;
	}
	return 0;
}

/* What must stay out of reach: denied paths and ward's own, by the path
 * given and the real one, those that exist (a rule only ever grants). */
static int hidden_paths(const Tier1RulesInput *in, char ***ret)
{
	_cleanup_strv_ char **all = NULL;
	int r;

	if ((r = strv_extend_strv(&all, in->policy->fs_deny)) < 0 ||
	    (in->state_dir && (r = strv_extend(&all, in->state_dir)) < 0) ||
	    (in->config_dir && (r = strv_extend(&all, in->config_dir)) < 0) ||
	    (r = strv_extend_strv(&all, in->policy_files)) < 0)
		return r;
	STRV_FOREACH(p, all)
	{
		_cleanup_free_ char *real = path_real(*p);

		struct stat st;

		if (!real || stat(real, &st) < 0)
			continue;
		/* Someone else's file that the caller can neither read nor
		 * write (nor enter) stays out of reach without a cut: same
		 * choice as the T2 masks (mount-plan.c), a rule per sibling
		 * saved. Root owns everything: every denied path is cut. */
		if (st.st_uid != getuid() && access(real, R_OK) != 0 && access(real, W_OK) != 0 &&
		    !(S_ISDIR(st.st_mode) && access(real, X_OK) == 0))
			continue;
		if ((r = strv_extend(ret, *p)) < 0 ||
		    (strcmp(real, *p) != 0 && (r = strv_extend(ret, real)) < 0))
			return r;
	}
	return 0;
}

int tier1_rules_build(const Tier1RulesInput *in, Tier1Rules *ret, char **reterr_path)
{
	static const char *const devs[] = { "/dev/null",   "/dev/zero", "/dev/full",
					    "/dev/random", "/dev/urandom", "/dev/tty" };
	const WardPolicy *pol = in->policy;
	_cleanup_strv_ char **hidden = NULL, **prot = NULL;
	int r;

	*ret = (Tier1Rules){};
	if ((r = hidden_paths(in, &hidden)) < 0)
		goto fail;
	/* A denied path inside the workspace: nothing can cut it out of the
	 * workspace's grant (it is writable). */
	STRV_FOREACH(h, hidden)
	if (at_or_below(*h, in->workspace) || at_or_below(in->workspace, *h)) {
		if (asprintf(reterr_path, "'%s' lies %s the workspace '%s'", *h,
			     at_or_below(*h, in->workspace) ? "beneath" : "above", in->workspace) < 0)
			*reterr_path = NULL;
		r = -EPERM;
		goto fail;
	}

	STRV_FOREACH(p, pol->fs_read_write)
	if ((r = add_policy_path(ret, *p, LANDLOCK_CLASS_READ_WRITE, hidden, reterr_path)) < 0)
		goto fail;
	/* fs.cache is copy-on-write at T2; here nothing can hold a private
	 * copy, so the cache is read-only (docs/tiers.md). */
	STRV_FOREACH(p, pol->fs_cache)
	if ((r = add_policy_path(ret, *p, LANDLOCK_CLASS_READ, hidden, reterr_path)) < 0)
		goto fail;
	STRV_FOREACH(p, pol->fs_read_exec)
	if ((r = add_policy_path(ret, *p, LANDLOCK_CLASS_READ_EXEC, hidden, reterr_path)) < 0)
		goto fail;
	STRV_FOREACH(p, pol->fs_read)
	if ((r = add_policy_path(ret, *p, LANDLOCK_CLASS_READ, hidden, reterr_path)) < 0)
		goto fail;

	if ((r = protected_paths(in, &prot)) < 0 ||
	    (r = add_workspace(ret, in->workspace, prot, 0)) < 0) {
		if (r != -ENOMEM && !*reterr_path)
			*reterr_path = strdup(in->workspace);
		goto fail;
	}
	if (in->tmpdir && (r = add_rule(ret, in->tmpdir, LANDLOCK_CLASS_PRIVATE)) < 0)
		goto fail;
	for (size_t i = 0; i < ELEMENTSOF(devs); i++)
		if ((r = add_rule(ret, devs[i], LANDLOCK_CLASS_DEVICE)) < 0)
			goto fail;
	/* /proc read-only: Landlock cannot tell /proc/self from /proc/sys,
	 * and without a mount namespace nothing else makes /proc/sys
	 * read-only. Another process's environ, mem and fds are kept out by
	 * Landlock's ptrace check (a domain cannot trace outside itself). */
	if ((r = add_rule(ret, "/proc", LANDLOCK_CLASS_READ)) < 0 ||
	    (r = add_rule(ret, "/sys", LANDLOCK_CLASS_READ)) < 0)
		goto fail;
	if (in->test_break && in->state_dir &&
	    (r = add_rule(ret, in->state_dir,
			  strcmp(in->test_break, "write") == 0 ? LANDLOCK_CLASS_READ_WRITE
							       : LANDLOCK_CLASS_READ)) < 0)
		goto fail;
	return 0;
fail:
	tier1_rules_done(ret);
	return r;
}

int tier1_rules_add(Tier1Rules *r, const char *path, LandlockClass cls)
{
	return add_rule(r, path, cls);
}

void tier1_rules_done(Tier1Rules *r)
{
	for (size_t i = 0; i < r->n; i++)
		free((char *)r->rules[i].path);
	free(r->rules);
	*r = (Tier1Rules){};
}
