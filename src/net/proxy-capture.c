/* A transparently captured connection: the command connected to some
 * address on a captured port, the namespace's local route for every
 * address delivered it to a capture listener, and getsockname() says where
 * it was going.
 *  - A synthetic address (synth-map.h) stands for the name the DNS stub
 *    answered it for. The first client bytes must agree with that name: a
 *    TLS ClientHello's SNI, or an HTTP request's Host (capture-sniff.h).
 *    Then the name goes the way a proxied one goes: the allow/deny
 *    matcher, real resolution on the host, the private-address rule,
 *    connect (conn_decide).
 *  - Any other address is an IP literal: allowed only by an allow entry
 *    naming it, like an IP literal asked of the proxy. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "net/capture-sniff.h"
#include "net/proxy-internal.h"
#include "net/synth-map.h"

/* One request per captured plain-HTTP connection (sniff_http_close_head):
 * the head in c->head is replaced by its rewrite, what followed it kept. */
static int close_after_first(Conn *c, const SniffResult *s)
{
	size_t rest = c->head_len - s->head_len, n;
	char *h, *all;
	int r = sniff_http_close_head(c->head, s, &h, &n);

	if (r < 0)
		return r;
	all = realloc(h, n + rest > 0 ? n + rest : 1);
	if (!all) {
		free(h);
		return -ENOMEM;
	}
	memcpy(all + n, c->head + s->head_len, rest);
	free(c->head);
	c->head = all;
	c->head_len = n + rest;
	return 0;
}

static int capture_inspect(Conn *c)
{
	char why[NET_HOST_MAX + 96];
	const char *reason = NULL;
	SniffResult s;
	int r = sniff_client_bytes((const uint8_t *)c->head, c->head_len, &s, &reason);

	if (r == 0)
		return 0;
	if (r < 0) {
		/* Only TLS and HTTP can be malformed; say it in their terms. */
		c->sniffed = c->head_len > 0 && (uint8_t)c->head[0] == 0x16 ? SNIFF_TLS : SNIFF_HTTP;
		snprintf(c->rule, sizeof(c->rule), "%s",
			 r == -E2BIG ? "request head too large" : reason ? reason : "malformed");
		conn_refuse(c, NET_VERDICT_ERROR, r == -E2BIG ? 431 : 400, 0xff, "ward: %s", c->rule);
		return -1;
	}
	c->sniffed = s.kind;
	switch (s.kind) {
	case SNIFF_TLS:
		if (s.ech) {
			conn_blocked(c, NULL, "the ClientHello is encrypted (ECH): its real server name is hidden");
			return -1;
		}
		if (!s.name[0]) {
			conn_blocked(c, NULL, "TLS without a server name (SNI)");
			return -1;
		}
		if (strcmp(s.name, c->host) != 0) {
			snprintf(why, sizeof(why), "TLS server name %s is not the name connected to", s.name);
			conn_blocked(c, NULL, why);
			return -1;
		}
		break;
	case SNIFF_HTTP:
		if (strcmp(s.name, c->host) != 0 || (s.port && s.port != c->port)) {
			snprintf(why, sizeof(why), "Host header %s is not the name connected to", s.name);
			conn_blocked(c, NULL, why);
			return -1;
		}
		if (close_after_first(c, &s) < 0) {
			snprintf(c->rule, sizeof(c->rule), "proxy out of resources");
			conn_refuse(c, NET_VERDICT_ERROR, 503, 0xff, "ward: %s", c->rule);
			return -1;
		}
		break;
	case SNIFF_OTHER:
		/* The well-known ports carry what they are known for; the name
		 * check must not be skipped by speaking something else there. */
		if (c->port == 443 || c->port == 80) {
			conn_blocked(c, NULL, c->port == 443 ? "not TLS on port 443" : "not HTTP on port 80");
			return -1;
		}
		break;
	case _SNIFF_KIND_MAX:
	case _SNIFF_KIND_INVALID:
		return -1;
	}
	return 1;
}

/* A literal destination the policy refuses, on 80 or 443 (where the client
 * speaks first): read its first bytes only to refuse in its terms (a 403
 * page, a TLS alert) rather than with a bare close. */
static int refuse_in_kind(Conn *c)
{
	const char *reason = NULL;
	SniffResult s;
	int r = sniff_client_bytes((const uint8_t *)c->head, c->head_len, &s, &reason);

	if (r == 0)
		return 0;
	c->sniffed = r == 1 ? (int)s.kind
		     : c->head_len > 0 && (uint8_t)c->head[0] == 0x16 ? SNIFF_TLS : SNIFF_HTTP;
	conn_decide(c); /* refuses, and answers */
	return -1;
}

/* @ss as the plain address (IPv4-mapped IPv6 as IPv4). */
static void dest_to_string(const struct sockaddr_storage *ss, char *buf, size_t n)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], buf, (socklen_t)n);
		return;
	}
	net_addr_to_string((const struct sockaddr *)ss, buf, n);
}

void capture_start(Conn *c)
{
	Proxy *p = c->proxy;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	uint32_t idx;
	const char *name;

	c->sniffed = -1;
	if (getsockname(c->client.fd, (struct sockaddr *)&ss, &len) < 0) {
		conn_close(c);
		return;
	}
	c->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						 : ((struct sockaddr_in6 *)&ss)->sin6_port);
	dest_to_string(&ss, c->dest, sizeof(c->dest));
	if (synth_addr_index((struct sockaddr *)&ss, &idx) == 1) {
		name = synth_map_name(p->synth, idx);
		if (!name) {
			snprintf(c->host, sizeof(c->host), "%s", c->dest);
			conn_blocked(c, NULL, "a synthetic address ward's DNS stub did not hand out");
			return;
		}
		snprintf(c->host, sizeof(c->host), "%s", name);
		c->literal = false;
		/* The name check needs the client's first bytes. */
		c->inspect = capture_inspect;
		return;
	}
	/* A real address, connected to directly: no name to check, the
	 * address is the destination. */
	if (net_normalize_host(c->dest, strlen(c->dest), c->host) != 1) {
		conn_close(c);
		return;
	}
	c->literal = true;
	if (c->port == 80 || c->port == 443) {
		NetDecision d;
		net_match(&p->matcher, c->host, c->port, &d);
		if (!d.allow) {
			c->inspect = refuse_in_kind;
			return;
		}
	}
	conn_decide(c);
}
