/* ward.exe's phases of a run (src/run/run-internal.h; Linux's are
 * src/run/run-phases.c): prepare (the policy, in Linux's order, the tier,
 * its backend's plan; writes nothing), acquire (ward's directories, the
 * audit log, the backend's changes, the `start` event), execute (the
 * command, then the result). run.c drives them, so exit codes, --result,
 * the audit events and the tier's gaps come from the same code as on
 * Linux. Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <windows.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/strv.h"
#include "probe/tiers.h"
#include "run/run-internal.h"
#include "run/run-result.h"
#include "windows/win-backend.h"
#include "windows/win-cow-review.h"
#include "windows/win-defaults.h"
#include "windows/win-path.h"
#include "windows/win32-cow-fs.h"
#include "windows/win32-util.h"

/* A copy-on-write run's session (win-cow-review.h): a new one (--cow),
 * its id the run's session id, made at acquire; or the one --session
 * names, read at prepare, locked at acquire. Either is locked until the
 * run is freed, so a second run or a review of it is refused meanwhile. */
struct CowSession {
	char *upper;
	WinCowFs fs;
	WinCowLayout l;     /* from acquire */
	void *lock;
	bool opened;
};

CowSession *cow_session_free(CowSession *s)
{
	if (s) {
		free(s->upper);
		win_cow_layout_done(&s->l);
		win_cow_session_unlock(&s->fs, s->lock);
	}
	free(s);
	return NULL;
}

static int cow_prepare(Run *run)
{
	if (!run->cow_new && !run->session_arg)
		return 0;
	if (!run->session_arg && audit_new_session_id(run->result.session_id) < 0)
		return run_failf(run, "session", EIO, "Failed to make a session id");
	if (run->session_arg)
		snprintf(run->result.session_id, sizeof(run->result.session_id), "%s",
			 run->session_arg);
	if (!(run->session = calloc(1, sizeof(*run->session))) ||
	    asprintf(&run->session->upper, "%s\\sessions\\%s\\upper", run->state,
		     run->result.session_id) < 0)
		return -ENOMEM;
	win32_cow_fs_init(&run->session->fs);
	run->in.cow_upper = run->session->upper;
	return 0;
}

static int session_fail(Run *run, int r)
{
	return run_failf(run, "session", r, "Session '%s': %s", run->session_arg,
			 r == -EINVAL   ? "not a session id (16 hex digits)"
			 : r == -ENOENT ? "no such copy-on-write session (unknown or discarded)"
			 : r == -EBUSY  ? "in use by another ward.exe run or review (diff, apply, "
					  "undo, discard); try again when it has ended"
					: "cannot read the session's record");
}

static int cow_acquire(Run *run)
{
	CowSession *s = run->session;
	const char *id = run->result.session_id;
	int r;

	if (!s)
		return 0;
	if (!run->session_arg) {
		r = win_cow_session_create(&s->fs, run->state, id, run->ws, run->pol->fs_protected);
		if (r < 0)
			return run_failf(run, "cow-session", r, "Failed to create the copy-on-write "
					 "session in '%s'", run->state);
	}
	/* The lock, then the record again (a discard may have run since
	 * prepare read it). */
	if ((r = win_cow_session_lock(&s->fs, run->state, id, &s->lock)) < 0 ||
	    (r = win_cow_session_open(&s->fs, run->state, id, &s->l)) < 0)
		return session_fail(run, r);
	s->opened = true;
	if (run->session_arg) {
		if (strcasecmp(s->l.workspace, run->ws) != 0)
			return run_failf(run, "session", 0,
					 "Session '%s': its workspace moved since the run was prepared",
					 id);
		r = win_cow_recover(&s->fs, &s->l);
		if (r > 0)
			run_log(run, RUN_LOG_WARNING, "Session '%s': an interrupted apply or undo was "
				"found and finished (an apply is rolled back)", id);
		if (r >= 0)
			r = win_cow_run_begin(&s->fs, &s->l, run->pol->fs_protected);
		if (r < 0)
			return run_failf(run, "cow-session", r, "Session '%s': cannot begin a run in it",
					 id);
	}
	run->result.cow = true;
	if (!run->session_arg)
		fprintf(stderr, "ward: session %s\n", id);
	return 0;
}

