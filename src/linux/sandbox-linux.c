/* The T2 sandbox driver: the parent prepares a plan, clone3() creates the
 * namespaces, and the child (pid 1 of the new pid namespace, "init") runs
 * the steps below in order, then forks the command and reaps.
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
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/cleanup.h"
#include "common/json-util.h"
#include "common/log.h"
#include "common/macro.h"
#include "common/strv.h"
#include "common/time-util.h"
#include "linux/caps.h"
#include "linux/git-exec-paths.h"
#include "linux/landlock.h"
#include "linux/limits.h"
#include "linux/mount-plan.h"
#include "linux/mount-setup.h"
#include "linux/netns.h"
#include "linux/pty-relay.h"
#include "linux/quarantine.h"
#include "linux/root-view.h"
#include "linux/netns-stats.h"
#include "linux/sandbox.h"
#include "linux/seccomp-filter.h"
#include "linux/workspace-scan.h"
#include "linux/stdio-relay.h"
#include "net/proxy.h"
#include "ward/ward.h"

struct SandboxPlan {
	MountPlan mounts;
	RootScan *root_scan; /* uid 0: the /sys and /proc scan, until joined */
	LandlockPlan *landlock;
	SeccompProgram *seccomp;
	LimitsPlan *limits;
	char *const *argv;
	char *const *envp;
	char *workspace;
	char uid_map[64], gid_map[64];
	bool proxy;
	/* Listeners init makes inside and hands out: the proxy's two ports
	 * (when proxy), then network.host_ports. */
	uint16_t listen_ports[NETNS_LISTENERS_MAX];
	size_t n_listen, n_host;
	bool has_report;
	int report_fd;
	int log_level;
	const WardPolicy *policy;
	AuditLog *audit;
	char *program;           /* argv[0]'s base name, for network.commands */
	WorkspaceScan protected_scan; /* protected paths that exist (read-only binds) */
	uint64_t scan_us;
	QuarantineInput quarantine;   /* after the run; .workspace NULL in CoW runs */
	char *state_dir, *run_id;
	char **protected;             /* fs.protected + where git configs point (git-exec-paths.h) */
	char **enforced, **degraded;
	pid_t parent_pid;        /* ward dies with it; 0: not watched */
	/* Filled during the run. */
	StdioRelay stdio;
	PtyPlan pty;             /* a terminal on stdio: the command gets a pty */
	int status_fd;           /* child -> parent: SetupReport on failure */
	int result_fd;           /* init -> parent: InitMessage */
	int proxy_sock;          /* init -> parent: the proxy listeners */
	int go_fd, go_wfd;       /* parent -> init: a byte once the guard watches (EOF: stop) */
	int pty_sock;            /* init -> parent: the pty's master */
	int pty_master, pty_slave, devnull; /* init's */
};

/* What init tells the supervisor while the command runs. */
typedef struct InitMessage {
	int kind;
	int value;
} InitMessage;
enum {
	INIT_MSG_EXIT = 1, /* value: the command's wait status; init leaves */
	INIT_MSG_STOP = 2, /* value: the signal that stopped the command */
};

/* A signal the supervisor forwards carries this in si_value: the whole
 * foreground group gets it, as from a terminal, not the command alone. */
#define FORWARD_TO_GROUP 1

/* What the child reports when a step fails. Written with one write(2). */
typedef struct SetupReport {
	char step[32];
	char detail[448];
	int error;
} SetupReport;

/* ---- child side (no allocation from here to execve) ---- */

static void report(int fd, const char *step, const char *detail, int error)
{
	SetupReport r = { .error = error < 0 ? -error : error };

	strncpy(r.step, step, sizeof(r.step) - 1);
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
	const char *name;
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

static int step_hostname(SandboxPlan *plan, const char **detail)
{
	return RET_NERRNO(sethostname("ward", 4));
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
	return plan->landlock ? landlock_plan_apply(plan->landlock) : 0;
}

static int step_seccomp(SandboxPlan *plan, const char **detail)
{
	return plan->seccomp ? seccomp_program_load(plan->seccomp) : 0;
}

/* clang-format off */
static const SetupStep steps[] = {
	{ "stdio",           step_stdio },
	{ "uid-map",         step_uid_map },
	{ "user-shares",     step_user_shares },
	{ "hostname",        step_hostname },
	{ "loopback",        step_loopback },
	{ "proxy-listeners", step_proxy_listeners },
	{ "mount-base",      step_mount_base },
	{ "mount-view",      step_mount_view },
	{ "pivot",           step_pivot },
	{ "chdir",           step_chdir },
	{ "pty",             step_pty },
	{ "rlimits",         step_rlimits },
	{ "drop-caps",       step_drop_caps },
	{ "no-new-privs",    step_no_new_privs },
	{ "landlock",        step_landlock },
	{ "seccomp",         step_seccomp },
};
/* clang-format on */

static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT };

