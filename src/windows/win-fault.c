/* The fault wrappers of win-fault.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"

#include "windows/win-acl.h"
#include "windows/win-fault.h"
#include "windows/win-helper-proto.h"
#include "windows/win-sid.h"
#include "windows/win-setup.h"

static WinApi real;

static int lie_set_sddl(void *ctx, const char *path, bool label, const char *sddl)
{
	return 0;
}

/* acl-echo: a DACL that was set reads back as set (Wine keeps none on
 * its drives): the privileged helper's plumbing past its read-back. */
static struct {
	char *path, *sddl;
} echoed[16];

static int echo_set_sddl(void *ctx, const char *path, bool label, const char *sddl)
{
	size_t i = 0;

	while (i < 15 && echoed[i].path && strcmp(echoed[i].path, path) != 0)
		i++;
	free(echoed[i].path);
	free(echoed[i].sddl);
	echoed[i].path = strdup(path);
	echoed[i].sddl = strdup(sddl);
	return echoed[i].path && echoed[i].sddl ? 0 : -ENOMEM;
}

static int echo_get_sddl(void *ctx, const char *path, bool label, char **ret)
{
	for (size_t i = 0; i < 16 && echoed[i].path; i++)
		if (strcmp(echoed[i].path, path) == 0)
			return (*ret = strdup(echoed[i].sddl)) ? 0 : -ENOMEM;
	return real.get_sddl(ctx, path, label, ret);
}

/* helper-echo: the DACL change the helper reported "ok" for, as ward.exe
 * then reads it (Wine keeps no DACL, and the helper is another process:
 * acl-echo's table is per process). WARD_TEST_ACL_SEED="PATH|SDDL" puts a
 * DACL there first (a grant a killed run left). */
static int echo_helper_ask(void *ctx, const char *req, size_t n, char *why, size_t n_why)
{
	_cleanup_free_ char *cur = NULL, *next = NULL;
	WinHelperRequest q;
	WinHelperChange c;
	int r = real.helper_ask(ctx, req, n, why, n_why);

	if (r < 0 || win_helper_parse(req, n, &q, why, n_why) < 0)
		return r;
	win_helper_change(q.op, q.sid, &c);
	if (echo_get_sddl(ctx, q.path, false, &cur) >= 0 && win_acl_change_sddl(cur, &c.chg, &next) >= 0)
		(void)echo_set_sddl(ctx, q.path, false, next);
	win_helper_request_done(&q);
	return 0;
}

static void seed_acl(void)
{
	const char *s = getenv("WARD_TEST_ACL_SEED"), *bar = s ? strchr(s, '|') : NULL;
	_cleanup_free_ char *path = bar ? strndup(s, (size_t)(bar - s)) : NULL;

	if (path)
		(void)echo_set_sddl(NULL, path, false, bar + 1);
}

static int missing_profile(void *ctx, const char *name, char ret[WIN_SID_STRING_MAX], char *why,
			   size_t n)
{
	snprintf(why, n, "userenv.dll has no CreateAppContainerProfile (injected)");
	return -ENOSYS;
}

static int echo_profile(void *ctx, const char *name, char ret[WIN_SID_STRING_MAX], char *why,
			size_t n)
{
	WinSid sid;

	if (win_sid_appcontainer(name, &sid) < 0)
		return -EINVAL;
	win_sid_format(&sid, ret);
	return 0;
}

static int rejected_attr(void *ctx, const WinSpawn *s, void **ret, char *why, size_t n)
{
	snprintf(why, n, "UpdateProcThreadAttribute: the parameter is incorrect (injected)");
	return -EINVAL;
}

static int lie_token(void *ctx, void *proc, WinTokenObserved *ret)
{
	int r = real.token_read(ctx, proc, ret);

	if (r < 0)
		return r;
	/* Whatever was asked: an AppContainer token at medium integrity with
	 * no package SID, which no tier's plan describes. */
	win_token_observed_done(ret);
	ret->appcontainer = true;
	ret->integrity_rid = 8192;
	return 0;
}

/* token-echo: the token read back is the one spawn was asked for (Wine
 * hands out the unrestricted token): the plumbing after the token check,
 * for the runner's Wine tests. */
