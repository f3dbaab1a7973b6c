/* The protected-path matcher: names at any depth, anchored paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "policy/protected.h"

static char *list[] = { ".git", ".vscode", "ci/.github/workflows", "tools/", NULL };

static const char *m(const char *p)
{
	return protected_match(list, p, strlen(p));
}

static void test_names_any_depth(void **state)
{
	assert_string_equal(m(".git"), ".git");
	assert_string_equal(m(".git/config"), ".git");
	assert_string_equal(m("lib/.git"), ".git");
	assert_string_equal(m("a/b/c/.git/hooks/pre-commit"), ".git");
	assert_string_equal(m("sub/.vscode/tasks.json"), ".vscode");
	assert_null(m(".gitignore"));
	assert_null(m("lib/.gitmodules"));
	assert_null(m("x.git"));
	assert_null(m("a/.git2/b"));
	assert_null(m("src/main.c"));
}

static void test_anchored(void **state)
{
	assert_string_equal(m("ci/.github/workflows"), "ci/.github/workflows");
	assert_string_equal(m("ci/.github/workflows/a.yml"), "ci/.github/workflows");
	assert_null(m("ci/.github"));
	assert_null(m("x/ci/.github/workflows"));
	assert_null(m("ci/.github/workflowsX"));
	assert_string_equal(m("tools"), "tools/");
	assert_string_equal(m("tools/x"), "tools/");
	assert_null(m("a/tools"));
}

static void test_prefix_length(void **state)
{
	/* Only the first @len bytes count. */
	assert_string_equal(protected_match(list, "lib/.git/config", 8), ".git");
	assert_string_equal(protected_match(list, "lib/.gitx", 8), ".git"); /* "lib/.git" */
	assert_null(protected_match(list, "lib/.gitx", 9));
	assert_null(protected_match(list, "lib/.vs", 6));
}

static void test_below(void **state)
{
	char *anchored[] = { "ci/.github/workflows", NULL };

	assert_true(protected_below(anchored, "ci"));
	assert_true(protected_below(anchored, "ci/.github"));
	assert_false(protected_below(anchored, "ci/.github/workflows"));
	assert_false(protected_below(anchored, "src"));
	/* A name may appear beneath any directory. */
	assert_true(protected_below(list, "src"));
	assert_false(protected_below((char *[]){ ".git", NULL }, "a/.git"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_any_depth),
		cmocka_unit_test(test_anchored),
		cmocka_unit_test(test_prefix_length),
		cmocka_unit_test(test_below),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
