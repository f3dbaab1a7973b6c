/* One proxied connection: read the request head (HTTP) or handshake (SOCKS5),
 * decide against the policy, resolve, connect, answer, relay, and write the
 * `net` audit event when it ends. */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/macro.h"
#include "net/capture-sniff.h"
#include "net/inspect.h"
#include "net/net-event.h"
#include "net/net-rules.h"
#include "net/proxy-internal.h"

static const char *kind_to_string(ConnKind k)
{
	switch (k) {
	case CONN_KIND_HTTP_CONNECT:
		return "http-connect";
	case CONN_KIND_SOCKS5:
		return "socks5";
	case CONN_KIND_HOST_PORT:
		return "host-port";
	case CONN_KIND_CAPTURE:
		return "capture";
	case CONN_KIND_HTTP:
	case CONN_KIND_HTTP_FORWARD:
		break;
	}
	return "http";
}

static bool is_http(const Conn *c)
{
	if (c->kind == CONN_KIND_CAPTURE)
		return c->sniffed == SNIFF_HTTP;
	return c->kind != CONN_KIND_SOCKS5 && c->kind != CONN_KIND_HOST_PORT;
}

static int watch_add(Proxy *p, Endpoint *e)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
		.data.ptr = &e->w,
	};
	return epoll_ctl(p->epfd, EPOLL_CTL_ADD, e->fd, &ev) < 0 ? -errno : 0;
}

Conn *conn_new(Proxy *p, int fd, ConnKind kind)
{
	Conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->proxy = p;
	c->kind = kind;
	c->client = (Endpoint){ .w.kind = WATCH_CLIENT, .fd = fd };
	c->upstream = (Endpoint){ .w.kind = WATCH_UPSTREAM, .fd = -1 };
	c->up.pipe_r = c->up.pipe_w = c->down.pipe_r = c->down.pipe_w = -1;
	c->verdict = NET_VERDICT_ERROR;
	c->sniffed = -1;
	snprintf(c->rule, sizeof(c->rule), "closed before a request");
	c->start_ms = c->active_ms = p->now_ms;
	c->deadline_ms = p->now_ms + p->header_ms;
	c->head = malloc(HTTP_HEAD_MAX);
	if (!c->head || watch_add(p, &c->client) < 0) {
		free(c->head);
		free(c);
		return NULL;
	}
	c->next = p->conns;
	if (p->conns)
		p->conns->prev = c;
	p->conns = c;
	p->n_total++;
	p->n_active++;
	return c;
}

void conn_mark_ready(Conn *c)
{
	if (c->in_ready || c->state == CONN_DEAD)
		return;
	c->in_ready = true;
	c->ready_next = c->proxy->ready;
	c->proxy->ready = c;
}

static void write_audit(Conn *c)
{
	Proxy *p = c->proxy;
	bool capture = c->kind == CONN_KIND_CAPTURE;
	cJSON *o;

	if (!p->cfg.audit)
		return;
	o = net_event_object(&(NetEvent){
		.kind = kind_to_string(c->kind),
		.host = c->host,
		.port = c->port,
		.address = c->address,
		.verdict = c->verdict,
		.rule = c->rule,
		.decision = &c->decision,
		.destination = capture ? c->dest : NULL,
		.protocol = capture && c->sniffed >= 0 ? sniff_kind_to_string(c->sniffed) : NULL,
		.bytes_up = c->up.bytes,
		.bytes_down = c->down.bytes,
		.duration_ms = proxy_now_ms() - c->start_ms,
		.program = p->cfg.program,
	});
	if (!o)
		return;
	/* The proxy is its own process: say it here, once per run. */
	if (audit_write(p->cfg.audit, "net", o) < 0 &&
	    audit_failures(p->cfg.audit, NULL) == 1)
		log_error("Failed to write a 'net' record to the audit log: the log of this "
			  "run's connections is incomplete");
}

static void conn_finished(Conn *c)
{
	if (c->handed_off)
		return;
	proxy_report_refusal(c->proxy, c);
	write_audit(c);
}