static WinTokenPlan asked_token;
static char asked_logon[WIN_SID_STRING_MAX];

static int record_spawn(void *ctx, const WinSpawn *s, void **ret, char *why, size_t n)
{
	asked_token = *s->token;
	snprintf(asked_logon, sizeof(asked_logon), "%s", s->logon_sid ? s->logon_sid : "");
	return real.spawn_suspended(ctx, s, ret, why, n);
}

/* spawn-plain (with token-echo): the child is started with the user's
 * own token, the asked one recorded for the echo. Wine rejects the
 * AppContainer attribute; this lets a W2 run's plumbing (its environment,
 * the proxy) reach a child that runs. It isolates nothing. */
static int plain_spawn(void *ctx, const WinSpawn *s, void **ret, char *why, size_t n)
{
	WinSpawn plain = *s;
	WinTokenPlan none = { 0 };

	asked_token = *s->token;
	snprintf(asked_logon, sizeof(asked_logon), "%s", s->logon_sid ? s->logon_sid : "");
	plain.token = &none;
	return real.spawn_suspended(ctx, &plain, ret, why, n);
}

static int echo_token(void *ctx, void *proc, WinTokenObserved *ret)
{
	const WinTokenPlan *t = &asked_token;

	*ret = (WinTokenObserved){ .appcontainer = t->appcontainer,
				   .integrity_rid = t->integrity_rid,
				   .write_restricted = t->write_restricted };
	if (t->appcontainer && !(ret->package_sid = strdup(t->package_sid)))
		return -ENOMEM;
	for (char **c = t->capability_sids; c && *c; c++)
		if (strv_extend(&ret->capability_sids, *c) < 0)
			return -ENOMEM;
	for (char **c = t->restricting_sids; c && *c; c++)
		if (strv_extend(&ret->restricting_sids,
				strcmp(*c, WIN_SID_LOGON_PLACEHOLDER) == 0 ? asked_logon : *c) < 0)
			return -ENOMEM;
	return 0;
}

static WinJobPlan asked;

static int record_job(void *ctx, const WinJobPlan *job, void **ret, char *why, size_t n)
{
	asked = *job;
	return real.job_create(ctx, job, ret, why, n);
}

static int echo_job(void *ctx, void *job, WinJobPlan *ret)
{
	*ret = asked;
	return 0;
}

static int lie_job(void *ctx, void *job, WinJobPlan *ret)
{
	int r = real.job_read(ctx, job, ret);

	ret->kill_on_close = false;
	return r;
}

static int failed_inject(void *ctx, void *proc, const WinCowLaunch *l, char *why, size_t n)
{
	snprintf(why, n, "CreateRemoteThread(LoadLibraryW): access denied (injected)");
	return -EACCES;
}

/* ward waits on another pipe than the one the DLL was told: the DLL
 * cannot signal, its DllMain fails, LoadLibraryW returns NULL. */
static int wrong_pipe(void *ctx, void *proc, const WinCowLaunch *l, char *why, size_t n)
{
	char name[256];
	WinCowLaunch other = *l;

	snprintf(name, sizeof(name), "%s-elsewhere", l->pipe);
	other.pipe = name;
	return real.cow_inject(ctx, proc, &other, why, n);
}

/* No time at all for the readiness signal: the timeout path. */
static int no_time(void *ctx, void *proc, const WinCowLaunch *l, char *why, size_t n)
{
	WinCowLaunch other = *l;

	other.ready_ms = 0;
	return real.cow_inject(ctx, proc, &other, why, n);
}

