/* The egress proxy for network.mode "proxy": an HTTP proxy (CONNECT and
 * absolute-URI requests) and a SOCKS5 proxy, run by the supervisor outside
 * the sandbox in a process of its own (a single-threaded epoll loop). Its
 * listening sockets were created inside the sandbox's network namespace and
 * handed out, so inside they are 127.0.0.1:WARD_PROXY_HTTP_PORT and
 * 127.0.0.1:WARD_PROXY_SOCKS_PORT and nothing else reaches out. */
#pragma once

#include <sys/types.h>

#include "audit/audit.h"
#include "policy/policy.h"

/* Fixed ports inside the sandbox: its network namespace is brand new, so
 * they are always free, and the environment can be computed before clone. */
#define WARD_PROXY_HTTP_PORT 3128
#define WARD_PROXY_SOCKS_PORT 1080

typedef struct ProxyConfig {
	const WardPolicy *policy;   /* allow/deny/commands/hosts */
	const char *program;        /* argv[0]'s base name, for network.commands */
	AuditLog *audit;            /* net events; may be NULL */
} ProxyConfig;

/* Fork the proxy process serving @http_fd and @socks_fd (listening,
 * non-blocking not required). The child dies with the caller
 * (PR_SET_PDEATHSIG) and on SIGTERM closes everything and exits. The caller
 * keeps its copies of the fds and should close them. */
int proxy_spawn(const ProxyConfig *cfg, int http_fd, int socks_fd, pid_t *ret_pid);
