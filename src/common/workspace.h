/* Which directories may be a run's writable workspace. The workspace is
 * the one place a sandboxed command writes to, and the host trusts it
 * later; a system directory, the home directory or a credential store is
 * not a workspace, whatever path leads to it. Pure: compares canonical
 * paths, touches nothing. */
#pragma once

#include <stdbool.h>

typedef struct WorkspaceCheck {
	const char *workspace;   /* canonical */
	const char *home;        /* canonical */
	char *const *deny;       /* the policy's fs.deny, canonical forms included */
	const char *state_dir;   /* ward's own; may be NULL */
	const char *config_dir;  /* may be NULL */
	bool allow_unsafe;       /* --allow-unsafe-workspace */
} WorkspaceCheck;

/* 0 when @c->workspace may be used, else -EPERM (never allowed) or -EACCES
 * (allowed with allow_unsafe) and a sentence saying why in @reterr_reason
 * (caller frees). Always refused: "/", the home directory
 * and its ancestors, a denied path or one beneath it, ward's own state and
 * configuration directories, at, beneath or above them. Refused unless
 * allow_unsafe: system directories (safe-path.h), the directories directly
 * in the home directory whose names start with "." (~/.config, ~/.local,
 * ...) and the credential stores beneath the home directory (~/.ssh,
 * ~/.gnupg, ~/.aws, ... at any depth beneath them). */
int workspace_check(const WorkspaceCheck *c, char **reterr_reason);