static int install_one(WinApi *api, const char *fault, size_t n)
{
#define IS(name) (n == strlen(name) && strncmp(fault, name, n) == 0)
	if (IS("wfp-echo") || IS("wfp-lie") || IS("lb-echo") || IS("lb-lie") || IS("wfp-setup") ||
	    IS("wfp-setup-port") || IS("setup-echo") || IS("logon-plain") || IS("cow-squat") ||
	    IS("cow-intruder") || IS("helper-declined") || IS("helper-squat"))
		return 0; /* win_fault_net_install()'s, win_fault_setup_install()'s,
			   * win32-inject.c's, win32-helper-client.c's,
			   * win32-user-run.c's */
	else if (IS("helper-echo")) {
		seed_acl();
		api->helper_ask = echo_helper_ask;
		api->get_sddl = echo_get_sddl;
	}
	else if (IS("profile-echo"))
		api->profile_create = echo_profile;
	else if (IS("userenv-missing"))
		api->profile_create = missing_profile;
	else if (IS("attr-rejected"))
		api->spawn_suspended = rejected_attr;
	else if (IS("token-echo")) {
		api->spawn_suspended = record_spawn;
		api->token_read = echo_token;
	} else if (IS("spawn-plain")) {
		api->spawn_suspended = plain_spawn;
		api->token_read = echo_token;
	} else if (IS("token-lie"))
		api->token_read = lie_token;
	else if (IS("acl-echo")) {
		api->set_sddl = echo_set_sddl;
		api->get_sddl = echo_get_sddl;
	} else if (IS("acl-lie"))
		api->set_sddl = lie_set_sddl;
	else if (IS("inject-fail"))
		api->cow_inject = failed_inject;
	else if (IS("ready-missing"))
		api->cow_inject = wrong_pipe;
	else if (IS("ready-timeout"))
		api->cow_inject = no_time;
	else if (IS("job-lie"))
		api->job_read = lie_job;
	else if (IS("job-echo")) {
		api->job_create = record_job;
		api->job_read = echo_job;
	} else
		return -EINVAL;
#undef IS
	return 0;
}

int win_fault_install(WinApi *api, const char *fault)
{
	real = *api;
	if (!fault)
		return 0;
	/* A comma-separated list. */
	while (*fault) {
		size_t n = strcspn(fault, ",");

		if (n && install_one(api, fault, n) < 0)
			return -EINVAL;
		fault += n + (fault[n] == ',');
	}
	return 0;
}

/* A WFP engine that accepts everything (Wine has none): "wfp-echo" reads
 * back exactly what was committed, "wfp-lie" reads back nothing (success
 * reported, nothing done: Wine's habit). */
static struct {
	WinWfpFilter f[WIN_WFP_MAX_FILTERS];
	size_t n, n_pending;
	bool lie;
	bool seeded;   /* wfp-setup: persistent filters outlive a session */
} eng;

static int e_open(void *ctx, bool dynamic, void **ret, char *why, size_t n)
{
	if (!eng.seeded)
		eng.n = 0;
	eng.n_pending = 0;
	*ret = &eng;
	return 0;
}

static void e_close(void *ctx, void *engine)
{
	if (!eng.seeded)
		eng.n = 0;
}

static int e_begin(void *ctx, void *engine, char *why, size_t n)
{
	eng.n_pending = 0;
	return 0;
}

static int e_commit(void *ctx, void *engine, char *why, size_t n)
{
	eng.n = eng.lie ? 0 : eng.n_pending;
	return 0;
}

static void e_abort(void *ctx, void *engine)
{
	eng.n_pending = 0;
}

static int e_add(void *ctx, void *engine, const WinWfpPlan *p, char *why, size_t n)
{
	return 0;
}

static int e_add_filter(void *ctx, void *engine, const WinWfpPlan *p, const WinWfpFilter *f,
			char *why, size_t n)
{
	if (eng.n_pending >= WIN_WFP_MAX_FILTERS)
		return -ENOSPC;
	eng.f[eng.n_pending++] = *f;
	return 0;
}

static int e_get_filter(void *ctx, void *engine, const WinGuid *key, WinWfpFilter *ret,
			char *why, size_t n)
{
	for (size_t i = 0; i < eng.n; i++)
		if (memcmp(&eng.f[i].key, key, sizeof(*key)) == 0) {
			*ret = eng.f[i];
			return 0;
		}
	return -ENOENT;
}

static bool listed(const char *fault, const char *name)
{
	size_t len = strlen(name);

	while (fault && *fault) {
		size_t n = strcspn(fault, ",");

		if (n == len && strncmp(fault, name, n) == 0)
			return true;
		fault += n + (fault[n] == ',');
	}
	return false;
}

bool win_fault_listed(const char *fault, const char *name)
{
	return listed(fault, name);
}

