#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "net/proxy-internal.h"
#include "net/proxy-report.h"

_Static_assert(sizeof(ProxyRefusal) <= 512, "one atomic pipe write per record");

void proxy_report_refusal(Proxy *p, const Conn *c)
{
	/* report_every: reported when refused (conn_refuse). */
	if (c->verdict == NET_VERDICT_DENY && !p->cfg.report_every)
		proxy_report(p, c->host, c->port, c->refusal[0] ? c->refusal : c->rule);
}

void proxy_report(Proxy *p, const char *host, uint16_t port, const char *why)
{
	ProxyRefusal rec = { .port = port };
	char key[sizeof(p->reported[0])];

	if (!p->cfg.has_report)
		return;
	if (p->cfg.report_every) {
		snprintf(rec.host, sizeof(rec.host), "%s", host);
		snprintf(rec.rule, sizeof(rec.rule), "%.*s", (int)sizeof(rec.rule) - 1, why);
		(void)!write(p->cfg.report_fd, &rec, sizeof(rec));
		return;
	}
	snprintf(key, sizeof(key), "%s:%u", host, port);
	for (size_t i = 0; i < p->n_reported; i++)
		if (strcmp(p->reported[i], key) == 0)
			return;
	if (p->n_reported >= PROXY_REPORT_DISTINCT) {
		if (p->report_overflowed)
			return;
		p->report_overflowed = true;
		rec.overflow = true;
	} else {
		snprintf(p->reported[p->n_reported++], sizeof(p->reported[0]), "%s", key);
		snprintf(rec.host, sizeof(rec.host), "%s", host);
		/* The reason the client was given, not only the pattern. */
		snprintf(rec.rule, sizeof(rec.rule), "%.*s", (int)sizeof(rec.rule) - 1, why);
	}
	/* Non-blocking pipe: a full pipe loses a line of a summary, never
	 * stalls the proxy. */
	(void)!write(p->cfg.report_fd, &rec, sizeof(rec));
}

/* What the command chose (a host name, a reason quoting it) goes to the
 * user's terminal: printable ASCII only, whatever the parsers let through. */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

size_t proxy_refusals_read(int fd, ProxyRefusal *ret, size_t max)
{
	size_t n = 0;

	while (n < max) {
		ProxyRefusal rec;
		ssize_t r = read(fd, &rec, sizeof(rec));
		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof(rec))
			break;
		rec.host[sizeof(rec.host) - 1] = '\0';
		rec.rule[sizeof(rec.rule) - 1] = '\0';
		printable(rec.host);
		printable(rec.rule);
		ret[n++] = rec;
	}
	return n;
}

int proxy_refusals_format(const ProxyRefusal *r, size_t n, const char *see, char *buf, size_t len)
{
	size_t hosts = 0, o = 0;
	bool more = false;
	int k;

	for (size_t i = 0; i < n; i++) {
		if (r[i].overflow)
			more = true;
		else
			hosts++;
	}
	k = snprintf(buf, len, "the proxy refused %zu %s%s:", hosts,
		     hosts == 1 ? "destination" : "destinations", more ? " (and more)" : "");
	if (k < 0 || (size_t)k >= len)
		return -ENOBUFS;
	o = (size_t)k;
	for (size_t i = 0, shown = 0; i < n; i++) {
		if (r[i].overflow)
			continue;
		bool v6 = strchr(r[i].host, ':') != NULL;
		k = snprintf(buf + o, len - o, "%s %s%s%s:%u (%s)", shown ? "," : "", v6 ? "[" : "",
			     r[i].host, v6 ? "]" : "", r[i].port, r[i].rule);
		if (k < 0 || (size_t)k >= len - o)
			return -ENOBUFS;
		o += (size_t)k;
		shown++;
	}
	k = snprintf(buf + o, len - o, "%s%s", see ? "; " : "", see ? see : "");
	if (k < 0 || (size_t)k >= len - o)
		return -ENOBUFS;
	return 0;
}
