/* The inspector (inspect.h). Blocking I/O in a thread per connection, with
 * the proxy's idle timeout on every read and write. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/http-msg.h"
#include "net/http-parse.h"
#include "net/inspect.h"
#include "net/net-rules.h"
#include "net/ossl.h"
#include "net/tls-ca.h"

#define INSPECT_MAX_THREADS 256
#define MAX_HEADERS 128

static atomic_int n_threads;

/* Input is buffered: a head, its body and the next request may arrive in
 * one read. */
#define IN_CAP (HTTP_HEAD_MAX + 65536)
/* Bytes a body is relayed in, with a tail held back for the scans. */
#define CHUNK 65536

typedef struct Stream {
	int fd;
	SSL *ssl;
	const char *prefix; /* bytes read before (plain streams) */
	size_t prefix_len, prefix_off;
	char *in; /* IN_CAP bytes */
	size_t in_off, in_len;
} Stream;

typedef struct Ctx {
	InspectJob *job;
	const NetRules *rules;
	Stream c, u;
	char verdict[8];
	char why[800];
	uint64_t up, down;
	int64_t start_ms;
	unsigned requests;
	char method[32];
	char path[512];
	bool credential_used;
	/* What of a secret an answer could echo (the secret, a Basic pair's
	 * encoding): masked in the answer. */
	char *needles[8];
	size_t n_needles;
} Ctx;

static void add_needle(Ctx *x, const char *s)
{
	if (x->n_needles < 8 && s && strlen(s) >= 4)
		x->needles[x->n_needles++] = strdup(s);
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static ssize_t s_read(Stream *s, char *buf, size_t n)
{
	if (s->prefix_off < s->prefix_len) {
		size_t k = s->prefix_len - s->prefix_off;
		if (k > n)
			k = n;
		memcpy(buf, s->prefix + s->prefix_off, k);
		s->prefix_off += k;
		return (ssize_t)k;
	}
	if (s->ssl) {
		size_t got = 0;
		if (SSL_read_ex(s->ssl, buf, n, &got) == 1)
			return (ssize_t)got;
		int e = SSL_get_error(s->ssl, 0);
		return e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
	}
	for (;;) {
		ssize_t k = recv(s->fd, buf, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		return k;
	}
}

static int s_write(Stream *s, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t k;
		if (s->ssl) {
			size_t w = 0;
			if (SSL_write_ex(s->ssl, buf, n, &w) != 1)
				return -EIO;
			k = (ssize_t)w;
		} else {
			k = send(s->fd, buf, n, MSG_NOSIGNAL);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return -EIO;
		}
		buf += k;
		n -= (size_t)k;
	}
	return 0;
}

/* OpenSSL reads the client's first bytes (a ClientHello the capture
 * already read) from a BIO that serves them before the socket's. */
static BIO *prefixed_bio(int fd, const char *prefix, size_t len)
{
	BIO *sock = BIO_new_socket(fd, BIO_NOCLOSE);
	BIO *mem, *chain;

	if (!sock || len == 0)
		return sock;
	/* A buffering BIO primed with the prefix in front of the socket. */
	chain = BIO_new(BIO_f_buffer());
	if (!chain) {
		BIO_free(sock);
		return NULL;
	}
	if (BIO_set_buffer_read_data(chain, (void *)prefix, (long)len) != 1) {
		BIO_free(chain);
		BIO_free(sock);
		return NULL;
	}
	mem = BIO_push(chain, sock);
	return mem;
}

static void audit_event(Ctx *x, const char *event, cJSON *o)
{
	if (!x->job->audit || !o) {
		cJSON_Delete(o);
		return;
	}
	cJSON_AddStringToObject(o, "host", x->job->host);
	cJSON_AddNumberToObject(o, "port", x->job->port);
	if (x->job->program)
		cJSON_AddStringToObject(o, "program", x->job->program);
	(void)audit_write(x->job->audit, event, o);
}

/* A refused request: 403 with the reason, and a net-request event. */
static void refuse(Ctx *x, int status, const char *why)
{
	char page[2048], line[1200];
	int n;
	cJSON *o = cJSON_CreateObject();

	snprintf(line, sizeof(line), "ward: refused %s %s to %s (%s)", x->method, x->path, x->job->host, why);
	n = http_format_error(status, line, page, sizeof(page));
	if (n > 0)
		(void)s_write(&x->c, page, (size_t)n);
	snprintf(x->verdict, sizeof(x->verdict), "deny");
	snprintf(x->why, sizeof(x->why), "%s", why);
	if (o) {
		cJSON_AddStringToObject(o, "method", x->method);
		cJSON_AddStringToObject(o, "path", x->path);
		cJSON_AddStringToObject(o, "verdict", "deny");
		cJSON_AddStringToObject(o, "rule", why);
	}
	audit_event(x, "net-request", o);
}

typedef struct Header {
	const char *name, *value;
	size_t name_len, value_len;
	char *replaced; /* a rewritten value (owned) */
	bool drop;
} Header;

static bool hname(const Header *h, const char *name)
{
	return h->name_len == strlen(name) && strncasecmp(h->name, name, h->name_len) == 0;
}

static bool contains(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	return k <= n && memmem(s, n, needle, k) != NULL;
}

/* The credential whose placeholder @s holds, from index @from on. */
static const NetCredential *placeholder_in(const NetRules *r, const char *s, size_t n, size_t *idx)
{
	for (size_t i = 0; r && i < r->n_creds; i++)
		if (contains(s, n, r->creds[i].placeholder)) {
			*idx = i;
			return &r->creds[i];
		}
	return NULL;
}

static bool cred_applies(const NetCredential *c, const char *host, const char *path)
{
	return strcmp(c->host, host) == 0 && (!c->path || net_path_within(path, c->path));
}

static char *b64(const char *in, size_t n)
{
	char *out = malloc(4 * ((n + 2) / 3) + 1);
	if (out)
		EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)in, (int)n);
	return out;
}

