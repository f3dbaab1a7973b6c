/* The result object of a run and the audit events of a run, built in one
 * place from one description of the run (RunOutcome): the `exit` event,
 * --result FILE, --result-fd N and libward's result all come from
 * run_result_object()/run_event_exit(); docs/result.md and docs/audit.md
 * document the fields. Pure: no I/O but run_result_write(). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/error.h"
#include "run/run.h"

#define RUN_RESULT_VERSION 1

/* What the run knows when it ends (or fails), borrowed. */
typedef struct RunOutcome {
	const RunResult *result;
	const WardError *error;  /* NULL: no failure */
	const char *session_id;  /* "" or NULL: none */
	char *const *argv;       /* may be NULL (a usage error) */
	const char *workspace;   /* may be NULL */
	/* "net_refused", "net_refused_more", "net_attempts", "changes" as the
	 * hints and the session made them; may be NULL. */
	const cJSON *facts;
	int audit_error;         /* -errno of the last audit record lost, 0 */
	unsigned events_lost;    /* lines --events-fd did not get */
	/* The managed ceiling that bound the run (policy/ceiling.h): its path
	 * and SHA-256; NULL: none. */
	const char *managed_file;
	const char *managed_sha256;
} RunOutcome;

/* The facts for the `start` event, borrowed. */
typedef struct RunStart {
	char *const *argv;
	const char *workspace;
	int tier;
	char *const *not_held;        /* the tier table's gaps (may be NULL) */
	char *const *partly_held;
	const char *policy_hash;
	char *const *policy_sources;
	const char *network;          /* "none" or "proxy" */
	const uint16_t *host_ports;
	size_t n_host_ports;
	bool cow;
	const cJSON *path_hidden;     /* may be NULL */
	const cJSON *describe;        /* the backend's: enforced, degraded, limits, ... */
	const char *managed_file;     /* NULL: no managed ceiling */
	const char *managed_sha256;
} RunStart;

/* The one line a person reads about @e: its detail, then the system's
 * reason ("command not found" for a missing command). */
void run_error_message(const WardError *e, char *buf, size_t n);

/* The complete result object ("v": 1): every field present. */
cJSON *run_result_object(const RunOutcome *o);
/* The audit events' fields (audit_write adds the envelope). */
cJSON *run_event_start(const RunStart *s);
cJSON *run_event_exit(const RunOutcome *o);
cJSON *run_event_error(const RunOutcome *o);

/* Write @obj: pretty to @file (never through a symlink, run-paths.h) when
 * not NULL, one line to @fd when >= 0. 0 or the last -errno; failures are
 * logged as warnings. */
int run_result_write(const cJSON *obj, const char *file, int fd);
