/* The journal: writing it, parsing it back, restoring a step, building the
 * conflict baseline, and recovering an interrupted apply (rolled back) or
 * undo (finished) when the session is next opened. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "cow/cow-fsops.h"
#include "cow/cow-journal.h"
#include "cow/cow-review.h"

static const char *const op_table[_COW_OP_MAX] = {
	[COW_OP_PUT] = "put",
	[COW_OP_MKDIR] = "mkdir",
	[COW_OP_UNLINK] = "unlink",
	[COW_OP_RMDIR] = "rmdir",
	[COW_OP_CHMOD] = "chmod",
};

const char *cow_op_to_string(CowOpType t)
{
	return t >= 0 && t < _COW_OP_MAX ? op_table[t] : NULL;
}

CowOpType cow_op_from_string(const char *s)
{
	for (int i = 0; i < _COW_OP_MAX; i++)
		if (strcmp(op_table[i], s) == 0)
			return i;
	return _COW_OP_INVALID;
}

char cow_type_char(mode_t m)
{
	if (S_ISREG(m))
		return 'f';
	if (S_ISLNK(m))
		return 'l';
	if (S_ISDIR(m))
		return 'd';
	return '?';
}

int64_t cow_ctime_ns(const struct stat *st)
{
	return (int64_t)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
}

void cow_tmp_name(char *buf, size_t size, const char *nonce, int i, bool restore)
{
	snprintf(buf, size, ".#ward-%s-%d%s", nonce, i, restore ? "-r" : "");
}

void cow_record_done(CowRecord *r)
{
	for (size_t i = 0; i < r->n_ops; i++)
		free(r->ops[i].path);
	free(r->ops);
	free(r->plan);
	free(r->restored);
	*r = (CowRecord){};
}

static int num(const cJSON *o, const char *k, long long *ret)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (cJSON_IsNumber(v)) {
		*ret = (long long)v->valuedouble;
		return 1;
	}
	if (cJSON_IsString(v)) {
		*ret = strtoll(v->valuestring, NULL, 10);
		return 1;
	}
	return 0;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static CowOp *op_slot(CowRecord *r, long long i)
{
	if (i < 0 || i > 10000000)
		return NULL;
	if ((size_t)i >= r->n_ops) {
		CowOp *n = realloc(r->ops, ((size_t)i + 1) * sizeof(CowOp));
		if (!n)
			return NULL;
		memset(n + r->n_ops, 0, ((size_t)i + 1 - r->n_ops) * sizeof(CowOp));
		r->ops = n;
		r->n_ops = (size_t)i + 1;
	}
	return &r->ops[i];
}

void cow_record_parse_stat(const cJSON *l, CowOp *op)
{
	const char *t = str(l, "t");
	long long v;

	op->new_absent = !t || t[0] == 'n';
	memset(&op->new_st, 0, sizeof(op->new_st));
	if (num(l, "dev", &v))
		op->new_st.st_dev = (dev_t)v;
	if (num(l, "ino", &v))
		op->new_st.st_ino = (ino_t)v;
	if (num(l, "ct", &v)) {
		op->new_st.st_ctim.tv_sec = v / 1000000000LL;
		op->new_st.st_ctim.tv_nsec = v % 1000000000LL;
	}
	if (num(l, "m", &v))
		op->new_st.st_mode = (mode_t)v;
	if (num(l, "sz", &v))
		op->new_st.st_size = (off_t)v;
}

static int parse_line(CowRecord *r, const cJSON *l)
{
	long long i, v;
	const char *s;

	if (str(l, "type")) {
		r->is_undo = strcmp(str(l, "type"), "undo") == 0;
		if (num(l, "seq", &v))
			r->seq = (int)v;
		if (num(l, "of", &v))
			r->of = (int)v;
		if (str(l, "nonce"))
			snprintf(r->nonce, sizeof(r->nonce), "%s", str(l, "nonce"));
		else
			snprintf(r->nonce, sizeof(r->nonce), "%d", r->seq);
		const cJSON *plan = cJSON_GetObjectItemCaseSensitive(l, "plan");
		if (cJSON_IsArray(plan)) {
			int n = cJSON_GetArraySize(plan);
			r->plan = calloc((size_t)n + 1, sizeof(int));
			if (!r->plan)
				return -ENOMEM;
			const cJSON *e;
			cJSON_ArrayForEach(e, plan)
				r->plan[r->n_plan++] = e->valueint;
		}
		return 0;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(l, "commit"))) {
		r->committed = true;
		return 0;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(l, "rollback"))) {
		r->rolled_back = true;
		return 0;
	}
	if (num(l, "i", &i)) {
		CowOp *op = op_slot(r, i);
		if (!op)
			return -EBADMSG;
		s = str(l, "op");
		if (!s || cow_op_from_string(s) < 0 || !str(l, "p"))
			return -EBADMSG;
		free(op->path);
		op->type = cow_op_from_string(s);
		op->path = cow_hex_decode(str(l, "p"));
		if (!op->path)
			return -EBADMSG;
		op->mode = num(l, "m", &v) ? (mode_t)v : 0;
		s = str(l, "ot");
		op->old_type = s ? s[0] : 'n';
		op->old_mode = num(l, "om", &v) ? (mode_t)v : 0;
		op->begun = true;
		return 0;
	}
	if (num(l, "d", &i) && !r->is_undo && !r->rolled_back) {
		CowOp *op = op_slot(r, i);
		if (!op)
			return -EBADMSG;
		op->done = true;
		cow_record_parse_stat(l, op);
		return 0;
	}
	/* Result lines of a rollback or an undo: that step is restored. */
	if (num(l, "d", &i) && (r->is_undo || r->rolled_back)) {
		if (i < 0 || i > 10000000)
			return -EBADMSG;
		if ((size_t)i >= r->n_restored) {
			bool *n = realloc(r->restored, (size_t)i + 1);
			if (!n)
				return -ENOMEM;
			memset(n + r->n_restored, 0, (size_t)i + 1 - r->n_restored);
			r->restored = n;
			r->n_restored = (size_t)i + 1;
		}
		r->restored[i] = true;
		return 0;
	}
	if (num(l, "f", &i) && !r->is_undo) {
		CowOp *op = op_slot(r, i);
		if (!op)
			return -EBADMSG;
		op->error = num(l, "e", &v) ? (int)v : EIO;
		return 0;
	}
	return 0;
}

