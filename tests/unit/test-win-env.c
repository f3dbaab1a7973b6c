/* Windows plan layer: the environment block, with env-filter.c's rules
 * over case-insensitive names. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/strv.h"
#include "policy/policy.h"
#include "windows/win-env.h"

static void test_win_env_case_insensitive_filter(void **state)
{
	WardPolicy *p = policy_new_empty();
	char *envp[] = { "Path=C:\\Windows", "github_token=secret", "SystemRoot=C:\\Windows",
			 "Home=x", "MY_Secret_Thing=1", "lc_all=C", "=C:=C:\\ws", "noeq", NULL };
	char *set[] = { "TEMP=C:\\t", NULL };
	char **env = NULL;

	assert_non_null(p);
	assert_int_equal(strv_extend(&p->env_pass, "PATH"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "systemroot"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "*_TOKEN"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "*SECRET*"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "LC_*"), 0);
	assert_int_equal(strv_extend(&p->env_strip, "*_TOKEN"), 0);
	assert_int_equal(strv_extend(&p->env_strip, "*secret*"), 0);
	assert_int_equal(win_env_build(p, envp, NULL, set, &env), 0);
	/* Sorted, upper-cased, stripped whatever their case; "=C:" entries
	 * (per-drive cwds) are not variables. */
	assert_int_equal(strv_length(env), 4);
	assert_string_equal(env[0], "LC_ALL=C");
	assert_string_equal(env[1], "PATH=C:\\Windows");
	assert_string_equal(env[2], "SYSTEMROOT=C:\\Windows");
	assert_string_equal(env[3], "TEMP=C:\\t");
	assert_string_equal(win_env_get(env, "Path"), "C:\\Windows");
	assert_null(win_env_get(env, "GITHUB_TOKEN"));
	strv_free(env);
	policy_free(p);
}

static void test_win_env_duplicates_and_extra(void **state)
{
	WardPolicy *p = policy_new_empty();
	char *envp[] = { "PATH=a", "Path=b", "Foo=1", NULL };
	char *extra[] = { "foo", "Bar=2", NULL };
	char *set[] = { "tmp=C:\\t", "PATH=override", NULL };
	char **env = NULL;
	size_t len;
	char *block;

	assert_int_equal(strv_extend(&p->env_pass, "Path"), 0);
	assert_int_equal(strv_extend(&p->env_set, "Baz=3"), 0);
	assert_int_equal(win_env_build(p, envp, extra, set, &env), 0);
	assert_int_equal(strv_length(env), 5);
	assert_string_equal(env[0], "BAR=2");
	assert_string_equal(env[1], "BAZ=3");
	assert_string_equal(env[2], "FOO=1");
	assert_string_equal(env[3], "PATH=override");
	assert_string_equal(env[4], "TMP=C:\\t");
	block = win_env_block(env, &len);
	assert_int_equal(len, strlen("BAR=2") + strlen("BAZ=3") + strlen("FOO=1") +
				      strlen("PATH=override") + strlen("TMP=C:\\t") + 5 + 1);
	assert_int_equal(block[len - 1], 0);
	assert_int_equal(block[len - 2], 0);
	free(block);
	strv_free(env);
	policy_free(p);
}

static void test_win_env_sorted_underscore_before_letters(void **state)
{
	WardPolicy *p = policy_new_empty();
	char *envp[] = { "AB=1", "A_B=2", "A=3", NULL };
	char **env = NULL;

	assert_int_equal(strv_extend(&p->env_pass, "*"), 0);
	assert_int_equal(win_env_build(p, envp, NULL, NULL, &env), 0);
	assert_string_equal(env[0], "A=3");
	assert_string_equal(env[1], "AB=1");
	assert_string_equal(env[2], "A_B=2");
	strv_free(env);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_win_env_case_insensitive_filter),
		cmocka_unit_test(test_win_env_duplicates_and_extra),
		cmocka_unit_test(test_win_env_sorted_underscore_before_letters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
