/* The managed ceiling (policy/ceiling.h): parsing, the narrowing check for
 * every key kind (path lists by level, host lists, network.commands,
 * scalars, limits, presets, tiers, copy-on-write), the narrowing of the
 * defaults, the bounded load order naming the source, and the file's
 * ownership rules. */
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
#include "policy/ceiling-internal.h"
#include "policy/policy.h"

static const PolicyContext ctx = { .home = "/srv/ceil-test/home", .workspace = "/srv/ceil-test/ws" };

static Ceiling *parse_ok(const char *text)
{
	Ceiling *c = NULL;
	PolicyError e = {};

	if (ceiling_parse("<test>", text, &c, &e) < 0)
		fail_msg("parse: %s: %s", e.path, e.msg);
	if (ceiling_bind(c, &ctx, &e) < 0)
		fail_msg("bind: %s: %s", e.path, e.msg);
	return c;
}

/* The policy @text on an empty policy, finalized, checked. */
static int check(Ceiling *c, const char *text, PolicyError *e)
{
	WardPolicy *p = policy_new_empty();
	int r;

	assert_non_null(p);
	if (policy_merge_json(p, "<t>", text, e) < 0 || policy_finalize(p, &ctx, e) < 0)
		fail_msg("policy: %s: %s", e->path, e->msg);
	r = ceiling_check(c, p, "SRC", e);
	policy_free(p);
	return r;
}

#define REFUSED(c, text, key)                                                                     \
	do {                                                                                      \
		PolicyError _e = {};                                                              \
		assert_int_equal(check(c, text, &_e), -EPERM);                                    \
		assert_string_equal(_e.file, "SRC");                                              \
		assert_string_equal(_e.path, key);                                                \
		assert_non_null(strstr(_e.msg, "managed"));                                       \
	} while (0)
#define ALLOWED(c, text)                                                                          \
	do {                                                                                      \
		PolicyError _e = {};                                                              \
		if (check(c, text, &_e) != 0)                                                     \
			fail_msg("refused %s: %s: %s", text, _e.path, _e.msg);                    \
	} while (0)

static void test_parse_errors(void **state)
{
	static const char *const bad[] = {
		"[]",
		"{\"tier\": 2}",
		"{\"presets\": [\"git\"]}",
		"{\"fs\": {\"cache\": [\"/x\"]}}",
		"{\"fs\": {\"read\": [\"rel/path\"]}}",
		"{\"env\": {\"set\": {\"A\": \"b\"}}}",
		"{\"network\": {\"credentials\": []}}",
		"{\"allowed_tiers\": []}",
		"{\"allowed_tiers\": [5]}",
		"{\"allowed_tiers\": \"2\"}",
		"{\"allowed_presets\": [\"ruby\"]}",
		"{\"require_cow\": 1}",
		"{\"fs\": {\"reed\": []}}",
		"{\"audit\": \"stderr\"}",
		"{\"audit\": {\"stream\": \"relative.log\"}}",
		"{\"audit\": {\"stream\": \"stderr\", \"other\": 1}}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		Ceiling *c = NULL;
		PolicyError e = {};

		if (ceiling_parse("<test>", bad[i], &c, &e) != -EINVAL)
			fail_msg("accepted %s", bad[i]);
		assert_null(c);
		assert_true(e.msg[0] != '\0');
	}
}

static void test_audit_stream(void **state)
{
	Ceiling *c = parse_ok("{\"audit\": {\"stream\": \"/proc/1/fd/1\"}}");
	(void)state;
	assert_string_equal(ceiling_audit_stream(c), "/proc/1/fd/1");
	ceiling_free(c);
	c = parse_ok("{}");
	assert_null(ceiling_audit_stream(c));
	ceiling_free(c);
}

