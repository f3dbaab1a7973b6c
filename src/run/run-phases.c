/* The phases of a run (run.h): prepare (policy -> backend plan, no side
 * effects), acquire (ward's dirs, the session, the audit log, the
 * backend's resources, the `start` event), execute (the command, then what
 * the run learned: changes, refusals). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/path-real.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "common/time-util.h"
#include "config.h"
#include "cow/cow-review.h"
#include "linux/landlock.h"
#include "net/net-rules.h"
#include "net/proxy-contract.h"
#include "policy/env-filter.h"
#include "policy/policy-hostexec.h"
#include "probe/probe-steps.h"
#include "probe/tiers.h"
#include "run/run-hints.h"
#include "run/run-internal.h"
#include "run/run-paths.h"
#include "run/run-result.h"
#include "ward/ward.h"

extern char **environ;

DEFINE_TRIVIAL_CLEANUP_FUNC(CowSession *, cow_session_free)

/* Info-level timing of the phases (--log-level info). */
static void phase_done(Run *run, const char *what)
{
	uint64_t now = monotonic_us();

	run_log(run, RUN_LOG_INFO, "%s in %.1f ms", what, (double)(now - run->t_phase) / 1000.0);
	run->t_phase = now;
}

static int policy_fail(Run *run, const PolicyError *e)
{
	char buf[1400];

	policy_error_format(e, buf, sizeof(buf));
	return run_failf(run, "policy", 0, "Invalid policy: %s", buf);
}

/* An fd the caller passed for ward's own use (the result, the events):
 * open, and never inherited by the command (which could forge what the
 * harness reads). 0..2 stay as they are: they are the command's too. */
