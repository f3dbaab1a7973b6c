/* A warm session's pid 1 (docs/sessions.md): after the namespace-wide
 * steps (uid map ... rlimits, sandbox-init.c) it stays up and starts each
 * command the supervisor sends. Per command:
 *
 *   pid 1 (sandbox pid namespace; CAP_SYS_ADMIN and CAP_SETPCAP of the
 *   │      session's user namespace, no_new_privs, a seccomp filter:
 *   │      serve_confine())
 *     └─ clone(CLONE_NEWPID) -> "exec init": pid 1 of a pid namespace of
 *        the command's own: a mount namespace with a /proc of that pid
 *        namespace (exec_own_proc()), fds 0-2, chdir, drop-caps,
 *        no_new_privs, Landlock, seccomp, the walls, non-dumpable — the
 *        steps of a cold run, in the same order, from the same plan
 *          └─ vfork -> the command: its process group, execvpe
 *
 * So that the clone and those steps are not on a command's path, pid 1
 * keeps one exec init made ahead of the request, a spare (spare_main()):
 * its walls are up while its fds 0-2 are /dev/null, so it serves a request
 * whose descriptors need no Landlock rule of their own (pipes, sockets,
 * /dev/null); it then puts them on 0-2 and changes directory. pid 1
 * offers each spare to the supervisor (SANDBOX_EV_SPARE: its socket and
 * pidfd), which sends such a request to it directly, without a hop
 * through pid 1, and makes the next spare once one got its request. Any
 * other request comes to pid 1 and gets an exec init made for it
 * (exec_init()).
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
 * before the clone; exec inits inherit pid 1's end to report on. A
 * spare's request socket is a pair of its own, whose other end the
 * supervisor (and pid 1, to see it hang up) holds; the spare closes its
 * end before it starts the command. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "linux/caps.h"
#include "linux/mount-setup.h"
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

int sandbox_session_recv2(int sock, SandboxEvent *ret, int *ret_pidfd, int *ret_fd)
{
	int fd[2] = { -EBADF, -EBADF };
	size_t nfd;
	ssize_t n = recv_with_fds(sock, ret, sizeof(*ret), fd, 2, &nfd, MSG_DONTWAIT);
	bool one = false, two = false;

	*ret_pidfd = *ret_fd = -EBADF;
	if (n == -EAGAIN)
		return -EAGAIN;
	if (n == 0 || n == -ECONNRESET)
		return -EPIPE;
	if (n < 0)
		return (int)n;
	if ((size_t)n == sizeof(*ret)) {
		ret->detail[sizeof(ret->detail) - 1] = 0;
		one = (ret->kind == SANDBOX_EV_STARTED || ret->kind == SANDBOX_EV_PTY) && nfd == 1;
		two = ret->kind == SANDBOX_EV_SPARE && nfd == 2;
	}
	if (!one && !two) {
		for (size_t i = 0; i < nfd; i++)
			close(fd[i]);
		return (size_t)n == sizeof(*ret) && ret->kind != SANDBOX_EV_STARTED &&
				       ret->kind != SANDBOX_EV_PTY && ret->kind != SANDBOX_EV_SPARE
			       ? 0
			       : -EBADMSG;
	}
	if (two) /* the order spare_start() sends them in */
		*ret_fd = fd[0];
	*ret_pidfd = fd[nfd - 1];
	return 0;
}

