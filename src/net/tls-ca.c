/* The run's ephemeral CA (tls-ca.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/ossl.h"
#include "net/tls-ca.h"

#define LEAF_CACHE 64

struct TlsCa {
	X509 *cert;
	unsigned char key_der[512]; /* the CA's private key, DER */
	int key_len;
	EVP_PKEY *leaf_key; /* one key for every leaf of the run */
	SSL_CTX *server, *client;
	pthread_mutex_t lock;
	struct {
		char host[256];
		X509 *cert;
	} leaves[LEAF_CACHE];
	size_t n_leaves;
};

/* The one CA of the process, for tls_ca_wipe_key_in_child(). */
static TlsCa *the_ca;

void tls_ca_wipe_key_in_child(void)
{
	if (the_ca)
		OPENSSL_cleanse(the_ca->key_der, sizeof(the_ca->key_der));
}

static int set_serial(X509 *x)
{
	BIGNUM *bn = BN_new();
	int ok = bn && BN_rand(bn, 120, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
		 BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	return ok ? 0 : -EIO;
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;
	int ok;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!e)
		return -EINVAL;
	ok = X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	return ok ? 0 : -EIO;
}

static EVP_PKEY *ca_key(const TlsCa *ca)
{
	const unsigned char *p = ca->key_der;
	return d2i_AutoPrivateKey(NULL, &p, ca->key_len);
}

static int make_ca(TlsCa *ca)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509_NAME *name;
	unsigned char rnd[6];
	char cn[64];
	unsigned char *p = ca->key_der;
	int r = -EIO;

	if (!key || RAND_bytes(rnd, sizeof(rnd)) != 1)
		goto out;
	if (i2d_PrivateKey(key, NULL) > (int)sizeof(ca->key_der))
		goto out;
	ca->key_len = i2d_PrivateKey(key, &p);
	if (ca->key_len <= 0)
		goto out;
	snprintf(cn, sizeof(cn), "ward run CA %02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
		 rnd[3], rnd[4], rnd[5]);
	ca->cert = X509_new();
	if (!ca->cert || X509_set_version(ca->cert, 2) != 1 || set_serial(ca->cert) < 0 ||
	    !X509_gmtime_adj(X509_getm_notBefore(ca->cert), -3600) ||
	    !X509_gmtime_adj(X509_getm_notAfter(ca->cert), 7 * 24 * 3600) ||
	    X509_set_pubkey(ca->cert, key) != 1)
		goto out;
	name = X509_get_subject_name(ca->cert);
	if (X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"ward", -1, -1, 0) != 1 ||
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) != 1 ||
	    X509_set_issuer_name(ca->cert, name) != 1)
		goto out;
	if (add_ext(ca->cert, ca->cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
	    add_ext(ca->cert, ca->cert, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
	    add_ext(ca->cert, ca->cert, NID_subject_key_identifier, "hash") < 0 ||
	    X509_sign(ca->cert, key, EVP_sha256()) <= 0)
		goto out;
	ca->leaf_key = EVP_EC_gen("P-256");
	r = ca->leaf_key ? 0 : -EIO;
out:
	EVP_PKEY_free(key);
	return r;
}

static int mint_leaf(TlsCa *ca, const char *host, X509 **ret)
{
	EVP_PKEY *key = ca_key(ca);
	X509 *x = X509_new();
	X509_NAME *name;
	struct in6_addr a6;
	struct in_addr a4;
	char san[300];
	int r = -EIO;

	if (!key || !x)
		goto out;
	if (inet_pton(AF_INET, host, &a4) == 1 || inet_pton(AF_INET6, host, &a6) == 1)
		snprintf(san, sizeof(san), "IP:%s", host);
	else
		snprintf(san, sizeof(san), "DNS:%s", host);
	if (X509_set_version(x, 2) != 1 || set_serial(x) < 0 ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), 2 * 24 * 3600) ||
	    X509_set_pubkey(x, ca->leaf_key) != 1 ||
	    X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) != 1)
		goto out;
	name = X509_get_subject_name(x);
	if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)host,
				       strlen(host) > 64 ? 64 : -1, -1, 0) != 1)
		goto out;
	if (add_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
	    add_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature") < 0 ||
	    add_ext(x, ca->cert, NID_ext_key_usage, "serverAuth") < 0 ||
	    add_ext(x, ca->cert, NID_authority_key_identifier, "keyid") < 0 ||
	    add_ext(x, ca->cert, NID_subject_alt_name, san) < 0 || X509_sign(x, key, EVP_sha256()) <= 0)
		goto out;
	*ret = x;
	x = NULL;
	r = 0;
out:
	EVP_PKEY_free(key);
	X509_free(x);
	return r;
}

int tls_ca_use_leaf(TlsCa *ca, SSL *ssl, const char *host)
{
	X509 *leaf = NULL;
	int r = 0;

	pthread_mutex_lock(&ca->lock);
	for (size_t i = 0; i < ca->n_leaves; i++)
		if (strcmp(ca->leaves[i].host, host) == 0)
			leaf = ca->leaves[i].cert;
	if (!leaf) {
		r = mint_leaf(ca, host, &leaf);
		if (r >= 0) {
			size_t slot = ca->n_leaves < LEAF_CACHE ? ca->n_leaves++ : 0;
			X509_free(ca->leaves[slot].cert);
			snprintf(ca->leaves[slot].host, sizeof(ca->leaves[slot].host), "%s", host);
			ca->leaves[slot].cert = leaf;
		}
	}
	if (r >= 0 && (SSL_use_certificate(ssl, leaf) != 1 || SSL_use_PrivateKey(ssl, ca->leaf_key) != 1))
		r = -EIO;
	pthread_mutex_unlock(&ca->lock);
	return r;
}

