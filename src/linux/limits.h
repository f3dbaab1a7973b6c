/* Resource limits for a run: limits.pids, memory_mb, cpu_percent and
 * io_weight, held by a cgroup v2 subtree when one is delegated to the user
 * (or writable, as root), else by the nearest rlimit or not at all, and
 * then reported degraded; nofile, tmp_mb and shm_mb (tmpfs sizes); and the
 * sandbox's shares of the per-user kernel counters (inotify, fanotify,
 * namespaces through its user namespace's /proc/sys/user; pending signals
 * and message queues through rlimits). Core dumps are always off. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

#include "policy/policy.h"

typedef struct LimitsPlan LimitsPlan;

/* Decide the mechanism for each limit as the host offers them now; creates
 * nothing (a cgroup is only predicted: a usable base, writable v1
 * hierarchies). */
int limits_plan_new(const WardPolicy *p, const char *session_id, LimitsPlan **ret);
/* The same for a run in no user namespace of its own (tier 1): the
 * /proc/sys/user shares are not planned (nothing could write them), the
 * inotify limits are described as held by nothing, with the reason; the
 * cgroup is not predicted (call limits_acquire next: until then pids and
 * memory read as their rlimit fallback). */
int limits_plan_new_host(const WardPolicy *p, const char *session_id, LimitsPlan **ret);
/* Create the run's cgroup (named after the session id), before the run;
 * what the kernel refuses falls back as the plan would have (rlimit, or
 * degraded): limits_plan_degraded and limits_describe are final only after
 * this. Idempotent. */
int limits_acquire(LimitsPlan *plan);
/* Remove the run's cgroup (killing anything left in it). Accepts NULL. */
LimitsPlan *limits_plan_free(LimitsPlan *plan);
/* Limits asked for that nothing here holds in full, as stable names
 * ("limit-pids", "limit-memory", "limit-cpu", "limit-io", "limit-inotify"),
 * NULL-terminated, owned by plan; for the start event's degraded list (and
 * --strict). */
char *const *limits_plan_degraded(const LimitsPlan *plan);
/* A cgroup dir fd for clone3(CLONE_INTO_CGROUP), or -1 when none. */
int limits_cgroup_fd(const LimitsPlan *plan);
/* Parent side, after clone: move @pid into the cgroup if clone3 did not. */
int limits_attach(LimitsPlan *plan, pid_t pid);
/* Child side, right after the uid map, with CAP_SYS_RESOURCE in the new
 * user namespace and the host's /proc still in place: write the
 * namespace's /proc/sys/user shares. No allocation. */
int limits_apply_userns(const LimitsPlan *plan);
/* The size of the /tmp and $HOME tmpfs (@shm false) or /dev/shm's (true),
 * in MiB: limits.tmp_mb / shm_mb, never above limits.memory_mb. */
uint64_t limits_tmpfs_mb(const WardPolicy *pol, bool shm);
/* Child side, before the command is forked: join the run's cgroups (so
 * nothing can start outside them, whatever limits_attach raced with), then
 * setrlimit for the limits held by rlimits, RLIMIT_CORE=0. No allocation. */
int limits_apply_child(const LimitsPlan *plan);
/* The same for a run with no namespaces (tier 1), which fails closed on
 * the v2 cgroup as well: @in_cgroup when clone3(CLONE_INTO_CGROUP) put the
 * caller there already (no write: moving a process waits for an RCU grace
 * period), else it joins through cgroup.procs. No allocation. */
int limits_apply_child_host(const LimitsPlan *plan, bool in_cgroup);
/* {"pids":{"value":N,"mechanism":"cgroup"|"rlimit"}, ...} for the start event. */
cJSON *limits_describe(const LimitsPlan *plan);
/* Did the run's memory cgroup (v2 or v1) kill a process of the run? */
bool limits_oom_killed(const LimitsPlan *plan);
/* Did the cgroup record an OOM kill or hit pids.max? (for the exit event) */
cJSON *limits_events(const LimitsPlan *plan);

/* Which mechanism holds limit @name (a limits.* key, or "core"):
 * "cgroup", "cgroup-v1", "rlimit", "tmpfs", "timer", "userns", "none"
 * (asked for, not held), or NULL when the limit is not set. */
const char *limits_mechanism(const LimitsPlan *plan, const char *name);
/* The run's cgroup directory, NULL when none. */
const char *limits_cgroup_path(const LimitsPlan *plan);

/* Where a cgroup v2 subtree with the pids and memory controllers could be
 * created (no side effects): the directory under which ward makes
 * ward.slice/<session>. -ENOENT when no cgroup2 is mounted, -EACCES when
 * none is writable, -EOPNOTSUPP when the controllers are not available. */
int limits_cgroup_find_base(char *ret, size_t n);

/* Where root's cgroup v1 fallback would create the run's cgroup for
 * @controller ("pids", "memory"): ward's own cgroup in that hierarchy, if
 * writable. No side effects. -ENOENT without such a hierarchy. */
int limits_cgroup_v1_find(const char *controller, char *ret, size_t n);

/* Parsers behind it, exposed for the unit tests. */
int limits_parse_self_cgroup(const char *text, char *ret, size_t n);  /* "0::/path" */
int limits_parse_cgroup2_mount(const char *mountinfo, char *ret, size_t n);
bool limits_controllers_have(const char *list, const char *name);
