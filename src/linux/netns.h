/* The sandbox's network namespace: only loopback, up. For network.mode
 * "proxy" the two proxy listeners, and for network.host_ports one relay
 * listener per port, are created here, inside, and handed to the
 * supervisor (outside) over a unix socket. Child side, no allocation. */
#pragma once

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
