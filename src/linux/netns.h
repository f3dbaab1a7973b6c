/* The sandbox's network namespace: only loopback, up. For network.mode
 * "proxy" the two proxy listeners, and for network.host_ports one relay
 * listener per port, are created here, inside, and handed to the
 * supervisor (outside) over a unix socket; with transparent capture also
 * the local routes for every address, the capture listeners and the DNS
 * stub's sockets. Child side, no allocation. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int netns_loopback_up(void);

/* The proxy's two ports plus network.host_ports (POLICY_HOST_PORTS_MAX). */
#define NETNS_LISTENERS_MAX 40

/* Bind 127.0.0.1:PORT for each of @ports (the proxy's, then the host
 * ports' relays), listen, send the fds in that order over @sock
 * (SCM_RIGHTS), close them here. */
int netns_send_listeners(int sock, const uint16_t *ports, size_t n);
/* Supervisor side: receive exactly @n fds into @ret_fds. */
int netns_recv_listeners(int sock, int *ret_fds, size_t n);

/* Transparent capture (network.capture, docs/network.md). */
#define NETNS_CAPTURE_MAX 16 /* POLICY_CAPTURE_PORTS_MAX */
#define NETNS_DNS_STUB_ADDR "127.0.0.53"

/* Route every IPv4 and IPv6 address to this namespace itself (rtnetlink:
 * "local 0.0.0.0/0 dev lo table local", and ::/0). *ret_v6 says whether
 * the IPv6 route went in (a namespace without IPv6 is not an error). */
int netns_route_all_local(bool *ret_v6);
/* The local routes, then a listener on the wildcard address for each of
 * @ports ([::] dual-stack, or 0.0.0.0 without IPv6), then the DNS stub's
 * UDP socket and TCP listener on NETNS_DNS_STUB_ADDR:53: n + 2 fds sent in
 * that order over @sock (one message after the listeners'), closed here. */
int netns_send_capture(int sock, const uint16_t *ports, size_t n);
