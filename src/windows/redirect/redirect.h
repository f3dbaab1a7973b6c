/* The copy-on-write redirector, ward-redirect.dll: injected by ward.exe
 * into the suspended child (win32-inject.c), it hooks the ntdll calls a
 * file open or change takes, asks the plan layer's win_cow_decide() where
 * each one goes, copies a workspace file up before its first write, and
 * signals readiness on ward's pipe. Convenience, never the boundary: the
 * workspace's ACL is read-only to the sandbox identity, so whatever the
 * hooks miss (a direct system call, a module loaded later, an open by
 * id) is refused by Windows, not written. Windows-only. */
#pragma once

#include <stdbool.h>
#include <windows.h>
#include <winternl.h>

#include "windows/win-cow.h"

typedef struct RedirectConfig {
	WinCowSession session;   /* workspace, upper, protected names */
	char *whiteout;          /* the whiteout tree: an empty file per deleted name */
	char **protected_;
	wchar_t *pipe;
} RedirectConfig;

extern RedirectConfig redirect_cfg;

/* The hooks' originals (ntdll's exports) and their installation. */
int redirect_hooks_install(unsigned *ret_patched);

/* Patch every import slot in every loaded module (but @self) that holds
 * @orig to @hook; the number patched. */
unsigned redirect_iat_patch(HMODULE self, void *orig, void *hook);

/* Shared by the hooks (redirect-nt.c) and the listings (redirect-dir.c). */
char *redirect_handle_path(HANDLE h);          /* "C:\x" of a handle, or NULL */
const char *redirect_ws_rel(const char *path); /* relative to the workspace, or NULL */
bool redirect_whiteout_covers(const char *rel);

/* Merged directory listings (redirect-dir.c). */
typedef NTSTATUS(NTAPI *RedirectQueryDirFn)(HANDLE, HANDLE, PVOID, PVOID, PIO_STATUS_BLOCK, PVOID,
					    ULONG, ULONG, BOOLEAN, PUNICODE_STRING, BOOLEAN);
typedef NTSTATUS(NTAPI *RedirectQueryDirExFn)(HANDLE, HANDLE, PVOID, PVOID, PIO_STATUS_BLOCK,
					      PVOID, ULONG, ULONG, ULONG, PUNICODE_STRING);
typedef NTSTATUS(NTAPI *RedirectCloseFn)(HANDLE);
extern RedirectQueryDirFn redirect_o_querydir;
extern RedirectQueryDirExFn redirect_o_querydir_ex;
extern RedirectCloseFn redirect_o_close;
void redirect_dir_init(void);
NTSTATUS NTAPI redirect_h_querydir(HANDLE h, HANDLE event, PVOID apc, PVOID ctx,
				   PIO_STATUS_BLOCK io, PVOID out, ULONG len, ULONG cls,
				   BOOLEAN single, PUNICODE_STRING mask, BOOLEAN restart);
NTSTATUS NTAPI redirect_h_querydir_ex(HANDLE h, HANDLE event, PVOID apc, PVOID ctx,
				      PIO_STATUS_BLOCK io, PVOID out, ULONG len, ULONG cls,
				      ULONG flags, PUNICODE_STRING mask);
NTSTATUS NTAPI redirect_h_close(HANDLE h);

/* Per-thread reentrancy: the hooks' own file calls go straight through. */
bool redirect_enter(void);
void redirect_leave(void);
