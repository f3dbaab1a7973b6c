/* ward-setup.exe's Win32 calls (win-setup-api.h): netapi32 users, the
 * Winlogon UserList, DPAPI, files with a DACL, the setup journal. One call
 * per function, deciding nothing. Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <bcrypt.h>
#include <lm.h>
#include <sddl.h>
#include <aclapi.h>
#include <dpapi.h>

#include "common/cleanup.h"
#include "windows/win-setup.h"
#include "windows/win32-firewall.h"
#include "windows/win32-net.h"
#include "windows/win32-setup.h"
#include "windows/win32-util.h"

static const wchar_t USERLIST[] =
	L"SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\Winlogon\\SpecialAccounts\\UserList";

static int net_result(NET_API_STATUS s, char *why, size_t n)
{
	if (s == NERR_Success)
		return 0;
	if (why)
		snprintf(why, n, "NET_API_STATUS %lu", (unsigned long)s);
	if (s == NERR_UserNotFound)
		return -ENOENT;
	if (s == NERR_UserExists)
		return -EEXIST;
	return s < 2100 ? win32_errno(s) : -EIO;
}

static int s_elevated(void *ctx)
{
	HANDLE tok;
	TOKEN_ELEVATION e;
	DWORD n = 0;
	BOOL ok;

	(void)ctx;
	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return win32_errno(GetLastError());
	ok = GetTokenInformation(tok, TokenElevation, &e, sizeof(e), &n);
	CloseHandle(tok);
	return ok ? (e.TokenIsElevated ? 1 : 0) : win32_errno(GetLastError());
}

static int s_self_sid(void *ctx, char ret[WIN_SID_STRING_MAX])
{
	HANDLE tok;
	uint8_t buf[256];
	DWORD n = 0;
	wchar_t *w = NULL;
	char *s;

	(void)ctx;
	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return win32_errno(GetLastError());
	if (!GetTokenInformation(tok, TokenUser, buf, sizeof(buf), &n)) {
		CloseHandle(tok);
		return win32_errno(GetLastError());
	}
	CloseHandle(tok);
	if (!ConvertSidToStringSidW(((TOKEN_USER *)buf)->User.Sid, &w))
		return win32_errno(GetLastError());
	s = win32_utf8(w);
	LocalFree(w);
	if (!s || strlen(s) >= WIN_SID_STRING_MAX) {
		free(s);
		return -EINVAL;
	}
	memcpy(ret, s, strlen(s) + 1);
	free(s);
	return 0;
}

static int s_random(void *ctx, void *buf, size_t n)
{
	(void)ctx;
	return BCryptGenRandom(NULL, buf, (ULONG)n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0 ? 0 : -EIO;
}

static int s_user_get(void *ctx, const char *name, char ret[WIN_SID_STRING_MAX])
{
	_cleanup_free_ wchar_t *w = win32_wide(name);
	LPBYTE info = NULL;
	uint8_t sid[SECURITY_MAX_SID_SIZE];
	wchar_t dom[256], *str = NULL;
	DWORD ns = sizeof(sid), nd = 256;
	SID_NAME_USE use;
	char *s;
	int r;

	(void)ctx;
	if (!w)
		return -ENOMEM;
	r = net_result(NetUserGetInfo(NULL, w, 0, &info), NULL, 0);
	if (info)
		NetApiBufferFree(info);
	if (r < 0)
		return r;
	if (!LookupAccountNameW(NULL, w, sid, &ns, dom, &nd, &use))
		return GetLastError() == ERROR_NONE_MAPPED ? -ENOENT : win32_errno(GetLastError());
	if (use != SidTypeUser || !ConvertSidToStringSidW(sid, &str))
		return -ENOENT;
	s = win32_utf8(str);
	LocalFree(str);
	if (!s || strlen(s) >= WIN_SID_STRING_MAX) {
		free(s);
		return -EINVAL;
	}
	memcpy(ret, s, strlen(s) + 1);
	free(s);
	return 0;
}

static int s_user_add(void *ctx, const char *name, const char *pw, char *why, size_t n)
{
	_cleanup_free_ wchar_t *wn = win32_wide(name), *wp = win32_wide(pw);
	USER_INFO_1 u;
	DWORD err = 0;

	(void)ctx;
	if (!wn || !wp)
		return -ENOMEM;
	memset(&u, 0, sizeof(u));
	u.usri1_name = wn;
	u.usri1_password = wp;
	u.usri1_priv = USER_PRIV_USER;
	u.usri1_comment = (wchar_t *)L"ward sandbox user (ward-setup.exe)";
	u.usri1_flags = UF_SCRIPT | UF_DONT_EXPIRE_PASSWD | UF_PASSWD_CANT_CHANGE;
	return net_result(NetUserAdd(NULL, 1, (LPBYTE)&u, &err), why, n);
}

static int s_user_set_password(void *ctx, const char *name, const char *pw, char *why, size_t n)
{
	_cleanup_free_ wchar_t *wn = win32_wide(name), *wp = win32_wide(pw);
	USER_INFO_1003 u;
	DWORD err = 0;

	(void)ctx;
	if (!wn || !wp)
		return -ENOMEM;
	u.usri1003_password = wp;
	return net_result(NetUserSetInfo(NULL, wn, 1003, (LPBYTE)&u, &err), why, n);
}

static int s_logon_check(void *ctx, const char *name, const char *pw, char *why, size_t n)
{
	_cleanup_free_ wchar_t *wn = win32_wide(name), *wp = win32_wide(pw);
	HANDLE h = NULL;

	(void)ctx;
	if (!wn || !wp)
		return -ENOMEM;
	if (!LogonUserW(wn, L".", wp, LOGON32_LOGON_NETWORK, LOGON32_PROVIDER_DEFAULT, &h)) {
		DWORD e = GetLastError();

		snprintf(why, n, "LogonUserW: error %lu", (unsigned long)e);
		return e ? win32_errno(e) : -EACCES;
	}
	CloseHandle(h);
	return 0;
}

static int s_user_delete(void *ctx, const char *name)
{
	_cleanup_free_ wchar_t *wn = win32_wide(name);

	(void)ctx;
	return wn ? net_result(NetUserDel(NULL, wn), NULL, 0) : -ENOMEM;
}

static int s_hidden_get(void *ctx, const char *name, bool *ret)
{
	_cleanup_free_ wchar_t *wn = win32_wide(name);
	DWORD v = 1, n = sizeof(v);
	LSTATUS s;

	(void)ctx;
	*ret = false;
	if (!wn)
		return -ENOMEM;
	s = RegGetValueW(HKEY_LOCAL_MACHINE, USERLIST, wn, RRF_RT_REG_DWORD, NULL, &v, &n);
	if (s == ERROR_FILE_NOT_FOUND)
		return 0;
	if (s != ERROR_SUCCESS)
		return win32_errno((DWORD)s);
	*ret = v == 0;
	return 0;
}

static int s_hidden_set(void *ctx, const char *name)
{
	_cleanup_free_ wchar_t *wn = win32_wide(name);
	HKEY k;
	DWORD v = 0;
	LSTATUS s;

	(void)ctx;
	if (!wn)
		return -ENOMEM;
	s = RegCreateKeyExW(HKEY_LOCAL_MACHINE, USERLIST, 0, NULL, 0, KEY_SET_VALUE, NULL, &k, NULL);
	if (s != ERROR_SUCCESS)
		return win32_errno((DWORD)s);
	s = RegSetValueExW(k, wn, 0, REG_DWORD, (const BYTE *)&v, sizeof(v));
	RegCloseKey(k);
	return s == ERROR_SUCCESS ? 0 : win32_errno((DWORD)s);
}

static int s_hidden_delete(void *ctx, const char *name)
{
	_cleanup_free_ wchar_t *wn = win32_wide(name);
	LSTATUS s;

	(void)ctx;
	if (!wn)
		return -ENOMEM;
	s = RegDeleteKeyValueW(HKEY_LOCAL_MACHINE, USERLIST, wn);
	return s == ERROR_SUCCESS || s == ERROR_FILE_NOT_FOUND ? 0 : win32_errno((DWORD)s);
}

static int dpapi(bool protect, const void *in, size_t n, void **ret, size_t *n_ret)
{
	DATA_BLOB a = { .cbData = (DWORD)n, .pbData = (BYTE *)in }, b = { 0 };
	BOOL ok = protect ? CryptProtectData(&a, L"ward", NULL, NULL, NULL,
					     CRYPTPROTECT_UI_FORBIDDEN, &b)
			  : CryptUnprotectData(&a, NULL, NULL, NULL, NULL, CRYPTPROTECT_UI_FORBIDDEN,
					       &b);
	void *out;

	if (!ok)
		return win32_errno(GetLastError());
	out = malloc(b.cbData + 1);
	if (out)
		memcpy(out, b.pbData, b.cbData);
	SecureZeroMemory(b.pbData, b.cbData);
	LocalFree(b.pbData);
	if (!out)
		return -ENOMEM;
	*ret = out;
	*n_ret = b.cbData;
	return 0;
}

static int s_protect(void *ctx, const void *in, size_t n, void **ret, size_t *n_ret)
{
	(void)ctx;
	return dpapi(true, in, n, ret, n_ret);
}

static int s_unprotect(void *ctx, const void *in, size_t n, void **ret, size_t *n_ret)
{
	(void)ctx;
	return dpapi(false, in, n, ret, n_ret);
}

static int s_file_write(void *ctx, const char *path, const void *data, size_t n, const char *sddl)
{
	_cleanup_free_ wchar_t *wp = win32_wide(path), *ws = sddl ? win32_wide(sddl) : NULL;
	SECURITY_ATTRIBUTES sa = { .nLength = sizeof(sa) };
	PSECURITY_DESCRIPTOR sd = NULL;
	DWORD put = 0;
	HANDLE h;
	int r = 0;

	(void)ctx;
	if (!wp || (sddl && !ws))
		return -ENOMEM;
	if (ws && !ConvertStringSecurityDescriptorToSecurityDescriptorW(ws, SDDL_REVISION_1, &sd,
									  NULL))
		return win32_errno(GetLastError());
	sa.lpSecurityDescriptor = sd;
	/* A new file, so that its DACL is the one given (an existing file
	 * keeps its own under CREATE_ALWAYS). */
	if (!DeleteFileW(wp) && GetLastError() != ERROR_FILE_NOT_FOUND) {
		r = win32_errno(GetLastError());
		goto out;
	}
	h = CreateFileW(wp, GENERIC_WRITE, 0, sd ? &sa : NULL, CREATE_NEW, FILE_ATTRIBUTE_NORMAL,
			NULL);
	if (h == INVALID_HANDLE_VALUE) {
		r = win32_errno(GetLastError());
		goto out;
	}
	if (!WriteFile(h, data, (DWORD)n, &put, NULL) || put != n || !FlushFileBuffers(h))
		r = -EIO;
	CloseHandle(h);
