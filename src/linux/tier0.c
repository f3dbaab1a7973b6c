/* The tier-0 backend: a supervisor with a deadline around an unconfined
 * command. See tier0.h.
 *
 * Why a subreaper and not only a process group: a command can leave its
 * group (setsid, setpgid) and double-fork, so that no signal to the group
 * and no wait on the child reaches the grandchild. As a child subreaper
 * (PR_SET_CHILD_SUBREAPER, Linux 3.4) ward inherits every orphan of the
 * tree, so killing its own children until none is left ends the whole tree:
 * each round kills the tree's roots, their children become ward's, the next
 * round kills those. Nothing outside the tree is touched. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-pass.h"
#include "common/macro.h"
#include "common/time-util.h"
#include "linux/sandbox-step.h"
#include "linux/syscall-wrappers.h"
#include "linux/tier0.h"
#include "ward/ward.h"

static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };


/* "pid (comm) S ppid ...": the ppid, or -1. comm may hold spaces and
 * parentheses, so parse from the last ')'. */
static pid_t stat_ppid(int dirfd, long pid)
{
	char path[64], buf[512];
	_cleanup_close_ int fd = -EBADF;
	ssize_t n;
	char *p;

	snprintf(path, sizeof(path), "%ld/stat", pid);
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || strlen(p) < 4)
		return -1;
	return (pid_t)strtol(p + 4, NULL, 10);
}

/* SIGKILL every process whose parent is us; returns how many. */
static int kill_own_children(void)
{
	_cleanup_closedir_ DIR *d = opendir("/proc");
	pid_t self = getpid();
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self)
			continue;
		if (stat_ppid(dirfd(d), pid) == self && kill((pid_t)pid, SIGKILL) == 0)
			n++;
	}
	return n;
}

static void record_status(BackendResult *res, int status)
{
	if (WIFEXITED(status)) {
		res->status = WEXITSTATUS(status);
		res->exit_code = res->status;
	} else if (WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
		res->exit_code = WARD_EXIT_SIGNAL_BASE + res->signal;
	}
}

/* Kill the tree: the command's group, then our children round by round
 * until we have none (see the file comment). Records @cmd's status if it
 * is reaped here. */
static void kill_tree(pid_t cmd, bool *cmd_reaped, BackendResult *res)
{
	for (;;) {
		int status;
		pid_t p;

		/* The command only while it is unreaped: a reaped pid can be
		 * reused. What is left of the tree reaches us as orphans. */
		if (!*cmd_reaped)
			(void)kill(cmd, SIGKILL);
		/* No child left at all (the common end: the command exited and
		 * started nothing that outlived it): done, without reading
		 * every process of the machine in /proc. */
		siginfo_t si = {};
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD)
			break;
		(void)kill_own_children();
		p = waitpid(-1, &status, 0);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break; /* ECHILD: nothing of the tree is left */
		if (p == cmd && !*cmd_reaped) {
			*cmd_reaped = true;
			record_status(res, status);
		}
	}
}

enum { FAIL_EXEC, FAIL_CHDIR, FAIL_STDIO, FAIL_CONFINE };

/* What the child reports when it could not exec the command. */
typedef struct ChildReport {
	int what;       /* FAIL_* */
	int err;        /* positive errno */
	int step;       /* SandboxStep, for FAIL_CONFINE */
	char detail[256]; /* the hook's, for FAIL_CONFINE (the parent knows the others) */
} ChildReport;

_noreturn_ static void child_fail(int err_fd, int what, int step, const char *detail, int err,
				  int code)
{
	ChildReport rep = { .what = what, .err = err, .step = step };

	if (detail)
		strncpy(rep.detail, detail, sizeof(rep.detail) - 1);
	(void)!write(err_fd, &rep, sizeof(rep));
	_exit(code);
}

/* Put the caller's descriptors on fds 0..2: first out of the way (a passed
 * fd may be 0..2 itself), then into place. Async-signal-safe. */
