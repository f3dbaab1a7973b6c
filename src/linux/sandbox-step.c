/* The step names (sandbox-step.h): the one table. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "linux/sandbox-step.h"

/* clang-format off */
static const char *const step_names[_SANDBOX_STEP_MAX] = {
	[SANDBOX_STEP_NONE]            = "",
	[SANDBOX_STEP_PLAN]            = "plan",
	[SANDBOX_STEP_LIMITS]          = "limits",
	[SANDBOX_STEP_HOST_PORTS]      = "host-ports",
	[SANDBOX_STEP_CAPTURE]         = "capture",
	[SANDBOX_STEP_GIT]             = "git",
	[SANDBOX_STEP_PROTECTED]       = "protected",
	[SANDBOX_STEP_WORKSPACE]       = "workspace",
	[SANDBOX_STEP_ROOT_VIEW]       = "root-view",
	[SANDBOX_STEP_CLONE]           = "clone",
	[SANDBOX_STEP_PROXY]           = "proxy",
	[SANDBOX_STEP_INIT]            = "init",
	[SANDBOX_STEP_STDIO]           = "stdio",
	[SANDBOX_STEP_UID_MAP]         = "uid-map",
	[SANDBOX_STEP_USER_SHARES]     = "user-shares",
	[SANDBOX_STEP_HOSTNAME]        = "hostname",
	[SANDBOX_STEP_LOOPBACK]        = "loopback",
	[SANDBOX_STEP_PROXY_LISTENERS] = "proxy-listeners",
	[SANDBOX_STEP_MOUNT_BASE]      = "mount-base",
	[SANDBOX_STEP_MOUNT_VIEW]      = "mount-view",
	[SANDBOX_STEP_PIVOT]           = "pivot",
	[SANDBOX_STEP_CHDIR]           = "chdir",
	[SANDBOX_STEP_PTY]             = "pty",
	[SANDBOX_STEP_RLIMITS]         = "rlimits",
	[SANDBOX_STEP_DROP_CAPS]       = "drop-caps",
	[SANDBOX_STEP_NO_NEW_PRIVS]    = "no-new-privs",
	[SANDBOX_STEP_LANDLOCK]        = "landlock",
	[SANDBOX_STEP_SECCOMP]         = "seccomp",
	[SANDBOX_STEP_WALL_READ]       = "wall-read",
	[SANDBOX_STEP_WALL_WRITE]      = "wall-write",
	[SANDBOX_STEP_WALL_CONNECT]    = "wall-connect",
	[SANDBOX_STEP_NON_DUMPABLE]    = "non-dumpable",
	[SANDBOX_STEP_CLOSE_FDS]       = "close-fds",
	[SANDBOX_STEP_FORK]            = "fork",
	[SANDBOX_STEP_TERMINAL]        = "terminal",
	[SANDBOX_STEP_EXEC]            = "exec",
};
/* clang-format on */

const char *sandbox_step_to_string(SandboxStep s)
{
	if (s < 0 || s >= _SANDBOX_STEP_MAX)
		return NULL;
	return step_names[s];
}

int sandbox_error_set(WardError *e, SandboxStep step, int err, const char *fmt, ...)
{
	const char *name = sandbox_step_to_string(step);
	va_list ap;

	err = abs(err);
	if (e) {
		snprintf(e->step, sizeof(e->step), "%s", name ? name : "");
		va_start(ap, fmt);
		vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
		va_end(ap);
		e->error = err;
	}
	return err ? -err : -EINVAL;
}
