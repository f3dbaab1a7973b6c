/* A warm session's pid 1 (docs/sessions.md): after the namespace-wide
 * steps (uid map ... rlimits, sandbox-init.c) it stays up and starts each
 * command the supervisor sends. Per command:
 *
 *   pid 1 (sandbox pid namespace, keeps the namespace's capabilities)
 *     └─ clone(CLONE_NEWPID) -> "exec init": pid 1 of a pid namespace of
 *        the command's own: chdir, drop-caps, no_new_privs, Landlock,
 *        seccomp, the walls, non-dumpable — the steps of a cold run, in
 *        the same order, from the same plan
 *          └─ fork -> the command: its process group, fds 0-2, execvpe
 *
 * When the command exits, exec init reports its status and exits: the
 * kernel kills whatever else the command left in its pid namespace, so
 * nothing a command started outlives it. A background command is the same
 * (its pid namespace ends when its main process does). The command cannot
 * see or signal pid 1 or another command's exec init by pid (they are
 * outside its pid namespace), nor ptrace them (non-dumpable, and outside
 * its Landlock domain).
 *
 * The supervisor <-> pid 1 messages travel on a SOCK_SEQPACKET pair made
 * before the clone; exec inits inherit pid 1's end to report on. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/macro.h"
#include "linux/sandbox-internal.h"
#include "net/tls-ca.h"
#include "ward/ward.h"

typedef struct ExecHead {
	uint32_t magic;
	uint32_t id;
	uint32_t n_argv, n_env;
	uint32_t len; /* bytes after the head: [PtyPlan] cwd\0 argv...\0 env...\0 */
	uint32_t pty; /* sizeof(PtyPlan) when one follows the head, else 0 */
} ExecHead;

#define EXEC_MAGIC 0x77617831u /* "wax1" */

static int send_with_fds(int sock, const void *buf, size_t len, const int *fds, size_t n)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(int) * 3)];
		struct cmsghdr align;
	} u = {};
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (n > 0) {
		struct cmsghdr *c;
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	return RETRY_EINTR(sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 ? -errno : 0;
}

/* One message and up to @max fds (the rest closed); *@ret_n fds got. */
static ssize_t recv_with_fds(int sock, void *buf, size_t len, int *fds, size_t max, size_t *ret_n,
			     int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	ssize_t n = RETRY_EINTR(recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags));

	*ret_n = 0;
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int got[8];
		memcpy(got, CMSG_DATA(c), sizeof(int) * (k > 8 ? 8 : k));
		for (size_t i = 0; i < k && i < 8; i++) {
			if (*ret_n < max)
				fds[(*ret_n)++] = got[i];
			else
				close(got[i]);
		}
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		for (size_t i = 0; i < *ret_n; i++)
			close(fds[i]);
		*ret_n = 0;
		return -EMSGSIZE;
	}
	return n;
}

int sandbox_session_send(int sock, uint32_t id, const char *cwd, char *const *argv,
			 char *const *envp, const int fds[3])
{
	return sandbox_session_send_tty(sock, id, cwd, argv, envp, fds, NULL);
}

int sandbox_session_send_tty(int sock, uint32_t id, const char *cwd, char *const *argv,
			     char *const *envp, const int fds[3], const PtyPlan *pty)
{
	static char buf[sizeof(ExecHead) + sizeof(PtyPlan) + SANDBOX_EXEC_MAX];
	ExecHead h = { .magic = EXEC_MAGIC, .id = id };
	size_t off = sizeof(h), n;

	if (pty && pty->enabled) {
		h.pty = sizeof(*pty);
		memcpy(buf + off, pty, sizeof(*pty));
		off += sizeof(*pty);
	}

#define PUT(s_)                                                                                    \
	do {                                                                                       \
		n = strlen(s_) + 1;                                                                \
		if (off + n > sizeof(buf))                                                         \
			return -E2BIG;                                                             \
		memcpy(buf + off, (s_), n);                                                        \
		off += n;                                                                          \
	} while (0)
	PUT(cwd);
	for (; argv && argv[h.n_argv]; h.n_argv++)
		PUT(argv[h.n_argv]);
	for (; envp && envp[h.n_env]; h.n_env++)
		PUT(envp[h.n_env]);
#undef PUT
	if (h.n_argv == 0 || h.n_argv + h.n_env + 1 > SANDBOX_EXEC_STRINGS_MAX)
		return -E2BIG;
	h.len = (uint32_t)(off - sizeof(h));
	memcpy(buf, &h, sizeof(h));
	return send_with_fds(sock, buf, off, fds, 3);
}

