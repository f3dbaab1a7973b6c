/* Limits: the cgroup parsers, the mechanism chosen for each limit, the
 * rlimits a child gets, and the description for the start audit event. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "linux/limits.h"
#include "policy/policy.h"

static void test_limits_parse_self_cgroup(void **state)
{
	char buf[256];

	assert_int_equal(limits_parse_self_cgroup("0::/user.slice/a.scope\n", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/user.slice/a.scope");
	/* Hybrid hierarchy: v1 lines first. */
	assert_int_equal(limits_parse_self_cgroup("9:name=systemd:/\n4:memory:/x\n0::/\n", buf,
						  sizeof(buf)),
			 0);
	assert_string_equal(buf, "/");
	assert_int_equal(limits_parse_self_cgroup("4:memory:/x\n", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(limits_parse_self_cgroup("0::/toolong\n", buf, 4), -EINVAL);
}

static void test_limits_parse_cgroup2_mount(void **state)
{
	const char *mi =
		"22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
		"30 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		"35 25 0:31 / /sys/fs/cgroup/uni\\040fied rw,relatime - cgroup2 cgroup2 rw\n";
	char buf[256];

	assert_int_equal(limits_parse_cgroup2_mount(mi, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/sys/fs/cgroup/uni fied");
	assert_int_equal(limits_parse_cgroup2_mount("22 1 0:21 / /proc rw - proc proc rw\n", buf,
						    sizeof(buf)),
			 -ENOENT);
}

static void test_limits_controllers_have(void **state)
{
	assert_true(limits_controllers_have("cpuset cpu io memory pids\n", "pids"));
	assert_true(limits_controllers_have("memory pids", "memory"));
	assert_false(limits_controllers_have("hugetlb\n", "pids"));
	assert_false(limits_controllers_have("pidsx memoryy", "pids"));
	assert_false(limits_controllers_have("", "memory"));
}

static WardPolicy *policy_with(uint64_t pids, uint64_t mem, uint64_t nofile, uint64_t tmp)
{
	WardPolicy *p = policy_new_defaults();

	assert_non_null(p);
	p->pids = pids;
	p->memory_mb = mem;
	p->nofile = nofile;
	p->tmp_mb = tmp;
	p->timeout_s = 0;
	return p;
}

static void test_limits_rejects_bad_session(void **state)
{
	WardPolicy *pol = policy_with(0, 0, 0, 0);
	LimitsPlan *p = NULL;

	assert_int_equal(limits_plan_new(pol, "../escape", &p), -EINVAL);
	assert_int_equal(limits_plan_new(pol, "", &p), -EINVAL);
	assert_int_equal(limits_plan_new(pol, "a/b", &p), -EINVAL);
	assert_null(p);
	assert_null(limits_plan_free(NULL));
	policy_free(pol);
}

static void test_limits_unset_limits_only_core(void **state)
{
	WardPolicy *pol = policy_with(0, 0, 0, 0);
	LimitsPlan *p = NULL;
	cJSON *d, *core;

	assert_int_equal(limits_plan_new(pol, "test-unset", &p), 0);
	assert_null(limits_mechanism(p, "pids"));
	assert_null(limits_mechanism(p, "memory_mb"));
	assert_string_equal(limits_mechanism(p, "core"), "rlimit");
	assert_int_equal(limits_cgroup_fd(p), -1);
	d = limits_describe(p);
	assert_non_null(d);
	assert_null(cJSON_GetObjectItem(d, "pids"));
	core = cJSON_GetObjectItem(d, "core");
	assert_non_null(core);
	assert_int_equal(cJSON_GetObjectItem(core, "value")->valuedouble, 0);
	cJSON_Delete(d);
	limits_plan_free(p);
	policy_free(pol);
}

static void test_limits_mechanisms_and_child_rlimits(void **state)
{
	WardPolicy *pol = policy_with(64, 300, 256, 100);
	LimitsPlan *p = NULL;
	const char *pm;
	char cgpath[4096] = "";
	cJSON *d;
	int status;
	pid_t pid;

	assert_int_equal(limits_plan_new(pol, "test-mech", &p), 0);
	/* The plan creates nothing: the cgroup comes with limits_acquire. */
	assert_null(limits_cgroup_path(p));
	assert_int_equal(limits_cgroup_fd(p), -1);
	assert_int_equal(limits_acquire(p), 0);
	assert_int_equal(limits_acquire(p), 0); /* idempotent */
	pm = limits_mechanism(p, "pids");
	assert_non_null(pm);
	/* Root without a usable cgroup cannot hold pids at all (fork()
	 * exempts uid 0 from RLIMIT_NPROC): "none", said so, not "rlimit". */
	if (getuid() == 0)
		assert_true(strcmp(pm, "cgroup") == 0 || strcmp(pm, "cgroup-v1") == 0 ||
			    strcmp(pm, "none") == 0);
	else
		assert_true(strcmp(pm, "cgroup") == 0 || strcmp(pm, "rlimit") == 0);
	if (strcmp(pm, "cgroup") == 0)
		assert_string_equal(limits_mechanism(p, "memory_mb"), "cgroup");
	/* "none" is always named as degraded, anything else never. */
	assert_int_equal(strcmp(pm, "none") == 0,
			 limits_plan_degraded(p)[0] && strcmp(limits_plan_degraded(p)[0], "limit-pids") == 0);
	if (strncmp(pm, "cgroup", 6) == 0) {
		/* The cgroup exists while the plan does, and not after. */
		assert_non_null(limits_cgroup_path(p));
		assert_int_equal(access(limits_cgroup_path(p), F_OK), 0);
		snprintf(cgpath, sizeof(cgpath), "%s", limits_cgroup_path(p));
	}
	assert_string_equal(limits_mechanism(p, "nofile"), "rlimit");
	assert_string_equal(limits_mechanism(p, "tmp_mb"), "tmpfs");
	assert_null(limits_mechanism(p, "timeout_s"));
	assert_int_equal(limits_cgroup_fd(p) >= 0, strcmp(pm, "cgroup") == 0);

	d = limits_describe(p);
	assert_non_null(d);
	assert_string_equal(
		cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "pids"), "mechanism")),
		pm);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "nofile"), "value")->valuedouble,
			 256);
	cJSON_Delete(d);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl;

		if (limits_apply_child(p) < 0)
			_exit(1);
		if (getrlimit(RLIMIT_CORE, &rl) < 0 || rl.rlim_cur != 0 || rl.rlim_max != 0)
			_exit(2);
		if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur != 256 || rl.rlim_max != 256)
			_exit(3);
		if (strcmp(pm, "rlimit") == 0 &&
		    (getrlimit(RLIMIT_NPROC, &rl) < 0 || rl.rlim_cur != 64))
			_exit(4);
		if (strcmp(limits_mechanism(p, "memory_mb"), "rlimit") == 0 &&
		    (getrlimit(RLIMIT_DATA, &rl) < 0 || rl.rlim_cur != 300ULL << 20))
			_exit(5);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	limits_plan_free(p);
	if (cgpath[0])
		assert_int_equal(access(cgpath, F_OK), -1);
	policy_free(pol);
}

