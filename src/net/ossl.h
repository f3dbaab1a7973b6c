/* OpenSSL for TLS inspection, loaded at run time (dlopen), not linked:
 * only a run with network.inspect, network.credentials or network.requests
 * uses it, and linking it made every `ward` command pay for relocating it
 * at start-up (about 18% of a `ward run --tier 1 -- /bin/true`).
 *
 * Include in the files that call OpenSSL (inspect.c, tls-ca.c), after
 * any other <openssl/...> header: each function below then names the pointer that
 * ossl_load() filled. ossl_load() is called first by tls_ca_new(), the
 * only way into TLS inspection; without the library the run is refused
 * (fail closed), never run without the inspection it asked for. */
#pragma once

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stddef.h>
#include <string.h>

/* The sonames of OpenSSL 3 (Debian's libssl3); libssl pulls libcrypto in. */
#define OSSL_SONAME_SSL "libssl.so.3"

#define OSSL_FUNCTIONS(X) \
	X(BIO_ctrl) \
	X(BIO_f_buffer) \
	X(BIO_free) \
	X(BIO_free_all) \
	X(BIO_new) \
	X(BIO_new_socket) \
	X(BIO_push) \
	X(BIO_puts) \
	X(BIO_s_mem) \
	X(BIO_write) \
	X(BN_free) \
	X(BN_new) \
	X(BN_rand) \
	X(BN_to_ASN1_INTEGER) \
	X(ERR_clear_error) \
	X(ERR_peek_last_error) \
	X(ERR_reason_error_string) \
	X(EVP_DecodeBlock) \
	X(EVP_EncodeBlock) \
	X(EVP_PKEY_Q_keygen) \
	X(EVP_PKEY_free) \
	X(EVP_sha256) \
	X(PEM_write_bio_X509) \
	X(RAND_bytes) \
	X(SSL_CTX_ctrl) \
	X(SSL_CTX_free) \
	X(SSL_CTX_load_verify_locations) \
	X(SSL_CTX_new) \
	X(SSL_CTX_set_alpn_protos) \
	X(SSL_CTX_set_alpn_select_cb) \
	X(SSL_CTX_set_ciphersuites) \
	X(SSL_CTX_set_default_read_buffer_len) \
	X(SSL_CTX_set_default_verify_paths) \
	X(SSL_CTX_set_options) \
	X(SSL_CTX_set_verify) \
	X(SSL_accept) \
	X(SSL_connect) \
	X(SSL_ctrl) \
	X(SSL_free) \
	X(SSL_get0_param) \
	X(SSL_get_error) \
	X(SSL_get_verify_result) \
	X(SSL_new) \
	X(SSL_read_ex) \
	X(SSL_select_next_proto) \
	X(SSL_set_bio) \
	X(SSL_set_fd) \
	X(SSL_shutdown) \
	X(SSL_use_PrivateKey) \
	X(SSL_use_certificate) \
	X(SSL_write_ex) \
	X(TLS_client_method) \
	X(TLS_server_method) \
	X(X509V3_EXT_conf_nid) \
	X(X509V3_set_ctx) \
	X(X509_EXTENSION_free) \
	X(X509_NAME_add_entry_by_txt) \
	X(X509_VERIFY_PARAM_set1_host) \
	X(X509_VERIFY_PARAM_set1_ip_asc) \
	X(X509_VERIFY_PARAM_set_hostflags) \
	X(X509_add_ext) \
	X(X509_free) \
	X(X509_get_serialNumber) \
	X(X509_get_subject_name) \
	X(X509_getm_notAfter) \
	X(X509_getm_notBefore) \
	X(X509_gmtime_adj) \
	X(X509_new) \
	X(X509_set_issuer_name) \
	X(X509_set_pubkey) \
	X(X509_set_version) \
	X(X509_sign) \
	X(X509_verify_cert_error_string) \
	X(d2i_AutoPrivateKey) \
	X(i2d_PrivateKey)

struct OsslFns {
#define OSSL_FN_FIELD(n) __typeof__(&n) n;
	OSSL_FUNCTIONS(OSSL_FN_FIELD)
#undef OSSL_FN_FIELD
};
extern struct OsslFns ossl_fns;

/* Load libssl.so.3 and every function above, once (thread-safe). 0, or
 * -ENOPKG with a message in @err naming the library and what failed. */
int ossl_load(char *err, size_t errsz);

