/* The capture's DNS stub, served by the proxy process on sockets made
 * inside the sandbox (127.0.0.53:53, UDP and TCP). It answers from the
 * policy alone: an allowed name gets its synthetic address (synth-map.h),
 * every other name NXDOMAIN. It never forwards a query: nothing a command
 * puts into a name leaves the machine through DNS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/macro.h"
#include "net/dns-msg.h"
#include "net/proxy-internal.h"
#include "net/synth-map.h"

#define DNS_TCP_MAX 64         /* concurrent TCP clients */
#define DNS_TCP_TIMEOUT_MS 10000

/* A refused name: one `net` event (kind "dns") and a line in the run's
 * summary, unless the same name was refused a moment ago. The query
 * itself went nowhere. */
static void refused(Proxy *p, const char *name)
{
	char why[200];
	NetDecision d;
	cJSON *o;

	net_match(&p->matcher, name, 443, &d);
	if (d.rule && strcmp(d.list, "network.deny") == 0)
		snprintf(why, sizeof(why), "%s in network.deny; the DNS stub answered NXDOMAIN", d.rule);
	else
		snprintf(why, sizeof(why), "not in %s; the DNS stub answered NXDOMAIN", p->matcher.allow_name);
	/* A live session's: every refusal, for the command that made it
	 * (the audit's de-duplication below is the session's). */
	if (p->cfg.report_every)
		proxy_report(p, name, 53, why);
	for (size_t i = 0; i < ELEMENTSOF(p->dns_refused); i++)
		if (strcmp(p->dns_refused[i], name) == 0)
			return;
	snprintf(p->dns_refused[p->dns_refused_next], NET_HOST_MAX, "%s", name);
	p->dns_refused_next = (p->dns_refused_next + 1) % ELEMENTSOF(p->dns_refused);
	if (!p->cfg.report_every)
		proxy_report(p, name, 53, why);
	if (!p->cfg.audit || !(o = cJSON_CreateObject()))
		return;
	cJSON_AddStringToObject(o, "kind", "dns");
	cJSON_AddStringToObject(o, "host", name);
	cJSON_AddNumberToObject(o, "port", 53);
	cJSON_AddStringToObject(o, "address", "");
	cJSON_AddStringToObject(o, "verdict", "deny");
	cJSON_AddStringToObject(o, "rule", why);
	cJSON_AddNumberToObject(o, "bytes_up", 0);
	cJSON_AddNumberToObject(o, "bytes_down", 0);
	cJSON_AddNumberToObject(o, "duration_ms", 0);
	if (p->cfg.program)
		cJSON_AddStringToObject(o, "program", p->cfg.program);
	(void)audit_write(p->cfg.audit, "net", o);
}

int dns_stub_answer(Proxy *p, const uint8_t *q, size_t qlen, uint8_t *out, size_t outsz)
{
	char host[NET_HOST_MAX];
	uint8_t addr[16];
	DnsQuery dq;
	uint32_t idx;
	int r = dns_parse_query(q, qlen, &dq);

	if (r == -EPROTO || (r < 0 && qlen < DNS_HEADER_LEN))
		return -1;
	if (r == -EOPNOTSUPP)
		return dns_build_error(dq.id, DNS_RCODE_NOTIMP, out, outsz);
	if (r < 0)
		return dns_build_error(dq.id, DNS_RCODE_FORMERR, out, outsz);
	if (dq.qclass != DNS_CLASS_IN)
		return dns_build_reply(&dq, DNS_RCODE_REFUSED, NULL, 0, 0, out, outsz);
	/* A name only: an address spelled as a name ("1.2.3.4") is no name
	 * the policy can allow. */
	if (!dq.name_ok || net_normalize_host(dq.name, strlen(dq.name), host) != 0 ||
	    !net_name_allowed(&p->matcher, host)) {
		refused(p, dq.name_ok ? dq.name : "(a name with other characters)");
		return dns_build_reply(&dq, DNS_RCODE_NXDOMAIN, NULL, 0, 0, out, outsz);
	}
	r = synth_map_get(p->synth, host, &idx);
	if (r < 0)
		return dns_build_reply(&dq, DNS_RCODE_SERVFAIL, NULL, 0, 0, out, outsz);
	if (dq.qtype == DNS_TYPE_A) {
		synth_addr_v4(idx, addr);
		return dns_build_reply(&dq, DNS_RCODE_NOERROR, addr, 4, SYNTH_TTL, out, outsz);
	}
	if (dq.qtype == DNS_TYPE_AAAA && p->capture_v6) {
		synth_addr_v6(idx, addr);
		return dns_build_reply(&dq, DNS_RCODE_NOERROR, addr, 16, SYNTH_TTL, out, outsz);
	}
	/* Any other type of an allowed name (MX, TXT, HTTPS...): the name
	 * exists, with no such record. */
	return dns_build_reply(&dq, DNS_RCODE_NOERROR, NULL, 0, 0, out, outsz);
}

