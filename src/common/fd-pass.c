/* SCM_RIGHTS in one place (fd-pass.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/fd-pass.h"
#include "common/macro.h"

typedef union {
	char buf[CMSG_SPACE(FD_PASS_MAX * sizeof(int))];
	struct cmsghdr align;
} FdPassControl;

int fd_pass_send(int sock, char tag, const int *fds, size_t n)
{
	FdPassControl u = {};
	struct iovec iov = { .iov_base = &tag, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = CMSG_SPACE(n * sizeof(int)) };
	struct cmsghdr *c;

	if (n == 0 || n > FD_PASS_MAX)
		return -EINVAL;
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	if (RETRY_EINTR(sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0)
		return -errno;
	return 0;
}

int fd_pass_recv(int sock, int *ret_fds, size_t n, int flags)
{
	FdPassControl u = {};
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t got;

	if (n == 0 || n > FD_PASS_MAX)
		return -EINVAL;
	got = RETRY_EINTR(recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | flags));
	if (got < 0)
		return -errno;
	if (got == 0)
		return -EPIPE;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -EBADMSG;
	if (c->cmsg_len != CMSG_LEN(n * sizeof(int))) {
		/* Not what we asked for: close whatever came. */
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int tmp[FD_PASS_MAX];

		if (k > FD_PASS_MAX)
			k = FD_PASS_MAX;
		memcpy(tmp, CMSG_DATA(c), k * sizeof(int));
		for (size_t i = 0; i < k; i++)
			close(tmp[i]);
		return -EBADMSG;
	}
	memcpy(ret_fds, CMSG_DATA(c), n * sizeof(int));
	return 0;
}
