/* HTTP/1.x framing (http-msg.h). */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "net/http-msg.h"

#define TRAILER_MAX (16 * 1024)
#define HEAD_MAX (16 * 1024)

static bool tchar(unsigned char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* A field value's byte: visible, blank, or obs-text; no control. */
static bool vchar(unsigned char ch)
{
	return ch == '\t' || (ch >= 0x20 && ch != 0x7f);
}

bool http_header_is(const HttpHeader *hd, const char *name)
{
	return hd->name_len == strlen(name) && strncasecmp(hd->name, name, hd->name_len) == 0;
}

const HttpHeader *http_msg_header(const HttpHead *h, const char *name)
{
	for (size_t i = 0; i < h->n_headers; i++)
		if (http_header_is(&h->headers[i], name))
			return &h->headers[i];
	return NULL;
}

static bool value_is(const HttpHeader *hd, const char *s)
{
	return hd->value_len == strlen(s) && strncasecmp(hd->value, s, hd->value_len) == 0;
}

/* Whether the comma-separated list in @hd holds @token. */
static bool list_has(const HttpHeader *hd, const char *token)
{
	size_t tl = strlen(token), i = 0;

	while (i < hd->value_len) {
		size_t b, e;
		while (i < hd->value_len && (hd->value[i] == ' ' || hd->value[i] == '\t' || hd->value[i] == ','))
			i++;
		b = i;
		while (i < hd->value_len && hd->value[i] != ',')
			i++;
		e = i;
		while (e > b && (hd->value[e - 1] == ' ' || hd->value[e - 1] == '\t'))
			e--;
		if (e - b == tl && strncasecmp(hd->value + b, token, tl) == 0)
			return true;
	}
	return false;
}

/* Find the head's end; 0 when not there yet, -431 when too large, -400 on
 * a bare CR or LF or a NUL before it. */
static int head_end(const char *buf, size_t len, size_t *end)
{
	size_t lim = len < HEAD_MAX ? len : HEAD_MAX;

	for (size_t i = 0; i < lim; i++) {
		if (buf[i] == '\0')
			return -400;
		if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))
			return -400;
		if (buf[i] == '\r' && i + 1 < len && buf[i + 1] != '\n')
			return -400;
		if (buf[i] == '\n' && i >= 3 && buf[i - 2] == '\n') {
			*end = i + 1;
			return 1;
		}
	}
	return len >= HEAD_MAX ? -431 : 0;
}

/* The header lines from @p to @end (the final CRLF excluded). */
static int parse_headers(const char *p, const char *end, HttpHead *h, const char **why)
{
	h->n_headers = 0;
	while (p < end) {
		const char *le = memchr(p, '\r', (size_t)(end - p)), *c = p;
		HttpHeader *hd;
		if (!le)
			le = end;
		if (h->n_headers == HTTP_MSG_MAX_HEADERS) {
			*why = "too many header fields";
			return -431;
		}
		while (c < le && tchar((unsigned char)*c))
			c++;
		if (c == p || c == le || *c != ':') {
			*why = *p == ' ' || *p == '\t' ? "a folded header line (obs-fold)"
						       : "a malformed header field (name, then ':' with no blank before it)";
			return -400;
		}
		hd = &h->headers[h->n_headers++];
		hd->name = p;
		hd->name_len = (size_t)(c - p);
		c++;
		while (c < le && (*c == ' ' || *c == '\t'))
			c++;
		hd->value = c;
		for (; c < le; c++)
			if (!vchar((unsigned char)*c)) {
				*why = "a control character in a header value";
				return -400;
			}
		while (c > hd->value && (c[-1] == ' ' || c[-1] == '\t'))
			c--;
		hd->value_len = (size_t)(c - hd->value);
		p = le + 2;
	}
	return 0;
}

