/* Fuzz target: the DNS stub's query parser and answer builder, fed as the
 * stub feeds them (one datagram or one TCP message). */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "net/dns-msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t v4[4] = { 198, 18, 0, 1 }, v6[16] = { 0x20, 0x01, 0, 2 };
	uint8_t out[DNS_REPLY_MAX];
	DnsQuery q;
	int r;

	if (size > 2 * DNS_QUERY_MAX)
		return 0;
	r = dns_parse_query(data, size, &q);
	if (r < 0) {
		assert(r == -EBADMSG || r == -EOPNOTSUPP || r == -EPROTO);
		if (size >= DNS_HEADER_LEN)
			assert(dns_build_error(q.id, DNS_RCODE_FORMERR, out, sizeof(out)) == DNS_HEADER_LEN);
		return 0;
	}
	assert(q.question_len >= 5 && q.question_len <= DNS_QUESTION_MAX);
	assert(memchr(q.name, 0, sizeof(q.name)) != NULL);
	assert(strlen(q.name) < DNS_NAME_WIRE_MAX);
	r = dns_build_reply(&q, DNS_RCODE_NOERROR, q.qtype == 1 ? v4 : v6, q.qtype == 1 ? 4 : 16, 60,
			    out, sizeof(out));
	assert(r > 0 && (size_t)r <= sizeof(out));
	/* The answer parses back as a response to the same question. */
	assert(dns_parse_query(out, (size_t)r, &q) == -EPROTO);
	r = dns_build_reply(&q, DNS_RCODE_NXDOMAIN, NULL, 0, 0, out, sizeof(out));
	assert(r > 0);
	return 0;
}
