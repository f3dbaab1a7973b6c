/* Classification of a captured connection's first bytes. HTTP is
 * recognized by a request line "METHOD SP" with a known method; its head
 * must then be strict (CRLF lines, no folding, exactly one Host, an
 * origin-form target) because the Host it names is what the check is on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/capture-sniff.h"
#include "net/http-parse.h"
#include "net/tls-hello.h"

static const char *const kind_table[_SNIFF_KIND_MAX] = {
	[SNIFF_TLS] = "tls",
	[SNIFF_HTTP] = "http",
	[SNIFF_OTHER] = "other",
};

const char *sniff_kind_to_string(SniffKind k)
{
	return k >= 0 && k < _SNIFF_KIND_MAX ? kind_table[k] : NULL;
}

static const char *const methods[] = {
	"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT",
	"PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "REPORT",
};

/* 1: a known method and a space; 0: could still become one; -1: not HTTP. */
static int http_prefix(const uint8_t *buf, size_t len)
{
	bool maybe = false;

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		size_t ml = strlen(methods[i]);
		size_t k = len < ml + 1 ? len : ml + 1;
		if (memcmp(buf, methods[i], k < ml ? k : ml) != 0)
			continue;
		if (len >= ml + 1 && buf[ml] == ' ')
			return 1;
		if (len < ml + 1)
			maybe = true;
	}
	return maybe ? 0 : -1;
}

static int fail(const char **reason, const char *why)
{
	*reason = why;
	return -EBADMSG;
}

static bool tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("!#$%&'*+-.^_`|~", c);
}

/* "host", "host:port", "[v6]", "[v6]:port" into @ret. */
static int parse_host_value(const char *v, size_t n, SniffResult *ret)
{
	size_t hl = n;
	const char *colon = NULL;
	int lit;

	if (n > 0 && v[0] == '[') {
		const char *close = memchr(v, ']', n);
		if (!close)
			return -EBADMSG;
		hl = (size_t)(close - v) + 1;
		if (hl < n) {
			if (v[hl] != ':')
				return -EBADMSG;
			colon = v + hl;
		}
	} else {
		colon = memchr(v, ':', n);
		if (colon)
			hl = (size_t)(colon - v);
	}
	if (colon) {
		unsigned long port = 0;
		size_t pl = n - (size_t)(colon - v) - 1;
		if (pl == 0 || pl > 5)
			return -EBADMSG;
		for (size_t i = 0; i < pl; i++) {
			if (colon[1 + i] < '0' || colon[1 + i] > '9')
				return -EBADMSG;
			port = port * 10 + (unsigned long)(colon[1 + i] - '0');
		}
		if (port == 0 || port > 65535)
			return -EBADMSG;
		ret->port = (uint16_t)port;
	}
	lit = net_normalize_host(v, hl, ret->name);
	if (lit < 0)
		return -EBADMSG;
	ret->literal = lit == 1;
	return 0;
}