/* Decode "Basic X" into @out (NUL-terminated); false when it is not. */
static bool basic_decode(const char *v, size_t n, char *out, size_t outsz)
{
	size_t o = 0;
	int k;

	while (o < n && (v[o] == ' ' || v[o] == '\t'))
		o++;
	if (n - o < 6 || strncasecmp(v + o, "basic ", 6) != 0)
		return false;
	o += 6;
	while (o < n && v[o] == ' ')
		o++;
	while (n > o && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if ((n - o) / 4 * 3 + 1 > outsz || (n - o) % 4)
		return false;
	k = EVP_DecodeBlock((unsigned char *)out, (const unsigned char *)v + o, (int)(n - o));
	if (k < 0)
		return false;
	while (k > 0 && n > o && v[--n] == '=')
		k--;
	out[k] = '\0';
	return true;
}

/* Swap the placeholder in header @h for credential @c's secret, in the
 * form the credential says; false if @h is not where it goes. */
static bool swap(Header *h, const NetCredential *c, const char *decoded)
{
	char *v = NULL;

	switch (c->as) {
	case CRED_AS_BEARER:
		if (!hname(h, "Authorization") || asprintf(&v, "Bearer %s", c->secret) < 0)
			return false;
		break;
	case CRED_AS_BASIC: {
		const char *colon = decoded ? strchr(decoded, ':') : NULL;
		char *pair = NULL, *enc;
		if (!hname(h, "Authorization") || !colon || strcmp(colon + 1, c->placeholder) != 0)
			return false;
		if (asprintf(&pair, "%.*s:%s", c->username ? (int)strlen(c->username) : (int)(colon - decoded),
			     c->username ? c->username : decoded, c->secret) < 0)
			return false;
		enc = b64(pair, strlen(pair));
		OPENSSL_cleanse(pair, strlen(pair));
		free(pair);
		if (!enc || asprintf(&v, "Basic %s", enc) < 0) {
			free(enc);
			return false;
		}
		OPENSSL_cleanse(enc, strlen(enc));
		free(enc);
		break;
	}
	case CRED_AS_HEADER: {
		const char *at;
		size_t pl = strlen(c->placeholder);
		if (!hname(h, c->header))
			return false;
		at = memmem(h->value, h->value_len, c->placeholder, pl);
		if (!at || asprintf(&v, "%.*s%s%.*s", (int)(at - h->value), h->value, c->secret,
				    (int)(h->value_len - (size_t)(at - h->value) - pl), at + pl) < 0)
			return false;
		break;
	}
	}
	free(h->replaced);
	h->replaced = v;
	return true;
}

/* Read more client or upstream bytes into @s's buffer: >0 read, 0 at EOF
 * (or the buffer full), -1 on error. */
static ssize_t s_fill(Stream *s)
{
	ssize_t k;

	if (s->in_off == s->in_len)
		s->in_off = s->in_len = 0;
	if (s->in_off > 0 && s->in_len == IN_CAP) {
		memmove(s->in, s->in + s->in_off, s->in_len - s->in_off);
		s->in_len -= s->in_off;
		s->in_off = 0;
	}
	if (s->in_len == IN_CAP)
		return 0;
	k = s_read(s, s->in + s->in_len, IN_CAP - s->in_len);
	if (k > 0)
		s->in_len += (size_t)k;
	return k;
}

static size_t s_avail(const Stream *s)
{
	return s->in_len - s->in_off;
}

/* Paths that prefix rules could misread: dot segments, encoded dots,
 * slashes or backslashes. Refused where a rule or a credential looks at
 * the path. */
static bool ambiguous_path(const char *p)
{
	size_t n = strcspn(p, "?");
	char seg[8];

	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\')
			return true;
		if (p[i] == '%' && i + 2 < n + 1) {
			snprintf(seg, sizeof(seg), "%.3s", p + i);
			if (!strcasecmp(seg, "%2e") || !strcasecmp(seg, "%2f") || !strcasecmp(seg, "%5c"))
				return true;
		}
		if (p[i] == '/' && p[i + 1] == '.' &&
		    (p[i + 2] == '/' || i + 2 == n || (p[i + 2] == '.' && (p[i + 3] == '/' || i + 3 == n))))
			return true;
	}
	return false;
}

