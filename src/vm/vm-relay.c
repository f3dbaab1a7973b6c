/* The relay of a warm tier-3 session (vm-relay.h): one process for the
 * session's life, one command at a time. Everything the guest sends is
 * parsed strictly: a frame that breaks the protocol fails the command
 * ("error ..." on its report pipe) and ends the relay; it is never read as
 * a status.
 *
 * One process, not one per command: forking the supervisor for each
 * command cost each `ward exec` the copy-on-write faults of both processes
 * (about 80 on a PVM guest where one costs 12 us), several milliseconds of
 * a trivial command. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/fd-write.h"
#include "common/time-util.h"
#include "vm/vm-mux.h"
#include "vm/vm-relay.h"
#include "vm/vm-warm.h"

typedef struct Relay {
	int mux, ctl, fds[3], res;
	uint32_t id;
	uint32_t outstanding; /* stdin bytes the guest has not acknowledged */
	bool stdin_open, out_broken[3], killed, done;
	uint64_t kill_deadline;
	unsigned char *rx; /* VM_MUX_HEAD + VM_MUX_MAX bytes */
	size_t rx_len;
} Relay;

/* All of @iov (@n entries, changed on the way) to @fd: one writev when
 * the socket takes it whole (the usual case), so that QEMU reads it in
 * one go and the guest wakes once, not once per head and payload. */
static int writev_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t k = writev(fd, iov, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN) {
			struct pollfd pf = { .fd = fd, .events = POLLOUT };
			(void)poll(&pf, 1, -1);
			continue;
		}
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		for (; n > 0 && (size_t)k >= iov->iov_len; iov++, n--)
			k -= (ssize_t)iov->iov_len;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

int vm_mux_send(int mux, char type, uint32_t id, const void *data, size_t n)
{
	unsigned char h[VM_MUX_HEAD];
	struct iovec iov[2] = { { .iov_base = h, .iov_len = sizeof(h) },
				{ .iov_base = (void *)data, .iov_len = n } };

	vm_mux_head(h, type, id, (uint32_t)n);
	return writev_all(mux, iov, 2);
}

