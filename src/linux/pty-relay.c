/* The command's pseudo-terminal and its relay to the caller's terminal.
 *
 * Who reads the terminal. A pipeline (`ward run -- make | less`) shares the
 * terminal between ward and the pager, and ward cannot know whether the
 * command will ever read: relaying the terminal's input there would steal
 * the pager's keys, and raw mode would fight over the terminal's modes. So
 * the terminal's input belongs to the command only when the command's
 * output is the terminal as well (stdout is a tty, sudo's "not a pipeline")
 * and ward is in the terminal's foreground; then the terminal goes raw and
 * the pty's own line discipline does the rest (^C, ^Z, echo, editing). In
 * every other case the terminal's modes are never touched, output is
 * relayed and a stdin that was the terminal reads end-of-file (/dev/null).
 *
 * No allocation on the child side (pty_open, pty_attach): they run between
 * clone and exec. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-pass.h"
#include "common/macro.h"
#include "linux/pty-relay.h"

void pty_plan_init(PtyPlan *ret)
{
	static const int own[3] = { 0, 1, 2 };

	pty_plan_init_fds(ret, own);
}

void pty_plan_init_fds(PtyPlan *ret, const int src[3])
{
	bool tty[3];

	*ret = (PtyPlan){ .term_fd = -1 };
	for (int fd = 0; fd < 3; fd++)
		tty[fd] = isatty(src[fd]);
	if (!tty[0] && !tty[1] && !tty[2])
		return;
	ret->enabled = true;
	ret->term_fd = tty[1] ? src[1] : tty[2] ? src[2] : src[0];
	ret->input = tty[1];
	ret->slave_fd[0] = tty[0] && ret->input;
	ret->slave_fd[1] = tty[1];
	ret->slave_fd[2] = tty[2];
	ret->null_stdin = tty[0] && !ret->input;
	ret->have_termios = tcgetattr(ret->term_fd, &ret->termios) == 0;
	ret->have_winsize = ioctl(ret->term_fd, TIOCGWINSZ, &ret->winsize) == 0;
}

/* ---- child side ---- */

int pty_open(const PtyPlan *p, int *ret_master, int *ret_slave)
{
	_cleanup_close_ int m = -EBADF, s = -EBADF;
	int unlock = 0;

	/* /dev/ptmx is the sandbox's own devpts instance: the pty's name
	 * (`tty`) is one the command can see. */
	m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return -errno;
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0)
		return -errno;
	s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0)
		return -errno;
	if (p->have_termios) {
		struct termios t = p->termios;
		/* Without input the terminal keeps its own modes and does the
		 * output processing (ONLCR) itself: do not do it twice. */
		if (!p->input)
			t.c_oflag &= ~(tcflag_t)OPOST;
		if (tcsetattr(s, TCSANOW, &t) < 0)
			return -errno;
	}
	if (p->have_winsize && ioctl(s, TIOCSWINSZ, &p->winsize) < 0)
		return -errno;
	/* init (a session leader since it started) holds the pty as its
	 * controlling terminal; the command's group becomes its foreground
	 * (pty_attach). */
	if (ioctl(s, TIOCSCTTY, 0) < 0)
		return -errno;
	*ret_master = TAKE_FD(m);
	*ret_slave = TAKE_FD(s);
	return 0;
}

int pty_send_master(int sock, int master)
{
	return fd_pass_send(sock, 'T', &master, 1);
}

int pty_recv_master(int sock, int *ret_master)
{
	return fd_pass_recv(sock, ret_master, 1, MSG_DONTWAIT);
}

int pty_attach(const PtyPlan *p, int slave, int devnull)
{
	sigset_t ttou, old;
	int r = 0;

	/* A process group of its own in init's session, the pty's foreground
	 * one: ^C, ^Z and SIGWINCH reach it as from any terminal. Not a
	 * session of its own: a session leader's group is orphaned (its
	 * parent, init, would be in another session) and the kernel discards
	 * ^Z for orphaned groups. tcsetpgrp() from a background group raises
	 * SIGTTOU unless it is blocked. */
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	if (setpgid(0, 0) < 0 || tcsetpgrp(slave, getpid()) < 0)
		r = -errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return r;
	for (int fd = 0; fd < 3; fd++)
		if (p->slave_fd[fd] && dup2(slave, fd) < 0)
			return -errno;
	if (p->null_stdin && dup2(devnull, 0) < 0)
		return -errno;
	return 0;
}

