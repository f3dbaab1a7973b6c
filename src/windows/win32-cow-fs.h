/* The real WinCowFs (win32-cow-fs.c). Windows-only. */
#pragma once

#include "windows/win-cow-review.h"

void win32_cow_fs_init(WinCowFs *fs);
