/* The environment filter: pass allowlist, strip denylist, env.set and
 * --env additions, stable order, no duplicates. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/strv.h"
#include "policy/env-filter.h"

static void test_env_name_matches_table(void **state)
{
	static const struct {
		const char *pattern, *name;
		bool match;
	} t[] = {
		{ "PATH", "PATH", true },	   { "PATH", "PATHX", false },
		{ "PATH", "PAT", false },	   { "LC_*", "LC_ALL", true },
		{ "LC_*", "LC_", true },	   { "LC_*", "LC", false },
		{ "*_TOKEN", "GH_TOKEN", true },   { "*_TOKEN", "TOKEN", false },
		{ "*_TOKEN", "GH_TOKENS", false }, { "*_TOKEN_*", "A_TOKEN_B", true },
		{ "*SECRET*", "SECRET", true },	   { "*SECRET*", "MY_SECRET_X", true },
		{ "*SECRET*", "SECRE", false },	   { "*_token", "GH_TOKEN", false },
		{ "a*b*c", "abc", true },	   { "a*b*c", "aXbYc", true },
		{ "a*b*c", "acb", false },	   { "*ab", "aab", true },
		{ "*ab", "abab", true },	   { "*", "", true },
		{ "*", "ANY", true },		   { "", "", true },
		{ "", "X", false },		   { "**", "X", true },
		{ "*API_KEY*", "OPENAI_API_KEY", true },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (env_name_matches(t[i].pattern, t[i].name) != t[i].match)
			fail_msg("env_name_matches(\"%s\", \"%s\") != %d", t[i].pattern, t[i].name,
				 t[i].match);
}

static void test_env_filter_defaults(void **state)
{
	char *env[] = { "PATH=/usr/bin:/bin",
			"HOME=/home/u",
			"LC_ALL=C.UTF-8",
			"LANG=C",
			"GITHUB_TOKEN=ghp_secret",
			"AWS_SECRET_ACCESS_KEY=aws",
			"OPENAI_API_KEY=sk",
			"ANTHROPIC_API_KEY=sk-ant",
			"SSH_AUTH_SOCK=/tmp/agent",
			"LD_PRELOAD=/evil.so",
			"RANDOM_THING=1",
			"TERM=xterm",
			NULL };
	WardPolicy *p = policy_new_defaults();
	char **out = env_filter(p, env, NULL);

	assert_non_null(out);
	assert_int_equal(strv_length(out), 5);
	assert_string_equal(out[0], "PATH=/usr/bin:/bin");
	assert_string_equal(out[1], "HOME=/home/u");
	assert_string_equal(out[2], "LC_ALL=C.UTF-8");
	assert_string_equal(out[3], "LANG=C");
	assert_string_equal(out[4], "TERM=xterm");
	strv_free(out);
	policy_free(p);
}

/* Strip wins over pass, even when pass names the variable exactly. */
static void test_env_filter_strip_wins(void **state)
{
	char *env[] = { "GITHUB_TOKEN=x", "MY_API_KEY=y", "DB_PASSWORD=z", "AWS_REGION=eu",
			"SAFE=1", NULL };
	WardPolicy *p = policy_new_defaults();
	char **out;

	assert_int_equal(strv_extend(&p->env_pass, "GITHUB_TOKEN"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "MY_API_KEY"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "DB_PASSWORD"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "AWS_*"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "SAFE"), 0);
	out = env_filter(p, env, NULL);
	assert_int_equal(strv_length(out), 1);
	assert_string_equal(out[0], "SAFE=1");
	strv_free(out);
	policy_free(p);
}

static void test_env_filter_set_and_extra(void **state)
{
	char *env[] = { "PATH=/bin", "TERM=dumb", "NPM_TOKEN=tok", "NOT_PASSED=np", NULL };
	char *extra[] = { "TERM=xterm", "NPM_TOKEN", "NOT_PASSED", "MISSING", "NEW=v=1", "=bad",
			  NULL };
	WardPolicy *p = policy_new_defaults();
	char **out;

	assert_int_equal(strv_extend(&p->env_set, "PATH=/sandbox/bin"), 0);
	assert_int_equal(strv_extend(&p->env_set, "CI_SECRET_MODE=on"), 0); /* set bypasses strip */
	out = env_filter(p, env, extra);
	assert_int_equal(strv_length(out), 6);
	/* Replaced in place: order stays that of the environment. */
	assert_string_equal(out[0], "PATH=/sandbox/bin");
	assert_string_equal(out[1], "TERM=xterm");
	assert_string_equal(out[2], "CI_SECRET_MODE=on");
	/* --env NAME copies, and bypasses strip and pass: the user asked. */
	assert_string_equal(out[3], "NPM_TOKEN=tok");
	assert_string_equal(out[4], "NOT_PASSED=np");
	assert_string_equal(out[5], "NEW=v=1");
	strv_free(out);
	policy_free(p);
}

static void test_env_filter_duplicates_and_junk(void **state)
{
	char *env[] = { "PATH=/first", "NOEQUALS", "=nameless", "HOME=/h", "PATH=/second", NULL };
	WardPolicy *p = policy_new_defaults();
	char **out = env_filter(p, env, NULL);

	assert_int_equal(strv_length(out), 2);
	assert_string_equal(out[0], "PATH=/second");
	assert_string_equal(out[1], "HOME=/h");
	strv_free(out);
	policy_free(p);
}

static void test_env_filter_empty(void **state)
{
	WardPolicy *p = policy_new_empty();
	char *env[] = { "PATH=/bin", NULL };
	char **out = env_filter(p, env, NULL);

	assert_non_null(out);
	assert_null(out[0]);
	strv_free(out);
	out = env_filter(p, NULL, NULL);
	assert_non_null(out);
	assert_null(out[0]);
	strv_free(out);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_name_matches_table),
		cmocka_unit_test(test_env_filter_defaults),
		cmocka_unit_test(test_env_filter_strip_wins),
		cmocka_unit_test(test_env_filter_set_and_extra),
		cmocka_unit_test(test_env_filter_duplicates_and_junk),
		cmocka_unit_test(test_env_filter_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