/* The run ended: the entries it made get their baseline (win-cow-session.c)
 * (a failure leaves them without one, which falls back to an earlier time:
 * more conflicts, never fewer), and the result the session's pending
 * changes, as Linux's "changes": counts by kind, total, refused. */
static void cow_execute_end(Run *run)
{
	CowSession *s = run->session;
	WinCowChange *c = NULL;
	size_t n = 0, refused = 0, by[WIN_COW_TYPE_CHANGED + 1] = { 0 };
	cJSON *j;

	if (!s || !s->opened)
		return;
	if (win_cow_run_end(&s->fs, &s->l) < 0)
		run_log(run, RUN_LOG_WARNING, "Session '%s': the run's baselines were not recorded; "
			"apply dates its changes from an earlier run",
			run->result.session_id);
	if (win_cow_changes(&s->fs, &s->l, &c, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		by[c[i].kind]++;
		refused += c[i].refused;
	}
	win_cow_changes_free(c, n);
	run->result.cow_changes = (unsigned)n;
	if (!run->facts || !(j = cJSON_AddObjectToObject(run->facts, "changes")))
		return;
	for (int k = WIN_COW_ADDED; k <= WIN_COW_TYPE_CHANGED; k++)
		cJSON_AddNumberToObject(j, win_cow_kind_name(k), (double)by[k]);
	cJSON_AddNumberToObject(j, "total", (double)n);
	cJSON_AddNumberToObject(j, "refused", (double)refused);
}

/* --session: the session's own workspace (-C, when given, must name the
 * same), read without the lock (acquire takes it); its recorded
 * protected paths join the policy's, so that this run's plan and
 * redirector keep them too. */
static int session_workspace(Run *run)
{
	_cleanup_free_ char *given = NULL;
	WinCowLayout l = { 0 };
	WinCowFs fs;
	int r;

	win32_cow_fs_init(&fs);
	r = win_cow_session_open(&fs, run->state, run->session_arg, &l);
	if (r < 0)
		return session_fail(run, r);
	if (run->workspace_arg) {
		r = win_path_normalize(run->workspace_arg, &given, NULL);
		if (r == -ENOMEM) {
			win_cow_layout_done(&l);
			return r;
		}
		if (r < 0 || strcasecmp(given, l.workspace) != 0) {
			r = run_failf(run, "session", 0, "Session '%s' belongs to workspace '%s', not '%s'",
				      run->session_arg, l.workspace, run->workspace_arg);
			win_cow_layout_done(&l);
			return r;
		}
	}
	if (fs.stat(fs.ctx, l.workspace) != WIN_FILE_DIRECTORY) {
		r = run_failf(run, "workspace", ENOTDIR,
			      "Session '%s': its workspace '%s' is not a directory now (gone, or a "
			      "link); refusing to run in it",
			      run->session_arg, l.workspace);
		win_cow_layout_done(&l);
		return r;
	}
	run->ws = l.workspace;
	l.workspace = NULL;
	win_cow_layout_done(&l);
	return 0;
}

static int session_protected(Run *run)
{
	WinCowLayout l = { 0 };
	WinCowFs fs;
	int r;

	if (!run->session_arg)
		return 0;
	win32_cow_fs_init(&fs);
	if ((r = win_cow_session_open(&fs, run->state, run->session_arg, &l)) < 0)
		return session_fail(run, r);
	STRV_FOREACH(p, l.protected_)
		if (!strv_contains(run->pol->fs_protected, *p) &&
		    (r = strv_extend(&run->pol->fs_protected, *p)) < 0)
			break;
	win_cow_layout_done(&l);
	return r < 0 ? r : 0;
}

/* Log shipping (WARD_AUDIT_STREAM, docs/audit.md) has no Windows side
 * yet: a run asked to ship its log is refused, never run unshipped. */
int run_audit_stream(const Run *run, AuditLog *a, const char **ret_dest)
{
	const char *dest = getenv("WARD_AUDIT_STREAM");

	*ret_dest = dest;
	return dest && *dest ? -EOPNOTSUPP : 0;
}

static int policy_fail(Run *run, const PolicyError *e)
{
	char buf[1400];

	policy_error_format(e, buf, sizeof(buf));
	return run_failf(run, "policy", 0, "Invalid policy: %s", buf);
}

static int resolve_workspace(Run *run)
{
	_cleanup_free_ char *given = NULL;
	int r;

	if (run->session_arg)
		return session_workspace(run);
	if (run->workspace_arg)
		given = strdup(run->workspace_arg);
	else {
		wchar_t cwd[MAX_PATH * 4];

		if (!GetCurrentDirectoryW(MAX_PATH * 4, cwd))
			return run_failf(run, "workspace", EIO, "Cannot read the current directory");
		given = win32_utf8(cwd);
	}
	if (!given)
		return -ENOMEM;
	r = win_path_normalize(given, &run->ws, NULL);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return run_failf(run, "workspace", EINVAL,
				 "The workspace '%s' is not an absolute Windows path ward can hold",
				 given);
	return 0;
}

/* The guarantees of the tier table (src/probe/tiers.c, Windows rows) that
 * the run's tier does not hold, or holds partly. */
static int tier_gaps(Run *run, WinTier t)
{
	/* The sandbox-user tier has its own column (a W1-write plan for
	 * ward-setup.exe's user, not a plan-layer tier). */
	const char *name = run->tier == WIN_RUN_TIER_USER ? "sandbox-user" : win_tier_to_string(t);
	const TierHold which[] = { TIER_NOT_HELD, TIER_PARTLY };
	char ***dst[] = { &run->result.not_held, &run->result.partly_held };

	for (size_t i = 0; i < 2; i++) {
		cJSON *g = tier_windows_gaps_json(name, which[i]);
		const cJSON *it;

		if (!g)
			return -ENOMEM;
		strv_free(*dst[i]);
		*dst[i] = NULL;
		cJSON_ArrayForEach(it, g)
		if (cJSON_IsString(it) && strv_extend(dst[i], it->valuestring) < 0) {
			cJSON_Delete(g);
			return -ENOMEM;
		}
		cJSON_Delete(g);
	}
	return 0;
}

int run_do_prepare(Run *run)
{
	PolicyError pe = { 0 };
	WardError e = { 0 };
	WinTier t;
	int r;

	if (!run->argv || !run->argv[0])
		return run_failf(run, "arguments", EINVAL, "No command to run");
	(void)ward_home_dir(&run->home); /* none: "~" in a policy is an error */
	if ((r = ward_state_dir(&run->state)) < 0 || (r = ward_config_dir(&run->config)) < 0)
		return run_failf(run, "dirs", r,
				 "LOCALAPPDATA or APPDATA is not an absolute path; ward's state and "
				 "config dirs live there");
	if ((r = resolve_workspace(run)) < 0)
		return r;
	r = win_policy_load(run->policy_file, run->presets, run->overrides, run->home, &run->pol,
			    &pe);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return policy_fail(run, &pe);
	if ((r = session_protected(run)) < 0)
		return r;
	/* The request's tier, else the policy's "tier", else W2. */
	if (!run->tier_asked && run->pol->has_tier)
		run->tier = run->pol->tier;
	run->result.tier = run->tier;
	t = win_tier_of_run(run->tier);
	run->backend = backend_for_tier(run->tier);
	if (!run->backend)
		return run_failf(run, "tier", EINVAL, "There is no tier %d", run->tier);
	if ((r = run->backend->probe(&e)) < 0)
		return run_fail_with(run, &e, r);
	if ((r = tier_gaps(run, t)) < 0)
		return r;
	if (policy_hash(run->pol, run->hash) < 0)
		snprintf(run->hash, sizeof(run->hash), "unknown");
	/* The host's: the plan filters it (case-insensitive names, win-env.c). */
	if (!(run->envp = win32_environment()))
		return -ENOMEM;
	run->in = (BackendInput)BACKEND_INPUT_INIT;
	run->in.policy = run->pol;
	run->in.workspace = run->ws;
	run->in.home = run->home;
	run->in.argv = run->argv;
	run->in.envp = run->envp;
	run->in.env_extra = run->env_extra;
	run->in.state_dir = run->state;
	run->in.config_dir = run->config;
	run->in.timeout_s = run->pol->timeout_s;
	if ((r = cow_prepare(run)) < 0)
		return r;
	r = run->backend->plan(&run->in, &run->plan, &e);
	if (r < 0)
		return run_fail_with(run, &e, r);
	/* W2's network row rests on two walls; without the WFP one it is held
	 * only partly (the plan says why in its degraded list). */
	if (win_backend_walls_missing(run->plan) &&
	    strv_extend(&run->result.partly_held, "network") < 0)
		return -ENOMEM;
	return 0;
}

int run_do_acquire(Run *run)
{
	const char *own_dirs[] = { run->config, run->state };
	WardError e = { 0 };
	int r;

	for (size_t i = 0; i < 2; i++)
		if ((r = ward_dir_ensure(own_dirs[i])) < 0)
			return run_failf(run, "dirs", r, "Failed to prepare ward's directory '%s'",
					 own_dirs[i]);
	if (!run->result.session_id[0] && audit_new_session_id(run->result.session_id) < 0)
		return run_failf(run, "session", EIO, "Failed to make a session id");
	if ((r = cow_acquire(run)) < 0)
		return r;
	r = audit_open(run->state, run->result.session_id, &run->audit);
	if (r < 0)
		return run_failf(run, "audit", r, "Failed to open the audit log in '%s'", run->state);
	{
		const char *dest = NULL;

		if (run_audit_stream(run, run->audit, &dest) < 0)
			return run_failf(run, "audit", EOPNOTSUPP,
					 "WARD_AUDIT_STREAM=%s: ward.exe cannot ship the audit log yet",
					 dest);
	}
	run->in.session_id = run->result.session_id;
	run->in.audit = run->audit;
	/* The backend's degraded list is known from the plan: --strict refuses
	 * before anything on the host changes. */
	run->describe = run->backend->describe(run->plan);
	if (!run->describe)
		return -ENOMEM;
	if ((r = run_check_strict(run)) < 0)
		return r;
	r = run->backend->acquire(run->plan, &e);
	if (r < 0)
		/* The step, as the error's first words (as run-record.c does
		 * for a setup step that failed inside). */
		return run_failf(run, e.step[0] ? e.step : "acquire", e.error, "%s%s%s", e.step,
				 e.step[0] ? ": " : "", e.detail);
	if ((r = run_write_start(run)) < 0)
		return r;
	if (run->backend->notes)
		STRV_FOREACH(l, run->backend->notes(run->plan))
			run_log(run, RUN_LOG_WARNING, "%s", *l);
	return 0;
}

static void log_ending(Run *run)
{
	const BackendResult *res = &run->res;

	if (res->setup_failed)
		run_log(run, RUN_LOG_ERROR, "%s%s%s", res->error.step,
			res->error.detail[0] ? ": " : "", res->error.detail);
	else if (res->timed_out)
		run_log(run, RUN_LOG_ERROR,
			"Timed out after %llu s; killed the command and everything it started",
			(unsigned long long)run->pol->timeout_s);
}

int run_do_execute(Run *run)
{
	_cleanup_strv_ char **lines = NULL;
	WardError e = { 0 };
	int r;

	run->res = (BackendResult){ .status = -1 };
	r = run->backend->run(run->plan, &run->res, &e);
	if (r < 0)
		return run_fail_with(run, &e, r);
	run_fill_result(run);
	/* The proxy's refusals (W2, network proxy), as Linux's result has them. */
	if (!run->facts && !(run->facts = cJSON_CreateObject()))
		return -ENOMEM;
	cow_execute_end(run);
	if (win_backend_net_facts(run->plan, run->facts, &run->result.net_refused) < 0)
		return -ENOMEM;
	log_ending(run);
	if (run->backend->finish && run->backend->finish(run->plan, &run->res, &lines) < 0)
		return -ENOMEM;
	STRV_FOREACH(l, lines)
		run_log(run, RUN_LOG_WARNING, "%s", *l);
	return 0;
}
