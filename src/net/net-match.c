/* Allow/deny matching and address classification for the egress proxy. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strv.h"
#include "net/net-match.h"

static const char *const verdict_table[_NET_VERDICT_MAX] = {
	[NET_VERDICT_ALLOW] = "allow",
	[NET_VERDICT_DENY] = "deny",
	[NET_VERDICT_ERROR] = "error",
};

const char *net_verdict_to_string(NetVerdict v)
{
	return v >= 0 && v < _NET_VERDICT_MAX ? verdict_table[v] : NULL;
}

static const char *const class_table[_NET_ADDR_MAX] = {
	[NET_ADDR_PUBLIC] = "public",
	[NET_ADDR_LOOPBACK] = "loopback",
	[NET_ADDR_PRIVATE] = "private",
	[NET_ADDR_LINK_LOCAL] = "link-local",
	[NET_ADDR_CGNAT] = "shared (CGNAT)",
	[NET_ADDR_UNSPECIFIED] = "unspecified",
	[NET_ADDR_MULTICAST] = "multicast",
	[NET_ADDR_METADATA] = "cloud metadata",
	[NET_ADDR_RESERVED] = "reserved",
};

const char *net_addr_class_to_string(NetAddrClass c)
{
	return c >= 0 && c < _NET_ADDR_MAX ? class_table[c] : NULL;
}

void net_matcher_init(NetMatcher *m, const WardPolicy *p, const char *program)
{
	const char *base = NULL;

	*m = (NetMatcher){
		.allow = p->net_allow,
		.deny = p->net_deny,
		.hosts = p->net_hosts,
		.n_hosts = p->n_net_hosts,
	};
	snprintf(m->allow_name, sizeof(m->allow_name), "network.allow");
	if (program) {
		base = strrchr(program, '/');
		base = base ? base + 1 : program;
	}
	if (!base || !*base)
		return;
	for (size_t i = 0; i < p->n_net_commands; i++) {
		if (p->net_commands[i].name && strcmp(p->net_commands[i].name, base) == 0) {
			/* The command's list replaces the policy's; deny still applies. */
			m->allow = p->net_commands[i].allow;
			snprintf(m->allow_name, sizeof(m->allow_name), "network.commands.%s", base);
			return;
		}
	}
}

static bool is_v4_embedding(const uint8_t *b, NetAddrClass *ret);

static NetAddrClass classify_v4(uint32_t a)
{
	/* Metadata endpoints first: they sit inside ranges classified below.
	 * AWS/GCP/Azure 169.254.169.254, AWS ECS 169.254.170.2, AWS DNS
	 * 169.254.169.253, Alibaba 100.100.100.200, Oracle 192.0.0.192. */
	if (a == 0xA9FEA9FE || a == 0xA9FEAA02 || a == 0xA9FEA9FD || a == 0x646464C8 ||
	    a == 0xC00000C0)
		return NET_ADDR_METADATA;
	if ((a >> 24) == 0)
		return NET_ADDR_UNSPECIFIED;
	if ((a >> 24) == 10 || (a >> 20) == 0xAC1 || (a >> 16) == 0xC0A8)
		return NET_ADDR_PRIVATE;
	if ((a >> 22) == (0x64400000 >> 22))
		return NET_ADDR_CGNAT;
	if ((a >> 24) == 127)
		return NET_ADDR_LOOPBACK;
	if ((a >> 16) == 0xA9FE)
		return NET_ADDR_LINK_LOCAL;
	if ((a >> 8) == 0xC00000 || (a >> 17) == (0xC6120000 >> 17))
		return NET_ADDR_RESERVED;
	if ((a >> 28) == 0xE)
		return NET_ADDR_MULTICAST;
	if ((a >> 28) == 0xF)
		return NET_ADDR_RESERVED; /* 240/4 and 255.255.255.255 */
	return NET_ADDR_PUBLIC;
}

