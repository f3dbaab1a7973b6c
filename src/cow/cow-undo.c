/* Undo and discard. Undo takes the newest apply record not yet undone and
 * restores each of its steps, newest first, from the backups in
 * ops/<seq>.d/, refusing an entry that changed again since the apply unless
 * forced. The plan is fixed (and journaled) before anything is touched, so
 * an interrupted undo is finished by running the plan again. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "common/cleanup.h"
#include "common/macro.h"
#include "common/strv.h"
#include "cow/cow-fsops.h"
#include "cow/cow-journal.h"
#include "cow/cow-review.h"

/* The newest committed apply without an undo; 0 when there is none. */
static int find_undoable(int dfd, int *ret_count)
{
	_cleanup_free_ bool *undone = NULL;
	int max = cow_next_seq(dfd), found = 0, count = 0;

	if (max < 0)
		return max;
	undone = calloc((size_t)max + 1, sizeof(bool));
	if (!undone)
		return -ENOMEM;
	for (int seq = max - 1; seq >= 1; seq--) {
		_cleanup_(cow_record_done) CowRecord rec = {};
		if (cow_record_load(dfd, seq, &rec) < 0)
			continue;
		if (rec.is_undo) {
			if (rec.of > 0 && rec.of <= max)
				undone[rec.of] = true;
			continue;
		}
		if (!rec.committed || rec.rolled_back || undone[seq])
			continue;
		if (!found)
			found = seq;
		count++;
	}
	if (ret_count)
		*ret_count = count;
	return found;
}

int cow_session_count_undoable(const CowSession *s)
{
	int n = 0, r = find_undoable(cow_session_dir_fd(s), &n);
	return r < 0 ? r : n;
}

/* Is the entry at @op->path still what the apply left there? */
static bool unchanged_since_apply(int ws_fd, const CowOp *op)
{
	_cleanup_close_ int pfd = -EBADF;
	const char *name;
	struct stat st;
	bool present;

	pfd = cow_open_parent(ws_fd, op->path, &name);
	present = pfd >= 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!present)
		return op->new_absent;
	if (op->new_absent)
		return false;
	if ((st.st_mode & S_IFMT) != (op->new_st.st_mode & S_IFMT) ||
	    st.st_ino != op->new_st.st_ino || st.st_dev != op->new_st.st_dev)
		return false;
	/* A directory's ctime moves whenever an entry in it changes, ours too. */
	return S_ISDIR(st.st_mode) || cow_ctime_ns(&st) == cow_ctime_ns(&op->new_st);
}

static int add_unique(char ***l, const char *s)
{
	return strv_extend_unique(l, s);
}

