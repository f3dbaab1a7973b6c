/* The git layout of a workspace (git-layout.h).
 *
 * Every pointer here can come from a hostile repository: a gitfile saying
 * "gitdir: /home/user/.ssh", a commondir naming another project. A target
 * is exposed only when it is a real git directory, is not hidden by the
 * policy, does not contain the home directory, and is tied to this
 * workspace by the layout git itself writes:
 *   - a linked worktree's git dir is <common>/worktrees/<name>, its
 *     commondir is that <common>, and its "gitdir" file points back at the
 *     worktree's .git;
 *   - a submodule's git dir lies in <ancestor>/.git/modules/, where
 *     <ancestor> is a directory above the submodule (the superproject);
 *   - the enclosing repository of a subdirectory workspace is found by
 *     walking up the host's directories, which the repository cannot move. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "common/path-util.h"
#include "common/strv.h"
#include "linux/git-layout.h"

static bool is_dir(const char *dir, const char *name)
{
	_cleanup_free_ char *p = NULL;
	struct stat st;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return false;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *dir, const char *name)
{
	_cleanup_free_ char *p = NULL;
	struct stat st;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return false;
	return lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

bool git_is_git_dir(const char *path)
{
	/* HEAD may be a symlink in very old repositories; git itself accepts
	 * a regular file or a symlink. */
	_cleanup_free_ char *head = NULL;
	struct stat st;

	if (asprintf(&head, "%s/HEAD", path) < 0 || lstat(head, &st) < 0 ||
	    !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
		return false;
	return is_dir(path, "objects") && is_dir(path, "refs");
}

/* A linked worktree's git dir: HEAD and a commondir file. */
static bool is_worktree_git_dir(const char *path)
{
	return is_file(path, "HEAD") && is_file(path, "commondir");
}

/* The first line of @dir/@name (a small pointer file), with a "gitdir: "
 * prefix removed when @prefix, resolved against @dir when relative, as a
 * real path. -ENOENT/-EINVAL/-ENOMEM; the raw text in @reterr_raw. */
static int read_pointer(const char *dir, const char *name, bool prefix, char **ret,
			char **reterr_raw)
{
	_cleanup_free_ char *p = NULL, *abs = NULL;
	_cleanup_close_ int fd = -EBADF;
	char buf[PATH_MAX + 16], *s, *nl;
	ssize_t n;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -EINVAL;
	buf[n] = '\0';
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	s = buf;
	if (prefix) {
		if (strncmp(s, "gitdir: ", 8) != 0)
			return -EINVAL;
		s += 8;
	}
	if (!*s)
		return -EINVAL;
	*reterr_raw = strdup(s);
	if (s[0] == '/')
		abs = strdup(s);
	else if (asprintf(&abs, "%s/%s", dir, s) < 0)
		abs = NULL;
	if (!abs)
		return -ENOMEM;
	*ret = realpath(abs, NULL);
	return *ret ? 0 : -errno;
}

static bool path_in_list(const char *path, char *const *list)
{
	STRV_FOREACH(d, list)
	if (path_is_beneath(path, *d))
		return true;
	return false;
}

static char *parent_of(const char *path)
{
	char *p = strdup(path), *sl;

	if (!p)
		return NULL;
	sl = strrchr(p, '/');
	if (sl == p)
		sl[1] = '\0';
	else if (sl)
		*sl = '\0';
	return p;
}

_printf_(2, 3) static int note(GitLayout *l, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = strv_extendfv(&l->notes, fmt, ap);
	va_end(ap);
	return r;
}

/* May @path be shown at all? Not hidden, not the home directory or above. */
static const char *why_unsafe(const GitLayoutInput *in, const char *path)
{
	if (strcmp(path, "/") == 0 || path_is_beneath(in->home, path))
		return "it contains the home directory";
	if (path_in_list(path, in->hidden))
		return "the policy hides it";
	return NULL;
}