int sandbox_session_recv(int sock, SandboxEvent *ret, int *ret_pidfd)
{
	int fd = -EBADF;
	size_t nfd;
	ssize_t n = recv_with_fds(sock, ret, sizeof(*ret), &fd, 1, &nfd, MSG_DONTWAIT);

	*ret_pidfd = -EBADF;
	if (n == -EAGAIN)
		return -EAGAIN;
	if (n == 0 || n == -ECONNRESET)
		return -EPIPE;
	if (n < 0)
		return (int)n;
	if ((size_t)n != sizeof(*ret)) {
		if (nfd)
			close(fd);
		return -EBADMSG;
	}
	ret->detail[sizeof(ret->detail) - 1] = 0;
	if ((ret->kind == SANDBOX_EV_STARTED || ret->kind == SANDBOX_EV_PTY) && nfd == 1)
		*ret_pidfd = fd;
	else if (nfd)
		close(fd);
	if ((ret->kind == SANDBOX_EV_STARTED || ret->kind == SANDBOX_EV_PTY) && *ret_pidfd < 0)
		return -EBADMSG;
	return 0;
}

static void send_event(int sock, uint32_t kind, uint32_t id, int value, SandboxStep step, int error,
		       const char *detail, int fd)
{
	SandboxEvent ev = { .kind = kind, .id = id, .value = value, .step = step,
			    .error = error < 0 ? -error : error };

	if (detail)
		strncpy(ev.detail, detail, sizeof(ev.detail) - 1);
	(void)send_with_fds(sock, &ev, sizeof(ev), &fd, fd >= 0 ? 1 : 0);
}

/* The command's pty (a terminal on the caller's stdio): opened and made
 * the controlling terminal here, its master sent to the supervisor for the
 * `ward exec` client; the slave stays open in this init (the master reads
 * end-of-file only when the command and all it left are gone). */
static int exec_pty_open(int sock, uint32_t id, const PtyPlan *pty, int *ret_slave)
{
	int master = -EBADF, r;

	r = pty_open(pty, &master, ret_slave);
	if (r < 0)
		return r;
	send_event(sock, SANDBOX_EV_PTY, id, 0, SANDBOX_STEP_NONE, 0, NULL, master);
	close(master);
	return 0;
}

/* pid 1 of the command's own pid namespace: the per-process steps, then
 * the command; never returns. */
