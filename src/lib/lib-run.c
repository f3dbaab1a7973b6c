/* ward_run: the options of one run, and its result once lib-exec.c has run
 * it. Setters check their argument; the run module checks the rest when
 * the run starts, as `ward run` does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "cow/cow-review.h"
#include "lib/lib-run.h"

WARD_PUBLIC ward_run *ward_run_new(const ward_policy *policy)
{
	_cleanup_(ward_run_freep) ward_run *r = calloc(1, sizeof(*r));
	ward_policy *own = NULL;
	int k;

	if (!r)
		return NULL;
	*r = (ward_run){ .tier = -1, .stdio = { -1, -1, -1 }, .events_fd = -1, .status = -1,
			 .pidfd = -1 };
	if (pthread_mutex_init(&r->lock, NULL) != 0) {
		free(TAKE_PTR(r));
		return NULL;
	}
	if (!policy)
		policy = own = ward_policy_new();
	if (!policy)
		return NULL;
	k = lib_policy_copy_sources(policy, &r->policy_file, &r->presets, &r->overrides);
	ward_policy_free(own);
	if (k < 0)
		return NULL;
	return TAKE_PTR(r);
}

static void result_clear(ward_run *r)
{
	free(r->session_id);
	r->session_id = NULL;
	strv_free(r->degraded);
	r->degraded = NULL;
	free(r->result_json);
	r->result_json = NULL;
}

WARD_PUBLIC ward_run *ward_run_free(ward_run *r)
{
	if (!r)
		return NULL;
	free(r->policy_file);
	strv_free(r->presets);
	cJSON_Delete(r->overrides);
	free(r->workspace);
	strv_free(r->env);
	free(r->network);
	free(r->session);
	result_clear(r);
	(void)pthread_mutex_destroy(&r->lock);
	free(r);
	return NULL;
}

static int settable(ward_run *r)
{
	if (!r)
		return -EINVAL;
	if (r->executed)
		return lib_error(r->error, -EALREADY, "The run was executed already");
	return 0;
}

static int set_string(ward_run *r, char **field, const char *value)
{
	char *c = NULL;
	int k;

	if ((k = settable(r)) < 0)
		return k;
	if (value && !(c = strdup(value)))
		return lib_error(r->error, -ENOMEM, "Out of memory");
	free(*field);
	*field = c;
	return 0;
}

WARD_PUBLIC int ward_run_set_workspace(ward_run *r, const char *dir)
{
	return set_string(r, r ? &r->workspace : NULL, dir);
}

WARD_PUBLIC int ward_run_add_env(ward_run *r, const char *name_or_assignment)
{
	const char *s = name_or_assignment;
	size_t n;
	int k;

	if ((k = settable(r)) < 0)
		return k;
	n = s ? strcspn(s, "=") : 0;
	/* A name as the shell knows it: [A-Za-z_][A-Za-z0-9_]*. */
	bool ok = n > 0 && !(s[0] >= '0' && s[0] <= '9');
	for (size_t i = 0; ok && i < n; i++)
		ok = (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		     (s[i] >= '0' && s[i] <= '9') || s[i] == '_';
	if (!ok)
		return lib_error(r->error, -EINVAL, "Not an environment variable name: '%s'",
				 s ? s : "(null)");
	if (strv_extend(&r->env, s) < 0)
		return lib_error(r->error, -ENOMEM, "Out of memory");
	return 0;
}

WARD_PUBLIC int ward_run_set_timeout(ward_run *r, unsigned seconds)
{
	int k;

	if ((k = settable(r)) < 0)
		return k;
	r->timeout_s = seconds;
	return 0;
}

WARD_PUBLIC int ward_run_set_network(ward_run *r, const char *mode)
{
	if (r && mode && net_mode_from_string(mode) < 0)
		return lib_error(r->error, -EINVAL, "Unknown network mode '%s' (none or proxy)",
				 mode);
	return set_string(r, r ? &r->network : NULL, mode);
}

