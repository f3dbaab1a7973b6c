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

int netns_send_listeners(int sock, const uint16_t *ports, size_t n)
{
	union {
		char buf[CMSG_SPACE(NETNS_LISTENERS_MAX * sizeof(int))];
		struct cmsghdr align;
	} u = {};
	char byte = 'P';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = CMSG_SPACE(n * sizeof(int)) };
	struct cmsghdr *c;
	int fds[NETNS_LISTENERS_MAX];
	size_t made = 0;
	int r = 0;

	if (n == 0 || n > NETNS_LISTENERS_MAX)
		return -EINVAL;
	for (; made < n; made++) {
		fds[made] = listen_loopback(ports[made]);
		if (fds[made] < 0) {
			r = fds[made];
			goto out;
		}
	}
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	if (RETRY_EINTR(sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0)
		r = -errno;
out:
	for (size_t i = 0; i < made; i++)
		close(fds[i]);
	return r;
}

int netns_recv_listeners(int sock, int *ret_fds, size_t n)
{
	union {
		char buf[CMSG_SPACE(NETNS_LISTENERS_MAX * sizeof(int))];
		struct cmsghdr align;
	} u = {};
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t got;

	if (n == 0 || n > NETNS_LISTENERS_MAX)
		return -EINVAL;
	got = RETRY_EINTR(recvmsg(sock, &msg, MSG_CMSG_CLOEXEC));
	if (got < 0)
		return -errno;
	if (got == 0)
		return -EPIPE;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EBADMSG;
	if (c->cmsg_len != CMSG_LEN(n * sizeof(int))) {
		/* Not what we asked for: close whatever came. */
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int tmp[NETNS_LISTENERS_MAX];
		memcpy(tmp, CMSG_DATA(c), (k < NETNS_LISTENERS_MAX ? k : NETNS_LISTENERS_MAX) * sizeof(int));
		for (size_t i = 0; i < k && i < NETNS_LISTENERS_MAX; i++)
			close(tmp[i]);
		return -EBADMSG;
	}
	memcpy(ret_fds, CMSG_DATA(c), n * sizeof(int));
	return 0;
}
