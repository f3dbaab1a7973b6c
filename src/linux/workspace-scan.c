/* The protected-path walk (workspace-scan.h).
 *
 * Cost: one getdents64 stream per directory, a name compared against the
 * protected names (a first-byte bitmap rejects almost every name at once),
 * and an fstatat only for what is reported or for a file system that
 * leaves d_type unknown. Regular files are never opened or stat'ed. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "linux/workspace-scan.h"
#include "policy/protected.h"

const char *const gitdir_exec_parts[] = {
	"HEAD", "config", "config.worktree", "commondir", "hooks", "info", "modules", "worktrees", NULL
};

static const char *const scan_kind_table[_SCAN_KIND_MAX] = {
	[SCAN_PROTECTED] = "protected",
	[SCAN_GITDIR] = "git-dir",
	[SCAN_GITDIR_PART] = "git-dir-part",
	[SCAN_LINKED_PARENT] = "symlinked-parent",
	[SCAN_TOO_DEEP] = "too-deep",
};

const char *scan_kind_to_string(ScanKind k)
{
	if (k < 0 || k >= _SCAN_KIND_MAX)
		return NULL;
	return scan_kind_table[k];
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

typedef struct Walk {
	WorkspaceScan *out;
	char **names;      /* fs.protected entries without '/' */
	char **anchored;   /* entries with '/' */
	uint8_t first[32]; /* bitmap of the names' first bytes */
	char *path;        /* the current directory, relative ("" at the root) */
	size_t len, cap;
	char buf[32768];   /* getdents64; a directory is read whole before descending */
} Walk;

static int path_push(Walk *w, const char *name, size_t *ret_old)
{
	size_t n = strlen(name), need = w->len + 1 + n + 1;

	if (need > w->cap) {
		size_t c = need * 2;
		char *p = realloc(w->path, c);
		if (!p)
			return -ENOMEM;
		w->path = p;
		w->cap = c;
	}
	*ret_old = w->len;
	if (w->len > 0)
		w->path[w->len++] = '/';
	memcpy(w->path + w->len, name, n + 1);
	w->len += n;
	return 0;
}

static void path_pop(Walk *w, size_t old)
{
	w->len = old;
	w->path[old] = '\0';
}

