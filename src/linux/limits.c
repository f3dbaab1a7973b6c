/* Resource limits: a cgroup v2 subtree (ward.slice/<session>) under the
 * nearest cgroup this user may write and that offers the controllers; for
 * root on a hybrid host the v1 pids/memory hierarchies; else the nearest
 * rlimit. Decided and created in the parent; the child only calls
 * setrlimit. A cgroup is the stronger mechanism: it counts the whole tree
 * (rlimits are per process, or per uid in the user namespace for NPROC) and
 * the run's leftovers are killed through it when the run ends. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "linux/limits-cgroup.h"
#include "linux/limits.h"

typedef enum LimitMech {
	MECH_NONE,
	MECH_CGROUP,
	MECH_CGROUP_V1,
	MECH_RLIMIT,
	MECH_TMPFS,
	MECH_TIMER,
	MECH_USERNS,     /* a /proc/sys/user limit of the sandbox's user namespace */
	MECH_UNENFORCED, /* asked for, but nothing here can hold it */
	_MECH_MAX,
} LimitMech;

/* clang-format off */
static const char *const mech_names[_MECH_MAX] = {
	[MECH_NONE] = NULL,
	[MECH_CGROUP] = "cgroup",
	[MECH_CGROUP_V1] = "cgroup-v1",
	[MECH_RLIMIT] = "rlimit",
	[MECH_TMPFS] = "tmpfs",
	[MECH_TIMER] = "timer",
	[MECH_USERNS] = "userns",
	[MECH_UNENFORCED] = "none",
};
/* clang-format on */

typedef enum LimitId {
	LIM_PIDS,
	LIM_MEMORY,
	LIM_CPU,
	LIM_IO,
	LIM_NOFILE,
	LIM_TMP,
	LIM_SHM,
	LIM_TIMEOUT,
	LIM_CORE,
	LIM_INOTIFY_INSTANCES,
	LIM_INOTIFY_WATCHES,
	LIM_SIGPENDING,
	LIM_MSGQUEUE,
	LIM_MEMLOCK,
	_LIM_MAX,
} LimitId;

/* clang-format off */
static const struct {
	const char *name;
	int resource;           /* the rlimit that stands in, -1 none */
	const char *rlimit_name;
	CgroupV1 v1;            /* the v1 hierarchy, _CG_V1_MAX none */
	const char *degraded;   /* the name in the degraded list */
	/* /proc/sys/user files this limit sets in the sandbox's user
	 * namespace (ucounts: a child namespace's count is charged to every
	 * ancestor, so a lower maximum there is a share of the user's). */
	const char *sysctl[2];
} limit_info[_LIM_MAX] = {
	[LIM_PIDS] = { "pids", RLIMIT_NPROC, "RLIMIT_NPROC", CG_V1_PIDS, "limit-pids", {} },
	/* RLIMIT_DATA, not RLIMIT_AS: it counts private writable memory and
	 * brk, not address-space reservations, so JITs and Go's arena
	 * reservations keep working. It is per process and counts no shared
	 * memory: only a cgroup makes memory_mb hold. */
	[LIM_MEMORY] = { "memory_mb", RLIMIT_DATA, "RLIMIT_DATA", CG_V1_MEMORY, "limit-memory", {} },
	[LIM_CPU] = { "cpu_percent", -1, NULL, CG_V1_CPU, "limit-cpu", {} },
	[LIM_IO] = { "io_weight", -1, NULL, CG_V1_BLKIO, "limit-io", {} },
	[LIM_NOFILE] = { "nofile", RLIMIT_NOFILE, "RLIMIT_NOFILE", _CG_V1_MAX, NULL, {} },
	[LIM_TMP] = { "tmp_mb", -1, NULL, _CG_V1_MAX, NULL, {} },
	[LIM_SHM] = { "shm_mb", -1, NULL, _CG_V1_MAX, NULL, {} },
	[LIM_TIMEOUT] = { "timeout_s", -1, NULL, _CG_V1_MAX, NULL, {} },
	[LIM_CORE] = { "core", RLIMIT_CORE, "RLIMIT_CORE", _CG_V1_MAX, NULL, {} },
	[LIM_INOTIFY_INSTANCES] = { "inotify_instances", -1, NULL, _CG_V1_MAX, "limit-inotify",
		{ "max_inotify_instances", "max_fanotify_groups" } },
	[LIM_INOTIFY_WATCHES] = { "inotify_watches", -1, NULL, _CG_V1_MAX, "limit-inotify",
		{ "max_inotify_watches", "max_fanotify_marks" } },
	[LIM_SIGPENDING] = { "sigpending", RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING", _CG_V1_MAX,
		"limit-sigpending", {} },
	[LIM_MSGQUEUE] = { "msgqueue_kb", RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE", _CG_V1_MAX,
		"limit-msgqueue", {} },
	/* Per process for mlock(), per user (hierarchical) for SHM_LOCK. */
	[LIM_MEMLOCK] = { "memlock_kb", RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK", _CG_V1_MAX,
		"limit-memlock", {} },
};
/* clang-format on */

