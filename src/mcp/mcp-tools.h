/* The tools `ward mcp` offers: their descriptions and input schemas
 * (tools/list), the checks on a call's arguments (tools/call), and the
 * CallToolResult built from what ward's own commands reported. Pure: the
 * checks that need the file system (is this workspace beneath the root?
 * whose session is this?) are mcp-exec.h's. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/cleanup.h"
#include "mcp/mcp-config.h"
#include "mcp/mcp-output.h"

typedef enum McpTool {
	MCP_TOOL_RUN_COMMAND,
	MCP_TOOL_SESSION_DIFF,
	MCP_TOOL_SESSION_APPLY,
	MCP_TOOL_SESSION_DISCARD,
	_MCP_TOOL_MAX,
	_MCP_TOOL_INVALID = -22, /* -EINVAL */
} McpTool;

const char *mcp_tool_to_string(McpTool t);

#define MCP_MAX_ARGV 4096      /* argv entries of run_command */
#define MCP_MAX_PATHS 1024     /* paths of session_diff / session_apply */

/* One validated tools/call. */
typedef struct McpCall {
	cJSON *id;          /* the request's id (owned copy) */
	McpTool tool;
	char **argv;        /* run_command: "sh" "-c" COMMAND, or the argv given */
	char *workspace;    /* as given (relative to the root, or absolute); NULL: the root */
	uint64_t timeout_s; /* the run's timeout (the server's when not given) */
	bool cow;           /* a new copy-on-write session */
	bool background;    /* --session: `ward exec --background`, returns once it runs */
	char *session;      /* an existing session (checked: 16 hex digits) */
	char **paths;       /* session_diff / session_apply: PATHs, may be NULL */
} McpCall;

McpCall *mcp_call_free(McpCall *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(McpCall *, mcp_call_free)

/* The tools array for tools/list. NULL on OOM. */
cJSON *mcp_tools_list(const McpConfig *cfg);

/* Check tool @name's @args (an object, or NULL) against its schema and
 * the server's limits. Returns 0 and the call in @ret; -EINVAL with a
 * message (-32602 Invalid params: an unknown tool, a missing or wrongly
 * typed argument, an unknown argument); -EPERM with a message for the
 * model (a tool error: what the operator's configuration does not
 * allow, e.g. a timeout above the server's); -ENOMEM. @reterr: caller
 * frees. */
int mcp_call_parse(const McpConfig *cfg, const cJSON *id, const char *name, const cJSON *args,
		   McpCall **ret, char **reterr);

/* What one step (one ward command) of a call left. */
typedef struct McpStep {
	bool ran;           /* the ward command was started */
	int exit_code;      /* its exit status, 128+N for signal N */
	McpCapture out, err;
	cJSON *result;      /* `ward run --result` / `ward diff --json` / `ward apply --json`; may be NULL */
} McpStep;

#define MCP_MAX_STEPS 2

typedef struct McpOutcome {
	McpStep steps[MCP_MAX_STEPS];
	size_t n_steps;
	char *refusal;      /* set: nothing ran, and this is why (a tool error) */
} McpOutcome;

void mcp_outcome_done(McpOutcome *o);

/* The CallToolResult: content (one text item: a summary, then stdout and
 * stderr, each bounded with a marker), structuredContent (the same as
 * fields, and ward's own result object), isError when the command or
 * command failed or was refused. NULL on OOM. */
cJSON *mcp_call_result(const McpConfig *cfg, const McpCall *call, const McpOutcome *o);
/* A tool error result with @message alone. */
cJSON *mcp_tool_error(const char *message);
