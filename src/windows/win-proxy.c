/* ward.exe's egress proxy: win-proxy.h. The decisions, parsers and audit
 * records are Linux's (src/net/); this file is the Winsock side: listening,
 * a thread per connection, the upstream connect and the byte relay. */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "net/http-parse.h"
#include "net/net-event.h"
#include "net/net-match.h"
#include "net/socks5.h"
#include "windows/win-proxy.h"

#define RELAY_BUF (16 * 1024)
#define CONN_STACK (128 * 1024)
#define ADDRS_MAX 8

typedef struct Conn Conn;

struct WinProxy {
	WinProxyConfig cfg;
	NetMatcher matcher;
	unsigned max_conns, header_ms, idle_ms, connect_ms;
	SOCKET l4, l6;
	uint16_t port;
	HANDLE accept_thread;
	volatile LONG stopping;
	bool wsa;
	CRITICAL_SECTION lock; /* everything below, and audit_write() */
	Conn **conns;          /* max_conns slots: the open connections */
	unsigned n_active;
	HANDLE idle;           /* manual-reset event: set when n_active is 0 */
	ProxyRefusal refused[PROXY_REPORT_DISTINCT];
	size_t n_refused;
	bool refused_more;
	unsigned long accepted, overflowed;
	unsigned peak;
};

struct Conn {
	WinProxy *p;
	unsigned slot;
	SOCKET client, upstream;
	const char *kind;
	char host[NET_HOST_MAX];
	uint16_t port;
	bool literal;
	NetDecision decision;
	NetVerdict verdict;
	char rule[320];
	char address[64];
	uint64_t up, down;
	ULONGLONG start;
	char head[HTTP_HEAD_MAX];
	size_t head_len;
};

static void lock(WinProxy *p)
{
	EnterCriticalSection(&p->lock);
}

static void unlock(WinProxy *p)
{
	LeaveCriticalSection(&p->lock);
}

/* The proxy's sockets are never inherited (the child is created with an
 * explicit handle list too: win32-proc.c). */
static void no_inherit(SOCKET s)
{
	(void)SetHandleInformation((HANDLE)s, HANDLE_FLAG_INHERIT, 0);
}

/* Wait until @s is readable (or writable) or @ms pass: 1, 0 on timeout, -1.
 * Readable covers a close and a reset too; a failed connect shows only in
 * the except set, so a write wait (a connect) asks for both. A read wait
 * names the socket once: Wine 8.0's wineserver aborts (an assertion in
 * server/sock.c complete_async_poll) when a socket named in two sets hangs
 * up between its two checks, and every Wine process of the prefix hangs. */
static int wait_socket(SOCKET s, bool write, unsigned ms)
{
	fd_set set, es;
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	int r;

	FD_ZERO(&set);
	FD_SET(s, &set);
	if (write) {
		FD_ZERO(&es);
		FD_SET(s, &es);
		r = select(0, NULL, &set, &es, &tv);
	} else
		r = select(0, &set, NULL, NULL, &tv);
	if (r == SOCKET_ERROR)
		return -1;
	return r > 0 ? 1 : 0;
}

