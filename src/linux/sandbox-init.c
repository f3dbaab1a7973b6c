/* pid 1 of the sandbox ("init"): clone3() starts it in the new
 * namespaces (sandbox-run.c); it runs the steps below in order, then forks
 * the command, forwards the supervisor's signals and reaps. Between clone
 * and execve nothing allocates: every step executes what the plan
 * (sandbox-plan.c) computed. A failing step is reported to the supervisor
 * as {step, errno, detail} on the status pipe, and init exits 125.
 *
 * Order, and why:
 *   stdio          first: the descriptors the command inherits (stdio-relay.h);
 *   uid-map        first: until the map exists our uid is "nobody" inside
 *                  and nothing can be created;
 *   user-shares    this user namespace's /proc/sys/user limits (a share of
 *                  the user's inotify, namespace... counters): needs
 *                  CAP_SYS_RESOURCE here and the host's /proc, whose
 *                  /proc/sys the view later makes read-only;
 *   hostname, loopback, proxy-listeners
 *                  need CAP_SYS_ADMIN / CAP_NET_ADMIN in our namespaces, and
 *                  nothing from the mounts: early, so the supervisor starts
 *                  the proxy while the view is being built;
 *   mount-base     scratch root + /oldroot before any view mount;
 *   mount-view     the plan (mount-plan.c), while the host tree is at /oldroot;
 *   pivot          detach the host tree: from here on only the view exists;
 *   chdir          the workspace, as the command sees it;
 *   pty            after pivot: a pty of the sandbox's own devpts (only
 *                  when stdio holds a terminal; pty-relay.c);
 *   rlimits        before caps go (raising a hard limit needs them);
 *   drop-caps      nothing below needs a capability;
 *   no-new-privs   Landlock and seccomp require it;
 *   landlock       after pivot: rules name paths of the final view;
 *   seccomp        last: it forbids mount, unshare, ... used above (minijail).
 * Init itself runs under all of it; the command inherits it by fork+exec. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/log.h"
#include "common/macro.h"
#include "common/time-util.h"
#include "linux/caps.h"
#include "linux/mount-setup.h"
#include "linux/sandbox-internal.h"
#include "net/tls-ca.h"
#include "ward/ward.h"

void sandbox_report(int fd, SandboxStep step, const char *detail, int error)
{
	SetupReport r = { .step = step, .error = error < 0 ? -error : error };

	if (detail)
		strncpy(r.detail, detail, sizeof(r.detail) - 1);
	(void)!write(fd, &r, sizeof(r));
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n < 0 ? -errno : 0;
}

typedef struct SetupStep {
	SandboxStep id;
	int (*run)(SandboxPlan *plan, const char **reterr_detail);
} SetupStep;

static int step_stdio(SandboxPlan *plan, const char **detail)
{
	return stdio_relay_apply_child(&plan->stdio);
}

static int step_uid_map(SandboxPlan *plan, const char **detail)
{
	int r;

	/* We may map only ourselves, and only after giving up setgroups. */
	*detail = "/proc/self/uid_map";
	r = write_file("/proc/self/uid_map", plan->uid_map);
	if (r < 0)
		return r;
	*detail = "/proc/self/setgroups";
	r = write_file("/proc/self/setgroups", "deny");
	if (r < 0)
		return r;
	*detail = "/proc/self/gid_map";
	return write_file("/proc/self/gid_map", plan->gid_map);
}

static int step_user_shares(SandboxPlan *plan, const char **detail)
{
	*detail = "/proc/sys/user";
	return limits_apply_userns(plan->limits);
}

static int step_mount_base(SandboxPlan *plan, const char **detail)
{
	return mount_setup_base(&plan->mounts);
}

static int step_mount_view(SandboxPlan *plan, const char **detail)
{
	const char *path = NULL;
	size_t i = 0;
	int r = mount_setup_view(&plan->mounts, &i, &path);

	if (r < 0)
		*detail = path ? path : plan->mounts.specs[i].view;
	return r;
}

/* Cosmetic: the sandbox's own uts namespace is there either way. CRI-O's
 * and Podman's default seccomp profiles refuse sethostname, so a failure
 * leaves the host's name in place and the run goes on (`ward probe` and
 * `ward run --log-level info` say so). */
