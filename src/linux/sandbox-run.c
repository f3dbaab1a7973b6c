/* The supervisor of a T2 run (sandbox_run): clone3() into the new
 * namespaces (pid 1 is sandbox-init.c), the quarantine guard, the stdio and
 * pty relays, the egress proxy once init hands over its listeners, signals
 * passed on to init, the timeout, the harness's death, and the result: what
 * the command did, or which step failed (init's SetupReport). */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-pass.h"
#include "common/macro.h"
#include "common/time-util.h"
#include "linux/netns-stats.h"
#include "linux/sandbox-internal.h"
#include "net/proxy.h"
#include "ward/ward.h"

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

/* A step failed in init (its SetupReport): the command did not run. */
static void describe_setup_failure(SandboxResult *res, const SetupReport *rep)
{
	SandboxStep step = sandbox_step_to_string(rep->step) ? (SandboxStep)rep->step
							     : SANDBOX_STEP_INIT;

	(void)sandbox_error_set(&res->error, step, rep->error, "%.*s", (int)sizeof(rep->detail),
				rep->detail);
	res->failed_step = step;
	res->setup_failed = true;
	if (step == SANDBOX_STEP_EXEC)
		res->exit_code = rep->error == ENOENT ? WARD_EXIT_NOTFOUND : WARD_EXIT_NOEXEC;
	else
		res->exit_code = WARD_EXIT_SETUP;
}

/* The supervisor's own setup failure (the command did not run). */
static void set_setup_failure(SandboxResult *res, SandboxStep step, int error, const char *detail)
{
	(void)sandbox_error_set(&res->error, step, error, "%s", detail);
	res->failed_step = step;
	res->setup_failed = true;
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

/* A live session's refusal records (proxy.h, report_every): a pipe the
 * proxy writes without blocking and the session's loop reads as they come. */
static int session_report_pipe(int *ret_r, int *ret_w)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	*ret_r = p[0];
	*ret_w = p[1];
	return 0;
}

