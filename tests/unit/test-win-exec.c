/* The Windows executor against a fake Win32 layer that records every call
 * and can fail or lie at any step: each change is journaled before it is
 * made, read back after, undone at the end, and any failure or lie before
 * the resume refuses the run with nothing left behind. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "common/macro.h"
#include "common/strv.h"
#include "policy/policy.h"
#include "windows/win-exec.h"
#include "windows/win-acl.h"
#include "windows/win-helper-proto.h"
#include "windows/win-journal.h"

#define RUN_ID "00000000000000aa"
#define MAX_FILES 32

typedef struct FakeObj {
	char path[128];
	WinFileKind kind;
	char *dacl;
	char *label;
} FakeObj;

typedef struct Fake {
	FakeObj files[MAX_FILES];
	size_t n;
	char **calls;
	char *journal;           /* this run's; NULL: none */
	char *stale_journal;     /* a dead run's, id "dead" */
	bool locked;
	const char *fail_at;     /* call name that returns fail_with */
	int fail_with;
	const char *lie_at;      /* "set_sddl": report success, change nothing;
	                          * "token_read": report an unrestricted token;
	                          * "job_read": report no kill-on-close */
	bool resumed, terminated;
	uint32_t exit_code;
	bool timeout;
	bool fail_once_resumed;
	const char *create_on_wait;  /* the "command" creates this directory */
	char quarantined[128];  /* fail_at applies only after the resume (the undo) */
	char profile_sid[WIN_SID_STRING_MAX]; /* "" : derive as Windows does */
	/* The privileged helper: started with @helper_policy's grants (copied). */
	bool helper_up;
	char helper_run[17], helper_pkg[WIN_SID_STRING_MAX];
	char helper_paths[8][128];
	bool helper_exec[8];
	size_t helper_n;
	bool helper_revokes_on_exit; /* its revokes refused; it revokes as it exits */
	int helper_refuse_nth;        /* the nth grant (1-based) is refused */
	int helper_grants;
} Fake;

static Fake *F;

_printf_(1, 2) static void call(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	assert_int_equal(strv_extendfv(&F->calls, fmt, ap), 0);
	va_end(ap);
}

static bool fails(const char *name, int *r)
{
	if (F->fail_at && strcmp(F->fail_at, name) == 0 && (!F->fail_once_resumed || F->resumed)) {
		*r = F->fail_with;
		return true;
	}
	return false;
}

static FakeObj *obj(const char *path)
{
	for (size_t i = 0; i < F->n; i++)
		if (strcasecmp(F->files[i].path, path) == 0)
			return &F->files[i];
	return NULL;
}

static FakeObj *add(const char *path, WinFileKind kind, const char *dacl)
{
	FakeObj *o = &F->files[F->n++];

	assert_true(F->n <= MAX_FILES);
	snprintf(o->path, sizeof(o->path), "%s", path);
	o->kind = kind;
	o->dacl = strdup(dacl);
	o->label = strdup("S:");
	return o;
}

static WinFileKind f_stat(void *ctx, const char *path)
{
	FakeObj *o = obj(path);

	return o ? o->kind : WIN_FILE_NONE;
}

static WinFileKind host_stat(void *userdata, const char *path)
{
	return f_stat(NULL, path);
}

static int f_mkdir(void *ctx, const char *path)
{
	int r;

	call("mkdir %s", path);
	if (fails("mkdir", &r))
		return r;
	if (obj(path))
		return -EEXIST;
	/* A new directory inherits: no explicit ACEs. */
	add(path, WIN_FILE_DIRECTORY, "D:AI(A;OICIID;FA;;;SY)");
	return 0;
}

static int f_rmdir(void *ctx, const char *path)
{
	FakeObj *o = obj(path);

	call("rmdir %s", path);
	if (!o)
		return -ENOENT;
	free(o->dacl);
	free(o->label);
	*o = F->files[--F->n];
	return 0;
}

static int f_get_sddl(void *ctx, const char *path, bool label, char **ret)
{
	FakeObj *o = obj(path);
	int r;

	if (fails("get_sddl", &r))
		return r;
	if (!o)
		return -ENOENT;
	*ret = strdup(label ? o->label : o->dacl);
	return 0;
}

static int f_set_sddl(void *ctx, const char *path, bool label, const char *sddl)
{
	FakeObj *o = obj(path);
	int r;

	call("set_%s %s", label ? "label" : "dacl", path);
	assert_true(F->locked); /* no DACL is rewritten outside ward's lock */
	if (fails("set_sddl", &r))
		return r;
	if (!o)
		return -ENOENT;
	if (F->lie_at && strcmp(F->lie_at, "set_sddl") == 0)
		return 0;
	if (label) {
		free(o->label);
		o->label = strdup(sddl);
	} else {
		free(o->dacl);
		o->dacl = strdup(sddl);
	}
	return 0;
}

static int f_journal_append(void *ctx, const char *text)
{
	size_t old = F->journal ? strlen(F->journal) : 0;
	int r;

	if (fails("journal_append", &r))
		return r;
	F->journal = realloc(F->journal, old + strlen(text) + 1);
	strcpy(F->journal + old, text);
	return 0;
}

static int f_journal_read(void *ctx, const char *id, char **ret)
{
	char *j = id ? F->stale_journal : F->journal;

	if (!j)
		return -ENOENT;
	*ret = strdup(j);
	return 0;
}

static int f_journal_remove(void *ctx, const char *id)
{
	call("journal_remove %s", id ? id : "own");
	if (id) {
		free(F->stale_journal);
		F->stale_journal = NULL;
	} else {
		free(F->journal);
		F->journal = NULL;
	}
	return 0;
}

