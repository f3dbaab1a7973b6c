/* What the egress proxy says about one connection, shared by the Linux
 * proxy (proxy-conn.c) and ward.exe's (src/windows/win-proxy.c): the reason
 * a target is refused by policy, and the `net` audit event. Portable: no
 * sockets, no OS headers. */
#pragma once

#include <stdint.h>

#include <cjson/cJSON.h>

#include "net/net-match.h"

/* The reason @d (net_match() of @host:@port) refuses: "x in network.deny",
 * "not in network.allow", or for a loopback name the hint that the
 * command's localhost is not the host's. Into @buf; returns @buf. */
const char *net_refusal_reason(const NetDecision *d, const char *host, uint16_t port, char *buf,
			       size_t bufsz);

/* One connection's `net` audit event fields. */
typedef struct NetEvent {
	const char *kind;        /* "http", "http-connect", "socks5", ... */
	const char *host;
	uint16_t port;
	const char *address;     /* the address connected to (or refused), "" if none */
	NetVerdict verdict;
	const char *rule;        /* the pattern that decided, or the reason */
	const NetDecision *decision; /* its list is named when rule is its pattern */
	const char *destination; /* capture only, else NULL */
	const char *protocol;    /* capture only, else NULL */
	uint64_t bytes_up, bytes_down;
	int64_t duration_ms;
	const char *program;     /* network.commands' program, or NULL */
} NetEvent;

/* The event's object for audit_write(..., "net", ...); NULL on OOM. */
cJSON *net_event_object(const NetEvent *e);