static int send_all(SOCKET s, const char *buf, size_t len)
{
	while (len > 0) {
		int n = send(s, buf, len > INT_MAX ? INT_MAX : (int)len, 0);

		if (n <= 0)
			return -EPIPE;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* After an answer: no more writes, then read what the client still sends
 * (so closing with unread bytes does not reset the answer away), for at
 * most two seconds. */
static void linger_close(SOCKET s)
{
	char sink[512];
	ULONGLONG end = GetTickCount64() + 2000;

	shutdown(s, SD_SEND);
	for (;;) {
		ULONGLONG now = GetTickCount64();

		if (now >= end || wait_socket(s, false, (unsigned)(end - now)) <= 0)
			break;
		if (recv(s, sink, sizeof(sink), 0) <= 0)
			break;
	}
}

static void write_audit(Conn *c)
{
	WinProxy *p = c->p;
	cJSON *o;

	if (!p->cfg.audit)
		return;
	o = net_event_object(&(NetEvent){
		.kind = c->kind,
		.host = c->host,
		.port = c->port,
		.address = c->address,
		.verdict = c->verdict,
		.rule = c->rule,
		.decision = &c->decision,
		.bytes_up = c->up,
		.bytes_down = c->down,
		.duration_ms = (int64_t)(GetTickCount64() - c->start),
		.program = p->cfg.program,
	});
	if (!o)
		return;
	lock(p);
	if (audit_write(p->cfg.audit, "net", o) < 0 && audit_failures(p->cfg.audit, NULL) == 1)
		log_error("Failed to write a 'net' record to the audit log: the log of this "
			  "run's connections is incomplete");
	unlock(p);
}

static void note_refusal(Conn *c, const char *why)
{
	WinProxy *p = c->p;

	lock(p);
	for (size_t i = 0; i < p->n_refused; i++)
		if (p->refused[i].port == c->port && strcmp(p->refused[i].host, c->host) == 0) {
			unlock(p);
			return;
		}
	if (p->n_refused < PROXY_REPORT_DISTINCT) {
		ProxyRefusal *r = &p->refused[p->n_refused++];

		*r = (ProxyRefusal){ .port = c->port };
		snprintf(r->host, sizeof(r->host), "%s", c->host);
		snprintf(r->rule, sizeof(r->rule), "%s", why);
	} else
		p->refused_more = true;
	unlock(p);
}

/* Answer: an HTTP error page or a SOCKS5 reply (@rep, 0xff: none). */
static void answer(Conn *c, int status, uint8_t rep, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void answer(Conn *c, int status, uint8_t rep, const char *fmt, ...)
{
	char line[512], page[1024];
	uint8_t out[SOCKS5_REPLY_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (strcmp(c->kind, "socks5") != 0) {
		n = http_format_error(status, line, page, sizeof(page));
		if (n > 0)
			(void)send_all(c->client, page, (size_t)n);
	} else if (rep != 0xff) {
		size_t rn = socks5_format_reply(rep, NULL, out);
		(void)send_all(c->client, (const char *)out, rn);
	}
}

static void blocked(Conn *c, const char *rule, const char *why)
{
	bool v6 = strchr(c->host, ':') != NULL;

	c->verdict = NET_VERDICT_DENY;
	snprintf(c->rule, sizeof(c->rule), "%s", rule ? rule : why);
	note_refusal(c, why);
	answer(c, 403, SOCKS5_REP_NOT_ALLOWED, "ward: blocked %s%s%s:%u (%s)", v6 ? "[" : "",
	       c->host, v6 ? "]" : "", c->port, why);
}

static void failed(Conn *c, int status, uint8_t rep, const char *why)
{
	c->verdict = NET_VERDICT_ERROR;
	snprintf(c->rule, sizeof(c->rule), "%s", why);
	answer(c, status, rep, "ward: cannot reach %s:%u (%s)", c->host, c->port, why);
}

/* Read until @have bytes parse as a complete request (HTTP head or SOCKS5
 * message), within the head's deadline. 1 when more bytes came, 0 on EOF,
 * -ETIMEDOUT, -E2BIG when the buffer is full. */
static int read_more(Conn *c, ULONGLONG deadline)
{
	ULONGLONG now = GetTickCount64();
	int n, w;

	if (c->head_len >= sizeof(c->head))
		return -E2BIG;
	if (now >= deadline)
		return -ETIMEDOUT;
	w = wait_socket(c->client, false, (unsigned)(deadline - now));
	if (w == 0)
		return -ETIMEDOUT;
	if (w < 0)
		return -EIO;
	n = recv(c->client, c->head + c->head_len, (int)(sizeof(c->head) - c->head_len), 0);
	if (n <= 0)
		return 0;
	c->head_len += (size_t)n;
	return 1;
}

/* Connect to the first address that answers within the timeout. */
static int connect_addr(Conn *c, const struct sockaddr *sa, int salen)
{
	SOCKET s = socket(sa->sa_family, SOCK_STREAM, IPPROTO_TCP);
	u_long nb = 1;
	int err = 0, elen = sizeof(err);

	if (s == INVALID_SOCKET)
		return -EIO;
	no_inherit(s);
	(void)ioctlsocket(s, FIONBIO, &nb);
	if (connect(s, sa, salen) == SOCKET_ERROR && WSAGetLastError() != WSAEWOULDBLOCK) {
		err = WSAGetLastError();
		closesocket(s);
		return err == WSAECONNREFUSED ? -ECONNREFUSED : -EHOSTUNREACH;
	}
	if (wait_socket(s, true, c->p->connect_ms) <= 0) {
		closesocket(s);
		return -ETIMEDOUT;
	}
	if (getsockopt(s, SOL_SOCKET, SO_ERROR, (char *)&err, &elen) < 0 || err != 0) {
		closesocket(s);
		return err == WSAECONNREFUSED ? -ECONNREFUSED : -EHOSTUNREACH;
	}
	nb = 0;
	(void)ioctlsocket(s, FIONBIO, &nb);
	lock(c->p);
	c->upstream = s;
	unlock(c->p);
	return 0;
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

/* Match, resolve, check each address, connect. 0 when connected; else the
 * client was answered. */
static int decide_and_connect(Conn *c)
{
	WinProxy *p = c->p;
	struct sockaddr_storage addrs[ADDRS_MAX];
	size_t n = 0;
	const char *pin, *first = NULL;
	char why[320], firstbuf[256], buf[256];
	int r = -EHOSTUNREACH;

	net_match(&p->matcher, c->host, c->port, &c->decision);
	if (!c->decision.allow) {
		net_refusal_reason(&c->decision, c->host, c->port, why, sizeof(why));
		blocked(c, c->decision.rule, why);
		return -EACCES;
	}
	snprintf(c->rule, sizeof(c->rule), "%s", c->decision.rule ? c->decision.rule : "");
	c->verdict = NET_VERDICT_ALLOW;
	pin = c->literal ? c->host : net_pinned_address(&p->matcher, c->host);
	if (pin) {
		if (net_parse_address(pin, &addrs[0]) < 0) {
			failed(c, 502, SOCKS5_REP_GENERAL_FAILURE,
			       "network.hosts address is not an IP address");
			return -EINVAL;
		}
		n = 1;
	} else {
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC }, *res = NULL;

		if (getaddrinfo(c->host, NULL, &hints, &res) != 0 || !res) {
			failed(c, 502, SOCKS5_REP_HOST_UNREACHABLE, "resolve: no such host");
			return -ENOENT;
		}
		for (struct addrinfo *ai = res; ai && n < ADDRS_MAX; ai = ai->ai_next)
			if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) &&
			    ai->ai_addrlen <= sizeof(addrs[0])) {
				memset(&addrs[n], 0, sizeof(addrs[n]));
				memcpy(&addrs[n], ai->ai_addr, ai->ai_addrlen);
				n++;
			}
		freeaddrinfo(res);
	}
	for (size_t i = 0; i < n; i++) {
		const char *reason = NULL;
		const struct sockaddr *sa = (const struct sockaddr *)&addrs[i];

		if (net_check_address(&p->matcher, &c->decision, sa, c->port, buf, sizeof(buf),
				      &reason) < 0) {
			if (!first) {
				snprintf(firstbuf, sizeof(firstbuf), "%s", reason);
				first = firstbuf;
				net_addr_to_string(sa, c->address, sizeof(c->address));
			}
			continue;
		}
		set_port(&addrs[i], c->port);
		net_addr_to_string(sa, c->address, sizeof(c->address));
		r = connect_addr(c, sa,
				 addrs[i].ss_family == AF_INET ? (int)sizeof(struct sockaddr_in)
							       : (int)sizeof(struct sockaddr_in6));
		if (r == 0)
			return 0;
		first = NULL; /* an allowed address was tried: the failure is the connect's */
	}
	if (first || n == 0) {
		blocked(c, NULL, first ? first : "no usable address");
		return -EACCES;
	}
	failed(c, r == -ETIMEDOUT ? 504 : 502,
	       r == -ECONNREFUSED ? SOCKS5_REP_REFUSED : SOCKS5_REP_HOST_UNREACHABLE,
	       r == -ETIMEDOUT ? "connect: timed out" : r == -ECONNREFUSED ? "connect: refused"
									 : "connect: unreachable");
	return r;
}

/* Both ways until both ends close or the tunnel is idle too long. One
 * buffer per direction; a send blocks until the peer takes the bytes. */
static void relay(Conn *c)
{
	char *buf = malloc(RELAY_BUF);
	bool up_open = true, down_open = true;
	DWORD ms = c->p->idle_ms;

	if (!buf)
		return;
	/* A peer that stops reading blocks a send at most this long. */
	(void)setsockopt(c->client, SOL_SOCKET, SO_SNDTIMEO, (const char *)&ms, sizeof(ms));
	(void)setsockopt(c->upstream, SOL_SOCKET, SO_SNDTIMEO, (const char *)&ms, sizeof(ms));
	while (up_open || down_open) {
		fd_set rs;
		struct timeval tv = { .tv_sec = c->p->idle_ms / 1000,
				      .tv_usec = (c->p->idle_ms % 1000) * 1000 };
		int r;

		FD_ZERO(&rs);
		if (up_open)
			FD_SET(c->client, &rs);
		if (down_open)
			FD_SET(c->upstream, &rs);
		r = select(0, &rs, NULL, NULL, &tv);
		if (r <= 0)
			break; /* idle too long, or an error */
		if (up_open && FD_ISSET(c->client, &rs)) {
			int n = recv(c->client, buf, RELAY_BUF, 0);
			if (n <= 0) {
				up_open = false;
				shutdown(c->upstream, SD_SEND);
			} else if (send_all(c->upstream, buf, (size_t)n) < 0)
				break;
			else
				c->up += (uint64_t)n;
		}
		if (down_open && FD_ISSET(c->upstream, &rs)) {
			int n = recv(c->upstream, buf, RELAY_BUF, 0);
			if (n <= 0) {
				down_open = false;
				shutdown(c->client, SD_SEND);
			} else if (send_all(c->client, buf, (size_t)n) < 0)
				break;
			else
				c->down += (uint64_t)n;
		}
	}
	free(buf);
}

/* SOCKS5: greeting, method reply, request. 0 with c->host/port set. */
static int socks_head(Conn *c, ULONGLONG deadline)
{
	Socks5Request req;
	bool noauth = false;
	int r, g;

	c->kind = "socks5";
	while ((g = socks5_parse_greeting((const uint8_t *)c->head, c->head_len, &noauth)) == 0)
		if ((r = read_more(c, deadline)) <= 0)
			return r == 0 ? -ECONNRESET : r;
	if (g < 0 || !noauth) {
		static const char no_method[2] = { 5, (char)0xff };
		(void)send_all(c->client, no_method, 2);
		c->verdict = NET_VERDICT_ERROR;
		snprintf(c->rule, sizeof(c->rule), "%s",
			 g < 0 ? "malformed SOCKS5 greeting" : "no acceptable SOCKS5 method");
		return -EBADMSG;
	}
	if (send_all(c->client, "\x05\x00", 2) < 0)
		return -EPIPE;
	memmove(c->head, c->head + g, c->head_len - (size_t)g);
	c->head_len -= (size_t)g;
	while ((r = socks5_parse_request((const uint8_t *)c->head, c->head_len, &req)) == 0)
		if ((g = read_more(c, deadline)) <= 0)
			return g == 0 ? -ECONNRESET : g;
	if (r < 0) {
		c->verdict = NET_VERDICT_ERROR;
		snprintf(c->rule, sizeof(c->rule), "malformed SOCKS5 request");
		answer(c, 0, r == -EAFNOSUPPORT ? SOCKS5_REP_ATYP_UNSUPPORTED : SOCKS5_REP_GENERAL_FAILURE,
		       "%s", c->rule);
		return -EBADMSG;
	}
	snprintf(c->host, sizeof(c->host), "%s", req.host);
	c->port = req.port;
	c->literal = req.literal;
	if (req.cmd != SOCKS5_CMD_CONNECT) {
		c->verdict = NET_VERDICT_ERROR;
		snprintf(c->rule, sizeof(c->rule), "SOCKS5 command %u not supported", req.cmd);
		answer(c, 0, SOCKS5_REP_CMD_UNSUPPORTED, "%s", c->rule);
		return -EOPNOTSUPP;
	}
	/* Bytes after the request belong to the tunnel. */
	memmove(c->head, c->head + r, c->head_len - (size_t)r);
	c->head_len -= (size_t)r;
	return 0;
}

/* HTTP: the head, parsed by Linux's parser. 0 with c->host/port set and
 * @req filled. */
static int http_head(Conn *c, ULONGLONG deadline, HttpRequest *req)
{
	const char *reason = NULL;
	int r;

	c->kind = "http";
	for (;;) {
		r = http_parse_head(c->head, c->head_len, req, &reason);
		if (r != 0)
			break;
		r = read_more(c, deadline);
		if (r == 0)
			return -ECONNRESET;
		if (r == -ETIMEDOUT) {
			c->verdict = NET_VERDICT_ERROR;
			snprintf(c->rule, sizeof(c->rule), "request head not complete in time");
			answer(c, 408, 0xff, "ward: request head not complete in time");
			return r;
		}
		if (r == -E2BIG)
			break;
		if (r < 0)
			return r;
	}
	if (r == 1) {
		c->kind = req->kind == HTTP_KIND_CONNECT ? "http-connect" : "http";
		snprintf(c->host, sizeof(c->host), "%s", req->host);
		c->port = req->port;
		c->literal = req->literal;
		return 0;
	}
	c->verdict = NET_VERDICT_ERROR;
	if (r == -EPERM) {
		/* The Host header names another target: a refusal by policy. */
		snprintf(c->host, sizeof(c->host), "%s", req->host);
		c->port = req->port;
		blocked(c, NULL, reason ? reason : "Host header differs from the target");
		return r;
	}
	snprintf(c->rule, sizeof(c->rule), "%s", reason ? reason : "malformed request head");
	answer(c, r == -E2BIG ? 431 : 400, 0xff, "ward: %s", c->rule);
	return r;
}

static void serve(Conn *c)
{
	WinProxy *p = c->p;
	ULONGLONG deadline = GetTickCount64() + p->header_ms;
	HttpRequest req = { 0 };
	int r;

	c->kind = "http";
	r = read_more(c, deadline);
	if (r <= 0) {
		c->verdict = NET_VERDICT_ERROR;
		snprintf(c->rule, sizeof(c->rule), "%s",
			 r == -ETIMEDOUT ? "request head not complete in time" : "closed before a request");
		return;
	}
	r = (unsigned char)c->head[0] == 5 ? socks_head(c, deadline) : http_head(c, deadline, &req);
	if (r < 0) {
		if (!c->rule[0])
			snprintf(c->rule, sizeof(c->rule), "%s",
				 r == -ETIMEDOUT ? "request head not complete in time"
						 : "closed before a complete request");
		return;
	}
	if (decide_and_connect(c) < 0)
		return;
	if (strcmp(c->kind, "socks5") == 0) {
		uint8_t out[SOCKS5_REPLY_MAX];
		size_t rn = socks5_format_reply(SOCKS5_REP_SUCCEEDED, NULL, out);

		if (send_all(c->client, (const char *)out, rn) < 0)
			return;
		if (c->head_len && send_all(c->upstream, c->head, c->head_len) == 0)
			c->up += c->head_len;
	} else if (req.kind == HTTP_KIND_CONNECT) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

		if (send_all(c->client, ok, sizeof(ok) - 1) < 0)
			return;
		if (c->head_len > req.head_len &&
		    send_all(c->upstream, c->head + req.head_len, c->head_len - req.head_len) == 0)
			c->up += c->head_len - req.head_len;
	} else {
		char *fwd = NULL;
		size_t flen = 0;

		if (http_build_forward_head(c->head, &req, &fwd, &flen) < 0)
			return;
		r = send_all(c->upstream, fwd, flen);
		free(fwd);
		if (r < 0)
			return;
		c->up += flen;
		if (c->head_len > req.head_len &&
		    send_all(c->upstream, c->head + req.head_len, c->head_len - req.head_len) == 0)
			c->up += c->head_len - req.head_len;
	}
	relay(c);
}

static void conn_end(Conn *c)
{
	WinProxy *p = c->p;
	SOCKET cl, up;

	lock(p);
	p->conns[c->slot] = NULL;
	cl = c->client;
	up = c->upstream;
	c->client = c->upstream = INVALID_SOCKET;
	unlock(p);
	if (up != INVALID_SOCKET)
		closesocket(up);
	if (cl != INVALID_SOCKET) {
		if (c->verdict != NET_VERDICT_ALLOW)
			linger_close(cl);
		closesocket(cl);
	}
	write_audit(c);
	lock(p);
	if (--p->n_active == 0)
		SetEvent(p->idle);
	unlock(p);
	free(c);
}

static DWORD WINAPI conn_thread(void *arg)
{
	Conn *c = arg;

	serve(c);
	conn_end(c);
	return 0;
}

/* Over the limit: answered without reading the request (a 503 page; a
 * SOCKS5 client reads a method it did not offer and gives up), audited. */
static void overflow(WinProxy *p, SOCKET s)
{
	char body[128], page[512];
	int n;
	Conn c = { .p = p, .client = s, .kind = "http", .verdict = NET_VERDICT_ERROR,
		   .start = GetTickCount64(), .upstream = INVALID_SOCKET };

	snprintf(c.rule, sizeof(c.rule), "connection limit (%u)", p->max_conns);
	snprintf(body, sizeof(body), "ward: too many connections through the proxy (limit %u)",
		 p->max_conns);
	n = http_format_error(503, body, page, sizeof(page));
	if (n > 0)
		(void)send(s, page, n, 0);
	closesocket(s);
	write_audit(&c);
}

static DWORD WINAPI accept_thread(void *arg)
{
	WinProxy *p = arg;

	while (!p->stopping) {
		fd_set rs;
		SOCKET s;
		Conn *c;
		HANDLE t;
		unsigned slot = 0;

		struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
		int w;

		FD_ZERO(&rs);
		FD_SET(p->l4, &rs);
		if (p->l6 != INVALID_SOCKET)
			FD_SET(p->l6, &rs);
		/* A short wait, so that stop is seen without closing a socket
		 * under a select() of another thread. */
		w = select(0, &rs, NULL, NULL, &tv);
		if (w == SOCKET_ERROR)
			break;
		if (p->stopping)
			break;
		if (w == 0)
			continue;
		s = accept(FD_ISSET(p->l4, &rs) ? p->l4 : p->l6, NULL, NULL);
		if (s == INVALID_SOCKET)
			continue;
		no_inherit(s);
		lock(p);
		if (p->n_active >= p->max_conns) {
			p->overflowed++;
			unlock(p);
			overflow(p, s);
			continue;
		}
		while (p->conns[slot])
			slot++;
		unlock(p);
		c = calloc(1, sizeof(*c));
		if (!c) {
			closesocket(s);
			continue;
		}
		*c = (Conn){ .p = p, .slot = slot, .client = s, .upstream = INVALID_SOCKET,
			     .kind = "http", .verdict = NET_VERDICT_ERROR, .start = GetTickCount64() };
		lock(p);
		p->conns[slot] = c;
		p->n_active++;
		if (p->n_active > p->peak)
			p->peak = p->n_active;
		p->accepted++;
		ResetEvent(p->idle);
		unlock(p);
		t = CreateThread(NULL, CONN_STACK, conn_thread, c, STACK_SIZE_PARAM_IS_A_RESERVATION,
				 NULL);
		if (!t) {
			snprintf(c->rule, sizeof(c->rule), "cannot start a thread");
			conn_end(c);
			continue;
		}
		CloseHandle(t);
	}
	return 0;
}

/* @exclusive: SO_EXCLUSIVEADDRUSE must take (a fixed port: see
 * win_proxy_listen()); otherwise it is asked for and not checked. On
 * failure WSAGetLastError() says why. */
static SOCKET listen_on(int family, uint16_t port, bool exclusive, uint16_t *ret_port)
{
	SOCKET s = socket(family, SOCK_STREAM, IPPROTO_TCP);
	struct sockaddr_storage ss = { 0 };
	int len, one = 1;

	if (s == INVALID_SOCKET)
		return s;
	no_inherit(s);
	/* Nobody else may bind the same port while it is ours. */
	if (setsockopt(s, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, (const char *)&one, sizeof(one)) ==
		    SOCKET_ERROR &&
	    exclusive) {
		int e = WSAGetLastError();

		closesocket(s);
		WSASetLastError(e);
		return INVALID_SOCKET;
	}
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		in->sin_port = htons(port);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		(void)setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, (const char *)&one, sizeof(one));
		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		in6->sin6_port = htons(port);
		len = sizeof(*in6);
	}
	if (bind(s, (struct sockaddr *)&ss, len) == SOCKET_ERROR || listen(s, 64) == SOCKET_ERROR) {
		int e = WSAGetLastError();

		closesocket(s);
		WSASetLastError(e);
		return INVALID_SOCKET;
	}
	if (ret_port) {
		len = sizeof(ss);
		if (getsockname(s, (struct sockaddr *)&ss, &len) == SOCKET_ERROR) {
			closesocket(s);
			return INVALID_SOCKET;
		}
		*ret_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	}
	return s;
}