static void test_fs_levels(void **state)
{
	Ceiling *c = parse_ok("{\"fs\": {\"read\": [\"/srv/ceil-test/docs\"], \"read_exec\": "
			      "[\"/srv/ceil-test/tools\"], \"read_write\": [\"/srv/ceil-test/ws\", "
			      "\"~/cache\"]}}");
	(void)state;
	ALLOWED(c, "{\"fs\": {\"read\": [\"/srv/ceil-test/docs/a\", \"/srv/ceil-test/tools/x\", "
		   "\"/srv/ceil-test/ws/y\"]}}");
	ALLOWED(c, "{\"fs\": {\"read_exec\": [\"/srv/ceil-test/tools/bin\", \"/srv/ceil-test/ws\"]}}");
	ALLOWED(c, "{\"fs\": {\"read_write\": [\"~/cache/npm\", \"/srv/ceil-test/ws/sub\"]}}");
	/* A readable path may not be made executable or writable. */
	REFUSED(c, "{\"fs\": {\"read_exec\": [\"/srv/ceil-test/docs\"]}}", "fs.read_exec");
	REFUSED(c, "{\"fs\": {\"read_write\": [\"/srv/ceil-test/tools\"]}}", "fs.read_write");
	REFUSED(c, "{\"fs\": {\"read\": [\"/srv/ceil-test\"]}}", "fs.read");
	REFUSED(c, "{\"fs\": {\"read\": [\"/srv/ceil-test/docsX\"]}}", "fs.read");
	REFUSED(c, "{\"fs\": {\"read_write\": [\"/srv/ceil-test/ws/../x\"]}}", "fs.read_write");
	REFUSED(c, "{\"fs\": {\"cache\": [\"~/.npm\"]}}", "fs.cache");
	ceiling_free(c);
}

/* A level the ceiling does not name is not bounded. */
static void test_fs_unbounded_levels(void **state)
{
	Ceiling *c = parse_ok("{\"fs\": {\"read_write\": [\"/srv/ceil-test/ws\"]}}");
	(void)state;
	ALLOWED(c, "{\"fs\": {\"read\": [\"/anything\"], \"read_exec\": [\"/opt/x\"]}}");
	REFUSED(c, "{\"fs\": {\"read_write\": [\"/anything\"]}}", "fs.read_write");
	ceiling_free(c);
}

/* A symlink inside the ceiling that points outside it is outside. */
static void test_fs_symlink(void **state)
{
	char dir[] = "/tmp/ceil-test.XXXXXX", text[512], pol[512], link[600];
	Ceiling *c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(link, sizeof(link), "%s/out", dir);
	assert_int_equal(symlink("/etc", link), 0);
	snprintf(text, sizeof(text), "{\"fs\": {\"read_write\": [\"%s\"]}}", dir);
	c = parse_ok(text);
	snprintf(pol, sizeof(pol), "{\"fs\": {\"read_write\": [\"%s/in\"]}}", dir);
	ALLOWED(c, pol);
	snprintf(pol, sizeof(pol), "{\"fs\": {\"read_write\": [\"%s/out/cron.d\"]}}", dir);
	REFUSED(c, pol, "fs.read_write");
	ceiling_free(c);
	(void)unlink(link);
	(void)rmdir(dir);
}

static void test_host_covers(void **state)
{
	(void)state;
	assert_true(ceiling_host_covers("example.com", "example.com"));
	assert_true(ceiling_host_covers("example.com", "EXAMPLE.com:443"));
	assert_true(ceiling_host_covers("*.example.com", "a.example.com"));
	assert_true(ceiling_host_covers("*.example.com", "*.a.example.com"));
	assert_true(ceiling_host_covers("*.example.com", "*.example.com"));
	assert_true(ceiling_host_covers("pypi.org:443", "pypi.org:443"));
	assert_true(ceiling_host_covers("[::1]", "[::1]:80"));
	assert_false(ceiling_host_covers("*.example.com", "example.com"));
	assert_false(ceiling_host_covers("*.example.com", "badexample.com"));
	assert_false(ceiling_host_covers("a.example.com", "*.example.com"));
	assert_false(ceiling_host_covers("pypi.org:443", "pypi.org"));
	assert_false(ceiling_host_covers("pypi.org:443", "pypi.org:80"));
	assert_false(ceiling_host_covers("example.com", "example.com.evil.org"));
}