static int move_stdio(const int stdio[3])
{
	int moved[3] = { -1, -1, -1 };

	for (int fd = 0; fd <= 2; fd++)
		if (stdio[fd] >= 0 && (moved[fd] = fcntl(stdio[fd], F_DUPFD_CLOEXEC, 3)) < 0)
			return -errno;
	for (int fd = 0; fd <= 2; fd++)
		if (moved[fd] >= 0 && dup2(moved[fd], fd) < 0)
			return -errno;
	return 0;
}

_noreturn_ static void child_exec(const BackendInput *in, const Tier0Confine *c,
				  const sigset_t *saved, int err_fd, bool in_cgroup)
{
	int r;

	sigprocmask(SIG_SETMASK, saved, NULL);
	if ((r = move_stdio(in->stdio)) < 0)
		child_fail(err_fd, FAIL_STDIO, 0, NULL, -r, WARD_EXIT_SETUP);
	if (chdir(in->workspace) < 0)
		child_fail(err_fd, FAIL_CHDIR, 0, NULL, errno, WARD_EXIT_SETUP);
	if (c && c->confine) {
		SandboxStep step = SANDBOX_STEP_INIT;
		const char *detail = NULL;

		if ((r = c->confine(c->data, in_cgroup, &step, &detail)) < 0)
			child_fail(err_fd, FAIL_CONFINE, (int)step, detail, -r, WARD_EXIT_SETUP);
	}
	execvpe(in->argv[0], in->argv, in->envp);
	child_fail(err_fd, FAIL_EXEC, 0, NULL, errno,
		   errno == ENOENT ? WARD_EXIT_NOTFOUND : WARD_EXIT_NOEXEC);
}

/* May the child share our memory (vfork)? Not when this process catches a
 * signal that can arrive from outside (a program that embeds libward may
 * have handlers): a handler run in the child would write the parent's
 * memory. Faults the child itself would raise (SEGV, BUS, FPE, ILL, TRAP,
 * SYS: a sanitizer's handlers) do not count. Unknown (no /proc): no. */
static bool vfork_safe(void)
{
	const unsigned long long faults = (1ULL << (SIGSEGV - 1)) | (1ULL << (SIGBUS - 1)) |
					  (1ULL << (SIGFPE - 1)) | (1ULL << (SIGILL - 1)) |
					  (1ULL << (SIGTRAP - 1)) | (1ULL << (SIGSYS - 1));
	_cleanup_close_ int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	char buf[2048];
	ssize_t n;

	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return false;
	buf[n] = '\0';
	const char *cgt = strstr(buf, "\nSigCgt:\t");
	if (!cgt)
		return false;
	return (strtoull(cgt + 9, NULL, 16) & ~faults) == 0;
}

/* vfork, in a frame of its own that the child leaves only by execve or
 * _exit: no copy of ward's page tables to make (and to tear down again at
 * execve), none of the copy-on-write faults after a fork. The child shares
 * ward's memory until its execve, with ward suspended meanwhile: what runs
 * there (child_exec, the confine hook) writes only its own stack frames,
 * and the state it changes (fds, cwd, rlimits, credentials, no_new_privs,
 * Landlock, seccomp, the signal mask) is its own, as after fork. Only
 * where no signal handler could run in the child (vfork_safe). */
__attribute__((noinline)) static pid_t vfork_child(const BackendInput *in, const Tier0Confine *c,
						    const sigset_t *saved, int err_fd)
{
	pid_t pid = vfork();

	if (pid == 0)
		child_exec(in, c, saved, err_fd, false);
	return pid;
}

int tier0_run(const BackendInput *in, BackendResult *ret)
{
	return tier0_supervise(in, NULL, ret);
}

