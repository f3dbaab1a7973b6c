/* Apply: the selected changes become steps (put, mkdir, unlink, rmdir,
 * chmod), each checked for conflicts, backed up, journaled and then done
 * atomically (temporary file beside the target, fsync, rename). Paths are
 * resolved beneath the workspace without following any symlink.
 *
 * Conflicts: a workspace entry changed during the session if its ctime is
 * not older than the session's start (ctime cannot be set from user space),
 * or, for entries this session itself applied or restored, if its inode or
 * ctime differ from what that step left. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "audit/audit.h"
#include "common/cleanup.h"
#include "common/macro.h"
#include "common/strv.h"
#include "cow/cow-fsops.h"
#include "cow/cow-journal.h"
#include "cow/cow-review.h"

typedef struct Step {
	CowOpType type;
	char *path;
	mode_t mode;
	size_t change; /* index into the change list */
} Step;

typedef struct Plan {
	Step *steps;
	size_t n, alloc;
} Plan;

static void plan_done(Plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->steps[i].path);
	free(p->steps);
	*p = (Plan){};
}

static int plan_add(Plan *p, CowOpType t, const char *path, mode_t mode, size_t change)
{
	if (p->n == p->alloc) {
		size_t a = p->alloc ? p->alloc * 2 : 64;
		Step *n = realloc(p->steps, a * sizeof(Step));
		if (!n)
			return -ENOMEM;
		p->steps = n;
		p->alloc = a;
	}
	p->steps[p->n] = (Step){ .type = t, .path = strdup(path), .mode = mode, .change = change };
	if (!p->steps[p->n].path)
		return -ENOMEM;
	p->n++;
	return 0;
}

static int result_refuse(CowResult *r, const char *path, const char *why)
{
	if (strv_extend(&r->refused, path) < 0 || strv_extend(&r->refused_why, why) < 0)
		return -ENOMEM;
	return 0;
}

static int result_fail(CowResult *r, const char *path, int error)
{
	if (strv_extend(&r->failed, path) < 0 || strv_extend(&r->failed_why, strerror(-error)) < 0)
		return -ENOMEM;
	return 0;
}

typedef struct ApplyCtx {
	CowSession *s;
	int ws_fd;
	int upper_fd;
	CowBaseline baseline;
	int64_t start_ns;
	bool force;
	char **created_dirs; /* directories this apply creates, in plan order */
	/* The last parent directory opened beneath the workspace and the upper
	 * dir: most steps share their parent with the one before. */
	char *ws_parent, *up_parent;
	int ws_parent_fd, up_parent_fd;
} ApplyCtx;

/* cow_open_parent() through a one-entry cache; returns a new fd. */
static int open_parent_cached(int root, const char *path, char **cache, int *cache_fd,
			      const char **ret_name)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	int fd;

	*ret_name = slash ? slash + 1 : path;
	if (*cache && strlen(*cache) == n && strncmp(*cache, path, n) == 0)
		return RET_NERRNO(fcntl(*cache_fd, F_DUPFD_CLOEXEC, 3));
	fd = cow_open_parent(root, path, ret_name);
	if (fd < 0)
		return fd;
	free(*cache);
	if (*cache_fd >= 0)
		close(*cache_fd);
	*cache = strndup(path, n);
	*cache_fd = *cache ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -EBADF;
	if (*cache_fd < 0) {
		free(*cache);
		*cache = NULL;
	}
	return fd;
}

/* A removed directory must not be served from the cache afterwards. */
static void parent_cache_forget(ApplyCtx *c, const char *removed)
{
	if (c->ws_parent && cow_path_has_prefix(c->ws_parent, removed)) {
		free(c->ws_parent);
		c->ws_parent = NULL;
		close(c->ws_parent_fd);
		c->ws_parent_fd = -EBADF;
	}
}

/* Did the workspace entry at @path (with stat @st) change during the session? */
static bool changed_since_start(ApplyCtx *c, const char *path, const struct stat *st)
{
	const CowBaselineEntry *b = cow_baseline_find(&c->baseline, path);

	if (S_ISDIR(st->st_mode))
		return false; /* a directory's ctime moves with every entry in it */
	if (b)
		return b->type != cow_type_char(st->st_mode) || b->ino != st->st_ino ||
		       b->dev != st->st_dev || b->ctime_ns != cow_ctime_ns(st);
	return cow_ctime_ns(st) >= c->start_ns;
}

