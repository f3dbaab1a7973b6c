/* The cow path classifier, name quoting and hex helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "cow/cow-internal.h"

static CowPathClass cls(const char *p, char *const *prot)
{
	return cow_classify_path(p, strlen(p), prot);
}

static void test_cow_classify_escape(void **state)
{
	(void)state;
	assert_int_equal(cls("", NULL), COW_PATH_ESCAPE);
	assert_int_equal(cls("/etc/passwd", NULL), COW_PATH_ESCAPE);
	assert_int_equal(cls("..", NULL), COW_PATH_ESCAPE);
	assert_int_equal(cls("../x", NULL), COW_PATH_ESCAPE);
	assert_int_equal(cls("a/../../x", NULL), COW_PATH_ESCAPE);
	assert_int_equal(cls("a/./b", NULL), COW_PATH_ESCAPE);
	assert_int_equal(cls("a//b", NULL), COW_PATH_ESCAPE);
	assert_int_equal(cls("a/", NULL), COW_PATH_ESCAPE);
	assert_int_equal(cow_classify_path("a\0b", 3, NULL), COW_PATH_ESCAPE);
	char longname[300];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(cls(longname, NULL), COW_PATH_ESCAPE);
	/* Names that only look like dots are ordinary names. */
	assert_int_equal(cls("...", NULL), COW_PATH_OK);
	assert_int_equal(cls("..\n", NULL), COW_PATH_OK);
	assert_int_equal(cls(".hidden/..x", NULL), COW_PATH_OK);
}

static void test_cow_classify_protected(void **state)
{
	char *prot[] = { ".git", ".ward/", "a/b", NULL };
	(void)state;
	assert_int_equal(cls(".git", prot), COW_PATH_PROTECTED);
	assert_int_equal(cls(".git/hooks/pre-commit", prot), COW_PATH_PROTECTED);
	assert_int_equal(cls(".ward", prot), COW_PATH_PROTECTED);
	assert_int_equal(cls(".gitignore", prot), COW_PATH_OK);
	assert_int_equal(cls(".git2/x", prot), COW_PATH_OK);
	assert_int_equal(cls("a/b/c", prot), COW_PATH_PROTECTED);
	assert_int_equal(cls("a/bc", prot), COW_PATH_OK);
	assert_int_equal(cls("a", prot), COW_PATH_OK);
	/* Repository metadata at any depth, whatever the list says; names
	 * without '/' match at any depth, others are anchored. */
	assert_int_equal(cls("lib/.git/config", NULL), COW_PATH_PROTECTED);
	assert_int_equal(cls("a/b/.git", NULL), COW_PATH_PROTECTED);
	assert_int_equal(cls("vendor/.gitmodules", NULL), COW_PATH_PROTECTED);
	assert_int_equal(cls("lib/.GIT/config", NULL), COW_PATH_PROTECTED);
	assert_int_equal(cls("lib/git~1/config", NULL), COW_PATH_PROTECTED);
	assert_int_equal(cls("lib/.gitignore", NULL), COW_PATH_OK);
	assert_int_equal(cls("lib/.github/x", NULL), COW_PATH_OK);
	assert_int_equal(cls("x/.ward/y", prot), COW_PATH_OK); /* ".ward/" is anchored */
	char *names[] = { ".vscode", NULL };
	assert_int_equal(cls("pkg/.vscode/tasks.json", names), COW_PATH_PROTECTED);
	assert_true(cow_path_is_protected_exact("pkg/.git", NULL));
	assert_false(cow_path_is_protected_exact("pkg/.git/config", NULL));
	assert_true(cow_path_is_protected_ancestor("a", prot));
	assert_false(cow_path_is_protected_ancestor("a/b", prot));
	assert_false(cow_path_is_protected_ancestor("x", prot));
}

static void test_cow_classify_quote(void **state)
{
	struct {
		const char *in, *out;
	} t[] = {
		{ "plain.txt", "plain.txt" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },
		{ "a\nb", "\"a\\nb\"" },
		{ "tab\there", "\"tab\\there\"" },
		{ "q\"uote", "\"q\\\"uote\"" },
		{ "back\\slash", "\"back\\\\slash\"" },
		{ "bad\xff", "\"bad\\377\"" },
		{ "\xc0\xaf", "\"\\300\\257\"" },                /* overlong '/' */
		{ "rtl\xe2\x80\xaetxt", "\"rtl\\342\\200\\256txt\"" }, /* bidi override */
		{ " lead", "\" lead\"" },
		{ "esc\033[31m", "\"esc\\033[31m\"" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		_cleanup_free_ char *q = cow_quote_path(t[i].in);
		assert_non_null(q);
		assert_string_equal(q, t[i].out);
		assert_int_equal(cow_name_is_odd(t[i].in, strlen(t[i].in)),
				 strcmp(t[i].in, t[i].out) != 0);
	}
}

static void test_cow_classify_hex_roundtrip(void **state)
{
	const char *in = "dir/new\nline\xff";
	_cleanup_free_ char *h = cow_hex_encode(in);
	_cleanup_free_ char *back = NULL;
	(void)state;
	assert_non_null(h);
	back = cow_hex_decode(h);
	assert_non_null(back);
	assert_string_equal(back, in);
	assert_null(cow_hex_decode("0"));
	assert_null(cow_hex_decode("zz"));
	assert_null(cow_hex_decode("6100")); /* an embedded NUL */
}

static void test_cow_classify_prefix(void **state)
{
	(void)state;
	assert_true(cow_path_has_prefix("a/b", "a"));
	assert_true(cow_path_has_prefix("a", "a"));
	assert_true(cow_path_has_prefix("a/b", "a/"));
	assert_false(cow_path_has_prefix("ab", "a"));
	assert_false(cow_path_has_prefix("a", "a/b"));
}

static void test_cow_classify_effective_mode(void **state)
{
	(void)state;
	assert_int_equal(cow_effective_mode(S_IFREG | 04755), 0755);
	assert_int_equal(cow_effective_mode(S_IFREG | 02755), 0755);
	assert_int_equal(cow_effective_mode(S_IFREG | 01644), 0644);
	assert_int_equal(cow_effective_mode(S_IFDIR | 03777), 01777);
	assert_string_equal(cow_kind_to_string(COW_DIR_REPLACED), "dir-replaced");
	assert_null(cow_kind_to_string(_COW_KIND_MAX));
	assert_string_equal(cow_refusal_to_string(COW_REFUSE_CONFLICT), "conflict");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cow_classify_escape),
		cmocka_unit_test(test_cow_classify_protected),
		cmocka_unit_test(test_cow_classify_quote),
		cmocka_unit_test(test_cow_classify_hex_roundtrip),
		cmocka_unit_test(test_cow_classify_prefix),
		cmocka_unit_test(test_cow_classify_effective_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
