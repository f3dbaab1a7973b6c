/* Writing a whole buffer to a descriptor. */
#pragma once

#include <stddef.h>

/* Write all @n bytes of @buf to @fd, retrying on EINTR and, for a
 * non-blocking @fd, waiting (poll) while it is full. 0, or -errno
 * (-EIO when the descriptor takes nothing). */
int fd_write_all(int fd, const void *buf, size_t n);
