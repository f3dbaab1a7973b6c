/* Diagnostics on stderr, prefixed "ward: ". Not the audit log (src/audit/).
 * The *_errno variants set errno for %m and return the (negative) error. */
#pragma once

#include <errno.h>
#include "common/macro.h"

enum {
	LOG_LVL_ERROR = 3,
	LOG_LVL_WARNING = 4,
	LOG_LVL_INFO = 6,
	LOG_LVL_DEBUG = 7,
};

void log_set_level(int level);
/* Send messages to @fn instead of stderr (NULL: stderr again). libward sets
 * it once: a library never prints, it hands messages to its caller. */
typedef void (*LogSinkFn)(int level, const char *message);
void log_set_sink(LogSinkFn fn);
int log_get_level(void);
int log_parse_level(const char *s);

void log_msg(int level, const char *fmt, ...) _printf_(2, 3);
int log_msg_errno(int level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_LVL_WARNING, __VA_ARGS__)
#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_debug_errno(e, ...) log_msg_errno(LOG_LVL_DEBUG, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_msg_errno(LOG_LVL_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...) log_msg_errno(LOG_LVL_ERROR, e, __VA_ARGS__)
/* A "Hint: ..." line, printed at error level, after the error it explains. */
#define log_hint(...) log_msg(LOG_LVL_ERROR, "Hint: " __VA_ARGS__)
