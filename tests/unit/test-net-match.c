/* Unit tests for src/net/net-match.c: host normalization, allow/deny
 * patterns, network.commands, pins and address classification. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "net/net-event.h"
#include "net/net-match.h"

static char *allow_list[] = { "github.com", "*.githubusercontent.com", "registry.example.org:8443",
			      "10.1.2.3:22", "[2001:db8::5]:443", "2001:db8::6", "internal.test:8080",
			      "*.wild.test:8080", "blocked.githubusercontent.com", NULL };
static char *deny_list[] = { "blocked.githubusercontent.com", "*.evil.example", "10.9.9.9", NULL };
static char *git_allow[] = { "git.example.com", NULL };

static WardPolicy make_policy(void)
{
	static NetCommand cmds[] = { { .name = "git", .allow = git_allow } };
	static NetHost hosts[] = { { .name = "Pinned.Test", .address = "127.0.0.1" } };
	return (WardPolicy){
		.net_mode = NET_MODE_PROXY,
		.net_allow = allow_list,
		.net_deny = deny_list,
		.net_commands = cmds,
		.n_net_commands = 1,
		.net_hosts = hosts,
		.n_net_hosts = 1,
	};
}

static void decide(const NetMatcher *m, const char *host, uint16_t port, NetDecision *d)
{
	char n[NET_HOST_MAX];
	assert_true(net_normalize_host(host, strlen(host), n) >= 0);
	net_match(m, n, port, d);
}

static void test_net_normalize_names(void **state)
{
	char n[NET_HOST_MAX];

	assert_int_equal(net_normalize_host("GitHub.COM.", 11, n), 0);
	assert_string_equal(n, "github.com");
	assert_int_equal(net_normalize_host("a_b-c.example", 13, n), 0);
	assert_int_equal(net_normalize_host("", 0, n), -EINVAL);
	assert_int_equal(net_normalize_host(".", 1, n), -EINVAL);
	assert_int_equal(net_normalize_host("a..b", 4, n), -EINVAL);
	assert_int_equal(net_normalize_host("a b", 3, n), -EINVAL);
	assert_int_equal(net_normalize_host("a\0b", 3, n), -EINVAL);
	assert_int_equal(net_normalize_host("evil.com/x", 10, n), -EINVAL);
	/* Numeric spellings of addresses that are not dotted quads. */
	assert_int_equal(net_normalize_host("127.1", 5, n), -EINVAL);
	assert_int_equal(net_normalize_host("2130706433", 10, n), -EINVAL);
	assert_int_equal(net_normalize_host("0x7f.0.0.1", 10, n), -EINVAL);
	assert_int_equal(net_normalize_host("0x7f000001", 10, n), -EINVAL);
	char big[300];
	memset(big, 'a', sizeof(big));
	assert_int_equal(net_normalize_host(big, sizeof(big), n), -EINVAL);
	memset(big, 'a', 64);
	assert_int_equal(net_normalize_host(big, 64, n), -EINVAL); /* label > 63 */
}

static void test_net_normalize_literals(void **state)
{
	char n[NET_HOST_MAX];

	assert_int_equal(net_normalize_host("127.0.0.1", 9, n), 1);
	assert_string_equal(n, "127.0.0.1");
	assert_int_equal(net_normalize_host("[::1]", 5, n), 1);
	assert_string_equal(n, "::1");
	assert_int_equal(net_normalize_host("2001:DB8:0:0::5", 15, n), 1);
	assert_string_equal(n, "2001:db8::5");
	assert_int_equal(net_normalize_host("[::ffff:10.0.0.1]", 17, n), 1);
	assert_string_equal(n, "10.0.0.1");
	assert_int_equal(net_normalize_host("[fe80::1%eth0]", 14, n), -EINVAL);
	assert_int_equal(net_normalize_host("[1.2.3.4]", 9, n), -EINVAL);
	assert_int_equal(net_normalize_host("[::1", 4, n), -EINVAL);
}

static void test_net_match_exact_and_default_ports(void **state)
{
	WardPolicy p = make_policy();
	NetMatcher m;
	NetDecision d;

	net_matcher_init(&m, &p, NULL);
	assert_string_equal(m.allow_name, "network.allow");
	decide(&m, "github.com", 443, &d);
	assert_true(d.allow);
	assert_true(d.exact);
	assert_string_equal(d.rule, "github.com");
	decide(&m, "GITHUB.com.", 80, &d);
	assert_true(d.allow);
	decide(&m, "github.com", 22, &d);
	assert_false(d.allow);
	assert_null(d.rule);
	assert_string_equal(d.list, "network.allow");
	decide(&m, "api.github.com", 443, &d); /* no implicit subdomains */
	assert_false(d.allow);
	decide(&m, "registry.example.org", 8443, &d);
	assert_true(d.allow);
	decide(&m, "registry.example.org", 443, &d); /* port given: only that port */
	assert_false(d.allow);
	decide(&m, "unlisted.example", 443, &d);
	assert_false(d.allow);
}

