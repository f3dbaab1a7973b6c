/* Commit mode's staging layer for a git dir (git-stage.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/macro.h"
#include "common/strv.h"
#include "cow/cow-fsops.h"
#include "linux/git-stage.h"

/* The top-level files a commit, a reset, a merge or a cherry-pick writes.
 * None of them names a program or a configuration source: git parses them
 * as refs, object ids, messages and the index. */
static const char *const applied[] = {
	"index",	"HEAD",	      "ORIG_HEAD",  "FETCH_HEAD",	"COMMIT_EDITMSG",
	"packed-refs",	"MERGE_HEAD", "MERGE_MSG",  "MERGE_MODE",	"AUTO_MERGE",
	"SQUASH_MSG",	"REVERT_HEAD", "CHERRY_PICK_HEAD", NULL,
};

bool git_stage_name_applies(const char *name)
{
	for (size_t i = 0; applied[i]; i++)
		if (strcmp(name, applied[i]) == 0)
			return true;
	return false;
}

/* Does the upper layer under @dfd/@name hold a file commit mode applies? */
static bool holds_applicable(int dfd, const char *name)
{
	_cleanup_free_ char *upper = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int fd;

	if (asprintf(&upper, "%s/upper", name) < 0)
		return true;
	fd = openat(dfd, upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	while ((de = readdir(d)))
		if (git_stage_name_applies(de->d_name))
			return true;
	return false;
}

/* Staging directories are named <pid>-XXXXXX: remove those whose run is
 * gone (ward killed with SIGKILL), unless the run got as far as writing an
 * index or refs there: its objects and loose refs already reached the git
 * dir, and what the staging layer holds (packed-refs after a pack-refs)
 * may be the only copy. Applying it now could overwrite what the user did
 * since, so it is kept and named. A recycled pid only delays the removal. */
static int remove_stale(const char *base, char ***notes)
{
	_cleanup_closedir_ DIR *d = opendir(base);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (end == de->d_name || *end != '-' || pid <= 0 || pid == getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (holds_applicable(dirfd(d), de->d_name)) {
			char *line = NULL;
			if (asprintf(&line,
				     "git: a commit-mode run that was killed left repository files "
				     "it did not apply in '%s/%s/upper'; remove that directory once "
				     "you have checked them",
				     base, de->d_name) < 0 ||
			    strv_extend_unique(notes, line) < 0) {
				free(line);
				return -ENOMEM;
			}
			free(line);
			continue;
		}
		(void)cow_rm_rf_at(dirfd(d), de->d_name, 0);
	}
	return 0;
}

int git_stage_plan(const char *state_dir, const char *gitdir, GitStage *ret)
{
	GitStage s = { .gitdir_fd = -EBADF };

	*ret = s;
	if (asprintf(&s.base, "%s/git-stage", state_dir) < 0)
		return -ENOMEM;
	s.gitdir = strdup(gitdir);
	if (!s.gitdir) {
		git_stage_done(&s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

int git_stage_acquire(GitStage *s, char ***notes)
{
	int r;

	if (s->root)
		return 0;
	if ((r = mkdir_p(s->base, 0700)) < 0)
		return r;
	if ((r = remove_stale(s->base, notes)) < 0)
		return r;
	if (asprintf(&s->root, "%s/%d-XXXXXX", s->base, (int)getpid()) < 0) {
		s->root = NULL;
		return -ENOMEM;
	}
	if (!mkdtemp(s->root)) {
		r = -errno;
		free(s->root);
		s->root = NULL;
		return r;
	}
	/* From here on git_stage_done removes root. */
	if (asprintf(&s->upper, "%s/upper", s->root) < 0 ||
	    asprintf(&s->work, "%s/work", s->root) < 0)
		return -ENOMEM;
	if (mkdir(s->upper, 0700) < 0 || mkdir(s->work, 0700) < 0)
		return -errno;
	s->gitdir_fd = open(s->gitdir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->gitdir_fd < 0)
		return -errno;
	if (mkdirat(s->gitdir_fd, "logs", 0755) < 0 && errno != EEXIST)
		return -errno;
	/* What a run killed before its scrub left behind. */
	return git_stage_scrub(s, notes);
}

/* Replace @name in the git dir the way git does: write @name.lock
 * (O_EXCL: a git running on the host holds it while it works), then rename
 * it over @name. 1 applied, 0 skipped, -EBUSY locked, -errno. */
static int apply_one(const GitStage *s, int upper_fd, const char *name, const struct stat *st)
{
	_cleanup_close_ int dfd = -EBADF;
	char lock[64];
	int r;

	/* A real directory fd from the O_PATH one: the *at calls below need it. */
	dfd = openat(s->gitdir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0)) {
		/* An overlay whiteout: the command removed it (MERGE_HEAD after
		 * a merge commit). */
		if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
			return -errno;
		return 1;
	}
	if (!S_ISREG(st->st_mode))
		return 0;
	snprintf(lock, sizeof(lock), "%s.lock", name);
	/* Never executable, whatever the command set. */
	r = cow_replace_with_copy(upper_fd, name, st, dfd, lock, name, st->st_mode & 0666);
	if (r == -EEXIST)
		return -EBUSY;
	return r < 0 ? r : 1;
}

/* A directory stream on @fd, which it takes (closed on failure too). */
static int dir_stream(int fd, DIR **ret)
{
	if (fd < 0)
		return -errno;
	*ret = fdopendir(fd);
	if (!*ret) {
		int r = -errno;
		close(fd);
		return r;
	}
	return 0;
}

/* The next entry of @d other than "." and "..", with its lstat in @st;
 * entries gone before they could be examined are passed over. NULL at the
 * end. */
static struct dirent *next_entry(DIR *d, struct stat *st)
{
	struct dirent *de;

	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		return de;
	}
	return NULL;
}

/* Remove what is neither a regular file nor a directory beneath @dfd: the
 * host's git appends to reflogs and writes objects and refs through
 * whatever path it finds, so a symlink the command left in logs/ (to
 * ~/.bashrc) or in objects/ (to a directory elsewhere) would make the host's
 * git write there. git itself creates none of these in these trees. */
static int scrub(int dfd, int depth, unsigned *removed)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	struct stat st;
	int r = 0;

	if (depth > 64)
		return -ELOOP;
	r = dir_stream(openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), &d);
	if (r < 0)
		return r;
	while ((de = next_entry(d, &st))) {
		if (S_ISREG(st.st_mode))
			continue;
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub = openat(dirfd(d), de->d_name,
							 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int k = sub < 0 ? -errno : scrub(sub, depth + 1, removed);
			if (k < 0 && r == 0)
				r = k;
			continue;
		}
		if (unlinkat(dirfd(d), de->d_name, 0) < 0) {
			if (r == 0)
				r = -errno;
		} else
			(*removed)++;
	}
	return r;
}