static int push_item(Walk *w, int dfd, const char *name, ScanKind kind)
{
	WorkspaceScan *s = w->out;
	struct stat st;
	size_t old;
	int r;

	if (name ? fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 : fstat(dfd, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 16;
		ScanItem *n = realloc(s->items, c * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->items = n;
		s->cap = c;
	}
	if (name && (r = path_push(w, name, &old)) < 0)
		return r;
	s->items[s->n] = (ScanItem){ .rel = strdup(w->path), .dev = st.st_dev, .ino = st.st_ino,
				     .mode = st.st_mode, .kind = kind };
	if (name)
		path_pop(w, old);
	if (!s->items[s->n].rel)
		return -ENOMEM;
	s->n++;
	return 0;
}

static bool is_name(const Walk *w, const char *name)
{
	unsigned char c = (unsigned char)name[0];

	if (!(w->first[c >> 3] & (1u << (c & 7))))
		return false;
	return strv_contains(w->names, name);
}

/* The anchored entries below the current directory, as the rest of the
 * path after it ("ci/.github/workflows" in "ci" -> ".github/workflows"). */
static size_t anchored_rests(const Walk *w, const char **rests, size_t max)
{
	size_t n = 0;

	STRV_FOREACH(a, w->anchored)
	{
		if (n == max)
			break;
		if (w->len == 0)
			rests[n++] = *a;
		else if (strncmp(*a, w->path, w->len) == 0 && (*a)[w->len] == '/')
			rests[n++] = *a + w->len + 1;
	}
	return n;
}

typedef enum Anchor { ANCHOR_NONE, ANCHOR_MATCH, ANCHOR_PARENT } Anchor;

static Anchor anchored_match(const char *const *rests, size_t n, const char *name)
{
	size_t len = strlen(name);
	Anchor r = ANCHOR_NONE;

	for (size_t i = 0; i < n; i++) {
		if (strncmp(rests[i], name, len) != 0)
			continue;
		if (rests[i][len] == '\0')
			return ANCHOR_MATCH;
		if (rests[i][len] == '/')
			r = ANCHOR_PARENT;
	}
	return r;
}

static int walk_dir(Walk *w, int dfd, int depth, char **reterr_rel);

/* The subdirectories of one directory (strv_extend would be quadratic). */
typedef struct Names {
	char **v;
	size_t n, cap;
} Names;

static void names_done(Names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static int names_add(Names *l, const char *s)
{
	if (l->n + 1 >= l->cap) {
		size_t c = l->cap ? l->cap * 2 : 16;
		char **v = realloc(l->v, c * sizeof(char *));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = c;
	}
	l->v[l->n] = strdup(s);
	if (!l->v[l->n])
		return -ENOMEM;
	l->v[++l->n] = NULL;
	return 0;
}

static bool is_gitdir_part(const char *name)
{
	for (const char *const *q = gitdir_exec_parts; *q; q++)
		if (strcmp(name, *q) == 0)
			return true;
	return false;
}

/* Descend into each of @subdirs (names in @dfd). */
static int walk_subdirs(Walk *w, int dfd, const Names *subdirs, bool skip_parts, int depth,
			char **reterr_rel)
{
	for (size_t i = 0; i < subdirs->n; i++) {
		const char *const *d = (const char *const *)&subdirs->v[i];
		_cleanup_close_ int fd = -EBADF;
		size_t old;
		int r;

		if (skip_parts && is_gitdir_part(*d))
			continue;
		fd = openat(dfd, *d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* A directory of ours that we cannot read: its mode protects
		 * nothing from the command (same uid: it can chmod it, write,
		 * and chmod it back), so it must be looked into. Given back to
		 * its owner (u+rwx), not restored: docs/sandbox.md. */
		if (fd < 0 && (errno == EACCES || errno == EPERM)) {
			struct stat st;
			if (fstatat(dfd, *d, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
			    st.st_uid == geteuid() &&
			    fchmodat(dfd, *d, (st.st_mode & 07777) | 0700, 0) == 0)
				fd = openat(dfd, *d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		/* Gone or replaced since it was listed (a host process), or
		 * someone else's that we cannot read: then the command cannot
		 * change its mode either (no capabilities, not the owner). */
		if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP ||
			       errno == EACCES || errno == EPERM))
			continue;
		if ((r = path_push(w, *d, &old)) < 0)
			return r;
		if (fd < 0) {
			*reterr_rel = strdup(w->path);
			return -errno;
		}
		r = walk_dir(w, fd, depth + 1, reterr_rel);
		path_pop(w, old);
		if (r < 0)
			return r;
	}
	return 0;
}

static int walk_dir(Walk *w, int dfd, int depth, char **reterr_rel)
{
	_cleanup_(names_done) Names subdirs = {};
	const char *rests[64];
	size_t n_rests, first_item = w->out->n;
	bool head = false, objects = false, refs = false, commondir = false;
	int r;

	/* Reported, not walked: refused before a run, moved out after one. */
	if (depth > WORKSPACE_SCAN_MAX_DEPTH)
		return push_item(w, dfd, NULL, SCAN_TOO_DEEP);
	w->out->n_dirs++;
	n_rests = anchored_rests(w, rests, sizeof(rests) / sizeof(rests[0]));

	for (;;) {
		long n = syscall(SYS_getdents64, dfd, w->buf, sizeof(w->buf));
		if (n < 0) {
			*reterr_rel = strdup(w->path);
			return -errno;
		}
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(w->buf + off);
			const char *name = de->d_name;
			unsigned char type = de->d_type;
			Anchor a;

			off += de->d_reclen;
			if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
				continue;
			switch (name[0]) {
			case 'H':
				head |= strcmp(name, "HEAD") == 0;
				break;
			case 'o':
				objects |= strcmp(name, "objects") == 0;
				break;
			case 'r':
				refs |= strcmp(name, "refs") == 0;
				break;
			case 'c':
				commondir |= strcmp(name, "commondir") == 0;
				break;
			default:
				break;
			}
			a = n_rests ? anchored_match(rests, n_rests, name) : ANCHOR_NONE;
			if (a == ANCHOR_MATCH || is_name(w, name)) {
				if ((r = push_item(w, dfd, name, SCAN_PROTECTED)) < 0)
					return r;
				continue;
			}
			if (type == DT_UNKNOWN) {
				struct stat st;
				if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
					continue;
				type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
			}
			if (a == ANCHOR_PARENT && type == DT_LNK) {
				if ((r = push_item(w, dfd, name, SCAN_LINKED_PARENT)) < 0)
					return r;
				continue;
			}
			/* Dependencies the host runs by design: docs/sandbox.md. */
			if (type != DT_DIR || (a == ANCHOR_NONE && strcmp(name, "node_modules") == 0))
				continue;
			if ((r = names_add(&subdirs, name)) < 0)
				return r;
		}
	}

	bool gitdir = head && (commondir || (objects && refs));
	if (gitdir) {
		if (depth > 0) {
			/* A repository that is not called .git (bare, or a
			 * separate git dir): read-only as a whole, like .git. What
			 * was found inside is covered by it. */
			for (size_t i = first_item; i < w->out->n; i++)
				free(w->out->items[i].rel);
			w->out->n = first_item;
			return push_item(w, dfd, NULL, SCAN_GITDIR);
		}
		/* The workspace root is a git dir: its executable parts only,
		 * the rest stays the workspace. */
		for (const char *const *p = gitdir_exec_parts; *p; p++)
			if ((r = push_item(w, dfd, *p, SCAN_GITDIR_PART)) < 0)
				return r;
	}
	return walk_subdirs(w, dfd, &subdirs, gitdir, depth, reterr_rel);
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp(((const ScanItem *)a)->rel, ((const ScanItem *)b)->rel);
}

int workspace_scan(int ws_fd, char *const *protected, WorkspaceScan *ret, char **reterr_rel)
{
	_cleanup_close_ int fd = -EBADF;
	struct rlimit old, raised;
	bool restore = false;
	Walk *w;
	int r = 0;

	*ret = (WorkspaceScan){};
	/* malloc, and only the fields zeroed: the 32 KiB buffer is filled
	 * by getdents64 before any read (calloc would fault in every page of
	 * it, per scan, before and after each run). */
	w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	memset(w, 0, offsetof(Walk, buf));
	w->out = ret;
	w->path = calloc(1, 256);
	w->cap = 256;
	if (!w->path) {
		r = -ENOMEM;
		goto out;
	}
	STRV_FOREACH(p, protected)
	{
		unsigned char c = (unsigned char)(*p)[0];
		if (protected_entry_is_name(*p)) {
			r = strv_extend(&w->names, *p);
			w->first[c >> 3] |= (uint8_t)(1u << (c & 7));
		} else {
			/* "dir/" means "dir" (protected.h). */
			size_t n = strlen(*p);
			while (n > 1 && (*p)[n - 1] == '/')
				n--;
			char *a = strndup(*p, n);
			r = a ? strv_consume(&w->anchored, a) : -ENOMEM;
		}
		if (r < 0)
			goto out;
	}
	/* One fd per level of depth: allow the documented maximum. */
	if (getrlimit(RLIMIT_NOFILE, &old) == 0 && old.rlim_cur < old.rlim_max &&
	    old.rlim_cur < WORKSPACE_SCAN_MAX_DEPTH + 256) {
		raised = old;
		raised.rlim_cur = old.rlim_max < WORKSPACE_SCAN_MAX_DEPTH + 256
					  ? old.rlim_max
					  : WORKSPACE_SCAN_MAX_DEPTH + 256;
		restore = setrlimit(RLIMIT_NOFILE, &raised) == 0;
	}
	fd = openat(ws_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	r = walk_dir(w, fd, 0, reterr_rel);
	if (restore)
		(void)setrlimit(RLIMIT_NOFILE, &old);
	if (r >= 0 && ret->n > 1)
		qsort(ret->items, ret->n, sizeof(ScanItem), cmp_item);
out:
	strv_free(w->names);
	strv_free(w->anchored);
	free(w->path);
	free(w);
	if (r < 0)
		workspace_scan_done(ret);
	return r;
}

void workspace_scan_done(WorkspaceScan *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->items[i].rel);
	free(s->items);
	*s = (WorkspaceScan){};
}

const ScanItem *workspace_scan_find(const WorkspaceScan *s, const char *rel)
{
	ScanItem key = { .rel = (char *)rel };

	if (!s || s->n == 0)
		return NULL;
	return bsearch(&key, s->items, s->n, sizeof(ScanItem), cmp_item);
}
