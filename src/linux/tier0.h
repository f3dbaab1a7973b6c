/* Tier 0: no isolation, only when asked for (--tier 0). The command runs in
 * the workspace with the filtered environment, in ward's own process group,
 * under a supervisor that is a child subreaper: when the timeout expires,
 * when the command ends and when ward's parent dies, everything it started
 * (double-forked grandchildren included) is killed. It is not a
 * sandbox: nothing here limits what the command reads, writes or reaches. */
#pragma once

#include <stdint.h>

#include "linux/sandbox.h"

/* Run @argv (PATH lookup with @envp) in @workspace; @timeout_s 0 for none;
 * @parent: the process whose death ends the run (0: not watched).
 * Returns 0 and fills @ret when the command ran or failed to start with an
 * exit code (126/127); < 0 only when the supervisor itself failed (fork). */
int tier0_run(char *const *argv, char *const *envp, const char *workspace, uint64_t timeout_s,
	      pid_t parent, SandboxResult *ret);
