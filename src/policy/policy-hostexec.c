/* Writable paths that would let the command change what host tools run
 * later (issue 19): a directory on the caller's PATH, one that contains such
 * a directory, a file inside one, or a shell startup file. The presets open
 * none (their caches are copy-on-write: policy-presets.c); a policy that
 * does is refused, naming both paths. Also the certificate files that the
 * passed CA variables name, made readable. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/path-util.h"
#include "common/strv.h"
#include "policy/env-filter.h"
#include "policy/policy-hostexec.h"
#include "policy/policy-internal.h"

/* Read by a login or interactive shell, relative to $HOME. */
static const char *const startup_files[] = {
	".profile", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".zshrc",
	".zshenv", ".zprofile", ".zlogin", ".zlogout", ".config/fish", ".config/environment.d",
};

static bool overlaps(const char *a, const char *b)
{
	return path_is_beneath(a, b) || path_is_beneath(b, a);
}

static int refuse(PolicyError *reterr, const char *w, const char *what, const char *path)
{
	char qw[160], qp[160];

	policy_quote(w, qw, sizeof(qw));
	policy_quote(path, qp, sizeof(qp));
	policy_error_set(reterr, "<policy>", "fs.read_write",
			 "%s would let the command change %s %s, which host shells run later; "
			 "make something narrower writable",
			 qw, what, qp);
	return -EPERM;
}

int policy_check_host_exec(const WardPolicy *p, const char *path_env, const char *home,
			   PolicyError *reterr)
{
	STRV_FOREACH(w, p->fs_read_write)
	{
		_cleanup_free_ char *copy = path_env ? strdup(path_env) : NULL;
		char *save = NULL;

		if (path_env && !copy)
			return -ENOMEM;
		for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d;
		     d = strtok_r(NULL, ":", &save)) {
			_cleanup_free_ char *norm = NULL;

			/* Relative entries ("." or "") name the cwd: the workspace. */
			if (!path_is_absolute(d))
				continue;
			if (path_normalize(d, &norm) < 0)
				return -ENOMEM;
			if (overlaps(*w, norm))
				return refuse(reterr, *w, "the PATH directory", norm);
		}
		for (size_t i = 0; home && i < sizeof(startup_files) / sizeof(*startup_files); i++) {
			_cleanup_free_ char *f = NULL;

			if (path_join(home, startup_files[i], &f) < 0)
				return -ENOMEM;
			if (overlaps(*w, f))
				return refuse(reterr, *w, "the shell startup file", f);
		}
	}
	return 0;
}

static bool covered(const WardPolicy *p, const char *path)
{
	char **const lists[] = { p->fs_read, p->fs_read_exec, p->fs_read_write };

	for (size_t i = 0; i < sizeof(lists) / sizeof(*lists); i++)
		STRV_FOREACH(e, lists[i])
		if (path_is_beneath(path, *e))
			return true;
	return false;
}

int policy_add_ca_reads(WardPolicy *p, char *const *envp, const char *home)
{
	_cleanup_strv_ char **paths = NULL;
	int r = env_ca_paths(envp, &paths);

	if (r < 0)
		return r;
	STRV_FOREACH(c, paths)
	{
		_cleanup_free_ char *real = realpath(*c, NULL), *norm = NULL;
		struct stat st;

		if (!real || stat(real, &st) < 0 || path_normalize(*c, &norm) < 0)
			continue;
		/* A bundle file, or a directory of them; never "/" or a directory
		 * holding the home directory (that would show all of it). */
		if (S_ISDIR(st.st_mode) && (strcmp(real, "/") == 0 || (home && path_is_beneath(home, real))))
			continue;
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			continue;
		/* Shown already (a bundle under /etc): no second mount. */
		if (covered(p, real) && covered(p, norm))
			continue;
		if ((r = policy_add_unique(&p->fs_read, real)) < 0 ||
		    (strcmp(norm, real) != 0 && (r = policy_add_unique(&p->fs_read, norm)) < 0))
			return r;
	}
	return 0;
}
