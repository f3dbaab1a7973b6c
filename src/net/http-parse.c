/* HTTP/1.x request-head parsing for the proxy. Strict on purpose: anything a
 * front end and a back end could read differently (obs-fold, bare CR, space
 * before ':', two Host headers, userinfo in the URI) is refused with 400. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/http-parse.h"

static bool tchar(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c);
}

/* The end of the head: index just past the empty line, or 0. */
static size_t find_head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* Next line in [*pos, end): sets *line and *n without the line ending. Returns
 * -EBADMSG on a bare CR or a NUL. */
static int next_line(const char *buf, size_t end, size_t *pos, const char **line, size_t *n)
{
	size_t s = *pos, i = s;

	while (i < end && buf[i] != '\n')
		i++;
	if (i >= end)
		return -EBADMSG;
	*pos = i + 1;
	if (i > s && buf[i - 1] == '\r')
		i--;
	for (size_t k = s; k < i; k++)
		if (buf[k] == '\r' || buf[k] == 0)
			return -EBADMSG;
	*line = buf + s;
	*n = i - s;
	return 0;
}

/* "host", "host:port", "[v6]", "[v6]:port". *port = -1 when absent. */
static int parse_authority(const char *s, size_t n, char host[NET_HOST_MAX], bool *literal, int *port)
{
	const char *colon = NULL;
	size_t hn;
	int r;

	if (n == 0)
		return -EBADMSG;
	if (s[0] == '[') {
		const char *rb = memchr(s, ']', n);
		if (!rb)
			return -EBADMSG;
		if ((size_t)(rb - s) + 1 < n) {
			if (rb[1] != ':')
				return -EBADMSG;
			colon = rb + 1;
		}
	} else {
		colon = memchr(s, ':', n);
		if (colon && memchr(colon + 1, ':', n - (size_t)(colon + 1 - s)))
			return -EBADMSG; /* bare IPv6 needs brackets here */
	}
	hn = colon ? (size_t)(colon - s) : n;
	*port = -1;
	if (colon) {
		size_t pn = n - hn - 1;
		long p = 0;
		if (pn == 0 || pn > 5)
			return -EBADMSG;
		for (size_t i = 0; i < pn; i++) {
			if (colon[1 + i] < '0' || colon[1 + i] > '9')
				return -EBADMSG;
			p = p * 10 + (colon[1 + i] - '0');
		}
		if (p < 1 || p > 65535)
			return -EBADMSG;
		*port = (int)p;
	}
	r = net_normalize_host(s, hn, host);
	if (r < 0)
		return -EBADMSG;
	*literal = r == 1;
	return 0;
}

static bool lower_prefix(const char *s, size_t n, const char *p)
{
	size_t pl = strlen(p);
	return n >= pl && strncasecmp(s, p, pl) == 0;
}

static int parse_request_line(const char *l, size_t n, const char *buf, HttpRequest *ret,
			      const char **reason)
{
	const char *sp1, *sp2, *target, *ver;
	size_t tn, vn;
	int port, r;

	sp1 = memchr(l, ' ', n);
	if (!sp1 || sp1 == l)
		return *reason = "malformed request line", -EBADMSG;
	for (const char *p = l; p < sp1; p++)
		if (!tchar((unsigned char)*p))
			return *reason = "malformed method", -EBADMSG;
	target = sp1 + 1;
	sp2 = memchr(target, ' ', n - (size_t)(target - l));
	if (!sp2 || sp2 == target)
		return *reason = "malformed request line", -EBADMSG;
	tn = (size_t)(sp2 - target);
	ver = sp2 + 1;
	vn = n - (size_t)(ver - l);
	if (vn != 8 || memcmp(ver, "HTTP/1.", 7) != 0 || (ver[7] != '0' && ver[7] != '1'))
		return *reason = "unsupported HTTP version", -EBADMSG;
	ret->version_minor = ver[7] - '0';
	for (size_t i = 0; i < tn; i++)
		if ((unsigned char)target[i] <= 0x20 || (unsigned char)target[i] >= 0x7f)
			return *reason = "malformed request target", -EBADMSG;
	ret->method_len = (size_t)(sp1 - l);

	if (ret->method_len == 7 && memcmp(l, "CONNECT", 7) == 0) {
		ret->kind = HTTP_KIND_CONNECT;
		r = parse_authority(target, tn, ret->host, &ret->literal, &port);
		if (r < 0 || port < 0)
			return *reason = "CONNECT needs host:port", -EBADMSG;
		ret->port = (uint16_t)port;
		return 0;
	}

	ret->kind = HTTP_KIND_FORWARD;
	if (!lower_prefix(target, tn, "http://")) {
		if (target[0] == '/' || memmem(target, tn, "://", 3))
			return *reason = "only CONNECT and absolute http:// requests are proxied",
			       -EPROTONOSUPPORT;
		return *reason = "malformed request target", -EBADMSG;
	}
	const char *auth = target + 7, *aend = auth, *tend = target + tn;
	while (aend < tend && *aend != '/' && *aend != '?' && *aend != '#')
		aend++;
	if (memchr(auth, '@', (size_t)(aend - auth)))
		return *reason = "userinfo in the request target", -EBADMSG;
	r = parse_authority(auth, (size_t)(aend - auth), ret->host, &ret->literal, &port);
	if (r < 0)
		return *reason = "malformed host in the request target", -EBADMSG;
	ret->port = port < 0 ? 80 : (uint16_t)port;
	const char *frag = memchr(aend, '#', (size_t)(tend - aend));
	ret->path_off = (size_t)(aend - buf);
	ret->path_len = (size_t)((frag ? frag : tend) - aend);
	return 0;
}

