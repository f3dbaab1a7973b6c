/* What a T2 plan holds on the host, made after the plan and before the run
 * (sandbox.h's lifecycle), each by its own module:
 *   mount_plan_acquire   a missing writable cache under $HOME, commit
 *                        mode's git staging layers;
 *   root_view_acquire    a root caller's idmapped trees (and the masks'
 *                        scan joined);
 *   limits_acquire       the run's cgroup (v2, or root's v1 fallback).
 * Then the protection lists are recomputed: the plan predicted the cgroup
 * and the idmapping, acquire knows. sandbox_plan_free releases it all
 * (limits_plan_free removes the cgroup, git_stage_done the staging dirs). */
#include <errno.h>
#include <stdlib.h>

#include "common/cleanup.h"
#include "linux/sandbox-internal.h"

int sandbox_acquire(SandboxPlan *plan, SandboxError *reterr)
{
	_cleanup_free_ char *errpath = NULL;
	int r;

	if (!plan)
		return sandbox_error_set(reterr, SANDBOX_STEP_PLAN, EINVAL, "no plan");
	if (plan->acquired)
		return 0;
	r = mount_plan_acquire(&plan->mounts, &errpath);
	if (r < 0)
		return sandbox_error_set(reterr, SANDBOX_STEP_GIT, r,
					 "making the staging layer for \"git\": \"commit\" in '%s'",
					 errpath ? errpath : "?");
	if (plan->root_view) {
		r = root_view_acquire(&plan->mounts, &plan->root_idmapped);
		if (r < 0)
			return sandbox_error_set(reterr, SANDBOX_STEP_ROOT_VIEW, r,
						 "preparing the view for a root caller (idmapped trees, masks)");
	}
	r = limits_acquire(plan->limits);
	if (r < 0)
		return sandbox_error_set(reterr, SANDBOX_STEP_LIMITS, r,
					 "creating the run's cgroup");
	r = sandbox_plan_list_protections(plan);
	if (r < 0)
		return sandbox_error_set(reterr, SANDBOX_STEP_PLAN, r, "out of memory");
	plan->acquired = true;
	return 0;
}
