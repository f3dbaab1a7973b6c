/* The run's credentials, inspected hosts and request rules, made from the
 * policy's canonical entries (policy-parse.c) once per run. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "net/net-rules.h"
#include "net/tls-ca.h"

#define SECRET_MAX 8192

static NetRules *current;

static bool is_empty(char *const *l)
{
	return !l || !*l;
}

const NetRules *net_rules_current(void)
{
	return current;
}

static void free_rules(NetRules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_creds; i++) {
		NetCredential *c = &r->creds[i];
		if (c->secret) {
			explicit_bzero(c->secret, strlen(c->secret));
			free(c->secret);
		}
		free(c->path);
		free(c->env);
		free(c->from_env);
		free(c->from_file);
		free(c->header);
		free(c->username);
		free(c->preset);
	}
	free(r->creds);
	for (size_t i = 0; i < r->n_rules; i++) {
		strv_free(r->rules[i].methods);
		strv_free(r->rules[i].paths);
		free(r->rules[i].text);
	}
	free(r->rules);
	strv_free(r->inspect);
	strv_free(r->upstream_ca);
	tls_ca_free(r->ca);
	free(r->bundle);
	free(r);
}

void net_rules_free(void)
{
	free_rules(current);
	current = NULL;
}

static char *dup_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
}

static char **dup_strv(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key), *e;
	char **l = calloc(1, sizeof(char *));

	cJSON_ArrayForEach(e, v)
		if (!l || !cJSON_IsString(e) || strv_extend(&l, e->valuestring) < 0) {
			strv_free(l);
			return NULL;
		}
	return l;
}

/* A secret is one line: a trailing newline (of a file, mostly) goes; CR,
 * LF or NUL inside would let it split a header and is refused. */
