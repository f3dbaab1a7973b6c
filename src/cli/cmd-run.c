/* ward run: load the policy, pick the tier, run the command in the sandbox,
 * record start and exit in the audit log, exit with the command's status. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "audit/audit.h"
#include "cli/cli-args.h"
#include "cli/commands.h"
#include "cli/run-paths.h"
#include "cli/run-hints.h"
#include "cli/run-report.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/json-util.h"
#include "common/log.h"
#include "common/strv.h"
#include "common/time-util.h"
#include "config.h"
#include "cow/cow.h"
#include "linux/quarantine.h"
#include "linux/sandbox.h"
#include "linux/tier0.h"
#include "net/proxy.h"
#include "policy/env-filter.h"
#include "policy/policy-hostexec.h"
#include "policy/policy.h"
#include "probe/probe.h"
#include "ward/ward.h"

extern char **environ;

DEFINE_TRIVIAL_CLEANUP_FUNC(WardPolicy *, policy_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(AuditLog *, audit_close)
DEFINE_TRIVIAL_CLEANUP_FUNC(CowSession *, cow_session_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(SandboxPlan *, sandbox_plan_free)

static void run_options_donep(RunOptions *o)
{
	run_options_done(o);
}

/* Exit 125 before the command started: say why on stderr, in the audit
 * log and in --result. @err (negative errno, or 0) is what %m prints. */
_printf_(4, 5) static int run_fail(const RunReport *rr, const char *step, int err,
				   const char *fmt, ...)
{
	char msg[1600];
	va_list ap;

	errno = err < 0 ? -err : err;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_error("%s", msg);
	run_report_failure(rr, step, msg);
	return WARD_EXIT_SETUP;
}

/* run-paths.c said why on stderr already; the record gets the gist. */
static int workspace_fail(const RunReport *rr, int exit_code)
{
	run_report_failure(rr, "workspace",
			   "the workspace was refused or could not be resolved safely (see stderr)");
	return exit_code;
}

static int policy_fail(const RunReport *rr, const PolicyError *e)
{
	char buf[1400];
	policy_error_format(e, buf, sizeof(buf));
	return run_fail(rr, "policy", 0, "Invalid policy: %s", buf);
}

/* Info-level timing of the setup phases (--log-level info). */
static void phase_done(const char *what, uint64_t *t)
{
	uint64_t now = monotonic_us();

	log_info("%s in %.1f ms", what, (double)(now - *t) / 1000.0);
	*t = now;
}

/* Flags are the last source: apply them as a JSON document, so they get
 * the same validation (and error messages) as a policy file. */
static int apply_flags(WardPolicy *p, const RunOptions *o, PolicyError *e)
{
	_cleanup_cjson_ cJSON *doc = cJSON_CreateObject();
	_cleanup_free_ char *text = NULL;
	cJSON *net = NULL;

	if (o->timeout_s) {
		cJSON *lim = cJSON_AddObjectToObject(doc, "limits");
		cJSON_AddNumberToObject(lim, "timeout_s", (double)o->timeout_s);
	}
	if (o->net_mode >= 0 || o->allow_domains || o->n_host_ports) {
		net = cJSON_AddObjectToObject(doc, "network");
		if (o->net_mode >= 0 || o->allow_domains)
			cJSON_AddStringToObject(net, "mode",
						net_mode_to_string(o->allow_domains
									   ? NET_MODE_PROXY
									   : (NetMode)o->net_mode));
		if (o->allow_domains) {
			cJSON *a = cJSON_AddArrayToObject(net, "allow");
			STRV_FOREACH(d, o->allow_domains)
			cJSON_AddItemToArray(a, cJSON_CreateString(*d));
		}
		if (o->n_host_ports) {
			cJSON *a = cJSON_AddArrayToObject(net, "host_ports");
			for (size_t i = 0; i < o->n_host_ports; i++)
				cJSON_AddItemToArray(a, cJSON_CreateNumber(o->host_ports[i]));
		}
	}
	if (o->git_mode >= 0)
		cJSON_AddStringToObject(doc, "git", git_mode_to_string((GitMode)o->git_mode));
	text = cJSON_PrintUnformatted(doc);
	if (!text)
		return -ENOMEM;
	return policy_merge_json(p, "<command line>", text, e);
}

