/* The host side of a warm tier-3 session (vm-warm.h, vm-mux.h): QEMU
 * started in the session's sandbox, the guest's READY awaited, and one
 * relay process per command between the `ward exec` client's descriptors
 * and the port ward.mux. Everything the guest sends is parsed strictly:
 * a frame that breaks the protocol fails the command (125) and marks the
 * session's VM dead; it is never read as a status. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-write.h"
#include "common/log.h"
#include "common/strv.h"
#include "common/time-util.h"
#include "linux/sandbox.h"
#include "vm/vm-mux.h"
#include "vm/vm-request.h"
#include "vm/vm-warm.h"

void vm_console_tail(const char *run_dir, char *buf, size_t n)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	ssize_t k;
	off_t off;

	buf[0] = 0;
	if (asprintf(&path, "%s/console", run_dir) < 0)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0)
		return;
	off = st.st_size > (off_t)n - 1 ? st.st_size - ((off_t)n - 1) : 0;
	k = pread(fd, buf, n - 1, off);
	buf[k > 0 ? k : 0] = 0;
	for (char *c = buf; *c; c++)
		if ((*c < 32 && *c != '\n') || *c == 127)
			*c = '?';
}

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

static int send_frame(int mux, char type, uint32_t id, const void *data, size_t n)
{
	unsigned char h[VM_MUX_HEAD];
	struct iovec iov[2] = { { .iov_base = h, .iov_len = sizeof(h) },
				{ .iov_base = (void *)data, .iov_len = n } };

	vm_mux_head(h, type, id, (uint32_t)n);
	return writev_all(mux, iov, 2);
}

static int fail_boot(const VmWarm *w, WardError *err, int e, const char *why)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	char tail[1024], setup[128] = "";
	ssize_t k;

	/* What the guest init said on its control port, if anything. */
	if (asprintf(&path, "%s/status", w->run_dir) >= 0 &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0 &&
	    (k = read(fd, setup, sizeof(setup) - 1)) > 0) {
		setup[k] = 0;
		setup[strcspn(setup, "\n")] = 0;
		for (char *c = setup; *c; c++)
			if (*c < 32 || *c == 127)
				*c = '?';
	}
	if (strncmp(setup, "setup request-argv ", 19) == 0)
		why = "the guest image's init predates warm sessions: run 'ward setup vm' again";
	else if (strncmp(setup, "setup ", 6) == 0) {
		snprintf(tail, sizeof(tail), "%s (the guest init failed at %s)", why, setup + 6);
		why = tail;
	}
	(void)ward_error_set(err, "vm", e, "the session's VM did not start: %s", why);
	log_error("tier 3: %s", err->detail);
	vm_console_tail(w->run_dir, tail, sizeof(tail));
	if (tail[0])
		log_error("tier 3: the guest console's last lines:\n%s", tail);
	return -e;
}

/* QEMU's start in the sandbox: its STARTED event (and pidfd), or why not. */
static int wait_started(VmWarm *w, const SandboxSession *s, uint64_t deadline, WardError *err)
{
	while (w->qemu_pidfd < 0) {
		uint64_t now = monotonic_ms();
		struct pollfd p[2] = { { .fd = s->init_sock, .events = POLLIN },
				       { .fd = s->init_pidfd, .events = POLLIN } };
		SandboxEvent ev;
		int pidfd = -1, r;

		if (now >= deadline)
			return fail_boot(w, err, ETIMEDOUT, "QEMU did not start in the sandbox");
		if (poll(p, 2, (int)(deadline - now)) < 0 && errno != EINTR)
			return fail_boot(w, err, errno, "poll");
		if (p[1].revents && !p[0].revents)
			return fail_boot(w, err, ESRCH, "the sandbox ended");
		if (!p[0].revents)
			continue;
		r = sandbox_session_recv(s->init_sock, &ev, &pidfd);
		if (r == -EAGAIN)
			continue;
		if (r < 0)
			return fail_boot(w, err, EPIPE, "the sandbox ended");
		if (ev.id != VM_WARM_QEMU_ID) {
			if (pidfd >= 0)
				close(pidfd);
			continue;
		}
		if (ev.kind == SANDBOX_EV_STARTED && pidfd >= 0)
			w->qemu_pidfd = pidfd;
		else {
			char why[300];
			if (pidfd >= 0)
				close(pidfd);
			snprintf(why, sizeof(why), "QEMU could not start in the sandbox%s%s",
				 ev.detail[0] ? ": " : "", ev.detail);
			return fail_boot(w, err, ev.error > 0 ? ev.error : EIO, why);
		}
	}
	return 0;
}

