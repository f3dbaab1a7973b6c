/* JSON-RPC 2.0 framing checks (jsonrpc.h). Everything a peer sends is
 * untrusted: the checks run before anything looks at a field, and what
 * is echoed back (the id) is bounded and valid UTF-8. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/utf8.h"
#include "mcp/jsonrpc.h"

bool jsonrpc_utf8_valid(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_decode((const unsigned char *)s + i, len - i, &cp);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

/* JSON-RPC ids are strings or numbers; MCP adds "not null". A number must
 * be an integer a double holds exactly, so that it is echoed as sent. */
static bool id_valid(const cJSON *id)
{
	if (cJSON_IsString(id)) {
		size_t n = strlen(id->valuestring);
		return n <= JSONRPC_MAX_ID_LEN && jsonrpc_utf8_valid(id->valuestring, n);
	}
	if (cJSON_IsNumber(id)) {
		double d = id->valuedouble;
		/* (NaN fails both comparisons.) */
		return d >= -9007199254740991.0 && d <= 9007199254740991.0 &&
		       d == (double)(long long)d;
	}
	return false;
}

/* Does a string in the JSON text hold "\u0000"? cJSON would end the C
 * string there, and a command would run cut short of what the client
 * (and whoever approved it) saw. */
static bool has_nul_escape(const char *t, size_t len)
{
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		if (!in_string) {
			in_string = t[i] == '"';
			continue;
		}
		if (t[i] == '"')
			in_string = false;
		else if (t[i] == '\\' && i + 1 < len) {
			if (t[i + 1] == 'u' && i + 6 <= len &&
			    memcmp(t + i + 2, "0000", 4) == 0)
				return true;
			i++;
		}
	}
	return false;
}

static int fail(const cJSON *id, int code, const char *message, cJSON **ret_error)
{
	*ret_error = jsonrpc_error(id, code, message);
	return *ret_error ? -EBADMSG : -ENOMEM;
}

int jsonrpc_parse(const char *text, size_t len, JsonRpcMessage *ret, cJSON **ret_error)
{
	_cleanup_cjson_ cJSON *root = NULL;
	const char *end = NULL;
	const cJSON *jv, *id, *method, *params;
	bool has_id;

	*ret_error = NULL;
	/* The whole line must be one value: trailing bytes are an error too.
	 * cJSON stops at a NUL, which then leaves bytes unread. cJSON caps
	 * nesting (CJSON_NESTING_LIMIT), so deep input fails here. */
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (root && end) {
		while (end < text + len && (*end == ' ' || *end == '\t' || *end == '\r'))
			end++;
		if (end != text + len)
			root = (cJSON_Delete(root), NULL);
	}
	if (!root)
		return fail(NULL, JSONRPC_PARSE_ERROR, "Parse error: not one JSON value", ret_error);
	if (cJSON_IsArray(root))
		return fail(NULL, JSONRPC_INVALID_REQUEST,
			    "Invalid Request: batches are not supported (MCP 2025-06-18)", ret_error);
	if (!cJSON_IsObject(root))
		return fail(NULL, JSONRPC_INVALID_REQUEST, "Invalid Request: not an object",
			    ret_error);

	id = cJSON_GetObjectItemCaseSensitive(root, "id");
	method = cJSON_GetObjectItemCaseSensitive(root, "method");
	has_id = id != NULL;
	/* An invalid message is answered (with id null when the id itself is
	 * what is wrong), as the JSON-RPC 2.0 specification's examples are;
	 * only what looks like a broken response to us is not. */
	if (has_id && !id_valid(id))
		return fail(NULL, JSONRPC_INVALID_REQUEST,
			    "Invalid Request: id must be a string (at most 256 bytes) or an integer",
			    ret_error);
	if (has_nul_escape(text, len))
		return fail(id, JSONRPC_INVALID_REQUEST,
			    "Invalid Request: a string holds \\u0000 (NUL), which ward refuses",
			    ret_error);
	jv = cJSON_GetObjectItemCaseSensitive(root, "jsonrpc");
	if (!cJSON_IsString(jv) || strcmp(jv->valuestring, "2.0") != 0) {
		if (!method && has_id)
			return -EBADMSG; /* a broken response: nobody to tell */
		return fail(has_id ? id : NULL, JSONRPC_INVALID_REQUEST,
			    "Invalid Request: \"jsonrpc\" must be \"2.0\"", ret_error);
	}
	if (!method) {
		/* A response to a request of ours (ward sends none): ignored. */
		if (has_id && (cJSON_GetObjectItemCaseSensitive(root, "result") ||
			       cJSON_GetObjectItemCaseSensitive(root, "error"))) {
			*ret = (JsonRpcMessage){ .kind = JSONRPC_RESPONSE, .id = id,
						 .root = TAKE_PTR(root) };
			return 0;
		}
		return fail(has_id ? id : NULL, JSONRPC_INVALID_REQUEST,
			    "Invalid Request: no method", ret_error);
	}
	if (!cJSON_IsString(method) || strlen(method->valuestring) > JSONRPC_MAX_METHOD_LEN) {
		return fail(has_id ? id : NULL, JSONRPC_INVALID_REQUEST,
			    "Invalid Request: method must be a string of at most 256 bytes",
			    ret_error);
	}
	params = cJSON_GetObjectItemCaseSensitive(root, "params");
	if (params && !cJSON_IsObject(params) && !cJSON_IsArray(params)) {
		return fail(has_id ? id : NULL, JSONRPC_INVALID_PARAMS,
			    "Invalid params: params must be an object", ret_error);
	}
	*ret = (JsonRpcMessage){
		.kind = has_id ? JSONRPC_REQUEST : JSONRPC_NOTIFICATION,
		.id = id,
		.method = method->valuestring,
		.params = params,
		.root = TAKE_PTR(root),
	};
	return 0;
}