int sandbox_session_recv(int sock, SandboxEvent *ret, int *ret_pidfd)
{
	int fd = -EBADF, r = sandbox_session_recv2(sock, ret, ret_pidfd, &fd);

	if (fd >= 0)
		close(fd);
	return r;
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

#define FAIL(sock_, id_, step_, detail_, r_)                                                       \
	do {                                                                                       \
		send_event((sock_), SANDBOX_EV_FAILED, (id_), 0, (step_), (r_), (detail_), -1);    \
		_exit(WARD_EXIT_SETUP);                                                            \
	} while (0)

/* The command, started with vfork(): nothing of this process's memory is
 * copied, and exec reports its own failure. *@ret_err: the errno of a
 * failed exec (0: it runs). */
static pid_t spawn_command(char **argv, char **envp, const PtyPlan *pty, int slave,
			   const sigset_t *saved, int *ret_err)
{
	volatile int err = 0; /* the child writes it before it exits */
	pid_t p = vfork();

	if (p == 0) {
		/* A pty: the command's group its foreground one, the pty on
		 * the fds that were the terminal (pty_attach: system calls
		 * only, fine after vfork). */
		if (pty ? pty_attach(pty, slave, 0) < 0 : setpgid(0, 0) < 0) {
			err = EIO;
			_exit(WARD_EXIT_SETUP);
		}
		sigprocmask(SIG_SETMASK, saved, NULL);
		(void)syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
		execvpe(argv[0], argv, envp);
		err = errno;
		_exit(err == ENOENT ? WARD_EXIT_NOTFOUND : WARD_EXIT_NOEXEC);
	}
	*ret_err = p > 0 ? err : 0;
	return p;
}

/* With the walls up and fds 0-2 the command's: start the command, and as
 * a cold run's init, pass on the supervisor's signals, reap, leave with
 * the command (the kernel kills the rest of this pid namespace). */
_noreturn_ static void exec_run(int sock, uint32_t id, char **argv, char **envp,
				const PtyPlan *pty, int slave, const sigset_t *saved)
{
	const int keep[] = { sock, slave };
	sigset_t mask;
	int err = 0;
	pid_t cmd;

	if (sandbox_close_all_but(keep, ELEMENTSOF(keep)) < 0)
		FAIL(sock, id, SANDBOX_STEP_CLOSE_FDS, NULL, -errno);
	cmd = spawn_command(argv, envp, pty, slave, saved, &err);
	if (cmd < 0)
		FAIL(sock, id, SANDBOX_STEP_FORK, NULL, -errno);
	if (err) {
		(void)waitpid(cmd, NULL, 0);
		FAIL(sock, id, SANDBOX_STEP_EXEC, argv[0], err);
	}
	(void)setpgid(cmd, cmd);
	/* Only the command holds its descriptors: its pipes end with it. */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; i < 3 && null >= 0; i++)
		(void)dup2(null, i);
	if (null > 2)
		close(null);

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

/* The command's own /proc (mount_setup_own_proc()), and its rule in the
 * prebuilt ruleset: a rule names an inode, and the one there is the
 * session's /proc, which this one covers. The ruleset is pid 1's, shared
 * by the inits it makes: each adds the rule of its own /proc, which no
 * other command can reach (it is in this init's mount namespace, and
 * shows only this pid namespace), and pid 1 builds a fresh ruleset every
 * RULESET_REBUILD inits so that it does not grow for ever. */
static int exec_own_proc(SandboxPlan *plan, SandboxStep *ret_step, const char **ret_detail)
{
	int r = mount_setup_own_proc(&plan->mounts, ret_detail);

	if (r < 0) {
		*ret_step = SANDBOX_STEP_MOUNT_VIEW;
		return r;
	}
	r = landlock_plan_add_rules_beneath(plan->landlock, plan->landlock_fd, "/proc");
	if (r < 0) {
		*ret_step = SANDBOX_STEP_LANDLOCK;
		*ret_detail = "/proc";
	}
	return r;
}

#define RULESET_REBUILD 256

static void prebuild_ruleset(SandboxPlan *plan)
{
	if (plan->landlock_fd >= 0)
		close(plan->landlock_fd);
	plan->landlock_fd = -EBADF;
	/* Without one, each init builds its own (landlock.h). */
	if (plan->landlock && landlock_plan_prebuild(plan->landlock, &plan->landlock_fd) < 0)
		plan->landlock_fd = -EBADF;
}

/* pid 1, before each init it makes (a spare or one for a request). */
static void ruleset_count(SandboxPlan *plan)
{
	static unsigned made;

	if (++made % RULESET_REBUILD == 0)
		prebuild_ruleset(plan);
}

/* The per-process steps of a cold run, in its order: drop-caps,
 * no_new_privs, Landlock, seccomp, the walls' self-check, non-dumpable.
 * 0, or -errno with the failed step. */
static int exec_walls(SandboxPlan *plan, SandboxStep *ret_step, const char **ret_detail)
{
	int r = sandbox_init_steps(plan, SANDBOX_STEP_DROP_CAPS, SANDBOX_STEP_SECCOMP, ret_step,
				   ret_detail);

	if (r < 0)
		return r;
	if (plan->landlock_fd >= 0)
		close(plan->landlock_fd);
	r = walls_check(&plan->walls, ret_step, ret_detail);
	if (r < 0)
		return r;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		*ret_step = SANDBOX_STEP_NON_DUMPABLE;
		return -errno;
	}
	return 0;
}

/* pid 1 of the command's own pid namespace, made for one request: the
 * command's descriptors on 0-2 first, as a cold run's stdio step (its
 * Landlock rules for them, landlock.c, are this command's), chdir, the
 * walls, then the command; never returns. */