static int f_journal_stale(void *ctx, char ***ret)
{
	*ret = NULL;
	return F->stale_journal ? strv_extend(ret, "dead") : 0;
}

static int f_lock(void *ctx)
{
	int r;

	assert_false(F->locked);
	call("lock");
	if (fails("lock", &r))
		return r;
	F->locked = true;
	return 0;
}

static void f_unlock(void *ctx)
{
	assert_true(F->locked);
	call("unlock");
	F->locked = false;
}

static int f_logon_sid(void *ctx, char ret[WIN_SID_STRING_MAX])
{
	strcpy(ret, "S-1-5-5-0-4242");
	return 0;
}

static int f_profile_create(void *ctx, const char *name, char ret[WIN_SID_STRING_MAX], char *why,
			    size_t n)
{
	WinSid sid;
	int r;

	call("profile_create %s", name);
	if (fails("profile_create", &r)) {
		snprintf(why, n, "userenv.dll has no CreateAppContainerProfile");
		return r;
	}
	if (*F->profile_sid) {
		strcpy(ret, F->profile_sid);
		return 0;
	}
	assert_int_equal(win_sid_appcontainer(name, &sid), 0);
	win_sid_format(&sid, ret);
	return 0;
}

static int f_profile_delete(void *ctx, const char *name)
{
	call("profile_delete %s", name);
	return 0;
}

static int job_token = 1, proc_token = 2;
static WinJobPlan created_job;

static int f_job_create(void *ctx, const WinJobPlan *job, void **ret, char *why, size_t n)
{
	int r;

	call("job_create");
	if (fails("job_create", &r))
		return r;
	created_job = *job;
	*ret = &job_token;
	return 0;
}

static int f_job_read(void *ctx, void *job, WinJobPlan *ret)
{
	*ret = created_job;
	if (F->lie_at && strcmp(F->lie_at, "job_read") == 0)
		ret->kill_on_close = false;
	return 0;
}

static const WinTokenPlan *last_token;
static char last_logon[WIN_SID_STRING_MAX];
static char last_env[4096];

static int f_spawn(void *ctx, const WinSpawn *s, void **ret, char *why, size_t n)
{
	int r;

	call("spawn %s", s->cmdline);
	if (fails("spawn", &r)) {
		snprintf(why, n, "UpdateProcThreadAttribute: the parameter is incorrect");
		return r;
	}
	last_token = s->token;
	snprintf(last_logon, sizeof(last_logon), "%s", s->logon_sid ? s->logon_sid : "");
	memcpy(last_env, s->env_block, s->env_len < sizeof(last_env) - 2 ? s->env_len : sizeof(last_env) - 2);
	*ret = &proc_token;
	return 0;
}

static int f_job_assign(void *ctx, void *job, void *proc)
{
	int r;

	call("job_assign");
	return fails("job_assign", &r) ? r : 0;
}

static int f_token_read(void *ctx, void *proc, WinTokenObserved *ret)
{
	const WinTokenPlan *t = last_token;

	call("token_read");
	*ret = (WinTokenObserved){ .appcontainer = t->appcontainer,
				   .integrity_rid = t->integrity_rid,
				   .write_restricted = t->write_restricted };
	if (t->appcontainer)
		ret->package_sid = strdup(t->package_sid);
	ret->capability_sids = strv_copy(t->capability_sids);
	STRV_FOREACH(s, t->restricting_sids)
		assert_int_equal(strv_extend(&ret->restricting_sids,
					     strcmp(*s, "LOGON") == 0 ? last_logon : *s), 0);
	if (F->lie_at && strcmp(F->lie_at, "token_read") == 0) {
		/* What Wine does: the "restricted" token is the full one. */
		strv_free(ret->restricting_sids);
		ret->restricting_sids = NULL;
		ret->write_restricted = false;
		ret->integrity_rid = 8192;
		ret->appcontainer = false;
	}
	return 0;
}

static int f_resume(void *ctx, void *proc)
{
	call("resume");
	F->resumed = true;
	return 0;
}

static int f_quarantine(void *ctx, const char *path, char **ret)
{
	FakeObj *o = obj(path);

	call("quarantine %s", path);
	assert_non_null(o);
	snprintf(F->quarantined, sizeof(F->quarantined), "%s", path);
	free(o->dacl);
	free(o->label);
	*o = F->files[--F->n];
	*ret = strdup("C:\\q\\x");
	return 0;
}

static int f_wait(void *ctx, void *proc, uint64_t timeout_ms, uint32_t *ret)
{
	if (F->create_on_wait)
		add(F->create_on_wait, WIN_FILE_DIRECTORY, "D:AI(A;OICIID;FA;;;SY)");
	call("wait %llu", (unsigned long long)timeout_ms);
	if (F->timeout)
		return -ETIMEDOUT;
	*ret = F->exit_code;
	return 0;
}

static int f_terminate(void *ctx, void *proc, uint32_t code)
{
	call("terminate %u", (unsigned)code);
	F->terminated = true;
	return 0;
}

static void f_close_proc(void *ctx, void *h)
{
	assert_ptr_equal(h, &proc_token);
	call("close proc");
}

static void f_close_job(void *ctx, void *h)
{
	assert_ptr_equal(h, &job_token);
	call("close job");
}

static int f_cow_inject(void *ctx, void *proc, const WinCowLaunch *l, char *why, size_t n)
{
	int r;

	call("cow_inject %s %s %u", l->dll, l->pipe, (unsigned)l->ready_ms);
	if (fails("cow_inject", &r)) {
		snprintf(why, n, "no readiness line (fake)");
		return r;
	}
	return 0;
}

