/* Shared by the sandbox-*.c files only: the plan's layout and the messages
 * between init and the supervisor. Not an API: callers use sandbox.h.
 *   sandbox-plan.c     the plan (pure), describe, the protection lists
 *   sandbox-acquire.c  what the plan holds on the host, git finish
 *   sandbox-init.c     pid 1: the step table, then fork, exec and reap
 *   sandbox-run.c      the supervisor: clone, signals, timeout, relays */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "common/macro.h"
#include "linux/landlock.h"
#include "linux/limits.h"
#include "linux/mount-plan.h"
#include "linux/netns.h"
#include "linux/pty-relay.h"
#include "linux/quarantine.h"
#include "linux/root-view.h"
#include "linux/sandbox.h"
#include "linux/seccomp-filter.h"
#include "linux/stdio-relay.h"
#include "linux/walls.h"
#include "linux/workspace-scan.h"

struct SandboxPlan {
	MountPlan mounts;
	WallsPlan walls;     /* tried by init right before it starts the command */
	RootScan *root_scan; /* uid 0: the /sys and /proc scan, until joined */
	LandlockPlan *landlock;
	SeccompProgram *seccomp;
	SeccompProgram *serve_seccomp; /* a live session's pid 1 (sandbox-serve.c); NULL */
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
	/* Transparent capture (proxy, network.capture): its ports; the
	 * listeners and the DNS stub's sockets follow in a second message. */
	uint16_t capture_ports[NETNS_CAPTURE_MAX];
	size_t n_capture;
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
	pid_t parent_pid;        /* ward dies with it; 0: not watched */
	/* What the protection lists depend on besides the parts above. */
	bool hardening, cow, test_leak_dir, test_no_masks, test_no_walls;
	bool root_view;          /* uid 0: root-view.h */
	bool root_idmapped;      /* every system bind idmapped (predicted until acquired) */
	char **enforced, **degraded;
	bool acquired;           /* sandbox_acquire succeeded */
	/* Filled during the run. */
	StdioRelay stdio;
	PtyPlan pty;             /* a terminal on stdio: the command gets a pty */
	int status_fd;           /* child -> parent: SetupReport on failure */
	int result_fd;           /* init -> parent: InitMessage */
	int proxy_sock;          /* init -> parent: the proxy listeners */
	int go_fd, go_wfd;       /* parent -> init: a byte once the guard watches (EOF: stop) */
	int pty_sock;            /* init -> parent: the pty's master */
	int pty_master, pty_slave, devnull; /* init's */
	const SandboxServe *serve;  /* a warm session (sandbox-serve.c); NULL: one command */
	int session_sock;        /* init's end of SandboxSession.init_sock */
	int landlock_fd;         /* a live session's prebuilt ruleset (landlock.h); -EBADF */
};

/* (Re)compute plan->enforced and plan->degraded from the plan's parts:
 * after the plan, and again after acquire. -ENOMEM. */
int sandbox_plan_list_protections(SandboxPlan *plan);

/* What init tells the supervisor while the command runs. */
typedef struct InitMessage {
	int kind;
	int value;
} InitMessage;
enum {
	INIT_MSG_EXIT = 1, /* value: the command's wait status; init leaves */
	INIT_MSG_STOP = 2, /* value: the signal that stopped the command */
};


/* What the child reports when a step fails: one write(2), below PIPE_BUF
 * (atomic), the detail as long as a WardError's. */
typedef struct SetupReport {
	int step;   /* SandboxStep */
	int error;  /* positive errno */
	char detail[sizeof(((WardError *)0)->detail)];
} SetupReport;

/* The signals the supervisor passes on to init and init to the command. */
void sandbox_forwarded_signals(sigset_t *set);

/* Run the steps of the table from @first to @last (both included, in the
 * table's order); on failure -errno with *@ret_step and *@ret_detail. */
int sandbox_init_steps(SandboxPlan *plan, SandboxStep first, SandboxStep last,
		       SandboxStep *ret_step, const char **ret_detail);
/* Close every fd above 2 except the @n in @keep (negative ones ignored). */
int sandbox_close_all_but(const int *keep, size_t n);
/* Pass a signal from the supervisor on to @cmd (see sandbox-init.c). */
void sandbox_forward_signal(int pty_master, pid_t cmd, int sig, bool group);
/* Send a SetupReport. */
void sandbox_report(int fd, SandboxStep step, const char *detail, int error);

/* Warm session, pid 1 after its steps (up to rlimits): serve requests on
 * plan->session_sock until it closes (sandbox-serve.c). */
_noreturn_ void sandbox_serve_init(SandboxPlan *plan, const sigset_t *saved);

/* Child of clone3(): pid 1 of the sandbox. Runs the step table, forks and
 * executes the command, reaps; never returns. @parent_pidfd: the
 * supervisor's pidfd (init dies with it); @saved: the signal mask the
 * command gets. */
_noreturn_ void sandbox_init_main(SandboxPlan *plan, int parent_pidfd, const sigset_t *saved);
