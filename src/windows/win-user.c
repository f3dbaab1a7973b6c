/* The sandbox-user tier's record check and ACL plan (win-user.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-acl.h"
#include "windows/win-path.h"
#include "windows/win-user.h"

static int refuse(const char **ret_step, const char *step, char *why, size_t n_why,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int refuse(const char **ret_step, const char *step, char *why, size_t n_why,
		  const char *fmt, ...)
{
	va_list ap;

	*ret_step = step;
	va_start(ap, fmt);
	vsnprintf(why, n_why, fmt, ap);
	va_end(ap);
	return -EPERM;
}

static void wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;

	while (n--)
		*v++ = 0;
}

void win_user_wipe(WinSandboxUser *u)
{
	wipe(u->password, sizeof(u->password));
}

static void free_wiped(void *p, size_t n)
{
	if (p)
		wipe(p, n);
	free(p);
}

/* <state>\sandbox-sid: exactly "<synthetic SID>\n", as ward-setup.exe
 * writes it and ward-runner.exe reads it. */
static int read_sid_file(const WinSetupApi *api, const char *path, char ret[WIN_SID_STRING_MAX])
{
	_cleanup_free_ void *data = NULL;
	char buf[WIN_SID_STRING_MAX + 2];
	size_t n = 0;
	int r = api->file_read(api->ctx, path, &data, &n);

	if (r < 0)
		return r;
	if (n == 0 || n >= sizeof(buf) || ((char *)data)[n - 1] != '\n')
		return -EINVAL;
	memcpy(buf, data, n - 1);
	buf[n - 1] = 0;
	if (strlen(buf) != n - 1 || win_sid_normalize(buf, ret) < 0 || strcmp(buf, ret) != 0 ||
	    strncmp(ret, "S-1-15-3-1024-", 14) != 0)
		return -EINVAL;
	return 0;
}

int win_user_load(const WinSetupApi *api, const char *state_dir, int user, WinSandboxUser *ret,
		  const char **ret_step, char *why, size_t n_why)
{
	WinSetupSeen seen = { 0 };
	WinSetupInput in = { .seen = &seen, .state_dir = state_dir };
	WinSetupPlan files;
	WinSandboxUser u = { .user = user };
	char self[WIN_SID_STRING_MAX], detail[256] = "";
	char pw[2][WIN_SETUP_PASSWORD_LEN + 1];
	_cleanup_free_ char *sddl = NULL, *text = NULL;
	void *blob = NULL, *plain = NULL;
	size_t n = 0, np = 0;
	int r;

	*ret_step = "setup";
	if (user < 0 || user > 1)
		return -EINVAL;
	u.name = WIN_SETUP_USERS[user];
	r = win_setup_plan(&in, &files); /* for the file names, as setup makes them */
	if (r < 0)
		return r == -ENOMEM ? r
				    : refuse(ret_step, "setup", why, n_why,
					     "ward's state directory '%s' does not normalize",
					     state_dir);
	r = read_sid_file(api, files.sid_file, u.synthetic_sid);
	if (r == -ENOENT || r == -ENOTDIR) {
		r = refuse(ret_step, "setup", why, n_why,
		       "the sandbox users are not set up on this host (no '%s'): run "
		       "ward-setup.exe once, as an administrator",
		       files.sid_file);
		goto out;
	}
	if (r < 0) {
		r = refuse(ret_step, "setup", why, n_why,
		       "'%s' does not hold one synthetic SID (S-1-15-3-1024-...): run "
		       "ward-setup.exe again",
		       files.sid_file);
		goto out;
	}
	/* The record's DACL first: a record others may read or replace is
	 * not trusted, and not read. */
	r = api->dacl_get(api->ctx, files.cred_file, &sddl);
	if (r == -ENOENT || r == -ENOTDIR) {
		r = refuse(ret_step, "setup", why, n_why,
		       "no credential record '%s': run ward-setup.exe once, as an administrator",
		       files.cred_file);
		goto out;
	}
	if (r < 0 || api->self_sid(api->ctx, self) < 0 ||
	    win_setup_cred_check(sddl, self, detail, sizeof(detail)) < 0) {
		r = refuse(ret_step, "credentials", why, n_why, "'%s': %s", files.cred_file,
		       r < 0	? "its DACL cannot be read"
		       : *detail ? detail
				 : "the user running ward cannot be read");
		goto out;
	}
	r = api->file_read(api->ctx, files.cred_file, &blob, &n);
	if (r >= 0)
		r = api->dpapi_unprotect(api->ctx, blob, n, &plain, &np);
	if (r >= 0 && !(text = malloc(np + 1)))
		r = -ENOMEM;
	if (r >= 0) {
		memcpy(text, plain, np);
		text[np] = 0;
		r = strlen(text) == np ? win_setup_creds_parse(text, pw) : -EINVAL;
		wipe(text, np);
	}
	if (r == -ENOMEM)
		goto out;
	if (r < 0) {
		r = refuse(ret_step, "credentials", why, n_why,
		       "'%s' does not decrypt for this user or does not parse (%s): run "
		       "ward-setup.exe again",
		       files.cred_file, strerror(-r));
		goto out;
	}
	memcpy(u.password, pw[user], sizeof(u.password));
	wipe(pw, sizeof(pw));
	r = api->user_get(api->ctx, u.name, u.sid);
	if (r < 0 || strncmp(u.sid, "S-1-5-21-", 9) != 0) {
		r = refuse(ret_step, "user", why, n_why,
		       "the sandbox user %s %s: run ward-setup.exe again", u.name,
		       r < 0 ? "does not exist" : "is not a local user");
		goto out;
	}
	*ret = u;
	r = 0;
out:
	if (r < 0)
		win_user_wipe(&u);
	free_wiped(plain, np);
	free(blob);
	win_setup_plan_done(&files);
	return r;
}

