/* The control socket's client (session-client.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "session/session-client.h"
#include "session/session-paths.h"

int session_client_connect(const char *state_dir, const char *id, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	r = session_live_path(state_dir, id, "ctl", sa.sun_path, sizeof(sa.sun_path));
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int session_client_send(int fd, const SessionRequest *rq, const int *fds, size_t nfd)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	union {
		char b[CMSG_SPACE(sizeof(int) * 3)];
		struct cmsghdr align;
	} u = {};
	int r = session_request_encode(rq, &buf, &len);

	if (r < 0)
		return r;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfd > 3)
		return -EINVAL;
	if (nfd > 0) {
		struct cmsghdr *c;
		mh.msg_control = u.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfd);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfd);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfd);
	}
	return RETRY_EINTR(sendmsg(fd, &mh, MSG_NOSIGNAL)) < 0 ? -errno : 0;
}

int session_client_reply_fd(int fd, SessionReplyHead *ret, char **ret_text, int *ret_fd)
{
	size_t cap = sizeof(*ret) + SESSION_REPLY_MAX;
	_cleanup_free_ char *buf = malloc(cap + 1);
	union {
		char b[CMSG_SPACE(sizeof(int) * 2)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			     .msg_controllen = sizeof(u.b) };
	_cleanup_close_ int got = -EBADF;
	ssize_t n;
	char *text;

	*ret_fd = -EBADF;
	if (!buf)
		return -ENOMEM;
	n = RETRY_EINTR(recvmsg(fd, &mh, MSG_CMSG_CLOEXEC));
	if (n < 0)
		return errno == ECONNRESET ? -EPIPE : -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int fds[2];
		memcpy(fds, CMSG_DATA(c), sizeof(int) * (k > 2 ? 2 : k));
		for (size_t i = 0; i < k && i < 2; i++) {
			if (got < 0)
				got = fds[i];
			else
				close(fds[i]);
		}
	}
	if (n == 0)
		return -EPIPE;
	if ((size_t)n < sizeof(*ret))
		return -EBADMSG;
	memcpy(ret, buf, sizeof(*ret));
	if (ret->magic != SESSION_REPLY_MAGIC || ret->len != (size_t)n - sizeof(*ret))
		return -EBADMSG;
	text = strndup(buf + sizeof(*ret), ret->len);
	if (!text)
		return -ENOMEM;
	*ret_text = text;
	if (ret->kind == SESSION_REP_PTY)
		*ret_fd = TAKE_FD(got);
	return 0;
}

int session_client_reply(int fd, SessionReplyHead *ret, char **ret_text)
{
	_cleanup_close_ int passed = -EBADF; /* a pty master no caller of this wants */

	return session_client_reply_fd(fd, ret, ret_text, &passed);
}
