/* Load generator for bench/proxy.sh (and the proxy's integration test):
 * a loopback source/echo server and clients that go direct, through SOCKS5
 * or through HTTP CONNECT. Plain C, no ward code, so it measures the proxy
 * and not itself.
 *
 *   proxy-bench serve                      listen on 127.0.0.1:0, print the port;
 *                                          per connection: read an 8-byte length
 *                                          N; N > 0: send N bytes and close;
 *                                          N == 0: echo until EOF
 *   proxy-bench fetch VIA BYTES            download BYTES, print seconds
 *   proxy-bench latency VIA COUNT          COUNT sequential connect + 1-byte echo,
 *                                          print microseconds per connection
 *   proxy-bench hold VIA COUNT             COUNT concurrent echo connections, all
 *                                          established, then closed; print errors
 *   proxy-bench relay MODE PORT [PIPE]     a minimal relay, no policy: listen on
 *                                          127.0.0.1:0, print the port; per
 *                                          connection connect to 127.0.0.1:PORT and
 *                                          move bytes both ways, one blocking
 *                                          thread per direction; MODE splice
 *                                          (socket -> pipe of PIPE bytes, default
 *                                          1 MiB -> socket) or copy (read/write,
 *                                          1 MiB buffer): the best a user-space hop
 *                                          does on this machine, for bench/proxy.sh;
 *                                          MODE sockmap (root): the kernel moves
 *                                          the bytes (BPF sk_skb verdict program,
 *                                          bpf_sk_redirect_map), the relay only
 *                                          passes the 8-byte request of `fetch`
 *
 * VIA is direct:PORT, socks:PROXYPORT:NAME:PORT or http:PROXYPORT:NAME:PORT. */
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <poll.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BUF (1024 * 1024)