static int check_own_fd(Run *run, int fd, const char *step, const char *what)
{
	int flags;

	if (fd < 0)
		return 0;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
		return run_failf(run, step, EBADF, "%s %d: not a descriptor open for writing", what,
				 fd);
	if (fd > 2 && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return run_failf(run, step, errno, "%s %d", what, fd);
	return 0;
}

/* --session: the session's own workspace, reached without a symlink (a
 * command could have swapped the path for one); -w must name the same. */
static int session_workspace(Run *run, const CowSession *s)
{
	_cleanup_free_ char *w = NULL;
	WardError e;
	int wfd, r;

	wfd = cow_session_open_workspace(s);
	if (wfd < 0)
		return run_failf(run, "workspace", 0,
				 "Session '%s': the workspace '%s' is not the directory the session "
				 "was made for (%s); refusing to run in it",
				 run->session_arg, cow_session_workspace(s),
				 wfd == -ELOOP	  ? "a symlink is on its path"
				 : wfd == -ESTALE ? "another directory is there now"
						  : strerror(-wfd));
	(void)close(wfd);
	if ((r = run_resolve_workspace(cow_session_workspace(s), &w, &e)) < 0)
		return run_fail_with(run, &e, r);
	if (!run->ws) {
		run->ws = TAKE_PTR(w);
		return 0;
	}
	/* acquire: the plan holds run->ws; it must still be the same place. */
	if (strcmp(run->ws, w) != 0)
		return run_failf(run, "session", 0,
				 "Session '%s': its workspace moved since the run was prepared",
				 run->session_arg);
	return 0;
}

static int resolve_workspace(Run *run)
{
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_free_ char *w = NULL;
	WardError e;
	int r;

	if (!run->session_arg) {
		r = run_resolve_workspace(run->workspace_arg, &run->ws, &e);
		return r < 0 ? run_fail_with(run, &e, r) : 0;
	}
	/* Read without the lock: taking it (and recovering an interrupted
	 * apply) is acquire's. */
	r = cow_session_open_unlocked(run->state, run->session_arg, &s);
	if (r < 0)
		return run_failf(run, "session", r, "Failed to open session '%s'", run->session_arg);
	if ((r = session_workspace(run, s)) < 0)
		return r;
	run->session_cow = cow_session_is_cow(s);
	if (run->workspace_arg) {
		if ((r = run_resolve_workspace(run->workspace_arg, &w, &e)) < 0)
			return run_fail_with(run, &e, r);
		if (strcmp(w, run->ws) != 0)
			return run_failf(run, "session", 0, "Session '%s' belongs to workspace '%s', not '%s'",
					 run->session_arg, cow_session_workspace(s), run->workspace_arg);
	}
	return 0;
}

static int ceiling_fail(Run *run, const PolicyError *e)
{
	char buf[1400];

	policy_error_format(e, buf, sizeof(buf));
	return run_failf(run, "ceiling", 0, "Refused by the managed policy: %s", buf);
}

/* The managed ceiling (policy/ceiling.h), every source checked against it
 * as it is merged: the one place a run's policy is made, for every caller
 * of the run boundary (the CLI, libward, ward mcp, sessions). */
static int load_policy(Run *run)
{
	PolicyContext ctx = { .home = run->home, .workspace = run->ws };
	PolicyError pe = {};
	WardError e;
	int r;

	r = ceiling_load_system(&run->ceiling, &pe);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ceiling_fail(run, &pe);
	r = policy_load_bounded(run->ceiling, run->policy_file, run->presets, run->overrides,
				run->overrides_source, &ctx, &run->pol, &pe);
	if (r == -ENOMEM)
		return r;
	if (r == -EPERM)
		return ceiling_fail(run, &pe);
	if (r < 0)
		return policy_fail(run, &pe);
	r = run_check_workspace(run->ws, run->home, run->pol, run->state, run->config,
				run->allow_unsafe, &e);
	if (r < 0)
		return run_fail_with(run, &e, r);
	phase_done(run, "policy loaded and checked");
	/* Every file the policy came from is hidden from the sandbox. */
	if (strv_extend_strv(&run->policy_files, run->pol->sources) < 0)
		return -ENOMEM;
	if (run->policy_file) {
		char *real = realpath(run->policy_file, NULL);
		if (real && strv_consume(&run->policy_files, real) < 0)
			return -ENOMEM;
	}
	/* No writable path that host shells run from (docs/policy.md). */
	if (policy_check_host_exec(run->pol, getenv("PATH"), run->home, &pe) < 0)
		return policy_fail(run, &pe);
	return 0;
}

/* Drop every variable named @name_len bytes of @name from @envp. */
static void env_unset(char **envp, const char *name, size_t name_len)
{
	for (size_t k = 0; envp[k];) {
		if (strcspn(envp[k], "=") == name_len && strncmp(envp[k], name, name_len) == 0) {
			free(envp[k]);
			memmove(&envp[k], &envp[k + 1], (strv_length(envp + k + 1) + 1) * sizeof(char *));
		} else
			k++;
	}
}

/* network.credentials / inspect / requests: the secrets stay in ward; the
 * command sees placeholders and the run's CA bundle, and never the files
 * the secrets come from (docs/network.md). The rules are the process's
 * (net_rules_current): the proxy this run forks reads them. */
static int net_rules_env_apply(char ***envp)
{
	const NetRules *nr = net_rules_current();
	_cleanup_strv_ char **add = net_rules_env(nr);

	if (!add)
		return -ENOMEM;
	for (size_t i = 0; nr && i < nr->n_creds; i++) {
		const NetCredential *c = &nr->creds[i];

		env_unset(*envp, c->env, strlen(c->env));
		if (c->from_env)
			env_unset(*envp, c->from_env, strlen(c->from_env));
		/* Any other variable that holds the secret. */
		for (size_t k = 0; (*envp)[k];) {
			if (strstr((*envp)[k], c->secret)) {
				free((*envp)[k]);
				memmove(&(*envp)[k], &(*envp)[k + 1],
					(strv_length(*envp + k + 1) + 1) * sizeof(char *));
			} else
				k++;
		}
	}
	STRV_FOREACH(kv, add) {
		env_unset(*envp, *kv, strcspn(*kv, "="));
		if (strv_extend(envp, *kv) < 0)
			return -ENOMEM;
	}
	return 0;
}

char **run_env_build(const WardPolicy *pol, bool proxy, char *const *src, char *const *extra)
{
	char **envp = env_filter(pol, src, extra);

	if (!envp || strv_extend(&envp, "TMPDIR=/tmp") < 0 ||
	    (proxy && (proxy_contract_env(&envp) < 0 || net_rules_env_apply(&envp) < 0))) {
		strv_free(envp);
		return NULL;
	}
	return envp;
}

static int build_env(Run *run)
{
	/* Only a backend that runs the proxy points the command at it: at
	 * tier 0 nothing listens there but what the host has. */
	bool proxy = run->pol->net_mode == NET_MODE_PROXY && (run->backend->flags & BACKEND_PROXY);
	char nerr[600] = "";
	const NetRules *nr;

	if (proxy && net_rules_prepare(run->pol, nerr, sizeof(nerr)) < 0)
		return run_failf(run, "policy", EINVAL, "Invalid policy: %s", nerr);
	run->envp = run_env_build(run->pol, proxy, environ, run->env_extra);
	if (!run->envp)
		return -ENOMEM;
	nr = proxy ? net_rules_current() : NULL;
	for (size_t i = 0; nr && i < nr->n_creds; i++)
		if (nr->creds[i].from_file &&
		    strv_extend(&run->policy_files, nr->creds[i].from_file) < 0)
			return -ENOMEM;
	return 0;
}

/* Test-only switches (compiled in with -Dtest_hooks): recorded as degraded
 * in the audit log, never silent. */
static void test_hooks(Run *run)
{
#if WARD_TEST_HOOKS
	const char *leak = getenv("WARD_TEST_LEAK_DIR");

	if (getenv("WARD_TEST_NO_HARDENING")) {
		run->in.hardening = false;
		run_log(run, RUN_LOG_WARNING,
			"WARD_TEST_NO_HARDENING is set: running without Landlock and seccomp (a "
			"test-only switch)");
	}
	if (getenv("WARD_TEST_NO_MASKS")) {
		run->in.test_no_masks = true;
		run_log(run, RUN_LOG_WARNING,
			"WARD_TEST_NO_MASKS is set: denied paths are not masked, Landlock alone keeps "
			"them out (a test-only switch)");
	}
	const char *break_wall = getenv("WARD_TEST_BREAK_WALL");
	if (break_wall) {
		run->in.test_break_wall = break_wall;
		run_log(run, RUN_LOG_WARNING,
			"WARD_TEST_BREAK_WALL=%s is set: that wall is left down on purpose, the wall "
			"check must refuse the run (a test-only switch)",
			break_wall);
	}
	if (getenv("WARD_TEST_NO_WALLS")) {
		run->in.test_no_walls = true;
		run_log(run, RUN_LOG_WARNING,
			"WARD_TEST_NO_WALLS is set: the walls are not tried before execve (a test-only "
			"switch)");
	}
	if (leak) {
		run->test_leak_dir = strdup(leak);
		run->in.test_leak_dir = run->test_leak_dir;
		run_log(run, RUN_LOG_WARNING,
			"WARD_TEST_LEAK_DIR is set: '%s' is visible inside (a test-only switch)", leak);
	}
#endif
}

/* What the tier does not hold, or holds partly, on this kernel's Landlock
 * ABI (the tier table, probe/tiers.h): for the start event and the result. */
static int tier_gaps(Run *run)
{
	const TierHold which[] = { TIER_NOT_HELD, TIER_PARTLY };
	char ***dst[] = { &run->result.not_held, &run->result.partly_held };
	int abi = landlock_abi_version();

	if (abi < 0)
		abi = 0;
	for (size_t i = 0; i < 2; i++) {
		cJSON *g = tier_gaps_json(run->tier, abi, which[i]);
		const cJSON *it;

		if (!g)
			return -ENOMEM;
		strv_free(*dst[i]);
		*dst[i] = NULL;
		cJSON_ArrayForEach(it, g)
		if (cJSON_IsString(it) && strv_extend(dst[i], it->valuestring) < 0) {
			cJSON_Delete(g);
			return -ENOMEM;
		}
		cJSON_Delete(g);
	}
	return 0;
}

static int do_prepare(Run *run)
{
	WardError e = {};
	int r;

	run->t_phase = monotonic_us();
	if (!run->argv || !run->argv[0])
		return run_failf(run, "arguments", EINVAL, "No command to run");
	if ((r = check_own_fd(run, run->result_fd, "arguments", "--result-fd")) < 0 ||
	    (r = check_own_fd(run, run->events_fd, "events", "--events-fd")) < 0)
		return r;
	if ((r = ward_home_dir(&run->home)) < 0 || (r = ward_state_dir(&run->state)) < 0 ||
	    (r = ward_config_dir(&run->config)) < 0)
		return run_failf(run, "dirs", r, "Failed to find the home directory");
	if ((r = resolve_workspace(run)) < 0 || (r = load_policy(run)) < 0)
		return r;
	/* The tier: the request's, else the policy's "tier", else 2 (after
	 * the policy, so that it may name one). Every tier is an entry of the
	 * table. */
	if (!run->tier_asked && run->pol->has_tier)
		run->tier = run->pol->tier;
	else if (!run->tier_asked)
		run->tier = ceiling_default_tier(run->ceiling);
	run->result.tier = run->tier;
	/* What the run itself asks of the ceiling: before anything is acquired. */
	if (run->ceiling) {
		_cleanup_free_ char *src = NULL;
		PolicyError pe = {};

		if (asprintf(&src, "<%s>", run->overrides_source) < 0)
			return -ENOMEM;
		r = ceiling_check_run(run->ceiling, run->tier,
				      run->tier_asked ? src : "the policy's \"tier\"",
				      run->cow_new || run->session_cow, run->ws, &pe);
		if (r < 0)
			return ceiling_fail(run, &pe);
	}
	if ((r = tier_gaps(run)) < 0)
		return r;
	run->backend = backend_for_tier(run->tier);
	if (!run->backend)
		return run_failf(run, "tier", EINVAL, "There is no tier %d (0 to 3)", run->tier);
	if ((r = run->backend->probe(&e)) < 0)
		return run_fail_with(run, &e, r);
	if ((r = build_env(run)) < 0)
		return r;
	if (policy_hash(run->pol, run->hash) < 0)
		snprintf(run->hash, sizeof(run->hash), "unknown");
	/* The certificate files the passed CA variables name are readable
	 * (after the hash: it stays the hash of `ward policy show`). */
	if (policy_add_ca_reads(run->pol, run->envp, run->home) < 0)
		return -ENOMEM;
	/* Those files are readable paths too: within the ceiling's. */
	if (run->ceiling) {
		PolicyError pe = {};

		if (ceiling_check(run->ceiling, run->pol,
				  "the environment (SSL_CERT_FILE, SSL_CERT_DIR and the like)", &pe) < 0)
			return ceiling_fail(run, &pe);
	}
	run->in = (BackendInput)BACKEND_INPUT_INIT;
	if (run->serve && !(run->backend->flags & BACKEND_SESSION))
		return run_failf(run, "tier", EOPNOTSUPP,
				 "A live session needs tier 2 (the %s backend cannot keep one up)",
				 run->backend->name);
	run->in.serve = run->serve;
	test_hooks(run);
	/* A view of its own: PATH entries it does not show. */
	if (run->backend->flags & BACKEND_ISOLATED)
		run->path_hidden = run_hints_path(run->pol, run->envp, run->home, run->ws);
	if (run->path_hidden) {
		char line[2048];
		run_hints_path_line(run->path_hidden, line, sizeof(line));
		run_log(run, RUN_LOG_WARNING,
			"PATH entries not visible in the sandbox, so commands there are not found or "
			"another program of the same name runs: %s",
			line);
	}

	run->in.policy = run->pol;
	run->in.workspace = run->ws;
	run->in.home = run->home;
	run->in.argv = run->argv;
	run->in.envp = run->envp;
	run->in.state_dir = run->state;
	run->in.config_dir = run->config;
	run->in.policy_files = run->policy_files;
	run->in.timeout_s = run->pol->timeout_s;
	run->in.parent_pid = run->parent_pid;
	for (int i = 0; i < 3; i++)
		run->in.stdio[i] = run->stdio[i];
	r = run->backend->plan(&run->in, &run->plan, &e);
	if (r < 0)
		return run_fail_with(run, &e, r);
	return 0;
}

/* The planning resolves many paths that share their leading components:
 * each component is looked up once for the whole phase (path-real.h). */
int run_do_prepare(Run *run)
{
	int r;

	path_real_begin();
	r = do_prepare(run);
	path_real_end();
	return r;
}

/* The session: a new copy-on-write one, or the one asked for (locked now,
 * an interrupted apply recovered), or none (a fresh run id). */
static int acquire_session(Run *run)
{
	RunResult *res = &run->result;
	int r;

	if (run->cow_new) {
		r = cow_session_create(run->state, run->ws, true, &run->session);
		if (r < 0)
			return run_failf(run, "session", r, "Failed to create a session");
		if (run->log)
			run_log(run, RUN_LOG_INFO, "session %s", cow_session_id(run->session));
		else
			fprintf(stderr, "ward: session %s\n", cow_session_id(run->session));
	} else if (run->session_arg) {
		r = cow_session_open(run->state, run->session_arg, &run->session);
		if (r == -EBUSY)
			return run_failf(run, "session", r,
					 "Session '%s' has a live sandbox: run the command in it with "
					 "'ward exec %s -- CMD', or stop it with 'ward session stop %s'",
					 run->session_arg, run->session_arg, run->session_arg);
		if (r < 0)
			return run_failf(run, "session", r, "Failed to open session '%s'",
					 run->session_arg);
		if ((r = session_workspace(run, run->session)) < 0)
			return r;
	}
	if (!run->session)
		return audit_new_session_id(res->session_id) < 0
			       ? run_failf(run, "session", EIO, "Failed to make a session id")
			       : 0;
	res->cow = cow_session_is_cow(run->session);
	/* diff and apply refuse this run's protected paths, whatever policy
	 * they are given later. */
	if (res->cow)
		(void)cow_session_note_protected(run->session, run->pol->fs_protected);
	snprintf(res->session_id, sizeof(res->session_id), "%s", cow_session_id(run->session));
	(void)cow_session_note_run(run->session);
	return 0;
}

/* Log shipping (docs/audit.md, "Shipping the audit log"): every line also
 * to ward's stdout or stderr, or to a path such as /proc/1/fd/1 (the
 * container's own output, which a node's log agent collects, also for runs
 * started with kubectl exec). The managed ceiling's audit.stream, which a
 * user cannot turn off, else $WARD_AUDIT_STREAM. */
int run_audit_stream(const Run *run, AuditLog *a, const char **ret_dest)
{
	const char *dest = ceiling_audit_stream(run->ceiling);
	_cleanup_close_ int own = -EBADF;
	int fd;

	if (!dest)
		dest = getenv("WARD_AUDIT_STREAM");
	*ret_dest = dest;
	if (!dest || !*dest)
		return 0;
	if (!audit_stream_valid(dest))
		return -EINVAL;
	if (strcmp(dest, "stdout") == 0)
		fd = 1;
	else if (strcmp(dest, "stderr") == 0)
		fd = 2;
	else {
		/* Never created: a log sink exists (a pipe, a FIFO, a file). */
		own = open(dest, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (own < 0)
			return -errno;
		fd = own;
	}
	return audit_set_stream_fd(a, fd);
}

/* A stream that cannot be opened stops the run: its record would not leave. */
static int open_audit_stream(Run *run)
{
	const char *dest = NULL;
	int r = run_audit_stream(run, run->audit, &dest);

	if (r == -EINVAL)
		return run_failf(run, "audit", EINVAL,
				 "WARD_AUDIT_STREAM=%s: expected stdout, stderr or an absolute path", dest);
	if (r < 0)
		return run_failf(run, "audit", r, "Failed to open the audit stream '%s'", dest);
	return 0;
}

int run_do_acquire(Run *run)
{
	const char *own_dirs[] = { run->config, run->state };
	WardError e = {};
	int r;

	/* Made before the run so the sandbox masks them even on first use. */
	for (size_t i = 0; i < 2; i++)
		if ((r = ward_dir_ensure(own_dirs[i])) < 0)
			return run_failf(run, "dirs", r, "Failed to prepare ward's directory '%s'",
					 own_dirs[i]);
	if ((r = acquire_session(run)) < 0)
		return r;
	r = audit_open(run->state, run->result.session_id, &run->audit);
	if (r < 0)
		return run_failf(run, "audit", r, "Failed to open the audit log in '%s'", run->state);
	/* Live events (--events-fd): the log keeps its own copy. */
	if (run->events_fd >= 0 && (r = audit_set_events_fd(run->audit, run->events_fd)) < 0)
		return run_failf(run, "events", r, "--events-fd %d: not a descriptor open for writing",
				 run->events_fd);
	if ((r = open_audit_stream(run)) < 0)
		return r;
	/* The proxy's refusals come back on a pipe, for the line at the end. */
	if (run->pol->net_mode == NET_MODE_PROXY && (run->backend->flags & BACKEND_PROXY)) {
		int pfd[2];
		if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) == 0) {
			run->report_rd = pfd[0];
			run->report_wr = pfd[1];
		}
	}
	run->in.session_id = run->result.session_id;
	run->in.audit = run->audit;
	run->in.proxy_report_fd = run->report_wr;
	if (run->result.cow) {
		run->in.cow_upper = cow_session_upper_dir(run->session);
		run->in.cow_work = cow_session_work_dir(run->session);
	}
	r = run->backend->acquire(run->plan, &e);
	if (r < 0)
		return run_fail_with(run, &e, r);
	if (run->result.cow && run->backend->protected_paths)
		(void)cow_session_note_protected(run->session, run->backend->protected_paths(run->plan));
	phase_done(run, "sandbox plan built (mounts, Landlock, seccomp, limits)");
	run->describe = run->backend->describe(run->plan);
	if (!run->describe)
		return -ENOMEM;
	if ((r = run_check_strict(run)) < 0 || (r = run_write_start(run)) < 0)
		return r;
	if (run->backend->notes)
		STRV_FOREACH(l, run->backend->notes(run->plan))
	run_log(run, RUN_LOG_WARNING, "%s", *l);
	return 0;
}