/* Steps that remove the workspace tree at @path, children first; sets
 * *@conflict when an entry in it changed during the session. */
static int plan_remove_tree(ApplyCtx *c, Plan *p, int dfd, const char *name, const char *path,
			    size_t change, int depth, bool *conflict)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_strv_ char **names = NULL;
	struct dirent *de;
	struct stat st;
	int r;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode)) {
		if (changed_since_start(c, path, &st))
			*conflict = true;
		return plan_add(p, COW_OP_UNLINK, path, 0, change);
	}
	if (depth > COW_MAX_DEPTH * 4)
		return -ELOOP;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d)
		return -errno;
	fd = -EBADF;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			if (strv_extend(&names, de->d_name) < 0)
				return -ENOMEM;
	STRV_FOREACH(n, names) {
		_cleanup_free_ char *sub = NULL;
		if (asprintf(&sub, "%s/%s", path, *n) < 0)
			return -ENOMEM;
		r = plan_remove_tree(c, p, dirfd(d), *n, sub, change, depth + 1, conflict);
		if (r < 0)
			return r;
	}
	return plan_add(p, COW_OP_RMDIR, path, 0, change);
}

/* The steps for one change, appended to @p unless refused. Returns 0, or
 * 1 with *@why set when refused. */
static int plan_change(ApplyCtx *c, const CowChange *ch, size_t idx, Plan *p, Plan *deferred,
		       const char **why)
{
	_cleanup_close_ int pfd = -EBADF;
	_cleanup_(plan_done) Plan sub = {};
	const char *name;
	struct stat cur;
	bool has_cur, conflict = false, upper_dir = S_ISDIR(ch->upper_mode);
	mode_t mode = cow_effective_mode(ch->upper_mode);
	int r;

	pfd = cow_open_parent(c->ws_fd, ch->path, &name);
	if (pfd < 0) {
		/* A parent that an earlier step of this apply makes a new directory
		 * (e.g. a symlink replaced by a directory) holds nothing yet. */
		bool parent_planned = false;
		STRV_FOREACH(d, c->created_dirs)
			if (cow_path_has_prefix(ch->path, *d))
				parent_planned = true;
		if (!parent_planned && (pfd == -ELOOP || pfd == -EXDEV || pfd == -ENOTDIR)) {
			*why = "escape";
			return 1;
		}
		if (!parent_planned && pfd != -ENOENT)
			return pfd;
	}
	has_cur = pfd >= 0 && fstatat(pfd, name, &cur, AT_SYMLINK_NOFOLLOW) == 0;

	/* Conflicts are judged against the workspace as it is now. */
	if (has_cur && S_ISDIR(cur.st_mode) &&
	    (ch->kind == COW_DELETED || (ch->kind == COW_TYPE_CHANGED && !upper_dir))) {
		r = plan_remove_tree(c, &sub, pfd, name, ch->path, idx, 0, &conflict);
		if (r < 0)
			return r;
	} else if (has_cur && ch->kind != COW_DIR_REPLACED &&
		   !(ch->kind == COW_MODE_CHANGED && S_ISDIR(cur.st_mode))) {
		conflict = changed_since_start(c, ch->path, &cur);
	}
	if (conflict && !c->force) {
		*why = "conflict";
		return 1;
	}

	switch (ch->kind) {
	case COW_DELETED:
		if (!has_cur)
			return 0;
		if (!S_ISDIR(cur.st_mode))
			r = plan_add(&sub, COW_OP_UNLINK, ch->path, 0, idx);
		else
			r = 0;
		break;
	case COW_ADDED:
	case COW_MODIFIED:
	case COW_SYMLINK_CHANGED:
	case COW_TYPE_CHANGED:
		if (has_cur && !S_ISDIR(cur.st_mode) && upper_dir) {
			r = plan_add(&sub, COW_OP_UNLINK, ch->path, 0, idx);
			if (r < 0)
				return r;
		}
		if (upper_dir) {
			if (has_cur && S_ISDIR(cur.st_mode))
				r = plan_add(&sub, COW_OP_CHMOD, ch->path, mode, idx);
			else {
				/* Created writable; its own mode is set after its
				 * contents (a 0555 directory could not be filled). */
				r = plan_add(&sub, COW_OP_MKDIR, ch->path, 0700, idx);
				if (r >= 0)
					r = strv_extend(&c->created_dirs, ch->path);
				if (r >= 0 && mode != 0700)
					r = plan_add(deferred, COW_OP_CHMOD, ch->path, mode, idx);
			}
		} else
			r = plan_add(&sub, COW_OP_PUT, ch->path, mode, idx);
		break;
	case COW_MODE_CHANGED:
	case COW_DIR_REPLACED:
		if (ch->kind == COW_DIR_REPLACED && !(ch->flags & COW_F_MODE))
			return 0;
		if (upper_dir)
			r = plan_add(deferred, COW_OP_CHMOD, ch->path, mode, idx);
		else
			r = plan_add(&sub, COW_OP_CHMOD, ch->path, mode, idx);
		break;
	case _COW_KIND_MAX:
	case _COW_KIND_INVALID:
	default:
		return -EINVAL;
	}
	if (r < 0)
		return r;
	for (size_t i = 0; i < sub.n; i++) {
		r = plan_add(p, sub.steps[i].type, sub.steps[i].path, sub.steps[i].mode, idx);
		if (r < 0)
			return r;
	}
	return 0;
}

