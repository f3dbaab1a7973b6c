/* CallToolResult objects (mcp-tools.h): a text for the model, the same
 * facts as structuredContent for a program, isError when the command
 * failed or was refused. Everything the command or ward printed arrives
 * here bounded (mcp-output.h) and becomes valid UTF-8 text. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "mcp/mcp-tools.h"

void mcp_outcome_done(McpOutcome *o)
{
	for (size_t i = 0; i < MCP_MAX_STEPS; i++) {
		mcp_capture_done(&o->steps[i].out);
		mcp_capture_done(&o->steps[i].err);
		cJSON_Delete(o->steps[i].result);
	}
	free(o->refusal);
	*o = (McpOutcome){};
}

/* {"content": [{"type": "text", "text": @text}], "isError": @error}, and
 * @structured (taken) as structuredContent when not NULL. */
static cJSON *tool_result(const char *text, cJSON *structured, bool error)
{
	_cleanup_cjson_ cJSON *r = cJSON_CreateObject(), *s = structured;
	cJSON *content, *item;

	if (!r || !(content = cJSON_AddArrayToObject(r, "content")) ||
	    !(item = cJSON_CreateObject()))
		return NULL;
	cJSON_AddItemToArray(content, item);
	if (!cJSON_AddStringToObject(item, "type", "text") ||
	    !cJSON_AddStringToObject(item, "text", text))
		return NULL;
	if (s)
		cJSON_AddItemToObject(r, "structuredContent", TAKE_PTR(s));
	if (!cJSON_AddBoolToObject(r, "isError", error))
		return NULL;
	return TAKE_PTR(r);
}

cJSON *mcp_tool_error(const char *message)
{
	return tool_result(message, NULL, true);
}

/* Text of @c into @o as @name ("stdout"), with @name_truncated and
 * @name_bytes; the text in *@ret_text (caller frees). */
static int add_stream(cJSON *o, const char *name, const McpCapture *c, char **ret_text)
{
	char key[32];

	*ret_text = c->max ? mcp_capture_text(c) : strdup("");
	if (!*ret_text || !cJSON_AddStringToObject(o, name, *ret_text))
		return -ENOMEM;
	snprintf(key, sizeof(key), "%s_truncated", name);
	cJSON_AddBoolToObject(o, key, c->max && mcp_capture_truncated(c));
	snprintf(key, sizeof(key), "%s_bytes", name);
	cJSON_AddNumberToObject(o, key, (double)c->total);
	return 0;
}

/* What `ward run --result` says beyond the exit status, in words. */
static void describe_run(FILE *f, const McpCall *call, const cJSON *res)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(res, "error");
	const cJSON *sess = cJSON_GetObjectItemCaseSensitive(res, "session");
	const cJSON *changes = cJSON_GetObjectItemCaseSensitive(res, "changes");
	const cJSON *refused = cJSON_GetObjectItemCaseSensitive(res, "net_refused");
	const cJSON *x;

	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "timed_out")))
		fprintf(f, "timed out after %llu s: the command tree was killed\n",
			(unsigned long long)call->timeout_s);
	if (cJSON_IsString(e))
		fprintf(f, "ward: %s\n", e->valuestring);
	if ((call->cow || call->session) && cJSON_IsString(sess)) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(changes, "total");
		int total = cJSON_IsNumber(t) ? t->valueint : 0;
		fprintf(f, "session %s: %d pending change%s%s\n", sess->valuestring, total,
			total == 1 ? "" : "s",
			total ? " (review with session_diff; session_apply or session_discard)"
			      : "");
	}
	if (cJSON_GetArraySize(refused) > 0) {
		fputs("network connections refused by the policy:", f);
		cJSON_ArrayForEach(x, refused) {
			const cJSON *h = cJSON_GetObjectItemCaseSensitive(x, "host");
			const cJSON *p = cJSON_GetObjectItemCaseSensitive(x, "port");
			const cJSON *why = cJSON_GetObjectItemCaseSensitive(x, "reason");
			fprintf(f, " %s:%d (%s)", cJSON_IsString(h) ? h->valuestring : "?",
				cJSON_IsNumber(p) ? p->valueint : 0,
				cJSON_IsString(why) ? why->valuestring : "denied");
		}
		fputs("\n", f);
	}
	x = cJSON_GetObjectItemCaseSensitive(res, "quarantined");
	if (cJSON_IsNumber(x) && x->valueint > 0)
		fprintf(f, "%d path(s) made under protected names were moved out of the workspace\n",
			x->valueint);
}

