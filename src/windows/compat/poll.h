/* <poll.h> for the Windows build (mingw-w64 has none): src/common/
 * fd-write.c waits with poll() on a non-blocking descriptor that is full.
 * A C runtime descriptor on Windows never reports EAGAIN, so that branch
 * is not taken there; WSAPoll is Winsock's poll, with the same struct
 * pollfd and POLLOUT. */
#pragma once

#include <winsock2.h>

#define poll(fds, n, timeout) WSAPoll((fds), (n), (timeout))