static int backup_entry(int pfd, const char *name, const struct stat *st, int bfd, int i)
{
	char bname[32];

	snprintf(bname, sizeof(bname), "%d", i);
	(void)unlinkat(bfd, bname, 0);
	/* A copy, not a hard link: link(2) bumps the old inode's ctime, and if
	 * the apply dies before journaling this step that file would look
	 * edited during the session (a conflict) forever after. Reading leaves
	 * ctime alone. Flushed per batch (syncfs) before the step runs. */
	return cow_make_tmp_copy(pfd, name, st, bfd, bname, st->st_mode & 07777);
}

static cJSON *step_line(const Step *st, int i, char old_type, mode_t old_mode)
{
	_cleanup_cjson_ cJSON *l = cJSON_CreateObject();
	_cleanup_free_ char *hex = cow_hex_encode(st->path);
	char ot[2] = { old_type, '\0' };

	if (!l || !hex || !cJSON_AddNumberToObject(l, "i", i) ||
	    !cJSON_AddStringToObject(l, "op", cow_op_to_string(st->type)) ||
	    !cJSON_AddStringToObject(l, "p", hex) || !cJSON_AddNumberToObject(l, "m", st->mode) ||
	    !cJSON_AddStringToObject(l, "ot", ot) || !cJSON_AddNumberToObject(l, "om", old_mode))
		return NULL;
	return TAKE_PTR(l);
}

/* A step between looking at the workspace and changing it. */
typedef struct Prepared {
	int pfd, ufd;
	const char *name, *uname;
	struct stat ust;
	char old_type;
	mode_t old_mode;
	int result; /* < 0 failed, 0 nothing to do, 1 to run */
} Prepared;

