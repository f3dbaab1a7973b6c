/* The Win32 calls ward-setup.exe makes, behind a table (win32-setup.c is
 * the real one; the unit tests' fake records, fails and lies). One call per
 * function, deciding nothing; 0 or a negative errno, @why for a human. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "windows/win-setup.h"
#include "windows/win-sid.h"

typedef struct WinSetupApi {
	void *ctx;
	/* 1 when the process token is elevated, 0 when not. */
	int (*elevated)(void *ctx);
	/* The SID of the user running setup (the token's user). */
	int (*self_sid)(void *ctx, char ret[WIN_SID_STRING_MAX]);
	int (*random)(void *ctx, void *buf, size_t n);
	/* NetUserGetInfo + LookupAccountNameW: -ENOENT when no such user. */
	int (*user_get)(void *ctx, const char *name, char ret_sid[WIN_SID_STRING_MAX]);
	/* NetUserAdd (level 1, password never expires, cannot change it). */
	int (*user_add)(void *ctx, const char *name, const char *password, char *why, size_t n_why);
	/* NetUserSetInfo level 1003. */
	int (*user_set_password)(void *ctx, const char *name, const char *password, char *why,
				 size_t n_why);
	/* LogonUserW with the password (LOGON32_LOGON_NETWORK): proves the
	 * password is the user's. */
	int (*user_logon_check)(void *ctx, const char *name, const char *password, char *why,
				size_t n_why);
	int (*user_delete)(void *ctx, const char *name);
	/* Winlogon\SpecialAccounts\UserList\<name> (REG_DWORD 0). */
	int (*hidden_get)(void *ctx, const char *name, bool *ret);
	int (*hidden_set)(void *ctx, const char *name);
	int (*hidden_delete)(void *ctx, const char *name);
	/* CryptProtectData / CryptUnprotectData, user scope, no UI. */
	int (*dpapi_protect)(void *ctx, const void *in, size_t n, void **ret, size_t *n_ret);
	int (*dpapi_unprotect)(void *ctx, const void *in, size_t n, void **ret, size_t *n_ret);
	/* Write a file created with @sddl as its DACL (replacing any). */
	int (*file_write)(void *ctx, const char *path, const void *data, size_t n, const char *sddl);
	int (*file_read)(void *ctx, const char *path, void **ret, size_t *n_ret); /* -ENOENT */
	int (*file_delete)(void *ctx, const char *path);
	/* A path's DACL as SDDL, and set it. */
	int (*dacl_get)(void *ctx, const char *path, char **ret);
	int (*dacl_set)(void *ctx, const char *path, const char *sddl);
	/* The Windows Firewall through INetFwPolicy2 (COM): add @rule (one of
	 * the same name is replaced), read a rule back by name (-ENOENT: none),
	 * remove it (-ENOENT: none). -ENOSYS: the COM class or INetFwRule3 is
	 * missing (Wine). */
	int (*fw_add)(void *ctx, const WinFwRule *rule, char *why, size_t n_why);
	int (*fw_get)(void *ctx, const char *name, WinFwRule *ret, char *why, size_t n_why);
	int (*fw_remove)(void *ctx, const char *name);
	/* The setup journal: read (-ENOENT), append (flushed), replace (NULL: delete). */
	int (*journal_read)(void *ctx, char **ret);
	int (*journal_append)(void *ctx, const char *text);
	int (*journal_replace)(void *ctx, const char *text);
} WinSetupApi;
