/* The environment block a Windows child gets: src/policy/env-filter.c's
 * rules (env.pass, env.strip, env.set, --env) applied with Windows's
 * case-insensitive names, so "*_TOKEN" strips "github_token" and "PATH"
 * passes "Path". Names come out upper-cased, one entry per name, sorted
 * as CreateProcessW's documentation asks. */
#pragma once

#include "policy/policy.h"

/* New strv of "NAME=VALUE" in @ret (caller frees); -ENOMEM. @set are
 * added last, after filtering ("TEMP=..."; may be NULL). */
int win_env_build(const WardPolicy *p, char *const *envp, char *const *extra, char *const *set,
		  char ***ret);
/* The value of @name in @env (case-insensitive), or NULL. */
/* Set each "NAME=VALUE" of @set in the sorted environment @env (names
 * upper-cased; an existing variable of that name replaced), sorted again,
 * as win_env_build() sets its @set. 0 or -ENOMEM. */
int win_env_set(char ***env, char *const *set);
const char *win_env_get(char *const *env, const char *name);
/* The environment block: each entry and a final NUL ("A=1\0B=2\0\0").
 * Length with both final NULs in @ret_len. Caller frees. */
char *win_env_block(char *const *env, size_t *ret_len);
