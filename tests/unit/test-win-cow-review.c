/* win-cow-review.c on Linux: diff, apply, undo, discard and recovery of a
 * Windows copy-on-write session, through a WinCowFs over a temporary
 * directory ("C:\x\y" is <tmp>/x/y). The same portable code runs in
 * ward.exe over win32-cow-fs.c (tests/windows/test-wine-cow.sh). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/strv.h"
#include "windows/win-cow-review.h"

static char root[256];

static char *host(const char *win)
{
	char *s = NULL;

	assert_int_equal(strncmp(win, "C:\\", 3), 0);
	assert_true(asprintf(&s, "%s/%s", root, win + 3) > 0);
	for (char *c = s; *c; c++)
		if (*c == '\\')
			*c = '/';
	return s;
}

static WinFileKind p_stat(void *ctx, const char *path)
{
	char *h = host(path);
	struct stat st;
	int r = lstat(h, &st);

	free(h);
	if (r < 0)
		return WIN_FILE_NONE;
	return S_ISDIR(st.st_mode) ? WIN_FILE_DIRECTORY : S_ISREG(st.st_mode) ? WIN_FILE_REGULAR
									      : WIN_FILE_NONE;
}

static int p_list(void *ctx, const char *dir, char ***ret)
{
	char *h = host(dir);
	DIR *d = opendir(h);
	struct dirent *e;

	free(h);
	*ret = NULL;
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			assert_int_equal(strv_extend(ret, e->d_name), 0);
	closedir(d);
	return 0;
}

static int p_mkdir(void *ctx, const char *path)
{
	char *h = host(path);
	int r = mkdir(h, 0755) < 0 && errno != EEXIST ? -errno : 0;

	free(h);
	return r;
}

static int p_remove(void *ctx, const char *path)
{
	char *h = host(path);
	int r = remove(h) < 0 && errno != ENOENT ? -errno : 0;

	free(h);
	return r;
}

static int slurp(const char *h, char **ret, size_t *n)
{
	FILE *f = fopen(h, "rb");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return -errno;
	assert_int_equal(getdelim(&buf, &len, 0, f) >= 0 || feof(f), 1);
	*n = buf ? strlen(buf) : 0;
	fclose(f);
	*ret = buf ? buf : strdup("");
	return 0;
}

static int p_read(void *ctx, const char *path, char **ret)
{
	char *h = host(path);
	size_t n;
	int r = slurp(h, ret, &n);

	free(h);
	return r;
}

static int put(const char *h, const char *text, const char *mode)
{
	FILE *f = fopen(h, mode);

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -EIO;
}

static int p_write(void *ctx, const char *path, const char *text)
{
	char *h = host(path);
	int r = put(h, text, "wb");

	free(h);
	return r;
}

static int p_append(void *ctx, const char *path, const char *line)
{
	char *h = host(path);
	int r = put(h, line, "ab");

	free(h);
	return r;
}

static int p_copy(void *ctx, const char *from, const char *to)
{
	char *text = NULL, *ht = host(to), *tmp = NULL;
	int r = p_read(ctx, from, &text);

	if (r >= 0) {
		assert_true(asprintf(&tmp, "%s.tmp", ht) > 0);
		r = put(tmp, text, "wb");
		if (r >= 0 && rename(tmp, ht) < 0)
			r = -errno;
	}
	free(text);
	free(ht);
	free(tmp);
	return r;
}

static int p_same(void *ctx, const char *a, const char *b)
{
	char *x = NULL, *y = NULL;
	int r = p_read(ctx, a, &x);

	if (r >= 0)
		r = p_read(ctx, b, &y);
	if (r >= 0)
		r = strcmp(x, y) == 0;
	free(x);
	free(y);
	return r;
}

static int p_rename(void *ctx, const char *from, const char *to)
{
	char *a = host(from), *b = host(to);
	int r = rename(a, b) < 0 ? -errno : 0;

	free(a);
	free(b);
	return r;
}

/* Change times: the test stands in the modification time for NTFS's
 * ChangeTime (which no program sets) so that it can date an edit; the
 * clock is the test's, set in setup() well after every file it writes. */
static int64_t test_now;

static int p_ctime(void *ctx, const char *path, int64_t *ret)
{
	char *h = host(path);
	struct stat st;
	int r = lstat(h, &st);

	free(h);
	if (r < 0)
		return -errno;
	*ret = (int64_t)st.st_mtim.tv_sec * 10000000 + st.st_mtim.tv_nsec / 100;
	return 0;
}

