/* Policy finalize (expansion, normalization, cross-field rules), the JSON
 * round trip and hash, the defaults golden file, and policy_load's order. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/policy.h"

#define POLICIES TEST_DATA_DIR "/policies"

static const PolicyContext ctx = { .home = "/home/u", .workspace = "/home/u/proj" };

static WardPolicy *load_file(const char *name)
{
	char path[1024];
	PolicyError e = { 0 };
	WardPolicy *p = policy_new_defaults();

	assert_non_null(p);
	snprintf(path, sizeof(path), "%s/%s", POLICIES, name);
	if (policy_merge_file(p, path, &e) < 0)
		fail_msg("%s: %s: %s", e.file, e.path, e.msg);
	return p;
}

static WardPolicy *merge_text(WardPolicy *p, const char *text)
{
	PolicyError e = { 0 };

	if (policy_merge_json(p, "t.json", text, &e) < 0)
		fail_msg("%s: %s: %s", e.file, e.path, e.msg);
	return p;
}

static void finalize_ok(WardPolicy *p)
{
	PolicyError e = { 0 };

	if (policy_finalize(p, &ctx, &e) < 0)
		fail_msg("%s: %s: %s", e.file, e.path, e.msg);
}


/* The defaults are a security decision: pin them to a golden file, so a
 * change shows up in review (regenerate: HOME=/home/u XDG_CONFIG_HOME=/none
 * ward policy show -w /tmp > tests/data/expected/policy-defaults.json). */
static void test_policy_defaults_golden(void **state)
{
	_cleanup_fclose_ FILE *f = fopen(TEST_DATA_DIR "/expected/policy-defaults.json", "re");
	_cleanup_free_ char *want = calloc(1, 65536), *got = NULL;
	WardPolicy *p = policy_new_defaults();
	size_t n;

	assert_non_null(f);
	n = fread(want, 1, 65535, f);
	assert_true(n > 0 && want[n - 1] == '\n');
	want[n - 1] = '\0';
	finalize_ok(p);
	got = policy_to_json(p);
	assert_string_equal(got, want);
	policy_free(p);
}

static void test_policy_finalize_expand_normalize(void **state)
{
	WardPolicy *p = policy_new_empty();

	merge_text(p, "{\"fs\":{\"read\":[\"~/a/../b//c/.\",\"~\",\"/home/u/b/c\",\"/x/./y/\"],"
		      "\"protected\":[\"./a//b/\",\"a/b\"]}}");
	/* Flags may add relative paths: they resolve against the workspace. */
	assert_int_equal(strv_extend(&p->fs_read_write, "out/../dist"), 0);
	finalize_ok(p);
	assert_int_equal(strv_length(p->fs_read), 3);
	assert_string_equal(p->fs_read[0], "/home/u/b/c");
	assert_string_equal(p->fs_read[1], "/home/u");
	assert_string_equal(p->fs_read[2], "/x/y");
	assert_string_equal(p->fs_read_write[0], "/home/u/proj/dist");
	assert_int_equal(strv_length(p->fs_protected), 1);
	assert_string_equal(p->fs_protected[0], "a/b");
	policy_free(p);
}

static void test_policy_finalize_deny_ancestor(void **state)
{
	static const char *const bad[] = { "/", "/home", "~", "/home/u/proj", "~/proj/" };
	static const char *const good[] = { "/home/u/proj2", "/home/u/proj/sub", "~/.ssh" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		WardPolicy *p = policy_new_defaults();
		_cleanup_free_ char *before = NULL, *after = NULL;
		PolicyError e = { 0 };

		assert_int_equal(strv_extend(&p->fs_deny, bad[i]), 0);
		before = policy_to_json(p);
		assert_int_equal(policy_finalize(p, &ctx, &e), -EINVAL);
		assert_string_equal(e.path, "fs.deny");
		assert_non_null(strstr(e.msg, "contains the workspace \"/home/u/proj\""));
		after = policy_to_json(p);
		assert_string_equal(before, after);
		policy_free(p);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		WardPolicy *p = policy_new_defaults();
		assert_int_equal(strv_extend(&p->fs_deny, good[i]), 0);
		finalize_ok(p);
		policy_free(p);
	}
}

static void test_policy_finalize_rejects_flag_values(void **state)
{
	static const char *const bad_fs[] = { "/a/*", "~x/y", "" };
	static const char *const bad_prot[] = { "/abs", "..", "a/../..", "." };

	for (size_t i = 0; i < sizeof(bad_fs) / sizeof(bad_fs[0]); i++) {
		WardPolicy *p = policy_new_empty();
		PolicyError e = { 0 };
		assert_int_equal(strv_extend(&p->fs_read, bad_fs[i]), 0);
		assert_int_equal(policy_finalize(p, &ctx, &e), -EINVAL);
		assert_string_equal(e.path, "fs.read");
		policy_free(p);
	}
	for (size_t i = 0; i < sizeof(bad_prot) / sizeof(bad_prot[0]); i++) {
		WardPolicy *p = policy_new_empty();
		PolicyError e = { 0 };
		assert_int_equal(strv_extend(&p->fs_protected, bad_prot[i]), 0);
		assert_int_equal(policy_finalize(p, &ctx, &e), -EINVAL);
		assert_string_equal(e.path, "fs.protected");
		policy_free(p);
	}
}

