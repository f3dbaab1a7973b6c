/* One run of one command, behind the boundary that the CLI (`ward run`),
 * libward (include/ward/ward.h) and `ward mcp` share. The CLI is
 * parse -> run_new -> run_all (or the phases) -> print -> exit.
 *
 * Lifecycle (minijail's model: an opaque object, phases in order, one free):
 *
 *   Run *run = run_new(&req);        NULL only when out of memory
 *   run_prepare(run);                policy -> backend plan. Reads files, writes
 *                                    nothing: no directory, session, cgroup or
 *                                    audit record exists after it.
 *   run_acquire(run);                ward's state and config dirs, the
 *                                    copy-on-write session, the audit log, the
 *                                    backend's resources (cgroup, ...), the
 *                                    `start` event.
 *   run_execute(run);                run the command and wait; live events go to
 *                                    the audit log and RunRequest.events_fd.
 *   run_report(run);                 the `exit` event, --result; idempotent.
 *   run_result(run) / run_result_json(run)   at any point after run_new: a run
 *                                    that failed in any phase has a result too.
 *   run_free(run);
 *
 * Each phase returns 0 or a negative errno; after a failure the later phases
 * return the same error without doing anything, run_error() says which step
 * failed and why, and the result's exit code is 125 (WARD_EXIT_SETUP).
 * run_all() is all four phases; it returns the exit code ward exits with.
 *
 * Nothing here prints unless RunRequest.log is NULL, in which case messages
 * for humans go to ward's log (stderr). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "common/error.h"

typedef struct Run Run;
typedef struct WardPolicy WardPolicy;

typedef enum RunLogLevel {
	RUN_LOG_ERROR,
	RUN_LOG_WARNING,
	RUN_LOG_INFO,
	RUN_LOG_DEBUG,
} RunLogLevel;

typedef void (*RunLogFn)(void *userdata, RunLogLevel level, const char *message);

typedef struct RunRequest {
	char *const *argv;            /* the command; argv[0] looked up on PATH inside */
	const char *workspace;        /* NULL: the current directory */
	const char *policy_file;      /* -p; NULL: the user's file if any */
	char *const *presets;         /* --preset, may be NULL */
	/* Flags as a policy document, merged last as "<command line>" (so they
	 * get the same validation and error messages as a file). May be NULL. */
	const char *policy_overrides;
	/* Who asked for the overrides and the tier, named when the managed
	 * ceiling (docs/policy.md) refuses them; NULL: "command line". */
	const char *overrides_source;
	char *const *env_extra;       /* --env NAME[=VALUE], may be NULL */
	int tier;                     /* -1: the default (2) */
	bool strict;                  /* refuse a run with degraded protections */
	bool cow;                     /* make a new copy-on-write session */
	const char *session;          /* run in this existing session */
	bool allow_unsafe_workspace;
	/* The command's stdin, stdout, stderr; -1: the caller's own 0, 1, 2. */
	int stdio[3];
	/* When this process dies the run is killed (exit 137); 0: not watched. */
	pid_t parent_pid;
	/* JSON lines, one per event, while the run goes on (the audit log's
	 * events, docs/result.md); -1: none. Not closed by the run. */
	int events_fd;
	/* The result object, written when the run ends, whatever phase it
	 * ended in: to a file (never through a symlink) and/or an fd. */
	const char *result_file;
	int result_fd;                /* -1: none. Not closed by the run. */
	RunLogFn log;                 /* NULL: ward's log on stderr */
	void *log_userdata;
	/* A warm session (src/session/, docs/sessions.md): the sandbox stays
	 * up and serves `ward exec` instead of running argv; borrowed. */
	const struct SandboxServe *serve;
} RunRequest;

/* RunRequest with every fd field -1 and tier -1. */
#define RUN_REQUEST_INIT                                                                \
	{ .tier = -1, .stdio = { -1, -1, -1 }, .events_fd = -1, .result_fd = -1 }

/* The outcome, as libward and docs/result.md describe it. */
typedef struct RunResult {
	int exit_code;           /* what `ward run` exits with (include/ward/ward.h) */
	int status;              /* the command's exit status; -1: signalled or never ran */
	int signal;              /* the signal that ended it, 0 if none */
	bool started;            /* the command was executed */
	bool timed_out;
	bool oom_killed;
	bool parent_died;
	uint64_t duration_ms;
	int tier;                /* the run's tier: asked for, else the policy's "tier", else 2 */
	char session_id[17];     /* "" before acquire */
	char **degraded;         /* protections this run does not have (NULL-terminated) */
	/* The guarantees of the tier table (docs/tiers.md) that the tier does
	 * not hold / holds only partly on this kernel (NULL-terminated ids). */
	char **not_held;
	char **partly_held;
	unsigned net_refused;    /* connections the proxy refused */
	unsigned quarantined;    /* protected paths moved out after the run */
	bool protected_check_failed; /* the after-run check could not run or move one */
	bool cow;                /* the run wrote to a copy-on-write session */
	unsigned cow_changes;    /* paths changed in the session, pending review */
} RunResult;

/* The environment a command sees under @pol, built from @src as `ward run`
 * builds it (env.pass/strip/set, @extra: --env, TMPDIR, the proxy's
 * variables and the credentials' placeholders when @proxy). NULL on OOM
 * or an invalid network section. */
char **run_env_build(const WardPolicy *pol, bool proxy, char *const *src, char *const *extra);

/* Copies everything @req points to (but serve). NULL only on OOM. */
Run *run_new(const RunRequest *req);
Run *run_free(Run *run);

int run_prepare(Run *run);
int run_acquire(Run *run);
int run_execute(Run *run);
int run_report(Run *run);
/* All four; returns the exit code (125 after a setup failure). */
int run_all(Run *run);

/* Mark @run failed before its first phase, in @step (a check of the
 * caller's own, e.g. the CLI's argument parsing: step "arguments"): every
 * phase then returns the error and run_report() records it (the `error`
 * event, --result). @err: errno (either sign) or 0. Returns -errno. */
_printf_(4, 5) int run_fail(Run *run, const char *step, int err, const char *fmt, ...);

const RunResult *run_result(const Run *run);
/* NULL when no phase failed. */
const WardError *run_error(const Run *run);
/* The result object (docs/result.md, "v": 1); caller frees. */
cJSON *run_result_json(const Run *run);
