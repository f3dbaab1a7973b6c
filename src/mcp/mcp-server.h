/* The MCP methods `ward mcp` answers (initialize, notifications/initialized,
 * ping, tools/list, tools/call, notifications/cancelled), as a message
 * handler: one line in, an action out. Pure: no I/O, so the unit tests and
 * the fuzz target drive it directly. A tools/call that passes the checks
 * becomes an McpCall for the caller to execute (mcp-exec.h), whose
 * outcome mcp_server_call_done() turns into the response. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "mcp/mcp-config.h"
#include "mcp/mcp-tools.h"

/* Protocol revisions ward speaks, newest first; a client asking for
 * another gets the newest (the MCP lifecycle's negotiation). */
extern const char *const mcp_protocol_versions[];

typedef struct McpServer {
	const McpConfig *config; /* borrowed */
	bool initialized;        /* initialize answered */
	char protocol[16];       /* the version agreed on */
} McpServer;

typedef struct McpAction {
	cJSON *reply;        /* a message to send now, or NULL (owned) */
	McpCall *call;       /* a tool call to execute, or NULL (owned) */
	cJSON *cancel;       /* the id of a request the client cancelled, or NULL (owned) */
} McpAction;

void mcp_server_init(McpServer *s, const McpConfig *config);
/* Handle one message (@len bytes, one line without its newline). Never
 * fails on what the client sent: the answer is in @ret. -ENOMEM only. */
int mcp_server_handle(McpServer *s, const char *line, size_t len, McpAction *ret);
void mcp_action_done(McpAction *a);
/* The response to @call, executed with outcome @o. NULL on OOM. */
cJSON *mcp_server_call_done(McpServer *s, const McpCall *call, const McpOutcome *o);
