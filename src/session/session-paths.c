/* A live session's paths (session-paths.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "session/session-paths.h"

bool session_id_valid(const char *id)
{
	if (!id || strlen(id) != 16)
		return false;
	for (const char *c = id; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return false;
	return true;
}

int session_live_path(const char *state_dir, const char *id, const char *name, char *buf,
		      size_t n)
{
	int k;

	if (!session_id_valid(id))
		return -EINVAL;
	k = snprintf(buf, n, "%s/live/%s%s%s", state_dir, id, name ? "/" : "", name ? name : "");
	return k < 0 || (size_t)k >= n ? -ENAMETOOLONG : 0;
}