out:
	if (sd)
		LocalFree(sd);
	return r;
}

static int s_file_read(void *ctx, const char *path, void **ret, size_t *n_ret)
{
	_cleanup_free_ wchar_t *wp = win32_wide(path);
	char *text = NULL;
	int r;

	(void)ctx;
	if (!wp)
		return -ENOMEM;
	/* Binary-safe: win32_text_read reads the whole file by size. */
	r = win32_text_read(wp, &text);
	if (r < 0)
		return r;
	{
		WIN32_FILE_ATTRIBUTE_DATA a;

		if (!GetFileAttributesExW(wp, GetFileExInfoStandard, &a)) {
			free(text);
			return win32_errno(GetLastError());
		}
		*n_ret = a.nFileSizeLow;
	}
	*ret = text;
	return 0;
}

static int s_file_delete(void *ctx, const char *path)
{
	_cleanup_free_ wchar_t *wp = win32_wide(path);

	(void)ctx;
	if (!wp)
		return -ENOMEM;
	return DeleteFileW(wp) ? 0 : win32_errno(GetLastError());
}

static int s_dacl_get(void *ctx, const char *path, char **ret)
{
	Win32SetupCtx *c = ctx;

	return c->api.get_sddl(c->api.ctx, path, false, ret);
}

static int s_dacl_set(void *ctx, const char *path, const char *sddl)
{
	Win32SetupCtx *c = ctx;

	return c->api.set_sddl(c->api.ctx, path, false, sddl);
}