/* The namespace counters of /proc/sys/user get a fixed share (with nested
 * sandboxes off the command cannot create namespaces anyway: no
 * capabilities, seccomp). Not 0: ward's own setup clones mount trees
 * (open_tree), which newer kernels count as mount namespaces. */
static const char *const ns_sysctls[] = {
	"max_user_namespaces", "max_mnt_namespaces",	"max_pid_namespaces",
	"max_net_namespaces",  "max_ipc_namespaces",	"max_uts_namespaces",
	"max_cgroup_namespaces", "max_time_namespaces",
};
#define NS_SHARE 64

#define SYSCTL_MAX 16

typedef struct SysctlWrite {
	char path[64];
	char value[24];
} SysctlWrite;

struct LimitsPlan {
	uint64_t value[_LIM_MAX];     /* as applied (clamped to a share) */
	uint64_t requested[_LIM_MAX]; /* as the policy asked */
	LimitMech mech[_LIM_MAX];
	struct rlimit rlim[_LIM_MAX]; /* precomputed for the child */
	const char *why[_LIM_MAX];    /* what the mechanism leaves out, if anything */
	bool degraded_id[_LIM_MAX];
	char *degraded[_LIM_MAX + 1]; /* static strings, NULL-terminated */
	SysctlWrite sysctl[SYSCTL_MAX];
	size_t n_sysctl;
	LimitsCgroup cg;
	char session[129];
	bool wants_cgroup;            /* pids, memory, cpu or io asked for */
	bool acquired;                /* limits_acquire ran: cg is real, not predicted */
};

