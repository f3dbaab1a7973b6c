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
static char *diff_text(Fix *f, bool stat_only)
{
	CowChangeList l = {};
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	CowDiffOptions o = { .stat_only = stat_only };

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
	assert_non_null(strstr(out, "M modified        t\n"));
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
	assert_non_null(strstr(out, "A added           \"new\\nline\"\n"));
	assert_non_null(strstr(out, "+++ b/\"new\\nline\"\n"));
	assert_non_null(strstr(out, "deleted file mode 100644\n--- a/gone\n+++ /dev/null\n"
				    "@@ -1,1 +0,0 @@\n-bye\n"));
	free(out);
	out = diff_text(f, true);
	assert_null(strstr(out, "@@"));
	assert_non_null(strstr(out, "D deleted         gone\n"));
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
	assert_string_equal(text, "[{\"path\":\"\\\"bad\\\\377\\\"\",\"quoted\":true,\"kind\":"
				  "\"added\",\"type\":\"file\",\"new_mode\":493,\"size\":1,"
				  "\"setuid_stripped\":true}]");
	cJSON_Delete(j);
	cow_change_list_done(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cow_diff_unified_hunks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_diff_binary_symlink_mode_names, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cow_diff_large_edit_distance, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_diff_json, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
