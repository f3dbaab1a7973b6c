/* Windows plan layer: path normalization, refusals, containment. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "windows/win-path.h"

static void norm_is(const char *in, const char *want)
{
	char *out = NULL;
	unsigned flags;

	print_message("# %s\n", in);
	assert_int_equal(win_path_normalize(in, &out, &flags), 0);
	assert_string_equal(out, want);
	free(out);
}

static void test_win_path_normalize_forms(void **state)
{
	norm_is("C:\\", "C:\\");
	norm_is("c:\\Users\\me", "C:\\Users\\me");
	norm_is("C:/Users//me/", "C:\\Users\\me");
	norm_is("C:\\a\\.\\b\\..\\c", "C:\\a\\c");
	norm_is("C:\\a\\..", "C:\\");
	norm_is("\\\\?\\C:\\x\\y", "C:\\x\\y");
	norm_is("\\\\?\\UNC\\srv\\share\\d", "\\\\srv\\share\\d");
	norm_is("\\\\srv\\share", "\\\\srv\\share");
	norm_is("\\\\srv\\share\\", "\\\\srv\\share");
	norm_is("//srv/share/a/b", "\\\\srv\\share\\a\\b");
	/* Win32 strips trailing dots and spaces: these name ".git". */
	norm_is("C:\\ws\\.git.", "C:\\ws\\.git");
	norm_is("C:\\ws\\.git . .", "C:\\ws\\.git");
	norm_is("C:\\ws\\.git \\x", "C:\\ws\\.git\\x");
}

static void test_win_path_normalize_refuses(void **state)
{
	static const char *const bad[] = {
		"", "relative\\x", "x", "C:", "C:foo", "\\rooted", "/rooted",
		"\\\\.\\C:\\x", "\\\\.\\PhysicalDrive0", "\\\\?\\GLOBALROOT\\Device", "\\??\\C:\\x",
		"\\\\srv", "\\\\srv\\", "\\\\srv\\\\x", "\\\\..\\share",
		"C:\\..", "C:\\a\\..\\..\\b",
		"C:\\ws\\file:stream", "C:\\ws\\file::$DATA", "C:\\ws\\a:b\\c",
		"C:\\ws\\CON", "C:\\ws\\nul", "C:\\ws\\NUL.txt", "C:\\ws\\com1", "C:\\ws\\LPT9.log",
		"C:\\ws\\COM\xc2\xb9", "C:\\ws\\conin$", "C:\\ws\\CONOUT$", "C:\\ws\\aux .c",
		"C:\\ws\\a<b", "C:\\ws\\a>b", "C:\\ws\\a|b", "C:\\ws\\a?b", "C:\\ws\\a*b",
		"C:\\ws\\a\"b", "C:\\ws\\a\tb", "C:\\ws\\a\nb",
		"C:\\ws\\...", "C:\\ws\\ ",
		"\\\\?\\C:\\ws\\x.", "\\\\?\\C:\\ws\\x ", "\\\\?\\C:",
	};
	char *out = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		print_message("# refuse case %zu\n", i);
		assert_int_equal(win_path_normalize(bad[i], &out, NULL), -EINVAL);
		assert_null(out);
	}
	/* Not device names: longer, or a different stem. */
	norm_is("C:\\ws\\console", "C:\\ws\\console");
	norm_is("C:\\ws\\com10", "C:\\ws\\com10");
	norm_is("C:\\ws\\nullable.c", "C:\\ws\\nullable.c");
}

static void test_win_path_short_names_flagged(void **state)
{
	char *out = NULL;
	unsigned flags = 0;

	assert_int_equal(win_path_normalize("C:\\PROGRA~1\\x", &out, &flags), 0);
	assert_true(flags & WIN_PATH_SHORT_NAME);
	free(out);
	assert_int_equal(win_path_normalize("C:\\ws\\GIT~1", &out, &flags), 0);
	assert_true(flags & WIN_PATH_SHORT_NAME);
	free(out);
	assert_int_equal(win_path_normalize("C:\\ws\\AB~2.TXT", &out, &flags), 0);
	assert_true(flags & WIN_PATH_SHORT_NAME);
	free(out);
	assert_int_equal(win_path_normalize("C:\\ws\\a~b\\long~1name", &out, &flags), 0);
	assert_false(flags & WIN_PATH_SHORT_NAME);
	free(out);
}

static void test_win_path_containment(void **state)
{
	assert_true(win_path_is_within("C:\\ws\\a", "C:\\ws"));
	assert_true(win_path_is_within("C:\\ws", "C:\\ws"));
	assert_true(win_path_is_within("c:\\WS\\A", "C:\\ws"));
	assert_true(win_path_is_within("C:\\ws", "C:\\"));
	assert_false(win_path_is_within("C:\\wsx", "C:\\ws"));
	assert_false(win_path_is_within("C:\\w", "C:\\ws"));
	assert_false(win_path_is_within("D:\\ws", "C:\\ws"));
	assert_true(win_path_is_within("\\\\s\\sh\\x", "\\\\s\\sh"));
	assert_false(win_path_is_within("\\\\s\\shx", "\\\\s\\sh"));
	assert_true(win_path_equal("C:\\WS\\.Git", "c:\\ws\\.git"));
	/* Non-ASCII compares exactly: containment can only say no. */
	assert_false(win_path_is_within("C:\\\xc3\x84\\x", "C:\\\xc3\xa4"));
}

static void test_win_path_join(void **state)
{
	char *out = NULL;

	assert_int_equal(win_path_join("C:\\ws", ".git", &out), 0);
	assert_string_equal(out, "C:\\ws\\.git");
	free(out);
	assert_int_equal(win_path_join("C:\\", "a/b", &out), 0);
	assert_string_equal(out, "C:\\a\\b");
	free(out);
	assert_int_equal(win_path_join("C:\\ws", "..\\x", &out), -EINVAL);
	assert_int_equal(win_path_join("C:\\ws", "a\\..\\..\\x", &out), -EINVAL);
	assert_int_equal(win_path_join("C:\\ws", "D:\\x", &out), -EINVAL);
	assert_int_equal(win_path_join("C:\\ws", "\\x", &out), -EINVAL);
	assert_int_equal(win_path_join("C:\\ws", "", &out), -EINVAL);
	assert_int_equal(win_path_join("C:\\ws", "nul", &out), -EINVAL);
	assert_string_equal(win_path_extension("C:\\a.b\\c.EXE"), ".EXE");
	assert_string_equal(win_path_extension("C:\\a.b\\c"), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_win_path_normalize_forms),
		cmocka_unit_test(test_win_path_normalize_refuses),
		cmocka_unit_test(test_win_path_short_names_flagged),
		cmocka_unit_test(test_win_path_containment),
		cmocka_unit_test(test_win_path_join),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