static int64_t p_now(void *ctx)
{
	return test_now;
}

/* Date @win's change time @delta seconds after the session's start. */
static void edited(const char *win, int delta)
{
	char *h = host(win);
	int64_t t = test_now + (int64_t)delta * 10000000;
	struct timespec ts[2] = { { .tv_sec = t / 10000000, .tv_nsec = (t % 10000000) * 100 },
				  { .tv_sec = t / 10000000, .tv_nsec = (t % 10000000) * 100 } };

	assert_int_equal(utimensat(AT_FDCWD, h, ts, AT_SYMLINK_NOFOLLOW), 0);
	free(h);
}

/* The lock as flock(2) on a descriptor of its own: a second open of the
 * same file, in this process too, is refused. */
static int p_lock(void *ctx, const char *path, void **ret)
{
	char *h = host(path);
	int fd = open(h, O_RDWR | O_CREAT | O_CLOEXEC, 0600), *box;

	free(h);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		close(fd);
		return e == EWOULDBLOCK ? -EBUSY : -e;
	}
	box = malloc(sizeof(*box));
	assert_non_null(box);
	*box = fd;
	*ret = box;
	return 0;
}

static void p_unlock(void *ctx, void *lock)
{
	close(*(int *)lock);
	free(lock);
}

static const WinCowFs fs = { .stat = p_stat, .list = p_list, .mkdir = p_mkdir,
			     .remove = p_remove, .copy = p_copy, .same = p_same, .read = p_read,
			     .write = p_write, .append = p_append, .rename = p_rename,
			     .ctime = p_ctime, .now = p_now, .lock = p_lock, .unlock = p_unlock };

#define ID "00112233445566aa"
#define STATE "C:\\state"
#define SES "C:\\state\\sessions\\" ID

static void w(const char *win, const char *text)
{
	char *h = host(win);

	assert_int_equal(put(h, text, "wb"), 0);
	free(h);
}

static void md(const char *win)
{
	assert_int_equal(p_mkdir(NULL, win), 0);
}

static char *r_(const char *win)
{
	char *t = NULL;

	if (p_read(NULL, win, &t) < 0)
		return NULL;
	return t;
}

static void assert_file(const char *win, const char *want)
{
	char *t = r_(win);

	if (!want) {
		assert_null(t);
		return;
	}
	assert_non_null(t);
	assert_string_equal(t, want);
	free(t);
}

static int setup(void **state)
{
	char *protected_[] = { ".git", NULL };
	struct timespec now;

	assert_int_equal(clock_gettime(CLOCK_REALTIME, &now), 0);
	test_now = ((int64_t)now.tv_sec + 3600) * 10000000;
	snprintf(root, sizeof(root), "/tmp/ward-win-cow-review.XXXXXX");
	assert_non_null(mkdtemp(root));
	md("C:\\ws");
	md("C:\\ws\\sub");
	md("C:\\ws\\gone");
	md("C:\\ws\\.git");
	md(STATE);
	w("C:\\ws\\f.txt", "original\n");
	w("C:\\ws\\g.txt", "keep\n");
	w("C:\\ws\\sub\\x.txt", "x\n");
	w("C:\\ws\\gone\\a", "a\n");
	w("C:\\ws\\.git\\config", "[core]\n");
	assert_int_equal(win_cow_session_create(&fs, STATE, ID, "C:\\ws", protected_), 0);
	/* What the redirector would leave: a copied-up and changed file, a
	 * copied-up unchanged one, a new file in a new directory, a deleted
	 * file, a deleted directory, a protected change a bypass planted. */
	w(SES "\\upper\\f.txt", "original\nadded\n");
	md(SES "\\upper\\sub");
	w(SES "\\upper\\sub\\x.txt", "x\n");
	md(SES "\\upper\\new");
	w(SES "\\upper\\new\\n.txt", "new\n");
	w(SES "\\whiteout\\g.txt", "");
	w(SES "\\whiteout\\gone", "");
	md(SES "\\upper\\.git");
	w(SES "\\upper\\.git\\config", "planted\n");
	return 0;
}

