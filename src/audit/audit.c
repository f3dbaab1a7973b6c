/* The JSONL audit writer. Each event is serialized in memory and appended
 * with a single write(2) on an O_APPEND fd, so that lines from several
 * processes (supervisor, proxy, review commands) never interleave.
 *
 * A full file system (or a file size limit) can make that write short: the
 * fragment is cut off again (under a write lock that every writer takes, so
 * that no other process's line is cut with it), the call fails with the
 * reason, and the log counts it (audit_failures) so the caller can say so.
 * The file never keeps half a line.
 *
 * Rotation happens under the same lock: the writer that holds it checks
 * that its fd is still the file at the path (another process may have
 * rotated it: then it reopens and tries again), and renames the file away
 * when the line would take it past the limit. Nobody can rotate between
 * that check and the write, so every line lands in the current file. */
#include <stdbool.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit-events.h"
#include "audit/audit-os.h"
#include "audit/audit.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "common/macro.h"

#define AUDIT_SCHEMA_VERSION 1

struct AuditLog {
	AuditFile file; /* <state dir>/audit.jsonl */
	char *session;
	EventStream *events;
	EventStream *stream; /* log shipping: audit_set_stream_fd() */
	unsigned failures; /* records that could not be written */
	int last_error;    /* -errno of the last failure */
};

int audit_open(const char *state_dir, const char *session, AuditLog **ret)
{
	_cleanup_free_ char *path = NULL, *err = NULL;
	AuditRotation rot;
	AuditLog *a;
	int fd, r;

	r = audit_rotation_from_env(&rot, &err);
	if (r < 0) {
		log_error("%s", err ? err : "Invalid audit log rotation setting");
		return r;
	}
	r = mkdir_p(state_dir, 0700);
	if (r < 0)
		return r;
	if (asprintf(&path, "%s/audit.jsonl", state_dir) < 0)
		return -ENOMEM;
	fd = audit_os_open(path);
	if (fd < 0)
		return fd;
	a = calloc(1, sizeof(*a));
	if (!a) {
		close(fd);
		return -ENOMEM;
	}
	a->file.fd = fd;
	a->file.path = TAKE_PTR(path);
	a->file.rot = rot;
	if (session) {
		a->session = strdup(session);
		if (!a->session) {
			audit_close(a);
			return -ENOMEM;
		}
	}
	*ret = a;
	return 0;
}

AuditLog *audit_close(AuditLog *a)
{
	if (!a)
		return NULL;
	if (a->file.fd >= 0)
		(void)close(a->file.fd);
	event_stream_free(a->events);
	event_stream_free(a->stream);
	free(a->file.path);
	free(a->session);
	free(a);
	return NULL;
}

void audit_set_rotation(AuditLog *a, const AuditRotation *rot)
{
	if (a && rot)
		a->file.rot = *rot;
}

int audit_set_events_fd(AuditLog *a, int fd)
{
	if (!a)
		return -EINVAL;
	if (a->events)
		return -EEXIST;
	return event_stream_new(fd, &a->events);
}

int audit_set_stream_fd(AuditLog *a, int fd)
{
	if (!a)
		return -EINVAL;
	if (a->stream)
		return -EEXIST;
	return event_stream_new(fd, &a->stream);
}

int audit_stream_fd(const AuditLog *a)
{
	return a && a->stream ? event_stream_fd(a->stream) : -EBADF;
}

int audit_events_fd(const AuditLog *a)
{
	return a && a->events ? event_stream_fd(a->events) : -EBADF;
}

unsigned audit_events_lost(const AuditLog *a, int *ret_error)
{
	if (ret_error)
		*ret_error = 0;
	return a ? event_stream_lost(a->events, ret_error) : 0;
}

unsigned audit_failures(const AuditLog *a, int *ret_last_error)
{
	if (!a)
		return 0;
	if (ret_last_error && a->failures)
		*ret_last_error = a->last_error;
	return a->failures;
}

int audit_fd(const AuditLog *a)
{
	return a ? a->file.fd : -EBADF;
}