static bool session_id_valid(const char *s)
{
	if (!s || !*s || strlen(s) > 128)
		return false;
	for (const char *c = s; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
			return false;
	return strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

LimitsPlan *limits_plan_free(LimitsPlan *plan)
{
	if (!plan)
		return NULL;
	limits_cgroup_destroy(&plan->cg);
	free(plan);
	return NULL;
}

static void degrade(LimitsPlan *p, LimitId id, LimitMech mech, const char *why)
{
	p->mech[id] = mech;
	p->why[id] = why;
	p->degraded_id[id] = true;
}

/* The degraded names, in LimitId order, each once. */
static void list_degraded(LimitsPlan *p)
{
	size_t n = 0;

	memset(p->degraded, 0, sizeof(p->degraded));
	for (LimitId id = 0; id < _LIM_MAX; id++) {
		bool seen = false;

		if (!p->degraded_id[id])
			continue;
		for (size_t i = 0; i < n; i++)
			seen = seen || strcmp(p->degraded[i], limit_info[id].degraded) == 0;
		if (!seen)
			p->degraded[n++] = (char *)limit_info[id].degraded;
	}
}

/* The cgroup a run would get, without making it (the plan): a usable v2
 * base holds pids and memory, and cpu and io where the base offers them;
 * else (root on a hybrid host) the v1 hierarchies ward could write to.
 * limits_acquire makes them and corrects what the kernel refuses. */
static void predict_cgroups(LimitsPlan *p)
{
	static const char *const v1_names[_CG_V1_MAX] = {
		[CG_V1_PIDS] = "pids",
		[CG_V1_MEMORY] = "memory",
		[CG_V1_CPU] = "cpu",
		[CG_V1_BLKIO] = "blkio",
	};
	char base[4096], path[4096 + 32], buf[512];
	int r;

	r = limits_cgroup_find_base(base, sizeof(base));
	if (r >= 0) {
		bool listed = false;

		snprintf(path, sizeof(path), "%s/cgroup.controllers", base);
		listed = limits_read_text(path, buf, sizeof(buf)) >= 0;
		for (LimitId id = LIM_PIDS; id <= LIM_MEMORY; id++)
			if (p->value[id])
				p->mech[id] = MECH_CGROUP;
		if (p->value[LIM_CPU] && listed && limits_controllers_have(buf, "cpu"))
			p->mech[LIM_CPU] = MECH_CGROUP;
		if (p->value[LIM_IO] && listed && limits_controllers_have(buf, "io"))
			p->mech[LIM_IO] = MECH_CGROUP;
		return;
	}
	p->cg.v2_error = -r;
	for (LimitId id = LIM_PIDS; id <= LIM_IO; id++) {
		if (!p->value[id])
			continue;
		if (limits_cgroup_v1_find(v1_names[limit_info[id].v1], path, sizeof(path)) < 0)
			continue;
		p->mech[id] = MECH_CGROUP_V1;
	}
}

/* pids, memory, cpu and io: v2, else (root on a hybrid host) v1. */
static void plan_cgroups(LimitsPlan *p, const char *session_id)
{
	CgroupWant want = {
		.pids = p->value[LIM_PIDS],
		.memory_bytes = p->value[LIM_MEMORY] * 1024 * 1024,
		.cpu_percent = p->value[LIM_CPU],
		.io_weight = p->value[LIM_IO],
	};
	unsigned holds = 0;
	int r;

	r = limits_cgroup_v2_create(&p->cg, session_id, &want, &holds);
	if (r >= 0) {
		for (LimitId id = LIM_PIDS; id <= LIM_MEMORY; id++)
			if (p->value[id])
				p->mech[id] = MECH_CGROUP;
		if (want.cpu_percent && (holds & CG_HOLDS_CPU))
			p->mech[LIM_CPU] = MECH_CGROUP;
		if (want.io_weight && (holds & CG_HOLDS_IO))
			p->mech[LIM_IO] = MECH_CGROUP;
		return;
	}
	limits_cgroup_destroy(&p->cg);
	p->cg.v2_error = -r;

	for (LimitId id = LIM_PIDS; id <= LIM_IO; id++) {
		uint64_t v = id == LIM_MEMORY ? want.memory_bytes : p->value[id];

		if (v && limits_cgroup_v1_create(&p->cg, limit_info[id].v1, session_id, v) >= 0)
			p->mech[id] = MECH_CGROUP_V1;
	}
	/* A v1 cgroup that failed half-way keeps its path for destroy. */
}

/* pids and memory that no cgroup holds fall back to an rlimit (or are
 * unenforced); cpu and io have no fallback. After the cgroups' mechanisms
 * are set (predicted or made). */
static void resolve_uncounted(LimitsPlan *p)
{
	for (LimitId id = LIM_PIDS; id <= LIM_MEMORY; id++) {
		rlim_t v = id == LIM_MEMORY ? (rlim_t)p->value[id] * 1024 * 1024
					    : (rlim_t)p->value[id];

		if (!p->value[id] || p->mech[id] != MECH_NONE)
			continue;
		if (id == LIM_PIDS && getuid() == 0) {
			/* fork() exempts the global root user from
			 * RLIMIT_NPROC (kernel/fork.c: INIT_USER), user
			 * namespace or not: an rlimit would be a pretence. */
			degrade(p, id, MECH_UNENFORCED,
				"RLIMIT_NPROC does not apply to uid 0 and no cgroup is usable");
			continue;
		}
		p->rlim[id] = (struct rlimit){ v, v };
		if (id == LIM_MEMORY) {
			/* Held in part: the run goes on, reported degraded
			 * (--strict refuses it). */
			degrade(p, id, MECH_RLIMIT,
				"no memory cgroup is usable: RLIMIT_DATA is per process and does "
				"not count shared memory (memfd, shared mmap, /dev/shm, tmpfs)");
			continue;
		}
		p->mech[id] = MECH_RLIMIT;
	}
	if (p->mech[LIM_IO] == MECH_CGROUP || p->mech[LIM_IO] == MECH_CGROUP_V1)
		p->why[LIM_IO] = "a proportional weight: it acts only under contention, on devices "
				 "that the BFQ scheduler (or io.cost) runs";
	for (LimitId id = LIM_CPU; id <= LIM_IO; id++)
		if (p->value[id] && p->mech[id] == MECH_NONE)
			degrade(p, id, MECH_UNENFORCED,
				id == LIM_CPU ? "no cgroup with the cpu controller is usable"
					      : "no cgroup with an io weight is usable");
	list_degraded(p);
}

/* Forget what the cgroups' mechanisms decided for pids, memory, cpu, io. */
static void reset_cgroup_limits(LimitsPlan *p)
{
	for (LimitId id = LIM_PIDS; id <= LIM_IO; id++) {
		p->mech[id] = MECH_NONE;
		p->why[id] = NULL;
		p->degraded_id[id] = false;
		p->rlim[id] = (struct rlimit){ 0, 0 };
	}
}

/* Half of @host, the caller's own limit: whatever a run is given, the
 * user's other processes keep the rest. 0 or "unlimited": no clamp. */
static uint64_t share_of(uint64_t want, uint64_t host)
{
	if (host == 0 || host == RLIM_INFINITY)
		return want;
	host /= 2;
	return want > host ? (host ? host : 1) : want;
}

static uint64_t read_sysctl_user(const char *name)
{
	char path[96], buf[32];

	snprintf(path, sizeof(path), "/proc/sys/user/%s", name);
	if (limits_read_text(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

static bool add_sysctl(LimitsPlan *p, const char *name, uint64_t v)
{
	SysctlWrite *w;

	if (p->n_sysctl >= SYSCTL_MAX)
		return false;
	w = &p->sysctl[p->n_sysctl++];
	snprintf(w->path, sizeof(w->path), "/proc/sys/user/%s", name);
	snprintf(w->value, sizeof(w->value), "%llu", (unsigned long long)v);
	return true;
}

/* The /proc/sys/user shares. The child writes them with CAP_SYS_RESOURCE in
 * its own user namespace (the only one for which the kernel lets it),
 * through the host's /proc before the view replaces it. A read-only
 * /proc/sys (some containers) leaves the counters shared: said so. */
static void plan_userns_shares(LimitsPlan *p)
{
	struct statvfs sv;
	bool writable = statvfs("/proc/sys/user", &sv) == 0 && !(sv.f_flag & ST_RDONLY);

	for (LimitId id = LIM_INOTIFY_INSTANCES; id <= LIM_INOTIFY_WATCHES; id++) {
		if (!p->requested[id])
			continue;
		p->value[id] = share_of(p->requested[id], read_sysctl_user(limit_info[id].sysctl[0]));
		if (!writable) {
			degrade(p, id, MECH_UNENFORCED,
				"/proc/sys is read-only here: the counter is shared with the user");
			continue;
		}
		p->mech[id] = MECH_USERNS;
		for (size_t i = 0; i < ELEMENTSOF(limit_info[id].sysctl); i++) {
			const char *name = limit_info[id].sysctl[i];
			char path[96];

			snprintf(path, sizeof(path), "/proc/sys/user/%s", name);
			/* fanotify's files are Linux 5.13+. */
			if (access(path, F_OK) == 0)
				(void)add_sysctl(p, name, share_of(p->requested[id], read_sysctl_user(name)));
		}
	}
	if (!writable)
		return;
	for (size_t i = 0; i < ELEMENTSOF(ns_sysctls); i++) {
		char path[96];

		snprintf(path, sizeof(path), "/proc/sys/user/%s", ns_sysctls[i]);
		if (access(path, F_OK) == 0)
			(void)add_sysctl(p, ns_sysctls[i],
					 share_of(NS_SHARE, read_sysctl_user(ns_sysctls[i])));
	}
}

/* RLIMIT_SIGPENDING, RLIMIT_MSGQUEUE and (for SHM_LOCK) RLIMIT_MEMLOCK are
 * counted per user and charged to every ancestor user namespace as well: a
 * lower limit inside is a share. */
static void plan_rlimit_shares(LimitsPlan *p)
{
	for (LimitId id = LIM_SIGPENDING; id <= LIM_MEMLOCK; id++) {
		uint64_t unit = id == LIM_SIGPENDING ? 1 : 1024;
		struct rlimit cur = { RLIM_INFINITY, RLIM_INFINITY };
		rlim_t v;

		if (!p->requested[id])
			continue;
		(void)getrlimit(limit_info[id].resource, &cur);
		v = (rlim_t)share_of(p->requested[id] * unit, cur.rlim_cur);
		p->value[id] = v / unit;
		p->mech[id] = MECH_RLIMIT;
		p->rlim[id] = (struct rlimit){ v, v };
	}
}

static int plan_new(const WardPolicy *pol, const char *session_id, bool userns, LimitsPlan **ret)
{
	LimitsPlan *p;
	struct rlimit cur;

	if (!pol || !ret || !session_id_valid(session_id))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cg = (LimitsCgroup)LIMITS_CGROUP_INIT;
	snprintf(p->session, sizeof(p->session), "%s", session_id);
	p->requested[LIM_PIDS] = pol->pids;
	p->requested[LIM_MEMORY] = pol->memory_mb;
	p->requested[LIM_CPU] = pol->cpu_percent;
	p->requested[LIM_IO] = pol->io_weight;
	p->requested[LIM_NOFILE] = pol->nofile;
	p->requested[LIM_TMP] = pol->tmp_mb;
	p->requested[LIM_SHM] = pol->shm_mb;
	p->requested[LIM_TIMEOUT] = pol->timeout_s;
	p->requested[LIM_INOTIFY_INSTANCES] = pol->inotify_instances;
	p->requested[LIM_INOTIFY_WATCHES] = pol->inotify_watches;
	p->requested[LIM_SIGPENDING] = pol->sigpending;
	p->requested[LIM_MSGQUEUE] = pol->msgqueue_kb;
	p->requested[LIM_MEMLOCK] = pol->memlock_kb;
	memcpy(p->value, p->requested, sizeof(p->value));
	p->mech[LIM_CORE] = MECH_RLIMIT; /* core dumps are always off */
	p->rlim[LIM_CORE] = (struct rlimit){ 0, 0 };
	/* The tmpfs sizes (limits_tmpfs_mb): a memory limit bounds them too. */
	if (pol->tmp_mb) {
		p->mech[LIM_TMP] = MECH_TMPFS;
		p->value[LIM_TMP] = limits_tmpfs_mb(pol, false);
	}
	if (pol->shm_mb) {
		p->mech[LIM_SHM] = MECH_TMPFS;
		p->value[LIM_SHM] = limits_tmpfs_mb(pol, true);
	}
	if (pol->timeout_s)
		p->mech[LIM_TIMEOUT] = MECH_TIMER;

	/* The sandbox's processes count against the user's RLIMIT_NPROC
	 * (ucounts are hierarchical) whatever holds pids: keep it a share.
	 * Root is exempt from RLIMIT_NPROC, so its limit is no quota. */
	if (pol->pids && getuid() != 0 && getrlimit(RLIMIT_NPROC, &cur) == 0)
		p->value[LIM_PIDS] = share_of(pol->pids, cur.rlim_cur);

	p->wants_cgroup = pol->pids || pol->memory_mb || pol->cpu_percent || pol->io_weight;
	/* Tier 1 makes its cgroup right after this (limits_acquire redoes
	 * the cgroup part): no prediction to throw away. */
	if (p->wants_cgroup && userns)
		predict_cgroups(p);
	resolve_uncounted(p);
	if (pol->nofile) {
		/* The hard limit cannot be raised without CAP_SYS_RESOURCE in
		 * the initial namespace: clamp, and say so in describe. */
		rlim_t v = (rlim_t)pol->nofile;

		if (getrlimit(RLIMIT_NOFILE, &cur) == 0 && cur.rlim_max != RLIM_INFINITY &&
		    v > cur.rlim_max)
			v = cur.rlim_max;
		p->mech[LIM_NOFILE] = MECH_RLIMIT;
		p->rlim[LIM_NOFILE] = (struct rlimit){ v, v };
		p->value[LIM_NOFILE] = v;
	}
	if (userns)
		plan_userns_shares(p);
	else
		for (LimitId id = LIM_INOTIFY_INSTANCES; id <= LIM_INOTIFY_WATCHES; id++)
			if (p->requested[id]) {
				/* A gap of the tier (docs/tiers.md), not of this
				 * host: described, not degraded, as tmp_mb is. */
				p->mech[id] = MECH_UNENFORCED;
				p->why[id] = "no user namespace at tier 1: the counter is the user's own";
			}
	plan_rlimit_shares(p);
	list_degraded(p);
	*ret = p;
	return 0;
}

int limits_plan_new(const WardPolicy *pol, const char *session_id, LimitsPlan **ret)
{
	return plan_new(pol, session_id, true, ret);
}

int limits_plan_new_host(const WardPolicy *pol, const char *session_id, LimitsPlan **ret)
{
	return plan_new(pol, session_id, false, ret);
}

int limits_acquire(LimitsPlan *p)
{
	if (!p)
		return -EINVAL;
	if (p->acquired)
		return 0;
	p->acquired = true;
	if (!p->wants_cgroup)
		return 0;
	/* The prediction becomes what the kernel made. */
	reset_cgroup_limits(p);
	p->cg.v2_error = 0;
	plan_cgroups(p, p->session);
	resolve_uncounted(p);
	return 0;
}

uint64_t limits_tmpfs_mb(const WardPolicy *pol, bool shm)
{
	uint64_t v = shm ? (pol->shm_mb ? pol->shm_mb : 64) : (pol->tmp_mb ? pol->tmp_mb : 1024);

	/* tmpfs pages are memory: no single tmpfs may hold more than the
	 * memory limit (a cgroup also charges them; without one, this
	 * bounds what the rlimit does not count). */
	return pol->memory_mb && pol->memory_mb < v ? pol->memory_mb : v;
}

int limits_apply_userns(const LimitsPlan *plan)
{
	if (!plan)
		return -EINVAL;
	for (size_t i = 0; i < plan->n_sysctl; i++) {
		int fd = open(plan->sysctl[i].path, O_WRONLY | O_CLOEXEC);
		size_t len = strlen(plan->sysctl[i].value);
		ssize_t n;

		if (fd < 0)
			return -errno;
		n = write(fd, plan->sysctl[i].value, len);
		(void)close(fd);
		if (n != (ssize_t)len)
			return n < 0 ? -errno : -EIO;
	}
	return 0;
}

char *const *limits_plan_degraded(const LimitsPlan *plan)
{
	return plan ? plan->degraded : NULL;
}

int limits_cgroup_fd(const LimitsPlan *plan)
{
	return plan && plan->cg.v2_fd >= 0 ? plan->cg.v2_fd : -1;
}

const char *limits_cgroup_path(const LimitsPlan *plan)
{
	if (!plan)
		return NULL;
	if (plan->cg.v2_path)
		return plan->cg.v2_path;
	for (CgroupV1 i = 0; i < _CG_V1_MAX; i++)
		if (plan->cg.v1_path[i])
			return plan->cg.v1_path[i];
	return NULL;
}

int limits_attach(LimitsPlan *plan, pid_t pid)
{
	if (!plan || pid <= 0)
		return -EINVAL;
	/* Also after clone3(CLONE_INTO_CGROUP): moving a task into the
	 * cgroup it is already in changes nothing. */
	return limits_cgroup_attach(&plan->cg, pid);
}

static int apply_child(const LimitsPlan *plan, CgroupV2Join v2)
{
	int r;

	if (!plan)
		return -EINVAL;
	r = limits_cgroup_join_self(&plan->cg, v2);
	if (r < 0)
		return r;
	for (LimitId id = 0; id < _LIM_MAX; id++) {
		if (plan->mech[id] != MECH_RLIMIT)
			continue;
		if (setrlimit(limit_info[id].resource, &plan->rlim[id]) < 0)
			return -errno;
	}
	return 0;
}

int limits_apply_child(const LimitsPlan *plan)
{
	/* T2's init is in the v2 cgroup before it gets here: born there
	 * (clone3 CLONE_INTO_CGROUP), or moved by the supervisor before the
	 * go byte (the clone fallback). Writing cgroup.procs again would
	 * only wait for an RCU grace period, per run. */
	return apply_child(plan, CG_V2_JOIN_SKIP);
}

int limits_apply_child_host(const LimitsPlan *plan, bool in_cgroup)
{
	return apply_child(plan, in_cgroup ? CG_V2_JOIN_SKIP : CG_V2_JOIN_MUST);
}

const char *limits_mechanism(const LimitsPlan *plan, const char *name)
{
	if (!plan || !name)
		return NULL;
	for (LimitId id = 0; id < _LIM_MAX; id++)
		if (strcmp(limit_info[id].name, name) == 0)
			return mech_names[plan->mech[id]];
	return NULL;
}

cJSON *limits_describe(const LimitsPlan *plan)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !plan)
		return o;
	for (LimitId id = 0; id < _LIM_MAX; id++) {
		cJSON *e;

		if (plan->mech[id] == MECH_NONE)
			continue;
		e = cJSON_AddObjectToObject(o, limit_info[id].name);
		if (!e || !cJSON_AddNumberToObject(e, "value", (double)plan->value[id]) ||
		    !cJSON_AddStringToObject(e, "mechanism", mech_names[plan->mech[id]]))
			goto oom;
		if (plan->mech[id] == MECH_RLIMIT &&
		    !cJSON_AddStringToObject(e, "rlimit", limit_info[id].rlimit_name))
			goto oom;
		if (plan->why[id] && !cJSON_AddStringToObject(e, "reason", plan->why[id]))
			goto oom;
		if (plan->degraded_id[id] && !cJSON_AddBoolToObject(e, "degraded", true))
			goto oom;
		if (plan->value[id] != plan->requested[id] && id != LIM_CORE &&
		    !cJSON_AddNumberToObject(e, "requested", (double)plan->requested[id]))
			goto oom;
	}
	if (limits_cgroup_path(plan) &&
	    !cJSON_AddStringToObject(o, "cgroup", limits_cgroup_path(plan)))
		goto oom;
	if (plan->cg.v2_error &&
	    !cJSON_AddStringToObject(o, "cgroup_v2_unavailable", strerror(plan->cg.v2_error)))
		goto oom;
	return o;
oom:
	cJSON_Delete(o);
	return NULL;
}

/* "key N" lines of a cgroup *.events file. */
static long events_value(int dirfd, const char *file, const char *key)
{
	char buf[1024];
	_cleanup_close_ int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t klen = strlen(key);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, key, klen) == 0 && l[klen] == ' ')
			return strtol(l + klen + 1, NULL, 10);
	return -1;
}

bool limits_oom_killed(const LimitsPlan *plan)
{
	if (!plan)
		return false;
	if (plan->cg.v2_fd >= 0)
		return events_value(plan->cg.v2_fd, "memory.events", "oom_kill") > 0;
	if (plan->cg.v1_fd[CG_V1_MEMORY] >= 0)
		return events_value(plan->cg.v1_fd[CG_V1_MEMORY], "memory.oom_control",
				    "oom_kill") > 0;
	return false;
}

cJSON *limits_events(const LimitsPlan *plan)
{
	long oom, pmax;
	cJSON *o;

	if (!plan || plan->cg.v2_fd < 0)
		return NULL;
	oom = events_value(plan->cg.v2_fd, "memory.events", "oom_kill");
	pmax = events_value(plan->cg.v2_fd, "pids.events", "max");
	o = cJSON_CreateObject();
	if (!o)
		return NULL;
	if ((oom >= 0 && !cJSON_AddNumberToObject(o, "oom_kill", (double)oom)) ||
	    (pmax >= 0 && !cJSON_AddNumberToObject(o, "pids_max", (double)pmax))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
