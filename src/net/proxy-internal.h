/* Shared between the proxy's loop (proxy.c), its per-connection state
 * machine (proxy-conn.c) and the relay (proxy-relay.c). Not an interface:
 * nothing outside src/net/ includes it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net/http-parse.h"
#include "net/net-match.h"
#include "net/proxy.h"
#include "net/proxy-report.h"
#include "net/resolve.h"
#include "net/socks5.h"

/* epoll data.ptr points at a struct starting with one of these. */
enum {
	WATCH_LISTEN_HTTP = 1,
	WATCH_LISTEN_SOCKS = 2,
	WATCH_SIGNAL = 3,
	WATCH_CLIENT = 4,
	WATCH_UPSTREAM = 5,
	WATCH_LISTEN_HOST = 6,
	/* PROXY_WATCH_RESOLVER (7) is resolve.c's */
	WATCH_LISTEN_CAPTURE = 8,
	WATCH_DNS_UDP = 9,
	WATCH_DNS_TCP_LISTEN = 10,
	WATCH_DNS_TCP = 11,
};

typedef struct Watch {
	int kind;
} Watch;

typedef enum ConnState {
	CONN_HEAD,       /* reading the request head / SOCKS handshake */
	CONN_RESOLVING,
	CONN_CONNECTING,
	CONN_RELAY,
	CONN_LINGER,     /* answer written; draining until the client closes */
	CONN_DEAD,       /* closed, freed after the current batch of events */
} ConnState;

typedef enum ConnKind {
	CONN_KIND_HTTP,         /* before the head is parsed */
	CONN_KIND_HTTP_CONNECT,
	CONN_KIND_HTTP_FORWARD,
	CONN_KIND_SOCKS5,
	CONN_KIND_HOST_PORT,    /* network.host_ports: a byte relay to the host's loopback */
	CONN_KIND_CAPTURE,      /* a transparently captured connection (proxy-capture.c) */
} ConnKind;

/* One socket of a connection. The loop registers it edge-triggered and keeps
 * what the kernel said in can_read/can_write until a call hits EAGAIN. */
typedef struct Endpoint {
	Watch w;
	int fd;
	bool can_read, can_write;
	bool eof;     /* read returned 0 */
	bool shut_wr; /* shutdown(SHUT_WR) done */
} Endpoint;

/* One direction of the relay: bytes to send first (the proxy's own reply, a
 * rewritten request head), then a buffer that grows with the flow. */
typedef struct Flow {
	char *pend;
	size_t pend_len, pend_off;
	char *buf;
	size_t buf_cap, buf_len, buf_off;
	uint64_t bytes;
	/* A bulk flow moves by splice(2) through this pipe (proxy-relay.c):
	 * -1 until the flow turns bulk; pipe_len bytes are in it. */
	int pipe_r, pipe_w;
	size_t pipe_len;
} Flow;

typedef struct Proxy Proxy;

/* A network.host_ports listener. */
typedef struct HostListen {
	Watch w;
	int fd;
	uint16_t port;
} HostListen;


/* A DNS-over-TCP client of the stub (dns-stub.c). */
typedef struct DnsTcp {
	Watch w;
	int fd;
	struct DnsTcp *next;
	int64_t deadline_ms;
	size_t len;
	uint8_t buf[2 + 4096]; /* DNS_QUERY_MAX */
} DnsTcp;

typedef struct Conn Conn;

/* What a connection does with its first client bytes before anything
 * reaches upstream, while in CONN_HEAD (set at accept; NULL: the HTTP or
 * SOCKS5 parser). Called with c->head / c->head_len after each read:
 * returns 1 when the connection may go on (c->host, c->port, c->literal
 * set: conn_decide() follows, and the bytes read are sent upstream first),
 * 0 for more bytes, -1 when it refused (and answered) already. The capture
 * path uses it for its SNI / Host check; TLS inspection can hook here. */
typedef int (*ConnInspect)(Conn *c);

struct Conn {
	Proxy *proxy;
	struct Conn *prev, *next; /* all open connections */
	struct Conn *ready_next;  /* more to do without a new event */
	bool in_ready;
	struct Conn *dead_next;
	bool overflow; /* over the connection limit: answered and lingering */

	Endpoint client, upstream;
	Flow up, down; /* up: client -> upstream, down: upstream -> client */
	ConnState state;
	ConnKind kind;
	bool socks_greeted;

	char *head; /* HTTP_HEAD_MAX bytes while in CONN_HEAD */
	size_t head_len;
	HttpRequest http;

	char host[NET_HOST_MAX];
	uint16_t port;
	bool literal;
	NetDecision decision;
	NetVerdict verdict;
	char rule[320];
	char refusal[240]; /* the reason a refusal by policy gave */
	char address[64];

