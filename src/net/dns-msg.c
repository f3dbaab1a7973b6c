/* DNS query parsing and answer building for the capture stub. Strict on
 * purpose: a query the stub cannot read completely is answered FORMERR (or
 * not at all), never guessed at. */
#include <errno.h>
#include <string.h>

#include "net/dns-msg.h"

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static bool label_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/* The question's name at @msg+@off: labels only (a compression pointer in
 * the first name of a query has nothing to point back to). */
static int parse_name(const uint8_t *msg, size_t len, size_t *off, DnsQuery *q)
{
	size_t o = *off, n = 0, wire = 0;

	q->name_ok = true;
	for (;;) {
		uint8_t l;

		if (o >= len)
			return -EBADMSG;
		l = msg[o++];
		wire++;
		if (l == 0)
			break;
		if (l > 63)
			return -EBADMSG; /* a pointer, or the reserved label types */
		if (o + l > len || wire + l > DNS_NAME_WIRE_MAX - 1)
			return -EBADMSG;
		if (n > 0)
			q->name[n++] = '.';
		for (uint8_t i = 0; i < l; i++) {
			uint8_t c = msg[o + i];
			if (!label_char(c)) {
				q->name_ok = false;
				c = '?';
			}
			q->name[n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
		}
		o += l;
		wire += l;
	}
	q->name[n] = '\0';
	*off = o;
	return 0;
}

int dns_parse_query(const uint8_t *msg, size_t len, DnsQuery *ret)
{
	size_t off = DNS_HEADER_LEN, qstart = DNS_HEADER_LEN;
	uint16_t flags;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (!msg || len < DNS_HEADER_LEN)
		return -EBADMSG;
	ret->id = get16(msg);
	flags = get16(msg + 2);
	ret->rd = flags & 0x0100;
	if (flags & 0x8000)
		return -EPROTO;
	if (((flags >> 11) & 0xf) != 0)
		return -EOPNOTSUPP;
	/* One question; no answers or authority in a query; at most an OPT
	 * record in the additional section (EDNS), which the answer omits. */
	if (get16(msg + 4) != 1 || get16(msg + 6) != 0 || get16(msg + 8) != 0 ||
	    get16(msg + 10) > 1 || len > DNS_QUERY_MAX)
		return -EBADMSG;
	r = parse_name(msg, len, &off, ret);
	if (r < 0)
		return r;
	if (off + 4 > len)
		return -EBADMSG;
	ret->qtype = get16(msg + off);
	ret->qclass = get16(msg + off + 2);
	off += 4;
	ret->question_len = off - qstart;
	memcpy(ret->question, msg + qstart, ret->question_len);
	return 0;
}

static void put_header(uint8_t *out, uint16_t id, bool rd, int rcode, uint16_t qd, uint16_t an)
{
	/* QR, AA (the stub is the authority for its table), RA (it answers
	 * every name itself). */
	put16(out, id);
	put16(out + 2, (uint16_t)(0x8000 | 0x0400 | (rd ? 0x0100 : 0) | 0x0080 | (rcode & 0xf)));
	put16(out + 4, qd);
	put16(out + 6, an);
	put16(out + 8, 0);
	put16(out + 10, 0);
}

int dns_build_reply(const DnsQuery *q, int rcode, const uint8_t *addr, size_t addr_len,
		    uint32_t ttl, uint8_t *out, size_t outsz)
{
	size_t n = DNS_HEADER_LEN + q->question_len;

	if (addr && addr_len != 4 && addr_len != 16)
		return -EINVAL;
	if (q->question_len > DNS_QUESTION_MAX)
		return -EINVAL;
	if (outsz < n + (addr ? 12 + addr_len : 0))
		return -ENOBUFS;
	put_header(out, q->id, q->rd, rcode, 1, addr ? 1 : 0);
	memcpy(out + DNS_HEADER_LEN, q->question, q->question_len);
	if (addr) {
		uint8_t *a = out + n;
		put16(a, 0xc000 | DNS_HEADER_LEN); /* the question's name */
		put16(a + 2, addr_len == 4 ? DNS_TYPE_A : DNS_TYPE_AAAA);
		put16(a + 4, DNS_CLASS_IN);
		put16(a + 6, (uint16_t)(ttl >> 16));
		put16(a + 8, (uint16_t)ttl);
		put16(a + 10, (uint16_t)addr_len);
		memcpy(a + 12, addr, addr_len);
		n += 12 + addr_len;
	}
	return (int)n;
}

int dns_build_error(uint16_t id, int rcode, uint8_t *out, size_t outsz)
{
	if (outsz < DNS_HEADER_LEN)
		return -ENOBUFS;
	put_header(out, id, false, rcode, 0, 0);
	return DNS_HEADER_LEN;
}