int cow_undo(CowSession *s, bool force, CowResult *ret)
{
	_cleanup_(cow_record_done) CowRecord a = {};
	_cleanup_close_ int ws_fd = -EBADF, bfd = -EBADF;
	_cleanup_free_ int *plan = NULL;
	_cleanup_strv_ char **refused_paths = NULL, **checked_paths = NULL;
	CowJournal j = { .fd = -EBADF };
	CowResult res = {};
	int dfd = cow_session_dir_fd(s), aseq, useq, r;
	size_t n_plan = 0;
	char name[64];

	aseq = find_undoable(dfd, NULL);
	if (aseq < 0)
		return aseq;
	if (aseq == 0)
		return -ENOENT;
	r = cow_record_load(dfd, aseq, &a);
	if (r < 0)
		return r;
	ws_fd = cow_session_open_workspace(s);
	if (ws_fd < 0)
		return ws_fd;
	snprintf(name, sizeof(name), "ops/%d.d", aseq);
	bfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0)
		return -errno;
	plan = calloc(a.n_ops + 1, sizeof(int));
	if (!plan)
		return -ENOMEM;

	/* Decide everything first. A refused entry also keeps the directories
	 * above it (they would not be empty). */
	for (size_t k = a.n_ops; k-- > 0;) {
		CowOp *op = &a.ops[k];
		bool refuse = false;
		if (!op->begun || !op->done || op->error)
			continue;
		if (op->type == COW_OP_MKDIR)
			STRV_FOREACH(p, refused_paths)
				if (cow_path_has_prefix(*p, op->path) && strcmp(*p, op->path) != 0)
					refuse = true;
		/* Only the newest step on a path left what is there now; older
		 * steps on the same path share its verdict. */
		if (strv_contains(refused_paths, op->path))
			refuse = true;
		else if (!strv_contains(checked_paths, op->path)) {
			if (!force && !unchanged_since_apply(ws_fd, op))
				refuse = true;
			r = strv_extend(&checked_paths, op->path);
			if (r < 0)
				goto fail;
		}
		if (refuse) {
			if (!strv_contains(refused_paths, op->path)) {
				r = add_unique(&refused_paths, op->path);
				if (r >= 0)
					r = strv_extend(&res.refused, op->path);
				if (r >= 0)
					r = strv_extend(&res.refused_why, "changed-since-apply");
				if (r < 0)
					goto fail;
			}
			continue;
		}
		plan[n_plan++] = (int)k;
	}

	useq = cow_next_seq(dfd);
	if (useq < 0) {
		r = useq;
		goto fail;
	}
	cJSON *h = cJSON_CreateObject(), *arr = cJSON_CreateArray();
	if (!h || !arr || !cJSON_AddStringToObject(h, "type", "undo") ||
	    !cJSON_AddNumberToObject(h, "seq", useq) || !cJSON_AddNumberToObject(h, "of", aseq)) {
		cJSON_Delete(h);
		cJSON_Delete(arr);
		r = -ENOMEM;
		goto fail;
	}
	for (size_t k = 0; k < n_plan; k++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(plan[k]));
	cJSON_AddItemToObject(h, "plan", arr);
	r = cow_journal_begin(dfd, useq, h, &j);
	if (r < 0)
		goto fail;
	for (size_t k = 0; k < n_plan; k++) {
		CowOp *op = &a.ops[plan[k]];
		cJSON *l = cJSON_CreateObject();
		if (!l || !cJSON_AddNumberToObject(l, "u", plan[k])) {
			cJSON_Delete(l);
			r = -ENOMEM;
			goto fail_journal;
		}
		/* Not flushed: recovery re-runs the whole plan, whatever these say. */
		r = cow_journal_append(&j, l, false);
		if (r < 0)
			goto fail_journal;
#if WARD_TEST_HOOKS
		const char *e = getenv("WARD_TEST_COW_KILL_AFTER");
		if (e && (size_t)atoi(e) == k)
			_exit(99);
#endif
		r = cow_restore_op(ws_fd, bfd, a.nonce, plan[k], op);
		if (r < 0) {
			if (strv_extend(&res.failed, op->path) < 0 ||
			    strv_extend(&res.failed_why, strerror(-r)) < 0) {
				r = -ENOMEM;
				goto fail_journal;
			}
		} else if (add_unique(&res.done, op->path) < 0) {
			r = -ENOMEM;
			goto fail_journal;
		}
		r = cow_journal_result(&j, ws_fd, plan[k], op->path);
		if (r < 0)
			goto fail_journal;
	}
	/* The restored files must be on disk before the commit line. */
	if (syncfs(ws_fd) < 0) {
		r = -errno;
		goto fail_journal;
	}
	r = cow_journal_commit(&j);
	cow_journal_close(&j);
	if (r < 0)
		goto fail;
	r = cow_result_note_removed(&res, ws_fd);
	if (r < 0)
		goto fail;
	res.seq = useq;
	*ret = res;
	return 0;
fail_journal:
	/* The journal stays; the next open finishes this undo. */
	cow_journal_close(&j);
fail:
	cow_result_done(&res);
	return r;
}

int cow_discard(CowSession *s)
{
	_cleanup_free_ char *parent = NULL, *base = NULL;
	_cleanup_close_ int pfd = -EBADF;
	const char *dir = cow_session_dir(s), *slash = strrchr(dir, '/');
	int r;

	if (!slash)
		return -EINVAL;
	parent = strndup(dir, (size_t)(slash - dir));
	base = strdup(slash + 1);
	if (!parent || !base)
		return -ENOMEM;
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	/* The layer and records go first and session.json last, so that a
	 * discard killed halfway leaves a session that a second discard
	 * finishes. */
	r = 0;
	static const char *const parts[] = { "upper", "work", "ops", "journal.jsonl" };
	for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
		int k = cow_rm_rf_at(cow_session_dir_fd(s), parts[i], 0);
		if (k < 0 && r == 0)
			r = k;
	}
	if (r < 0)
		return r;
	if (unlinkat(cow_session_dir_fd(s), "session.json", 0) < 0 && errno != ENOENT)
		return -errno;
	r = cow_rm_rf_at(pfd, base, 0);
	(void)fsync(pfd);
	return r;
}
