/* Unit tests for src/net/tls-hello.c (ClientHello and SNI) and
 * src/net/capture-sniff.c (what a captured connection's first bytes are). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "net/capture-sniff.h"
#include "net/tls-hello.h"

static size_t put16(uint8_t *b, size_t n, size_t v)
{
	b[n] = (uint8_t)(v >> 8);
	b[n + 1] = (uint8_t)v;
	return n + 2;
}

/* A ClientHello with @exts (@elen bytes of extensions) in @nrec records. */
static size_t hello(uint8_t *out, const uint8_t *exts, size_t elen, int nrec)
{
	uint8_t m[4096];
	size_t n = 4, o = 0, per;

	m[n++] = 3;
	m[n++] = 3;
	memset(m + n, 0x11, 32); /* random */
	n += 32;
	m[n++] = 0;              /* session id */
	n = put16(m, n, 2);
	m[n++] = 0x13;
	m[n++] = 0x01;
	m[n++] = 1;
	m[n++] = 0;              /* compression: null */
	if (exts) {
		n = put16(m, n, elen);
		memcpy(m + n, exts, elen);
		n += elen;
	}
	m[0] = 1;
	m[1] = 0;
	m[2] = (uint8_t)((n - 4) >> 8);
	m[3] = (uint8_t)(n - 4);
	per = (n + (size_t)nrec - 1) / (size_t)nrec;
	for (size_t done = 0; done < n; done += per) {
		size_t k = n - done < per ? n - done : per;
		out[o++] = 0x16;
		out[o++] = 3;
		out[o++] = 1;
		o = put16(out, o, k);
		memcpy(out + o, m + done, k);
		o += k;
	}
	return o;
}

static size_t sni_ext(uint8_t *e, size_t n, const char *name)
{
	size_t l = strlen(name);

	n = put16(e, n, 0);         /* server_name */
	n = put16(e, n, l + 5);
	n = put16(e, n, l + 3);     /* list */
	e[n++] = 0;                 /* host_name */
	n = put16(e, n, l);
	memcpy(e + n, name, l);
	return n + l;
}

static void test_sni(void **state)
{
	uint8_t e[512], b[8192];
	const char *why = NULL;
	TlsHello h;
	size_t en = sni_ext(e, 0, "Secure.Test"), n;

	en = put16(e, en, 0x000a); /* another extension around it */
	en = put16(e, en, 2);
	en = put16(e, en, 0x001d);
	for (int nrec = 1; nrec <= 3; nrec++) {
		n = hello(b, e, en, nrec);
		assert_int_equal(tls_parse_client_hello(b, n, &h, &why), 1);
		assert_true(h.has_sni);
		assert_string_equal(h.sni, "Secure.Test");
		assert_false(h.has_ech);
		assert_int_equal(h.len, n);
		/* Every prefix asks for more. */
		for (size_t i = 0; i < n; i++)
			assert_int_equal(tls_parse_client_hello(b, i, &h, &why), 0);
	}
}

static void test_malformed(void **state)
{
	uint8_t e[512], b[8192];
	const char *why = NULL;
	TlsHello h;
	size_t en, n;

	/* Two server_name extensions. */
	en = sni_ext(e, 0, "a.test");
	en = sni_ext(e, en, "b.test");
	n = hello(b, e, en, 1);
	assert_int_equal(tls_parse_client_hello(b, n, &h, &why), -EBADMSG);
	assert_non_null(why);
	/* A NUL inside the host name. */
	en = sni_ext(e, 0, "a.test");
	e[9] = 0;
	n = hello(b, e, en, 1);
	assert_int_equal(tls_parse_client_hello(b, n, &h, &why), -EBADMSG);
	/* An extension longer than what is left. */
	en = sni_ext(e, 0, "a.test");
	e[3] = 0xff;
	n = hello(b, e, en, 1);
	assert_int_equal(tls_parse_client_hello(b, n, &h, &why), -EBADMSG);
	/* Not a ClientHello (a ServerHello type). */
	en = sni_ext(e, 0, "a.test");
	n = hello(b, e, en, 1);
	b[5] = 2;
	assert_int_equal(tls_parse_client_hello(b, n, &h, &why), -EBADMSG);
	/* Another record type (alert). */
	b[5] = 1;
	b[0] = 0x15;
	assert_int_equal(tls_parse_client_hello(b, n, &h, &why), -EBADMSG);
	/* Trailing bytes after the ClientHello within its record. */
	n = hello(b, e, en, 1);
	b[4]++;
	b[n++] = 0;
	assert_int_equal(tls_parse_client_hello(b, n, &h, &why), -EBADMSG);
}

