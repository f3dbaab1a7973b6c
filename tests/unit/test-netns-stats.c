/* The counters behind the end-of-run network hints (netns-stats.c) and the
 * proxy's refusal summary line (proxy-report.c). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "linux/netns-stats.h"
#include "net/proxy-report.h"

static const char snmp[] =
	"Ip: Forwarding DefaultTTL InReceives OutRequests OutNoRoutes ReasmTimeout\n"
	"Ip: 2 64 10 12 3 0\n"
	"Tcp: RtoAlgorithm RtoMin ActiveOpens AttemptFails EstabResets\n"
	"Tcp: 1 200 5 2 0\n"
	"Udp: InDatagrams NoPorts InErrors OutDatagrams\n"
	"Udp: 0 4 0 4\n"
	"UdpLite: InDatagrams NoPorts InErrors OutDatagrams\n"
	"UdpLite: 0 100 0 0\n";
static const char snmp6[] = "Ip6InReceives                   \t7\n"
			    "Ip6OutNoRoutes                  \t5\n"
			    "Udp6NoPorts                     \t1\n"
			    "UdpLite6NoPorts                 \t9\n";

static void test_netns_stats_parse(void **state)
{
	NetnsCounters c = {};

	netns_stats_parse(snmp, snmp6, &c);
	assert_true(c.valid);
	assert_int_equal(c.no_route, 3 + 5);
	assert_int_equal(c.udp_no_port, 4 + 1); /* not UdpLite's */
	assert_int_equal(c.tcp_refused, 2);
}

static void test_netns_stats_parse_missing(void **state)
{
	NetnsCounters c = {};

	netns_stats_parse(NULL, NULL, &c);
	assert_false(c.valid);
	netns_stats_parse("Ip: Forwarding\nIp: 1\n", NULL, &c);
	assert_true(c.valid);
	assert_int_equal(c.no_route, 0);
}

static void test_netns_stats_read_self(void **state)
{
	int fds[2];
	NetnsCounters c;

	netns_stats_open(getpid(), fds);
	netns_stats_read(fds, &c);
	assert_true(c.valid);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void test_proxy_refusals_round_trip(void **state)
{
	ProxyRefusal in[3] = { { .port = 443 }, { .port = 80 }, { .overflow = true } }, out[4];
	int p[2];
	char line[1024];

	strcpy(in[0].host, "evil.example");
	strcpy(in[0].rule, "not in network.allow");
	strcpy(in[1].host, "2001:db8::1");
	strcpy(in[1].rule, "not in network.allow");
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	assert_int_equal(write(p[1], in, sizeof(in)), (ssize_t)sizeof(in));
	assert_int_equal(proxy_refusals_read(p[0], out, 4), 3);
	assert_int_equal(proxy_refusals_format(out, 3, "see the log", line, sizeof(line)), 0);
	assert_string_equal(line, "the proxy refused 2 destinations (and more): evil.example:443 "
				  "(not in network.allow), [2001:db8::1]:80 (not in network.allow); "
				  "see the log");
	assert_int_equal(proxy_refusals_format(out, 3, NULL, line, 20), -ENOBUFS);
	/* Nothing the command chose reaches the terminal unescaped. */
	strcpy(in[0].host, "a\x1b]0;pwned\x07.example");
	assert_int_equal(write(p[1], in, sizeof(in[0])), (ssize_t)sizeof(in[0]));
	assert_int_equal(proxy_refusals_read(p[0], out, 4), 1);
	assert_string_equal(out[0].host, "a?]0;pwned?.example");
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_netns_stats_parse),
		cmocka_unit_test(test_netns_stats_parse_missing),
		cmocka_unit_test(test_netns_stats_read_self),
		cmocka_unit_test(test_proxy_refusals_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