_noreturn_ static void exec_init(SandboxPlan *plan, uint32_t id, const char *cwd, char **argv,
				 char **envp, const int fds[3], const PtyPlan *pty,
				 const sigset_t *saved)
{
	int sock = plan->session_sock, ep[2], err = 0, r, slave = -EBADF;
	SandboxStep step = SANDBOX_STEP_NONE;
	const char *detail = NULL;
	sigset_t mask;
	pid_t cmd;

#define FAIL(step_, detail_, r_)                                                                   \
	do {                                                                                       \
		send_event(sock, SANDBOX_EV_FAILED, id, 0, (step_), (r_), (detail_), -1);          \
		_exit(WARD_EXIT_SETUP);                                                            \
	} while (0)

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(WARD_EXIT_SETUP);
	(void)setsid();
	/* A terminal: the command's own pty, this init's controlling one
	 * (a session leader without one), its master to the `ward exec`
	 * that relays it (pty-relay.h), as a cold run's pty step. */
	if (pty && (r = exec_pty_open(sock, id, pty, &slave)) < 0)
		FAIL(SANDBOX_STEP_PTY, "/dev/ptmx", r);
	/* The command's descriptors on 0-2 first, as a cold run's stdio
	 * step: Landlock's rules for them (landlock.c) are this command's. */
	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			FAIL(SANDBOX_STEP_STDIO, NULL, -errno);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	if (chdir(cwd) < 0)
		FAIL(SANDBOX_STEP_CHDIR, cwd, -errno);
	r = sandbox_init_steps(plan, SANDBOX_STEP_DROP_CAPS, SANDBOX_STEP_SECCOMP, &step, &detail);
	if (r < 0)
		FAIL(step, detail, r);
	if (plan->landlock_fd >= 0)
		close(plan->landlock_fd);
	r = walls_check(&plan->walls, &step, &detail);
	if (r < 0)
		FAIL(step, detail, r);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		FAIL(SANDBOX_STEP_NON_DUMPABLE, NULL, -errno);
	if (pipe2(ep, O_CLOEXEC) < 0)
		FAIL(SANDBOX_STEP_FORK, NULL, -errno);
	const int keep[] = { sock, ep[0], ep[1], slave };
	if (sandbox_close_all_but(keep, ELEMENTSOF(keep)) < 0)
		FAIL(SANDBOX_STEP_CLOSE_FDS, NULL, -errno);
	cmd = fork();
	if (cmd < 0)
		FAIL(SANDBOX_STEP_FORK, NULL, -errno);
	if (cmd == 0) {
		/* A pty: the command's group its foreground one, the pty on the
		 * fds that were the terminal (stdin it does not read: the
		 * /dev/null already there). */
		if (pty ? pty_attach(pty, slave, 0) < 0 : setpgid(0, 0) < 0)
			_exit(WARD_EXIT_SETUP);
		sigprocmask(SIG_SETMASK, saved, NULL);
		(void)syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
		execvpe(argv[0], argv, envp);
		err = errno;
		(void)!write(ep[1], &err, sizeof(err));
		_exit(err == ENOENT ? WARD_EXIT_NOTFOUND : WARD_EXIT_NOEXEC);
	}
	(void)setpgid(cmd, cmd);
	/* Only the command holds its descriptors: its pipes end with it. */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; i < 3 && null >= 0; i++)
		(void)dup2(null, i);
	if (null > 2)
		close(null);
	close(ep[1]);
	if (RETRY_EINTR(read(ep[0], &err, sizeof(err))) == (ssize_t)sizeof(err)) {
		(void)waitpid(cmd, NULL, 0);
		FAIL(SANDBOX_STEP_EXEC, argv[0], err);
	}
	close(ep[0]);
#undef FAIL

	/* As a cold run's init: pass on the supervisor's signals, reap, leave
	 * with the command (the kernel kills the rest of this namespace). */
	sandbox_forwarded_signals(&mask);
	sigaddset(&mask, SIGCHLD);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&mask, &si);
		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			if (si.si_pid == 0)
				sandbox_forward_signal(slave, cmd, sig,
						       si.si_code == SI_QUEUE &&
							       si.si_value.sival_int == FORWARD_TO_GROUP);
			continue;
		}
		for (;;) {
			int status;
			pid_t p = waitpid(-1, &status, WNOHANG | (pty ? WUNTRACED : 0));
			if (p <= 0)
				break;
			if (p == cmd && WIFSTOPPED(status)) {
				/* Job control (^Z on its pty): `ward exec` stops with it. */
				send_event(sock, SANDBOX_EV_STOPPED, id, WSTOPSIG(status),
					   SANDBOX_STEP_NONE, 0, NULL, -1);
				continue;
			}
			if (p == cmd) {
				send_event(sock, SANDBOX_EV_EXIT, id, status, SANDBOX_STEP_NONE, 0, NULL,
					   -1);
				_exit(0);
			}
		}
	}
}

static pid_t clone_newpid(int *ret_pidfd)
{
	struct clone_args args = {
		.flags = CLONE_NEWPID | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)ret_pidfd,
		.exit_signal = SIGCHLD,
	};
	pid_t p = (pid_t)syscall(SYS_clone3, &args, sizeof(args));

	if (p < 0 && errno == ENOSYS) /* a container's seccomp profile (sandbox-run.c) */
		p = (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_NEWPID | CLONE_PIDFD) | SIGCHLD,
				   NULL, ret_pidfd, NULL, 0UL);
	return p;
}

