/* Sessions, apply, undo, journal recovery and discard on hand-built upper
 * dirs in a temp state dir. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <sys/wait.h>

#include "cow-test-util.h"
#include "common/strv.h"
#include "cow/cow-review.h"

typedef struct Fix {
	char *root, *state, *ws, *outside;
	CowSession *s;
	char id[65];
} Fix;

static int setup(void **state)
{
	Fix *f = calloc(1, sizeof(*f));
	f->root = tu_mkdtemp();
	f->state = tu_path(f->root, "state");
	f->ws = tu_path(f->root, "ws");
	f->outside = tu_path(f->root, "outside");
	tu_dir(f->root, "ws", 0755);
	tu_dir(f->root, "outside", 0755);
	tu_file(f->outside, "secret", "outside\n", 0644);
	tu_file(f->ws, "a", "alpha\n", 0644);
	tu_file(f->ws, "b", "beta\n", 0600);
	tu_dir(f->ws, "d", 0755);
	tu_file(f->ws, "d/x", "x\n", 0644);
	tu_symlink(f->ws, "s", "a");
	/* Old enough that the session start is clearly later. */
	usleep(30000);
	assert_int_equal(cow_session_create(f->state, f->ws, true, &f->s), 0);
	/* As a run does before its command: edits from here on are
	 * stamped after the session's start. */
	cow_session_settle(f->s);
	snprintf(f->id, sizeof(f->id), "%s", cow_session_id(f->s));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	Fix *f = *state;
	cow_session_free(f->s);
	tu_rm_rf(f->root);
	free(f->root);
	free(f->state);
	free(f->ws);
	free(f->outside);
	free(f);
	return 0;
}

static const char *U(Fix *f)
{
	return cow_session_upper_dir(f->s);
}

static void reopen(Fix *f)
{
	f->s = cow_session_free(f->s);
	assert_int_equal(cow_session_open(f->state, f->id, &f->s), 0);
}

static void assert_content(const char *root, const char *rel, const char *want)
{
	_cleanup_free_ char *got = tu_read(root, rel);
	assert_non_null(got);
	assert_string_equal(got, want);
}

