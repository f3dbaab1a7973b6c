#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"

static int log_level = LOG_LVL_WARNING;
static LogSinkFn log_sink;

void log_set_sink(LogSinkFn fn)
{
	log_sink = fn;
}

void log_set_level(int level)
{
	log_level = level;
}

int log_get_level(void)
{
	return log_level;
}

int log_parse_level(const char *s)
{
	static const struct {
		const char *name;
		int level;
	} table[] = {
		{ "error", LOG_LVL_ERROR },
		{ "warning", LOG_LVL_WARNING },
		{ "info", LOG_LVL_INFO },
		{ "debug", LOG_LVL_DEBUG },
	};
	for (size_t i = 0; i < ELEMENTSOF(table); i++)
		if (strcasecmp(s, table[i].name) == 0)
			return table[i].level;
	return -EINVAL;
}

__attribute__((format(printf, 2, 0))) static void log_vmsg(int level, const char *fmt,
								 va_list ap)
{
	char buf[2048];
	int n;

	if (level > log_level)
		return;
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return;
	if (log_sink) {
		log_sink(level, buf);
		return;
	}
	/* One write per line so that concurrent writers do not interleave. */
	fprintf(stderr, "ward: %s\n", buf);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
	errno = saved;
}

int log_msg_errno(int level, int error, const char *fmt, ...)
{
	va_list ap;

	errno = error < 0 ? -error : error;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
	return error < 0 ? error : -error;
}
