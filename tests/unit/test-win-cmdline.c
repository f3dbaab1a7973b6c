/* Windows plan layer: command-line quoting round trips through the C
 * runtime's splitting rules, and batch-file refusals. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/strv.h"
#include "windows/win-cmdline.h"

static void roundtrip(char *const *argv)
{
	char *line = NULL;
	char **back = NULL;

	assert_int_equal(win_cmdline_quote(argv, &line), 0);
	assert_int_equal(win_cmdline_split(line, &back), 0);
	assert_int_equal(strv_length(back), strv_length(argv));
	for (size_t i = 0; argv[i]; i++)
		assert_string_equal(back[i], argv[i]);
	strv_free(back);
	free(line);
}

static void test_win_cmdline_roundtrip_table(void **state)
{
	char *a1[] = { "C:\\Program Files\\x.exe", "a", "", "b c", NULL };
	char *a2[] = { "C:\\x.exe", "\"", "\\", "\\\\", "a\\\"b", "a\\\\\"b", "c:\\dir\\", NULL };
	char *a3[] = { "C:\\x.exe", "tab\there", "new\nline", "\\\"\\\"", " ", "\"\"", NULL };
	char *a4[] = { "C:\\x.exe", "%PATH%", "!x!", "a&b|c<d>e^f", "(x)", NULL };

	roundtrip(a1);
	roundtrip(a2);
	roundtrip(a3);
	roundtrip(a4);
}

static void test_win_cmdline_roundtrip_generated(void **state)
{
	/* Every string of length <= 4 over the characters that matter. */
	static const char alphabet[] = { 'a', ' ', '\\', '"', '\t' };
	char buf[5];

	for (unsigned len = 0; len <= 4; len++) {
		unsigned total = 1;

		for (unsigned i = 0; i < len; i++)
			total *= 5;
		for (unsigned n = 0; n < total; n++) {
			unsigned v = n;
			char *argv[] = { "C:\\x.exe", buf, "z", NULL };

			for (unsigned i = 0; i < len; i++, v /= 5)
				buf[i] = alphabet[v % 5];
			buf[len] = '\0';
			{
				char *line = NULL, **back = NULL;

				assert_int_equal(win_cmdline_quote(argv, &line), 0);
				assert_int_equal(win_cmdline_split(line, &back), 0);
				assert_int_equal(strv_length(back), 3);
				assert_string_equal(back[1], buf);
				assert_string_equal(back[2], "z");
				strv_free(back);
				free(line);
			}
		}
	}
}

static void test_win_cmdline_split_documented_examples(void **state)
{
	/* The examples of "Parsing C++ command-line arguments". */
	static const struct {
		const char *line, *a1, *a2, *a3;
	} t[] = {
		{ "x \"abc\" d e", "abc", "d", "e" },
		{ "x a\\\\b d\"e f\"g h", "a\\\\b", "de fg", "h" },
		{ "x a\\\\\\\"b c d", "a\\\"b", "c", "d" },
		{ "x a\\\\\\\\\"b c\" d e", "a\\\\b c", "d", "e" },
		{ "x a\"b\"\" c d", "ab\" c d", NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		char **l = NULL;

		print_message("# %s\n", t[i].line);
		assert_int_equal(win_cmdline_split(t[i].line, &l), 0);
		assert_string_equal(l[1], t[i].a1);
		if (t[i].a2) {
			assert_string_equal(l[2], t[i].a2);
			assert_string_equal(l[3], t[i].a3);
		} else
			assert_int_equal(strv_length(l), 2);
		strv_free(l);
	}
}

static void test_win_cmdline_program_name(void **state)
{
	char *bad[] = { "C:\\a\"b.exe", NULL };
	char *empty[] = { "", NULL };
	char *line = NULL;

	assert_int_equal(win_cmdline_quote(bad, &line), -EINVAL);
	assert_int_equal(win_cmdline_quote(empty, &line), -EINVAL);
}

static void test_win_cmdline_batch(void **state)
{
	char why[256];
	char *line = NULL;
	char *ok[] = { "a b", "x&y", "(1)", "c:\\dir\\", "", NULL };
	static const char *const refused[] = { "\"", "%PATH%", "!x!", "a\nb", "a\rb", "\x1b" };

	assert_int_equal(win_cmdline_batch("C:\\Windows\\system32\\cmd.exe", "C:\\ws\\b.bat", ok,
					   &line, why, sizeof(why)), 0);
	assert_string_equal(line, "\"C:\\Windows\\system32\\cmd.exe\" /d /e:on /v:off /s /c "
				  "\"\"C:\\ws\\b.bat\" \"a b\" \"x&y\" \"(1)\" \"c:\\dir\\\" \"\"\"");
	free(line);
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		char *args[] = { "fine", (char *)refused[i], NULL };

		line = NULL;
		assert_int_equal(win_cmdline_batch("C:\\cmd.exe", "C:\\b.cmd", args, &line, why,
						   sizeof(why)), -EINVAL);
		assert_null(line);
		assert_non_null(strstr(why, "argument 2"));
	}
	assert_int_equal(win_cmdline_batch("C:\\cmd.exe", "C:\\100%.bat", NULL, &line, why,
					   sizeof(why)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_win_cmdline_roundtrip_table),
		cmocka_unit_test(test_win_cmdline_roundtrip_generated),
		cmocka_unit_test(test_win_cmdline_split_documented_examples),
		cmocka_unit_test(test_win_cmdline_program_name),
		cmocka_unit_test(test_win_cmdline_batch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
