/* What this kernel offers, probed without side effects on the host, and the
 * tier that results. Used by `ward probe` and by `ward run` to fail closed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct WardFeatures {
	bool userns, mountns, pidns, netns, ipcns, utsns;
	bool overlay_userns;     /* overlayfs mountable inside a user namespace */
	int landlock_abi;        /* 0 when unavailable */
	int landlock_errno;      /* why unavailable: ENOSYS (not built), EOPNOTSUPP (disabled) */
	bool seccomp;            /* seccomp filter mode available */
	bool cgroup_delegated;   /* a writable cgroup v2 subtree for this user */
	char cgroup_path[512];   /* where, when delegated */
	/* Why namespaces fail, as text for Hint lines; "" when they work. */
	char userns_reason[256];

	/* Added by the hardening work (compatible: new fields only). */
	bool full;               /* namespaces and overlay were tried in test children */
	int userns_errno;        /* full: errno of the failed user namespace, else 0 */
	bool seccomp_filter;     /* ward's filter compiles (full: and denies in a test child) */
	unsigned seccomp_filter_len; /* its BPF instructions */
	char cgroup_reason[128]; /* why not delegated; "" when it is */
	bool cgroup_v1;          /* root on a hybrid host: the v1 pids and memory
	                          * hierarchies hold the limits instead */
	/* What holds limits.memory_mb / cpu_percent / io_weight here:
	 * "cgroup", "cgroup-v1", or "rlimit" (memory, degraded: counts no
	 * shared memory) / "none" (degraded). */
	const char *memory_limit, *cpu_limit, *io_limit;
	bool user_shares;        /* /proc/sys/user is writable: per-user counters
	                          * get a share in the sandbox's user namespace */
	/* Full probe: tier 2's first steps tried in one test child
	 * (probe-steps.h): clone, id maps, a private mount, a fresh /proc. */
	bool t2_steps;           /* they worked */
	char t2_step[32];        /* else the first that failed */
	int t2_errno;
	bool clone3_enosys;      /* clone3 is answered with ENOSYS (clone works) */
	bool hostname_blocked;   /* sethostname fails (cosmetic) */
} WardFeatures;

/* Probe everything. Cheap enough for every run (no clone unless asked):
 * @full also clones test children for each namespace and overlay. */
int probe_features(WardFeatures *ret, bool full);
/* The strongest tier these features support (0..2). */
int probe_best_tier(const WardFeatures *f);
/* Cheap (sysctls only): true when user namespaces are certainly off here,
 * with the reason in @reason. False does not promise they work. */
bool probe_userns_blocked(char *reason, size_t n);
/* Print the reasons T2 is unavailable plus Hint: lines, via log_error:
 * the fix for the host, and --tier 1 as the explicit way to accept less. */
void probe_explain_missing(const WardFeatures *f);
/* Landlock features for @abi as short names ("fs", "refer", "truncate",
 * "tcp", "ioctl-dev", "scopes", "audit"): the first *ret_n entries of a
 * static array, one per ABI level up to @abi. */
const char *const *probe_landlock_features(int abi, size_t *ret_n);
