/* Conversions between the portable layer's conventions and Win32's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/strv.h"
#include "windows/win32-util.h"

#include <shellapi.h> /* after windows.h */

wchar_t *win32_wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	wchar_t *w;

	if (n <= 0)
		return NULL;
	w = calloc((size_t)n, sizeof(wchar_t));
	if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
		free(w);
		return NULL;
	}
	return w;
}

char *win32_utf8(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
	char *s;

	if (n <= 0)
		return NULL;
	s = calloc((size_t)n, 1);
	if (s && WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) != n) {
		free(s);
		return NULL;
	}
	return s;
}

char **win32_utf8_argv(int *ret_argc)
{
	int n = 0;
	wchar_t **w = CommandLineToArgvW(GetCommandLineW(), &n);
	char **l = calloc((size_t)n + 1, sizeof(char *));

	for (int i = 0; w && l && i < n; i++)
		if (!(l[i] = win32_utf8(w[i]))) {
			strv_free(l);
			l = NULL;
		}
	if (w)
		LocalFree(w);
	*ret_argc = n;
	return l;
}

wchar_t *win32_wide_block(const char *s, size_t len)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, (int)len, NULL, 0);
	wchar_t *w;

	if (n <= 0)
		return NULL;
	w = calloc((size_t)n, sizeof(wchar_t));
	if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, (int)len, w, n) != n) {
		free(w);
		return NULL;
	}
	return w;
}

int win32_errno(DWORD e)
{
	switch (e) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
		return -ENOENT;
	case ERROR_ACCESS_DENIED:
	case ERROR_PRIVILEGE_NOT_HELD:
		return -EACCES;
	case ERROR_ALREADY_EXISTS:
	case ERROR_FILE_EXISTS:
		return -EEXIST;
	case ERROR_DIR_NOT_EMPTY:
		return -ENOTEMPTY;
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return -ENOMEM;
	case ERROR_INVALID_PARAMETER:
	case ERROR_INVALID_SID:
	case ERROR_INVALID_ACL:
		return -EINVAL;
	case ERROR_CALL_NOT_IMPLEMENTED:
	case ERROR_PROC_NOT_FOUND:
	case ERROR_NOT_SUPPORTED:
		return -ENOSYS;
	case ERROR_SHARING_VIOLATION:
	case ERROR_LOCK_VIOLATION:
		return -EBUSY;
	default:
		return -EIO;
	}
}

void win32_strerror(DWORD e, char *buf, size_t n)
{
	wchar_t msg[256];
	char *u = NULL;
	DWORD l = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e,
				 0, msg, 256, NULL);

	while (l > 0 && (msg[l - 1] == L'\n' || msg[l - 1] == L'\r' || msg[l - 1] == L'.'))
		msg[--l] = 0;
	if (l > 0)
		u = win32_utf8(msg);
	snprintf(buf, n, "%s (error %lu)", u ? u : "unknown error", (unsigned long)e);
	free(u);
}

int win32_fail_why(char *why, size_t n, const char *what)
{
	DWORD e = GetLastError();
	char m[200];

	win32_strerror(e, m, sizeof(m));
	snprintf(why, n, "%s: %s", what, m);
	return win32_errno(e);
}

char **win32_environment(void)
{
	wchar_t *block = GetEnvironmentStringsW();
	char **l = calloc(1, sizeof(char *));

	for (wchar_t *p = block; l && p && *p; p += wcslen(p) + 1) {
		char *u = win32_utf8(p);

		if (!u || strv_consume(&l, u) < 0) {
			strv_free(l);
			l = NULL;
		}
	}
	if (block)
		FreeEnvironmentStringsW(block);
	return l;
}