int win_proxy_listen(const WinProxyConfig *cfg, WinProxy **ret, char *why, size_t n_why)
{
	WinProxy *p = calloc(1, sizeof(*p));
	WSADATA wsa;

	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	p->l4 = p->l6 = INVALID_SOCKET;
	InitializeCriticalSection(&p->lock);
	p->max_conns = cfg->max_connections
			       ? cfg->max_connections
			       : cfg->policy->max_connections
				 ? (unsigned)(cfg->policy->max_connections > 4096
						      ? 4096
						      : cfg->policy->max_connections)
				 : WIN_PROXY_DEFAULT_MAX_CONNECTIONS;
	p->header_ms = cfg->header_timeout_ms ? cfg->header_timeout_ms : 10000;
	p->idle_ms = cfg->idle_timeout_ms ? cfg->idle_timeout_ms : 300000;
	p->connect_ms = cfg->connect_timeout_ms ? cfg->connect_timeout_ms : 10000;
	net_matcher_init(&p->matcher, cfg->policy, cfg->program);
	p->conns = calloc(p->max_conns, sizeof(*p->conns));
	p->idle = CreateEventW(NULL, TRUE, TRUE, NULL);
	if (!p->conns || !p->idle) {
		win_proxy_free(p);
		return -ENOMEM;
	}
	if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) {
		snprintf(why, n_why, "WSAStartup failed");
		win_proxy_free(p);
		return -EIO;
	}
	p->wsa = true;
	p->l4 = listen_on(AF_INET, cfg->port, cfg->port != 0, &p->port);
	if (p->l4 == INVALID_SOCKET) {
		int e = WSAGetLastError();

		if (cfg->port)
			snprintf(why, n_why,
				 "cannot hold 127.0.0.1 port %u exclusively (error %d%s)",
				 (unsigned)cfg->port, e,
				 e == WSAEADDRINUSE || e == WSAEACCES ? ": another process holds it"
								       : "");
		else
			snprintf(why, n_why, "cannot listen on 127.0.0.1 (error %d)", e);
		win_proxy_free(p);
		return e == WSAEADDRINUSE || e == WSAEACCES ? -EADDRINUSE : -EIO;
	}
	/* ::1 on the same port, where the host has it; else IPv4 only (a
	 * client told 127.0.0.1 never needs it). A fixed port is one the
	 * sandbox may reach on ::1 too (the online user's walls permit both):
	 * if another process holds it there, it would be reachable, so that
	 * refuses; only a host without IPv6 loopback goes on without. */
	p->l6 = listen_on(AF_INET6, p->port, cfg->port != 0, NULL);
	if (p->l6 == INVALID_SOCKET && cfg->port) {
		int e = WSAGetLastError();

		if (e != WSAEAFNOSUPPORT && e != WSAEADDRNOTAVAIL && e != WSAEPROTONOSUPPORT &&
		    e != WSAEPFNOSUPPORT) {
			snprintf(why, n_why,
				 "cannot hold ::1 port %u exclusively (error %d%s)",
				 (unsigned)cfg->port, e,
				 e == WSAEADDRINUSE || e == WSAEACCES ? ": another process holds it"
								       : "");
			win_proxy_free(p);
			return e == WSAEADDRINUSE || e == WSAEACCES ? -EADDRINUSE : -EIO;
		}
	}
	*ret = p;
	return 0;
}

