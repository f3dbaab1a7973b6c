/* What this kernel offers, probed without side effects on the host, and the
 * tier that results. Used by `ward probe` and by `ward run` to fail closed. */
#pragma once

#include <stdbool.h>

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
} WardFeatures;

/* Probe everything. Cheap enough for every run (no clone unless asked):
 * @full also clones test children for each namespace and overlay. */
int probe_features(WardFeatures *ret, bool full);
/* The strongest tier these features support (0..2). */
int probe_best_tier(const WardFeatures *f);
/* Print the reasons T2 is unavailable plus Hint: lines, via log_error. */
void probe_explain_missing(const WardFeatures *f);
