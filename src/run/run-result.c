/* The result object and the run's audit events: see run-result.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-write.h"
#include "common/json-util.h"
#include "common/log.h"
#include "run/run-paths.h"
#include "run/run-result.h"

void run_error_message(const WardError *e, char *buf, size_t n)
{
	const char *why;

	if (!e->error) {
		snprintf(buf, n, "%s", e->detail[0] ? e->detail : e->step);
		return;
	}
	why = strcmp(e->step, "exec") == 0 && e->error == ENOENT ? "command not found"
								  : strerror(e->error);
	snprintf(buf, n, "%s%s%s", e->detail[0] ? e->detail : "", e->detail[0] ? ": " : "", why);
}

static void add_int_or_null(cJSON *o, const char *name, bool set, double v)
{
	if (set)
		cJSON_AddNumberToObject(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

static void add_str_or_null(cJSON *o, const char *name, const char *s)
{
	if (s)
		cJSON_AddStringToObject(o, name, s);
	else
		cJSON_AddNullToObject(o, name);
}

static void add_copy(cJSON *o, const char *name, const cJSON *facts, cJSON *fallback)
{
	const cJSON *f = facts ? cJSON_GetObjectItemCaseSensitive(facts, name) : NULL;

	if (f) {
		cJSON_Delete(fallback);
		cJSON_AddItemToObject(o, name, cJSON_Duplicate(f, true));
	} else if (fallback)
		cJSON_AddItemToObject(o, name, fallback);
}

/* @l as an array of strings, [] when NULL. */
static void add_strv(cJSON *o, const char *name, char *const *l)
{
	cJSON *a = cJSON_AddArrayToObject(o, name);

	for (size_t i = 0; a && l && l[i]; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(l[i]));
}

/* "managed": {"file", "sha256"} of the ceiling that bound the run; null
 * (@null_if_none) or left out when there was none. */
static void add_managed(cJSON *obj, const char *file, const char *sha256, bool null_if_none)
{
	cJSON *m;

	if (!file || !sha256) {
		if (null_if_none)
			cJSON_AddNullToObject(obj, "managed");
		return;
	}
	m = cJSON_AddObjectToObject(obj, "managed");
	cJSON_AddStringToObject(m, "file", file);
	cJSON_AddStringToObject(m, "sha256", sha256);
}

cJSON *run_result_object(const RunOutcome *o)
{
	const RunResult *r = o->result;
	cJSON *obj = cJSON_CreateObject(), *deg;
	char msg[sizeof(o->error->detail) + 128];
	const cJSON *more;

	if (!obj)
		return NULL;
	cJSON_AddNumberToObject(obj, "v", RUN_RESULT_VERSION);
	add_str_or_null(obj, "session", o->session_id && o->session_id[0] ? o->session_id : NULL);
	cJSON_AddNumberToObject(obj, "exit_code", r->exit_code);
	cJSON_AddBoolToObject(obj, "started", r->started);
	add_int_or_null(obj, "status", r->status >= 0, r->status);
	add_int_or_null(obj, "signal", r->signal > 0, r->signal);
	cJSON_AddBoolToObject(obj, "timed_out", r->timed_out);
	cJSON_AddBoolToObject(obj, "oom_killed", r->oom_killed);
	cJSON_AddBoolToObject(obj, "parent_died", r->parent_died);
	cJSON_AddNumberToObject(obj, "duration_ms", (double)r->duration_ms);
	cJSON_AddNumberToObject(obj, "tier", r->tier);
	if (o->argv)
		cJSON_AddItemToObject(obj, "argv", json_strv_array(o->argv));
	else
		cJSON_AddNullToObject(obj, "argv");
	add_str_or_null(obj, "workspace", o->workspace);
	cJSON_AddBoolToObject(obj, "cow", r->cow);
	deg = cJSON_AddArrayToObject(obj, "degraded");
	for (size_t i = 0; r->degraded && r->degraded[i]; i++)
		cJSON_AddItemToArray(deg, cJSON_CreateString(r->degraded[i]));
	add_strv(obj, "not_held", r->not_held);
	add_strv(obj, "partly_held", r->partly_held);
	if (o->error) {
		run_error_message(o->error, msg, sizeof(msg));
		cJSON_AddStringToObject(obj, "setup_step", o->error->step);
		cJSON_AddStringToObject(obj, "error", msg);
		add_int_or_null(obj, "errno", o->error->error != 0, o->error->error);
	} else {
		cJSON_AddNullToObject(obj, "setup_step");
		cJSON_AddNullToObject(obj, "error");
		cJSON_AddNullToObject(obj, "errno");
	}
	cJSON_AddNumberToObject(obj, "quarantined", r->quarantined);
	cJSON_AddBoolToObject(obj, "protected_check_failed", r->protected_check_failed);
	add_copy(obj, "net_refused", o->facts, cJSON_CreateArray());
	more = o->facts ? cJSON_GetObjectItemCaseSensitive(o->facts, "net_refused_more") : NULL;
	cJSON_AddBoolToObject(obj, "net_refused_more", cJSON_IsTrue(more));
	add_copy(obj, "net_attempts", o->facts, cJSON_CreateNull());
	add_copy(obj, "changes", o->facts, cJSON_CreateNull());
	add_copy(obj, "vm", o->facts, NULL); /* tier 3 only */
	add_str_or_null(obj, "audit_error", o->audit_error ? strerror(-o->audit_error) : NULL);
	cJSON_AddNumberToObject(obj, "events_lost", o->events_lost);
	add_managed(obj, o->managed_file, o->managed_sha256, true);
	return obj;
}

