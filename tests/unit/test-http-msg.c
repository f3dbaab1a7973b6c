/* Unit tests for src/net/http-msg.c: the inspector's HTTP/1.x framing,
 * strict where smuggling lives. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "net/http-msg.h"

static int req(const char *s, HttpHead *h)
{
	const char *why = NULL;
	int r = http_msg_request(s, strlen(s), h, &why);
	if (r < 0)
		assert_non_null(why);
	return r;
}

static int resp(const char *s, bool head, HttpHead *h)
{
	const char *why = NULL;
	return http_msg_response(s, strlen(s), head, h, &why);
}

static void test_request_basic(void **state)
{
	HttpHead h;
	const char *s = "GET /a?b HTTP/1.1\r\nHost: api.test\r\nX-Y:  v \r\n\r\nGET /second HTTP/1.1\r\n\r\n";

	(void)state;
	assert_int_equal(req(s, &h), 1);
	assert_int_equal(h.head_len, strlen(s) - strlen("GET /second HTTP/1.1\r\n\r\n"));
	assert_int_equal(h.method_len, 3);
	assert_memory_equal(h.target, "/a?b", 4);
	assert_int_equal(h.target_len, 4);
	assert_int_equal(h.n_headers, 2);
	assert_int_equal(h.headers[1].value_len, 1);
	assert_int_equal(h.body, HTTP_BODY_NONE);
	assert_false(h.close);
	/* The pipelined second request parses from where the first ended. */
	assert_int_equal(req(s + h.head_len, &h), 1);
	assert_memory_equal(h.target, "/second", 7);
	/* Incomplete: more bytes needed. */
	assert_int_equal(req("GET / HTTP/1.1\r\nHost: a", &h), 0);
	assert_int_equal(req("GET / HTTP/1.1\r\n\r", &h), 0);
	assert_int_equal(req("POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n", &h), 1);
	assert_int_equal(h.body, HTTP_BODY_LENGTH);
	assert_int_equal(h.length, 12);
	assert_int_equal(req("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", &h), 1);
	assert_int_equal(h.body, HTTP_BODY_CHUNKED);
	assert_int_equal(req("GET / HTTP/1.0\r\n\r\n", &h), 1);
	assert_true(h.close);
	assert_int_equal(req("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &h), 1);
	assert_false(h.close);
	assert_int_equal(req("GET / HTTP/1.1\r\nConnection: Upgrade, close\r\n\r\n", &h), 1);
	assert_true(h.close);
	assert_int_equal(req("PUT / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n", &h), 1);
	assert_true(h.expect_continue);
}

static void test_request_smuggling(void **state)
{
	HttpHead h;

	(void)state;
	/* Both framings, in either order. */
	assert_int_equal(req("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", &h), -400);
	assert_int_equal(req("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", &h), -400);
	/* Duplicate Content-Length, equal or not, or as a list. */
	assert_int_equal(req("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", &h), -400);
	assert_int_equal(req("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-length: 6\r\n\r\n", &h), -400);
	assert_int_equal(req("POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", &h), -400);
	assert_int_equal(req("POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n", &h), -400);
	assert_int_equal(req("POST / HTTP/1.1\r\nContent-Length: 0x5\r\n\r\n", &h), -400);
	assert_int_equal(req("POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", &h), -400);
	assert_int_equal(req("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", &h), -400);
	/* Transfer codings other than chunked alone; two TE headers. */
	assert_int_equal(req("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", &h), -501);
	assert_int_equal(req("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, identity\r\n\r\n", &h), -501);
	assert_int_equal(req("POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n", &h), -501);
	assert_int_equal(req("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", &h),
			 -400);
	assert_int_equal(req("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", &h), -400);
	/* Header syntax that parsers read differently. */
	assert_int_equal(req("POST / HTTP/1.1\r\nContent-Length : 5\r\n\r\n", &h), -400);
	assert_int_equal(req("POST / HTTP/1.1\r\nX: a\r\n Transfer-Encoding: chunked\r\n\r\n", &h), -400);
	assert_int_equal(req("POST / HTTP/1.1\r\nX: a\nContent-Length: 5\r\n\r\n", &h), -400);
	assert_int_equal(req("POST / HTTP/1.1\r\nX: a\rContent-Length: 5\r\n\r\n", &h), -400);
	assert_int_equal(req("GET / HTTP/1.1\n\n", &h), -400);
	assert_int_equal(req("GET / HTTP/1.1\r\nX: a\x01\r\n\r\n", &h), -400);
	assert_int_equal(http_msg_request("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 25, &h, &(const char *){ 0 }), -400);
	assert_int_equal(req("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", &h), -400);
	assert_int_equal(req("GET / HTTP/1.1\r\nExpect: 200-ok\r\n\r\n", &h), -417);
	/* Request lines. */
	assert_int_equal(req("GET  / HTTP/1.1\r\n\r\n", &h), -400);
	assert_int_equal(req("GET / HTTP/2.0\r\n\r\n", &h), -400);
	assert_int_equal(req("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", &h), -400);
	assert_int_equal(req("G(T / HTTP/1.1\r\n\r\n", &h), -400);
	assert_int_equal(req("GET /a b HTTP/1.1\r\n\r\n", &h), -400);
	assert_int_equal(req("\r\nGET / HTTP/1.1\r\n\r\n", &h), -400);
}

static void test_request_too_large(void **state)
{
	HttpHead h;
	size_t n = 20 * 1024;
	char *s = malloc(n + 1);
	const char *why;

	(void)state;
	memset(s, 'a', n);
	memcpy(s, "GET / HTTP/1.1\r\nX: ", 19);
	s[n] = '\0';
	assert_int_equal(http_msg_request(s, n, &h, &why), -431);
	free(s);
}

static void test_response(void **state)
{
	HttpHead h;

	(void)state;
	assert_int_equal(resp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", false, &h), 1);
	assert_int_equal(h.status, 200);
	assert_int_equal(h.body, HTTP_BODY_LENGTH);
	assert_int_equal(h.length, 3);
	assert_false(h.close);
	assert_int_equal(resp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", true, &h), 1);
	assert_int_equal(h.body, HTTP_BODY_NONE);
	assert_int_equal(resp("HTTP/1.1 204 No Content\r\n\r\n", false, &h), 1);
	assert_int_equal(h.body, HTTP_BODY_NONE);
	assert_false(h.close);
	assert_int_equal(resp("HTTP/1.1 100 Continue\r\n\r\n", false, &h), 1);
	assert_int_equal(h.body, HTTP_BODY_NONE);
	assert_int_equal(resp("HTTP/1.1 200 OK\r\n\r\n", false, &h), 1);
	assert_int_equal(h.body, HTTP_BODY_CLOSE);
	assert_true(h.close);
	assert_int_equal(resp("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", false, &h), 1);
	assert_int_equal(h.body, HTTP_BODY_CHUNKED);
	assert_int_equal(resp("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", false, &h), 1);
	assert_int_equal(h.body, HTTP_BODY_CHUNKED);
	assert_true(h.close);
	assert_int_equal(resp("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", false, &h), 1);
	assert_true(h.close);
	assert_int_equal(resp("HTTP/1.1 200\r\n\r\n", false, &h), 1);
	assert_int_equal(resp("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", false, &h), -502);
	assert_int_equal(resp("HTTP/1.1 2000 OK\r\n\r\n", false, &h), -502);
	assert_int_equal(resp("HTTP/2 200\r\n\r\n", false, &h), -502);
	assert_int_equal(resp("HTTP/1.1 200 OK\r\n", false, &h), 0);
}

/* Decode @s whole, in pieces of @step bytes; the data into @out. */
static int dechunk(const char *s, size_t step, char *out, size_t *out_len, size_t *rest)
{
	HttpChunked c = { 0 };
	size_t n = strlen(s), i = 0;

	*out_len = 0;
	while (i < n) {
		size_t lim = n - i < step ? n - i : step, used, off, dl;
		int r = http_chunked_feed(&c, s + i, lim, &used, &off, &dl);
		if (r < 0)
			return r;
		memcpy(out + *out_len, s + i + off, dl);
		*out_len += dl;
		i += used;
		if (r == 1) {
			*rest = n - i;
			return 1;
		}
	}
	return 0;
}

static void test_chunked(void **state)
{
	char out[256];
	size_t n, rest;

	(void)state;
	for (size_t step = 1; step < 40; step += 7) {
		assert_int_equal(dechunk("5\r\nhello\r\nA;x=y\r\n0123456789\r\n0\r\nT: v\r\n\r\nGET", step, out, &n, &rest), 1);
		assert_int_equal(n, 15);
		assert_memory_equal(out, "hello0123456789", 15);
		assert_int_equal(rest, 3);
	}
	assert_int_equal(dechunk("0\r\n\r\n", 5, out, &n, &rest), 1);
	assert_int_equal(dechunk("5\r\nhel", 100, out, &n, &rest), 0);
	assert_int_equal(dechunk("0x5\r\nhello\r\n0\r\n\r\n", 100, out, &n, &rest), -EBADMSG);
	assert_int_equal(dechunk("+5\r\nhello\r\n0\r\n\r\n", 100, out, &n, &rest), -EBADMSG);
	assert_int_equal(dechunk(" 5\r\nhello\r\n0\r\n\r\n", 100, out, &n, &rest), -EBADMSG);
	assert_int_equal(dechunk("5 \r\nhello\r\n0\r\n\r\n", 100, out, &n, &rest), -EBADMSG);
	assert_int_equal(dechunk("5\nhello\r\n0\r\n\r\n", 100, out, &n, &rest), -EBADMSG);
	assert_int_equal(dechunk("5\r\nhelloX\r\n0\r\n\r\n", 100, out, &n, &rest), -EBADMSG);
	assert_int_equal(dechunk("\r\n", 100, out, &n, &rest), -EBADMSG);
	assert_int_equal(dechunk("1000000000000000\r\n", 100, out, &n, &rest), -EBADMSG);
	assert_int_equal(dechunk("0\r\nT: v\n\r\n", 100, out, &n, &rest), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_basic),   cmocka_unit_test(test_request_smuggling),
		cmocka_unit_test(test_request_too_large), cmocka_unit_test(test_response),
		cmocka_unit_test(test_chunked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
