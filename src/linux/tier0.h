/* Tier 0: no isolation, only when asked for (--tier 0). The command runs in
 * the workspace with the filtered environment, in ward's own process group,
 * under a supervisor that is a child subreaper: when the timeout expires,
 * when the command ends and when ward's parent dies, everything it started
 * (double-forked grandchildren included) is killed. It is not a
 * sandbox: nothing here limits what the command reads, writes or reaches. */
#pragma once

#include "run/backend.h"

/* Run @in->argv (PATH lookup with @in->envp) in @in->workspace, with
 * @in->stdio on fds 0..2 where given; @in->timeout_s 0 for none;
 * @in->parent_pid: the process whose death ends the run (0: not watched).
 * Returns 0 and fills @ret when the command ran or failed to start with an
 * exit code (125 for stdio or chdir, 126/127); < 0 only when the supervisor
 * itself failed (fork). */
int tier0_run(const BackendInput *in, BackendResult *ret);

/* The tier-0 entry of the backend table. */
extern const Backend backend_tier0;
