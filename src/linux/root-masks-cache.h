/* The masks over root-only entries of /proc/sys (root-view.c), kept from
 * one run to the next while they are provably the same.
 *
 * Why it is sound: the kernel refuses chmod and chown in /proc/sys
 * (proc_sys_setattr: EPERM for a mode, uid or gid change), so an entry's
 * mode and owner are those its sysctl table declares; and the set of
 * tables changes only with the running kernel (boot) and the modules that
 * register them. The key is what was walked and how, the boot id, the
 * kernel's release and version and the list of loaded modules: any
 * change, and the run walks again.
 * Nothing is written while a module is loading or unloading, nor when the
 * key changed during the walk. The file is root's, in root's 0700
 * /run/ward (tmpfs: gone at reboot); anything else there is not read.
 *
 * Not cached: the rest of /proc and the kept /sys subtrees, whose entries
 * host root may chmod at any time (procfs and kernfs allow it): walked on
 * every run. */
#pragma once

/* The current key (a string, to be freed) for what @scope names (the
 * directories walked, so that a ward that walks others never takes this
 * list), or NULL on error or when a module is in transition (then do not
 * cache). */
char *root_masks_cache_key(const char *scope);
/* Append the cached masks of /proc/sys to @files and @dirs: 1 when the
 * cache holds @key, 0 when it does not (nothing appended), -errno. */
int root_masks_cache_load(const char *key, char ***files, char ***dirs);
/* Best effort: record the masks for @key. */
void root_masks_cache_store(const char *key, char *const *files, char *const *dirs);
