/* The proxy process: one single-threaded epoll loop over the two listening
 * sockets, a signalfd for SIGTERM, c-ares' sockets and every connection's
 * two sockets; timeouts are swept once a second. proxy_spawn() forks it off
 * the supervisor. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "net/proxy-internal.h"
#include "net/synth-map.h"

#define MAX_EVENTS 256
#define OVERFLOW_SLACK 256 /* answered-and-lingering connections over the limit */

int64_t proxy_now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	return fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static void listeners_set(Proxy *p, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0 };

	if (p->http_fd >= 0) {
		ev.data.ptr = &p->listen_http;
		(void)epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->http_fd, &ev);
	}
	if (p->socks_fd >= 0) {
		ev.data.ptr = &p->listen_socks;
		(void)epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->socks_fd, &ev);
	}
	for (size_t i = 0; i < p->n_hosts; i++) {
		ev.data.ptr = &p->hosts[i].w;
		(void)epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->hosts[i].fd, &ev);
	}
	for (size_t i = 0; i < p->n_captures; i++) {
		ev.data.ptr = &p->captures[i].w;
		(void)epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->captures[i].fd, &ev);
	}
	p->accept_paused = !on;
}

static void do_accept(Proxy *p, int lfd, ConnKind kind, uint16_t host_port)
{
	/* Bounded per wakeup so a connect storm cannot starve the relays; the
	 * listener is level-triggered and comes back. */
	for (int i = 0; i < 64; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		Conn *c;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* Out of descriptors: stop accepting for a while
				 * rather than spin on a readable listener. */
				listeners_set(p, false);
				p->accept_resume_ms = p->now_ms + 100;
			}
			return;
		}
		if (p->n_total >= (size_t)p->max_conns + OVERFLOW_SLACK) {
			(void)close(fd);
			continue;
		}
		c = conn_new(p, fd, kind);
		if (!c) {
			(void)close(fd);
			continue;
		}
		if (p->n_active > p->max_conns) {
			if (kind == CONN_KIND_HOST_PORT || kind == CONN_KIND_CAPTURE)
				conn_close(c); /* a raw stream: no way to say why */
			else
				conn_overflow(c);
		} else if (kind == CONN_KIND_HOST_PORT)
			conn_start_host_port(c, host_port);
		else if (kind == CONN_KIND_CAPTURE)
			capture_start(c);
	}
}

static void sweep(Proxy *p)
{
	for (Conn *c = p->conns, *next; c; c = next) {
		int64_t deadline = c->state == CONN_RELAY ? c->active_ms + p->idle_ms : c->deadline_ms;
		next = c->next;
		if (p->now_ms >= deadline)
			conn_on_timeout(c);
	}
	dns_stub_sweep(p);
}

static void run_ready(Proxy *p)
{
	Conn *list = p->ready;

	p->ready = NULL;
	while (list) {
		Conn *c = list;
		list = c->ready_next;
		c->in_ready = false;
		conn_run(c);
	}
}

static void collect(Proxy *p)
{
	while (p->dead) {
		Conn *c = p->dead;
		p->dead = c->dead_next;
		free(c);
	}
	if (p->resolver)
		resolver_collect(p->resolver);
}

static void raise_nofile(unsigned max_conns)
{
	struct rlimit rl;
	/* Client and upstream socket per connection. */
	rlim_t want = (rlim_t)max_conns * 2 + OVERFLOW_SLACK + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
}