static int parse_length(const HttpHeader *hd, uint64_t *out)
{
	uint64_t v = 0;

	if (hd->value_len == 0 || hd->value_len > 18)
		return -1;
	for (size_t i = 0; i < hd->value_len; i++) {
		if (hd->value[i] < '0' || hd->value[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(hd->value[i] - '0');
	}
	*out = v;
	return 0;
}

/* "HTTP/1.0" or "HTTP/1.1" at @p. */
static int version(const char *p, size_t n)
{
	if (n != 8 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1'))
		return -1;
	return p[7] - '0';
}

/* Connection semantics shared by both directions. */
static void connection(HttpHead *h)
{
	bool ka = false, cl = false;

	for (size_t i = 0; i < h->n_headers; i++)
		if (http_header_is(&h->headers[i], "Connection")) {
			cl = cl || list_has(&h->headers[i], "close");
			ka = ka || list_has(&h->headers[i], "keep-alive");
		}
	h->close = cl || (h->version_minor == 0 && !ka);
}

int http_msg_request(const char *buf, size_t len, HttpHead *h, const char **why)
{
	size_t end = 0, n_cl = 0, n_te = 0;
	const char *le, *sp1, *sp2, *p;
	int r;

	memset(h, 0, sizeof(*h));
	*why = "malformed request";
	r = head_end(buf, len, &end);
	if (r <= 0) {
		if (r == -431)
			*why = "request head larger than 16 KiB";
		return r;
	}
	h->head_len = end;
	le = memchr(buf, '\r', end);
	sp1 = memchr(buf, ' ', (size_t)(le - buf));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(le - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp1 == buf || sp2 == sp1 + 1) {
		*why = "malformed request line";
		return -400;
	}
	for (p = buf; p < sp1; p++)
		if (!tchar((unsigned char)*p)) {
			*why = "malformed method";
			return -400;
		}
	for (p = sp1 + 1; p < sp2; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f) {
			*why = "malformed request target";
			return -400;
		}
	h->method = buf;
	h->method_len = (size_t)(sp1 - buf);
	h->target = sp1 + 1;
	h->target_len = (size_t)(sp2 - sp1 - 1);
	h->version_minor = version(sp2 + 1, (size_t)(le - sp2 - 1));
	if (h->version_minor < 0) {
		*why = "not an HTTP/1.0 or HTTP/1.1 request (the inspector speaks HTTP/1.x only)";
		return -400;
	}
	r = parse_headers(le + 2, buf + end - 2, h, why);
	if (r < 0)
		return r;
	h->body = HTTP_BODY_NONE;
	for (size_t i = 0; i < h->n_headers; i++) {
		const HttpHeader *hd = &h->headers[i];
		if (http_header_is(hd, "Content-Length")) {
			if (++n_cl > 1) {
				*why = "more than one Content-Length";
				return -400;
			}
			if (parse_length(hd, &h->length) < 0) {
				*why = "a Content-Length that is not plain digits";
				return -400;
			}
			h->body = HTTP_BODY_LENGTH;
		} else if (http_header_is(hd, "Transfer-Encoding")) {
			if (++n_te > 1) {
				*why = "more than one Transfer-Encoding";
				return -400;
			}
			if (!value_is(hd, "chunked")) {
				*why = "a Transfer-Encoding other than \"chunked\"";
				return -501;
			}
		} else if (http_header_is(hd, "Expect")) {
			if (!value_is(hd, "100-continue")) {
				*why = "an Expect other than 100-continue";
				return -417;
			}
			h->expect_continue = true;
		} else if (http_header_is(hd, "Host") && http_msg_header(h, "Host") != hd) {
			*why = "more than one Host";
			return -400;
		}
	}
	if (n_te) {
		if (n_cl) {
			*why = "both Content-Length and Transfer-Encoding";
			return -400;
		}
		if (h->version_minor == 0) {
			*why = "Transfer-Encoding in an HTTP/1.0 request";
			return -400;
		}
		h->body = HTTP_BODY_CHUNKED;
	}
	if (h->body == HTTP_BODY_LENGTH && h->length == 0)
		h->body = HTTP_BODY_NONE;
	connection(h);
	return 1;
}

int http_msg_response(const char *buf, size_t len, bool head_request, HttpHead *h, const char **why)
{
	size_t end = 0;
	const char *le;
	bool cl = false, te = false;
	int r;

	memset(h, 0, sizeof(*h));
	*why = "malformed response from the upstream";
	r = head_end(buf, len, &end);
	if (r <= 0)
		return r == 0 ? 0 : -502;
	h->head_len = end;
	le = memchr(buf, '\r', end);
	if ((size_t)(le - buf) < 12 || (h->version_minor = version(buf, 8)) < 0 || buf[8] != ' ' ||
	    buf[9] < '1' || buf[9] > '5' || buf[10] < '0' || buf[10] > '9' || buf[11] < '0' || buf[11] > '9' ||
	    ((size_t)(le - buf) > 12 && buf[12] != ' '))
		return -502;
	for (const char *p = buf + 12; p < le; p++)
		if (!vchar((unsigned char)*p))
			return -502;
	h->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	r = parse_headers(le + 2, buf + end - 2, h, why);
	if (r < 0)
		return -502;
	connection(h);
	h->body = HTTP_BODY_CLOSE;
	for (size_t i = 0; i < h->n_headers; i++) {
		const HttpHeader *hd = &h->headers[i];
		uint64_t v;
		if (http_header_is(hd, "Content-Length")) {
			if (parse_length(hd, &v) < 0 || (cl && v != h->length)) {
				*why = "the upstream's Content-Length is malformed";
				return -502;
			}
			cl = true;
			h->length = v;
		} else if (http_header_is(hd, "Transfer-Encoding")) {
			/* chunked must be last; anything else reads until close. */
			te = true;
			h->body = hd->value_len >= 7 &&
						  strncasecmp(hd->value + hd->value_len - 7, "chunked", 7) == 0 &&
						  (hd->value_len == 7 || hd->value[hd->value_len - 8] == ',' ||
						   hd->value[hd->value_len - 8] == ' ')
					  ? HTTP_BODY_CHUNKED
					  : HTTP_BODY_CLOSE;
		}
	}
	if (te && cl)
		h->close = true; /* RFC 9112 6.3: chunked wins, and the connection ends */
	else if (cl)
		h->body = HTTP_BODY_LENGTH;
	if (h->status < 200 || h->status == 204 || h->status == 304 || head_request)
		h->body = HTTP_BODY_NONE;
	if (h->status == 101)
		h->close = true;
	if (h->body == HTTP_BODY_LENGTH && h->length == 0)
		h->body = HTTP_BODY_NONE;
	if (h->body == HTTP_BODY_CLOSE)
		h->close = true;
	return 1;
}

enum { CK_SIZE, CK_EXT, CK_SIZE_LF, CK_DATA, CK_DATA_CR, CK_DATA_LF, CK_TRAILER_START, CK_TRAILER, CK_TRAILER_LF,
       CK_END_LF, CK_DONE };

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int http_chunked_feed(HttpChunked *c, const char *in, size_t n, size_t *used, size_t *data_off, size_t *data_len)
{
	size_t i = 0;

	*data_off = *data_len = 0;
	while (i < n) {
		char ch = in[i];
		switch (c->state) {
		case CK_SIZE:
			if (hexval(ch) >= 0) {
				if (++c->digits > 15)
					return -EBADMSG;
				c->left = c->left * 16 + (uint64_t)hexval(ch);
			} else if (c->digits && ch == ';')
				c->state = CK_EXT;
			else if (c->digits && ch == '\r')
				c->state = CK_SIZE_LF;
			else
				return -EBADMSG;
			i++;
			break;
		case CK_EXT: /* extensions are passed over; no control but HTAB */
			if (ch == '\r')
				c->state = CK_SIZE_LF;
			else if (!vchar((unsigned char)ch))
				return -EBADMSG;
			i++;
			break;
		case CK_SIZE_LF:
			if (ch != '\n')
				return -EBADMSG;
			i++;
			c->digits = 0;
			c->state = c->left ? CK_DATA : CK_TRAILER_START;
			break;
		case CK_DATA: {
			size_t k = n - i;
			if ((uint64_t)k > c->left)
				k = (size_t)c->left;
			c->left -= k;
			if (c->left == 0)
				c->state = CK_DATA_CR;
			*data_off = i;
			*data_len = k;
			*used = i + k;
			return 0;
		}
		case CK_DATA_CR:
			if (ch != '\r')
				return -EBADMSG;
			c->state = CK_DATA_LF;
			i++;
			break;
		case CK_DATA_LF:
			if (ch != '\n')
				return -EBADMSG;
			c->state = CK_SIZE;
			i++;
			break;
		case CK_TRAILER_START:
			c->state = ch == '\r' ? CK_END_LF : CK_TRAILER;
			if (ch != '\r' && !tchar((unsigned char)ch))
				return -EBADMSG;
			i++;
			break;
		case CK_TRAILER:
			if (++c->trailer > TRAILER_MAX)
				return -EBADMSG;
			if (ch == '\r')
				c->state = CK_TRAILER_LF;
			else if (!vchar((unsigned char)ch))
				return -EBADMSG;
			i++;
			break;
		case CK_TRAILER_LF:
			if (ch != '\n')
				return -EBADMSG;
			c->state = CK_TRAILER_START;
			i++;
			break;
		case CK_END_LF:
			if (ch != '\n')
				return -EBADMSG;
			c->state = CK_DONE;
			*used = i + 1;
			return 1;
		default:
			return -EBADMSG;
		}
	}
	*used = i;
	return 0;
}
