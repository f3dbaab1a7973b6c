#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/strv.h"
#include "linux/placeholder.h"
#include "linux/sandbox.h"

/* A process's start time (field 22 of /proc/PID/stat), to tell a live
 * owner from a recycled pid. 0 when it does not exist. */
static unsigned long long process_start_time(pid_t pid)
{
	char path[64], buf[1024];
	_cleanup_close_ int fd = -EBADF;
	unsigned long long st = 0;
	ssize_t n;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* A zombie is dead: it will not remove its placeholders any more. */
	if (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
		return 0;
	/* After ") " come fields 3.. ; starttime is field 22. */
	p += 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		st = strtoull(p, NULL, 10);
	return st;
}

/* Read a record: its start time and its "C path" (created) and "U path"
 * (relied on) lines. */
static int record_read(const char *path, unsigned long long *ret_start, char ***created,
		       char ***used)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[4096];

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f))
		return -EBADMSG;
	*ret_start = strtoull(line, NULL, 10);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		/* Created entries keep their type letter: "C /dir", "F /file". */
		if ((line[0] == 'C' || line[0] == 'F') && line[1] == ' ' && line[2] == '/' &&
		    created && strv_extend(created, line) < 0)
			return -ENOMEM;
		if (line[1] == ' ' && line[2] == '/' && used && strv_extend(used, line + 2) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Call @f for each record in @dir with whether its run is alive (same pid,
 * same start time) and the paths it lists. Stops at the first error. */
typedef int (*RecordFunc)(const char *path, bool live, char **paths, void *userdata);

static int for_each_record(const char *dir, RecordFunc f, void *userdata)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		_cleanup_free_ char *path = NULL;
		_cleanup_strv_ char **paths = NULL;
		unsigned long long start = 0;
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		int r;

		if (de->d_name[0] == '.' || *end != '\0' || pid <= 0)
			continue;
		if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
			return -ENOMEM;
		if (record_read(path, &start, NULL, &paths) == -ENOMEM)
			return -ENOMEM;
		r = f(path, start != 0 && process_start_time((pid_t)pid) == start, paths, userdata);
		if (r < 0)
			return r;
	}
	return 0;
}

typedef struct LivePaths {
	const char *self;
	char **paths;
} LivePaths;

static int collect_live(const char *path, bool live, char **paths, void *userdata)
{
	LivePaths *lp = userdata;

	/* A stale record relies on nothing any more. */
	if (!live || strcmp(path, lp->self) == 0)
		return 0;
	return strv_extend_strv(&lp->paths, paths);
}

/* Paths that live runs other than @self_record rely on. */
static int live_paths(const char *dir, const char *self_record, char ***ret)
{
	LivePaths lp = { .self = self_record };
	int r = for_each_record(dir, collect_live, &lp);

	if (r < 0) {
		strv_free(lp.paths);
		return r;
	}
	*ret = lp.paths;
	return 0;
}

int placeholder_record_finish(const char *record_path)
{
	_cleanup_strv_ char **created = NULL, **live = NULL;
	_cleanup_free_ char *dir = strdup(record_path);
	unsigned long long start;
	int r = 0;

	if (!dir)
		return -ENOMEM;
	if (record_read(record_path, &start, &created, NULL) < 0) {
		(void)unlink(record_path);
		return 0;
	}
	*strrchr(dir, '/') = '\0';
	r = live_paths(dir, record_path, &live);
	if (r < 0)
		return r;
	/* Recorded outermost first: remove in reverse. rmdir only removes an
	 * empty directory, so nothing the user put there meanwhile is lost;
	 * a path another live run relies on stays for that run to remove. */
	_cleanup_strv_ char **kept = NULL;
	for (size_t i = strv_length(created); i > 0; i--) {
		const char *entry = created[i - 1], *path = entry + 2;
		struct stat st;

		if (strv_contains(live, path)) {
			if (strv_extend(&kept, entry) < 0)
				return -ENOMEM;
			continue;
		}
		/* The parent is resolved without following any symlink: had the
		 * command swapped a parent for a link, we would otherwise remove
		 * a file somewhere else. */
		_cleanup_close_ int dfd = -EBADF;
		_cleanup_free_ char *parent = strdup(path);
		const char *base;
		if (!parent)
			return -ENOMEM;
		*strrchr(parent, '/') = '\0';
		base = strrchr(path, '/') + 1;
		struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
					.resolve = RESOLVE_NO_SYMLINKS };
		dfd = (int)syscall(SYS_openat2, AT_FDCWD, parent[0] ? parent : "/", &how, sizeof(how));
		if (dfd < 0 || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (entry[0] == 'F') {
			/* Only our empty placeholder: never a file someone wrote. */
			if (S_ISREG(st.st_mode) && st.st_size == 0 && unlinkat(dfd, base, 0) < 0 &&
			    r == 0)
				r = -errno;
		} else if (S_ISDIR(st.st_mode) && unlinkat(dfd, base, AT_REMOVEDIR) < 0 &&
			   errno != ENOTEMPTY && r == 0)
			r = -errno;
	}
	if (kept) {
		/* Keep the record for what stays: once our pid is gone it is
		 * stale, and a later run removes it when nobody relies on it. */
		_cleanup_fclose_ FILE *f = fopen(record_path, "we");
		if (f) {
			fprintf(f, "%llu\n", start);
			for (size_t i = strv_length(kept); i > 0; i--)
				fprintf(f, "%s\n", kept[i - 1]);
			return r;
		}
	}
	(void)unlink(record_path);
	return r;
}

static int finish_stale(const char *path, bool live, char **paths, void *userdata)
{
	if (!live)
		(void)placeholder_record_finish(path);
	return 0;
}

int placeholders_cleanup_stale(const char *state_dir)
{
	_cleanup_free_ char *dir = NULL;

	if (asprintf(&dir, "%s/placeholders", state_dir) < 0)
		return -ENOMEM;
	return for_each_record(dir, finish_stale, NULL);
}