int cow_record_parse(const char *text, CowRecord *ret)
{
	CowRecord r = {};
	const char *p = text;
	int k;

	for (;;) {
		const char *nl = strchr(p, '\n');
		if (!nl)
			break; /* a torn last line: the step it described never ran */
		_cleanup_free_ char *line = strndup(p, (size_t)(nl - p));
		if (!line) {
			cow_record_done(&r);
			return -ENOMEM;
		}
		_cleanup_cjson_ cJSON *l = cJSON_Parse(line);
		if (l) {
			k = parse_line(&r, l);
			if (k < 0) {
				cow_record_done(&r);
				return k;
			}
		}
		p = nl + 1;
	}
	*ret = r;
	return 0;
}

int cow_record_load(int session_dfd, int seq, CowRecord *ret)
{
	_cleanup_free_ char *text = NULL;
	char name[64];
	int r;

	snprintf(name, sizeof(name), "ops/%d.jsonl", seq);
	r = cow_read_file_at(session_dfd, name, 1 << 30, &text, NULL);
	if (r < 0)
		return r;
	return cow_record_parse(text, ret);
}

int cow_next_seq(int session_dfd)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int fd, max = 0;

	fd = openat(session_dfd, "ops", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (end != de->d_name && (strcmp(end, ".jsonl") == 0 || strcmp(end, ".d") == 0) &&
		    v > max && v < 1000000000)
			max = (int)v;
	}
	return max + 1;
}

static int write_line(int fd, cJSON *line)
{
	_cleanup_free_ char *text = cJSON_PrintUnformatted(line);
	size_t len, done = 0;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	text[len] = '\n';
	/* One write(2) per line (O_APPEND), so a kill leaves at most one torn
	 * line, at the end. */
	while (done < len + 1) {
		ssize_t n = RETRY_EINTR(write(fd, text + done, len + 1 - done));
		if (n < 0)
			return -errno;
		done += (size_t)n;
	}
	return 0;
}