/* Whether @s holds the placeholder of a credential that does not apply to
 * this host and path (every credential is looked at, not the first). */
static bool foreign_placeholder(Ctx *x, const char *s, size_t n)
{
	const NetRules *r = x->rules;

	for (size_t i = 0; r && i < r->n_creds; i++)
		if (contains(s, n, r->creds[i].placeholder) && !cred_applies(&r->creds[i], x->job->host, x->path))
			return true;
	return false;
}

/* A body on its way, in either direction: request bodies are checked for
 * a placeholder bound elsewhere, answers have any secret the requests
 * carried masked. The last bytes are held back until more come, so what
 * is split across reads (or chunks) is seen whole. Chunked bodies are
 * decoded and sent on as chunks of ward's own. */
typedef struct Out {
	Stream *dst;
	bool request, chunked;
	char *buf;
	size_t held, hold;
	uint64_t *count;
} Out;

static int out_send(Ctx *x, Out *o, size_t n)
{
	char line[24];
	int k;

	if (!n)
		return 0;
	if (o->chunked) {
		k = snprintf(line, sizeof(line), "%zx\r\n", n);
		if (s_write(o->dst, line, (size_t)k) < 0)
			return -EIO;
	}
	if (s_write(o->dst, o->buf, n) < 0 || (o->chunked && s_write(o->dst, "\r\n", 2) < 0))
		return -EIO;
	*o->count += n;
	memmove(o->buf, o->buf + n, o->held - n);
	o->held -= n;
	(void)x;
	return 0;
}

static void mask(Ctx *x, char *b, size_t n)
{
	for (size_t i = 0; i < x->n_needles; i++) {
		const char *nd = x->needles[i];
		size_t nl = nd ? strlen(nd) : 0;
		char *at = b;
		while (nl && (at = memmem(at, n - (size_t)(at - b), nd, nl))) {
			memset(at, 'x', nl);
			at += nl;
		}
	}
}

static int out_put(Ctx *x, Out *o, const char *data, size_t n)
{
	/* An answer with nothing to mask goes on as it came. */
	if (!o->request && o->hold == 0 && o->held == 0 && !o->chunked && n > 0) {
		if (s_write(o->dst, data, n) < 0)
			return -EIO;
		*o->count += n;
		return 0;
	}
	while (n > 0) {
		size_t k = n > CHUNK ? CHUNK : n;
		memcpy(o->buf + o->held, data, k);
		o->held += k;
		data += k;
		n -= k;
		if (o->request && foreign_placeholder(x, o->buf, o->held)) {
			refuse(x, 403, "the body carries a credential placeholder bound to another host");
			return -EPERM;
		}
		if (!o->request)
			mask(x, o->buf, o->held);
		if (o->held > o->hold && out_send(x, o, o->held - o->hold) < 0)
			return -EIO;
	}
	return 0;
}

static int out_end(Ctx *x, Out *o)
{
	if (out_send(x, o, o->held) < 0)
		return -EIO;
	if (o->chunked && s_write(o->dst, "0\r\n\r\n", 5) < 0)
		return -EIO;
	return 0;
}

/* Relay the body framed by @h from @src through @o. 0, or -errno (the
 * connection ends). */
