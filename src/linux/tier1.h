/* Tier 1: for hosts without user namespaces (Ubuntu 24.04's AppArmor
 * restriction, containers and CI runners that forbid them). No namespaces:
 * the command runs on the host's file system, network and process table,
 * confined by Landlock (file system, TCP ports, scopes), seccomp (the T2
 * filter plus UDP, raw and, before Landlock ABI 9, AF_UNIX sockets),
 * no_new_privs and, for a root caller, an empty capability set. Only with
 * --tier 1 (never chosen silently); docs/tiers.md lists what it holds and
 * what it does not.
 *
 * Lifecycle as at T2: tier1_plan_new() (pure: the file system grants, the
 * refusals; changes nothing) -> tier1_plan_acquire() (the run's private
 * TMPDIR, the proxy's listeners, the cgroup; Landlock and seccomp built)
 * -> tier1_plan_describe() -> tier1_run() -> tier1_plan_free() (removes
 * the TMPDIR, closes the listeners, removes the cgroup). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit/audit.h"
#include "linux/sandbox.h"
#include "run/backend.h"
#include "policy/policy.h"

typedef struct Tier1Plan Tier1Plan;

typedef struct Tier1Options {
	const WardPolicy *policy;   /* finalized */
	const char *workspace;      /* canonical */
	const char *home;
	char *const *argv;
	char *const *envp;          /* filtered; proxy and TMPDIR variables are replaced */
	const char *state_dir;
	const char *config_dir;
	char *const *policy_files;
	int stdio[3];               /* the command's fds 0..2; -1: ward's own */
	pid_t parent_pid;           /* 0: not watched */
	const char *test_break_wall; /* test switch: "read", "write" or "connect" */
	bool test_no_walls;          /* test switch: no wall check (to price it) */
} Tier1Options;

/* -errno with @reterr's step and detail set on failure. -ENOTSUP (step
 * "landlock") when the kernel has no Landlock: T1 would hold nothing;
 * -EPERM (step "deny") for a denied path beneath a writable one. @opt's
 * pointers are borrowed until tier1_plan_free(). */
int tier1_plan_new(const Tier1Options *opt, Tier1Plan **ret, SandboxError *reterr);
/* Take what the run needs (see above); released by tier1_plan_free().
 * @session_id (names the cgroup and the quarantine; NULL: "run") and
 * @audit (for the proxy's and the quarantine's events; may be NULL) are
 * the run's own, made in its acquire phase; borrowed until free.
 * @proxy_report_fd: where the proxy's refusals go (net/proxy-report.h),
 * -1: nowhere. */
int tier1_plan_acquire(Tier1Plan *plan, const char *session_id, AuditLog *audit,
		       int proxy_report_fd, SandboxError *reterr);
Tier1Plan *tier1_plan_free(Tier1Plan *plan);

/* {"enforced":[...],"degraded":[...],"missing":[...],"landlock_abi":N,
 * "limits":{...}} for the start event, after acquire. Caller frees. */
struct cJSON *tier1_plan_describe(const Tier1Plan *plan);
int tier1_plan_landlock_abi(const Tier1Plan *plan);
/* Lines for the user before the run (what the policy asks that tier 1
 * leaves out); NULL when none. After acquire. */
char *const *tier1_plan_notes(const Tier1Plan *plan);

/* Run: as sandbox_run(), in the backend interface's terms. */
int tier1_run(Tier1Plan *plan, uint64_t timeout_s, BackendResult *ret, WardError *reterr);
