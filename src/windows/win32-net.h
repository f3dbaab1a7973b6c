/* The real WinNetApi (win-net-api.h): fwpuclnt.dll's Fwpm* functions and
 * firewallapi.dll's NetworkIsolation*AppContainerConfig, both looked up at
 * run time (a missing DLL or function is -ENOSYS, so the walls are refused,
 * never skipped), and the network journal in ward's state dir.
 * Windows-only. */
#pragma once

#include <wchar.h>

#include "windows/win-net-api.h"

typedef struct Win32NetCtx {
	const char *state_dir;   /* %LOCALAPPDATA%\ward: network.journal, network.lock */
	void *lock;              /* network.lock's handle while held */
} Win32NetCtx;

void win32_net_init(WinNetApi *api, Win32NetCtx *ctx);
/* ward's lock around the machine-wide network state (the journal, the
 * loopback list, which Set replaces whole): a file opened without sharing,
 * waited for up to 30 s. */
int win32_net_lock(Win32NetCtx *ctx);
void win32_net_unlock(Win32NetCtx *ctx);

/* Small text files (journals): read whole (-ENOENT), append with @header
 * first when empty (flushed before it returns), replace whole through a
 * temporary file (NULL: delete). */
int win32_text_read(const wchar_t *path, char **ret);
int win32_text_append(const wchar_t *path, const char *header, const char *text);
int win32_text_replace(const wchar_t *path, const char *text);
