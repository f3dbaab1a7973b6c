/* The host side of a warm tier-3 session (vm-warm.h, vm-mux.h): QEMU
 * started in the session's sandbox, the guest's READY awaited, and the
 * commands passed to the session's relay (vm-relay.h), which carries each
 * between the `ward exec` client's descriptors and the port ward.mux and
 * parses everything the guest sends: a frame that breaks the protocol
 * fails the command (125) and marks the session's VM dead; it is never
 * read as a status. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "common/strv.h"
#include "common/time-util.h"
#include "linux/sandbox.h"
#include "vm/vm-mux.h"
#include "vm/vm-relay.h"
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

	w->mux = w->relay = -1;
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
	if ((r = vm_mux_send(w->mux, VM_MUX_HELLO, 0, NULL, 0)) < 0)
		return fail_boot(w, err, -r, "cannot write to QEMU's control socket");
	r = read_exact(w->mux, h, sizeof(h), w->qemu_pidfd, deadline);
	if (r == -ETIMEDOUT)
		return fail_boot(w, err, ETIMEDOUT, "the guest did not answer within 120 s");
	if (r < 0)
		return fail_boot(w, err, EPIPE, "the VM stopped before its guest answered");
	if (h[0] != VM_MUX_READY || vm_mux_u32(h + 5) != 0)
		return fail_boot(w, err, EBADMSG, "the guest's first frame is not READY");
	pid_t relay = vm_relay_start(w->mux, &w->relay);
	if (relay < 0)
		return fail_boot(w, err, (int)-relay, "cannot start the relay");
	return 0;
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
		 const int fds[3], int *ret_res)
{
	_cleanup_free_ char *req = NULL;
	size_t req_len = 0;
	int res[2], r;

	if (w->relay < 0)
		return -EPIPE;
	if ((r = build_request(w, argv, env, cwd, &req, &req_len)) < 0)
		return r;
	if (pipe2(res, O_CLOEXEC) < 0)
		return -errno;
	int pass[4] = { fds[0], fds[1], fds[2], res[1] };
	r = vm_relay_exec(w->relay, id, pass, req, req_len);
	close(res[1]);
	if (r < 0) {
		close(res[0]);
		return r;
	}
	*ret_res = res[0];
	return 0;
}

void vm_warm_signal(const VmWarm *w, uint32_t id, int sig)
{
	if (w->relay >= 0)
		vm_relay_signal(w->relay, id, sig);
}

int vm_warm_result(int res, int *ret_wstatus, WardError *err)
{
	char buf[320];
	ssize_t k;
	int v;

	do
		k = read(res, buf, sizeof(buf) - 1);
	while (k < 0 && errno == EINTR);
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
