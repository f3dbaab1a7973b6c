/* The Linux T2 entry of the backend table (run/backend.h): an adaptor over
 * linux/sandbox.h.
 *
 * sandbox_plan_new() is pure, but it needs what the run makes in its own
 * acquire phase (the copy-on-write session's upper and work dirs, the
 * session id that names the cgroup, the audit log): so this adaptor's
 * plan() checks its input and acquire() builds the sandbox plan, then
 * sandbox_acquire() makes what it holds on the host (cgroup, staging
 * layers, idmapped trees), so that describe() is final before the start
 * event. Planning the sandbox in plan() needs those paths predicted
 * before acquire (a follow-up: warm sessions want it too). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "linux/quarantine.h"
#include "linux/sandbox.h"
#include "probe/probe-steps.h"
#include "probe/probe.h"
#include "run/backend.h"

struct BackendPlan {
	const BackendInput *in;
	SandboxPlan *sandbox;
	SandboxResult res; /* the run's, for sandbox_git_finish() */
	int stdio[3];      /* the caller's fds 0..2 moved to >= 3, or -EBADF */
};

/* Exported for the table in run/backends.c. */
extern const Backend backend_linux_t2;

/* Fail closed, and early: without user namespaces tier 2 cannot start,
 * and nothing weaker is chosen silently; the refusal names --tier 1 where
 * this host can run it. */
static int t2_probe(WardError *reterr)
{
	_cleanup_free_ char *state = NULL;
	char why[256];
	WardFeatures f;
	ProbeSteps ps;
	int r, pr;

	if (probe_userns_blocked(why, sizeof(why))) {
		r = ward_error_set(reterr, "tier", EPERM,
				   "Tier 2 is not available here (user namespaces: %s); refusing to "
				   "run. Nothing weaker is chosen without being asked for",
				   why);
		if (probe_features(&f, false) >= 0)
			probe_explain_missing(&f);
		return r;
	}
	/* The steps a run takes, tried once per boot and configuration in a
	 * test child (probe-steps.h): a masked /proc or a blocked id map
	 * fails here with its own fix, not deep in the setup. */
	if (ward_state_dir(&state) < 0)
		return 0; /* the run's own setup names the problem */
	pr = probe_steps_cached(state, &ps);
	if (pr >= 0 && ps.ok && ps.hostname_failed)
		log_info("sethostname is refused here (a container's seccomp profile): the sandbox "
			 "keeps the host's name, which is cosmetic");
	if (pr >= 0 && ps.ok && ps.clone3_enosys)
		log_info("clone3 answers ENOSYS here (a container's seccomp profile): the sandbox is "
			 "made with clone instead");
	if (pr < 0 || ps.ok)
		return 0;
	r = ward_error_set(reterr, "tier", ps.error ? ps.error : EPERM,
			   "Tier 2 is not available here: its step '%s' fails; refusing to run. "
			   "Nothing weaker is chosen without being asked for",
			   ps.step);
	log_hint("%s.", probe_steps_hint(&ps));
	if (probe_features(&f, false) >= 0 && f.landlock_abi >= 1 && f.seccomp)
		log_hint("'ward run --tier 1' runs here without namespaces (Landlock ABI %d and "
			 "seccomp): it accepts a weaker sandbox explicitly; docs/tiers.md and 'ward "
			 "probe' list what tier 1 does not hold.",
			 f.landlock_abi);
	return r;
}

static int t2_plan(const BackendInput *in, BackendPlan **ret, WardError *reterr)
{
	BackendPlan *p;
	int r;

	if ((r = backend_check_stdio(in, reterr)) < 0)
		return r;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->in = in;
	for (int fd = 0; fd <= 2; fd++)
		p->stdio[fd] = -EBADF;
	*ret = p;
	return 0;
}

