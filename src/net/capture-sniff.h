/* What a captured connection's first bytes say: a TLS ClientHello (and its
 * server name), a plain HTTP/1.x request head (and its Host), or something
 * else. Pure. The proxy's capture path (proxy-capture.c) checks the name
 * against the one the synthetic destination stands for. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/net-match.h"

typedef enum SniffKind {
	SNIFF_TLS,
	SNIFF_HTTP,
	SNIFF_OTHER,
	_SNIFF_KIND_MAX,
	_SNIFF_KIND_INVALID = -22,
} SniffKind;

const char *sniff_kind_to_string(SniffKind k);

typedef struct SniffResult {
	SniffKind kind;
	/* TLS: the SNI; HTTP: the Host header's host. Normalized
	 * (net_normalize_host); empty when there is none. */
	char name[NET_HOST_MAX];
	bool literal;  /* name is an IP literal */
	uint16_t port; /* HTTP: the Host header's port, 0 when it has none */
	bool ech;      /* TLS: an encrypted ClientHello extension was sent */
	size_t head_len; /* HTTP: bytes of the head, final empty line included */
	bool upgrade;    /* HTTP: an Upgrade header (WebSocket, h2c) was sent */
} SniffResult;

/* Classify the bytes at @buf. Returns 1 with @ret filled when decided, 0
 * when more bytes are needed, -EBADMSG when they start like TLS or HTTP
 * but are malformed (a missing or repeated Host, a name that does not
 * normalize, an absolute-form target...), -E2BIG when a head does not end
 * within HTTP_HEAD_MAX bytes. @reterr_reason is a static text. */
int sniff_client_bytes(const uint8_t *buf, size_t len, SniffResult *ret, const char **reterr_reason);

/* The HTTP head @s was sniffed from (@buf, s->head_len bytes) made the
 * only request of its connection: Connection, Keep-Alive and
 * Proxy-Connection dropped, "Connection: close" added, so that a second
 * request on the connection cannot name another Host (the check is on the
 * first head only). A request with Upgrade keeps its headers: what
 * follows an upgrade is a stream to the same host. Caller frees *ret. */
int sniff_http_close_head(const char *buf, const SniffResult *s, char **ret, size_t *ret_len);
