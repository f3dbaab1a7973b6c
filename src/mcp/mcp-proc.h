/* One child process of `ward mcp` (always ward's own binary: `ward run`,
 * `ward diff`, ...), with stdin from /dev/null and stdout and stderr read
 * through pipes, both at once and each into a bounded capture, so that
 * neither a full pipe nor a flood of output can stall or exhaust the
 * server. Driven by the caller's poll loop; not a general spawner. */
#pragma once

#include <poll.h>
#include <stddef.h>

#include "mcp/mcp-output.h"

typedef struct McpProc McpProc;

#define MCP_PROC_POLLFDS 3

/* Start @exe with @argv (argv[0] included), its output going to @out and
 * @err (initialized by the caller, borrowed until mcp_proc_free()).
 * Returns 0 or -errno. */
int mcp_proc_spawn(const char *exe, char *const *argv, McpCapture *out, McpCapture *err,
		   McpProc **ret);
/* The descriptors to poll (at most MCP_PROC_POLLFDS); returns how many. */
size_t mcp_proc_pollfds(const McpProc *p, struct pollfd *fds);
/* Handle what poll reported on those descriptors. Returns 1 once the
 * child has exited (its remaining output read, *@ret_exit_code set: its
 * status, or 128+N for signal N), 0 while it runs. */
int mcp_proc_events(McpProc *p, const struct pollfd *fds, size_t n, int *ret_exit_code);
/* Send @sig to the child (if it still runs). */
void mcp_proc_signal(McpProc *p, int sig);
/* Closes the pipes; a child still running is left to run (and, for
 * `ward run`, to notice that its parent is gone). */
McpProc *mcp_proc_free(McpProc *p);