	struct sockaddr_storage addrs[RESOLVE_MAX_ADDRS];
	size_t n_addrs, i_addr;
	int last_connect_error;
	ResolveQuery *query;

	int64_t start_ms, deadline_ms, active_ms;

	ConnInspect inspect;
	/* Capture (proxy-capture.c): what the first bytes were, which also
	 * says how a refusal answers (HTTP page, TLS alert, a close). */
	int sniffed;      /* SniffKind, -1 before */
	char dest[64];    /* the captured destination address */
	/* Handed to the inspector (inspect.c), which writes its audit. */
	bool handed_off;
};

struct Proxy {
	ProxyConfig cfg;
	NetMatcher matcher;
	unsigned max_conns, header_ms, idle_ms, connect_ms;
	int epfd;
	Watch listen_http, listen_socks, sig;
	int http_fd, socks_fd, sigfd;
	HostListen *hosts;
	size_t n_hosts;
	/* Capture (proxy-capture.c, dns-stub.c). */
	HostListen *captures;
	size_t n_captures;
	bool capture_v6;  /* the capture listeners take IPv6: the stub answers AAAA */
	struct SynthMap *synth;
	Watch dns_udp, dns_tcp;
	int dns_udp_fd, dns_tcp_fd;
	DnsTcp *dns_conns;
	size_t n_dns_conns;
	/* Names the stub refused lately (dns-stub.c): a retry or the AAAA
	 * twin of an A query is not audited again. */
	char dns_refused[16][NET_HOST_MAX];
	size_t dns_refused_next;
	/* host:port already reported as refused (proxy-report.c). */
	char reported[PROXY_REPORT_DISTINCT][NET_HOST_MAX + 8];
	size_t n_reported;
	bool report_overflowed;
	Resolver *resolver;
	Conn *conns;
	size_t n_active, n_total;
	Conn *ready, *dead;
	size_t relay_bytes; /* relay buffer memory in use, bounded */
	bool accept_paused;
	int64_t accept_resume_ms;
	int64_t now_ms;
};

int64_t proxy_now_ms(void);

/* proxy-conn.c */
Conn *conn_new(Proxy *p, int fd, ConnKind kind);
void conn_handle_event(Conn *c, Endpoint *e, uint32_t events);
void conn_on_timeout(Conn *c);
void conn_close(Conn *c);
/* Answer @fd over the limit without reading its request. */
void conn_overflow(Conn *c);
void conn_mark_ready(Conn *c);
void conn_run(Conn *c);
/* Append @n bytes to @f's bytes-to-send-first. */
int conn_set_pending(Flow *f, const void *data, size_t n);
/* Answer (HTTP @http_status page with the formatted one-line body, or the
 * SOCKS5 reply @socks_rep, 0xff for none) and linger until the client goes. */
void conn_refuse(Conn *c, NetVerdict verdict, int http_status, uint8_t socks_rep, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Refuse by policy: 403 / SOCKS5 0x02, audit rule @rule or else @why. */
void conn_blocked(Conn *c, const char *rule, const char *why);
/* Match c->host:c->port, then resolve and connect, or refuse. */
void conn_decide(Conn *c);

/* Relay a network.host_ports connection to the host's 127.0.0.1:@port. */
void conn_start_host_port(Conn *c, uint16_t port);

/* proxy-report.c: tell the supervisor about a refusal by policy (once per
 * distinct host:port). */
void proxy_report_refusal(Proxy *p, const Conn *c);
void proxy_report(Proxy *p, const char *host, uint16_t port, const char *why);

/* proxy-capture.c: a connection accepted on a capture listener. */
void capture_start(Conn *c);

/* dns-stub.c */
void dns_stub_udp(Proxy *p);
void dns_stub_accept(Proxy *p);
void dns_stub_tcp_event(Proxy *p, DnsTcp *t, uint32_t events);
void dns_stub_sweep(Proxy *p);
void dns_stub_close_all(Proxy *p);
/* The answer to query @q (@qlen bytes) into @out (DNS_REPLY_MAX): its
 * length, or -1 when the query gets no answer at all. */
int dns_stub_answer(Proxy *p, const uint8_t *q, size_t qlen, uint8_t *out, size_t outsz);

/* proxy-head.c */
void conn_read_head(Conn *c);

/* proxy-relay.c */
int relay_start(Conn *c);
/* Move bytes both ways; returns 1 when both directions are finished, 0 to
 * wait for events, -errno on a socket error. Sets *more when a budget ran
 * out while bytes could still move. */
int relay_pump(Conn *c, bool *more);
/* Write c->down.pend to the client; 1 when all written, 0 to wait, -errno. */
int relay_flush_client(Conn *c);
void flow_done(Conn *c, Flow *f);
