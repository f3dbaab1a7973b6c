/* The fault wrappers of win-fault.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "windows/win-fault.h"

static WinApi real;

static int lie_set_sddl(void *ctx, const char *path, bool label, const char *sddl)
{
	return 0;
}

static int missing_profile(void *ctx, const char *name, char ret[WIN_SID_STRING_MAX], char *why,
			   size_t n)
{
	snprintf(why, n, "userenv.dll has no CreateAppContainerProfile (injected)");
	return -ENOSYS;
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
	if (IS("userenv-missing"))
		api->profile_create = missing_profile;
	else if (IS("attr-rejected"))
		api->spawn_suspended = rejected_attr;
	else if (IS("token-lie"))
		api->token_read = lie_token;
	else if (IS("acl-lie"))
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