static int loop(Proxy *p)
{
	struct epoll_event evs[MAX_EVENTS];
	int64_t next_sweep = p->now_ms + 1000;

	for (;;) {
		int timeout = (int)(next_sweep - p->now_ms), n;

		if (timeout < 0)
			timeout = 0;
		if (p->resolver) {
			int rt = resolver_timeout_ms(p->resolver);
			if (rt >= 0 && rt < timeout)
				timeout = rt;
		}
		if (p->accept_paused && timeout > 100)
			timeout = 100;
		if (p->ready)
			timeout = 0;
		n = epoll_wait(p->epfd, evs, MAX_EVENTS, timeout);
		if (n < 0 && errno != EINTR)
			return -errno;
		p->now_ms = proxy_now_ms();
		for (int i = 0; i < n; i++) {
			Watch *w = evs[i].data.ptr;
			switch (w->kind) {
			case WATCH_LISTEN_HTTP:
				do_accept(p, p->http_fd, CONN_KIND_HTTP, 0);
				break;
			case WATCH_LISTEN_SOCKS:
				do_accept(p, p->socks_fd, CONN_KIND_SOCKS5, 0);
				break;
			case WATCH_LISTEN_HOST: {
				HostListen *h = (HostListen *)w;
				do_accept(p, h->fd, CONN_KIND_HOST_PORT, h->port);
				break;
			}
			case WATCH_LISTEN_CAPTURE:
				do_accept(p, ((HostListen *)w)->fd, CONN_KIND_CAPTURE, 0);
				break;
			case WATCH_DNS_UDP:
				dns_stub_udp(p);
				break;
			case WATCH_DNS_TCP_LISTEN:
				dns_stub_accept(p);
				break;
			case WATCH_DNS_TCP:
				dns_stub_tcp_event(p, (DnsTcp *)w, evs[i].events);
				break;
			case WATCH_SIGNAL: {
				struct signalfd_siginfo si;
				if (read(p->sigfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo == SIGTERM)
					return 0;
				break;
			}
			case WATCH_CLIENT:
			case WATCH_UPSTREAM: {
				Endpoint *e = (Endpoint *)w;
				Conn *c = w->kind == WATCH_CLIENT
						  ? (Conn *)((char *)e - offsetof(Conn, client))
						  : (Conn *)((char *)e - offsetof(Conn, upstream));
				conn_handle_event(c, e, evs[i].events);
				break;
			}
			case PROXY_WATCH_RESOLVER:
				if (p->resolver)
					resolver_handle_event(p->resolver, w, evs[i].events);
				break;
			default:
				break;
			}
		}
		if (p->resolver)
			resolver_process_timeouts(p->resolver);
		run_ready(p);
		if (p->now_ms >= next_sweep) {
			sweep(p);
			next_sweep = p->now_ms + 1000;
		}
		if (p->accept_paused && p->now_ms >= p->accept_resume_ms)
			listeners_set(p, true);
		collect(p);
	}
}

static int add_watch(Proxy *p, int fd, Watch *w, int kind)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };

	w->kind = kind;
	return epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* The capture listeners and the DNS stub's sockets, and the name map they
 * share. IPv6 capture (and AAAA answers) only when the listeners are IPv6
 * (dual-stack): netns.c falls back to IPv4 where the namespace has none. */
static int capture_setup(Proxy *p, const ProxyConfig *cfg)
{
	int r;

	if (cfg->n_capture == 0 || cfg->n_capture > PROXY_CAPTURE_FDS_MAX || cfg->dns_udp_fd < 0 ||
	    cfg->dns_tcp_fd < 0)
		return -EINVAL;
	p->synth = synth_map_new(0);
	p->captures = calloc(cfg->n_capture, sizeof(*p->captures));
	if (!p->synth || !p->captures)
		return -ENOMEM;
	p->n_captures = cfg->n_capture;
	p->capture_v6 = true;
	for (size_t i = 0; i < cfg->n_capture; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		p->captures[i] = (HostListen){ .fd = cfg->capture_fds[i] };
		if (getsockname(p->captures[i].fd, (struct sockaddr *)&ss, &len) < 0)
			return -errno;
		if (ss.ss_family != AF_INET6)
			p->capture_v6 = false;
		if ((r = set_nonblock(p->captures[i].fd)) < 0)
			return r;
	}
	p->dns_udp_fd = cfg->dns_udp_fd;
	p->dns_tcp_fd = cfg->dns_tcp_fd;
	if ((r = set_nonblock(p->dns_udp_fd)) < 0 || (r = set_nonblock(p->dns_tcp_fd)) < 0)
		return r;
	return 0;
}