static void test_cow_apply_session_layout(void **state)
{
	Fix *f = *state;
	struct stat st;
	cJSON *counts = NULL;

	assert_true(cow_session_is_cow(f->s));
	assert_string_equal(cow_session_workspace(f->s), f->ws);
	assert_int_equal(stat(cow_session_upper_dir(f->s), &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0755); /* the workspace's mode */
	assert_int_equal(stat(cow_session_work_dir(f->s), &st), 0);
	assert_int_equal(strncmp(cow_session_upper_dir(f->s), f->state, strlen(f->state)), 0);
	assert_int_equal(cow_session_note_run(f->s), 0);
	reopen(f);
	assert_int_equal(cow_session_runs(f->s), 1);
	assert_int_equal(cow_session_count_changes(f->s, NULL, &counts), 0);
	assert_int_equal(cJSON_GetObjectItem(counts, "total")->valueint, 0);
	cJSON_Delete(counts);
	assert_int_equal(cow_session_open(f->state, "../../etc", &(CowSession *){ NULL }), -ENOENT);
	assert_int_equal(cow_session_open(f->state, "0123456789abcdef", &(CowSession *){ NULL }),
			 -ENOENT);
}

static void build_changes(Fix *f)
{
	tu_file(U(f), "a", "ALPHA\n", 0755);
	tu_whiteout(U(f), "b");
	tu_file(U(f), "new", "new file\n", 04755);
	tu_dir(U(f), "nd", 0555);
	tu_file(U(f), "nd/inner", "inner\n", 0644);
	tu_file(U(f), "d", "d is a file now\n", 0644);
	tu_symlink(U(f), "s", "../outside/secret");
}

static void test_cow_apply_all_then_undo(void **state)
{
	Fix *f = *state;
	CowApplyOptions o = {};
	CowResult res = {};
	CowChangeList l = {};

	build_changes(f);
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	assert_null(res.refused);
	assert_null(res.failed);
	assert_int_equal(strv_length(res.done), 7);
	cow_result_done(&res);

	assert_content(f->ws, "a", "ALPHA\n");
	assert_int_equal(tu_mode(f->ws, "a") & 07777, 0755);
	assert_int_equal(tu_mode(f->ws, "b"), 0);
	assert_content(f->ws, "new", "new file\n");
	assert_int_equal(tu_mode(f->ws, "new") & 07777, 0755); /* setuid stripped */
	assert_int_equal(tu_mode(f->ws, "nd") & 07777, 0555);
	assert_content(f->ws, "nd/inner", "inner\n");
	assert_true(S_ISREG(tu_mode(f->ws, "d")));
	assert_true(S_ISLNK(tu_mode(f->ws, "s")));
	assert_content(f->outside, "secret", "outside\n");

	/* Nothing pending: the workspace now matches the merged view. */
	assert_int_equal(cow_session_scan(f->s, NULL, &l), 0);
	assert_int_equal(l.n, 0);
	cow_change_list_done(&l);

	assert_int_equal(cow_undo(f->s, false, &res), 0);
	assert_null(res.refused);
	assert_null(res.failed);
	cow_result_done(&res);
	assert_content(f->ws, "a", "alpha\n");
	assert_int_equal(tu_mode(f->ws, "a") & 07777, 0644);
	assert_content(f->ws, "b", "beta\n");
	assert_int_equal(tu_mode(f->ws, "b") & 07777, 0600);
	assert_int_equal(tu_mode(f->ws, "new"), 0);
	assert_int_equal(tu_mode(f->ws, "nd"), 0);
	assert_true(S_ISDIR(tu_mode(f->ws, "d")));
	assert_content(f->ws, "d/x", "x\n");
	char t[16] = "";
	char *sp = tu_path(f->ws, "s");
	assert_int_equal(readlink(sp, t, sizeof(t) - 1), 1);
	free(sp);
	assert_string_equal(t, "a");
	/* The changes are pending again, and there is nothing more to undo. */
	assert_int_equal(cow_session_scan(f->s, NULL, &l), 0);
	assert_int_equal(l.n, 7);
	cow_change_list_done(&l);
	assert_int_equal(cow_undo(f->s, false, &res), -ENOENT);
}

static void test_cow_apply_subset(void **state)
{
	Fix *f = *state;
	char *paths[] = { "nd/inner", "./a", NULL };
	CowApplyOptions o = { .paths = paths };
	CowResult res = {};

	build_changes(f);
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	assert_int_equal(strv_length(res.done), 3); /* a, nd (needed), nd/inner */
	cow_result_done(&res);
	assert_content(f->ws, "a", "ALPHA\n");
	assert_content(f->ws, "nd/inner", "inner\n");
	assert_content(f->ws, "b", "beta\n");
	assert_int_equal(tu_mode(f->ws, "new"), 0);
	assert_true(S_ISDIR(tu_mode(f->ws, "d")));
}

static void test_cow_apply_conflict(void **state)
{
	Fix *f = *state;
	CowApplyOptions o = {};
	CowResult res = {};

	tu_file(U(f), "a", "sandbox\n", 0644);
	tu_file(U(f), "b", "sandbox b\n", 0600);
	/* The host edits "a" during the session. */
	tu_file(f->ws, "a", "host edit\n", 0644);
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	assert_int_equal(strv_length(res.refused), 1);
	assert_string_equal(res.refused[0], "a");
	assert_string_equal(res.refused_why[0], "conflict");
	assert_int_equal(strv_length(res.done), 1);
	cow_result_done(&res);
	assert_content(f->ws, "a", "host edit\n");
	assert_content(f->ws, "b", "sandbox b\n");

	/* A second apply of "b" is not a conflict: the session wrote it. */
	tu_file(U(f), "b", "sandbox b2\n", 0600);
	o.force = false;
	char *pb[] = { "b", NULL };
	o.paths = pb;
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	assert_null(res.refused);
	cow_result_done(&res);
	assert_content(f->ws, "b", "sandbox b2\n");

	o.paths = NULL;
	o.force = true;
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	assert_null(res.refused);
	cow_result_done(&res);
	assert_content(f->ws, "a", "sandbox\n");
}

static void test_cow_apply_protected_and_escape(void **state)
{
	Fix *f = *state;
	char *prot[] = { ".git", NULL };
	CowApplyOptions o = { .protected_paths = prot };
	CowResult res = {};

	tu_dir(f->ws, ".git", 0755);
	tu_dir(U(f), ".git", 0755);
	tu_dir(U(f), ".git/hooks", 0755);
	tu_file(U(f), ".git/hooks/pre-commit", "#!/bin/sh\n", 0755);
	/* "d" becomes a symlink to outside on the host after the sandbox wrote
	 * d/evil; apply must not write through it, even forced. */
	tu_dir(U(f), "d", 0755);
	tu_file(U(f), "d/evil", "pwned\n", 0644);
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	assert_true(strv_contains(res.refused, ".git/hooks/pre-commit"));
	cow_result_done(&res);
	assert_int_equal(tu_mode(f->ws, ".git/hooks"), 0);
	assert_content(f->ws, "d/evil", "pwned\n");

	/* Undo, then swap d for a symlink to outside and apply forced. */
	assert_int_equal(cow_undo(f->s, false, &res), 0);
	cow_result_done(&res);
	char *d = tu_path(f->ws, "d"), *dx = tu_path(f->ws, "d/x");
	assert_int_equal(unlink(dx), 0);
	assert_int_equal(rmdir(d), 0);
	assert_int_equal(symlink(f->outside, d), 0);
	o.force = true;
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	cow_result_done(&res);
	char *evil = tu_path(f->outside, "evil");
	assert_int_equal(access(evil, F_OK), -1);
	free(evil);
	/* The symlink was replaced by a real directory instead. */
	assert_true(S_ISDIR(tu_mode(f->ws, "d")));
	free(d);
	free(dx);
}

/* Repository metadata below the top: refused with no PATH or a parent
 * PATH, applied when its path is named. */
static void test_cow_apply_nested_metadata_named(void **state)
{
	Fix *f = *state;
	CowApplyOptions o = {};
	CowResult res = {};
	char *parent[] = { "lib", NULL }, *named[] = { "lib/.git/config", NULL };

	tu_dir(f->ws, "lib", 0755);
	tu_dir(f->ws, "lib/.git", 0755);
	tu_file(f->ws, "lib/.git/config", "[core]\n", 0644);
	/* A new session, so that these files predate it (no conflict). */
	usleep(30000);
	f->s = cow_session_free(f->s);
	assert_int_equal(cow_session_create(f->state, f->ws, true, &f->s), 0);
	/* As a run does before its command: edits from here on are
	 * stamped after the session's start. */
	cow_session_settle(f->s);
	tu_dir(U(f), "lib", 0755);
	tu_dir(U(f), "lib/.git", 0755);
	tu_file(U(f), "lib/.git/config", "[core]\n\tfsmonitor = evil\n", 0644);
	tu_file(U(f), "lib/ok", "ok\n", 0644);
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	assert_true(strv_contains(res.refused, "lib/.git/config"));
	assert_true(strv_contains(res.done, "lib/ok"));
	cow_result_done(&res);
	o.paths = parent;
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	assert_true(strv_contains(res.refused, "lib/.git/config"));
	cow_result_done(&res);
	assert_content(f->ws, "lib/.git/config", "[core]\n");
	o.paths = named;
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	assert_null(res.refused);
	cow_result_done(&res);
	assert_content(f->ws, "lib/.git/config", "[core]\n\tfsmonitor = evil\n");
}

/* The workspace path swapped for a symlink, or for another directory:
 * apply and undo refuse before writing anything. */
static void test_cow_apply_workspace_identity(void **state)
{
	Fix *f = *state;
	CowApplyOptions o = {};
	CowResult res = {};
	_cleanup_free_ char *moved = tu_path(f->root, "ws.moved");
	_cleanup_free_ char *planted = tu_path(f->outside, "new");

	tu_file(U(f), "new", "n\n", 0644);
	assert_int_equal(rename(f->ws, moved), 0);
	assert_int_equal(symlink(f->outside, f->ws), 0);
	assert_int_equal(cow_apply(f->s, &o, &res), -ELOOP);
	assert_int_equal(access(planted, F_OK), -1);
	assert_int_equal(unlink(f->ws), 0);
	tu_dir(f->root, "ws", 0755);
	assert_int_equal(cow_apply(f->s, &o, &res), -ESTALE);
	assert_int_equal(cow_undo(f->s, false, &res), -ENOENT); /* nothing applied yet */
	assert_int_equal(rmdir(f->ws), 0);
	assert_int_equal(rename(moved, f->ws), 0);
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	assert_true(strv_contains(res.done, "new"));
	cow_result_done(&res);
	assert_int_equal(rename(f->ws, moved), 0);
	tu_dir(f->root, "ws", 0755);
	assert_int_equal(cow_undo(f->s, false, &res), -ESTALE);
	assert_int_equal(rmdir(f->ws), 0);
	assert_int_equal(rename(moved, f->ws), 0);
}

/* Applied files keep the session's times; sparse files keep their holes. */
static void test_cow_apply_times_and_holes(void **state)
{
	Fix *f = *state;
	CowApplyOptions o = {};
	CowResult res = {};
	struct timespec t[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 981173106 } };
	_cleanup_free_ char *p = tu_path(U(f), "sparse"), *ua = tu_path(U(f), "a");
	_cleanup_free_ char *wa = tu_path(f->ws, "a"), *ws = tu_path(f->ws, "sparse");
	struct stat st;
	int fd;

	tu_file(U(f), "a", "new\n", 0644);
	assert_int_equal(utimensat(AT_FDCWD, ua, t, 0), 0);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "x", 1, 1 << 20), 1);
	assert_int_equal(ftruncate(fd, 256 << 20), 0);
	close(fd);
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	cow_result_done(&res);
	assert_int_equal(stat(wa, &st), 0);
	assert_int_equal(st.st_mtim.tv_sec, 981173106);
	assert_int_equal(stat(ws, &st), 0);
	assert_int_equal(st.st_size, 256 << 20);
	/* Far fewer blocks than the size (512-byte units); a file system
	 * without holes would need 524288. */
	assert_true(st.st_blocks < 8192);
	/* Undo brings back the old file with its old time. */
	assert_int_equal(cow_undo(f->s, false, &res), 0);
	assert_true(strv_contains(res.removed, "sparse"));
	cow_result_done(&res);
	assert_content(f->ws, "a", "alpha\n");
}