/* Reads exactly @n bytes from @fd by @deadline (0: none), watching @pidfd
 * (QEMU): -ETIMEDOUT, -EPIPE (closed, or QEMU gone), or 0. */
static int read_exact(int fd, void *buf, size_t n, int pidfd, uint64_t deadline)
{
	char *p = buf;

	while (n > 0) {
		struct pollfd pf[2] = { { .fd = fd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
		uint64_t now = monotonic_ms();
		int t = -1;
		if (deadline) {
			if (now >= deadline)
				return -ETIMEDOUT;
			t = (int)(deadline - now);
		}
		if (poll(pf, 2, t) < 0 && errno != EINTR)
			return -errno;
		if (!pf[0].revents) {
			if (pf[1].revents)
				return -EPIPE;
			continue;
		}
		ssize_t k = read(fd, p, n);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return -EPIPE;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int vm_warm_start(VmWarm *w, const SandboxSession *s, WardError *err)
{
	_cleanup_close_ int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint64_t deadline = monotonic_ms() + VM_WARM_BOOT_MS;
	unsigned char h[VM_MUX_HEAD];
	int r;

	w->mux = -1;
	w->qemu_pidfd = -1;
	if (null < 0)
		return fail_boot(w, err, errno, "/dev/null");
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/" VM_MUX_SOCKET, w->run_dir) >=
	    sizeof(sa.sun_path))
		return fail_boot(w, err, ENAMETOOLONG, "the run directory's path is too long");
	int fds[3] = { null, null, null };
	r = sandbox_session_send(s->init_sock, VM_WARM_QEMU_ID, s->workspace, w->argv, w->envp, fds);
	if (r < 0)
		return fail_boot(w, err, -r, "cannot pass QEMU to the sandbox");
	if ((r = wait_started(w, s, deadline, err)) < 0)
		return r;
	/* QEMU listens on the socket once it runs: connect, retrying. */
	for (;;) {
		struct pollfd pf = { .fd = w->qemu_pidfd, .events = POLLIN };
		w->mux = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (w->mux < 0)
			return fail_boot(w, err, errno, "socket");
		if (connect(w->mux, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		close(w->mux);
		w->mux = -1;
		if (errno != ENOENT && errno != ECONNREFUSED)
			return fail_boot(w, err, errno, "cannot connect to QEMU's control socket");
		if (poll(&pf, 1, 10) > 0)
			return fail_boot(w, err, EPIPE, "QEMU exited");
		if (monotonic_ms() >= deadline)
			return fail_boot(w, err, ETIMEDOUT, "QEMU did not open its control socket");
	}
	if ((r = send_frame(w->mux, VM_MUX_HELLO, 0, NULL, 0)) < 0)
		return fail_boot(w, err, -r, "cannot write to QEMU's control socket");
	r = read_exact(w->mux, h, sizeof(h), w->qemu_pidfd, deadline);
	if (r == -ETIMEDOUT)
		return fail_boot(w, err, ETIMEDOUT, "the guest did not answer within 120 s");
	if (r < 0)
		return fail_boot(w, err, EPIPE, "the VM stopped before its guest answered");
	if (h[0] != VM_MUX_READY || vm_mux_u32(h + 5) != 0)
		return fail_boot(w, err, EBADMSG, "the guest's first frame is not READY");
	return 0;
}

/* ---- the relay: one process per command ---- */

typedef struct Relay {
	int mux, sfd, fds[3], res;
	uint32_t id;
	uint32_t outstanding; /* stdin bytes the guest has not acknowledged */
	bool stdin_open, out_broken[3], killed;
	uint64_t kill_deadline;
	unsigned char rx[VM_MUX_HEAD + VM_MUX_MAX];
	size_t rx_len;
} Relay;

static _Noreturn void relay_end(Relay *rl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static _Noreturn void relay_end(Relay *rl, const char *fmt, ...)
{
	char line[300];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)fd_write_all(rl->res, line, strlen(line));
	_exit(0);
}

/* "status N\n" (0-255) or "signal N\n" (1-64), exactly. */
static void relay_exit(Relay *rl, const unsigned char *data, size_t n)
{
	char buf[32], word[8], extra;
	int v;

	if (n == 0 || n >= sizeof(buf) || memchr(data, 0, n) || data[n - 1] != '\n')
		relay_end(rl, "error the guest's exit frame is malformed\n");
	memcpy(buf, data, n);
	buf[n] = 0;
	if (sscanf(buf, "%7s %d%c", word, &v, &extra) != 3 || extra != '\n' ||
	    strchr(buf, '\n') != buf + n - 1)
		relay_end(rl, "error the guest's exit frame is malformed\n");
	if (strcmp(word, "status") == 0 && v >= 0 && v <= 255)
		relay_end(rl, "status %d\n", v);
	if (strcmp(word, "signal") == 0 && v > 0 && v < 65)
		relay_end(rl, "signal %d\n", v);
	relay_end(rl, "error the guest's exit frame is malformed\n");
}

static void relay_frames(Relay *rl)
{
	size_t off = 0;

	while (rl->rx_len - off >= VM_MUX_HEAD) {
		const unsigned char *h = rl->rx + off;
		uint32_t id = vm_mux_u32(h + 1), len = vm_mux_u32(h + 5);
		const unsigned char *data = h + VM_MUX_HEAD;
		if (len > VM_MUX_MAX)
			relay_end(rl, "error the guest sent a frame of %u bytes\n", len);
		if (id != rl->id)
			relay_end(rl, "error the guest sent a frame for another command\n");
		if (rl->rx_len - off < VM_MUX_HEAD + len)
			break;
		switch (h[0]) {
		case VM_MUX_STDOUT:
		case VM_MUX_STDERR: {
			int i = h[0] == VM_MUX_STDOUT ? 1 : 2;
			if (len > VM_MUX_CHUNK)
				relay_end(rl, "error the guest sent an output frame of %u bytes\n", len);
			if (!rl->out_broken[i] && fd_write_all(rl->fds[i], data, len) < 0)
				rl->out_broken[i] = true; /* the reader is gone: as a pipe's EPIPE */
			break;
		}
		case VM_MUX_ACK: {
			uint32_t v = len == 4 ? vm_mux_u32(data) : UINT32_MAX;
			if (v > rl->outstanding)
				relay_end(rl, "error the guest acknowledged stdin it was not sent\n");
			rl->outstanding -= v;
			break;
		}
		case VM_MUX_EXIT:
			/* The last frame of a command: anything after it is not
			 * this command's, nor the next one's (that has not started). */
			if (rl->rx_len - off > VM_MUX_HEAD + len)
				relay_end(rl, "error the guest sent more after the exit status\n");
			relay_exit(rl, data, len);
			break;
		default:
			relay_end(rl, "error the guest sent a frame of unknown type 0x%02x\n", h[0]);
		}
		off += VM_MUX_HEAD + len;
	}
	memmove(rl->rx, rl->rx + off, rl->rx_len - off);
	rl->rx_len -= off;
}

static void relay_send(Relay *rl, char type, const void *data, size_t n)
{
	if (send_frame(rl->mux, type, rl->id, data, n) < 0)
		relay_end(rl, "error the VM's control port closed\n");
}

static _Noreturn void relay_run(Relay *rl, const char *req, size_t req_len)
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
		relay_end(rl, "error the VM's control port closed\n");
	for (;;) {
		bool want_in = rl->stdin_open && rl->outstanding < VM_MUX_WINDOW;
		struct pollfd p[3] = { { .fd = rl->mux, .events = POLLIN },
				       { .fd = rl->sfd, .events = POLLIN },
				       { .fd = want_in ? rl->fds[0] : -1, .events = POLLIN } };
		int t = -1;
		if (rl->killed) {
			uint64_t now = monotonic_ms();
			if (now >= rl->kill_deadline)
				relay_end(rl, "error the guest did not end the command it was told to end\n");
			t = (int)(rl->kill_deadline - now);
		}
		if (poll(p, 3, t) < 0 && errno != EINTR)
			relay_end(rl, "error poll: %s\n", strerror(errno));
		if (p[1].revents) {
			struct signalfd_siginfo si;
			while (read(rl->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGUSR1 && !rl->killed) {
					rl->killed = true;
					rl->kill_deadline = monotonic_ms() + VM_WARM_KILL_MS;
					relay_send(rl, VM_MUX_KILL, NULL, 0);
				} else if (si.ssi_signo != SIGUSR1) {
					char sig = (char)si.ssi_signo;
					relay_send(rl, VM_MUX_SIGNAL, &sig, 1);
				}
			}
		}
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
			ssize_t k = read(rl->mux, rl->rx + rl->rx_len, sizeof(rl->rx) - rl->rx_len);
			if (k < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (k <= 0)
				relay_end(rl, "error the VM stopped without the command's exit status\n");
			rl->rx_len += (size_t)k;
			relay_frames(rl);
		}
	}
}

/* The request frame's payload: argv, env and cwd records. */
static int build_request(const VmWarm *w, char *const *argv, char *const *env, const char *cwd,
			 char **ret, size_t *ret_len)
{
	FILE *f = open_memstream(ret, ret_len);
	int r = 0;

	if (!f)
		return -ENOMEM;
	STRV_FOREACH(a, argv)
	if (fputc(VM_REC_ARG, f) == EOF || fputs(*a, f) == EOF || fputc(0, f) == EOF)
		r = -EIO;
	if (r >= 0)
		r = vm_request_env(f, env, w->proxy);
	if (r >= 0 && (fputc(VM_REC_CWD, f) == EOF || fputs(cwd, f) == EOF || fputc(0, f) == EOF))
		r = -EIO;
	if (fclose(f) != 0 && r >= 0)
		r = -ENOMEM;
	if (r >= 0 && *ret_len > VM_MUX_MAX)
		r = -E2BIG;
	return r;
}

int vm_warm_exec(VmWarm *w, uint32_t id, char *const *argv, char *const *env, const char *cwd,
		 const int fds[3], int *ret_pidfd, int *ret_res)
{
	_cleanup_free_ char *req = NULL;
	size_t req_len = 0;
	int res[2], r;
	pid_t pid;

	if (w->mux < 0)
		return -EPIPE;
	if ((r = build_request(w, argv, env, cwd, &req, &req_len)) < 0)
		return r;
	if (pipe2(res, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(res[0]);
		close(res[1]);
		return r;
	}
	if (pid == 0) {
		static Relay rl;
		sigset_t m;
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		(void)signal(SIGPIPE, SIG_IGN);
		sigemptyset(&m);
		sigaddset(&m, SIGINT);
		sigaddset(&m, SIGTERM);
		sigaddset(&m, SIGHUP);
		sigaddset(&m, SIGQUIT);
		sigaddset(&m, SIGUSR1);
		(void)sigprocmask(SIG_BLOCK, &m, NULL);
		rl = (Relay){ .mux = w->mux, .res = res[1], .id = id, .stdin_open = true,
			      .fds = { fds[0], fds[1], fds[2] } };
		close(res[0]);
		rl.sfd = signalfd(-1, &m, SFD_CLOEXEC | SFD_NONBLOCK);
		if (rl.sfd < 0)
			relay_end(&rl, "error signalfd: %s\n", strerror(errno));
		relay_run(&rl, req, req_len);
	}
	close(res[1]);
	*ret_pidfd = (int)pidfd_open(pid, 0);
	if (*ret_pidfd < 0) {
		r = -errno;
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		close(res[0]);
		return r;
	}
	*ret_res = res[0];
	return 0;
}

int vm_warm_result(int pidfd, int res, int *ret_wstatus, WardError *err)
{
	char buf[320];
	siginfo_t si;
	ssize_t k;
	int v;

	while (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 && errno == EINTR)
		;
	k = read(res, buf, sizeof(buf) - 1);
	buf[k > 0 ? k : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	if (sscanf(buf, "status %d", &v) == 1) {
		*ret_wstatus = W_EXITCODE(v, 0);
		return 0;
	}
	if (sscanf(buf, "signal %d", &v) == 1) {
		*ret_wstatus = v & 0x7f;
		return 0;
	}
	(void)ward_error_set(err, "vm", EIO, "%s",
			     strncmp(buf, "error ", 6) == 0 ? buf + 6
							    : "the command's relay ended without a result");
	return -EIO;
}
