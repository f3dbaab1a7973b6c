/* libward's internals: the objects behind the opaque public types and the
 * helpers the lib-*.c files share. Nothing here is exported: the library is
 * built with hidden visibility and a version script (libward.sym). */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/macro.h"
#include "policy/policy.h"
#include "ward/ward.h"

#define LIB_ERROR_MAX 1024

struct ward_policy {
	char *file;          /* ward_policy_load_file; NULL: the user's file */
	char **presets;      /* in the order added */
	cJSON *overrides;    /* fragments and setters, merged into one document */
	WardPolicy *preview; /* presets + file + overrides, to check each call */
	int load_error;      /* why preview could not be built (-errno), or 0 */
	char error[LIB_ERROR_MAX];
};

/* The log callback of one object. */
typedef struct LibLog {
	ward_log_fn fn;
	void *userdata;
	int max_level;
} LibLog;

/* Format a message into @buf (LIB_ERROR_MAX) and return -abs(@err)
 * (-EINVAL when @err is 0), so that callers can `return lib_error(...)`. */
_printf_(3, 4) int lib_error(char *buf, int err, const char *fmt, ...);

/* Route the core's log messages (log.h) of the calling thread to @l until
 * lib_log_pop(); messages of other threads are not affected. */
void lib_log_push(const LibLog *l, LibLog *ret_saved);
void lib_log_pop(const LibLog *saved);
/* Log through the calling thread's current callback (if any). */
_printf_(2, 3) void lib_log(int level, const char *fmt, ...);

/* Deep-merge @from into @into as the policy merges documents: objects
 * recurse, arrays append, everything else replaces. -ENOMEM. */
int lib_json_merge(cJSON *into, const cJSON *from);

/* A copy of the policy's sources for a run (lib-policy.c). */
int lib_policy_copy_sources(const ward_policy *p, char **ret_file, char ***ret_presets,
			    cJSON **ret_overrides);
/* Merge the policy document @doc into @p's overrides after checking it
 * against the preview; the message names @what on failure. */
int lib_policy_merge_doc(ward_policy *p, const cJSON *doc);
