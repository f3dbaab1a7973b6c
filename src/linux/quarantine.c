/* The after-run check (quarantine.h).
 *
 * Every file operation on the workspace is relative to an fd of it and
 * resolves without following symlinks (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS): the sandbox is gone when this runs, but the tree
 * is the one it left. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "linux/quarantine.h"

/* Lines on stderr before the rest is only counted (a test suite can make
 * hundreds of repositories; the audit log has every one). */
#define QUARANTINE_MAX_LINES 10

static int open_beneath(int ws_fd, const char *rel, int flags)
{
	struct open_how how = { .flags = (uint64_t)flags | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, ws_fd, rel[0] ? rel : ".", &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* ---- copy and remove, for a quarantine on another file system ---- */

static int copy_file(int sdir, const char *name, int ddir, const char *dname, mode_t mode)
{
	_cleanup_close_ int in = -EBADF, out = -EBADF;
	char buf[65536];
	ssize_t n;

	in = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = openat(ddir, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     mode & 0600);
	if (out < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0)
				return -errno;
			off += w;
		}
	return n < 0 ? -errno : 0;
}

typedef int (*EntryFunc)(int sdir, const char *name, int ddir, int depth);

/* Call @f for each entry of the directory @fd. */
static int for_each_entry(int fd, EntryFunc f, int ddir, int depth)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3), r;

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((errno = 0, de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if ((r = f(fd, de->d_name, ddir, depth + 1)) < 0)
			return r;
	}
	return errno ? -errno : 0;
}

static int copy_tree(int sdir, const char *name, int ddir, int depth);

/* Copy @name in @sdir to @dname in @ddir. */
static int copy_tree_as(int sdir, const char *name, int ddir, const char *dname, int depth)
{
	struct stat st;

	if (depth > WORKSPACE_SCAN_MAX_DEPTH)
		return -ELOOP;
	if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISREG(st.st_mode))
		return copy_file(sdir, name, ddir, dname, st.st_mode);
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlinkat(sdir, name, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		return symlinkat(target, ddir, dname) < 0 ? -errno : 0;
	}
	if (!S_ISDIR(st.st_mode))
		return 0; /* fifos, sockets, devices: nothing to keep */
	if (mkdirat(ddir, dname, 0700) < 0)
		return -errno;
	_cleanup_close_ int s = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int d = openat(ddir, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s < 0 || d < 0)
		return -errno;
	return for_each_entry(s, copy_tree, d, depth);
}

static int copy_tree(int sdir, const char *name, int ddir, int depth)
{
	return copy_tree_as(sdir, name, ddir, name, depth);
}

