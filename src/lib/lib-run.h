/* The object behind ward_run (lib-run.c: options and result; lib-exec.c:
 * the forked run). */
#pragma once

#include <pthread.h>
#include <stdint.h>

#include "lib/lib-internal.h"
#include "run/run.h"

struct ward_run {
	/* The policy's sources, copied (lib_policy_copy_sources). */
	char *policy_file;
	char **presets;
	cJSON *overrides;
	/* Options. */
	char *workspace;
	char **env;
	unsigned timeout_s;      /* 0: the policy's */
	char *network;           /* NULL: the policy's */
	int tier;                /* -1: the default */
	bool strict;
	bool cow;
	char *session;
	int stdio[3];
	int events_fd;
	LibLog log;
	/* The running child, for ward_run_kill from another thread: its
	 * pidfd (not its pid, which may be reused once it is reaped) while
	 * ward_run_exec waits, -1 otherwise; under @lock. */
	pthread_mutex_t lock;
	int pidfd;
	/* The result. */
	bool executed;
	int exit_code;
	int status;
	int signal;
	bool started;
	bool timed_out;
	uint64_t duration_ms;
	char *session_id;
	char **degraded;
	unsigned net_refused;
	unsigned cow_changes;
	char *result_json;
	char error[LIB_ERROR_MAX];
};

static inline void ward_run_freep(ward_run **r)
{
	ward_run_free(*r);
}

/* The run module's request for @r and @argv (lib-exec.c); *@ret_text
 * holds the policy overrides @req points to (caller frees). */
int lib_run_build_request(ward_run *r, const char *const *argv, RunRequest *req, char **ret_text);
