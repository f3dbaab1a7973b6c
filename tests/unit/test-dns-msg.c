/* Unit tests for src/net/dns-msg.c (the capture stub's DNS messages) and
 * src/net/synth-map.c (its name <-> synthetic address table). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "net/dns-msg.h"
#include "net/synth-map.h"

static size_t query(uint8_t *b, const char *name, uint16_t type, uint16_t flags)
{
	size_t n = 12;
	const char *p = name;

	memset(b, 0, 12);
	b[0] = 0xab;
	b[1] = 0xcd;
	b[2] = (uint8_t)(flags >> 8);
	b[3] = (uint8_t)flags;
	b[5] = 1;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		b[n++] = (uint8_t)l;
		memcpy(b + n, p, l);
		n += l;
		p += l + (dot ? 1 : 0);
	}
	b[n++] = 0;
	b[n++] = (uint8_t)(type >> 8);
	b[n++] = (uint8_t)type;
	b[n++] = 0;
	b[n++] = 1;
	return n;
}

static void test_parse_query(void **state)
{
	uint8_t b[512];
	DnsQuery q;
	size_t n = query(b, "Site.TEST", DNS_TYPE_AAAA, 0x0100);

	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_int_equal(q.id, 0xabcd);
	assert_true(q.rd);
	assert_int_equal(q.qtype, DNS_TYPE_AAAA);
	assert_int_equal(q.qclass, DNS_CLASS_IN);
	assert_string_equal(q.name, "site.test");
	assert_true(q.name_ok);
	assert_int_equal(q.question_len, n - 12);
	/* Every truncation is malformed, never read past. */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(dns_parse_query(b, i, &q), -EBADMSG);
}

static void test_parse_query_refusals(void **state)
{
	uint8_t b[512];
	DnsQuery q;
	size_t n = query(b, "a.test", 1, 0x8180);

	assert_int_equal(dns_parse_query(b, n, &q), -EPROTO); /* a response */
	n = query(b, "a.test", 1, 0x2800);                    /* opcode 5 (UPDATE) */
	assert_int_equal(dns_parse_query(b, n, &q), -EOPNOTSUPP);
	n = query(b, "a.test", 1, 0);
	b[5] = 2; /* two questions */
	assert_int_equal(dns_parse_query(b, n, &q), -EBADMSG);
	b[5] = 1;
	b[7] = 1; /* an answer in a query */
	assert_int_equal(dns_parse_query(b, n, &q), -EBADMSG);
	b[7] = 0;
	b[12] = 0xc0; /* a compression pointer as the first label */
	assert_int_equal(dns_parse_query(b, n, &q), -EBADMSG);
	/* A label with a dot or a NUL in it reads, but is no name_ok. */
	n = query(b, "ab.test", 1, 0);
	b[13] = '.';
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_false(q.name_ok);
	b[13] = 0;
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_false(q.name_ok);
}

static void test_name_too_long(void **state)
{
	uint8_t b[600];
	char name[400];
	DnsQuery q;
	size_t n;

	/* 4 labels of 63: 257 bytes of wire name with the length bytes and
	 * the root, two too many. */
	snprintf(name, sizeof(name), "%.63s.%.63s.%.63s.%.63s",
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
		 "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
		 "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd");
	n = query(b, name, 1, 0);
	assert_int_equal(dns_parse_query(b, n, &q), -EBADMSG);
	name[strlen(name) - 2] = '\0'; /* 255 bytes of wire name: fits */
	n = query(b, name, 1, 0);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_int_equal(strlen(q.name), 253);
}