/* ---- supervisor side ---- */

struct PtyRelay {
	int term;        /* a description of the caller's terminal of our own */
	int master;      /* -EBADF until init sent it */
	bool nonblock;   /* term is O_NONBLOCK (else: small writes after POLLOUT) */
	bool input;      /* the terminal's input is relayed */
	bool raw;        /* we put the terminal in raw mode; saved has its modes */
	bool term_dead, master_dead;
	struct termios saved;
	char out[8192];  /* master -> terminal */
	size_t out_len, out_off;
	char in[1024];   /* terminal -> master */
	size_t in_len, in_off;
};

/* Job control: read and change modes only while our process group owns the
 * terminal. A terminal that is not our controlling one (a harness's pty
 * handed over without a session) has no job control to respect. */
static bool is_foreground(const PtyRelay *r)
{
	pid_t pg = tcgetpgrp(r->term);

	if (pg < 0)
		return errno == ENOTTY;
	return pg == getpgrp();
}

bool pty_relay_interactive(const PtyRelay *r)
{
	return r->input && !r->term_dead && is_foreground(r);
}

/* tcsetattr() from a background process group raises SIGTTOU: putting
 * modes back must work from there too (the kernel lets a process that
 * blocks SIGTTOU through). */
static void set_modes(int fd, const struct termios *t)
{
	sigset_t ttou, old;

	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	(void)RETRY_EINTR(tcsetattr(fd, TCSADRAIN, t));
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void enter_raw(PtyRelay *r)
{
	struct termios t;

	if (!r->input || r->raw || r->term_dead || !is_foreground(r))
		return;
	if (tcgetattr(r->term, &r->saved) < 0)
		return;
	t = r->saved;
	cfmakeraw(&t);
	set_modes(r->term, &t);
	r->raw = true;
}

static void leave_raw(PtyRelay *r)
{
	if (!r->raw)
		return;
	set_modes(r->term, &r->saved);
	r->raw = false;
}

int pty_relay_new(const PtyPlan *p, PtyRelay **ret)
{
	char path[32];
	PtyRelay *r;

	if (!p->enabled)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->master = -EBADF;
	r->input = p->input;
	/* O_NONBLOCK on the fd we were given would change the harness's own
	 * open file description; a fresh open of the same terminal has flags
	 * of its own. Where that is refused, the inherited fd with writes no
	 * larger than a terminal takes once it polls writable. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p->term_fd);
	r->term = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (r->term >= 0 && isatty(r->term))
		r->nonblock = true;
	else {
		if (r->term >= 0)
			(void)close(r->term);
		r->term = fcntl(p->term_fd, F_DUPFD_CLOEXEC, 3);
		if (r->term < 0) {
			int e = -errno;
			free(r);
			return e;
		}
	}
	enter_raw(r);
	*ret = r;
	return 0;
}

void pty_relay_set_master(PtyRelay *r, int master)
{
	int fl = fcntl(master, F_GETFL);

	if (fl >= 0)
		(void)fcntl(master, F_SETFL, fl | O_NONBLOCK);
	r->master = master;
	pty_relay_winch(r);
}

size_t pty_relay_pollfds(PtyRelay *r, struct pollfd *p)
{
	short te = 0, me = 0;

	if (!r->term_dead) {
		if (r->input && r->master >= 0 && !r->master_dead && r->in_len == 0 &&
		    is_foreground(r))
			te |= POLLIN;
		if (r->out_len)
			te |= POLLOUT;
	}
	if (r->master >= 0 && !r->master_dead) {
		if (r->out_len == 0)
			me |= POLLIN;
		if (r->in_len)
			me |= POLLOUT;
	}
	p[0] = (struct pollfd){ .fd = te ? r->term : -1, .events = te };
	p[1] = (struct pollfd){ .fd = me ? r->master : -1, .events = me };
	return 2;
}

static void term_gone(PtyRelay *r)
{
	/* Hung up or closed: stop relaying, keep reading the master so the
	 * command never blocks on a full pty. */
	r->term_dead = true;
	r->out_len = r->out_off = 0;
	r->in_len = r->in_off = 0;
}

static void flush_out(PtyRelay *r)
{
	size_t len = r->out_len - r->out_off;
	ssize_t k;

	if (!r->nonblock && len > 256)
		len = 256;
	k = write(r->term, r->out + r->out_off, len);
	if (k < 0) {
		if (errno != EAGAIN && errno != EINTR)
			term_gone(r);
		return;
	}
	r->out_off += (size_t)k;
	if (r->out_off == r->out_len)
		r->out_len = r->out_off = 0;
}

static void flush_in(PtyRelay *r)
{
	ssize_t k = write(r->master, r->in + r->in_off, r->in_len - r->in_off);

	if (k < 0) {
		if (errno != EAGAIN && errno != EINTR)
			r->in_len = r->in_off = 0;
		return;
	}
	r->in_off += (size_t)k;
	if (r->in_off == r->in_len)
		r->in_len = r->in_off = 0;
}

static void read_master(PtyRelay *r)
{
	ssize_t k = read(r->master, r->out, sizeof(r->out));

	if (k > 0) {
		r->out_len = r->term_dead ? 0 : (size_t)k;
		r->out_off = 0;
	} else if (k == 0 || (errno != EAGAIN && errno != EINTR))
		r->master_dead = true; /* EIO: no one holds the pty any more */
}

void pty_relay_events(PtyRelay *r, const struct pollfd *p, size_t n)
{
	if (n < 2)
		return;
	if (p[0].fd >= 0 && p[0].revents) {
		if (p[0].revents & POLLIN) {
			ssize_t k = read(r->term, r->in, sizeof(r->in));
			if (k > 0) {
				r->in_len = (size_t)k;
				r->in_off = 0;
			} else if (k == 0 || (errno == EIO && (p[0].revents & POLLHUP)))
				term_gone(r);
		} else if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			term_gone(r);
		if (r->out_len && (p[0].revents & POLLOUT))
			flush_out(r);
	}
	if (p[1].fd >= 0 && p[1].revents) {
		if (r->in_len && (p[1].revents & POLLOUT))
			flush_in(r);
		if (r->out_len == 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			read_master(r);
		/* Nonblocking: write what the terminal takes now. */
		if (r->out_len && r->nonblock)
			flush_out(r);
	}
}

void pty_relay_winch(PtyRelay *r)
{
	struct winsize ws;

	/* The kernel sends the pty's foreground group SIGWINCH if it changed. */
	if (r->master >= 0 && !r->term_dead && ioctl(r->term, TIOCGWINSZ, &ws) == 0)
		(void)ioctl(r->master, TIOCSWINSZ, &ws);
}

void pty_relay_suspend(PtyRelay *r)
{
	leave_raw(r);
}

void pty_relay_resume(PtyRelay *r)
{
	enter_raw(r);
	pty_relay_winch(r);
}

bool pty_relay_master_gone(const PtyRelay *r)
{
	return r->master < 0 || r->master_dead;
}

void pty_relay_drain(PtyRelay *r)
{
	if (r->master < 0)
		return;
	for (;;) {
		if (r->out_len == 0) {
			if (r->master_dead)
				break;
			read_master(r);
			/* EAGAIN: a holder outside the dead sandbox (an fd in
			 * flight); nothing more is coming from the command. */
			if (r->out_len == 0 && !r->master_dead)
				break;
			continue;
		}
		struct pollfd p = { .fd = r->term, .events = POLLOUT };
		/* A terminal that takes nothing for 2 s (stopped with ^S) does
		 * not keep ward from exiting. */
		if (RETRY_EINTR(poll(&p, 1, 2000)) <= 0 || (p.revents & (POLLHUP | POLLERR))) {
			term_gone(r);
			continue;
		}
		flush_out(r);
	}
}

PtyRelay *pty_relay_free(PtyRelay *r)
{
	if (!r)
		return NULL;
	leave_raw(r);
	if (r->master >= 0)
		(void)close(r->master);
	if (r->term >= 0)
		(void)close(r->term);
	free(r);
	return NULL;
}