static int teardown(void **state)
{
	char *cmd = NULL;

	assert_true(asprintf(&cmd, "rm -rf '%s'", root) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

static void test_session_layout(void **state)
{
	WinCowLayout l;

	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &l), 0);
	assert_string_equal(l.workspace, "C:\\ws");
	assert_string_equal(l.upper, SES "\\upper");
	assert_string_equal(l.protected_[0], ".git");
	win_cow_layout_done(&l);
	assert_int_equal(win_cow_session_open(&fs, STATE, "../../x", &l), -EINVAL);
	assert_int_equal(win_cow_session_open(&fs, STATE, "00112233445566ab", &l), -ENOENT);
	/* An id that exists is never reused. */
	assert_int_equal(win_cow_session_create(&fs, STATE, ID, "C:\\ws", NULL), -EEXIST);
}

static void test_changes(void **state)
{
	WinCowLayout l;
	WinCowChange *c;
	size_t n;
	char *j;

	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &l), 0);
	assert_int_equal(win_cow_changes(&fs, &l, &c, &n), 0);
	j = win_cow_changes_json(c, n);
	assert_string_equal(j, "[{\"path\":\".git\\\\config\",\"kind\":\"modified\",\"type\":\"file\","
			       "\"refused\":\"protected\"},"
			       "{\"path\":\"f.txt\",\"kind\":\"modified\",\"type\":\"file\"},"
			       "{\"path\":\"g.txt\",\"kind\":\"deleted\",\"type\":\"file\"},"
			       "{\"path\":\"gone\",\"kind\":\"deleted\",\"type\":\"directory\"},"
			       "{\"path\":\"new\",\"kind\":\"added\",\"type\":\"directory\"},"
			       "{\"path\":\"new\\\\n.txt\",\"kind\":\"added\",\"type\":\"file\"}]");
	free(j);
	win_cow_changes_free(c, n);
	win_cow_layout_done(&l);
}

static void test_apply_undo(void **state)
{
	WinCowLayout l;
	WinCowChange *c;
	size_t n;
	char **out = NULL, *rec;

	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &l), 0);
	/* Everything but the protected change: applied; that one refused (1). */
	assert_int_equal(win_cow_apply(&fs, &l, NULL, false, &out), 1);
	assert_file("C:\\ws\\f.txt", "original\nadded\n");
	assert_file("C:\\ws\\g.txt", NULL);
	assert_file("C:\\ws\\gone\\a", NULL);
	assert_int_equal(p_stat(NULL, "C:\\ws\\gone"), WIN_FILE_NONE);
	assert_file("C:\\ws\\new\\n.txt", "new\n");
	assert_file("C:\\ws\\.git\\config", "[core]\n");
	assert_true(strv_contains(out, "applied f.txt"));
	assert_true(strv_contains(out, "removed gone"));
	assert_true(strv_contains(out, "refused .git\\config: a protected path (host tools trust "
				       "it); to apply it anyway, name it"));
	strv_free(out);
	out = NULL;
	/* Nothing pending but the refused one. */
	assert_int_equal(win_cow_changes(&fs, &l, &c, &n), 0);
	assert_int_equal(n, 1);
	assert_true(c[0].refused);
	win_cow_changes_free(c, n);
	/* The record: Linux's line kinds, committed. */
	rec = r_(SES "\\ops\\1.jsonl");
	assert_non_null(rec);
	assert_true(strncmp(rec, "{\"type\":\"apply\",\"seq\":1}\n", 25) == 0);
	assert_non_null(strstr(rec, "{\"i\":0,\"op\":\"unlink\",\"p\":\"676f6e655c61\",\"ot\":\"f\"}"));
	assert_non_null(strstr(rec, "\"op\":\"put\",\"p\":\"662e747874\",\"ot\":\"f\"}"));
	assert_non_null(strstr(rec, "{\"commit\":true}\n"));
	free(rec);
	assert_file(SES "\\journal.jsonl", NULL);

	/* Undo: byte for byte back, added entries gone. */
	assert_int_equal(win_cow_undo(&fs, &l, &out), 0);
	assert_file("C:\\ws\\f.txt", "original\n");
	assert_file("C:\\ws\\g.txt", "keep\n");
	assert_file("C:\\ws\\gone\\a", "a\n");
	assert_int_equal(p_stat(NULL, "C:\\ws\\new"), WIN_FILE_NONE);
	assert_true(strv_contains(out, "restored f.txt"));
	assert_true(strv_contains(out, "removed new\\n.txt"));
	strv_free(out);
	out = NULL;
	assert_int_equal(win_cow_undo(&fs, &l, &out), -ENOENT);

	/* Named, the protected change is applied; a path selects a subtree. */
	assert_int_equal(win_cow_apply(&fs, &l, (char *[]){ "new", NULL }, false, &out), 0);
	assert_file("C:\\ws\\new\\n.txt", "new\n");
	assert_file("C:\\ws\\f.txt", "original\n");
	strv_free(out);
	out = NULL;
	assert_int_equal(win_cow_apply(&fs, &l, (char *[]){ ".git\\config", NULL }, false, &out), 0);
	assert_file("C:\\ws\\.git\\config", "planted\n");
	strv_free(out);

	assert_int_equal(win_cow_discard(&fs, &l), 0);
	assert_int_equal(p_stat(NULL, SES), WIN_FILE_NONE);
	win_cow_layout_done(&l);
}