static cJSON *run_result(const McpCall *call, const McpOutcome *o)
{
	const McpStep *st = &o->steps[0];
	_cleanup_cjson_ cJSON *s = cJSON_CreateObject();
	_cleanup_free_ char *out = NULL, *err = NULL, *text = NULL;
	const cJSON *sess = cJSON_GetObjectItemCaseSensitive(st->result, "session");
	size_t len = 0;
	FILE *f;

	if (!s)
		return NULL;
	cJSON_AddNumberToObject(s, "exit_code", st->exit_code);
	if (call->background)
		cJSON_AddBoolToObject(s, "background", true);
	cJSON_AddBoolToObject(s, "timed_out", st->exit_code == 124 &&
			      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st->result, "timed_out")));
	if ((call->cow || call->session) && cJSON_IsString(sess))
		cJSON_AddStringToObject(s, "session", sess->valuestring);
	else
		cJSON_AddNullToObject(s, "session");
	if (add_stream(s, "stdout", &st->out, &out) < 0 || add_stream(s, "stderr", &st->err, &err) < 0)
		return NULL;
	if (st->result)
		cJSON_AddItemToObject(s, "result", cJSON_Duplicate(st->result, true));
	else
		cJSON_AddNullToObject(s, "result");

	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fprintf(f, "exit status %d\n", st->exit_code);
	if (call->background && st->exit_code == 0)
		fputs("started in the background: it runs until it exits, its timeout passes or "
		      "this connection ends; its output goes to /dev/null\n",
		      f);
	describe_run(f, call, st->result);
	if (!st->result && !(call->background && st->exit_code == 0))
		fputs("ward left no result summary (see stderr)\n", f);
	fprintf(f, "--- stdout ---\n%s%s--- stderr ---\n%s", out,
		out[0] && out[strlen(out) - 1] != '\n' ? "\n" : "", err);
	if (fclose(f) != 0)
		return NULL;
	return tool_result(text, TAKE_PTR(s), st->exit_code != 0);
}

static cJSON *session_result(const McpCall *call, const McpOutcome *o)
{
	const McpStep *st = &o->steps[0];
	_cleanup_cjson_ cJSON *s = cJSON_CreateObject();
	_cleanup_free_ char *out = NULL, *err = NULL, *diff = NULL, *text = NULL;
	/* ward apply exits 3 when it refused some paths and applied the rest. */
	bool failed = st->exit_code != 0 && !(call->tool == MCP_TOOL_SESSION_APPLY &&
					       st->exit_code == 3);
	size_t len = 0;
	FILE *f;

	if (!s)
		return NULL;
	cJSON_AddStringToObject(s, "session", call->session);
	cJSON_AddNumberToObject(s, "exit_code", st->exit_code);
	err = st->err.max ? mcp_capture_text(&st->err) : strdup("");
	if (!err || !cJSON_AddStringToObject(s, "stderr", err))
		return NULL;
	if (call->tool == MCP_TOOL_SESSION_DIFF) {
		cJSON_AddItemToObject(s, "changes", st->result ? cJSON_Duplicate(st->result, true)
							       : cJSON_CreateNull());
		if (o->n_steps > 1 && add_stream(s, "diff", &o->steps[1].out, &diff) < 0)
			return NULL;
		failed |= o->n_steps > 1 && o->steps[1].exit_code != 0;
	} else if (call->tool == MCP_TOOL_SESSION_APPLY) {
		cJSON_AddItemToObject(s, "result", st->result ? cJSON_Duplicate(st->result, true)
							      : cJSON_CreateNull());
	}

	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	switch (call->tool) {
	case MCP_TOOL_SESSION_DIFF:
		if (!failed)
			fputs(diff && diff[0] ? diff : "no pending changes\n", f);
		break;
	case MCP_TOOL_SESSION_APPLY:
		out = st->out.max ? mcp_capture_text(&st->out) : strdup("");
		if (!failed)
			fprintf(f, "%s\n%s",
				st->exit_code == 3 ? "applied in part: some paths were refused"
						   : "applied",
				out ? out : "");
		break;
	case MCP_TOOL_SESSION_DISCARD:
		if (!failed)
			fprintf(f, "session %s discarded\n", call->session);
		break;
	case MCP_TOOL_RUN_COMMAND:
	case _MCP_TOOL_MAX:
	case _MCP_TOOL_INVALID:
		break;
	}
	if (failed || err[0])
		fprintf(f, "%s%s", failed ? "failed:\n" : "", err);
	if (fclose(f) != 0)
		return NULL;
	return tool_result(text, TAKE_PTR(s), failed);
}

cJSON *mcp_call_result(const McpConfig *cfg, const McpCall *call, const McpOutcome *o)
{
	(void)cfg;
	if (o->refusal)
		return mcp_tool_error(o->refusal);
	if (o->n_steps == 0 || !o->steps[0].ran)
		return mcp_tool_error("ward could not start the command");
	if (call->tool == MCP_TOOL_RUN_COMMAND)
		return run_result(call, o);
	return session_result(call, o);
}
