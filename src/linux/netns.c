#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "linux/netns.h"

int netns_loopback_up(void)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = {};

	if (fd < 0)
		return -errno;
	/* An ioctl is enough for one flag, and cheaper than a netlink round trip. */
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return -errno;
	return 0;
}

static int listen_loopback(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1;
	_cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4096) < 0)
		return -errno;
	return TAKE_FD(fd);
}

int netns_send_proxy_listeners(int sock, int http_port, int socks_port)
{
	_cleanup_close_ int h = -EBADF, s = -EBADF;
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u = {};
	char byte = 'P';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int fds[2];

	h = listen_loopback(http_port);
	if (h < 0)
		return h;
	s = listen_loopback(socks_port);
	if (s < 0)
		return s;
	fds[0] = h;
	fds[1] = s;
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	if (RETRY_EINTR(sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0)
		return -errno;
	return 0;
}

int netns_recv_proxy_listeners(int sock, int *ret_http, int *ret_socks)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u = {};
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int fds[2];
	ssize_t n;

	n = RETRY_EINTR(recvmsg(sock, &msg, MSG_CMSG_CLOEXEC));
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(fds)))
		return -EBADMSG;
	memcpy(fds, CMSG_DATA(c), sizeof(fds));
	*ret_http = fds[0];
	*ret_socks = fds[1];
	return 0;
}
