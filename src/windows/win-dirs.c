/* ward's directories on Windows (src/common/dirs.h; the POSIX side is
 * src/common/dirs.c): home %USERPROFILE%, config %APPDATA%\ward, state
 * %LOCALAPPDATA%\ward, each only when the variable holds an absolute path
 * ward can hold. Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "windows/win-path.h"
#include "windows/win32-util.h"

static int env_dir(const wchar_t *var, const char *suffix, char **ret)
{
	wchar_t w[32768];
	DWORD k = GetEnvironmentVariableW(var, w, 32768);
	_cleanup_free_ char *u = NULL, *norm = NULL;

	if (k == 0 || k >= 32768)
		return -ENXIO;
	u = win32_utf8(w);
	if (!u)
		return -ENOMEM;
	/* Only an absolute path ward can hold: a relative one would follow
	 * the current directory (a repository). */
	if (win_path_normalize(u, &norm, NULL) < 0)
		return -ENXIO;
	if (!suffix) {
		*ret = TAKE_PTR(norm);
		return 0;
	}
	return asprintf(ret, "%s\\%s", norm, suffix) < 0 ? -ENOMEM : 0;
}

int ward_home_dir(char **ret)
{
	return env_dir(L"USERPROFILE", NULL, ret);
}

int ward_config_dir(char **ret)
{
	return env_dir(L"APPDATA", "ward", ret);
}

int ward_state_dir(char **ret)
{
	return env_dir(L"LOCALAPPDATA", "ward", ret);
}

/* Each directory of @path, from the first below its root (a drive's "C:\"
 * or a share's "\\server\share\"). @mode: the directory inherits its
 * parent's ACL, as Windows does. */
int mkdir_p(const char *path, unsigned mode)
{
	_cleanup_free_ char *p = strdup(path);
	char *s;

	if (!p)
		return -ENOMEM;
	s = p + strspn(p, "\\/");
	if (s - p >= 2) { /* UNC: past server and share */
		for (int i = 0; i < 2 && *s; i++)
			s += strcspn(s, "\\/") + (s[strcspn(s, "\\/")] ? 1 : 0);
	} else
		s = p + (p[0] && p[1] == ':' ? 3 : 1);
	for (;; s++) {
		char c = *s;

		if (c != '\\' && c != '/' && c != '\0')
			continue;
		*s = '\0';
		{
			_cleanup_free_ wchar_t *w = win32_wide(p);

			if (!w)
				return -ENOMEM;
			if (!CreateDirectoryW(w, NULL) && GetLastError() != ERROR_ALREADY_EXISTS)
				return win32_errno(GetLastError());
		}
		*s = c;
		if (!c)
			return 0;
	}
}

/* The directory exists, made if missing, and is a directory (not a
 * reparse point someone planted). */
int ward_dir_ensure(const char *path)
{
	_cleanup_free_ wchar_t *w = NULL;
	DWORD attr;
	int r = mkdir_p(path, 0700);

	if (r < 0)
		return r;
	if (!(w = win32_wide(path)))
		return -ENOMEM;
	attr = GetFileAttributesW(w);
	if (attr == INVALID_FILE_ATTRIBUTES)
		return win32_errno(GetLastError());
	if (!(attr & FILE_ATTRIBUTE_DIRECTORY))
		return -ENOTDIR;
	if (attr & FILE_ATTRIBUTE_REPARSE_POINT)
		return -ELOOP;
	return 0;
}