/* The start record comes before anything runs: a run that cannot be
 * recorded does not start (a full file system must not hide it). Takes
 * @start. */
static int write_start(AuditLog *audit, const char *state, cJSON *start)
{
	int r = audit_write(audit, "start", start);

	if (r < 0)
		log_error_errno(r, "Failed to write the audit log in '%s', not running the "
				   "command: %m",
				state);
	return r;
}

int cmd_run(int argc, char **argv)
{
	/* First thing: who started us, to die with it (sandbox_run). */
	const pid_t parent = getppid();
	_cleanup_(run_options_donep) RunOptions o = {};
	_cleanup_free_ char *err = NULL, *ws = NULL, *home = NULL, *state = NULL, *config = NULL;
	_cleanup_strv_ char **policy_files = NULL;
	_cleanup_(policy_freep) WardPolicy *pol = NULL;
	_cleanup_(audit_closep) AuditLog *audit = NULL;
	_cleanup_(cow_session_freep) CowSession *session = NULL;
	_cleanup_(sandbox_plan_freep) SandboxPlan *plan = NULL;
	_cleanup_strv_ char **envp = NULL;
	PolicyError pe = {};
	SandboxError se = {};
	SandboxResult res = {};
	char session_id[17], hash[65];
	int tier, r;
	RunReport rr = {};
	_cleanup_close_ int report_rd = -EBADF, report_wr = -EBADF;
	uint64_t t_phase = monotonic_us();

	r = cli_parse_run(argc, argv, &o, &err);
	if (r < 0) {
		/* Still a record for the harness: --result and the audit log. */
		rr.result_file = cli_find_result_file(argc, argv);
		if (ward_state_dir(&state) >= 0)
			rr.state_dir = state;
		r = run_fail(&rr, "arguments", 0, "%s", err ? err : "invalid arguments");
		fprintf(stderr, "Try 'ward run --help'.\n");
		return r;
	}
	if (o.help) {
		fputs(cli_run_usage, stdout);
		return 0;
	}
	if (o.log_level >= 0)
		log_set_level(o.log_level);
	rr.result_file = o.result_file;
	rr.argv = o.argv;
	rr.events_fd = o.events_fd;

	tier = o.tier < 0 ? 2 : o.tier;
	if ((r = ward_home_dir(&home)) < 0 || (r = ward_state_dir(&state)) < 0 ||
	    (r = ward_config_dir(&config)) < 0)
		return run_fail(&rr, "dirs", r, "Failed to find the home directory: %m");
	rr.state_dir = state;
	/* Made before the run so the sandbox masks them even on first use. */
	const char *own_dirs[] = { config, state };
	for (size_t i = 0; i < 2; i++)
		if ((r = ward_dir_ensure(own_dirs[i])) < 0)
			return run_fail(&rr, "dirs", r, "Failed to prepare ward's directory '%s': %m",
					own_dirs[i]);
	if (tier == 1 || tier == 3)
		return run_fail(&rr, "tier", 0,
				"Tier %d is not built yet; use --tier 2 (the default) or --tier 0 (no "
				"isolation)",
				tier);

	if (o.session) {
		r = cow_session_open(state, o.session, &session);
		if (r < 0)
			return run_fail(&rr, "session", r, "Failed to open session '%s': %m",
					o.session);
		/* The very directory the session was made for, reached without a
		 * symlink (a command could have swapped the path for one). */
		int wfd = cow_session_open_workspace(session);
		if (wfd < 0)
			return run_fail(&rr, "workspace", wfd,
					"Session '%s': the workspace '%s' is not the directory the "
					"session was made for (%s); refusing to run in it",
					o.session, cow_session_workspace(session),
					wfd == -ELOOP	 ? "a symlink is on its path"
					: wfd == -ESTALE ? "another directory is there now"
							 : strerror(-wfd));
		close(wfd);
		if ((r = run_resolve_workspace(cow_session_workspace(session), &ws)) != 0)
			return workspace_fail(&rr, r);
		if (o.workspace) {
			_cleanup_free_ char *w = NULL;
			if ((r = run_resolve_workspace(o.workspace, &w)) != 0)
				return workspace_fail(&rr, r);
			if (strcmp(w, ws) != 0)
				return run_fail(&rr, "session", 0,
						"Session '%s' belongs to workspace '%s', not '%s'",
						o.session, cow_session_workspace(session),
						o.workspace);
		}
	} else if ((r = run_resolve_workspace(o.workspace, &ws)) != 0)
		return workspace_fail(&rr, r);
	rr.workspace = ws;

	/* Policy: defaults, presets, the user's file, flags. */
	r = policy_load(o.policy_file, o.presets, &pol, &pe);
	if (r < 0)
		return policy_fail(&rr, &pe);
	r = apply_flags(pol, &o, &pe);
	if (r < 0)
		return policy_fail(&rr, &pe);
	PolicyContext ctx = { .home = home, .workspace = ws };
	r = policy_finalize(pol, &ctx, &pe);
	if (r < 0)
		return policy_fail(&rr, &pe);
	if ((r = run_check_workspace(ws, home, pol, state, config, o.allow_unsafe_workspace)) != 0)
		return workspace_fail(&rr, r);
	phase_done("policy loaded and checked", &t_phase);
	/* Every file the policy came from is hidden from the sandbox. */
	if (strv_extend_strv(&policy_files, pol->sources) < 0)
		return run_fail(&rr, "plan", -ENOMEM, "Out of memory");
	if (o.policy_file) {
		char *real = realpath(o.policy_file, NULL);
		if (real && strv_consume(&policy_files, real) < 0)
			return run_fail(&rr, "plan", -ENOMEM, "Out of memory");
	}

	/* No writable path that host shells run from (docs/policy.md). */
	r = policy_check_host_exec(pol, getenv("PATH"), home, &pe);
	if (r < 0)
		return policy_fail(&rr, &pe);

	envp = env_filter(pol, environ, o.env_extra);
	if (!envp || strv_extend(&envp, "TMPDIR=/tmp") < 0)
		return run_fail(&rr, "plan", -ENOMEM, "Out of memory");
	if (pol->net_mode == NET_MODE_PROXY) {
		char http[64], socks[64];
		snprintf(http, sizeof(http), "http://127.0.0.1:%d", WARD_PROXY_HTTP_PORT);
		snprintf(socks, sizeof(socks), "socks5h://127.0.0.1:%d", WARD_PROXY_SOCKS_PORT);
		const char *vars[][2] = { { "HTTP_PROXY", http },  { "http_proxy", http },
					  { "HTTPS_PROXY", http }, { "https_proxy", http },
					  { "ALL_PROXY", socks },  { "all_proxy", socks },
					  { "NO_PROXY", "localhost,127.0.0.1,::1" },
					  { "no_proxy", "localhost,127.0.0.1,::1" } };
		for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
			char *kv = NULL;
			if (asprintf(&kv, "%s=%s", vars[i][0], vars[i][1]) < 0 ||
			    strv_consume(&envp, kv) < 0)
				return run_fail(&rr, "plan", -ENOMEM, "Out of memory");
		}
	}

	if (o.cow) {
		r = cow_session_create(state, ws, true, &session);
		if (r < 0)
			return run_fail(&rr, "session", r, "Failed to create a session: %m");
		fprintf(stderr, "ward: session %s\n", cow_session_id(session));
	}
	if (session) {
		/* diff and apply refuse this run's protected paths, whatever
		 * policy they are given later. */
		if (cow_session_is_cow(session))
			(void)cow_session_note_protected(session, pol->fs_protected);
		snprintf(session_id, sizeof(session_id), "%s", cow_session_id(session));
		(void)cow_session_note_run(session);
	} else if ((r = audit_new_session_id(session_id)) < 0)
		return run_fail(&rr, "session", r, "Failed to make a session id: %m");
	rr.session_id = session_id;

	r = audit_open(state, session_id, &audit);
	if (r < 0)
		return run_fail(&rr, "audit", r, "Failed to open the audit log in '%s': %m", state);
	rr.audit = audit;
	/* Live events (--events-fd); ward's own copy, so fd N is not passed on. */
	if (o.events_fd >= 0 && (r = audit_set_events_fd(audit, o.events_fd)) < 0)
		return run_fail(&rr, "events", r,
				"--events-fd %d: not a descriptor open for writing: %m", o.events_fd);
	if (o.events_fd > 2)
		(void)fcntl(o.events_fd, F_SETFD, FD_CLOEXEC);
	if (policy_hash(pol, hash) < 0)
		snprintf(hash, sizeof(hash), "unknown");
	/* The certificate files the passed CA variables name are readable
	 * (after the hash: it stays the hash of `ward policy show`). */
	if (policy_add_ca_reads(pol, envp, home) < 0)
		return run_fail(&rr, "plan", -ENOMEM, "Out of memory");

	bool hardening = true;
	const char *leak = NULL;
	bool no_masks = false;
