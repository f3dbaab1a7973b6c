/* Reading the audit log back (`ward log`): the time syntax of --since, the
 * filters, and one readable table row per event. Pure: no I/O, no clock
 * (the caller passes "now"), so the unit tests drive it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

typedef struct AuditFilter {
	const char *session; /* a session id or a prefix of one; NULL: any */
	char **events;       /* event names (strv); NULL: any */
	bool has_since;
	int64_t since_ms;    /* ms since the epoch (UTC): events at or after it */
} AuditFilter;

/* RFC 3339 ("2026-12-03T09:10:11Z", "2026-12-03T10:10:11.5+01:00", 't' or
 * ' ' for 'T', 'z' for 'Z') or a date alone ("2026-12-03": midnight UTC) ->
 * ms since the epoch. -EINVAL when it is not one. */
int audit_parse_rfc3339(const char *s, int64_t *ret_ms);
/* --since: RFC 3339 as above, or a time before @now_ms: a whole number and
 * a unit, s, m, h, d or w ("90s", "10m", "2h", "7d"). */
int audit_parse_since(const char *s, int64_t now_ms, int64_t *ret_ms);
/* Whether @name is an event the log documents (docs/audit.md). */
bool audit_event_known(const char *name);
/* The documented events, comma-separated (for messages). */
extern const char audit_event_names[];
/* Whether @event (one parsed line) passes @f. A line without a valid "ts"
 * fails a --since filter. */
bool audit_filter_match(const AuditFilter *f, const cJSON *event);
/* One table row for @event: "TIME SESSION EVENT DETAILS", every string
 * from the log escaped so that no control character or invalid UTF-8
 * reaches the terminal. Caller frees; NULL on OOM. */
char *audit_format_row(const cJSON *event);
/* The header matching audit_format_row. */
extern const char audit_table_header[];
