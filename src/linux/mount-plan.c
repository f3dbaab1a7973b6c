/* Compute the sandbox's root view from the policy (supervisor side).
 *
 * Every path is resolved here, on the host, before clone: the child only
 * executes the list. Rules, in the order they are applied:
 *   - deny wins: an allowed path at or beneath a denied one is dropped, and a
 *     denied path that would be visible through an allowed one is masked;
 *   - symlinks named by the policy are recreated as symlinks (their targets
 *     must be allowed on their own), other paths are bound from their real
 *     location;
 *   - $HOME is an empty tmpfs unless the policy binds it or an ancestor;
 *   - ward's state and config dirs and the policy file are masked whenever
 *     something would make them visible;
 *   - protected paths are read-only binds on top of the writable workspace. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/path-real.h"
#include "common/dirs.h"
#include "common/macro.h"
#include "common/strv.h"
#include "policy/sanitize.h"
#include "net/net-rules.h"
#include "linux/deny-split.h"
#include "linux/limits.h"
#include "linux/mount-plan.h"
#include "linux/netns.h"
#include "linux/root-view.h"
#include "linux/workspace-scan.h"

static const char *const mount_kind_table[_MOUNT_KIND_MAX] = {
	[MOUNT_BIND_RO] = "bind-ro",     [MOUNT_BIND_RO_EXEC] = "bind-ro-exec",
	[MOUNT_BIND_RW] = "bind-rw",     [MOUNT_BIND_DEV] = "bind-dev",
	[MOUNT_TMPFS] = "tmpfs",         [MOUNT_MASK_DIR] = "mask-dir",
	[MOUNT_MASK_FILE] = "mask-file", [MOUNT_PROTECT] = "protect",
	[MOUNT_SYMLINK] = "symlink",     [MOUNT_OVERLAY] = "overlay",
	[MOUNT_PROC] = "proc",           [MOUNT_PROC_RO] = "proc-ro",
	[MOUNT_SYSFS] = "sysfs",         [MOUNT_DEVPTS] = "devpts",
	[MOUNT_DIR] = "dir",             [MOUNT_LEAK] = "leak",
	[MOUNT_PIN] = "pin",             [MOUNT_CACHE] = "cache",
	[MOUNT_FILE_DATA] = "file-data",
};

const char *mount_kind_to_string(MountKind k)
{
	if (k < 0 || k >= _MOUNT_KIND_MAX)
		return NULL;
	return mount_kind_table[k];
}

/* Is @path equal to @dir or beneath it? Both normalized and absolute. */
static bool path_at_or_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool path_in_list(const char *path, char *const *list)
{
	STRV_FOREACH(d, list)
	if (path_at_or_below(path, *d))
		return true;
	return false;
}

typedef struct Builder {
	MountPlan *plan;
	size_t cap, ll_cap;
	char **hidden; /* deny + ward's own dirs and files, real paths */
	char **masked; /* what is already masked */
	char **ll_hidden; /* hidden paths Landlock must cut out (deny_split) */
} Builder;

