/* The inspector: one thread per connection whose requests the proxy reads
 * (TLS of an inspected host, intercepted with the run's CA; plain HTTP
 * while credentials or request rules exist). It terminates the client's
 * TLS with a leaf for the host, verifies the upstream against the host's
 * trust store, then reads request after request (HTTP/1.1 keep-alive,
 * framing parsed strictly by http-msg.c): each one is checked against
 * network.requests, has a credential's placeholder swapped for its secret
 * (only for its host and path) or is refused for a placeholder bound
 * anywhere else, and is forwarded with ward's own framing; its answer is
 * relayed before the next request is read. docs/network.md. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit/audit.h"
#include "net/net-match.h"

typedef struct InspectJob {
	int cfd, ufd;          /* connected client and upstream sockets (owned) */
	bool tls;              /* intercept TLS; else plain HTTP */
	bool forward;          /* plain: the head is absolute-form (proxy request) */
	char host[NET_HOST_MAX];
	uint16_t port;
	char kind[16];         /* "http-connect", "socks5", "capture", "http" */
	char address[64];
	char rule[320];        /* the allow rule of the connection */
	char *prefix;          /* client bytes already read (owned) */
	size_t prefix_len;
	char *reply;           /* bytes for the client first (owned) */
	size_t reply_len;
	AuditLog *audit;
	const char *program;
	unsigned idle_ms;
} InspectJob;

/* Take @job (and its fds and buffers) and serve it in a thread of its own.
 * -EAGAIN when too many run already (the caller still owns @job then). */
int inspect_start(InspectJob *job);
