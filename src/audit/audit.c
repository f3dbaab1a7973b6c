/* The JSONL audit writer. Each event is serialized in memory and appended
 * with a single write(2) on an O_APPEND fd, so that lines from several
 * processes (supervisor, proxy, review commands) never interleave. */
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/macro.h"

#define AUDIT_SCHEMA_VERSION 1

struct AuditLog {
	int fd;
	char *session;
};

int audit_open(const char *state_dir, const char *session, AuditLog **ret)
{
	_cleanup_free_ char *path = NULL;
	AuditLog *a;
	int fd, r;

	r = mkdir_p(state_dir, 0700);
	if (r < 0)
		return r;
	if (asprintf(&path, "%s/audit.jsonl", state_dir) < 0)
		return -ENOMEM;
	/* O_NOFOLLOW: a symlink planted in the state dir must not redirect the
	 * log somewhere else. */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (fd < 0)
		return -errno;
	a = calloc(1, sizeof(*a));
	if (!a) {
		close(fd);
		return -ENOMEM;
	}
	a->fd = fd;
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
	if (a->fd >= 0)
		(void)close(a->fd);
	free(a->session);
	free(a);
	return NULL;
}

int audit_fd(const AuditLog *a)
{
	return a ? a->fd : -EBADF;
}

static int format_ts(char buf[32])
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		return -errno;
	if (!gmtime_r(&ts.tv_sec, &tm))
		return -EOVERFLOW;
	n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	if (n == 0)
		return -EOVERFLOW;
	snprintf(buf + n, 32 - n, ".%03ldZ", ts.tv_nsec / 1000000);
	return 0;
}

int audit_write(AuditLog *a, const char *event, cJSON *fields)
{
	_cleanup_cjson_ cJSON *obj = NULL;
	_cleanup_cjson_ cJSON *f = fields;
	_cleanup_free_ char *line = NULL;
	char ts[32];
	size_t len, off = 0;
	int r;

	if (!a || !event || (f && !cJSON_IsObject(f)))
		return -EINVAL;
	r = format_ts(ts);
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

	while (off < len) {
		ssize_t k = write(a->fd, line + off, len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		/* A short write means the line is torn (disk full, file size
		 * limit); report it instead of appending a fragment. */
		if ((size_t)k != len - off)
			return -EIO;
		off += (size_t)k;
	}
	return 0;
}

int audit_new_session_id(char ret[17])
{
	uint8_t b[8];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t k = getrandom(b + got, sizeof(b) - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		got += (size_t)k;
	}
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(ret + 2 * i, 3, "%02x", b[i]);
	ret[16] = '\0';
	return 0;
}
