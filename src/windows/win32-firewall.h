/* The Windows Firewall rule of the sandbox-user tier's walls through
 * INetFwPolicy2 (COM, hnetcfg.dll): WinSetupApi's fw_add, fw_get and
 * fw_remove (win-setup-api.h). -ENOSYS where the COM class or INetFwRule3
 * is missing (Wine). Windows-only. */
#pragma once

#include <stddef.h>

#include "windows/win-setup.h"

int win32_fw_add(void *ctx, const WinFwRule *rule, char *why, size_t n_why);
int win32_fw_get(void *ctx, const char *name, WinFwRule *ret, char *why, size_t n_why);
int win32_fw_remove(void *ctx, const char *name);
