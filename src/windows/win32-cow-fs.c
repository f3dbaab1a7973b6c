/* The real WinCowFs (win-cow-review.h): one Win32 call, or a short fixed
 * sequence, per entry; reparse points are never followed into (a link
 * planted in the upper or the workspace is neither listed nor copied
 * through). Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win32-cow-fs.h"
#include "windows/win32-util.h"

static int last_err(void)
{
	int r = win32_errno(GetLastError());

	return r < 0 ? r : -EIO;
}

static WinFileKind f_stat(void *ctx, const char *path)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);
	DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;

	if (a == INVALID_FILE_ATTRIBUTES)
		return WIN_FILE_NONE;
	if (a & FILE_ATTRIBUTE_REPARSE_POINT)
		return WIN_FILE_NONE; /* never through a link */
	return a & FILE_ATTRIBUTE_DIRECTORY ? WIN_FILE_DIRECTORY : WIN_FILE_REGULAR;
}

static int f_list(void *ctx, const char *dir, char ***ret)
{
	_cleanup_free_ char *pat = NULL;
	_cleanup_free_ wchar_t *w = NULL;
	WIN32_FIND_DATAW fd;
	HANDLE h;

	*ret = NULL;
	if (asprintf(&pat, "%s\\*", dir) < 0 || !(w = win32_wide(pat)))
		return -ENOMEM;
	h = FindFirstFileW(w, &fd);
	if (h == INVALID_HANDLE_VALUE)
		return GetLastError() == ERROR_FILE_NOT_FOUND ? 0 : -ENOENT;
	do {
		char *n;

		if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L".."))
			continue;
		if (!(n = win32_utf8(fd.cFileName)) || strv_consume(ret, n) < 0) {
			FindClose(h);
			strv_free(*ret);
			*ret = NULL;
			return -ENOMEM;
		}
	} while (FindNextFileW(h, &fd));
	FindClose(h);
	return 0;
}

static int f_mkdir(void *ctx, const char *path)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);

	if (!w)
		return -ENOMEM;
	if (CreateDirectoryW(w, NULL) || GetLastError() == ERROR_ALREADY_EXISTS)
		return 0;
	return last_err();
}

static int f_remove(void *ctx, const char *path)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);
	DWORD a;

	if (!w)
		return -ENOMEM;
	a = GetFileAttributesW(w);
	if (a == INVALID_FILE_ATTRIBUTES)
		return 0;
	if ((a & FILE_ATTRIBUTE_DIRECTORY) ? RemoveDirectoryW(w) : DeleteFileW(w))
		return 0;
	return last_err();
}

static int f_copy(void *ctx, const char *from, const char *to)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_free_ wchar_t *wf = win32_wide(from), *wt = win32_wide(to), *wtmp = NULL;
	HANDLE h;

	if (asprintf(&tmp, "%s.ward-tmp", to) < 0 || !wf || !wt || !(wtmp = win32_wide(tmp)))
		return -ENOMEM;
	if (!CopyFileExW(wf, wtmp, NULL, NULL, NULL, COPY_FILE_COPY_SYMLINK))
		return last_err();
	h = CreateFileW(wtmp, GENERIC_WRITE, 0, NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	if (h != INVALID_HANDLE_VALUE) {
		FlushFileBuffers(h);
		CloseHandle(h);
	}
	if (!MoveFileExW(wtmp, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
		int r = last_err();

		DeleteFileW(wtmp);
		return r;
	}
	return 0;
}

static int f_read(void *ctx, const char *path, char **ret)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);
	HANDLE h;
	LARGE_INTEGER size;
	DWORD got = 0;
	char *buf;

	if (!w)
		return -ENOMEM;
	h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
			FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return GetLastError() == ERROR_FILE_NOT_FOUND || GetLastError() == ERROR_PATH_NOT_FOUND
			       ? -ENOENT
			       : last_err();
	if (!GetFileSizeEx(h, &size) || size.QuadPart > 64 * 1024 * 1024) {
		CloseHandle(h);
		return -EFBIG;
	}
	buf = malloc((size_t)size.QuadPart + 1);
	if (!buf) {
		CloseHandle(h);
		return -ENOMEM;
	}
	if (!ReadFile(h, buf, (DWORD)size.QuadPart, &got, NULL)) {
		int r = last_err();

		free(buf);
		CloseHandle(h);
		return r;
	}
	CloseHandle(h);
	buf[got] = 0;
	*ret = buf;
	return 0;
}

