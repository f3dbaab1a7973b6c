/* The steps of a T2 run, as one enum: what SandboxError/SandboxResult say
 * failed, with one name table for messages, --result and the audit log.
 * Plan and acquire steps come first, then the supervisor's, then pid 1's in
 * the order its table runs them (sandbox-init.c). Names are stable: they
 * are part of the result and audit schemas. */
#pragma once

#include <errno.h>

#include "common/error.h"
#include "common/macro.h"

typedef enum SandboxStep {
	SANDBOX_STEP_NONE,            /* "" */
	/* plan and acquire (sandbox-plan.c, sandbox-acquire.c) */
	SANDBOX_STEP_PLAN,            /* "plan" */
	SANDBOX_STEP_LIMITS,          /* "limits" */
	SANDBOX_STEP_HOST_PORTS,      /* "host-ports" */
	SANDBOX_STEP_CAPTURE,         /* "capture" (network.capture_ports) */
	SANDBOX_STEP_GIT,             /* "git" */
	SANDBOX_STEP_PROTECTED,       /* "protected" */
	SANDBOX_STEP_WORKSPACE,       /* "workspace" */
	SANDBOX_STEP_ROOT_VIEW,       /* "root-view" */
	/* the supervisor (sandbox-run.c) */
	SANDBOX_STEP_CLONE,           /* "clone" */
	SANDBOX_STEP_PROXY,           /* "proxy" */
	SANDBOX_STEP_INIT,            /* "init" */
	/* pid 1's step table, in order (sandbox-init.c) */
	SANDBOX_STEP_STDIO,           /* "stdio" (also the supervisor's relay) */
	SANDBOX_STEP_UID_MAP,         /* "uid-map" */
	SANDBOX_STEP_USER_SHARES,     /* "user-shares" */
	SANDBOX_STEP_HOSTNAME,        /* "hostname" */
	SANDBOX_STEP_LOOPBACK,        /* "loopback" */
	SANDBOX_STEP_PROXY_LISTENERS, /* "proxy-listeners" */
	SANDBOX_STEP_MOUNT_BASE,      /* "mount-base" */
	SANDBOX_STEP_MOUNT_VIEW,      /* "mount-view" */
	SANDBOX_STEP_PIVOT,           /* "pivot" */
	SANDBOX_STEP_CHDIR,           /* "chdir" (also tier 0's) */
	SANDBOX_STEP_PTY,             /* "pty" */
	SANDBOX_STEP_RLIMITS,         /* "rlimits" */
	SANDBOX_STEP_DROP_CAPS,       /* "drop-caps" */
	SANDBOX_STEP_NO_NEW_PRIVS,    /* "no-new-privs" */
	SANDBOX_STEP_LANDLOCK,        /* "landlock" (also building the rules) */
	SANDBOX_STEP_SECCOMP,         /* "seccomp" (also compiling the filter) */
	/* the wall check before execve (walls.h): a wall that did not hold */
	SANDBOX_STEP_WALL_READ,       /* "wall-read" */
	SANDBOX_STEP_WALL_WRITE,      /* "wall-write" */
	SANDBOX_STEP_WALL_CONNECT,    /* "wall-connect" */
	/* pid 1 after the table */
	SANDBOX_STEP_NON_DUMPABLE,    /* "non-dumpable" */
	SANDBOX_STEP_CLOSE_FDS,       /* "close-fds" */
	SANDBOX_STEP_FORK,            /* "fork" */
	SANDBOX_STEP_TERMINAL,        /* "terminal" */
	SANDBOX_STEP_EXEC,            /* "exec": the command could not be executed */
	_SANDBOX_STEP_MAX,
	_SANDBOX_STEP_INVALID = -EINVAL,
} SandboxStep;

/* The step's stable name; NULL when out of range. */
const char *sandbox_step_to_string(SandboxStep s);

/* ward_error_set() with the step's name: fills @e (may be NULL) and
 * returns -abs(@err) (-EINVAL for 0). */
_printf_(4, 5) int sandbox_error_set(WardError *e, SandboxStep step, int err, const char *fmt,
				     ...);
