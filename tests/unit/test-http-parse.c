/* Unit tests for src/net/http-parse.c: the proxy's request-head parser. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "net/http-parse.h"

static int parse(const char *s, HttpRequest *r, const char **reason)
{
	return http_parse_head(s, strlen(s), r, reason);
}

static void test_http_parse_connect(void **state)
{
	HttpRequest r;
	const char *reason;
	const char *s = "CONNECT GitHub.com:443 HTTP/1.1\r\nHost: github.com:443\r\nUser-Agent: x\r\n\r\nTLS";

	assert_int_equal(parse(s, &r, &reason), 1);
	assert_int_equal(r.kind, HTTP_KIND_CONNECT);
	assert_string_equal(r.host, "github.com");
	assert_int_equal(r.port, 443);
	assert_false(r.literal);
	assert_int_equal(r.head_len, strlen(s) - 3);

	assert_int_equal(parse("CONNECT [2001:db8::1]:22 HTTP/1.1\r\n\r\n", &r, &reason), 1);
	assert_string_equal(r.host, "2001:db8::1");
	assert_true(r.literal);
	assert_int_equal(r.port, 22);
	/* LF-only line endings are accepted. */
	assert_int_equal(parse("CONNECT a.test:443 HTTP/1.0\nHost: a.test\n\n", &r, &reason), 1);
}

