/* Unit tests for src/net/net-rules.c: path prefixes, host patterns,
 * request rules, and the placeholders and environment of credentials. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "net/net-rules.h"
#include "policy/policy.h"

static void test_path_within(void **state)
{
	assert_true(net_path_within("/a", "/a"));
	assert_true(net_path_within("/a/b", "/a"));
	assert_true(net_path_within("/a?x=1", "/a"));
	assert_false(net_path_within("/ab", "/a"));
	assert_true(net_path_within("/a/b", "/a/"));
	assert_false(net_path_within("/a", "/a/"));
	assert_true(net_path_within("/anything", "/"));
	assert_false(net_path_within("/b", "/a"));
}

static void test_host_pattern(void **state)
{
	assert_true(net_host_pattern_covers("api.test", "api.test"));
	assert_false(net_host_pattern_covers("api.test", "x.api.test"));
	assert_true(net_host_pattern_covers("*.example.com", "a.example.com"));
	assert_true(net_host_pattern_covers("*.example.com", "a.b.example.com"));
	assert_false(net_host_pattern_covers("*.example.com", "example.com"));
	assert_false(net_host_pattern_covers("*.example.com", "badexample.com"));
}

static WardPolicy *load(const char *json)
{
	WardPolicy *p = policy_new_empty();
	PolicyError e;

	assert_non_null(p);
	if (policy_merge_json(p, "<test>", json, &e) < 0)
		fail_msg("%s: %s", e.path, e.msg);
	return p;
}

static void test_request_rules(void **state)
{
	WardPolicy *p = load("{ \"version\": 1, \"network\": { \"mode\": \"proxy\", \"requests\": ["
			     "{ \"host\": \"api.test\", \"methods\": \"read-only\" },"
			     "{ \"host\": \"api.test\", \"methods\": [\"post\"], \"paths\": [\"/upload\"] },"
			     "{ \"host\": \"*.test\", \"action\": \"deny\", \"paths\": [\"/admin\"] } ] } }");
	char err[300] = "", buf[600];
	const NetRules *r;

	assert_int_equal(net_rules_prepare(p, err, sizeof(err)), 0);
	r = net_rules_current();
	assert_non_null(r);
	assert_null(net_rules_check_request(r, "api.test", "GET", "/x", buf, sizeof(buf)));
	assert_null(net_rules_check_request(r, "api.test", "OPTIONS", "/x", buf, sizeof(buf)));
	assert_null(net_rules_check_request(r, "api.test", "POST", "/upload/f", buf, sizeof(buf)));
	assert_non_null(net_rules_check_request(r, "api.test", "POST", "/uploads", buf, sizeof(buf)));
	assert_non_null(net_rules_check_request(r, "api.test", "DELETE", "/x", buf, sizeof(buf)));
	assert_non_null(strstr(buf, "no rule of network.requests for api.test"));
	assert_non_null(net_rules_check_request(r, "api.test", "GET", "/admin/x", buf, sizeof(buf)));
	assert_non_null(strstr(buf, "network.requests[2]"));
	/* Only a deny rule for other.test: everything else goes. */
	assert_null(net_rules_check_request(r, "other.test", "DELETE", "/x", buf, sizeof(buf)));
	assert_non_null(net_rules_check_request(r, "other.test", "GET", "/admin", buf, sizeof(buf)));
	/* No rule at all: allowed. */
	assert_null(net_rules_check_request(r, "else.example", "PUT", "/", buf, sizeof(buf)));
	/* Hosts with rules are inspected. */
	assert_true(net_rules_inspects(r, "api.test"));
	assert_true(net_rules_inspects(r, "x.test"));
	assert_false(net_rules_inspects(r, "else.example"));
	net_rules_free();
	policy_free(p);
}

static void test_credentials(void **state)
{
	WardPolicy *p;
	char err[300] = "";
	const NetRules *r;
	char **env;
	bool tok = false, git = false, cafile = false;

	setenv("WARD_UNIT_SECRET", "unit-secret-value\n", 1);
	p = load("{ \"version\": 1, \"network\": { \"mode\": \"proxy\", \"credentials\": ["
		 "{ \"host\": \"api.test\", \"env\": \"TOK\", \"from_env\": \"WARD_UNIT_SECRET\" },"
		 "{ \"preset\": \"git\", \"host\": \"git.test\", \"from_env\": \"WARD_UNIT_SECRET\" } ] } }");
	assert_int_equal(net_rules_prepare(p, err, sizeof(err)), 0);
	r = net_rules_current();
	assert_int_equal(r->n_creds, 2);
	assert_string_equal(r->creds[0].secret, "unit-secret-value"); /* the newline goes */
	assert_int_equal(strncmp(r->creds[0].placeholder, NET_PLACEHOLDER_PREFIX, strlen(NET_PLACEHOLDER_PREFIX)), 0);
	assert_int_equal(strlen(r->creds[0].placeholder), NET_PLACEHOLDER_LEN);
	assert_string_not_equal(r->creds[0].placeholder, r->creds[1].placeholder);
	assert_int_equal(r->creds[1].as, CRED_AS_BASIC);
	assert_string_equal(r->creds[1].env, "WARD_GIT_TOKEN");
	env = net_rules_env(r);
	assert_non_null(env);
	for (char **e = env; *e; e++) {
		assert_null(strstr(*e, "unit-secret-value"));
		tok = tok || strncmp(*e, "TOK=ward-placeholder-", 21) == 0;
		git = git || strstr(*e, "credential.https://git.test.helper") != NULL;
		cafile = cafile || strcmp(*e, "SSL_CERT_FILE=" NET_CA_BUNDLE_PATH) == 0;
	}
	assert_true(tok);
	assert_true(git);
	assert_true(cafile);
	assert_non_null(r->bundle);
	assert_non_null(strstr(r->bundle, "BEGIN CERTIFICATE"));
	assert_null(strstr(r->bundle, "PRIVATE KEY"));
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
	net_rules_free();
	policy_free(p);

	/* An unset variable is an error naming the key. */
	unsetenv("WARD_UNIT_SECRET");
	p = load("{ \"version\": 1, \"network\": { \"mode\": \"proxy\", \"credentials\": ["
		 "{ \"host\": \"api.test\", \"env\": \"TOK\", \"from_env\": \"WARD_UNIT_SECRET\" } ] } }");
	assert_int_equal(net_rules_prepare(p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "network.credentials[0].from_env"));
	assert_null(net_rules_current());
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_within),
		cmocka_unit_test(test_host_pattern),
		cmocka_unit_test(test_request_rules),
		cmocka_unit_test(test_credentials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
