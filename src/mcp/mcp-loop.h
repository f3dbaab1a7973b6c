/* The stdio transport of `ward mcp`: newline-delimited JSON-RPC messages on
 * @in_fd, responses on @out_fd, tool calls running meanwhile (up to
 * McpConfig.max_parallel at once, more queued), all in one single-threaded
 * poll loop. A line longer than MCP_MAX_MESSAGE is discarded and answered
 * with -32600. When @in_fd reaches EOF or @out_fd is gone (EPIPE), the
 * loop returns at once without waiting for running calls: ward exits, and
 * each `ward run` it started kills its sandbox when it sees its parent
 * gone. */
#pragma once

#include "mcp/mcp-config.h"

/* Returns 0 at EOF, -EPIPE when the client stopped reading, -errno. */
int mcp_serve(const McpConfig *cfg, int in_fd, int out_fd);
