/* The T2 sandbox: user, mount, pid, net, ipc and uts namespaces, a root
 * view built from the policy, Landlock and seccomp, a pid-1 init.
 *
 * Lifecycle:
 *   sandbox_plan_new()   in the supervisor: every path resolved, every
 *                        string formatted, Landlock and seccomp compiled.
 *                        Reads the host, creates nothing on it
 *                        (sandbox-plan.c).
 *   sandbox_acquire()    what the run holds on the host: the cgroup, commit
 *                        mode's git staging layers, missing caches, a root
 *                        caller's idmapped trees (sandbox-acquire.c).
 *                        sandbox_run() calls it when the caller has not.
 *   sandbox_run()        clone, wait, forward signals, time out
 *                        (sandbox-run.c; pid 1 in sandbox-init.c).
 *   sandbox_git_finish() after the run, commit mode's metadata.
 *   sandbox_plan_free()  releases what acquire made.
 * describe/git_notes are final after acquire (before it, the cgroup and
 * the idmapped trees are what the host offers, not what it gave). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit/audit.h"
#include "common/error.h"
#include "linux/netns-stats.h"
#include "linux/pty-relay.h"
#include "linux/sandbox-step.h"
#include "policy/policy.h"

typedef struct SandboxPlan SandboxPlan;

/* A warm session (docs/sessions.md, src/session/): init stays up after its
 * steps and starts each command it is sent, every one in a pid namespace
 * of its own (sandbox-serve.c). The supervisor side is a loop the session
 * module provides; sandbox_run() calls it once the sandbox is started. */
typedef struct SandboxSession {
	int init_pidfd;   /* pid 1 of the sandbox */
	int init_sock;    /* SOCK_SEQPACKET to pid 1: sandbox_session_send(), _recv() */
	int sigfd;        /* the supervisor's signalfd (SIGINT, SIGTERM, SIGHUP, SIGCHLD...) */
	const WardPolicy *policy;
	const char *workspace; /* as the command sees it */
	bool proxy;            /* network.mode proxy: the proxy runs */
	AuditLog *audit;       /* may be NULL */
	char *const *degraded; /* the protections the sandbox lacks (as its start event says) */
	int report_rd;         /* the proxy's refusals as they come (ProxyRefusal records,
	                        * net/proxy-report.h); -1: none */
	const int *netstat_fds; /* the network namespace's counters (netns-stats.h) */
	/* The after-run check of protected paths (quarantine.h), for each
	 * command's end; NULL in a copy-on-write session. */
	const struct QuarantineInput *quarantine;
	/* Tier 3: the session's VM (vm/vm-warm.h), which runs each command;
	 * NULL at tier 2. Set by the T3 backend around the session's loop. */
	struct VmWarm *guest;
} SandboxSession;

/* A signal the supervisor forwards carries this in si_value: the whole
 * foreground group gets it, as from a terminal, not the command alone. */
#define FORWARD_TO_GROUP 1

typedef struct SandboxServe {
	/* Serve until the session ends. > 0: it was up and is to stop (the
	 * caller then kills pid 1, and with it everything inside); 0: pid 1
	 * ended before it was ready (its report says why). */
	int (*loop)(void *userdata, const SandboxSession *s);
	void *userdata;
} SandboxServe;

