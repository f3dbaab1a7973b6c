/* A tier of isolation behind one small interface: the run module
 * (src/run/run.c) drives every backend through these entries and never
 * names a platform. Linux T2 (src/linux/backend-t2.c over
 * src/linux/sandbox.h), T1 (src/linux/backend-t1.c over src/linux/tier1.h)
 * and tier 0 (src/linux/tier0.c) are built; T3 and Windows plug into the
 * same table (src/run/backends.c).
 *
 * Lifecycle, driven by run.c:
 *
 *   b = backend_for_tier(tier);      NULL: no such tier
 *   b->probe(&err)                   can this host run it? (-EOPNOTSUPP + why)
 *   b->plan(&in, &plan, &err)        pure: reads the policy and the host,
 *                                    changes nothing (no dir, cgroup, record)
 *   b->acquire(plan, &err)           the resources the run needs (cgroup, ...)
 *   b->describe(plan)                {"enforced","degraded","limits",...} for the
 *                                    start event; valid after acquire
 *   b->run(plan, &res, &err)         run the command and wait
 *   b->finish(plan, &res, &lines)    after-run work (git metadata, hints)
 *   b->free(plan)                    releases whatever acquire took
 *
 * Every entry but probe gets a plan its own plan() made. This header is
 * portable: no Linux-only header may be included here. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "audit/audit.h"
#include "common/error.h"
#include "policy/policy.h"

/* What the run's network namespace counted (only hints, never a decision;
 * linux/netns-stats.h fills it). */
typedef struct BackendNetCounters {
	bool valid;
	uint64_t no_route;    /* connects or sends to an outside address */
	uint64_t udp_no_port; /* datagrams to a closed loopback port (DNS?) */
	uint64_t tcp_refused; /* connects to a loopback port nobody listened on */
} BackendNetCounters;

/* Everything a backend needs, resolved by the run module. Borrowed: lives
 * until the plan is freed. */
typedef struct BackendInput {
	const WardPolicy *policy;   /* finalized */
	const char *workspace;      /* absolute, canonical */
	const char *home;           /* absolute */
	char *const *argv;          /* the command */
	char *const *envp;          /* the filtered environment */
	/* --env NAME[=VALUE], for a backend that filters the environment
	 * itself (Windows: case-insensitive names; envp is then the host's). */
	char *const *env_extra;
	/* Hidden from the sandbox whatever the policy says. */
	const char *state_dir;
	const char *config_dir;
	char *const *policy_files;  /* every policy file merged; may be NULL */
	/* Copy-on-write: overlay upper and work dirs, both NULL when off. */
	const char *cow_upper;
	const char *cow_work;
	const char *session_id;
	uint64_t timeout_s;         /* 0: none */
	/* The command's fds 0, 1, 2; -1: ward's own (inherited). Borrowed. */
	int stdio[3];
	/* When this process dies the run is killed; 0: not watched. */
	pid_t parent_pid;
	AuditLog *audit;            /* for live events (the proxy's); may be NULL */
	/* The proxy's refusals (net/proxy-report.h) go to this fd, the write
	 * end of a non-blocking pipe the run reads afterwards; -1: none. */
	int proxy_report_fd;
	bool hardening;             /* Landlock + seccomp (off only by a test switch) */
	const char *test_leak_dir;  /* test switch: bind this host dir with no rule */
	bool test_no_masks;         /* test switch: no mask mounts over denied paths */
	bool dev_kvm;               /* T3's KVM engine: /dev/kvm in the sandbox's /dev */
	bool test_no_walls;         /* test switch: the walls are not tried before execve */
	const char *test_break_wall; /* test switch (T1): "read", "write" or "connect" left down */
	/* A warm session (linux/sandbox.h's SandboxServe); only the backends
	 * with BACKEND_SESSION take one. */
	const struct SandboxServe *serve;
} BackendInput;

#define BACKEND_INPUT_INIT { .stdio = { -1, -1, -1 }, .proxy_report_fd = -1, .hardening = true }

/* How a run ended, as the backend saw it (run-result.c turns it into the
 * result object). */
typedef struct BackendResult {
	int exit_code;              /* what ward exits with */
	int status;                 /* the command's exit status, -1 if signalled */
	int signal;                 /* the signal that killed it, 0 if none */
	bool timed_out;
	bool oom_killed;            /* the memory limit killed a process of the run */
	bool setup_failed;          /* exit_code is 125/126/127 from setup/exec */
	bool exec_failed;           /* setup_failed at the exec itself (126/127) */
	bool parent_died;           /* ward's parent died: the run was killed */
	uint64_t duration_ms;
	int quarantined;            /* paths moved out of the workspace after the run */
	bool protected_check_failed; /* the after-run check could not run or move one */
	WardError error;            /* when setup_failed */
	unsigned stdio_replaced;    /* bit n: fd n was a directory or O_PATH; got /dev/null */
	BackendNetCounters net;     /* the network namespace's counters, for hints */
} BackendResult;

typedef struct BackendPlan BackendPlan; /* each backend's own */

typedef enum BackendFlags {
	BACKEND_ISOLATED = 1 << 0, /* a view of its own: PATH hints, net hints apply */
	BACKEND_PROXY = 1 << 1,    /* can run network.mode "proxy" */
	BACKEND_SESSION = 1 << 2,  /* can keep a warm session up (BackendInput.serve) */
} BackendFlags;

typedef struct Backend {
	int tier;
	const char *name;          /* "linux-t2", "tier0", ... */
	unsigned flags;            /* BackendFlags */
	/* 0 when this host can run the tier; else -errno and @reterr says why
	 * (step "tier"). Cheap: no namespace is tried. */
	int (*probe)(WardError *reterr);
	int (*plan)(const BackendInput *in, BackendPlan **ret, WardError *reterr);
	int (*acquire)(BackendPlan *plan, WardError *reterr);
	/* Caller frees. Never NULL but on OOM. */
	cJSON *(*describe)(const BackendPlan *plan);
	/* Paths the copy-on-write session must refuse (fs.protected and what
	 * the plan found besides); valid after acquire; may return NULL. */
	char *const *(*protected_paths)(const BackendPlan *plan);
	/* Lines to show before the run (warnings about the view); may be NULL. */
	char *const *(*notes)(const BackendPlan *plan);
	/* 0 and @ret filled whenever the command ran or failed with an exit
	 * code (125/126/127 from setup inside); < 0 only when the backend's own
	 * supervisor failed (@reterr says why). */
	int (*run)(BackendPlan *plan, BackendResult *ret, WardError *reterr);
	/* After the run: appends lines for stderr to @ret_lines. 0 or -errno
	 * (a warning: the run's outcome stands). */
	int (*finish)(BackendPlan *plan, const BackendResult *res, char ***ret_lines);
	BackendPlan *(*free)(BackendPlan *plan);
} Backend;

/* The backend of @tier (0..3), or NULL when there is no such tier. Tiers
 * that exist but are not built have an entry whose probe refuses. */
const Backend *backend_for_tier(int tier);

/* For plan(): every descriptor @in passes for the command's 0, 1, 2 is
 * open; else -EBADF and @reterr (step "stdio") names it. */
int backend_check_stdio(const BackendInput *in, WardError *reterr);
