/* Unit tests for src/mcp/: the JSON-RPC checks, the MCP message handler,
 * the tools' argument checks and results, the bounded output capture and
 * the workspace check. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcp/jsonrpc.h"
#include "mcp/mcp-exec.h"
#include "mcp/mcp-output.h"
#include "mcp/mcp-server.h"

static char *const no_flags[] = { NULL };

static McpConfig config(void)
{
	return (McpConfig){
		.ward_exe = "/bin/false",
		.root = "/srv/ws",
		.run_flags = no_flags,
		.timeout_s = 60,
		.max_output = 1024,
		.max_parallel = 1,
		.allow_apply = true,
	};
}

/* Handle @line; the reply as a parsed object (caller frees), or NULL. */
static cJSON *handle(McpServer *s, const char *line, McpAction *a)
{
	char *printed;
	cJSON *j;

	assert_int_equal(mcp_server_handle(s, line, strlen(line), a), 0);
	if (!a->reply)
		return NULL;
	printed = jsonrpc_print_line(a->reply);
	assert_non_null(printed);
	/* One line, newline-terminated. */
	assert_non_null(strchr(printed, '\n'));
	assert_ptr_equal(strchr(printed, '\n'), printed + strlen(printed) - 1);
	j = cJSON_Parse(printed);
	free(printed);
	assert_non_null(j);
	return j;
}

static int error_code_of(const cJSON *reply)
{
	const cJSON *c = cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "error"), "code");
	return cJSON_IsNumber(c) ? c->valueint : 0;
}

static int code_of(McpServer *s, const char *line)
{
	McpAction a = {};
	cJSON *j = handle(s, line, &a);
	int c = j ? error_code_of(j) : 0;

	cJSON_Delete(j);
	mcp_action_done(&a);
	return c;
}

static void init(McpServer *s, const McpConfig *cfg)
{
	mcp_server_init(s, cfg);
	assert_int_equal(code_of(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
				    "\"params\":{\"protocolVersion\":\"2025-06-18\"}}"),
			 0);
}

static void test_jsonrpc_malformed(void **state)
{
	McpConfig cfg = config();
	McpServer s;

	mcp_server_init(&s, &cfg);
	assert_int_equal(code_of(&s, "{"), JSONRPC_PARSE_ERROR);
	assert_int_equal(code_of(&s, "{} {}"), JSONRPC_PARSE_ERROR);
	assert_int_equal(code_of(&s, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]"),
			 JSONRPC_INVALID_REQUEST);
	assert_int_equal(code_of(&s, "null"), JSONRPC_INVALID_REQUEST);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}"),
			 JSONRPC_INVALID_REQUEST);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,\"method\":\"ping\"}"),
			 JSONRPC_INVALID_REQUEST);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":-9007199254740991,\"method\":\"ping\"}"),
			 0);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":2,\"id\":1,\"method\":\"ping\"}"),
			 JSONRPC_INVALID_REQUEST);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":3}"),
			 JSONRPC_INVALID_PARAMS);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\\u0000y\"}"),
			 JSONRPC_INVALID_REQUEST);
	/* "\\u0000" is a backslash and "u0000", not a NUL. */
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"\\\\u0000\",\"method\":\"ping\"}"),
			 0);
	/* Unknown notifications and responses are not answered. */
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}"), 0);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}"), 0);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"),
			 JSONRPC_INVALID_REQUEST);
}

static void test_jsonrpc_deep_nesting(void **state)
{
	size_t n = 200000;
	char *deep = malloc(2 * n + 1);
	McpConfig cfg = config();
	McpServer s;

	assert_non_null(deep);
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\0';
	mcp_server_init(&s, &cfg);
	assert_int_equal(code_of(&s, deep), JSONRPC_PARSE_ERROR);
	free(deep);
}

static void test_jsonrpc_id_echoed(void **state)
{
	McpConfig cfg = config();
	McpServer s;
	McpAction a = {};
	cJSON *j;

	mcp_server_init(&s, &cfg);
	j = handle(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"nope\"}", &a);
	assert_string_equal(cJSON_GetObjectItem(j, "id")->valuestring, "abc");
	assert_int_equal(error_code_of(j), JSONRPC_METHOD_NOT_FOUND);
	cJSON_Delete(j);
	mcp_action_done(&a);
	j = handle(&s, "{\"jsonrpc\":\"2.0\",\"id\":9007199254740991,\"method\":\"ping\"}", &a);
	assert_true(cJSON_GetObjectItem(j, "id")->valuedouble == 9007199254740991.0);
	assert_non_null(cJSON_GetObjectItem(j, "result"));
	cJSON_Delete(j);
	mcp_action_done(&a);
}