int proxy_serve(const ProxyConfig *cfg, int http_fd, int socks_fd)
{
	_cleanup_close_ int epfd = -EBADF, sigfd = -EBADF;
	sigset_t mask, old;
	bool masked = false;
	Proxy p = { 0 };
	int r;

	if (!cfg || !cfg->policy || (http_fd < 0) != (socks_fd < 0) ||
	    (http_fd < 0 && cfg->n_host == 0))
		return -EINVAL;
	p.cfg = *cfg;
	net_matcher_init(&p.matcher, cfg->policy, cfg->program);
	p.max_conns = cfg->max_connections ? cfg->max_connections
		      : cfg->policy->max_connections ? (unsigned)cfg->policy->max_connections
						      : PROXY_DEFAULT_MAX_CONNECTIONS;
	p.header_ms = cfg->header_timeout_ms ? cfg->header_timeout_ms : 10000;
	p.idle_ms = cfg->idle_timeout_ms ? cfg->idle_timeout_ms : 300000;
	p.connect_ms = cfg->connect_timeout_ms ? cfg->connect_timeout_ms : 10000;
	p.http_fd = http_fd;
	p.socks_fd = socks_fd;
	p.now_ms = proxy_now_ms();
	raise_nofile(p.max_conns);

	if (http_fd >= 0 && ((r = set_nonblock(http_fd)) < 0 || (r = set_nonblock(socks_fd)) < 0))
		return r;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return -errno;
	p.epfd = epfd;
	if (cfg->n_host > 0) {
		p.hosts = calloc(cfg->n_host, sizeof(*p.hosts));
		if (!p.hosts)
			return -ENOMEM;
		p.n_hosts = cfg->n_host;
		for (size_t i = 0; i < cfg->n_host; i++) {
			p.hosts[i] = (HostListen){ .fd = cfg->host_fds[i], .port = cfg->host_ports[i] };
			r = set_nonblock(p.hosts[i].fd);
			if (r < 0)
				goto out;
		}
	}

	p.dns_udp_fd = p.dns_tcp_fd = -EBADF;
	if (cfg->capture && (r = capture_setup(&p, cfg)) < 0)
		goto out;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, &old) < 0) {
		r = -errno;
		goto out;
	}
	masked = true;
	sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0) {
		r = -errno;
		goto out;
	}
	p.sigfd = sigfd;
	if (http_fd >= 0 && ((r = add_watch(&p, http_fd, &p.listen_http, WATCH_LISTEN_HTTP)) < 0 ||
			     (r = add_watch(&p, socks_fd, &p.listen_socks, WATCH_LISTEN_SOCKS)) < 0))
		goto out;
	for (size_t i = 0; i < p.n_hosts; i++)
		if ((r = add_watch(&p, p.hosts[i].fd, &p.hosts[i].w, WATCH_LISTEN_HOST)) < 0)
			goto out;
	for (size_t i = 0; i < p.n_captures; i++)
		if ((r = add_watch(&p, p.captures[i].fd, &p.captures[i].w, WATCH_LISTEN_CAPTURE)) < 0)
			goto out;
	if (p.dns_udp_fd >= 0 &&
	    ((r = add_watch(&p, p.dns_udp_fd, &p.dns_udp, WATCH_DNS_UDP)) < 0 ||
	     (r = add_watch(&p, p.dns_tcp_fd, &p.dns_tcp, WATCH_DNS_TCP_LISTEN)) < 0))
		goto out;
	if ((r = add_watch(&p, sigfd, &p.sig, WATCH_SIGNAL)) < 0)
		goto out;

	r = loop(&p);
	/* SIGTERM (or a fatal epoll error): end every connection, which
	 * writes its audit event, then let go of the resolver. */
	while (p.conns)
		conn_close(p.conns);
	dns_stub_close_all(&p);
	collect(&p);
	p.resolver = resolver_free(p.resolver);
