/* Resource limits for a run: limits.pids, memory_mb, nofile (and tmp_mb,
 * which the /tmp tmpfs size enforces), held by a cgroup v2 subtree when one
 * is delegated to the user (or writable, as root), else by the nearest
 * rlimit. Core dumps are always off. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

#include "policy/policy.h"

typedef struct LimitsPlan LimitsPlan;

/* Decide the mechanism for each limit and, for cgroups, create the run's
 * cgroup (named after @session_id). */
int limits_plan_new(const WardPolicy *p, const char *session_id, LimitsPlan **ret);
/* Remove the run's cgroup (killing anything left in it). Accepts NULL. */
LimitsPlan *limits_plan_free(LimitsPlan *plan);
/* Limits asked for that nothing here can hold, as stable names
 * ("limit-pids"), NULL-terminated, owned by plan; for the start event's
 * degraded list (and --strict). Today only pids for uid 0 without a usable
 * cgroup: fork() exempts root from RLIMIT_NPROC. */
char *const *limits_plan_degraded(const LimitsPlan *plan);
/* A cgroup dir fd for clone3(CLONE_INTO_CGROUP), or -1 when none. */
int limits_cgroup_fd(const LimitsPlan *plan);
/* Parent side, after clone: move @pid into the cgroup if clone3 did not. */
int limits_attach(LimitsPlan *plan, pid_t pid);
/* Child side, before the command is forked: join the run's cgroups (so
 * nothing can start outside them, whatever limits_attach raced with), then
 * setrlimit for the limits held by rlimits, RLIMIT_CORE=0. No allocation. */
int limits_apply_child(const LimitsPlan *plan);
/* {"pids":{"value":N,"mechanism":"cgroup"|"rlimit"}, ...} for the start event. */
cJSON *limits_describe(const LimitsPlan *plan);
/* Did the cgroup record an OOM kill or hit pids.max? (for the exit event) */
cJSON *limits_events(const LimitsPlan *plan);

/* Which mechanism holds limit @name ("pids", "memory_mb", "nofile",
 * "tmp_mb", "timeout_s", "core"): "cgroup", "rlimit", "tmpfs", "timer",
 * or NULL when the limit is not set. */
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
