/* Session records: <state dir>/sessions/<id>/ holds session.json (metadata,
 * replaced atomically), lock (flock: one holder at a time, so two runs, or a
 * run and an apply, never use the layer together), upper/ and work/ (the
 * overlay layer), ops/ (apply and undo records with their backups) and, while
 * an apply or undo is in progress, journal.jsonl.
 *
 * Creating a session never looks at the workspace's contents: conflicts are
 * found later by comparing each file's ctime with the session's start time
 * (see cow-apply.c), so setup costs the same for 10 or 100,000 files. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "session/session-client.h"
#include "audit/audit.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/macro.h"
#include "common/strv.h"
#include "cow/cow-fsops.h"
#include "cow/cow-internal.h"
#include "cow/cow-review.h"

struct CowSession {
	char *id;
	char *dir;
	char *workspace;
	char *upper;
	char *work;
	char *created; /* RFC 3339 UTC */
	bool cow;
	int runs;
	int64_t start_ns;
	/* The workspace directory's identity when the session was created:
	 * apply, undo and recovery write only into that very directory. */
	bool has_ws_id;
	dev_t ws_dev;
	ino_t ws_ino;
	char **protected_paths;
	const char *recovered; /* what cow_session_open recovered, or NULL */
	int dir_fd;
	int lock_fd;
};

CowSession *cow_session_free(CowSession *s)
{
	if (!s)
		return NULL;
	free(s->id);
	free(s->dir);
	free(s->workspace);
	free(s->upper);
	free(s->work);
	free(s->created);
	strv_free(s->protected_paths);
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	/* Closing the last fd of the lock's open file releases the flock. */
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s);
	return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(CowSession *, cow_session_free)

const char *cow_session_id(const CowSession *s) { return s->id; }
const char *cow_session_workspace(const CowSession *s) { return s->workspace; }
bool cow_session_is_cow(const CowSession *s) { return s->cow; }
const char *cow_session_upper_dir(const CowSession *s) { return s->upper; }
const char *cow_session_work_dir(const CowSession *s) { return s->work; }
int cow_session_dir_fd(const CowSession *s) { return s->dir_fd; }
const char *cow_session_dir(const CowSession *s) { return s->dir; }
int64_t cow_session_start_ns(const CowSession *s) { return s->start_ns; }

/* Waits until a file changed from now on is stamped at or after the
 * session's start (at most a tick of the coarse clock; a clock stepped
 * backwards is not waited for beyond a few ticks). */
void cow_session_settle(const CowSession *s)
{
	for (int i = 0; i < 20; i++) {
		struct timespec now;
		int64_t left;

		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		left = s->start_ns - ((int64_t)now.tv_sec * 1000000000LL + now.tv_nsec);
		if (left <= 0)
			return;
		if (left > 1000000)
			left = 1000000;
		nanosleep(&(struct timespec){ .tv_nsec = (long)left }, NULL);
	}
}
int cow_session_runs(const CowSession *s) { return s->runs; }
const char *cow_session_created(const CowSession *s) { return s->created; }

bool cow_session_id_is_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return false;
	return true;
}

int cow_write_file_atomic(int dirfd, const char *name, const char *data, size_t len)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -EBADF;
	size_t done = 0;

	if (asprintf(&tmp, ".%s.tmp", name) < 0)
		return -ENOMEM;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = RETRY_EINTR(write(fd, data + done, len - done));
		if (n < 0)
			return -errno;
		done += (size_t)n;
	}
	if (fsync(fd) < 0 || renameat(dirfd, tmp, dirfd, name) < 0) {
		int r = -errno;
		(void)unlinkat(dirfd, tmp, 0);
		return r;
	}
	return RET_NERRNO(fsync(dirfd));
}

