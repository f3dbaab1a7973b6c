/* The audit log: one JSON object per line (JSONL), schema version "v": 1,
 * appended to <state dir>/audit.jsonl with one write(2) per line, so that the
 * supervisor, the proxy process and review commands can share it; rotated by
 * size (audit.jsonl.1, .2, ...). Optionally every line is also sent, live, to
 * an events fd (`ward run --events-fd`). Not the debug log. Event schemas are
 * in docs/audit.md. */
#pragma once

#include <stdint.h>

#include <cjson/cJSON.h>

typedef struct AuditLog AuditLog;

/* Rotation: the file is renamed to audit.jsonl.1 (.1 to .2, ..., the oldest
 * dropped) before a line would take it past max_size. */
typedef struct AuditRotation {
	uint64_t max_size; /* bytes; 0: never rotate */
	unsigned keep;     /* rotated files kept, 1..AUDIT_KEEP_MAX */
} AuditRotation;

#define AUDIT_MAX_SIZE_DEFAULT (32ULL << 20)
#define AUDIT_KEEP_DEFAULT 3U
#define AUDIT_KEEP_MAX 100U

/* The rotation from the environment's WARD_AUDIT_MAX_SIZE (bytes with an
 * optional K, M or G suffix, 0: never) and WARD_AUDIT_KEEP (a count), either
 * or both unset: the defaults. -EINVAL with a message in @reterr (caller
 * frees) when one is set and invalid. Pure but for getenv. */
int audit_rotation_from_env(AuditRotation *ret, char **reterr);

/* Open (creating, mode 0600) <state_dir>/audit.jsonl for appending, with the
 * rotation from the environment (an invalid setting: -EINVAL, and the
 * reason on ward's log).
 * @session may be NULL; when set every event carries "session". */
int audit_open(const char *state_dir, const char *session, AuditLog **ret);
AuditLog *audit_close(AuditLog *a);
void audit_set_rotation(AuditLog *a, const AuditRotation *rot);
/* Write one event. Adds "v", "ts" (RFC 3339 UTC with ms), "event" and
 * "session" to @fields, which the call takes ownership of (may be NULL).
 * The line is written whole or not at all: -ENOSPC (file system full),
 * -EFBIG (file size limit), other -errno; a failure is counted. The line
 * also goes to the events fd, if any (a failure there is counted apart,
 * audit_events_lost, and does not change the return value). */
int audit_write(AuditLog *a, const char *event, cJSON *fields);
/* How many records this log failed to write; *@ret_last_error (may be NULL)
 * gets the last failure's -errno when there was one. */
unsigned audit_failures(const AuditLog *a, int *ret_last_error);
/* The underlying fd (O_APPEND|O_CLOEXEC). Its number stays the same across
 * rotations, so a forked process (the proxy, the quarantine guard) keeps it
 * open by number. */
int audit_fd(const AuditLog *a);

/* Tee every later line to @fd as well (a pipe, socket, file or terminal
 * open for writing), live. @fd is not taken: the log uses its own
 * close-on-exec descriptor, and a pipe gets a non-blocking one of its own.
 * A reader that is slow or gone never blocks the run for long nor kills it
 * (no SIGPIPE): lines it cannot take are dropped and counted, in every
 * process that shares the log after a fork. -EBADF when @fd is not open for
 * writing, -EEXIST when an events fd is set already. */
int audit_set_events_fd(AuditLog *a, int fd);
/* The log's own events descriptor (to keep it across a fork that closes
 * other fds), or -EBADF when none is set. */
int audit_events_fd(const AuditLog *a);
/* A second live copy, for log shipping (WARD_AUDIT_STREAM, the managed
 * ceiling's audit.stream: docs/audit.md): the same rules as the events fd,
 * its losses not counted in audit_events_lost. -EEXIST when set already. */
int audit_set_stream_fd(AuditLog *a, int fd);
int audit_stream_fd(const AuditLog *a);
/* Lines that did not reach the events fd, counted in every process sharing
 * this log; *@ret_error (may be NULL) gets why the stream stopped (-EPIPE:
 * the reader is gone; -ETIMEDOUT: it stopped reading in the middle of a
 * line) or 0 while it still runs. */
unsigned audit_events_lost(const AuditLog *a, int *ret_error);

/* A new random session id: 16 lowercase hex characters. */
int audit_new_session_id(char ret[17]);