static int step_hostname(SandboxPlan *plan, const char **detail)
{
	(void)sethostname("ward", 4);
	return 0;
}

static int step_loopback(SandboxPlan *plan, const char **detail)
{
	return netns_loopback_up();
}

static int step_proxy_listeners(SandboxPlan *plan, const char **detail)
{
	int r;

	if (plan->n_listen == 0)
		return 0;
	r = netns_send_listeners(plan->proxy_sock, plan->listen_ports, plan->n_listen);
	if (r >= 0 && plan->n_capture > 0) {
		*detail = "transparent capture (local route, listeners, DNS stub)";
		r = netns_send_capture(plan->proxy_sock, plan->capture_ports, plan->n_capture);
	}
	close(plan->proxy_sock);
	plan->proxy_sock = -EBADF;
	return r;
}

static int step_pivot(SandboxPlan *plan, const char **detail)
{
	return mount_setup_finish();
}

static int step_chdir(SandboxPlan *plan, const char **detail)
{
	*detail = plan->workspace;
	return RET_NERRNO(chdir(plan->workspace));
}

static int step_pty(SandboxPlan *plan, const char **detail)
{
	int r;

	if (!plan->pty.enabled)
		return 0;
	*detail = "/dev/ptmx";
	r = pty_open(&plan->pty, &plan->pty_master, &plan->pty_slave);
	if (r < 0)
		return r;
	if (plan->pty.null_stdin) {
		*detail = "/dev/null";
		plan->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (plan->devnull < 0)
			return -errno;
	}
	*detail = NULL;
	r = pty_send_master(plan->pty_sock, plan->pty_master);
	close(plan->pty_sock);
	plan->pty_sock = -EBADF;
	return r;
}

static int step_rlimits(SandboxPlan *plan, const char **detail)
{
	return limits_apply_child(plan->limits);
}

static int step_drop_caps(SandboxPlan *plan, const char **detail)
{
	return caps_drop_all();
}

static int step_no_new_privs(SandboxPlan *plan, const char **detail)
{
	return RET_NERRNO(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
}

static int step_landlock(SandboxPlan *plan, const char **detail)
{
	return plan->landlock ? landlock_plan_apply_prebuilt(plan->landlock, plan->landlock_fd) : 0;
}

static int step_seccomp(SandboxPlan *plan, const char **detail)
{
	return plan->seccomp ? seccomp_program_load(plan->seccomp) : 0;
}

/* clang-format off */
static const SetupStep steps[] = {
	{ SANDBOX_STEP_STDIO,           step_stdio },
	{ SANDBOX_STEP_UID_MAP,         step_uid_map },
	{ SANDBOX_STEP_USER_SHARES,     step_user_shares },
	{ SANDBOX_STEP_HOSTNAME,        step_hostname },
	{ SANDBOX_STEP_LOOPBACK,        step_loopback },
	{ SANDBOX_STEP_PROXY_LISTENERS, step_proxy_listeners },
	{ SANDBOX_STEP_MOUNT_BASE,      step_mount_base },
	{ SANDBOX_STEP_MOUNT_VIEW,      step_mount_view },
	{ SANDBOX_STEP_PIVOT,           step_pivot },
	{ SANDBOX_STEP_CHDIR,           step_chdir },
	{ SANDBOX_STEP_PTY,             step_pty },
	{ SANDBOX_STEP_RLIMITS,         step_rlimits },
	{ SANDBOX_STEP_DROP_CAPS,       step_drop_caps },
	{ SANDBOX_STEP_NO_NEW_PRIVS,    step_no_new_privs },
	{ SANDBOX_STEP_LANDLOCK,        step_landlock },
	{ SANDBOX_STEP_SECCOMP,         step_seccomp },
};
/* clang-format on */

static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT };

void sandbox_forwarded_signals(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
		sigaddset(set, forwarded_signals[i]);
}

int sandbox_init_steps(SandboxPlan *plan, SandboxStep first, SandboxStep last,
		       SandboxStep *ret_step, const char **ret_detail)
{
	bool on = false;

	for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
		const char *detail = NULL;
		int r;

		if (steps[i].id == first)
			on = true;
		if (!on)
			continue;
		r = steps[i].run(plan, &detail);
		if (r < 0) {
			*ret_step = steps[i].id;
			*ret_detail = detail;
			return r;
		}
		if (steps[i].id == last)
			break;
	}
	return 0;
}

