/* What the sandbox's network namespace counted: the supervisor opens the
 * namespace's /proc/PID/net/snmp and snmp6 right after clone (the open file
 * keeps the namespace's counters readable after its last process is gone)
 * and reads them when the run ends. Only for hints ("the command tried to
 * reach the network"), never for a decision: the command can make these
 * counters move, or not, as it likes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct NetnsCounters {
	bool valid;
	uint64_t no_route;     /* Ip OutNoRoutes + Ip6 OutNoRoutes: a connect or send
	                        * to an address outside (ENETUNREACH) */
	uint64_t udp_no_port;  /* Udp(6) NoPorts: a datagram to a loopback port with no
	                        * socket (a DNS query to 127.0.0.53, say) */
	uint64_t tcp_refused;  /* Tcp AttemptFails: a connect to a loopback port where
	                        * nothing listened */
} NetnsCounters;

/* Open the counters of @pid's network namespace into @ret_fds (two fds,
 * -EBADF where one could not be opened). */
void netns_stats_open(pid_t pid, int ret_fds[2]);
/* Read them (ret->valid false when neither could be read). */
void netns_stats_read(const int fds[2], NetnsCounters *ret);
/* Parse the text of /proc/net/snmp (@snmp) and /proc/net/snmp6 (@snmp6),
 * either may be NULL, adding into @ret. Pure, for the unit tests. */
void netns_stats_parse(const char *snmp, const char *snmp6, NetnsCounters *ret);