/* An apply killed after its second step: the next command rolls it back
 * from the backups, and records it as rolled back (undo skips it). */
static void test_recover_killed_apply(void **state)
{
	WinCowLayout l;
	char **out = NULL;

	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &l), 0);
	md(SES "\\ops\\1.d");
	w(SES "\\ops\\1.d\\0", "original\n");
	w("C:\\ws\\f.txt", "original\nadded\n"); /* step 0 done */
	w("C:\\ws\\brand-new", "x");            /* step 1 done, no result line */
	w(SES "\\journal.jsonl",
	  "{\"type\":\"apply\",\"seq\":1}\n"
	  "{\"i\":0,\"op\":\"put\",\"p\":\"662e747874\",\"ot\":\"f\"}\n{\"d\":0,\"p\":\"662e747874\"}\n"
	  "{\"i\":1,\"op\":\"put\",\"p\":\"6272616e642d6e6577\",\"ot\":\"n\"}\n{\"d\":1,");
	assert_int_equal(win_cow_recover(&fs, &l), 1);
	assert_file("C:\\ws\\f.txt", "original\n");
	assert_file("C:\\ws\\brand-new", NULL);
	assert_file(SES "\\journal.jsonl", NULL);
	assert_int_equal(win_cow_undo(&fs, &l, &out), -ENOENT);
	/* A journal whose step names a path out of the workspace is refused,
	 * not followed. */
	w(SES "\\journal.jsonl", "{\"type\":\"apply\",\"seq\":2}\n"
				 "{\"i\":0,\"op\":\"put\",\"p\":\"2e2e5c78\",\"ot\":\"n\"}\n");
	assert_int_equal(win_cow_recover(&fs, &l), -EBADMSG);
	win_cow_layout_done(&l);
}

/* A workspace file edited during the session, and an entry added under a
 * directory the session deleted: refused (1), left as they are, the other
 * changes applied; --force applies them. */
static void test_apply_conflict(void **state)
{
	WinCowLayout l;
	char **out = NULL;

	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &l), 0);
	w("C:\\ws\\f.txt", "edited by the user\n");
	edited("C:\\ws\\f.txt", 5);
	w("C:\\ws\\gone\\b", "the user's new file\n");
	edited("C:\\ws\\gone\\b", 5);
	assert_int_equal(win_cow_apply(&fs, &l, NULL, false, &out), 1);
	assert_file("C:\\ws\\f.txt", "edited by the user\n");
	assert_file("C:\\ws\\gone\\b", "the user's new file\n");
	assert_file("C:\\ws\\gone\\a", "a\n");
	assert_file("C:\\ws\\g.txt", NULL);          /* not in conflict: applied */
	assert_file("C:\\ws\\new\\n.txt", "new\n");
	assert_true(strv_contains(out, "refused f.txt: changed in the workspace since the session "
				       "started (a conflict); to apply it anyway: apply --force"));
	assert_true(strv_contains(out, "refused gone: changed in the workspace since the session "
				       "started (a conflict); to apply it anyway: apply --force"));
	strv_free(out);
	out = NULL;
	/* An edit dated before the start is no conflict. */
	edited("C:\\ws\\gone\\b", -5);
	assert_int_equal(win_cow_apply(&fs, &l, (char *[]){ "gone", NULL }, false, &out), 0);
	assert_int_equal(p_stat(NULL, "C:\\ws\\gone"), WIN_FILE_NONE);
	strv_free(out);
	out = NULL;
	/* --force: applied over the edit (its backup keeps it for undo). */
	assert_int_equal(win_cow_apply(&fs, &l, (char *[]){ "f.txt", NULL }, true, &out), 0);
	assert_file("C:\\ws\\f.txt", "original\nadded\n");
	strv_free(out);
	out = NULL;
	assert_int_equal(win_cow_undo(&fs, &l, &out), 0);
	assert_file("C:\\ws\\f.txt", "edited by the user\n");
	strv_free(out);
	win_cow_layout_done(&l);
}

