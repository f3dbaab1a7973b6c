/* Tool definitions and argument checks (mcp-tools.h). The arguments come
 * from a model: each is checked for type and size, unknown ones are
 * refused rather than ignored (a client must not believe a setting took
 * effect when it did not), and nothing here can widen what the operator
 * configured: the schema offers no policy, network or path option at all. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "mcp/mcp-tools.h"

static const char *const tool_names[_MCP_TOOL_MAX] = {
	[MCP_TOOL_RUN_COMMAND] = "run_command",
	[MCP_TOOL_SESSION_DIFF] = "session_diff",
	[MCP_TOOL_SESSION_APPLY] = "session_apply",
	[MCP_TOOL_SESSION_DISCARD] = "session_discard",
};

const char *mcp_tool_to_string(McpTool t)
{
	return t >= 0 && t < _MCP_TOOL_MAX ? tool_names[t] : NULL;
}

static McpTool tool_from_string(const char *s)
{
	for (int i = 0; i < _MCP_TOOL_MAX; i++)
		if (strcmp(s, tool_names[i]) == 0)
			return (McpTool)i;
	return _MCP_TOOL_INVALID;
}

McpCall *mcp_call_free(McpCall *c)
{
	if (!c)
		return NULL;
	cJSON_Delete(c->id);
	strv_free(c->argv);
	free(c->workspace);
	free(c->session);
	strv_free(c->paths);
	free(c);
	return NULL;
}

/* ---- tools/list ---- */

static cJSON *prop(cJSON *props, const char *name, const char *type, const char *description)
{
	cJSON *p = cJSON_AddObjectToObject(props, name);
	if (p) {
		cJSON_AddStringToObject(p, "type", type);
		cJSON_AddStringToObject(p, "description", description);
	}
	return p;
}

static cJSON *string_array_prop(cJSON *props, const char *name, const char *description)
{
	cJSON *p = prop(props, name, "array", description);
	cJSON *items = p ? cJSON_AddObjectToObject(p, "items") : NULL;
	if (items)
		cJSON_AddStringToObject(items, "type", "string");
	return p;
}

/* {"name", "title", "description", "inputSchema": {"type": "object",
 * "properties": {}, "additionalProperties": false}}; ret_props: the
 * properties object to fill. */
static cJSON *tool(cJSON *list, McpTool t, const char *title, const char *description,
		   cJSON **ret_props)
{
	cJSON *o = cJSON_CreateObject(), *schema;

	if (!o)
		return NULL;
	cJSON_AddItemToArray(list, o);
	cJSON_AddStringToObject(o, "name", tool_names[t]);
	cJSON_AddStringToObject(o, "title", title);
	cJSON_AddStringToObject(o, "description", description);
	schema = cJSON_AddObjectToObject(o, "inputSchema");
	if (!schema)
		return NULL;
	cJSON_AddStringToObject(schema, "type", "object");
	*ret_props = cJSON_AddObjectToObject(schema, "properties");
	cJSON_AddBoolToObject(schema, "additionalProperties", false);
	return schema;
}

static void require(cJSON *schema, const char *name)
{
	cJSON *r = cJSON_CreateStringArray(&name, 1);
	if (r)
		cJSON_AddItemToObject(schema, "required", r);
}

