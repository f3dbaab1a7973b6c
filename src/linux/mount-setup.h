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
