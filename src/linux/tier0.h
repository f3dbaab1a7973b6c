/* Tier 0: no isolation, only when asked for (--tier 0). The command runs in
 * the workspace with the filtered environment, in a process group of its
 * own, under a supervisor that is a child subreaper: when the timeout
 * expires, and when the command ends, everything it started (double-forked
 * grandchildren that left the group included) is killed. It is not a
 * sandbox: nothing here limits what the command reads, writes or reaches. */
#pragma once

#include <stdint.h>

#include "linux/sandbox.h"

/* Run @argv (PATH lookup with @envp) in @workspace; @timeout_s 0 for none.
 * Returns 0 and fills @ret when the command ran or failed to start with an
 * exit code (126/127); < 0 only when the supervisor itself failed (fork). */
int tier0_run(char *const *argv, char *const *envp, const char *workspace, uint64_t timeout_s,
	      SandboxResult *ret);