static int t2_acquire(BackendPlan *p, WardError *reterr)
{
	const BackendInput *in = p->in;
	SandboxError se = {};
	bool has_stdio = false;
	int r;

	/* Passed descriptors move out of 0..2 first: the sandbox's init puts
	 * them in place one by one, and one may be another's target. */
	for (int fd = 0; fd <= 2; fd++) {
		if (in->stdio[fd] < 0)
			continue;
		p->stdio[fd] = fcntl(in->stdio[fd], F_DUPFD_CLOEXEC, 3);
		if (p->stdio[fd] < 0)
			return ward_error_set(reterr, "stdio", errno,
					      "the descriptor passed for fd %d (%d)", fd, in->stdio[fd]);
		has_stdio = true;
	}

	/* The probe's answer from prepare, for the next runs (prepare writes
	 * nothing; the state dir exists now). */
	(void)probe_steps_store(in->state_dir);
	(void)placeholders_cleanup_stale(in->state_dir);
	if (!in->cow_upper) {
		/* A run whose guard was killed before its check. */
		QuarantineInput qi = { .workspace = in->workspace, .state_dir = in->state_dir,
				       .protected = in->policy->fs_protected, .audit = in->audit };
		(void)quarantine_recover(&qi);
	}
	SandboxOptions so = {
		.policy = in->policy,
		.workspace = in->workspace,
		.home = in->home,
		.argv = in->argv,
		.envp = in->envp,
		.state_dir = in->state_dir,
		.config_dir = in->config_dir,
		.policy_files = in->policy_files,
		.cow_upper = in->cow_upper,
		.cow_work = in->cow_work,
		.session_id = in->session_id,
		.hardening = in->hardening,
		.test_leak_dir = in->test_leak_dir,
		.test_no_masks = in->test_no_masks,
		.dev_kvm = in->dev_kvm,
		.test_no_walls = in->test_no_walls,
		.audit = in->audit,
		.has_proxy_report = in->proxy_report_fd >= 0,
		.proxy_report_fd = in->proxy_report_fd,
		.parent_pid = in->parent_pid,
		.has_stdio = has_stdio,
		.stdio = { p->stdio[0], p->stdio[1], p->stdio[2] },
		.serve = in->serve,
	};
	r = sandbox_plan_new(&so, &p->sandbox, &se);
	if (r >= 0)
		r = sandbox_acquire(p->sandbox, &se);
	if (r < 0)
		return ward_error_set(reterr, se.step[0] ? se.step : "plan", se.error ? se.error : -r,
				      "Failed to prepare the sandbox (%s): %s",
				      se.step[0] ? se.step : "plan", se.detail);
	return 0;
}

static cJSON *t2_describe(const BackendPlan *p)
{
	return p->sandbox ? sandbox_plan_describe(p->sandbox) : cJSON_CreateObject();
}

static char *const *t2_protected(const BackendPlan *p)
{
	return p->sandbox ? sandbox_plan_protected(p->sandbox) : NULL;
}

static char *const *t2_notes(const BackendPlan *p)
{
	return p->sandbox ? sandbox_plan_git_notes(p->sandbox) : NULL;
}

/* The sandbox's result in the interface's terms. */
static void convert_result(const SandboxResult *s, BackendResult *ret)
{
	*ret = (BackendResult){
		.exit_code = s->exit_code,
		.status = s->status,
		.signal = s->signal,
		.timed_out = s->timed_out,
		.oom_killed = s->oom_killed,
		.setup_failed = s->setup_failed,
		.exec_failed = sandbox_result_exec_failed(s),
		.parent_died = s->parent_died,
		.duration_ms = s->duration_ms,
		.quarantined = s->quarantined,
		.protected_check_failed = s->protected_check_failed,
		.stdio_replaced = s->stdio_replaced,
		.net = { .valid = s->net.valid,
			 .no_route = s->net.no_route,
			 .udp_no_port = s->net.udp_no_port,
			 .tcp_refused = s->net.tcp_refused },
	};
	if (s->setup_failed)
		(void)ward_error_set(&ret->error, s->error.step, s->error.error, "%s", s->error.detail);
}

static int t2_run(BackendPlan *p, BackendResult *ret, WardError *reterr)
{
	SandboxError se = {};
	WardFeatures f;
	int r;

	if (!p->sandbox)
		return ward_error_set(reterr, "plan", EINVAL, "the sandbox was not acquired");
	r = sandbox_run(p->sandbox, p->in->timeout_s, &p->res, &se);
	if (r >= 0) {
		convert_result(&p->res, ret);
		return 0;
	}
	/* Never "(): : Success": a failure names its step and its errno. */
	(void)ward_error_set(reterr, se.step[0] ? se.step : "start", se.error ? se.error : -r,
			     "Failed to start the sandbox (%s)%s%s", se.step[0] ? se.step : "start",
			     se.detail[0] ? ": " : "", se.detail);
	/* The full probe: only trying each namespace shows an AppArmor or
	 * container seccomp block, and so the right Hint. */
	if (probe_features(&f, true) >= 0)
		probe_explain_missing(&f);
	return r;
}

static int t2_finish(BackendPlan *p, const BackendResult *res, char ***ret_lines)
{
	return p->sandbox ? sandbox_git_finish(p->sandbox, &p->res, ret_lines) : 0;
}

static BackendPlan *t2_free(BackendPlan *p)
{
	if (!p)
		return NULL;
	sandbox_plan_free(p->sandbox);
	for (int fd = 0; fd <= 2; fd++)
		if (p->stdio[fd] >= 0)
			(void)close(p->stdio[fd]);
	free(p);
	return NULL;
}

const Backend backend_linux_t2 = {
	.tier = 2,
	.name = "linux-t2",
	.flags = BACKEND_ISOLATED | BACKEND_PROXY | BACKEND_SESSION,
	.probe = t2_probe,
	.plan = t2_plan,
	.acquire = t2_acquire,
	.describe = t2_describe,
	.protected_paths = t2_protected,
	.notes = t2_notes,
	.run = t2_run,
	.finish = t2_finish,
	.free = t2_free,
};
