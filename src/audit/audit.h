/* The audit log: one JSON object per line (JSONL), schema version "v": 1,
 * appended to <state dir>/audit.jsonl with one write(2) per line, so that the
 * supervisor, the proxy process and review commands can share it. Not the
 * debug log. Event schemas are in docs/audit.md. */
#pragma once

#include <cjson/cJSON.h>

typedef struct AuditLog AuditLog;

/* Open (creating, mode 0600) <state_dir>/audit.jsonl for appending.
 * @session may be NULL; when set every event carries "session". */
int audit_open(const char *state_dir, const char *session, AuditLog **ret);
AuditLog *audit_close(AuditLog *a);
/* Write one event. Adds "v", "ts" (RFC 3339 UTC with ms), "event" and
 * "session" to @fields, which the call takes ownership of (may be NULL).
 * The line is written whole or not at all: -ENOSPC (file system full),
 * -EFBIG (file size limit), other -errno; a failure is counted. */
int audit_write(AuditLog *a, const char *event, cJSON *fields);
/* How many records this log failed to write; *@ret_last_error (may be NULL)
 * gets the last failure's -errno when there was one. */
unsigned audit_failures(const AuditLog *a, int *ret_last_error);
/* The underlying fd (O_APPEND|O_CLOEXEC), e.g. to check it survives a fork. */
int audit_fd(const AuditLog *a);

/* A new random session id: 16 lowercase hex characters. */
int audit_new_session_id(char ret[17]);
