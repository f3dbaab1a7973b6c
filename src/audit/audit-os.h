/* The audit log's side on the host: audit-os.c (POSIX) and, for ward.exe,
 * src/windows/win-audit-os.c. Internal to src/audit (audit.h is the
 * interface). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "audit/audit.h"

/* The log file: its fd (the same number across rotations: forked
 * processes keep it by number), its path, its rotation. */
typedef struct AuditFile {
	int fd;
	char *path;
	AuditRotation rot;
} AuditFile;

/* Open @path for appending, creating it (0600, never through a symlink):
 * an fd, or -errno. */
int audit_os_open(const char *path);
/* Append @line (@len bytes, ending in a newline) whole or not at all,
 * under the lock every writer of the log takes, rotating first when the
 * line would take the file past the limit. 0 or -errno (-ENOSPC, -EFBIG). */
int audit_os_append(AuditFile *a, const char *line, size_t len);
/* Now as RFC 3339 UTC with milliseconds. */
int audit_os_timestamp(char buf[32]);
/* @n random bytes from the system's generator. */
int audit_os_random(uint8_t *b, size_t n);