static void test_network(void **state)
{
	Ceiling *c = parse_ok("{\"network\": {\"mode\": \"proxy\", \"allow\": [\"*.example.com\"], "
			      "\"commands\": {\"pip\": [\"pypi.org\"]}, \"host_ports\": [5432], "
			      "\"hosts\": {\"db.example.com\": \"10.0.0.5\"}}}");
	Ceiling *maxc = parse_ok("{\"network\": {\"max_connections\": 50}}");
	Ceiling *none = parse_ok("{\"network\": {\"mode\": \"none\"}}");
	(void)state;
	ALLOWED(c, "{\"network\": {\"mode\": \"proxy\", \"allow\": [\"api.example.com:443\"]}}");
	ALLOWED(maxc, "{\"network\": {\"max_connections\": 10}}");
	REFUSED(c, "{\"network\": {\"mode\": \"proxy\", \"allow\": [\"evil.org\"]}}", "network.allow");
	REFUSED(maxc, "{\"network\": {\"mode\": \"proxy\", \"max_connections\": 51}}",
		"network.max_connections");
	/* network.commands: the ceiling's list for that command, or its allow. */
	ALLOWED(c, "{\"network\": {\"commands\": {\"pip\": [\"pypi.org\", \"x.example.com\"]}}}");
	REFUSED(c, "{\"network\": {\"commands\": {\"npm\": [\"pypi.org\"]}}}", "network.commands.npm");
	REFUSED(c, "{\"network\": {\"commands\": {\"pip\": [\"evil.org\"]}}}", "network.commands.pip");
	ALLOWED(c, "{\"network\": {\"host_ports\": [5432]}}");
	REFUSED(c, "{\"network\": {\"host_ports\": [22]}}", "network.host_ports");
	ALLOWED(c, "{\"network\": {\"hosts\": {\"db.example.com\": \"10.0.0.5\"}}}");
	REFUSED(c, "{\"network\": {\"hosts\": {\"db.example.com\": \"10.6.6.6\"}}}", "network.hosts");
	/* none is below proxy; with none, no port of the host either. */
	ALLOWED(none, "{\"network\": {\"mode\": \"none\"}}");
	REFUSED(none, "{\"network\": {\"mode\": \"proxy\"}}", "network.mode");
	REFUSED(none, "{\"network\": {\"host_ports\": [8080]}}", "network.host_ports");
	ceiling_free(c);
	ceiling_free(maxc);
	ceiling_free(none);
}

static void test_scalars(void **state)
{
	Ceiling *c = parse_ok("{\"git\": \"read-only\", \"limits\": {\"memory_mb\": 1024, "
			      "\"timeout_s\": 60}, \"sandbox\": {\"allow_ptrace\": false}}");
	Ceiling *off = parse_ok("{\"git\": \"off\", \"sandbox\": {\"allow_nested_sandbox\": true}}");
	(void)state;
	ALLOWED(c, "{\"git\": \"off\", \"limits\": {\"memory_mb\": 512, \"timeout_s\": 60}}");
	REFUSED(c, "{\"git\": \"commit\", \"limits\": {\"memory_mb\": 512, \"timeout_s\": 60}}", "git");
	REFUSED(c, "{\"limits\": {\"memory_mb\": 1025, \"timeout_s\": 60}}", "limits.memory_mb");
	/* No limit at all is above a maximum. */
	REFUSED(c, "{\"limits\": {\"memory_mb\": 100}}", "limits.timeout_s");
	REFUSED(c, "{\"limits\": {\"memory_mb\": 1, \"timeout_s\": 1}, \"sandbox\": "
		   "{\"allow_ptrace\": true}}",
		"sandbox.allow_ptrace");
	REFUSED(off, "{\"git\": \"read-only\"}", "git");
	ALLOWED(off, "{\"git\": \"off\", \"sandbox\": {\"allow_nested_sandbox\": true}}");
	ceiling_free(c);
	ceiling_free(off);
}