_noreturn_ static void exec_init(SandboxPlan *plan, uint32_t id, const char *cwd, char **argv,
				 char **envp, const int fds[3], const PtyPlan *pty,
				 const sigset_t *saved)
{
	int sock = plan->session_sock, r, slave = -EBADF;
	SandboxStep step = SANDBOX_STEP_NONE;
	const char *detail = NULL;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(WARD_EXIT_SETUP);
	(void)setsid();
	if ((r = exec_own_proc(plan, &step, &detail)) < 0)
		FAIL(sock, id, step, detail, r);
	/* A terminal: the command's own pty, this init's controlling one
	 * (a session leader without one), its master to the `ward exec`
	 * that relays it (pty-relay.h), as a cold run's pty step. */
	if (pty && (r = exec_pty_open(sock, id, pty, &slave)) < 0)
		FAIL(sock, id, SANDBOX_STEP_PTY, "/dev/ptmx", r);
	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			FAIL(sock, id, SANDBOX_STEP_STDIO, NULL, -errno);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	if (chdir(cwd) < 0)
		FAIL(sock, id, SANDBOX_STEP_CHDIR, cwd, -errno);
	r = exec_walls(plan, &step, &detail);
	if (r < 0)
		FAIL(sock, id, step, detail, r);
	exec_run(sock, id, argv, envp, pty, slave, saved);
}

/* A spare: pid 1 of a pid namespace of its own, made while the session
 * waits, which takes the same steps as exec_init() ahead of its request,
 * with fds 0-2 /dev/null (pid 1's). It serves a request only when the
 * request's descriptors would get no Landlock rule of their own (pipes,
 * sockets, /dev/null: landlock_plan_prebuilt_serves()), so the command
 * runs under exactly the walls exec_init() would give it; chdir comes
 * after the walls, as the command's own would. A step that failed is
 * reported for the request it gets. @req: its end of pid 1's socket. */
_noreturn_ static void spare_main(SandboxPlan *plan, int req, const sigset_t *saved)
{
	static char buf[sizeof(ExecHead) + sizeof(PtyPlan) + SANDBOX_EXEC_MAX];
	PtyPlan spty;
	static char *argv[SANDBOX_EXEC_STRINGS_MAX + 1], *envp[SANDBOX_EXEC_STRINGS_MAX + 1];
	const int keep[] = { plan->session_sock, req, plan->landlock_fd };
	int sock = plan->session_sock, fds[3], r;
	SandboxStep step = SANDBOX_STEP_NONE;
	const char *detail = NULL, *cwd;
	ExecHead h = {};
	size_t nfd;
	ssize_t n;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || sandbox_close_all_but(keep, ELEMENTSOF(keep)) < 0)
		_exit(WARD_EXIT_SETUP);
	(void)setsid();
	r = exec_own_proc(plan, &step, &detail);
	if (r >= 0)
		r = exec_walls(plan, &step, &detail);
	n = recv_with_fds(req, buf, sizeof(buf), fds, 3, &nfd, 0);
	if (n <= 0)
		_exit(0); /* pid 1 is gone, or let this spare go */
	close(req);
	cwd = parse_exec(buf, (size_t)n, &h, argv, envp, &spty);
	if (!cwd || nfd != 3 || h.pty) /* the supervisor checked it: cannot happen */
		FAIL(sock, h.id, SANDBOX_STEP_INIT, detail, EBADMSG);
	if (r < 0)
		FAIL(sock, h.id, step, detail, r);
	/* Descriptors the walls up have no rule for: refused, never run
	 * under walls other than exec_init()'s (the supervisor sends only
	 * pipes, sockets and /dev/null here: cannot happen either). */
	if (!landlock_plan_prebuilt_serves(plan->landlock, plan->landlock_fd, fds))
		FAIL(sock, h.id, SANDBOX_STEP_STDIO, "descriptors the spare has no Landlock rule for",
		     EBADMSG);
	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			FAIL(sock, h.id, SANDBOX_STEP_STDIO, NULL, -errno);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	if (chdir(cwd) < 0)
		FAIL(sock, h.id, SANDBOX_STEP_CHDIR, cwd, -errno);
	exec_run(sock, h.id, argv, envp, NULL, -EBADF, saved);
}
#undef FAIL

/* pid 1's spare (spare_main()): its pidfd and pid 1's end of its socket,
 * which hangs up once the spare got its request (or died). */
typedef struct Spare {
	int pidfd, sock;
} Spare;

static void spare_drop(Spare *sp)
{
	if (sp->pidfd >= 0)
		close(sp->pidfd);
	if (sp->sock >= 0)
		close(sp->sock);
	*sp = (Spare){ .pidfd = -EBADF, .sock = -EBADF };
}

/* Make the next spare and offer it to the supervisor (SANDBOX_EV_SPARE:
 * its socket and pidfd), which sends it a request itself: the request
 * and the command's start take no hop through this process. pid 1 keeps
 * its own end only to see it hang up, then makes the next one (not
 * before: it would hold up the spare on this CPU); it never sends the
 * spare a request itself, so a spare gets at most one. No spare when the
 * Landlock ruleset could not be built ahead (it would serve nothing):
 * every request then takes exec_init(). */
