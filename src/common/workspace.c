/* What may be a writable workspace: workspace.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/safe-path.h"
#include "common/strv.h"
#include "common/workspace.h"

/* Beneath the home directory: where credentials and keys live. */
/* clang-format off */
static const char *const credential_dirs[] = {
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store", ".pki",
	".gcloud", ".config/gcloud", ".config/gh", ".config/hub", ".local/share/keyrings",
	".mozilla", ".thunderbird", ".vault-token",
};
/* clang-format on */

static bool at_or_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

__attribute__((format(printf, 2, 3))) static int refuse(char **reterr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(reterr, fmt, ap) < 0)
		*reterr = NULL;
	va_end(ap);
	return -EPERM;
}

/* The same, for what --allow-unsafe-workspace may accept. */
#define refuse_unless_allowed(...) (refuse(__VA_ARGS__), -EACCES)

int workspace_check(const WorkspaceCheck *c, char **reterr_reason)
{
	const char *ws = c->workspace, *home = c->home;
	size_t hn = strlen(home);

	if (strcmp(ws, "/") == 0)
		return refuse(reterr_reason, "'%s' is the root directory", ws);
	if (at_or_below(home, ws))
		return refuse(reterr_reason, "'%s' is the home directory '%s' or contains it", ws,
			      home);
	STRV_FOREACH(d, c->deny)
	if (at_or_below(ws, *d))
		return refuse(reterr_reason, "'%s' is denied by the policy (fs.deny '%s')", ws, *d);
	const char *own[] = { c->state_dir, c->config_dir };
	for (size_t i = 0; i < ELEMENTSOF(own); i++)
		if (own[i] && (at_or_below(ws, own[i]) || at_or_below(own[i], ws)))
			return refuse(reterr_reason, "'%s' holds ward's own state or configuration ('%s')",
				      ws, own[i]);
	if (c->allow_unsafe)
		return 0;
	if (path_is_system_dir(ws))
		return refuse_unless_allowed(reterr_reason, "'%s' is a system directory", ws);
	if (strncmp(ws, home, hn) == 0 && ws[hn] == '/') {
		const char *rel = ws + hn + 1;
		for (size_t i = 0; i < ELEMENTSOF(credential_dirs); i++)
			if (at_or_below(rel, credential_dirs[i]))
				return refuse_unless_allowed(reterr_reason,
							     "'%s' is a credential store ('~/%s')", ws,
							     credential_dirs[i]);
		if (rel[0] == '.' && !strchr(rel, '/'))
			return refuse_unless_allowed(reterr_reason,
						     "'%s' is a configuration or data directory of "
						     "the home directory ('~/%s')",
						     ws, rel);
	}
	return 0;
}