static int add_spec(Builder *b, MountKind kind, const char *src, const char *view, const char *data,
		    bool is_file)
{
	MountPlan *p = b->plan;
	MountSpec *s;

	/* One mount per view path: the first (strongest, see plan order) wins. */
	for (size_t i = 0; i < p->n_specs; i++)
		if (strcmp(p->specs[i].view, view) == 0)
			return 0;
	if (p->n_specs == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 32;
		MountSpec *n = realloc(p->specs, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->specs = n;
		b->cap = nc;
	}
	s = &p->specs[p->n_specs];
	*s = (MountSpec){ .kind = kind, .is_file = is_file };
	s->view = strdup(view);
	if (asprintf(&s->dst, MP_NEWROOT "%s", strcmp(view, "/") == 0 ? "" : view) < 0)
		s->dst = NULL;
	s->src = src ? strdup(src) : NULL;
	s->data = data ? strdup(data) : NULL;
	p->n_specs++;
	if (!s->view || !s->dst || (src && !s->src) || (data && !s->data))
		return -ENOMEM;
	return 0;
}

static int add_typed_rule(Builder *b, const char *view, LandlockClass cls, LandlockPathType type)
{
	MountPlan *p = b->plan;

	if (p->n_ll_rules == b->ll_cap) {
		size_t nc = b->ll_cap ? b->ll_cap * 2 : 32;
		LandlockPathRule *n = realloc(p->ll_rules, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->ll_rules = n;
		b->ll_cap = nc;
	}
	p->ll_rules[p->n_ll_rules].path = strdup(view);
	p->ll_rules[p->n_ll_rules].cls = cls;
	p->ll_rules[p->n_ll_rules].type = type;
	if (!p->ll_rules[p->n_ll_rules].path)
		return -ENOMEM;
	p->n_ll_rules++;
	return 0;
}

static int add_rule(Builder *b, const char *view, LandlockClass cls)
{
	return add_typed_rule(b, view, cls, LANDLOCK_PATH_UNKNOWN);
}

static int emit_rule(void *userdata, const char *view, LandlockClass cls, LandlockPathType type)
{
	/* The host's type, as the view shows it through the bind (a denied
	 * entry, which a mask may cover, gets no rule); apply looks again
	 * when the kernel refuses the rule. */
	return add_typed_rule(userdata, view, cls, type);
}

static int add_host_bind(Builder *b, MountKind kind, LandlockClass cls, const char *src_real,
			 const char *view, bool is_file)
{
	_cleanup_free_ char *src = NULL;
	bool unsplit = false;
	int r;

	if (asprintf(&src, MP_OLDROOT "%s", src_real) < 0)
		return -ENOMEM;
	r = add_spec(b, kind, src, view, NULL, is_file);
	if (r < 0)
		return r;
	/* Deny holds in Landlock too: the grant leaves out what is hidden
	 * beneath it (deny-split.h). */
	r = deny_split(view, src_real, cls, b->ll_hidden, emit_rule, b, &unsplit);
	if (r >= 0 && unsplit)
		r = strv_extend(&b->plan->ll_unsplit, view);
	return r;
}

/* Where mkdir -p @path would put it: the real path of its deepest existing
 * ancestor plus the missing components. NULL when that ancestor is not a
 * directory we may write to (mkdir would fail: nothing to plan). */
static char *planned_real_path(const char *path)
{
	_cleanup_free_ char *anc = strdup(path);
	char *sl;
	struct stat st;

	if (!anc)
		return NULL;
	while ((sl = strrchr(anc, '/')) && sl != anc) {
		*sl = '\0';
		if (lstat(anc, &st) == 0)
			break;
		if (errno != ENOENT)
			return NULL;
	}
	if (!sl)
		return NULL;
	if (sl == anc)
		anc[1] = '\0';
	if (stat(anc, &st) < 0 || !S_ISDIR(st.st_mode) || access(anc, W_OK | X_OK) < 0)
		return NULL;
	_cleanup_free_ char *real = path_real(anc);
	char *ret = NULL;
	if (!real || asprintf(&ret, "%s%s", strcmp(real, "/") == 0 ? "" : real,
			      path + strlen(strcmp(anc, "/") == 0 ? "" : anc)) < 0)
		return NULL;
	return ret;
}

/* A writable cache under $HOME that does not exist yet: bound writable,
 * made by mount_plan_acquire. */
static int add_missing_cache(Builder *b, const char *path)
{
	_cleanup_free_ char *real = planned_real_path(path);
	size_t n = b->plan->n_specs;
	int r;

	if (!real || path_in_list(real, b->hidden))
		return 0;
	r = add_host_bind(b, MOUNT_BIND_RW, LANDLOCK_CLASS_READ_WRITE, real, path, false);
	if (r >= 0 && b->plan->n_specs > n) /* else an earlier mount holds the view path */
		b->plan->specs[n].create = true;
	return r;
}

/* A path from fs.read / read_exec / read_write. */
static int add_policy_path(Builder *b, const char *path, MountKind kind, LandlockClass cls,
			   const char *home)
{
	_cleanup_free_ char *real = NULL;
	struct stat st;

	if (path_in_list(path, b->hidden))
		return 0; /* deny wins */
	if (lstat(path, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		/* A cache the policy makes writable is created on first use
		 * (only under $HOME, where it belongs to the user): by
		 * mount_plan_acquire, not here. */
		if (kind != MOUNT_BIND_RW || !path_at_or_below(path, home) || strcmp(path, home) == 0)
			return 0;
		return add_missing_cache(b, path);
	}
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		return add_spec(b, MOUNT_SYMLINK, target, path, NULL, false);
	}
	real = path_real(path);
	if (!real)
		return -errno;
	if (path_in_list(real, b->hidden))
		return 0;
	return add_host_bind(b, kind, cls, real, path, !S_ISDIR(st.st_mode));
}

static bool view_is_bound(const MountPlan *p, const char *path)
{
	for (size_t i = 0; i < p->n_specs; i++) {
		const MountSpec *s = &p->specs[i];
		switch (s->kind) {
		case MOUNT_BIND_RO:
		case MOUNT_BIND_RO_EXEC:
		case MOUNT_BIND_RW:
		case MOUNT_OVERLAY:
		case MOUNT_PROTECT:
		case MOUNT_LEAK:
		case MOUNT_CACHE:
		case MOUNT_FILE_DATA:
			if (path_at_or_below(path, s->view))
				return true;
			break;
		case MOUNT_BIND_DEV:
		case MOUNT_TMPFS:
		case MOUNT_MASK_DIR:
		case MOUNT_MASK_FILE:
		case MOUNT_SYMLINK:
		case MOUNT_PROC:
		case MOUNT_PROC_RO:
		case MOUNT_SYSFS:
		case MOUNT_DEVPTS:
		case MOUNT_DIR:
		case MOUNT_PIN:
		case _MOUNT_KIND_MAX:
		case _MOUNT_KIND_INVALID:
			break;
		}
	}
	return false;
}

/* Could the caller reach @st at @path by its file mode alone? Someone
 * else's file that we can neither read nor write (nor, for a directory,
 * enter) stays out of reach inside too: same uid, same groups, no
 * capabilities, and it cannot chmod what it does not own. */
static bool reachable_by_mode(const char *path, const struct stat *st)
{
	return st->st_uid == getuid() || access(path, R_OK) == 0 || access(path, W_OK) == 0 ||
	       (S_ISDIR(st->st_mode) && access(path, X_OK) == 0);
}

/* The hidden paths Landlock must cut out of the grants above them: those
 * that exist and that the caller's file modes do not keep out anyway
 * (/etc/shadow for a normal user). Each cut costs a rule per sibling on
 * the way (~3 us each when applied), so this is the same choice as for
 * the masks: a denied path that appears only during the run is neither
 * masked nor cut out (docs/hardening.md). */
static int plan_ll_hidden(Builder *b)
{
	STRV_FOREACH(h, b->hidden)
	{
		struct stat st;
		if (stat(*h, &st) < 0 || !reachable_by_mode(*h, &st))
			continue;
		if (strv_extend(&b->ll_hidden, *h) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Mask a hidden path wherever a bind would show it. */
static int add_mask(Builder *b, const char *path)
{
	_cleanup_free_ char *real = path_real(path);
	struct stat st;

	if (!real)
		return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -errno;
	/* Beneath a path masked already: gone from the view with it. */
	if (path_in_list(real, b->masked) || !view_is_bound(b->plan, real))
		return 0;
	if (stat(real, &st) < 0)
		return 0;
	/* Someone else's file that we can neither read nor write (nor, for a
	 * directory, enter) stays out of reach inside too: same uid, same
	 * groups, no capabilities, and it cannot chmod what it does not own.
	 * /etc/shadow for a normal user; root owns everything, so for root
	 * every hidden path is masked. Saves a mount per path per run. */
	if (!reachable_by_mode(real, &st))
		return 0;
	if (strv_extend(&b->masked, real) < 0)
		return -ENOMEM;
	if (S_ISDIR(st.st_mode))
		return add_spec(b, MOUNT_MASK_DIR, NULL, real, "mode=000,size=4k,nr_inodes=1", false);
	return add_spec(b, MOUNT_MASK_FILE, NULL, real, NULL, true);
}

static int cmp_str(const void *a, const void *b);

static int add_host_bind_protect(Builder *b, const char *view, bool is_file)
{
	_cleanup_free_ char *src = NULL;

	if (asprintf(&src, MP_OLDROOT "%s", view) < 0)
		return -ENOMEM;
	return add_spec(b, MOUNT_PROTECT, src, view, NULL, is_file);
}

/* Make ancestors of protected paths mount points (pins): renaming one would
 * carry the read-only mount away and let the command put its own tree in
 * its place. @rels are relative to the workspace; each ancestor is pinned
 * once. A pin never replaces a protected mount of the same path (added
 * before the pins: add_spec keeps the first). */
static int add_pins(Builder *b, const char *ws, char **rels)
{
	_cleanup_strv_ char **anc = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	STRV_FOREACH(rel, rels)
	for (const char *sl = strchr(*rel, '/'); sl; sl = strchr(sl + 1, '/')) {
		if (n + 1 >= cap) {
			size_t c = cap ? cap * 2 : 32;
			char **v = realloc(anc, c * sizeof(char *));
			if (!v)
				return -ENOMEM;
			anc = v;
			cap = c;
		}
		if (asprintf(&anc[n], "%s/%.*s", ws, (int)(sl - *rel), *rel) < 0)
			return -ENOMEM;
		anc[++n] = NULL;
	}
	if (n > 1)
		qsort(anc, n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < n && r >= 0; i++)
		if (i == 0 || strcmp(anc[i], anc[i - 1]) != 0)
			r = add_spec(b, MOUNT_PIN, NULL, anc[i], NULL, false);
	return r;
}

/* Protected paths that exist (workspace-scan.c found them): read-only binds
 * of the real workspace's entries, in copy-on-write runs too (the command
 * sees the host's, not a copy it could have changed). Nothing is created
 * for a protected path that does not exist: the quarantine deals with what
 * the command makes there (quarantine.c, docs/sandbox.md). */
static int add_protected(Builder *b, const MountPlanInput *in, char **reterr_path)
{
	_cleanup_strv_ char **rels = NULL;
	const char *ws = in->workspace;
	size_t wl = strlen(ws);
	int r;

	for (size_t i = 0; in->protected_scan && i < in->protected_scan->n; i++) {
		const ScanItem *it = &in->protected_scan->items[i];
		_cleanup_free_ char *view = NULL, *real = NULL;
		const char *rel = it->rel;

		if (asprintf(&view, "%s/%s", ws, rel) < 0)
			return -ENOMEM;
		if (it->kind == SCAN_TOO_DEEP) {
			/* Ward could not see what is down there. */
			*reterr_path = TAKE_PTR(view);
			return -EMLINK;
		}
		if (it->kind == SCAN_LINKED_PARENT) {
			/* A repository can ship the parent of an anchored entry
			 * as a symlink to anywhere: refuse rather than guess. */
			*reterr_path = TAKE_PTR(view);
			return -ELOOP;
		}
		if (S_ISLNK(it->mode)) {
			/* Host tools follow it: protect what it points to when
			 * that is in the workspace (outside, the policy decides
			 * what is writable). A dangling one could be made to
			 * point at anything the command creates: refuse. */
			real = path_real(view);
			if (!real) {
				*reterr_path = TAKE_PTR(view);
				return -ELOOP;
			}
			if (strncmp(real, ws, wl) != 0 || real[wl] != '/')
				continue;
			free(view);
			view = TAKE_PTR(real);
			rel = view + wl + 1;
			struct stat st;
			if (lstat(view, &st) < 0)
				return -errno;
			if ((r = add_host_bind_protect(b, view, !S_ISDIR(st.st_mode))) < 0)
				return r;
		} else if ((r = add_host_bind_protect(b, view, !S_ISDIR(it->mode))) < 0)
			return r;
		if ((r = strv_extend(&rels, rel)) < 0)
			return r;
	}
	return add_pins(b, ws, rels);
}

static bool overlay_safe(const char *p)
{
	return !strpbrk(p, ",:\\\n");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is @path shown by one of the policy's visible lists? */
static bool shown_by_policy(const WardPolicy *pol, const char *path)
{
	return path_in_list(path, pol->fs_read) || path_in_list(path, pol->fs_read_exec) ||
	       path_in_list(path, pol->fs_read_write) || path_in_list(path, pol->fs_cache);
}

/* fs.sanitize: a file the view shows is replaced by a copy without its
 * credential lines (sanitize.c), which init writes into its scratch root
 * and binds read-only over the path. Added before the binds, so it wins
 * over the file's own (add_spec keeps the first). A file that cannot be
 * sanitized (binary, too large) is left out: hidden, so masked. */
static int add_sanitized(Builder *b, const WardPolicy *pol)
{
	STRV_FOREACH(p, pol->fs_sanitize)
	{
		_cleanup_free_ char *real = NULL, *text = NULL, *clean = NULL;
		_cleanup_close_ int fd = -EBADF;
		struct stat st;
		ssize_t n;
		int r;

		if (path_in_list(*p, b->hidden) || !shown_by_policy(pol, *p))
			continue;
		real = path_real(*p);
		fd = real ? open(real, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) : -EBADF;
		if (fd < 0 || path_in_list(real, b->hidden) || fstat(fd, &st) < 0 ||
		    !S_ISREG(st.st_mode))
			continue; /* absent, unreadable or not a file: nothing shown */
		text = st.st_size <= SANITIZE_MAX ? malloc((size_t)st.st_size + 1) : NULL;
		n = text ? read(fd, text, (size_t)st.st_size + 1) : -1;
		r = n >= 0 && n <= SANITIZE_MAX ? sanitize_config(text, (size_t)n, &clean, NULL) :
						  -EINVAL;
		if (r == -EINVAL) {
			if ((r = strv_extend(&b->hidden, *p)) < 0)
				return r;
			continue;
		}
		if (r < 0 || (r = add_spec(b, MOUNT_FILE_DATA, NULL, *p, clean, true)) < 0)
			return r;
	}
	return 0;
}

/* Transparent capture (mode proxy, network.capture): names resolve through
 * the DNS stub (netns.h), so /etc/resolv.conf points at it, and /etc/hosts
 * holds only the loopback names: a name the host's /etc/hosts maps goes
 * through the stub and the policy too (the proxy resolves it on the host,
 * with the host's /etc/hosts). Where /etc/resolv.conf is a symlink (to
 * systemd-resolved's file), the file it points at is replaced. */
static int add_capture_files(Builder *b, const WardPolicy *pol)
{
	static const char resolv[] = "# ward: the sandbox's DNS stub (docs/network.md)\n"
				     "nameserver " NETNS_DNS_STUB_ADDR "\n";
	static const char hosts[] = "127.0.0.1\tlocalhost ward\n"
				    "::1\tlocalhost ip6-localhost ip6-loopback\n";
	_cleanup_free_ char *real = NULL;
	int r;

	if (pol->net_mode != NET_MODE_PROXY || pol->net_no_capture)
		return 0;
	real = path_real("/etc/resolv.conf");
	r = add_spec(b, MOUNT_FILE_DATA, NULL, real ? real : "/etc/resolv.conf", resolv, true);
	/* Readable wherever the link led (/run/systemd/resolve/...), not
	 * only under an /etc the policy shows. */
	if (r >= 0)
		r = add_rule(b, real ? real : "/etc/resolv.conf", LANDLOCK_CLASS_READ);
	if (r >= 0)
		r = add_spec(b, MOUNT_FILE_DATA, NULL, "/etc/hosts", hosts, true);
	if (r >= 0)
		r = add_rule(b, "/etc/hosts", LANDLOCK_CLASS_READ);
	return r;
}

/* TLS inspection (network.inspect): the view's system CA bundle is the
 * host's plus the run's CA (net-rules.h), and the certificate variables
 * name it; its private key is nowhere in the view. */
static int add_ca_bundle(Builder *b)
{
	const NetRules *nr = net_rules_current();
	_cleanup_free_ char *real = NULL;

	if (!nr || !nr->bundle)
		return 0;
	real = path_real(NET_CA_BUNDLE_PATH);
	return add_spec(b, MOUNT_FILE_DATA, NULL, real ? real : NET_CA_BUNDLE_PATH, nr->bundle, true);
}

/* fs.cache: an overlay whose lower layer is the host's cache and whose
 * upper layer is in a tmpfs of the sandbox's own (mount-setup.c): the
 * command reads the cache and writes a private copy that ends with the run,
 * with nothing to create, sync or remove on the host. A cache that does
 * not exist is not created on the host (the tool makes it inside, in
 * $HOME's tmpfs); nor is one whose path overlay options cannot carry. */
static int add_caches(Builder *b, const MountPlanInput *in)
{
	char data[64];

	snprintf(data, sizeof(data), "mode=0700,size=%llum",
		 (unsigned long long)limits_tmpfs_mb(in->policy, false));
	STRV_FOREACH(p, in->policy->fs_cache)
	{
		_cleanup_free_ char *real = NULL, *src = NULL;
		struct stat st;
		int r;

		if (path_in_list(*p, b->hidden) || lstat(*p, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		real = path_real(*p);
		if (!real || path_in_list(real, b->hidden) || strpbrk(real, ",:\\"))
			continue;
		if (asprintf(&src, MP_OLDROOT "%s", real) < 0)
			return -ENOMEM;
		if ((r = add_spec(b, MOUNT_CACHE, src, *p, data, false)) < 0 ||
		    (r = add_rule(b, *p, LANDLOCK_CLASS_READ_WRITE)) < 0)
			return r;
	}
	return 0;
}

static int cmp_spec(const void *a, const void *b)
{
	const MountSpec *x = a, *y = b;
	int c = strcmp(x->view, y->view);
	/* A parent sorts before its children; ties cannot happen (add_spec). */
	return c;
}

/* "git": read-only: the git dirs outside the workspace, and the enclosing
 * repository's working tree of a subdirectory workspace, read-only (so
 * that git status there sees the same tree as on the host, not every other
 * file deleted). "git": "commit": each git dir an overlay over a staging
 * layer (git-stage.h) with objects/, refs/ and logs/ writable on top.
 * Called before the protected paths are added: for the workspace's own
 * .git, commit mode's mount replaces the read-only one (add_spec keeps the
 * first mount of a view path). */
static int add_git(Builder *b, const MountPlanInput *in)
{
	const WardPolicy *pol = in->policy;
	MountPlan *p = b->plan;
	GitLayoutInput gi = { .workspace = in->workspace, .home = in->home, .hidden = b->hidden };
	int r;

	if (pol->git_mode == GIT_MODE_OFF)
		return 0;
	if ((r = git_layout_discover(&gi, &p->git)) < 0)
		return r;
	if (p->git.worktree &&
	    (r = add_host_bind(b, MOUNT_BIND_RO, LANDLOCK_CLASS_READ, p->git.worktree,
			       p->git.worktree, false)) < 0)
		return r;
	STRV_FOREACH(g, p->git.gitdirs)
	{
		bool visible = path_at_or_below(*g, in->workspace) ||
			       (p->git.worktree && path_at_or_below(*g, p->git.worktree));
		if (pol->git_mode != GIT_MODE_COMMIT) {
			if (!visible && (r = add_host_bind(b, MOUNT_BIND_RO, LANDLOCK_CLASS_READ, *g,
							   *g, false)) < 0)
				return r;
			continue;
		}
		GitStage *n = realloc(p->git_stages, (p->n_git_stages + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->git_stages = n;
		GitStage *st = &p->git_stages[p->n_git_stages];
		if ((r = git_stage_plan(in->state_dir, *g, st)) < 0)
			return r;
		p->n_git_stages++;
		/* The overlay's options name the staging layer, which
		 * mount_plan_acquire makes (<state>/git-stage/<pid>-XXXXXX:
		 * letters and digits below the state dir). */
		if (!overlay_safe(*g) || !overlay_safe(st->base))
			return -EINVAL;
		if ((r = add_spec(b, MOUNT_OVERLAY, NULL, *g, NULL, false)) < 0 ||
		    (r = add_rule(b, *g, LANDLOCK_CLASS_READ_WRITE)) < 0)
			return r;
		static const char *const writable[] = { "objects", "refs", "logs" };
		for (size_t i = 0; i < ELEMENTSOF(writable); i++) {
			_cleanup_free_ char *sub = NULL;
			struct stat sst;
			if (asprintf(&sub, "%s/%s", *g, writable[i]) < 0)
				return -ENOMEM;
			/* logs/ is made by git_stage_acquire when missing. */
			if (lstat(sub, &sst) < 0 ? errno != ENOENT || i != 2 : !S_ISDIR(sst.st_mode))
				continue;
			if ((r = add_host_bind(b, MOUNT_BIND_RW, LANDLOCK_CLASS_READ_WRITE, sub, sub,
					       false)) < 0)
				return r;
		}
	}
	return 0;
}

int mount_plan_build(const MountPlanInput *in, MountPlan *ret, char **reterr_path)
{
	const WardPolicy *pol = in->policy;
	const char *ws = in->workspace;
	Builder b = { .plan = ret };
	_cleanup_strv_ char **own = NULL;
	char buf[256];
	int r;

	*ret = (MountPlan){};

	/* The workspace is writable: it must not expose the home directory,
	 * the whole file system, or ward's own state. */
	if (strcmp(ws, "/") == 0 || path_at_or_below(in->home, ws)) {
		*reterr_path = strdup(ws);
		return -EXDEV;
	}
	/* Inside ward's state or config directory, or containing it: the
	 * command would write next to (or be able to shadow) the audit log,
	 * the sessions and the policy. Refused both ways (docs/policy.md). */
	const char *const own_dirs[] = { in->state_dir, in->config_dir };
	for (size_t i = 0; i < ELEMENTSOF(own_dirs); i++)
		if (own_dirs[i] && (path_at_or_below(ws, own_dirs[i]) ||
				    path_at_or_below(own_dirs[i], ws))) {
			*reterr_path = strdup(own_dirs[i]);
			return -EPERM;
		}
	if (in->cow_upper && (!overlay_safe(ws) || !overlay_safe(in->cow_upper) ||
			      !overlay_safe(in->cow_work))) {
		*reterr_path = strdup(ws);
		return -EINVAL;
	}

	/* What must never be visible, by real path. */
	STRV_FOREACH(d, pol->fs_deny)
	{
		_cleanup_free_ char *real = path_real(*d);
		r = strv_extend(&b.hidden, *d);
		if (r >= 0 && real && strcmp(real, *d) != 0)
			r = strv_extend(&b.hidden, real);
		if (r < 0)
			goto fail;
	}
	if ((in->state_dir && strv_extend(&own, in->state_dir) < 0) ||
	    (in->config_dir && strv_extend(&own, in->config_dir) < 0) ||
	    strv_extend_strv(&own, in->policy_files) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	STRV_FOREACH(o, own)
	{
		_cleanup_free_ char *real = path_real(*o);
		if ((r = strv_extend(&b.hidden, *o)) < 0 ||
		    (real && (r = strv_extend(&b.hidden, real)) < 0))
			goto fail;
	}

	if ((r = plan_ll_hidden(&b)) < 0)
		goto fail;

	/* The root holds only mount points: listing it is allowed (Landlock
	 * grants per hierarchy, so this lists every directory, but reads no
	 * file: docs/hardening.md). */
	if ((r = add_rule(&b, "/", LANDLOCK_CLASS_LIST)) < 0)
		goto fail;

	/* Strongest first: add_spec keeps the first mount for a view path. */
	if (in->cow_upper) {
		_cleanup_free_ char *data = NULL;
		if (asprintf(&data,
			     "lowerdir=" MP_OLDROOT "%s,upperdir=" MP_OLDROOT "%s,workdir=" MP_OLDROOT
			     "%s,userxattr",
			     ws, in->cow_upper, in->cow_work) < 0) {
			r = -ENOMEM;
			goto fail;
		}
		r = add_spec(&b, MOUNT_OVERLAY, NULL, ws, data, false);
		if (r >= 0)
			r = add_rule(&b, ws, LANDLOCK_CLASS_READ_WRITE);
	} else
		r = add_host_bind(&b, MOUNT_BIND_RW, LANDLOCK_CLASS_READ_WRITE, ws, ws, false);
	if (r < 0)
		goto fail;

	if ((r = add_capture_files(&b, pol)) < 0 || (r = add_ca_bundle(&b)) < 0 ||
	    (r = add_sanitized(&b, pol)) < 0)
		goto fail;
	STRV_FOREACH(p, pol->fs_read_write)
	if ((r = add_policy_path(&b, *p, MOUNT_BIND_RW, LANDLOCK_CLASS_READ_WRITE, in->home)) < 0)
		goto fail_path;
	/* After read_write: a path the policy makes writable outright stays so. */
	if ((r = add_caches(&b, in)) < 0)
		goto fail;
	STRV_FOREACH(p, pol->fs_read_exec)
	if ((r = add_policy_path(&b, *p, MOUNT_BIND_RO_EXEC, LANDLOCK_CLASS_READ_EXEC, in->home)) <
	    0)
		goto fail_path;
	STRV_FOREACH(p, pol->fs_read)
	if ((r = add_policy_path(&b, *p, MOUNT_BIND_RO, LANDLOCK_CLASS_READ, in->home)) < 0)
		goto fail_path;

	if (in->test_leak_dir) {
		_cleanup_free_ char *real = path_real(in->test_leak_dir);
		_cleanup_free_ char *src = NULL;
		if (!real || asprintf(&src, MP_OLDROOT "%s", real) < 0) {
			r = -errno;
			goto fail;
		}
		if ((r = add_spec(&b, MOUNT_LEAK, src, real, NULL, false)) < 0)
			goto fail;
	}

	if ((r = add_git(&b, in)) < 0)
		goto fail;

	/* $HOME: empty unless bound (by the policy or as an ancestor). */
	if (!view_is_bound(ret, in->home)) {
		snprintf(buf, sizeof(buf), "mode=0700,size=%llum",
			 (unsigned long long)limits_tmpfs_mb(pol, false));
		if ((r = add_spec(&b, MOUNT_TMPFS, NULL, in->home, buf, false)) < 0 ||
		    (r = add_rule(&b, in->home, LANDLOCK_CLASS_READ_WRITE)) < 0)
			goto fail;
	}

	/* /tmp: private, size-limited (limits.tmp_mb). */
	snprintf(buf, sizeof(buf), "mode=1777,size=%llum",
		 (unsigned long long)limits_tmpfs_mb(pol, false));
	if ((r = add_spec(&b, MOUNT_TMPFS, NULL, "/tmp", buf, false)) < 0 ||
	    (r = add_rule(&b, "/tmp", LANDLOCK_CLASS_PRIVATE)) < 0)
		goto fail;

	/* /dev/shm: limits.shm_mb, within limits.memory_mb like /tmp. */
	char shm[64];
	snprintf(shm, sizeof(shm), "mode=1777,size=%llum", (unsigned long long)limits_tmpfs_mb(pol, true));

	/* A minimal /dev. */
	static const char *const devs[] = { "null", "zero", "full", "random", "urandom", "tty" };
	if ((r = add_spec(&b, MOUNT_TMPFS, NULL, "/dev", "mode=0755,size=64k,nr_inodes=64", false)) <
	    0)
		goto fail;
	for (size_t i = 0; i < ELEMENTSOF(devs); i++) {
		char src[64], view[64];
		snprintf(src, sizeof(src), MP_OLDROOT "/dev/%s", devs[i]);
		snprintf(view, sizeof(view), "/dev/%s", devs[i]);
		if ((r = add_spec(&b, MOUNT_BIND_DEV, src, view, NULL, true)) < 0)
			goto fail;
	}
	if (in->dev_kvm && (r = add_spec(&b, MOUNT_BIND_DEV, MP_OLDROOT "/dev/kvm", "/dev/kvm", NULL,
					 true)) < 0)
		goto fail;
	if ((r = add_spec(&b, MOUNT_DEVPTS, NULL, "/dev/pts", "newinstance,ptmxmode=0666,mode=620",
			  false)) < 0 ||
	    (r = add_spec(&b, MOUNT_SYMLINK, "pts/ptmx", "/dev/ptmx", NULL, false)) < 0 ||
	    (r = add_spec(&b, MOUNT_TMPFS, NULL, "/dev/shm", shm, false)) < 0 ||
	    (r = add_spec(&b, MOUNT_SYMLINK, "/proc/self/fd", "/dev/fd", NULL, false)) < 0 ||
	    (r = add_spec(&b, MOUNT_SYMLINK, "/proc/self/fd/0", "/dev/stdin", NULL, false)) < 0 ||
	    (r = add_spec(&b, MOUNT_SYMLINK, "/proc/self/fd/1", "/dev/stdout", NULL, false)) < 0 ||
	    (r = add_spec(&b, MOUNT_SYMLINK, "/proc/self/fd/2", "/dev/stderr", NULL, false)) < 0 ||
	    (r = add_rule(&b, "/dev", LANDLOCK_CLASS_DEVICE)) < 0 ||
	    (r = add_rule(&b, "/dev/shm", LANDLOCK_CLASS_PRIVATE)) < 0)
		goto fail;

	/* A fresh /proc for the new pid namespace, with the knobs that affect
	 * the whole machine read-only (as bubblewrap does); /sys read-only. */
	if ((r = add_spec(&b, MOUNT_PROC, NULL, "/proc", NULL, false)) < 0 ||
	    (r = add_rule(&b, "/proc", LANDLOCK_CLASS_PROC)) < 0)
		goto fail;
	static const char *const proc_ro[] = { "sys", "sysrq-trigger", "irq", "bus", "fs" };
	for (size_t i = 0; i < ELEMENTSOF(proc_ro); i++) {
		char view[64];
		snprintf(view, sizeof(view), "/proc/%s", proc_ro[i]);
		if ((r = add_spec(&b, MOUNT_PROC_RO, NULL, view, NULL, false)) < 0)
			goto fail;
	}
	if ((r = add_spec(&b, MOUNT_SYSFS, MP_OLDROOT "/sys", "/sys", NULL, false)) < 0 ||
	    (r = add_rule(&b, "/sys", LANDLOCK_CLASS_READ)) < 0)
		goto fail;

	if ((r = add_protected(&b, in, reterr_path)) < 0)
		goto fail;

	/* Masks last: they must see every bind above. Ancestors first, so a
	 * path beneath a masked directory is not masked again (its mount
	 * point would no longer exist). */
	qsort(b.hidden, strv_length(b.hidden), sizeof(char *), cmp_str);
	STRV_FOREACH(d, in->test_no_masks ? NULL : b.hidden)
	if ((r = add_mask(&b, *d)) < 0)
		goto fail;

	qsort(ret->specs, ret->n_specs, sizeof(MountSpec), cmp_spec);
	ret->empty_file = strdup("/.ward-empty");
	if (!ret->empty_file) {
		r = -ENOMEM;
		goto fail;
	}
	strv_free(b.hidden);
	strv_free(b.masked);
	strv_free(b.ll_hidden);
	return 0;

fail_path:
	/* The failing path is the one being added: name it. */
	if (!*reterr_path && ret->n_specs > 0)
		*reterr_path = strdup(ret->specs[ret->n_specs - 1].view);
fail:
	strv_free(b.hidden);
	strv_free(b.masked);
	strv_free(b.ll_hidden);
	return r;
}

void mount_plan_done(MountPlan *plan)
{
	for (size_t i = 0; i < plan->n_specs; i++) {
		free(plan->specs[i].src);
		free(plan->specs[i].dst);
		free(plan->specs[i].view);
		free(plan->specs[i].data);
	}
	free(plan->specs);
	git_layout_done(&plan->git);
	for (size_t i = 0; i < plan->n_git_stages; i++)
		git_stage_done(&plan->git_stages[i]);
	free(plan->git_stages);
	for (size_t i = 0; i < plan->n_ll_rules; i++)
		free((char *)plan->ll_rules[i].path);
	free(plan->ll_rules);
	strv_free(plan->ll_unsplit);
	free(plan->empty_file);
	root_view_free(plan->root);

	*plan = (MountPlan){};
}

char *mount_plan_dump(const MountPlan *plan)
{
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	for (size_t i = 0; i < plan->n_specs; i++) {
		const MountSpec *s = &plan->specs[i];

		fprintf(f, "mount %s %s", mount_kind_to_string(s->kind), s->view);
		if (s->src)
			fprintf(f, " <- %s", s->src);
		if (s->data)
			fprintf(f, " [%s]", s->data);
		fprintf(f, "%s%s%s\n", s->is_file ? " file" : "", s->create ? " create" : "",
			s->skip ? " skip" : "");
	}
	for (size_t i = 0; i < plan->n_ll_rules; i++)
		fprintf(f, "landlock %s %s\n", landlock_class_to_string(plan->ll_rules[i].cls),
			plan->ll_rules[i].path);
	STRV_FOREACH(u, plan->ll_unsplit)
	fprintf(f, "unsplit %s\n", *u);
	for (size_t i = 0; i < plan->n_git_stages; i++)
		fprintf(f, "git-stage %s in %s%s\n", plan->git_stages[i].gitdir,
			plan->git_stages[i].base, plan->git_stages[i].root ? " acquired" : "");
	if (fclose(f) != 0)
		return NULL;
	return TAKE_PTR(buf);
}
