/* Lexical path helpers: normalization, "~" expansion, joining, beneath. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/path-util.h"

static void test_path_normalize_table(void **state)
{
	static const struct {
		const char *in, *out;
	} t[] = {
		{ "/", "/" },
		{ "//", "/" },
		{ "/a//b///c", "/a/b/c" },
		{ "/a/./b/.", "/a/b" },
		{ "/a/b/", "/a/b" },
		{ "/a/b/..", "/a" },
		{ "/a/..", "/" },
		{ "/..", "/" },
		{ "/../../etc", "/etc" },
		{ "/a/b/../../..", "/" },
		{ "/a/../b/../c", "/c" },
		{ "/a/...", "/a/..." },
		{ "/a/..b", "/a/..b" },
		{ "a", "a" },
		{ "./a", "a" },
		{ "a/", "a" },
		{ ".", "." },
		{ "./", "." },
		{ "a/..", "." },
		{ "..", ".." },
		{ "../a", "../a" },
		{ "a/../..", ".." },
		{ "a/../../b", "../b" },
		{ "../../a/..", "../.." },
		{ "x/./y//z/../w", "x/y/w" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *out = NULL;

		assert_int_equal(path_normalize(t[i].in, &out), 0);
		if (strcmp(out, t[i].out) != 0)
			fail_msg("normalize(\"%s\") = \"%s\", want \"%s\"", t[i].in, out, t[i].out);
		free(out);
	}
}

static void test_path_normalize_empty(void **state)
{
	char *out = NULL;

	assert_int_equal(path_normalize("", &out), -EINVAL);
	assert_null(out);
}

static void test_path_expand_home(void **state)
{
	char *out = NULL;

	assert_int_equal(path_expand_home("~", "/home/u", &out), 0);
	assert_string_equal(out, "/home/u");
	free(out);
	assert_int_equal(path_expand_home("~/.cache/x", "/home/u", &out), 0);
	assert_string_equal(out, "/home/u/.cache/x");
	free(out);
	assert_int_equal(path_expand_home("/etc/~", "/home/u", &out), 0);
	assert_string_equal(out, "/etc/~");
	free(out);
	assert_int_equal(path_expand_home("a~", "/home/u", &out), 0);
	assert_string_equal(out, "a~");
	free(out);
	out = NULL;
	assert_int_equal(path_expand_home("~root/x", "/home/u", &out), -EINVAL);
	assert_null(out);
	assert_int_equal(path_expand_home("~/x", "relative", &out), -EINVAL);
}

static void test_path_join(void **state)
{
	char *out = NULL;

	assert_int_equal(path_join("/a", "b", &out), 0);
	assert_string_equal(out, "/a/b");
	free(out);
	assert_int_equal(path_join("/a/", "b", &out), 0);
	assert_string_equal(out, "/a/b");
	free(out);
	assert_int_equal(path_join("/", "/b", &out), 0);
	assert_string_equal(out, "/b");
	free(out);
	assert_int_equal(path_join("/a", "", &out), 0);
	assert_string_equal(out, "/a");
	free(out);
}

static void test_path_is_beneath(void **state)
{
	assert_true(path_is_beneath("/a/b", "/a/b"));
	assert_true(path_is_beneath("/a/b/c", "/a/b"));
	assert_false(path_is_beneath("/a/bc", "/a/b"));
	assert_false(path_is_beneath("/a", "/a/b"));
	assert_true(path_is_beneath("/anything", "/"));
	assert_true(path_is_beneath("/", "/"));
	assert_false(path_is_beneath("rel", "/"));
	assert_true(path_is_beneath("a/b", "a"));
	assert_true(path_is_beneath("a", "."));
	assert_false(path_is_beneath("../a", "."));
}

static void test_path_escapes_and_wildcards(void **state)
{
	assert_true(path_escapes(".."));
	assert_true(path_escapes("../x"));
	assert_false(path_escapes("..x"));
	assert_false(path_escapes("a/.."));
	assert_false(path_escapes("."));
	assert_true(path_has_wildcard("/a/*"));
	assert_true(path_has_wildcard("a?"));
	assert_true(path_has_wildcard("[ab]"));
	assert_false(path_has_wildcard("/a/b.c-d_e~"));
	assert_true(path_is_absolute("/x"));
	assert_false(path_is_absolute("x"));
	assert_false(path_is_absolute(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_normalize_table),
		cmocka_unit_test(test_path_normalize_empty),
		cmocka_unit_test(test_path_expand_home),
		cmocka_unit_test(test_path_join),
		cmocka_unit_test(test_path_is_beneath),
		cmocka_unit_test(test_path_escapes_and_wildcards),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