int cow_journal_begin(int session_dfd, int seq, cJSON *header, CowJournal *ret)
{
	_cleanup_cjson_ cJSON *h = header;
	_cleanup_close_ int fd = -EBADF;
	int r;

	if (!h)
		return -ENOMEM;
	fd = openat(session_dfd, "journal.jsonl",
		    O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = write_line(fd, h);
	if (r < 0)
		return r;
	if (fsync(fd) < 0 || fsync(session_dfd) < 0)
		return -errno;
	*ret = (CowJournal){ .fd = TAKE_FD(fd), .session_dfd = session_dfd, .seq = seq };
	return 0;
}

int cow_journal_append(CowJournal *j, cJSON *line, bool sync)
{
	_cleanup_cjson_ cJSON *l = line;
	int r;

	if (!l)
		return -ENOMEM;
	r = write_line(j->fd, l);
	if (r < 0)
		return r;
	return sync ? RET_NERRNO(fdatasync(j->fd)) : 0;
}

int cow_journal_result(CowJournal *j, int ws_fd, int i, const char *path)
{
	_cleanup_cjson_ cJSON *l = cJSON_CreateObject();
	_cleanup_free_ char *hex = cow_hex_encode(path);
	_cleanup_close_ int pfd = -EBADF;
	const char *name;
	struct stat st;
	char buf[32];

	if (!l || !hex)
		return -ENOMEM;
	cJSON_AddNumberToObject(l, "d", i);
	cJSON_AddStringToObject(l, "p", hex);
	pfd = cow_open_parent(ws_fd, path, &name);
	if (pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		cJSON_AddStringToObject(l, "t", "n");
	} else {
		buf[0] = cow_type_char(st.st_mode);
		buf[1] = '\0';
		cJSON_AddStringToObject(l, "t", buf);
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)st.st_dev);
		cJSON_AddStringToObject(l, "dev", buf);
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)st.st_ino);
		cJSON_AddStringToObject(l, "ino", buf);
		snprintf(buf, sizeof(buf), "%lld", (long long)cow_ctime_ns(&st));
		cJSON_AddStringToObject(l, "ct", buf);
		cJSON_AddNumberToObject(l, "m", st.st_mode);
		cJSON_AddNumberToObject(l, "sz", (double)st.st_size);
	}
	return cow_journal_append(j, TAKE_PTR(l), false);
}

int cow_journal_commit(CowJournal *j)
{
	_cleanup_close_ int ops = -EBADF;
	cJSON *l = cJSON_CreateObject();
	char name[64];
	int r;

	if (!l || !cJSON_AddTrueToObject(l, "commit")) {
		cJSON_Delete(l);
		return -ENOMEM;
	}
	r = cow_journal_append(j, l, true);
	if (r < 0)
		return r;
	snprintf(name, sizeof(name), "ops/%d.jsonl", j->seq);
	if (renameat(j->session_dfd, "journal.jsonl", j->session_dfd, name) < 0)
		return -errno;
	ops = openat(j->session_dfd, "ops", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ops >= 0)
		(void)fsync(ops);
	return RET_NERRNO(fsync(j->session_dfd));
}

void cow_journal_close(CowJournal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -EBADF;
}