/* The fix for the T2 setup steps a host or container can block
 * (probe-steps.h). */
static void setup_hint(Run *run, const WardError *e)
{
	ProbeSteps ps = { .error = e->error };
	const char *st = e->step;
	const char *hint_step = strcmp(st, "uid-map") == 0     ? "uid-map"
				: strcmp(st, "gid-map") == 0   ? "gid-map"
				: strcmp(st, "setgroups") == 0 ? "setgroups"
				: strncmp(st, "mount", 5) == 0 || strcmp(st, "pivot") == 0
					? "mount-tmpfs"
					: "";

	if (run->tier != 2 || !hint_step[0])
		return;
	snprintf(ps.step, sizeof(ps.step), "%s", hint_step);
	run_log(run, RUN_LOG_ERROR, "Hint: %s.", probe_steps_hint(&ps));
}

/* What the run's end says to a person, on ward's log. */
static void log_ending(Run *run)
{
	const BackendResult *res = &run->res;

	for (int fd = 0; fd <= 2; fd++)
		if (res->stdio_replaced & (1U << fd))
			run_log(run, RUN_LOG_WARNING,
				"fd %d was a directory or a path-only descriptor: the command got "
				"/dev/null instead (it would lead into the host's file tree)",
				fd);
	if (res->setup_failed && strncmp(res->error.step, "wall-", 5) == 0) {
		const char *w = res->error.step + 5;
		run_log(run, RUN_LOG_ERROR,
			"A wall did not hold (%s: %s): with every protection up, the check before "
			"execve could %s; refusing to run the command",
			res->error.step, res->error.detail,
			strcmp(w, "read") == 0	  ? "read a file the policy hides"
			: strcmp(w, "write") == 0 ? "create a file where the policy forbids writing"
						  : "connect past the network rule");
	} else if (res->setup_failed) {
		if (res->exec_failed)
			run_log(run, RUN_LOG_ERROR, "%s: %s", res->error.detail,
				res->error.error == ENOENT ? "command not found"
							   : strerror(res->error.error));
		else {
			run_log(run, RUN_LOG_ERROR, "Failed to set up the sandbox (%s%s%s): %s",
				res->error.step, res->error.detail[0] ? ": " : "", res->error.detail,
				strerror(res->error.error));
			setup_hint(run, &res->error);
		}
	} else if (res->parent_died)
		run_log(run, RUN_LOG_ERROR,
			"The process that started ward (pid %d) died; killed the command and "
			"everything it started",
			(int)run->parent_pid);
	else if (res->timed_out)
		run_log(run, RUN_LOG_ERROR,
			"Timed out after %llu s; killed the command and everything it started",
			(unsigned long long)run->pol->timeout_s);
	else if (res->oom_killed)
		run_log(run, RUN_LOG_ERROR,
			"The run reached limits.memory_mb (%llu MiB): the kernel killed it",
			(unsigned long long)run->pol->memory_mb);
}