static int check_host_header(const char *v, size_t vn, HttpRequest *ret, const char **reason)
{
	char host[NET_HOST_MAX];
	bool literal;
	int port;

	if (parse_authority(v, vn, host, &literal, &port) < 0)
		return *reason = "malformed Host header", -EBADMSG;
	if (strcmp(host, ret->host) != 0)
		return *reason = "Host header does not match the request target", -EPERM;
	/* CONNECT's Host may leave out the port; an absolute URI's may only when
	 * it is the default 80. */
	if (port < 0 ? (ret->kind == HTTP_KIND_FORWARD && ret->port != 80) : port != ret->port)
		return *reason = "Host header port does not match the request target", -EPERM;
	return 0;
}

int http_parse_head(const char *buf, size_t len, HttpRequest *ret, const char **reterr_reason)
{
	HttpRequest req = { 0 };
	const char *dummy, *line;
	const char **reason = reterr_reason ? reterr_reason : &dummy;
	size_t end, pos = 0, n;
	int r;

	*reason = NULL;
	if (len > HTTP_HEAD_MAX)
		len = HTTP_HEAD_MAX;
	/* Fail early on what cannot become a request line (a TLS ClientHello
	 * sent to the HTTP port), instead of waiting for 16 KiB or the timeout. */
	for (size_t i = 0; i < len && buf[i] != '\n' && buf[i] != '\r'; i++)
		if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f)
			return *reason = "malformed request line", -EBADMSG;
	end = find_head_end(buf, len);
	if (end == 0) {
		if (len >= HTTP_HEAD_MAX)
			return *reason = "request head too large", -E2BIG;
		return 0;
	}
	req.head_len = end;

	r = next_line(buf, end, &pos, &line, &n);
	if (r < 0)
		return *reason = "malformed request line", r;
	r = parse_request_line(line, n, buf, &req, reason);
	if (r < 0)
		return r;

	for (;;) {
		const char *colon, *v, *ve;

		r = next_line(buf, end, &pos, &line, &n);
		if (r < 0)
			return *reason = "malformed header line", r;
		if (n == 0)
			break;
		if (line[0] == ' ' || line[0] == '\t')
			return *reason = "obsolete header line folding", -EBADMSG;
		colon = memchr(line, ':', n);
		if (!colon || colon == line)
			return *reason = "malformed header line", -EBADMSG;
		for (const char *p = line; p < colon; p++)
			if (!tchar((unsigned char)*p))
				return *reason = "malformed header name", -EBADMSG;
		v = colon + 1;
		ve = line + n;
		for (const char *p = v; p < ve; p++)
			if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
				return *reason = "control character in a header value", -EBADMSG;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		if (colon - line == 4 && strncasecmp(line, "host", 4) == 0) {
			if (req.has_host)
				return *reason = "more than one Host header", -EBADMSG;
			req.has_host = true;
			r = check_host_header(v, (size_t)(ve - v), &req, reason);
			if (r == -EPERM)
				*ret = req; /* the target, for the refusal's text */
			if (r < 0)
				return r;
		}
	}
	*ret = req;
	return 1;
}

static bool hop_header(const char *line, size_t n)
{
	static const char *const names[] = { "proxy-connection", "proxy-authorization", "connection",
					     "keep-alive" };
	const char *colon = memchr(line, ':', n);

	if (!colon)
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((size_t)(colon - line) == strlen(names[i]) && strncasecmp(line, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

int http_build_forward_head(const char *buf, const HttpRequest *req, char **ret, size_t *ret_len)
{
	/* Each LF-only line may grow by a CR; the additions are bounded. */
	size_t cap = 2 * req->head_len + NET_HOST_MAX + 64, o = 0, pos = 0, n;
	const char *line;
	char *out;
	int w;

	if (req->kind != HTTP_KIND_FORWARD)
		return -EINVAL;
	out = malloc(cap);
	if (!out)
		return -ENOMEM;
	memcpy(out, buf, req->method_len);
	o = req->method_len;
	out[o++] = ' ';
	if (req->path_len == 0 || buf[req->path_off] != '/')
		out[o++] = '/';
	memcpy(out + o, buf + req->path_off, req->path_len);
	o += req->path_len;
	w = snprintf(out + o, cap - o, " HTTP/1.%d\r\n", req->version_minor);
	o += (size_t)w;

	(void)next_line(buf, req->head_len, &pos, &line, &n); /* request line */
	while (next_line(buf, req->head_len, &pos, &line, &n) == 0 && n > 0) {
		if (hop_header(line, n))
			continue;
		memcpy(out + o, line, n);
		o += n;
		out[o++] = '\r';
		out[o++] = '\n';
	}
	if (!req->has_host) {
		bool v6 = strchr(req->host, ':');
		if (req->port == 80)
			w = snprintf(out + o, cap - o, "Host: %s%s%s\r\n", v6 ? "[" : "", req->host, v6 ? "]" : "");
		else
			w = snprintf(out + o, cap - o, "Host: %s%s%s:%u\r\n", v6 ? "[" : "", req->host,
				     v6 ? "]" : "", req->port);
		o += (size_t)w;
	}
	w = snprintf(out + o, cap - o, "Connection: close\r\n\r\n");
	o += (size_t)w;
	*ret = out;
	*ret_len = o;
	return 0;
}

static const char *status_text(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 417: return "Expectation Failed";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Error";
	}
}

int http_format_error(int status, const char *body, char *out, size_t outsz)
{
	int n = snprintf(out, outsz,
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n%s\n",
			 status, status_text(status), strlen(body) + 1, body);
	if (n < 0 || (size_t)n >= outsz)
		return -ENOBUFS;
	return n;
}
