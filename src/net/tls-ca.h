/* The run's ephemeral CA for TLS inspection (network.inspect): an EC P-256
 * key and a self-signed certificate made per run, leaf certificates minted
 * on demand for the inspected hosts, and the OpenSSL contexts of both
 * sides. The CA's private key is kept DER-encoded in one buffer that the
 * sandbox's init wipes before anything of the command runs
 * (tls_ca_wipe_key_in_child), and that ward frees, wiped, at the end; it is
 * never written to a file. */
#pragma once

#include <openssl/ssl.h>
#include <stddef.h>

typedef struct TlsCa TlsCa;

/* Make the CA and the contexts; @upstream_ca lists PEM files trusted for
 * the upstream side besides the host's store. On error a message in @err. */
int tls_ca_new(const char *const *upstream_ca, TlsCa **ret, char *err, size_t errsz);
void tls_ca_free(TlsCa *ca);
/* The host's CA bundle followed by the run's CA certificate (PEM). */
int tls_ca_bundle(const TlsCa *ca, char **ret);
/* Wipe the key in a child that must not hold it (no allocation). */
void tls_ca_wipe_key_in_child(void);
/* The context that answers the sandbox (with a leaf for @host set per
 * connection) and the one that connects upstream (peer verified). */
SSL_CTX *tls_ca_server_ctx(TlsCa *ca);
SSL_CTX *tls_ca_client_ctx(TlsCa *ca);
/* Set the leaf certificate (minted and cached on first use, thread-safe)
 * for @host on @ssl. */
int tls_ca_use_leaf(TlsCa *ca, SSL *ssl, const char *host);
