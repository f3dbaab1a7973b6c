/* How a policy meets the host's file system, on Windows (the POSIX side is
 * src/policy/policy-host.c): which fs paths are absolute, reading a policy
 * file. Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/cleanup.h"
#include "policy/policy-internal.h"
#include "windows/win-path.h"
#include "windows/win32-util.h"

/* Policies are small; a bigger file is a mistake (or an attack on the parser). */
#define POLICY_MAX_SIZE (1024 * 1024)

bool policy_host_absolute(const char *s)
{
	_cleanup_free_ char *n = NULL;

	return win_path_normalize(s, &n, NULL) == 0;
}

static void close_handlep(HANDLE *h)
{
	if (*h != INVALID_HANDLE_VALUE)
		CloseHandle(*h);
}

static int fail_win32(PolicyError *e, const char *path, const char *what, DWORD code)
{
	char buf[256];

	win32_strerror(code, buf, sizeof(buf));
	return policy_error_set(e, path, "", "%s: %s", what, buf), win32_errno(code);
}

/* The default file (%APPDATA%\ward\policy.json) is read only when it is a
 * plain file: not a reparse point (a symlink or junction a sandboxed run
 * could have planted; ward's config dir holds no ACE for any run's SIDs). */
int policy_read_file(const char *path, bool is_default, char **ret, PolicyError *e)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);
	_cleanup_free_ char *buf = NULL;
	_cleanup_(close_handlep) HANDLE h = INVALID_HANDLE_VALUE;
	BY_HANDLE_FILE_INFORMATION info;
	DWORD n = 0;

	if (!w)
		return policy_error_set(e, path, "", "not valid UTF-8"), -EINVAL;
	h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
			FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		DWORD code = GetLastError();

		if (is_default && (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND))
			return -ENOENT;
		return fail_win32(e, path, "cannot open", code);
	}
	if (GetFileType(h) != FILE_TYPE_DISK || !GetFileInformationByHandle(h, &info) ||
	    (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY))
		return policy_error_set(e, path, "", "not a regular file");
	if (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
		return policy_error_set(e, path, "",
					"is a reparse point (a symlink or junction); name the file "
					"it points to");
	if (info.nFileSizeHigh || info.nFileSizeLow > POLICY_MAX_SIZE)
		return policy_error_set(e, path, "", "larger than %d bytes", POLICY_MAX_SIZE);
	buf = malloc(POLICY_MAX_SIZE + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		DWORD k = 0;

		if (!ReadFile(h, buf + n, POLICY_MAX_SIZE + 1 - n, &k, NULL))
			return fail_win32(e, path, "cannot read", GetLastError());
		if (k == 0)
			break;
		n += k;
		if (n > POLICY_MAX_SIZE)
			return policy_error_set(e, path, "", "larger than %d bytes",
						POLICY_MAX_SIZE);
	}
	buf[n] = '\0';
	if (strlen(buf) != n)
		return policy_error_set(e, path, "", "contains a NUL byte");
	*ret = TAKE_PTR(buf);
	return 0;
}
