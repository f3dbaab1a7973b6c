/* ward.exe's egress proxy for network.mode "proxy" (docs/windows.md "The
 * proxy"): HTTP (CONNECT and absolute-URI requests) and SOCKS5 on one
 * loopback port (the first byte tells them apart: 0x05 is SOCKS5), with
 * Linux's parsers (net/http-parse.c, net/socks5.c), matcher
 * (net/net-match.c) and `net` audit event (net/net-event.c). One thread
 * per connection, at most max_connections of them; every buffer is fixed
 * (the request head HTTP_HEAD_MAX, one relay buffer per direction); a head
 * not complete within header_timeout_ms, an upstream connect not done
 * within connect_timeout_ms and a tunnel idle for idle_timeout_ms end the
 * connection. Windows-only (Winsock). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit/audit.h"
#include "net/proxy-report.h"
#include "policy/policy.h"

typedef struct WinProxyConfig {
	const WardPolicy *policy;    /* allow / deny / commands / hosts; outlives the proxy */
	const char *program;         /* argv[0]'s base name, for network.commands; may be NULL */
	AuditLog *audit;             /* `net` events; may be NULL */
	unsigned max_connections;    /* 0: the policy's network.max_connections, else 256 */
	unsigned header_timeout_ms;  /* 0: 10 s */
	unsigned idle_timeout_ms;    /* 0: 300 s */
	unsigned connect_timeout_ms; /* 0: 10 s, per upstream address */
	/* 0: an ephemeral port. Else exactly this port (the sandbox-user
	 * tier's online user, whose persistent walls permit only it), held
	 * with SO_EXCLUSIVEADDRUSE that must take, on 127.0.0.1 and on ::1
	 * where the host has IPv6 loopback: another holder on either refuses
	 * (-EADDRINUSE), since the sandbox could reach it. */
	uint16_t port;
} WinProxyConfig;

#define WIN_PROXY_DEFAULT_MAX_CONNECTIONS 256

typedef struct WinProxy WinProxy;

/* Listen on 127.0.0.1 on an ephemeral port (or cfg->port), and on ::1 on
 * the same port where the host has IPv6 loopback. Nothing is served until
 * win_proxy_start(). -errno with @why set when it cannot listen. */
int win_proxy_listen(const WinProxyConfig *cfg, WinProxy **ret, char *why, size_t n_why);
uint16_t win_proxy_port(const WinProxy *p);
bool win_proxy_has_v6(const WinProxy *p);
/* The program whose network.commands allow list applies (the command
 * class), or NULL for network.allow; before win_proxy_start(). */
void win_proxy_set_program(WinProxy *p, const char *program);
/* The audit log for `net` events (opened after the proxy listens). */
void win_proxy_set_audit(WinProxy *p, AuditLog *audit);
/* Start accepting (a thread). */
int win_proxy_start(WinProxy *p);
/* Stop: close the listeners, shut every open connection down, wait for
 * their threads (each writes its audit event). Idempotent. */
void win_proxy_stop(WinProxy *p);
/* The refusals by policy so far: distinct host:port, at most @max, *more
 * when there were others. */
size_t win_proxy_refusals(WinProxy *p, ProxyRefusal *ret, size_t max, bool *more);
typedef struct {
	unsigned long accepted;   /* connections served (each by its thread) */
	unsigned long overflowed; /* answered 503 over the limit */
	unsigned open;            /* served and not yet closed */
	unsigned peak;            /* the most served at once: never over the limit */
} WinProxyCounts;

void win_proxy_counts(WinProxy *p, WinProxyCounts *ret);
/* Stops it first. NULL-safe; returns NULL. */
WinProxy *win_proxy_free(WinProxy *p);
