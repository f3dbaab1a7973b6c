/* UTF-8 <-> UTF-16 and Win32 error -> errno for the Win32 layer: the
 * portable code speaks UTF-8 and -errno, Windows speaks UTF-16 and
 * GetLastError(). Windows-only. */
#pragma once

#include <stddef.h>
#include <windows.h>

/* New UTF-16 string (caller frees), NULL on OOM or invalid UTF-8. */
wchar_t *win32_wide(const char *s);
/* New UTF-8 string (caller frees), NULL on OOM. */
char *win32_utf8(const wchar_t *s);
/* argv as UTF-8 from the UTF-16 command line (main's argv is in the ANSI
 * code page and loses what it cannot represent); strv_free, NULL on OOM. */
char **win32_utf8_argv(int *ret_argc);
/* UTF-16 of a UTF-8 block of @len bytes holding NULs (an environment). */
wchar_t *win32_wide_block(const char *s, size_t len);
/* -errno for a Win32 error code (ERROR_ACCESS_DENIED -> -EACCES, ...). */
int win32_errno(DWORD e);
/* "message (code N)" for @e into @buf. */
void win32_strerror(DWORD e, char *buf, size_t n);
/* The calling thread's last error as "@what: message (code N)" into @why;
 * its -errno (win32_errno). Call it right after the failed call. */
int win32_fail_why(char *why, size_t n, const char *what);
/* The process's environment as "NAME=VALUE" strings, UTF-8 (caller frees
 * with strv_free), NULL on OOM. */
char **win32_environment(void);
