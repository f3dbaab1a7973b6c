/* MCP lifecycle and method dispatch (mcp-server.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/cleanup.h"
#include "config.h"
#include "mcp/jsonrpc.h"
#include "mcp/mcp-server.h"

const char *const mcp_protocol_versions[] = {
	"2025-11-25",
	"2025-06-18",
	"2025-03-26",
	"2024-11-05",
	NULL,
};

void mcp_server_init(McpServer *s, const McpConfig *config)
{
	*s = (McpServer){ .config = config };
}

void mcp_action_done(McpAction *a)
{
	cJSON_Delete(a->reply);
	mcp_call_free(a->call);
	cJSON_Delete(a->cancel);
	*a = (McpAction){};
}

static const char instructions[] =
	"Commands run in ward's kernel-enforced sandbox. The policy (readable and "
	"writable paths, network, limits) is the operator's and cannot be changed from "
	"here. With cow (or when the server forces it) writes go to a copy-on-write "
	"session: review with session_diff before session_apply.";

static cJSON *initialize(McpServer *s, const cJSON *params, int *ret_code, const char **ret_msg)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
	const char *agreed = mcp_protocol_versions[0];
	_cleanup_cjson_ cJSON *r = NULL;
	cJSON *caps, *tools, *info;

	if (s->initialized) {
		*ret_code = JSONRPC_INVALID_REQUEST;
		*ret_msg = "Invalid Request: already initialized";
		return NULL;
	}
	if (!cJSON_IsObject(params) || !cJSON_IsString(v)) {
		*ret_code = JSONRPC_INVALID_PARAMS;
		*ret_msg = "Invalid params: initialize needs protocolVersion (a string)";
		return NULL;
	}
	for (size_t i = 0; mcp_protocol_versions[i]; i++)
		if (strcmp(v->valuestring, mcp_protocol_versions[i]) == 0)
			agreed = mcp_protocol_versions[i];
	if (!(r = cJSON_CreateObject()) ||
	    !cJSON_AddStringToObject(r, "protocolVersion", agreed) ||
	    !(caps = cJSON_AddObjectToObject(r, "capabilities")) ||
	    !(tools = cJSON_AddObjectToObject(caps, "tools")) ||
	    !cJSON_AddBoolToObject(tools, "listChanged", false) ||
	    !(info = cJSON_AddObjectToObject(r, "serverInfo")) ||
	    !cJSON_AddStringToObject(info, "name", "ward") ||
	    !cJSON_AddStringToObject(info, "title", "ward sandbox") ||
	    !cJSON_AddStringToObject(info, "version", WARD_VERSION) ||
	    !cJSON_AddStringToObject(r, "instructions", instructions))
		return NULL;
	s->initialized = true;
	snprintf(s->protocol, sizeof(s->protocol), "%s", agreed);
	return TAKE_PTR(r);
}

static int handle_request(McpServer *s, const JsonRpcMessage *m, McpAction *ret)
{
	const char *method = m->method;
	const char *msg = NULL;
	int code = 0;
	cJSON *result = NULL;

	if (strcmp(method, "initialize") == 0) {
		result = initialize(s, m->params, &code, &msg);
		if (!result && !code)
			return -ENOMEM;
	} else if (strcmp(method, "ping") == 0) {
		if (!(result = cJSON_CreateObject()))
			return -ENOMEM;
	} else if (!s->initialized &&
		   (strcmp(method, "tools/list") == 0 || strcmp(method, "tools/call") == 0)) {
		code = JSONRPC_INVALID_REQUEST;
		msg = "Invalid Request: the server is not initialized (send initialize first)";
	} else if (strcmp(method, "tools/list") == 0) {
		cJSON *tools = mcp_tools_list(s->config);
		if (!tools || !(result = cJSON_CreateObject())) {
			cJSON_Delete(tools);
			return -ENOMEM;
		}
		cJSON_AddItemToObject(result, "tools", tools);
	} else if (strcmp(method, "tools/call") == 0) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(m->params, "name");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(m->params, "arguments");
		_cleanup_free_ char *err = NULL;
		char buf[1100];
		int r;

		if (!cJSON_IsObject(m->params) || !cJSON_IsString(name)) {
			code = JSONRPC_INVALID_PARAMS;
			msg = "Invalid params: tools/call needs name (a string)";
		} else {
			r = mcp_call_parse(s->config, m->id, name->valuestring, args, &ret->call,
					   &err);
			if (r == -ENOMEM)
				return r;
			if (r == -EPERM) {
				/* The operator's limit: the model should see it. */
				result = mcp_tool_error(err ? err : "Refused");
				if (!result)
					return -ENOMEM;
			} else if (r < 0) {
				snprintf(buf, sizeof(buf), "Invalid params: %s",
					 err ? err : "bad arguments");
				ret->reply = jsonrpc_error(m->id, JSONRPC_INVALID_PARAMS, buf);
				return ret->reply ? 0 : -ENOMEM;
			} else
				return 0; /* executed by the caller */
		}
	} else {
		code = JSONRPC_METHOD_NOT_FOUND;
		msg = "Method not found";
	}
	ret->reply = result ? jsonrpc_result(m->id, result) : jsonrpc_error(m->id, code, msg);
	return ret->reply ? 0 : -ENOMEM;
}

static int handle_notification(McpServer *s, const JsonRpcMessage *m, McpAction *ret)
{
	(void)s;
	/* notifications/initialized needs nothing; unknown notifications
	 * are ignored, as JSON-RPC requires. */
	if (strcmp(m->method, "notifications/cancelled") == 0) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(m->params, "requestId");
		if (id && (cJSON_IsString(id) || cJSON_IsNumber(id)) &&
		    !(ret->cancel = cJSON_Duplicate(id, false)))
			return -ENOMEM;
	}
	return 0;
}

int mcp_server_handle(McpServer *s, const char *line, size_t len, McpAction *ret)
{
	JsonRpcMessage m = {};
	cJSON *err = NULL;
	int r;

	*ret = (McpAction){};
	r = jsonrpc_parse(line, len, &m, &err);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		ret->reply = err;
		return 0;
	}
	switch (m.kind) {
	case JSONRPC_REQUEST:
		r = handle_request(s, &m, ret);
		break;
	case JSONRPC_NOTIFICATION:
		r = handle_notification(s, &m, ret);
		break;
	case JSONRPC_RESPONSE:
		r = 0;
		break;
	}
	jsonrpc_message_done(&m);
	if (r < 0)
		mcp_action_done(ret);
	return r;
}

cJSON *mcp_server_call_done(McpServer *s, const McpCall *call, const McpOutcome *o)
{
	cJSON *result = mcp_call_result(s->config, call, o);

	return result ? jsonrpc_result(call->id, result) : NULL;
}