static void test_jsonrpc_print_line_utf8(void **state)
{
	cJSON *m = cJSON_CreateObject();
	char *t;

	cJSON_AddStringToObject(m, "s", "a\xff" "b\n\x1b");
	t = jsonrpc_print_line(m);
	assert_string_equal(t, "{\"s\":\"a\xef\xbf\xbd" "b\\n\\u001b\"}\n");
	assert_true(jsonrpc_utf8_valid(t, strlen(t)));
	free(t);
	cJSON_Delete(m);
}

static void test_mcp_initialize(void **state)
{
	McpConfig cfg = config();
	McpServer s;
	McpAction a = {};
	cJSON *j;

	mcp_server_init(&s, &cfg);
	j = handle(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
		       "\"params\":{\"protocolVersion\":\"2024-11-05\"}}", &a);
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(j, "result"), "protocolVersion")->valuestring,
		"2024-11-05");
	cJSON_Delete(j);
	mcp_action_done(&a);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\","
				     "\"params\":{\"protocolVersion\":\"2024-11-05\"}}"),
			 JSONRPC_INVALID_REQUEST);

	/* A version ward does not know: it answers with its newest. */
	mcp_server_init(&s, &cfg);
	j = handle(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
		       "\"params\":{\"protocolVersion\":\"1999-01-01\"}}", &a);
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetObjectItem(j, "result"), "protocolVersion")->valuestring,
		mcp_protocol_versions[0]);
	cJSON_Delete(j);
	mcp_action_done(&a);

	mcp_server_init(&s, &cfg);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}"),
			 JSONRPC_INVALID_PARAMS);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
				     "\"params\":{\"protocolVersion\":5}}"),
			 JSONRPC_INVALID_PARAMS);
}

static void test_mcp_tools_list(void **state)
{
	McpConfig cfg = config();
	McpServer s;
	McpAction a = {};
	cJSON *j, *tools;

	init(&s, &cfg);
	j = handle(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", &a);
	tools = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "result"), "tools");
	assert_int_equal(cJSON_GetArraySize(tools), 4);
	cJSON_Delete(j);
	mcp_action_done(&a);

	cfg.allow_apply = false;
	init(&s, &cfg);
	j = handle(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", &a);
	tools = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "result"), "tools");
	assert_int_equal(cJSON_GetArraySize(tools), 3);
	for (int i = 0; i < 3; i++)
		assert_string_not_equal(
			cJSON_GetObjectItem(cJSON_GetArrayItem(tools, i), "name")->valuestring,
			"session_apply");
	cJSON_Delete(j);
	mcp_action_done(&a);
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
				     "\"params\":{\"name\":\"session_apply\",\"arguments\":"
				     "{\"session\":\"0123456789abcdef\"}}}"),
			 JSONRPC_INVALID_PARAMS);
}

static McpCall *call_of(McpServer *s, const char *args)
{
	char line[4096];
	McpAction a = {};
	McpCall *c;

	snprintf(line, sizeof(line),
		 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"run_command\",\"arguments\":%s}}",
		 args);
	assert_int_equal(mcp_server_handle(s, line, strlen(line), &a), 0);
	c = a.call;
	a.call = NULL;
	mcp_action_done(&a);
	return c;
}