int sandbox_close_all_but(const int *keep, size_t n)
{
	int k[8];
	size_t m = 0;
	unsigned next = 3;

	for (size_t i = 0; i < n && m < ELEMENTSOF(k); i++) {
		if (keep[i] < 3)
			continue;
		size_t j = m++;
		for (; j > 0 && k[j - 1] > keep[i]; j--)
			k[j] = k[j - 1];
		k[j] = keep[i];
	}
	for (size_t i = 0; i < m; i++) {
		if ((unsigned)k[i] > next && syscall(SYS_close_range, next, (unsigned)k[i] - 1, 0U) < 0)
			return -errno;
		next = (unsigned)k[i] + 1;
	}
	if (syscall(SYS_close_range, next, ~0U, 0U) < 0)
		return -errno;
	return 0;
}

static void send_message(const SandboxPlan *plan, int kind, int value)
{
	InitMessage m = { .kind = kind, .value = value };

	(void)!write(plan->result_fd, &m, sizeof(m));
}

/* Pass a signal from the supervisor on. Sent to the group, it goes where a
 * terminal would send it: the pty's foreground process group, or the
 * command's own group when there is no pty. */
void sandbox_forward_signal(int pty_master, pid_t cmd, int sig, bool group)
{
	pid_t pg = cmd;

	if (!group) {
		(void)kill(cmd, sig);
		return;
	}
	if (pty_master >= 0 && ioctl(pty_master, TIOCGPGRP, &pg) < 0)
		pg = cmd;
	if (pg <= 1 || kill(-pg, sig) < 0)
		(void)kill(cmd, sig);
	else if (sig == SIGCONT && pg != cmd)
		(void)kill(cmd, sig);
}