static void test_build_reply(void **state)
{
	static const uint8_t v4[4] = { 198, 18, 0, 7 };
	uint8_t b[512], out[DNS_REPLY_MAX];
	DnsQuery q;
	size_t n = query(b, "SiTe.test", DNS_TYPE_A, 0x0100);
	int r;

	assert_int_equal(dns_parse_query(b, n, &q), 0);
	r = dns_build_reply(&q, DNS_RCODE_NOERROR, v4, 4, 60, out, sizeof(out));
	assert_int_equal(r, (int)n + 16);
	assert_int_equal(out[0], 0xab);
	assert_int_equal(out[2] & 0x80, 0x80);  /* QR */
	assert_int_equal(out[2] & 0x01, 0x01);  /* RD echoed */
	assert_int_equal(out[3] & 0x0f, 0);
	assert_int_equal(out[7], 1);            /* one answer */
	/* The question comes back byte for byte (0x20 case kept). */
	assert_memory_equal(out + 12, b + 12, n - 12);
	assert_int_equal(out[n], 0xc0);
	assert_int_equal(out[n + 1], 12);
	assert_memory_equal(out + n + 12, v4, 4);
	r = dns_build_reply(&q, DNS_RCODE_NXDOMAIN, NULL, 0, 0, out, sizeof(out));
	assert_int_equal(r, (int)n);
	assert_int_equal(out[3] & 0x0f, DNS_RCODE_NXDOMAIN);
	assert_int_equal(out[7], 0);
	assert_int_equal(dns_build_reply(&q, 0, v4, 4, 60, out, 20), -ENOBUFS);
	assert_int_equal(dns_build_error(0x1234, DNS_RCODE_FORMERR, out, sizeof(out)), 12);
	assert_int_equal(out[3] & 0x0f, DNS_RCODE_FORMERR);
}

static void test_synth_map(void **state)
{
	SynthMap *m = synth_map_new(0);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	uint8_t a4[4], a6[16];
	uint32_t i1, i2, i;
	char name[32];

	assert_non_null(m);
	assert_int_equal(synth_map_get(m, "a.test", &i1), 0);
	assert_int_equal(synth_map_get(m, "b.test", &i2), 0);
	assert_int_equal(i1, 1);
	assert_int_equal(i2, 2);
	assert_int_equal(synth_map_get(m, "a.test", &i), 0);
	assert_int_equal(i, i1);
	assert_string_equal(synth_map_name(m, 2), "b.test");
	assert_null(synth_map_name(m, 0));
	assert_null(synth_map_name(m, 3));
	/* Many names: the table grows and keeps every mapping. */
	for (int k = 0; k < 5000; k++) {
		snprintf(name, sizeof(name), "n%d.test", k);
		assert_int_equal(synth_map_get(m, name, &i), 0);
		assert_int_equal(i, (uint32_t)k + 3);
	}
	assert_string_equal(synth_map_name(m, 4002), "n3999.test");
	assert_int_equal(synth_map_get(m, "n3999.test", &i), 0);
	assert_int_equal(i, 4002);

	synth_addr_v4(300, a4);
	assert_int_equal(a4[0], 198);
	assert_int_equal(a4[1], 18);
	assert_int_equal(a4[2], 1);
	assert_int_equal(a4[3], 44);
	memcpy(&sin.sin_addr, a4, 4);
	assert_int_equal(synth_addr_index((struct sockaddr *)&sin, &i), 1);
	assert_int_equal(i, 300);
	synth_addr_v6(70000, a6);
	memcpy(&s6.sin6_addr, a6, 16);
	assert_int_equal(synth_addr_index((struct sockaddr *)&s6, &i), 1);
	assert_int_equal(i, 70000);
	/* IPv4-mapped, as a dual-stack listener reports it. */
	inet_pton(AF_INET6, "::ffff:198.19.0.5", &s6.sin6_addr);
	assert_int_equal(synth_addr_index((struct sockaddr *)&s6, &i), 1);
	assert_int_equal(i, 65536 + 5);
	/* Inside the /48 but not an index: synthetic, never handed out. */
	inet_pton(AF_INET6, "2001:2:0:1::5", &s6.sin6_addr);
	assert_int_equal(synth_addr_index((struct sockaddr *)&s6, &i), 1);
	assert_int_equal(i, 0);
	inet_pton(AF_INET, "198.20.0.1", &sin.sin_addr);
	assert_int_equal(synth_addr_index((struct sockaddr *)&sin, &i), 0);
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	assert_int_equal(synth_addr_index((struct sockaddr *)&sin, &i), 0);
	synth_map_free(m);

	m = synth_map_new(2);
	assert_int_equal(synth_map_get(m, "a", &i), 0);
	assert_int_equal(synth_map_get(m, "b", &i), 0);
	assert_int_equal(synth_map_get(m, "c", &i), -ENOSPC);
	assert_int_equal(synth_map_get(m, "a", &i), 0);
	synth_map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_query),
		cmocka_unit_test(test_parse_query_refusals),
		cmocka_unit_test(test_name_too_long),
		cmocka_unit_test(test_build_reply),
		cmocka_unit_test(test_synth_map),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