cJSON *run_event_start(const RunStart *s)
{
	cJSON *ev = cJSON_CreateObject();

	if (!ev)
		return NULL;
	cJSON_AddItemToObject(ev, "argv", json_strv_array(s->argv));
	cJSON_AddStringToObject(ev, "workspace", s->workspace);
	cJSON_AddNumberToObject(ev, "tier", s->tier);
	/* What this tier does not hold (docs/tiers.md), on this kernel. */
	add_strv(ev, "not_held", s->not_held);
	add_strv(ev, "partly_held", s->partly_held);
	cJSON_AddStringToObject(ev, "policy_hash", s->policy_hash);
	cJSON_AddItemToObject(ev, "policy_sources", json_strv_array(s->policy_sources));
	add_managed(ev, s->managed_file, s->managed_sha256, false);
	cJSON_AddStringToObject(ev, "network", s->network);
	if (s->n_host_ports > 0) {
		cJSON *hp = cJSON_AddArrayToObject(ev, "host_ports");
		for (size_t i = 0; i < s->n_host_ports; i++)
			cJSON_AddItemToArray(hp, cJSON_CreateNumber(s->host_ports[i]));
	}
	if (s->cow)
		cJSON_AddBoolToObject(ev, "cow", true);
	if (s->path_hidden)
		cJSON_AddItemToObject(ev, "path_hidden", cJSON_Duplicate(s->path_hidden, true));
	for (const cJSON *it = s->describe ? s->describe->child : NULL; it; it = it->next)
		if (!cJSON_GetObjectItemCaseSensitive(ev, it->string))
			cJSON_AddItemToObject(ev, it->string, cJSON_Duplicate(it, true));
	return ev;
}

/* The `exit` event: the result's fields, those that only say "nothing
 * happened" left out (docs/audit.md). */
cJSON *run_event_exit(const RunOutcome *o)
{
	const RunResult *r = o->result;
	cJSON *ev = cJSON_CreateObject();
	char msg[sizeof(o->error->detail) + 128];

	if (!ev)
		return NULL;
	cJSON_AddNumberToObject(ev, "exit_code", r->exit_code);
	add_int_or_null(ev, "status", r->status >= 0, r->status);
	add_int_or_null(ev, "signal", r->signal > 0, r->signal);
	cJSON_AddBoolToObject(ev, "timed_out", r->timed_out);
	if (r->oom_killed)
		cJSON_AddBoolToObject(ev, "oom_killed", true);
	if (r->parent_died)
		cJSON_AddBoolToObject(ev, "parent_died", true);
	cJSON_AddNumberToObject(ev, "duration_ms", (double)r->duration_ms);
	if (r->quarantined || r->protected_check_failed)
		cJSON_AddNumberToObject(ev, "quarantined", r->quarantined);
	if (r->protected_check_failed)
		cJSON_AddBoolToObject(ev, "protected_check_failed", true);
	if (o->error) {
		run_error_message(o->error, msg, sizeof(msg));
		cJSON_AddStringToObject(ev, "setup_step", o->error->step);
		cJSON_AddStringToObject(ev, "setup_error",
					o->error->error ? strerror(o->error->error) : msg);
		cJSON_AddStringToObject(ev, "error", msg);
		if (o->error->error)
			cJSON_AddNumberToObject(ev, "errno", o->error->error);
	}
	add_copy(ev, "changes", o->facts, NULL);
	add_copy(ev, "net_refused", o->facts, NULL);
	add_copy(ev, "net_refused_more", o->facts, NULL);
	add_copy(ev, "net_attempts", o->facts, NULL);
	if (o->events_lost)
		cJSON_AddNumberToObject(ev, "events_lost", o->events_lost);
	return ev;
}

cJSON *run_event_error(const RunOutcome *o)
{
	cJSON *ev = cJSON_CreateObject();
	char msg[sizeof(o->error->detail) + 128];

	if (!ev || !o->error)
		return ev;
	run_error_message(o->error, msg, sizeof(msg));
	cJSON_AddStringToObject(ev, "step", o->error->step);
	cJSON_AddStringToObject(ev, "error", msg);
	if (o->error->error)
		cJSON_AddNumberToObject(ev, "errno", o->error->error);
	cJSON_AddNumberToObject(ev, "exit_code", o->result->exit_code);
	if (o->argv)
		cJSON_AddItemToObject(ev, "argv", json_strv_array(o->argv));
	if (o->workspace)
		cJSON_AddStringToObject(ev, "workspace", o->workspace);
	add_managed(ev, o->managed_file, o->managed_sha256, false);
	return ev;
}

int run_result_write(const cJSON *obj, const char *file, int fd)
{
	int r = 0, w;

	if (file) {
		_cleanup_free_ char *text = cJSON_Print(obj), *line = NULL;
		if (!text || asprintf(&line, "%s\n", text) < 0)
			r = log_warning_errno(-ENOMEM, "Failed to write the result: %m");
		/* Never through a symlink the command planted (run-paths.h). */
		else if ((w = run_write_result(file, line)) < 0)
			r = w;
	}
	if (fd >= 0) {
		_cleanup_free_ char *text = cJSON_PrintUnformatted(obj), *line = NULL;
		if (!text || asprintf(&line, "%s\n", text) < 0)
			r = log_warning_errno(-ENOMEM, "Failed to write the result: %m");
		else if ((w = fd_write_all(fd, line, strlen(line))) < 0)
			r = log_warning_errno(w, "Failed to write the result to fd %d: %m", fd);
	}
	return r;
}
