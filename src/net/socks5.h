/* SOCKS5 (RFC 1928) message parsing for the proxy: the method greeting and
 * the CONNECT request, and the replies. No authentication methods besides
 * "no authentication" (the port is reachable only inside the sandbox), no
 * BIND or UDP ASSOCIATE. Pure: buffers in, results out. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net/net-match.h"

enum {
	SOCKS5_CMD_CONNECT = 1,
	SOCKS5_CMD_BIND = 2,
	SOCKS5_CMD_UDP_ASSOCIATE = 3,
	SOCKS5_ATYP_IPV4 = 1,
	SOCKS5_ATYP_DOMAIN = 3,
	SOCKS5_ATYP_IPV6 = 4,
};

/* Reply codes (RFC 1928 section 6). */
enum {
	SOCKS5_REP_SUCCEEDED = 0x00,
	SOCKS5_REP_GENERAL_FAILURE = 0x01,
	SOCKS5_REP_NOT_ALLOWED = 0x02, /* connection not allowed by ruleset */
	SOCKS5_REP_NET_UNREACHABLE = 0x03,
	SOCKS5_REP_HOST_UNREACHABLE = 0x04,
	SOCKS5_REP_REFUSED = 0x05,
	SOCKS5_REP_TTL_EXPIRED = 0x06,
	SOCKS5_REP_CMD_UNSUPPORTED = 0x07,
	SOCKS5_REP_ATYP_UNSUPPORTED = 0x08,
};

#define SOCKS5_GREETING_MAX 257 /* VER NMETHODS METHODS[255] */
#define SOCKS5_REQUEST_MAX 262  /* VER CMD RSV ATYP LEN NAME[255] PORT[2] */
#define SOCKS5_REPLY_MAX 22

/* The greeting at the start of @buf. Returns 0 if more bytes are needed,
 * the greeting's length (> 0) when complete, with *ret_noauth telling
 * whether method 0x00 was offered, -EPROTO if VER is not 5, -EBADMSG if
 * NMETHODS is 0. */
int socks5_parse_greeting(const uint8_t *buf, size_t len, bool *ret_noauth);

typedef struct Socks5Request {
	uint8_t cmd;
	uint8_t atyp;
	/* ATYP domain: normalized name or literal (net_normalize_host); for
	 * ATYP IPv4/IPv6 the address in canonical text form. */
	char host[NET_HOST_MAX];
	bool literal;
	uint16_t port;
	size_t len; /* bytes consumed */
} Socks5Request;

/* The request at the start of @buf. Returns 0 if more bytes are needed,
 * the request's length (> 0) when complete; -EPROTO if VER is not 5,
 * -EBADMSG for a non-zero RSV, an empty or invalid name or port 0,
 * -EAFNOSUPPORT for an unknown ATYP. The caller checks cmd. */
int socks5_parse_request(const uint8_t *buf, size_t len, Socks5Request *ret);

/* A reply with code @rep and bound address @bound (NULL: 0.0.0.0:0) into
 * @out; returns its length. */
size_t socks5_format_reply(uint8_t rep, const struct sockaddr *bound, uint8_t out[SOCKS5_REPLY_MAX]);
