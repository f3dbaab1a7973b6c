/* The Win32 layer, files: DACLs and labels, directories, the quarantine,
 * the journals, the liveness files and the ACL lock (win32-proc.c has
 * identities, jobs and processes). Each function converts its arguments,
 * makes the call (or the fixed sequence the call needs: a descriptor
 * before SetNamedSecurityInfoW) and converts the result back. What to ask
 * for is in the plan; whether what Windows did is right is decided by the
 * plan layer from what the *_read functions return. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <aclapi.h>
#include <sddl.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win32-api.h"
#include "windows/win32-util.h"

static WinFileKind w_stat(void *ctx, const char *path)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);
	DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;

	if (a == INVALID_FILE_ATTRIBUTES)
		return WIN_FILE_NONE;
	return (a & FILE_ATTRIBUTE_DIRECTORY) ? WIN_FILE_DIRECTORY : WIN_FILE_REGULAR;
}

static int w_mkdir(void *ctx, const char *path)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);

	if (!w)
		return -ENOMEM;
	return CreateDirectoryW(w, NULL) ? 0 : win32_errno(GetLastError());
}

static int w_rmdir(void *ctx, const char *path)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);

	if (!w)
		return -ENOMEM;
	return RemoveDirectoryW(w) ? 0 : win32_errno(GetLastError());
}

static char *state_file(const Win32Ctx *c, const char *kind, const char *id);

static int mkdir_one(const char *path)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);

	if (!w)
		return -ENOMEM;
	if (!CreateDirectoryW(w, NULL) && GetLastError() != ERROR_ALREADY_EXISTS)
		return win32_errno(GetLastError());
	return 0;
}

static int w_quarantine(void *ctx, const char *path, char **ret)
{
	Win32Ctx *c = ctx;
	_cleanup_free_ char *q = state_file(c, "quarantine", NULL), *dir = NULL;
	const char *base = strrchr(path, '\\');
	_cleanup_free_ wchar_t *from = win32_wide(path);
	int r;

	if (!q || !from || !base || asprintf(&dir, "%s\\%s", q, c->run_id) < 0)
		return -ENOMEM;
	if ((r = mkdir_one(q)) < 0 || (r = mkdir_one(dir)) < 0)
		return r;
	for (int i = 0; i < 100; i++) {
		_cleanup_free_ char *to = NULL;
		_cleanup_free_ wchar_t *wto = NULL;

		if ((i ? asprintf(&to, "%s%s.%d", dir, base, i) : asprintf(&to, "%s%s", dir, base)) < 0)
			return -ENOMEM;
		wto = win32_wide(to);
		if (!wto)
			return -ENOMEM;
		/* Same volume (the state dir may not be): copy+delete for a tree
		 * is not done; a cross-volume move fails and is reported. */
		if (MoveFileExW(from, wto, 0)) {
			*ret = TAKE_PTR(to);
			return 0;
		}
		if (GetLastError() != ERROR_ALREADY_EXISTS && GetLastError() != ERROR_FILE_EXISTS)
			return win32_errno(GetLastError());
	}
	return -EEXIST;
}

static SECURITY_INFORMATION info_for(bool label)
{
	return label ? LABEL_SECURITY_INFORMATION : DACL_SECURITY_INFORMATION;
}

static int w_get_sddl(void *ctx, const char *path, bool label, char **ret)
{
	_cleanup_free_ wchar_t *w = win32_wide(path);
	PSECURITY_DESCRIPTOR sd = NULL;
	LPWSTR s = NULL;
	DWORD e;

	if (!w)
		return -ENOMEM;
	e = GetNamedSecurityInfoW(w, SE_FILE_OBJECT, info_for(label), NULL, NULL, NULL, NULL, &sd);
	if (e != ERROR_SUCCESS)
		return win32_errno(e);
	if (!ConvertSecurityDescriptorToStringSecurityDescriptorW(sd, SDDL_REVISION_1,
								  info_for(label), &s, NULL)) {
		e = GetLastError();
		LocalFree(sd);
		return win32_errno(e);
	}
	*ret = win32_utf8(s);
	LocalFree(s);
	LocalFree(sd);
	return *ret ? 0 : -ENOMEM;
}