static int f_helper_start(void *ctx, const WinHelperPolicy *p, char *why, size_t n)
{
	int r;

	call("helper_start");
	assert_false(F->helper_up);
	if (fails("helper_start", &r)) {
		snprintf(why, n, "fake refusal");
		return r;
	}
	snprintf(F->helper_run, sizeof(F->helper_run), "%s", p->run_id);
	snprintf(F->helper_pkg, sizeof(F->helper_pkg), "%s", p->package_sid ? p->package_sid : "");
	F->helper_n = p->n_grants;
	for (size_t i = 0; i < p->n_grants && i < 8; i++) {
		snprintf(F->helper_paths[i], sizeof(F->helper_paths[i]), "%s", p->grants[i].path);
		F->helper_exec[i] = p->grants[i].exec;
	}
	F->helper_up = true;
	return 0;
}

/* As the helper would (win-helper-main.c): parse, check against what it
 * was started with, change the DACL (no lock: it is another process). */
static int f_helper_ask(void *ctx, const char *req, size_t n, char *why, size_t n_why)
{
	WinHelperGrant g[8];
	WinHelperPolicy pol = { .run_id = F->helper_run, .package_sid = F->helper_pkg, .grants = g,
				.n_grants = F->helper_n };
	WinHelperRequest q;
	WinHelperChange c;
	char *next = NULL;
	FakeObj *o;
	int r;

	if (!F->helper_up)
		return -ENOTCONN;
	for (size_t i = 0; i < F->helper_n; i++)
		g[i] = (WinHelperGrant){ .path = F->helper_paths[i], .exec = F->helper_exec[i] };
	assert_int_equal(win_helper_parse(req, n, &q, why, n_why), 0);
	assert_int_equal(win_helper_allow(&pol, &q, why, n_why), 0);
	call("helper_ask %s %s %s", q.op == WIN_HELPER_REVOKE ? "revoke" : q.op == WIN_HELPER_GRANT_READ
									   ? "grant-read" : "grant-read-exec",
	     q.path, q.sid);
	/* Journaled before it is asked for. */
	if (q.op != WIN_HELPER_REVOKE) {
		char line[512];

		snprintf(line, sizeof(line), "helper\t%s\t%s %s\n", q.path, q.run_id, q.sid);
		assert_non_null(F->journal);
		assert_non_null(strstr(F->journal, line));
	}
	if (q.op == WIN_HELPER_REVOKE && F->helper_revokes_on_exit) {
		snprintf(why, n_why, "the helper closed the pipe");
		win_helper_request_done(&q);
		return -EPERM;
	}
	if (q.op != WIN_HELPER_REVOKE && ++F->helper_grants == F->helper_refuse_nth) {
		snprintf(why, n_why, "the helper refused: fake nth");
		win_helper_request_done(&q);
		return -EPERM;
	}
	if (fails("helper_ask", &r)) {
		snprintf(why, n_why, "the helper refused: fake");
		win_helper_request_done(&q);
		return r;
	}
	o = obj(q.path);
	assert_non_null(o);
	if (!(F->lie_at && strcmp(F->lie_at, "helper_ask") == 0)) {
		win_helper_change(q.op, q.sid, &c);
		assert_int_equal(win_acl_change_sddl(o->dacl, &c.chg, &next), 0);
		free(o->dacl);
		o->dacl = next;
	}
	win_helper_request_done(&q);
	return 0;
}

static int f_helper_stop(void *ctx, uint32_t *code)
{
	*code = 0;
	if (F->helper_up && F->helper_revokes_on_exit) {
		FakeObj *o = obj(F->helper_paths[0]);
		WinHelperChange c;
		char *next = NULL;

		win_helper_change(WIN_HELPER_REVOKE, F->helper_pkg, &c);
		assert_int_equal(win_acl_change_sddl(o->dacl, &c.chg, &next), 0);
		free(o->dacl);
		o->dacl = next;
	}
	if (F->helper_up)
		call("helper_stop");
	F->helper_up = false;
	return 0;
}

static const WinApi fake_api = {
	.stat = f_stat, .mkdir = f_mkdir, .rmdir = f_rmdir, .quarantine = f_quarantine,
	.get_sddl = f_get_sddl,
	.set_sddl = f_set_sddl, .journal_append = f_journal_append,
	.journal_read = f_journal_read, .journal_remove = f_journal_remove,
	.journal_stale = f_journal_stale, .lock = f_lock, .unlock = f_unlock,
	.logon_sid = f_logon_sid, .profile_create = f_profile_create,
	.profile_delete = f_profile_delete, .job_create = f_job_create, .job_read = f_job_read,
	.spawn_suspended = f_spawn, .job_assign = f_job_assign, .token_read = f_token_read,
	.resume = f_resume, .wait = f_wait, .terminate = f_terminate, .close_proc = f_close_proc,
	.close_job = f_close_job, .cow_inject = f_cow_inject,
	.helper_start = f_helper_start, .helper_ask = f_helper_ask, .helper_stop = f_helper_stop,
};

#define WS_DACL "D:AI(A;OICI;FA;;;SY)(A;OICIID;FA;;;BA)"

static int setup(void **state)
{
	F = calloc(1, sizeof(*F));
	add("C:\\ws", WIN_FILE_DIRECTORY, WS_DACL);
	add("C:\\ws\\.git", WIN_FILE_DIRECTORY, "D:AI(A;OICIID;FA;;;SY)");
	add("C:\\ws\\tool.exe", WIN_FILE_REGULAR, "D:AI(A;ID;FA;;;SY)");
	add("C:\\Users\\me\\cache", WIN_FILE_DIRECTORY, "D:P(A;OICI;FA;;;S-1-5-21-1-2-3-1001)");
	add("C:\\Program Files\\x", WIN_FILE_DIRECTORY, "D:(A;OICI;FA;;;SY)");
	add("C:\\Users", WIN_FILE_DIRECTORY, "D:(A;OICI;FA;;;SY)");
	add("C:\\Users\\me", WIN_FILE_DIRECTORY, "D:(A;OICI;FA;;;SY)");
	add("C:\\Users\\me\\AppData", WIN_FILE_DIRECTORY, "D:(A;OICI;FA;;;SY)");
	add("C:\\Users\\me\\AppData\\Local", WIN_FILE_DIRECTORY, "D:(A;OICI;FA;;;SY)");
	return 0;
}