static void test_ech_and_no_sni(void **state)
{
	uint8_t e[512], b[8192];
	const char *why = NULL;
	TlsHello h;
	size_t en, n;

	en = sni_ext(e, 0, "public.test");
	en = put16(e, en, 0xfe0d);
	en = put16(e, en, 1);
	e[en++] = 0;
	n = hello(b, e, en, 1);
	assert_int_equal(tls_parse_client_hello(b, n, &h, &why), 1);
	assert_true(h.has_ech);
	n = hello(b, NULL, 0, 1);
	assert_int_equal(tls_parse_client_hello(b, n, &h, &why), 1);
	assert_false(h.has_sni);
}

static void test_sniff(void **state)
{
	static const char get[] = "GET /x HTTP/1.1\r\nHost: Site.Test:8080\r\nAccept: */*\r\n\r\n";
	const char *why = NULL;
	uint8_t e[512], b[8192];
	SniffResult s;
	size_t n;

	assert_int_equal(sniff_client_bytes((const uint8_t *)get, strlen(get), &s, &why), 1);
	assert_int_equal(s.kind, SNIFF_HTTP);
	assert_string_equal(s.name, "site.test");
	assert_int_equal(s.port, 8080);
	for (size_t i = 0; i < strlen(get); i++)
		assert_int_equal(sniff_client_bytes((const uint8_t *)get, i, &s, &why), 0);
#define BAD(str) assert_int_equal(sniff_client_bytes((const uint8_t *)(str), strlen(str), &s, &why), -EBADMSG)
	BAD("GET / HTTP/1.1\r\n\r\n");                                    /* no Host */
	BAD("GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n");   /* two */
	BAD("GET / HTTP/1.1\r\nHost: a.test\r\n b.test\r\n\r\n");        /* folding */
	BAD("GET http://b.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n");      /* absolute form */
	BAD("GET / HTTP/1.1\r\nHost: a.test:0\r\n\r\n");
	BAD("GET / HTTP/1.1\r\nHost: a.test\nX: y\r\n\r\n");             /* bare LF */
	BAD("GET / HTTP/1.1\r\nHost : a.test\r\n\r\n");                  /* space before ':' */
	BAD("GET / HTTP/2.0\r\nHost: a.test\r\n\r\n");
	BAD("GET / HTTP/1.1\r\nHost: a.test@b.test\r\n\r\n");
	assert_int_equal(sniff_client_bytes((const uint8_t *)"GETS", 4, &s, &why), 1);
	assert_int_equal(s.kind, SNIFF_OTHER);
	assert_int_equal(sniff_client_bytes((const uint8_t *)"SSH-2.0-x\r\n", 11, &s, &why), 1);
	assert_int_equal(s.kind, SNIFF_OTHER);
	assert_int_equal(sniff_client_bytes((const uint8_t *)"PO", 2, &s, &why), 0);
	n = hello(b, e, sni_ext(e, 0, "Secure.Test."), 2);
	assert_int_equal(sniff_client_bytes(b, n, &s, &why), 1);
	assert_int_equal(s.kind, SNIFF_TLS);
	assert_string_equal(s.name, "secure.test");
	n = hello(b, e, sni_ext(e, 0, "bad_name!"), 1);
	assert_int_equal(sniff_client_bytes(b, n, &s, &why), -EBADMSG);
}

static void test_close_head(void **state)
{
	static const char get[] = "GET /a HTTP/1.1\r\nHost: a.test\r\nConnection: keep-alive\r\n"
				  "Keep-Alive: timeout=5\r\nAccept: */*\r\n\r\nGET /b HTTP/1.1\r\n";
	static const char up[] = "GET /ws HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\n"
				 "Upgrade: websocket\r\n\r\n";
	const char *why = NULL;
	SniffResult s;
	char *h = NULL;
	size_t n = 0;

	assert_int_equal(sniff_client_bytes((const uint8_t *)get, strlen(get), &s, &why), 1);
	assert_int_equal(s.head_len, strlen(get) - strlen("GET /b HTTP/1.1\r\n"));
	assert_int_equal(sniff_http_close_head(get, &s, &h, &n), 0);
	assert_int_equal(n, strlen("GET /a HTTP/1.1\r\nHost: a.test\r\nAccept: */*\r\nConnection: close\r\n\r\n"));
	assert_memory_equal(h, "GET /a HTTP/1.1\r\nHost: a.test\r\nAccept: */*\r\nConnection: close\r\n\r\n", n);
	free(h);
	assert_int_equal(sniff_client_bytes((const uint8_t *)up, strlen(up), &s, &why), 1);
	assert_true(s.upgrade);
	assert_int_equal(sniff_http_close_head(up, &s, &h, &n), 0);
	assert_int_equal(n, strlen(up));
	assert_memory_equal(h, up, n);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sni),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_ech_and_no_sni),
		cmocka_unit_test(test_sniff),
		cmocka_unit_test(test_close_head),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
