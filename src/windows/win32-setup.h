/* The real WinSetupApi (win-setup-api.h). Windows-only. */
#pragma once

#include "windows/win-api.h"
#include "windows/win-setup-api.h"
#include "windows/win32-api.h"

typedef struct Win32SetupCtx {
	const char *state_dir;  /* %LOCALAPPDATA%\ward: setup.journal, the record */
	Win32Ctx base;          /* the run layer's, for its DACL calls */
	WinApi api;
} Win32SetupCtx;

/* @ctx->state_dir set by the caller first. */
void win32_setup_init(WinSetupApi *api, Win32SetupCtx *ctx);