static void test_net_match_wildcards(void **state)
{
	WardPolicy p = make_policy();
	NetMatcher m;
	NetDecision d;

	net_matcher_init(&m, &p, NULL);
	decide(&m, "raw.githubusercontent.com", 443, &d);
	assert_true(d.allow);
	assert_false(d.exact);
	assert_string_equal(d.rule, "*.githubusercontent.com");
	decide(&m, "a.b.githubusercontent.com", 80, &d);
	assert_true(d.allow);
	decide(&m, "githubusercontent.com", 443, &d); /* not the apex */
	assert_false(d.allow);
	decide(&m, "evilgithubusercontent.com", 443, &d);
	assert_false(d.allow);
	decide(&m, "x.wild.test", 8080, &d);
	assert_true(d.allow);
	decide(&m, "x.wild.test", 443, &d);
	assert_false(d.allow);
}

static void test_net_match_deny_wins(void **state)
{
	WardPolicy p = make_policy();
	NetMatcher m;
	NetDecision d;

	net_matcher_init(&m, &p, NULL);
	/* Listed in both: deny wins. */
	decide(&m, "blocked.githubusercontent.com", 443, &d);
	assert_false(d.allow);
	assert_string_equal(d.list, "network.deny");
	assert_string_equal(d.rule, "blocked.githubusercontent.com");
	/* A deny entry without a port covers every port. */
	decide(&m, "a.evil.example", 8443, &d);
	assert_false(d.allow);
	assert_string_equal(d.rule, "*.evil.example");
	decide(&m, "10.9.9.9", 1234, &d);
	assert_false(d.allow);
	assert_string_equal(d.list, "network.deny");
}

static void test_net_match_ip_literals(void **state)
{
	WardPolicy p = make_policy();
	NetMatcher m;
	NetDecision d;

	net_matcher_init(&m, &p, NULL);
	decide(&m, "10.1.2.3", 22, &d);
	assert_true(d.allow);
	assert_true(d.exact);
	decide(&m, "[::ffff:10.1.2.3]", 22, &d); /* same address, other spelling */
	assert_true(d.allow);
	decide(&m, "10.1.2.4", 22, &d);
	assert_false(d.allow);
	decide(&m, "10.1.2.3", 443, &d);
	assert_false(d.allow);
	decide(&m, "2001:db8:0::5", 443, &d);
	assert_true(d.allow);
	decide(&m, "2001:db8::6", 80, &d);
	assert_true(d.allow);
	decide(&m, "2001:db8::6", 22, &d);
	assert_false(d.allow);
	decide(&m, "140.82.112.3", 443, &d); /* github.com's address is not github.com */
	assert_false(d.allow);
}

static void test_net_match_commands_replace_allow(void **state)
{
	WardPolicy p = make_policy();
	NetMatcher m;
	NetDecision d;

	net_matcher_init(&m, &p, "/usr/bin/git");
	assert_string_equal(m.allow_name, "network.commands.git");
	decide(&m, "git.example.com", 443, &d);
	assert_true(d.allow);
	decide(&m, "github.com", 443, &d);
	assert_false(d.allow);
	assert_string_equal(d.list, "network.commands.git");
	net_matcher_init(&m, &p, "curl");
	decide(&m, "github.com", 443, &d);
	assert_true(d.allow);
	decide(&m, "git.example.com", 443, &d);
	assert_false(d.allow);
}

static void test_net_pinned(void **state)
{
	WardPolicy p = make_policy();
	NetMatcher m;

	net_matcher_init(&m, &p, NULL);
	assert_string_equal(net_pinned_address(&m, "pinned.test"), "127.0.0.1");
	assert_null(net_pinned_address(&m, "github.com"));
}

static NetAddrClass cls(const char *a)
{
	struct sockaddr_storage ss;
	assert_int_equal(net_parse_address(a, &ss), 0);
	return net_addr_classify((struct sockaddr *)&ss);
}

