/* Which workspace paths are protected: one matcher for the sandbox's
 * read-only mounts, the after-run check and copy-on-write review, so that
 * what the command could not write and what apply refuses never differ.
 *
 * An entry of fs.protected is one of:
 *   - a name without '/' (".git", ".vscode"): that name as a component at
 *     any depth, so ".git" covers "a/b/.git" and "a/b/.git/config";
 *   - a path with '/' ("ci/.github/workflows"): anchored at the workspace
 *     root, covering itself and everything beneath it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The entry of @protected that covers the relative, normalized @relpath
 * (first @len bytes), or NULL. */
const char *protected_match(char *const *protected, const char *relpath, size_t len);

/* Is @entry a name that matches at any depth (no '/')? */
bool protected_entry_is_name(const char *entry);

/* Is some protected path strictly beneath @relpath (a directory whose
 * removal or replacement would take a protected path with it)? Name
 * entries are beneath every directory. */
bool protected_below(char *const *protected, const char *relpath);
