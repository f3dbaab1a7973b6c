/* `ward.exe probe`: which tiers this host can give, proven the way a run
 * proves them: a suspended child per tier, its token read back and
 * checked, then killed unresumed. An API that reports success without
 * doing anything (Wine) shows up as "unavailable", not as a tier. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/strv.h"
#include "windows/win-env.h"
#include "windows/win-token.h"
#include "windows/win32-api.h"
#include "windows/win32-util.h"

int win_probe_main(void);

static int probe_tier(WinApi *api, WinTier tier, char *why, size_t n)
{
	WinTokenPlan t = { 0 };
	WinJobPlan jp = { .kill_on_close = true, .no_breakaway = true };
	WinTokenObserved seen = { 0 };
	char logon[WIN_SID_STRING_MAX] = "", sid[WIN_SID_STRING_MAX], self[MAX_PATH * 4];
	wchar_t wself[MAX_PATH];
	char *u, *cmdline = NULL;
	void *job = NULL, *proc = NULL;
	char env[] = "SYSTEMROOT=C:\\Windows\0";
	int r;

	if (win_token_plan(tier, "0000000000000000", false, &t) < 0)
		return -ENOMEM;
	if (!GetModuleFileNameW(NULL, wself, MAX_PATH) || !(u = win32_utf8(wself))) {
		snprintf(why, n, "GetModuleFileNameW failed");
		win_token_plan_done(&t);
		return -EIO;
	}
	snprintf(self, sizeof(self), "%s", u);
	free(u);
	if (asprintf(&cmdline, "\"%s\" --version", self) < 0) {
		win_token_plan_done(&t);
		return -ENOMEM;
	}
	if (t.appcontainer) {
		r = api->profile_create(api->ctx, t.package_name, sid, why, n);
		if (r < 0)
			goto out;
		if (strcmp(sid, t.package_sid) != 0) {
			snprintf(why, n, "the profile's SID %s is not the derived %s", sid,
				 t.package_sid);
			r = -EPERM;
			goto out;
		}
	}
	if (t.restricting_sids && (r = api->logon_sid(api->ctx, logon)) < 0) {
		snprintf(why, n, "cannot read the logon SID");
		goto out;
	}
	r = api->job_create(api->ctx, &jp, &job, why, n);
	if (r >= 0) {
		WinSpawn s = { .application = self, .cmdline = cmdline, .cwd = "C:\\",
			       .env_block = env, .env_len = sizeof(env), .token = &t,
			       .logon_sid = *logon ? logon : NULL, .job = job };

		r = api->spawn_suspended(api->ctx, &s, &proc, why, n);
	}
	if (r >= 0)
		r = api->job_assign(api->ctx, job, proc);
	if (r >= 0)
		r = api->token_read(api->ctx, proc, &seen);
	if (r >= 0)
		r = win_token_check(&t, *logon ? logon : NULL, &seen, why, n);
	if (proc) {
		(void)api->terminate(api->ctx, proc, 125);
		api->close_proc(api->ctx, proc);
	}
	if (job)
		api->close_job(api->ctx, job);
out:
	if (t.appcontainer)
		(void)api->profile_delete(api->ctx, t.package_name);
	win_token_observed_done(&seen);
	win_token_plan_done(&t);
	free(cmdline);
	return r;
}

int win_probe_main(void)
{
	static const struct {
		WinTier tier;
		const char *what;
	} tiers[] = {
		{ WIN_TIER_W2, "AppContainer (default)" },
		{ WIN_TIER_W1_WRITE, "write-restricted token + sandbox-write SID" },
		{ WIN_TIER_W1, "restricted token + low integrity" },
	};
	Win32Ctx ctx = { 0 };
	WinApi api;
	bool any = false;

	win32_api_init(&api, &ctx);
	for (size_t i = 0; i < sizeof(tiers) / sizeof(*tiers); i++) {
		char why[512] = "";
		int r = probe_tier(&api, tiers[i].tier, why, sizeof(why));

		printf("%-9s %-45s %s%s%s\n", win_tier_to_string(tiers[i].tier), tiers[i].what,
		       r >= 0 ? "available" : "unavailable", r >= 0 ? "" : ": ", r >= 0 ? "" : why);
		any |= r >= 0 && tiers[i].tier == WIN_TIER_W2;
	}
	printf("%-9s %-45s %s\n", "W0", "no isolation (explicit --tier W0 only)", "available");
	printf("default tier: %s\n", any ? "W2" : "none (ward.exe run refuses without --tier)");
	return 0;
}
