/* Lexical path helpers: normalize, expand "~", join and compare paths as
 * strings. Deliberately no symlink resolution and no file system access:
 * the policy is validated as text, and the sandbox decides what a path
 * means on the real file system. */
#pragma once

#include <stdbool.h>

/* Collapse "//", "." and ".." lexically. An absolute path stays absolute
 * ("/.." is "/"); a relative one keeps the ".." it cannot cancel
 * ("a/../../b" is "../b", "a/.." is "."). No trailing slash except "/".
 * Returns 0 and a new string in @ret, -EINVAL for "" or -ENOMEM. */
int path_normalize(const char *path, char **ret);

/* "~" -> @home, "~/x" -> "@home/x", anything else copied unchanged.
 * "~user" is -EINVAL (other users' homes are not supported). */
int path_expand_home(const char *path, const char *home, char **ret);

/* @a + "/" + @b, without doubling the slash. Caller frees. */
int path_join(const char *a, const char *b, char **ret);

static inline bool path_is_absolute(const char *p)
{
	return p && p[0] == '/';
}

/* Is @path equal to or beneath @dir? Both must be normalized, and both
 * absolute or both relative. "/a/bc" is not beneath "/a/b". */
bool path_is_beneath(const char *path, const char *dir);

/* Does the normalized relative @path leave its base ("..", "../x")? */
bool path_escapes(const char *path);

/* Does @path contain a glob character ('*', '?' or '[')? */
bool path_has_wildcard(const char *path);
