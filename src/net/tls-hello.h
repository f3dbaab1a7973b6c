/* The TLS ClientHello a captured connection starts with: reassembled from
 * its handshake records and read for the server name (SNI, RFC 6066) the
 * client asks for. Pure: buffers in, results out. The proxy compares the
 * name with the one the synthetic address stands for (no domain fronting
 * by SNI). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A ClientHello larger than this is refused (real ones are < 2 KiB, with
 * post-quantum key shares < 4 KiB). */
#define TLS_HELLO_MAX (16 * 1024)

typedef struct TlsHello {
	bool has_sni;
	char sni[256];  /* the host_name, as sent (not normalized), NUL-ended */
	bool has_ech;   /* an encrypted_client_hello extension: the real name is hidden */
	size_t len;     /* bytes of the records that carried the ClientHello */
} TlsHello;

/* Does @buf (@len >= 1 bytes) start like a TLS handshake record? */
bool tls_looks_like_handshake(const uint8_t *buf, size_t len);

/* Parse the ClientHello at the start of @buf. Returns 1 and fills @ret when
 * complete, 0 when more bytes are needed, -EBADMSG when the bytes are no
 * well-formed ClientHello (@reterr_reason says what), -E2BIG past
 * TLS_HELLO_MAX. */
int tls_parse_client_hello(const uint8_t *buf, size_t len, TlsHello *ret, const char **reterr_reason);