static void close_upstream(Conn *c)
{
	if (c->upstream.fd >= 0) {
		(void)close(c->upstream.fd);
		c->upstream.fd = -1;
	}
}

void conn_close(Conn *c)
{
	Proxy *p = c->proxy;

	if (c->state == CONN_DEAD)
		return;
	if (c->query) {
		resolver_cancel(c->query);
		c->query = NULL;
	}
	conn_finished(c);
	(void)close(c->client.fd);
	c->client.fd = -1;
	close_upstream(c);
	flow_done(c, &c->up);
	flow_done(c, &c->down);
	free(c->head);
	c->head = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	p->n_total--;
	if (!c->overflow)
		p->n_active--;
	c->state = CONN_DEAD;
	/* Freed after the batch: later events in it may point at @c. */
	c->dead_next = p->dead;
	p->dead = c;
	/* A freed slot may let a paused accept loop go on. */
	p->accept_resume_ms = 0;
}

int conn_set_pending(Flow *f, const void *data, size_t n)
{
	/* After what is still unsent: a SOCKS5 method reply waits for the
	 * request's reply when the client sent both at once. */
	size_t keep = f->pend ? f->pend_len - f->pend_off : 0;
	char *b = malloc(keep + n ? keep + n : 1);

	if (!b)
		return -ENOMEM;
	if (keep)
		memcpy(b, f->pend + f->pend_off, keep);
	memcpy(b + keep, data, n);
	free(f->pend);
	f->pend = b;
	f->pend_len = keep + n;
	f->pend_off = 0;
	return 0;
}

/* Answer and linger: write @http_status's page (HTTP) or the SOCKS reply
 * @socks_rep, then drain until the client closes (so that closing with
 * unread bytes does not reset the answer away). */
