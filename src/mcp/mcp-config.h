/* What `ward mcp` was started with: the operator's choices, fixed for the
 * server's life. Every limit a client request is checked against lives
 * here, and nothing a client sends changes it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MCP_DEFAULT_TIMEOUT_S 600
#define MCP_DEFAULT_MAX_OUTPUT (64 * 1024)
#define MCP_DEFAULT_MAX_PARALLEL 4
/* The longest line (one JSON-RPC message) ward reads. */
#define MCP_MAX_MESSAGE (1024 * 1024)

/* The live session of `ward mcp --session` (mcp-live.h). */
typedef struct McpLive {
	char id[17];            /* "" until the first run_command started it */
} McpLive;

typedef struct McpConfig {
	const char *ward_exe;   /* the ward binary each tool runs ("/proc/self/exe") */
	const char *root;       /* canonical: every workspace is it or beneath it */
	const char *policy_file; /* -p FILE for `ward diff` / `ward apply`; may be NULL */
	/* `ward run` options every run gets (policy, presets, network, ...):
	 * the operator's, validated when the server started. */
	char *const *run_flags;
	uint64_t timeout_s;     /* default and ceiling of a run's timeout */
	size_t max_output;      /* bytes kept per stream (stdout, stderr, diff) */
	unsigned max_parallel;  /* tool calls running at once */
	bool force_cow;         /* --cow: every run writes to a copy-on-write session */
	bool allow_apply;       /* false (--no-apply): session_apply is not offered */
	McpLive *live;          /* --session: every run in one live session; NULL: cold runs */
} McpConfig;
