/* What one command of a live session did on the network, for its result
 * and `exit` event (docs/sessions.md, "Exit status, result, audit"): the
 * proxy's refusals reported while it ran (net_refused, at most
 * PROXY_REPORT_DISTINCT distinct host:port, then net_refused_more) and the
 * network namespace's counters over the same time (net_attempts), the
 * facts a cold run's result has (run-hints.h). One proxy and one namespace
 * serve every command of a session: what happened while several commands
 * ran is attributed to each of them. Not a security decision. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "linux/netns-stats.h"
#include "net/proxy-report.h"

typedef struct SessionNet {
	ProxyRefusal *refused; /* PROXY_REPORT_DISTINCT of them, allocated on the first */
	size_t n_refused;
	bool refused_more;
	NetnsCounters start;   /* the namespace's counters when the command started */
} SessionNet;

/* The command starts: the counters now (@netstat_fds may be NULL). */
void session_net_begin(SessionNet *n, const int *netstat_fds);
/* A refusal the proxy reported while the command ran (de-duplicated). */
void session_net_add(SessionNet *n, const ProxyRefusal *r);
/* The facts for run_result_object()/run_event_exit() ("net_refused",
 * "net_refused_more", "net_attempts" when the counters moved); caller
 * frees; NULL on OOM. */
cJSON *session_net_facts(const SessionNet *n, const int *netstat_fds);
/* The line a cold run ends with when the proxy refused connections
 * (run-hints.h), for this command: 0, or -ENOENT when nothing was refused. */
int session_net_line(const SessionNet *n, const char *see, char *buf, size_t len);
void session_net_done(SessionNet *n);
