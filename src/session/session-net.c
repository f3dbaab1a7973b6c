/* One command's network facts in a live session (session-net.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "session/session-net.h"

void session_net_begin(SessionNet *n, const int *netstat_fds)
{
	*n = (SessionNet){};
	if (netstat_fds)
		netns_stats_read(netstat_fds, &n->start);
}

void session_net_add(SessionNet *n, const ProxyRefusal *r)
{
	if (r->overflow) {
		n->refused_more = true;
		return;
	}
	for (size_t i = 0; i < n->n_refused; i++)
		if (n->refused[i].port == r->port && strcmp(n->refused[i].host, r->host) == 0)
			return;
	if (n->n_refused >= PROXY_REPORT_DISTINCT) {
		n->refused_more = true;
		return;
	}
	if (!n->refused) {
		n->refused = calloc(PROXY_REPORT_DISTINCT, sizeof(*n->refused));
		if (!n->refused) {
			n->refused_more = true;
			return;
		}
	}
	n->refused[n->n_refused++] = *r;
}

static uint64_t moved(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

cJSON *session_net_facts(const SessionNet *n, const int *netstat_fds)
{
	cJSON *facts = cJSON_CreateObject(), *a;
	NetnsCounters now = {};

	if (!facts)
		return NULL;
	/* As a cold run's (run-hints.c): present when there was one. */
	a = n->n_refused ? cJSON_AddArrayToObject(facts, "net_refused") : NULL;
	for (size_t i = 0; a && i < n->n_refused; i++) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "host", n->refused[i].host);
		cJSON_AddNumberToObject(r, "port", n->refused[i].port);
		cJSON_AddStringToObject(r, "reason", n->refused[i].rule);
		cJSON_AddItemToArray(a, r);
	}
	if (n->refused_more)
		cJSON_AddBoolToObject(facts, "net_refused_more", true);
	if (netstat_fds)
		netns_stats_read(netstat_fds, &now);
	if (now.valid && n->start.valid) {
		uint64_t no_route = moved(now.no_route, n->start.no_route),
			 udp = moved(now.udp_no_port, n->start.udp_no_port),
			 tcp = moved(now.tcp_refused, n->start.tcp_refused);
		if (no_route || udp || tcp) {
			cJSON *o = cJSON_AddObjectToObject(facts, "net_attempts");
			cJSON_AddNumberToObject(o, "no_route", (double)no_route);
			cJSON_AddNumberToObject(o, "udp_no_port", (double)udp);
			cJSON_AddNumberToObject(o, "tcp_refused", (double)tcp);
		}
	}
	return facts;
}

int session_net_line(const SessionNet *n, const char *see, char *buf, size_t len)
{
	ProxyRefusal recs[PROXY_REPORT_DISTINCT + 1];
	size_t k = n->n_refused;

	if (k == 0)
		return -ENOENT;
	memcpy(recs, n->refused, k * sizeof(recs[0]));
	if (n->refused_more)
		recs[k++] = (ProxyRefusal){ .overflow = true };
	(void)proxy_refusals_format(recs, k, see, buf, len);
	return 0;
}

void session_net_done(SessionNet *n)
{
	free(n->refused);
	*n = (SessionNet){};
}
