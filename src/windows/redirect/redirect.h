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

/* Per-thread reentrancy: the hooks' own file calls go straight through. */
bool redirect_enter(void);
void redirect_leave(void);
