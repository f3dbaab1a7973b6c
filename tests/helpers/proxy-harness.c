/* Test and bench driver for the egress proxy, outside any sandbox: binds two
 * loopback listeners (HTTP and SOCKS5, ephemeral ports unless given), builds
 * a policy from flags (or a policy file), runs the proxy and prints one line
 * "http=PORT socks=PORT pid=PID" once it serves. SIGTERM stops it.
 *
 *   proxy-harness [--allow P]... [--deny P]... [--host NAME=ADDR]...
 *                 [--command PROG=P1,P2]... [--program NAME] [--policy FILE]
 *                 [--audit DIR] [--max N] [--header-timeout-ms N]
 *                 [--idle-timeout-ms N] [--http-port N] [--socks-port N]
 *                 [--spawn] [--spawn-cost N]
 *
 * --spawn runs the proxy through proxy_spawn() (a child with
 * PR_SET_PDEATHSIG) and prints the child's pid; the harness then waits, so
 * killing the harness must take the proxy with it. --spawn-cost N starts
 * and stops (SIGTERM, waitpid) the proxy N times and prints the mean
 * microseconds of one start+stop, the proxy's share of a run's startup. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/strv.h"
#include "net/proxy.h"
#include "policy/policy.h"

static int listen_on(int port, int *ret_port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	socklen_t len = sizeof(a);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4096) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	*ret_port = ntohs(a.sin_port);
	return fd;
}

static int add_command(WardPolicy *p, const char *spec)
{
	const char *eq = strchr(spec, '=');
	NetCommand *n;
	char *list, *save = NULL;

	if (!eq)
		return -EINVAL;
	n = realloc(p->net_commands, (p->n_net_commands + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->net_commands = n;
	n = &p->net_commands[p->n_net_commands++];
	*n = (NetCommand){ .name = strndup(spec, (size_t)(eq - spec)) };
	list = strdup(eq + 1);
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
		(void)strv_extend(&n->allow, t);
	free(list);
	return 0;
}

static int add_host(WardPolicy *p, const char *spec)
{
	const char *eq = strchr(spec, '=');
	NetHost *n;

	if (!eq)
		return -EINVAL;
	n = realloc(p->net_hosts, (p->n_net_hosts + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->net_hosts = n;
	p->net_hosts[p->n_net_hosts++] = (NetHost){
		.name = strndup(spec, (size_t)(eq - spec)),
		.address = strdup(eq + 1),
	};
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: proxy-harness [--allow P] [--deny P] [--host N=A] [--command PROG=P,..] "
			"[--program N] [--policy F] [--audit DIR] [--max N] [--header-timeout-ms N] "
			"[--idle-timeout-ms N] [--http-port N] [--socks-port N] [--spawn]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	WardPolicy *p = policy_new_empty();
	ProxyConfig cfg = { 0 };
	AuditLog *audit = NULL;
	int http_port = 0, socks_port = 0, hfd, sfd, r;
	bool spawn = false;
	int spawn_cost = 0;
	PolicyError err;

	if (!p)
		return 1;
	p->net_mode = NET_MODE_PROXY;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--spawn") == 0) {
			spawn = true;
			continue;
		}
		if (strcmp(a, "--copy") == 0) {
			cfg.relay_copy = true;
			continue;
		}
		if (strcmp(a, "--spawn-cost") == 0 && v) {
			spawn_cost = atoi(v);
			i++;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (strcmp(a, "--allow") == 0)
			r = strv_extend(&p->net_allow, v);
		else if (strcmp(a, "--deny") == 0)
			r = strv_extend(&p->net_deny, v);
		else if (strcmp(a, "--host") == 0)
			r = add_host(p, v);
		else if (strcmp(a, "--command") == 0)
			r = add_command(p, v);
		else if (strcmp(a, "--program") == 0)
			r = (cfg.program = v) ? 0 : 0;
		else if (strcmp(a, "--policy") == 0) {
			r = policy_merge_file(p, v, &err);
			if (r < 0)
				fprintf(stderr, "proxy-harness: %s: %s: %s\n", err.file, err.path, err.msg);
		} else if (strcmp(a, "--audit") == 0)
			r = audit_open(v, "proxytest", &audit);
		else if (strcmp(a, "--max") == 0)
			r = (cfg.max_connections = (unsigned)atoi(v)) ? 0 : -EINVAL;
		else if (strcmp(a, "--header-timeout-ms") == 0)
			r = (cfg.header_timeout_ms = (unsigned)atoi(v)) ? 0 : -EINVAL;
		else if (strcmp(a, "--idle-timeout-ms") == 0)
			r = (cfg.idle_timeout_ms = (unsigned)atoi(v)) ? 0 : -EINVAL;
		else if (strcmp(a, "--http-port") == 0)
			r = (http_port = atoi(v)) >= 0 ? 0 : -EINVAL;
		else if (strcmp(a, "--socks-port") == 0)
			r = (socks_port = atoi(v)) >= 0 ? 0 : -EINVAL;
		else
			usage();
		if (r < 0) {
			fprintf(stderr, "proxy-harness: %s %s: %s\n", a, v, strerror(-r));
			return 1;
		}
	}
	hfd = listen_on(http_port, &http_port);
	sfd = listen_on(socks_port, &socks_port);
	if (hfd < 0 || sfd < 0) {
		fprintf(stderr, "proxy-harness: cannot listen: %s\n", strerror(-(hfd < 0 ? hfd : sfd)));
		return 1;
	}
	cfg.policy = p;
	cfg.audit = audit;
	(void)signal(SIGPIPE, SIG_IGN);

	if (spawn_cost > 0) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int k = 0; k < spawn_cost; k++) {
			pid_t pid;
			if (proxy_spawn(&cfg, hfd, sfd, &pid) < 0)
				return 1;
			kill(pid, SIGTERM);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("%.1f\n", ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) /
				       spawn_cost);
		return 0;
	}
	if (spawn) {
		pid_t pid;
		int status;
		r = proxy_spawn(&cfg, hfd, sfd, &pid);
		if (r < 0) {
			fprintf(stderr, "proxy-harness: proxy_spawn: %s\n", strerror(-r));
			return 1;
		}
		close(hfd);
		close(sfd);
		printf("http=%d socks=%d pid=%d\n", http_port, socks_port, (int)pid);
		fflush(stdout);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	printf("http=%d socks=%d pid=%d\n", http_port, socks_port, (int)getpid());
	fflush(stdout);
	r = proxy_serve(&cfg, hfd, sfd);
	close(hfd);
	close(sfd);
	audit_close(audit);
	policy_free(p);
	if (r < 0) {
		fprintf(stderr, "proxy-harness: proxy_serve: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}
