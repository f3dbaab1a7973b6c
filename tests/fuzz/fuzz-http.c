/* Fuzz target: the HTTP proxy's request-head parser and the origin-form
 * rewrite of what it accepts. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/http-parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	HttpRequest req;
	const char *reason = NULL;
	char *out = NULL;
	size_t n = 0;
	int r;

	if (size > 64 * 1024)
		return 0;
	r = http_parse_head((const char *)data, size, &req, &reason);
	if (r < 0) {
		assert(reason);
		return 0;
	}
	if (r == 0)
		return 0;
	assert(req.head_len <= size && req.head_len <= HTTP_HEAD_MAX);
	assert(req.port > 0);
	if (req.kind == HTTP_KIND_FORWARD) {
		r = http_build_forward_head((const char *)data, &req, &out, &n);
		assert(r == 0);
		assert(n > 4 && memcmp(out + n - 4, "\r\n\r\n", 4) == 0);
		/* The rewrite must parse again, as a request the proxy would send. */
		assert(memchr(out, 0, n) == NULL);
		free(out);
	}
	return 0;
}