static uint32_t be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* IPv6 forms that carry an IPv4 address the packet can end up at: mapped
 * (::ffff:a.b.c.d), the deprecated compatible form (::a.b.c.d), NAT64
 * (64:ff9b::/96) and 6to4 (2002:AABB:CCDD::/48). */
static bool is_v4_embedding(const uint8_t *b, NetAddrClass *ret)
{
	static const uint8_t zero10[10] = { 0 };
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };

	if (memcmp(b, zero10, 10) == 0 && ((b[10] == 0xff && b[11] == 0xff) || (b[10] == 0 && b[11] == 0 && be32(b + 12) > 1))) {
		*ret = classify_v4(be32(b + 12));
		return true;
	}
	if (memcmp(b, nat64, 12) == 0) {
		*ret = classify_v4(be32(b + 12));
		return true;
	}
	if (b[0] == 0x20 && b[1] == 0x02) {
		*ret = classify_v4(be32(b + 2));
		return true;
	}
	return false;
}

static NetAddrClass classify_v6(const uint8_t *b)
{
	static const uint8_t loop[16] = { [15] = 1 };
	static const uint8_t any[16] = { 0 };
	static const uint8_t ec2[16] = { 0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54 };
	static const uint8_t discard[8] = { 0x01, 0x00 };
	NetAddrClass c;

	if (memcmp(b, any, 16) == 0)
		return NET_ADDR_UNSPECIFIED;
	if (memcmp(b, loop, 16) == 0)
		return NET_ADDR_LOOPBACK;
	if (memcmp(b, ec2, 16) == 0) /* AWS IMDS over IPv6: fd00:ec2::254 */
		return NET_ADDR_METADATA;
	if (is_v4_embedding(b, &c))
		return c;
	if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1)
		return NET_ADDR_PRIVATE; /* 64:ff9b:1::/48, local-use NAT64 */
	if ((b[0] & 0xfe) == 0xfc)
		return NET_ADDR_PRIVATE;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return NET_ADDR_LINK_LOCAL;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		return NET_ADDR_PRIVATE; /* site-local, deprecated but routable inside */
	if (b[0] == 0xff)
		return NET_ADDR_MULTICAST;
	if (memcmp(b, discard, 8) == 0 || (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8))
		return NET_ADDR_RESERVED;
	if (b[0] == 0 && b[1] == 0)
		return NET_ADDR_RESERVED; /* the rest of ::/16 is unassigned */
	return NET_ADDR_PUBLIC;
}

NetAddrClass net_addr_classify(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return classify_v4(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family == AF_INET6)
		return classify_v6(((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr);
	return _NET_ADDR_INVALID;
}

int net_parse_address(const char *s, struct sockaddr_storage *ret)
{
	char tmp[INET6_ADDRSTRLEN + 2];
	size_t n = strlen(s);
	struct in6_addr a6;
	struct in_addr a4;

	memset(ret, 0, sizeof(*ret));
	if (inet_pton(AF_INET, s, &a4) == 1) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ret;
		sin->sin_family = AF_INET;
		sin->sin_addr = a4;
		return 0;
	}
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		if (n - 2 >= sizeof(tmp))
			return -EINVAL;
		memcpy(tmp, s + 1, n - 2);
		tmp[n - 2] = 0;
		s = tmp;
	}
	if (inet_pton(AF_INET6, s, &a6) != 1)
		return -EINVAL;
	if (IN6_IS_ADDR_V4MAPPED(&a6)) {
		/* Fold ::ffff:a.b.c.d to a.b.c.d so that matching and deny see
		 * one spelling of the address. */
		struct sockaddr_in *sin = (struct sockaddr_in *)ret;
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, a6.s6_addr + 12, 4);
		return 0;
	}
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ret;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_addr = a6;
	return 0;
}

