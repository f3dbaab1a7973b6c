/* Tier 1's pure parts: the Landlock rules from a policy on a temporary
 * tree (tier1-rules.c), the wall check (walls.c) and the tier table
 * (tiers.c). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/strv.h"
#include "linux/tier1-rules.h"
#include "linux/walls.h"
#include "policy/policy.h"
#include "probe/tiers.h"

static char root[64];

static void mk(const char *rel, bool dir)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (dir)
		assert_int_equal(mkdir(p, 0755), 0);
	else {
		int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
}

static int setup(void **state)
{
	snprintf(root, sizeof(root), "/tmp/ward-test-t1.XXXXXX");
	assert_non_null(mkdtemp(root));
	mk("ws", true);
	mk("ws/.git", true);
	mk("ws/.git/config", false);
	mk("ws/src", true);
	mk("ws/src/main.c", false);
	mk("ws/README", false);
	mk("data", true);
	mk("data/ok", false);
	mk("data/secret", false);
	mk("rw", true);
	mk("rw/secret", false);
	mk("state", true);
	mk("tmp", true);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static char *at(const char *rel)
{
	char *p;
	assert_true(asprintf(&p, "%s/%s", root, rel) > 0);
	return p;
}

/* The class of the rule on @rel, or -1 when none. */
static int class_of(const Tier1Rules *r, const char *rel)
{
	char *p = at(rel);
	int cls = -1;

	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->rules[i].path, p) == 0)
			cls = (int)r->rules[i].cls;
	free(p);
	return cls;
}

static void test_tier1_rules_workspace_and_deny(void **state)
{
	WardPolicy *pol = policy_new_empty();
	char *ws = at("ws"), *tmp = at("tmp"), *st = at("state"), *errpath = NULL;
	WorkspaceScan scan = { 0 };
	ScanItem item = { .rel = (char *)".git", .kind = SCAN_PROTECTED };
	Tier1Rules r;

	assert_non_null(pol);
	assert_int_equal(strv_consume(&pol->fs_read, at("data")), 0);
	assert_int_equal(strv_consume(&pol->fs_deny, at("data/secret")), 0);
	scan.items = &item;
	scan.n = 1;
	Tier1RulesInput in = { .policy = pol, .workspace = ws, .home = "/nonexistent",
			       .state_dir = st, .tmpdir = tmp, .protected_scan = &scan };
	assert_int_equal(tier1_rules_build(&in, &r, &errpath), 0);
	/* The root that holds .git: readable, not writable; .git read-only;
	 * every other entry read-write. */
	assert_int_equal(class_of(&r, "ws"), LANDLOCK_CLASS_READ_EXEC);
	assert_int_equal(class_of(&r, "ws/.git"), LANDLOCK_CLASS_READ);
	assert_int_equal(class_of(&r, "ws/src"), LANDLOCK_CLASS_READ_WRITE);
	assert_int_equal(class_of(&r, "ws/README"), LANDLOCK_CLASS_READ_WRITE);
	/* deny split out of the read grant: data/ok granted, secret not. */
	assert_int_equal(class_of(&r, "data/ok"), LANDLOCK_CLASS_READ);
	assert_int_equal(class_of(&r, "data/secret"), -1);
	assert_int_equal(class_of(&r, "data"), LANDLOCK_CLASS_LIST);
	/* The private TMPDIR; the state dir never. */
	assert_int_equal(class_of(&r, "tmp"), LANDLOCK_CLASS_PRIVATE);
	assert_int_equal(class_of(&r, "state"), -1);
	tier1_rules_done(&r);

	/* Without protected paths the workspace is one grant. */
	scan.n = 0;
	assert_int_equal(tier1_rules_build(&in, &r, &errpath), 0);
	assert_int_equal(class_of(&r, "ws"), LANDLOCK_CLASS_READ_WRITE);
	assert_int_equal(class_of(&r, "ws/src"), -1);
	tier1_rules_done(&r);

	/* The test switch grants the state dir, for the wall check to catch. */
	in.test_break = "write";
	assert_int_equal(tier1_rules_build(&in, &r, &errpath), 0);
	assert_int_equal(class_of(&r, "state"), LANDLOCK_CLASS_READ_WRITE);
	tier1_rules_done(&r);

	policy_free(pol);
	free(ws);
	free(tmp);
	free(st);
}

