#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
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

/* RTM_NEWROUTE "local ADDR/0 dev lo table local" for @family: every
 * address is this namespace's own, so a connect to any address reaches a
 * listener bound to the wildcard address on its port (no IP_TRANSPARENT,
 * no privilege beyond CAP_NET_ADMIN in our own namespace). */
static int add_local_route_all(int nl, int family, unsigned ifindex, uint32_t seq)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
		struct rtattr oif_attr;
		uint32_t oif;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_NEWROUTE,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL,
			.nlmsg_seq = seq },
		.rt = { .rtm_family = (unsigned char)family, .rtm_dst_len = 0,
			.rtm_table = RT_TABLE_LOCAL, .rtm_protocol = RTPROT_BOOT,
			.rtm_scope = RT_SCOPE_HOST, .rtm_type = RTN_LOCAL },
		.oif_attr = { .rta_len = RTA_LENGTH(sizeof(uint32_t)), .rta_type = RTA_OIF },
		.oif = ifindex,
	};
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr err;
	} ack;
	ssize_t n;

	if (send(nl, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
		return -errno;
	do
		n = recv(nl, &ack, sizeof(ack), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n < sizeof(ack.nh) + sizeof(int) || ack.nh.nlmsg_type != NLMSG_ERROR ||
	    ack.nh.nlmsg_seq != seq)
		return -EPROTO;
	return ack.err.error; /* 0, or -errno */
}

int netns_route_all_local(bool *ret_v6)
{
	_cleanup_close_ int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	unsigned lo = if_nametoindex("lo");
	int r;

	*ret_v6 = false;
	if (nl < 0)
		return -errno;
	if (lo == 0)
		return -ENODEV;
	r = add_local_route_all(nl, AF_INET, lo, 1);
	if (r < 0)
		return r;
	/* Without IPv6 in the namespace (ipv6.disable=1, or disabled on lo)
	 * capture is IPv4 only, and the DNS stub answers no AAAA. */
	r = add_local_route_all(nl, AF_INET6, lo, 2);
	*ret_v6 = r == 0;
	return r == 0 || r == -EAFNOSUPPORT || r == -EACCES || r == -ENETDOWN || r == -EOPNOTSUPP
		       ? 0 : r;
}

/* A listener on the wildcard address, port @port: [::] dual-stack when
 * @v6, else 0.0.0.0. */
static int listen_any(uint16_t port, bool v6)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	int zero = 0, one = 1;
	_cleanup_close_ int fd = socket(v6 ? AF_INET6 : AF_INET,
					SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0)
		return -errno;
	if ((v6 ? bind(fd, (struct sockaddr *)&s6, sizeof(s6)) : bind(fd, (struct sockaddr *)&s4, sizeof(s4))) < 0 ||
	    listen(fd, 4096) < 0)
		return -errno;
	return TAKE_FD(fd);
}

static int dns_socket(int type)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53) };
	int one = 1;
	_cleanup_close_ int fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	if (inet_pton(AF_INET, NETNS_DNS_STUB_ADDR, &sa.sin_addr) != 1)
		return -EINVAL;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0))
		return -errno;
	return TAKE_FD(fd);
}

_Static_assert(NETNS_CAPTURE_MAX + 2 <= FD_PASS_MAX, "capture sockets travel in one message");

int netns_send_capture(int sock, const uint16_t *ports, size_t n)
{
	int fds[NETNS_CAPTURE_MAX + 2];
	size_t made = 0;
	bool v6;
	int r;

	if (n == 0 || n > NETNS_CAPTURE_MAX)
		return -EINVAL;
	r = netns_route_all_local(&v6);
	if (r < 0)
		return r;
	for (; made < n + 2; made++) {
		fds[made] = made < n ? listen_any(ports[made], v6)
			    : dns_socket(made == n ? SOCK_DGRAM : SOCK_STREAM);
		if (fds[made] < 0) {
			r = fds[made];
			goto out;
		}
	}
	r = fd_pass_send(sock, 'C', fds, n + 2);
out:
	for (size_t i = 0; i < made; i++)
		close(fds[i]);
	return r;
}