static int teardown(void **state)
{
	for (size_t i = 0; i < F->n; i++) {
		free(F->files[i].dacl);
		free(F->files[i].label);
	}
	strv_free(F->calls);
	free(F->journal);
	free(F->stale_journal);
	free(F);
	return 0;
}

static char *fake_system_dirs[] = { "C:\\Program Files", NULL };
static const WinHost host = { .stat = host_stat, .comspec = "C:\\cmd.exe",
			      .system_dirs = fake_system_dirs };

static const char *cow_session; /* plan_for: --cow with this session dir */
static const char *extra_read, *extra_read_exec; /* plan_for: fs.read, fs.read_exec */

static WinPlan *plan_for(WinTier tier, const char *extra_rw)
{
	WardPolicy *p = policy_new_empty();
	char *argv[] = { "C:\\ws\\tool.exe", "x", NULL };
	char *envp[] = { "PATH=C:\\Windows", NULL };
	WinPlanInput in = { .policy = p, .tier = tier, .workspace = "C:\\ws",
			    .state_dir = "C:\\Users\\me\\AppData\\Local\\ward", .run_id = RUN_ID,
			    .argv = argv, .envp = envp, .host = &host,
			    .cow_session = cow_session,
			    .cow_dll = cow_session ? "C:\\ward\\ward-redirect.dll" : NULL };
	WinPlan *plan = NULL;
	char why[256];

	assert_int_equal(strv_extend(&p->env_pass, "PATH"), 0);
	assert_int_equal(strv_extend(&p->fs_protected, ".git"), 0);
	assert_int_equal(strv_extend(&p->fs_protected, ".codex"), 0);
	if (extra_rw)
		assert_int_equal(strv_extend(&p->fs_read_write, extra_rw), 0);
	if (extra_read)
		assert_int_equal(strv_extend(&p->fs_read, extra_read), 0);
	if (extra_read_exec)
		assert_int_equal(strv_extend(&p->fs_read_exec, extra_read_exec), 0);
	p->timeout_s = 7;
	assert_int_equal(win_plan_build(&in, &plan, why, sizeof(why)), 0);
	policy_free(p);
	return plan;
}

static size_t index_of(const char *prefix)
{
	for (size_t i = 0; F->calls && F->calls[i]; i++)
		if (strncmp(F->calls[i], prefix, strlen(prefix)) == 0)
			return i;
	return SIZE_MAX;
}

/* After a run, whatever happened: every ACL as it was, no placeholder
 * left, the journal gone. */
static void assert_same_dacl(const char *a, const char *b)
{
	WinAcl x = { 0 }, y = { 0 };
	char *fx, *fy;

	assert_int_equal(win_acl_parse_sddl(a, false, &x), 0);
	assert_int_equal(win_acl_parse_sddl(b, false, &y), 0);
	fx = win_acl_format_sddl(&x, false);
	fy = win_acl_format_sddl(&y, false);
	assert_string_equal(fx, fy);
	free(fx);
	free(fy);
	win_acl_done(&x);
	win_acl_done(&y);
}

static bool env_has(const char *prefix)
{
	for (const char *e = last_env; *e; e += strlen(e) + 1)
		if (strncmp(e, prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

static void assert_host_restored(void)
{
	assert_same_dacl(obj("C:\\ws")->dacl, WS_DACL);
	assert_null(obj("C:\\ws\\.codex"));
	assert_null(obj("C:\\Users\\me\\AppData\\Local\\ward"));
	for (size_t i = 0; i < F->n; i++)
		assert_null(strstr(F->files[i].dacl, "S-1-15-"));
	assert_null(F->journal);
}

static void test_win_exec_w2_runs_and_undoes(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W2, "C:\\Users\\me\\cache");
	WinExecResult res;
	WardError err = { 0 };

	F->exit_code = 3;
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), 0);
	assert_int_equal(res.exit_code, 3);
	assert_true(res.started);
	assert_true(F->resumed);
	/* The order that matters: profile, ACLs, job, spawn, token read
	 * back, and only then resume; undo after the wait. */
	assert_true(index_of("profile_create") < index_of("set_dacl C:\\ws"));
	assert_true(index_of("set_dacl") < index_of("job_create"));
	assert_true(index_of("job_create") < index_of("spawn"));
	assert_true(index_of("spawn") < index_of("job_assign"));
	assert_true(index_of("job_assign") < index_of("token_read"));
	assert_true(index_of("token_read") < index_of("resume"));
	assert_true(index_of("wait 7000") < index_of("profile_delete"));
	/* .codex did not exist: nothing is made for it, nothing moved. */
	assert_true(index_of("mkdir C:\\ws\\.codex") == SIZE_MAX);
	assert_true(index_of("quarantine") == SIZE_MAX);
	assert_int_equal(res.quarantined, 0);
	/* A protected DACL stays protected after the change and the undo. */
	assert_same_dacl(obj("C:\\Users\\me\\cache")->dacl, "D:P(A;OICI;FA;;;S-1-5-21-1-2-3-1001)");
	assert_true(env_has("TEMP=C:\\Users\\me\\AppData\\Local\\ward\\tmp\\run-"));
	assert_host_restored();
	win_plan_free(plan);
}