/* Kill an apply (or undo) after @step steps in a child, then reopen. */
static int run_killed(Fix *f, bool undo, int step)
{
	char buf[16];
	pid_t pid;
	int status;

	f->s = cow_session_free(f->s);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		CowSession *s = NULL;
		CowResult res = {};
		CowApplyOptions o = {};
		snprintf(buf, sizeof(buf), "%d", step);
		setenv("WARD_TEST_COW_KILL_AFTER", buf, 1);
		if (cow_session_open(f->state, f->id, &s) < 0)
			_exit(2);
		_exit(undo ? (cow_undo(s, false, &res) < 0) : (cow_apply(s, &o, &res) < 0));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(cow_session_open(f->state, f->id, &f->s), 0);
	return WEXITSTATUS(status);
}

static void test_cow_apply_crash_rolls_back(void **state)
{
	Fix *f = *state;

	build_changes(f);
	for (int step = 0; step < 12; step++) {
		int st = run_killed(f, false, step);
		assert_false(cow_session_has_journal(f->s));
		if (st == 99) {
			/* Rolled back: every file is its old version. */
			assert_content(f->ws, "a", "alpha\n");
			assert_int_equal(tu_mode(f->ws, "a") & 07777, 0644);
			assert_content(f->ws, "b", "beta\n");
			assert_content(f->ws, "d/x", "x\n");
			assert_int_equal(tu_mode(f->ws, "new"), 0);
			assert_int_equal(tu_mode(f->ws, "nd"), 0);
			assert_int_equal(cow_session_count_undoable(f->s), 0);
		} else {
			/* The apply completed before the kill point: undo it. */
			assert_int_equal(st, 0);
			CowResult res = {};
			assert_int_equal(cow_undo(f->s, false, &res), 0);
			cow_result_done(&res);
			assert_content(f->ws, "a", "alpha\n");
			break;
		}
	}
}

