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

#include "net/http-parse.h"
#include "net/inspect.h"
#include "net/net-rules.h"
#include "net/tls-ca.h"

#define INSPECT_MAX_THREADS 256
#define MAX_HEADERS 128

static atomic_int n_threads;

typedef struct Stream {
	int fd;
	SSL *ssl;
	const char *prefix; /* bytes read before (plain streams) */
	size_t prefix_len, prefix_off;
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

/* Read the request head (into @buf, up to HTTP_HEAD_MAX); its length,
 * *total the bytes read. */
static ssize_t read_head(Ctx *x, char *buf, size_t *total)
{
	size_t n = 0;

	for (;;) {
		char *end = n >= 4 ? memmem(buf, n, "\r\n\r\n", 4) : NULL;
		ssize_t k;
		if (end) {
			*total = n;
			return end + 4 - buf;
		}
		if (n >= HTTP_HEAD_MAX)
			return -E2BIG;
		k = s_read(&x->c, buf + n, HTTP_HEAD_MAX - n);
		if (k <= 0)
			return n == 0 ? 0 : -EBADMSG;
		n += (size_t)k;
	}
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

/* Copy the body: @framing -1 none, -2 chunked or unknown (until the client
 * half-closes or the upstream answers and closes), else a length. The
 * bytes are checked for any placeholder (held back by its length, so one
 * split across reads is seen). */
static int relay_body(Ctx *x, const char *pre, size_t pre_len, long long framing)
{
	const NetRules *r = x->rules;
	size_t hold = NET_PLACEHOLDER_LEN, held = 0;
	char buf[65536 + NET_PLACEHOLDER_LEN];
	long long left = framing;
	size_t i;
	ssize_t k;

	if (framing == -1)
		return 0;
	for (bool first = true;; first = false) {
		if (first && pre_len) {
			k = (ssize_t)(pre_len > 65536 ? 65536 : pre_len);
			memcpy(buf + held, pre, (size_t)k);
			pre += k;
			pre_len -= (size_t)k;
			first = pre_len == 0;
		} else {
			size_t want = 65536;
			if (framing >= 0 && (long long)want > left - (long long)held)
				want = (size_t)(left - (long long)held);
			k = want ? s_read(&x->c, buf + held, want) : 0;
			if (k < 0)
				return -EIO;
		}
		held += (size_t)k;
		if (k > 0 && placeholder_in(r, buf, held, &i) && !cred_applies(&r->creds[i], x->job->host, x->path)) {
			refuse(x, 403, "the body carries a credential placeholder bound to another host");
			return -EPERM;
		}
		/* Send all but the tail that could start a placeholder. */
		size_t send_n = k == 0 || (framing >= 0 && (long long)held >= left) ? held : held > hold ? held - hold : 0;
		if (send_n && s_write(&x->u, buf, send_n) < 0)
			return -EIO;
		x->up += send_n;
		memmove(buf, buf + send_n, held - send_n);
		held -= send_n;
		if (framing >= 0) {
			left -= (long long)send_n;
			if (left <= 0)
				return 0;
		}
		if (k == 0 && held == 0)
			return 0;
		if (pre_len)
			first = true;
	}
}

/* The answer, as it comes, until the upstream closes; a secret the
 * request carried is masked if the answer echoes it (the last bytes are
 * held back until the next read, so an echo split across reads is seen). */
static void relay_answer(Ctx *x)
{
	size_t hold = 0, held = 0;
	char *buf;

	for (size_t i = 0; i < x->n_needles; i++)
		if (x->needles[i] && strlen(x->needles[i]) > hold)
			hold = strlen(x->needles[i]);
	buf = malloc(65536 + hold);
	if (!buf)
		return;
	for (;;) {
		ssize_t k = s_read(&x->u, buf + held, 65536);
		size_t send_n;
		if (k < 0)
			k = 0;
		held += (size_t)k;
		for (size_t i = 0; i < x->n_needles; i++) {
			const char *nd = x->needles[i];
			size_t nl = nd ? strlen(nd) : 0;
			char *at = buf;
			while (nl && (at = memmem(at, held - (size_t)(at - buf), nd, nl))) {
				memset(at, 'x', nl);
				at += nl;
			}
		}
		send_n = k == 0 ? held : held > hold ? held - hold : 0;
		if (send_n && s_write(&x->c, buf, send_n) < 0)
			break;
		x->down += send_n;
		memmove(buf, buf + send_n, held - send_n);
		held -= send_n;
		if (k == 0)
			break;
	}
	free(buf);
}

static void handle_request(Ctx *x)
{
	InspectJob *j = x->job;
	const NetRules *r = x->rules;
	char *head = malloc(HTTP_HEAD_MAX + 1);
	Header hs[MAX_HEADERS];
	size_t nh = 0, total = 0, idx;
	ssize_t hl;
	const char *p, *end, *sp1, *sp2, *target;
	size_t tlen;
	long long framing = -1;
	bool chunked = false;
	char *out = NULL;
	size_t out_len = 0;
	FILE *f;
	char why[512];
	const char *deny;
	char *body_pre = NULL;

	memset(hs, 0, sizeof(hs));
	if (!head)
		return;
	snprintf(x->method, sizeof(x->method), "?");
	snprintf(x->path, sizeof(x->path), "?");
	hl = read_head(x, head, &total);
	if (hl == 0 && x->c.ssl)
		snprintf(x->why, sizeof(x->why),
			 "tls inspection: the client closed after the handshake without a request (a "
			 "client that pins the server's key closes here)");
	if (hl <= 0) {
		if (hl < 0)
			refuse(x, hl == -E2BIG ? 431 : 400, "request head too large or malformed");
		goto done;
	}
	/* The body's first bytes follow the head: keep them apart. */
	body_pre = total > (size_t)hl ? malloc(total - (size_t)hl) : NULL;
	if (total > (size_t)hl) {
		if (!body_pre)
			goto done;
		memcpy(body_pre, head + hl, total - (size_t)hl);
	}
	head[hl] = '\0';
	/* Request line. */
	end = strstr(head, "\r\n");
	sp1 = memchr(head, ' ', (size_t)(end - head));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || (size_t)(sp1 - head) >= sizeof(x->method) || strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		refuse(x, 400, "malformed request line");
		goto done;
	}
	snprintf(x->method, sizeof(x->method), "%.*s", (int)(sp1 - head), head);
	target = sp1 + 1;
	tlen = (size_t)(sp2 - target);
	if (tlen > 7 && strncasecmp(target, "http://", 7) == 0) {
		const char *slash = memchr(target + 7, '/', tlen - 7);
		tlen -= slash ? (size_t)(slash - target) : tlen;
		target = slash ? slash : "/";
		if (!slash)
			tlen = 1;
	}
	if (tlen == 0 || target[0] != '/' || tlen >= sizeof(x->path)) {
		refuse(x, 400, "expected an origin-form target (\"/path\") of at most 511 bytes");
		goto done;
	}
	snprintf(x->path, sizeof(x->path), "%.*s", (int)tlen, target);
	x->requests++;
	/* Headers. */
	for (p = end + 2; p < head + hl - 2 && nh < MAX_HEADERS; nh++) {
		const char *le = strstr(p, "\r\n"), *colon = memchr(p, ':', (size_t)(le - p));
		if (!colon) {
			refuse(x, 400, "malformed header");
			goto done;
		}
		hs[nh].name = p;
		hs[nh].name_len = (size_t)(colon - p);
		hs[nh].value = colon + 1;
		while (hs[nh].value < le && (*hs[nh].value == ' ' || *hs[nh].value == '\t'))
			hs[nh].value++;
		hs[nh].value_len = (size_t)(le - hs[nh].value);
		p = le + 2;
	}
	if (p < head + hl - 2) {
		refuse(x, 431, "too many headers");
		goto done;
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
	if (placeholder_in(r, x->path, strlen(x->path), &idx) && !cred_applies(&r->creds[idx], j->host, x->path)) {
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
		if (!cred_applies(c, j->host, x->path)) {
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
			cJSON *o = cJSON_CreateObject();
			if (o) {
				cJSON_AddStringToObject(o, "method", x->method);
				cJSON_AddStringToObject(o, "path", x->path);
				cJSON_AddStringToObject(o, "credential", c->env);
			}
			audit_event(x, "net-credential", o);
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
	/* Framing, hop-by-hop headers. */
	for (size_t i = 0; i < nh; i++) {
		if (hname(&hs[i], "Content-Length")) {
			char *e;
			long long v = strtoll(hs[i].value, &e, 10);
			if (e == hs[i].value || v < 0 || (framing >= 0 && framing != v)) {
				refuse(x, 400, "bad Content-Length");
				goto done;
			}
			framing = v;
		} else if (hname(&hs[i], "Transfer-Encoding"))
			chunked = true;
		else if (hname(&hs[i], "Connection") || hname(&hs[i], "Keep-Alive") ||
			 hname(&hs[i], "Proxy-Connection") || hname(&hs[i], "Proxy-Authorization"))
			hs[i].drop = true;
	}
	if (chunked)
		framing = -2;
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
	fputs("Connection: close\r\n\r\n", f);
	fclose(f);
	if (s_write(&x->u, out, out_len) < 0) {
		snprintf(x->why, sizeof(x->why), "upstream closed");
		goto done;
	}
	x->up += out_len;
	if (relay_body(x, body_pre, total - (size_t)hl, framing) < 0)
		goto done;
	/* The answer, as it comes, until the upstream closes. */
	if (!x->u.ssl)
		(void)shutdown(x->u.fd, SHUT_WR);
	relay_answer(x);
done:
	if (out) {
		OPENSSL_cleanse(out, out_len);
		free(out);
	}
	for (size_t i = 0; i < nh; i++)
		if (hs[i].replaced) {
			OPENSSL_cleanse(hs[i].replaced, strlen(hs[i].replaced));
			free(hs[i].replaced);
		}
	free(body_pre);
	free(head);
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
		handle_request(x);
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
		SSL_set_bio(x->c.ssl, b, b);
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
	handle_request(x);
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