const char *net_addr_to_string(const struct sockaddr *sa, char *buf, size_t bufsz)
{
	const void *a = NULL;

	if (sa->sa_family == AF_INET)
		a = &((const struct sockaddr_in *)sa)->sin_addr;
	else if (sa->sa_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (!a || !inet_ntop(sa->sa_family, a, buf, bufsz))
		snprintf(buf, bufsz, "?");
	return buf;
}

static bool label_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int net_normalize_host(const char *in, size_t len, char ret[NET_HOST_MAX])
{
	char buf[NET_HOST_MAX];
	struct sockaddr_storage ss;
	bool bracket = false;

	if (len == 0 || len >= NET_HOST_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c == 0)
			return -EINVAL;
		buf[i] = c;
	}
	buf[len] = 0;

	if (buf[0] == '[') {
		if (len < 3 || buf[len - 1] != ']')
			return -EINVAL;
		bracket = true;
	}
	if (bracket || strchr(buf, ':')) {
		/* Only IPv6 literals contain ':'; zone ids ("%eth0") are refused
		 * because inet_pton does not accept them. */
		if (net_parse_address(buf, &ss) < 0)
			return -EINVAL;
		if (bracket && ss.ss_family != AF_INET6 && !strchr(buf, ':'))
			return -EINVAL; /* "[1.2.3.4]" */
		net_addr_to_string((struct sockaddr *)&ss, ret, NET_HOST_MAX);
		return 1;
	}
	if (buf[len - 1] == '.') {
		buf[--len] = 0;
		if (len == 0)
			return -EINVAL;
	}
	if (net_parse_address(buf, &ss) == 0) {
		net_addr_to_string((struct sockaddr *)&ss, ret, NET_HOST_MAX);
		return 1;
	}
	if (len > 253)
		return -EINVAL;

	const char *label = buf;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || buf[i] == '.') {
			size_t l = (size_t)(buf + i - label);
			if (l == 0 || l > 63)
				return -EINVAL;
			if (i == len) {
				/* A numeric last label means an IP address in a form
				 * inet_pton refuses (127.1, 2130706433, 0x7f.1) that
				 * other resolvers might still accept: never a name. */
				bool digits = true, hex = l > 2 && label[0] == '0' && label[1] == 'x';
				for (size_t k = 0; k < l; k++) {
					char c = label[k];
					if (!(c >= '0' && c <= '9'))
						digits = false;
					if (k >= 2 && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
						hex = false;
				}
				if (digits || hex || (l == 2 && label[0] == '0' && label[1] == 'x'))
					return -EINVAL;
			}
			label = buf + i + 1;
			continue;
		}
		if (!label_char(buf[i]))
			return -EINVAL;
	}
	memcpy(ret, buf, len + 1);
	return 0;
}

typedef struct Pattern {
	char host[NET_HOST_MAX]; /* normalized; for "*.d" the domain "d" */
	bool wildcard;
	bool literal;
	int port; /* 0 = none */
} Pattern;

static int pattern_parse(const char *s, Pattern *ret)
{
	const char *host = s, *colon = NULL, *end;
	size_t n = strlen(s);
	int r;

	*ret = (Pattern){ 0 };
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb)
			return -EINVAL;
		if (rb[1] == ':')
			colon = rb + 1;
		else if (rb[1] != 0)
			return -EINVAL;
	} else {
		const char *c1 = strchr(s, ':');
		if (c1 && !strchr(c1 + 1, ':'))
			colon = c1; /* exactly one ':': host:port; more: bare IPv6 */
	}
	end = colon ? colon : s + n;
	if (colon) {
		char *e = NULL;
		long p;
		errno = 0;
		p = strtol(colon + 1, &e, 10);
		if (errno || !e || *e || e == colon + 1 || p < 1 || p > 65535)
			return -EINVAL;
		ret->port = (int)p;
	}
	if (end - host >= 2 && host[0] == '*' && host[1] == '.') {
		ret->wildcard = true;
		host += 2;
	}
	r = net_normalize_host(host, (size_t)(end - host), ret->host);
	if (r < 0)
		return r;
	if (r == 1 && ret->wildcard)
		return -EINVAL; /* "*.1.2.3.4" means nothing */
	ret->literal = r == 1;
	return 0;
}

