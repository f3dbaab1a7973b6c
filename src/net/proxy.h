/* The egress proxy for network.mode "proxy": an HTTP proxy (CONNECT and
 * absolute-URI requests) and a SOCKS5 proxy, run by the supervisor outside
 * the sandbox in a process of its own (a single-threaded epoll loop). Its
 * listening sockets were created inside the sandbox's network namespace and
 * handed out, so inside they are 127.0.0.1:WARD_PROXY_HTTP_PORT and
 * 127.0.0.1:WARD_PROXY_SOCKS_PORT and nothing else reaches out. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit/audit.h"
#include "policy/policy.h"

/* The ports and the command's environment: net/proxy-contract.h. */
#include "net/proxy-contract.h"

typedef struct ProxyConfig {
	const WardPolicy *policy;   /* allow/deny/commands/hosts */
	const char *program;        /* argv[0]'s base name, for network.commands */
	AuditLog *audit;            /* net events; may be NULL */
	/* network.host_ports: one listening fd (inside the sandbox) per port;
	 * each connection is relayed to the host's 127.0.0.1:PORT. */
	const int *host_fds;
	const uint16_t *host_ports;
	size_t n_host;
	/* Transparent capture (network.capture): listeners bound to
	 * [::]:PORT (or 0.0.0.0:PORT) inside a namespace whose local route
	 * covers every address, so a connection to any address on PORT lands
	 * there and getsockname() is its destination; and the DNS stub's UDP
	 * socket and TCP listener (127.0.0.53:53 inside). Used only when
	 * capture is set. docs/network.md "Transparent capture". */
	bool capture;
	const int *capture_fds;
	size_t n_capture;
	int dns_udp_fd, dns_tcp_fd;
	/* Refusals by policy go to report_fd as ProxyRefusal records
	 * (net/proxy-report.h) when has_report is set. */
	bool has_report;
	int report_fd;
	/* A live session's proxy (docs/sessions.md): every refusal is
	 * reported, when it is decided and before the client is answered (no
	 * per-run de-duplication: the supervisor attributes each to the
	 * commands running then, and de-duplicates per command). */
	bool report_every;
	/* Tuning; 0 means the default. For tests and benches. */
	unsigned max_connections;    /* default policy->max_connections, else 1024 */
	unsigned header_timeout_ms;  /* whole request head (or SOCKS handshake): 10 s */
	unsigned idle_timeout_ms;    /* established tunnel without traffic: 300 s */
	unsigned connect_timeout_ms; /* per upstream address: 10 s */
	/* Relay bulk flows by copying through user space instead of
	 * splice(2) (bench/proxy.sh compares the two). */
	bool relay_copy;
} ProxyConfig;

#define PROXY_DEFAULT_MAX_CONNECTIONS 1024
#define PROXY_HOST_FDS_MAX 32 /* POLICY_HOST_PORTS_MAX */
#define PROXY_CAPTURE_FDS_MAX 16 /* POLICY_CAPTURE_PORTS_MAX */
/* The DNS stub's address inside the sandbox (/etc/resolv.conf there). */
#define WARD_DNS_STUB_ADDR "127.0.0.53"

/* Fork the proxy process serving @http_fd and @socks_fd (listening,
 * non-blocking not required; both -EBADF when only cfg->host_fds are
 * served, with network.mode "none"). The child dies with the caller
 * (PR_SET_PDEATHSIG) and on SIGTERM closes everything and exits. The caller
 * keeps its copies of the fds and should close them. */
int proxy_spawn(const ProxyConfig *cfg, int http_fd, int socks_fd, pid_t *ret_pid);

/* Run the proxy loop in the calling process until SIGTERM (blocked and read
 * through a signalfd while it runs; the mask is restored on return). The
 * caller ignores SIGPIPE (splice(2) has no MSG_NOSIGNAL). Does
 * not take ownership of the listening fds; sets them non-blocking. Returns
 * 0 after SIGTERM, -errno if the loop could not be set up. proxy_spawn's
 * child runs this; tests and benches call it directly. */
int proxy_serve(const ProxyConfig *cfg, int http_fd, int socks_fd);
