/* ward.exe's tiers as the run module numbers them (RunRequest.tier, the
 * result's and the audit log's "tier"): W0, W1 and W2 share the numbers of
 * Linux's tiers 0, 1 and 2 (no isolation / the process's own restrictions
 * / a view of its own), so a policy's "tier" means the same on both;
 * W1-write, Windows's own variant, is 4 (3 is the micro-VM tier). The
 * start event's "windows_tier" names the tier ("W1-write"). */
#pragma once

#include "windows/win-plan.h"

enum {
	WIN_RUN_TIER_W0 = 0,
	WIN_RUN_TIER_W1 = 1,
	WIN_RUN_TIER_W2 = 2,
	WIN_RUN_TIER_W1_WRITE = 4,
	WIN_RUN_TIER_USER = 5,   /* the sandbox-user tier (seed 2), "sandbox-user" */
};

/* The run module's number of @t; -EINVAL for none. */
int win_run_tier(WinTier t);
/* The WinTier of run-module tier @tier; _WIN_TIER_INVALID for none. */
WinTier win_tier_of_run(int tier);

/* --dry-run: the plan a Windows backend's plan() made, as text (the
 * plan's lines, then "needs-helper PATH" for each path only the
 * privileged helper may change). Caller frees; NULL on OOM. */
struct BackendPlan;
char *win_backend_plan_text(const struct BackendPlan *b);

/* W2 with network none whose WFP walls cannot be put up on this host (the
 * plan's trial failed): the run reports its network row partly held. */
bool win_backend_walls_missing(const struct BackendPlan *b);

/* W2 with the proxy: its refusals by policy as the result's facts
 * ("net_refused", "net_refused_more", as on Linux) into @facts, and how
 * many in *@ret_refused. 0, or -ENOMEM. */
#include <cjson/cJSON.h>
int win_backend_net_facts(struct BackendPlan *b, cJSON *facts, unsigned *ret_refused);
