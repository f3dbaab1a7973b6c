/* The scanner: an overlayfs upper dir (written by the sandbox, so hostile)
 * compared with the lower dir (the real workspace) becomes a list of
 * changes. Nothing is followed: directories are opened with
 * O_NOFOLLOW|O_DIRECTORY relative to their parent's fd and every entry is
 * looked at with fstatat(AT_SYMLINK_NOFOLLOW).
 *
 * Overlay encodings handled (Documentation/filesystems/overlayfs.rst):
 * whiteouts are 0:0 character devices, or (newer kernels, "userxattr")
 * zero-size files carrying an overlay.whiteout xattr; an opaque directory
 * carries overlay.opaque="y" ("x" only means "has xattr whiteouts"). There
 * is no redirect_dir/metacopy in an unprivileged mount, so a renamed
 * directory is a full copy plus a whiteout. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "common/strv.h"
#include "cow/cow-internal.h"

typedef struct ScanCtx {
	char *const *protected_paths;
	CowChangeList *out;
} ScanCtx;

void cow_change_list_done(CowChangeList *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i].path);
	free(l->items);
	*l = (CowChangeList){};
}

static int list_push(CowChangeList *l, const CowChange *c)
{
	if (l->n == l->allocated) {
		size_t a = l->allocated ? l->allocated * 2 : 64;
		CowChange *n = realloc(l->items, a * sizeof(*n));
		if (!n)
			return -ENOMEM;
		l->items = n;
		l->allocated = a;
	}
	l->items[l->n++] = *c;
	return 0;
}

/* A mode change worth showing: the bits differ, and not only in setuid,
 * setgid or sticky bits that apply would drop anyway. A copy-up of the
 * user's own setuid file is not a change. */
static bool mode_differs(const struct stat *ust, const struct stat *lst)
{
	mode_t u = ust->st_mode & 07777, l = lst->st_mode & 07777;
	return u != l && cow_effective_mode(ust->st_mode) != l;
}

static bool lower_tree_protected(ScanCtx *ctx, int lfd, const char *name, const char *path,
				 int depth);

/* Append a change. @lfd/@lname name the lower entry (for a directory about
 * to be removed or replaced: does it hold a protected path?); -1/NULL when
 * there is none. */
static int emit(ScanCtx *ctx, const char *path, CowKind kind, const struct stat *ust,
		const struct stat *lst, CowRefusal refused, int lfd, const char *lname)
{
	CowChange c = {
		.kind = kind,
		.upper_mode = ust ? ust->st_mode : 0,
		.lower_mode = lst ? lst->st_mode : 0,
		.upper_size = ust ? ust->st_size : 0,
		.lower_size = lst ? lst->st_size : 0,
		.upper_atime = ust ? ust->st_atim : (struct timespec){},
		.upper_mtime = ust ? ust->st_mtim : (struct timespec){},
		.refused = refused,
	};
	int r;

	if (ust) {
		if ((ust->st_mode & 06000) || (!S_ISDIR(ust->st_mode) && (ust->st_mode & 01000)))
			c.flags |= COW_F_SETUID_STRIPPED;
		if (S_ISREG(ust->st_mode) && ust->st_nlink > 1)
			c.flags |= COW_F_HARDLINK;
	}
	if (ust && lst && (ust->st_mode & S_IFMT) == (lst->st_mode & S_IFMT) &&
	    !S_ISLNK(ust->st_mode) && mode_differs(ust, lst))
		c.flags |= COW_F_MODE;
	if (cow_name_is_odd(path, strlen(path)))
		c.flags |= COW_F_ODD_NAME;
	/* Removing a workspace directory would take a protected path below it
	 * with it (e.g. a whiteout for "sub" over "sub/.git"): look at what the
	 * workspace really holds there. */
	if (refused == COW_REFUSE_NONE && lst && S_ISDIR(lst->st_mode) &&
	    (kind == COW_DELETED || (kind == COW_TYPE_CHANGED && ust && !S_ISDIR(ust->st_mode))) &&
	    (cow_path_is_protected_ancestor(path, ctx->protected_paths) ||
	     lower_tree_protected(ctx, lfd, lname, path, 0)))
		c.refused = COW_REFUSE_PROTECTED;
	c.path = strdup(path);
	if (!c.path)
		return -ENOMEM;
	r = list_push(ctx->out, &c);
	if (r < 0)
		free(c.path);
	return r;
}

/* lgetxattr on @name inside @dirfd without following it. Returns the value
 * length, or -errno (-ENODATA when absent). */