/* Is @g (a git dir, real path) a submodule's git dir of a superproject
 * above @top: <ancestor>/.git/modules/...? */
static bool is_superproject_module(const char *top, const char *g)
{
	_cleanup_free_ char *d = strdup(top);

	while (d && strcmp(d, "/") != 0) {
		_cleanup_free_ char *dotgit = NULL, *modules = NULL, *up = NULL;
		struct stat st;
		if (asprintf(&dotgit, "%s/.git", d) < 0)
			return false;
		if (lstat(dotgit, &st) == 0 && S_ISDIR(st.st_mode)) {
			_cleanup_free_ char *real = realpath(dotgit, NULL);
			if (real && asprintf(&modules, "%s/modules", real) >= 0 &&
			    path_is_beneath(g, modules) && strcmp(g, modules) != 0)
				return true;
		}
		up = parent_of(d);
		free(d);
		d = TAKE_PTR(up);
	}
	return false;
}

/* A linked worktree's git dir @g: its common dir, if the layout is the one
 * git writes and @g's "gitdir" file points back at @dotgit. */
static int worktree_common_dir(GitLayout *l, const char *g, const char *dotgit, char **ret)
{
	_cleanup_free_ char *common = NULL, *back = NULL, *raw = NULL, *raw2 = NULL,
			    *me = NULL, *wts = NULL, *gp = NULL;
	int r;

	r = read_pointer(g, "commondir", false, &common, &raw);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || !git_is_git_dir(common))
		return note(l, "git: not exposing '%s': its commondir '%s' is not a git directory",
			    g, raw ? raw : "");
	gp = parent_of(g);
	if (!gp || asprintf(&wts, "%s/worktrees", common) < 0)
		return -ENOMEM;
	if (strcmp(gp, wts) != 0)
		return note(l, "git: not exposing '%s': it is not in the worktrees of '%s'", g,
			    common);
	me = realpath(dotgit, NULL);
	r = read_pointer(g, "gitdir", false, &back, &raw2);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || !me || strcmp(back, me) != 0)
		return note(l,
			    "git: not exposing '%s': its gitdir file does not point back at '%s'",
			    g, dotgit);
	*ret = TAKE_PTR(common);
	return 0;
}

/* @top/.git, the repository's entry: its git dir (and common dir). */
static int resolve_dotgit(const GitLayoutInput *in, GitLayout *l, const char *top)
{
	_cleanup_free_ char *dotgit = NULL, *g = NULL, *raw = NULL, *common = NULL;
	const char *why;
	struct stat st;
	int r;

	if (asprintf(&dotgit, "%s/.git", top) < 0)
		return -ENOMEM;
	if (lstat(dotgit, &st) < 0)
		return 0;
	if (S_ISDIR(st.st_mode)) {
		/* The ordinary layout: inside @top, visible with it. */
		g = realpath(dotgit, NULL);
		if (!g || !git_is_git_dir(g))
			return 0;
		return strv_consume(&l->gitdirs, TAKE_PTR(g));
	}
	if (S_ISREG(st.st_mode)) {
		r = read_pointer(top, ".git", true, &g, &raw);
		if (r == -ENOMEM)
			return r;
		if (r == -EINVAL && !raw)
			return 0; /* not a gitfile (an empty mark): git fails the same way */
		if (r < 0)
			return note(l, "git: not exposing '%s' named by '%s': %s", raw, dotgit,
				    strerror(-r));
	} else if (S_ISLNK(st.st_mode)) {
		g = realpath(dotgit, NULL);
		if (!g)
			return 0;
	} else
		return 0;

	if ((why = why_unsafe(in, g)))
		return note(l, "git: not exposing '%s' named by '%s': %s", g, dotgit, why);
	if (is_worktree_git_dir(g)) {
		r = worktree_common_dir(l, g, dotgit, &common);
		if (r < 0 || !common)
			return r;
		if ((why = why_unsafe(in, common)))
			return note(l, "git: not exposing '%s' (common dir of '%s'): %s", common,
				    dotgit, why);
	} else if (!git_is_git_dir(g))
		return note(l, "git: not exposing '%s' named by '%s': not a git directory", g,
			    dotgit);
	else if (!path_is_beneath(g, top) && !is_superproject_module(top, g))
		return note(l,
			    "git: not exposing '%s' named by '%s': not a submodule git dir of a "
			    "repository above it",
			    g, dotgit);

	if (strv_consume(&l->gitdirs, TAKE_PTR(g)) < 0 ||
	    (common && strv_consume(&l->gitdirs, TAKE_PTR(common)) < 0))
		return -ENOMEM;
	return 0;
}