static int relay_body(Ctx *x, Stream *src, const HttpHead *h, Out *o)
{
	uint64_t left = h->length;
	HttpChunked ck = { 0 };
	int r;

	if (h->body == HTTP_BODY_NONE)
		return 0;
	for (;;) {
		if (s_avail(src) == 0) {
			ssize_t k = s_fill(src);
			if (k < 0 && h->body != HTTP_BODY_CLOSE)
				return -EIO;
			if (k <= 0) {
				if (h->body != HTTP_BODY_CLOSE)
					return -EPIPE; /* the body ended early */
				return out_end(x, o);
			}
		}
		const char *p = src->in + src->in_off;
		size_t n = s_avail(src), used = 0, off = 0, dl = 0;
		if (h->body == HTTP_BODY_LENGTH) {
			if ((uint64_t)n > left)
				n = (size_t)left;
			src->in_off += n;
			left -= n;
			if (out_put(x, o, p, n) < 0)
				return -EIO;
			if (left == 0)
				return out_end(x, o);
		} else if (h->body == HTTP_BODY_CLOSE) {
			src->in_off += n;
			if (out_put(x, o, p, n) < 0)
				return -EIO;
		} else {
			r = http_chunked_feed(&ck, p, n, &used, &off, &dl);
			src->in_off += used;
			if (r < 0)
				return -EBADMSG;
			if (dl && out_put(x, o, p + off, dl) < 0)
				return -EIO;
			if (r == 1)
				return out_end(x, o);
		}
	}
}

/* Read a head from @s with @parse into @h: 1, 0 when the stream ended
 * before any byte of it, or the parser's negative status (-400 and such;
 * -EPIPE for a stream that ended within a head). */
static int read_head(Stream *s, bool request, bool head_request, HttpHead *h, const char **why)
{
	for (;;) {
		int r = request ? http_msg_request(s->in + s->in_off, s_avail(s), h, why)
				: http_msg_response(s->in + s->in_off, s_avail(s), head_request, h, why);
		ssize_t k;
		if (r != 0)
			return r;
		if (s->in_off > 0) {
			memmove(s->in, s->in + s->in_off, s_avail(s));
			s->in_len -= s->in_off;
			s->in_off = 0;
		}
		k = s_fill(s);
		if (k <= 0) {
			*why = "the connection ended within a head";
			return s_avail(s) == 0 && k == 0 ? 0 : -EPIPE;
		}
	}
}

/* The target as origin form ("/path"): an absolute form ("http://host/x")
 * must name the connection's host and port. NULL with *why when not. */
static const char *origin_target(Ctx *x, const HttpHead *h, size_t *len, const char **why)
{
	const char *t = h->target, *auth, *slash;
	size_t n = h->target_len, al;
	char hn[NET_HOST_MAX];
	unsigned port;

	if (n && t[0] == '/') {
		*len = n;
		return t;
	}
	if (n > 7 && strncasecmp(t, "http://", 7) == 0)
		auth = t + 7, port = 80;
	else if (n > 8 && strncasecmp(t, "https://", 8) == 0)
		auth = t + 8, port = 443;
	else {
		*why = "expected an origin-form target (\"/path\")";
		return NULL;
	}
	slash = memchr(auth, '/', n - (size_t)(auth - t));
	al = slash ? (size_t)(slash - auth) : n - (size_t)(auth - t);
	{
		const char *colon = NULL, *rb = al && auth[0] == '[' ? memchr(auth, ']', al) : NULL;
		size_t hl = al;
		colon = memchr(rb ? rb : auth, ':', al - (size_t)((rb ? rb : auth) - auth));
		if (colon) {
			char *e;
			unsigned long v = strtoul(colon + 1, &e, 10);
			if (e != auth + al || v == 0 || v > 65535) {
				*why = "a malformed port in the request target";
				return NULL;
			}
			port = (unsigned)v;
			hl = (size_t)(colon - auth);
		}
		if (memchr(auth, '@', al) || net_normalize_host(auth, hl, hn) < 0 || strcmp(hn, x->job->host) != 0 ||
		    port != x->job->port) {
			*why = "the request target names another host or port than the connection's";
			return NULL;
		}
	}
	*len = slash ? n - (size_t)(slash - t) : 1;
	return slash ? slash : "/";
}

/* The upstream's answer to the request just sent: interim answers, the
 * head, the body. 1 when the connection can take another request. */