static int write_mode(const char *path, const char *text, DWORD disp, bool append)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);
	HANDLE h;
	DWORD done = 0, n = (DWORD)strlen(text);
	BOOL ok;

	if (!w)
		return -ENOMEM;
	h = CreateFileW(w, append ? FILE_APPEND_DATA : GENERIC_WRITE, 0, NULL, disp,
			FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return last_err();
	ok = (n == 0 || WriteFile(h, text, n, &done, NULL)) && done == n && FlushFileBuffers(h);
	CloseHandle(h);
	return ok ? 0 : -EIO;
}

static int f_write(void *ctx, const char *path, const char *text)
{
	return write_mode(path, text, CREATE_ALWAYS, false);
}

static int f_append(void *ctx, const char *path, const char *line)
{
	return write_mode(path, line, OPEN_ALWAYS, true);
}

static int f_same(void *ctx, const char *a, const char *b)
{
	_cleanup_free_ char *x = NULL, *y = NULL;
	_cleanup_free_ wchar_t *wa = win32_wide(a), *wb = win32_wide(b);
	WIN32_FILE_ATTRIBUTE_DATA da, db;
	int r;

	if (!wa || !wb)
		return -ENOMEM;
	if (!GetFileAttributesExW(wa, GetFileExInfoStandard, &da) ||
	    !GetFileAttributesExW(wb, GetFileExInfoStandard, &db))
		return last_err();
	if (da.nFileSizeHigh != db.nFileSizeHigh || da.nFileSizeLow != db.nFileSizeLow)
		return 0;
	if ((r = f_read(ctx, a, &x)) < 0 || (r = f_read(ctx, b, &y)) < 0)
		return r;
	return memcmp(x, y, da.nFileSizeLow) == 0;
}

static int f_rename(void *ctx, const char *from, const char *to)
{
	_cleanup_free_ wchar_t *wf = win32_wide(from), *wt = win32_wide(to);

	if (!wf || !wt)
		return -ENOMEM;
	return MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) ? 0
										       : last_err();
}

/* ChangeTime (FileBasicInfo), of the entry itself, never through a link. */
static int f_ctime(void *ctx, const char *path, int64_t *ret)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);
	FILE_BASIC_INFO bi;
	HANDLE h;
	BOOL ok;

	if (!w)
		return -ENOMEM;
	h = CreateFileW(w, FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
			NULL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
			NULL);
	if (h == INVALID_HANDLE_VALUE)
		return last_err();
	ok = GetFileInformationByHandleEx(h, FileBasicInfo, &bi, sizeof(bi));
	CloseHandle(h);
	if (!ok)
		return last_err();
	*ret = bi.ChangeTime.QuadPart;
	return 0;
}

/* The coarse system time: the clock NTFS stamps ChangeTime from. */
static int64_t f_now(void *ctx)
{
	FILETIME ft;

	GetSystemTimeAsFileTime(&ft);
	return (int64_t)(((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime);
}

/* The session's lock: a byte-range lock (LockFileEx, exclusive, never
 * waiting) on the lock file, held by this handle: the system drops it
 * when the process ends, however it ends. The handle is not inheritable
 * (the sandboxed command never holds it), and it shares read, write and
 * delete, so nothing but the lock itself refuses a second holder. */
static int f_lock(void *ctx, const char *path, void **ret)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);
	OVERLAPPED ov = { 0 };
	HANDLE h;

	*ret = NULL;
	if (!w)
		return -ENOMEM;
	h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE,
			FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_ALWAYS,
			FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return GetLastError() == ERROR_PATH_NOT_FOUND || GetLastError() == ERROR_FILE_NOT_FOUND
			       ? -ENOENT
			       : last_err();
	if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ov)) {
		DWORD e = GetLastError();

		CloseHandle(h);
		return e == ERROR_LOCK_VIOLATION || e == ERROR_IO_PENDING ? -EBUSY : -EIO;
	}
	*ret = h;
	return 0;
}

static void f_unlock(void *ctx, void *lock)
{
	OVERLAPPED ov = { 0 };

	(void)UnlockFileEx(lock, 0, 1, 0, &ov);
	CloseHandle(lock);
}

void win32_cow_fs_init(WinCowFs *fs)
{
	*fs = (WinCowFs){ .stat = f_stat, .list = f_list, .mkdir = f_mkdir, .remove = f_remove,
			  .copy = f_copy, .same = f_same, .read = f_read, .write = f_write,
			  .append = f_append, .rename = f_rename, .ctime = f_ctime, .now = f_now,
			  .lock = f_lock, .unlock = f_unlock };
}