static void test_presets_tiers_cow(void **state)
{
	Ceiling *c = parse_ok("{\"allowed_presets\": [\"git\"], \"allowed_tiers\": [1, 2], "
			      "\"require_cow\": true, \"fs\": {\"read_write\": [\"/srv/ceil-test\"]}}");
	Ceiling *t1 = parse_ok("{\"allowed_tiers\": [1]}");
	PolicyError e = {};
	(void)state;
	ALLOWED(c, "{\"presets\": [\"git\"], \"tier\": 1}");
	REFUSED(c, "{\"presets\": [\"node\"]}", "presets");
	REFUSED(c, "{\"tier\": 0}", "tier");
	assert_int_equal(ceiling_check_run(c, 2, "T", true, "/srv/ceil-test/ws", &e), 0);
	assert_int_equal(ceiling_check_run(c, 0, "T", true, "/srv/ceil-test/ws", &e), -EPERM);
	assert_string_equal(e.file, "T");
	assert_int_equal(ceiling_check_run(c, 2, "T", false, "/srv/ceil-test/ws", &e), -EPERM);
	assert_string_equal(e.path, "cow");
	assert_int_equal(ceiling_check_run(c, 2, "T", true, "/srv/other", &e), -EPERM);
	assert_string_equal(e.path, "workspace");
	assert_int_equal(ceiling_default_tier(c), 2);
	assert_int_equal(ceiling_default_tier(t1), 1);
	assert_int_equal(ceiling_default_tier(NULL), 2);
	ceiling_free(c);
	ceiling_free(t1);
}

/* The defaults are narrowed, floors added, limits filled; then each source
 * is checked as it is merged and the first that widens is named. */
static void test_bounded_load(void **state)
{
	Ceiling *c = parse_ok("{\"fs\": {\"read\": [\"/etc/ssl\"], \"read_exec\": [\"/usr\"], "
			      "\"read_write\": [\"/srv/ceil-test/ws\"], \"deny\": [\"/usr/local/secret\"], "
			      "\"protected\": [\"deploy\"]}, \"limits\": {\"memory_mb\": 100}, "
			      "\"env\": {\"strip\": [\"CORP_*\"]}, \"git\": \"off\"}");
	char *const git[] = { (char *)"git", NULL };
	WardPolicy *p = NULL;
	PolicyError e = {};
	(void)state;

	setenv("XDG_CONFIG_HOME", "/srv/ceil-test/none", 1);
	assert_int_equal(policy_load_bounded(c, NULL, NULL, "{\"limits\": {\"memory_mb\": 50}}", NULL,
					     &ctx, &p, &e),
			 0);
	assert_true(strv_contains(p->fs_read, "/etc/ssl"));
	assert_false(strv_contains(p->fs_read, "/etc"));
	assert_false(strv_contains(p->fs_read_exec, "/opt"));
	assert_true(strv_contains(p->fs_deny, "/usr/local/secret"));
	assert_true(strv_contains(p->fs_protected, "deploy"));
	assert_true(strv_contains(p->env_strip, "CORP_*"));
	assert_int_equal(p->memory_mb, 50);
	assert_int_equal(p->git_mode, GIT_MODE_OFF);
	policy_free(p);
	p = NULL;

	/* A flag widening: named as the command line. */
	assert_int_equal(policy_load_bounded(c, NULL, NULL, "{\"limits\": {\"memory_mb\": 500}}",
					     NULL, &ctx, &p, &e),
			 -EPERM);
	assert_null(p);
	assert_string_equal(e.file, "<command line>");
	assert_string_equal(e.path, "limits.memory_mb");
	assert_int_equal(policy_load_bounded(c, NULL, NULL, "{\"git\": \"commit\"}", "libward caller",
					     &ctx, &p, &e),
			 -EPERM);
	assert_string_equal(e.file, "<libward caller>");
	/* A preset that reads outside the ceiling: named as the preset. */
	assert_int_equal(policy_load_bounded(c, NULL, git, NULL, NULL, &ctx, &p, &e), -EPERM);
	assert_string_equal(e.file, "--preset git");
	ceiling_free(c);
}