static int sniff_http(const char *b, size_t len, SniffResult *ret, const char **reason)
{
	const char *end = NULL, *line, *eol, *sp1, *sp2;
	int hosts = 0;

	for (size_t i = 0; i + 3 < len && i + 4 <= HTTP_HEAD_MAX; i++)
		if (memcmp(b + i, "\r\n\r\n", 4) == 0) {
			end = b + i + 2; /* the last header line's CRLF included */
			break;
		}
	if (!end)
		return len >= HTTP_HEAD_MAX ? -E2BIG : 0;
	if (memchr(b, '\0', (size_t)(end - b)))
		return fail(reason, "NUL byte in the request head");
	/* Request line: METHOD SP target SP HTTP/1.x */
	eol = memchr(b, '\r', (size_t)(end - b));
	if (!eol || eol[1] != '\n')
		return fail(reason, "malformed request line");
	sp1 = memchr(b, ' ', (size_t)(eol - b));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp2 == sp1 + 1 || (size_t)(eol - sp2 - 1) != 8 ||
	    memcmp(sp2 + 1, "HTTP/1.", 7) != 0 || (sp2[8] != '0' && sp2[8] != '1'))
		return fail(reason, "malformed request line");
	/* Origin form ("/path") or "*": an absolute-form target names a host
	 * of its own, which a server may prefer to the Host header. */
	if (sp1[1] != '/' && !(sp1[1] == '*' && sp2 == sp1 + 2))
		return fail(reason, "request target is not in origin form");
	for (const char *t = sp1 + 1; t < sp2; t++)
		if ((unsigned char)*t <= ' ' || *t == 0x7f)
			return fail(reason, "malformed request target");
	for (line = eol + 2; line < end; line = eol + 2) {
		const char *colon, *v, *ve;

		eol = memchr(line, '\r', (size_t)(end - line));
		if (!eol || eol[1] != '\n' || memchr(line, '\n', (size_t)(eol - line)))
			return fail(reason, "bare CR or LF in the request head");
		if (line[0] == ' ' || line[0] == '\t')
			return fail(reason, "obsolete line folding in the request head");
		colon = memchr(line, ':', (size_t)(eol - line));
		if (!colon || colon == line)
			return fail(reason, "malformed header line");
		for (const char *t = line; t < colon; t++)
			if (!tchar(*t))
				return fail(reason, "malformed header name");
		if (colon - line == 7 && strncasecmp(line, "upgrade", 7) == 0)
			ret->upgrade = true;
		if (colon - line != 4 || strncasecmp(line, "host", 4) != 0)
			continue;
		if (++hosts > 1)
			return fail(reason, "more than one Host header");
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		for (ve = eol; ve > v && (ve[-1] == ' ' || ve[-1] == '\t'); ve--)
			;
		if (parse_host_value(v, (size_t)(ve - v), ret) < 0)
			return fail(reason, "malformed Host header");
	}
	if (hosts == 0)
		return fail(reason, "no Host header");
	ret->kind = SNIFF_HTTP;
	ret->head_len = (size_t)(end - b) + 2;
	return 1;
}

static bool header_is(const char *line, size_t n, const char *name)
{
	size_t l = strlen(name);

	return n > l && line[l] == ':' && strncasecmp(line, name, l) == 0;
}

int sniff_http_close_head(const char *buf, const SniffResult *s, char **ret, size_t *ret_len)
{
	static const char close_hdr[] = "Connection: close\r\n\r\n";
	const char *end = buf + s->head_len - 2, *line = buf;
	char *out, *o;

	if (s->kind != SNIFF_HTTP || s->head_len < 4)
		return -EINVAL;
	out = malloc(s->head_len + sizeof(close_hdr));
	if (!out)
		return -ENOMEM;
	o = out;
	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		size_t n = (size_t)(eol - line) + 1;
		if (s->upgrade || line == buf ||
		    !(header_is(line, n, "connection") || header_is(line, n, "keep-alive") ||
		      header_is(line, n, "proxy-connection"))) {
			memcpy(o, line, n);
			o += n;
		}
		line = eol + 1;
	}
	if (s->upgrade) {
		memcpy(o, "\r\n", 2);
		o += 2;
	} else {
		memcpy(o, close_hdr, sizeof(close_hdr) - 1);
		o += sizeof(close_hdr) - 1;
	}
	*ret = out;
	*ret_len = (size_t)(o - out);
	return 0;
}

int sniff_client_bytes(const uint8_t *buf, size_t len, SniffResult *ret, const char **reterr_reason)
{
	static const char *unused;
	const char **reason = reterr_reason ? reterr_reason : &unused;
	int r;

	memset(ret, 0, sizeof(*ret));
	*reason = NULL;
	if (len == 0)
		return 0;
	if (tls_looks_like_handshake(buf, len)) {
		TlsHello h;
		r = tls_parse_client_hello(buf, len, &h, reason);
		if (r <= 0)
			return r;
		ret->kind = SNIFF_TLS;
		ret->ech = h.has_ech;
		if (h.has_sni) {
			int lit = net_normalize_host(h.sni, strlen(h.sni), ret->name);
			if (lit < 0)
				return fail(reason, "malformed server name in the ClientHello");
			ret->literal = lit == 1;
		}
		return 1;
	}
	r = http_prefix(buf, len);
	if (r == 0)
		return 0;
	if (r < 0) {
		ret->kind = SNIFF_OTHER;
		return 1;
	}
	return sniff_http((const char *)buf, len, ret, reason);
}