_noreturn_ void sandbox_init_main(SandboxPlan *plan, int parent_pidfd, const sigset_t *saved)
{
	sigset_t mask;
	pid_t cmd;

	/* If the supervisor dies, so do we, and with us the whole namespace. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(WARD_EXIT_SETUP);
	/* A session of our own, with no controlling terminal: nothing inside
	 * can open the caller's terminal as /dev/tty, take its foreground
	 * (tcsetpgrp) or reach the caller's process group with kill(0, sig);
	 * and the session's scheduling autogroup (/proc/self/autogroup, nice)
	 * is a new one, the sandbox's alone. */
	if (setsid() < 0)
		_exit(WARD_EXIT_SETUP);
	struct pollfd pp = { .fd = parent_pidfd, .events = POLLIN };
	if (poll(&pp, 1, 0) != 0) /* it died before the prctl */
		_exit(WARD_EXIT_SETUP);
	close(parent_pidfd);
	/* Nothing runs before the quarantine guard watches us: without it a
	 * SIGKILL of ward at the wrong moment would skip the after-run check. */
	char go;
	close(plan->go_wfd);
	if (RETRY_EINTR(read(plan->go_fd, &go, 1)) != 1)
		_exit(WARD_EXIT_SETUP);
	close(plan->go_fd);

	for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
		const char *detail = NULL;
		/* A warm session: the rest (caps, no_new_privs, Landlock,
		 * seccomp, the walls) is each command's (sandbox-serve.c). */
		if (plan->serve && steps[i].id == SANDBOX_STEP_DROP_CAPS) {
			close(plan->status_fd);
			plan->status_fd = -EBADF;
			sandbox_serve_init(plan, saved);
		}
		uint64_t t0 = plan->log_level >= LOG_LVL_DEBUG ? monotonic_us() : 0;
		int r = steps[i].run(plan, &detail);
		/* --log-level debug: one line per step (no allocation). */
		if (plan->log_level >= LOG_LVL_DEBUG)
			log_debug("setup step %-15s %s in %.3f ms", sandbox_step_to_string(steps[i].id),
				  r < 0 ? "failed" : "done", (double)(monotonic_us() - t0) / 1000.0);
		if (r < 0) {
			sandbox_report(plan->status_fd, steps[i].id, detail, r);
			_exit(WARD_EXIT_SETUP);
		}
	}

	/* Every wall is up (seccomp was the last): try what the policy
	 * forbids, and refuse to start the command if one gives way. The
	 * command inherits exactly these walls. */
	{
		SandboxStep wall = SANDBOX_STEP_NONE;
		const char *detail = NULL;
		int r = walls_check(&plan->walls, &wall, &detail);

		if (r < 0) {
			sandbox_report(plan->status_fd, wall, detail, r);
			_exit(WARD_EXIT_SETUP);
		}
	}

	/* init runs ward's code with the command's uid and (after drop-caps)
	 * its credentials: without this the command could write init's memory
	 * through /proc/1/mem, read its environment (the harness's, unfiltered)
	 * and use its fds. Non-dumpable, /proc/1 is off limits: ptrace access
	 * would need CAP_SYS_PTRACE over the host's user namespace. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		sandbox_report(plan->status_fd, SANDBOX_STEP_NON_DUMPABLE, NULL, -errno);
		_exit(WARD_EXIT_SETUP);
	}
	/* The run's CA key (network.inspect) is the proxy's alone. */
	tls_ca_wipe_key_in_child();
	/* Nothing the harness or ward left open stays in init: only the two
	 * pipes it reports on and the pty (stdin, stdout and stderr pass to
	 * the command). */
	const int keep[] = { plan->status_fd, plan->result_fd, plan->pty_master, plan->pty_slave,
			     plan->devnull };
	if (sandbox_close_all_but(keep, ELEMENTSOF(keep)) < 0) {
		sandbox_report(plan->status_fd, SANDBOX_STEP_CLOSE_FDS, NULL, -errno);
		_exit(WARD_EXIT_SETUP);
	}
	/* A handler makes a signal deliverable to a namespace's init even from
	 * inside it (a sanitizer's SIGSEGV handler, say): keep only defaults,
	 * and the signals init waits for, blocked. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)signal(sig, SIG_DFL);

	cmd = fork();
	if (cmd < 0) {
		sandbox_report(plan->status_fd, SANDBOX_STEP_FORK, NULL, -errno);
		_exit(WARD_EXIT_SETUP);
	}
	if (cmd == 0) {
		int r;
		/* A process group of its own (where signals for "the group"
		 * go), with a pty the terminal's foreground one. */
		if (plan->pty.enabled)
			r = pty_attach(&plan->pty, plan->pty_slave, plan->devnull);
		else
			r = RET_NERRNO(setpgid(0, 0));
		if (r < 0) {
			sandbox_report(plan->status_fd, SANDBOX_STEP_TERMINAL, NULL, r);
			_exit(WARD_EXIT_SETUP);
		}
		sigprocmask(SIG_SETMASK, saved, NULL);
		/* Only stdin, stdout and stderr pass; the status pipe closes on
		 * a successful exec and reports a failed one. */
		(void)syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
		execvpe(plan->argv[0], plan->argv, plan->envp);
		sandbox_report(plan->status_fd, SANDBOX_STEP_EXEC, plan->argv[0], -errno);
		_exit(errno == ENOENT ? WARD_EXIT_NOTFOUND : WARD_EXIT_NOEXEC);
	}
	(void)setpgid(cmd, cmd); /* both sides: no race with a forward */
	close(plan->status_fd);

	/* pid 1: forward the signals the supervisor passes on, tell it when
	 * the command stops (job control), reap everything, leave when the
	 * command does (the kernel then kills the rest). init keeps the pty's
	 * slave open: the master reads end-of-file only once all is gone. */
	sandbox_forwarded_signals(&mask);
	sigaddset(&mask, SIGCHLD);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&mask, &si);
		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			/* Only the supervisor's (from outside the namespace the
			 * sender's pid reads 0); the command signals its own
			 * processes itself. */
			if (si.si_pid == 0)
				sandbox_forward_signal(plan->pty_master, cmd, sig,
					       si.si_code == SI_QUEUE &&
						       si.si_value.sival_int == FORWARD_TO_GROUP);
			continue;
		}
		for (;;) {
			int status;
			pid_t p = waitpid(-1, &status, WNOHANG | WUNTRACED);
			if (p <= 0)
				break;
			if (p != cmd)
				continue;
			if (WIFSTOPPED(status)) {
				send_message(plan, INIT_MSG_STOP, WSTOPSIG(status));
				continue;
			}
			send_message(plan, INIT_MSG_EXIT, status);
			_exit(0);
		}
	}
}