/* A session.json without a start (an older one): every workspace entry an
 * apply touches counts as changed; what this session's own steps left
 * (stamps.jsonl) does not, so apply --force, undo, apply again holds. */
static void test_conflict_own_steps(void **state)
{
	WinCowLayout l;
	char **out = NULL;

	w(SES "\\session.json", "{\"v\":1,\"id\":\"" ID "\",\"workspace\":\"C:\\\\ws\",\"cow\":true,"
				"\"runs\":1,\"protected\":[\".git\"]}");
	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &l), 0);
	assert_int_equal(l.start, 0);
	assert_int_equal(win_cow_apply(&fs, &l, NULL, false, &out), 1);
	assert_file("C:\\ws\\f.txt", "original\n");
	assert_file("C:\\ws\\g.txt", "keep\n");
	assert_true(strv_contains(out, "refused g.txt: changed in the workspace since the session "
				       "started (a conflict); to apply it anyway: apply --force"));
	strv_free(out);
	out = NULL;
	assert_int_equal(win_cow_apply(&fs, &l, NULL, true, &out), 1); /* .git still refused */
	assert_file("C:\\ws\\f.txt", "original\nadded\n");
	strv_free(out);
	out = NULL;
	assert_int_equal(win_cow_undo(&fs, &l, &out), 0);
	assert_file("C:\\ws\\f.txt", "original\n");
	strv_free(out);
	out = NULL;
	/* The undo's own restores are stamped: no conflict now. */
	assert_int_equal(win_cow_apply(&fs, &l, (char *[]){ "f.txt", "g.txt", NULL }, false, &out),
			 0);
	assert_file("C:\\ws\\f.txt", "original\nadded\n");
	assert_file("C:\\ws\\g.txt", NULL);
	strv_free(out);
	win_cow_layout_done(&l);
}

#define SEC INT64_C(10000000)

/* Several runs: the first run's entries date from the session's start;
 * an entry a later run made dates from that run's start, so a workspace
 * edit between the runs to a file only the later run took is no conflict,
 * one to a file the first run took is; an entry under a recorded
 * directory takes its parent's; a run that never ended dates what it
 * made from its own start, not from the next run's. */
static void test_runs_baseline(void **state)
{
	const int64_t s0 = test_now;
	WinCowLayout l, again;
	char **out = NULL, *meta;

	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &l), 0);
	assert_int_equal(l.runs, 1);
	assert_int_equal(l.open_run, s0); /* the run that made it */
	assert_int_equal(win_cow_baseline(&l, "f.txt"), s0);
	assert_int_equal(win_cow_run_end(&fs, &l), 0);
	assert_int_equal(l.open_run, 0);
	meta = r_(SES "\\session.json");
	assert_null(strstr(meta, "open_run"));
	free(meta);
	assert_int_equal(win_cow_baseline(&l, "f.txt"), s0);
	assert_int_equal(win_cow_baseline(&l, "gone"), s0);
	assert_int_equal(win_cow_baseline(&l, "gone\\a"), s0); /* the parent's */

	/* Between the runs the user edits h.txt (new) and f.txt; run 2 takes
	 * h.txt (its copy-up has the edit). */
	w("C:\\ws\\h.txt", "h\n");
	edited("C:\\ws\\h.txt", 50);
	w("C:\\ws\\f.txt", "edited between the runs\n");
	edited("C:\\ws\\f.txt", 50);
	test_now = s0 + 100 * SEC;
	assert_int_equal(win_cow_run_begin(&fs, &l, (char *[]){ "extra", ".git", NULL }), 0);
	assert_int_equal(l.runs, 2);
	assert_int_equal(l.open_run, s0 + 100 * SEC);
	assert_true(strv_contains(l.protected_, "extra"));
	assert_int_equal(strv_length(l.protected_), 2); /* .git once */
	w(SES "\\upper\\h.txt", "h\nrun 2\n");
	assert_int_equal(win_cow_baseline(&l, "h.txt"), s0 + 100 * SEC); /* the open run's */
	assert_int_equal(win_cow_run_end(&fs, &l), 0);
	assert_int_equal(win_cow_baseline(&l, "h.txt"), s0 + 100 * SEC);
	assert_int_equal(win_cow_baseline(&l, "f.txt"), s0);

	/* What is on disk reads back the same; session.json counts 2 runs
	 * and keeps the merged protected paths. */
	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &again), 0);
	assert_int_equal(again.runs, 2);
	assert_int_equal(again.open_run, 0);
	assert_int_equal(win_cow_baseline(&again, "h.txt"), s0 + 100 * SEC);
	assert_int_equal(win_cow_baseline(&again, "F.TXT"), s0); /* Windows names */
	assert_true(strv_contains(again.protected_, "extra"));
	win_cow_layout_done(&again);

	assert_int_equal(win_cow_apply(&fs, &l, (char *[]){ "f.txt", "h.txt", NULL }, false, &out),
			 1);
	assert_true(strv_contains(out, "refused f.txt: changed in the workspace since the session "
				       "started (a conflict); to apply it anyway: apply --force"));
	assert_true(strv_contains(out, "applied h.txt"));
	assert_file("C:\\ws\\f.txt", "edited between the runs\n");
	assert_file("C:\\ws\\h.txt", "h\nrun 2\n");
	strv_free(out);

	/* Run 3 is killed (no end): what it made dates from its start when
	 * run 4 begins, not from run 4's. */
	test_now = s0 + 200 * SEC;
	assert_int_equal(win_cow_run_begin(&fs, &l, NULL), 0);
	w(SES "\\upper\\late.txt", "late\n");
	win_cow_layout_done(&l);
	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &l), 0);
	assert_int_equal(l.open_run, s0 + 200 * SEC);
	assert_int_equal(win_cow_baseline(&l, "late.txt"), s0 + 200 * SEC);
	test_now = s0 + 300 * SEC;
	assert_int_equal(win_cow_run_begin(&fs, &l, NULL), 0);
	assert_int_equal(l.runs, 4);
	assert_int_equal(win_cow_baseline(&l, "late.txt"), s0 + 200 * SEC);
	win_cow_layout_done(&l);
}

