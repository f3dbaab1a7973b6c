/* Token plans per tier and their read-back check. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strv.h"
#include "windows/win-token.h"

void win_token_observed_done(WinTokenObserved *o)
{
	free(o->package_sid);
	strv_free(o->capability_sids);
	strv_free(o->restricting_sids);
	strv_free(o->privileges);
	*o = (WinTokenObserved){ 0 };
}

void win_token_plan_done(WinTokenPlan *t)
{
	strv_free(t->capabilities);
	strv_free(t->capability_sids);
	strv_free(t->restricting_sids);
	*t = (WinTokenPlan){ 0 };
}

static int add_sid(char ***l, const WinSid *sid)
{
	char s[WIN_SID_STRING_MAX];

	win_sid_format(sid, s);
	return strv_extend(l, s);
}

int win_token_plan(WinTier tier, const char *run_id, bool internet, WinTokenPlan *ret)
{
	WinTokenPlan t = { 0 };
	char name[64];
	WinSid sid;
	int r = 0;

	switch (tier) {
	case WIN_TIER_W0:
		break;
	case WIN_TIER_W1:
		/* Every privilege but SeChangeNotify goes; low integrity makes
		 * every medium object unwritable (no write-up). */
		t.restricted = true;
		t.disable_max_privilege = true;
		t.integrity_rid = 4096;
		break;
	case WIN_TIER_W1_WRITE:
		/* A write needs the user's own access and, separately, access
		 * for one of the restricting SIDs: Everyone (what the machine
		 * lets anyone write: temp dirs), the logon SID (the session's
		 * objects), and the synthetic SID that only ward's ACEs name. */
		snprintf(name, sizeof(name), "ward.sandbox-write.%s", run_id);
		if (win_sid_capability(name, &sid) < 0)
			return -EINVAL;
		t.restricted = t.write_restricted = t.disable_max_privilege = true;
		t.integrity_rid = 8192;
		if (strv_extend(&t.restricting_sids, WIN_SID_EVERYONE) < 0 ||
		    strv_extend(&t.restricting_sids, WIN_SID_LOGON_PLACEHOLDER) < 0 ||
		    add_sid(&t.restricting_sids, &sid) < 0)
			r = -ENOMEM;
		break;
	case WIN_TIER_W2:
		t.appcontainer = true;
		snprintf(t.package_name, sizeof(t.package_name), "ward.run.%s", run_id);
		if (win_sid_appcontainer(t.package_name, &sid) < 0)
			return -EINVAL;
		win_sid_format(&sid, t.package_sid);
		t.integrity_rid = 4096; /* AppContainer tokens are low integrity */
		/* internetClient only when the network class allows direct
		 * connections: without it the OS refuses every socket out. */
		if (internet && (strv_extend(&t.capabilities, "internetClient") < 0 ||
				 win_sid_capability("internetClient", &sid) < 0 ||
				 add_sid(&t.capability_sids, &sid) < 0))
			r = -ENOMEM;
		break;
	case _WIN_TIER_MAX:
	case _WIN_TIER_INVALID:
	default:
		return -EINVAL;
	}
	if (r < 0) {
		win_token_plan_done(&t);
		return r;
	}
	*ret = t;
	return 0;
}

/* The same set of SIDs, order free; LOGON in @want stands for @logon. */
static bool same_set(char *const *want, char *const *got, const char *logon)
{
	if (strv_length(want) != strv_length(got))
		return false;
	STRV_FOREACH(w, want) {
		const char *s = strcmp(*w, WIN_SID_LOGON_PLACEHOLDER) == 0 ? logon : *w;
		bool found = false;

		if (!s)
			return false;
		STRV_FOREACH(g, got)
			if (strcmp(s, *g) == 0)
				found = true;
		if (!found)
			return false;
	}
	return true;
}

int win_token_check(const WinTokenPlan *t, const char *logon_sid, const WinTokenObserved *o,
		    char *why, size_t n_why)
{
	if (t->appcontainer != o->appcontainer) {
		snprintf(why, n_why, "the child's token %s an AppContainer token",
			 o->appcontainer ? "is" : "is not");
		return -EPERM;
	}
	if (t->appcontainer && (!o->package_sid || strcmp(o->package_sid, t->package_sid) != 0)) {
		snprintf(why, n_why, "the child's AppContainer SID is %s, not %s",
			 o->package_sid ? o->package_sid : "missing", t->package_sid);
		return -EPERM;
	}
	if (!same_set(t->capability_sids, o->capability_sids, NULL)) {
		snprintf(why, n_why, "the child holds %zu capabilities, the plan %zu (or others)",
			 strv_length(o->capability_sids), strv_length(t->capability_sids));
		return -EPERM;
	}
	if (t->integrity_rid && o->integrity_rid != t->integrity_rid) {
		snprintf(why, n_why, "the child runs at integrity level %u, the plan says %u",
			 (unsigned)o->integrity_rid, (unsigned)t->integrity_rid);
		return -EPERM;
	}
	if (t->restricted && !same_set(t->restricting_sids, o->restricting_sids, logon_sid)) {
		snprintf(why, n_why, "the child's restricting SIDs (%zu) are not the plan's (%zu)",
			 strv_length(o->restricting_sids), strv_length(t->restricting_sids));
		return -EPERM;
	}
	if (!t->restricted && !t->appcontainer && o->restricting_sids && o->restricting_sids[0]) {
		snprintf(why, n_why, "the child's token is restricted where the plan says not");
		return -EPERM;
	}
	if (t->write_restricted != o->write_restricted) {
		snprintf(why, n_why, "the child's token %s write-restricted",
			 o->write_restricted ? "is" : "is not");
		return -EPERM;
	}
	if (t->disable_max_privilege)
		STRV_FOREACH(p, o->privileges)
			if (strcmp(*p, "SeChangeNotifyPrivilege") != 0) {
				snprintf(why, n_why, "the child still holds %s", *p);
				return -EPERM;
			}
	return 0;
}
