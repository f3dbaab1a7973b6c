/* One-line explanations around a `ward run`, on stderr: a PATH entry the
 * sandbox does not show (at start), what the proxy refused and whether the
 * command tried to reach the network it does not have (at the end). They
 * are hints for a person reading a failed run, never a decision; the audit
 * log has the details. */
#pragma once

#include <cjson/cJSON.h>

#include "run/backend.h"
#include "policy/policy.h"

/* The PATH entries of @envp that exist on the host but are not executable
 * in the sandbox's view (under no fs.read_exec/read_write entry nor the
 * workspace, or under fs.deny), each with what would expose it: a preset
 * that covers it or an fs.read_exec entry. Returns them as a JSON array for
 * the start event (caller frees), or NULL when none. */
cJSON *run_hints_path(const WardPolicy *pol, char *const *envp, const char *home,
		      const char *workspace);
/* The same as one line for the warning: "PATH (FIX), PATH (FIX)". */
void run_hints_path_line(const cJSON *hidden, char *buf, size_t n);

/* After the run: one line when the proxy refused connections (records on
 * @report_rd, -1 for none), and, when the command failed, one line when
 * the namespace's counters show it tried to reach what the sandbox has
 * no route to; appended to @ret_lines for the caller to show. @see says
 * where the details are (the audit log). The same facts go into
 * @exit_event ("net_refused", "net_attempts") for the audit log and
 * --result. */
void run_hints_after(const WardPolicy *pol, const BackendResult *res, int report_rd,
		     const char *see, cJSON *exit_event, char ***ret_lines);
