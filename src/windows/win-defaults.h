/* ward.exe's built-in policy: the shared defaults (env.strip patterns,
 * protected workspace paths, network none) without the Linux file lists,
 * and the Windows variables a program needs to start (SystemRoot, PATH,
 * PATHEXT, ...). Portable. */
#pragma once

#include "policy/policy.h"

/* New policy (caller frees), NULL on OOM. */
WardPolicy *win_policy_defaults(void);

/* ward.exe's policy, in Linux's order: these defaults, each of @presets,
 * @file (or else the default file, %APPDATA%\ward\policy.json, when it
 * exists), then @overrides (the flags, as a policy document merged as
 * "<command line>"; may be NULL); "~" and "~/x" in the fs lists expanded
 * against @home (may be NULL: then such a path is an error). 0 and a new
 * policy in *@ret, or -errno with @pe filled (-ENOMEM: out of memory). */
int win_policy_load(const char *file, char *const *presets, const char *overrides,
		    const char *home, WardPolicy **ret, PolicyError *pe);
