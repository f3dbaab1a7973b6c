/* What every part of libward shares: error messages, the per-thread log
 * routing, the JSON merge of policy fragments, the version. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "config.h"
#include "lib/lib-internal.h"

WARD_PUBLIC const char *ward_version(void)
{
	return WARD_VERSION;
}

int lib_error(char *buf, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, LIB_ERROR_MAX, fmt, ap);
	va_end(ap);
	if (err == 0)
		return -EINVAL;
	return err < 0 ? err : -err;
}

/* The callback of the library call running on this thread. The core's
 * log.c is one copy for the whole library (hidden inside it, separate from
 * a `ward` binary's), so its sink is set once and looks here. */
static _Thread_local LibLog current;
static pthread_once_t sink_once = PTHREAD_ONCE_INIT;

static void sink(int level, const char *message)
{
	if (current.fn && level <= current.max_level)
		current.fn(current.userdata, level, message);
}

static void sink_install(void)
{
	/* The callback filters; the core formats everything it is given. */
	log_set_level(LOG_LVL_DEBUG);
	log_set_sink(sink);
}

void lib_log_push(const LibLog *l, LibLog *ret_saved)
{
	(void)pthread_once(&sink_once, sink_install);
	*ret_saved = current;
	current = l ? *l : (LibLog){};
}

void lib_log_pop(const LibLog *saved)
{
	current = *saved;
}

void lib_log(int level, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	if (!current.fn || level > current.max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	current.fn(current.userdata, level, buf);
}

int lib_json_merge(cJSON *into, const cJSON *from)
{
	for (const cJSON *f = from->child; f; f = f->next) {
		cJSON *t = cJSON_GetObjectItemCaseSensitive(into, f->string);
		if (t && cJSON_IsObject(t) && cJSON_IsObject(f)) {
			if (lib_json_merge(t, f) < 0)
				return -ENOMEM;
			continue;
		}
		if (t && cJSON_IsArray(t) && cJSON_IsArray(f)) {
			for (const cJSON *e = f->child; e; e = e->next) {
				cJSON *c = cJSON_Duplicate(e, true);
				if (!c)
					return -ENOMEM;
				cJSON_AddItemToArray(t, c);
			}
			continue;
		}
		cJSON *c = cJSON_Duplicate(f, true);
		if (!c)
			return -ENOMEM;
		if (t)
			cJSON_ReplaceItemViaPointer(into, t, c);
		else
			cJSON_AddItemToObject(into, f->string, c);
	}
	return 0;
}