static void test_win_exec_quarantines_created_protected(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W2, NULL);
	WinExecResult res;
	WardError err = { 0 };

	/* The command creates .codex (absent at the start): after the run it
	 * is moved out; .git existed and is left where it is. */
	F->create_on_wait = "C:\\ws\\.codex";
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), 0);
	assert_int_equal(res.quarantined, 1);
	assert_string_equal(F->quarantined, "C:\\ws\\.codex");
	assert_non_null(obj("C:\\ws\\.git"));
	assert_host_restored();
	win_plan_free(plan);
}

static void test_win_exec_crashed_run_quarantines(void **state)
{
	WardError err = { 0 };

	/* ward.exe killed mid-run: the next run's recovery does the check. */
	add("C:\\ws\\.codex", WIN_FILE_DIRECTORY, "D:AI(A;OICIID;FA;;;SY)");
	F->stale_journal = strdup("ward-windows-journal 1\nabsent\tC:\\ws\\.codex\n");
	assert_int_equal(win_exec_recover(&fake_api, &err), 0);
	assert_null(obj("C:\\ws\\.codex"));
	assert_null(F->stale_journal);
}

static void test_win_exec_userenv_missing_refuses(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W2, NULL);
	WinExecResult res;
	WardError err = { 0 };

	F->fail_at = "profile_create";
	F->fail_with = -ENOSYS;
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), -ENOSYS);
	assert_int_equal(res.exit_code, 125);
	assert_string_equal(err.step, "appcontainer");
	assert_non_null(strstr(err.detail, "CreateAppContainerProfile"));
	assert_true(index_of("spawn") == SIZE_MAX);
	assert_true(index_of("set_dacl") == SIZE_MAX);
	assert_host_restored();
	win_plan_free(plan);
}

static void test_win_exec_profile_sid_mismatch_refuses(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W2, NULL);
	WinExecResult res;
	WardError err = { 0 };

	strcpy(F->profile_sid, "S-1-15-2-1-1-1-1-1-1-1");
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), -EPERM);
	assert_int_equal(res.exit_code, 125);
	assert_true(index_of("set_dacl") == SIZE_MAX);
	assert_host_restored();
	win_plan_free(plan);
}

static void test_win_exec_acl_lie_refuses(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W2, NULL);
	WinExecResult res;
	WardError err = { 0 };

	F->lie_at = "set_sddl";
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), -EPERM);
	assert_string_equal(err.step, "acl-readback");
	assert_int_equal(res.exit_code, 125);
	assert_true(index_of("spawn") == SIZE_MAX);
	F->lie_at = NULL;
	assert_host_restored();
	win_plan_free(plan);
}

static void test_win_exec_token_lie_refuses_before_resume(void **state)
{
	static const WinTier tiers[] = { WIN_TIER_W1, WIN_TIER_W1_WRITE, WIN_TIER_W2 };

	for (size_t i = 0; i < 3; i++) {
		WinPlan *plan;
		WinExecResult res;
		WardError err = { 0 };

		teardown(state);
		setup(state);
		plan = plan_for(tiers[i], NULL);
		F->lie_at = "token_read";
		assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), -EPERM);
		assert_string_equal(err.step, "token-readback");
		assert_int_equal(res.exit_code, 125);
		assert_false(res.started);
		assert_false(F->resumed);
		assert_true(F->terminated);
		assert_true(index_of("close job") != SIZE_MAX);
		F->lie_at = NULL;
		assert_host_restored();
		win_plan_free(plan);
	}
}

static void test_win_exec_spawn_attribute_rejected(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W2, NULL);
	WinExecResult res;
	WardError err = { 0 };

	F->fail_at = "spawn";
	F->fail_with = -EINVAL;
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), -EINVAL);
	assert_string_equal(err.step, "spawn");
	assert_non_null(strstr(err.detail, "UpdateProcThreadAttribute"));
	assert_false(F->resumed);
	assert_host_restored();
	win_plan_free(plan);
}

static void test_win_exec_job_lie_refuses(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W0, NULL);
	WinExecResult res;
	WardError err = { 0 };

	F->lie_at = "job_read";
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), -EPERM);
	assert_string_equal(err.step, "job-readback");
	assert_true(index_of("spawn") == SIZE_MAX);
	win_plan_free(plan);
}

static void test_win_exec_needs_helper_refuses_before_changes(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W2, "C:\\Program Files\\x");
	WinExecResult res;
	WardError err = { 0 };

	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), -EPERM);
	assert_string_equal(err.step, "helper");
	assert_non_null(strstr(err.detail, "C:\\Program Files\\x"));
	assert_true(index_of("profile_create") == SIZE_MAX);
	assert_true(index_of("set_dacl") == SIZE_MAX);
	assert_true(index_of("mkdir") == SIZE_MAX);
	assert_null(F->journal);
	win_plan_free(plan);
}

#define PF "C:\\Program Files\\x"
#define PF_DACL "D:(A;OICI;FA;;;SY)"
#define PF_DACL_CANON "D:(A;OICI;0x1f01ff;;;S-1-5-18)"

/* fs.read under Program Files: the helper is started after ward's own
 * changes and its lock, each grant journaled before it is asked for (the
 * fake asserts it), read back by ward, the command runs, then the grant
 * is revoked through the helper and read back, and the helper stopped. */
