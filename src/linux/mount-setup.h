/* Child side of the root view: executes a MountPlan inside the new mount
 * namespace. Syscalls and stack buffers only: runs after clone(). */
#pragma once

#include "linux/mount-plan.h"

/* Failure detail: which spec failed (index) so the caller can name it. */
int mount_setup_base(const MountPlan *plan);
/* On failure @reterr_index is the failing spec, or @reterr_path the failing
 * mask of a uid-0 caller's view (root-view.c). */
int mount_setup_view(const MountPlan *plan, size_t *reterr_index, const char **reterr_path);
int mount_setup_finish(void);
/* A warm session's command (sandbox-serve.c), pid 1 of a pid namespace of
 * its own: a mount namespace of its own (a copy of the session's) where a
 * fresh /proc of that pid namespace covers the session's, with a cold
 * run's read-only entries (MOUNT_PROC_RO) and a uid-0 caller's masks
 * beneath it. Before the ruleset is built (its /proc rule is this proc's).
 * On failure @reterr_path names the path. */
int mount_setup_own_proc(const MountPlan *plan, const char **reterr_path);