static int load_secret(NetCredential *c, char *err, size_t errsz, size_t i)
{
	char buf[SECRET_MAX + 2];
	size_t n;

	if (c->from_env) {
		const char *v = getenv(c->from_env);
		if (!v || !*v) {
			snprintf(err, errsz,
				 "network.credentials[%zu].from_env: the variable %s is not set in ward's "
				 "environment",
				 i, c->from_env);
			return -ENOENT;
		}
		snprintf(buf, sizeof(buf), "%s", v);
	} else {
		_cleanup_close_ int fd = open(c->from_file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		ssize_t k;
		if (fd < 0) {
			snprintf(err, errsz, "network.credentials[%zu].from_file: cannot read %s: %s", i,
				 c->from_file, strerror(errno));
			return -errno;
		}
		k = read(fd, buf, sizeof(buf) - 1);
		if (k < 0) {
			snprintf(err, errsz, "network.credentials[%zu].from_file: cannot read %s: %s", i,
				 c->from_file, strerror(errno));
			return -errno;
		}
		buf[k] = '\0';
		if ((size_t)k != strlen(buf))
			buf[0] = '\r'; /* a NUL inside: refused below */
	}
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	if (n == 0 || n > SECRET_MAX || strpbrk(buf, "\r\n")) {
		explicit_bzero(buf, sizeof(buf));
		snprintf(err, errsz,
			 "network.credentials[%zu]: expected a secret of one line (1 to %d bytes) in %s",
			 i, SECRET_MAX, c->from_env ? c->from_env : c->from_file);
		return -EINVAL;
	}
	c->secret = strdup(buf);
	explicit_bzero(buf, sizeof(buf));
	return c->secret ? 0 : -ENOMEM;
}

static int make_placeholder(char out[NET_PLACEHOLDER_LEN + 1])
{
	unsigned char rnd[16];

	/* The kernel's CSPRNG (OpenSSL is loaded only for TLS, ossl.h). */
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -EIO;
	snprintf(out, NET_PLACEHOLDER_LEN + 1, NET_PLACEHOLDER_PREFIX "%02x%02x%02x%02x%02x%02x%02x%02x"
		 "%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5],
		 rnd[6], rnd[7], rnd[8], rnd[9], rnd[10], rnd[11], rnd[12], rnd[13], rnd[14], rnd[15]);
	return 0;
}

static int load_credential(NetRules *r, const char *text, size_t i, char *err, size_t errsz)
{
	_cleanup_cjson_ cJSON *o = cJSON_Parse(text);
	NetCredential *c = &r->creds[r->n_creds];
	char *as, *host;
	int k;

	if (!o)
		return -ENOMEM;
	r->n_creds++;
	host = dup_str(o, "host");
	as = dup_str(o, "as");
	if (!host || !as) {
		free(host);
		free(as);
		return -ENOMEM;
	}
	snprintf(c->host, sizeof(c->host), "%s", host);
	free(host);
	c->as = strcmp(as, "basic") == 0 ? CRED_AS_BASIC : strcmp(as, "header") == 0 ? CRED_AS_HEADER : CRED_AS_BEARER;
	free(as);
	c->path = dup_str(o, "path");
	c->env = dup_str(o, "env");
	c->from_env = dup_str(o, "from_env");
	c->from_file = dup_str(o, "from_file");
	c->header = dup_str(o, "header");
	c->username = dup_str(o, "username");
	c->preset = dup_str(o, "preset");
	if (!c->env)
		return -ENOMEM;
	for (size_t j = 0; j + 1 < r->n_creds; j++)
		if (strcmp(r->creds[j].env, c->env) == 0) {
			snprintf(err, errsz,
				 "network.credentials[%zu].env: %s is already the variable of "
				 "network.credentials[%zu]",
				 i, c->env, j);
			return -EINVAL;
		}
	if ((k = load_secret(c, err, errsz, i)) < 0)
		return k;
	return make_placeholder(c->placeholder);
}

static int load_rule(NetRules *r, const char *text)
{
	_cleanup_cjson_ cJSON *o = cJSON_Parse(text);
	NetRequestRule *q = &r->rules[r->n_rules];
	char *host, *action;

	if (!o)
		return -ENOMEM;
	r->n_rules++;
	host = dup_str(o, "host");
	action = dup_str(o, "action");
	q->methods = dup_strv(o, "methods");
	q->paths = dup_strv(o, "paths");
	q->text = strdup(text);
	if (!host || !action || !q->methods || !q->paths || !q->text) {
		free(host);
		free(action);
		return -ENOMEM;
	}
	snprintf(q->host, sizeof(q->host), "%s", host);
	q->deny = strcmp(action, "deny") == 0;
	free(host);
	free(action);
	return 0;
}

int net_rules_prepare(const WardPolicy *p, char *err, size_t errsz)
{
	NetRules *r;
	size_t nc = strv_length(p->net_credentials), nr = strv_length(p->net_requests);
	int k = 0;

	net_rules_free();
	if (nc == 0 && nr == 0 && is_empty(p->net_inspect))
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->creds = calloc(nc + 1, sizeof(*r->creds));
	r->rules = calloc(nr + 1, sizeof(*r->rules));
	r->inspect = strv_copy(p->net_inspect ? p->net_inspect : (char *[]){ NULL });
	r->upstream_ca = strv_copy(p->net_upstream_ca ? p->net_upstream_ca : (char *[]){ NULL });
	if (!r->creds || !r->rules || !r->inspect || !r->upstream_ca)
		k = -ENOMEM;
	for (size_t i = 0; k >= 0 && i < nc; i++)
		k = load_credential(r, p->net_credentials[i], i, err, errsz);
	for (size_t i = 0; k >= 0 && i < nr; i++)
		k = load_rule(r, p->net_requests[i]);
	if (k >= 0 && p->net_mode == NET_MODE_PROXY) {
		k = tls_ca_new((const char *const *)r->upstream_ca, &r->ca, err, errsz);
		if (k >= 0)
			k = tls_ca_bundle(r->ca, &r->bundle);
		if (k < 0 && !*err)
			snprintf(err, errsz, "network.inspect: cannot make the run's CA: %s",
				 strerror(-k));
	}
	if (k < 0) {
		if (k == -ENOMEM && !*err)
			snprintf(err, errsz, "network.credentials: out of memory");
		free_rules(r);
		return k;
	}
	current = r;
	return 0;
}

bool net_host_pattern_covers(const char *pat, const char *host)
{
	size_t lp, lh;

	if (pat[0] == '*' && pat[1] == '.') {
		lp = strlen(pat + 1);
		lh = strlen(host);
		return lh > lp && strcmp(host + lh - lp, pat + 1) == 0;
	}
	return strcmp(pat, host) == 0;
}

bool net_rules_inspects(const NetRules *r, const char *host)
{
	if (!r || !r->ca)
		return false;
	STRV_FOREACH(p, r->inspect)
		if (net_host_pattern_covers(*p, host))
			return true;
	for (size_t i = 0; i < r->n_creds; i++)
		if (strcmp(r->creds[i].host, host) == 0)
			return true;
	for (size_t i = 0; i < r->n_rules; i++)
		if (net_host_pattern_covers(r->rules[i].host, host))
			return true;
	return false;
}

bool net_rules_look_at_http(const NetRules *r)
{
	return r && (r->n_creds > 0 || r->n_rules > 0);
}

bool net_path_within(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(path, prefix, n) != 0)
		return false;
	return prefix[n - 1] == '/' || path[n] == '\0' || path[n] == '/' || path[n] == '?';
}

