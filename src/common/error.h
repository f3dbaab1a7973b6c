/* One error-detail type for every layer: which step failed, what it was
 * doing, and the errno. Policy errors are formatted into @detail
 * (policy_error_format), sandbox setup errors fill it in the child and the
 * parent reads it back, the run module reports it in --result, the audit
 * `error` event and libward (ward_run_error). */
#pragma once

#include <stdarg.h>

#include "common/macro.h"

typedef struct WardError {
	char step[64];     /* "policy", "workspace", "uid-map", "exec", ... ; "" if none */
	char detail[1024]; /* one line for a human, no trailing newline */
	int error;         /* positive errno, 0 if none applies */
} WardError;

/* Fill @e (may be NULL: then nothing). @err is a positive or negative errno
 * or 0. Returns -abs(err), or -EINVAL when @err is 0, so callers can
 * `return ward_error_set(...)`. */
_printf_(4, 5) int ward_error_set(WardError *e, const char *step, int err, const char *fmt, ...);
