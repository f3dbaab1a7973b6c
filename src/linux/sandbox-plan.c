/* The plan of a T2 run (sandbox.h): everything the supervisor decides
 * before clone, from the policy and what it reads on the host: the mount
 * plan, the protected paths that exist, the Landlock rules and the seccomp
 * filter, the limits' mechanisms, the listeners, and the lists of enforced
 * and degraded protections the start event records. It creates nothing on
 * the host: the cgroup, git staging layers, missing caches and a root
 * caller's idmapped trees are sandbox-acquire.c's. The thread it starts
 * only reads (root's /sys and /proc scan): it overlaps planning with work
 * the run pays later. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/cleanup.h"
#include "common/path-real.h"
#include "common/json-util.h"
#include "common/log.h"
#include "common/strv.h"
#include "linux/git-exec-paths.h"
#include "linux/sandbox-internal.h"
#include "net/proxy.h"
#include "ward/ward.h"

static int add_name(char ***l, const char *s)
{
	return strv_extend_unique(l, s);
}

/* The start event's lists, in a stable order: the root view's, Landlock's
 * and seccomp's (or the test switches'), the masks', the limits', then the
 * namespaces and the rest that always hold. */
int sandbox_plan_list_protections(SandboxPlan *plan)
{
	static const char *const base_enforced[] = { "userns", "mountns", "pidns", "netns",
						     "ipcns", "utsns", "no-new-privs", "caps-dropped",
						     "protected-readonly" };
	_cleanup_strv_ char **enf = NULL, **deg = NULL;

	if (plan->root_view && (add_name(plan->root_idmapped ? &enf : &deg, "root-system-files") < 0 ||
				add_name(&enf, "root-kernel-files") < 0))
		return -ENOMEM;
	if (plan->hardening) {
		STRV_FOREACH(s, landlock_plan_enforced(plan->landlock))
		if (add_name(&enf, *s) < 0)
			return -ENOMEM;
		STRV_FOREACH(s, landlock_plan_degraded(plan->landlock))
		if (add_name(&deg, *s) < 0)
			return -ENOMEM;
		if (add_name(&enf, "seccomp") < 0)
			return -ENOMEM;
	} else if (add_name(&deg, "landlock") < 0 || add_name(&deg, "seccomp") < 0 ||
		   add_name(&deg, "test-switch-no-hardening") < 0)
		return -ENOMEM;
	if (plan->test_leak_dir && add_name(&deg, "test-switch-leak-dir") < 0)
		return -ENOMEM;
	if (plan->test_no_masks && add_name(&deg, "test-switch-no-masks") < 0)
		return -ENOMEM;
	if (plan->test_no_walls && add_name(&deg, "test-switch-no-walls") < 0)
		return -ENOMEM;
	if (!plan->test_no_walls && add_name(&enf, "walls-checked") < 0)
		return -ENOMEM;
	/* A denied path beneath a writable grant is kept out by the mount
	 * masks alone (deny-split.h): say so. */
	if (plan->hardening && plan->mounts.ll_unsplit &&
	    add_name(&deg, "landlock-deny-under-writable") < 0)
		return -ENOMEM;
	STRV_FOREACH(s, limits_plan_degraded(plan->limits))
	if (add_name(&deg, *s) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < ELEMENTSOF(base_enforced); i++)
		if (add_name(&enf, base_enforced[i]) < 0)
			return -ENOMEM;
	if (!plan->cow && add_name(&enf, "protected-quarantine") < 0)
		return -ENOMEM;
	strv_free(plan->enforced);
	strv_free(plan->degraded);
	plan->enforced = TAKE_PTR(enf);
	plan->degraded = TAKE_PTR(deg);
	return 0;
}

