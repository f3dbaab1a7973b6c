/* The root view as data: an ordered list of mount operations computed in
 * the supervisor (paths resolved, strings formatted), executed by the
 * sandbox's init before pivot_root (mount-setup.c). Internal to src/linux. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "linux/git-layout.h"
#include "linux/git-stage.h"
#include "linux/landlock.h"
#include "policy/policy.h"

/* Inside the child, the host tree is at OLDROOT and the view is built at
 * NEWROOT (both on a private tmpfs that becomes the root for a moment). */
#define MP_OLDROOT "/oldroot"
#define MP_NEWROOT "/newroot"

typedef enum MountKind {
	MOUNT_BIND_RO,      /* read-only, noexec: fs.read */
	MOUNT_BIND_RO_EXEC, /* read-only: fs.read_exec */
	MOUNT_BIND_RW,      /* writable: fs.read_write, the workspace */
	MOUNT_BIND_DEV,     /* a device node from the host's /dev */
	MOUNT_TMPFS,        /* data: tmpfs options */
	MOUNT_MASK_DIR,     /* an empty read-only directory over a denied path */
	MOUNT_MASK_FILE,    /* an empty read-only file over a denied path */
	MOUNT_PROTECT,      /* read-only bind of a protected path (no symlink following) */
	MOUNT_SYMLINK,      /* src: the link's target */
	MOUNT_OVERLAY,      /* data: overlay options (copy-on-write workspace) */
	MOUNT_PROC,
	MOUNT_PROC_RO,      /* read-only bind of a /proc entry over itself (sys, sysrq-trigger...) */
	MOUNT_SYSFS,
	MOUNT_DEVPTS,
	MOUNT_DIR,          /* just a directory (mode in data as octal) */
	MOUNT_LEAK,         /* test switch: a host dir with no Landlock rule */
	MOUNT_PIN,          /* a writable self-bind: makes an ancestor of a nested
	                     * protected path a mount point, so it cannot be renamed */
	MOUNT_CACHE,        /* a host cache, copy-on-write (fs.cache): src the lower dir,
	                     * data the options of the tmpfs holding the upper layer */
	MOUNT_FILE_DATA,    /* data: the file's content (fs.sanitize), read-only */
	_MOUNT_KIND_MAX,
	_MOUNT_KIND_INVALID = -22,
} MountKind;

const char *mount_kind_to_string(MountKind k);

typedef struct MountSpec {
	MountKind kind;
	char *src;          /* "/oldroot/..." or a symlink target; NULL when unused */
	char *dst;          /* "/newroot/..." */
	char *view;         /* dst as the command sees it ("/usr") */
	char *data;         /* mount data, NULL when none */
	bool is_file;       /* the mount point is a file, not a directory */
	bool create;        /* src does not exist yet: mount_plan_acquire makes it */
	bool skip;          /* acquire could not make it: not mounted (fewer rights) */
} MountSpec;

typedef struct MountPlan {
	MountSpec *specs;
	size_t n_specs;
	LandlockPathRule *ll_rules; /* the same view as Landlock rules (view paths) */
	size_t n_ll_rules;
	char *empty_file;           /* "/newroot/.ward-empty": source of file masks */
	GitLayout git;              /* the repository's git dirs (git-layout.h) */
	GitStage *git_stages;       /* "git": "commit": one per writable git dir */
	size_t n_git_stages;
	char **ll_unsplit;          /* writable grants with a denied path beneath (deny-split.h) */
	struct RootView *root;      /* a uid-0 caller's view (root-view.c), else NULL */
} MountPlan;

typedef struct MountPlanInput {
	const WardPolicy *policy;
	const char *workspace;
	const char *home;
	const char *state_dir;
	const char *config_dir;
	char *const *policy_files;
	const char *cow_upper;
	const char *cow_work;
	const char *test_leak_dir;
	const struct WorkspaceScan *protected_scan; /* existing protected paths (workspace-scan.h) */
	bool test_no_masks;         /* test switch: no mask mounts (Landlock alone must deny) */
	bool dev_kvm;               /* /dev/kvm in the view's /dev (T3's KVM engine) */
} MountPlanInput;

/* Compute the plan. Reads the host, changes nothing on it (nor in the CoW
 * upper dir): what must exist for the run (a writable cache the policy
 * names under $HOME, commit mode's staging layers) is only recorded.
 * On error @reterr_path names the path involved (caller frees). */
int mount_plan_build(const MountPlanInput *in, MountPlan *ret, char **reterr_path);
/* Create what the plan recorded, before the run: the missing caches (a
 * cache that cannot be made, or whose real path moved since the plan, is
 * skipped: fewer rights), the git staging layers and their overlays'
 * options. Lines for the user go to plan->git.notes. Idempotent.
 * mount_plan_done undoes it (a staging layer is removed unless it holds
 * files it did not apply). On error @reterr_path names the path. */
int mount_plan_acquire(MountPlan *plan, char **reterr_path);
void mount_plan_done(MountPlan *plan);
/* One line per spec and per Landlock rule, for tests and debugging:
 * "KIND VIEW <- SRC [DATA] [file] [create]"; caller frees. */
char *mount_plan_dump(const MountPlan *plan);
