/* Refusals the proxy process reports back to the supervisor, so that a run
 * ends with one line naming the refused hosts and rules (the audit log has
 * every connection). The proxy writes one fixed-size record per distinct
 * refused host:port (at most PROXY_REPORT_DISTINCT, then one overflow
 * record) with a single write(2) each, atomic on a pipe; the supervisor
 * reads them after the proxy is gone. Portable: no Linux-only headers. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Distinct host:port refusals reported per run (then one overflow record). */
#define PROXY_REPORT_DISTINCT 16

typedef struct ProxyRefusal {
	uint16_t port;
	bool overflow;    /* more distinct refusals than were reported */
	char host[256];
	char rule[240];   /* why: "not in network.allow", "x in network.deny", ... */
} ProxyRefusal;

/* Read every record available on @fd (non-blocking; stops at EAGAIN or
 * EOF) into @ret (up to @max). Returns how many. */
size_t proxy_refusals_read(int fd, ProxyRefusal *ret, size_t max);
/* The summary line (no "ward: " prefix, no newline) for @n records, ending
 * with "; @see" when @see is set (where the details are). 0, or -ENOBUFS
 * when it was cut short. */
int proxy_refusals_format(const ProxyRefusal *r, size_t n, const char *see, char *buf, size_t len);
