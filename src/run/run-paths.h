/* The host paths `ward run` acts on for the user: the workspace it mounts
 * writable and the --result file it writes, resolved and written so that
 * nothing a sandboxed command planted (a symlink in place of a directory,
 * a result file turned into a link to a victim) redirects them. */
#pragma once

#include <stdbool.h>

#include "common/error.h"
#include "policy/policy.h"

/* The workspace @given (NULL: the current directory) as a canonical path,
 * reached without an untrusted symlink (safe-path.h). 0, or -errno with
 * the reason in @reterr (step "workspace"). */
int run_resolve_workspace(const char *given, char **ret, WardError *reterr);

/* May @ws be this run's writable workspace under @pol (workspace.h)? 0, or
 * -errno with the reason and what to do in @reterr. */
int run_check_workspace(const char *ws, const char *home, const WardPolicy *pol,
			const char *state_dir, const char *config_dir, bool allow_unsafe,
			WardError *reterr);

/* Write @text to the --result FILE @path without following a symlink
 * (safe-path.h write_file_safe). Logs a warning on failure; returns -errno. */
int run_write_result(const char *path, const char *text);
