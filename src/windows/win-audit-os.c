/* The audit log's side on Windows (src/audit/audit-os.h; the POSIX side is
 * src/audit/audit-os.c). The file is opened with FILE_APPEND_DATA alone,
 * so every WriteFile lands whole at the end of the file, whichever process
 * writes; a byte-range lock (LockFileEx) is the lock every writer of the
 * log takes around its check and its write. Rotation renames the file
 * away (MoveFileExW) under that lock; a writer that finds the file at the
 * path is not its own (the file index differs) reopens. Windows-only. */
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <windows.h>
#include <bcrypt.h>

#include "audit/audit-os.h"
#include "common/cleanup.h"
#include "windows/win32-util.h"

static HANDLE open_handle(const char *path)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);

	if (!w) {
		SetLastError(ERROR_INVALID_NAME);
		return INVALID_HANDLE_VALUE;
	}
	/* FILE_FLAG_OPEN_REPARSE_POINT: a symlink planted in the state dir is
	 * opened as itself, and refused below, never followed. */
	return CreateFileW(w, FILE_APPEND_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE,
			   FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_ALWAYS,
			   FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
}

static int open_fd(const char *path)
{
	HANDLE h = open_handle(path);
	BY_HANDLE_FILE_INFORMATION info;
	int fd;

	if (h == INVALID_HANDLE_VALUE)
		return win32_errno(GetLastError());
	if (!GetFileInformationByHandle(h, &info) ||
	    (info.dwFileAttributes & (FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DIRECTORY))) {
		CloseHandle(h);
		return -ELOOP;
	}
	fd = _open_osfhandle((intptr_t)h, _O_WRONLY | _O_APPEND | _O_BINARY | _O_NOINHERIT);
	if (fd < 0) {
		CloseHandle(h);
		return -EMFILE;
	}
	return fd;
}

int audit_os_open(const char *path)
{
	return open_fd(path);
}

static HANDLE handle_of(int fd)
{
	return (HANDLE)_get_osfhandle(fd);
}

static bool lock_log(HANDLE h)
{
	OVERLAPPED o = { 0 };

	return LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &o);
}

static void unlock_log(HANDLE h)
{
	OVERLAPPED o = { 0 };

	(void)UnlockFileEx(h, 0, 1, 0, &o);
}

/* The file at a->path, or none: is it a->fd's? */
static bool same_file(const AuditFile *a, const BY_HANDLE_FILE_INFORMATION *mine)
{
	_cleanup_free_ wchar_t *w = win32_wide(a->path);
	BY_HANDLE_FILE_INFORMATION info;
	HANDLE h;
	bool same;

	if (!w)
		return false;
	h = CreateFileW(w, FILE_READ_ATTRIBUTES,
			FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
			FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return false;
	same = GetFileInformationByHandle(h, &info) &&
	       info.dwVolumeSerialNumber == mine->dwVolumeSerialNumber &&
	       info.nFileIndexHigh == mine->nFileIndexHigh &&
	       info.nFileIndexLow == mine->nFileIndexLow;
	CloseHandle(h);
	return same;
}

/* a->fd, same number, on the file now at a->path. */
static int reopen(AuditFile *a)
{
	int fd = open_fd(a->path);

	if (fd < 0)
		return fd;
	if (_dup2(fd, a->fd) < 0) {
		_close(fd);
		return -EMFILE;
	}
	_close(fd);
	return 0;
}

static int rename_over(const char *from, const char *to)
{
	_cleanup_free_ wchar_t *wf = win32_wide(from), *wt = win32_wide(to);

	if (!wf || !wt)
		return -ENOMEM;
	if (MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING))
		return 0;
	if (GetLastError() == ERROR_FILE_NOT_FOUND)
		return -ENOENT;
	return win32_errno(GetLastError());
}

static int rotate(AuditFile *a)
{
	size_t n = strlen(a->path) + 16;
	char from[n], to[n];
	int r;

	for (unsigned i = a->rot.keep; i >= 2; i--) {
		snprintf(from, n, "%s.%u", a->path, i - 1);
		snprintf(to, n, "%s.%u", a->path, i);
		r = rename_over(from, to);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	snprintf(to, n, "%s.1", a->path);
	return rename_over(a->path, to);
}

/* As audit-os.c's: 0 (write), 1 (a->fd moved: lock again), -errno. */
static int settle_file(AuditFile *a, size_t len)
{
	BY_HANDLE_FILE_INFORMATION info;
	uint64_t size;
	int r;

	if (!GetFileInformationByHandle(handle_of(a->fd), &info))
		return win32_errno(GetLastError());
	if (!same_file(a, &info)) {
		r = reopen(a);
		return r < 0 ? r : 1;
	}
	size = ((uint64_t)info.nFileSizeHigh << 32) | info.nFileSizeLow;
	if (a->rot.max_size == 0 || size == 0 || size + len <= a->rot.max_size)
		return 0;
	r = rotate(a);
	if (r < 0)
		return r;
	r = reopen(a);
	return r < 0 ? r : 1;
}

int audit_os_append(AuditFile *a, const char *line, size_t len)
{
	HANDLE h = INVALID_HANDLE_VALUE;
	bool locked = false;
	DWORD k = 0;
	int tries = 0, r = 0;

	if (len > UINT32_MAX)
		return -EFBIG;
	for (;;) {
		h = handle_of(a->fd);
		locked = h != INVALID_HANDLE_VALUE && lock_log(h);
		if (!locked || tries++ >= 8 || settle_file(a, len) <= 0)
			break;
		unlock_log(h);
	}
	h = handle_of(a->fd);
	/* FILE_APPEND_DATA without FILE_WRITE_DATA: one write, at the end,
	 * whole or failed (a full disk fails it before any byte lands). */
	if (!WriteFile(h, line, (DWORD)len, &k, NULL))
		r = GetLastError() == ERROR_DISK_FULL ? -ENOSPC : win32_errno(GetLastError());
	else if (k != len)
		r = -EFBIG;
	if (locked)
		unlock_log(h);
	return r;
}

int audit_os_timestamp(char buf[32])
{
	FILETIME ft;
	SYSTEMTIME st;

	GetSystemTimeAsFileTime(&ft);
	if (!FileTimeToSystemTime(&ft, &st))
		return -EOVERFLOW;
	snprintf(buf, 32, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", st.wYear, st.wMonth, st.wDay,
		 st.wHour, st.wMinute, st.wSecond, st.wMilliseconds);
	return 0;
}

int audit_os_random(uint8_t *b, size_t n)
{
	if (n > UINT32_MAX)
		return -EINVAL;
	return BCRYPT_SUCCESS(BCryptGenRandom(NULL, b, (ULONG)n, BCRYPT_USE_SYSTEM_PREFERRED_RNG))
		       ? 0
		       : -EIO;
}