static int relay_answer(Ctx *x, bool head_request, bool close)
{
	HttpHead h;
	const char *why = NULL;
	size_t hold = 0;
	Out o = { .dst = &x->c, .count = &x->down };
	char *out = NULL;
	size_t out_len = 0;
	FILE *f;
	int r;

	for (;;) {
		r = read_head(&x->u, false, head_request, &h, &why);
		if (r <= 0) {
			snprintf(x->why, sizeof(x->why), "tls inspection: %s",
				 r == 0 ? "the upstream closed without an answer" : why);
			return 0;
		}
		if (h.status >= 200 || h.status == 101)
			break;
		/* An interim answer (100 Continue and such): on as it is. */
		mask(x, x->u.in + x->u.in_off, h.head_len);
		if (s_write(&x->c, x->u.in + x->u.in_off, h.head_len) < 0)
			return 0;
		x->down += h.head_len;
		x->u.in_off += h.head_len;
	}
	close = close || h.close;
	f = open_memstream(&out, &out_len);
	if (!f)
		return 0;
	{
		const char *line = x->u.in + x->u.in_off;
		fprintf(f, "%.*s\r\n", (int)((const char *)memchr(line, '\r', h.head_len) - line), line);
	}
	for (size_t i = 0; i < h.n_headers; i++) {
		const HttpHeader *hd = &h.headers[i];
		if (http_header_is(hd, "Connection") || http_header_is(hd, "Keep-Alive") ||
		    http_header_is(hd, "Proxy-Connection") ||
		    (h.body == HTTP_BODY_CHUNKED && http_header_is(hd, "Content-Length")))
			continue;
		fprintf(f, "%.*s: %.*s\r\n", (int)hd->name_len, hd->name, (int)hd->value_len, hd->value);
	}
	fputs(close ? "Connection: close\r\n\r\n" : "\r\n", f);
	fclose(f);
	x->u.in_off += h.head_len;
	mask(x, out, out_len);
	r = out && s_write(&x->c, out, out_len) == 0;
	free(out);
	if (!r)
		return 0;
	x->down += out_len;
	for (size_t i = 0; i < x->n_needles; i++)
		if (x->needles[i] && strlen(x->needles[i]) > hold)
			hold = strlen(x->needles[i]);
	o.hold = hold;
	o.chunked = h.body == HTTP_BODY_CHUNKED;
	o.buf = malloc(CHUNK + hold);
	if (!o.buf)
		return 0;
	r = relay_body(x, &x->u, &h, &o);
	free(o.buf);
	if (r < 0) {
		if (!x->why[0])
			snprintf(x->why, sizeof(x->why), "tls inspection: the upstream's answer ended early or was malformed");
		return 0;
	}
	return !close && h.status != 101;
}

/* One request of the connection: read, check, forward, relay its answer.
 * 1 when the connection goes on with the next request, 0 when it ends. */
