/* The protected-path matcher (protected.h). Pure string work: no file
 * system access, no symlink resolution. */
#include <string.h>

#include "common/strv.h"
#include "policy/protected.h"

bool protected_entry_is_name(const char *entry)
{
	return entry && *entry && !strchr(entry, '/');
}

/* Does the anchored @entry equal the first component(s) of @path? */
static bool anchored_covers(const char *entry, const char *path, size_t len)
{
	size_t n = strlen(entry);

	/* "dir/" means "dir". */
	while (n > 1 && entry[n - 1] == '/')
		n--;
	if (n > len || strncmp(path, entry, n) != 0)
		return false;
	return n == len || path[n] == '/';
}

static bool name_covers(const char *name, const char *path, size_t len)
{
	size_t n = strlen(name), start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		if (i - start == n && strncmp(path + start, name, n) == 0)
			return true;
		start = i + 1;
	}
	return false;
}

const char *protected_match(char *const *protected, const char *relpath, size_t len)
{
	STRV_FOREACH(p, protected)
	{
		if (protected_entry_is_name(*p) ? name_covers(*p, relpath, len)
						: anchored_covers(*p, relpath, len))
			return *p;
	}
	return NULL;
}

bool protected_below(char *const *protected, const char *relpath)
{
	size_t len = strlen(relpath);

	STRV_FOREACH(p, protected)
	{
		if (protected_entry_is_name(*p)) {
			if (!name_covers(*p, relpath, len))
				return true;
			continue;
		}
		if (!anchored_covers(*p, relpath, len) && anchored_covers(relpath, *p, strlen(*p)))
			return true;
	}
	return false;
}
