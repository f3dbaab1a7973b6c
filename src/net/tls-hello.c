/* ClientHello parsing (RFC 8446 4.1.2, RFC 5246 7.4.1.2, RFC 6066 3). The
 * handshake message may span several records; they are joined (up to
 * TLS_HELLO_MAX) before the message is read. Every length is checked
 * against the one around it. */
#include <errno.h>
#include <string.h>

#include "net/tls-hello.h"

#define REC_HANDSHAKE 0x16
#define HS_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0
#define EXT_ECH 0xfe0d

static uint32_t get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

bool tls_looks_like_handshake(const uint8_t *buf, size_t len)
{
	/* Content type, then a record version of 3.x (3.1 for every
	 * ClientHello since TLS 1.0; SSL 3.0 said 3.0). */
	return len >= 1 && buf[0] == REC_HANDSHAKE && (len < 2 || buf[1] == 3) &&
	       (len < 3 || buf[2] <= 4);
}

/* A bounded reader over the reassembled message. */
typedef struct Rd {
	const uint8_t *p;
	size_t n;
} Rd;

static bool take(Rd *r, size_t k, Rd *ret)
{
	if (r->n < k)
		return false;
	if (ret)
		*ret = (Rd){ r->p, k };
	r->p += k;
	r->n -= k;
	return true;
}

static bool take_vec(Rd *r, size_t lenbytes, Rd *ret)
{
	size_t k;

	if (r->n < lenbytes)
		return false;
	k = lenbytes == 1 ? r->p[0] : get16(r->p);
	return take(r, lenbytes, NULL) && take(r, k, ret);
}

static int fail(const char **reason, const char *why)
{
	if (reason)
		*reason = why;
	return -EBADMSG;
}

static int parse_sni(Rd ext, TlsHello *ret, const char **reason)
{
	Rd list, name;
	bool seen = false;

	if (!take_vec(&ext, 2, &list) || ext.n != 0)
		return fail(reason, "malformed server_name extension");
	while (list.n > 0) {
		uint8_t type;
		if (!take(&list, 1, &name))
			return fail(reason, "malformed server_name extension");
		type = name.p[0];
		if (!take_vec(&list, 2, &name))
			return fail(reason, "malformed server_name extension");
		if (type != 0)
			continue; /* no other name types are defined */
		if (seen)
			return fail(reason, "two host names in server_name");
		if (name.n == 0 || name.n >= sizeof(ret->sni) || memchr(name.p, 0, name.n))
			return fail(reason, "malformed host name in server_name");
		memcpy(ret->sni, name.p, name.n);
		ret->sni[name.n] = '\0';
		seen = true;
	}
	if (!seen)
		return fail(reason, "server_name without a host name");
	ret->has_sni = true;
	return 0;
}

static int parse_hello(Rd m, TlsHello *ret, const char **reason)
{
	Rd v, exts;
	bool seen_sni = false, seen_ech = false;

	/* legacy_version, random, session id, cipher suites, compression */
	if (!take(&m, 2, &v) || v.p[0] != 3 || !take(&m, 32, NULL) || !take_vec(&m, 1, &v) ||
	    v.n > 32 || !take_vec(&m, 2, &v) || v.n < 2 || v.n % 2 || !take_vec(&m, 1, &v) ||
	    v.n < 1)
		return fail(reason, "malformed ClientHello");
	if (m.n == 0)
		return 0; /* no extensions at all (old clients): no SNI */
	if (!take_vec(&m, 2, &exts) || m.n != 0)
		return fail(reason, "malformed ClientHello extensions");
	while (exts.n > 0) {
		Rd body;
		uint32_t type;
		int r;

		if (exts.n < 4)
			return fail(reason, "malformed ClientHello extensions");
		type = get16(exts.p);
		if (!take(&exts, 2, NULL) || !take_vec(&exts, 2, &body))
			return fail(reason, "malformed ClientHello extensions");
		if (type == EXT_SERVER_NAME) {
			if (seen_sni)
				return fail(reason, "two server_name extensions");
			seen_sni = true;
			r = parse_sni(body, ret, reason);
			if (r < 0)
				return r;
		} else if (type == EXT_ECH) {
			if (seen_ech)
				return fail(reason, "two encrypted_client_hello extensions");
			seen_ech = true;
			ret->has_ech = true;
		}
	}
	return 0;
}

int tls_parse_client_hello(const uint8_t *buf, size_t len, TlsHello *ret, const char **reterr_reason)
{
	uint8_t msg[TLS_HELLO_MAX];
	size_t have = 0, off = 0, need = 0;

	memset(ret, 0, sizeof(*ret));
	if (reterr_reason)
		*reterr_reason = NULL;
	/* Join the fragments of consecutive handshake records until the
	 * message's own length (its 4-byte header) is there. */
	for (;;) {
		size_t rl;

		if (len - off < 5) {
			if (len > off && !tls_looks_like_handshake(buf + off, len - off))
				return fail(reterr_reason, "not a TLS handshake record");
			return off >= TLS_HELLO_MAX ? -E2BIG : 0;
		}
		if (!tls_looks_like_handshake(buf + off, 5))
			return fail(reterr_reason, "not a TLS handshake record");
		rl = get16(buf + off + 3);
		if (rl == 0 || rl > 16384)
			return fail(reterr_reason, "malformed TLS record length");
		if (have + rl > sizeof(msg))
			return -E2BIG;
		if (len - off - 5 < rl)
			return 0;
		memcpy(msg + have, buf + off + 5, rl);
		have += rl;
		off += 5 + rl;
		if (have >= 4) {
			if (msg[0] != HS_CLIENT_HELLO)
				return fail(reterr_reason, "the first handshake message is no ClientHello");
			need = 4 + ((size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3]);
			if (need > sizeof(msg))
				return -E2BIG;
			if (have >= need)
				break;
		}
	}
	/* Another handshake message may not follow the ClientHello in the
	 * same flight, but the records may hold nothing else either. */
	if (have != need)
		return fail(reterr_reason, "bytes after the ClientHello in its records");
	int r = parse_hello((Rd){ msg + 4, need - 4 }, ret, reterr_reason);
	if (r < 0)
		return r;
	ret->len = off;
	return 1;
}