void jsonrpc_message_done(JsonRpcMessage *m)
{
	cJSON_Delete(m->root);
	*m = (JsonRpcMessage){};
}

static cJSON *envelope(const cJSON *id)
{
	cJSON *m = cJSON_CreateObject();
	cJSON *i;
	char num[32];

	/* cJSON prints a double with 15 significant digits when that reads
	 * back within its epsilon, which turns 9007199254740991 into
	 * 9007199254740990: an integer id is printed exactly, by us. */
	if (cJSON_IsNumber(id)) {
		snprintf(num, sizeof(num), "%.0f", id->valuedouble);
		i = cJSON_CreateRaw(num);
	} else
		i = id ? cJSON_Duplicate(id, false) : cJSON_CreateNull();

	if (!m || !i || !cJSON_AddStringToObject(m, "jsonrpc", "2.0")) {
		cJSON_Delete(m);
		cJSON_Delete(i);
		return NULL;
	}
	cJSON_AddItemToObject(m, "id", i);
	return m;
}

cJSON *jsonrpc_result(const cJSON *id, cJSON *result)
{
	cJSON *m = result ? envelope(id) : NULL;

	if (!m) {
		cJSON_Delete(result);
		return NULL;
	}
	cJSON_AddItemToObject(m, "result", result);
	return m;
}

cJSON *jsonrpc_error(const cJSON *id, int code, const char *message)
{
	cJSON *m = envelope(id), *e = cJSON_CreateObject();

	if (!m || !e || !cJSON_AddNumberToObject(e, "code", code) ||
	    !cJSON_AddStringToObject(e, "message", message)) {
		cJSON_Delete(m);
		cJSON_Delete(e);
		return NULL;
	}
	cJSON_AddItemToObject(m, "error", e);
	return m;
}

char *jsonrpc_print_line(const cJSON *msg)
{
	_cleanup_free_ char *t = cJSON_PrintUnformatted(msg);
	size_t n, bad = 0;
	char *out, *o;

	if (!t)
		return NULL;
	n = strlen(t);
	/* Strings reach here valid UTF-8 (mcp-output.h cleans the command's
	 * bytes); a byte that is not is still replaced by U+FFFD, so the
	 * line is valid JSON text for any client. */
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = utf8_decode((const unsigned char *)t + i, n - i, &cp);
		bad += k == 0;
		i += k ? k : 1;
	}
	out = malloc(n + bad * 2 + 2);
	if (!out)
		return NULL;
	o = out;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = utf8_decode((const unsigned char *)t + i, n - i, &cp);
		if (k == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(o, t + i, k);
			o += k;
			i += k;
		}
	}
	*o++ = '\n';
	*o = '\0';
	return out;
}
