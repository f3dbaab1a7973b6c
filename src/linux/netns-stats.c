#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/netns-stats.h"

/* In /proc/net/snmp a protocol has two lines, names then values:
 *   Ip: Forwarding DefaultTTL ... OutNoRoutes ...
 *   Ip: 2 64 ... 3 ...                                            */
static bool snmp_value(const char *text, const char *proto, const char *name, uint64_t *ret)
{
	size_t plen = strlen(proto);
	const char *names = NULL, *values = NULL;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, proto, plen) != 0 || l[plen] != ':' || l[plen + 1] != ' ')
			continue;
		if (!names)
			names = l + plen + 2;
		else {
			values = l + plen + 2;
			break;
		}
	}
	if (!names || !values)
		return false;
	for (size_t nlen = strlen(name);;) {
		const char *ne = names + strcspn(names, " \n");
		const char *ve = values + strcspn(values, " \n");
		if ((size_t)(ne - names) == nlen && strncmp(names, name, nlen) == 0) {
			char *end;
			unsigned long long v = strtoull(values, &end, 10);
			if (end == values)
				return false;
			*ret = v;
			return true;
		}
		if (*ne != ' ' || *ve != ' ')
			return false;
		names = ne + 1;
		values = ve + 1;
	}
}

/* /proc/net/snmp6: one "Name   value" per line. */
static bool snmp6_value(const char *text, const char *name, uint64_t *ret)
{
	size_t nlen = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, name, nlen) == 0 && (l[nlen] == ' ' || l[nlen] == '\t')) {
			*ret = strtoull(l + nlen, NULL, 10);
			return true;
		}
	return false;
}

void netns_stats_parse(const char *snmp, const char *snmp6, NetnsCounters *ret)
{
	uint64_t v;

	if (snmp) {
		ret->valid = true;
		if (snmp_value(snmp, "Ip", "OutNoRoutes", &v))
			ret->no_route += v;
		if (snmp_value(snmp, "Udp", "NoPorts", &v))
			ret->udp_no_port += v;
		if (snmp_value(snmp, "Tcp", "AttemptFails", &v))
			ret->tcp_refused += v;
	}
	if (snmp6) {
		ret->valid = true;
		if (snmp6_value(snmp6, "Ip6OutNoRoutes", &v))
			ret->no_route += v;
		if (snmp6_value(snmp6, "Udp6NoPorts", &v))
			ret->udp_no_port += v;
	}
}

void netns_stats_open(pid_t pid, int ret_fds[2])
{
	static const char *const names[2] = { "snmp", "snmp6" };

	for (int i = 0; i < 2; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, names[i]);
		ret_fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (ret_fds[i] < 0)
			ret_fds[i] = -EBADF;
	}
}

static bool read_all(int fd, char *buf, size_t n)
{
	size_t got = 0;

	if (fd < 0)
		return false;
	/* A seq_file: pread from 0 shows the counters as they are now. */
	for (;;) {
		ssize_t r = pread(fd, buf + got, n - 1 - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return false;
		if (r == 0 || got + (size_t)r >= n - 1) {
			got += (size_t)r;
			break;
		}
		got += (size_t)r;
	}
	buf[got] = '\0';
	return got > 0;
}

void netns_stats_read(const int fds[2], NetnsCounters *ret)
{
	char *a = malloc(16384), *b = malloc(16384);

	*ret = (NetnsCounters){};
	if (a && b)
		netns_stats_parse(read_all(fds[0], a, 16384) ? a : NULL,
				  read_all(fds[1], b, 16384) ? b : NULL, ret);
	free(a);
	free(b);
}