static wchar_t *setup_journal(Win32SetupCtx *c)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s\\setup.journal", c->state_dir);
	return win32_wide(buf);
}

static int s_journal_read(void *ctx, char **ret)
{
	_cleanup_free_ wchar_t *p = setup_journal(ctx);

	return p ? win32_text_read(p, ret) : -ENOMEM;
}

static int s_journal_append(void *ctx, const char *text)
{
	_cleanup_free_ wchar_t *p = setup_journal(ctx);

	return p ? win32_text_append(p, WIN_SETUP_JOURNAL_HEADER, text) : -ENOMEM;
}

static int s_journal_replace(void *ctx, const char *text)
{
	_cleanup_free_ wchar_t *p = setup_journal(ctx);

	return p ? win32_text_replace(p, text) : -ENOMEM;
}

void win32_setup_init(WinSetupApi *api, Win32SetupCtx *ctx)
{
	win32_api_init(&ctx->api, &ctx->base);
	ctx->base.state_dir = ctx->state_dir;
	*api = (WinSetupApi){
		.ctx = ctx,
		.elevated = s_elevated,
		.self_sid = s_self_sid,
		.random = s_random,
		.user_get = s_user_get,
		.user_add = s_user_add,
		.user_set_password = s_user_set_password,
		.user_logon_check = s_logon_check,
		.user_delete = s_user_delete,
		.hidden_get = s_hidden_get,
		.hidden_set = s_hidden_set,
		.hidden_delete = s_hidden_delete,
		.dpapi_protect = s_protect,
		.dpapi_unprotect = s_unprotect,
		.file_write = s_file_write,
		.file_read = s_file_read,
		.file_delete = s_file_delete,
		.dacl_get = s_dacl_get,
		.dacl_set = s_dacl_set,
		.fw_add = win32_fw_add,
		.fw_get = win32_fw_get,
		.fw_remove = win32_fw_remove,
		.journal_read = s_journal_read,
		.journal_append = s_journal_append,
		.journal_replace = s_journal_replace,
	};
}
