/* Walls that prove themselves: right before execve, with every wall up,
 * the sandbox tries a small fixed set of things the policy forbids — read
 * a file it hides, create a file where it may not write, connect past the
 * network rule — and refuses to run the command (exit 125, naming the wall)
 * if any of them succeeds. It does not replace the tests; it catches a
 * wall that this host, this kernel or a bug left down on this very run.
 * Cost: three or four syscalls that fail (well under 0.1 ms).
 *
 * Prepare in the parent (walls_plan_init: paths formatted), check in the
 * child (walls_check: syscalls only, no allocation). */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linux/sandbox-step.h"

typedef struct WallsPlan {
	char read_path[PATH_MAX];  /* a file the policy hides; "" to skip */
	char write_path[PATH_MAX]; /* a file to create where writing is forbidden; "" to skip */
	bool connect;              /* try a TCP connect the network rule forbids */
	uint16_t connect_port;     /* to 127.0.0.1:connect_port */
} WallsPlan;

/* The walls for a run whose state directory is @state_dir (hidden and
 * unwritable at every tier; its audit log exists by the time the run
 * starts). @net_confined: the tier holds TCP connect to @allowed (the
 * only ports a connect may reach), so one outside them is tried. */
int walls_plan_init(WallsPlan *w, const char *state_dir, bool net_confined,
		    const uint16_t *allowed, size_t n_allowed);

/* Child side. 0 when every wall held; -EPERM when one did not, with
 * *ret_wall (SANDBOX_STEP_WALL_READ, _WRITE, _CONNECT) and *ret_detail
 * (the path or address) set. No allocation. */
int walls_check(const WallsPlan *w, SandboxStep *ret_wall, const char **ret_detail);
