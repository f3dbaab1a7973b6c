/* Landlock grants with denied paths cut out: see deny-split.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "linux/deny-split.h"

/* Denied paths nest only so deep; deeper is refused rather than cut short. */
#define SPLIT_MAX_DEPTH 32

static bool strictly_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[1] != '\0';
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

static bool any_below(char *const *hidden, const char *dir)
{
	STRV_FOREACH(h, hidden)
	if (strictly_below(*h, dir))
		return true;
	return false;
}

static int split(const char *view, const char *real, LandlockPathType type, LandlockClass cls,
		 char *const *hidden, DenySplitEmit emit, void *ud, int depth)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int r;

	if (!any_below(hidden, real))
		return emit(ud, view, cls, type);
	if (depth >= SPLIT_MAX_DEPTH)
		return -ELOOP;
	r = emit(ud, view, LANDLOCK_CLASS_LIST, type);
	if (r < 0)
		return r;
	d = opendir(real);
	if (!d)
		/* Gone or unreadable: no grant beneath it, which only means fewer
		 * rights. */
		return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : -errno;
	while ((errno = 0, de = readdir(d))) {
		_cleanup_free_ char *cv = NULL, *cr = NULL;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (asprintf(&cv, "%s/%s", strcmp(view, "/") == 0 ? "" : view, de->d_name) < 0 ||
		    asprintf(&cr, "%s/%s", strcmp(real, "/") == 0 ? "" : real, de->d_name) < 0)
			return -ENOMEM;
		if (strv_contains(hidden, cr))
			continue; /* the denied path: no rule at all */
		/* The listing's type saves an fstatat per entry (hundreds in
		 * /etc); only a file system that does not fill it is asked. */
		unsigned char dt = de->d_type;
		if (dt == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			dt = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if (dt == DT_LNK)
			continue;
		r = split(cv, cr, dt == DT_DIR ? LANDLOCK_PATH_DIR : LANDLOCK_PATH_FILE, cls, hidden,
			  emit, ud, depth + 1);
		if (r < 0)
			return r;
	}
	return errno ? -errno : 0;
}

int deny_split(const char *view, const char *real, LandlockClass cls, char *const *hidden,
	       DenySplitEmit emit, void *userdata, bool *ret_unsplit)
{
	if (cls != LANDLOCK_CLASS_READ && cls != LANDLOCK_CLASS_READ_EXEC) {
		if (ret_unsplit && any_below(hidden, real))
			*ret_unsplit = true;
		return emit(userdata, view, cls, LANDLOCK_PATH_UNKNOWN);
	}
	return split(view, real, LANDLOCK_PATH_UNKNOWN, cls, hidden, emit, userdata, 0);
}
