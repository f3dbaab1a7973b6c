/* Fuzz target: the inspector's HTTP/1.x framing (http-msg.c): request
 * heads, response heads and the chunked decoder, each over the same input,
 * with the invariants the inspector relies on. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "net/http-msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *why = NULL;
	HttpHead h;
	HttpChunked c = { 0 };
	size_t off = 0;
	int r;

	if (size > 64 * 1024)
		return 0;
	r = http_msg_request(s, size, &h, &why);
	if (r < 0)
		assert(why && (r == -400 || r == -417 || r == -431 || r == -501));
	if (r == 1) {
		assert(h.head_len <= size && h.head_len >= 4 && memcmp(s + h.head_len - 4, "\r\n\r\n", 4) == 0);
		assert(h.method_len > 0 && h.target_len > 0);
		assert(h.body != HTTP_BODY_CLOSE);
		/* No byte of a head the inspector forwards is a control but HTAB. */
		for (size_t i = 0; i < h.n_headers; i++)
			for (size_t k = 0; k < h.headers[i].value_len; k++)
				assert((unsigned char)h.headers[i].value[k] >= 0x20 || h.headers[i].value[k] == '\t');
		/* A complete head parses the same from a longer buffer's prefix. */
		{
			HttpHead h2;
			assert(http_msg_request(s, h.head_len, &h2, &why) == 1 && h2.head_len == h.head_len);
		}
	}
	r = http_msg_response(s, size, false, &h, &why);
	if (r == 1) {
		assert(h.head_len <= size && h.status >= 100 && h.status <= 599);
		assert(h.body != HTTP_BODY_CLOSE || h.close);
	}
	/* The chunked decoder over the input fed in two pieces: what it takes
	 * is within what it was given, data lies within what it took. */
	while (off < size) {
		size_t used = 0, doff = 0, dl = 0, lim = size - off > 7 ? (size - off) / 2 + 1 : size - off;
		r = http_chunked_feed(&c, s + off, lim, &used, &doff, &dl);
		if (r < 0)
			break;
		assert(used <= lim && doff + dl <= used);
		off += used;
		if (r == 1 || used == 0)
			break;
	}
	return 0;
}