/* The reasons the plan denies everything to a W2 package SID; the user
 * twin of the synthetic SID's deny-write is a deny-all there (reads are
 * checked against the user's SIDs). ward's state dir stays readable:
 * the runner reads the synthetic SID from it. */
static bool deny_all(const char *why)
{
	return why && (strcmp(why, "fs.deny") == 0 || strcmp(why, "ward config") == 0);
}

int win_user_plan(WinPlan *plan, const WinSandboxUser *u)
{
	const char *old;

	if (plan->tier != WIN_TIER_W1_WRITE || !plan->token.restricting_sids ||
	    strv_length(plan->token.restricting_sids) != 3)
		return -EINVAL;
	old = plan->token.restricting_sids[2];
	for (size_t i = 0; i < plan->n_paths; i++) {
		WinPathPlan *pp = &plan->paths[i];
		size_t n = pp->n_add, twins = 0;
		WinAce *a;

		for (size_t k = 0; k < n; k++)
			twins += strcmp(pp->add[k].sid, old) == 0;
		if (!twins)
			continue;
		a = realloc(pp->add, (n + twins) * sizeof(*a));
		if (!a)
			return -ENOMEM;
		pp->add = a;
		for (size_t k = 0; k < n; k++) {
			if (strcmp(a[k].sid, old) != 0)
				continue;
			snprintf(a[k].sid, sizeof(a[k].sid), "%s", u->synthetic_sid);
			a[pp->n_add] = a[k];
			a[pp->n_add].raw = NULL;
			snprintf(a[pp->n_add].sid, sizeof(a[pp->n_add].sid), "%s", u->sid);
			if (a[k].type == WIN_ACE_DENY && deny_all(pp->why))
				a[pp->n_add].mask = WIN_FILE_ALL;
			pp->n_add++;
		}
	}
	/* What W1-write leaves open is not what this tier leaves open: the
	 * network is the offline user's (walled), reads are the user's. */
	{
		char **kept = NULL;

		STRV_FOREACH(d, plan->degraded)
			if (strncmp(*d, "network:", 8) != 0 && strncmp(*d, "fs reads:", 9) != 0 &&
			    strv_extend(&kept, *d) < 0) {
				strv_free(kept);
				return -ENOMEM;
			}
		if (strv_extend(&kept, "fs reads: not confined to the policy; the sandbox user reads "
				       "what it may (ward-setup.exe granted it read on the profile, "
				       "Windows, Program Files, ProgramData); fs.deny and ward's "
				       "config dir are denied to it") < 0) {
			strv_free(kept);
			return -ENOMEM;
		}
		strv_free(plan->degraded);
		plan->degraded = kept;
	}
	/* The runner is in the job too: one more process than the policy's. */
	if (plan->job.active_processes)
		plan->job.active_processes++;
	strv_free(plan->our_sids);
	plan->our_sids = NULL;
	if (strv_extend(&plan->our_sids, u->synthetic_sid) < 0 ||
	    strv_extend(&plan->our_sids, u->sid) < 0)
		return -ENOMEM;
	free(plan->token.restricting_sids[2]);
	if (!(plan->token.restricting_sids[2] = strdup(u->synthetic_sid)))
		return -ENOMEM;
	return 0;
}
