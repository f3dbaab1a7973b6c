/* libward's policy object (src/lib/lib-policy.c): what each call adds is
 * checked at once against a preview, and the run gets the same additions
 * as ONE merged document (RunRequest.policy_overrides). These tests hold
 * the two to the same result: the preview after a sequence of calls and
 * defaults + that one document, merged as the run module does, give the
 * same effective policy. Also the JSON merge itself. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "lib/lib-internal.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(WardPolicy *, policy_free)

static const PolicyContext ctx = { .home = "/home/u", .workspace = "/home/u/proj" };

static char *effective(WardPolicy *p)
{
	PolicyError e = {};

	assert_int_equal(policy_finalize(p, &ctx, &e), 0);
	return policy_to_json(p);
}

/* The policy the run module would build from @p's sources. */
static char *as_run_builds_it(const ward_policy *p)
{
	_cleanup_free_ char *file = NULL, *text = NULL;
	_cleanup_strv_ char **presets = NULL;
	_cleanup_cjson_ cJSON *doc = NULL;
	_cleanup_(policy_freep) WardPolicy *w = NULL;
	PolicyError e = {};

	assert_int_equal(lib_policy_copy_sources(p, &file, &presets, &doc), 0);
	assert_int_equal(policy_load(file, presets, &w, &e), 0);
	text = cJSON_PrintUnformatted(doc);
	assert_int_equal(policy_merge_json(w, "<command line>", text, &e), 0);
	return effective(w);
}

static char *as_preview(const ward_policy *p)
{
	_cleanup_(policy_freep) WardPolicy *c = policy_copy(p->preview);

	return effective(c);
}

static void test_lib_policy_one_document_is_the_sequence(void **state)
{
	ward_policy *p = ward_policy_new();
	_cleanup_free_ char *a = NULL, *b = NULL;

	assert_non_null(p);
	assert_int_equal(ward_policy_add_preset(p, "git"), 0);
	assert_int_equal(ward_policy_add_path(p, WARD_FS_READ, "/opt/a"), 0);
	assert_int_equal(ward_policy_merge_json(p, "{\"fs\":{\"read\":[\"/opt/b\",\"/opt/a\"]},"
						   "\"limits\":{\"timeout_s\":5}}"),
			 0);
	assert_int_equal(ward_policy_set_limit(p, "timeout_s", 9), 0);
	assert_int_equal(ward_policy_allow_host(p, "example.org"), 0);
	assert_int_equal(ward_policy_allow_host(p, "*.example.net"), 0);
	assert_int_equal(ward_policy_set_network(p, "none"), 0);
	assert_int_equal(ward_policy_add_path(p, WARD_FS_DENY, "~/.ssh"), 0);
	assert_int_equal(ward_policy_add_path(p, WARD_FS_PROTECTED, ".secrets"), 0);
	assert_int_equal(ward_policy_merge_json(p, "{\"env\":{\"set\":{\"A\":\"1\"}}}"), 0);
	assert_int_equal(ward_policy_merge_json(p, "{\"env\":{\"set\":{\"A\":\"2\",\"B\":\"3\"}}}"), 0);
	a = as_preview(p);
	b = as_run_builds_it(p);
	assert_string_equal(a, b);
	/* The last scalar wins, lists append. */
	assert_non_null(strstr(a, "\"timeout_s\":\t9"));
	assert_non_null(strstr(a, "/opt/b"));
	assert_non_null(strstr(a, "*.example.net"));
	ward_policy_free(p);
}

static void test_lib_policy_refused_call_changes_nothing(void **state)
{
	ward_policy *p = ward_policy_new();
	_cleanup_free_ char *before = NULL, *after = NULL, *b = NULL;

	assert_int_equal(ward_policy_add_path(p, WARD_FS_READ, "/opt/a"), 0);
	before = as_preview(p);
	/* Valid first half, invalid second: nothing of it is kept. */
	assert_int_equal(ward_policy_merge_json(p, "{\"fs\":{\"read\":[\"/opt/c\"]},\"bogus\":1}"),
			 -EINVAL);
	assert_non_null(strstr(ward_policy_last_error(p), "bogus"));
	assert_int_equal(ward_policy_add_path(p, WARD_FS_READ, "relative/path"), -EINVAL);
	assert_int_equal(ward_policy_add_path(p, (ward_fs_access)42, "/x"), -EINVAL);
	assert_int_equal(ward_policy_set_limit(p, "pids", UINT64_MAX), -ERANGE);
	assert_int_equal(ward_policy_add_preset(p, "nope"), -EINVAL);
	after = as_preview(p);
	assert_string_equal(before, after);
	b = as_run_builds_it(p);
	assert_string_equal(before, b);
	ward_policy_free(p);
}

static void test_lib_policy_one_file(void **state)
{
	ward_policy *p = ward_policy_new();

	assert_int_equal(ward_policy_load_file(p, "/nonexistent/p.json"), -ENOENT);
	assert_non_null(strstr(ward_policy_last_error(p), "/nonexistent/p.json"));
	/* The failed file is not kept: another may be given. */
	assert_int_equal(ward_policy_load_file(p, TEST_DATA_DIR "/policies/valid-full.json"), 0);
	assert_int_equal(ward_policy_load_file(p, TEST_DATA_DIR "/policies/valid-full.json"),
			 -EBUSY);
	ward_policy_free(p);
}

static void test_lib_json_merge(void **state)
{
	_cleanup_cjson_ cJSON *into = cJSON_Parse("{\"a\":[1],\"o\":{\"x\":1,\"l\":[\"p\"]},\"s\":\"old\"}");
	_cleanup_cjson_ cJSON *from = cJSON_Parse("{\"a\":[2],\"o\":{\"y\":2,\"l\":[\"q\"]},\"s\":\"new\",\"n\":{}}");
	_cleanup_free_ char *t = NULL;

	assert_int_equal(lib_json_merge(into, from), 0);
	t = cJSON_PrintUnformatted(into);
	assert_string_equal(t, "{\"a\":[1,2],\"o\":{\"x\":1,\"l\":[\"p\",\"q\"],\"y\":2},\"s\":\"new\",\"n\":{}}");
}

int main(void)
{
	/* The user's policy file must not take part. */
	setenv("XDG_CONFIG_HOME", "/nonexistent", 1);
	setenv("HOME", "/home/u", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lib_policy_one_document_is_the_sequence),
		cmocka_unit_test(test_lib_policy_refused_call_changes_nothing),
		cmocka_unit_test(test_lib_policy_one_file),
		cmocka_unit_test(test_lib_json_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