typedef struct Via {
	char mode; /* 'd', 's', 'h' */
	int port;  /* direct port or proxy port */
	char name[256];
	int tport;
} Via;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int read_full(int fd, void *b, size_t n)
{
	size_t o = 0;
	while (o < n) {
		ssize_t r = read(fd, (char *)b + o, n - o);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		o += (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *b, size_t n)
{
	size_t o = 0;
	while (o < n) {
		ssize_t r = send(fd, (const char *)b + o, n - o, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		o += (size_t)r;
	}
	return 0;
}

static int tcp_connect(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Connect to the target through @v; returns the fd or -1. */
static int open_via(const Via *v)
{
	int fd = tcp_connect(v->port);
	if (fd < 0 || v->mode == 'd')
		return fd;
	if (v->mode == 's') {
		uint8_t req[300], rep[10];
		size_t nl = strlen(v->name), n = 0;
		req[n++] = 5; req[n++] = 1; req[n++] = 0;
		req[n++] = 5; req[n++] = 1; req[n++] = 0; req[n++] = 3; req[n++] = (uint8_t)nl;
		memcpy(req + n, v->name, nl);
		n += nl;
		req[n++] = (uint8_t)(v->tport >> 8);
		req[n++] = (uint8_t)v->tport;
		if (write_full(fd, req, n) < 0 || read_full(fd, rep, 2) < 0 || read_full(fd, rep, 10) < 0 ||
		    rep[1] != 0) {
			close(fd);
			return -1;
		}
		return fd;
	}
	char line[600], c;
	size_t got = 0;
	int n = snprintf(line, sizeof(line), "CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n", v->name, v->tport,
			 v->name, v->tport);
	if (write_full(fd, line, (size_t)n) < 0) {
		close(fd);
		return -1;
	}
	/* Read the answer head byte by byte: nothing of the tunnel may be eaten. */
	memset(line, 0, sizeof(line));
	while (got + 1 < sizeof(line) && read(fd, &c, 1) == 1) {
		line[got++] = c;
		if (got >= 4 && memcmp(line + got - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	if (strncmp(line, "HTTP/1.1 200", 12) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int parse_via(const char *s, Via *v)
{
	memset(v, 0, sizeof(*v));
	if (sscanf(s, "direct:%d", &v->port) == 1) {
		v->mode = 'd';
		return 0;
	}
	if (sscanf(s, "socks:%d:%255[^:]:%d", &v->port, v->name, &v->tport) == 3) {
		v->mode = 's';
		return 0;
	}
	if (sscanf(s, "http:%d:%255[^:]:%d", &v->port, v->name, &v->tport) == 3) {
		v->mode = 'h';
		return 0;
	}
	return -1;
}

static void serve_one(int fd)
{
	uint64_t n;
	char *b = malloc(BUF);

	if (!b || read_full(fd, &n, 8) < 0)
		goto out;
	if (n == 0) {
		for (;;) {
			ssize_t r = read(fd, b, BUF);
			if (r <= 0 || write_full(fd, b, (size_t)r) < 0)
				break;
		}
		goto out;
	}
	memset(b, 'x', BUF);
	while (n > 0) {
		size_t k = n < BUF ? (size_t)n : BUF;
		if (write_full(fd, b, k) < 0)
			break;
		n -= k;
	}
out:
	free(b);
	close(fd);
}

static void *serve_thread(void *arg)
{
	serve_one((int)(intptr_t)arg);
	return NULL;
}

static int cmd_serve(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 4096) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &len) < 0)
		return 1;
	printf("%d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		/* A thread per connection: hold needs many at once, and a
		 * fork per connection would dominate the latency figure. */
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&at, 64 * 1024);
		if (pthread_create(&t, &at, serve_thread, (void *)(intptr_t)fd) != 0)
			close(fd);
		pthread_attr_destroy(&at);
	}
}

typedef struct Hop {
	int from, to;
	bool splice;
	int pipe_size;
} Hop;

/* One direction of a minimal relay: blocking calls, nothing else. */
static void *hop_thread(void *arg)
{
	Hop *h = arg;
	int p[2] = { -1, -1 };
	char *b = NULL;

	if (h->splice) {
		if (pipe2(p, O_CLOEXEC) < 0)
			goto out;
		(void)fcntl(p[1], F_SETPIPE_SZ, h->pipe_size);
		for (;;) {
			ssize_t n = splice(h->from, NULL, p[1], NULL, (size_t)h->pipe_size, SPLICE_F_MOVE);
			if (n <= 0)
				break;
			while (n > 0) {
				ssize_t w = splice(p[0], NULL, h->to, NULL, (size_t)n, SPLICE_F_MOVE);
				if (w <= 0)
					goto out;
				n -= w;
			}
		}
	} else {
		if (!(b = malloc(BUF)))
			goto out;
		for (;;) {
			ssize_t n = read(h->from, b, BUF);
			if (n <= 0 || write_full(h->to, b, (size_t)n) < 0)
				break;
		}
	}
out:
	(void)shutdown(h->to, SHUT_WR);
	if (p[0] >= 0) {
		close(p[0]);
		close(p[1]);
	}
	free(b);
	return NULL;
}

/* The sockmap relay: a BPF_MAP_TYPE_SOCKMAP of two sockets (0: the
 * client's, 1: upstream) whose verdict program sends each packet that
 * arrives on one out of the other, all in the kernel. One connection at a
 * time; the program tells the sides apart by the local port (the client's
 * side has the relay's listening port). */
static long bpf_call(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

static int sockmap_setup(int lport, int *ret_map)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1,
		  .off = offsetof(struct __sk_buff, local_port) },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 1 },
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_2, .off = 1, .imm = lport },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 0 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_2, .src_reg = BPF_PSEUDO_MAP_FD },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_sk_redirect_map },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[4096];
	union bpf_attr a;
	int map, pfd;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_SOCKMAP;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 2;
	if ((map = (int)bpf_call(BPF_MAP_CREATE, &a)) < 0)
		return -1;
	prog[4].imm = map;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SK_SKB;
	a.insns = (uintptr_t)prog;
	a.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	a.license = (uintptr_t)"GPL";
	a.log_buf = (uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	if ((pfd = (int)bpf_call(BPF_PROG_LOAD, &a)) < 0) {
		fprintf(stderr, "proxy-bench: BPF_PROG_LOAD: %s\n%s\n", strerror(errno), log);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.target_fd = (uint32_t)map;
	a.attach_bpf_fd = (uint32_t)pfd;
	a.attach_type = BPF_SK_SKB_VERDICT;
	if (bpf_call(BPF_PROG_ATTACH, &a) < 0) {
		fprintf(stderr, "proxy-bench: BPF_PROG_ATTACH: %s\n", strerror(errno));
		return -1;
	}
	*ret_map = map;
	return 0;
}

static int sockmap_put(int map, uint32_t key, int fd, bool del)
{
	union bpf_attr a;
	uint32_t v = (uint32_t)fd;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map;
	a.key = (uintptr_t)&key;
	if (del)
		return (int)bpf_call(BPF_MAP_DELETE_ELEM, &a);
	a.value = (uintptr_t)&v;
	a.flags = BPF_ANY;
	return (int)bpf_call(BPF_MAP_UPDATE_ELEM, &a);
}

/* Pass fetch's 8-byte request on by hand (nothing comes back before it),
 * then let the kernel move the rest and wait for the client to close. */
static void sockmap_conn(int map, int c, int u)
{
	char req[8];
	/* Upstream's FIN is not passed on (upstream closes as soon as its
	 * last byte is queued, before the kernel moved it): wait for the
	 * client, which closes once it has all its bytes. */
	struct pollfd p[1] = { { .fd = c, .events = POLLRDHUP } };

	if (read_full(c, req, 8) < 0)
		return;
	/* Both in the map before upstream is asked: bytes queued on a socket
	 * before it joins are not redirected. */
	if (sockmap_put(map, 0, c, false) < 0 || sockmap_put(map, 1, u, false) < 0) {
		fprintf(stderr, "proxy-bench: sockmap update: %s\n", strerror(errno));
		return;
	}
	if (write_full(u, req, 8) < 0)
		return;
	while (poll(p, 1, -1) >= 0 && !p[0].revents)
		;
	(void)sockmap_put(map, 0, 0, true);
	(void)sockmap_put(map, 1, 0, true);
}

static int cmd_relay(const char *mode, int port, int pipe_size)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool sp = strcmp(mode, "splice") == 0, sm = strcmp(mode, "sockmap") == 0;
	int map = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 4096) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &len) < 0)
		return 1;
	if (sm && sockmap_setup(ntohs(a.sin_port), &map) < 0)
		return 1;
	printf("%d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		int one = 1, c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), u;
		pthread_t t1, t2;
		Hop h[2];

		if (c < 0)
			continue;
		if ((u = tcp_connect(port)) < 0) {
			close(c);
			continue;
		}
		(void)setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (sm) {
			sockmap_conn(map, c, u);
			close(c);
			close(u);
			continue;
		}
		h[0] = (Hop){ .from = c, .to = u, .splice = sp, .pipe_size = pipe_size };
		h[1] = (Hop){ .from = u, .to = c, .splice = sp, .pipe_size = pipe_size };
		/* One connection at a time: the bench runs them one by one. */
		if (pthread_create(&t1, NULL, hop_thread, &h[0]) == 0) {
			if (pthread_create(&t2, NULL, hop_thread, &h[1]) == 0)
				pthread_join(t2, NULL);
			pthread_join(t1, NULL);
		}
		close(c);
		close(u);
	}
}

