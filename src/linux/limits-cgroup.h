/* Internal to limits.c: the run's cgroups. cgroup v2 (ward.slice/<session>
 * under a delegated or, for root, the top cgroup) is preferred; on a hybrid
 * host whose v2 hierarchy lacks the controllers, root falls back to the v1
 * pids, memory, cpu and blkio hierarchies, with the run's cgroup as a child
 * of ward's own there (so limits set above ward still apply). Not a public
 * API. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

typedef enum CgroupV1 {
	CG_V1_PIDS,
	CG_V1_MEMORY,
	CG_V1_CPU,
	CG_V1_BLKIO,
	_CG_V1_MAX,
} CgroupV1;

typedef struct LimitsCgroup {
	char *v2_path; /* the session cgroup (v2), NULL when none */
	int v2_fd;     /* its directory, for CLONE_INTO_CGROUP */
	char *v1_path[_CG_V1_MAX]; /* session cgroups in the v1 hierarchies */
	int v1_fd[_CG_V1_MAX];     /* their directories, for the child to join */
	int v2_error; /* why v2 was not used (positive errno), 0 if it was */
} LimitsCgroup;

#define LIMITS_CGROUP_INIT { .v2_fd = -1, .v1_fd = { -1, -1, -1, -1 } }

/* What a session cgroup should hold; 0: unset. */
typedef struct CgroupWant {
	uint64_t pids;
	uint64_t memory_bytes;
	uint64_t cpu_percent; /* 100 = one CPU */
	uint64_t io_weight;   /* 1..10000 */
} CgroupWant;

/* Which of them a cgroup holds. */
#define CG_HOLDS_CPU (1U << 0) /* cpu.max / cpu.cfs_quota_us set */
#define CG_HOLDS_IO (1U << 1)  /* an io weight file set */

/* Create the v2 session cgroup with pids.max and memory.max (both
 * controllers required) and, where the cpu and io controllers are offered,
 * cpu.max and the io weight; *@ret_holds says which of those two. */
int limits_cgroup_v2_create(LimitsCgroup *cg, const char *session, const CgroupWant *want,
			    unsigned *ret_holds);
/* Create a v1 session cgroup for @which and set @value there (pids.max,
 * memory.limit_in_bytes, the CFS quota for a percent, the blkio weight).
 * -EACCES/-ENOENT when that hierarchy is not usable, -EOPNOTSUPP when it
 * lacks the file. */
int limits_cgroup_v1_create(LimitsCgroup *cg, CgroupV1 which, const char *session,
			    uint64_t value);
/* Move @pid into every cgroup of the set. */
int limits_cgroup_attach(LimitsCgroup *cg, pid_t pid);
/* Child side: move the calling process into every cgroup of the set,
 * through the directory fds (paths are gone after pivot_root); the caller
 * must have one thread (v1 moves the writing thread: no RCU grace period).
 * No allocation. */
typedef enum CgroupV2Join {
	CG_V2_JOIN_SKIP, /* in it already (clone3 CLONE_INTO_CGROUP, or the supervisor moved it) */
	CG_V2_JOIN_MUST, /* write cgroup.procs, a refusal fails (T1 after a plain fork) */
} CgroupV2Join;
int limits_cgroup_join_self(const LimitsCgroup *cg, CgroupV2Join v2);
/* Kill what is left in the set's cgroups and remove them. */
void limits_cgroup_destroy(LimitsCgroup *cg);

int limits_read_text(const char *path, char *buf, size_t size);
int limits_write_at(int dirfd, const char *name, const char *text);