static void test_limits_nofile_clamped_to_hard(void **state)
{
	WardPolicy *pol = policy_with(0, 0, 1ULL << 40, 0);
	LimitsPlan *p = NULL;
	struct rlimit cur;
	cJSON *d, *e;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &cur), 0);
	if (cur.rlim_max == RLIM_INFINITY)
		skip();
	assert_int_equal(limits_plan_new(pol, "test-clamp", &p), 0);
	d = limits_describe(p);
	e = cJSON_GetObjectItem(d, "nofile");
	assert_non_null(e);
	assert_int_equal((uint64_t)cJSON_GetObjectItem(e, "value")->valuedouble, cur.rlim_max);
	assert_non_null(cJSON_GetObjectItem(e, "requested"));
	cJSON_Delete(d);
	limits_plan_free(p);
	policy_free(pol);
}

static void test_limits_tmpfs_within_memory(void **state)
{
	WardPolicy *pol = policy_with(0, 0, 0, 0);

	pol->tmp_mb = 1024;
	pol->shm_mb = 64;
	assert_int_equal(limits_tmpfs_mb(pol, false), 1024);
	assert_int_equal(limits_tmpfs_mb(pol, true), 64);
	pol->memory_mb = 48;
	assert_int_equal(limits_tmpfs_mb(pol, false), 48);
	assert_int_equal(limits_tmpfs_mb(pol, true), 48);
	pol->memory_mb = 4096;
	assert_int_equal(limits_tmpfs_mb(pol, false), 1024);
	/* Unset: the defaults. */
	pol->tmp_mb = pol->shm_mb = pol->memory_mb = 0;
	assert_int_equal(limits_tmpfs_mb(pol, false), 1024);
	assert_int_equal(limits_tmpfs_mb(pol, true), 64);
	policy_free(pol);
}