int audit_write(AuditLog *a, const char *event, cJSON *fields)
{
	_cleanup_cjson_ cJSON *obj = NULL;
	_cleanup_cjson_ cJSON *f = fields;
	_cleanup_free_ char *line = NULL;
	char ts[32];
	size_t len;
	int r;

	if (!a || !event || (f && !cJSON_IsObject(f)))
		return -EINVAL;
	r = audit_os_timestamp(ts);
	if (r < 0)
		return r;

	/* The envelope comes first, so that every line starts the same way. */
	obj = cJSON_CreateObject();
	if (!obj || !cJSON_AddNumberToObject(obj, "v", AUDIT_SCHEMA_VERSION) ||
	    !cJSON_AddStringToObject(obj, "ts", ts) ||
	    !cJSON_AddStringToObject(obj, "event", event) ||
	    (a->session && !cJSON_AddStringToObject(obj, "session", a->session)))
		return -ENOMEM;

	while (f && f->child) {
		cJSON *item = cJSON_DetachItemViaPointer(f, f->child);
		const char *k = item->string;

		/* The envelope's names are reserved. */
		if (!k || strcmp(k, "v") == 0 || strcmp(k, "ts") == 0 || strcmp(k, "event") == 0 ||
		    strcmp(k, "session") == 0) {
			cJSON_Delete(item);
			continue;
		}
		cJSON_AddItemToArray(obj, item);
	}

	/* Unformatted cJSON output escapes control characters in strings, so
	 * the line holds no newline until we add one. */
	line = cJSON_PrintUnformatted(obj);
	if (!line)
		return -ENOMEM;
	len = strlen(line);
	{
		char *l2 = realloc(line, len + 2);
		if (!l2)
			return -ENOMEM;
		line = l2;
	}
	line[len++] = '\n';
	line[len] = '\0';

	r = audit_os_append(&a->file, line, len);
	if (r < 0) {
		a->failures++;
		a->last_error = r;
	}
	/* After the file's lock is released: a slow reader of the events
	 * must not hold up the other runs writing the log. */
	event_stream_write(a->events, line, len);
	event_stream_write(a->stream, line, len);
	return r;
}

int audit_new_session_id(char ret[17])
{
	uint8_t b[8];
	int r = audit_os_random(b, sizeof(b));

	if (r < 0)
		return r;
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(ret + 2 * i, 3, "%02x", b[i]);
	ret[16] = '\0';
	return 0;
}

static int parse_size(const char *s, uint64_t *ret)
{
	uint64_t v = 0, mult = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	switch (*p) {
	case 'k':
	case 'K':
		mult = 1ULL << 10;
		p++;
		break;
	case 'm':
	case 'M':
		mult = 1ULL << 20;
		p++;
		break;
	case 'g':
	case 'G':
		mult = 1ULL << 30;
		p++;
		break;
	default:
		break;
	}
	if (*p == 'i' && mult > 1 && p[1] == 'B')
		p += 2;
	else if (*p == 'B' && mult > 1)
		p++;
	if (*p)
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*ret = v * mult;
	return 0;
}

int audit_rotation_from_env(AuditRotation *ret, char **reterr)
{
	AuditRotation rot = { .max_size = AUDIT_MAX_SIZE_DEFAULT, .keep = AUDIT_KEEP_DEFAULT };
	const char *size = getenv("WARD_AUDIT_MAX_SIZE"), *keep = getenv("WARD_AUDIT_KEEP");

	*reterr = NULL;
	if (size && parse_size(size, &rot.max_size) < 0) {
		if (asprintf(reterr,
			     "WARD_AUDIT_MAX_SIZE='%s' is not a size: bytes with an optional K, M or G "
			     "suffix (64M), or 0 for no rotation",
			     size) < 0)
			*reterr = NULL;
		return -EINVAL;
	}
	if (keep) {
		uint64_t k;
		if (!keep[0] || strspn(keep, "0123456789") != strlen(keep) ||
		    parse_size(keep, &k) < 0 || k < 1 || k > AUDIT_KEEP_MAX) {
			if (asprintf(reterr,
				     "WARD_AUDIT_KEEP='%s' is not a count of rotated files from 1 to %u",
				     keep, AUDIT_KEEP_MAX) < 0)
				*reterr = NULL;
			return -EINVAL;
		}
		rot.keep = (unsigned)k;
	}
	*ret = rot;
	return 0;
}