cJSON *mcp_tools_list(const McpConfig *cfg)
{
	_cleanup_cjson_ cJSON *list = cJSON_CreateArray();
	cJSON *props = NULL, *schema, *p;
	char desc[1024];

	if (!list)
		return NULL;
	snprintf(desc, sizeof(desc),
		 "Run a command in ward's kernel-enforced sandbox and return its exit status, "
		 "stdout and stderr (each cut to %zu bytes, with a marker saying how much was "
		 "left out) and ward's summary of the run (protections, refused network "
		 "connections, pending copy-on-write changes). The sandbox's policy (files, "
		 "network, limits) is fixed by the server's configuration; the workspace is the "
		 "only writable directory%s. stdin is empty.",
		 cfg->max_output,
		 cfg->force_cow ? "; every run writes to a copy-on-write session instead of the "
				  "workspace itself: review it with session_diff"
				: "");
	schema = tool(list, MCP_TOOL_RUN_COMMAND, "Run a command in the ward sandbox", desc,
		      &props);
	if (!schema || !props)
		return NULL;
	prop(props, "command", "string",
	     "A shell command line, run with sh -c in the workspace. Give this or argv.");
	p = string_array_prop(props, "argv",
			      "The program and its arguments, run without a shell (the program "
			      "is looked up on PATH inside the sandbox). Give this or command.");
	if (p)
		cJSON_AddNumberToObject(p, "minItems", 1);
	snprintf(desc, sizeof(desc),
		 "The directory to run in: %s itself (the default), or a directory beneath it, "
		 "absolute or relative to it.",
		 cfg->root);
	prop(props, "workspace", "string", desc);
	snprintf(desc, sizeof(desc),
		 "Seconds after which the whole command tree is killed (exit status 124). At "
		 "most %" PRIu64 ", the default.",
		 cfg->timeout_s);
	p = prop(props, "timeout", "integer", desc);
	if (p) {
		cJSON_AddNumberToObject(p, "minimum", 1);
		cJSON_AddNumberToObject(p, "maximum", (double)cfg->timeout_s);
	}
	prop(props, "cow", "boolean",
	     "Write to a new copy-on-write session instead of the workspace; the result "
	     "names the session. Review it with session_diff, then session_apply or "
	     "session_discard.");
	if (cfg->live)
		prop(props, "background", "boolean",
		     "Start the command and return once it runs, without waiting for it (a dev "
		     "server, a watcher): it keeps running while later commands run, until it "
		     "exits, its timeout passes or this connection ends. Its stdin, stdout and "
		     "stderr are /dev/null: redirect its output to a file in the workspace "
		     "(e.g. 'npm run dev > dev.log 2>&1') to read it later. Later commands do "
		     "not see its processes (each command has its own process namespace).");
	prop(props, "session", "string",
	     "Run in this existing session (its id, from an earlier result): the command "
	     "sees the session's pending changes and adds to them.");

	schema = tool(list, MCP_TOOL_SESSION_DIFF, "Show a session's pending changes",
		      "Show a copy-on-write session's pending changes: the list of changed paths "
		      "and a unified diff (cut with a marker beyond the server's limit).",
		      &props);
	if (!schema || !props)
		return NULL;
	prop(props, "session", "string", "The session id.");
	string_array_prop(props, "paths",
			  "Only these files or directories (relative to the workspace).");
	require(schema, "session");

	if (cfg->allow_apply) {
		schema = tool(list, MCP_TOOL_SESSION_APPLY, "Apply a session's changes",
			      "Write a copy-on-write session's pending changes into its workspace "
			      "(all, or those under paths), atomically per file. Protected paths "
			      "(.git and the policy's) and files changed in the workspace meanwhile "
			      "are refused and listed.",
			      &props);
		if (!schema || !props)
			return NULL;
		prop(props, "session", "string", "The session id.");
		string_array_prop(props, "paths", "Only these files or directories.");
		require(schema, "session");
	}

	schema = tool(list, MCP_TOOL_SESSION_DISCARD, "Discard a session",
		      "Drop a session and its pending changes; the workspace is left as it is.",
		      &props);
	if (!schema || !props)
		return NULL;
	prop(props, "session", "string", "The session id.");
	require(schema, "session");
	return TAKE_PTR(list);
}

/* ---- tools/call ---- */

__attribute__((format(printf, 3, 4))) static int fail(char **reterr, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(reterr, fmt, ap) < 0)
		*reterr = NULL;
	va_end(ap);
	return *reterr ? r : -ENOMEM;
}

/* Does @t (@n bytes: a C string, so no NUL) have a byte below 0x20? */
static bool has_control(const char *t)
{
	for (; *t; t++)
		if ((unsigned char)*t < 0x20)
			return true;
	return false;
}

