/* ward_session: review a copy-on-write session from a program, as `ward
 * diff/apply/undo/discard` do from a shell (src/cli/cmd-cow*.c), on top of
 * src/cow/. Each operation opens the session (taking its lock and
 * recovering an interrupted apply or undo), works, and closes it again, so
 * a ward_session kept by a harness never blocks a run in that session.
 * apply, undo and discard are written to the audit log like the CLI's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/path-util.h"
#include "common/strv.h"
#include "cow/cow-review.h"
#include "lib/lib-internal.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(CowSession *, cow_session_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(WardPolicy *, policy_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(AuditLog *, audit_close)

struct ward_session {
	char *state_dir;
	char *id;
	char *workspace;
	LibLog log;
	bool discarded;
	char error[LIB_ERROR_MAX];
};

static void cow_result_donep(CowResult *r)
{
	cow_result_done(r);
}

WARD_PUBLIC ward_session *ward_session_new(void)
{
	return calloc(1, sizeof(ward_session));
}

WARD_PUBLIC ward_session *ward_session_free(ward_session *s)
{
	if (!s)
		return NULL;
	free(s->state_dir);
	free(s->id);
	free(s->workspace);
	free(s);
	return NULL;
}

WARD_PUBLIC const char *ward_session_id(const ward_session *s)
{
	return s ? s->id : NULL;
}

WARD_PUBLIC const char *ward_session_workspace(const ward_session *s)
{
	return s ? s->workspace : NULL;
}

WARD_PUBLIC const char *ward_session_last_error(const ward_session *s)
{
	return s ? s->error : "";
}

WARD_PUBLIC int ward_session_set_log(ward_session *s, ward_log_fn fn, void *userdata,
				     int max_level)
{
	if (!s)
		return -EINVAL;
	s->log = (LibLog){ .fn = fn, .userdata = userdata, .max_level = max_level };
	return 0;
}

static void audit_event(ward_session *s, const char *event, cJSON *fields)
{
	_cleanup_(audit_closep) AuditLog *a = NULL;
	int r;

	if ((r = audit_open(s->state_dir, s->id, &a)) < 0 ||
	    (r = audit_write(a, event, TAKE_PTR(fields))) < 0)
		lib_log(WARD_LOG_ERROR, "Failed to write the '%s' record to the audit log in '%s': %s",
			event, s->state_dir, strerror(-r));
	cJSON_Delete(fields);
}

/* Open (lock, recover) the session for one operation. */
static int session_open(ward_session *s, CowSession **ret)
{
	int r;

	if (!s->id)
		return lib_error(s->error, -EBADF, "No session opened (ward_session_open)");
	if (s->discarded)
		return lib_error(s->error, -ENOENT, "Session %s was discarded", s->id);
	r = cow_session_open(s->state_dir, s->id, ret);
	if (r == -ENOENT)
		return lib_error(s->error, r, "No session %s", s->id);
	if (r == -ELOOP || r == -ESTALE || r == -ENOTDIR)
		return lib_error(s->error, r,
				 "Session %s: its workspace '%s' is not the directory the session "
				 "was made for (%s)",
				 s->id, s->workspace ? s->workspace : "?", strerror(-r));
	if (r < 0)
		return lib_error(s->error, r, "Failed to open session %s: %s", s->id, strerror(-r));
	const char *what = cow_session_recovered(*ret);
	if (what) {
		lib_log(WARD_LOG_WARNING, "Session %s: an interrupted operation was found (%s)", s->id,
			what);
		cJSON *ev = cJSON_CreateObject();
		cJSON_AddStringToObject(ev, "workspace", cow_session_workspace(*ret));
		cJSON_AddStringToObject(ev, "recovered", what);
		audit_event(s, "recover", ev);
	}
	return 0;
}

WARD_PUBLIC int ward_session_open(ward_session *s, const char *id)
{
	_cleanup_(cow_session_freep) CowSession *cs = NULL;
	_cleanup_free_ char *state = NULL, *ws = NULL, *cid = NULL;
	LibLog saved;
	int r;

	if (!s)
		return -EINVAL;
	if (!id || !cow_session_id_is_valid(id))
		return lib_error(s->error, -EINVAL, "Not a session id: '%s'", id ? id : "(null)");
	if ((r = ward_state_dir(&state)) < 0)
		return lib_error(s->error, r, "Failed to find ward's state directory: %s",
				 strerror(-r));
	free(s->state_dir);
	s->state_dir = TAKE_PTR(state);
	if (!(cid = strdup(id)))
		return lib_error(s->error, -ENOMEM, "Out of memory");
	free(s->id);
	s->id = TAKE_PTR(cid);
	free(s->workspace);
	s->workspace = NULL;
	s->discarded = false;
	lib_log_push(&s->log, &saved);
	r = session_open(s, &cs);
	lib_log_pop(&saved);
	if (r >= 0 && !cow_session_is_cow(cs))
		r = lib_error(s->error, -EMEDIUMTYPE, "Session %s is not a copy-on-write session",
			      s->id);
	if (r >= 0 && !(ws = strdup(cow_session_workspace(cs))))
		r = lib_error(s->error, -ENOMEM, "Out of memory");
	if (r < 0) {
		free(s->id);
		s->id = NULL;
		return r;
	}
	s->workspace = TAKE_PTR(ws);
	return 0;
}