static NetAddrClass cls6(const char *a)
{
	/* Keep the IPv6 form (net_parse_address folds mapped addresses). */
	struct sockaddr_in6 s = { .sin6_family = AF_INET6 };
	assert_int_equal(inet_pton(AF_INET6, a, &s.sin6_addr), 1);
	return net_addr_classify((struct sockaddr *)&s);
}

static void test_net_addr_classify(void **state)
{
	assert_int_equal(cls("8.8.8.8"), NET_ADDR_PUBLIC);
	assert_int_equal(cls("140.82.112.3"), NET_ADDR_PUBLIC);
	assert_int_equal(cls("127.0.0.1"), NET_ADDR_LOOPBACK);
	assert_int_equal(cls("127.255.1.2"), NET_ADDR_LOOPBACK);
	assert_int_equal(cls("10.0.0.1"), NET_ADDR_PRIVATE);
	assert_int_equal(cls("172.16.0.1"), NET_ADDR_PRIVATE);
	assert_int_equal(cls("172.31.255.255"), NET_ADDR_PRIVATE);
	assert_int_equal(cls("172.32.0.1"), NET_ADDR_PUBLIC);
	assert_int_equal(cls("192.168.1.1"), NET_ADDR_PRIVATE);
	assert_int_equal(cls("169.254.1.1"), NET_ADDR_LINK_LOCAL);
	assert_int_equal(cls("169.254.169.254"), NET_ADDR_METADATA);
	assert_int_equal(cls("100.100.100.200"), NET_ADDR_METADATA);
	assert_int_equal(cls("192.0.0.192"), NET_ADDR_METADATA);
	assert_int_equal(cls("100.64.0.1"), NET_ADDR_CGNAT);
	assert_int_equal(cls("100.127.255.255"), NET_ADDR_CGNAT);
	assert_int_equal(cls("100.128.0.1"), NET_ADDR_PUBLIC);
	assert_int_equal(cls("0.0.0.0"), NET_ADDR_UNSPECIFIED);
	assert_int_equal(cls("0.1.2.3"), NET_ADDR_UNSPECIFIED);
	assert_int_equal(cls("224.0.0.1"), NET_ADDR_MULTICAST);
	assert_int_equal(cls("239.255.255.250"), NET_ADDR_MULTICAST);
	assert_int_equal(cls("255.255.255.255"), NET_ADDR_RESERVED);
	assert_int_equal(cls("198.18.0.1"), NET_ADDR_RESERVED);
	assert_int_equal(cls("::1"), NET_ADDR_LOOPBACK);
	assert_int_equal(cls("::"), NET_ADDR_UNSPECIFIED);
	assert_int_equal(cls("fd00:ec2::254"), NET_ADDR_METADATA);
	assert_int_equal(cls("fd12:3456::1"), NET_ADDR_PRIVATE);
	assert_int_equal(cls("fc00::1"), NET_ADDR_PRIVATE);
	assert_int_equal(cls("fe80::1"), NET_ADDR_LINK_LOCAL);
	assert_int_equal(cls("ff02::1"), NET_ADDR_MULTICAST);
	assert_int_equal(cls("2606:4700::1111"), NET_ADDR_PUBLIC);
	/* IPv6 forms that end up at an IPv4 address. */
	assert_int_equal(cls6("::ffff:127.0.0.1"), NET_ADDR_LOOPBACK);
	assert_int_equal(cls6("::ffff:169.254.169.254"), NET_ADDR_METADATA);
	assert_int_equal(cls6("::ffff:8.8.8.8"), NET_ADDR_PUBLIC);
	assert_int_equal(cls6("::10.0.0.1"), NET_ADDR_PRIVATE);
	assert_int_equal(cls6("64:ff9b::7f00:1"), NET_ADDR_LOOPBACK);
	assert_int_equal(cls6("2002:c0a8:0101::1"), NET_ADDR_PRIVATE);
	assert_int_equal(cls6("2002:0808:0808::1"), NET_ADDR_PUBLIC);
}

static int check(const NetMatcher *m, const char *host, uint16_t port, const char *addr, const char **reason)
{
	char n[NET_HOST_MAX], buf[256];
	struct sockaddr_storage ss;
	NetDecision d;

	assert_true(net_normalize_host(host, strlen(host), n) >= 0);
	net_match(m, n, port, &d);
	assert_true(d.allow);
	assert_int_equal(net_parse_address(addr, &ss), 0);
	int r = net_check_address(m, &d, (struct sockaddr *)&ss, port, buf, sizeof(buf), reason);
	static char keep[256];
	if (r < 0) {
		snprintf(keep, sizeof(keep), "%s", *reason);
		*reason = keep;
	}
	return r;
}

