/* Credentials that never enter the sandbox, TLS inspection and request
 * rules (network.credentials, network.inspect, network.requests): the
 * run's state, made once by the supervisor before the sandbox starts
 * (net_rules_prepare) and read by the proxy process it forks, which
 * inherits it. The secrets and the CA's private key live only in the
 * memory of ward's own processes outside the sandbox; net_rules_free()
 * wipes them. docs/network.md "Credentials", "TLS inspection",
 * "Request rules". */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "net/net-match.h"
#include "policy/policy.h"

typedef enum CredAs {
	CRED_AS_BEARER, /* Authorization: Bearer SECRET */
	CRED_AS_BASIC,  /* Authorization: Basic base64(user:SECRET) */
	CRED_AS_HEADER, /* NAME: SECRET */
} CredAs;

#define NET_PLACEHOLDER_PREFIX "ward-placeholder-"
#define NET_PLACEHOLDER_LEN (sizeof(NET_PLACEHOLDER_PREFIX) - 1 + 32)

typedef struct NetCredential {
	char host[NET_HOST_MAX];
	char *path;      /* prefix, or NULL: every path */
	char *env;       /* the variable the command sees the placeholder in */
	char *from_env, *from_file;
	CredAs as;
	char *header;    /* CRED_AS_HEADER */
	char *username;  /* CRED_AS_BASIC, NULL: keep the client's */
	char *preset;    /* "git", "npm", "pip" or NULL */
	char *secret;
	char placeholder[NET_PLACEHOLDER_LEN + 1];
} NetCredential;

typedef struct NetRequestRule {
	char host[NET_HOST_MAX]; /* name or "*.domain" */
	bool deny;
	char **methods;          /* empty: every method */
	char **paths;            /* empty: every path */
	char *text;              /* the canonical JSON, for messages */
} NetRequestRule;

typedef struct TlsCa TlsCa;

typedef struct NetRules {
	NetCredential *creds;
	size_t n_creds;
	NetRequestRule *rules;
	size_t n_rules;
	char **inspect;      /* network.inspect patterns */
	char **upstream_ca;  /* extra trust anchors for the upstream side */
	TlsCa *ca;           /* NULL when nothing is inspected */
	char *bundle;        /* system CAs + the run's CA (PEM), when ca */
} NetRules;

/* Load the secrets (ward's environment or files), make the placeholders
 * and, when some host is inspected, the run's CA and its bundle. The
 * result is the process's current rules (net_rules_current()). On error
 * -errno and a message in @err naming the policy key. */
int net_rules_prepare(const WardPolicy *p, char *err, size_t errsz);
const NetRules *net_rules_current(void);
void net_rules_free(void);

/* Is @host (normalized name) inspected: in network.inspect, or named by a
 * credential or a request rule? */
bool net_rules_inspects(const NetRules *r, const char *host);
/* Do plain-HTTP requests need a look (any credential or request rule)? */
bool net_rules_look_at_http(const NetRules *r);

/* Does the request rule list refuse @method @path on @host? NULL when
 * allowed, else the reason (into @buf). */
const char *net_rules_check_request(const NetRules *r, const char *host, const char *method,
				    const char *path, char *buf, size_t bufsz);
/* Is @path within @prefix ("/a" covers "/a", "/a/b", "/a?q", not "/ab";
 * "/a/" covers "/a/b")? */
bool net_path_within(const char *path, const char *prefix);
/* Does "*.domain" or "name" pattern @pat cover @host? */
bool net_host_pattern_covers(const char *pat, const char *host);

/* The environment changes the command needs: for each credential,
 * "ENV=placeholder" (the caller drops every other entry for ENV and for
 * from_env); with a CA, the certificate variables pointing at
 * NET_CA_BUNDLE_PATH. A NULL-terminated list (static storage of @r). */
char **net_rules_env(const NetRules *r);
/* Where the bundle is shown inside (the view's system bundle). */
#define NET_CA_BUNDLE_PATH "/etc/ssl/certs/ca-certificates.crt"
