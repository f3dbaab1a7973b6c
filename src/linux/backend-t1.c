/* The Linux T1 entry of the backend table (run/backend.h): an adaptor over
 * linux/tier1.h (Landlock, seccomp and no_new_privs around tier 0's
 * supervisor, no namespaces).
 *
 * tier1_plan_new() is pure and needs nothing the run makes, so plan() does
 * it; the session id (which names the cgroup and the quarantine) and the
 * audit log arrive only with the run's acquire phase, so acquire() hands
 * them to tier1_plan_acquire(), which makes the private TMPDIR, the proxy's
 * listeners and the cgroup. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "linux/quarantine.h"
#include "linux/tier1.h"
#include "run/backend.h"

struct BackendPlan {
	const BackendInput *in;
	Tier1Plan *t1;
};

/* Exported for the table in run/backends.c. */
extern const Backend backend_linux_t1;

static int t1_probe(WardError *reterr)
{
	return 0; /* the plan says what is missing (Landlock) */
}

static int from_sandbox_error(WardError *reterr, const SandboxError *se, int r,
			      const char *what)
{
	const char *step = se->step[0] ? se->step : "plan";

	return ward_error_set(reterr, step, se->error ? se->error : -r, "%s (%s)%s%s", what,
			      step, se->detail[0] ? ": " : "", se->detail);
}

static int t1_plan(const BackendInput *in, BackendPlan **ret, WardError *reterr)
{
	SandboxError se = {};
	BackendPlan *p;
	int r;

	if ((r = backend_check_stdio(in, reterr)) < 0)
		return r;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->in = in;
	Tier1Options to = {
		.policy = in->policy,
		.workspace = in->workspace,
		.home = in->home,
		.argv = in->argv,
		.envp = in->envp,
		.state_dir = in->state_dir,
		.config_dir = in->config_dir,
		.policy_files = in->policy_files,
		.stdio = { in->stdio[0], in->stdio[1], in->stdio[2] },
		.parent_pid = in->parent_pid,
		.test_break_wall = in->test_break_wall,
		.test_no_walls = in->test_no_walls,
	};
	r = tier1_plan_new(&to, &p->t1, &se);
	if (r < 0) {
		free(p);
		return from_sandbox_error(reterr, &se, r, "Failed to prepare tier 1");
	}
	*ret = p;
	return 0;
}

static int t1_acquire(BackendPlan *p, WardError *reterr)
{
	const BackendInput *in = p->in;
	SandboxError se = {};
	int r;

	if (in->cow_upper)
		return ward_error_set(reterr, "tier", EINVAL,
				      "--cow needs tier 2 (an overlay mount in a mount namespace); "
				      "tier 1 writes the real workspace");
	/* A run whose guard was killed before its check. */
	QuarantineInput qi = { .workspace = in->workspace, .state_dir = in->state_dir,
			       .protected = in->policy->fs_protected, .audit = in->audit };
	(void)quarantine_recover(&qi);
	r = tier1_plan_acquire(p->t1, in->session_id, in->audit, in->proxy_report_fd, &se);
	if (r < 0)
		return from_sandbox_error(reterr, &se, r, "Failed to prepare tier 1");
	return 0;
}

static cJSON *t1_describe(const BackendPlan *p)
{
	return tier1_plan_describe(p->t1);
}

static char *const *t1_notes(const BackendPlan *p)
{
	return tier1_plan_notes(p->t1);
}

static int t1_run(BackendPlan *p, BackendResult *ret, WardError *reterr)
{
	return tier1_run(p->t1, p->in->timeout_s, ret, reterr);
}

static BackendPlan *t1_free(BackendPlan *p)
{
	if (!p)
		return NULL;
	tier1_plan_free(p->t1);
	free(p);
	return NULL;
}

const Backend backend_linux_t1 = {
	.tier = 1,
	.name = "linux-t1",
	.flags = BACKEND_PROXY, /* its own proxy; no view of its own */
	.probe = t1_probe,
	.plan = t1_plan,
	.acquire = t1_acquire,
	.describe = t1_describe,
	.notes = t1_notes,
	.run = t1_run,
	.free = t1_free,
};