/* What diff and apply refuse: the paths runs in this session protected,
 * and the user's policy's (as `ward apply` without -p). */
static int protected_paths(ward_session *s, CowSession *cs, char ***ret)
{
	_cleanup_(policy_freep) WardPolicy *p = NULL;
	_cleanup_free_ char *home = NULL;
	_cleanup_strv_ char **l = strv_copy(cow_session_protected(cs));
	PolicyError e = {};
	char buf[1400];
	int r;

	if (!l)
		return lib_error(s->error, -ENOMEM, "Out of memory");
	r = policy_load(NULL, NULL, &p, &e);
	if (r >= 0 && (r = ward_home_dir(&home)) >= 0) {
		PolicyContext ctx = { .home = home, .workspace = cow_session_workspace(cs) };
		r = policy_finalize(p, &ctx, &e);
	}
	if (r < 0) {
		policy_error_format(&e, buf, sizeof(buf));
		return lib_error(s->error, r, "Invalid policy: %s", buf);
	}
	STRV_FOREACH(x, p->fs_protected)
		if (strv_extend_unique(&l, *x) < 0)
			return lib_error(s->error, -ENOMEM, "Out of memory");
	*ret = TAKE_PTR(l);
	return 0;
}

static int diff(ward_session *s, ward_diff_format format, char **ret)
{
	_cleanup_(cow_session_freep) CowSession *cs = NULL;
	_cleanup_(cow_change_list_done) CowChangeList l = {};
	_cleanup_strv_ char **prot = NULL, **unmatched = NULL;
	_cleanup_free_ bool *sel = NULL;
	_cleanup_free_ char *text = NULL;
	size_t size = 0;
	int r;

	if ((r = session_open(s, &cs)) < 0 || (r = protected_paths(s, cs, &prot)) < 0)
		return r;
	r = cow_session_scan(cs, prot, &l);
	if (r < 0)
		return lib_error(s->error, r, "Failed to scan session %s: %s", s->id, strerror(-r));
	sel = calloc(l.n + 1, sizeof(bool));
	if (!sel || cow_select(&l, NULL, sel, &unmatched) < 0)
		return lib_error(s->error, -ENOMEM, "Out of memory");
	if (format == WARD_DIFF_JSON) {
		_cleanup_cjson_ cJSON *j = NULL;
		if (cow_changes_to_json(&l, sel, &j) < 0 || !(*ret = cJSON_Print(j)))
			return lib_error(s->error, -ENOMEM, "Out of memory");
		return 0;
	}
	static const CowDiffMode modes[] = {
		[WARD_DIFF_TEXT] = COW_DIFF_FULL,
		[WARD_DIFF_STAT] = COW_DIFF_STAT,
		[WARD_DIFF_NAME_ONLY] = COW_DIFF_NAME_ONLY,
	};
	if ((unsigned)format >= ELEMENTSOF(modes))
		return lib_error(s->error, -EINVAL, "Unknown diff format %d", (int)format);
	CowDiffOptions o = { .mode = modes[format], .collapse = 40 };
	FILE *f = open_memstream(&text, &size);
	if (!f)
		return lib_error(s->error, -ENOMEM, "Out of memory");
	r = cow_diff_write(cs, &l, sel, f, &o);
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r < 0)
		return lib_error(s->error, r, "Failed to write the diff of session %s: %s", s->id,
				 strerror(-r));
	*ret = TAKE_PTR(text);
	return 0;
}

WARD_PUBLIC int ward_session_diff(ward_session *s, ward_diff_format format, char **ret)
{
	LibLog saved;
	int r;

	if (!s || !ret)
		return -EINVAL;
	lib_log_push(&s->log, &saved);
	r = diff(s, format, ret);
	lib_log_pop(&saved);
	return r;
}

/* Paths relative to the workspace; absolute ones inside it are made
 * relative, others are passed on and refused as escapes by cow_apply. */
static int resolve_paths(const char *ws, const char *const *in, char ***ret)
{
	_cleanup_strv_ char **out = NULL;

	for (const char *const *p = in; p && *p; p++) {
		_cleanup_free_ char *norm = NULL;
		const char *q = *p;
		if (path_normalize(q, &norm) < 0)
			return -ENOMEM;
		if (q[0] == '/' && strcmp(norm, ws) == 0)
			q = ".";
		else if (q[0] == '/' && path_is_beneath(norm, ws))
			q = norm + strlen(ws) + (strcmp(ws, "/") != 0);
		else if (q[0] != '/')
			q = norm;
		if (strv_extend(&out, q) < 0)
			return -ENOMEM;
	}
	*ret = TAKE_PTR(out);
	return 0;
}