void dns_stub_udp(Proxy *p)
{
	/* Bounded per wakeup; the socket is level-triggered. */
	for (int i = 0; i < 64; i++) {
		uint8_t q[DNS_QUERY_MAX], a[DNS_REPLY_MAX];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(p->dns_udp_fd, q, sizeof(q), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &fl);
		int an;

		if (n < 0)
			return;
		if ((size_t)n > sizeof(q))
			continue; /* truncated: not a query the stub reads */
		an = dns_stub_answer(p, q, (size_t)n, a, sizeof(a));
		if (an > 0)
			(void)sendto(p->dns_udp_fd, a, (size_t)an, MSG_DONTWAIT | MSG_NOSIGNAL,
				     (struct sockaddr *)&from, fl);
	}
}

static void tcp_close(Proxy *p, DnsTcp *t)
{
	for (DnsTcp **pp = &p->dns_conns; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	(void)close(t->fd);
	p->n_dns_conns--;
	free(t);
}

void dns_stub_accept(Proxy *p)
{
	for (int i = 0; i < 16; i++) {
		int fd = accept4(p->dns_tcp_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
		DnsTcp *t;

		if (fd < 0)
			return;
		if (p->n_dns_conns >= DNS_TCP_MAX || !(t = calloc(1, sizeof(*t)))) {
			(void)close(fd);
			continue;
		}
		t->w.kind = WATCH_DNS_TCP;
		t->fd = fd;
		t->deadline_ms = p->now_ms + DNS_TCP_TIMEOUT_MS;
		ev.data.ptr = &t->w;
		if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			(void)close(fd);
			free(t);
			continue;
		}
		t->next = p->dns_conns;
		p->dns_conns = t;
		p->n_dns_conns++;
	}
}

/* TCP (RFC 7766): two-byte length, message; several may be pipelined. The
 * answers are small and the socket's buffer empty: one send each, or the
 * client is dropped. DnsTcp is freed at once: the loop handles one event
 * per DnsTcp per batch, and nothing else points at it. */
void dns_stub_tcp_event(Proxy *p, DnsTcp *t, uint32_t events)
{
	for (;;) {
		ssize_t n = recv(t->fd, t->buf + t->len, sizeof(t->buf) - t->len, MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			tcp_close(p, t);
			return;
		}
		t->len += (size_t)n;
		while (t->len >= 2) {
			size_t ml = (size_t)t->buf[0] << 8 | t->buf[1];
			uint8_t a[2 + DNS_REPLY_MAX];
			int an;

			if (ml == 0 || ml > sizeof(t->buf) - 2) {
				tcp_close(p, t);
				return;
			}
			if (t->len < 2 + ml)
				break;
			an = dns_stub_answer(p, t->buf + 2, ml, a + 2, sizeof(a) - 2);
			if (an > 0) {
				a[0] = (uint8_t)(an >> 8);
				a[1] = (uint8_t)an;
				if (send(t->fd, a, (size_t)an + 2, MSG_DONTWAIT | MSG_NOSIGNAL) != an + 2) {
					tcp_close(p, t);
					return;
				}
			}
			memmove(t->buf, t->buf + 2 + ml, t->len - 2 - ml);
			t->len -= 2 + ml;
			t->deadline_ms = p->now_ms + DNS_TCP_TIMEOUT_MS;
		}
	}
	(void)events;
}

void dns_stub_sweep(Proxy *p)
{
	for (DnsTcp *t = p->dns_conns, *next; t; t = next) {
		next = t->next;
		if (p->now_ms >= t->deadline_ms)
			tcp_close(p, t);
	}
}

void dns_stub_close_all(Proxy *p)
{
	while (p->dns_conns)
		tcp_close(p, p->dns_conns);
}