static int handle_request(Ctx *x)
{
	InspectJob *j = x->job;
	const NetRules *r = x->rules;
	HttpHead *h = malloc(sizeof(*h));
	Header hs[HTTP_MSG_MAX_HEADERS];
	size_t nh = 0, idx, tlen;
	const char *target, *perr = NULL;
	char *out = NULL;
	size_t out_len = 0;
	FILE *f;
	char why[512];
	const char *deny;
	Out o = { .dst = &x->u, .request = true, .hold = NET_PLACEHOLDER_LEN, .count = &x->up };
	int hr, ret = 0;

	memset(hs, 0, sizeof(hs));
	if (!h)
		return 0;
	snprintf(x->method, sizeof(x->method), "?");
	snprintf(x->path, sizeof(x->path), "?");
	hr = read_head(&x->c, true, false, h, &perr);
	if (hr == 0 && x->c.ssl && x->requests == 0)
		snprintf(x->why, sizeof(x->why),
			 "tls inspection: the client closed after the handshake without a request (a "
			 "client that pins the server's key closes here)");
	if (hr == -EPIPE && x->requests == 0)
		snprintf(x->why, sizeof(x->why), "the client closed within a request head");
	if (hr == -EPIPE || hr == 0)
		goto done;
	if (hr < 0) {
		if (h->method_len && h->method_len < sizeof(x->method))
			snprintf(x->method, sizeof(x->method), "%.*s", (int)h->method_len, h->method);
		refuse(x, -hr, perr);
		goto done;
	}
	if (h->method_len >= sizeof(x->method)) {
		refuse(x, 400, "a method longer than 31 bytes");
		goto done;
	}
	snprintf(x->method, sizeof(x->method), "%.*s", (int)h->method_len, h->method);
	target = origin_target(x, h, &tlen, &perr);
	if (!target) {
		refuse(x, strstr(perr, "another host") ? 403 : 400, perr);
		goto done;
	}
	if (tlen >= sizeof(x->path)) {
		refuse(x, 400, "a request target longer than 511 bytes");
		goto done;
	}
	snprintf(x->path, sizeof(x->path), "%.*s", (int)tlen, target);
	x->requests++;
	nh = h->n_headers;
	for (size_t i = 0; i < nh; i++) {
		hs[i].name = h->headers[i].name;
		hs[i].name_len = h->headers[i].name_len;
		hs[i].value = h->headers[i].value;
		hs[i].value_len = h->headers[i].value_len;
	}
	/* The Host header, when there is one, names the host connected to. */
	for (size_t i = 0; i < nh; i++)
		if (hname(&hs[i], "Host")) {
			char hn[NET_HOST_MAX];
			const char *v = hs[i].value;
			size_t vl = hs[i].value_len, hlen = vl;
			if (vl && v[0] == '[') {
				const char *rb = memchr(v, ']', vl);
				hlen = rb ? (size_t)(rb - v + 1) : vl;
			} else if (memchr(v, ':', vl))
				hlen = (size_t)((const char *)memchr(v, ':', vl) - v);
			if (net_normalize_host(v, hlen, hn) < 0 || strcmp(hn, j->host) != 0) {
				refuse(x, 403, "the Host header names another host than the connection's");
				goto done;
			}
		}
	/* Request rules. */
	if ((deny = net_rules_check_request(r, j->host, x->method, x->path, why, sizeof(why)))) {
		refuse(x, 403, deny);
		goto done;
	}
	/* Placeholders: swapped where they belong, refused elsewhere. */
	if (foreign_placeholder(x, x->path, strlen(x->path))) {
		refuse(x, 403, "the target carries a credential placeholder bound to another host or path");
		goto done;
	}
	for (size_t i = 0; i < nh; i++) {
		char decoded[HTTP_HEAD_MAX];
		bool dec = basic_decode(hs[i].value, hs[i].value_len, decoded, sizeof(decoded));
		const NetCredential *c = placeholder_in(r, hs[i].value, hs[i].value_len, &idx);
		if (!c && dec)
			c = placeholder_in(r, decoded, strlen(decoded), &idx);
		if (!c)
			continue;
		if (!j->tls) {
			refuse(x, 403, "a credential goes over verified TLS only (network.inspect)");
			goto done;
		}
		if (!cred_applies(c, j->host, x->path) || foreign_placeholder(x, hs[i].value, hs[i].value_len) ||
		    (dec && foreign_placeholder(x, decoded, strlen(decoded)))) {
			snprintf(why, sizeof(why), "the credential placeholder of %s goes to %s%s only",
				 c->env, c->host, c->path ? c->path : "");
			refuse(x, 403, why);
			goto done;
		}
		if (ambiguous_path(x->path) && c->path) {
			refuse(x, 403, "a path with dot segments or encoded separators gets no credential");
			goto done;
		}
		if (!swap(&hs[i], c, dec ? decoded : NULL)) {
			snprintf(why, sizeof(why),
				 "the credential placeholder of %s is not where network.credentials presents it",
				 c->env);
			refuse(x, 403, why);
			goto done;
		}
		x->credential_used = true;
		add_needle(x, c->secret);
		if (c->as == CRED_AS_BASIC && hs[i].replaced)
			add_needle(x, hs[i].replaced + 6);
		{
			cJSON *ev = cJSON_CreateObject();
			if (ev) {
				cJSON_AddStringToObject(ev, "method", x->method);
				cJSON_AddStringToObject(ev, "path", x->path);
				cJSON_AddStringToObject(ev, "credential", c->env);
			}
			audit_event(x, "net-credential", ev);
		}
	}
	if (r && r->n_rules > 0 && ambiguous_path(x->path)) {
		for (size_t i = 0; i < r->n_rules; i++)
			if (net_host_pattern_covers(r->rules[i].host, j->host) && r->rules[i].paths && r->rules[i].paths[0]) {
				refuse(x, 403, "a path with dot segments or encoded separators is refused where "
					       "network.requests names paths");
				goto done;
			}
	}
	/* Hop-by-hop headers and the framing: ward states the framing itself
	 * (the body is re-framed as it is relayed). Upgrade is not passed on:
	 * what would follow could not be read. */
	for (size_t i = 0; i < nh; i++)
		if (hname(&hs[i], "Connection") || hname(&hs[i], "Keep-Alive") || hname(&hs[i], "Proxy-Connection") ||
		    hname(&hs[i], "Proxy-Authorization") || hname(&hs[i], "Content-Length") ||
		    hname(&hs[i], "Transfer-Encoding") || hname(&hs[i], "TE") || hname(&hs[i], "Upgrade") ||
		    hname(&hs[i], "Expect") || hname(&hs[i], "Trailer"))
			hs[i].drop = true;
	f = open_memstream(&out, &out_len);
	if (!f)
		goto done;
	fprintf(f, "%s %s HTTP/1.1\r\n", x->method, x->path);
	for (size_t i = 0; i < nh; i++) {
		if (hs[i].drop)
			continue;
		fprintf(f, "%.*s: ", (int)hs[i].name_len, hs[i].name);
		if (hs[i].replaced)
			fputs(hs[i].replaced, f);
		else
			fwrite(hs[i].value, 1, hs[i].value_len, f);
		fputs("\r\n", f);
	}
	if (h->body == HTTP_BODY_LENGTH)
		fprintf(f, "Content-Length: %llu\r\n", (unsigned long long)h->length);
	else if (h->body == HTTP_BODY_CHUNKED)
		fputs("Transfer-Encoding: chunked\r\n", f);
	fputs(h->close ? "Connection: close\r\n\r\n" : "\r\n", f);
	fclose(f);
	x->c.in_off += h->head_len;
	/* The client waits for 100 Continue before its body: checked, it may
	 * send it (the upstream is not asked, its answer comes after). */
	if (h->expect_continue && h->body != HTTP_BODY_NONE &&
	    s_write(&x->c, "HTTP/1.1 100 Continue\r\n\r\n", 25) < 0)
		goto done;
	if (!out || s_write(&x->u, out, out_len) < 0) {
		snprintf(x->why, sizeof(x->why), "upstream closed");
		goto done;
	}
	x->up += out_len;
	o.chunked = h->body == HTTP_BODY_CHUNKED;
	o.buf = malloc(CHUNK + o.hold);
	if (!o.buf)
		goto done;
	hr = relay_body(x, &x->c, h, &o);
	if (hr < 0) {
		if (hr == -EBADMSG)
			refuse(x, 400, "a malformed chunked body");
		else if (!x->why[0])
			snprintf(x->why, sizeof(x->why), "the client's body ended early");
		goto done;
	}
	ret = relay_answer(x, h->method_len == 4 && memcmp(h->method, "HEAD", 4) == 0, h->close);
done:
	free(o.buf);
	if (out) {
		OPENSSL_cleanse(out, out_len);
		free(out);
	}
	for (size_t i = 0; i < nh; i++)
		if (hs[i].replaced) {
			OPENSSL_cleanse(hs[i].replaced, strlen(hs[i].replaced));
			free(hs[i].replaced);
		}
	free(h);
	return ret;
}