static bool rule_covers(const NetRequestRule *q, const char *method, const char *path)
{
	bool m = is_empty(q->methods), pa = is_empty(q->paths);

	STRV_FOREACH(x, q->methods)
		m = m || strcmp(*x, method) == 0;
	STRV_FOREACH(x, q->paths)
		pa = pa || net_path_within(path, *x);
	return m && pa;
}

const char *net_rules_check_request(const NetRules *r, const char *host, const char *method,
				    const char *path, char *buf, size_t bufsz)
{
	bool any_allow = false;

	if (!r)
		return NULL;
	for (size_t i = 0; i < r->n_rules; i++) {
		const NetRequestRule *q = &r->rules[i];
		if (!net_host_pattern_covers(q->host, host))
			continue;
		if (q->deny && rule_covers(q, method, path)) {
			snprintf(buf, bufsz, "network.requests[%zu] %s denies it", i, q->text);
			return buf;
		}
		any_allow = any_allow || !q->deny;
	}
	if (!any_allow)
		return NULL;
	for (size_t i = 0; i < r->n_rules; i++) {
		const NetRequestRule *q = &r->rules[i];
		if (!q->deny && net_host_pattern_covers(q->host, host) && rule_covers(q, method, path))
			return NULL;
	}
	snprintf(buf, bufsz, "no rule of network.requests for %s allows it", host);
	return buf;
}

char **net_rules_env(const NetRules *r)
{
	static const char *const ca_vars[] = { "SSL_CERT_FILE",	   "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
					       "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO",	    "PIP_CERT",
					       "NPM_CONFIG_CAFILE", "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO",
					       "DENO_CERT", NULL };
	char **l = calloc(1, sizeof(char *));

	if (!r || !l)
		return l;
	for (size_t i = 0; i < r->n_creds; i++) {
		char *kv = NULL;
		if (asprintf(&kv, "%s=%s", r->creds[i].env, r->creds[i].placeholder) < 0 ||
		    strv_consume(&l, kv) < 0) {
			strv_free(l);
			return NULL;
		}
	}
	/* Presets: git asks a credential helper (set through GIT_CONFIG_*)
	 * for the placeholder; pip reads PIP_INDEX_URL; npm expands
	 * ${NPM_TOKEN} in the project's .npmrc itself. */
	{
		size_t ngit = 0;
		for (size_t i = 0; i < r->n_creds; i++) {
			const NetCredential *c = &r->creds[i];
			char *kv = NULL;
			int k = 0;
			if (c->preset && strcmp(c->preset, "git") == 0) {
				k = asprintf(&kv, "GIT_CONFIG_KEY_%zu=credential.https://%s.helper", ngit, c->host);
				if (k >= 0 && strv_consume(&l, kv) >= 0)
					k = asprintf(&kv,
						     "GIT_CONFIG_VALUE_%zu=!f() { test \"$1\" = get && echo username=%s "
						     "&& echo password=%s; }; f",
						     ngit, c->username ? c->username : "x-access-token", c->placeholder);
				else
					k = -1;
				ngit++;
			} else if (c->preset && strcmp(c->preset, "pip") == 0)
				k = asprintf(&kv, "PIP_INDEX_URL=https://%s:%s@%s%s", c->username ? c->username : "ward",
					     c->placeholder, c->host, c->path ? c->path : "/simple/");
			else
				continue;
			if (k < 0 || strv_consume(&l, kv) < 0) {
				strv_free(l);
				return NULL;
			}
		}
		if (ngit > 0) {
			char *kv = NULL;
			if (asprintf(&kv, "GIT_CONFIG_COUNT=%zu", ngit) < 0 || strv_consume(&l, kv) < 0) {
				strv_free(l);
				return NULL;
			}
		}
	}
	for (size_t i = 0; r->ca && ca_vars[i]; i++) {
		char *kv = NULL;
		if (asprintf(&kv, "%s=%s", ca_vars[i], NET_CA_BUNDLE_PATH) < 0 ||
		    strv_consume(&l, kv) < 0) {
			strv_free(l);
			return NULL;
		}
	}
	return l;
}
