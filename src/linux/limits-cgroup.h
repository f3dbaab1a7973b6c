/* Internal to limits.c: the run's cgroups. cgroup v2 (ward.slice/<session>
 * under a delegated or, for root, the top cgroup) is preferred; on a hybrid
 * host whose v2 hierarchy lacks the controllers, root falls back to the v1
 * pids and memory hierarchies, with the run's cgroup as a child of ward's
 * own there (so limits set above ward still apply). Not a public API. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

typedef struct LimitsCgroup {
	char *v2_path; /* the session cgroup (v2), NULL when none */
	int v2_fd;     /* its directory, for CLONE_INTO_CGROUP */
	char *v1_pids; /* session cgroups in the v1 hierarchies, NULL when none */
	char *v1_memory;
	int v1_pids_fd; /* their directories, for the child to join */
	int v1_memory_fd;
	int v2_error; /* why v2 was not used (positive errno), 0 if it was */
} LimitsCgroup;

#define LIMITS_CGROUP_INIT { .v2_fd = -1, .v1_pids_fd = -1, .v1_memory_fd = -1 }

/* Create the v2 session cgroup with pids.max / memory.max (0: unset). */
int limits_cgroup_v2_create(LimitsCgroup *cg, const char *session, uint64_t pids,
			    uint64_t memory_bytes);
/* Create a v1 session cgroup for @controller ("pids" or "memory") and set
 * @value there. -EACCES/-ENOENT when that hierarchy is not usable. */
int limits_cgroup_v1_create(LimitsCgroup *cg, const char *controller, const char *session,
			    uint64_t value);
/* Move @pid into every cgroup of the set. */
int limits_cgroup_attach(LimitsCgroup *cg, pid_t pid);
/* Child side: move the calling process into every cgroup of the set,
 * through the directory fds (paths are gone after pivot_root). No
 * allocation. */
int limits_cgroup_join_self(const LimitsCgroup *cg);
/* Kill what is left in the set's cgroups and remove them. */
void limits_cgroup_destroy(LimitsCgroup *cg);

int limits_read_text(const char *path, char *buf, size_t size);
int limits_write_at(int dirfd, const char *name, const char *text);