static void spare_start(SandboxPlan *plan, int sfd, const sigset_t *saved, Spare *sp)
{
	static const int null3[3] = { 0, 1, 2 }; /* /dev/null, as a spare's */
	int pair[2], pidfd = -EBADF;
	pid_t p;

	ruleset_count(plan);
	if (!landlock_plan_prebuilt_serves(plan->landlock, plan->landlock_fd, null3))
		return;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
		return;
	p = clone_newpid(&pidfd);
	if (p == 0) {
		close(sfd);
		close(pair[0]);
		spare_main(plan, pair[1], saved);
	}
	close(pair[1]);
	if (p < 0) {
		close(pair[0]);
		return;
	}
	*sp = (Spare){ .pidfd = pidfd, .sock = pair[0] };
	SandboxEvent ev = { .kind = SANDBOX_EV_SPARE };
	const int fds[2] = { pair[0], pidfd };
	if (send_with_fds(plan->session_sock, &ev, sizeof(ev), fds, 2) < 0) {
		(void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
		spare_drop(sp);
	}
}

/* pid 1's own walls, once its setup is done (docs/sessions.md, "The
 * session's pid 1"). It keeps two capabilities of the session's user
 * namespace (never the host's): CAP_SYS_ADMIN, for each command's pid and
 * mount namespace and its /proc (clone3(CLONE_NEWPID), unshare(CLONE_NEWNS),
 * mount), and CAP_SETPCAP, with which each command's init empties its
 * bounding set (caps_drop_all()); every other one goes, from its bounding
 * set too. Then no_new_privs and a seccomp filter of its own: the
 * commands' filter with the namespace and mount calls those two steps use
 * allowed (seccomp.md). It is inherited by everything pid 1 starts, so it
 * cannot be an allow list of what pid 1 does: it denies what neither pid 1
 * nor any command may do, and each command's init adds the command's
 * filter on top. */
static int serve_confine(SandboxPlan *plan, SandboxStep *ret_step)
{
	const uint64_t keep = (UINT64_C(1) << CAP_SYS_ADMIN) | (UINT64_C(1) << CAP_SETPCAP);
	int r;

	*ret_step = SANDBOX_STEP_DROP_CAPS;
	if ((r = caps_keep_only(keep)) < 0)
		return r;
	*ret_step = SANDBOX_STEP_NO_NEW_PRIVS;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	*ret_step = SANDBOX_STEP_SECCOMP;
	return plan->serve_seccomp ? seccomp_program_load(plan->serve_seccomp) : 0;
}

_noreturn_ void sandbox_serve_init(SandboxPlan *plan, const sigset_t *saved)
{
	static char buf[sizeof(ExecHead) + sizeof(PtyPlan) + SANDBOX_EXEC_MAX];
	static char *argv[SANDBOX_EXEC_STRINGS_MAX + 1], *envp[SANDBOX_EXEC_STRINGS_MAX + 1];
	int sock = plan->session_sock, sfd;
	Spare spare = { .pidfd = -EBADF, .sock = -EBADF };
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
	 * a command then adds the rule of its own /proc (exec_own_proc())
	 * and restricts itself with it (landlock.h). */
	prebuild_ruleset(plan);
	const int keep[] = { sock, sfd, plan->landlock_fd };
	if (sfd < 0 || sandbox_close_all_but(keep, ELEMENTSOF(keep)) < 0)
		_exit(WARD_EXIT_SETUP);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)signal(sig, SIG_DFL);
	SandboxStep step;
	int r = serve_confine(plan, &step);
	if (r < 0) {
		/* A session whose pid 1 cannot be confined does not start. */
		send_event(sock, SANDBOX_EV_FAILED, 0, 0, step, r, "the session's pid 1", -1);
		_exit(WARD_EXIT_SETUP);
	}
	send_event(sock, SANDBOX_EV_READY, 0, 0, SANDBOX_STEP_NONE, 0, NULL, -1);
	/* After READY (`session new` returns): a request that comes first
	 * waits on the spare's socket until it is ready for it. */
	spare_start(plan, sfd, saved, &spare);

	for (;;) {
		struct pollfd p[3] = { { .fd = sock, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN },
				       { .fd = spare.sock, .events = POLLIN } };
		if (poll(p, spare.sock >= 0 ? 3 : 2, -1) < 0)
			continue;
		if (spare.sock >= 0 && p[2].revents) {
			/* The supervisor gave it a request (or it died). */
			spare_drop(&spare);
			spare_start(plan, sfd, saved, &spare);
		}
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
		ruleset_count(plan);
		pid_t c = clone_newpid(&pidfd);
		if (c == 0) {
			close(sfd);
			if (spare.sock >= 0)
				close(spare.sock);
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
		if (spare.sock < 0)
			spare_start(plan, sfd, saved, &spare);
	}
}