static void test_cow_undo_crash_finishes(void **state)
{
	Fix *f = *state;
	CowApplyOptions o = {};
	CowResult res = {};

	build_changes(f);
	/* Every kill point, including after the new directory "nd" is gone
	 * again but before the plan ends (its chmod step then finds nothing). */
	for (int step = 0; step < 12; step++) {
		assert_int_equal(cow_apply(f->s, &o, &res), 0);
		cow_result_done(&res);
		int st = run_killed(f, true, step);
		/* Reopening finished the undo. */
		assert_false(cow_session_has_journal(f->s));
		assert_content(f->ws, "a", "alpha\n");
		assert_content(f->ws, "b", "beta\n");
		assert_content(f->ws, "d/x", "x\n");
		assert_int_equal(tu_mode(f->ws, "new"), 0);
		assert_int_equal(tu_mode(f->ws, "nd"), 0);
		assert_int_equal(cow_session_count_undoable(f->s), 0);
		if (st != 99)
			break;
	}
}

static void test_cow_undo_refuses_changed(void **state)
{
	Fix *f = *state;
	CowApplyOptions o = {};
	CowResult res = {};

	tu_file(U(f), "a", "ALPHA\n", 0644);
	tu_file(U(f), "b", "BETA\n", 0600);
	assert_int_equal(cow_apply(f->s, &o, &res), 0);
	cow_result_done(&res);
	usleep(20000);
	tu_file(f->ws, "a", "edited after apply\n", 0644);
	assert_int_equal(cow_undo(f->s, false, &res), 0);
	assert_true(strv_contains(res.refused, "a"));
	cow_result_done(&res);
	assert_content(f->ws, "a", "edited after apply\n");
	assert_content(f->ws, "b", "beta\n");
}

