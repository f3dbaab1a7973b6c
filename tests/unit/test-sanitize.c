/* Credentials out of toolchain configuration files: npmrc, pip.conf,
 * cargo's config.toml, gitconfig and go's env file, each with its own way
 * of holding a secret; what is not a credential stays byte for byte. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/sanitize.h"

static void expect(const char *in, const char *want, size_t want_changed)
{
	char *out = NULL;
	size_t changed = 99;

	assert_int_equal(sanitize_config(in, strlen(in), &out, &changed), 0);
	if (strcmp(out, want) != 0)
		fail_msg("sanitize(\n%s) =\n%s\nwanted\n%s", in, out, want);
	assert_int_equal(changed, want_changed);
	free(out);
}

static void test_sanitize_npmrc(void **state)
{
	expect("registry=https://registry.npmjs.org/\n"
	       "//registry.npmjs.org/:_authToken=SECRET\n"
	       "//npm.corp/:_auth=c2VjcmV0\n"
	       "//npm.corp/:_password=c2VjcmV0\n"
	       "//npm.corp/:username=me\n"
	       "always-auth=true\n"
	       "@scope:registry=https://me:SECRET@npm.corp/\n"
	       "# //registry.npmjs.org/:_authToken=OLD\n"
	       "save-exact=true",
	       "registry=https://registry.npmjs.org/\n"
	       "//npm.corp/:username=me\n"
	       "@scope:registry=https://npm.corp/\n"
	       "save-exact=true",
	       6);
}

static void test_sanitize_pip_conf(void **state)
{
	expect("[global]\n"
	       "index-url = https://__token__:SECRET@pypi.corp/simple\n"
	       "extra-index-url: https://user:SECRET@x.org/simple https://y.org/simple\n"
	       "timeout = 60\n",
	       "[global]\n"
	       "index-url = https://pypi.corp/simple\n"
	       "extra-index-url: https://x.org/simple https://y.org/simple\n"
	       "timeout = 60\n",
	       2);
}

static void test_sanitize_cargo_toml(void **state)
{
	expect("[registry]\n"
	       "token = \"SECRET\"\n"
	       "global-credential-providers = [\"cargo:token\"]\n"
	       "[registries.corp]\n"
	       "index = \"sparse+https://crates.corp/index/\"\n"
	       "token = \"SECRET\"\n"
	       "[build]\n"
	       "jobs = 4\n",
	       "[registry]\n"
	       "[registries.corp]\n"
	       "index = \"sparse+https://crates.corp/index/\"\n"
	       "[build]\n"
	       "jobs = 4\n",
	       3);
}

static void test_sanitize_gitconfig(void **state)
{
	expect("[user]\n"
	       "\tname = Me\n"
	       "\temail = me@example.org\n"
	       "[credential]\n"
	       "\thelper = \"!f() { echo password=SECRET; }; f\"\n"
	       "\tusername = me\n"
	       "[credential \"https://github.com\"]\n"
	       "\thelper = store\n"
	       "[http \"https://git.corp/\"]\n"
	       "\textraHeader = Authorization: Bearer SECRET\n"
	       "\tsslVerify = true\n"
	       "[url \"https://x-access-token:SECRET@github.com/\"]\n"
	       "\tinsteadOf = https://github.com/\n"
	       "[alias]\n"
	       "\tlg = log --oneline \\\n"
	       "\t\t--graph\n",
	       "[user]\n"
	       "\tname = Me\n"
	       "\temail = me@example.org\n"
	       "[credential]\n"
	       "[credential \"https://github.com\"]\n"
	       "[http \"https://git.corp/\"]\n"
	       "\tsslVerify = true\n"
	       "[url \"https://github.com/\"]\n"
	       "\tinsteadOf = https://github.com/\n"
	       "[alias]\n"
	       "\tlg = log --oneline \\\n"
	       "\t\t--graph\n",
	       5);
}

static void test_sanitize_continuation_and_crlf(void **state)
{
	expect("[http]\r\n"
	       "\textraheader = Authorization: \\\r\n"
	       "\t\tBearer SECRET\r\n"
	       "\tpostBuffer = 1\r\n",
	       "[http]\r\n"
	       "\tpostBuffer = 1\r\n",
	       2);
}

static void test_sanitize_go_env(void **state)
{
	expect("GOPROXY=https://me:SECRET@proxy.corp,direct\n"
	       "GOPRIVATE=*.corp\n"
	       "GOAUTH=netrc\n",
	       "GOPROXY=https://proxy.corp,direct\n"
	       "GOPRIVATE=*.corp\n",
	       2);
}

static void test_sanitize_refuses_binary_and_large(void **state)
{
	char *out = NULL;
	char *big = calloc(1, SANITIZE_MAX + 2);

	assert_int_equal(sanitize_config("a\0b", 3, &out, NULL), -EINVAL);
	assert_non_null(big);
	memset(big, 'a', SANITIZE_MAX + 1);
	assert_int_equal(sanitize_config(big, SANITIZE_MAX + 1, &out, NULL), -EINVAL);
	assert_null(out);
	free(big);
	expect("", "", 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sanitize_npmrc),
		cmocka_unit_test(test_sanitize_pip_conf),
		cmocka_unit_test(test_sanitize_cargo_toml),
		cmocka_unit_test(test_sanitize_gitconfig),
		cmocka_unit_test(test_sanitize_continuation_and_crlf),
		cmocka_unit_test(test_sanitize_go_env),
		cmocka_unit_test(test_sanitize_refuses_binary_and_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