/* Split a request into @argv and @envp (pointers into @buf); its cwd. */
static const char *parse_exec(char *buf, size_t n, ExecHead *h, char **argv, char **envp,
			      PtyPlan *ret_pty)
{
	char *p, *end;
	const char *cwd;

	if (n < sizeof(*h))
		return NULL;
	memcpy(h, buf, sizeof(*h));
	if (h->magic != EXEC_MAGIC || h->len != n - sizeof(*h) || h->n_argv == 0 ||
	    h->n_argv + h->n_env + 1 > SANDBOX_EXEC_STRINGS_MAX ||
	    (h->pty != 0 && h->pty != sizeof(*ret_pty)) || h->len < h->pty)
		return NULL;
	p = buf + sizeof(*h);
	*ret_pty = (PtyPlan){ .term_fd = -1 };
	if (h->pty) {
		memcpy(ret_pty, p, sizeof(*ret_pty));
		p += sizeof(*ret_pty);
	}
	end = buf + n;
#define NEXT(dst_)                                                                                 \
	do {                                                                                       \
		char *z_ = memchr(p, 0, (size_t)(end - p));                                        \
		if (!z_)                                                                           \
			return NULL;                                                               \
		(dst_) = p;                                                                        \
		p = z_ + 1;                                                                        \
	} while (0)
	NEXT(cwd);
	for (uint32_t i = 0; i < h->n_argv; i++)
		NEXT(argv[i]);
	argv[h->n_argv] = NULL;
	for (uint32_t i = 0; i < h->n_env; i++)
		NEXT(envp[i]);
	envp[h->n_env] = NULL;
#undef NEXT
	return p == end ? cwd : NULL;
}

_noreturn_ void sandbox_serve_init(SandboxPlan *plan, const sigset_t *saved)
{
	static char buf[sizeof(ExecHead) + sizeof(PtyPlan) + SANDBOX_EXEC_MAX];
	static char *argv[SANDBOX_EXEC_STRINGS_MAX + 1], *envp[SANDBOX_EXEC_STRINGS_MAX + 1];
	int sock = plan->session_sock, sfd;
	sigset_t mask;

	/* As a cold run's init before its command: non-dumpable, the CA key
	 * wiped, nothing of ward's left open, default signal dispositions. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		_exit(WARD_EXIT_SETUP);
	tls_ca_wipe_key_in_child();
	sandbox_forwarded_signals(&mask);
	sigaddset(&mask, SIGCHLD);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	/* Each command's Landlock ruleset, built once here (in the view):
	 * a command then only restricts itself with it (landlock.h). */
	if (plan->landlock && landlock_plan_prebuild(plan->landlock, &plan->landlock_fd) < 0)
		plan->landlock_fd = -EBADF;
	const int keep[] = { sock, sfd, plan->landlock_fd };
	if (sfd < 0 || sandbox_close_all_but(keep, ELEMENTSOF(keep)) < 0)
		_exit(WARD_EXIT_SETUP);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)signal(sig, SIG_DFL);
	send_event(sock, SANDBOX_EV_READY, 0, 0, SANDBOX_STEP_NONE, 0, NULL, -1);

	for (;;) {
		struct pollfd p[2] = { { .fd = sock, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				;
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
		}
		if (!p[0].revents)
			continue;
		int fds[3];
		size_t nfd;
		ExecHead h = {};
		PtyPlan pty;
		ssize_t n = recv_with_fds(sock, buf, sizeof(buf), fds, 3, &nfd, 0);
		if (n == 0 || n == -ECONNRESET)
			_exit(0); /* the supervisor is gone */
		if (n < 0)
			continue;
		const char *cwd = parse_exec(buf, (size_t)n, &h, argv, envp, &pty);
		if (!cwd || nfd != 3) {
			for (size_t i = 0; i < nfd; i++)
				close(fds[i]);
			send_event(sock, SANDBOX_EV_FAILED, h.id, 0, SANDBOX_STEP_INIT, EBADMSG,
				   "malformed request", -1);
			continue;
		}
		int pidfd = -EBADF;
		pid_t c = clone_newpid(&pidfd);
		if (c == 0) {
			close(sfd);
			exec_init(plan, h.id, cwd, argv, envp, fds, pty.enabled ? &pty : NULL, saved);
		}
		for (int i = 0; i < 3; i++)
			close(fds[i]);
		if (c < 0)
			send_event(sock, SANDBOX_EV_FAILED, h.id, 0, SANDBOX_STEP_FORK, errno,
				   "a pid namespace for the command", -1);
		else {
			send_event(sock, SANDBOX_EV_STARTED, h.id, 0, SANDBOX_STEP_NONE, 0, NULL, pidfd);
			close(pidfd);
		}
	}
}
