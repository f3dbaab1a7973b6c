/* The caller's terminal, kept out of the sandbox's reach.
 *
 * When stdin, stdout or stderr is a terminal, the command never gets it: it
 * gets a pseudo-terminal of the sandbox's own devpts as its controlling
 * terminal, and the supervisor relays between that pty's master and the
 * real terminal (as sudo's use_pty and script(1) do), window-size changes
 * included. The real terminal's foreground process group is never handed
 * over, and the relay puts back the modes it changed whenever it stops or
 * ends. Pipes and regular files on stdio are not this module's business.
 *
 * Lifecycle: pty_plan_init() in the supervisor before clone; in init,
 * pty_open() then pty_send_master(); in the command's child, pty_attach();
 * in the supervisor, pty_relay_new() -> pty_relay_set_master() -> events ->
 * pty_relay_drain() -> pty_relay_free(). */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <termios.h>

typedef struct PtyPlan {
	bool enabled;           /* a terminal is on stdio */
	bool slave_fd[3];       /* the command's fd N is the pty */
	bool null_stdin;        /* fd 0 is a terminal the command does not read */
	bool input;             /* the terminal's input is the command's */
	int term_fd;            /* which of our fds (0..2, or a passed one) is the terminal */
	bool have_termios, have_winsize;
	struct termios termios; /* the pty starts with the terminal's modes */
	struct winsize winsize;
} PtyPlan;

/* Look at fds 0..2 and decide. Never fails: no terminal, no pty.
 * pty_plan_init_fds: the command's fds 0..2 come from @src[0..2]. */
void pty_plan_init(PtyPlan *ret);
void pty_plan_init_fds(PtyPlan *ret, const int src[3]);

/* Init, after pivot_root: a pty of the sandbox's devpts, set up as the
 * plan says, made init's controlling terminal (init must lead a session
 * without one). Both fds are O_CLOEXEC. */
int pty_open(const PtyPlan *p, int *ret_master, int *ret_slave);
int pty_send_master(int sock, int master);
int pty_recv_master(int sock, int *ret_master);

/* The command's child, between fork and exec (async-signal-safe): a process
 * group of its own, the pty's foreground one, the pty on the fds the plan
 * names, @devnull on a stdin it does not read. */
int pty_attach(const PtyPlan *p, int slave, int devnull);

typedef struct PtyRelay PtyRelay;

/* Takes no ownership; opens a description of the terminal of its own. */
int pty_relay_new(const PtyPlan *p, PtyRelay **ret);
/* Takes ownership of @master. */
void pty_relay_set_master(PtyRelay *r, int master);
/* Fills up to 2 entries of @p; returns how many. */
size_t pty_relay_pollfds(PtyRelay *r, struct pollfd *p);
void pty_relay_events(PtyRelay *r, const struct pollfd *p, size_t n);
/* Whether the terminal's input is the command's right now (it is the
 * command's output too, and ward is in its foreground). */
bool pty_relay_interactive(const PtyRelay *r);
/* SIGWINCH: pass the terminal's size on. */
void pty_relay_winch(PtyRelay *r);
/* Before ward stops (job control): give the terminal its modes back. */
void pty_relay_suspend(PtyRelay *r);
/* After ward continues: raw again if the terminal is ours, new size. */
void pty_relay_resume(PtyRelay *r);
/* Whether the pty is gone (its master read end-of-file or EIO). */
bool pty_relay_master_gone(const PtyRelay *r);
/* After the sandbox ended: write out what the command left in the pty. */
void pty_relay_drain(PtyRelay *r);
/* Restores the terminal's modes; NULL-safe, returns NULL. */
PtyRelay *pty_relay_free(PtyRelay *r);