uint16_t win_proxy_port(const WinProxy *p)
{
	return p->port;
}

bool win_proxy_has_v6(const WinProxy *p)
{
	return p->l6 != INVALID_SOCKET;
}

void win_proxy_set_program(WinProxy *p, const char *program)
{
	p->cfg.program = program;
	net_matcher_init(&p->matcher, p->cfg.policy, program);
}

void win_proxy_set_audit(WinProxy *p, AuditLog *audit)
{
	p->cfg.audit = audit;
}

int win_proxy_start(WinProxy *p)
{
	if (p->accept_thread)
		return 0;
	p->accept_thread = CreateThread(NULL, 0, accept_thread, p, 0, NULL);
	return p->accept_thread ? 0 : -EAGAIN;
}

void win_proxy_stop(WinProxy *p)
{
	if (!p || InterlockedExchange(&p->stopping, 1))
		return;
	if (p->accept_thread) {
		WaitForSingleObject(p->accept_thread, INFINITE);
		CloseHandle(p->accept_thread);
		p->accept_thread = NULL;
	}
	if (p->l4 != INVALID_SOCKET)
		closesocket(p->l4);
	if (p->l6 != INVALID_SOCKET)
		closesocket(p->l6);
	p->l4 = p->l6 = INVALID_SOCKET;
	/* Shut every connection down: its thread's select() or recv() wakes,
	 * it closes its sockets and writes its audit event. */
	lock(p);
	for (unsigned i = 0; i < p->max_conns; i++)
		if (p->conns[i]) {
			if (p->conns[i]->client != INVALID_SOCKET)
				shutdown(p->conns[i]->client, SD_BOTH);
			if (p->conns[i]->upstream != INVALID_SOCKET)
				shutdown(p->conns[i]->upstream, SD_BOTH);
		}
	unlock(p);
	/* A thread in getaddrinfo() or a connect has bounded waits; the
	 * resolver's own may take longer: do not wait forever for it. */
	WaitForSingleObject(p->idle, 30000);
}

size_t win_proxy_refusals(WinProxy *p, ProxyRefusal *ret, size_t max, bool *more)
{
	size_t n;

	lock(p);
	n = p->n_refused < max ? p->n_refused : max;
	memcpy(ret, p->refused, n * sizeof(*ret));
	*more = p->refused_more || n < p->n_refused;
	unlock(p);
	return n;
}

void win_proxy_counts(WinProxy *p, WinProxyCounts *ret)
{
	lock(p);
	*ret = (WinProxyCounts){ .accepted = p->accepted, .overflowed = p->overflowed,
				 .open = p->n_active, .peak = p->peak };
	unlock(p);
}

WinProxy *win_proxy_free(WinProxy *p)
{
	bool idle;

	if (!p)
		return NULL;
	win_proxy_stop(p);
	/* A connection thread still running holds @p: leak it rather than
	 * free what it uses (only after the 30 s wait above ran out). */
	idle = !p->idle || WaitForSingleObject(p->idle, 0) == WAIT_OBJECT_0;
	if (!idle)
		return NULL;
	if (p->idle)
		CloseHandle(p->idle);
	if (p->wsa)
		WSACleanup();
	DeleteCriticalSection(&p->lock);
	free(p->conns);
	free(p);
	return NULL;
}
