/* HTTP/1.x message framing for the inspector (inspect.c): a strict parser
 * of request and response heads, and a chunked-body decoder. Pure: buffers
 * in, results out, no allocation.
 *
 * Strict where a lenient reading would let two parsers disagree about where
 * a request ends (request smuggling): a request with both Content-Length
 * and Transfer-Encoding, more than one Content-Length or Transfer-Encoding,
 * a Transfer-Encoding other than "chunked", a length that is not plain
 * digits, a folded header line, whitespace before a header's colon, a bare
 * CR or LF, a control character, or a chunk size that is not plain hex is
 * refused, never guessed. docs/network.md "TLS inspection". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_MSG_MAX_HEADERS 128

typedef struct HttpHeader {
	const char *name, *value; /* into the parsed buffer; value without surrounding blanks */
	size_t name_len, value_len;
} HttpHeader;

typedef enum HttpBody {
	HTTP_BODY_NONE,    /* no body */
	HTTP_BODY_LENGTH,  /* HttpHead.length bytes */
	HTTP_BODY_CHUNKED, /* chunked (HttpChunked) */
	HTTP_BODY_CLOSE,   /* responses only: until the connection closes */
} HttpBody;

typedef struct HttpHead {
	size_t head_len; /* bytes of the head, its final empty line included */
	int version_minor;
	/* requests */
	const char *method, *target;
	size_t method_len, target_len;
	bool expect_continue; /* Expect: 100-continue */
	/* responses */
	int status;
	/* both */
	HttpHeader headers[HTTP_MSG_MAX_HEADERS];
	size_t n_headers;
	HttpBody body;
	uint64_t length; /* HTTP_BODY_LENGTH */
	bool close;      /* the connection ends after this message */
} HttpHead;

/* Parse the request head at the start of @buf (@len bytes). 1 when a head
 * is complete (h->head_len bytes; what follows is its body, then the next
 * request), 0 when more bytes are needed, else a negative HTTP status to
 * answer with (-400, -431, -501) and *why a static reason. */
int http_msg_request(const char *buf, size_t len, HttpHead *h, const char **why);

/* The same for a response head; @head_request when it answers a HEAD
 * request (no body then). A 1xx head has HTTP_BODY_NONE: a final answer
 * follows. Negative (-502) when malformed. */
int http_msg_response(const char *buf, size_t len, bool head_request, HttpHead *h, const char **why);

/* The header named @name (case-insensitive), or NULL; more than one: the first. */
const HttpHeader *http_msg_header(const HttpHead *h, const char *name);
bool http_header_is(const HttpHeader *hd, const char *name);

/* A chunked body's decoder. Zero-initialize. */
typedef struct HttpChunked {
	int state;
	uint64_t left;   /* bytes of data left in the current chunk */
	unsigned digits; /* of the size being read */
	size_t trailer;  /* bytes of trailer section seen */
} HttpChunked;

/* Feed @n bytes of @in. Consumes *used bytes; when *data_len > 0,
 * in[*data_off, *data_off + *data_len) is body data (call again with the
 * rest). 1 when the body ended (the final chunk and its trailers, which are
 * dropped, consumed), 0 to go on, -EBADMSG when malformed. */
int http_chunked_feed(HttpChunked *c, const char *in, size_t n, size_t *used, size_t *data_off, size_t *data_len);
