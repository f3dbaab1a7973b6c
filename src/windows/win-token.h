/* The token the child must have, and the check of the token it got:
 * after the child is created suspended, the executor reads its token back
 * (GetTokenInformation) into WinTokenObserved and refuses to resume it on
 * any difference. Some Win32 calls report success without doing anything
 * (Wine does for restricted tokens and integrity levels); this is where
 * that is caught. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "windows/win-plan.h"

typedef struct WinTokenObserved {
	bool appcontainer;           /* TokenIsAppContainer */
	char *package_sid;           /* TokenAppContainerSid, or NULL */
	char **capability_sids;      /* TokenCapabilities */
	uint32_t integrity_rid;      /* TokenIntegrityLevel's last sub-authority */
	char **restricting_sids;     /* TokenRestrictedSids */
	bool write_restricted;       /* IsTokenRestricted + the WRITE_RESTRICTED group attr */
	char **privileges;           /* TokenPrivileges names, e.g. "SeChangeNotifyPrivilege" */
} WinTokenObserved;

void win_token_observed_done(WinTokenObserved *o);

/* Fill @plan->token for @tier; @run_id names the package / synthetic SID. */
int win_token_plan(WinTier tier, const char *run_id, bool internet, WinTokenPlan *ret);
void win_token_plan_done(WinTokenPlan *t);
/* 0 if @o is what @t asks for (@logon_sid replaces the LOGON placeholder),
 * else -EPERM with what differs in @why. */
int win_token_check(const WinTokenPlan *t, const char *logon_sid, const WinTokenObserved *o,
		    char *why, size_t n_why);
