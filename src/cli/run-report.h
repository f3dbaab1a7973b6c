/* A `ward run` that ends before its command starts (exit 125) still leaves
 * its record: an `error` audit event (the log is opened for it if the run
 * had not opened it yet) and the --result file, both naming the step and
 * the reason, so that a harness reading either learns why. */
#pragma once

#include "audit/audit.h"

typedef struct RunReport {
	const char *state_dir;   /* NULL until known: then no audit event */
	const char *session_id;  /* NULL: a fresh one */
	AuditLog *audit;         /* borrowed; NULL: opened here for the event */
	const char *result_file; /* --result FILE, may be NULL */
	char *const *argv;       /* the command, for the event */
	const char *workspace;   /* may be NULL */
	int events_fd;           /* --events-fd N, used when > 0 (0 is stdin) */
} RunReport;

/* Write the error event and the result. Best effort: failures to write are
 * logged as warnings. */
void run_report_failure(const RunReport *r, const char *step, const char *message);

/* Write @summary (pretty JSON) to @path, never through a symlink
 * (run_write_result); logs a warning on failure. */
int run_report_write_result(const char *path, cJSON *summary);