/* A ceiling that lets a run write the managed file bounds nothing. */
static void test_self_writable(void **state)
{
	Ceiling *c = NULL;
	PolicyError e = {};
	(void)state;

	assert_int_equal(ceiling_parse("/srv/ceil-test/etc/managed.json",
				       "{\"fs\": {\"read_write\": [\"/srv/ceil-test\"]}}", &c, &e),
			 0);
	assert_int_equal(ceiling_bind(c, &ctx, &e), -EPERM);
	ceiling_free(c);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

/* Who may have written the file: only root, in directories only root writes. */
static void test_load_ownership(void **state)
{
	char tmp[] = "/tmp/ceil-own.XXXXXX", path[256];
	Ceiling *c = NULL;
	PolicyError e = {};
	(void)state;

	/* /tmp is writable by others: refused whoever owns the file. */
	assert_non_null(mkdtemp(tmp));
	assert_int_equal(chmod(tmp, 0755), 0);
	snprintf(path, sizeof(path), "%s/managed.json", tmp);
	write_file(path, "{}", 0644);
	assert_int_equal(ceiling_load(path, &c, &e), -EPERM);
	assert_non_null(strstr(e.msg, "'/tmp'"));
	assert_int_equal(ceiling_load("/nonexistent-ceil/managed.json", &c, &e), -ENOENT);
	(void)unlink(path);
	(void)rmdir(tmp);

	if (getuid() != 0) {
		/* The rest needs a root-owned directory to write to. */
		return;
	}
	char run[] = "/run/ceil-own.XXXXXX", sub[300], lnk[300];

	assert_non_null(mkdtemp(run));
	assert_int_equal(chmod(run, 0755), 0);
	snprintf(path, sizeof(path), "%s/managed.json", run);
	write_file(path, "{\"git\": \"off\"}", 0644);
	assert_int_equal(ceiling_load(path, &c, &e), 0);
	assert_int_equal(strlen(ceiling_digest(c)), 64);
	/* sha256 of the bytes: printf '{"git": "off"}' | sha256sum */
	assert_string_equal(ceiling_digest(c),
			    "0cb7897b02342262f83f589edf563d430bb0de4ff3940de3cf05c8111987151b");
	c = ceiling_free(c);
	/* Through root's symlinks (how Kubernetes mounts a ConfigMap). */
	snprintf(sub, sizeof(sub), "%s/..data", run);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/..data/m.json", run);
	write_file(sub, "{}", 0644);
	snprintf(lnk, sizeof(lnk), "%s/link.json", run);
	assert_int_equal(symlink("..data/m.json", lnk), 0);
	assert_int_equal(ceiling_load(lnk, &c, &e), 0);
	c = ceiling_free(c);
	/* A symlink of root's leading nowhere: refused, not "no ceiling". */
	snprintf(sub, sizeof(sub), "%s/dangling.json", run);
	assert_int_equal(symlink("..data/gone.json", sub), 0);
	assert_int_equal(ceiling_load(sub, &c, &e), -EPERM);
	assert_non_null(strstr(e.msg, "does not exist"));
	/* Group- or world-writable file, another owner, writable directory. */
	assert_int_equal(chmod(path, 0664), 0);
	assert_int_equal(ceiling_load(path, &c, &e), -EPERM);
	assert_non_null(strstr(e.msg, "writable by its group"));
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(chown(path, 65534, 0), 0);
	assert_int_equal(ceiling_load(path, &c, &e), -EPERM);
	assert_non_null(strstr(e.msg, "owned by uid 65534"));
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(chmod(run, 0757), 0);
	assert_int_equal(ceiling_load(path, &c, &e), -EPERM);
	assert_non_null(strstr(e.msg, "writable by others"));
	/* A directory not root's on the way. */
	assert_int_equal(chmod(run, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/..data", run);
	assert_int_equal(chown(sub, 65534, 0), 0);
	assert_int_equal(ceiling_load(lnk, &c, &e), -EPERM);
	assert_non_null(strstr(e.msg, "owned by uid 65534"));
	/* Not a regular file. */
	assert_int_equal(ceiling_load(run, &c, &e), -EPERM);
	assert_null(c);
	snprintf(sub, sizeof(sub), "rm -rf '%s'", run);
	assert_int_equal(system(sub), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_audit_stream),
		cmocka_unit_test(test_fs_levels),
		cmocka_unit_test(test_fs_unbounded_levels),
		cmocka_unit_test(test_fs_symlink),
		cmocka_unit_test(test_host_covers),
		cmocka_unit_test(test_network),
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_presets_tiers_cow),
		cmocka_unit_test(test_bounded_load),
		cmocka_unit_test(test_self_writable),
		cmocka_unit_test(test_load_ownership),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