int tier0_supervise(const BackendInput *in, const Tier0Confine *c, BackendResult *ret)
{
	_cleanup_close_ int sfd = -EBADF, err_r = -EBADF, err_w = -EBADF, parent_fd = -EBADF;
	const pid_t parent = in->parent_pid;
	uint64_t start = monotonic_ms(),
		 deadline = in->timeout_s ? start + in->timeout_s * 1000 : 0;
	BackendResult res = { .status = -1 };
	bool reaped = false;
	sigset_t mask, saved;
	int was_subreaper = 0, pfd[2], e;
	ChildReport rep;
	pid_t cmd;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	err_r = pfd[0];
	err_w = pfd[1];
	/* Keep what a caller set (a harness that is a subreaper itself). */
	(void)prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper, 0, 0, 0);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		return -errno;

	sigemptyset(&mask);
	for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
		sigaddset(&mask, forwarded_signals[i]);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &saved);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		e = -errno;
		sigprocmask(SIG_SETMASK, &saved, NULL);
		return e;
	}

	/* Die with the harness, as at tier 2: a pidfd of the parent recorded
	 * at start, checked against getppid() once open (docs/sandbox.md). */
	if (parent > 0) {
		parent_fd = pidfd_open(parent, 0);
		if ((parent_fd < 0 && errno == ESRCH) || getppid() != parent)
			res.parent_died = true;
	}
	/* The command stays in ward's process group, where it would be
	 * without ward: a pipeline's job control, the terminal's signals and
	 * its foreground are the caller's shell's business. */
	/* With a cgroup v2, the child is born in it: moving a process there
	 * later waits for an RCU grace period. clone3 answered with ENOSYS
	 * (a container's seccomp profile): fork, and the hook joins it. */
	bool in_cgroup = false;
	cmd = -1;
	if (c && c->has_cgroup && c->cgroup_fd >= 0) {
		WardCloneArgs args = { .flags = CLONE_INTO_CGROUP,
				       .exit_signal = SIGCHLD,
				       .cgroup = (uint64_t)c->cgroup_fd };
		cmd = (pid_t)sys_clone3(&args, sizeof(args));
		in_cgroup = cmd >= 0;
		if (cmd < 0 && errno != ENOSYS) {
			e = -errno;
			sigprocmask(SIG_SETMASK, &saved, NULL);
			return e;
		}
	}
	if (cmd < 0 && vfork_safe())
		cmd = vfork_child(in, c, &saved, err_w);
	else if (cmd < 0) {
		cmd = fork();
		if (cmd == 0)
			child_exec(in, c, &saved, err_w, false);
	}
	if (cmd < 0) {
		e = -errno;
		sigprocmask(SIG_SETMASK, &saved, NULL);
		return e;
	}
	if (cmd == 0)
		child_exec(in, c, &saved, err_w, in_cgroup);
	err_w = -EBADF; /* closed below: only the child writes */
	(void)close(pfd[1]);

	_cleanup_close_ int listener = -EBADF;
	bool want_listener = c && c->has_notify && c->serve;
	while (!reaped && !res.parent_died) {
		struct pollfd p[4] = { { .fd = sfd, .events = POLLIN },
				       { .fd = parent_fd, .events = POLLIN },
				       { .fd = want_listener ? c->notify_sock : -1, .events = POLLIN },
				       { .fd = listener, .events = POLLIN } };
		int timeout = -1, n;

		if (deadline) {
			uint64_t now = monotonic_ms();
			timeout = now >= deadline ? 0 : (int)(deadline - now);
		}
		n = poll(p, 4, timeout);
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0 && deadline && monotonic_ms() >= deadline) {
			res.timed_out = true;
			break;
		}
		if (n > 0 && p[1].revents) {
			res.parent_died = true;
			break;
		}
		/* The listener arrives once, before the command's execve; a
		 * child that failed earlier sends none (its error comes below). */
		if (n > 0 && p[2].revents) {
			int fd;
			if (fd_pass_recv(c->notify_sock, &fd, 1, MSG_DONTWAIT) == 0)
				listener = fd;
			want_listener = false;
		}
		/* Served or, once every confined task is gone (or the
		 * listener fails), closed. */
		if (n > 0 && p[3].revents &&
		    (!(p[3].revents & POLLIN) || c->serve(c->data, listener) < 0)) {
			(void)close(listener);
			listener = -EBADF;
		}
		if (n > 0) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				/* The terminal's ^C reached the group itself;
				 * pass on only what was sent to ward. */
				if (si.ssi_signo == SIGCHLD || si.ssi_code == SI_KERNEL)
					continue;
				(void)kill(cmd, (int)si.ssi_signo);
			}
		}
		for (;;) {
			int status;
			pid_t w = waitpid(-1, &status, WNOHANG);

			if (w <= 0)
				break;
			if (w == cmd) {
				reaped = true;
				record_status(&res, status);
			}
		}
	}
	/* Whatever is left of the tree goes with the run, as at tier 2. */
	kill_tree(cmd, &reaped, &res);
	res.duration_ms = monotonic_ms() - start;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	if (!was_subreaper)
		(void)prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);

	if (res.timed_out || res.parent_died) {
		res.signal = SIGKILL;
		res.status = -1;
		res.exit_code = res.timed_out ? WARD_EXIT_TIMEOUT : WARD_EXIT_SIGNAL_BASE + SIGKILL;
	} else if (read(err_r, &rep, sizeof(rep)) == (ssize_t)sizeof(rep)) {
		/* stdio, chdir, the confine hook or exec failed: the command
		 * never ran. */
		static const char *const steps[] = { [FAIL_EXEC] = "exec", [FAIL_CHDIR] = "chdir",
						     [FAIL_STDIO] = "stdio" };
		const int what = rep.what >= FAIL_EXEC && rep.what <= FAIL_CONFINE ? rep.what
										: FAIL_EXEC;
		rep.detail[sizeof(rep.detail) - 1] = '\0';
		res.setup_failed = true;
		res.exec_failed = what == FAIL_EXEC;
		const char *step = what == FAIL_CONFINE
					   ? sandbox_step_to_string((SandboxStep)rep.step)
					   : steps[what];
		(void)ward_error_set(&res.error, step ? step : "init", rep.err, "%s",
				     what == FAIL_EXEC	      ? in->argv[0]
				     : what == FAIL_CHDIR     ? in->workspace
				     : what == FAIL_CONFINE ? rep.detail
							      : "the descriptors passed for fds 0-2");
		res.exit_code = what != FAIL_EXEC     ? WARD_EXIT_SETUP
				: rep.err == ENOENT ? WARD_EXIT_NOTFOUND
						    : WARD_EXIT_NOEXEC;
	}
	*ret = res;
	return 0;
}

