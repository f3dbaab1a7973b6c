/* Landlock as the second wall at T2: the filesystem policy compiled to
 * Landlock rules (plus TCP ports and scopes where the ABI has them).
 * Prepare in the parent (landlock_plan_new: all allocation), apply in the
 * child after pivot_root (landlock_plan_apply: syscalls only, no malloc).
 * Paths in the plan are paths in the sandbox's final root view. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef enum LandlockClass {
	LANDLOCK_CLASS_READ,        /* read file, read dir */
	LANDLOCK_CLASS_READ_EXEC,   /* + execute */
	LANDLOCK_CLASS_READ_WRITE,  /* every right the ABI knows */
	LANDLOCK_CLASS_DEVICE,      /* read/write files + ioctl on devices (/dev nodes) */
	LANDLOCK_CLASS_PROC,        /* /proc: read, plus write/truncate of existing files
	                             * (/proc/self/{oom_score_adj,comm,uid_map,...});
	                             * never exec, never create. docs/hardening.md */
	LANDLOCK_CLASS_LIST,        /* list directories only (the root: `ls /`); no file
	                             * is readable through it */
	LANDLOCK_CLASS_PRIVATE,     /* read_write plus connecting to the UNIX sockets in it
	                             * (ABI 9): only for a directory that is the run's own
	                             * (the private /tmp, T1's TMPDIR) */
	_LANDLOCK_CLASS_MAX,
	_LANDLOCK_CLASS_INVALID = -22,
} LandlockClass;

/* What the plan saw at a rule's path, so that apply may skip an fstat per
 * rule (a deny split's hundreds of entries); apply still checks what a
 * rule lands on when the kernel refuses it (the path changed since). */
typedef enum LandlockPathType {
	LANDLOCK_PATH_UNKNOWN = 0, /* apply looks (fstat) */
	LANDLOCK_PATH_DIR,
	LANDLOCK_PATH_FILE,        /* anything else but a symlink: file rights only */
} LandlockPathType;

typedef struct LandlockPathRule {
	const char *path;   /* absolute, in the final root view */
	LandlockClass cls;
	LandlockPathType type;
} LandlockPathRule;

typedef struct LandlockPlan LandlockPlan;

typedef struct LandlockRequest {
	const LandlockPathRule *rules;
	size_t n_rules;
	const uint16_t *tcp_connect_ports;  /* allowed TCP connect ports (e.g. the proxy's) */
	size_t n_tcp_connect_ports;
	const uint16_t *tcp_bind_ports;     /* allowed bind ports; see docs/hardening.md */
	size_t n_tcp_bind_ports;
	bool restrict_tcp;                  /* handle TCP bind/connect at all */
	bool restrict_udp;                  /* handle UDP (ABI 10): no UDP port is allowed */
	int target_abi;                     /* 0: the built-in target (10) */
	/* By default the files behind fds 0-2 at apply time (a host file or
	 * terminal the caller redirected to) get a rule of their own, with the
	 * rights their open mode already gives, so that reopening them through
	 * /dev/stdout, /dev/stderr or /proc/self/fd/N keeps working. */
	bool no_stdio_rules;
} LandlockRequest;

/* The rights each ABI adds, cumulated up to @abi (1..10); the table behind
 * every other function here. -EINVAL for abi < 1; abi > 10 is clamped. */
typedef struct LandlockAbiRights {
	uint64_t fs;             /* handled filesystem rights */
	uint64_t net;            /* handled TCP rights (ABI 4), UDP rights (ABI 10) */
	uint64_t scoped;         /* scopes (ABI 6) */
	uint32_t restrict_flags; /* landlock_restrict_self flags ward sets (ABI 7) */
} LandlockAbiRights;
int landlock_abi_rights(int abi, LandlockAbiRights *ret);
/* The filesystem rights granted to @cls on a directory under @abi (already
 * limited to what the ABI handles). 0 for an invalid class or abi < 1. */
uint64_t landlock_class_access(LandlockClass cls, int abi);
const char *landlock_class_to_string(LandlockClass cls);

/* Probe the kernel's ABI: >0 the ABI, -ENOSYS/-EOPNOTSUPP when unavailable. */
int landlock_abi_version(void);

/* Build the plan; @req's strings are copied. ret_plan is set even when the
 * kernel has no Landlock (the plan then applies nothing and says so). */
int landlock_plan_new(const LandlockRequest *req, LandlockPlan **ret_plan);
/* Same, as if the kernel reported @kernel_abi (>0 an ABI, -errno none);
 * for tests and for callers that probed already. */
int landlock_plan_new_for_abi(const LandlockRequest *req, int kernel_abi, LandlockPlan **ret_plan);
LandlockPlan *landlock_plan_free(LandlockPlan *plan);
/* Effective ABI, 0 when none. */
int landlock_plan_abi(const LandlockPlan *plan);
/* Why there is none: 0, ENOSYS (not built in) or EOPNOTSUPP (not enabled). */
int landlock_plan_errno(const LandlockPlan *plan);
/* What is not enforced, as stable names ("landlock", "landlock-net",
 * "landlock-scope", "landlock-refer", ...), NULL-terminated, owned by plan. */
char *const *landlock_plan_degraded(const LandlockPlan *plan);
/* What is enforced, stable names ("landlock-fs", "landlock-refer",
 * "landlock-truncate", "landlock-ioctl-dev", "landlock-net",
 * "landlock-scope-abstract-unix", "landlock-scope-signal"). Owned by plan. */
char *const *landlock_plan_enforced(const LandlockPlan *plan);
/* Newer features this kernel lacks whose absence is not a degradation of
 * the tier (another wall covers it, or it closes a documented gap):
 * "landlock-unix-path" (ABI 9), "landlock-udp" (ABI 10). Owned by plan. */
char *const *landlock_plan_missing(const LandlockPlan *plan);
/* Why a name from landlock_plan_missing() matters, one sentence; NULL if
 * unknown. */
const char *landlock_missing_reason(const char *name);
/* Child side: create the ruleset, add rules (missing paths are skipped),
 * restrict self. Requires no_new_privs. Async-signal-safe, no allocation. */
int landlock_plan_apply(const LandlockPlan *plan);
/* For a live session's many commands (sandbox-serve.c): the ruleset of
 * @plan with /dev/null's rule in place of those for fds 0-2, built once
 * while fds 0-2 are /dev/null (else -EINVAL) (*@ret_fd; -EBADF when the
 * plan enforces nothing); then landlock_plan_apply_prebuilt() is
 * landlock_plan_apply() with it (it builds a ruleset of its own when fds
 * 0-2 need a rule other than /dev/null's). No allocation. */
int landlock_plan_prebuild(const LandlockPlan *plan, int *ret_fd);
int landlock_plan_apply_prebuilt(const LandlockPlan *plan, int prebuilt);
/* Whether a process with @fds as its fds 0-2 would restrict itself with
 * exactly the @prebuilt ruleset (or @plan enforces nothing): then one
 * restricted while its fds 0-2 were /dev/null holds what it would (a live
 * session's spare, sandbox-serve.c). Syscalls only. */
bool landlock_plan_prebuilt_serves(const LandlockPlan *plan, int prebuilt, const int fds[3]);
/* Add to @ruleset_fd the rules of @plan for @path and beneath it, as the
 * paths are now: a warm session's command mounted a /proc of its own over
 * the one the prebuilt ruleset's rule names (a rule names an inode). */
int landlock_plan_add_rules_beneath(const LandlockPlan *plan, int ruleset_fd, const char *path);