static int write_meta(CowSession *s)
{
	_cleanup_cjson_ cJSON *j = cJSON_CreateObject();
	_cleanup_free_ char *text = NULL;

	char ns[32];

	/* 64-bit nanoseconds do not fit a double exactly: keep them as a string. */
	snprintf(ns, sizeof(ns), "%lld", (long long)s->start_ns);
	if (!j || !cJSON_AddNumberToObject(j, "v", 1) || !cJSON_AddStringToObject(j, "id", s->id) ||
	    !cJSON_AddStringToObject(j, "created", s->created) ||
	    !cJSON_AddStringToObject(j, "start_ns", ns) ||
	    !cJSON_AddStringToObject(j, "workspace", s->workspace) ||
	    !cJSON_AddBoolToObject(j, "cow", s->cow) || !cJSON_AddNumberToObject(j, "runs", s->runs))
		return -ENOMEM;
	if (s->has_ws_id) {
		snprintf(ns, sizeof(ns), "%llu", (unsigned long long)s->ws_dev);
		if (!cJSON_AddStringToObject(j, "workspace_dev", ns))
			return -ENOMEM;
		snprintf(ns, sizeof(ns), "%llu", (unsigned long long)s->ws_ino);
		if (!cJSON_AddStringToObject(j, "workspace_ino", ns))
			return -ENOMEM;
	}
	cJSON *prot = cJSON_AddArrayToObject(j, "protected");
	if (!prot)
		return -ENOMEM;
	STRV_FOREACH(p, s->protected_paths)
		cJSON_AddItemToArray(prot, cJSON_CreateString(*p));
	text = cJSON_Print(j);
	if (!text)
		return -ENOMEM;
	return cow_write_file_atomic(s->dir_fd, "session.json", text, strlen(text));
}

int cow_read_file_at(int dirfd, const char *name, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, alloc = 4096;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(alloc + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == alloc) {
			if (alloc >= max)
				return -EFBIG;
			alloc *= 2;
			char *n = realloc(buf, alloc + 1);
			if (!n)
				return -ENOMEM;
			buf = n;
		}
		ssize_t n = RETRY_EINTR(read(fd, buf + len, alloc - len));
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (ret_len)
		*ret_len = len;
	*ret = TAKE_PTR(buf);
	return 0;
}

static int read_meta(CowSession *s)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_cjson_ cJSON *j = NULL;
	const cJSON *v;
	int r;

	r = cow_read_file_at(s->dir_fd, "session.json", 1 << 20, &text, NULL);
	if (r < 0)
		return r;
	j = cJSON_Parse(text);
	if (!j)
		return -EBADMSG;
	v = cJSON_GetObjectItemCaseSensitive(j, "workspace");
	if (!cJSON_IsString(v) || v->valuestring[0] != '/')
		return -EBADMSG;
	s->workspace = strdup(v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(j, "created");
	s->created = strdup(cJSON_IsString(v) ? v->valuestring : "");
	if (!s->workspace || !s->created)
		return -ENOMEM;
	v = cJSON_GetObjectItemCaseSensitive(j, "start_ns");
	if (!cJSON_IsString(v))
		return -EBADMSG;
	s->start_ns = strtoll(v->valuestring, NULL, 10);
	s->cow = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "cow"));
	v = cJSON_GetObjectItemCaseSensitive(j, "runs");
	s->runs = cJSON_IsNumber(v) ? v->valueint : 0;
	const cJSON *dev = cJSON_GetObjectItemCaseSensitive(j, "workspace_dev");
	const cJSON *ino = cJSON_GetObjectItemCaseSensitive(j, "workspace_ino");
	if (cJSON_IsString(dev) && cJSON_IsString(ino)) {
		s->ws_dev = (dev_t)strtoull(dev->valuestring, NULL, 10);
		s->ws_ino = (ino_t)strtoull(ino->valuestring, NULL, 10);
		s->has_ws_id = true;
	}
	s->protected_paths = calloc(1, sizeof(char *));
	if (!s->protected_paths)
		return -ENOMEM;
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(j, "protected"))
		if (cJSON_IsString(v) && strv_extend_unique(&s->protected_paths, v->valuestring) < 0)
			return -ENOMEM;
	return 0;
}

static int sessions_dir(const char *state_dir, bool create, char **ret)
{
	char *p;
	int r;

	if (asprintf(&p, "%s/sessions", state_dir) < 0)
		return -ENOMEM;
	if (create) {
		r = mkdir_p(p, 0700);
		if (r < 0) {
			free(p);
			return r;
		}
	}
	*ret = p;
	return 0;
}

static CowSession *session_new(const char *dir, const char *id)
{
	CowSession *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->dir_fd = s->lock_fd = -EBADF;
	s->id = strdup(id);
	s->dir = strdup(dir);
	if (!s->id || !s->dir || asprintf(&s->upper, "%s/upper", dir) < 0 ||
	    asprintf(&s->work, "%s/work", dir) < 0)
		return cow_session_free(s);
	return s;
}