typedef struct SandboxOptions {
	const WardPolicy *policy;   /* finalized */
	const char *workspace;      /* absolute, canonical */
	const char *home;           /* absolute */
	char *const *argv;          /* the command */
	char *const *envp;          /* the filtered environment */
	/* Hidden from the sandbox whatever the policy says. */
	const char *state_dir;
	const char *config_dir;
	char *const *policy_files;  /* every policy file merged; may be NULL */
	/* Copy-on-write: overlay upper and work dirs, both NULL when off. */
	const char *cow_upper;
	const char *cow_work;
	const char *session_id;
	bool hardening;             /* Landlock + seccomp (off only by a test switch) */
	const char *test_leak_dir;  /* test switch: bind this host dir with no Landlock rule */
	bool test_no_masks;         /* test switch: no mask mounts over denied paths */
	bool dev_kvm;               /* T3's KVM engine: /dev/kvm in the sandbox's /dev */
	bool test_no_walls;         /* test switch: init does not try the walls */
	AuditLog *audit;            /* for the proxy's net events; may be NULL */
	/* The proxy writes its refusals (net/proxy-report.h) to this fd (the
	 * write end of a non-blocking pipe the caller reads after the run). */
	bool has_proxy_report;
	int proxy_report_fd;
	/* The process that started ward (getppid() recorded first thing):
	 * when it dies, the sandbox is killed and ward finishes. 0: not watched. */
	pid_t parent_pid;
	/* The command's fds 0..2 come from stdio[] instead of ward's own when
	 * has_stdio (the same checks apply: stdio-relay.h, pty-relay.h). */
	bool has_stdio;
	int stdio[3];
	/* Non-NULL: a warm session (see SandboxServe); the timeout passed to
	 * sandbox_run() is then ignored (each command has its own). */
	const SandboxServe *serve;
} SandboxOptions;

/* step (sandbox_step_to_string), detail, positive errno. */
typedef WardError SandboxError;

typedef struct SandboxResult {
	int exit_code;              /* what ward exits with */
	int status;                 /* the command's exit status, -1 if signalled */
	int signal;                 /* the signal that killed it, 0 if none */
	bool timed_out;
	bool oom_killed;            /* the memory cgroup killed a process of the run */
	bool setup_failed;          /* exit_code is 125/126/127 from setup/exec */
	bool parent_died;           /* ward's parent died: the sandbox was killed */
	uint64_t duration_ms;
	int quarantined;            /* paths moved out of the workspace after the run */
	bool protected_check_failed; /* the after-run check could not run or move one */
	SandboxError error;         /* when setup_failed */
	SandboxStep failed_step;    /* when setup_failed: error.step as the enum */
	unsigned stdio_replaced;    /* bit n: fd n was a directory or O_PATH; got /dev/null */
	NetnsCounters net;          /* the network namespace's counters, for hints */
} SandboxResult;

/* The command could not be executed (not found: error.error ENOENT). */
static inline bool sandbox_result_exec_failed(const SandboxResult *res)
{
	return res->setup_failed && res->failed_step == SANDBOX_STEP_EXEC;
}

int sandbox_plan_new(const SandboxOptions *opt, SandboxPlan **ret, SandboxError *reterr);
/* Acquire the plan's resources (see the lifecycle); idempotent. < 0 with
 * @reterr filled when one cannot be made (nothing half-made stays: the
 * plan's free releases what was). */
int sandbox_acquire(SandboxPlan *plan, SandboxError *reterr);
SandboxPlan *sandbox_plan_free(SandboxPlan *plan);
/* The run's protected paths: fs.protected plus where the workspace's git
 * configs send git outside .git (hooks, includes), anchored. For the
 * copy-on-write session's record, so that apply refuses them too. */
char *const *sandbox_plan_protected(const SandboxPlan *plan);

/* What the start audit event records: {"enforced":[...],"degraded":[...],
 * "limits":{...}}. Caller frees (cJSON_Delete). */
struct cJSON *sandbox_plan_describe(const SandboxPlan *plan);

/* Lines about the repository's git layout to show before the run: git
 * dirs that were found but not exposed, and why. */
char *const *sandbox_plan_git_notes(const SandboxPlan *plan);

/* After a run: with "git": "commit", apply the staged repository metadata
 * (git-stage.h); then, if the run failed, a hint (git-layout.h). Appends
 * lines to show on stderr to @ret_lines. */
int sandbox_git_finish(SandboxPlan *plan, const SandboxResult *res, char ***ret_lines);