/* The command failed, and the VM is not to be used again: report, end. */
static _Noreturn void relay_fail(Relay *rl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static _Noreturn void relay_fail(Relay *rl, const char *fmt, ...)
{
	char line[300] = "error ";
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(line + 6, sizeof(line) - 6, fmt, ap);
	va_end(ap);
	(void)fd_write_all(rl->res, line, strlen(line));
	_exit(0);
}

/* "status N\n" (0-255) or "signal N\n" (1-64), exactly: reported, and
 * the command is done. */
static void relay_exit(Relay *rl, const unsigned char *data, size_t n)
{
	char buf[32], word[8], extra, line[32];
	int v;

	if (n == 0 || n >= sizeof(buf) || memchr(data, 0, n) || data[n - 1] != '\n')
		relay_fail(rl, "the guest's exit frame is malformed\n");
	memcpy(buf, data, n);
	buf[n] = 0;
	if (sscanf(buf, "%7s %d%c", word, &v, &extra) != 3 || extra != '\n' ||
	    strchr(buf, '\n') != buf + n - 1)
		relay_fail(rl, "the guest's exit frame is malformed\n");
	if (strcmp(word, "status") == 0 && v >= 0 && v <= 255)
		snprintf(line, sizeof(line), "status %d\n", v);
	else if (strcmp(word, "signal") == 0 && v > 0 && v < 65)
		snprintf(line, sizeof(line), "signal %d\n", v);
	else
		relay_fail(rl, "the guest's exit frame is malformed\n");
	if (fd_write_all(rl->res, line, strlen(line)) < 0)
		_exit(0); /* the supervisor is gone */
	rl->done = true;
}

static void relay_frames(Relay *rl)
{
	size_t off = 0;

	while (!rl->done && rl->rx_len - off >= VM_MUX_HEAD) {
		const unsigned char *h = rl->rx + off;
		uint32_t id = vm_mux_u32(h + 1), len = vm_mux_u32(h + 5);
		const unsigned char *data = h + VM_MUX_HEAD;
		if (len > VM_MUX_MAX)
			relay_fail(rl, "the guest sent a frame of %u bytes\n", len);
		if (id != rl->id)
			relay_fail(rl, "the guest sent a frame for another command\n");
		if (rl->rx_len - off < VM_MUX_HEAD + len)
			break;
		switch (h[0]) {
		case VM_MUX_STDOUT:
		case VM_MUX_STDERR: {
			int i = h[0] == VM_MUX_STDOUT ? 1 : 2;
			if (len > VM_MUX_CHUNK)
				relay_fail(rl, "the guest sent an output frame of %u bytes\n", len);
			if (!rl->out_broken[i] && fd_write_all(rl->fds[i], data, len) < 0)
				rl->out_broken[i] = true; /* the reader is gone: as a pipe's EPIPE */
			break;
		}
		case VM_MUX_ACK: {
			uint32_t v = len == 4 ? vm_mux_u32(data) : UINT32_MAX;
			if (v > rl->outstanding)
				relay_fail(rl, "the guest acknowledged stdin it was not sent\n");
			rl->outstanding -= v;
			break;
		}
		case VM_MUX_EXIT:
			/* The last frame of a command: anything after it is not
			 * this command's, nor the next one's (that has not
			 * started). What comes later is read with the next
			 * command, whose id it does not carry. */
			if (rl->rx_len - off > VM_MUX_HEAD + len)
				relay_fail(rl, "the guest sent more after the exit status\n");
			relay_exit(rl, data, len);
			break;
		default:
			relay_fail(rl, "the guest sent a frame of unknown type 0x%02x\n", h[0]);
		}
		off += VM_MUX_HEAD + len;
	}
	memmove(rl->rx, rl->rx + off, rl->rx_len - off);
	rl->rx_len -= off;
}

static void relay_send(Relay *rl, char type, const void *data, size_t n)
{
	if (vm_mux_send(rl->mux, type, rl->id, data, n) < 0)
		relay_fail(rl, "the VM's control port closed\n");
}

/* One control message from the supervisor while a command runs. */
static void relay_control(Relay *rl)
{
	unsigned char m[VM_MUX_HEAD + 1];
	ssize_t k = recv(rl->ctl, m, sizeof(m), MSG_DONTWAIT);

	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (k < VM_MUX_HEAD)
		_exit(0); /* the supervisor is gone (or broke its own protocol) */
	if (vm_mux_u32(m + 1) != rl->id)
		return; /* stale: for a command that ended */
	if (m[0] == VM_RELAY_END && !rl->killed) {
		rl->killed = true;
		rl->kill_deadline = monotonic_ms() + VM_WARM_KILL_MS;
		relay_send(rl, VM_MUX_KILL, NULL, 0);
	} else if (m[0] == VM_RELAY_SIGNAL && k == VM_MUX_HEAD + 1)
		relay_send(rl, VM_MUX_SIGNAL, &m[VM_MUX_HEAD], 1);
}

/* One command, from its request to its report. */
static void relay_run(Relay *rl, const char *req, size_t req_len)
{
	static char buf[VM_MUX_CHUNK];
	unsigned char h[2][VM_MUX_HEAD];
	struct pollfd in = { .fd = rl->fds[0], .events = POLLIN };
	struct iovec iov[4] = { { .iov_base = h[0], .iov_len = VM_MUX_HEAD },
				{ .iov_base = (void *)req, .iov_len = req_len },
				{ .iov_base = h[1], .iov_len = VM_MUX_HEAD },
				{ .iov_base = buf, .iov_len = 0 } };
	ssize_t first = -1;

	/* stdin that is at its end already (/dev/null, as a harness gives
	 * it) or has bytes waiting goes with the request, in the same
	 * write: the guest wakes once for both. Anything else is for the
	 * loop below, as before. */
	if (poll(&in, 1, 0) == 1 && (in.revents & (POLLIN | POLLHUP)))
		first = read(rl->fds[0], buf, sizeof(buf));
	vm_mux_head(h[0], VM_MUX_REQUEST, rl->id, (uint32_t)req_len);
	if (first > 0) {
		rl->outstanding = (uint32_t)first;
		iov[3].iov_len = (size_t)first;
		vm_mux_head(h[1], VM_MUX_STDIN, rl->id, (uint32_t)first);
	} else if (first == 0) {
		rl->stdin_open = false;
		vm_mux_head(h[1], VM_MUX_STDIN_EOF, rl->id, 0);
	}
	if (writev_all(rl->mux, iov, first >= 0 ? 4 : 2) < 0)
		relay_fail(rl, "the VM's control port closed\n");
	while (!rl->done) {
		bool want_in = rl->stdin_open && rl->outstanding < VM_MUX_WINDOW;
		struct pollfd p[3] = { { .fd = rl->mux, .events = POLLIN },
				       { .fd = rl->ctl, .events = POLLIN },
				       { .fd = want_in ? rl->fds[0] : -1, .events = POLLIN } };
		int t = -1;
		if (rl->killed) {
			uint64_t now = monotonic_ms();
			if (now >= rl->kill_deadline)
				relay_fail(rl, "the guest did not end the command it was told to end\n");
			t = (int)(rl->kill_deadline - now);
		}
		if (poll(p, 3, t) < 0 && errno != EINTR)
			relay_fail(rl, "poll: %s\n", strerror(errno));
		if (p[1].revents)
			relay_control(rl);
		if (p[2].revents) {
			size_t room = VM_MUX_WINDOW - rl->outstanding;
			ssize_t k = read(rl->fds[0], buf, room < sizeof(buf) ? room : sizeof(buf));
			if (k > 0) {
				rl->outstanding += (uint32_t)k;
				relay_send(rl, VM_MUX_STDIN, buf, (size_t)k);
			} else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
				rl->stdin_open = false;
				relay_send(rl, VM_MUX_STDIN_EOF, NULL, 0);
			}
		}
		if (p[0].revents) {
			size_t room = VM_MUX_HEAD + VM_MUX_MAX - rl->rx_len;
			ssize_t k = read(rl->mux, rl->rx + rl->rx_len, room);
			if (k < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (k <= 0)
				relay_fail(rl, "the VM stopped without the command's exit status\n");
			rl->rx_len += (size_t)k;
			relay_frames(rl);
		}
	}
}

/* The next EXEC (with its descriptors, @fds[4]) and its payload into
 * @req; stale SIGNAL and END messages are dropped. The payload's length,
 * or -1: the supervisor is gone. */
static ssize_t next_exec(int ctl, uint32_t *id, int fds[4], char *req)
{
	for (;;) {
		unsigned char m[VM_MUX_HEAD + 1];
		char cbuf[CMSG_SPACE(4 * sizeof(int))];
		struct iovec iov = { .iov_base = m, .iov_len = sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *c;
		size_t len, got = 0;
		ssize_t k = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < VM_MUX_HEAD)
			return -1;
		c = CMSG_FIRSTHDR(&mh);
		if (m[0] != VM_RELAY_EXEC) {
			if (c && c->cmsg_type == SCM_RIGHTS)
				return -1; /* never sent with these */
			continue;
		}
		len = vm_mux_u32(m + 5);
		if (k != VM_MUX_HEAD || !c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len != CMSG_LEN(4 * sizeof(int)) || (mh.msg_flags & MSG_CTRUNC) ||
		    len > VM_MUX_MAX)
			return -1;
		memcpy(fds, CMSG_DATA(c), 4 * sizeof(int));
		while (got < len) {
			k = recv(ctl, req + got, len - got, 0);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return -1;
			got += (size_t)k;
		}
		*id = vm_mux_u32(m + 1);
		return (ssize_t)len;
	}
}

static _Noreturn void relay_serve(int mux, int ctl)
{
	/* Static: pages are touched only as far as a command uses them. */
	static unsigned char rx[VM_MUX_HEAD + VM_MUX_MAX];
	static char req[VM_MUX_MAX];

	for (;;) {
		int fds[4];
		uint32_t id;
		ssize_t n = next_exec(ctl, &id, fds, req);
		if (n < 0)
			_exit(0);
		Relay rl = { .mux = mux, .ctl = ctl, .res = fds[3], .id = id, .stdin_open = true,
			     .fds = { fds[0], fds[1], fds[2] }, .rx = rx };
		relay_run(&rl, req, (size_t)n);
		for (int i = 0; i < 4; i++)
			close(fds[i]);
	}
}

/* Everything but @a and @b (and 0-2) closed: the relay holds no other
 * client's connection, nor the session's listening socket. */
static void close_others(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	if (lo > 3)
		(void)close_range(3, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		(void)close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	(void)close_range((unsigned)hi + 1, ~0U, 0);
}

int vm_relay_exec(int ctl, uint32_t id, const int fds[4], const char *req, size_t len)
{
	unsigned char h[VM_MUX_HEAD];
	char cbuf[CMSG_SPACE(4 * sizeof(int))] = {};
	struct iovec iov = { .iov_base = h, .iov_len = sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	vm_mux_head(h, VM_RELAY_EXEC, id, (uint32_t)len);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(4 * sizeof(int));
	memcpy(CMSG_DATA(c), fds, 4 * sizeof(int));
	if (sendmsg(ctl, &mh, MSG_NOSIGNAL) < 0)
		return -errno;
	/* The relay is idle, waiting for this: it takes each part at once. */
	for (size_t off = 0; off < len; off += VM_RELAY_CHUNK) {
		size_t n = len - off < VM_RELAY_CHUNK ? len - off : VM_RELAY_CHUNK;
		if (send(ctl, req + off, n, MSG_NOSIGNAL) < 0)
			return -errno;
	}
	return 0;
}

void vm_relay_signal(int ctl, uint32_t id, int sig)
{
	unsigned char m[VM_MUX_HEAD + 1];

	vm_mux_head(m, sig ? VM_RELAY_SIGNAL : VM_RELAY_END, id, sig ? 1 : 0);
	m[VM_MUX_HEAD] = (unsigned char)sig;
	(void)send(ctl, m, sig ? sizeof(m) : VM_MUX_HEAD, MSG_NOSIGNAL | MSG_DONTWAIT);
}

pid_t vm_relay_start(int mux, int *ret_ctl)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		close(sv[1]);
		return -e;
	}
	if (pid == 0) {
		sigset_t all;
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		(void)signal(SIGPIPE, SIG_IGN);
		/* Its word reaches the supervisor only on the pipes: no signal
		 * the supervisor's handlers expect, none it could be sent. */
		sigfillset(&all);
		(void)sigprocmask(SIG_BLOCK, &all, NULL);
		close(sv[0]);
		close_others(mux, sv[1]);
		relay_serve(mux, sv[1]);
	}
	close(sv[1]);
	*ret_ctl = sv[0];
	return pid;
}