static bool pattern_host_matches(const Pattern *p, const char *host)
{
	size_t hl, dl;

	if (!p->wildcard)
		return strcmp(p->host, host) == 0;
	/* "*.example.com" matches a.example.com and a.b.example.com, never
	 * example.com itself, and never an IP literal (those carry no dots
	 * that could end in a name, and wildcards do not parse as literals). */
	hl = strlen(host);
	dl = strlen(p->host);
	return hl > dl + 1 && host[hl - dl - 1] == '.' && strcmp(host + hl - dl, p->host) == 0;
}

void net_match(const NetMatcher *m, const char *host, uint16_t port, NetDecision *ret)
{
	Pattern p;

	*ret = (NetDecision){ .allow = false, .list = m->allow_name };
	STRV_FOREACH(s, m->deny) {
		if (pattern_parse(*s, &p) < 0)
			continue;
		/* A deny entry without a port blocks every port: "deny wins" must
		 * not leave evil.example:8443 open because the entry said nothing. */
		if (p.port && p.port != port)
			continue;
		if (pattern_host_matches(&p, host)) {
			ret->rule = *s;
			ret->list = "network.deny";
			return;
		}
	}
	STRV_FOREACH(s, m->allow) {
		if (pattern_parse(*s, &p) < 0)
			continue;
		if (p.port ? p.port != port : (port != 80 && port != 443))
			continue;
		if (pattern_host_matches(&p, host)) {
			ret->allow = true;
			ret->exact = !p.wildcard;
			ret->rule = *s;
			return;
		}
	}
}

bool net_name_allowed(const NetMatcher *m, const char *host)
{
	Pattern p;

	STRV_FOREACH(s, m->deny) {
		if (pattern_parse(*s, &p) == 0 && p.port == 0 && pattern_host_matches(&p, host))
			return false;
	}
	STRV_FOREACH(s, m->allow) {
		if (pattern_parse(*s, &p) == 0 && !p.literal && pattern_host_matches(&p, host))
			return true;
	}
	return false;
}

const char *net_pinned_address(const NetMatcher *m, const char *host)
{
	char n[NET_HOST_MAX];

	for (size_t i = 0; i < m->n_hosts; i++) {
		const char *name = m->hosts[i].name;
		if (!name || !m->hosts[i].address)
			continue;
		if (net_normalize_host(name, strlen(name), n) >= 0 && strcmp(n, host) == 0)
			return m->hosts[i].address;
	}
	return NULL;
}

static bool same_address(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
}

int net_check_address(const NetMatcher *m, const NetDecision *d, const struct sockaddr *sa,
		      uint16_t port, char *buf, size_t bufsz, const char **reterr_reason)
{
	struct sockaddr_storage folded, pss;
	char a[INET6_ADDRSTRLEN];
	NetAddrClass c;
	Pattern p;

	/* Fold a v4-mapped answer to IPv4 so deny entries and the class see it. */
	net_addr_to_string(sa, a, sizeof(a));
	if (net_parse_address(a, &folded) < 0) {
		*reterr_reason = "unusable address";
		return -EACCES;
	}
	net_addr_to_string((struct sockaddr *)&folded, a, sizeof(a));
	STRV_FOREACH(s, m->deny) {
		if (pattern_parse(*s, &p) < 0 || !p.literal || (p.port && p.port != port))
			continue;
		if (net_parse_address(p.host, &pss) == 0 && same_address((struct sockaddr *)&folded, &pss)) {
			snprintf(buf, bufsz, "address %s in network.deny", a);
			*reterr_reason = buf;
			return -EACCES;
		}
	}
	c = net_addr_classify((struct sockaddr *)&folded);
	if (c == NET_ADDR_PUBLIC || d->exact)
		return 0;
	snprintf(buf, bufsz, "resolves to %s address %s; needs an exact %s entry", net_addr_class_to_string(c),
		 a, m->allow_name);
	*reterr_reason = buf;
	return -EACCES;
}