static int w_set_sddl(void *ctx, const char *path, bool label, const char *sddl)
{
	_cleanup_free_ wchar_t *w = win32_wide(path), *ws = win32_wide(sddl);
	PSECURITY_DESCRIPTOR sd = NULL;
	SECURITY_DESCRIPTOR_CONTROL ctl = 0;
	DWORD rev, e;
	BOOL present = FALSE, defaulted = FALSE;
	PACL acl = NULL;
	SECURITY_INFORMATION si = info_for(label);

	if (!w || !ws)
		return -ENOMEM;
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(ws, SDDL_REVISION_1, &sd, NULL))
		return win32_errno(GetLastError());
	if (label)
		(void)GetSecurityDescriptorSacl(sd, &present, &acl, &defaulted);
	else {
		(void)GetSecurityDescriptorDacl(sd, &present, &acl, &defaulted);
		(void)GetSecurityDescriptorControl(sd, &ctl, &rev);
		/* The SDDL says whether the DACL inherits ("D:P" or not). */
		si |= (ctl & SE_DACL_PROTECTED) ? PROTECTED_DACL_SECURITY_INFORMATION
						: UNPROTECTED_DACL_SECURITY_INFORMATION;
	}
	e = SetNamedSecurityInfoW(w, SE_FILE_OBJECT, si, NULL, NULL, label ? NULL : acl,
				  label ? acl : NULL);
	LocalFree(sd);
	return e == ERROR_SUCCESS ? 0 : win32_errno(e);
}

static char *state_file(const Win32Ctx *c, const char *kind, const char *id)
{
	char *p = NULL;

	if (asprintf(&p, "%s\\%s%s%s", c->state_dir, kind, id ? "-" : "", id ? id : "") < 0)
		return NULL;
	return p;
}

static int w_journal_append(void *ctx, const char *text)
{
	Win32Ctx *c = ctx;
	_cleanup_free_ char *path = state_file(c, "journal", c->run_id);
	_cleanup_free_ wchar_t *w = path ? win32_wide(path) : NULL;
	HANDLE h;
	DWORD n = 0, len = (DWORD)strlen(text);
	BOOL ok;

	if (!w)
		return -ENOMEM;
	h = CreateFileW(w, FILE_APPEND_DATA, FILE_SHARE_READ, NULL, OPEN_ALWAYS,
			FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return win32_errno(GetLastError());
	/* On disk before the change it describes is made. */
	ok = WriteFile(h, text, len, &n, NULL) && n == len && FlushFileBuffers(h);
	CloseHandle(h);
	return ok ? 0 : -EIO;
}

static int w_journal_read(void *ctx, const char *id, char **ret)
{
	Win32Ctx *c = ctx;
	_cleanup_free_ char *path = state_file(c, "journal", id ? id : c->run_id);
	_cleanup_free_ wchar_t *w = path ? win32_wide(path) : NULL;
	HANDLE h;
	LARGE_INTEGER size;
	char *buf;
	DWORD n = 0;

	if (!w)
		return -ENOMEM;
	h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
			FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return win32_errno(GetLastError());
	if (!GetFileSizeEx(h, &size) || size.QuadPart > 16 * 1024 * 1024) {
		CloseHandle(h);
		return -EFBIG;
	}
	buf = calloc(1, (size_t)size.QuadPart + 1);
	if (!buf || !ReadFile(h, buf, (DWORD)size.QuadPart, &n, NULL) || n != size.QuadPart) {
		free(buf);
		CloseHandle(h);
		return buf ? -EIO : -ENOMEM;
	}
	CloseHandle(h);
	*ret = buf;
	return 0;
}

static int w_journal_remove(void *ctx, const char *id)
{
	Win32Ctx *c = ctx;
	_cleanup_free_ char *path = state_file(c, "journal", id ? id : c->run_id);
	_cleanup_free_ wchar_t *w = path ? win32_wide(path) : NULL;

	if (!w)
		return -ENOMEM;
	return DeleteFileW(w) ? 0 : win32_errno(GetLastError());
}

/* Open (creating) @kind-@id without sharing, deleted on close. */
static HANDLE open_exclusive(const Win32Ctx *c, const char *kind, const char *id, DWORD *ret_err)
{
	_cleanup_free_ char *path = state_file(c, kind, id);
	_cleanup_free_ wchar_t *w = path ? win32_wide(path) : NULL;
	HANDLE h;

	if (!w) {
		*ret_err = ERROR_NOT_ENOUGH_MEMORY;
		return INVALID_HANDLE_VALUE;
	}
	h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE | DELETE, 0, NULL, OPEN_ALWAYS,
			FILE_ATTRIBUTE_NORMAL | FILE_FLAG_DELETE_ON_CLOSE, NULL);
	*ret_err = h == INVALID_HANDLE_VALUE ? GetLastError() : 0;
	return h;
}

