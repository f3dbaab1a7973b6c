/* Passing file descriptors over a unix socket (SCM_RIGHTS): init hands the
 * proxy listeners and the pty master to the supervisor this way. */
#pragma once

#include <stddef.h>

#define FD_PASS_MAX 64

/* Send @n (1..FD_PASS_MAX) descriptors with one byte @tag. The caller
 * keeps, and closes, its own copies. */
int fd_pass_send(int sock, char tag, const int *fds, size_t n);

/* Receive exactly @n descriptors (close-on-exec) into @ret_fds. Anything
 * else that arrives is closed: -EBADMSG. -EPIPE when the peer is gone.
 * @flags go to recvmsg (MSG_DONTWAIT). */
int fd_pass_recv(int sock, int *ret_fds, size_t n, int flags);
