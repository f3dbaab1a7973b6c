/* What changes in the view when ward's caller is uid 0. Inside, uid 0 is
 * host uid 0 without capabilities: it owns root's files, so DAC alone would
 * let the command read every root-only file the view shows. This module
 * brings it down to what an unprivileged user sees:
 *  - read-only binds in the system's directories (/usr, /etc, /opt, /var,
 *    ...; not under $HOME, not the repository's git dirs) become idmapped
 *    mounts whose idmapping leaves host uid and gid 0 unmapped: root's files
 *    belong to nobody inside, and only their "other" bits open them;
 *  - sysfs and procfs cannot be idmapped: /sys shows only the subtrees tools
 *    read, and the entries of /sys and /proc that only root can read are
 *    masked (found by a scan at plan time).
 * It is not used for other callers: their view is unchanged. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct MountPlan;
struct MountSpec;
typedef struct RootView RootView;

typedef struct RootScan RootScan;

/* Parent, uid 0 only, first thing in the plan: start the scan of /sys and
 * /proc in a thread (it only reads; NULL: not started, root_view_acquire
 * scans itself). */
RootScan *root_view_scan_start(void);
/* Join and drop a scan root_view_prepare did not take. */
RootScan *root_view_scan_free(RootScan *sc);

/* Parent, uid 0 only, in the plan: prepare @plan->root (which read-only
 * binds get an idmapped tree). @scan (NULL, or pointing to a started scan
 * or NULL) is taken; it keeps running. Creates nothing. -errno only for
 * allocation failure. */
int root_view_prepare(struct MountPlan *plan, const char *home, RootScan **scan);
/* Parent, uid 0 only, after the plan: make the idmapped trees (a short-lived
 * child makes the idmapping's user namespace; open_tree clones), then join
 * the scan for the /sys and /proc masks (or scan now). @ret_idmapped is
 * true when every read-only system bind got its idmapped mount (false: some
 * are plain binds, report "root-system-files" degraded). Idempotent; 0
 * also when @plan has no root view. */
int root_view_acquire(struct MountPlan *plan, bool *ret_idmapped);
RootView *root_view_free(RootView *rv);
/* Parent, after clone: the child holds its own copies of the mount fds. */
void root_view_release_trees(RootView *rv);

/* Child (no allocation). Attach the idmapped tree for spec @s, if it has
 * one: 1 done, 0 no tree (bind as usual), -errno. */
int root_view_attach(const struct MountPlan *plan, const struct MountSpec *s);
/* Child: /sys as the reduced view (a read-only tmpfs holding read-only binds
 * of the subtrees tools read). */
int root_view_sysfs(const struct MountPlan *plan, const struct MountSpec *s);
/* Child, after every spec: the masks over root-only /sys and /proc entries.
 * On failure @reterr_path is the mask that failed. */
int root_view_masks(const struct MountPlan *plan, const char **reterr_path);
/* A warm session's command, which mounts a /proc of its own over the
 * session's (mount_setup_own_proc): root_view_mask_source() clones one
 * file mask beneath @view as it is before (a detached mount of the empty
 * file, or -ENOENT), root_view_masks_again() then puts every mask beneath
 * @view back on what covers it, file masks cloned from @empty_fd. */
int root_view_mask_source(const struct MountPlan *plan, const char *view);
int root_view_masks_again(const struct MountPlan *plan, const char *view, int empty_fd,
			  const char **reterr_path);