/* Run the plan: returns 0 and fills @ret whenever the command ran or failed
 * to start in a way that has an exit code; < 0 only for supervisor errors
 * (e.g. clone failed: @reterr says why; probe_explain_missing() for hints). */
int sandbox_run(SandboxPlan *plan, uint64_t timeout_s, SandboxResult *ret, SandboxError *reterr);

/* Placeholders that ward versions before the quarantine made for missing
 * protected paths: removes those their dead runs left. Call before a run. */
int placeholders_cleanup_stale(const char *state_dir);

/* ---- warm sessions: the messages between the supervisor and pid 1 ---- */

/* The most a command's cwd, argv and environment may take together, and
 * the most strings. */
#define SANDBOX_EXEC_MAX (120 * 1024)
#define SANDBOX_EXEC_STRINGS_MAX 4096

/* Ask pid 1 to start a command (request @id) in a pid namespace of its own,
 * with @fds as its 0, 1, 2 (passed with SCM_RIGHTS). @cwd: a directory of
 * the view. 0, -E2BIG when it does not fit, or -errno. */
int sandbox_session_send(int sock, uint32_t id, const char *cwd, char *const *argv,
			 char *const *envp, const int fds[3]);
/* The same, with a pseudo-terminal of the sandbox's devpts for the command
 * (@pty enabled: pty-relay.h; NULL or disabled: none). The command's init
 * opens it, makes it the command's controlling terminal on the fds @pty
 * names (those of @fds must not be the caller's terminal: /dev/null), and
 * sends its master back in a SANDBOX_EV_PTY event. */
int sandbox_session_send_tty(int sock, uint32_t id, const char *cwd, char *const *argv,
			     char *const *envp, const int fds[3], const PtyPlan *pty);

typedef enum SandboxEventKind {
	SANDBOX_EV_READY = 1,   /* pid 1 finished its steps and waits for commands */
	SANDBOX_EV_STARTED = 2, /* request id runs; its pid 1's pidfd is passed */
	SANDBOX_EV_EXIT = 3,    /* value: the command's wait status */
	SANDBOX_EV_FAILED = 4,  /* step, error, detail: it did not run */
	SANDBOX_EV_PTY = 5,     /* the command's pty master is passed (before it starts) */
	SANDBOX_EV_STOPPED = 6, /* value: the signal that stopped the command (job control) */
	/* A spare exec init (sandbox-serve.c), offered to the supervisor:
	 * its request socket and its pidfd are passed. A request sent there
	 * (sandbox_session_send() on that socket) runs without a hop through
	 * pid 1, for fds 0-2 that are pipes, sockets or /dev/null only (the
	 * spare's Landlock ruleset has no rule of theirs: it refuses any
	 * other) and no pty; the pidfd is then the command's, as STARTED's.
	 * A spare is used once; the next one comes in a new SPARE event,
	 * which replaces any the supervisor still holds. */
	SANDBOX_EV_SPARE = 7,
} SandboxEventKind;

typedef struct SandboxEvent {
	uint32_t kind, id;
	int32_t value;
	int32_t step;   /* SandboxStep */
	int32_t error;  /* positive errno */
	char detail[200];
} SandboxEvent;

/* Read one event. With SANDBOX_EV_STARTED *@ret_pidfd is the command's pidfd,
 * with SANDBOX_EV_PTY its pty's master (caller closes), else -EBADF. 0, -EAGAIN (non-blocking, none), -EPIPE
 * (pid 1 is gone), -EBADMSG. */
int sandbox_session_recv(int sock, SandboxEvent *ret, int *ret_pidfd);
/* The same, with SANDBOX_EV_SPARE's two: *@ret_fd its request socket,
 * *@ret_pidfd its pidfd (caller closes both). */
int sandbox_session_recv2(int sock, SandboxEvent *ret, int *ret_pidfd, int *ret_fd);