int sandbox_run(SandboxPlan *plan, uint64_t timeout_s, SandboxResult *ret, SandboxError *reterr)
{
	_cleanup_close_ int status_r = -EBADF, result_r = -EBADF, sfd = -EBADF, pidfd = -EBADF,
			    self_pidfd = -EBADF, proxy_parent = -EBADF, status_w = -EBADF,
			    result_w = -EBADF, proxy_child = -EBADF, go_r = -EBADF, go_w = -EBADF,
			    guard_fd = -EBADF, pty_parent = -EBADF, pty_child = -EBADF,
			    parent_pidfd = -EBADF, session_parent = -EBADF, session_child = -EBADF,
			    session_report_r = -EBADF, session_report_w = -EBADF;
	int status_p[2], result_p[2], go_p[2], proxy_sp[2] = { -EBADF, -EBADF }, pty_sp[2];
	pid_t guard = 0;
	sigset_t mask, saved;
	pid_t child, proxy_pid = 0;
	uint64_t start = monotonic_ms(), deadline = timeout_s ? start + timeout_s * 1000 : 0;
	int cgfd = limits_cgroup_fd(plan->limits);
	SandboxResult res = { .status = -1 };
	bool proxy_failed = false, relay_failed = false, have_status = false, result_eof = false,
	     tstp_requested = false;
	if (plan->serve)
		deadline = 0; /* each command of a warm session has its own */
	int wstatus = 0, r;
	PtyRelay *tty_relay = NULL;

	/* The caller may not have acquired (sandbox.h): the resources come
	 * before any pipe or signal mask, so a failure leaves nothing to undo. */
	r = sandbox_acquire(plan, reterr);
	if (r < 0)
		return r;

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
	pty_plan_init_fds(&plan->pty, plan->stdio.src);
	if (plan->pty.enabled) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pty_sp) < 0)
			return -errno;
		pty_parent = pty_sp[0];
		pty_child = pty_sp[1];
	}
	if (plan->serve) {
		int sp[2];
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
			return -errno;
		session_parent = sp[0];
		session_child = sp[1];
	}
	plan->session_sock = session_child;
	self_pidfd = pidfd_open(getpid(), 0);
	if (self_pidfd < 0)
		return -errno;
	plan->proxy_sock = proxy_child;
	r = stdio_relay_prepare(&plan->stdio);
	if (r < 0) {
		stdio_relay_done(&plan->stdio);
		return sandbox_error_set(reterr, SANDBOX_STEP_STDIO, r,
					 "preparing the standard descriptors for the sandbox");
	}
	res.stdio_replaced = plan->stdio.replaced;
	plan->pty_sock = pty_child;

	sandbox_forwarded_signals(&mask);
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
	/* containerd's default seccomp profile (and others) answer clone3
	 * with ENOSYS, because a filter cannot read its flags in memory:
	 * clone, as runtimes expect, with the pidfd in parent_tid's place
	 * and the cgroup joined from here instead (limits_attach below). */
	bool cloned_into_cgroup = cgfd >= 0;
	if (child < 0 && errno == ENOSYS) {
		cloned_into_cgroup = false;
		child = (pid_t)syscall(SYS_clone,
				       (unsigned long)(args.flags & ~(uint64_t)CLONE_INTO_CGROUP) |
					       SIGCHLD,
				       NULL, &pidfd, NULL, 0UL);
	}
	if (child == 0)
		sandbox_init_main(plan, self_pidfd, &saved);
	/* The child attached (or will attach) the idmapped trees. */
	root_view_release_trees(plan->mounts.root);
	/* Only the child writes these. */
	status_w = safe_close(status_w);
	result_w = safe_close(result_w);
	proxy_child = safe_close(proxy_child);
	go_r = safe_close(go_r);
	pty_child = safe_close(pty_child);
	session_child = safe_close(session_child);
	plan->session_sock = -EBADF;
	plan->proxy_sock = plan->go_fd = plan->go_wfd = plan->pty_sock = -EBADF;
	if (child < 0) {
		int e = errno;
		stdio_relay_done(&plan->stdio);
		sigprocmask(SIG_SETMASK, &saved, NULL);
		return sandbox_error_set(reterr, SANDBOX_STEP_CLONE, e,
					 "creating the user, mount, pid, net, ipc and uts namespaces");
	}
	/* After the clone fallback, the v2 cgroup is joined from here, before
	 * the go byte below lets init start the command. */
	int cgroup_err = 0;
	if (cgfd >= 0 && !cloned_into_cgroup &&
	    (cgroup_err = limits_attach(plan->limits, child)) < 0)
		(void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
	/* The after-run check, in a process of its own that outlives a
	 * SIGKILL of ward (quarantine.h); init starts the command only once
	 * it watches. Without it, nothing runs. */
	int guard_err = 0;
	if (plan->quarantine.workspace &&
	    (guard_err = quarantine_guard_start(&plan->quarantine, pidfd, &guard, &guard_fd)) < 0) {
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

	/* No limits_attach() after clone3: a v2 cgroup was joined by
	 * CLONE_INTO_CGROUP, and init joins v1 cgroups itself before it forks
	 * the command (limits_apply_child). Moving it from here as well would
	 * only pay a second cgroup v1 migration (an RCU grace period) per run. */

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
			size_t nh = plan->proxy ? 2 : 0, nc = plan->n_capture;
			int cfds[NETNS_CAPTURE_MAX + 2];
			ProxyConfig pc = { .policy = plan->policy, .program = plan->program,
					   .audit = plan->audit, .host_fds = fds + nh,
					   .host_ports = plan->listen_ports + nh, .n_host = plan->n_host,
					   .has_report = plan->has_report, .report_fd = plan->report_fd,
					   .report_every = plan->serve != NULL,
					   .capture = nc > 0, .capture_fds = cfds, .n_capture = nc,
					   .dns_udp_fd = -EBADF, .dns_tcp_fd = -EBADF };
			/* The capture's sockets come right after (init sends both
			 * messages in one step, or dies). */
			/* A live session reads every refusal as it comes, on a
			 * pipe of its own (session_report_pipe). */
			if (plan->serve && plan->has_report &&
			    session_report_pipe(&session_report_r, &session_report_w) == 0)
				pc.report_fd = session_report_w;
			if (nc == 0 || fd_pass_recv(proxy_parent, cfds, nc + 2, 0) == 0) {
				pc.dns_udp_fd = nc ? cfds[nc] : -EBADF;
				pc.dns_tcp_fd = nc ? cfds[nc + 1] : -EBADF;
				ok = proxy_spawn(&pc, plan->proxy ? fds[0] : -EBADF,
						 plan->proxy ? fds[1] : -EBADF, &proxy_pid) >= 0;
				for (size_t i = 0; nc && i < nc + 2; i++)
					close(cfds[i]);
			}
			session_report_w = safe_close(session_report_w);
			for (size_t i = 0; i < plan->n_listen; i++)
				close(fds[i]);
		}
		if (!ok) {
			proxy_failed = true;
			(void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
		}
	}

	/* A warm session: its loop serves the commands (src/session/); when
	 * it returns, the session ends and everything inside with pid 1. */
	if (plan->serve && !proxy_failed && !relay_failed && cgroup_err >= 0) {
		SandboxSession ss = { .init_pidfd = pidfd, .init_sock = session_parent, .sigfd = sfd,
				      .policy = plan->policy, .workspace = plan->workspace,
				      .proxy = plan->proxy, .audit = plan->audit,
				      .degraded = plan->degraded, .report_rd = session_report_r,
				      .netstat_fds = netstat_fds,
				      .quarantine = plan->quarantine.workspace ? &plan->quarantine
										: NULL };
		if (plan->serve->loop(plan->serve->userdata, &ss) > 0) {
			have_status = true;
			wstatus = 0;
		}
		(void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
	}

	enum { P_INIT, P_SIG, P_RESULT, P_PTY_SOCK, P_PARENT, P_TERM, P_MASTER, _P_MAX };
	for (; !plan->serve;) {
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
	if (guard_err < 0) {
		set_setup_failure(&res, SANDBOX_STEP_PROTECTED, -guard_err,
				  "could not start the after-run check of protected paths; the "
				  "command was not run");
	} else if (cgroup_err < 0) {
		set_setup_failure(&res, SANDBOX_STEP_LIMITS, -cgroup_err,
				  "could not move the sandbox into the run's cgroup after the clone "
				  "fallback; the command was not run");
	} else if (relay_failed) {
		set_setup_failure(&res, SANDBOX_STEP_STDIO, EAGAIN,
				  "could not start the output relay; the command was killed");
	} else if (res.timed_out) {
		res.exit_code = WARD_EXIT_TIMEOUT;
		res.signal = SIGKILL;
	} else if (proxy_failed && read(status_r, &rep, sizeof(rep)) != (ssize_t)sizeof(rep)) {
		set_setup_failure(&res, SANDBOX_STEP_PROXY, EPROTO,
				  "could not start the egress proxy; the command was not run");
	} else if (proxy_failed) {
		describe_setup_failure(&res, &rep);
	} else if (read(status_r, &rep, sizeof(rep)) == (ssize_t)sizeof(rep)) {
		describe_setup_failure(&res, &rep);
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
		char detail[96];

		snprintf(detail, sizeof(detail), "the sandbox's init ended without a result (%s %d)",
			 info.si_code == CLD_EXITED ? "exit" : "signal", info.si_status);
		set_setup_failure(&res, SANDBOX_STEP_INIT, EPROTO, detail);
	}
	if (res.signal == SIGKILL && !res.timed_out)
		res.oom_killed = limits_oom_killed(plan->limits);
	*ret = res;
	return 0;
}
