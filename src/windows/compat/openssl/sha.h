/* The four SHA-256 calls src/policy/policy-json.c makes (the policy hash),
 * over the plan layer's own SHA-256: ward.exe has no libcrypto. Found
 * before any system header by the Windows build only (-I src/windows/compat). */
#pragma once

#include <stdlib.h>
#include <string.h>

#include "windows/win-sha256.h"

#define SHA256_DIGEST_LENGTH 32

/* The policy is hashed in one Update; the context buffers it. */
typedef struct SHA256_CTX {
	char *buf;
	size_t len;
} SHA256_CTX;

static inline int SHA256_Init(SHA256_CTX *c)
{
	c->buf = NULL;
	c->len = 0;
	return 1;
}

static inline int SHA256_Update(SHA256_CTX *c, const void *data, size_t n)
{
	char *b = realloc(c->buf, c->len + n + 1);

	if (!b)
		return 0;
	memcpy(b + c->len, data, n);
	c->buf = b;
	c->len += n;
	return 1;
}

static inline int SHA256_Final(unsigned char *md, SHA256_CTX *c)
{
	win_sha256(c->buf ? c->buf : "", c->len, md);
	free(c->buf);
	c->buf = NULL;
	return 1;
}
