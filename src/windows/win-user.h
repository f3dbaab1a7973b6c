/* The sandbox-user tier in `ward.exe run` (seed 2), its portable part:
 * what ward-setup.exe left, read back and checked before a run, and the
 * run's ACL plan for the sandbox user.
 *
 * ward.exe (never elevated) runs the command as a local user
 * ward-setup.exe made: the offline one (network none; walled by
 * ward-setup.exe's persistent WFP filters, read back before each run) or
 * the online one (network through the proxy). The command runner
 * (ward-runner.exe) is started as that user with CreateProcessWithLogonW
 * and makes the write-restricted token (restricting SIDs: Everyone, the
 * logon SID, the synthetic SID ward-setup.exe recorded). A write then
 * needs an ACE for the user AND for the synthetic SID: the plan grants
 * both on the workspace and fs.read_write, as W1-write grants its per-run
 * synthetic SID. Every step fails closed (win_user_load()'s @ret_step). */
#pragma once

#include <stddef.h>

#include "windows/win-plan.h"
#include "windows/win-setup-api.h"
#include "windows/win-setup.h"

typedef struct WinSandboxUser {
	int user;                                  /* 0 offline, 1 online */
	const char *name;                          /* WIN_SETUP_USERS[user] */
	char sid[WIN_SID_STRING_MAX];              /* the user's, looked up */
	char synthetic_sid[WIN_SID_STRING_MAX];    /* <state>\sandbox-sid */
	char password[WIN_SETUP_PASSWORD_LEN + 1]; /* from the credential record */
} WinSandboxUser;

/* Read what ward-setup.exe left in @state_dir for user @user, in order,
 * each step refusing with its name in @ret_step and the reason in @why:
 *   "setup"        no sandbox-sid or no credential record: setup never ran
 *                  (the reason names ward-setup.exe); a sandbox-sid that is
 *                  not one line holding a synthetic SID (S-1-15-3-1024-...)
 *   "credentials"  the record's DACL read back is not exactly SYSTEM,
 *                  Administrators and the user running ward (a wider one
 *                  is refused before the record is read); it does not
 *                  decrypt (DPAPI) or parse
 *   "user"         the user does not exist (or not as a local user SID)
 * 0, -EPERM (a refusal) or -ENOMEM. The password is wiped from @ret on
 * failure; the caller wipes it after use (win_user_wipe()). */
int win_user_load(const WinSetupApi *api, const char *state_dir, int user, WinSandboxUser *ret,
		  const char **ret_step, char *why, size_t n_why);
void win_user_wipe(WinSandboxUser *u);

/* Turn a W1-write plan (its per-run synthetic SID) into the sandbox-user
 * tier's: every ACE for the per-run SID is for the recorded synthetic SID
 * instead and has a twin for the user's SID; our_sids are those two; the
 * token's restricting SIDs name the recorded synthetic SID (what the
 * runner builds, for the record and --dry-run). -EINVAL for a plan that
 * is not W1-write, -ENOMEM. */
int win_user_plan(WinPlan *plan, const WinSandboxUser *u);