static void test_win_exec_helper_grants_and_revokes(void **state)
{
	WinPlan *plan;
	WinExecResult res;
	WardError err = { 0 };
	char ask[256];

	extra_read_exec = PF;
	plan = plan_for(WIN_TIER_W2, NULL);
	extra_read_exec = NULL;
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), 0);
	assert_true(res.started);
	assert_string_equal(F->helper_run, RUN_ID);
	assert_string_equal(F->helper_pkg, plan->token.package_sid);
	assert_int_equal(F->helper_n, 1);
	assert_string_equal(F->helper_paths[0], PF);
	assert_true(F->helper_exec[0]);
	snprintf(ask, sizeof(ask), "helper_ask grant-read-exec %s %s", PF, plan->token.package_sid);
	assert_true(index_of("unlock") < index_of("helper_start"));
	assert_true(index_of("helper_start") < index_of(ask));
	assert_true(index_of(ask) < index_of("spawn"));
	snprintf(ask, sizeof(ask), "helper_ask revoke %s %s", PF, plan->token.package_sid);
	assert_true(index_of("resume") < index_of(ask));
	assert_true(index_of(ask) < index_of("helper_stop"));
	/* ward never wrote that DACL itself. */
	assert_true(index_of("set_dacl " PF) == SIZE_MAX);
	assert_string_equal(obj(PF)->dacl, PF_DACL_CANON);
	assert_null(F->journal);
	assert_false(F->helper_up);
	win_plan_free(plan);
}

/* Every failure of the helper's steps: 125 at step "helper" (or
 * "helper-readback"), the command never started, nothing left: ward's
 * own changes undone, the helper's grant revoked, the journal gone. */
static void helper_refused(const char *fail_at, int with, const char *lie_at, const char *step,
			   const char *detail)
{
	WinPlan *plan;
	WinExecResult res;
	WardError err = { 0 };

	extra_read = PF;
	plan = plan_for(WIN_TIER_W2, NULL);
	extra_read = NULL;
	F->fail_at = fail_at;
	F->fail_with = with;
	F->lie_at = lie_at;
	assert_true(win_exec_run(plan, &fake_api, &res, &err) < 0);
	assert_int_equal(res.exit_code, 125);
	assert_false(res.started);
	assert_string_equal(err.step, step);
	if (!strstr(err.detail, detail))
		printf("# detail: %s\n", err.detail);
	assert_non_null(strstr(err.detail, detail));
	assert_true(index_of("spawn") == SIZE_MAX);
	assert_true(strcmp(obj(PF)->dacl, PF_DACL) == 0 || strcmp(obj(PF)->dacl, PF_DACL_CANON) == 0);
	assert_host_restored();
	assert_null(F->journal);
	assert_false(F->helper_up);
	win_plan_free(plan);
}

static void test_win_exec_helper_declined(void **state)
{
	helper_refused("helper_start", -ECANCELED, NULL, "helper", "declined");
}

static void test_win_exec_helper_not_started(void **state)
{
	helper_refused("helper_start", -ENOENT, NULL, "helper", "fake refusal");
}

static void test_win_exec_helper_refuses(void **state)
{
	helper_refused("helper_ask", -EPERM, NULL, "helper", "did not grant");
}

static void test_win_exec_helper_grant_not_read_back(void **state)
{
	helper_refused(NULL, 0, "helper_ask", "helper-readback", PF);
}

/* A deny under a system directory: more than the helper grants, refused
 * before any change. */
static void test_win_exec_helper_never_denies(void **state)
{
	WardPolicy *p = policy_new_empty();
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	WinPlanInput in = { .policy = p, .tier = WIN_TIER_W2, .workspace = "C:\\ws",
			    .state_dir = "C:\\Users\\me\\AppData\\Local\\ward", .run_id = RUN_ID,
			    .argv = argv, .envp = (char *[]){ NULL }, .host = &host };
	WinPlan *plan = NULL;
	WinExecResult res;
	WardError err = { 0 };
	char why[256];

	assert_int_equal(strv_extend(&p->fs_deny, PF), 0);
	assert_int_equal(win_plan_build(&in, &plan, why, sizeof(why)), 0);
	policy_free(p);
	assert_non_null(plan->needs_helper);
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), -EPERM);
	assert_string_equal(err.step, "helper");
	assert_true(index_of("profile_create") == SIZE_MAX);
	assert_true(index_of("set_dacl") == SIZE_MAX);
	assert_true(index_of("helper_start") == SIZE_MAX);
	assert_null(F->journal);
	win_plan_free(plan);
}

/* A helper that ended the conversation (a request refused) revokes
 * what stands when it goes: ward waits for it, reads back, and the run's
 * undo is complete. */
static void test_win_exec_helper_gone_revoked(void **state)
{
	WinPlan *plan;
	WinExecResult res;
	WardError err = { 0 };

	extra_read = PF;
	plan = plan_for(WIN_TIER_W2, NULL);
	extra_read = NULL;
	F->helper_revokes_on_exit = true;
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), 0);
	assert_true(res.started);
	assert_false(res.undo_failed);
	assert_string_equal(obj(PF)->dacl, PF_DACL_CANON);
	assert_null(F->journal);
	win_plan_free(plan);
}

/* Two paths; the second grant refused: the first, already made, is
 * revoked through the helper and read back; nothing is left. */
static void test_win_exec_helper_second_refused(void **state)
{
	WinPlan *plan;
	WinExecResult res;
	WardError err = { 0 };
	char revoke[256];

	add("C:\\Program Files\\y", WIN_FILE_DIRECTORY, PF_DACL);
	extra_read = PF;
	extra_read_exec = "C:\\Program Files\\y";
	plan = plan_for(WIN_TIER_W2, NULL);
	extra_read = extra_read_exec = NULL;
	F->helper_refuse_nth = 2;
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), -EPERM);
	assert_string_equal(err.step, "helper");
	assert_false(res.started);
	assert_int_equal(F->helper_n, 2);
	assert_int_equal(F->helper_grants, 2);
	snprintf(revoke, sizeof(revoke), "helper_ask revoke ");
	assert_true(index_of(revoke) < index_of("helper_stop"));
	assert_null(strstr(obj(PF)->dacl, "S-1-15-2-"));
	assert_null(strstr(obj("C:\\Program Files\\y")->dacl, "S-1-15-2-"));
	assert_null(F->journal);
	win_plan_free(plan);
}