#ifndef OSSL_NO_REDIRECT
#define BIO_ctrl (ossl_fns.BIO_ctrl)
#define BIO_f_buffer (ossl_fns.BIO_f_buffer)
#define BIO_free (ossl_fns.BIO_free)
#define BIO_free_all (ossl_fns.BIO_free_all)
#define BIO_new (ossl_fns.BIO_new)
#define BIO_new_socket (ossl_fns.BIO_new_socket)
#define BIO_push (ossl_fns.BIO_push)
#define BIO_puts (ossl_fns.BIO_puts)
#define BIO_s_mem (ossl_fns.BIO_s_mem)
#define BIO_write (ossl_fns.BIO_write)
#define BN_free (ossl_fns.BN_free)
#define BN_new (ossl_fns.BN_new)
#define BN_rand (ossl_fns.BN_rand)
#define BN_to_ASN1_INTEGER (ossl_fns.BN_to_ASN1_INTEGER)
#define ERR_clear_error (ossl_fns.ERR_clear_error)
#define ERR_peek_last_error (ossl_fns.ERR_peek_last_error)
#define ERR_reason_error_string (ossl_fns.ERR_reason_error_string)
#define EVP_DecodeBlock (ossl_fns.EVP_DecodeBlock)
#define EVP_EncodeBlock (ossl_fns.EVP_EncodeBlock)
#define EVP_PKEY_Q_keygen (ossl_fns.EVP_PKEY_Q_keygen)
#define EVP_PKEY_free (ossl_fns.EVP_PKEY_free)
#define EVP_sha256 (ossl_fns.EVP_sha256)
#define PEM_write_bio_X509 (ossl_fns.PEM_write_bio_X509)
#define RAND_bytes (ossl_fns.RAND_bytes)
#define SSL_CTX_ctrl (ossl_fns.SSL_CTX_ctrl)
#define SSL_CTX_free (ossl_fns.SSL_CTX_free)
#define SSL_CTX_load_verify_locations (ossl_fns.SSL_CTX_load_verify_locations)
#define SSL_CTX_new (ossl_fns.SSL_CTX_new)
#define SSL_CTX_set_alpn_protos (ossl_fns.SSL_CTX_set_alpn_protos)
#define SSL_CTX_set_alpn_select_cb (ossl_fns.SSL_CTX_set_alpn_select_cb)
#define SSL_CTX_set_ciphersuites (ossl_fns.SSL_CTX_set_ciphersuites)
#define SSL_CTX_set_default_read_buffer_len (ossl_fns.SSL_CTX_set_default_read_buffer_len)
#define SSL_CTX_set_default_verify_paths (ossl_fns.SSL_CTX_set_default_verify_paths)
#define SSL_CTX_set_options (ossl_fns.SSL_CTX_set_options)
#define SSL_CTX_set_verify (ossl_fns.SSL_CTX_set_verify)
#define SSL_accept (ossl_fns.SSL_accept)
#define SSL_connect (ossl_fns.SSL_connect)
#define SSL_ctrl (ossl_fns.SSL_ctrl)
#define SSL_free (ossl_fns.SSL_free)
#define SSL_get0_param (ossl_fns.SSL_get0_param)
#define SSL_get_error (ossl_fns.SSL_get_error)
#define SSL_get_verify_result (ossl_fns.SSL_get_verify_result)
#define SSL_new (ossl_fns.SSL_new)
#define SSL_read_ex (ossl_fns.SSL_read_ex)
#define SSL_select_next_proto (ossl_fns.SSL_select_next_proto)
#define SSL_set_bio (ossl_fns.SSL_set_bio)
#define SSL_set_fd (ossl_fns.SSL_set_fd)
#define SSL_shutdown (ossl_fns.SSL_shutdown)
#define SSL_use_PrivateKey (ossl_fns.SSL_use_PrivateKey)
#define SSL_use_certificate (ossl_fns.SSL_use_certificate)
#define SSL_write_ex (ossl_fns.SSL_write_ex)
#define TLS_client_method (ossl_fns.TLS_client_method)
#define TLS_server_method (ossl_fns.TLS_server_method)
#define X509V3_EXT_conf_nid (ossl_fns.X509V3_EXT_conf_nid)
#define X509V3_set_ctx (ossl_fns.X509V3_set_ctx)
#define X509_EXTENSION_free (ossl_fns.X509_EXTENSION_free)
#define X509_NAME_add_entry_by_txt (ossl_fns.X509_NAME_add_entry_by_txt)
#define X509_VERIFY_PARAM_set1_host (ossl_fns.X509_VERIFY_PARAM_set1_host)
#define X509_VERIFY_PARAM_set1_ip_asc (ossl_fns.X509_VERIFY_PARAM_set1_ip_asc)
#define X509_VERIFY_PARAM_set_hostflags (ossl_fns.X509_VERIFY_PARAM_set_hostflags)
#define X509_add_ext (ossl_fns.X509_add_ext)
#define X509_free (ossl_fns.X509_free)
#define X509_get_serialNumber (ossl_fns.X509_get_serialNumber)
#define X509_get_subject_name (ossl_fns.X509_get_subject_name)
#define X509_getm_notAfter (ossl_fns.X509_getm_notAfter)
#define X509_getm_notBefore (ossl_fns.X509_getm_notBefore)
#define X509_gmtime_adj (ossl_fns.X509_gmtime_adj)
#define X509_new (ossl_fns.X509_new)
#define X509_set_issuer_name (ossl_fns.X509_set_issuer_name)
#define X509_set_pubkey (ossl_fns.X509_set_pubkey)
#define X509_set_version (ossl_fns.X509_set_version)
#define X509_sign (ossl_fns.X509_sign)
#define X509_verify_cert_error_string (ossl_fns.X509_verify_cert_error_string)
#define d2i_AutoPrivateKey (ossl_fns.d2i_AutoPrivateKey)
#define i2d_PrivateKey (ossl_fns.i2d_PrivateKey)
/* Wiping needs no library. */
#define OPENSSL_cleanse(p, n) explicit_bzero((p), (n))
#endif
