/* SOCKS5 greeting/request parsing and reply formatting. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "net/socks5.h"

int socks5_parse_greeting(const uint8_t *buf, size_t len, bool *ret_noauth)
{
	size_t n;

	if (len < 1)
		return 0;
	if (buf[0] != 5)
		return -EPROTO;
	if (len < 2)
		return 0;
	if (buf[1] == 0)
		return -EBADMSG;
	n = 2 + (size_t)buf[1];
	if (len < n)
		return 0;
	*ret_noauth = memchr(buf + 2, 0x00, buf[1]) != NULL;
	return (int)n;
}

int socks5_parse_request(const uint8_t *buf, size_t len, Socks5Request *ret)
{
	Socks5Request req = { 0 };
	size_t need, alen;
	int r;

	if (len < 1)
		return 0;
	if (buf[0] != 5)
		return -EPROTO;
	if (len < 4)
		return 0;
	if (buf[2] != 0)
		return -EBADMSG;
	req.cmd = buf[1];
	req.atyp = buf[3];
	switch (req.atyp) {
	case SOCKS5_ATYP_IPV4:
		alen = 4;
		need = 4 + 4 + 2;
		break;
	case SOCKS5_ATYP_IPV6:
		alen = 16;
		need = 4 + 16 + 2;
		break;
	case SOCKS5_ATYP_DOMAIN:
		if (len < 5)
			return 0;
		alen = buf[4];
		if (alen == 0)
			return -EBADMSG;
		need = 5 + alen + 2;
		break;
	default:
		return -EAFNOSUPPORT;
	}
	if (len < need)
		return 0;
	req.port = (uint16_t)(buf[need - 2] << 8 | buf[need - 1]);
	if (req.port == 0)
		return -EBADMSG;
	if (req.atyp == SOCKS5_ATYP_DOMAIN) {
		/* socks5h: the client sends the name; it may still spell an IP
		 * address, which the matcher then treats as a literal. */
		r = net_normalize_host((const char *)buf + 5, alen, req.host);
		if (r < 0)
			return -EBADMSG;
		req.literal = r == 1;
	} else {
		char tmp[INET6_ADDRSTRLEN];
		int af = req.atyp == SOCKS5_ATYP_IPV4 ? AF_INET : AF_INET6;
		if (!inet_ntop(af, buf + 4, tmp, sizeof(tmp)))
			return -EBADMSG;
		/* Normalize, which folds ::ffff:a.b.c.d to a.b.c.d. */
		if (net_normalize_host(tmp, strlen(tmp), req.host) != 1)
			return -EBADMSG;
		req.literal = true;
	}
	req.len = need;
	*ret = req;
	return (int)need;
}

size_t socks5_format_reply(uint8_t rep, const struct sockaddr *bound, uint8_t out[SOCKS5_REPLY_MAX])
{
	out[0] = 5;
	out[1] = rep;
	out[2] = 0;
	if (bound && bound->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)bound;
		out[3] = SOCKS5_ATYP_IPV6;
		memcpy(out + 4, &s6->sin6_addr, 16);
		memcpy(out + 20, &s6->sin6_port, 2);
		return 22;
	}
	out[3] = SOCKS5_ATYP_IPV4;
	if (bound && bound->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)bound;
		memcpy(out + 4, &s4->sin_addr, 4);
		memcpy(out + 8, &s4->sin_port, 2);
	} else {
		memset(out + 4, 0, 6);
	}
	return 10;
}