int git_layout_discover(const GitLayoutInput *in, GitLayout *ret)
{
	_cleanup_free_ char *top = strdup(in->workspace);
	const char *why;
	int r;

	*ret = (GitLayout){};
	if (!top)
		return -ENOMEM;
	/* git's own discovery: the nearest directory at or above the
	 * workspace with a .git entry. */
	for (;;) {
		_cleanup_free_ char *dotgit = NULL, *up = NULL;
		struct stat st;
		if (asprintf(&dotgit, "%s/.git", top) < 0)
			return -ENOMEM;
		if (lstat(dotgit, &st) == 0)
			break;
		if (strcmp(top, "/") == 0)
			return 0; /* not in a repository */
		up = parent_of(top);
		if (!up)
			return -ENOMEM;
		free(top);
		top = TAKE_PTR(up);
	}
	if (strcmp(top, in->workspace) != 0) {
		if ((why = why_unsafe(in, top))) {
			r = note(ret, "git: not exposing the repository '%s' that contains the "
				      "workspace: %s",
				 top, why);
			return r < 0 ? r : 0;
		}
		ret->worktree = strdup(top);
		if (!ret->worktree)
			return -ENOMEM;
	}
	r = resolve_dotgit(in, ret, top);
	if (r < 0) {
		git_layout_done(ret);
		return r;
	}
	/* A working tree without a usable git dir shows nothing git can use. */
	if (!ret->gitdirs && ret->worktree) {
		free(ret->worktree);
		ret->worktree = NULL;
	}
	return 0;
}

void git_layout_done(GitLayout *l)
{
	free(l->worktree);
	strv_free(l->gitdirs);
	strv_free(l->notes);
	*l = (GitLayout){};
}

/* Does the command look like it runs git: the program itself, or a word
 * of a shell command line ("sh -c 'git stash'")? */
static bool mentions_git(char *const *argv)
{
	const char *base;

	if (!argv || !argv[0])
		return false;
	base = strrchr(argv[0], '/');
	if (strcmp(base ? base + 1 : argv[0], "git") == 0)
		return true;
	STRV_FOREACH(a, argv + 1)
	{
		for (const char *s = strstr(*a, "git"); s; s = strstr(s + 1, "git")) {
			bool start = s == *a || strchr(" \t;&|(`$'\"", s[-1]);
			bool end = s[3] == '\0' || strchr(" \t;&|)`'\"", s[3]);
			if (start && end)
				return true;
		}
	}
	return false;
}

char *git_layout_hint(const GitLayout *l, int git_mode_read_only, char *const *argv,
		      int exit_code)
{
	char *s = NULL;

	/* git dies with 128; other tools with small codes. Signals, the
	 * timeout and ward's own 124-127 are not a refused write. */
	if (exit_code <= 0 || exit_code > 128 || (exit_code >= 124 && exit_code <= 127) ||
	    !mentions_git(argv))
		return NULL;
	if (!l->gitdirs || !git_mode_read_only)
		return NULL;
	if (asprintf(&s,
		     "hint: the repository metadata '%s' is read-only in this sandbox; if the "
		     "command failed writing to it, allow commits with --git commit (policy "
		     "\"git\": \"commit\", docs/policy.md)",
		     l->gitdirs[strv_length(l->gitdirs) - 1]) < 0)
		return NULL;
	return s;
}