int win32_run_alive(Win32Ctx *c)
{
	DWORD e;
	HANDLE h = open_exclusive(c, "alive", c->run_id, &e);

	if (h == INVALID_HANDLE_VALUE)
		return win32_errno(e);
	c->alive = h;
	return 0;
}

static int w_journal_stale(void *ctx, char ***ret)
{
	Win32Ctx *c = ctx;
	_cleanup_free_ char *pattern = state_file(c, "journal", "*");
	_cleanup_free_ wchar_t *w = pattern ? win32_wide(pattern) : NULL;
	_cleanup_strv_ char **ids = calloc(1, sizeof(char *));
	WIN32_FIND_DATAW fd;
	HANDLE f;

	if (!w || !ids)
		return -ENOMEM;
	f = FindFirstFileW(w, &fd);
	if (f == INVALID_HANDLE_VALUE) {
		*ret = TAKE_PTR(ids);
		return 0;
	}
	do {
		_cleanup_free_ char *name = win32_utf8(fd.cFileName);
		const char *id;
		DWORD e;
		HANDLE h;

		if (!name || strncmp(name, "journal-", 8) != 0)
			continue;
		id = name + 8;
		if (strlen(id) != 16 || strspn(id, "0123456789abcdef") != 16 ||
		    strcmp(id, c->run_id) == 0)
			continue;
		/* Its run holds alive-<id> open without sharing while it lives. */
		h = open_exclusive(c, "alive", id, &e);
		if (h == INVALID_HANDLE_VALUE)
			continue;
		CloseHandle(h);
		if (strv_extend(&ids, id) < 0) {
			FindClose(f);
			return -ENOMEM;
		}
	} while (FindNextFileW(f, &fd));
	FindClose(f);
	*ret = TAKE_PTR(ids);
	return 0;
}

static int w_lock(void *ctx)
{
	Win32Ctx *c = ctx;

	/* Held only while ACLs change: seconds at most. Wait for it up to
	 * two minutes, then refuse rather than hang. */
	for (int i = 0; i < 2400; i++) {
		DWORD e;
		HANDLE h = open_exclusive(c, "acl.lock", NULL, &e);

		if (h != INVALID_HANDLE_VALUE) {
			c->lock = h;
			return 0;
		}
		if (e != ERROR_SHARING_VIOLATION && e != ERROR_ACCESS_DENIED)
			return win32_errno(e);
		Sleep(50);
	}
	return -EBUSY;
}

static void w_unlock(void *ctx)
{
	Win32Ctx *c = ctx;

	if (c->lock)
		CloseHandle(c->lock);
	c->lock = NULL;
}


void win32_api_init(WinApi *api, Win32Ctx *ctx)
{
	*api = (WinApi){
		.ctx = ctx, .stat = w_stat, .mkdir = w_mkdir, .rmdir = w_rmdir,
		.quarantine = w_quarantine, .get_sddl = w_get_sddl, .set_sddl = w_set_sddl,
		.journal_append = w_journal_append, .journal_read = w_journal_read,
		.journal_remove = w_journal_remove, .journal_stale = w_journal_stale,
		.lock = w_lock, .unlock = w_unlock,
	};
	win32_proc_init(api);
	win32_inject_init(api);
	win32_helper_init(api);
}