/* What the run learned afterwards: the session's pending changes, the
 * proxy's refusals and the namespace's counters (run-hints.h). */
static void collect_facts(Run *run)
{
	cJSON *v;

	run->facts = cJSON_CreateObject();
	if (!run->facts)
		return;
	/* Tier 3: the VM's engine (KVM or TCG, and why), for --result. */
	v = run->describe ? cJSON_GetObjectItemCaseSensitive(run->describe, "vm") : NULL;
	if (v)
		cJSON_AddItemToObject(run->facts, "vm", cJSON_Duplicate(v, true));
	if (run->result.cow) {
		cJSON *changes = NULL;
		if (cow_session_count_changes(run->session, run->pol->fs_protected, &changes) >= 0 &&
		    changes) {
			cJSON_AddItemToObject(run->facts, "changes", changes);
			v = cJSON_GetObjectItemCaseSensitive(changes, "total");
			if (cJSON_IsNumber(v))
				run->result.cow_changes = (unsigned)v->valuedouble;
		}
	}
	if (run->backend->flags & BACKEND_ISOLATED) {
		char see[PATH_MAX + 64];
		snprintf(see, sizeof(see), "every connection is in %s/audit.jsonl (session %s)",
			 run->state, run->result.session_id);
		_cleanup_strv_ char **lines = NULL;
		run_hints_after(run->pol, &run->res, run->report_rd, see, run->facts, &lines);
		STRV_FOREACH(l, lines)
		run_log(run, RUN_LOG_WARNING, "%s", *l);
		v = cJSON_GetObjectItemCaseSensitive(run->facts, "net_refused");
		run->result.net_refused = (unsigned)cJSON_GetArraySize(v);
	}
}

int run_do_execute(Run *run)
{
	_cleanup_strv_ char **lines = NULL;
	WardError e = {};
	int r;

	run->res = (BackendResult){ .status = -1 };
	if (run->session && cow_session_is_cow(run->session))
		cow_session_settle(run->session);
	r = run->backend->run(run->plan, &run->res, &e);
	if (r < 0)
		return run_fail_with(run, &e, r);
	run_log(run, RUN_LOG_INFO, "command ended after %.1f ms (exit %d)",
		(double)run->res.duration_ms, run->res.exit_code);
	run_fill_result(run);
	log_ending(run);
	if (run->backend->finish) {
		r = run->backend->finish(run->plan, &run->res, &lines);
		if (r < 0)
			run_log(run, RUN_LOG_WARNING,
				"Failed to apply the repository metadata the command wrote: %s",
				strerror(-r));
		STRV_FOREACH(l, lines)
		run_log(run, RUN_LOG_WARNING, "%s", *l);
	}
	collect_facts(run);
	return 0;
}
