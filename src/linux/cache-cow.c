/* Per-run upper and work dirs of the copy-on-write caches (cache-cow.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "cow/cow-fsops.h"
#include "linux/cache-cow.h"

#define PREFIX "cache-cow."

/* Remove the per-run dirs of supervisors that no longer exist. */
static void remove_stale(const char *state_dir)
{
	_cleanup_closedir_ DIR *d = opendir(state_dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, PREFIX, strlen(PREFIX)) != 0)
			continue;
		pid = strtol(de->d_name + strlen(PREFIX), &end, 10);
		if (pid <= 0 || *end != '.' || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		(void)cow_rm_rf_at(dirfd(d), de->d_name, 0);
	}
}

int cache_cow_dir_new(const char *state_dir, char **ret)
{
	char *dir = NULL;

	remove_stale(state_dir);
	if (asprintf(&dir, "%s/" PREFIX "%d.XXXXXX", state_dir, (int)getpid()) < 0)
		return -ENOMEM;
	if (!mkdtemp(dir)) {
		int r = -errno;
		free(dir);
		return r;
	}
	*ret = dir;
	return 0;
}

int cache_cow_layer_new(const char *dir, size_t i, char **ret_upper, char **ret_work)
{
	_cleanup_free_ char *base = NULL, *upper = NULL, *work = NULL;

	if (asprintf(&base, "%s/%zu", dir, i) < 0 || asprintf(&upper, "%s/upper", base) < 0 ||
	    asprintf(&work, "%s/work", base) < 0)
		return -ENOMEM;
	if (mkdir(base, 0700) < 0 || mkdir(upper, 0700) < 0 || mkdir(work, 0700) < 0)
		return -errno;
	*ret_upper = TAKE_PTR(upper);
	*ret_work = TAKE_PTR(work);
	return 0;
}

void cache_cow_dir_remove(const char *dir)
{
	const char *slash = strrchr(dir, '/');
	_cleanup_free_ char *parent = NULL;
	_cleanup_close_ int pfd = -EBADF;

	if (!slash || slash == dir)
		return;
	parent = strndup(dir, (size_t)(slash - dir));
	if (!parent)
		return;
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd >= 0)
		(void)cow_rm_rf_at(pfd, slash + 1, 0);
}
