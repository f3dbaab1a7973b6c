/* --result FILE on Windows (src/run/run-paths.h's run_write_result; the
 * POSIX side is src/run/run-paths.c): never through a reparse point (a
 * symlink or junction the command could have planted at that name), a
 * relative name against the current directory. Windows-only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "run/run-paths.h"
#include "windows/win32-util.h"

int run_write_result(const char *path, const char *text)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);
	BY_HANDLE_FILE_INFORMATION info;
	size_t len = strlen(text);
	DWORD k = 0;
	HANDLE h;
	int r = 0;

	if (!w)
		return log_warning_errno(-EINVAL, "Not writing the result to '%s': not UTF-8", path);
	h = CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ, NULL, OPEN_ALWAYS,
			FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		r = win32_errno(GetLastError());
		log_warning("Failed to write the result to '%s' (Win32 error %lu)", path,
			    (unsigned long)GetLastError());
		return r;
	}
	if (!GetFileInformationByHandle(h, &info) ||
	    (info.dwFileAttributes & (FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DIRECTORY))) {
		CloseHandle(h);
		log_warning("Not writing the result to '%s': it is a reparse point (a symlink or "
			    "junction) or a directory",
			    path);
		return -ELOOP;
	}
	if (len > MAXDWORD || !SetEndOfFile(h) || !WriteFile(h, text, (DWORD)len, &k, NULL) ||
	    k != len) {
		r = -EIO;
		log_warning("Failed to write the result to '%s'", path);
	}
	CloseHandle(h);
	return r;
}