WARD_PUBLIC int ward_run_set_tier(ward_run *r, int tier)
{
	int k;

	if ((k = settable(r)) < 0)
		return k;
	if (tier < 0 || tier > 3)
		return lib_error(r->error, -EINVAL, "No tier %d (0 to 3)", tier);
	r->tier = tier;
	return 0;
}

WARD_PUBLIC int ward_run_set_strict(ward_run *r, bool strict)
{
	int k;

	if ((k = settable(r)) < 0)
		return k;
	r->strict = strict;
	return 0;
}

WARD_PUBLIC int ward_run_set_cow(ward_run *r, bool cow)
{
	int k;

	if ((k = settable(r)) < 0)
		return k;
	if (cow && r->session)
		return lib_error(r->error, -EINVAL,
				 "A run is either in a new session (cow) or in an existing one");
	r->cow = cow;
	return 0;
}

WARD_PUBLIC int ward_run_set_session(ward_run *r, const char *id)
{
	if (r && id && !cow_session_id_is_valid(id))
		return lib_error(r->error, -EINVAL, "Not a session id: '%s'", id);
	if (r && id && r->cow)
		return lib_error(r->error, -EINVAL,
				 "A run is either in a new session (cow) or in an existing one");
	return set_string(r, r ? &r->session : NULL, id);
}

WARD_PUBLIC int ward_run_set_stdio(ward_run *r, int stdin_fd, int stdout_fd, int stderr_fd)
{
	const int fds[3] = { stdin_fd, stdout_fd, stderr_fd };
	int k;

	if ((k = settable(r)) < 0)
		return k;
	for (int i = 0; i < 3; i++)
		if (fds[i] < -1)
			return lib_error(r->error, -EBADF, "Bad descriptor %d for fd %d", fds[i], i);
	memcpy(r->stdio, fds, sizeof(fds));
	return 0;
}

WARD_PUBLIC int ward_run_set_events_fd(ward_run *r, int fd)
{
	int k;

	if ((k = settable(r)) < 0)
		return k;
	if (fd < -1)
		return lib_error(r->error, -EBADF, "Bad descriptor %d", fd);
	r->events_fd = fd;
	return 0;
}

WARD_PUBLIC int ward_run_set_log(ward_run *r, ward_log_fn fn, void *userdata, int max_level)
{
	int k;

	if ((k = settable(r)) < 0)
		return k;
	r->log = (LibLog){ .fn = fn, .userdata = userdata, .max_level = max_level };
	return 0;
}

WARD_PUBLIC int ward_run_exit_code(const ward_run *r)
{
	return r ? r->exit_code : 0;
}

WARD_PUBLIC int ward_run_status(const ward_run *r)
{
	return r ? r->status : -1;
}

WARD_PUBLIC int ward_run_signal(const ward_run *r)
{
	return r ? r->signal : 0;
}

WARD_PUBLIC bool ward_run_started(const ward_run *r)
{
	return r && r->started;
}

WARD_PUBLIC bool ward_run_timed_out(const ward_run *r)
{
	return r && r->timed_out;
}

WARD_PUBLIC uint64_t ward_run_duration_ms(const ward_run *r)
{
	return r ? r->duration_ms : 0;
}

WARD_PUBLIC const char *ward_run_session_id(const ward_run *r)
{
	return r ? r->session_id : NULL;
}

WARD_PUBLIC const char *const *ward_run_degraded(const ward_run *r)
{
	static const char *const none[] = { NULL };

	return r && r->degraded ? (const char *const *)r->degraded : none;
}

WARD_PUBLIC unsigned ward_run_net_refused(const ward_run *r)
{
	return r ? r->net_refused : 0;
}

WARD_PUBLIC unsigned ward_run_cow_changes(const ward_run *r)
{
	return r ? r->cow_changes : 0;
}

WARD_PUBLIC const char *ward_run_result_json(const ward_run *r)
{
	return r ? r->result_json : NULL;
}

WARD_PUBLIC const char *ward_run_last_error(const ward_run *r)
{
	return r ? r->error : "";
}
