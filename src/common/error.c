#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

int ward_error_set(WardError *e, const char *step, int err, const char *fmt, ...)
{
	va_list ap;

	err = abs(err);
	if (e) {
		snprintf(e->step, sizeof(e->step), "%s", step ? step : "");
		va_start(ap, fmt);
		vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
		va_end(ap);
		e->error = err;
	}
	return err ? -err : -EINVAL;
}
