/* The first phase of a connection: read the HTTP request head or the SOCKS5
 * greeting and request, answer what is malformed, and hand a complete
 * request to conn_decide(). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "net/proxy-internal.h"

/* SOCKS5: greeting, then request. Returns 1 when a request is complete. */
static int socks_step(Conn *c)
{
	static const uint8_t noauth[] = { 5, 0 }, nomethod[] = { 5, 0xff };
	Socks5Request req;
	bool ok = false;
	int r;

	if (!c->socks_greeted) {
		r = socks5_parse_greeting((const uint8_t *)c->head, c->head_len, &ok);
		if (r == 0)
			return 0;
		if (r < 0) {
			snprintf(c->rule, sizeof(c->rule), "not a SOCKS5 greeting");
			conn_refuse(c, NET_VERDICT_ERROR, 0, 0xff, "bad greeting");
			return -1;
		}
		if (!ok) {
			snprintf(c->rule, sizeof(c->rule), "no acceptable SOCKS5 method");
			(void)conn_set_pending(&c->down, nomethod, sizeof(nomethod));
			conn_refuse(c, NET_VERDICT_ERROR, 0, 0xff, "no method");
			return -1;
		}
		memmove(c->head, c->head + r, c->head_len - (size_t)r);
		c->head_len -= (size_t)r;
		c->socks_greeted = true;
		if (conn_set_pending(&c->down, noauth, sizeof(noauth)) < 0) {
			conn_close(c);
			return -1;
		}
	}
	r = socks5_parse_request((const uint8_t *)c->head, c->head_len, &req);
	if (r == 0) {
		/* The client waits for the method reply before it sends the
		 * rest. One that sent its request with the greeting gets both
		 * replies in one write, one wakeup fewer on its side. */
		if (c->down.pend && relay_flush_client(c) < 0) {
			conn_close(c);
			return -1;
		}
		return 0;
	}
	if (r < 0) {
		snprintf(c->rule, sizeof(c->rule), "malformed SOCKS5 request");
		conn_refuse(c, NET_VERDICT_ERROR, 0,
		       r == -EAFNOSUPPORT ? SOCKS5_REP_ATYP_UNSUPPORTED : SOCKS5_REP_GENERAL_FAILURE, "bad request");
		return -1;
	}
	snprintf(c->host, sizeof(c->host), "%s", req.host);
	c->port = req.port;
	c->literal = req.literal;
	if (req.cmd != SOCKS5_CMD_CONNECT) {
		snprintf(c->rule, sizeof(c->rule), "SOCKS5 command %u not supported", req.cmd);
		conn_refuse(c, NET_VERDICT_DENY, 0, SOCKS5_REP_CMD_UNSUPPORTED, "unsupported");
		return -1;
	}
	/* What follows the request (nothing, for a well-behaved client) is
	 * relayed after the reply. */
	memmove(c->head, c->head + r, c->head_len - (size_t)r);
	c->head_len -= (size_t)r;
	return 1;
}

static int http_step(Conn *c)
{
	const char *reason = NULL;
	int r = http_parse_head(c->head, c->head_len, &c->http, &reason);

	if (r == 0)
		return 0;
	if (r < 0) {
		int status = r == -E2BIG ? 431 : r == -EPERM ? 403 : 400;
		if (r == -EPERM) {
			/* The parser filled in the target it compared against. */
			snprintf(c->host, sizeof(c->host), "%s", c->http.host);
			c->port = c->http.port;
			conn_blocked(c, NULL, reason);
		} else {
			snprintf(c->rule, sizeof(c->rule), "%s", reason ? reason : "malformed request");
			conn_refuse(c, NET_VERDICT_ERROR, status, 0, "ward: %s", c->rule);
		}
		return -1;
	}
	c->kind = c->http.kind == HTTP_KIND_CONNECT ? CONN_KIND_HTTP_CONNECT : CONN_KIND_HTTP_FORWARD;
	snprintf(c->host, sizeof(c->host), "%s", c->http.host);
	c->port = c->http.port;
	c->literal = c->http.literal;
	return 1;
}

void conn_read_head(Conn *c)
{
	while (c->client.can_read && c->state == CONN_HEAD) {
		ssize_t n;
		int r;

		if (c->head_len >= HTTP_HEAD_MAX) {
			/* Full: the parsers have already said what they think. */
			break;
		}
		n = recv(c->client.fd, c->head + c->head_len, HTTP_HEAD_MAX - c->head_len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				c->client.can_read = false;
				break;
			}
			conn_close(c);
			return;
		}
		if (n == 0) {
			conn_close(c);
			return;
		}
		c->head_len += (size_t)n;
		r = c->inspect ? c->inspect(c) : c->kind == CONN_KIND_SOCKS5 ? socks_step(c) : http_step(c);
		if (r < 0)
			return;
		if (r > 0) {
			conn_decide(c);
			return;
		}
	}
}
