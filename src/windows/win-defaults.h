/* ward.exe's built-in policy: the shared defaults (env.strip patterns,
 * protected workspace paths, network none) without the Linux file lists,
 * and the Windows variables a program needs to start (SystemRoot, PATH,
 * PATHEXT, ...). Portable. */
#pragma once

#include "policy/policy.h"

/* New policy (caller frees), NULL on OOM. */
WardPolicy *win_policy_defaults(void);