static void test_tier1_rules_refuse_deny_under_writable(void **state)
{
	WardPolicy *pol = policy_new_empty();
	char *ws = at("ws"), *tmp = at("tmp"), *errpath = NULL;
	Tier1Rules r;

	assert_int_equal(strv_consume(&pol->fs_read_write, at("rw")), 0);
	assert_int_equal(strv_consume(&pol->fs_deny, at("rw/secret")), 0);
	Tier1RulesInput in = { .policy = pol, .workspace = ws, .home = "/nonexistent",
			       .tmpdir = tmp };
	assert_int_equal(tier1_rules_build(&in, &r, &errpath), -EPERM);
	assert_non_null(errpath);
	assert_non_null(strstr(errpath, "rw/secret"));
	assert_int_equal(r.n, 0);
	free(errpath);
	errpath = NULL;

	/* A denied path inside the workspace: refused too. */
	strv_free(pol->fs_read_write);
	pol->fs_read_write = NULL;
	strv_free(pol->fs_deny);
	pol->fs_deny = NULL;
	assert_int_equal(strv_consume(&pol->fs_deny, at("ws/src")), 0);
	assert_int_equal(tier1_rules_build(&in, &r, &errpath), -EPERM);
	assert_non_null(strstr(errpath, "ws/src"));
	free(errpath);
	policy_free(pol);
	free(ws);
	free(tmp);
}

static void test_walls_plan_and_check(void **state)
{
	static const uint16_t allowed[] = { 9, 1 };
	SandboxStep wall = SANDBOX_STEP_NONE;
	const char *detail = NULL;
	char *st = at("state");
	WallsPlan w;

	/* The port tried is one the run may not reach. */
	assert_int_equal(walls_plan_init(&w, st, true, allowed, 2), 0);
	assert_true(w.connect);
	assert_int_equal(w.connect_port, 7);
	assert_int_equal(walls_plan_init(&w, st, false, NULL, 0), 0);
	assert_false(w.connect);

	/* Unconfined (this test process): the write wall is down, the check
	 * says so, names it and leaves nothing behind. */
	assert_int_equal(walls_check(&w, &wall, &detail), -EPERM);
	assert_int_equal(wall, SANDBOX_STEP_WALL_WRITE);
	assert_string_equal(sandbox_step_to_string(wall), "wall-write");
	assert_int_equal(access(w.write_path, F_OK), -1);
	/* With the write target gone (nothing to create in), the read wall:
	 * the audit log exists here, so it is readable: down too. */
	w.write_path[0] = '\0';
	mk("state/audit.jsonl", false);
	assert_int_equal(walls_check(&w, &wall, &detail), -EPERM);
	assert_int_equal(wall, SANDBOX_STEP_WALL_READ);
	/* Nothing to read: every wall that is tried holds. */
	w.read_path[0] = '\0';
	assert_int_equal(walls_check(&w, &wall, &detail), 0);
	free(st);
}

static void test_tiers_table(void **state)
{
	TierFact f;
	char *md;
	bool seen_invisible = false;

	assert_true(tier_guarantees() >= 12);
	for (size_t i = 0; i < tier_guarantees(); i++) {
		assert_int_equal(tier_fact(2, 7, i, &f), 0);
		assert_non_null(f.how);
		if (strcmp(f.id, "processes-invisible") == 0) {
			seen_invisible = true;
			assert_int_equal(f.hold, TIER_HELD);
			assert_int_equal(tier_fact(1, 7, i, &f), 0);
			assert_int_equal(f.hold, TIER_NOT_HELD);
			assert_int_equal(tier_fact(3, 7, i, &f), 0);
			assert_int_equal(f.hold, TIER_HELD);
		}
		if (strcmp(f.id, "network") == 0) {
			/* T1's network wall needs Landlock ABI 4. */
			assert_int_equal(tier_fact(1, 3, i, &f), 0);
			assert_int_equal(f.hold, TIER_NOT_HELD);
			assert_int_equal(tier_fact(1, 4, i, &f), 0);
			assert_int_equal(f.hold, TIER_HELD);
		}
		if (strcmp(f.id, "unix-pathname") == 0) {
			assert_int_equal(tier_fact(2, 8, i, &f), 0);
			assert_int_equal(f.hold, TIER_PARTLY);
			assert_int_equal(tier_fact(2, 9, i, &f), 0);
			assert_int_equal(f.hold, TIER_HELD);
		}
	}
	assert_true(seen_invisible);
	assert_int_equal(tier_fact(4, 7, 0, &f), -EINVAL);
	assert_int_equal(tier_fact(1, 7, tier_guarantees(), &f), -EINVAL);
	md = tier_table_markdown();
	assert_non_null(md);
	assert_non_null(strstr(md, "| guarantee | T0 | T1 | T2 | T3 |"));
	assert_non_null(strstr(md, "Landlock ABI 4+"));
	free(md);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tier1_rules_workspace_and_deny),
		cmocka_unit_test(test_tier1_rules_refuse_deny_under_writable),
		cmocka_unit_test(test_walls_plan_and_check),
		cmocka_unit_test(test_tiers_table),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