static int restore_content(int pfd, const char *name, int backup_dfd, int i, const char *tmp,
			   mode_t mode)
{
	char bname[32];
	struct stat bst;

	snprintf(bname, sizeof(bname), "%d", i);
	if (fstatat(backup_dfd, bname, &bst, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	(void)unlinkat(pfd, tmp, 0);
	return cow_replace_with_copy(backup_dfd, bname, &bst, pfd, tmp, name, mode & 07777);
}

int cow_restore_op(int ws_fd, int backup_dfd, const char *nonce, int i, const CowOp *op)
{
	_cleanup_close_ int pfd = -EBADF;
	const char *name;
	char tmp[64], atmp[64];

	pfd = cow_open_parent(ws_fd, op->path, &name);
	if (pfd < 0) {
		/* No parent: nothing of ours can be there, nothing to remove (or
		 * to chmod). */
		if (pfd == -ENOENT && (op->old_type == 'n' || op->type == COW_OP_CHMOD))
			return 0;
		return pfd;
	}
	cow_tmp_name(tmp, sizeof(tmp), nonce, i, true);
	cow_tmp_name(atmp, sizeof(atmp), nonce, i, false);
	/* A crash may have left apply's temporary file behind. */
	(void)unlinkat(pfd, atmp, 0);

	switch (op->type) {
	case COW_OP_PUT:
	case COW_OP_UNLINK:
		if (op->old_type == 'f' || op->old_type == 'l')
			return restore_content(pfd, name, backup_dfd, i, tmp, op->old_mode);
		/* A directory here was put back by a later step of the same plan
		 * (dir -> file changes), seen when a plan runs again after a crash. */
		if (unlinkat(pfd, name, 0) < 0 && errno != ENOENT && errno != EISDIR)
			return -errno;
		return 0;
	case COW_OP_MKDIR:
		/* Likewise a file put back here (file -> dir changes). */
		if (unlinkat(pfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && errno != ENOTDIR)
			return -errno;
		return 0;
	case COW_OP_RMDIR:
		if (mkdirat(pfd, name, 0700) < 0 && errno != EEXIST)
			return -errno;
		return cow_chmod_at(pfd, name, op->old_mode & 07777);
	case COW_OP_CHMOD: {
		/* Gone means a later restore of the same plan removed it (a new
		 * directory's mode is set after its MKDIR): run again after a
		 * crash, there is nothing left to do. */
		int r = cow_chmod_at(pfd, name, op->old_mode & 07777);
		return r == -ENOENT ? 0 : r;
	}
	case _COW_OP_MAX:
	case _COW_OP_INVALID:
		break;
	}
	return -EINVAL;
}

static int open_backup_dir(int session_dfd, int seq)
{
	char name[64];

	snprintf(name, sizeof(name), "ops/%d.d", seq);
	return RET_NERRNO(openat(session_dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

/* Roll back an apply that did not commit: every step that began is
 * restored, newest first. Steps that never ran restore to what is already
 * there. */
static int rollback_apply(CowSession *s, CowRecord *rec, int ws_fd, CowJournal *j)
{
	_cleanup_close_ int bfd = open_backup_dir(cow_session_dir_fd(s), rec->seq);
	cJSON *l;
	int r;

	if (!rec->rolled_back) {
		l = cJSON_CreateObject();
		if (!l || !cJSON_AddTrueToObject(l, "rollback")) {
			cJSON_Delete(l);
			return -ENOMEM;
		}
		r = cow_journal_append(j, l, true);
		if (r < 0)
			return r;
	}
	for (size_t k = rec->n_ops; k-- > 0;) {
		CowOp *op = &rec->ops[k];
		/* Skip what an earlier, interrupted rollback already restored. */
		if (!op->begun || (k < rec->n_restored && rec->restored[k]))
			continue;
		r = cow_restore_op(ws_fd, bfd, rec->nonce, (int)k, op);
		if (r < 0)
			return r;
		r = cow_journal_result(j, ws_fd, (int)k, op->path);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Finish an undo: its plan was fixed before it started, and every restore
 * is idempotent, so simply run the whole plan again. */
static int finish_undo(CowSession *s, CowRecord *rec, int ws_fd, CowJournal *j)
{
	_cleanup_(cow_record_done) CowRecord a = {};
	_cleanup_close_ int bfd = -EBADF;
	int r;

	r = cow_record_load(cow_session_dir_fd(s), rec->of, &a);
	if (r < 0)
		return r;
	bfd = open_backup_dir(cow_session_dir_fd(s), rec->of);
	for (size_t k = 0; k < rec->n_plan; k++) {
		int i = rec->plan[k];
		if (i < 0 || (size_t)i >= a.n_ops || !a.ops[i].begun)
			continue;
		if ((size_t)i < rec->n_restored && rec->restored[i])
			continue; /* restored before the crash */
		r = cow_restore_op(ws_fd, bfd, a.nonce, i, &a.ops[i]);
		if (r < 0)
			return r;
		r = cow_journal_result(j, ws_fd, i, a.ops[i].path);
		if (r < 0)
			return r;
	}
	return 0;
}

bool cow_session_has_journal(const CowSession *s)
{
	return faccessat(cow_session_dir_fd(s), "journal.jsonl", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int cow_journal_recover(CowSession *s, const char **ret_what)
{
	_cleanup_(cow_record_done) CowRecord rec = {};
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int ws_fd = -EBADF;
	CowJournal j = { .fd = -EBADF };
	int dfd = cow_session_dir_fd(s), r;

	if (ret_what)
		*ret_what = NULL;
	r = cow_read_file_at(dfd, "journal.jsonl", 1 << 30, &text, NULL);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = cow_record_parse(text, &rec);
	if (r < 0)
		return r;
	if (rec.seq <= 0)
		/* Killed before the header was complete: nothing ran. */
		return RET_NERRNO(unlinkat(dfd, "journal.jsonl", 0));
	ws_fd = cow_session_open_workspace(s);
	if (ws_fd < 0)
		return ws_fd;
	j.fd = openat(dfd, "journal.jsonl", O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (j.fd < 0)
		return -errno;
	j.session_dfd = dfd;
	j.seq = rec.seq;
	/* A torn last line must not glue onto the next one. */
	if (text[0] && text[strlen(text) - 1] != '\n')
		(void)write(j.fd, "\n", 1);
	if (!rec.committed) {
		if (rec.is_undo)
			r = finish_undo(s, &rec, ws_fd, &j);
		else
			r = rollback_apply(s, &rec, ws_fd, &j);
		if (r >= 0 && syncfs(ws_fd) < 0)
			r = -errno;
		if (r < 0) {
			cow_journal_close(&j);
			return r;
		}
	}
	r = cow_journal_commit(&j);
	cow_journal_close(&j);
	if (r < 0)
		return r;
	if (ret_what)
		*ret_what = rec.committed ? "committed" : rec.is_undo ? "finished-undo" : "rolled-back-apply";
	return 0;
}