/* baseline.jsonl as hostile as a crash leaves it: a torn last line, a
 * line that is not JSON, a path that is not hex: skipped (those paths
 * fall back to an earlier time); the first record of a path holds. */
static void test_baseline_file(void **state)
{
	WinCowLayout l;

	w(SES "\\baseline.jsonl", "{\"p\":\"662e747874\",\"t\":\"5\"}\n"
				   "not json\n"
				   "{\"p\":\"zz\",\"t\":\"7\"}\n"
				   "{\"p\":\"662e747874\",\"t\":\"9\"}\n"
				   "{\"p\":\"672e747874\",\"t\":\"-1\"}\n"
				   "{\"p\":\"6e6577\",\"t\":\"3\"}\n"
				   "{\"p\":\"672e747874\",\"t\":\"4");
	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &l), 0);
	assert_int_equal(l.n_base, 2);
	assert_int_equal(win_cow_baseline(&l, "f.txt"), 5);
	assert_int_equal(win_cow_baseline(&l, "new\\n.txt"), 3);
	assert_int_equal(win_cow_baseline(&l, "g.txt"), l.open_run);
	l.open_run = 0;
	assert_int_equal(win_cow_baseline(&l, "g.txt"), l.start);
	win_cow_layout_done(&l);
}

/* The lock: a second holder is refused at once (-EBUSY), not waited on;
 * let go, it can be taken again; no session, no lock; discard while
 * holding it leaves nothing once it is let go. */
static void test_lock(void **state)
{
	void *a = NULL, *b = NULL;
	WinCowLayout l;

	assert_int_equal(win_cow_session_lock(&fs, STATE, ID, &a), 0);
	assert_int_equal(win_cow_session_lock(&fs, STATE, ID, &b), -EBUSY);
	assert_null(b);
	win_cow_session_unlock(&fs, a);
	assert_int_equal(win_cow_session_lock(&fs, STATE, ID, &b), 0);
	assert_int_equal(win_cow_session_lock(&fs, STATE, "00112233445566ab", &a), -ENOENT);
	assert_int_equal(win_cow_session_lock(&fs, STATE, "..\\..\\x", &a), -EINVAL);
	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &l), 0);
	assert_int_equal(win_cow_discard(&fs, &l), 0);
	assert_file(SES "\\session.json", NULL);
	win_cow_session_unlock(&fs, b);
	win_cow_discard_finish(&fs, &l);
	win_cow_layout_done(&l);
	assert_int_equal(p_stat(NULL, SES), WIN_FILE_NONE);
	assert_int_equal(win_cow_session_open(&fs, STATE, ID, &l), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_session_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_undo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_killed_apply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_own_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs_baseline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
