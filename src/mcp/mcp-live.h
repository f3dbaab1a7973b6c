/* `ward mcp --session`: one live session (docs/sessions.md) for the whole
 * MCP connection. Started with `ward session new --live` on the first
 * run_command (and again if it stopped, after limits.session_idle_s),
 * owned by the server (--owner: it stops if the server dies), each
 * run_command a `ward exec` in it (mcp-exec.c), and stopped with `ward
 * session stop` when the connection ends. The server's loop waits while
 * a session starts. */
#pragma once

#include <stdbool.h>

#include "mcp/mcp-config.h"

/* The session's id in @cfg->live, started if there is none or the one there
 * has no live sandbox any more. 0, or -EPERM with a message for the model
 * in *@reterr (what `ward session new` said), or -ENOMEM. */
int mcp_live_ensure(const McpConfig *cfg, char **reterr);
/* Stop it (if one was started) and wait for that. */
void mcp_live_stop(const McpConfig *cfg);
