/* Egress decisions for the proxy: host name normalization, allow/deny pattern
 * matching (network.allow, network.deny, network.commands), network.hosts
 * pins and the classification of resolved addresses (loopback, private,
 * metadata, ...). Pure functions over the policy model: no sockets, no DNS. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "policy/policy.h"

#define NET_HOST_MAX 256 /* 253 characters of name, brackets excluded, plus NUL */

typedef enum NetVerdict {
	NET_VERDICT_ALLOW,
	NET_VERDICT_DENY,
	NET_VERDICT_ERROR,
	_NET_VERDICT_MAX,
	_NET_VERDICT_INVALID = -22,
} NetVerdict;

const char *net_verdict_to_string(NetVerdict v);

/* What a resolved (or literal) address is, for the private-address rule. */
typedef enum NetAddrClass {
	NET_ADDR_PUBLIC,
	NET_ADDR_LOOPBACK,     /* 127/8, ::1 */
	NET_ADDR_PRIVATE,      /* RFC 1918, fc00::/7 (ULA), fec0::/10 */
	NET_ADDR_LINK_LOCAL,   /* 169.254/16, fe80::/10 */
	NET_ADDR_CGNAT,        /* 100.64/10 (RFC 6598) */
	NET_ADDR_UNSPECIFIED,  /* 0/8, :: */
	NET_ADDR_MULTICAST,    /* 224/4, ff00::/8, 255.255.255.255 */
	NET_ADDR_METADATA,     /* cloud instance metadata endpoints */
	NET_ADDR_RESERVED,     /* 240/4, 192.0.0/24, 198.18/15, discard prefixes */
	_NET_ADDR_MAX,
	_NET_ADDR_INVALID = -22,
} NetAddrClass;

const char *net_addr_class_to_string(NetAddrClass c);

/* The lists that apply to one run. Borrowed from the policy; the policy must
 * outlive the matcher. */
typedef struct NetMatcher {
	char *const *allow;    /* the policy's, or network.commands[program]'s */
	char *const *deny;
	const NetHost *hosts;
	size_t n_hosts;
	char allow_name[128];  /* "network.allow" or "network.commands.git" */
} NetMatcher;

/* Pick the allow list for @program (argv[0]'s base name; may be NULL). */
void net_matcher_init(NetMatcher *m, const WardPolicy *p, const char *program);

/* A target host as a client wrote it (@len bytes, no NUL needed): lowercase,
 * one trailing dot dropped, "[v6]" unbracketed, IPv4-mapped IPv6 turned into
 * IPv4, IP literals in canonical form. Returns 1 for an IP literal, 0 for a
 * name, -EINVAL for anything else (empty labels, bad characters, a numeric
 * last label that is no dotted quad such as "127.1" or "0x7f.1", zone ids). */
int net_normalize_host(const char *in, size_t len, char ret[NET_HOST_MAX]);

typedef struct NetDecision {
	bool allow;
	/* Allowed by an exact entry (a host name without "*." or an IP literal):
	 * only then may the target reach loopback/private/metadata addresses. */
	bool exact;
	const char *rule;  /* the pattern that decided; NULL when none matched */
	const char *list;  /* "network.deny", or m->allow_name */
} NetDecision;

/* Match a normalized @host (from net_normalize_host) and @port. Deny entries
 * without a port match every port; allow entries without a port match 80 and
 * 443. IP literals match only entries with the same address. */
void net_match(const NetMatcher *m, const char *host, uint16_t port, NetDecision *ret);

/* Is normalized name @host allowed on some port (the capture's DNS stub
 * answers only for these)? False when a deny entry without a port
 * matches; a deny entry for one port leaves the name to the connection's
 * own check. IP literal entries allow no name. */
bool net_name_allowed(const NetMatcher *m, const char *host);

/* The network.hosts pin for normalized @host, or NULL. */
const char *net_pinned_address(const NetMatcher *m, const char *host);

NetAddrClass net_addr_classify(const struct sockaddr *sa);

/* May a connection decided by @d for @port go to @sa? 0 if yes; -EACCES if
 * not, with @reterr_reason (static text or @buf) saying why: a denied
 * address, or a non-public address without an exact allow entry. */
int net_check_address(const NetMatcher *m, const NetDecision *d, const struct sockaddr *sa,
		      uint16_t port, char *buf, size_t bufsz, const char **reterr_reason);

/* Format @sa's address (no port) into @buf; returns @buf ("?" on failure). */
const char *net_addr_to_string(const struct sockaddr *sa, char *buf, size_t bufsz);
/* Parse an IP literal (canonical or not, v4-mapped folded to v4) into @ret. */
int net_parse_address(const char *s, struct sockaddr_storage *ret);
