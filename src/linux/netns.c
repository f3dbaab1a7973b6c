#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-pass.h"
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

_Static_assert(NETNS_LISTENERS_MAX <= FD_PASS_MAX, "listeners travel in one message");

int netns_send_listeners(int sock, const uint16_t *ports, size_t n)
{
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
	r = fd_pass_send(sock, 'P', fds, n);
out:
	for (size_t i = 0; i < made; i++)
		close(fds[i]);
	return r;
}

int netns_recv_listeners(int sock, int *ret_fds, size_t n)
{
	if (n == 0 || n > NETNS_LISTENERS_MAX)
		return -EINVAL;
	return fd_pass_recv(sock, ret_fds, n, 0);
}