static bool session_id_valid(const char *s)
{
	size_t n = strlen(s);

	if (n != 16)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static int string_list(const cJSON *a, size_t max, const char *what, char ***ret, char **reterr)
{
	_cleanup_strv_ char **l = NULL;
	const cJSON *e;
	size_t n = 0;

	if (!cJSON_IsArray(a))
		return fail(reterr, -EINVAL, "'%s' must be an array of strings", what);
	cJSON_ArrayForEach(e, a) {
		if (!cJSON_IsString(e))
			return fail(reterr, -EINVAL, "'%s' must be an array of strings", what);
		if (++n > max)
			return fail(reterr, -EINVAL, "'%s' holds more than %zu entries", what, max);
		if (strv_extend(&l, e->valuestring) < 0)
			return -ENOMEM;
	}
	*ret = TAKE_PTR(l);
	return 0;
}

static const char *const run_args[] = { "command", "argv", "workspace", "timeout", "cow",
					"session", "background", NULL };
static const char *const session_args[] = { "session", "paths", NULL };
static const char *const discard_args[] = { "session", NULL };

static int check_known(const cJSON *args, const char *const *known, const char *tool_name,
		       char **reterr)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, args) {
		bool ok = false;
		for (const char *const *k = known; *k && !ok; k++)
			ok = e->string && strcmp(e->string, *k) == 0;
		if (!ok)
			return fail(reterr, -EINVAL, "%s takes no argument '%.64s'", tool_name,
				    e->string && !has_control(e->string) ? e->string : "?");
	}
	return 0;
}

static int parse_session(const cJSON *args, bool required, char **ret, char **reterr)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(args, "session");

	if (!s) {
		if (required)
			return fail(reterr, -EINVAL, "%s", "missing argument 'session'");
		return 0;
	}
	if (!cJSON_IsString(s) || !session_id_valid(s->valuestring))
		return fail(reterr, -EINVAL, "%s",
			    "'session' must be a session id: 16 lowercase hex digits");
	*ret = strdup(s->valuestring);
	return *ret ? 0 : -ENOMEM;
}

static int parse_run(const McpConfig *cfg, const cJSON *args, McpCall *c, char **reterr)
{
	const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(args, "command");
	const cJSON *argv = cJSON_GetObjectItemCaseSensitive(args, "argv");
	const cJSON *ws = cJSON_GetObjectItemCaseSensitive(args, "workspace");
	const cJSON *to = cJSON_GetObjectItemCaseSensitive(args, "timeout");
	const cJSON *cow = cJSON_GetObjectItemCaseSensitive(args, "cow");
	const cJSON *bg = cJSON_GetObjectItemCaseSensitive(args, "background");
	int r;

	if (bg) {
		if (!cJSON_IsBool(bg))
			return fail(reterr, -EINVAL, "%s", "'background' must be true or false");
		c->background = cJSON_IsTrue(bg);
		if (c->background && !cfg->live)
			return fail(reterr, -EPERM, "%s",
				    "Refused: a background command needs the server's live session "
				    "(ward mcp --session); each command here is a run of its own");
	}
	if (!!cmd == !!argv)
		return fail(reterr, -EINVAL, "%s", "give exactly one of 'command' and 'argv'");
	if (cmd) {
		if (!cJSON_IsString(cmd) || !cmd->valuestring[0])
			return fail(reterr, -EINVAL, "%s", "'command' must be a non-empty string");
		/* The kernel's limit for one argument (MAX_ARG_STRLEN). */
		if (strlen(cmd->valuestring) >= 128 * 1024)
			return fail(reterr, -EINVAL, "%s", "'command' is longer than 128 KiB");
		if (strv_extend(&c->argv, "sh") < 0 || strv_extend(&c->argv, "-c") < 0 ||
		    strv_extend(&c->argv, cmd->valuestring) < 0)
			return -ENOMEM;
	} else {
		r = string_list(argv, MCP_MAX_ARGV, "argv", &c->argv, reterr);
		if (r < 0)
			return r;
		if (!c->argv || !c->argv[0][0])
			return fail(reterr, -EINVAL, "%s", "'argv' must name a program");
	}
	if (ws) {
		if (!cJSON_IsString(ws) || !ws->valuestring[0] || has_control(ws->valuestring))
			return fail(reterr, -EINVAL, "%s",
				    "'workspace' must be a path (a non-empty string without control "
				    "characters)");
		if (!(c->workspace = strdup(ws->valuestring)))
			return -ENOMEM;
	}
	c->timeout_s = cfg->timeout_s;
	if (to) {
		double d = cJSON_IsNumber(to) ? to->valuedouble : -1;
		/* Whole and positive (NaN fails the comparisons; a huge value
		 * is refused below, against the server's limit). */
		if (!cJSON_IsNumber(to) || !(d >= 1) ||
		    (d < 1e18 && d != (double)(long long)d))
			return fail(reterr, -EINVAL, "%s",
				    "'timeout' must be a positive whole number of seconds");
		if (!(d <= (double)cfg->timeout_s))
			return fail(reterr, -EPERM,
				    "Refused: a timeout of %.0f s is above this server's limit of "
				    "%" PRIu64 " s (set by the operator with ward mcp --timeout)",
				    d, cfg->timeout_s);
		c->timeout_s = (uint64_t)d;
	}
	if (cow) {
		if (!cJSON_IsBool(cow))
			return fail(reterr, -EINVAL, "%s", "'cow' must be true or false");
		c->cow = cJSON_IsTrue(cow);
	}
	r = parse_session(args, false, &c->session, reterr);
	if (r < 0)
		return r;
	if (c->cow && c->session)
		return fail(reterr, -EINVAL, "%s",
			    "'cow' starts a new session; it cannot be combined with 'session'");
	if (cfg->force_cow && cow && !c->cow)
		return fail(reterr, -EPERM, "%s",
			    "Refused: this server runs every command copy-on-write (ward mcp "
			    "--cow); 'cow': false is not allowed");
	if (cfg->force_cow && !c->session)
		c->cow = true;
	return 0;
}

