/* What a mount plan needs to exist on the host before the run, made after
 * the plan (mount-plan.h: mount_plan_build records it, creates nothing):
 *   - a writable cache the policy names under $HOME that does not exist
 *     yet (tools make theirs on first use, and a bind needs a source);
 *   - commit mode's staging layers (git-stage.h) and the options of the
 *     overlays that name them.
 * Not the cgroups (limits.c) nor the idmapped trees (root-view.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "linux/mount-plan.h"

/* Make the cache @s binds; it stays skipped (not mounted: fewer rights)
 * when that fails or when what mkdir made is not where the plan said (a
 * symlink appeared on the way since). */
static void acquire_cache(MountSpec *s)
{
	_cleanup_free_ char *real = NULL;
	const char *planned = s->src + strlen(MP_OLDROOT);

	s->create = false;
	s->skip = true;
	if (mkdir_p(s->view, 0700) < 0)
		return;
	real = realpath(s->view, NULL);
	if (!real || strcmp(real, planned) != 0)
		return;
	s->skip = false;
}

static MountSpec *find_view(MountPlan *plan, const char *view)
{
	for (size_t i = 0; i < plan->n_specs; i++)
		if (strcmp(plan->specs[i].view, view) == 0)
			return &plan->specs[i];
	return NULL;
}

static int acquire_git_stage(MountPlan *plan, GitStage *st, char **reterr_path)
{
	MountSpec *s = find_view(plan, st->gitdir);
	char *data = NULL;
	int r;

	if (!s || s->kind != MOUNT_OVERLAY)
		return -EINVAL;
	if (s->data)
		return 0; /* acquired already */
	r = git_stage_acquire(st, &plan->git.notes);
	if (r < 0) {
		*reterr_path = strdup(st->root ? st->root : st->base);
		return r;
	}
	if (asprintf(&data,
		     "lowerdir=" MP_OLDROOT "%s,upperdir=" MP_OLDROOT "%s,workdir=" MP_OLDROOT
		     "%s,userxattr",
		     st->gitdir, st->upper, st->work) < 0)
		return -ENOMEM;
	s->data = data;
	return 0;
}

int mount_plan_acquire(MountPlan *plan, char **reterr_path)
{
	int r;

	for (size_t i = 0; i < plan->n_specs; i++)
		if (plan->specs[i].create)
			acquire_cache(&plan->specs[i]);
	for (size_t i = 0; i < plan->n_git_stages; i++) {
		r = acquire_git_stage(plan, &plan->git_stages[i], reterr_path);
		if (r < 0)
			return r;
	}
	return 0;
}
