/* `ward-test.exe proxy-serve POLICY [AUDIT_DIR [MAX_CONNECTIONS [HEADER_MS]]]`:
 * ward.exe's proxy on its own, for tests/windows/test-wine-proxy.sh. It
 * prints "port N", serves until its stdin ends, then prints each refusal
 * ("refused HOST:PORT REASON") and "accepted N overflowed N open N peak N".
 * Built into ward-test.exe only (WARD_TEST_HOOKS): ward.exe runs the proxy
 * inside `ward.exe run`. */
#include <winsock2.h>
#include <windows.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "audit/audit.h"
#include "net/http-parse.h"
#include "policy/policy.h"
#include "windows/win-proxy.h"

int win_proxy_main(int argc, char **argv);

int win_proxy_main(int argc, char **argv)
{
	WardPolicy *pol = NULL;
	PolicyError perr = { 0 };
	AuditLog *audit = NULL;
	WinProxy *p = NULL;
	ProxyRefusal refused[PROXY_REPORT_DISTINCT];
	WinProxyCounts counts;
	bool more = false;
	char why[256] = "", buf[256];
	DWORD got;
	size_t n;

	if (argc < 2) {
		fprintf(stderr, "usage: proxy-serve POLICY [AUDIT_DIR [MAX_CONNECTIONS [HEADER_MS]]]\n");
		return 2;
	}
	if (policy_load(argv[1], NULL, &pol, &perr) < 0) {
		fprintf(stderr, "ward: policy %s: %s: %s\n", perr.file, perr.path, perr.msg);
		return 125;
	}
	if (argc > 2 && audit_open(argv[2], "proxy-test", &audit) < 0) {
		fprintf(stderr, "ward: cannot open the audit log in %s\n", argv[2]);
		return 125;
	}
	WinProxyConfig cfg = { .policy = pol, .audit = audit,
			       .max_connections = argc > 3 ? (unsigned)atoi(argv[3]) : 0,
			       .header_timeout_ms = argc > 4 ? (unsigned)atoi(argv[4]) : 0 };
	if (win_proxy_listen(&cfg, &p, why, sizeof(why)) < 0 || win_proxy_start(p) < 0) {
		fprintf(stderr, "ward: proxy: %s\n", why);
		return 125;
	}
	/* The head's limit, so that a test can overflow it. */
	printf("port %u%s head-max %u\n", win_proxy_port(p), win_proxy_has_v6(p) ? " v6" : "",
	       (unsigned)HTTP_HEAD_MAX);
	fflush(stdout);
	while (ReadFile(GetStdHandle(STD_INPUT_HANDLE), buf, sizeof(buf), &got, NULL) && got > 0)
		;
	win_proxy_stop(p);
	n = win_proxy_refusals(p, refused, PROXY_REPORT_DISTINCT, &more);
	for (size_t i = 0; i < n; i++)
		printf("refused %s:%u %s\n", refused[i].host, refused[i].port, refused[i].rule);
	win_proxy_counts(p, &counts);
	printf("accepted %lu overflowed %lu open %u peak %u%s\n", counts.accepted,
	       counts.overflowed, counts.open, counts.peak, more ? " more" : "");
	win_proxy_free(p);
	audit_close(audit);
	policy_free(pol);
	return 0;
}