/* Offer and take HTTP/1.1 only: the inspector speaks HTTP/1.x. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
		       unsigned int inlen, void *arg)
{
	static const unsigned char h11[] = "\x08http/1.1";
	unsigned char *o = NULL;

	if (SSL_select_next_proto(&o, outlen, h11, sizeof(h11) - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

int tls_ca_new(const char *const *upstream_ca, TlsCa **ret, char *err, size_t errsz)
{
	TlsCa *ca;
	int r;

	/* Fail closed: no OpenSSL, no inspection, no run. */
	if ((r = ossl_load(err, errsz)) < 0)
		return r;
	ca = calloc(1, sizeof(*ca));
	if (!ca)
		return -ENOMEM;
	pthread_mutex_init(&ca->lock, NULL);
	if (make_ca(ca) < 0) {
		snprintf(err, errsz, "network.inspect: cannot make the run's CA");
		tls_ca_free(ca);
		return -EIO;
	}
	ca->server = SSL_CTX_new(TLS_server_method());
	ca->client = SSL_CTX_new(TLS_client_method());
	if (!ca->server || !ca->client || SSL_CTX_set_min_proto_version(ca->server, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_min_proto_version(ca->client, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_default_verify_paths(ca->client) != 1 ||
	    SSL_CTX_set_alpn_protos(ca->client, (const unsigned char *)"\x08http/1.1", 9) != 0) {
		snprintf(err, errsz, "network.inspect: cannot set up TLS");
		tls_ca_free(ca);
		return -EIO;
	}
	SSL_CTX_set_alpn_select_cb(ca->server, alpn_select, NULL);
	SSL_CTX_set_verify(ca->client, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_mode(ca->server, SSL_MODE_AUTO_RETRY);
	SSL_CTX_set_mode(ca->client, SSL_MODE_AUTO_RETRY);
	/* Throughput (docs/network.md "Performance"): the proxy decrypts and
	 * encrypts every byte, so it prefers AES-128-GCM (AES-NI; fewer
	 * rounds than AES-256) on both legs for TLS 1.3 (the same three suites
	 * as OpenSSL's default, reordered), its own choice on the client's
	 * leg; and it reads the upstream ahead, several records per read(2).
	 * Not the client: its first bytes come through a buffering BIO
	 * (inspect.c), which would block a read-ahead for more than the
	 * client has sent. */
	for (int i = 0; i < 2; i++)
		(void)SSL_CTX_set_ciphersuites(i ? ca->client : ca->server,
					       "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
					       "TLS_CHACHA20_POLY1305_SHA256");
	SSL_CTX_set_read_ahead(ca->client, 1);
	SSL_CTX_set_default_read_buffer_len(ca->client, 64 * 1024);
	SSL_CTX_set_options(ca->server, SSL_OP_CIPHER_SERVER_PREFERENCE);
	for (size_t i = 0; upstream_ca && upstream_ca[i]; i++)
		if (SSL_CTX_load_verify_locations(ca->client, upstream_ca[i], NULL) != 1) {
			snprintf(err, errsz,
				 "network.upstream_ca[%zu]: expected a readable PEM certificate file, got %s", i,
				 upstream_ca[i]);
			ERR_clear_error();
			tls_ca_free(ca);
			return -EINVAL;
		}
	the_ca = ca;
	*ret = ca;
	return 0;
}

void tls_ca_free(TlsCa *ca)
{
	if (!ca)
		return;
	if (the_ca == ca)
		the_ca = NULL;
	OPENSSL_cleanse(ca->key_der, sizeof(ca->key_der));
	X509_free(ca->cert);
	EVP_PKEY_free(ca->leaf_key);
	SSL_CTX_free(ca->server);
	SSL_CTX_free(ca->client);
	for (size_t i = 0; i < ca->n_leaves; i++)
		X509_free(ca->leaves[i].cert);
	pthread_mutex_destroy(&ca->lock);
	free(ca);
}

SSL_CTX *tls_ca_server_ctx(TlsCa *ca)
{
	return ca->server;
}

SSL_CTX *tls_ca_client_ctx(TlsCa *ca)
{
	return ca->client;
}

int tls_ca_bundle(const TlsCa *ca, char **ret)
{
	static const char *const system[] = { "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
					      "/etc/ssl/cert.pem", NULL };
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *out;
	long n;

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; system[i]; i++) {
		FILE *f = fopen(system[i], "re");
		char buf[16384];
		size_t k;
		if (!f)
			continue;
		while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
			BIO_write(b, buf, (int)k);
		fclose(f);
		BIO_puts(b, "\n");
		break;
	}
	BIO_puts(b, "# ward: this run's CA for TLS inspection (network.inspect)\n");
	if (PEM_write_bio_X509(b, ca->cert) != 1) {
		BIO_free(b);
		return -EIO;
	}
	n = BIO_get_mem_data(b, &data);
	out = malloc((size_t)n + 1);
	if (!out) {
		BIO_free(b);
		return -ENOMEM;
	}
	memcpy(out, data, (size_t)n);
	out[n] = '\0';
	BIO_free(b);
	*ret = out;
	return 0;
}