static void test_cow_discard_removes_everything(void **state)
{
	Fix *f = *state;
	struct stat st;
	char *dir = strdup(cow_session_dir(f->s));
	char **ids = NULL;

	build_changes(f);
	tu_dir(cow_session_work_dir(f->s), "work", 0000);
	/* A hostile tree far deeper than there are fds, built level by level. */
	tu_dir(U(f), "deep", 0755);
	char *deep = tu_path(U(f), "deep");
	int fd = open(deep, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(deep);
	for (int i = 0; i < 3000; i++) {
		assert_int_equal(mkdirat(fd, "d", 0755), 0);
		int n = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(n >= 0);
		close(fd);
		fd = n;
	}
	assert_int_equal(symlinkat("/", fd, "root"), 0);
	close(fd);
	assert_int_equal(cow_discard(f->s), 0);
	assert_int_equal(stat(dir, &st), -1);
	f->s = cow_session_free(f->s);
	assert_int_equal(cow_session_open(f->state, f->id, &f->s), -ENOENT);
	assert_int_equal(cow_session_list(f->state, &ids), 0);
	assert_int_equal(strv_length(ids), 0);
	strv_free(ids);
	assert_content(f->ws, "a", "alpha\n");
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cow_apply_session_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_apply_all_then_undo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_apply_subset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_apply_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_apply_protected_and_escape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_apply_nested_metadata_named, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_apply_workspace_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_apply_times_and_holes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_apply_crash_rolls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_undo_crash_finishes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_undo_refuses_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_discard_removes_everything, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