static void test_policy_json_round_trip(void **state)
{
	static const char *const files[] = { "valid-full.json", "valid-network-proxy.json",
					     "valid-env-only.json", "valid-presets.json" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		WardPolicy *p = load_file(files[i]);
		_cleanup_free_ char *j1 = NULL, *j2 = NULL, *j3 = NULL;
		char h1[65], h2[65];

		finalize_ok(p);
		j1 = policy_to_json(p);
		assert_non_null(j1);

		/* Reloaded on top of the defaults (as policy_load would)... */
		WardPolicy *q = policy_new_defaults();
		merge_text(q, j1);
		finalize_ok(q);
		j2 = policy_to_json(q);
		assert_string_equal(j1, j2);

		/* ...and on its own. */
		WardPolicy *r = policy_new_empty();
		merge_text(r, j1);
		finalize_ok(r);
		j3 = policy_to_json(r);
		assert_string_equal(j1, j3);

		assert_int_equal(policy_hash(p, h1), 0);
		assert_int_equal(policy_hash(r, h2), 0);
		assert_string_equal(h1, h2);
		assert_int_equal(strlen(h1), 64);
		assert_int_equal(strspn(h1, "0123456789abcdef"), 64);
		policy_free(p);
		policy_free(q);
		policy_free(r);
	}
}

static void test_policy_hash_changes(void **state)
{
	WardPolicy *p = policy_new_defaults();
	char h1[65], h2[65], h3[65];

	assert_int_equal(policy_hash(p, h1), 0);
	assert_int_equal(policy_hash(p, h2), 0);
	assert_string_equal(h1, h2);
	p->allow_ptrace = true;
	assert_int_equal(policy_hash(p, h3), 0);
	assert_string_not_equal(h1, h3);
	policy_free(p);
}

static void test_policy_load_order(void **state)
{
	char dir[] = "/tmp/test-policy-XXXXXX", path[256], cfg[256];
	char *presets[] = { "python", NULL };
	_cleanup_free_ char *old_xdg = getenv("XDG_CONFIG_HOME") ? strdup(getenv("XDG_CONFIG_HOME")) : NULL;
	WardPolicy *p = NULL;
	PolicyError e = { 0 };
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(cfg, sizeof(cfg), "%s/ward", dir);
	assert_int_equal(mkdir(cfg, 0700), 0);
	snprintf(path, sizeof(path), "%s/ward/policy.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"fs\":{\"read\":[\"/from-user-file\"]},\"limits\":{\"pids\":7}}", f);
	fclose(f);

	/* The default file under $XDG_CONFIG_HOME is picked up. */
	setenv("XDG_CONFIG_HOME", dir, 1);
	assert_int_equal(policy_load(NULL, presets, &p, &e), 0);
	assert_int_equal(p->pids, 7);
	/* defaults, then presets, then the file */
	size_t i_etc = 99, i_pip = 99, i_user = 99;
	for (size_t i = 0; p->fs_read[i]; i++) {
		if (strcmp(p->fs_read[i], "/etc") == 0)
			i_etc = i;
		if (strcmp(p->fs_read[i], "~/.config/pip/pip.conf") == 0)
			i_pip = i;
		if (strcmp(p->fs_read[i], "/from-user-file") == 0)
			i_user = i;
	}
	assert_true(i_etc < i_pip && i_pip < i_user && i_user != 99);
	p = policy_free(p);

	/* A missing default file is fine... */
	snprintf(path, sizeof(path), "%s/none", dir);
	setenv("XDG_CONFIG_HOME", path, 1);
	assert_int_equal(policy_load(NULL, NULL, &p, &e), 0);
	assert_int_equal(p->pids, 4096);
	assert_int_equal(strv_length(p->sources), 0);
	p = policy_free(p);

	/* ...a missing explicit one is not. */
	assert_true(policy_load(path, NULL, &p, &e) < 0);
	assert_string_equal(e.file, path);
	assert_non_null(strstr(e.msg, "No such file"));

	if (old_xdg)
		setenv("XDG_CONFIG_HOME", old_xdg, 1);
	else
		unsetenv("XDG_CONFIG_HOME");
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/* A copy is deep: changing it leaves the original alone. */
static void test_policy_copy_is_deep(void **state)
{
	WardPolicy *p = load_file("valid-network-proxy.json");
	_cleanup_free_ char *before = policy_to_json(p), *after = NULL;
	WardPolicy *c = policy_copy(p);

	assert_non_null(c);
	assert_int_equal(strv_extend(&c->fs_read, "/changed"), 0);
	free(c->net_commands[0].allow[0]);
	c->net_commands[0].allow[0] = strdup("changed.example");
	free(c->net_hosts[0].address);
	c->net_hosts[0].address = strdup("10.9.9.9");
	c->net_local_ports[0] = 1;
	c->net_host_ports[0] = 1;
	c->pids = 1;
	after = policy_to_json(p);
	assert_string_equal(before, after);
	policy_free(c);
	policy_free(p);
}

static void test_policy_net_mode_strings(void **state)
{
	assert_string_equal(net_mode_to_string(NET_MODE_NONE), "none");
	assert_string_equal(net_mode_to_string(NET_MODE_PROXY), "proxy");
	assert_null(net_mode_to_string(_NET_MODE_MAX));
	assert_int_equal(net_mode_from_string("proxy"), NET_MODE_PROXY);
	assert_int_equal(net_mode_from_string("open"), _NET_MODE_INVALID);
	assert_int_equal(net_mode_from_string(NULL), _NET_MODE_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_defaults_golden),
		cmocka_unit_test(test_policy_finalize_expand_normalize),
		cmocka_unit_test(test_policy_finalize_deny_ancestor),
		cmocka_unit_test(test_policy_finalize_rejects_flag_values),
		cmocka_unit_test(test_policy_json_round_trip),
		cmocka_unit_test(test_policy_hash_changes),
		cmocka_unit_test(test_policy_load_order),
		cmocka_unit_test(test_policy_copy_is_deep),
		cmocka_unit_test(test_policy_net_mode_strings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
