/* What the run module makes of a backend's answers, on every platform:
 * --strict against the backend's description, the `start` event, and the
 * result from the backend's. The phases (run-phases.c on Linux,
 * src/windows/win-run-phases.c for ward.exe) call these. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "run/run-internal.h"
#include "run/run-result.h"

int run_check_strict(Run *run)
{
	cJSON *deg = cJSON_GetObjectItemCaseSensitive(run->describe, "degraded");
	const cJSON *it;

	cJSON_ArrayForEach(it, deg)
	if (cJSON_IsString(it) && strv_extend(&run->result.degraded, it->valuestring) < 0)
		return -ENOMEM;
	if (run->strict && cJSON_GetArraySize(deg) > 0) {
		_cleanup_free_ char *t = cJSON_PrintUnformatted(deg);
		return run_failf(run, "strict", 0,
				 "Refusing to run with --strict: degraded protections %s", t ? t : "");
	}
	return 0;
}

int run_write_start(Run *run)
{
	RunStart s = {
		.argv = run->argv,
		.workspace = run->ws,
		.tier = run->tier,
		.not_held = run->result.not_held,
		.partly_held = run->result.partly_held,
		.policy_hash = run->hash,
		.policy_sources = run->pol->sources,
		.network = net_mode_to_string(run->pol->net_mode),
		.host_ports = run->pol->net_host_ports,
		.n_host_ports = run->pol->n_net_host_ports,
		.cow = run->result.cow,
		.path_hidden = run->path_hidden,
		.describe = run->describe,
		.managed_file = ceiling_file(run->ceiling),
		.managed_sha256 = ceiling_digest(run->ceiling),
	};
	/* A run that cannot be recorded does not start (a full file system
	 * must not hide it). */
	int r = audit_write(run->audit, run->serve ? "session_start" : "start", run_event_start(&s));

	if (r < 0)
		return run_failf(run, "audit", r,
				 "Failed to write the audit log in '%s', not running the command",
				 run->state);
	return 0;
}

void run_fill_result(Run *run)
{
	const BackendResult *res = &run->res;
	RunResult *r = &run->result;

	r->exit_code = res->exit_code;
	r->status = res->status;
	r->signal = res->signal;
	r->started = !res->setup_failed;
	r->timed_out = res->timed_out;
	r->oom_killed = res->oom_killed;
	r->parent_died = res->parent_died;
	r->duration_ms = res->duration_ms;
	r->quarantined = res->quarantined > 0 ? (unsigned)res->quarantined : 0;
	r->protected_check_failed = res->protected_check_failed;
	if (res->setup_failed) {
		/* The step inside, as the error's first words. */
		run->has_error = true;
		run->error = res->error;
		snprintf(run->error.detail, sizeof(run->error.detail), "%s%s%.*s", res->error.step,
			 res->error.detail[0] ? ": " : "", (int)(sizeof(run->error.detail) - 80),
			 res->error.detail);
	}
}

