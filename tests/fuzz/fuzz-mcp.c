/* Fuzz target "mcp": the MCP message handler (mcp_server_handle: JSON-RPC
 * checks, method dispatch, tool argument checks) on one line of input, and
 * the result builder and output capture on the same bytes as a command's
 * output. Invariants: every answer prints as one line of valid UTF-8 JSON
 * ending in a newline; an accepted call's argv is non-empty; nothing
 * crashes or leaks. The first byte picks the server's state (initialized
 * or not, --cow, --no-apply). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/jsonrpc.h"
#include "mcp/mcp-output.h"
#include "mcp/mcp-server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(const cJSON *msg)
{
	char *t = jsonrpc_print_line(msg);
	size_t n;
	cJSON *back;

	if (!t)
		abort();
	n = strlen(t);
	if (n == 0 || t[n - 1] != '\n' || memchr(t, '\n', n - 1) || !jsonrpc_utf8_valid(t, n))
		abort();
	back = cJSON_ParseWithLength(t, n - 1);
	if (!back)
		abort();
	cJSON_Delete(back);
	free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *const flags[] = { NULL };
	McpConfig cfg = {
		.ward_exe = "/bin/false",
		.root = "/srv/ws",
		.run_flags = flags,
		.timeout_s = 60,
		.max_output = 256,
		.max_parallel = 1,
	};
	McpServer s;
	McpAction a = {};
	uint8_t mode;

	if (size < 1 || size > 64 * 1024)
		return 0;
	mode = data[0];
	data++;
	size--;
	cfg.force_cow = mode & 2;
	cfg.allow_apply = !(mode & 4);
	mcp_server_init(&s, &cfg);
	if (mode & 1) {
		static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
					   "\"params\":{\"protocolVersion\":\"2025-06-18\"}}";
		if (mcp_server_handle(&s, init, strlen(init), &a) < 0 || !a.reply)
			abort();
		mcp_action_done(&a);
	}
	if (mcp_server_handle(&s, (const char *)data, size, &a) < 0)
		return 0; /* out of memory */
	if (a.reply)
		check_line(a.reply);
	if (a.call) {
		McpOutcome o = { .n_steps = 1 };
		cJSON *r;

		if (a.call->tool == MCP_TOOL_RUN_COMMAND && (!a.call->argv || !a.call->argv[0]))
			abort();
		/* The same bytes as the command's output and a result. */
		o.steps[0].ran = true;
		o.steps[0].exit_code = mode;
		if (mcp_capture_init(&o.steps[0].out, cfg.max_output) == 0 &&
		    mcp_capture_init(&o.steps[0].err, 16) == 0) {
			mcp_capture_add(&o.steps[0].out, (const char *)data, size);
			mcp_capture_add(&o.steps[0].err, (const char *)data, size);
			o.steps[0].result = cJSON_ParseWithLength((const char *)data, size);
			r = mcp_server_call_done(&s, a.call, &o);
			if (r) {
				check_line(r);
				cJSON_Delete(r);
			}
		}
		mcp_outcome_done(&o);
	}
	mcp_action_done(&a);
	return 0;
}
