/* The Run object, shared by run.c (lifecycle, report) and run-phases.c
 * (prepare, acquire, execute). Not for other modules: run.h is the API. */
#pragma once

#include <stdarg.h>

#include "audit/audit.h"
#include "cow/cow.h"
#include "policy/ceiling.h"
#include "policy/policy.h"
#include "run/backend.h"
#include "run/run.h"

typedef enum RunPhase {
	RUN_PHASE_NEW,
	RUN_PHASE_PREPARED,
	RUN_PHASE_ACQUIRED,
	RUN_PHASE_EXECUTED,
} RunPhase;

struct Run {
	/* The request, copied. */
	char **argv, **presets, **env_extra;
	char *workspace_arg, *policy_file, *overrides, *session_arg, *result_file;
	char *overrides_source;
	int tier;
	bool tier_asked;    /* the request named the tier (else the policy's, else 2) */
	bool strict, cow_new, allow_unsafe;
	int stdio[3];
	pid_t parent_pid;
	const struct SandboxServe *serve;
	int events_fd, result_fd;
	RunLogFn log;
	void *log_userdata;

	RunPhase phase;
	int failed;         /* 0, or the -errno every later phase returns */
	bool has_error;     /* error is set: a phase failed, or setup inside did */
	WardError error;
	RunResult result;
	bool reported;

	/* prepare */
	char *home, *state, *config, *ws;
	WardPolicy *pol;
	Ceiling *ceiling;   /* the managed ceiling, NULL when there is none */
	bool session_cow;   /* --session names a copy-on-write session */
	char **policy_files, **envp;
	char hash[65];
	cJSON *path_hidden;
	char *test_leak_dir;
	const Backend *backend;
	BackendInput in;
	BackendPlan *plan;

	/* acquire */
	CowSession *session;
	AuditLog *audit;
	int report_rd, report_wr;
	cJSON *describe;

	/* execute */
	BackendResult res;
	cJSON *facts;       /* net_refused, net_attempts, changes (run-result.h) */
	int audit_error;
	unsigned events_lost; /* lines the events fd did not get (audit_events_lost) */
	uint64_t t_phase;
};

_printf_(3, 4) void run_log(const Run *run, RunLogLevel level, const char *fmt, ...);
/* Record the failure of a phase (and log it): every later phase returns
 * the same error. Returns it (-errno). */
_printf_(4, 5) int run_failf(Run *run, const char *step, int err, const char *fmt, ...);
int run_fail_with(Run *run, const WardError *e, int r);
/* Tee @a to the audit stream configured for @run, if any (@ret_dest: its
 * setting). 0 or -errno (-EINVAL: not stdout, stderr or a path). */
int run_audit_stream(const Run *run, AuditLog *a, const char **ret_dest);

/* run-record.c: the backend's "degraded" into the result, refused under
 * --strict; the `start` event (a run that cannot be recorded does not
 * start); the result from run->res. */
int run_check_strict(Run *run);
int run_write_start(Run *run);
void run_fill_result(Run *run);

/* The platform's phases (run-phases.c; ward.exe: src/windows/win-run-phases.c). */
int run_do_prepare(Run *run);
int run_do_acquire(Run *run);
int run_do_execute(Run *run);
