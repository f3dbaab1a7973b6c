/* Fuzz target: the SOCKS5 greeting and CONNECT request parsers, fed the
 * way the proxy feeds them (greeting first, the request after it). */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "net/socks5.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Socks5Request req;
	uint8_t reply[SOCKS5_REPLY_MAX];
	bool noauth = false;
	int g, r;

	if (size > 64 * 1024)
		return 0;
	g = socks5_parse_greeting(data, size, &noauth);
	if (g <= 0)
		return 0;
	assert((size_t)g <= size && g <= SOCKS5_GREETING_MAX);
	r = socks5_parse_request(data + g, size - (size_t)g, &req);
	if (r <= 0)
		return 0;
	assert((size_t)r == req.len && req.len <= SOCKS5_REQUEST_MAX);
	assert(req.port != 0);
	assert(memchr(req.host, 0, sizeof(req.host)) != NULL && req.host[0]);
	(void)socks5_format_reply(SOCKS5_REP_SUCCEEDED, NULL, reply);
	return 0;
}