static double described(cJSON *d, const char *name, const char *field)
{
	cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(d, name), field);

	return v ? v->valuedouble : -1;
}

/* Whatever a policy asks, a share is at most half of the caller's own
 * limit, and the child gets it as a hard limit. */
static void test_limits_shares_are_half_at_most(void **state)
{
	WardPolicy *pol = policy_with(0, 0, 0, 0);
	struct rlimit sig, mq;
	LimitsPlan *p = NULL;
	char buf[32];
	FILE *f;
	long host_inotify = 0;
	cJSON *d;
	int status;
	pid_t pid;

	pol->inotify_instances = 1 << 20;
	pol->sigpending = 1 << 24;
	pol->msgqueue_kb = 1 << 20;
	assert_int_equal(getrlimit(RLIMIT_SIGPENDING, &sig), 0);
	assert_int_equal(getrlimit(RLIMIT_MSGQUEUE, &mq), 0);
	f = fopen("/proc/sys/user/max_inotify_instances", "re");
	if (f && fgets(buf, sizeof(buf), f))
		host_inotify = strtol(buf, NULL, 10);
	if (f)
		fclose(f);
	assert_int_equal(limits_plan_new(pol, "test-shares", &p), 0);
	d = limits_describe(p);
	if (host_inotify > 0) {
		assert_true(described(d, "inotify_instances", "value") <= host_inotify / 2);
		assert_int_equal(described(d, "inotify_instances", "requested"), 1 << 20);
	}
	if (sig.rlim_cur != RLIM_INFINITY)
		assert_true(described(d, "sigpending", "value") <= (double)(sig.rlim_cur / 2));
	if (mq.rlim_cur != RLIM_INFINITY)
		assert_true(described(d, "msgqueue_kb", "value") * 1024 <= (double)(mq.rlim_cur / 2));
	assert_string_equal(limits_mechanism(p, "sigpending"), "rlimit");
	cJSON_Delete(d);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl;

		if (limits_apply_child(p) < 0)
			_exit(1);
		if (getrlimit(RLIMIT_SIGPENDING, &rl) < 0 || rl.rlim_cur != rl.rlim_max ||
		    (sig.rlim_cur != RLIM_INFINITY && rl.rlim_cur > sig.rlim_cur / 2))
			_exit(2);
		if (getrlimit(RLIMIT_MSGQUEUE, &rl) < 0 || rl.rlim_cur != rl.rlim_max ||
		    (mq.rlim_cur != RLIM_INFINITY && rl.rlim_cur > mq.rlim_cur / 2))
			_exit(3);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	limits_plan_free(p);
	policy_free(pol);
}

/* cpu and io are held by a cgroup or named degraded: never silently
 * dropped. */
static void test_limits_cpu_io_held_or_degraded(void **state)
{
	WardPolicy *pol = policy_with(0, 0, 0, 0);
	LimitsPlan *p = NULL;

	pol->cpu_percent = 50;
	pol->io_weight = 100;
	assert_int_equal(limits_plan_new(pol, "test-cpu", &p), 0);
	/* Predicted by the plan, then as made by acquire: the same rule. */
	for (int i = 0; i < 4; i++) {
		if (i == 2)
			assert_int_equal(limits_acquire(p), 0);
		const char *m = limits_mechanism(p, i % 2 ? "io_weight" : "cpu_percent");
		const char *name = i % 2 ? "limit-io" : "limit-cpu";
		bool listed = false;

		assert_non_null(m);
		for (char *const *s = limits_plan_degraded(p); s && *s; s++)
			listed |= strcmp(*s, name) == 0;
		assert_int_equal(strcmp(m, "none") == 0, listed);
		assert_true(strcmp(m, "none") == 0 || strncmp(m, "cgroup", 6) == 0);
	}
	limits_plan_free(p);
	policy_free(pol);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits_parse_self_cgroup),
		cmocka_unit_test(test_limits_parse_cgroup2_mount),
		cmocka_unit_test(test_limits_controllers_have),
		cmocka_unit_test(test_limits_rejects_bad_session),
		cmocka_unit_test(test_limits_unset_limits_only_core),
		cmocka_unit_test(test_limits_mechanisms_and_child_rlimits),
		cmocka_unit_test(test_limits_nofile_clamped_to_hard),
		cmocka_unit_test(test_limits_tmpfs_within_memory),
		cmocka_unit_test(test_limits_shares_are_half_at_most),
		cmocka_unit_test(test_limits_cpu_io_held_or_degraded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