#if WARD_TEST_HOOKS
	/* Test-only switches (compiled in with -Dtest_hooks): recorded as
	 * degraded in the audit log, never silent. */
	if (getenv("WARD_TEST_NO_HARDENING")) {
		hardening = false;
		log_warning("WARD_TEST_NO_HARDENING is set: running without Landlock and seccomp "
			    "(a test-only switch)");
	}
	if (getenv("WARD_TEST_NO_MASKS")) {
		no_masks = true;
		log_warning("WARD_TEST_NO_MASKS is set: denied paths are not masked, Landlock alone "
			    "keeps them out (a test-only switch)");
	}
	leak = getenv("WARD_TEST_LEAK_DIR");
	if (leak)
		log_warning("WARD_TEST_LEAK_DIR is set: '%s' is visible inside (a test-only switch)",
			    leak);
#endif

	cJSON *start = cJSON_CreateObject();
	cJSON_AddItemToObject(start, "argv", json_strv_array(o.argv));
	cJSON_AddStringToObject(start, "workspace", ws);
	cJSON_AddNumberToObject(start, "tier", tier);
	cJSON_AddStringToObject(start, "policy_hash", hash);
	cJSON_AddItemToObject(start, "policy_sources", json_strv_array(pol->sources));
	cJSON_AddStringToObject(start, "network", net_mode_to_string(pol->net_mode));
	if (pol->n_net_host_ports > 0) {
		cJSON *hp = cJSON_AddArrayToObject(start, "host_ports");
		for (size_t i = 0; i < pol->n_net_host_ports; i++)
			cJSON_AddItemToArray(hp, cJSON_CreateNumber(pol->net_host_ports[i]));
	}
	if (session && cow_session_is_cow(session))
		cJSON_AddBoolToObject(start, "cow", true);
	/* Tier 0 has no view: everything on PATH is there. */
	cJSON *hidden = tier == 2 ? run_hints_path(pol, envp, home, ws) : NULL;
	if (hidden)
		cJSON_AddItemToObject(start, "path_hidden", hidden);
	/* The proxy's refusals come back on a pipe, for the line at the end. */
	if (pol->net_mode == NET_MODE_PROXY) {
		int pfd[2];
		if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) == 0) {
			report_rd = pfd[0];
			report_wr = pfd[1];
		}
	}

	if (tier == 2) {
		const bool cow = session && cow_session_is_cow(session);
		(void)placeholders_cleanup_stale(state);
		if (!cow) {
			/* A run whose guard was killed before its check. */
			QuarantineInput qi = { .workspace = ws, .state_dir = state,
					       .protected = pol->fs_protected, .audit = audit };
			(void)quarantine_recover(&qi);
		}
		SandboxOptions so = {
			.policy = pol,
			.workspace = ws,
			.home = home,
			.argv = o.argv,
			.envp = envp,
			.state_dir = state,
			.config_dir = config,
			.policy_files = policy_files,
			.cow_upper = cow ? cow_session_upper_dir(session) : NULL,
			.cow_work = cow ? cow_session_work_dir(session) : NULL,
			.session_id = session_id,
			.hardening = hardening,
			.test_leak_dir = leak,
			.test_no_masks = no_masks,
			.audit = audit,
			.has_proxy_report = report_wr >= 0,
			.proxy_report_fd = report_wr,
			.parent_pid = parent,
		};
		r = sandbox_plan_new(&so, &plan, &se);
		if (r >= 0)
			r = sandbox_acquire(plan, &se);
		if (r < 0) {
			cJSON_Delete(start);
			return run_fail(&rr, se.step, -se.error, "Failed to prepare the sandbox (%s): %s: %s",
					se.step, se.detail, strerror(se.error));
		}
		if (cow)
			(void)cow_session_note_protected(session, sandbox_plan_protected(plan));
		phase_done("sandbox plan built (mounts, Landlock, seccomp, limits)", &t_phase);
		cJSON *d = sandbox_plan_describe(plan);
		cJSON *deg = cJSON_GetObjectItem(d, "degraded");
		if (o.strict && cJSON_GetArraySize(deg) > 0) {
			_cleanup_free_ char *t = cJSON_PrintUnformatted(deg);
			cJSON_Delete(d);
			cJSON_Delete(start);
			return run_fail(&rr, "strict", 0,
					"Refusing to run with --strict: degraded protections %s", t);
		}
		for (cJSON *it = d->child; it;) {
			cJSON *next = it->next;
			cJSON_AddItemToObject(start, it->string,
					      cJSON_DetachItemViaPointer(d, it));
			it = next;
		}
		cJSON_Delete(d);
		if (write_start(audit, state, start) < 0) {
			run_report_failure(&rr, "audit", "could not write the start record");
			return WARD_EXIT_SETUP;
		}
		STRV_FOREACH(l, sandbox_plan_git_notes(plan))
		log_warning("%s", *l);

		r = sandbox_run(plan, pol->timeout_s, &res, &se);
		if (r < 0) {
			r = run_fail(&rr, se.step, -se.error, "Failed to start the sandbox (%s): %s: %s",
				     se.step, se.detail, strerror(se.error));
			WardFeatures f;
			/* The full probe: only trying each namespace shows an AppArmor
			 * or container seccomp block, and so the right Hint. */
			if (probe_features(&f, true) >= 0)
				probe_explain_missing(&f);
			return r;
		}
		log_info("command ended after %.1f ms in the sandbox (exit %d)",
			 (double)res.duration_ms, res.exit_code);
	} else {
		cJSON_AddItemToObject(start, "enforced", cJSON_CreateArray());
		cJSON *deg = cJSON_CreateArray();
		cJSON_AddItemToArray(deg, cJSON_CreateString("tier-0-no-isolation"));
		cJSON_AddItemToObject(start, "degraded", deg);
		if (o.strict) {
			cJSON_Delete(start);
			return run_fail(&rr, "strict", 0,
					"Refusing to run with --strict: --tier 0 has no isolation");
		}
		if (write_start(audit, state, start) < 0) {
			run_report_failure(&rr, "audit", "could not write the start record");
			return WARD_EXIT_SETUP;
		}
		r = tier0_run(o.argv, envp, ws, pol->timeout_s, parent, &res);
		if (r < 0)
			return run_fail(&rr, "fork", r, "Failed to run '%s': %m", o.argv[0]);
	}

	for (int fd = 0; fd <= 2; fd++)
		if (res.stdio_replaced & (1U << fd))
			log_warning("fd %d was a directory or a path-only descriptor: the command got "
				    "/dev/null instead (it would lead into the host's file tree)",
				    fd);
	if (res.setup_failed) {
		if (sandbox_result_exec_failed(&res))
			log_error("%s: %s", res.error.detail,
				  res.error.error == ENOENT ? "command not found"
							    : strerror(res.error.error));
		else
			log_error("Failed to set up the sandbox (%s%s%s): %s", res.error.step,
				  res.error.detail[0] ? ": " : "", res.error.detail,
				  strerror(res.error.error));
	} else if (res.parent_died)
		log_error("The process that started ward (pid %d) died; killed the command and "
			  "everything it started",
			  (int)parent);
	else if (res.timed_out)
		log_error("Timed out after %llu s; killed the command and everything it started",
			  (unsigned long long)pol->timeout_s);
	else if (res.oom_killed)
		log_error("The run reached limits.memory_mb (%llu MiB): the kernel killed it",
			  (unsigned long long)pol->memory_mb);
	char setup_msg[sizeof(res.error.step) + sizeof(res.error.detail) + 128] = "";
	if (res.setup_failed) {
		snprintf(setup_msg, sizeof(setup_msg), "%s%s%s: %s", res.error.step,
			 res.error.detail[0] ? ": " : "", res.error.detail,
			 sandbox_result_exec_failed(&res) && res.error.error == ENOENT
				 ? "command not found"
				 : strerror(res.error.error));
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "step", res.error.step);
		cJSON_AddStringToObject(e, "error", setup_msg);
		cJSON_AddNumberToObject(e, "exit_code", res.exit_code);
		(void)audit_write(audit, "error", e);
	}

	if (plan) {
		_cleanup_strv_ char **lines = NULL;
		r = sandbox_git_finish(plan, &res, &lines);
		if (r < 0)
			log_warning("Failed to apply the repository metadata the command wrote: %s",
				    strerror(-r));
		STRV_FOREACH(l, lines)
		log_warning("%s", *l);
	}

	cJSON *ex = cJSON_CreateObject();
	cJSON_AddNumberToObject(ex, "exit_code", res.exit_code);
	if (res.status >= 0)
		cJSON_AddNumberToObject(ex, "status", res.status);
	else
		cJSON_AddNullToObject(ex, "status");
	if (res.signal)
		cJSON_AddNumberToObject(ex, "signal", res.signal);
	else
		cJSON_AddNullToObject(ex, "signal");
	cJSON_AddBoolToObject(ex, "timed_out", res.timed_out);
	if (res.oom_killed)
		cJSON_AddBoolToObject(ex, "oom_killed", true);
	if (res.parent_died)
		cJSON_AddBoolToObject(ex, "parent_died", true);
	cJSON_AddNumberToObject(ex, "duration_ms", (double)res.duration_ms);
	if (res.quarantined || res.protected_check_failed)
		cJSON_AddNumberToObject(ex, "quarantined", res.quarantined);
	if (res.protected_check_failed)
		cJSON_AddBoolToObject(ex, "protected_check_failed", true);
	if (res.setup_failed) {
		cJSON_AddStringToObject(ex, "setup_step", res.error.step);
		cJSON_AddStringToObject(ex, "setup_error", strerror(res.error.error));
	}
	if (session && cow_session_is_cow(session)) {
		cJSON *changes = NULL;
		if (cow_session_count_changes(session, pol->fs_protected, &changes) >= 0 && changes)
			cJSON_AddItemToObject(ex, "changes", changes);
	}
	if (tier == 2) {
		char see[PATH_MAX + 64];
		snprintf(see, sizeof(see), "every connection is in %s/audit.jsonl (session %s)", state,
			 session_id);
		run_hints_after(pol, &res, report_rd, see, ex);
	}
	unsigned events_lost = audit_events_lost(audit, NULL);
	if (events_lost)
		cJSON_AddNumberToObject(ex, "events_lost", events_lost);
	cJSON *sum = o.result_file ? cJSON_Duplicate(ex, true) : NULL;
	int audit_err = 0;
	unsigned lost;

	(void)audit_write(audit, "exit", ex);
	lost = audit_failures(audit, &audit_err);
	if (lost)
		log_error("The audit log in '%s' is incomplete: %u record(s) of this run could not "
			  "be written: %s",
			  state, lost, strerror(-audit_err));
	if (sum) {
		cJSON_AddStringToObject(sum, "session", session_id);
		if (lost)
			cJSON_AddStringToObject(sum, "audit_error", strerror(-audit_err));
		if (setup_msg[0])
			cJSON_AddStringToObject(sum, "error", setup_msg);
		(void)run_report_write_result(o.result_file, sum);
		cJSON_Delete(sum);
	}
	return res.exit_code;
}
