/* sandbox-plan: the plan of a T2 run on a temporary tree.
 *  - golden: the mount plan (and its Landlock rules) for a policy that
 *    reads, executes, writes a missing cache, denies beneath a grant,
 *    protects a file and commits to git, dumped as text and compared with
 *    tests/data/expected/sandbox-plan-mounts.txt (WARD_GOLDEN_UPDATE=1
 *    rewrites it);
 *  - a plan creates nothing: after sandbox_plan_new and sandbox_plan_free
 *    the tree is as it was and no cgroup exists; sandbox_acquire makes them
 *    (so the check would see them), sandbox_plan_free removes them. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "linux/limits-cgroup.h"
#include "linux/limits.h"
#include "linux/sandbox-internal.h"
#include "linux/sandbox.h"
#include "policy/policy.h"

#define GOLDEN TEST_DATA_DIR "/expected/sandbox-plan-mounts.txt"

static char root[PATH_MAX];
static char session[64];

static char *path(const char *rel)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/%s", root, rel) > 0);
	return p;
}

static void mkd(const char *rel)
{
	_cleanup_free_ char *p = path(rel);
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	assert_int_equal(system(cmd), 0);
}

static void put(const char *rel, const char *text)
{
	_cleanup_free_ char *p = path(rel);
	FILE *f = fopen(p, "we");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static bool exists(const char *rel)
{
	_cleanup_free_ char *p = path(rel);
	struct stat st;

	return lstat(p, &st) == 0;
}

static int setup(void **state)
{
	char t[] = "/tmp/test-sandbox-plan.XXXXXX";

	assert_non_null(mkdtemp(t));
	assert_non_null(realpath(t, root));
	snprintf(session, sizeof(session), "plantest-%d-%ld", (int)getpid(), (long)time(NULL));
	mkd("home/.ssh");
	put("home/.ssh/id", "key\n");
	mkd("data/pub");
	mkd("data/secret");
	mkd("tools");
	mkd("config");
	mkd("ws/src");
	put("ws/src/a.c", "int main(void) { return 0; }\n");
	put("ws/.env", "TOKEN=x\n");
	/* A git dir without logs/ (git makes it on the first ref update). */
	mkd("ws/.git/objects");
	mkd("ws/.git/refs/heads");
	put("ws/.git/HEAD", "ref: refs/heads/main\n");
	put("ws/.git/config", "[core]\n\tbare = false\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static WardPolicy *policy_for_tree(void)
{
	_cleanup_free_ char *json = NULL, *home = path("home"), *ws = path("ws");
	WardPolicy *pol = policy_new_empty();
	PolicyError pe = {};
	PolicyContext ctx = { .home = home, .workspace = ws };

	assert_non_null(pol);
	assert_true(asprintf(&json,
			     "{\"fs\": {\"read\": [\"%s/data\"], \"read_exec\": [\"%s/tools\"],"
			     " \"read_write\": [\"~/.cache/tool\"],"
			     " \"deny\": [\"%s/data/secret\", \"~/.ssh\"], \"protected\": [\".env\"]},"
			     " \"network\": {\"mode\": \"none\"}, \"git\": \"commit\","
			     " \"limits\": {\"pids\": 64, \"memory_mb\": 256}}",
			     root, root, root) > 0);
	assert_int_equal(policy_merge_json(pol, "<test>", json, &pe), 0);
	assert_int_equal(policy_finalize(pol, &ctx, &pe), 0);
	return pol;
}

typedef struct Fixture {
	WardPolicy *pol;
	char *home, *ws, *state, *config;
	SandboxOptions opt;
} Fixture;

static char *const test_argv[] = { "/bin/true", NULL };
static char *const test_envp[] = { "PATH=/usr/bin:/bin", NULL };

static void fixture_init(Fixture *f)
{
	f->pol = policy_for_tree();
	f->home = path("home");
	f->ws = path("ws");
	f->state = path("state"); /* does not exist: the plan must not make it */
	f->config = path("config");
	f->opt = (SandboxOptions){
		.policy = f->pol,
		.workspace = f->ws,
		.home = f->home,
		.argv = test_argv,
		.envp = test_envp,
		.state_dir = f->state,
		.config_dir = f->config,
		.session_id = session,
		.hardening = true,
	};
}

static void fixture_done(Fixture *f)
{
	policy_free(f->pol);
	free(f->home);
	free(f->ws);
	free(f->state);
	free(f->config);
}

/* The root path replaced by "@ROOT@", so the golden file is stable. */
static char *relativize(const char *text)
{
	size_t n = strlen(root), cap = strlen(text) + 1;
	char *out = malloc(cap), *o = out;

	assert_non_null(out);
	for (const char *s = text; *s;) {
		if (strncmp(s, root, n) == 0) {
			/* "@ROOT@" is 6 bytes, the root far longer. */
			memcpy(o, "@ROOT@", 6);
			o += 6;
			s += n;
		} else
			*o++ = *s++;
	}
	*o = '\0';
	return out;
}

static char *read_file(const char *p)
{
	FILE *f = fopen(p, "re");
	char *buf = NULL;
	size_t size = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &size, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void test_sandbox_plan_mounts_golden(void **state)
{
	Fixture f = {};
	SandboxPlan *plan = NULL;
	SandboxError se = {};
	_cleanup_free_ char *dump = NULL, *got = NULL, *want = NULL;

	fixture_init(&f);
	assert_int_equal(sandbox_plan_new(&f.opt, &plan, &se), 0);
	dump = mount_plan_dump(&plan->mounts);
	assert_non_null(dump);
	got = relativize(dump);
	if (getenv("WARD_GOLDEN_UPDATE")) {
		FILE *o = fopen(GOLDEN, "we");
		assert_non_null(o);
		fputs(got, o);
		fclose(o);
	}
	want = read_file(GOLDEN);
	assert_non_null(want);
	if (strcmp(got, want) != 0) {
		/* The plan as it is now, for the diff. */
		for (char *l = got, *e; *l; l = e + 1) {
			e = strchrnul(l, '\n');
			printf("# %.*s\n", (int)(e - l), l);
			if (!*e)
				break;
		}
	}
	assert_string_equal(got, want);
	sandbox_plan_free(plan);
	fixture_done(&f);
}

/* Every path under the tree, sorted: what "nothing created" compares. */
static char **listing;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool same_list(char *const *a, char *const *b)
{
	size_t n = strv_length(a);

	if (n != strv_length(b))
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

static int list_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return strv_extend(&listing, p) < 0 ? -1 : 0;
}

static char **tree_listing(void)
{
	char **l;

	listing = NULL;
	assert_int_equal(nftw(root, list_one, 16, FTW_PHYS), 0);
	qsort(listing, strv_length(listing), sizeof(char *), cmp_str);
	l = listing;
	listing = NULL;
	return l;
}

/* Where the run's cgroup would be (v2 and root's v1 pids/memory). */
static void cgroup_paths(char ret[3][4096 + 128])
{
	char dir[4096];

	ret[0][0] = ret[1][0] = ret[2][0] = '\0';
	if (limits_cgroup_find_base(dir, sizeof(dir)) >= 0)
		snprintf(ret[0], sizeof(ret[0]), "%s/ward.slice/%s", dir, session);
	if (limits_cgroup_v1_find("pids", dir, sizeof(dir)) >= 0)
		snprintf(ret[1], sizeof(ret[1]), "%s/ward-%s", dir, session);
	if (limits_cgroup_v1_find("memory", dir, sizeof(dir)) >= 0)
		snprintf(ret[2], sizeof(ret[2]), "%s/ward-%s", dir, session);
}

static void assert_no_cgroup(void)
{
	char cg[3][4096 + 128];

	cgroup_paths(cg);
	for (int i = 0; i < 3; i++)
		if (cg[i][0] && access(cg[i], F_OK) == 0)
			fail_msg("the cgroup '%s' exists", cg[i]);
}

static void assert_same_tree(char **before)
{
	_cleanup_strv_ char **after = tree_listing();

	if (!same_list(before, after)) {
		STRV_FOREACH(p, after)
		if (!strv_contains(before, *p))
			printf("# created: %s\n", *p);
		STRV_FOREACH(p, before)
		if (!strv_contains(after, *p))
			printf("# removed: %s\n", *p);
		fail_msg("the tree changed");
	}
}

static void test_sandbox_plan_creates_nothing(void **state)
{
	Fixture f = {};
	SandboxPlan *plan = NULL;
	SandboxError se = {};
	_cleanup_strv_ char **before = tree_listing();

	fixture_init(&f);
	assert_no_cgroup();
	assert_int_equal(sandbox_plan_new(&f.opt, &plan, &se), 0);
	/* Planned: the cache, the git stage, logs/ ... but not made. */
	assert_false(exists("state"));
	assert_false(exists("home/.cache"));
	assert_false(exists("ws/.git/logs"));
	assert_null(limits_cgroup_path(plan->limits));
	assert_int_equal(limits_cgroup_fd(plan->limits), -1);
	assert_no_cgroup();
	assert_same_tree(before);
	/* The plan can still be described (the start event's content). */
	cJSON *d = sandbox_plan_describe(plan);
	assert_non_null(d);
	assert_non_null(cJSON_GetObjectItem(d, "enforced"));
	cJSON_Delete(d);
	sandbox_plan_free(plan);
	assert_no_cgroup();
	assert_same_tree(before);
	fixture_done(&f);
}

/* The control: acquire makes what the plan recorded, free removes what
 * it should (the cache and logs/ stay: they are the user's now). */
static void test_sandbox_acquire_makes_and_free_releases(void **state)
{
	Fixture f = {};
	SandboxPlan *plan = NULL;
	SandboxError se = {};
	_cleanup_free_ char *cg = NULL, *stage = NULL;
	_cleanup_free_ char *dump = NULL;

	fixture_init(&f);
	assert_int_equal(sandbox_plan_new(&f.opt, &plan, &se), 0);
	assert_int_equal(sandbox_acquire(plan, &se), 0);
	assert_int_equal(sandbox_acquire(plan, &se), 0); /* idempotent */
	assert_true(exists("state/git-stage"));
	assert_true(exists("home/.cache/tool"));
	assert_true(exists("ws/.git/logs"));
	assert_int_equal(plan->mounts.n_git_stages, 1);
	assert_non_null(plan->mounts.git_stages[0].root);
	stage = strdup(plan->mounts.git_stages[0].root);
	assert_int_equal(access(stage, F_OK), 0);
	/* The overlay now names the staging layer; the cache is bound. */
	dump = mount_plan_dump(&plan->mounts);
	assert_non_null(strstr(dump, "upperdir=/oldroot"));
	assert_null(strstr(dump, " create"));
	assert_null(strstr(dump, " skip"));
	if (limits_cgroup_path(plan->limits)) {
		cg = strdup(limits_cgroup_path(plan->limits));
		assert_int_equal(access(cg, F_OK), 0);
	}
	sandbox_plan_free(plan);
	assert_int_equal(access(stage, F_OK), -1);
	if (cg)
		assert_int_equal(access(cg, F_OK), -1);
	assert_no_cgroup();
	fixture_done(&f);
}

/* One name table: every step has a distinct, non-empty name but NONE. */
static void test_sandbox_step_names(void **state)
{
	assert_string_equal(sandbox_step_to_string(SANDBOX_STEP_NONE), "");
	assert_string_equal(sandbox_step_to_string(SANDBOX_STEP_EXEC), "exec");
	assert_string_equal(sandbox_step_to_string(SANDBOX_STEP_MOUNT_VIEW), "mount-view");
	assert_null(sandbox_step_to_string(_SANDBOX_STEP_MAX));
	assert_null(sandbox_step_to_string(_SANDBOX_STEP_INVALID));
	for (int i = 1; i < _SANDBOX_STEP_MAX; i++) {
		const char *a = sandbox_step_to_string((SandboxStep)i);
		assert_non_null(a);
		assert_true(a[0]);
		for (int j = 1; j < i; j++)
			assert_string_not_equal(a, sandbox_step_to_string((SandboxStep)j));
	}
	SandboxError e = {};
	assert_int_equal(sandbox_error_set(&e, SANDBOX_STEP_CLONE, -EPERM, "x %d", 1), -EPERM);
	assert_string_equal(e.step, "clone");
	assert_string_equal(e.detail, "x 1");
	assert_int_equal(e.error, EPERM);
	SandboxResult res = { .setup_failed = true, .failed_step = SANDBOX_STEP_EXEC };
	assert_true(sandbox_result_exec_failed(&res));
	res.failed_step = SANDBOX_STEP_CHDIR;
	assert_false(sandbox_result_exec_failed(&res));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sandbox_step_names),
		cmocka_unit_test(test_sandbox_plan_mounts_golden),
		cmocka_unit_test(test_sandbox_plan_creates_nothing),
		cmocka_unit_test(test_sandbox_acquire_makes_and_free_releases),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