static ssize_t xattr_at(int dirfd, const char *name, const char *key, char *buf, size_t size)
{
	char p[64 + NAME_MAX];

	/* /proc/self/fd/N is a magic link to the directory itself; lgetxattr
	 * does not follow the last component, so a symlink named @name is
	 * examined, not its target. */
	snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", dirfd, name);
	return RET_NERRNO(lgetxattr(p, key, buf, size));
}

static bool is_whiteout(int dirfd, const char *name, const struct stat *st)
{
	char v[8];

	if (S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0))
		return true;
	if (S_ISREG(st->st_mode) && st->st_size == 0)
		return xattr_at(dirfd, name, "user.overlay.whiteout", v, sizeof(v)) >= 0 ||
		       xattr_at(dirfd, name, "trusted.overlay.whiteout", v, sizeof(v)) >= 0;
	return false;
}

static bool is_opaque(int fd)
{
	char v[8];
	ssize_t n;

	n = fgetxattr(fd, "user.overlay.opaque", v, sizeof(v));
	if (n < 0)
		n = fgetxattr(fd, "trusted.overlay.opaque", v, sizeof(v));
	return n == 1 && v[0] == 'y';
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* All names in @fd except "." and "..", sorted. The fd is not consumed. */
static int read_names(int fd, char ***ret, size_t *ret_n)
{
	_cleanup_closedir_ DIR *d = NULL;
	char **names = NULL;
	size_t n = 0, a = 0;
	struct dirent *de;
	int dfd;

	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		int r = -errno;
		close(dfd);
		return r;
	}
	rewinddir(d);
	while ((errno = 0, de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n + 1 >= a) {
			size_t na = a ? a * 2 : 16;
			char **nn = realloc(names, na * sizeof(char *));
			if (!nn)
				goto oom;
			names = nn;
			a = na;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto oom;
		names[++n] = NULL;
	}
	if (errno != 0) {
		int r = -errno;
		strv_free(names);
		return r;
	}
	if (n > 0)
		qsort(names, n, sizeof(char *), cmp_names);
	*ret = names;
	*ret_n = n;
	return 0;
oom:
	strv_free(names);
	return -ENOMEM;
}

static bool names_contain(char **names, size_t n, const char *s)
{
	return n > 0 && bsearch(&s, names, n, sizeof(char *), cmp_names) != NULL;
}

static char *join(const char *rel, const char *name);

/* Does the workspace directory @name in @lfd hold a protected path at any
 * depth? Nothing is followed; a tree too deep to look at counts as yes. */
static bool lower_tree_protected(ScanCtx *ctx, int lfd, const char *name, const char *path,
				 int depth)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_strv_ char **names = NULL;
	size_t n = 0;

	if (lfd < 0 || !name)
		return false;
	if (depth >= COW_MAX_DEPTH)
		return true;
	fd = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOTDIR && errno != ENOENT && errno != ELOOP;
	if (read_names(fd, &names, &n) < 0)
		return true;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *sub = join(path, names[i]);
		struct stat st;
		if (!sub || cow_protected_entry(sub, strlen(sub), ctx->protected_paths))
			return true;
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
		    lower_tree_protected(ctx, fd, names[i], sub, depth + 1))
			return true;
	}
	return false;
}

/* Is @name present in the merged view of a directory (upper entry that is
 * not a whiteout, or a lower entry the upper neither hides nor covers)?
 * With @dir, it must be a directory there. */