static int remove_tree(int pdir, const char *name, int unused, int depth)
{
	struct stat st;

	if (depth > WORKSPACE_SCAN_MAX_DEPTH)
		return -ELOOP;
	if (fstatat(pdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(pdir, name, 0) < 0 ? -errno : 0;
	/* The command may have taken its own rights away: it owns the tree. */
	(void)fchmodat(pdir, name, 0700, 0);
	_cleanup_close_ int fd = openat(pdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = for_each_entry(fd, remove_tree, -1, depth);
	if (r < 0)
		return r;
	return unlinkat(pdir, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* ---- moving one path ---- */

typedef struct Move {
	const char *how;  /* "moved", "copied" or "renamed" */
	char *dest;
} Move;

static int move_one(int ws_fd, const char *qroot, const char *rel, Move *ret)
{
	_cleanup_free_ char *parent = strdup(rel), *dest = NULL, *qdir = NULL, *alt = NULL;
	_cleanup_close_ int pfd = -EBADF, qfd = -EBADF;
	char *sl;
	const char *base;
	int r;

	if (!parent)
		return -ENOMEM;
	sl = strrchr(parent, '/');
	base = sl ? rel + (sl - parent) + 1 : rel;
	if (sl)
		*sl = '\0';
	else
		parent[0] = '\0';
	pfd = open_beneath(ws_fd, parent, O_PATH | O_DIRECTORY);
	if (pfd < 0)
		return pfd == -ENOENT ? 0 : pfd;
	if (asprintf(&qdir, "%s%s%s", qroot, parent[0] ? "/" : "", parent) < 0)
		return -ENOMEM;
	if ((r = mkdir_p(qdir, 0700)) < 0)
		return r;
	/* A name not taken in the quarantine (a check redone after a killed
	 * guard may meet what the first one moved). */
	for (int i = 0; i < 100; i++) {
		struct stat st;
		free(dest);
		dest = NULL;
		if ((i == 0 ? asprintf(&dest, "%s/%s", qdir, base)
			    : asprintf(&dest, "%s/%s.%d", qdir, base, i)) < 0)
			return -ENOMEM;
		if (lstat(dest, &st) < 0 && errno == ENOENT)
			break;
	}
	if (renameat2(pfd, base, AT_FDCWD, dest, RENAME_NOREPLACE) == 0) {
		*ret = (Move){ .how = "moved", .dest = TAKE_PTR(dest) };
		return 1;
	}
	if (errno == ENOENT)
		return 0;
	r = -errno;
	if (r == -EXDEV) {
		/* The state dir is on another file system: copy, then remove. */
		qfd = open(qdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (qfd >= 0 && copy_tree_as(pfd, base, qfd, strrchr(dest, '/') + 1, 0) == 0 &&
		    remove_tree(pfd, base, -1, 0) == 0) {
			*ret = (Move){ .how = "moved", .dest = TAKE_PTR(dest) };
			return 1;
		}
	}
	/* Last resort: a name nothing trusts, beside it. Kept, not lost. */
	if (asprintf(&alt, "%s.ward-quarantine", base) < 0)
		return -ENOMEM;
	if (renameat2(pfd, base, pfd, alt, RENAME_NOREPLACE) == 0) {
		free(dest);
		if (asprintf(&dest, "%s%s%s", parent, parent[0] ? "/" : "", alt) < 0)
			return -ENOMEM;
		*ret = (Move){ .how = "renamed", .dest = TAKE_PTR(dest) };
		return 1;
	}
	return r;
}

/* ---- the check ---- */

typedef struct Check {
	const QuarantineInput *in;
	int ws_fd;
	char *qroot;
	int moved, failed;
} Check;

static void report(Check *c, const char *rel, const char *why, const Move *m, int error)
{
	cJSON *e = cJSON_CreateObject();

	cJSON_AddStringToObject(e, "path", rel);
	cJSON_AddStringToObject(e, "reason", why);
	if (m) {
		cJSON_AddStringToObject(e, "action", m->how);
		cJSON_AddStringToObject(e, "to", m->dest);
		if (++c->moved <= QUARANTINE_MAX_LINES)
			log_warning("Made during the run, %s: '%s'; %s to '%s'", why, rel, m->how,
				    m->dest);
	} else {
		cJSON_AddStringToObject(e, "action", "failed");
		cJSON_AddStringToObject(e, "error", strerror(-error));
		c->failed++;
		log_error("Made during the run, %s, and could not be moved out of the workspace "
			  "(%s): '%s'. Do not run git or open the project in a tool until it is "
			  "removed.",
			  why, strerror(-error), rel);
	}
	if (c->in->audit)
		(void)audit_write(c->in->audit, "quarantine", e);
	else
		cJSON_Delete(e);
}

static void quarantine_path(Check *c, const char *rel, const char *why)
{
	Move m = {};
	int r = move_one(c->ws_fd, c->qroot, rel, &m);

	if (r > 0)
		report(c, rel, why, &m, 0);
	else if (r < 0)
		report(c, rel, why, NULL, r);
	free(m.dest);
}

static bool same(const ScanItem *a, const ScanItem *b)
{
	return a && b && a->kind == b->kind && a->dev == b->dev && a->ino == b->ino &&
	       (a->mode & S_IFMT) == (b->mode & S_IFMT);
}

static void check_item(Check *c, const ScanItem *it)
{
	if (same(it, workspace_scan_find(c->in->before, it->rel)))
		return;
	switch (it->kind) {
	case SCAN_PROTECTED:
		quarantine_path(c, it->rel, "a protected name");
		break;
	case SCAN_GITDIR_PART:
		quarantine_path(c, it->rel, "a part of a new git dir");
		break;
	case SCAN_LINKED_PARENT:
		quarantine_path(c, it->rel, "a symlink in place of a protected path's parent");
		break;
	case SCAN_TOO_DEEP:
		/* The walk did not look inside: the run was refused had it
		 * been there before, so the command made all of it. */
		quarantine_path(c, it->rel, "too deep to check");
		break;
	case SCAN_GITDIR:
		/* Not a new directory of the user's files, perhaps: move out
		 * what makes git take it for a repository and run code. */
		for (const char *const *p = gitdir_exec_parts; *p; p++) {
			_cleanup_free_ char *rel = NULL;
			if (asprintf(&rel, "%s/%s", it->rel, *p) < 0) {
				report(c, it->rel, "git dir", NULL, -ENOMEM);
				return;
			}
			quarantine_path(c, rel, "a part of a new git dir");
		}
		break;
	case _SCAN_KIND_MAX:
	case _SCAN_KIND_INVALID:
		break;
	}
}

int quarantine_check(const QuarantineInput *in)
{
	_cleanup_(workspace_scan_done) WorkspaceScan after = {};
	_cleanup_free_ char *errrel = NULL;
	Check c = { .in = in, .ws_fd = -EBADF };
	int r;

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c.ws_fd = open(in->workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c.ws_fd < 0)
		r = -errno;
	else
		r = workspace_scan(c.ws_fd, in->protected, &after, &errrel);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	log_debug("After-run check of '%s': %zu directories walked in %lld us", in->workspace,
		  after.n_dirs,
		  (long long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000));
	if (r < 0) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "path", errrel ? errrel : "");
		cJSON_AddStringToObject(e, "action", "check-failed");
		cJSON_AddStringToObject(e, "error", strerror(-r));
		if (in->audit)
			(void)audit_write(in->audit, "quarantine", e);
		else
			cJSON_Delete(e);
		log_error("Could not check '%s%s%s' for what the command made under protected "
			  "names: %s. Treat the workspace as untrusted until it is checked (the next "
			  "ward run checks nothing it did not see before).",
			  in->workspace, errrel ? "/" : "", errrel ? errrel : "", strerror(-r));
		if (c.ws_fd >= 0)
			close(c.ws_fd);
		return r;
	}
	if (asprintf(&c.qroot, "%s/quarantine/%s", in->state_dir, in->run_id) < 0) {
		close(c.ws_fd);
		return -ENOMEM;
	}
	/* Deepest first would not matter: nothing reported is beneath another
	 * (the walk does not descend into what it reports). */
	for (size_t i = 0; i < after.n; i++)
		check_item(&c, &after.items[i]);
	if (c.moved > QUARANTINE_MAX_LINES)
		log_warning("... and %d more paths made under protected names, moved to '%s' (the "
			    "audit log lists each)",
			    c.moved - QUARANTINE_MAX_LINES, c.qroot);
	close(c.ws_fd);
	free(c.qroot);
	return c.failed ? -EIO : c.moved;
}

/* ---- the guard's record: a check that never ran is done by the next run ---- */

/* <state>/pending/<run id>, flock'ed by the guard for as long as it lives:
 *   ward-pending 1
 *   <len> <workspace>
 *   <kind> <dev> <ino> <mode> <len> <rel>     (one per item of the walk before)
 * Lengths, because a name may hold a newline. Written locked under a dot
 * name (which quarantine_recover() skips) and renamed into place: another
 * run's recovery never sees it unlocked or half written. (It did: a run
 * could take the lock between this one's create and its flock, which then
 * failed with EAGAIN, or unlink a record it found still empty.) */
static int pending_write(const QuarantineInput *in, char **ret_path)
{
	_cleanup_free_ char *dir = NULL, *path = NULL, *tmp = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	int fd, r;

	if (asprintf(&dir, "%s/pending", in->state_dir) < 0 ||
	    asprintf(&path, "%s/%s", dir, in->run_id) < 0 ||
	    asprintf(&tmp, "%s/.%s.new", dir, in->run_id) < 0)
		return -ENOMEM;
	if ((r = mkdir_p(dir, 0700)) < 0)
		return r;
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 || !(f = fdopen(dup(fd), "we"))) {
		r = -errno;
		close(fd);
		(void)unlink(tmp);
		return r;
	}
	fprintf(f, "ward-pending 1\n%zu %s\n", strlen(in->workspace), in->workspace);
	for (size_t i = 0; in->before && i < in->before->n; i++) {
		const ScanItem *it = &in->before->items[i];
		fprintf(f, "%d %llu %llu %u %zu %s\n", (int)it->kind, (unsigned long long)it->dev,
			(unsigned long long)it->ino, (unsigned)it->mode, strlen(it->rel), it->rel);
	}
	if (fflush(f) != 0 || rename(tmp, path) < 0) {
		r = -errno;
		close(fd);
		(void)unlink(tmp);
		return r;
	}
	*ret_path = TAKE_PTR(path);
	return fd;
}

/* Read "<len> <bytes>\n" into a new string. */
static char *read_counted(FILE *f)
{
	size_t n;
	char *s;

	if (fscanf(f, "%zu", &n) != 1 || n > 65536 || fgetc(f) != ' ')
		return NULL;
	s = malloc(n + 1);
	if (!s)
		return NULL;
	if (fread(s, 1, n, f) != n || fgetc(f) != '\n') {
		free(s);
		return NULL;
	}
	s[n] = '\0';
	return s;
}

static int pending_read(FILE *f, char **ret_ws, WorkspaceScan *ret)
{
	_cleanup_free_ char *ws = NULL;
	char magic[32];
	int kind, c;

	*ret = (WorkspaceScan){};
	if (!fgets(magic, sizeof(magic), f) || strcmp(magic, "ward-pending 1\n") != 0 ||
	    !(ws = read_counted(f)))
		return -EBADMSG;
	while ((c = fgetc(f)) != EOF) {
		unsigned long long dev, ino;
		unsigned mode;
		ungetc(c, f);
		if (fscanf(f, "%d %llu %llu %u", &kind, &dev, &ino, &mode) != 4)
			break;
		char *rel = read_counted(f);
		if (!rel || kind < 0 || kind >= _SCAN_KIND_MAX) {
			free(rel);
			break;
		}
		if (ret->n == ret->cap) {
			size_t cap = ret->cap ? ret->cap * 2 : 16;
			ScanItem *v = realloc(ret->items, cap * sizeof(*v));
			if (!v) {
				free(rel);
				workspace_scan_done(ret);
				return -ENOMEM;
			}
			ret->items = v;
			ret->cap = cap;
		}
		ret->items[ret->n++] = (ScanItem){ .rel = rel, .dev = (dev_t)dev, .ino = (ino_t)ino,
						   .mode = (mode_t)mode, .kind = (ScanKind)kind };
	}
	*ret_ws = TAKE_PTR(ws);
	return 0;
}

int quarantine_recover(const QuarantineInput *in)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_free_ char *dir = NULL;
	struct dirent *de;
	int total = 0;

	if (asprintf(&dir, "%s/pending", in->state_dir) < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		_cleanup_free_ char *path = NULL, *ws = NULL;
		_cleanup_(workspace_scan_done) WorkspaceScan before = {};
		_cleanup_close_ int fd = -EBADF;
		_cleanup_fclose_ FILE *f = NULL;

		if (de->d_name[0] == '.' || asprintf(&path, "%s/%s", dir, de->d_name) < 0)
			continue;
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		/* Locked: its guard is alive and will check. */
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue;
		f = fdopen(dup(fd), "re");
		if (!f || pending_read(f, &ws, &before) < 0) {
			(void)unlink(path);
			continue;
		}
		if (strcmp(ws, in->workspace) != 0)
			continue; /* that workspace's next run checks it */
		log_warning("The after-run check of run %s in '%s' did not run (its guard was "
			    "killed); checking now: what was made under protected names since is "
			    "moved too",
			    de->d_name, ws);
		QuarantineInput q = *in;
		q.run_id = de->d_name;
		q.before = &before;
		int r = quarantine_check(&q);
		if (r >= 0) {
			total += r;
			(void)unlink(path);
		}
	}
	return total;
}

/* ---- the guard process ---- */

/* Close every fd from 3 up except those in @keep (sorted, ascending). */
static void close_except(const int *keep, size_t n)
{
	unsigned lo = 3;

	for (size_t i = 0; i < n; i++) {
		if (keep[i] < (int)lo)
			continue;
		if ((unsigned)keep[i] > lo)
			(void)syscall(SYS_close_range, lo, (unsigned)keep[i] - 1, 0U);
		lo = (unsigned)keep[i] + 1;
	}
	(void)syscall(SYS_close_range, lo, ~0U, 0U);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int quarantine_guard_start(const QuarantineInput *in, int init_pidfd, pid_t *ret_pid, int *ret_fd)
{
	_cleanup_free_ char *record = NULL;
	_cleanup_close_ int lock = -EBADF;
	int p[2];
	pid_t pid;

	/* Locked before the fork: the guard inherits the lock, so no moment
	 * exists at which a live guard's record looks abandoned. */
	lock = pending_write(in, &record);
	if (lock < 0)
		return lock;
	if (pipe2(p, O_CLOEXEC) < 0) {
		(void)unlink(record);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int r = -errno;
		close(p[0]);
		close(p[1]);
		(void)unlink(record);
		return r;
	}
	if (pid == 0) {
		struct pollfd pfd = { .fd = init_pidfd, .events = POLLIN };
		int keep[6] = { init_pidfd, p[1], in->audit ? audit_fd(in->audit) : -1, lock,
				in->audit ? audit_events_fd(in->audit) : -1,
				in->audit ? audit_stream_fd(in->audit) : -1 };
		sigset_t all;
		int r, null;

		/* Out of ward's session and process group: a harness killing
		 * the group (or closing the terminal) does not skip the check.
		 * It lives only until the sandbox is gone, plus the check. */
		(void)setsid();
		sigfillset(&all);
		(void)sigprocmask(SIG_SETMASK, &all, NULL);
		qsort(keep, 6, sizeof(int), cmp_int);
		close_except(keep, 6);
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			(void)dup2(null, 0);
			(void)dup2(null, 1);
			close(null);
		}
		while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			;
		r = quarantine_check(in);
		/* Checked (or said why not): nothing for a later run to redo. */
		(void)unlink(record);
		(void)!write(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	*ret_pid = pid;
	*ret_fd = p[0];
	return 0;
}

int quarantine_guard_wait(pid_t pid, int fd)
{
	int r = -EPROTO;
	ssize_t n;

	do
		n = read(fd, &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(r))
		r = -EPROTO;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return r;
}
