#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/run-paths.h"
#include "cli/run-report.h"
#include "common/cleanup.h"
#include "common/json-util.h"
#include "common/log.h"
#include "ward/ward.h"

int run_report_write_result(const char *path, cJSON *summary)
{
	_cleanup_free_ char *text = cJSON_Print(summary), *line = NULL;

	if (!text || asprintf(&line, "%s\n", text) < 0)
		return log_warning_errno(-ENOMEM, "Failed to write the result: %m");
	/* Never through a symlink the command planted (run-paths.h). */
	return run_write_result(path, line);
}

void run_report_failure(const RunReport *r, const char *step, const char *message)
{
	AuditLog *own = NULL, *audit = r->audit;
	char sid[17] = "";

	if (r->session_id)
		snprintf(sid, sizeof(sid), "%s", r->session_id);
	else if (audit_new_session_id(sid) < 0)
		sid[0] = '\0';

	if (!audit && r->state_dir && audit_open(r->state_dir, sid[0] ? sid : NULL, &own) >= 0) {
		audit = own;
		if (r->events_fd > 0)
			(void)audit_set_events_fd(own, r->events_fd);
	}
	if (audit) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "step", step);
		cJSON_AddStringToObject(e, "error", message);
		cJSON_AddNumberToObject(e, "exit_code", WARD_EXIT_SETUP);
		if (r->argv)
			cJSON_AddItemToObject(e, "argv", json_strv_array(r->argv));
		if (r->workspace)
			cJSON_AddStringToObject(e, "workspace", r->workspace);
		int w = audit_write(audit, "error", e);
		if (w < 0)
			log_error_errno(w, "Failed to write the 'error' record to the audit log in '%s': %m",
					r->state_dir ? r->state_dir : "?");
	}
	audit_close(own);

	if (r->result_file) {
		cJSON *sum = cJSON_CreateObject();
		cJSON_AddNumberToObject(sum, "exit_code", WARD_EXIT_SETUP);
		cJSON_AddNullToObject(sum, "status");
		cJSON_AddNullToObject(sum, "signal");
		cJSON_AddBoolToObject(sum, "timed_out", false);
		cJSON_AddNumberToObject(sum, "duration_ms", 0);
		cJSON_AddStringToObject(sum, "setup_step", step);
		cJSON_AddStringToObject(sum, "error", message);
		if (sid[0])
			cJSON_AddStringToObject(sum, "session", sid);
		(void)run_report_write_result(r->result_file, sum);
		cJSON_Delete(sum);
	}
}