static bool merged_has(int ufd, int lfd, bool opaque, const char *name, bool dir)
{
	struct stat st;

	if (fstatat(ufd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (is_whiteout(ufd, name, &st))
			return false;
		return !dir || S_ISDIR(st.st_mode);
	}
	if (opaque || lfd < 0 || fstatat(lfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return !dir || S_ISDIR(st.st_mode);
}

/* Would git take this directory for a git dir (a bare repository, or a
 * .git dir moved elsewhere)? git's is_git_directory(): HEAD, refs/, and
 * objects/ or a commondir file. Then git run in it on the host reads its
 * config and hooks: everything in it is repository metadata. */
static bool looks_like_git_dir(int ufd, int lfd, bool opaque)
{
	return merged_has(ufd, lfd, opaque, "HEAD", false) &&
	       merged_has(ufd, lfd, opaque, "refs", true) &&
	       (merged_has(ufd, lfd, opaque, "objects", true) ||
		merged_has(ufd, lfd, opaque, "commondir", false));
}

/* 1 when the two regular files differ in content, 0 when equal, -errno. */
static int content_differs(int ufd, const char *name, int lfd, const struct stat *ust,
			   const struct stat *lst)
{
	_cleanup_close_ int a = -EBADF, b = -EBADF;
	_cleanup_free_ char *ba = NULL, *bb = NULL;
	const size_t bs = 128 * 1024;

	if (ust->st_size != lst->st_size)
		return 1;
	a = openat(ufd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (a < 0)
		return -errno;
	b = openat(lfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (b < 0)
		return 1; /* unreadable lower: treat as changed, apply decides */
	/* What was opened must still be what was examined. */
	struct stat sa, sb;
	if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0)
		return -errno;
	if (!S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode))
		return -EBADFD;
	ba = malloc(bs);
	bb = malloc(bs);
	if (!ba || !bb)
		return -ENOMEM;
	for (;;) {
		ssize_t na = RETRY_EINTR(read(a, ba, bs));
		if (na < 0)
			return -errno;
		if (na == 0)
			return 0;
		/* The lower file is the user's; read exactly as much, short
		 * reads included. */
		ssize_t got = 0;
		while (got < na) {
			ssize_t nb = RETRY_EINTR(read(b, bb + got, (size_t)(na - got)));
			if (nb < 0)
				return -errno;
			if (nb == 0)
				return 1;
			got += nb;
		}
		if (memcmp(ba, bb, (size_t)na) != 0)
			return 1;
	}
}

/* 1 when the symlinks' targets differ. */
static int target_differs(int ufd, int lfd, const char *name)
{
	char a[PATH_MAX + 1], b[PATH_MAX + 1];
	ssize_t na, nb;

	na = readlinkat(ufd, name, a, sizeof(a));
	if (na < 0)
		return -errno;
	nb = readlinkat(lfd, name, b, sizeof(b));
	if (nb < 0)
		return 1;
	return na != nb || memcmp(a, b, (size_t)na) != 0;
}

static int scan_dir(ScanCtx *ctx, int ufd, int lfd, const char *rel, int depth, bool opaque,
		    bool in_gitdir);

/* True when the opaque upper dir @ufd hides an entry of lower dir @name: only
 * then is it shown as "replaced" (after an apply the two hold the same names,
 * and the opaque flag alone changes nothing one can see). */
static bool hides_lower(int ufd, int lfd, const char *name)
{
	_cleanup_close_ int sub = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_strv_ char **names = NULL;
	size_t n = 0;
	struct stat st;

	if (sub < 0 || read_names(sub, &names, &n) < 0)
		return true;
	for (size_t i = 0; i < n; i++)
		if (fstatat(ufd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			return true;
	return false;
}

static char *join(const char *rel, const char *name)
{
	char *p;

	if (!rel[0])
		return strdup(name);
	if (asprintf(&p, "%s/%s", rel, name) < 0)
		return NULL;
	return p;
}

static int scan_entry(ScanCtx *ctx, int ufd, int lfd, const char *rel, const char *name,
		      int depth, bool opaque_parent, bool in_gitdir)
{
	_cleanup_free_ char *path = join(rel, name);
	_cleanup_close_ int sub_u = -EBADF, sub_l = -EBADF;
	struct stat ust, lst;
	bool has_lower = false, protected, this_opaque = false;
	CowPathClass cls;
	int kind = -1, r;

	if (!path)
		return -ENOMEM;
	if (fstatat(ufd, name, &ust, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (lfd >= 0 && fstatat(lfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0)
		has_lower = true;
	cls = cow_classify_path(path, strlen(path), ctx->protected_paths);
	protected = cls == COW_PATH_PROTECTED || in_gitdir;

	if (is_whiteout(ufd, name, &ust)) {
		if (!has_lower)
			return 0;
		return emit(ctx, path, COW_DELETED, NULL, &lst,
			    protected ? COW_REFUSE_PROTECTED : COW_REFUSE_NONE, lfd, name);
	}

	if (S_ISDIR(ust.st_mode)) {
		sub_u = openat(ufd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub_u < 0)
			return emit(ctx, path, has_lower ? COW_MODIFIED : COW_ADDED, &ust,
				    has_lower ? &lst : NULL, COW_REFUSE_UNREADABLE, -1, NULL);
		this_opaque = is_opaque(sub_u);
		if (!has_lower)
			kind = COW_ADDED;
		else if (!S_ISDIR(lst.st_mode))
			kind = COW_TYPE_CHANGED;
		else if (this_opaque && !opaque_parent && hides_lower(sub_u, lfd, name))
			kind = COW_DIR_REPLACED;
		else if (mode_differs(&ust, &lst))
			kind = COW_MODE_CHANGED;

		/* A protected directory the command made (or changed the mode of)
		 * is listed, refused, and looked into; one it replaced (opaque,
		 * or over a non-directory) is refused whole. The sandbox puts
		 * nothing in the layer for protected paths (no placeholders). */
		if (protected && (this_opaque || (has_lower && !S_ISDIR(lst.st_mode))))
			return emit(ctx, path, kind >= 0 ? kind : COW_DIR_REPLACED, &ust,
				    has_lower ? &lst : NULL, COW_REFUSE_PROTECTED, lfd, name);
		if (depth + 1 >= COW_MAX_DEPTH)
			return emit(ctx, path, kind >= 0 ? kind : COW_MODIFIED, &ust,
				    has_lower ? &lst : NULL, COW_REFUSE_TOO_DEEP, -1, NULL);

		if (kind >= 0) {
			r = emit(ctx, path, kind, &ust, has_lower ? &lst : NULL,
				 protected ? COW_REFUSE_PROTECTED : COW_REFUSE_NONE, lfd, name);
			if (r < 0)
				return r;
		}
		if (has_lower && S_ISDIR(lst.st_mode))
			sub_l = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		return scan_dir(ctx, sub_u, sub_l, path, depth + 1, opaque_parent || this_opaque,
				in_gitdir);
	}

	if (S_ISREG(ust.st_mode)) {
		if (!has_lower)
			kind = COW_ADDED;
		else if (!S_ISREG(lst.st_mode))
			kind = COW_TYPE_CHANGED;
		else {
			r = content_differs(ufd, name, lfd, &ust, &lst);
			if (r < 0)
				return emit(ctx, path, COW_MODIFIED, &ust, &lst,
					    COW_REFUSE_UNREADABLE, -1, NULL);
			if (r > 0)
				kind = COW_MODIFIED;
			else if (mode_differs(&ust, &lst))
				kind = COW_MODE_CHANGED;
		}
	} else if (S_ISLNK(ust.st_mode)) {
		if (!has_lower)
			kind = COW_ADDED;
		else if (!S_ISLNK(lst.st_mode))
			kind = COW_TYPE_CHANGED;
		else {
			r = target_differs(ufd, lfd, name);
			if (r < 0)
				return emit(ctx, path, COW_SYMLINK_CHANGED, &ust, &lst,
					    COW_REFUSE_UNREADABLE, -1, NULL);
			if (r > 0)
				kind = COW_SYMLINK_CHANGED;
		}
	} else {
		/* fifo, socket, device: never applied. */
		return emit(ctx, path, has_lower ? COW_TYPE_CHANGED : COW_ADDED, &ust,
			    has_lower ? &lst : NULL,
			    protected ? COW_REFUSE_PROTECTED : COW_REFUSE_SPECIAL, lfd, name);
	}
	if (kind < 0)
		return 0;
	return emit(ctx, path, kind, &ust, has_lower ? &lst : NULL,
		    protected ? COW_REFUSE_PROTECTED : COW_REFUSE_NONE, lfd, name);
}

static int scan_dir(ScanCtx *ctx, int ufd, int lfd, const char *rel, int depth, bool opaque,
		    bool in_gitdir)
{
	_cleanup_strv_ char **unames = NULL, **lnames = NULL;
	size_t nu = 0, nl = 0;
	int r;

	r = read_names(ufd, &unames, &nu);
	if (r < 0)
		return r;
	in_gitdir = in_gitdir || looks_like_git_dir(ufd, lfd, opaque);
	/* In an opaque directory the lower entries are hidden: every lower name
	 * without an upper entry is deleted. */
	if (opaque && lfd >= 0) {
		r = read_names(lfd, &lnames, &nl);
		if (r < 0)
			return r;
		for (size_t i = 0; i < nl; i++) {
			_cleanup_free_ char *path = NULL;
			struct stat lst;

			if (names_contain(unames, nu, lnames[i]))
				continue;
			if (fstatat(lfd, lnames[i], &lst, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			path = join(rel, lnames[i]);
			if (!path)
				return -ENOMEM;
			r = emit(ctx, path, COW_DELETED, NULL, &lst,
				 in_gitdir || cow_classify_path(path, strlen(path),
								ctx->protected_paths) ==
						      COW_PATH_PROTECTED
					 ? COW_REFUSE_PROTECTED
					 : COW_REFUSE_NONE,
				 lfd, lnames[i]);
			if (r < 0)
				return r;
		}
	}
	for (size_t i = 0; i < nu; i++) {
		r = scan_entry(ctx, ufd, lfd, rel, unames[i], depth, opaque, in_gitdir);
		if (r < 0)
			return r;
	}
	return 0;
}

int cow_scan(int upper_fd, int lower_fd, char *const *protected_paths, CowChangeList *ret)
{
	ScanCtx ctx = { .protected_paths = protected_paths, .out = ret };
	int r;

	/* The root of the upper dir is the merged root: it may be opaque too
	 * (the whole workspace replaced). */
	r = scan_dir(&ctx, upper_fd, lower_fd, "", 0, is_opaque(upper_fd), false);
	if (r < 0)
		cow_change_list_done(ret);
	return r;
}
