/* Unit tests for src/net/socks5.c: greeting, request and reply encoding. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "net/socks5.h"

static void test_socks5_greeting(void **state)
{
	bool noauth = false;
	const uint8_t g1[] = { 5, 2, 0x02, 0x00 };
	const uint8_t g2[] = { 5, 1, 0x02 };
	const uint8_t g4[] = { 4, 1, 0x00 };
	const uint8_t g0[] = { 5, 0 };

	assert_int_equal(socks5_parse_greeting(g1, 0, &noauth), 0);
	assert_int_equal(socks5_parse_greeting(g1, 1, &noauth), 0);
	assert_int_equal(socks5_parse_greeting(g1, 3, &noauth), 0);
	assert_int_equal(socks5_parse_greeting(g1, 4, &noauth), 4);
	assert_true(noauth);
	assert_int_equal(socks5_parse_greeting(g2, 3, &noauth), 3);
	assert_false(noauth);
	assert_int_equal(socks5_parse_greeting(g4, 3, &noauth), -EPROTO);
	assert_int_equal(socks5_parse_greeting(g0, 2, &noauth), -EBADMSG);
}

static void test_socks5_request_domain(void **state)
{
	Socks5Request r;
	uint8_t b[300] = { 5, 1, 0, 3, 10 };

	memcpy(b + 5, "GitHub.COM", 10);
	b[15] = 0x01;
	b[16] = 0xbb;
	for (size_t i = 0; i < 17; i++)
		assert_int_equal(socks5_parse_request(b, i, &r), 0);
	assert_int_equal(socks5_parse_request(b, 17, &r), 17);
	assert_int_equal(r.cmd, SOCKS5_CMD_CONNECT);
	assert_string_equal(r.host, "github.com");
	assert_int_equal(r.port, 443);
	assert_false(r.literal);
	assert_int_equal(r.len, 17);

	/* A domain that spells an address is a literal. */
	b[4] = 9;
	memcpy(b + 5, "127.0.0.1", 9);
	b[14] = 0;
	b[15] = 22;
	assert_int_equal(socks5_parse_request(b, 16, &r), 16);
	assert_true(r.literal);
	assert_string_equal(r.host, "127.0.0.1");

	/* Invalid names, zero length, NUL inside. */
	b[4] = 3;
	memcpy(b + 5, "a\0b", 3);
	b[8] = 0;
	b[9] = 80;
	assert_int_equal(socks5_parse_request(b, 10, &r), -EBADMSG);
	b[4] = 0;
	assert_int_equal(socks5_parse_request(b, 10, &r), -EBADMSG);
}

static void test_socks5_request_addresses(void **state)
{
	Socks5Request r;
	const uint8_t v4[] = { 5, 1, 0, 1, 10, 0, 0, 1, 0x1f, 0x90 };
	uint8_t v6[22] = { 5, 1, 0, 4 };
	const uint8_t port0[] = { 5, 1, 0, 1, 10, 0, 0, 1, 0, 0 };
	const uint8_t badrsv[] = { 5, 1, 1, 1, 10, 0, 0, 1, 0, 80 };
	const uint8_t badatyp[] = { 5, 1, 0, 9, 10, 0, 0, 1, 0, 80 };
	const uint8_t badver[] = { 4, 1, 0, 1, 10, 0, 0, 1, 0, 80 };
	const uint8_t bind[] = { 5, 2, 0, 1, 10, 0, 0, 1, 0, 80 };

	assert_int_equal(socks5_parse_request(v4, sizeof(v4), &r), 10);
	assert_string_equal(r.host, "10.0.0.1");
	assert_int_equal(r.port, 8080);
	assert_true(r.literal);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::7", v6 + 4), 1);
	v6[20] = 0;
	v6[21] = 22;
	assert_int_equal(socks5_parse_request(v6, 21, &r), 0);
	assert_int_equal(socks5_parse_request(v6, 22, &r), 22);
	assert_string_equal(r.host, "2001:db8::7");
	assert_int_equal(inet_pton(AF_INET6, "::ffff:127.0.0.1", v6 + 4), 1);
	assert_int_equal(socks5_parse_request(v6, 22, &r), 22);
	assert_string_equal(r.host, "127.0.0.1");
	assert_int_equal(socks5_parse_request(port0, sizeof(port0), &r), -EBADMSG);
	assert_int_equal(socks5_parse_request(badrsv, sizeof(badrsv), &r), -EBADMSG);
	assert_int_equal(socks5_parse_request(badatyp, sizeof(badatyp), &r), -EAFNOSUPPORT);
	assert_int_equal(socks5_parse_request(badver, sizeof(badver), &r), -EPROTO);
	/* BIND parses; the proxy answers it with "command not supported". */
	assert_int_equal(socks5_parse_request(bind, sizeof(bind), &r), 10);
	assert_int_equal(r.cmd, SOCKS5_CMD_BIND);
}

static void test_socks5_reply(void **state)
{
	uint8_t out[SOCKS5_REPLY_MAX];
	const uint8_t want0[] = { 5, SOCKS5_REP_NOT_ALLOWED, 0, 1, 0, 0, 0, 0, 0, 0 };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(1080) };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(2) };

	assert_int_equal(socks5_format_reply(SOCKS5_REP_NOT_ALLOWED, NULL, out), 10);
	assert_memory_equal(out, want0, 10);
	s4.sin_addr.s_addr = htonl(0x7f000001);
	assert_int_equal(socks5_format_reply(0, (struct sockaddr *)&s4, out), 10);
	assert_int_equal(out[4], 127);
	assert_int_equal(out[8], 1080 >> 8);
	assert_int_equal(out[9], 1080 & 0xff);
	s6.sin6_addr.s6_addr[15] = 1;
	assert_int_equal(socks5_format_reply(0, (struct sockaddr *)&s6, out), 22);
	assert_int_equal(out[3], SOCKS5_ATYP_IPV6);
	assert_int_equal(out[19], 1);
	assert_int_equal(out[21], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socks5_greeting),
		cmocka_unit_test(test_socks5_request_domain),
		cmocka_unit_test(test_socks5_request_addresses),
		cmocka_unit_test(test_socks5_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
