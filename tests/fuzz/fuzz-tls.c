/* Fuzz target: a captured connection's first bytes, classified as the
 * capture path does (TLS ClientHello reassembly and SNI, HTTP head and
 * Host, anything else), and the ClientHello parser on its own. */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/capture-sniff.h"
#include "net/tls-hello.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *reason = NULL;
	SniffResult s;
	TlsHello h;
	int r;

	if (size > 64 * 1024)
		return 0;
	r = tls_parse_client_hello(data, size, &h, &reason);
	assert(r == 0 || r == 1 || r == -EBADMSG || r == -E2BIG);
	if (r == -EBADMSG)
		assert(reason != NULL);
	if (r == 1) {
		assert(h.len <= size);
		assert(memchr(h.sni, 0, sizeof(h.sni)) != NULL);
		assert(!h.has_sni || h.sni[0]);
	}
	/* Half of it first, as a slow client sends it, then all of it. */
	r = sniff_client_bytes(data, size / 2, &s, &reason);
	assert(r == 0 || r == 1 || r == -EBADMSG || r == -E2BIG);
	r = sniff_client_bytes(data, size, &s, &reason);
	assert(r == 0 || r == 1 || r == -EBADMSG || r == -E2BIG);
	if (r == 1) {
		assert(s.kind >= 0 && s.kind < _SNIFF_KIND_MAX);
		assert(memchr(s.name, 0, sizeof(s.name)) != NULL);
		if (s.kind == SNIFF_HTTP) {
			char *out = NULL;
			size_t n = 0;
			assert(s.name[0] && s.head_len >= 4 && s.head_len <= size);
			assert(sniff_http_close_head((const char *)data, &s, &out, &n) == 0);
			assert(n <= s.head_len + 32 && memcmp(out + n - 4, "\r\n\r\n", 4) == 0);
			free(out);
		}
	}
	return 0;
}