int git_stage_scrub(const GitStage *s, char ***ret_lines)
{
	static const char *const trees[] = { "objects", "refs", "logs" };
	unsigned removed = 0;
	int r = 0;

	if (s->gitdir_fd < 0)
		return 0; /* not acquired: nothing was bound */
	for (size_t i = 0; i < ELEMENTSOF(trees); i++) {
		_cleanup_close_ int fd = openat(s->gitdir_fd, trees[i],
						O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			/* Replaced by a symlink or a file: remove that too. */
			if (errno == ENOTDIR || errno == ELOOP) {
				if (unlinkat(s->gitdir_fd, trees[i], 0) == 0)
					removed++;
			}
			continue;
		}
		int k = scrub(fd, 0, &removed);
		if (k < 0 && r == 0)
			r = k;
	}
	if (removed && ret_lines &&
	    strv_extendf(ret_lines,
			 "git: removed %u symlink(s) or special file(s) from the objects, refs "
			 "and logs of '%s' (git makes none; the host's git would write through "
			 "them)",
			 removed, s->gitdir) < 0)
		return -ENOMEM;
	return r;
}

int git_stage_apply(GitStage *s, char ***ret_lines)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_strv_ char **skipped = NULL;
	struct dirent *de;
	struct stat st;
	bool busy = false;
	int n = 0, r = 0;

	if (!s->root)
		return 0; /* not acquired: the run never started */

	r = dir_stream(open(s->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), &d);
	if (r < 0)
		return r;
	while ((de = next_entry(d, &st))) {
		if (!git_stage_name_applies(de->d_name)) {
			/* Lock files a git killed mid-way left: noise. */
			size_t len = strlen(de->d_name);
			if (len > 5 && strcmp(de->d_name + len - 5, ".lock") == 0)
				continue;
			if (strv_extend(&skipped, de->d_name) < 0)
				return -ENOMEM;
			continue;
		}
		int k = apply_one(s, dirfd(d), de->d_name, &st);
		if (k == -EBUSY) {
			if (strv_extendf(ret_lines,
					 "git: '%s/%s' was not applied: '%s.lock' exists (a git on "
					 "the host is using it); the command's version is in '%s'",
					 s->gitdir, de->d_name, de->d_name, s->upper) < 0)
				return -ENOMEM;
			busy = true;
		} else if (k < 0 && r == 0)
			r = k;
		else if (k > 0)
			n++;
	}
	if (skipped && ret_lines) {
		_cleanup_free_ char *list = NULL;
		size_t len = 0;
		STRV_FOREACH(x, skipped)
		len += strlen(*x) + 2;
		list = calloc(1, len + 1);
		if (!list)
			return -ENOMEM;
		STRV_FOREACH(x, skipped)
		{
			if (*list)
				strcat(list, ", ");
			strcat(list, *x);
		}
		if (strv_extendf(ret_lines,
				 "git: not applied to '%s' (read-only even with \"git\": \"commit\"): %s",
				 s->gitdir, list) < 0)
			return -ENOMEM;
	}
	/* Keep what could not be applied where the line says it is. */
	if (r < 0 || busy)
		s->keep = true;
	if (r >= 0 && busy)
		r = -EBUSY;
	return r < 0 ? r : n;
}

void git_stage_done(GitStage *s)
{
	if (s->root && !s->keep) {
		_cleanup_free_ char *parent = strdup(s->root);
		char *sl = parent ? strrchr(parent, '/') : NULL;
		if (sl) {
			*sl = '\0';
			_cleanup_close_ int pfd =
				open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (pfd >= 0)
				(void)cow_rm_rf_at(pfd, sl + 1, 0);
		}
	}
	if (s->gitdir_fd >= 0)
		close(s->gitdir_fd);
	free(s->gitdir);
	free(s->base);
	free(s->root);
	free(s->upper);
	free(s->work);
	*s = (GitStage){ .gitdir_fd = -EBADF };
}
