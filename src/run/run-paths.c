/* Resolving the workspace and writing --result safely: run-paths.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/run-paths.h"
#include "common/cleanup.h"
#include "common/path-real.h"
#include "common/log.h"
#include "common/path-util.h"
#include "common/safe-path.h"
#include "common/strv.h"
#include "common/workspace.h"
#include "ward/ward.h"

/* The directory relative paths start from: $PWD when it names the current
 * directory (the way the harness reached it, symlinks and all, so they are
 * checked too), else the kernel's canonical cwd. */
static int base_dir(char **ret)
{
	const char *pwd = getenv("PWD");
	struct stat a, b;

	if (pwd && pwd[0] == '/' && stat(pwd, &a) == 0 && stat(".", &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		*ret = strdup(pwd);
		return *ret ? 0 : -ENOMEM;
	}
	*ret = getcwd(NULL, 0);
	return *ret ? 0 : -errno;
}

int run_resolve_workspace(const char *given, char **ret, WardError *reterr)
{
	_cleanup_free_ char *base = NULL, *abs = NULL, *real = NULL, *link = NULL, *target = NULL;
	_cleanup_close_ int fd = -EBADF;
	struct stat st;
	int r;

	if (!given || given[0] != '/') {
		r = base_dir(&base);
		if (r < 0)
			return ward_error_set(reterr, "workspace", r,
					      "Failed to find the current directory");
	}
	if (!given)
		abs = TAKE_PTR(base);
	else if (given[0] == '/')
		abs = strdup(given);
	else if (path_join(base, given, &abs) < 0)
		abs = NULL;
	if (!abs)
		return ward_error_set(reterr, "workspace", ENOMEM, "Out of memory");

	fd = path_open_trusted(abs, &real, &link, &target);
	if (fd == -ELOOP && link)
		return ward_error_set(reterr, "workspace", 0,
				      "Refusing the workspace '%s': '%s' is a symlink to '%s', which "
				      "a sandboxed command could have made; name the directory itself",
				      given ? given : abs, link, target);
	if (fd >= 0 && fstat(fd, &st) < 0)
		fd = -errno;
	else if (fd >= 0 && !S_ISDIR(st.st_mode))
		fd = -ENOTDIR;
	if (fd < 0)
		return ward_error_set(reterr, "workspace", fd, "Failed to resolve the workspace '%s'",
				      given ? given : abs);
	*ret = TAKE_PTR(real);
	return 0;
}

int run_check_workspace(const char *ws, const char *home, const WardPolicy *pol,
			const char *state_dir, const char *config_dir, bool allow_unsafe,
			WardError *reterr)
{
	_cleanup_free_ char *home_real = path_real(home), *state_real = NULL,
			    *config_real = NULL, *why = NULL;
	_cleanup_strv_ char **deny = NULL;
	int r;

	/* Both sides canonical: a home reached through a symlink, a denied
	 * path spelled another way. */
	STRV_FOREACH(d, pol->fs_deny)
	{
		_cleanup_free_ char *real = path_real(*d);
		if (strv_extend(&deny, *d) < 0 || (real && strv_extend(&deny, real) < 0))
			return ward_error_set(reterr, "workspace", ENOMEM, "Out of memory");
	}
	state_real = state_dir ? path_real(state_dir) : NULL;
	config_real = config_dir ? path_real(config_dir) : NULL;
	WorkspaceCheck c = {
		.workspace = ws,
		.home = home_real ? home_real : home,
		.deny = deny,
		.state_dir = state_real ? state_real : state_dir,
		.config_dir = config_real ? config_real : config_dir,
		.allow_unsafe = allow_unsafe,
	};
	r = workspace_check(&c, &why);
	if (r < 0)
		return ward_error_set(reterr, "workspace", 0, "Refusing the workspace: %s%s",
				      why ? why : ws,
				      r == -EACCES ? " (run ward in a project directory; "
						     "--allow-unsafe-workspace accepts system "
						     "directories and those of $HOME's configuration "
						     "and credentials)"
						   : " (run ward in a project directory)");
	return 0;
}

int run_write_result(const char *path, const char *text)
{
	_cleanup_free_ char *base = NULL, *abs = NULL, *link = NULL, *target = NULL;
	int r;

	if (path[0] != '/') {
		r = base_dir(&base);
		if (r >= 0 && path_join(base, path, &abs) < 0)
			r = -ENOMEM;
	} else {
		abs = strdup(path);
		r = abs ? 0 : -ENOMEM;
	}
	if (r >= 0)
		r = write_file_safe(abs, text, strlen(text), 0666, &link, &target);
	if (r == -ELOOP && link)
		log_warning("Not writing the result to '%s': '%s' is a symlink to '%s'", path, link,
			    target);
	else if (r < 0)
		log_warning_errno(r, "Failed to write the result to '%s': %m", path);
	return r;
}
