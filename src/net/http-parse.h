/* The HTTP proxy's request-head parser: "CONNECT host:port" and absolute-URI
 * requests ("GET http://host[:port]/path HTTP/1.1"), with the Host header
 * checked against the target, and the rewrite of an absolute-URI head into
 * origin form for the upstream. Pure: buffers in, results out. It does not
 * parse bodies; the proxy relays them as bytes after the head. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/net-match.h"

#define HTTP_HEAD_MAX (16 * 1024)

typedef enum HttpKind {
	HTTP_KIND_CONNECT, /* tunnel: reply 200 and relay */
	HTTP_KIND_FORWARD, /* plain HTTP: forward the rewritten head */
	_HTTP_KIND_MAX,
	_HTTP_KIND_INVALID = -22,
} HttpKind;

typedef struct HttpRequest {
	HttpKind kind;
	char host[NET_HOST_MAX]; /* normalized (net_normalize_host) */
	bool literal;            /* host is an IP literal */
	uint16_t port;
	size_t head_len;         /* bytes of the head, final empty line included */
	/* FORWARD only: offsets into the buffer */
	size_t method_len;
	size_t path_off, path_len; /* origin form: "/path?query" ("/" if empty) */
	int version_minor;         /* HTTP/1.x */
	bool has_host;             /* a Host header was present (and matched) */
} HttpRequest;

/* Parse the head at the start of @buf (@len bytes, NUL not needed).
 * Returns 1 and fills @ret when a complete head was found (ret->head_len
 * bytes; what follows belongs to the body or the tunnel), 0 when more bytes
 * are needed, -E2BIG when no head ends within HTTP_HEAD_MAX bytes (431),
 * -EBADMSG when malformed (400), -EPROTONOSUPPORT for a scheme other than
 * http:// or an origin-form request (400), -EPERM when the Host header names
 * something else than the target (403; @ret is filled then, to name the
 * target in the answer). @reterr_reason is a static string
 * for the error answer's body. */
int http_parse_head(const char *buf, size_t len, HttpRequest *ret, const char **reterr_reason);

/* Build the upstream head for a FORWARD request parsed from @buf: request
 * line in origin form, Proxy-* / Connection / Keep-Alive headers dropped,
 * Host added when missing, "Connection: close" appended (one request per
 * upstream connection, so that a second request cannot reuse the tunnel for
 * another Host). Caller frees *ret. */
int http_build_forward_head(const char *buf, const HttpRequest *req, char **ret, size_t *ret_len);

/* A complete error answer ("HTTP/1.1 403 Forbidden", text/plain, one-line
 * @body plus "\n", Connection: close) into @out; returns its length, or
 * -ENOBUFS if it does not fit. */
int http_format_error(int status, const char *body, char *out, size_t outsz);