#define DEAD_SID "S-1-15-2-9-9-9-9-9-9-9"
#define DEAD_JOURNAL "ward-windows-journal 1\nsids\t" DEAD_SID "\nhelper\t" PF "\t00000000000000dd " DEAD_SID "\n"

/* A run killed with its helper (the helper revokes when its client goes;
 * killed too, it cannot): the grant stands. A run's recovery, unelevated,
 * cannot take it back: it refuses, names `ward.exe cleanup`, and keeps
 * the journal; `ward.exe cleanup` starts the helper for the revocation
 * only, reads it back, and the journal goes. */
static void test_win_exec_helper_dead_run(void **state)
{
	WardError err = { 0 };

	free(obj(PF)->dacl);
	obj(PF)->dacl = strdup("D:(A;OICI;0x120089;;;" DEAD_SID ")(A;OICI;FA;;;SY)");
	F->stale_journal = strdup(DEAD_JOURNAL);
	assert_int_equal(win_exec_recover(&fake_api, &err), -EPERM);
	assert_non_null(strstr(err.detail, "ward.exe cleanup"));
	assert_non_null(F->stale_journal);
	assert_true(index_of("helper_start") == SIZE_MAX);

	err = (WardError){ 0 };
	assert_int_equal(win_exec_cleanup(&fake_api, &err), 0);
	assert_string_equal(F->helper_run, "00000000000000dd");
	assert_string_equal(F->helper_pkg, DEAD_SID);
	assert_int_equal(F->helper_n, 1);
	assert_false(F->helper_exec[0]);
	assert_true(index_of("helper_ask revoke " PF " " DEAD_SID) < index_of("helper_stop"));
	assert_string_equal(obj(PF)->dacl, PF_DACL_CANON);
	assert_null(F->stale_journal);
	assert_false(F->helper_up);
}

/* The usual end of a killed run: the helper revoked on its own when the
 * pipe broke. The entry reads back done; no helper, no prompt. */
static void test_win_exec_helper_dead_run_revoked(void **state)
{
	WardError err = { 0 };

	F->stale_journal = strdup(DEAD_JOURNAL);
	assert_int_equal(win_exec_recover(&fake_api, &err), 0);
	assert_null(F->stale_journal);
	assert_true(index_of("helper_start") == SIZE_MAX);
}

/* cleanup: a helper that refuses (or is declined) leaves the journal. */
static void test_win_exec_helper_cleanup_refused(void **state)
{
	WardError err = { 0 };

	free(obj(PF)->dacl);
	obj(PF)->dacl = strdup("D:(A;OICI;0x120089;;;" DEAD_SID ")(A;OICI;FA;;;SY)");
	F->stale_journal = strdup(DEAD_JOURNAL);
	F->fail_at = "helper_start";
	F->fail_with = -ECANCELED;
	assert_true(win_exec_cleanup(&fake_api, &err) < 0);
	assert_string_equal(err.step, "helper");
	assert_non_null(F->stale_journal);
	assert_non_null(strstr(obj(PF)->dacl, DEAD_SID));
}

static void test_win_exec_timeout(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W2, NULL);
	WinExecResult res;
	WardError err = { 0 };

	F->timeout = true;
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), 0);
	assert_int_equal(res.exit_code, 124);
	assert_true(res.timed_out);
	assert_true(F->terminated);
	assert_host_restored();
	win_plan_free(plan);
}

static void test_win_exec_recovers_crashed_run(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W2, NULL);
	WinExecResult res;
	WardError err = { 0 };

	/* A run that died after its changes: ACE on, placeholder made,
	 * journal left. The next run undoes it before anything else. */
	free(obj("C:\\ws")->dacl);
	obj("C:\\ws")->dacl = strdup("D:AI(A;OICI;0x1301bf;;;S-1-15-2-9-9-9-9-9-9-9)"
				     "(A;OICI;FA;;;SY)(A;OICIID;FA;;;BA)");
	add("C:\\ws\\.agents", WIN_FILE_DIRECTORY, "D:AI(A;OICIID;FA;;;SY)");
	F->stale_journal = strdup("ward-windows-journal 1\nsids\tS-1-15-2-9-9-9-9-9-9-9\n"
				  "mkdir\tC:\\ws\\.agents\nacl\tC:\\ws\n");
	assert_int_equal(win_exec_recover(&fake_api, &err), 0);
	assert_null(F->stale_journal);
	assert_null(obj("C:\\ws\\.agents"));
	assert_string_equal(obj("C:\\ws")->dacl, "D:AI(A;OICI;0x1f01ff;;;S-1-5-18)"
						 "(A;OICIID;0x1f01ff;;;S-1-5-32-544)");
	assert_null(F->journal);

	/* A run recovers on its own, under the lock, before its changes. */
	add("C:\\ws\\.agents", WIN_FILE_DIRECTORY, "D:AI(A;OICIID;FA;;;SY)");
	F->stale_journal = strdup("ward-windows-journal 1\nmkdir\tC:\\ws\\.agents\n");
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), 0);
	assert_null(obj("C:\\ws\\.agents"));
	assert_true(index_of("journal_remove dead") < index_of("profile_create"));
	assert_host_restored();
	win_plan_free(plan);
}

