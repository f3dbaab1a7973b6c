/* Executing one validated tool call: the checks that need the file system
 * (the workspace asked for is the server's root or beneath it, reached
 * without an untrusted symlink; a session belongs to a workspace beneath
 * the root), then ward's own commands, one after the other, through
 * mcp-proc.h. The operator's flags go to every `ward run`; nothing from the
 * request reaches ward's command line but the command itself (after "--"),
 * a checked workspace, a timeout within the server's, a session id and
 * paths (after "--"). */
#pragma once

#include <poll.h>
#include <stdbool.h>

#include "mcp/mcp-config.h"
#include "mcp/mcp-tools.h"

typedef struct McpExec McpExec;

/* Begin executing @call (taken). @tmpdir: a private directory for result
 * files. A call refused by the checks is done at once (its outcome holds
 * the refusal). Returns 0 or -ENOMEM. */
int mcp_exec_start(const McpConfig *cfg, const char *tmpdir, McpCall *call, McpExec **ret);
bool mcp_exec_done(const McpExec *e);
/* Descriptors to poll while not done (at most MCP_EXEC_POLLFDS). */
#define MCP_EXEC_POLLFDS 3
size_t mcp_exec_pollfds(const McpExec *e, struct pollfd *fds);
/* Handle poll's report on them; starts the next step when one ends. */
void mcp_exec_events(McpExec *e, const struct pollfd *fds, size_t n);
/* The client cancelled the call: SIGTERM to ward (`ward run` passes it to
 * the command). */
void mcp_exec_cancel(McpExec *e);
bool mcp_exec_cancelled(const McpExec *e);
const McpCall *mcp_exec_call(const McpExec *e);
const McpOutcome *mcp_exec_outcome(const McpExec *e);
McpExec *mcp_exec_free(McpExec *e);

/* The canonical workspace for @given (NULL: @root): relative to @root or
 * absolute, resolved with path_open_trusted(), and @root or beneath it.
 * Returns 0, or -EPERM with a message for the model in @reterr. */
int mcp_resolve_workspace(const char *root, const char *given, char **ret, char **reterr);
