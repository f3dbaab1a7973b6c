/* `ward run`'s options as a RunRequest (run/run.h): the flags that set
 * policy become a policy document merged last ("<command line>"), so they
 * get the same validation and messages as a file. */
#pragma once

#include "cli/cli-args.h"
#include "run/run.h"

/* Fill @req from @o; the strings point into @o, the overrides document
 * into *@ret_overrides (caller frees). 0 or -ENOMEM. */
int cli_run_request(const RunOptions *o, pid_t parent, RunRequest *req, char **ret_overrides);