out:
	if (masked)
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
	free(p.hosts);
	free(p.captures);
	p.synth = synth_map_free(p.synth);
	return r;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Close everything but @keep (and 0-2, which go to /dev/null). */
static int close_other_fds(int *keep, size_t n)
{
	int devnull, lo = 3;

	qsort(keep, n, sizeof(int), cmp_int);
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < lo)
			continue;
		if (keep[i] > lo && close_range((unsigned)lo, (unsigned)keep[i] - 1, 0) < 0)
			return -errno;
		lo = keep[i] + 1;
	}
	if (close_range((unsigned)lo, ~0U, 0) < 0)
		return -errno;
	/* The harness may wait for EOF on ward's stdout: the proxy must not
	 * hold it (or a terminal) open. */
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0)
		return -errno;
	for (int fd = 0; fd < 3; fd++) {
		bool kept = false;
		for (size_t i = 0; i < n; i++)
			kept |= keep[i] == fd;
		if (!kept && dup2(devnull, fd) < 0)
			return -errno;
	}
	if (devnull > 2)
		(void)close(devnull);
	return 0;
}

int proxy_spawn(const ProxyConfig *cfg, int http_fd, int socks_fd, pid_t *ret_pid)
{
	pid_t parent = getpid(), pid;
	/* http, socks, audit, events, stream, report, the DNS stub's two */
	int keep[8 + PROXY_HOST_FDS_MAX + PROXY_CAPTURE_FDS_MAX], r;
	size_t n = 0;
	sigset_t none;

	if (!cfg || !cfg->policy || (http_fd < 0) != (socks_fd < 0) ||
	    (http_fd < 0 && cfg->n_host == 0) || cfg->n_host > PROXY_HOST_FDS_MAX || !ret_pid ||
	    (cfg->capture && (cfg->n_capture > PROXY_CAPTURE_FDS_MAX || http_fd < 0)))
		return -EINVAL;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		*ret_pid = pid;
		return 0;
	}

	/* Child. Die with the supervisor, and check it did not die already
	 * (the death signal is only armed from here on). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	(void)prctl(PR_SET_NAME, "ward-proxy");
	/* A terminal's ^C or ^\ goes to the whole foreground group; the
	 * command's own handling decides, the proxy stays up until SIGTERM. */
	(void)signal(SIGINT, SIG_IGN);
	(void)signal(SIGQUIT, SIG_IGN);
	(void)signal(SIGHUP, SIG_IGN);
	(void)signal(SIGPIPE, SIG_IGN);
	(void)signal(SIGTERM, SIG_DFL);
	(void)signal(SIGCHLD, SIG_DFL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);

	if (http_fd >= 0) {
		keep[n++] = http_fd;
		keep[n++] = socks_fd;
	}
	for (size_t i = 0; i < cfg->n_host; i++)
		keep[n++] = cfg->host_fds[i];
	if (cfg->capture) {
		for (size_t i = 0; i < cfg->n_capture; i++)
			keep[n++] = cfg->capture_fds[i];
		keep[n++] = cfg->dns_udp_fd;
		keep[n++] = cfg->dns_tcp_fd;
	}
	if (cfg->audit && audit_fd(cfg->audit) >= 0)
		keep[n++] = audit_fd(cfg->audit);
	/* The live copy for --events-fd: refusals reach the harness at once. */
	if (cfg->audit && audit_events_fd(cfg->audit) >= 0)
		keep[n++] = audit_events_fd(cfg->audit);
	if (cfg->audit && audit_stream_fd(cfg->audit) >= 0)
		keep[n++] = audit_stream_fd(cfg->audit);
	if (cfg->has_report && cfg->report_fd >= 0)
		keep[n++] = cfg->report_fd;
	if (close_other_fds(keep, n) < 0)
		_exit(1);
	r = proxy_serve(cfg, http_fd, socks_fd);
	_exit(r < 0 ? 1 : 0);
}
