/* The run module's lifecycle and report: see run.h. The phases themselves
 * are in run-phases.c; the result object and the events in run-result.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "common/strv.h"
#include "run/run-internal.h"
#include "run/run-result.h"
#include "ward/ward.h"

void run_log(const Run *run, RunLogLevel level, const char *fmt, ...)
{
	static const int levels[] = { [RUN_LOG_ERROR] = LOG_LVL_ERROR,
				      [RUN_LOG_WARNING] = LOG_LVL_WARNING,
				      [RUN_LOG_INFO] = LOG_LVL_INFO,
				      [RUN_LOG_DEBUG] = LOG_LVL_DEBUG };
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (run->log)
		run->log(run->log_userdata, level, msg);
	else
		log_msg(levels[level], "%s", msg);
}

static int fail_now(Run *run, int r)
{
	char msg[sizeof(run->error.detail) + 128];

	run->failed = r < 0 ? r : -EINVAL;
	run->has_error = true;
	run->result.exit_code = WARD_EXIT_SETUP;
	run_error_message(&run->error, msg, sizeof(msg));
	run_log(run, RUN_LOG_ERROR, "%s", msg);
	return run->failed;
}

_printf_(4, 0) static int failv(Run *run, const char *step, int err, const char *fmt, va_list ap)
{
	snprintf(run->error.step, sizeof(run->error.step), "%s", step);
	vsnprintf(run->error.detail, sizeof(run->error.detail), fmt, ap);
	run->error.error = abs(err);
	return fail_now(run, err ? -abs(err) : -EINVAL);
}

int run_failf(Run *run, const char *step, int err, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = failv(run, step, err, fmt, ap);
	va_end(ap);
	return r;
}

int run_fail_with(Run *run, const WardError *e, int r)
{
	run->error = *e;
	if (!run->error.step[0])
		snprintf(run->error.step, sizeof(run->error.step), "setup");
	return fail_now(run, r < 0 ? r : e->error ? -e->error : -EINVAL);
}

int run_fail(Run *run, const char *step, int err, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (run->failed)
		return run->failed;
	va_start(ap, fmt);
	r = failv(run, step, err, fmt, ap);
	va_end(ap);
	return r;
}

static int dup_str(char **dst, const char *s)
{
	if (!s)
		return 0;
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

static int dup_strv(char ***dst, char *const *l)
{
	if (!l)
		return 0;
	*dst = strv_copy(l);
	return *dst ? 0 : -ENOMEM;
}

Run *run_new(const RunRequest *req)
{
	Run *run = calloc(1, sizeof(*run));

	if (!run)
		return NULL;
	run->report_rd = run->report_wr = -EBADF;
	run->tier = req->tier < 0 ? 2 : req->tier;
	run->tier_asked = req->tier >= 0;
	run->strict = req->strict;
	run->cow_new = req->cow;
	run->allow_unsafe = req->allow_unsafe_workspace;
	for (int i = 0; i < 3; i++)
		run->stdio[i] = req->stdio[i];
	run->parent_pid = req->parent_pid;
	run->serve = req->serve;
	run->events_fd = req->events_fd;
	run->result_fd = req->result_fd;
	run->log = req->log;
	run->log_userdata = req->log_userdata;
	run->result = (RunResult){ .exit_code = WARD_EXIT_SETUP, .status = -1, .tier = run->tier };
	if (dup_strv(&run->argv, req->argv) < 0 || dup_strv(&run->presets, req->presets) < 0 ||
	    dup_strv(&run->env_extra, req->env_extra) < 0 ||
	    dup_str(&run->workspace_arg, req->workspace) < 0 ||
	    dup_str(&run->policy_file, req->policy_file) < 0 ||
	    dup_str(&run->overrides, req->policy_overrides) < 0 ||
	    dup_str(&run->overrides_source,
		    req->overrides_source ? req->overrides_source : "command line") < 0 ||
	    dup_str(&run->session_arg, req->session) < 0 ||
	    dup_str(&run->result_file, req->result_file) < 0)
		return run_free(run);
	return run;
}

Run *run_free(Run *run)
{
	if (!run)
		return NULL;
	if (run->backend && run->plan)
		run->backend->free(run->plan);
	strv_free(run->argv);
	strv_free(run->presets);
	strv_free(run->env_extra);
	free(run->workspace_arg);
	free(run->policy_file);
	free(run->overrides);
	free(run->overrides_source);
	ceiling_free(run->ceiling);
	free(run->session_arg);
	free(run->result_file);
	free(run->home);
	free(run->state);
	free(run->config);
	free(run->ws);
	policy_free(run->pol);
	strv_free(run->policy_files);
	strv_free(run->envp);
	cJSON_Delete(run->path_hidden);
	free(run->test_leak_dir);
	cow_session_free(run->session);
	audit_close(run->audit);
	if (run->report_rd >= 0)
		(void)close(run->report_rd);
	if (run->report_wr >= 0)
		(void)close(run->report_wr);
	cJSON_Delete(run->describe);
	cJSON_Delete(run->facts);
	strv_free(run->result.degraded);
	strv_free(run->result.not_held);
	strv_free(run->result.partly_held);
	free(run);
	return NULL;
}

int run_prepare(Run *run)
{
	int r;

	if (run->failed || run->phase >= RUN_PHASE_PREPARED)
		return run->failed;
	r = run_do_prepare(run);
	if (r < 0)
		return run->failed ? run->failed : run_failf(run, "prepare", r, "Failed to prepare the run");
	run->phase = RUN_PHASE_PREPARED;
	return 0;
}

int run_acquire(Run *run)
{
	int r = run_prepare(run);

	if (r < 0 || run->phase >= RUN_PHASE_ACQUIRED)
		return r;
	r = run_do_acquire(run);
	if (r < 0)
		return run->failed ? run->failed : run_failf(run, "acquire", r, "Failed to set up the run");
	run->phase = RUN_PHASE_ACQUIRED;
	return 0;
}

int run_execute(Run *run)
{
	int r = run_acquire(run);

	if (r < 0 || run->phase >= RUN_PHASE_EXECUTED)
		return r;
	r = run_do_execute(run);
	if (r < 0)
		return run->failed ? run->failed : run_failf(run, "execute", r, "Failed to run");
	run->phase = RUN_PHASE_EXECUTED;
	return 0;
}

static void outcome(const Run *run, RunOutcome *o)
{
	*o = (RunOutcome){
		.result = &run->result,
		.error = run->has_error ? &run->error : NULL,
		.session_id = run->result.session_id,
		.argv = run->argv,
		.workspace = run->ws,
		.facts = run->facts,
		.audit_error = run->audit_error,
		.events_lost = run->events_lost,
		.managed_file = ceiling_file(run->ceiling),
		.managed_sha256 = ceiling_digest(run->ceiling),
	};
}

/* A run that failed before its command ran still leaves its record: the
 * log is opened for it (with a fresh session id) when the run had not. */
