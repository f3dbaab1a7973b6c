/* The real WinApi (win-api.h): one Win32 call, or a short fixed sequence
 * of them, per function, deciding nothing. Windows-only. */
#pragma once

#include "windows/win-api.h"

typedef struct Win32Ctx {
	char *journal_path;   /* the undo journal, in ward's state dir */
} Win32Ctx;

/* The table, with @ctx (not owned) as its context. */
void win32_api_init(WinApi *api, Win32Ctx *ctx);