static void test_net_check_address_private_rule(void **state)
{
	WardPolicy p = make_policy();
	NetMatcher m;
	const char *reason = NULL;

	net_matcher_init(&m, &p, NULL);
	assert_int_equal(check(&m, "github.com", 443, "140.82.112.3", &reason), 0);
	/* A wildcard entry does not let a name rebind to loopback or metadata. */
	assert_int_equal(check(&m, "raw.githubusercontent.com", 443, "127.0.0.1", &reason), -EACCES);
	assert_non_null(strstr(reason, "loopback address 127.0.0.1"));
	assert_int_equal(check(&m, "raw.githubusercontent.com", 443, "169.254.169.254", &reason), -EACCES);
	assert_non_null(strstr(reason, "metadata"));
	assert_int_equal(check(&m, "raw.githubusercontent.com", 443, "::ffff:10.0.0.1", &reason), -EACCES);
	assert_int_equal(check(&m, "raw.githubusercontent.com", 443, "fd00::1", &reason), -EACCES);
	/* An exact entry is explicit. */
	assert_int_equal(check(&m, "internal.test", 8080, "127.0.0.1", &reason), 0);
	assert_int_equal(check(&m, "10.1.2.3", 22, "10.1.2.3", &reason), 0);
	/* Deny lists addresses too, whatever name led there. */
	assert_int_equal(check(&m, "github.com", 443, "10.9.9.9", &reason), -EACCES);
	assert_non_null(strstr(reason, "network.deny"));
}

/* The reason and the `net` audit event both proxies write (net-event.c). */
static void test_net_event(void **state)
{
	WardPolicy p = make_policy();
	NetMatcher m;
	NetDecision d;
	char why[320];
	cJSON *o;

	net_matcher_init(&m, &p, NULL);
	decide(&m, "x.evil.example", 443, &d);
	assert_string_equal(net_refusal_reason(&d, "x.evil.example", 443, why, sizeof(why)),
			    "*.evil.example in network.deny");
	decide(&m, "unlisted.example", 443, &d);
	assert_string_equal(net_refusal_reason(&d, "unlisted.example", 443, why, sizeof(why)),
			    "not in network.allow");
	decide(&m, "localhost", 8080, &d);
	net_refusal_reason(&d, "localhost", 8080, why, sizeof(why));
	assert_non_null(strstr(why, "localhost inside the sandbox"));

	decide(&m, "github.com", 443, &d);
	o = net_event_object(&(NetEvent){ .kind = "socks5", .host = "github.com", .port = 443,
					  .address = "192.0.2.1", .verdict = NET_VERDICT_ALLOW,
					  .rule = d.rule, .decision = &d, .bytes_up = 3,
					  .bytes_down = 4, .duration_ms = 5, .program = "git" });
	assert_non_null(o);
	assert_string_equal(cJSON_GetObjectItem(o, "kind")->valuestring, "socks5");
	assert_string_equal(cJSON_GetObjectItem(o, "verdict")->valuestring, "allow");
	assert_string_equal(cJSON_GetObjectItem(o, "rule")->valuestring, "github.com");
	assert_string_equal(cJSON_GetObjectItem(o, "list")->valuestring, "network.allow");
	assert_int_equal(cJSON_GetObjectItem(o, "bytes_down")->valueint, 4);
	assert_string_equal(cJSON_GetObjectItem(o, "program")->valuestring, "git");
	assert_null(cJSON_GetObjectItem(o, "destination"));
	cJSON_Delete(o);
	/* A rule that is a reason, not the decision's pattern: no list. */
	o = net_event_object(&(NetEvent){ .kind = "http", .host = "unlisted.example", .port = 443,
					  .verdict = NET_VERDICT_DENY, .rule = "not in network.allow",
					  .decision = &d });
	assert_null(cJSON_GetObjectItem(o, "list"));
	assert_string_equal(cJSON_GetObjectItem(o, "address")->valuestring, "");
	cJSON_Delete(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_net_normalize_names),
		cmocka_unit_test(test_net_event),
		cmocka_unit_test(test_net_normalize_literals),
		cmocka_unit_test(test_net_match_exact_and_default_ports),
		cmocka_unit_test(test_net_match_wildcards),
		cmocka_unit_test(test_net_match_deny_wins),
		cmocka_unit_test(test_net_match_ip_literals),
		cmocka_unit_test(test_net_match_commands_replace_allow),
		cmocka_unit_test(test_net_pinned),
		cmocka_unit_test(test_net_addr_classify),
		cmocka_unit_test(test_net_check_address_private_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