static void report_error_event(Run *run)
{
	AuditLog *own = NULL, *audit = run->audit;
	_cleanup_free_ char *state = NULL;
	const char *dir = run->state;
	RunOutcome o;
	int r;

	if (!run->result.session_id[0] && audit_new_session_id(run->result.session_id) < 0)
		run->result.session_id[0] = '\0';
	if (!audit) {
		if (!dir && ward_state_dir(&state) >= 0)
			dir = state;
		if (!dir || ward_dir_ensure(dir) < 0 ||
		    audit_open(dir, run->result.session_id[0] ? run->result.session_id : NULL, &own) < 0)
			return;
		audit = own;
		/* The events stream gets the error too (not if the fd is bad). */
		if (run->events_fd >= 0)
			(void)audit_set_events_fd(own, run->events_fd);
		/* And the log shipping stream (a refusal is what it is for). */
		const char *dest;
		(void)run_audit_stream(run, own, &dest);
	}
	outcome(run, &o);
	r = audit_write(audit, "error", run_event_error(&o));
	if (r < 0)
		run_log(run, RUN_LOG_ERROR, "Failed to write the 'error' record to the audit log in '%s': %s",
			dir ? dir : "?", strerror(-r));
	audit_close(own);
}

int run_report(Run *run)
{
	_cleanup_cjson_ cJSON *obj = NULL;
	RunOutcome o;
	unsigned lost;
	int r = 0;

	if (run->reported)
		return run->failed;
	run->reported = true;
	if (run->phase < RUN_PHASE_EXECUTED) {
		/* Failed before the command ran (or the caller reports early). */
		if (run->has_error)
			report_error_event(run);
	} else {
		if (run->has_error && run->audit) {
			outcome(run, &o);
			(void)audit_write(run->audit, "error", run_event_error(&o));
		}
		run->events_lost = run->audit ? audit_events_lost(run->audit, NULL) : 0;
		outcome(run, &o);
		if (run->audit)
			(void)audit_write(run->audit, run->serve ? "session_exit" : "exit",
					  run_event_exit(&o));
		lost = run->audit ? audit_failures(run->audit, &run->audit_error) : 0;
		if (lost)
			run_log(run, RUN_LOG_ERROR,
				"The audit log in '%s' is incomplete: %u record(s) of this run could not "
				"be written: %s",
				run->state, lost, strerror(-run->audit_error));
	}
	if (run->result_file || run->result_fd >= 0) {
		obj = run_result_json(run);
		r = obj ? run_result_write(obj, run->result_file, run->result_fd) : -ENOMEM;
	}
	return run->failed ? run->failed : r;
}

int run_all(Run *run)
{
	(void)run_execute(run);
	(void)run_report(run);
	return run->result.exit_code;
}

const RunResult *run_result(const Run *run)
{
	return &run->result;
}

const WardError *run_error(const Run *run)
{
	return run->has_error ? &run->error : NULL;
}

cJSON *run_result_json(const Run *run)
{
	RunOutcome o;

	outcome(run, &o);
	return run_result_object(&o);
}