static void test_http_parse_connect_malformed(void **state)
{
	HttpRequest r;
	const char *reason;

	assert_int_equal(parse("CONNECT github.com HTTP/1.1\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("CONNECT github.com:0 HTTP/1.1\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("CONNECT github.com:65536 HTTP/1.1\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("CONNECT ::1:443 HTTP/1.1\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("CONNECT  github.com:443 HTTP/1.1\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("CONNECT github.com:443 HTTP/2.0\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("CONNECT 127.1:443 HTTP/1.1\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("\x16\x03\x01\x02\x00", &r, &reason), -EBADMSG);
}

static void test_http_parse_need_more_and_too_large(void **state)
{
	HttpRequest r;
	const char *reason;
	char *big;

	assert_int_equal(parse("", &r, &reason), 0);
	assert_int_equal(parse("CONNECT github.com:443 HTTP/1.1\r\n", &r, &reason), 0);
	assert_int_equal(parse("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n", &r, &reason), 0);
	big = malloc(HTTP_HEAD_MAX + 10);
	assert_non_null(big);
	memset(big, 'a', HTTP_HEAD_MAX + 9);
	memcpy(big, "GET http://a.test/ HTTP/1.1\r\nX: ", 32);
	big[HTTP_HEAD_MAX + 9] = 0;
	assert_int_equal(parse(big, &r, &reason), -E2BIG);
	assert_string_equal(reason, "request head too large");
	free(big);
}

static void test_http_parse_forward(void **state)
{
	HttpRequest r;
	const char *reason;
	char *out = NULL;
	size_t n;
	const char *s = "GET http://Example.test:8080/a/b?c=d#frag HTTP/1.1\r\n"
			"Host: example.test:8080\r\nProxy-Connection: keep-alive\r\n"
			"Proxy-Authorization: Basic x\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n";

	assert_int_equal(parse(s, &r, &reason), 1);
	assert_int_equal(r.kind, HTTP_KIND_FORWARD);
	assert_string_equal(r.host, "example.test");
	assert_int_equal(r.port, 8080);
	assert_int_equal(http_build_forward_head(s, &r, &out, &n), 0);
	assert_int_equal(n, strlen(out));
	assert_string_equal(out, "GET /a/b?c=d HTTP/1.1\r\nHost: example.test:8080\r\nAccept: */*\r\n"
				 "Connection: close\r\n\r\n");
	free(out);

	/* No Host header: added; empty path becomes "/"; query-only path. */
	s = "HEAD http://a.test?x=1 HTTP/1.0\r\n\r\n";
	assert_int_equal(parse(s, &r, &reason), 1);
	assert_int_equal(r.port, 80);
	assert_int_equal(http_build_forward_head(s, &r, &out, &n), 0);
	assert_string_equal(out, "HEAD /?x=1 HTTP/1.0\r\nHost: a.test\r\nConnection: close\r\n\r\n");
	free(out);

	s = "GET http://[2001:db8::1]:81 HTTP/1.1\n\n";
	assert_int_equal(parse(s, &r, &reason), 1);
	assert_int_equal(http_build_forward_head(s, &r, &out, &n), 0);
	assert_string_equal(out, "GET / HTTP/1.1\r\nHost: [2001:db8::1]:81\r\nConnection: close\r\n\r\n");
	free(out);
}

static void test_http_parse_host_mismatch(void **state)
{
	HttpRequest r;
	const char *reason;

	assert_int_equal(parse("GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n", &r, &reason), -EPERM);
	assert_string_equal(reason, "Host header does not match the request target");
	assert_int_equal(parse("GET http://a.test/ HTTP/1.1\r\nHost: a.test:81\r\n\r\n", &r, &reason), -EPERM);
	assert_int_equal(parse("GET http://a.test:81/ HTTP/1.1\r\nHost: a.test\r\n\r\n", &r, &reason), -EPERM);
	assert_int_equal(parse("GET http://a.test/ HTTP/1.1\r\nHost: A.TEST:80\r\n\r\n", &r, &reason), 1);
	assert_int_equal(parse("CONNECT a.test:443 HTTP/1.1\r\nHost: b.test:443\r\n\r\n", &r, &reason), -EPERM);
	assert_int_equal(parse("CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:444\r\n\r\n", &r, &reason), -EPERM);
	assert_int_equal(parse("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: a.test\r\n\r\n", &r,
			       &reason), -EBADMSG);
}

static void test_http_parse_refuses_ambiguity(void **state)
{
	HttpRequest r;
	const char *reason;

	assert_int_equal(parse("GET http://a.test@b.test/ HTTP/1.1\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("GET http://a.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("GET http://a.test/ HTTP/1.1\r\nX : a\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("GET http://a.test/ HTTP/1.1\r\nX: a\rb\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("GET http://a.test/ HTTP/1.1\r\nX: a\x01\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("GET http://a.test/ HTTP/1.1\r\nNoColon\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("G(T http://a.test/ HTTP/1.1\r\n\r\n", &r, &reason), -EBADMSG);
	assert_int_equal(parse("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n", &r, &reason), -EPROTONOSUPPORT);
	assert_int_equal(parse("GET https://a.test/ HTTP/1.1\r\n\r\n", &r, &reason), -EPROTONOSUPPORT);
	assert_int_equal(parse("GET ftp://a.test/ HTTP/1.1\r\n\r\n", &r, &reason), -EPROTONOSUPPORT);
	assert_int_equal(parse("GET a.test HTTP/1.1\r\n\r\n", &r, &reason), -EBADMSG);
}

static void test_http_format_error(void **state)
{
	char out[512];
	int n = http_format_error(403, "ward: blocked a.test:443 (not in network.allow)", out, sizeof(out));

	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(out));
	assert_non_null(strstr(out, "HTTP/1.1 403 Forbidden\r\n"));
	assert_non_null(strstr(out, "Content-Length: 48\r\n"));
	assert_non_null(strstr(out, "\r\n\r\nward: blocked a.test:443 (not in network.allow)\n"));
	assert_int_equal(http_format_error(431, "x", out, 10), -ENOBUFS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_parse_connect),
		cmocka_unit_test(test_http_parse_connect_malformed),
		cmocka_unit_test(test_http_parse_need_more_and_too_large),
		cmocka_unit_test(test_http_parse_forward),
		cmocka_unit_test(test_http_parse_host_mismatch),
		cmocka_unit_test(test_http_parse_refuses_ambiguity),
		cmocka_unit_test(test_http_format_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