/* 0, WARD_EXIT_REFUSED or -EIO, and the JSON for the caller and the log. */
static int finish(ward_session *s, CowSession *cs, const char *event, const CowResult *res,
		  char *const *requested, bool force, char **ret_json)
{
	cJSON *j = cow_result_to_json(cs, res, requested, force);

	if (!j)
		return lib_error(s->error, -ENOMEM, "Out of memory");
	for (size_t i = 0; res->refused && res->refused[i]; i++) {
		_cleanup_free_ char *q = cow_quote_path(res->refused[i]);
		lib_log(WARD_LOG_WARNING, "Refused %s: %s", q ? q : "?", res->refused_why[i]);
	}
	if (ret_json && !(*ret_json = cJSON_Print(j))) {
		cJSON_Delete(j);
		return lib_error(s->error, -ENOMEM, "Out of memory");
	}
	audit_event(s, event, j);
	if (res->failed)
		return lib_error(s->error, -EIO, "%zu path(s) failed, the first: %s: %s",
				 strv_length(res->failed), res->failed[0], res->failed_why[0]);
	if (res->refused) {
		snprintf(s->error, sizeof(s->error), "%zu path(s) refused, the first: %s (%s)",
			 strv_length(res->refused), res->refused[0], res->refused_why[0]);
		return WARD_EXIT_REFUSED;
	}
	return 0;
}

static int apply(ward_session *s, const char *const *paths, unsigned flags, char **ret_json)
{
	_cleanup_(cow_session_freep) CowSession *cs = NULL;
	_cleanup_(cow_result_donep) CowResult res = {};
	_cleanup_strv_ char **prot = NULL, **sel = NULL;
	int r;

	if ((r = session_open(s, &cs)) < 0 || (r = protected_paths(s, cs, &prot)) < 0)
		return r;
	if (resolve_paths(cow_session_workspace(cs), paths, &sel) < 0)
		return lib_error(s->error, -ENOMEM, "Out of memory");
	CowApplyOptions o = { .paths = sel, .protected_paths = prot,
			      .force = flags & WARD_APPLY_FORCE };
	r = cow_apply(cs, &o, &res);
	if (r < 0)
		return lib_error(s->error, r, "Failed to apply session %s: %s", s->id, strerror(-r));
	return finish(s, cs, "apply", &res, sel ? sel : (char *[]){ NULL }, o.force, ret_json);
}

WARD_PUBLIC int ward_session_apply(ward_session *s, const char *const *paths, unsigned flags,
				   char **ret_json)
{
	LibLog saved;
	int r;

	if (!s)
		return -EINVAL;
	if (flags & ~(unsigned)WARD_APPLY_FORCE)
		return lib_error(s->error, -EINVAL, "Unknown flags 0x%x", flags);
	lib_log_push(&s->log, &saved);
	r = apply(s, paths, flags, ret_json);
	lib_log_pop(&saved);
	return r;
}

static int undo(ward_session *s, unsigned flags, char **ret_json)
{
	_cleanup_(cow_session_freep) CowSession *cs = NULL;
	_cleanup_(cow_result_donep) CowResult res = {};
	int r;

	if ((r = session_open(s, &cs)) < 0)
		return r;
	r = cow_undo(cs, flags & WARD_APPLY_FORCE, &res);
	if (r == -ENOENT)
		return lib_error(s->error, r, "Session %s has no apply to undo", s->id);
	if (r < 0)
		return lib_error(s->error, r, "Failed to undo in session %s: %s", s->id,
				 strerror(-r));
	return finish(s, cs, "undo", &res, NULL, flags & WARD_APPLY_FORCE, ret_json);
}

WARD_PUBLIC int ward_session_undo(ward_session *s, unsigned flags, char **ret_json)
{
	LibLog saved;
	int r;

	if (!s)
		return -EINVAL;
	if (flags & ~(unsigned)WARD_APPLY_FORCE)
		return lib_error(s->error, -EINVAL, "Unknown flags 0x%x", flags);
	lib_log_push(&s->log, &saved);
	r = undo(s, flags, ret_json);
	lib_log_pop(&saved);
	return r;
}

static int discard(ward_session *s)
{
	_cleanup_(cow_session_freep) CowSession *cs = NULL;
	_cleanup_(cow_change_list_done) CowChangeList l = {};
	_cleanup_strv_ char **prot = NULL;
	int r;

	if ((r = session_open(s, &cs)) < 0)
		return r;
	if (protected_paths(s, cs, &prot) >= 0)
		(void)cow_session_scan(cs, prot, &l);
	r = cow_discard(cs);
	cJSON *ev = cJSON_CreateObject();
	cow_json_add_path(ev, "workspace", cow_session_workspace(cs));
	cJSON_AddStringToObject(ev, "result", r >= 0 ? "ok" : "failed");
	cJSON_AddNumberToObject(ev, "dropped", (double)l.n);
	audit_event(s, "discard", ev);
	if (r < 0)
		return lib_error(s->error, r, "Failed to discard session %s: %s", s->id,
				 strerror(-r));
	s->discarded = true;
	return 0;
}

WARD_PUBLIC int ward_session_discard(ward_session *s)
{
	LibLog saved;
	int r;

	if (!s)
		return -EINVAL;
	lib_log_push(&s->log, &saved);
	r = discard(s);
	lib_log_pop(&saved);
	return r;
}