/* Close every fd above 2 except the @n in @keep (negative ones ignored). */
static int close_all_but(const int *keep, size_t n)
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
static void forward_signal(const SandboxPlan *plan, pid_t cmd, int sig, bool group)
{
	pid_t pg = cmd;

	if (!group) {
		(void)kill(cmd, sig);
		return;
	}
	if (plan->pty_master >= 0 && ioctl(plan->pty_master, TIOCGPGRP, &pg) < 0)
		pg = cmd;
	if (pg <= 1 || kill(-pg, sig) < 0)
		(void)kill(cmd, sig);
	else if (sig == SIGCONT && pg != cmd)
		(void)kill(cmd, sig);
}

_noreturn_ static void init_main(SandboxPlan *plan, int parent_pidfd, const sigset_t *saved)
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
		uint64_t t0 = plan->log_level >= LOG_LVL_DEBUG ? monotonic_us() : 0;
		int r = steps[i].run(plan, &detail);
		/* --log-level debug: one line per step (no allocation). */
		if (plan->log_level >= LOG_LVL_DEBUG)
			log_debug("setup step %-15s %s in %.3f ms", steps[i].name,
				  r < 0 ? "failed" : "done", (double)(monotonic_us() - t0) / 1000.0);
		if (r < 0) {
			report(plan->status_fd, steps[i].name, detail, r);
			_exit(WARD_EXIT_SETUP);
		}
	}

	/* init runs ward's code with the command's uid and (after drop-caps)
	 * its credentials: without this the command could write init's memory
	 * through /proc/1/mem, read its environment (the harness's, unfiltered)
	 * and use its fds. Non-dumpable, /proc/1 is off limits: ptrace access
	 * would need CAP_SYS_PTRACE over the host's user namespace. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		report(plan->status_fd, "non-dumpable", NULL, -errno);
		_exit(WARD_EXIT_SETUP);
	}
	/* Nothing the harness or ward left open stays in init: only the two
	 * pipes it reports on and the pty (stdin, stdout and stderr pass to
	 * the command). */
	const int keep[] = { plan->status_fd, plan->result_fd, plan->pty_master, plan->pty_slave,
			     plan->devnull };
	if (close_all_but(keep, ELEMENTSOF(keep)) < 0) {
		report(plan->status_fd, "close-fds", NULL, -errno);
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
		report(plan->status_fd, "fork", NULL, -errno);
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
			report(plan->status_fd, "terminal", NULL, r);
			_exit(WARD_EXIT_SETUP);
		}
		sigprocmask(SIG_SETMASK, saved, NULL);
		/* Only stdin, stdout and stderr pass; the status pipe closes on
		 * a successful exec and reports a failed one. */
		(void)syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
		execvpe(plan->argv[0], plan->argv, plan->envp);
		report(plan->status_fd, "exec", plan->argv[0], -errno);
		_exit(errno == ENOENT ? WARD_EXIT_NOTFOUND : WARD_EXIT_NOEXEC);
	}
	(void)setpgid(cmd, cmd); /* both sides: no race with a forward */
	close(plan->status_fd);

	/* pid 1: forward the signals the supervisor passes on, tell it when
	 * the command stops (job control), reap everything, leave when the
	 * command does (the kernel then kills the rest). init keeps the pty's
	 * slave open: the master reads end-of-file only once all is gone. */
	sigemptyset(&mask);
	for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
		sigaddset(&mask, forwarded_signals[i]);
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
				forward_signal(plan, cmd, sig,
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

/* ---- parent side ---- */

static int add_name(char ***l, const char *s)
{
	return strv_extend_unique(l, s);
}

int sandbox_plan_new(const SandboxOptions *opt, SandboxPlan **ret, SandboxError *reterr)
{
	_cleanup_free_ char *errpath = NULL;
	SandboxPlan *plan;
	int r;

#define FAIL(r_, step_, ...)                                                                       \
	do {                                                                                       \
		snprintf(reterr->step, sizeof(reterr->step), "%s", step_);                         \
		snprintf(reterr->detail, sizeof(reterr->detail), __VA_ARGS__);                     \
		reterr->error = -(r_);                                                             \
		sandbox_plan_free(plan);                                                           \
		return (r_);                                                                       \
	} while (0)

	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	plan->status_fd = plan->result_fd = plan->proxy_sock = plan->go_fd = plan->go_wfd = -EBADF;
	plan->stdio = (StdioRelay)STDIO_RELAY_INIT;
	plan->pty_sock = plan->pty_master = plan->pty_slave = plan->devnull = -EBADF;
	plan->parent_pid = opt->parent_pid;
	plan->argv = opt->argv;
	plan->envp = opt->envp;
	plan->policy = opt->policy;
	plan->audit = opt->audit;
	plan->proxy = opt->policy->net_mode == NET_MODE_PROXY;
	plan->has_report = opt->has_proxy_report;
	plan->report_fd = opt->proxy_report_fd;
	plan->log_level = log_get_level();
	/* uid 0: the scan of /sys and /proc overlaps the rest of the plan. */
	if (getuid() == 0)
		plan->root_scan = root_view_scan_start();
	/* Limits first: on root's cgroup v1 fallback this starts the wait
	 * for the migration's grace period, which then overlaps the rest of
	 * the plan (limits-cgroup.c, warm_v1_migration). */
	r = limits_plan_new(opt->policy, opt->session_id, &plan->limits);
	if (r < 0)
		FAIL(r, "limits", "setting up resource limits");
	if (plan->proxy) {
		plan->listen_ports[plan->n_listen++] = WARD_PROXY_HTTP_PORT;
		plan->listen_ports[plan->n_listen++] = WARD_PROXY_SOCKS_PORT;
	}
	for (size_t i = 0; i < opt->policy->n_net_host_ports; i++) {
		uint16_t port = opt->policy->net_host_ports[i];
		if (plan->proxy && (port == WARD_PROXY_HTTP_PORT || port == WARD_PROXY_SOCKS_PORT))
			FAIL(-EADDRINUSE, "host-ports",
			     "network.host_ports: port %u is the proxy's port inside the sandbox",
			     port);
		if (plan->n_listen >= NETNS_LISTENERS_MAX)
			FAIL(-E2BIG, "host-ports", "network.host_ports: too many ports");
		plan->listen_ports[plan->n_listen++] = port;
		plan->n_host++;
	}
	plan->workspace = strdup(opt->workspace);
	if (opt->cow_upper && opt->policy->git_mode == GIT_MODE_COMMIT)
		FAIL(-EINVAL, "git",
		     "\"git\": \"commit\" cannot be combined with a copy-on-write session "
		     "(ward apply never writes repository metadata); use \"read-only\"");
	const char *base = strrchr(opt->argv[0], '/');
	plan->program = strdup(base ? base + 1 : opt->argv[0]);
	if (!plan->workspace || !plan->program)
		FAIL(-ENOMEM, "plan", "out of memory");
	snprintf(plan->uid_map, sizeof(plan->uid_map), "%u %u 1\n", getuid(), getuid());
	snprintf(plan->gid_map, sizeof(plan->gid_map), "%u %u 1\n", getgid(), getgid());

	/* Which protected paths exist, at any depth: read-only for the run,
	 * and the reference the after-run check compares with. */
	{
		_cleanup_close_ int wfd =
			open(opt->workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_free_ char *errrel = NULL;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		r = wfd < 0 ? -errno
			    : workspace_scan(wfd, opt->policy->fs_protected, &plan->protected_scan,
					     &errrel);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (r < 0)
			FAIL(r, "protected", "scanning '%s%s%s' for protected paths", opt->workspace,
			     errrel ? "/" : "", errrel ? errrel : "");
		plan->scan_us = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000 +
				(uint64_t)(t1.tv_nsec - t0.tv_nsec) / 1000;
	}
	/* Hooks and included configs that a repository's config points to in
	 * the workspace are as sensitive as .git: protected for this run. */
	plan->protected = strv_copy(opt->policy->fs_protected);
	if (!plan->protected)
		FAIL(-ENOMEM, "plan", "out of memory");
	r = git_exec_paths(opt->workspace, opt->home, &plan->protected_scan, &plan->protected);
	if (r < 0)
		FAIL(r, "protected", "reading the git configuration of '%s'", opt->workspace);
	if (!opt->cow_upper) {
		plan->state_dir = strdup(opt->state_dir);
		plan->run_id = strdup(opt->session_id ? opt->session_id : "run");
		if (!plan->state_dir || !plan->run_id)
			FAIL(-ENOMEM, "plan", "out of memory");
		plan->quarantine = (QuarantineInput){
			.workspace = plan->workspace,
			.state_dir = plan->state_dir,
			.run_id = plan->run_id,
			.protected = plan->protected,
			.before = &plan->protected_scan,
			.audit = opt->audit,
		};
	}
	MountPlanInput in = {
		.policy = opt->policy,
		.workspace = opt->workspace,
		.home = opt->home,
		.state_dir = opt->state_dir,
		.config_dir = opt->config_dir,
		.policy_files = opt->policy_files,
		.cow_upper = opt->cow_upper,
		.cow_work = opt->cow_work,
		.test_leak_dir = opt->test_leak_dir,
		.protected_scan = &plan->protected_scan,
		.test_no_masks = opt->test_no_masks,
	};
	r = mount_plan_build(&in, &plan->mounts, &errpath);
	if (r == -EXDEV)
		FAIL(r, "workspace",
		     "workspace '%s' is / or contains the home directory; run ward in a project "
		     "directory",
		     errpath ? errpath : opt->workspace);
	if (r == -EPERM)
		FAIL(r, "workspace",
		     "workspace '%s' is inside or contains ward's own directory '%s'; run ward in a "
		     "project directory",
		     opt->workspace, errpath ? errpath : "?");
	if (r == -ELOOP)
		FAIL(r, "protected",
		     "protected path '%s' is a symlink (or its parent is) that ward cannot make "
		     "read-only: it dangles or its parent would redirect the protection",
		     errpath ? errpath : "?");
	if (r == -EMLINK)
		FAIL(r, "protected",
		     "'%s' is more than %d directories deep: ward cannot check it for protected "
		     "paths",
		     errpath ? errpath : "?", WORKSPACE_SCAN_MAX_DEPTH);
	if (r < 0)
		FAIL(r, "plan", "%s", errpath ? errpath : opt->workspace);

	/* Uid 0 inside is host uid 0 and owns root's files: show a root
	 * caller no more of the system than an unprivileged user sees. */
	if (getuid() == 0) {
		bool idmapped = false;
		r = root_view_prepare(&plan->mounts, opt->home, &plan->root_scan, &idmapped);
		if (r < 0)
			FAIL(r, "root-view", "preparing the view for a root caller");
		if (add_name(idmapped ? &plan->enforced : &plan->degraded, "root-system-files") < 0 ||
		    add_name(&plan->enforced, "root-kernel-files") < 0)
			FAIL(-ENOMEM, "plan", "out of memory");
	}

	if (opt->hardening) {
		uint16_t ports[64];
		size_t n_ports = 0;
		uint16_t connect_ports[64 + NETNS_LISTENERS_MAX];
		size_t n_connect = 0;

		/* TCP at T2: the network namespace holds only lo, so a bind or
		 * connect reaches only the sandbox's own listeners, the proxy
		 * and the host-port relays ward made: Landlock port rules would
		 * add no wall, only break test servers (any port, port 0).
		 * They are used when network.local_ports narrows the ports on
		 * purpose: bind to those (0: ephemeral), connect to those plus
		 * ward's listeners. docs/network.md */
		for (size_t i = 0; i < opt->policy->n_net_local_ports && n_ports < 64; i++)
			ports[n_ports++] = opt->policy->net_local_ports[i];
		for (size_t i = 0; i < n_ports; i++)
			if (ports[i] != 0)
				connect_ports[n_connect++] = ports[i];
		for (size_t i = 0; i < plan->n_listen; i++)
			connect_ports[n_connect++] = plan->listen_ports[i];
		LandlockRequest req = {
			.rules = plan->mounts.ll_rules,
			.n_rules = plan->mounts.n_ll_rules,
			.tcp_connect_ports = connect_ports,
			.n_tcp_connect_ports = n_connect,
			.tcp_bind_ports = ports,
			.n_tcp_bind_ports = n_ports,
			.restrict_tcp = n_ports > 0,
		};
		r = landlock_plan_new(&req, &plan->landlock);
		if (r < 0)
			FAIL(r, "landlock", "building the Landlock rules");
		SeccompOptions so = {
			.allow_nested_userns = opt->policy->allow_nested_sandbox,
			.allow_ptrace = opt->policy->allow_ptrace,
		};
		r = seccomp_program_new(&so, &plan->seccomp);
		if (r < 0)
			FAIL(r, "seccomp", "compiling the seccomp filter");
		STRV_FOREACH(s, landlock_plan_enforced(plan->landlock))
		if (add_name(&plan->enforced, *s) < 0)
			FAIL(-ENOMEM, "plan", "out of memory");
		STRV_FOREACH(s, landlock_plan_degraded(plan->landlock))
		if (add_name(&plan->degraded, *s) < 0)
			FAIL(-ENOMEM, "plan", "out of memory");
		if (add_name(&plan->enforced, "seccomp") < 0)
			FAIL(-ENOMEM, "plan", "out of memory");
	} else if (add_name(&plan->degraded, "landlock") < 0 ||
		   add_name(&plan->degraded, "seccomp") < 0 ||
		   add_name(&plan->degraded, "test-switch-no-hardening") < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
	if (opt->test_leak_dir && add_name(&plan->degraded, "test-switch-leak-dir") < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
	if (opt->test_no_masks && add_name(&plan->degraded, "test-switch-no-masks") < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
	/* A denied path beneath a writable grant is kept out by the mount
	 * masks alone (deny-split.h): say so. */
	if (opt->hardening && plan->mounts.ll_unsplit &&
	    add_name(&plan->degraded, "landlock-deny-under-writable") < 0)
		FAIL(-ENOMEM, "plan", "out of memory");

	STRV_FOREACH(s, limits_plan_degraded(plan->limits))
	if (add_name(&plan->degraded, *s) < 0)
		FAIL(-ENOMEM, "plan", "out of memory");

	static const char *const base_enforced[] = { "userns", "mountns", "pidns", "netns",
						     "ipcns", "utsns", "no-new-privs", "caps-dropped",
						     "protected-readonly" };
	for (size_t i = 0; i < ELEMENTSOF(base_enforced); i++)
		if (add_name(&plan->enforced, base_enforced[i]) < 0)
			FAIL(-ENOMEM, "plan", "out of memory");
	if (!opt->cow_upper && add_name(&plan->enforced, "protected-quarantine") < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
#undef FAIL
	*ret = plan;
	return 0;
}

SandboxPlan *sandbox_plan_free(SandboxPlan *plan)
{
	if (!plan)
		return NULL;
	plan->root_scan = root_view_scan_free(plan->root_scan);
	workspace_scan_done(&plan->protected_scan);
	strv_free(plan->protected);
	free(plan->state_dir);
	free(plan->run_id);
	mount_plan_done(&plan->mounts);
	landlock_plan_free(plan->landlock);
	seccomp_program_free(plan->seccomp);
	limits_plan_free(plan->limits);
	free(plan->workspace);
	free(plan->program);
	strv_free(plan->enforced);
	strv_free(plan->degraded);
	free(plan);
	return NULL;
}

char *const *sandbox_plan_git_notes(const SandboxPlan *plan)
{
	return plan->mounts.git.notes;
}

int sandbox_git_finish(SandboxPlan *plan, const SandboxResult *res, char ***ret_lines)
{
	const MountPlan *m = &plan->mounts;
	char *hint;
	int r = 0;

	for (size_t i = 0; i < m->n_git_stages; i++) {
		int k = git_stage_scrub(&m->git_stages[i], ret_lines);
		int a = git_stage_apply(&m->git_stages[i], ret_lines);
		if (k < 0 && r == 0)
			r = k;
		if (a < 0 && a != -EBUSY && r == 0) /* -EBUSY: said in a line */
			r = a;
	}
	if (res->setup_failed || res->timed_out)
		return r;
	hint = git_layout_hint(&m->git, plan->policy->git_mode == GIT_MODE_READ_ONLY,
			       plan->argv, res->exit_code);
	if (hint && strv_consume(ret_lines, hint) < 0)
		return -ENOMEM;
	return r;
}

char *const *sandbox_plan_protected(const SandboxPlan *plan)
{
	return plan->protected;
}

cJSON *sandbox_plan_describe(const SandboxPlan *plan)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *lim = limits_describe(plan->limits);
	cJSON *git = cJSON_AddObjectToObject(o, "git");

	cJSON_AddStringToObject(git, "mode", git_mode_to_string(plan->policy->git_mode));
	cJSON_AddItemToObject(git, "gitdirs", json_strv_array(plan->mounts.git.gitdirs));
	if (plan->mounts.git.worktree)
		cJSON_AddStringToObject(git, "worktree", plan->mounts.git.worktree);

	cJSON_AddItemToObject(o, "enforced", json_strv_array(plan->enforced));
	cJSON_AddItemToObject(o, "degraded", json_strv_array(plan->degraded));
	cJSON_AddNumberToObject(o, "landlock_abi",
				plan->landlock ? landlock_plan_abi(plan->landlock) : 0);
	if (lim)
		cJSON_AddItemToObject(o, "limits", lim);
	cJSON *prot = cJSON_AddObjectToObject(o, "protected");
	cJSON_AddNumberToObject(prot, "existing", (double)plan->protected_scan.n);
	cJSON_AddNumberToObject(prot, "dirs_scanned", (double)plan->protected_scan.n_dirs);
	cJSON_AddNumberToObject(prot, "scan_us", (double)plan->scan_us);
	cJSON_AddStringToObject(prot, "new", plan->quarantine.workspace ? "quarantine" : "cow-upper");
	return o;
}

static int safe_close(int fd)
{
	if (fd >= 0)
		(void)close(fd);
	return -EBADF;
}

static pid_t sys_clone3(struct clone_args *args)
{
	return (pid_t)syscall(SYS_clone3, args, sizeof(*args));
}

static void describe_exec_failure(SandboxResult *res, const SetupReport *rep)
{
	snprintf(res->error.step, sizeof(res->error.step), "%s", rep->step);
	snprintf(res->error.detail, sizeof(res->error.detail), "%s", rep->detail);
	res->error.error = rep->error;
	res->setup_failed = true;
	if (strcmp(rep->step, "exec") == 0)
		res->exit_code = rep->error == ENOENT ? WARD_EXIT_NOTFOUND : WARD_EXIT_NOEXEC;
	else
		res->exit_code = WARD_EXIT_SETUP;
}

/* Pass a signal on to init; @group: to the foreground group, as a
 * terminal would (see forward_signal()). */
static void send_to_init(int pidfd, int sig, bool group)
{
	siginfo_t si = { .si_signo = sig, .si_code = SI_QUEUE };

	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = group ? FORWARD_TO_GROUP : 0;
	if (pidfd_send_signal(pidfd, sig, &si, 0) < 0)
		(void)pidfd_send_signal(pidfd, sig, NULL, 0);
}

/* The command stopped and ward is to stop with it, as a job does: give the
 * terminal its modes back, stop with SIGTSTP (the kernel discards it in an
 * orphaned process group, where no one could continue us), and on the
 * way back continue the command. */
static void suspend_self(PtyRelay *tty_relay, int pidfd)
{
	sigset_t tstp;

	if (tty_relay)
		pty_relay_suspend(tty_relay);
	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	(void)kill(getpid(), SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &tstp, NULL); /* stops here */
	sigprocmask(SIG_BLOCK, &tstp, NULL);
	if (tty_relay)
		pty_relay_resume(tty_relay);
	send_to_init(pidfd, SIGCONT, true);
}

/* Whether the harness that started ward still lives (@ret_pidfd: a pidfd
 * to watch it by, or -EBADF). The pid was recorded when ward started;
 * getppid() after pidfd_open() closes the race with its death and the
 * pid's reuse. A thread of the harness that exits does not count: the
 * pidfd of a process polls readable only when its last thread is gone. */
static bool parent_alive(pid_t parent, int *ret_pidfd)
{
	*ret_pidfd = -EBADF;
	if (parent <= 0)
		return true;
	*ret_pidfd = pidfd_open(parent, 0);
	if (*ret_pidfd < 0 && errno != ESRCH)
		return true; /* cannot watch (ENOSYS): say so in docs */
	return *ret_pidfd >= 0 && getppid() == parent;
}

int sandbox_run(SandboxPlan *plan, uint64_t timeout_s, SandboxResult *ret, SandboxError *reterr)
{
	_cleanup_close_ int status_r = -EBADF, result_r = -EBADF, sfd = -EBADF, pidfd = -EBADF,
			    self_pidfd = -EBADF, proxy_parent = -EBADF, status_w = -EBADF,
			    result_w = -EBADF, proxy_child = -EBADF, go_r = -EBADF, go_w = -EBADF,
			    guard_fd = -EBADF, pty_parent = -EBADF, pty_child = -EBADF,
			    parent_pidfd = -EBADF;
	int status_p[2], result_p[2], go_p[2], proxy_sp[2] = { -EBADF, -EBADF }, pty_sp[2];
	pid_t guard = 0;
	sigset_t mask, saved;
	pid_t child, proxy_pid = 0;
	uint64_t start = monotonic_ms(), deadline = timeout_s ? start + timeout_s * 1000 : 0;
	int cgfd = limits_cgroup_fd(plan->limits);
	SandboxResult res = { .status = -1 };
	bool proxy_failed = false, relay_failed = false, have_status = false, result_eof = false,
	     tstp_requested = false;
	int wstatus = 0, r;
	PtyRelay *tty_relay = NULL;

	/* The harness may be gone while we finish: a write to its pipe must
	 * fail, not kill ward before the audit records the end. (init puts
	 * every signal back to its default.) */
	(void)signal(SIGPIPE, SIG_IGN);
	bool parent_gone = !parent_alive(plan->parent_pid, &parent_pidfd);

	if (pipe2(status_p, O_CLOEXEC) < 0)
		return -errno;
	status_r = status_p[0];
	status_w = status_p[1];
	if (pipe2(result_p, O_CLOEXEC) < 0)
		return -errno;
	result_r = result_p[0];
	result_w = result_p[1];
	if (pipe2(go_p, O_CLOEXEC) < 0)
		return -errno;
	go_r = go_p[0];
	go_w = go_p[1];
	if (plan->n_listen > 0) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, proxy_sp) < 0)
			return -errno;
		proxy_parent = proxy_sp[0];
		proxy_child = proxy_sp[1];
	}
	/* A terminal on stdio: the command gets a pty of its own, relayed. */
	pty_plan_init(&plan->pty);
	if (plan->pty.enabled) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pty_sp) < 0)
			return -errno;
		pty_parent = pty_sp[0];
		pty_child = pty_sp[1];
	}
	self_pidfd = pidfd_open(getpid(), 0);
	if (self_pidfd < 0)
		return -errno;
	plan->proxy_sock = proxy_child;
	r = stdio_relay_prepare(&plan->stdio);
	if (r < 0) {
		stdio_relay_done(&plan->stdio);
		snprintf(reterr->step, sizeof(reterr->step), "stdio");
		snprintf(reterr->detail, sizeof(reterr->detail),
			 "preparing the standard descriptors for the sandbox");
		reterr->error = -r;
		return r;
	}
	res.stdio_replaced = plan->stdio.replaced;
	plan->pty_sock = pty_child;

	sigemptyset(&mask);
	for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
		sigaddset(&mask, forwarded_signals[i]);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGWINCH);
	sigprocmask(SIG_BLOCK, &mask, &saved);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

	plan->status_fd = status_p[1];
	plan->result_fd = result_p[1];
	plan->go_fd = go_p[0];
	plan->go_wfd = go_p[1];
	struct clone_args args = {
		.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
			 CLONE_NEWUTS | CLONE_PIDFD | (cgfd >= 0 ? CLONE_INTO_CGROUP : 0),
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = cgfd >= 0 ? (uint64_t)cgfd : 0,
	};
	child = sys_clone3(&args);
	if (child == 0)
		init_main(plan, self_pidfd, &saved);
	/* The child attached (or will attach) the idmapped trees. */
	root_view_release_trees(plan->mounts.root);
	/* Only the child writes these. */
	status_w = safe_close(status_w);
	result_w = safe_close(result_w);
	proxy_child = safe_close(proxy_child);
	go_r = safe_close(go_r);
	pty_child = safe_close(pty_child);
	plan->proxy_sock = plan->go_fd = plan->go_wfd = plan->pty_sock = -EBADF;
	if (child < 0) {
		int e = errno;
		stdio_relay_done(&plan->stdio);
		sigprocmask(SIG_SETMASK, &saved, NULL);
		snprintf(reterr->step, sizeof(reterr->step), "clone");
		snprintf(reterr->detail, sizeof(reterr->detail),
			 "creating the user, mount, pid, net, ipc and uts namespaces");
		reterr->error = e;
		return -e;
	}
	/* The after-run check, in a process of its own that outlives a
	 * SIGKILL of ward (quarantine.h); init starts the command only once
	 * it watches. Without it, nothing runs. */
	if (plan->quarantine.workspace &&
	    quarantine_guard_start(&plan->quarantine, pidfd, &guard, &guard_fd) < 0) {
		(void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
		guard = 0;
	} else
		(void)!write(go_w, "g", 1);
	go_w = safe_close(go_w);
	/* Without its copier, output to a log file would block the command:
	 * kill the sandbox rather than run it with stdio that goes nowhere. */
	if (stdio_relay_start(&plan->stdio) < 0) {
		(void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
		relay_failed = true;
	}
	/* The namespace's counters, for the hints after the run. */
	int netstat_fds[2];
	netns_stats_open(child, netstat_fds);
	/* ward stays in the caller's process group and never hands the
	 * caller's terminal to the sandbox (init made a session of its own):
	 * job control sees ward as it would see the command. */
	if (plan->pty.enabled && pty_relay_new(&plan->pty, &tty_relay) < 0)
		tty_relay = NULL; /* no relay: the command's terminal output is lost */
	if (parent_gone) {
		res.parent_died = true;
		(void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
	}

	/* No limits_attach(): a v2 cgroup was joined by CLONE_INTO_CGROUP, and
	 * init joins v1 cgroups itself before it forks the command
	 * (limits_apply_child). Moving it from here as well would only pay a
	 * second cgroup v1 migration (an RCU grace period) per run. */

	if (plan->n_listen > 0 && !parent_gone) {
		int fds[NETNS_LISTENERS_MAX];
		struct pollfd pw[2] = { { .fd = proxy_parent, .events = POLLIN },
					{ .fd = pidfd, .events = POLLIN } };
		bool ok = false;

		/* Init sends the listeners right after bringing up loopback, or
		 * dies first. No proxy, no run: anything else fails closed. */
		if (RETRY_EINTR(poll(pw, 2, deadline ? (int)(deadline - monotonic_ms()) : -1)) > 0 &&
		    (pw[0].revents & POLLIN) &&
		    netns_recv_listeners(proxy_parent, fds, plan->n_listen) == 0) {
			size_t nh = plan->proxy ? 2 : 0;
			ProxyConfig pc = { .policy = plan->policy, .program = plan->program,
					   .audit = plan->audit, .host_fds = fds + nh,
					   .host_ports = plan->listen_ports + nh, .n_host = plan->n_host,
					   .has_report = plan->has_report, .report_fd = plan->report_fd };
			ok = proxy_spawn(&pc, plan->proxy ? fds[0] : -EBADF,
					 plan->proxy ? fds[1] : -EBADF, &proxy_pid) >= 0;
			for (size_t i = 0; i < plan->n_listen; i++)
				close(fds[i]);
		}
		if (!ok) {
			proxy_failed = true;
			(void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
		}
	}

	enum { P_INIT, P_SIG, P_RESULT, P_PTY_SOCK, P_PARENT, P_TERM, P_MASTER, _P_MAX };
	for (;;) {
		struct pollfd p[_P_MAX] = {
			[P_INIT] = { .fd = pidfd, .events = POLLIN },
			[P_SIG] = { .fd = sfd, .events = POLLIN },
			[P_RESULT] = { .fd = have_status || result_eof ? -1 : result_r,
				       .events = POLLIN },
			[P_PTY_SOCK] = { .fd = tty_relay ? pty_parent : -1, .events = POLLIN },
			[P_PARENT] = { .fd = res.parent_died ? -1 : parent_pidfd, .events = POLLIN },
			[P_TERM] = { .fd = -1 },
			[P_MASTER] = { .fd = -1 },
		};
		int timeout = -1;
		if (tty_relay)
			(void)pty_relay_pollfds(tty_relay, &p[P_TERM]);
		if (deadline) {
			uint64_t now = monotonic_ms();
			timeout = now >= deadline ? 0 : (int)(deadline - now);
		}
		int n = poll(p, _P_MAX, timeout);
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0 && deadline && monotonic_ms() >= deadline && !res.timed_out) {
			res.timed_out = true;
			(void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
			deadline = 0;
			continue;
		}
		if (n <= 0)
			continue;
		if (p[P_PARENT].revents) {
			/* The harness is gone: so is the sandbox (bubblewrap's
			 * --die-with-parent, by default). We still finish: the
			 * proxy, the audit's exit event. */
			res.parent_died = true;
			(void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
		}
		if (p[P_PTY_SOCK].revents) {
			int master = -EBADF;
			if (pty_recv_master(pty_parent, &master) == 0)
				pty_relay_set_master(tty_relay, master);
			pty_parent = safe_close(pty_parent);
		}
		if (tty_relay)
			pty_relay_events(tty_relay, &p[P_TERM], 2);
		if (p[P_RESULT].revents) {
			InitMessage m;
			ssize_t k = read(result_r, &m, sizeof(m));
			if (k == (ssize_t)sizeof(m) && m.kind == INIT_MSG_EXIT) {
				wstatus = m.value;
				have_status = true;
			} else if (k == (ssize_t)sizeof(m) && m.kind == INIT_MSG_STOP) {
				/* A stop ward asked for (^Z on the terminal, or a
				 * SIGTSTP from the harness), or one typed on the
				 * pty of a terminal ward holds: ward stops with
				 * the command, as a job. Any other stop (the
				 * command stopping itself) leaves ward running,
				 * and with it the timeout. */
				if (tstp_requested || (tty_relay && pty_relay_interactive(tty_relay)))
					suspend_self(tty_relay, pidfd);
				tstp_requested = false;
			} else if (k <= 0)
				result_eof = true; /* init is gone; nothing more comes */
		}
		if (p[P_SIG].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				int sig = (int)si.ssi_signo;
				if (sig == SIGCHLD)
					continue;
				if (sig == SIGWINCH) {
					if (tty_relay)
						pty_relay_winch(tty_relay);
					continue;
				}
				if (sig == SIGCONT) {
					tstp_requested = false;
					if (tty_relay)
						pty_relay_resume(tty_relay);
				}
				if (sig == SIGTSTP)
					tstp_requested = true;
				/* The terminal's signals (^C, ^\, ^Z in cooked
				 * mode: si_code SI_KERNEL) and job control go to
				 * the foreground group, as a terminal sends them;
				 * a kill() aimed at ward goes to the command. */
				send_to_init(pidfd, sig,
					     si.ssi_code == SI_KERNEL || sig == SIGTSTP ||
						     sig == SIGCONT);
			}
		}
		if (p[P_INIT].revents & POLLIN)
			break;
	}

	siginfo_t info = {};
	(void)waitid(P_PIDFD, (id_t)pidfd, &info, WEXITED);
	/* Everything the command wrote reaches the harness before we return. */
	stdio_relay_done(&plan->stdio);
	res.duration_ms = monotonic_ms() - start;
	if (tty_relay) {
		pty_relay_drain(tty_relay);
		tty_relay = pty_relay_free(tty_relay); /* the terminal's modes as they were */
	}
	if (guard > 0) {
		r = quarantine_guard_wait(guard, guard_fd);
		res.quarantined = r > 0 ? r : 0;
		res.protected_check_failed = r < 0;
	}
	if (proxy_pid > 0) {
		(void)kill(proxy_pid, SIGTERM);
		(void)waitpid(proxy_pid, NULL, 0);
	}
	netns_stats_read(netstat_fds, &res.net);
	for (int i = 0; i < 2; i++)
		safe_close(netstat_fds[i]);
	/* Reap anything else (the proxy, if it died earlier) without blocking. */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	while (!have_status && !result_eof) {
		InitMessage m;
		if (read(result_r, &m, sizeof(m)) != (ssize_t)sizeof(m))
			break;
		if (m.kind == INIT_MSG_EXIT) {
			wstatus = m.value;
			have_status = true;
		}
	}
	bool got_status = have_status && (WIFEXITED(wstatus) || WIFSIGNALED(wstatus));

	SetupReport rep;
	if (relay_failed) {
		res.setup_failed = true;
		res.exit_code = WARD_EXIT_SETUP;
		snprintf(res.error.step, sizeof(res.error.step), "stdio");
		snprintf(res.error.detail, sizeof(res.error.detail),
			 "could not start the output relay; the command was killed");
		res.error.error = EAGAIN;
	} else if (res.timed_out) {
		res.exit_code = WARD_EXIT_TIMEOUT;
		res.signal = SIGKILL;
	} else if (proxy_failed && read(status_r, &rep, sizeof(rep)) != (ssize_t)sizeof(rep)) {
		res.setup_failed = true;
		res.exit_code = WARD_EXIT_SETUP;
		snprintf(res.error.step, sizeof(res.error.step), "proxy");
		snprintf(res.error.detail, sizeof(res.error.detail),
			 "could not start the egress proxy; the command was not run");
		res.error.error = EPROTO;
	} else if (proxy_failed) {
		describe_exec_failure(&res, &rep);
	} else if (read(status_r, &rep, sizeof(rep)) == (ssize_t)sizeof(rep)) {
		describe_exec_failure(&res, &rep);
	} else if (got_status) {
		if (WIFEXITED(wstatus)) {
			res.status = WEXITSTATUS(wstatus);
			res.exit_code = res.status;
		} else {
			res.signal = WTERMSIG(wstatus);
			res.exit_code = WARD_EXIT_SIGNAL_BASE + res.signal;
		}
	} else if (res.parent_died || limits_oom_killed(plan->limits)) {
		/* The parent died, and we killed init; or the memory limit's
		 * OOM kill took init (and with it the namespace): memfd pages
		 * count in the cgroup but in no process's size, so the victim
		 * need not be the hog. */
		res.signal = SIGKILL;
		res.exit_code = WARD_EXIT_SIGNAL_BASE + SIGKILL;
	} else {
		res.setup_failed = true;
		res.exit_code = WARD_EXIT_SETUP;
		snprintf(res.error.step, sizeof(res.error.step), "init");
		snprintf(res.error.detail, sizeof(res.error.detail),
			 "the sandbox's init ended without a result (%s %d)",
			 info.si_code == CLD_EXITED ? "exit" : "signal", info.si_status);
		res.error.error = EPROTO;
	}
	if (res.signal == SIGKILL && !res.timed_out)
		res.oom_killed = limits_oom_killed(plan->limits);
	*ret = res;
	return 0;
}