/* Look at what is there and back it up. */
static int prepare_step(ApplyCtx *c, int bfd, const Step *st, int i, Prepared *pr)
{
	struct stat cur;
	int r;

	pr->old_type = 'n';
	pr->old_mode = 0;
	pr->pfd = open_parent_cached(c->ws_fd, st->path, &c->ws_parent, &c->ws_parent_fd, &pr->name);
	if (pr->pfd < 0)
		return pr->pfd;
	if (fstatat(pr->pfd, pr->name, &cur, AT_SYMLINK_NOFOLLOW) == 0) {
		pr->old_type = cow_type_char(cur.st_mode);
		pr->old_mode = cur.st_mode & 07777;
		if (pr->old_type == '?')
			return -EBADFD;
	} else if (errno != ENOENT)
		return -errno;

	switch (st->type) {
	case COW_OP_PUT:
		if (pr->old_type == 'd')
			return -EISDIR;
		pr->ufd = open_parent_cached(c->upper_fd, st->path, &c->up_parent, &c->up_parent_fd,
					     &pr->uname);
		if (pr->ufd < 0)
			return pr->ufd;
		if (fstatat(pr->ufd, pr->uname, &pr->ust, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		break;
	case COW_OP_MKDIR:
		if (pr->old_type != 'n')
			return -EEXIST;
		break;
	case COW_OP_UNLINK:
		if (pr->old_type == 'n')
			return 0;
		if (pr->old_type == 'd')
			return -EISDIR;
		break;
	case COW_OP_RMDIR:
		if (pr->old_type == 'n')
			return 0;
		if (pr->old_type != 'd')
			return -ENOTDIR;
		break;
	case COW_OP_CHMOD:
		if (pr->old_type == 'n')
			return -ENOENT;
		if (pr->old_type == 'l')
			return -ELOOP;
		break;
	case _COW_OP_MAX:
	case _COW_OP_INVALID:
	default:
		return -EINVAL;
	}
	if ((st->type == COW_OP_PUT || st->type == COW_OP_UNLINK) &&
	    (pr->old_type == 'f' || pr->old_type == 'l')) {
		r = backup_entry(pr->pfd, pr->name, &cur, bfd, i);
		if (r < 0)
			return r;
	}
	return 1;
}

/* Change the workspace. Its journal line is already on disk. */
static int perform_step(CowJournal *j, const Step *st, int i, Prepared *pr)
{
	char tmp[64];
	int r;

	cow_tmp_name(tmp, sizeof(tmp), j->nonce, i, false);
	switch (st->type) {
	case COW_OP_PUT:
		r = cow_replace_with_copy(pr->ufd, pr->uname, &pr->ust, pr->pfd, tmp, pr->name,
					  st->mode);
		return r < 0 ? r : 1;
	case COW_OP_MKDIR:
		return mkdirat(pr->pfd, pr->name, 0700) < 0 ? -errno : 1;
	case COW_OP_UNLINK:
		return unlinkat(pr->pfd, pr->name, 0) < 0 ? -errno : 1;
	case COW_OP_RMDIR:
		return unlinkat(pr->pfd, pr->name, AT_REMOVEDIR) < 0 ? -errno : 1;
	case COW_OP_CHMOD:
		r = cow_chmod_at(pr->pfd, pr->name, st->mode);
		return r < 0 ? r : 1;
	case _COW_OP_MAX:
	case _COW_OP_INVALID:
	default:
		return -EINVAL;
	}
}

static int record_failure(CowJournal *j, int i, int error)
{
	cJSON *l = cJSON_CreateObject();

	if (!l || !cJSON_AddNumberToObject(l, "f", i) || !cJSON_AddNumberToObject(l, "e", -error)) {
		cJSON_Delete(l);
		return -ENOMEM;
	}
	return cow_journal_append(j, l, false);
}

#if WARD_TEST_HOOKS
/* Crash tests: die right before step N changes the workspace
 * (WARD_TEST_COW_KILL_AFTER=N). */
static void maybe_die(size_t step)
{
	const char *e = getenv("WARD_TEST_COW_KILL_AFTER");
	if (e && (size_t)atoi(e) == step)
		_exit(99);
}
#else
static void maybe_die(size_t step)
{
	(void)step;
}
#endif

#define BATCH 128

/* Steps that may share a batch: no step's path is the same as, or above or
 * below, another's, so looking at all of them first sees what each will
 * change. */
static size_t batch_end(const Plan *p, size_t start)
{
	size_t e = start + 1;

	for (; e < p->n && e - start < BATCH; e++)
		for (size_t k = start; k < e; k++)
			if (cow_path_has_prefix(p->steps[e].path, p->steps[k].path) ||
			    cow_path_has_prefix(p->steps[k].path, p->steps[e].path))
				return e;
	return e;
}

static int fail_step(CowJournal *j, const CowChangeList *l, const Step *st, size_t i, int error,
		     bool *failed, CowResult *ret)
{
	if (!failed[st->change]) {
		failed[st->change] = true;
		if (result_fail(ret, l->items[st->change].path, error) < 0)
			return -ENOMEM;
	}
	return j ? record_failure(j, (int)i, error) : 0;
}

/* One batch: look and back up, flush the backups, journal every step with
 * one flush, then change the workspace. A crash anywhere leaves each step
 * either unjournaled (untouched) or journaled with a durable backup. */
static int run_batch(ApplyCtx *c, CowJournal *j, int bfd, const CowChangeList *l, Plan *p,
		     size_t start, size_t end, bool *failed, bool *touched, CowResult *ret)
{
	Prepared pr[BATCH];
	int r = 0;

	for (size_t i = start; i < end; i++) {
		Prepared *x = &pr[i - start];
		*x = (Prepared){ .pfd = -EBADF, .ufd = -EBADF };
		x->result = prepare_step(c, bfd, &p->steps[i], (int)i, x);
	}
	if (syncfs(bfd) < 0) {
		r = -errno;
		goto out;
	}
	for (size_t i = start; i < end; i++) {
		Prepared *x = &pr[i - start];
		if (x->result <= 0)
			continue;
		r = cow_journal_append(j, step_line(&p->steps[i], (int)i, x->old_type, x->old_mode),
				       false);
		if (r < 0)
			goto out;
	}
	if (fdatasync(j->fd) < 0) {
		r = -errno;
		goto out;
	}
	for (size_t i = start; i < end; i++) {
		Prepared *x = &pr[i - start];
		Step *st = &p->steps[i];
		if (x->result == 0)
			continue;
		if (x->result > 0) {
			maybe_die(i);
			x->result = perform_step(j, st, (int)i, x);
			if (st->type == COW_OP_RMDIR)
				parent_cache_forget(c, st->path);
		}
		if (x->result < 0) {
			r = fail_step(j, l, st, i, x->result, failed, ret);
			if (r < 0)
				goto out;
			continue;
		}
		touched[st->change] = true;
		r = cow_journal_result(j, c->ws_fd, (int)i, st->path);
		if (r < 0)
			goto out;
	}
out:
	for (size_t i = start; i < end; i++) {
		if (pr[i - start].pfd >= 0)
			close(pr[i - start].pfd);
		if (pr[i - start].ufd >= 0)
			close(pr[i - start].ufd);
	}
	return r;
}

/* A protected change is applied only when asked for by name: a PATH equal
 * to its path, or a PATH that is itself protected and covers it ("ward
 * apply ID lib/.git" for everything in lib/.git). "." or a parent
 * directory never selects one. */
static bool named_explicitly(char *const *paths, const char *path, char *const *protected_paths)
{
	STRV_FOREACH(p, paths) {
		size_t n = strlen(*p);
		while (n > 1 && (*p)[n - 1] == '/')
			n--;
		if (strncmp(*p, path, n) == 0 && path[n] == '\0')
			return true;
		if (cow_path_has_prefix(path, *p) &&
		    cow_classify_path(*p, n, protected_paths) == COW_PATH_PROTECTED)
			return true;
	}
	return false;
}

static void set_dir_times(int ws_fd, const CowChange *ch)
{
	_cleanup_close_ int pfd = -EBADF;
	const struct timespec t[2] = { ch->upper_atime, ch->upper_mtime };
	const char *name;

	pfd = cow_open_parent(ws_fd, ch->path, &name);
	if (pfd >= 0)
		(void)utimensat(pfd, name, t, AT_SYMLINK_NOFOLLOW);
}

static int execute(ApplyCtx *c, const CowChangeList *l, Plan *p, CowResult *ret)
{
	_cleanup_close_ int bfd = -EBADF;
	_cleanup_free_ bool *failed = NULL;
	_cleanup_free_ bool *touched = NULL;
	CowJournal j = { .fd = -EBADF };
	int dfd = cow_session_dir_fd(c->s), seq, r;
	char bname[64];

	seq = cow_next_seq(dfd);
	if (seq < 0)
		return seq;
	snprintf(bname, sizeof(bname), "ops/%d.d", seq);
	if (mkdirat(dfd, bname, 0700) < 0)
		return -errno;
	bfd = openat(dfd, bname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0)
		return -errno;
	failed = calloc(l->n + 1, sizeof(bool));
	touched = calloc(l->n + 1, sizeof(bool));
	if (!failed || !touched)
		return -ENOMEM;

	char nonce[17];
	r = audit_new_session_id(nonce);
	if (r < 0)
		return r;
	cJSON *h = cJSON_CreateObject();
	if (h && (!cJSON_AddStringToObject(h, "type", "apply") ||
		  !cJSON_AddNumberToObject(h, "seq", seq) ||
		  !cJSON_AddStringToObject(h, "nonce", nonce))) {
		cJSON_Delete(h);
		h = NULL;
	}
	r = cow_journal_begin(dfd, seq, h, &j);
	if (r < 0)
		return r;
	memcpy(j.nonce, nonce, sizeof(nonce));
	for (size_t i = 0; i < p->n;) {
		size_t e = batch_end(p, i);
		r = run_batch(c, &j, bfd, l, p, i, e, failed, touched, ret);
		if (r < 0)
			goto fail;
		i = e;
	}
	/* Directories get the session's times once everything in them is
	 * done (files got theirs with their content). */
	for (size_t i = 0; i < l->n; i++)
		if (touched[i] && !failed[i] && S_ISDIR(l->items[i].upper_mode))
			set_dir_times(c->ws_fd, &l->items[i]);
	/* The new files must be on disk before the commit line says so. */
	if (syncfs(c->ws_fd) < 0) {
		r = -errno;
		goto fail;
	}
	r = cow_journal_commit(&j);
	if (r < 0)
		goto fail;
	cow_journal_close(&j);
	ret->seq = seq;
	for (size_t i = 0; i < l->n; i++)
		if (touched[i] && !failed[i] && strv_extend(&ret->done, l->items[i].path) < 0)
			return -ENOMEM;
	return cow_result_note_removed(ret, c->ws_fd);
fail:
	/* The journal stays: the next open rolls this apply back. */
	cow_journal_close(&j);
	return r;
}

int cow_apply(CowSession *s, const CowApplyOptions *o, CowResult *ret)
{
	_cleanup_(cow_change_list_done) CowChangeList l = {};
	_cleanup_(plan_done) Plan plan = {}, deferred = {};
	_cleanup_strv_ char **unmatched = NULL, **refused_dirs = NULL;
	_cleanup_free_ bool *selected = NULL;
	_cleanup_close_ int ws_fd = -EBADF, upper_fd = -EBADF;
	ApplyCtx c = { .s = s, .force = o->force, .start_ns = cow_session_start_ns(s),
		       .ws_parent_fd = -EBADF, .up_parent_fd = -EBADF };
	CowResult res = {};
	int r;

	if (!cow_session_is_cow(s))
		return -EOPNOTSUPP;
	r = cow_session_scan(s, o->protected_paths, &l);
	if (r < 0)
		return r;
	selected = calloc(l.n + 1, sizeof(bool));
	if (!selected)
		return -ENOMEM;
	r = cow_select(&l, o->paths, selected, &unmatched);
	if (r < 0)
		return r;
	STRV_FOREACH(u, unmatched) {
		CowPathClass k = cow_classify_path(*u, strlen(*u), o->protected_paths);
		r = result_refuse(&res, *u,
				  k == COW_PATH_ESCAPE      ? "escape"
				  : k == COW_PATH_PROTECTED ? "protected"
							    : "no-change");
		if (r < 0)
			goto out;
	}
	ws_fd = cow_session_open_workspace(s);
	if (ws_fd < 0) {
		r = ws_fd;
		goto out;
	}
	upper_fd = openat(cow_session_dir_fd(s), "upper",
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (upper_fd < 0) {
		r = -errno;
		goto out;
	}
	c.ws_fd = ws_fd;
	c.upper_fd = upper_fd;
	r = cow_baseline_load(cow_session_dir_fd(s), &c.baseline);
	if (r < 0)
		goto out;

	for (size_t i = 0; i < l.n; i++) {
		const CowChange *ch = &l.items[i];
		const char *why = NULL;
		if (!selected[i])
			continue;
		if (ch->refused == COW_REFUSE_PROTECTED &&
		    named_explicitly(o->paths, ch->path, o->protected_paths))
			why = NULL;
		else if (ch->refused != COW_REFUSE_NONE)
			why = cow_refusal_to_string(ch->refused);
		else
			STRV_FOREACH(d, refused_dirs)
				if (cow_path_has_prefix(ch->path, *d)) {
					why = cow_refusal_to_string(COW_REFUSE_PARENT);
					break;
				}
		if (!why) {
			r = plan_change(&c, ch, i, &plan, &deferred, &why);
			if (r < 0)
				goto out;
		}
		if (why) {
			r = result_refuse(&res, ch->path, why);
			if (r >= 0 && S_ISDIR(ch->upper_mode))
				r = strv_extend(&refused_dirs, ch->path);
			if (r < 0)
				goto out;
		}
	}
	/* Directory modes last, deepest first, so that read-only directories are
	 * filled before they become read-only. */
	for (size_t i = deferred.n; i-- > 0;) {
		r = plan_add(&plan, deferred.steps[i].type, deferred.steps[i].path,
			     deferred.steps[i].mode, deferred.steps[i].change);
		if (r < 0)
			goto out;
	}
	r = plan.n > 0 ? execute(&c, &l, &plan, &res) : 0;
out:
	cow_baseline_done(&c.baseline);
	strv_free(c.created_dirs);
	free(c.ws_parent);
	free(c.up_parent);
	if (c.ws_parent_fd >= 0)
		close(c.ws_parent_fd);
	if (c.up_parent_fd >= 0)
		close(c.up_parent_fd);
	if (r < 0) {
		cow_result_done(&res);
		return r;
	}
	*ret = res;
	return 0;
}