/* Does the session in @dir (<state>/sessions/<id>) have a live sandbox
 * (its control socket answers a connect)? */
static bool session_is_live(const char *dir, const char *id)
{
	_cleanup_free_ char *state = strdup(dir);
	char *slash;
	int fd;

	for (int i = 0; state && i < 2; i++)
		if ((slash = strrchr(state, '/')))
			*slash = 0;
	if (!state || session_client_connect(state, id, &fd) < 0)
		return false;
	close(fd);
	return true;
}

static int take_lock(CowSession *s, bool create)
{
	s->lock_fd = openat(s->dir_fd, "lock",
			    O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
	if (s->lock_fd < 0)
		return -errno;
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	/* A live session's supervisor holds the lock for the session's life
	 * (docs/sessions.md): say so instead of waiting for it. */
	if (errno == EWOULDBLOCK && session_is_live(s->dir, s->id))
		return -EBUSY;
	/* Blocking: a second `ward run --session` or an apply waits for the
	 * holder to finish instead of racing it on the same layer. */
	if (RETRY_EINTR(flock(s->lock_fd, LOCK_EX)) < 0)
		return -errno;
	return 0;
}

int cow_session_create(const char *state_dir, const char *workspace, bool cow, CowSession **ret)
{
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_free_ char *sdir = NULL, *dir = NULL;
	char id[17];
	struct stat wst;
	struct timespec ts;
	struct tm tm;
	char buf[64];
	int r;

	if (workspace[0] != '/')
		return -EINVAL;
	/* The workspace as it is now, reached without following a symlink;
	 * its identity is what apply and undo check before writing. */
	_cleanup_close_ int wfd = cow_open_dir_nofollow(workspace);
	if (wfd < 0)
		return wfd;
	if (fstat(wfd, &wst) < 0)
		return -errno;
	r = mkdir_p(state_dir, 0700);
	if (r < 0)
		return r;
	r = sessions_dir(state_dir, true, &sdir);
	if (r < 0)
		return r;
	r = audit_new_session_id(id);
	if (r < 0)
		return r;
	if (asprintf(&dir, "%s/%s", sdir, id) < 0)
		return -ENOMEM;
	if (mkdir(dir, 0700) < 0)
		return -errno;
	s = session_new(dir, id);
	if (!s)
		return -ENOMEM;
	s->cow = cow;
	s->has_ws_id = true;
	s->ws_dev = wst.st_dev;
	s->ws_ino = wst.st_ino;
	s->workspace = strdup(workspace);
	if (!s->workspace)
		return -ENOMEM;
	s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0)
		return -errno;
	r = take_lock(s, true);
	if (r < 0)
		return r;

	/* The start, from the fine-grained clock: every change made before
	 * this point carries a ctime below it. The kernel stamps files from
	 * its coarse clock, which lags by up to a tick, so a change right after
	 * could still be stamped below it: cow_session_settle() holds the
	 * session's commands back until the coarse clock has passed the start.
	 * An edit made just before the session (an agent's own write, then
	 * `ward run --cow`) is then never taken for a conflict, and no edit
	 * during the session is missed. */
	clock_gettime(CLOCK_REALTIME, &ts);
	s->start_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	gmtime_r(&ts.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	s->created = strdup(buf);
	if (!s->created)
		return -ENOMEM;
	if (cow) {
		if (mkdirat(s->dir_fd, "upper", 0700) < 0 || mkdirat(s->dir_fd, "work", 0700) < 0)
			return -errno;
		/* The merged root takes the upper root's mode and owner: make it
		 * look like the workspace. */
		if (chmod(s->upper, wst.st_mode & 07777) < 0)
			return -errno;
	}
	if (mkdirat(s->dir_fd, "ops", 0700) < 0)
		return -errno;
	r = write_meta(s);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}

static int session_load(const char *state_dir, const char *id, bool lock, CowSession **ret)
{
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_free_ char *sdir = NULL, *dir = NULL;
	int r;

	if (!cow_session_id_is_valid(id))
		return -ENOENT;
	r = sessions_dir(state_dir, false, &sdir);
	if (r < 0)
		return r;
	if (asprintf(&dir, "%s/%s", sdir, id) < 0)
		return -ENOMEM;
	s = session_new(dir, id);
	if (!s)
		return -ENOMEM;
	s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0)
		return errno == ENOTDIR || errno == ELOOP ? -ENOENT : -errno;
	if (lock) {
		r = take_lock(s, false);
		if (r < 0)
			return r;
		/* A discard may have removed it while we waited for the lock. */
		if (faccessat(s->dir_fd, "session.json", F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			return -ENOENT;
	}
	r = read_meta(s);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}

int cow_session_open(const char *state_dir, const char *id, CowSession **ret)
{
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	int r;

	r = session_load(state_dir, id, true, &s);
	if (r < 0)
		return r;
	r = cow_journal_recover(s, &s->recovered);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}

const char *cow_session_recovered(const CowSession *s)
{
	return s->recovered;
}

int cow_session_open_unlocked(const char *state_dir, const char *id, CowSession **ret)
{
	return session_load(state_dir, id, false, ret);
}

int cow_session_open_workspace(const CowSession *s)
{
	_cleanup_close_ int fd = cow_open_dir_nofollow(s->workspace);
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* Sessions made before the identity was recorded have none to check;
	 * the path is still walked without following symlinks. */
	if (s->has_ws_id && (st.st_dev != s->ws_dev || st.st_ino != s->ws_ino))
		return -ESTALE;
	return TAKE_FD(fd);
}

int cow_session_note_protected(CowSession *s, char *const *protected_paths)
{
	STRV_FOREACH(p, protected_paths)
		if (strv_extend_unique(&s->protected_paths, *p) < 0)
			return -ENOMEM;
	return write_meta(s);
}

char *const *cow_session_protected(const CowSession *s)
{
	static char *const empty[] = { NULL };
	return s->protected_paths ? s->protected_paths : empty;
}

int cow_session_note_run(CowSession *s)
{
	s->runs++;
	return write_meta(s);
}

static int scan_session(CowSession *s, char *const *protected_paths, CowChangeList *ret)
{
	_cleanup_close_ int ufd = -EBADF, lfd = -EBADF;

	if (!s->cow)
		return 0;
	ufd = openat(s->dir_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0)
		return -errno;
	lfd = cow_session_open_workspace(s);
	if (lfd < 0)
		return lfd;
	return cow_scan(ufd, lfd, protected_paths, ret);
}

int cow_session_scan(CowSession *s, char *const *protected_paths, CowChangeList *ret)
{
	return scan_session(s, protected_paths, ret);
}

int cow_session_count_changes(CowSession *s, char *const *protected_paths, cJSON **ret)
{
	_cleanup_(cow_change_list_done) CowChangeList l = {};
	_cleanup_cjson_ cJSON *j = cJSON_CreateObject();
	unsigned counts[_COW_KIND_MAX] = {};
	unsigned refused = 0;
	int r;

	if (!j)
		return -ENOMEM;
	r = scan_session(s, protected_paths, &l);
	if (r < 0)
		return r;
	for (size_t i = 0; i < l.n; i++) {
		counts[l.items[i].kind]++;
		if (l.items[i].refused != COW_REFUSE_NONE)
			refused++;
	}
	for (int k = 0; k < _COW_KIND_MAX; k++)
		if (!cJSON_AddNumberToObject(j, cow_kind_to_string(k), counts[k]))
			return -ENOMEM;
	if (!cJSON_AddNumberToObject(j, "total", (double)l.n) ||
	    !cJSON_AddNumberToObject(j, "refused", refused))
		return -ENOMEM;
	*ret = TAKE_PTR(j);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cow_session_list(const char *state_dir, char ***ret)
{
	_cleanup_free_ char *sdir = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_strv_ char **ids = NULL;
	size_t n = 0;
	struct dirent *de;
	int r;

	r = sessions_dir(state_dir, false, &sdir);
	if (r < 0)
		return r;
	ids = calloc(1, sizeof(char *));
	if (!ids)
		return -ENOMEM;
	d = opendir(sdir);
	if (!d) {
		if (errno != ENOENT)
			return -errno;
		*ret = TAKE_PTR(ids);
		return 0;
	}
	while ((de = readdir(d))) {
		if (!cow_session_id_is_valid(de->d_name))
			continue;
		char **nn = realloc(ids, (n + 2) * sizeof(char *));
		if (!nn)
			return -ENOMEM;
		ids = nn;
		ids[n] = strdup(de->d_name);
		if (!ids[n])
			return -ENOMEM;
		ids[++n] = NULL;
	}
	qsort(ids, n, sizeof(char *), cmp_str);
	*ret = TAKE_PTR(ids);
	return 0;
}