int main(int argc, char **argv)
{
	Via v;

	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return cmd_serve();
	if (argc >= 4 && strcmp(argv[1], "relay") == 0)
		return cmd_relay(argv[2], atoi(argv[3]), argc > 4 ? atoi(argv[4]) : BUF);
	if (argc < 4 || parse_via(argv[2], &v) < 0) {
		fprintf(stderr, "usage: see the comment in proxy-bench.c\n");
		return 2;
	}
	long long count = atoll(argv[3]);

	if (strcmp(argv[1], "fetch") == 0) {
		uint64_t n = (uint64_t)count, got = 0;
		char *b = malloc(BUF);
		double t0 = now_s();
		int fd = open_via(&v);
		if (fd < 0 || !b || write_full(fd, &n, 8) < 0)
			return 1;
		while (got < n) {
			ssize_t r = read(fd, b, BUF);
			if (r <= 0)
				return 1;
			got += (uint64_t)r;
		}
		printf("%.6f\n", now_s() - t0);
		close(fd);
		free(b);
		return 0;
	}
	if (strcmp(argv[1], "latency") == 0) {
		uint64_t zero = 0;
		double t0 = now_s();
		for (long long i = 0; i < count; i++) {
			char c = 'x';
			int fd = open_via(&v);
			if (fd < 0 || write_full(fd, &zero, 8) < 0 || write_full(fd, &c, 1) < 0 ||
			    read_full(fd, &c, 1) < 0)
				return 1;
			close(fd);
		}
		printf("%.1f\n", (now_s() - t0) / (double)count * 1e6);
		return 0;
	}
	if (strcmp(argv[1], "hold") == 0) {
		struct rlimit rl;
		int *fds = calloc((size_t)count, sizeof(int)), errors = 0;
		uint64_t zero = 0;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
		for (long long i = 0; i < count; i++) {
			char c = 'x';
			fds[i] = open_via(&v);
			if (fds[i] < 0 || write_full(fds[i], &zero, 8) < 0 || write_full(fds[i], &c, 1) < 0 ||
			    read_full(fds[i], &c, 1) < 0)
				errors++;
		}
		/* All COUNT are open at this point; the caller may look at the
		 * proxy's descriptors now. */
		printf("held=%lld errors=%d\n", count - errors, errors);
		fflush(stdout);
		if (argc > 4)
			sleep((unsigned)atoi(argv[4]));
		for (long long i = 0; i < count; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		free(fds);
		return errors ? 1 : 0;
	}
	return 2;
}
