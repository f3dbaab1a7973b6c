/* The audit log's side on the host (POSIX; Windows: src/windows/win-audit-os.c):
 * the timestamp, random ids, and appending a line whole under the lock
 * every writer takes, rotating first (audit.c's header says why). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit-os.h"
#include "common/macro.h"

int audit_os_open(const char *path)
{
	/* O_NOFOLLOW: a symlink planted in the state dir must not redirect the
	 * log somewhere else. */
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);

	return fd < 0 ? -errno : fd;
}

int audit_os_random(uint8_t *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = getrandom(b + got, n - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		got += (size_t)k;
	}
	return 0;
}

/* Seconds since the epoch to a UTC date and time, by arithmetic: not
 * gmtime_r, whose first call in glibc loads the local time zone
 * (/etc/localtime: seven system calls) for a UTC stamp that needs none.
 * The proleptic Gregorian calendar in 400-year eras of 146097 days. */
static void utc_civil(int64_t t, int *year, int *mon, int *day, int *hour, int *min, int *sec)
{
	int64_t days = t / 86400, rem = t % 86400;

	if (rem < 0) {
		rem += 86400;
		days--;
	}
	*hour = (int)(rem / 3600);
	*min = (int)(rem % 3600 / 60);
	*sec = (int)(rem % 60);
	days += 719468; /* from 1970-01-01 to 0000-03-01 */
	int64_t era = (days >= 0 ? days : days - 146096) / 146097;
	int64_t doe = days - era * 146097;                                 /* [0, 146096] */
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
	int64_t mp = (5 * doy + 2) / 153;                                    /* March = 0 */
	*day = (int)(doy - (153 * mp + 2) / 5 + 1);
	*mon = (int)(mp < 10 ? mp + 3 : mp - 9);
	*year = (int)(yoe + era * 400 + (*mon <= 2));
}

int audit_os_timestamp(char buf[32])
{
	struct timespec ts;
	int year, mon, day, hour, min, sec, n;

	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		return -errno;
	utc_civil((int64_t)ts.tv_sec, &year, &mon, &day, &hour, &min, &sec);
	if (year < 0 || year > 9999)
		return -EOVERFLOW;
	n = snprintf(buf, 32, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", year, mon, day, hour, min,
		     sec, ts.tv_nsec / 1000000);
	return n > 0 && n < 32 ? 0 : -EOVERFLOW;
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

/* Point a->fd (same number: forked processes keep it by number) at the
 * file now at a->path, creating it. */
static int reopen(AuditFile *a)
{
	int fd = open(a->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
		      0600);

	if (fd < 0)
		return -errno;
	/* Replacing the old fd drops our lock on the old file with it. */
	if (dup3(fd, a->fd, O_CLOEXEC) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	close(fd);
	return 0;
}

/* audit.jsonl -> audit.jsonl.1 -> .2 ... -> .keep (the oldest is replaced). */
static int rotate(AuditFile *a)
{
	size_t n = strlen(a->path) + 16;
	char from[n], to[n];

	for (unsigned i = a->rot.keep; i >= 2; i--) {
		snprintf(from, n, "%s.%u", a->path, i - 1);
		snprintf(to, n, "%s.%u", a->path, i);
		if (rename(from, to) < 0 && errno != ENOENT)
			return -errno;
	}
	snprintf(to, n, "%s.1", a->path);
	return RET_NERRNO(rename(a->path, to));
}

/* Holding the lock on a->fd's file: 0 when a line of @len bytes goes into
 * it, 1 when a->fd was moved to a new current file (lock again and
 * retry), -errno when that failed (then the line goes where a->fd points:
 * a rotated file is still read by `ward log`). */
static int settle_file(AuditFile *a, size_t len)
{
	struct stat fst, pst;
	int r;

	if (fstat(a->fd, &fst) < 0)
		return -errno;
	if (lstat(a->path, &pst) < 0 || pst.st_ino != fst.st_ino || pst.st_dev != fst.st_dev) {
		/* Rotated (or removed) by another writer. */
		r = reopen(a);
		return r < 0 ? r : 1;
	}
	if (a->rot.max_size == 0 || fst.st_size == 0 || (uint64_t)fst.st_size + len <= a->rot.max_size)
		return 0;
	r = rotate(a);
	if (r < 0)
		return r;
	r = reopen(a);
	return r < 0 ? r : 1;
}

/* Append @line (@len bytes, ending in a newline) in one write(2); on a
 * short write remove the fragment again. Holding the lock, nobody else
 * appends between our write and the truncate. */
int audit_os_append(AuditFile *a, const char *line, size_t len)
{
	bool locked;
	int tries = 0;

	for (;;) {
		locked = lock_log(a->fd, F_WRLCK) == 0;
		/* A file that keeps moving (a rotation storm) gets the line
		 * anyway after a few rounds. */
		if (!locked || tries++ >= 8 || settle_file(a, len) <= 0)
			break;
	}

	int fd = a->fd;
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