void conn_refuse(Conn *c, NetVerdict verdict, int http_status, uint8_t socks_rep, const char *fmt, ...)
{
	char line[512], page[1024];
	uint8_t rep[SOCKS5_REPLY_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->verdict = verdict;
	/* A live session's commands learn of a refusal from this answer: its
	 * report is in the pipe before it (proxy.h, report_every). */
	if (verdict == NET_VERDICT_DENY && c->proxy->cfg.report_every)
		proxy_report(c->proxy, c->host, c->port, c->refusal[0] ? c->refusal : c->rule);
	close_upstream(c);
	if (c->query) {
		resolver_cancel(c->query);
		c->query = NULL;
	}
	if (is_http(c)) {
		n = http_format_error(http_status, line, page, sizeof(page));
		if (n < 0 || conn_set_pending(&c->down, page, (size_t)n) < 0) {
			conn_close(c);
			return;
		}
	} else if (c->kind == CONN_KIND_CAPTURE && c->sniffed == SNIFF_TLS) {
		/* A fatal access_denied alert: the client says why it failed. */
		static const uint8_t alert[] = { 0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x31 };
		if (conn_set_pending(&c->down, alert, sizeof(alert)) < 0) {
			conn_close(c);
			return;
		}
	} else if (c->kind == CONN_KIND_SOCKS5 && socks_rep != 0xff) {
		size_t rn = socks5_format_reply(socks_rep, NULL, rep);
		if (conn_set_pending(&c->down, rep, rn) < 0) {
			conn_close(c);
			return;
		}
	}
	c->state = CONN_LINGER;
	c->deadline_ms = c->proxy->now_ms + 2000;
	conn_mark_ready(c);
}

void conn_overflow(Conn *c)
{
	static const uint8_t socks[] = { 5, 0, 5, SOCKS5_REP_GENERAL_FAILURE, 0, 1, 0, 0, 0, 0, 0, 0 };
	char body[128];

	c->overflow = true;
	c->proxy->n_active--;
	snprintf(c->rule, sizeof(c->rule), "connection limit (%u)", c->proxy->max_conns);
	snprintf(body, sizeof(body), "ward: too many connections through the proxy (limit %u)",
		 c->proxy->max_conns);
	if (is_http(c)) {
		conn_refuse(c, NET_VERDICT_ERROR, 503, 0, "%s", body);
		return;
	}
	/* Answer the greeting and the request it has not sent yet: a SOCKS5
	 * client reads the method reply, sends its request, reads the failure. */
	if (conn_set_pending(&c->down, socks, sizeof(socks)) < 0) {
		conn_close(c);
		return;
	}
	conn_refuse(c, NET_VERDICT_ERROR, 0, 0xff, "%s", body);
}

static void connect_next(Conn *c);
static void check_connected(Conn *c);

/* Refuse by policy. The audit's "rule" is the pattern that decided when one
 * did (@rule), else the reason; the answer always says why. */
void conn_blocked(Conn *c, const char *rule, const char *why)
{
	snprintf(c->rule, sizeof(c->rule), "%s", rule ? rule : why);
	snprintf(c->refusal, sizeof(c->refusal), "%s", why);
	conn_refuse(c, NET_VERDICT_DENY, 403, SOCKS5_REP_NOT_ALLOWED, "ward: blocked %s%s%s:%u (%s)",
	       strchr(c->host, ':') ? "[" : "", c->host, strchr(c->host, ':') ? "]" : "", c->port, why);
}

static void failed(Conn *c, int err, const char *why)
{
	int status = err == -ETIMEDOUT ? 504 : 502;
	uint8_t rep = err == -ECONNREFUSED ? SOCKS5_REP_REFUSED
		      : err == -ENETUNREACH ? SOCKS5_REP_NET_UNREACHABLE
					    : SOCKS5_REP_HOST_UNREACHABLE;

	snprintf(c->rule, sizeof(c->rule), "%s", why);
	if (c->kind == CONN_KIND_HOST_PORT || (c->kind == CONN_KIND_CAPTURE && !is_http(c))) {
		/* The connect inside already succeeded (the kernel accepted it
		 * on the relay's listener): a reset is the nearest thing to the
		 * refusal the host's port gave. */
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };
		(void)setsockopt(c->client.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		c->verdict = NET_VERDICT_ERROR;
		conn_close(c);
		return;
	}
	conn_refuse(c, NET_VERDICT_ERROR, status, rep, "ward: cannot reach %s:%u (%s)", c->host, c->port, why);
}

/* Keep the addresses the policy lets this connection reach. */
static void take_addresses(Conn *c, const struct sockaddr_storage *addrs, size_t n)
{
	char buf[256];
	const char *reason = NULL, *first = NULL;
	char firstbuf[256];

	c->n_addrs = c->i_addr = 0;
	for (size_t i = 0; i < n; i++) {
		if (net_check_address(&c->proxy->matcher, &c->decision, (const struct sockaddr *)&addrs[i], c->port,
				      buf, sizeof(buf), &reason) < 0) {
			if (!first) {
				snprintf(firstbuf, sizeof(firstbuf), "%s", reason);
				first = firstbuf;
				net_addr_to_string((const struct sockaddr *)&addrs[i], c->address, sizeof(c->address));
			}
			continue;
		}
		c->addrs[c->n_addrs++] = addrs[i];
	}
	if (c->n_addrs == 0) {
		conn_blocked(c, NULL, first ? first : "no usable address");
		return;
	}
	connect_next(c);
}

static void resolved(void *userdata, int r, const struct sockaddr_storage *addrs, size_t n, const char *err)
{
	Conn *c = userdata;

	c->query = NULL;
	if (c->state != CONN_RESOLVING)
		return;
	if (r < 0) {
		char why[128];
		snprintf(why, sizeof(why), "resolve: %s", err ? err : "failed");
		failed(c, r, why);
		return;
	}
	take_addresses(c, addrs, n);
}

void conn_decide(Conn *c)
{
	Proxy *p = c->proxy;
	struct sockaddr_storage ss;
	const char *pin;
	char why[300];
	int r;

	net_match(&p->matcher, c->host, c->port, &c->decision);
	if (!c->decision.allow) {
		net_refusal_reason(&c->decision, c->host, c->port, why, sizeof(why));
		conn_blocked(c, c->decision.rule, why);
		return;
	}
	snprintf(c->rule, sizeof(c->rule), "%s", c->decision.rule);
	c->verdict = NET_VERDICT_ALLOW;

	pin = c->literal ? c->host : net_pinned_address(&p->matcher, c->host);
	if (pin) {
		/* A literal, or network.hosts: no DNS. The address still goes
		 * through the private-address rule in take_addresses(). */
		if (net_parse_address(pin, &ss) < 0) {
			failed(c, -EINVAL, "network.hosts address is not an IP address");
			return;
		}
		take_addresses(c, &ss, 1);
		return;
	}
	if (!p->resolver) {
		r = resolver_new(p->epfd, &p->resolver);
		if (r < 0) {
			failed(c, r, "resolver unavailable");
			return;
		}
	}
	c->state = CONN_RESOLVING;
	c->deadline_ms = p->now_ms + 15000;
	r = resolver_query(p->resolver, c->host, resolved, c, &c->query);
	if (r < 0)
		failed(c, r, "resolve: out of memory");
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

/* Hand the connection to the inspector when its requests must be read:
 * TLS to an inspected host (CONNECT and SOCKS5 on any port but 80 are
 * taken for TLS), or plain HTTP while credentials or request rules exist.
 * True when handed off (or refused for lack of room). */
static bool maybe_inspect(Conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	const NetRules *nr = net_rules_current();
	bool tunnel = c->kind == CONN_KIND_HTTP_CONNECT || c->kind == CONN_KIND_SOCKS5;
	bool tls = false, plain = false;
	size_t consumed;
	InspectJob *j;

	if (!nr)
		return false;
	if (c->kind == CONN_KIND_CAPTURE) {
		tls = c->sniffed == SNIFF_TLS && net_rules_inspects(nr, c->host);
		plain = c->sniffed == SNIFF_HTTP && net_rules_look_at_http(nr);
	} else if (c->kind == CONN_KIND_HTTP_FORWARD)
		plain = net_rules_look_at_http(nr);
	else if (tunnel && net_rules_inspects(nr, c->host)) {
		tls = c->port != 80;
		plain = c->port == 80;
	}
	if (!tls && !plain)
		return false;
	j = calloc(1, sizeof(*j));
	if (!j)
		return false;
	consumed = c->kind == CONN_KIND_HTTP_CONNECT ? c->http.head_len : 0;
	j->tls = tls;
	j->forward = c->kind == CONN_KIND_HTTP_FORWARD;
	j->cfd = c->client.fd;
	j->ufd = c->upstream.fd;
	snprintf(j->host, sizeof(j->host), "%s", c->host);
	j->port = c->port;
	snprintf(j->kind, sizeof(j->kind), "%s", kind_to_string(c->kind));
	snprintf(j->address, sizeof(j->address), "%s", c->address);
	snprintf(j->rule, sizeof(j->rule), "%s", c->rule);
	j->audit = c->proxy->cfg.audit;
	j->program = c->proxy->cfg.program;
	j->idle_ms = c->proxy->idle_ms;
	j->prefix_len = c->head_len - consumed;
	j->prefix = malloc(j->prefix_len + 1);
	if (j->prefix)
		memcpy(j->prefix, c->head + consumed, j->prefix_len);
	if (c->kind == CONN_KIND_HTTP_CONNECT) {
		j->reply = strdup(established);
		j->reply_len = sizeof(established) - 1;
	} else if (c->kind == CONN_KIND_SOCKS5) {
		/* The method reply may still be waiting (sent with this one). */
		uint8_t rep[SOCKS5_REPLY_MAX];
		size_t held = c->down.pend ? c->down.pend_len - c->down.pend_off : 0;
		size_t rn = socks5_format_reply(SOCKS5_REP_SUCCEEDED, NULL, rep);
		j->reply_len = held + rn;
		j->reply = malloc(j->reply_len);
		if (j->reply) {
			if (held)
				memcpy(j->reply, c->down.pend + c->down.pend_off, held);
			memcpy(j->reply + held, rep, rn);
		}
	}
	if (!j->prefix || (j->reply_len && !j->reply) || inspect_start(j) < 0) {
		free(j->prefix);
		free(j->reply);
		free(j);
		failed(c, -EAGAIN, "too many inspected connections");
		return true;
	}
	(void)epoll_ctl(c->proxy->epfd, EPOLL_CTL_DEL, c->client.fd, NULL);
	(void)epoll_ctl(c->proxy->epfd, EPOLL_CTL_DEL, c->upstream.fd, NULL);
	c->client.fd = -1;
	c->upstream.fd = -1;
	c->handed_off = true;
	conn_close(c);
	return true;
}

static void connected(Conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uint8_t rep[SOCKS5_REPLY_MAX];
	/* SOCKS5 and capture: every byte after the handshake (all of them,
	 * for capture) is the client's and goes upstream. */
	size_t consumed = c->kind == CONN_KIND_SOCKS5 || c->kind == CONN_KIND_CAPTURE ? 0 : c->http.head_len;
	size_t leftover = c->head_len - consumed;
	int one = 1, r = 0;

	(void)setsockopt(c->upstream.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(c->client.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (maybe_inspect(c))
		return;
	if (c->kind == CONN_KIND_HTTP_FORWARD) {
		char *h = NULL;
		size_t hn = 0;
		r = http_build_forward_head(c->head, &c->http, &h, &hn);
		if (r >= 0) {
			char *all = realloc(h, hn + leftover + 1);
			if (!all) {
				free(h);
				r = -ENOMEM;
			} else {
				memcpy(all + hn, c->head + consumed, leftover);
				c->up.pend = all;
				c->up.pend_len = hn + leftover;
			}
		}
	} else {
		if (leftover > 0)
			r = conn_set_pending(&c->up, c->head + consumed, leftover);
		if (r >= 0 && c->kind == CONN_KIND_HTTP_CONNECT)
			r = conn_set_pending(&c->down, established, sizeof(established) - 1);
		else if (r >= 0 && c->kind == CONN_KIND_SOCKS5)
			r = conn_set_pending(&c->down, rep, socks5_format_reply(SOCKS5_REP_SUCCEEDED, NULL, rep));
	}
	/* Client bytes passed on: a forwarded request's head counts, a
	 * CONNECT line (answered by the proxy) does not. */
	c->up.bytes += leftover + (c->kind == CONN_KIND_HTTP_FORWARD ? consumed : 0);
	if (r >= 0)
		r = relay_start(c);
	if (r < 0) {
		failed(c, r, "proxy out of resources");
		return;
	}
	free(c->head);
	c->head = NULL;
	c->state = CONN_RELAY;
	c->active_ms = c->proxy->now_ms;
	conn_mark_ready(c);
}

static void connect_next(Conn *c)
{
	Proxy *p = c->proxy;

	close_upstream(c);
	while (c->i_addr < c->n_addrs) {
		struct sockaddr_storage *ss = &c->addrs[c->i_addr++];
		socklen_t len = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		int fd;

		set_port(ss, c->port);
		net_addr_to_string((struct sockaddr *)ss, c->address, sizeof(c->address));
		fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			c->last_connect_error = -errno;
			continue;
		}
		c->upstream = (Endpoint){ .w.kind = WATCH_UPSTREAM, .fd = fd };
		if (connect(fd, (struct sockaddr *)ss, len) < 0 && errno != EINPROGRESS) {
			c->last_connect_error = -errno;
			close_upstream(c);
			continue;
		}
		if (watch_add(p, &c->upstream) < 0) {
			c->last_connect_error = -errno;
			close_upstream(c);
			continue;
		}
		c->state = CONN_CONNECTING;
		c->deadline_ms = p->now_ms + p->connect_ms;
		/* On loopback the handshake is over by the time connect()
		 * returns: go on now rather than after another epoll_wait. */
		check_connected(c);
		return;
	}
	char why[128];
	int e = c->last_connect_error ? c->last_connect_error : -EHOSTUNREACH;
	snprintf(why, sizeof(why), "connect: %s", strerror(-e));
	failed(c, e, why);
}

void conn_start_host_port(Conn *c, uint16_t port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&c->addrs[0];

	free(c->head);
	c->head = NULL;
	snprintf(c->host, sizeof(c->host), "127.0.0.1");
	c->port = port;
	snprintf(c->rule, sizeof(c->rule), "%u", port);
	c->decision.allow = true;
	c->decision.rule = c->rule;
	c->decision.list = "network.host_ports";
	c->verdict = NET_VERDICT_ALLOW;
	memset(&c->addrs[0], 0, sizeof(c->addrs[0]));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->n_addrs = 1;
	c->i_addr = 0;
	connect_next(c);
}

static void check_connected(Conn *c)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	int err = 0;
	socklen_t el = sizeof(err);

	if (getsockopt(c->upstream.fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
		err = errno;
	if (err) {
		c->last_connect_error = -err;
		connect_next(c);
		return;
	}
	/* SO_ERROR is 0 while the handshake is still running as well. */
	if (getpeername(c->upstream.fd, (struct sockaddr *)&peer, &len) < 0)
		return;
	/* A socket just connected has room to send; EAGAIN says otherwise
	 * and the edge-triggered EPOLLOUT follows. */
	c->upstream.can_write = true;
	connected(c);
}

static void linger(Conn *c)
{
	char scratch[4096];
	int r = relay_flush_client(c);

	if (r < 0) {
		conn_close(c);
		return;
	}
	if (r == 0)
		return;
	if (!c->client.shut_wr) {
		(void)shutdown(c->client.fd, SHUT_WR);
		c->client.shut_wr = true;
	}
	while (c->client.can_read) {
		ssize_t n = recv(c->client.fd, scratch, sizeof(scratch), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			c->client.can_read = false;
			return;
		}
		if (n <= 0) {
			conn_close(c);
			return;
		}
	}
}

void conn_run(Conn *c)
{
	bool more = false;
	int r;

	switch (c->state) {
	case CONN_HEAD:
		if (c->socks_greeted && c->down.pend && relay_flush_client(c) < 0) {
			conn_close(c);
			return;
		}
		conn_read_head(c);
		break;
	case CONN_RESOLVING:
	case CONN_CONNECTING:
	case CONN_DEAD:
		break;
	case CONN_LINGER:
		linger(c);
		break;
	case CONN_RELAY:
		r = relay_pump(c, &more);
		if (r != 0) {
			conn_close(c);
			return;
		}
		if (more)
			conn_mark_ready(c);
		break;
	}
}

void conn_handle_event(Conn *c, Endpoint *e, uint32_t events)
{
	if (c->state == CONN_DEAD || e->fd < 0)
		return;
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		e->can_read = true;
	if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
		e->can_write = true;
	if (e == &c->upstream && c->state == CONN_CONNECTING) {
		check_connected(c);
		return;
	}
	if (e == &c->client && (events & (EPOLLHUP | EPOLLERR)) &&
	    (c->state == CONN_RESOLVING || c->state == CONN_CONNECTING)) {
		/* The client is gone; no point finishing the connect. */
		conn_close(c);
		return;
	}
	conn_run(c);
}

void conn_on_timeout(Conn *c)
{
	switch (c->state) {
	case CONN_HEAD:
		snprintf(c->rule, sizeof(c->rule), "request head timeout");
		if (is_http(c))
			conn_refuse(c, NET_VERDICT_ERROR, 408, 0, "ward: request head not complete in time");
		else
			conn_close(c);
		break;
	case CONN_RESOLVING:
		failed(c, -ETIMEDOUT, "resolve: timed out");
		break;
	case CONN_CONNECTING:
		c->last_connect_error = -ETIMEDOUT;
		connect_next(c);
		break;
	case CONN_RELAY:
	case CONN_LINGER:
		conn_close(c);
		break;
	case CONN_DEAD:
		break;
	}
}