/* Request after request, while both sides keep the connection. */
static void handle_requests(Ctx *x)
{
	x->c.in = malloc(IN_CAP);
	x->u.in = malloc(IN_CAP);
	if (x->c.in && x->u.in)
		while (handle_request(x) == 1)
			;
	free(x->c.in);
	free(x->u.in);
	x->c.in = x->u.in = NULL;
}

static const char *tls_reason(void)
{
	unsigned long e = ERR_peek_last_error();
	const char *s = e ? ERR_reason_error_string(e) : NULL;
	return s ? s : "connection closed";
}

static void serve(Ctx *x)
{
	InspectJob *j = x->job;
	TlsCa *ca = x->rules->ca;
	struct timeval tv = { .tv_sec = j->idle_ms / 1000, .tv_usec = (j->idle_ms % 1000) * 1000 };

	for (int i = 0; i < 2; i++) {
		int fd = i ? j->ufd : j->cfd;
		int fl = fcntl(fd, F_GETFL);
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	x->c.fd = j->cfd;
	x->u.fd = j->ufd;
	if (j->reply_len && s_write(&x->c, j->reply, j->reply_len) < 0)
		return;
	if (!j->tls) {
		x->c.prefix = j->prefix;
		x->c.prefix_len = j->prefix_len;
		handle_requests(x);
		return;
	}
	x->c.ssl = SSL_new(tls_ca_server_ctx(ca));
	x->u.ssl = SSL_new(tls_ca_client_ctx(ca));
	if (!x->c.ssl || !x->u.ssl || tls_ca_use_leaf(ca, x->c.ssl, j->host) < 0) {
		snprintf(x->why, sizeof(x->why), "tls inspection: out of resources");
		return;
	}
	{
		BIO *b = prefixed_bio(j->cfd, j->prefix, j->prefix_len);
		if (!b) {
			snprintf(x->why, sizeof(x->why), "tls inspection: out of resources");
			return;
		}
		/* Writes go to the socket straight: a buffering BIO would hold
		 * an answer back until the connection ends. */
		BIO *w = BIO_new_socket(j->cfd, BIO_NOCLOSE);
		if (!w) {
			BIO_free_all(b);
			snprintf(x->why, sizeof(x->why), "tls inspection: out of resources");
			return;
		}
		SSL_set_bio(x->c.ssl, b, w);
	}
	ERR_clear_error();
	if (SSL_accept(x->c.ssl) != 1) {
		snprintf(x->why, sizeof(x->why),
			 "tls inspection: the client refused the run's certificate for %s or failed its "
			 "handshake (%s); a client that pins certificates cannot be inspected",
			 j->host, tls_reason());
		snprintf(x->verdict, sizeof(x->verdict), "error");
		SSL_free(x->c.ssl);
		x->c.ssl = NULL;
		return;
	}
	SSL_set_fd(x->u.ssl, j->ufd);
	SSL_set_tlsext_host_name(x->u.ssl, j->host);
	{
		X509_VERIFY_PARAM *vp = SSL_get0_param(x->u.ssl);
		X509_VERIFY_PARAM_set_hostflags(vp, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
		if (X509_VERIFY_PARAM_set1_ip_asc(vp, j->host) != 1 && X509_VERIFY_PARAM_set1_host(vp, j->host, 0) != 1) {
			snprintf(x->why, sizeof(x->why), "tls inspection: bad host name");
			return;
		}
	}
	ERR_clear_error();
	if (SSL_connect(x->u.ssl) != 1) {
		long v = SSL_get_verify_result(x->u.ssl);
		char line[900];
		snprintf(x->why, sizeof(x->why), "tls inspection: the upstream %s failed verification (%s)", j->host,
			 v != X509_V_OK ? X509_verify_cert_error_string(v) : tls_reason());
		snprintf(x->verdict, sizeof(x->verdict), "error");
		snprintf(line, sizeof(line), "ward: %s", x->why);
		{
			char page[1200];
			int n = http_format_error(502, line, page, sizeof(page));
			if (n > 0)
				(void)s_write(&x->c, page, (size_t)n);
		}
		SSL_free(x->u.ssl);
		x->u.ssl = NULL;
		return;
	}
	handle_requests(x);
}

static void *thread_main(void *arg)
{
	InspectJob *j = arg;
	Ctx x = { .job = j, .rules = net_rules_current(), .start_ms = now_ms() };
	cJSON *o;

	snprintf(x.verdict, sizeof(x.verdict), "allow");
	serve(&x);
	for (size_t i = 0; i < x.n_needles; i++)
		if (x.needles[i]) {
			OPENSSL_cleanse(x.needles[i], strlen(x.needles[i]));
			free(x.needles[i]);
		}
	for (int i = 0; i < 2; i++) {
		SSL *s = i ? x.u.ssl : x.c.ssl;
		if (s) {
			(void)SSL_shutdown(s);
			SSL_free(s);
		}
	}
	o = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "kind", j->kind);
		cJSON_AddStringToObject(o, "address", j->address);
		cJSON_AddStringToObject(o, "verdict", x.verdict);
		cJSON_AddStringToObject(o, "rule", x.why[0] ? x.why : j->rule);
		cJSON_AddBoolToObject(o, "inspected", j->tls);
		cJSON_AddNumberToObject(o, "requests", x.requests);
		if (x.credential_used)
			cJSON_AddBoolToObject(o, "credential", true);
		cJSON_AddNumberToObject(o, "bytes_up", (double)x.up);
		cJSON_AddNumberToObject(o, "bytes_down", (double)x.down);
		cJSON_AddNumberToObject(o, "duration_ms", (double)(now_ms() - x.start_ms));
	}
	audit_event(&x, "net", o);
	close(j->cfd);
	close(j->ufd);
	free(j->prefix);
	free(j->reply);
	free(j);
	ERR_clear_error();
	atomic_fetch_sub(&n_threads, 1);
	return NULL;
}

int inspect_start(InspectJob *job)
{
	pthread_attr_t a;
	pthread_t t;
	int r;

	if (atomic_fetch_add(&n_threads, 1) >= INSPECT_MAX_THREADS) {
		atomic_fetch_sub(&n_threads, 1);
		return -EAGAIN;
	}
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 512 * 1024);
	r = pthread_create(&t, &a, thread_main, job);
	pthread_attr_destroy(&a);
	if (r != 0) {
		atomic_fetch_sub(&n_threads, 1);
		return -r;
	}
	return 0;
}
