/* The JSONL audit writer. Each event is serialized in memory and appended
 * with a single write(2) on an O_APPEND fd, so that lines from several
 * processes (supervisor, proxy, review commands) never interleave.
 *
 * A full file system (or a file size limit) can make that write short: the
 * fragment is cut off again (under a write lock that every writer takes, so
 * that no other process's line is cut with it), the call fails with the
 * reason, and the log counts it (audit_failures) so the caller can say so.
 * The file never keeps half a line. */
#include <stdbool.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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
	unsigned failures; /* records that could not be written */
	int last_error;    /* -errno of the last failure */
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

/* A process-associated (POSIX) lock, not flock() or an OFD lock: the proxy
 * shares the supervisor's open file description, and those two kinds are
 * per description, so they would not keep the two apart. */
static int lock_log(int fd, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET };

	return RETRY_EINTR(fcntl(fd, F_SETLKW, &fl));
}

/* What a short write ran into: the file system is full, or the file size
 * limit (or a quota) was reached. */
static int short_write_error(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) == 0 && sf.f_bavail == 0)
		return -ENOSPC;
	return -EFBIG;
}

/* Append @line (@len bytes, ending in a newline) in one write(2); on a
 * short write remove the fragment again. Holding the lock, nobody else
 * appends between our write and the truncate. */
static int append_line(int fd, const char *line, size_t len)
{
	bool locked = lock_log(fd, F_WRLCK) == 0;
	off_t end = locked ? lseek(fd, 0, SEEK_END) : -1;
	ssize_t k;
	int r = 0;

	k = RETRY_EINTR(write(fd, line, len));
	if (k < 0)
		r = -errno;
	else if ((size_t)k != len) {
		r = short_write_error(fd);
		/* Unlocked (a file system without locks), a cut could take a
		 * concurrent writer's line with it: cut only what is ours. */
		if (end >= 0)
			(void)!ftruncate(fd, end);
		else {
			struct stat st;
			off_t pos = lseek(fd, 0, SEEK_CUR);

			if (pos >= k && fstat(fd, &st) == 0 && st.st_size == pos)
				(void)!ftruncate(fd, pos - k);
		}
	}
	if (locked)
		(void)lock_log(fd, F_UNLCK);
	return r;
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

	r = append_line(a->fd, line, len);
	if (r < 0) {
		a->failures++;
		a->last_error = r;
	}
	return r;
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