int mcp_call_parse(const McpConfig *cfg, const cJSON *id, const char *name, const cJSON *args,
		   McpCall **ret, char **reterr)
{
	_cleanup_(mcp_call_freep) McpCall *c = NULL;
	McpTool t = tool_from_string(name);
	const cJSON *paths;
	int r;

	*reterr = NULL;
	if (t < 0 || (t == MCP_TOOL_SESSION_APPLY && !cfg->allow_apply))
		return fail(reterr, -EINVAL, "Unknown tool '%.64s'",
			    has_control(name) ? "?" : name);
	if (args && !cJSON_IsObject(args))
		return fail(reterr, -EINVAL, "%s", "'arguments' must be an object");
	c = calloc(1, sizeof(*c));
	if (!c || !(c->id = cJSON_Duplicate(id, false)))
		return -ENOMEM;
	c->tool = t;
	r = check_known(args, t == MCP_TOOL_RUN_COMMAND	      ? run_args
			      : t == MCP_TOOL_SESSION_DISCARD ? discard_args
							      : session_args,
			name, reterr);
	if (r < 0)
		return r;
	switch (t) {
	case MCP_TOOL_RUN_COMMAND:
		r = parse_run(cfg, args, c, reterr);
		break;
	case MCP_TOOL_SESSION_DIFF:
	case MCP_TOOL_SESSION_APPLY:
	case MCP_TOOL_SESSION_DISCARD:
		r = parse_session(args, true, &c->session, reterr);
		paths = cJSON_GetObjectItemCaseSensitive(args, "paths");
		if (r >= 0 && paths)
			r = string_list(paths, MCP_MAX_PATHS, "paths", &c->paths, reterr);
		/* (They follow "--" on ward's command line: a path starting
		 * with '-' is a path.) */
		STRV_FOREACH(p, c->paths)
			if (r >= 0 && (!(*p)[0] || has_control(*p)))
				r = fail(reterr, -EINVAL, "%s",
					 "a path must be non-empty, without control characters");
		break;
	case _MCP_TOOL_MAX:
	case _MCP_TOOL_INVALID:
		r = -EINVAL;
		break;
	}
	if (r < 0)
		return r;
	*ret = TAKE_PTR(c);
	return 0;
}
