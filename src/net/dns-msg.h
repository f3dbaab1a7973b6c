/* DNS messages for the capture stub (dns-stub.c): parse a query, build its
 * answer. Pure: buffers in, results out; no sockets. Only what a stub that
 * answers from a table needs: one question, class IN, no compression in the
 * question, answers of one A or AAAA record (RFC 1035). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER_LEN 12
#define DNS_NAME_WIRE_MAX 255
/* The question as it came (name in wire form, type, class), echoed back
 * byte for byte so that 0x20 case randomization keeps matching. */
#define DNS_QUESTION_MAX (DNS_NAME_WIRE_MAX + 4)
/* Every answer the stub builds fits: header, question, one AAAA record. */
#define DNS_REPLY_MAX (DNS_HEADER_LEN + DNS_QUESTION_MAX + 12 + 16)
/* Largest query accepted (over TCP; UDP is bounded by the datagram). */
#define DNS_QUERY_MAX 4096

enum {
	DNS_TYPE_A = 1,
	DNS_TYPE_AAAA = 28,
	DNS_CLASS_IN = 1,
};

enum {
	DNS_RCODE_NOERROR = 0,
	DNS_RCODE_FORMERR = 1,
	DNS_RCODE_SERVFAIL = 2,
	DNS_RCODE_NXDOMAIN = 3,
	DNS_RCODE_NOTIMP = 4,
	DNS_RCODE_REFUSED = 5,
};

typedef struct DnsQuery {
	uint16_t id;
	bool rd;                        /* recursion desired, echoed */
	uint16_t qtype, qclass;
	/* The name in presentation form, lowercased, no trailing dot ("" for
	 * the root). name_ok is false when a label holds anything but
	 * letters, digits, '-' and '_' (such a name is never allowed). */
	char name[DNS_NAME_WIRE_MAX + 1];
	bool name_ok;
	uint8_t question[DNS_QUESTION_MAX];
	size_t question_len;
} DnsQuery;

/* Parse the query in @msg (@len bytes). Returns 0 and fills @ret; -EBADMSG
 * when it is no well-formed query (then, when at least the header was
 * there, ret->id is set and a FORMERR may be sent: dns_build_error);
 * -EOPNOTSUPP for an opcode other than QUERY (NOTIMP); -EPROTO for a
 * response (QR set: never answered, so that two stubs cannot loop). */
int dns_parse_query(const uint8_t *msg, size_t len, DnsQuery *ret);

/* The answer to @q: @rcode, and when @addr is not NULL one record of
 * @addr_len (4: A, 16: AAAA) bytes with @ttl. Returns the length written to
 * @out (DNS_REPLY_MAX bytes are always enough), -ENOBUFS if @outsz is less. */
int dns_build_reply(const DnsQuery *q, int rcode, const uint8_t *addr, size_t addr_len,
		    uint32_t ttl, uint8_t *out, size_t outsz);

/* A bare answer without question (FORMERR, NOTIMP) for message @id. */
int dns_build_error(uint16_t id, int rcode, uint8_t *out, size_t outsz);
