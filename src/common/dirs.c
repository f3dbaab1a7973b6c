#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"

int ward_home_dir(char **ret)
{
	const char *h = getenv("HOME");
	char *s;

	/* getpwuid_r: libward calls this from its callers' threads. */
	struct passwd pwbuf, *pw = NULL;
	char buf[4096];
	if (!h || h[0] != '/') {
		if (getpwuid_r(getuid(), &pwbuf, buf, sizeof(buf), &pw) != 0 || !pw ||
		    !pw->pw_dir || pw->pw_dir[0] != '/')
			return -ENXIO;
		h = pw->pw_dir;
	}
	s = strdup(h);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

static int xdg_dir(const char *var, const char *fallback, char **ret)
{
	const char *x = getenv(var);
	_cleanup_free_ char *home = NULL;
	char *s = NULL;
	int r;

	if (x && x[0] == '/') {
		if (asprintf(&s, "%s/ward", x) < 0)
			return -ENOMEM;
	} else {
		r = ward_home_dir(&home);
		if (r < 0)
			return r;
		if (asprintf(&s, "%s/%s/ward", home, fallback) < 0)
			return -ENOMEM;
	}
	*ret = s;
	return 0;
}

int ward_config_dir(char **ret)
{
	return xdg_dir("XDG_CONFIG_HOME", ".config", ret);
}

int ward_state_dir(char **ret)
{
	return xdg_dir("XDG_STATE_HOME", ".local/state", ret);
}

int ward_dir_ensure(const char *path)
{
	struct stat st;
	int r = mkdir_p(path, 0700);

	if (r < 0)
		return r;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != getuid())
		return -EPERM;
	return 0;
}

int mkdir_p(const char *path, unsigned mode)
{
	struct stat st;

	/* The common case, every run: it is there already. One lookup, not
	 * a mkdir (which locks the parent) per component. */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	_cleanup_free_ char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST)
				return -errno;
			*s = c;
			if (c == '\0')
				break;
		}
	}
	return 0;
}