static void test_win_exec_undo_failure_keeps_journal(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W2, NULL);
	WinExecResult res;
	WardError err = { 0 };

	/* The command ran; putting the DACL back fails: the run reports it
	 * (125) and the journal stays for the next run to finish the undo. */
	F->fail_at = "set_sddl";
	F->fail_with = -EACCES;
	F->fail_once_resumed = true;
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), -EACCES);
	assert_true(res.started);
	assert_true(res.undo_failed);
	assert_int_equal(res.exit_code, 125);
	assert_non_null(F->journal);
	assert_non_null(strstr(obj("C:\\ws")->dacl, "S-1-15-2-"));
	/* ward.exe exits; its journal is now a dead run's, undone by the next. */
	F->fail_at = NULL;
	F->stale_journal = F->journal;
	F->journal = NULL;
	assert_int_equal(win_exec_recover(&fake_api, &err), 0);
	assert_host_restored();
	win_plan_free(plan);
}

static void test_win_exec_w1_labels_and_restores(void **state)
{
	WinPlan *plan = plan_for(WIN_TIER_W1, NULL);
	WinExecResult res;
	WardError err = { 0 };

	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), 0);
	assert_true(index_of("set_label C:\\ws") < index_of("spawn"));
	assert_true(index_of("set_label C:\\ws\\.git") < index_of("spawn"));
	assert_string_equal(obj("C:\\ws")->label, "S:");
	assert_string_equal(obj("C:\\ws\\.git")->label, "S:");
	assert_host_restored();
	win_plan_free(plan);
}

#define SESSION "C:\\Users\\me\\cow\\0000000000000001"

static void add_session(void)
{
	add("C:\\Users\\me\\cow", WIN_FILE_DIRECTORY, "D:(A;OICI;FA;;;SY)");
	add(SESSION, WIN_FILE_DIRECTORY, "D:(A;OICI;FA;;;SY)");
	add(SESSION "\\upper", WIN_FILE_DIRECTORY, "D:AI(A;OICIID;FA;;;SY)");
	add(SESSION "\\whiteout", WIN_FILE_DIRECTORY, "D:AI(A;OICIID;FA;;;SY)");
	add("C:\\ward", WIN_FILE_DIRECTORY, "D:(A;OICI;FA;;;SY)");
	add("C:\\ward\\ward-redirect.dll", WIN_FILE_REGULAR, "D:AI(A;ID;FA;;;SY)");
}

/* --cow: the redirector is injected and ready after the token read-back
 * and before the resume; the workspace is only readable, the upper the
 * writable place; every grant is undone after. */
static void test_win_exec_cow_injects_before_resume(void **state)
{
	WinPlan *plan;
	WinExecResult res;
	WardError err = { 0 };

	add_session();
	cow_session = SESSION;
	plan = plan_for(WIN_TIER_W2, NULL);
	cow_session = NULL;
	assert_int_equal(win_exec_run(plan, &fake_api, &res, &err), 0);
	assert_true(res.started);
	assert_true(index_of("token_read") < index_of("cow_inject"));
	assert_true(index_of("cow_inject") < index_of("resume"));
	assert_true(index_of("cow_inject C:\\ward\\ward-redirect.dll \\\\.\\pipe\\ward-cow-" RUN_ID
			     " 20000") != SIZE_MAX);
	assert_true(env_has("WARD_COW_UPPER=" SESSION "\\upper"));
	assert_true(env_has("WARD_COW_WHITEOUT=" SESSION "\\whiteout"));
	assert_true(env_has("WARD_COW_WORKSPACE=C:\\ws"));
	assert_true(env_has("WARD_COW_PIPE=\\\\.\\pipe\\ward-cow-" RUN_ID));
	assert_true(env_has("WARD_COW_PROTECTED=.git;.codex"));
	assert_host_restored();
	assert_null(strstr(obj(SESSION "\\upper")->dacl, "S-1-15-"));
	win_plan_free(plan);
}

/* Injection failing or no readiness line: the suspended child is killed,
 * never resumed, exit 125 naming the step; a table without the entry
 * refuses the same way. Nothing is left on the host. */
static void test_win_exec_cow_inject_failure_kills(void **state)
{
	for (int k = 0; k < 3; k++) {
		WinApi api = fake_api;
		WinPlan *plan;
		WinExecResult res;
		WardError err = { 0 };

		teardown(state);
		setup(state);
		add_session();
		cow_session = SESSION;
		plan = plan_for(k == 2 ? WIN_TIER_W0 : WIN_TIER_W2, NULL);
		cow_session = NULL;
		F->fail_at = "cow_inject";
		F->fail_with = k == 0 ? -ETIMEDOUT : -EACCES;
		if (k == 1)
			api.cow_inject = NULL;
		assert_true(win_exec_run(plan, &api, &res, &err) < 0);
		assert_string_equal(err.step, "cow-inject");
		assert_int_equal(res.exit_code, 125);
		assert_false(res.started);
		assert_false(F->resumed);
		assert_true(F->terminated);
		assert_true(index_of("close job") != SIZE_MAX);
		F->fail_at = NULL;
		if (k != 2)
			assert_host_restored();
		win_plan_free(plan);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_win_exec_cow_injects_before_resume, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_cow_inject_failure_kills, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_w2_runs_and_undoes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_quarantines_created_protected, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_crashed_run_quarantines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_userenv_missing_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_profile_sid_mismatch_refuses, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_acl_lie_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_token_lie_refuses_before_resume, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_spawn_attribute_rejected, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_job_lie_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_needs_helper_refuses_before_changes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_helper_grants_and_revokes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_helper_declined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_helper_not_started, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_helper_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_helper_grant_not_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_helper_never_denies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_helper_gone_revoked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_helper_second_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_helper_dead_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_helper_dead_run_revoked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_helper_cleanup_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_recovers_crashed_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_undo_failure_keeps_journal, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_win_exec_w1_labels_and_restores, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
