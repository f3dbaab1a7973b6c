/* Asynchronous name resolution for the proxy: c-ares (ares_getaddrinfo)
 * driven by the proxy's epoll loop, so that a slow lookup never stalls other
 * connections. Not a cache, and not a policy check: callers classify the
 * addresses they get (net-match.h). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The epoll tag a resolver socket carries: data.ptr points at a struct whose
 * first member is this int, equal to PROXY_WATCH_RESOLVER. */
#define PROXY_WATCH_RESOLVER 7

#define RESOLVE_MAX_ADDRS 8

typedef struct Resolver Resolver;
typedef struct ResolveQuery ResolveQuery;

/* @r is 0 with 1..RESOLVE_MAX_ADDRS addresses (port not set), or negative:
 * -ENOENT no such name / no addresses, -ETIMEDOUT, -EIO other failures.
 * @err is a short text for the failure (static), NULL on success. */
typedef void (*ResolveCallback)(void *userdata, int r, const struct sockaddr_storage *addrs,
				size_t n, const char *err);

/* A resolver that registers its sockets with @epfd. Reads the system's
 * resolv.conf and hosts file (the proxy runs outside the sandbox). */
int resolver_new(int epfd, Resolver **ret);
/* Cancels every pending query without calling its callback. */
Resolver *resolver_free(Resolver *r);

/* Look up @name (A and AAAA). *ret_q is set before @cb can run; @cb runs
 * exactly once unless the query is cancelled, possibly before this call
 * returns, and the handle is invalid once it has run. */
int resolver_query(Resolver *r, const char *name, ResolveCallback cb, void *userdata,
		   ResolveQuery **ret_q);
/* Forget a pending query: its callback will not run. */
void resolver_cancel(ResolveQuery *q);

/* Handle epoll @events on a resolver watch (data.ptr of the event). */
void resolver_handle_event(Resolver *r, void *watch, uint32_t events);
/* Milliseconds until c-ares wants resolver_process_timeouts(), -1 if never. */
int resolver_timeout_ms(Resolver *r);
void resolver_process_timeouts(Resolver *r);
/* Free watches c-ares has closed; call when no epoll event can still point
 * at them (after handling a batch of events). */
void resolver_collect(Resolver *r);