static void test_mcp_run_command_args(void **state)
{
	McpConfig cfg = config();
	McpServer s;
	McpCall *c;

	init(&s, &cfg);
	c = call_of(&s, "{\"command\":\"echo hi\"}");
	assert_non_null(c);
	assert_string_equal(c->argv[0], "sh");
	assert_string_equal(c->argv[1], "-c");
	assert_string_equal(c->argv[2], "echo hi");
	assert_null(c->argv[3]);
	assert_int_equal(c->timeout_s, 60);
	assert_false(c->cow);
	mcp_call_free(c);

	c = call_of(&s, "{\"argv\":[\"ls\",\"-l\"],\"timeout\":5,\"cow\":true,\"workspace\":\"a\"}");
	assert_non_null(c);
	assert_string_equal(c->argv[0], "ls");
	assert_int_equal(c->timeout_s, 5);
	assert_true(c->cow);
	assert_string_equal(c->workspace, "a");
	mcp_call_free(c);

	/* Refused as invalid params. */
	assert_null(call_of(&s, "{\"command\":\"x\",\"policy\":\"/p\"}"));
	assert_null(call_of(&s, "{\"command\":\"x\",\"cow\":true,\"session\":\"0123456789abcdef\"}"));
	assert_null(call_of(&s, "{\"command\":\"x\",\"session\":\"0123456789ABCDEF\"}"));
	assert_null(call_of(&s, "{\"command\":\"x\",\"timeout\":1.5}"));
	assert_null(call_of(&s, "{\"command\":\"x\",\"workspace\":\"a\\nb\"}"));
	assert_null(call_of(&s, "{\"argv\":[\"\"]}"));
	assert_int_equal(code_of(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
				     "\"params\":{\"name\":\"run_command\",\"arguments\":"
				     "{\"command\":\"x\",\"timeout\":61}}}"),
			 0); /* a tool error, not a protocol error: */
	{
		McpAction a = {};
		cJSON *j = handle(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
				      "\"params\":{\"name\":\"run_command\",\"arguments\":"
				      "{\"command\":\"x\",\"timeout\":61}}}",
				  &a);
		assert_null(a.call);
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "result"),
							     "isError")));
		cJSON_Delete(j);
		mcp_action_done(&a);
	}

	/* --cow: every run in a session; cow false refused. */
	cfg.force_cow = true;
	init(&s, &cfg);
	c = call_of(&s, "{\"command\":\"x\"}");
	assert_non_null(c);
	assert_true(c->cow);
	mcp_call_free(c);
	assert_null(call_of(&s, "{\"command\":\"x\",\"cow\":false}"));
}

static void test_mcp_cancel(void **state)
{
	McpConfig cfg = config();
	McpServer s;
	McpAction a = {};

	init(&s, &cfg);
	assert_null(handle(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			       "\"params\":{\"requestId\":\"r1\"}}",
			   &a));
	assert_non_null(a.cancel);
	assert_string_equal(a.cancel->valuestring, "r1");
	mcp_action_done(&a);
}

static void test_mcp_capture(void **state)
{
	McpCapture c;
	char *t;

	assert_int_equal(mcp_capture_init(&c, 16), 0);
	mcp_capture_add(&c, "hello\n", 6);
	assert_false(mcp_capture_truncated(&c));
	t = mcp_capture_text(&c);
	assert_string_equal(t, "hello\n");
	free(t);
	mcp_capture_add(&c, "0123456789abcdefghijklmnopqrstuvwxyz", 36);
	assert_true(mcp_capture_truncated(&c));
	assert_int_equal(c.total, 42);
	t = mcp_capture_text(&c);
	assert_string_equal(t, "hello\n01\n[ward: 26 bytes of output omitted; 42 bytes in all]\n"
			       "stuvwxyz");
	free(t);
	mcp_capture_done(&c);

	/* A sequence straddling head and tail when nothing was cut. */
	assert_int_equal(mcp_capture_init(&c, 8), 0);
	mcp_capture_add(&c, "abc\xc3\xa9xyz", 8);
	t = mcp_capture_text(&c);
	assert_string_equal(t, "abc\xc3\xa9xyz");
	free(t);
	mcp_capture_done(&c);

	/* Cut through a sequence: dropped, not shown as U+FFFD; invalid
	 * bytes and NUL become U+FFFD. */
	assert_int_equal(mcp_capture_init(&c, 8), 0);
	mcp_capture_add(&c, "abc\xe2\x82\xac-------\xe2\x82\xac", 16);
	t = mcp_capture_text(&c);
	assert_true(jsonrpc_utf8_valid(t, strlen(t)));
	assert_non_null(strstr(t, "abc\n[ward:"));
	assert_true(strstr(t, "]\n--\xe2\x82\xac") != NULL || strstr(t, "]\n-\xe2\x82\xac") != NULL);
	free(t);
	mcp_capture_done(&c);
	assert_int_equal(mcp_capture_init(&c, 64), 0);
	mcp_capture_add(&c, "a\0b\xff", 4);
	t = mcp_capture_text(&c);
	assert_string_equal(t, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	free(t);
	mcp_capture_done(&c);
}

static void test_mcp_call_result(void **state)
{
	McpConfig cfg = config();
	McpServer s;
	McpCall *c;
	McpOutcome o = {};
	cJSON *r, *res, *sc;
	const char *text;

	init(&s, &cfg);
	c = call_of(&s, "{\"command\":\"x\",\"cow\":true}");
	assert_non_null(c);
	o.n_steps = 1;
	o.steps[0].ran = true;
	o.steps[0].exit_code = 2;
	assert_int_equal(mcp_capture_init(&o.steps[0].out, 64), 0);
	assert_int_equal(mcp_capture_init(&o.steps[0].err, 64), 0);
	mcp_capture_add(&o.steps[0].out, "out\n", 4);
	mcp_capture_add(&o.steps[0].err, "err\n", 4);
	o.steps[0].result = cJSON_Parse(
		"{\"exit_code\":2,\"session\":\"0123456789abcdef\",\"changes\":{\"added\":2,"
		"\"total\":2},\"net_refused\":[{\"host\":\"evil.test\",\"port\":443,"
		"\"reason\":\"not in network.allow\"}]}");
	r = mcp_server_call_done(&s, c, &o);
	res = cJSON_GetObjectItem(r, "result");
	sc = cJSON_GetObjectItem(res, "structuredContent");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(res, "isError")));
	assert_int_equal(cJSON_GetObjectItem(sc, "exit_code")->valueint, 2);
	assert_string_equal(cJSON_GetObjectItem(sc, "stdout")->valuestring, "out\n");
	assert_string_equal(cJSON_GetObjectItem(sc, "session")->valuestring, "0123456789abcdef");
	text = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(res, "content"), 0),
				   "text")
		       ->valuestring;
	assert_non_null(strstr(text, "exit status 2\n"));
	assert_non_null(strstr(text, "2 pending changes"));
	assert_non_null(strstr(text, "evil.test:443 (not in network.allow)"));
	assert_non_null(strstr(text, "--- stdout ---\nout\n--- stderr ---\nerr\n"));
	cJSON_Delete(r);
	mcp_outcome_done(&o);

	o.refusal = strdup("Refused: because");
	r = mcp_server_call_done(&s, c, &o);
	res = cJSON_GetObjectItem(r, "result");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(res, "isError")));
	cJSON_Delete(r);
	mcp_outcome_done(&o);
	mcp_call_free(c);
}

