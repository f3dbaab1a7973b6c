/* A tier 1 run's private TMPDIR and its reuse (run-tmpdir.h says when
 * a directory is reused and why that is safe). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "cow/cow-fsops.h"
#include "linux/run-tmpdir.h"

#define SPARE "spare"
/* More extended attributes than this on a TMPDIR: not reused. */
#define XATTRS_MAX 16384

static void id_done(RunTmpdir *t)
{
	free(t->xattrs);
	t->xattrs = NULL;
	t->n_xattrs = 0;
}

/* Names and values of @fd's extended attributes, one blob (NULL: none). */
static int xattrs_read(int fd, char **ret, size_t *ret_n)
{
	char names[XATTRS_MAX], value[XATTRS_MAX];
	_cleanup_free_ char *blob = NULL;
	size_t n = 0;
	ssize_t len = flistxattr(fd, names, sizeof(names));

	*ret = NULL;
	*ret_n = 0;
	if (len < 0)
		return errno == ENOTSUP ? 0 : -errno;
	for (ssize_t i = 0; i < len; i += (ssize_t)strlen(names + i) + 1) {
		ssize_t vlen = fgetxattr(fd, names + i, value, sizeof(value));
		size_t nlen = strlen(names + i) + 1;
		uint32_t v32;

		if (vlen < 0)
			return -errno;
		if (n + nlen + sizeof(v32) + (size_t)vlen > XATTRS_MAX)
			return -E2BIG;
		char *b = realloc(blob, n + nlen + sizeof(v32) + (size_t)vlen);
		if (!b)
			return -ENOMEM;
		blob = b;
		v32 = (uint32_t)vlen;
		memcpy(blob + n, names + i, nlen);
		memcpy(blob + n + nlen, &v32, sizeof(v32));
		memcpy(blob + n + nlen + sizeof(v32), value, (size_t)vlen);
		n += nlen + sizeof(v32) + (size_t)vlen;
	}
	*ret = TAKE_PTR(blob);
	*ret_n = n;
	return 0;
}

/* What the directory @fd is, as far as it shapes what is made in it. */
static int id_read(int fd, RunTmpdir *t)
{
	struct fsxattr fsx = {};
	struct stat st;
	int flags = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->uid = st.st_uid;
	t->gid = st.st_gid;
	t->mode = st.st_mode;
	t->flags_err = ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0 ? errno : 0;
	t->flags = t->flags_err ? 0 : (unsigned)flags;
	t->fsx_err = ioctl(fd, FS_IOC_FSGETXATTR, &fsx) < 0 ? errno : 0;
	if (!t->fsx_err) {
		t->fsx[0] = fsx.fsx_xflags;
		t->fsx[1] = fsx.fsx_extsize;
		t->fsx[2] = fsx.fsx_projid;
		t->fsx[3] = fsx.fsx_cowextsize;
	}
	return xattrs_read(fd, &t->xattrs, &t->n_xattrs);
}

static bool id_same(const RunTmpdir *a, const RunTmpdir *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->uid == b->uid && a->gid == b->gid &&
	       a->mode == b->mode && a->flags_err == b->flags_err && a->flags == b->flags &&
	       a->fsx_err == b->fsx_err && memcmp(a->fsx, b->fsx, sizeof(a->fsx)) == 0 &&
	       a->n_xattrs == b->n_xattrs &&
	       (a->n_xattrs == 0 || memcmp(a->xattrs, b->xattrs, a->n_xattrs) == 0);
}

/* Remove every entry of the directory @fd; 1: it is empty now, 0: an
 * entry is left. */
static int dir_empty_out(int fd)
{
	for (int pass = 0; pass < 3; pass++) {
		_cleanup_closedir_ DIR *d = NULL;
		int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		struct dirent *de;
		bool any = false;

		if (dfd < 0)
			return -errno;
		if (!(d = fdopendir(dfd))) {
			close(dfd);
			return -errno;
		}
		rewinddir(d);
		while ((de = readdir(d))) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			any = true;
			(void)cow_rm_rf_at(fd, de->d_name, 0);
		}
		if (!any)
			return 1;
	}
	return 0;
}

static void random_suffix(char s[7])
{
	static const char chars[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char b[6] = {};

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (unsigned char)(rand() ^ (int)getpid());
	for (size_t i = 0; i < sizeof(b); i++)
		s[i] = chars[b[i] % (sizeof(chars) - 1)];
	s[6] = '\0';
}

/* Take the spare over as @name: an empty directory of ours with mode
 * 0700, else it is removed. 1: taken, 0: none (or not fit). */
static int take_spare(int pfd, const char *parent, const char *name, RunTmpdir *t)
{
	_cleanup_close_ int fd = -EBADF;
	struct stat st;

	if (renameat2(pfd, SPARE, pfd, name, RENAME_NOREPLACE) < 0)
		return 0;
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	    (st.st_mode & 07777) == 0700 && dir_empty_out(fd) == 1 && id_read(fd, t) == 0 &&
	    asprintf(&t->path, "%s/%s", parent, name) >= 0) {
		t->reusable = t->reused = true;
		return 1;
	}
	t->path = NULL;
	id_done(t);
	(void)cow_rm_rf_at(pfd, name, 0);
	return 0;
}

int run_tmpdir_make(const char *state_dir, RunTmpdir *ret)
{
	_cleanup_free_ char *parent = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	char name[64], suffix[7];
	int pfd, r;

	*ret = (RunTmpdir){};
	if (asprintf(&parent, "%s/tmp", state_dir) < 0)
		return -ENOMEM;
	if (mkdir(parent, 0700) < 0 && errno != EEXIST)
		return -errno;
	d = opendir(parent);
	if (!d)
		return -errno;
	pfd = dirfd(d);
	/* Those of wards that are gone (SIGKILL, SIGPIPE before the cleanup):
	 * removed, never reused (their tree may live on). */
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (pid <= 0 || *end != '-' || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			(void)cow_rm_rf_at(pfd, de->d_name, 0);
	}
	random_suffix(suffix);
	snprintf(name, sizeof(name), "%d-%s", (int)getpid(), suffix);
	if (take_spare(pfd, parent, name, ret) == 1)
		return 0;

	if (asprintf(&ret->path, "%s/%d-XXXXXX", parent, (int)getpid()) < 0) {
		ret->path = NULL;
		return -ENOMEM;
	}
	if (!mkdtemp(ret->path)) {
		r = -errno;
		free(ret->path);
		ret->path = NULL;
		return r;
	}
	_cleanup_close_ int fd = open(ret->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	ret->reusable = fd >= 0 && id_read(fd, ret) == 0;
	return 0;
}

void run_tmpdir_remove(RunTmpdir *t, bool tree_gone)
{
	if (!t->path)
		return;
	char *slash = strrchr(t->path, '/');
	*slash = '\0';
	_cleanup_close_ int pfd = open(t->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *name = slash + 1;

	if (pfd >= 0 && tree_gone && t->reusable) {
		_cleanup_close_ int fd =
			openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		RunTmpdir now = {};
		bool kept = fd >= 0 && dir_empty_out(fd) == 1 && id_read(fd, &now) == 0 &&
			    id_same(t, &now) &&
			    renameat2(pfd, name, pfd, SPARE, RENAME_NOREPLACE) == 0;
		id_done(&now);
		if (kept)
			goto done;
	}
	if (pfd >= 0)
		(void)cow_rm_rf_at(pfd, name, 0);
done:
	id_done(t);
	free(t->path);
	t->path = NULL;
}