/* ---- the tier-0 entry of the backend table (run/backend.h) ---- */

struct BackendPlan {
	const BackendInput *in;
};

static int t0_probe(WardError *reterr)
{
	return 0;
}

static int t0_plan(const BackendInput *in, BackendPlan **ret, WardError *reterr)
{
	BackendPlan *p;
	int r;

	if ((r = backend_check_stdio(in, reterr)) < 0)
		return r;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->in = in;
	*ret = p;
	return 0;
}

static int t0_acquire(BackendPlan *plan, WardError *reterr)
{
	return 0;
}

static cJSON *t0_describe(const BackendPlan *plan)
{
	cJSON *d = cJSON_CreateObject(), *deg = cJSON_CreateArray();

	cJSON_AddItemToObject(d, "enforced", cJSON_CreateArray());
	cJSON_AddItemToArray(deg, cJSON_CreateString("tier-0-no-isolation"));
	cJSON_AddItemToObject(d, "degraded", deg);
	return d;
}

static int t0_run(BackendPlan *plan, BackendResult *ret, WardError *reterr)
{
	int r = tier0_run(plan->in, ret);

	if (r < 0)
		return ward_error_set(reterr, "fork", r, "Failed to run '%s'", plan->in->argv[0]);
	return 0;
}

static BackendPlan *t0_free(BackendPlan *plan)
{
	free(plan);
	return NULL;
}

const Backend backend_tier0 = {
	.tier = 0,
	.name = "tier0",
	.flags = 0, /* no view of its own, no proxy */
	.probe = t0_probe,
	.plan = t0_plan,
	.acquire = t0_acquire,
	.describe = t0_describe,
	.run = t0_run,
	.free = t0_free,
};