static void test_mcp_resolve_workspace(void **state)
{
	char root[] = "/tmp/ward-test-mcp.XXXXXX", sub[64], out[64], link[64], *real_root;
	char *ws = NULL, *err = NULL;

	assert_non_null(mkdtemp(root));
	real_root = realpath(root, NULL);
	snprintf(sub, sizeof(sub), "%s/sub", real_root);
	snprintf(out, sizeof(out), "%s-out", real_root);
	snprintf(link, sizeof(link), "%s/link", real_root);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(mkdir(out, 0755), 0);
	assert_int_equal(symlink(out, link), 0);

	assert_int_equal(mcp_resolve_workspace(real_root, NULL, &ws, &err), 0);
	assert_string_equal(ws, real_root);
	free(ws);
	assert_int_equal(mcp_resolve_workspace(real_root, "sub", &ws, &err), 0);
	assert_string_equal(ws, sub);
	free(ws);
	assert_int_equal(mcp_resolve_workspace(real_root, sub, &ws, &err), 0);
	free(ws);
	assert_int_equal(mcp_resolve_workspace(real_root, "sub/../..", &ws, &err), -EPERM);
	assert_non_null(strstr(err, "outside"));
	free(err);
	assert_int_equal(mcp_resolve_workspace(real_root, out, &ws, &err), -EPERM);
	free(err);
	assert_int_equal(mcp_resolve_workspace(real_root, "link", &ws, &err), -EPERM);
	free(err);
	assert_int_equal(mcp_resolve_workspace(real_root, "missing", &ws, &err), -EPERM);
	free(err);

	unlink(link);
	rmdir(sub);
	rmdir(out);
	rmdir(real_root);
	free(real_root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonrpc_malformed),
		cmocka_unit_test(test_jsonrpc_deep_nesting),
		cmocka_unit_test(test_jsonrpc_id_echoed),
		cmocka_unit_test(test_jsonrpc_print_line_utf8),
		cmocka_unit_test(test_mcp_initialize),
		cmocka_unit_test(test_mcp_tools_list),
		cmocka_unit_test(test_mcp_run_command_args),
		cmocka_unit_test(test_mcp_cancel),
		cmocka_unit_test(test_mcp_capture),
		cmocka_unit_test(test_mcp_call_result),
		cmocka_unit_test(test_mcp_resolve_workspace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
