/* JSON-RPC 2.0 messages as MCP's stdio transport carries them: one JSON
 * object per line. Parsing and validating one message, and building the
 * responses. Pure: no I/O, no state. Not a transport (mcp-loop.h reads and
 * writes the lines) and not MCP's methods (mcp-server.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* The error codes of the JSON-RPC 2.0 specification. */
enum {
	JSONRPC_PARSE_ERROR = -32700,     /* not JSON */
	JSONRPC_INVALID_REQUEST = -32600, /* JSON, but not a valid request */
	JSONRPC_METHOD_NOT_FOUND = -32601,
	JSONRPC_INVALID_PARAMS = -32602,
	JSONRPC_INTERNAL_ERROR = -32603,
};

/* Caps on what a peer can make ward hold or echo back. */
#define JSONRPC_MAX_ID_LEN 256    /* bytes of a string id */
#define JSONRPC_MAX_METHOD_LEN 256

typedef enum JsonRpcKind {
	JSONRPC_REQUEST,      /* method and id: answer it */
	JSONRPC_NOTIFICATION, /* method, no id: never answered */
	JSONRPC_RESPONSE,     /* result or error: the peer answering us */
} JsonRpcKind;

typedef struct JsonRpcMessage {
	JsonRpcKind kind;
	cJSON *root;          /* owned */
	const cJSON *id;      /* in root; NULL for a notification */
	const char *method;   /* in root; NULL for a response */
	const cJSON *params;  /* in root; NULL when absent (else an object or array) */
} JsonRpcMessage;

/* Parse and validate one message of @len bytes (no newline). Returns 0 and
 * the message in @ret; or -EBADMSG with the error response to send in
 * *@ret_error (caller frees): -32700 for what is not one JSON value, -32600
 * for a batch array, a non-object, a wrong "jsonrpc", an id that is not a
 * string (valid UTF-8, at most JSONRPC_MAX_ID_LEN bytes) or an integer within
 * +-(2^53 - 1), a method that is not a string; or -EBADMSG and *@ret_error
 * NULL when the message is invalid but must not be answered (a malformed
 * notification or response); -ENOMEM. */
int jsonrpc_parse(const char *text, size_t len, JsonRpcMessage *ret, cJSON **ret_error);
void jsonrpc_message_done(JsonRpcMessage *m);

/* {"jsonrpc":"2.0","id":@id,"result":@result}; takes @result; NULL on OOM. */
cJSON *jsonrpc_result(const cJSON *id, cJSON *result);
/* {"jsonrpc":"2.0","id":@id or null,"error":{"code":@code,"message":@message}}. */
cJSON *jsonrpc_error(const cJSON *id, int code, const char *message);
/* @msg on one line (cJSON escapes every control character, so a message
 * never holds a newline), with the newline; caller frees. NULL on OOM. */
char *jsonrpc_print_line(const cJSON *msg);
/* Is @s (@len bytes) valid UTF-8 throughout? */
bool jsonrpc_utf8_valid(const char *s, size_t len);
