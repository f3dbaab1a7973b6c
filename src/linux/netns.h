/* The sandbox's network namespace: only loopback, up. For network.mode
 * "proxy", the two proxy listeners are created here, inside, and handed to
 * the supervisor (outside) over a unix socket. Child side, no allocation. */
#pragma once

int netns_loopback_up(void);
/* Bind 127.0.0.1:@http_port and :@socks_port, listen, send both fds over
 * @sock (SCM_RIGHTS), close them here. */
int netns_send_proxy_listeners(int sock, int http_port, int socks_port);
/* Supervisor side: receive the two fds. */
int netns_recv_proxy_listeners(int sock, int *ret_http, int *ret_socks);