/* lb-echo / lb-lie: the loopback exemption list. */
static char **lb_list;
static bool lb_lie;

static int lb_get(void *ctx, char ***ret, char *why, size_t n)
{
	*ret = strv_copy(lb_list);
	return *ret || !lb_list ? 0 : -ENOMEM;
}

static int lb_set(void *ctx, char *const *sids, char *why, size_t n)
{
	char **l;

	if (lb_lie)
		return 0;
	l = strv_copy(sids);
	if (!l && sids && sids[0])
		return -ENOMEM;
	strv_free(lb_list);
	lb_list = l;
	return 0;
}

int win_fault_net_install(WinNetApi *api, const char *fault)
{
	if (listed(fault, "lb-echo") || listed(fault, "lb-lie")) {
		lb_lie = listed(fault, "lb-lie");
		api->loopback_get = lb_get;
		api->loopback_set = lb_set;
	}
	if (!listed(fault, "wfp-echo") && !listed(fault, "wfp-lie") && !listed(fault, "wfp-setup"))
		return 0;
	eng.lie = listed(fault, "wfp-lie");
	api->wfp_open = e_open;
	api->wfp_close = e_close;
	api->wfp_begin = e_begin;
	api->wfp_commit = e_commit;
	api->wfp_abort = e_abort;
	api->wfp_add_provider = e_add;
	api->wfp_add_sublayer = e_add;
	api->wfp_add_filter = e_add_filter;
	api->wfp_get_filter = e_get_filter;
	return 0;
}

void win_fault_net_seed(const char *fault, const WinWfpPlan *p)
{
	if (!listed(fault, "wfp-setup"))
		return;
	memcpy(eng.f, p->filters, p->n * sizeof(p->filters[0]));
	eng.n = p->n;
	if (listed(fault, "wfp-setup-port"))
		for (size_t i = 0; i < eng.n; i++)
			for (size_t k = 0; k < eng.f[i].n_cond; k++)
				if (eng.f[i].cond[k].field == WIN_WFP_F_REMOTE_PORT)
					eng.f[i].cond[k].num++;
	eng.seeded = true;
}

/* setup-echo: what ward-setup.exe would have left, on a host that cannot
 * make it (Wine): the record's DACL reads back as setup sets it, DPAPI
 * is the identity (the test writes the record in clear), and the offline
 * user exists with a made-up SID. */
static WinSetupApi real_setup;

static int echo_cred_dacl(void *ctx, const char *path, char **ret)
{
	char self[WIN_SID_STRING_MAX];
	size_t n = strlen(path), k = strlen("\\sandbox-users.dpapi"), nd = 0;
	void *data = NULL;
	int r;

	if (n < k || strcmp(path + n - k, "\\sandbox-users.dpapi") != 0)
		return real_setup.dacl_get(ctx, path, ret);
	r = real_setup.file_read(ctx, path, &data, &nd); /* absent stays absent */
	free(data);
	if (r < 0)
		return r;
	r = real_setup.self_sid(ctx, self);
	return r < 0 ? r : win_setup_cred_sddl(self, ret);
}

static int identity_unprotect(void *ctx, const void *in, size_t n, void **ret, size_t *n_ret)
{
	if (!(*ret = malloc(n ? n : 1)))
		return -ENOMEM;
	memcpy(*ret, in, n);
	*n_ret = n;
	return 0;
}

static int fake_user_get(void *ctx, const char *name, char ret[WIN_SID_STRING_MAX])
{
	if (strcmp(name, WIN_SETUP_OFFLINE_USER) == 0)
		snprintf(ret, WIN_SID_STRING_MAX, "%s", WIN_FAULT_OFFLINE_SID);
	else if (strcmp(name, WIN_SETUP_ONLINE_USER) == 0)
		snprintf(ret, WIN_SID_STRING_MAX, "%s", WIN_FAULT_ONLINE_SID);
	else
		return -ENOENT;
	return 0;
}

void win_fault_setup_install(WinSetupApi *api, const char *fault)
{
	if (!listed(fault, "setup-echo"))
		return;
	real_setup = *api;
	api->dacl_get = echo_cred_dacl;
	api->dpapi_unprotect = identity_unprotect;
	api->user_get = fake_user_get;
}