static int plan_new(const SandboxOptions *opt, SandboxPlan **ret, SandboxError *reterr)
{
	_cleanup_free_ char *errpath = NULL;
	SandboxPlan *plan;
	int r;

#define FAIL(r_, step_, ...)                                                                       \
	do {                                                                                       \
		sandbox_error_set(reterr, (step_), (r_), __VA_ARGS__);                             \
		sandbox_plan_free(plan);                                                           \
		return (r_);                                                                       \
	} while (0)

	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	plan->status_fd = plan->result_fd = plan->proxy_sock = plan->go_fd = plan->go_wfd = -EBADF;
	plan->stdio = (StdioRelay)STDIO_RELAY_INIT;
	for (int fd = 0; opt->has_stdio && fd <= 2; fd++)
		if (opt->stdio[fd] >= 0)
			plan->stdio.src[fd] = opt->stdio[fd];
	plan->pty_sock = plan->pty_master = plan->pty_slave = plan->devnull = -EBADF;
	plan->parent_pid = opt->parent_pid;
	plan->serve = opt->serve;
	plan->session_sock = plan->landlock_fd = -EBADF;
	plan->argv = opt->argv;
	plan->envp = opt->envp;
	plan->policy = opt->policy;
	plan->audit = opt->audit;
	plan->proxy = opt->policy->net_mode == NET_MODE_PROXY;
	plan->has_report = opt->has_proxy_report;
	plan->report_fd = opt->proxy_report_fd;
	plan->log_level = log_get_level();
	plan->hardening = opt->hardening;
	plan->cow = opt->cow_upper != NULL;
	plan->test_leak_dir = opt->test_leak_dir != NULL;
	plan->test_no_masks = opt->test_no_masks;
	/* The walls init tries before the command (walls.h): ward's state
	 * dir is neither readable nor writable from inside, whatever the
	 * policy says. No connect: at T2 the network wall is the namespace,
	 * where every address may be ward's own listener (capture), so a
	 * connect that succeeds proves nothing. */
	r = walls_plan_init(&plan->walls, opt->state_dir, false, NULL, 0);
	if (r < 0)
		FAIL(r, SANDBOX_STEP_PLAN, "the state directory's path is too long");
	plan->test_no_walls = opt->test_no_walls;
	if (opt->test_no_walls)
		plan->walls = (WallsPlan){};
	/* uid 0: the scan of /sys and /proc overlaps the rest of the plan. */
	if (getuid() == 0)
		plan->root_scan = root_view_scan_start();
	r = limits_plan_new(opt->policy, opt->session_id, &plan->limits);
	if (r < 0)
		FAIL(r, SANDBOX_STEP_LIMITS, "setting up resource limits");
	if (plan->proxy) {
		plan->listen_ports[plan->n_listen++] = WARD_PROXY_HTTP_PORT;
		plan->listen_ports[plan->n_listen++] = WARD_PROXY_SOCKS_PORT;
	}
	for (size_t i = 0; i < opt->policy->n_net_host_ports; i++) {
		uint16_t port = opt->policy->net_host_ports[i];
		if (plan->proxy && (port == WARD_PROXY_HTTP_PORT || port == WARD_PROXY_SOCKS_PORT))
			FAIL(-EADDRINUSE, SANDBOX_STEP_HOST_PORTS,
			     "network.host_ports: port %u is the proxy's port inside the sandbox",
			     port);
		if (plan->n_listen >= NETNS_LISTENERS_MAX)
			FAIL(-E2BIG, SANDBOX_STEP_HOST_PORTS, "network.host_ports: too many ports");
		plan->listen_ports[plan->n_listen++] = port;
		plan->n_host++;
	}
	/* Transparent capture: on by default with mode proxy; 80 and 443
	 * when the policy names no ports (docs/network.md). */
	if (plan->proxy && !opt->policy->net_no_capture) {
		static const uint16_t dflt[] = { 80, 443 };
		const WardPolicy *pol = opt->policy;
		const uint16_t *cp = pol->n_net_capture_ports ? pol->net_capture_ports : dflt;
		size_t ncp = pol->n_net_capture_ports ? pol->n_net_capture_ports : ELEMENTSOF(dflt);

		if (ncp > NETNS_CAPTURE_MAX)
			FAIL(-E2BIG, SANDBOX_STEP_CAPTURE, "network.capture_ports: at most %d ports",
			     NETNS_CAPTURE_MAX);
		for (size_t i = 0; i < ncp; i++) {
			for (size_t j = 0; j < plan->n_listen; j++)
				if (cp[i] == plan->listen_ports[j])
					FAIL(-EADDRINUSE, SANDBOX_STEP_CAPTURE,
					     "network.capture_ports: port %u is also %s inside the sandbox",
					     cp[i], j < 2 && plan->proxy ? "the proxy's port" : "a network.host_ports relay");
			if (cp[i] == 53)
				FAIL(-EADDRINUSE, SANDBOX_STEP_CAPTURE,
				     "network.capture_ports: port 53 is the DNS stub's inside the sandbox");
			plan->capture_ports[plan->n_capture++] = cp[i];
		}
	}
	plan->workspace = strdup(opt->workspace);
	if (opt->cow_upper && opt->policy->git_mode == GIT_MODE_COMMIT)
		FAIL(-EINVAL, SANDBOX_STEP_GIT,
		     "\"git\": \"commit\" cannot be combined with a copy-on-write session "
		     "(ward apply never writes repository metadata); use \"read-only\"");
	const char *base = strrchr(opt->argv[0], '/');
	plan->program = strdup(base ? base + 1 : opt->argv[0]);
	if (!plan->workspace || !plan->program)
		FAIL(-ENOMEM, SANDBOX_STEP_PLAN, "out of memory");
	snprintf(plan->uid_map, sizeof(plan->uid_map), "%u %u 1\n", getuid(), getuid());
	snprintf(plan->gid_map, sizeof(plan->gid_map), "%u %u 1\n", getgid(), getgid());

	/* Which protected paths exist, at any depth: read-only for the run,
	 * and the reference the after-run check compares with. */
	{
		_cleanup_close_ int wfd =
			open(opt->workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_free_ char *errrel = NULL;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		r = wfd < 0 ? -errno
			    : workspace_scan(wfd, opt->policy->fs_protected, &plan->protected_scan,
					     &errrel);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (r < 0)
			FAIL(r, SANDBOX_STEP_PROTECTED, "scanning '%s%s%s' for protected paths", opt->workspace,
			     errrel ? "/" : "", errrel ? errrel : "");
		plan->scan_us = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000 +
				(uint64_t)(t1.tv_nsec - t0.tv_nsec) / 1000;
	}
	/* Hooks and included configs that a repository's config points to in
	 * the workspace are as sensitive as .git: protected for this run. */
	plan->protected = strv_copy(opt->policy->fs_protected);
	if (!plan->protected)
		FAIL(-ENOMEM, SANDBOX_STEP_PLAN, "out of memory");
	r = git_exec_paths(opt->workspace, opt->home, &plan->protected_scan, &plan->protected);
	if (r < 0)
		FAIL(r, SANDBOX_STEP_PROTECTED, "reading the git configuration of '%s'", opt->workspace);
	if (!opt->cow_upper) {
		plan->state_dir = strdup(opt->state_dir);
		plan->run_id = strdup(opt->session_id ? opt->session_id : "run");
		if (!plan->state_dir || !plan->run_id)
			FAIL(-ENOMEM, SANDBOX_STEP_PLAN, "out of memory");
		plan->quarantine = (QuarantineInput){
			.workspace = plan->workspace,
			.state_dir = plan->state_dir,
			.run_id = plan->run_id,
			.protected = plan->protected,
			.before = &plan->protected_scan,
			.audit = opt->audit,
		};
	}
	MountPlanInput in = {
		.policy = opt->policy,
		.workspace = opt->workspace,
		.home = opt->home,
		.state_dir = opt->state_dir,
		.config_dir = opt->config_dir,
		.policy_files = opt->policy_files,
		.cow_upper = opt->cow_upper,
		.cow_work = opt->cow_work,
		.test_leak_dir = opt->test_leak_dir,
		.protected_scan = &plan->protected_scan,
		.test_no_masks = opt->test_no_masks,
		.dev_kvm = opt->dev_kvm,
	};
	r = mount_plan_build(&in, &plan->mounts, &errpath);
	if (r == -EXDEV)
		FAIL(r, SANDBOX_STEP_WORKSPACE,
		     "workspace '%s' is / or contains the home directory; run ward in a project "
		     "directory",
		     errpath ? errpath : opt->workspace);
	if (r == -EPERM)
		FAIL(r, SANDBOX_STEP_WORKSPACE,
		     "workspace '%s' is inside or contains ward's own directory '%s'; run ward in a "
		     "project directory",
		     opt->workspace, errpath ? errpath : "?");
	if (r == -ELOOP)
		FAIL(r, SANDBOX_STEP_PROTECTED,
		     "protected path '%s' is a symlink (or its parent is) that ward cannot make "
		     "read-only: it dangles or its parent would redirect the protection",
		     errpath ? errpath : "?");
	if (r == -EMLINK)
		FAIL(r, SANDBOX_STEP_PROTECTED,
		     "'%s' is more than %d directories deep: ward cannot check it for protected "
		     "paths",
		     errpath ? errpath : "?", WORKSPACE_SCAN_MAX_DEPTH);
	if (r < 0)
		FAIL(r, SANDBOX_STEP_PLAN, "%s", errpath ? errpath : opt->workspace);

	/* Uid 0 inside is host uid 0 and owns root's files: show a root
	 * caller no more of the system than an unprivileged user sees. The
	 * idmapped trees are acquired; until then they are assumed to work. */
	if (getuid() == 0) {
		r = root_view_prepare(&plan->mounts, opt->home, &plan->root_scan);
		if (r < 0)
			FAIL(r, SANDBOX_STEP_ROOT_VIEW, "preparing the view for a root caller");
		plan->root_view = true;
		plan->root_idmapped = true;
	}

	if (opt->hardening) {
		uint16_t ports[64];
		size_t n_ports = 0;
		uint16_t connect_ports[64 + NETNS_LISTENERS_MAX + NETNS_CAPTURE_MAX + 1];
		size_t n_connect = 0;

		/* TCP at T2: the network namespace holds only lo, so a bind or
		 * connect reaches only the sandbox's own listeners, the proxy
		 * and the host-port relays ward made: Landlock port rules would
		 * add no wall, only break test servers (any port, port 0).
		 * They are used when network.local_ports narrows the ports on
		 * purpose: bind to those (0: ephemeral), connect to those plus
		 * ward's listeners. docs/network.md */
		for (size_t i = 0; i < opt->policy->n_net_local_ports && n_ports < 64; i++)
			ports[n_ports++] = opt->policy->net_local_ports[i];
		for (size_t i = 0; i < n_ports; i++)
			if (ports[i] != 0)
				connect_ports[n_connect++] = ports[i];
		for (size_t i = 0; i < plan->n_listen; i++)
			connect_ports[n_connect++] = plan->listen_ports[i];
		/* Capture: its ports on any address, and the DNS stub. */
		for (size_t i = 0; i < plan->n_capture; i++)
			connect_ports[n_connect++] = plan->capture_ports[i];
		if (plan->n_capture > 0)
			connect_ports[n_connect++] = 53;
		LandlockRequest req = {
			.rules = plan->mounts.ll_rules,
			.n_rules = plan->mounts.n_ll_rules,
			.tcp_connect_ports = connect_ports,
			.n_tcp_connect_ports = n_connect,
			.tcp_bind_ports = ports,
			.n_tcp_bind_ports = n_ports,
			.restrict_tcp = n_ports > 0,
		};
		r = landlock_plan_new(&req, &plan->landlock);
		if (r < 0)
			FAIL(r, SANDBOX_STEP_LANDLOCK, "building the Landlock rules");
		SeccompOptions so = {
			.allow_nested_userns = opt->policy->allow_nested_sandbox,
			.allow_ptrace = opt->policy->allow_ptrace,
		};
		r = seccomp_program_new(&so, &plan->seccomp);
		if (r < 0)
			FAIL(r, SANDBOX_STEP_SECCOMP, "compiling the seccomp filter");
		/* A live session's pid 1: the same filter, with the namespace
		 * and mount calls it needs for each command's init allowed
		 * (sandbox-serve.c; every command adds its own on top). */
		so.allow_nested_userns = true;
		if (plan->serve && (r = seccomp_program_new(&so, &plan->serve_seccomp)) < 0)
			FAIL(r, SANDBOX_STEP_SECCOMP, "compiling the seccomp filter");
	}
	if (sandbox_plan_list_protections(plan) < 0)
		FAIL(-ENOMEM, SANDBOX_STEP_PLAN, "out of memory");
#undef FAIL
	*ret = plan;
	return 0;
}

/* The plan resolves every denied, masked and granted path, most of them
 * under the same few directories: one lookup per component (path-real.h). */
int sandbox_plan_new(const SandboxOptions *opt, SandboxPlan **ret, SandboxError *reterr)
{
	int r;

	path_real_begin();
	r = plan_new(opt, ret, reterr);
	path_real_end();
	return r;
}

SandboxPlan *sandbox_plan_free(SandboxPlan *plan)
{
	if (!plan)
		return NULL;
	plan->root_scan = root_view_scan_free(plan->root_scan);
	workspace_scan_done(&plan->protected_scan);
	strv_free(plan->protected);
	free(plan->state_dir);
	free(plan->run_id);
	mount_plan_done(&plan->mounts);
	landlock_plan_free(plan->landlock);
	seccomp_program_free(plan->seccomp);
	seccomp_program_free(plan->serve_seccomp);
	limits_plan_free(plan->limits);
	free(plan->workspace);
	free(plan->program);
	strv_free(plan->enforced);
	strv_free(plan->degraded);
	free(plan);
	return NULL;
}

char *const *sandbox_plan_git_notes(const SandboxPlan *plan)
{
	return plan->mounts.git.notes;
}

int sandbox_git_finish(SandboxPlan *plan, const SandboxResult *res, char ***ret_lines)
{
	const MountPlan *m = &plan->mounts;
	char *hint;
	int r = 0;

	for (size_t i = 0; i < m->n_git_stages; i++) {
		int k = git_stage_scrub(&m->git_stages[i], ret_lines);
		int a = git_stage_apply(&m->git_stages[i], ret_lines);
		if (k < 0 && r == 0)
			r = k;
		if (a < 0 && a != -EBUSY && r == 0) /* -EBUSY: said in a line */
			r = a;
	}
	if (res->setup_failed || res->timed_out)
		return r;
	hint = git_layout_hint(&m->git, plan->policy->git_mode == GIT_MODE_READ_ONLY,
			       plan->argv, res->exit_code);
	if (hint && strv_consume(ret_lines, hint) < 0)
		return -ENOMEM;
	return r;
}

char *const *sandbox_plan_protected(const SandboxPlan *plan)
{
	return plan->protected;
}

cJSON *sandbox_plan_describe(const SandboxPlan *plan)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *lim = limits_describe(plan->limits);
	cJSON *git = cJSON_AddObjectToObject(o, "git");

	cJSON_AddStringToObject(git, "mode", git_mode_to_string(plan->policy->git_mode));
	cJSON_AddItemToObject(git, "gitdirs", json_strv_array(plan->mounts.git.gitdirs));
	if (plan->mounts.git.worktree)
		cJSON_AddStringToObject(git, "worktree", plan->mounts.git.worktree);

	cJSON_AddItemToObject(o, "enforced", json_strv_array(plan->enforced));
	cJSON_AddItemToObject(o, "degraded", json_strv_array(plan->degraded));
	/* Newer Landlock features this kernel lacks (landlock.h): named, not
	 * degraded. */
	cJSON_AddItemToObject(o, "missing", json_strv_array(plan->landlock
								   ? landlock_plan_missing(plan->landlock)
								   : NULL));
	cJSON_AddNumberToObject(o, "landlock_abi",
				plan->landlock ? landlock_plan_abi(plan->landlock) : 0);
	if (lim)
		cJSON_AddItemToObject(o, "limits", lim);
	cJSON *prot = cJSON_AddObjectToObject(o, "protected");
	cJSON_AddNumberToObject(prot, "existing", (double)plan->protected_scan.n);
	cJSON_AddNumberToObject(prot, "dirs_scanned", (double)plan->protected_scan.n_dirs);
	cJSON_AddNumberToObject(prot, "scan_us", (double)plan->scan_us);
	cJSON_AddStringToObject(prot, "new", plan->quarantine.workspace ? "quarantine" : "cow-upper");
	return o;
}
