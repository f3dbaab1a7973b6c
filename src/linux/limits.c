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
	[MECH_UNENFORCED] = "none",
};
/* clang-format on */

typedef enum LimitId {
	LIM_PIDS,
	LIM_MEMORY,
	LIM_NOFILE,
	LIM_TMP,
	LIM_TIMEOUT,
	LIM_CORE,
	_LIM_MAX,
} LimitId;

/* clang-format off */
static const struct {
	const char *name;
	int resource;         /* the rlimit that stands in, -1 none */
	const char *rlimit_name;
	const char *controller; /* the cgroup controller, NULL none */
} limit_info[_LIM_MAX] = {
	[LIM_PIDS] = { "pids", RLIMIT_NPROC, "RLIMIT_NPROC", "pids" },
	/* RLIMIT_DATA, not RLIMIT_AS: it counts private writable memory and
	 * brk, not address-space reservations, so JITs and Go's arena
	 * reservations keep working. It is per process. */
	[LIM_MEMORY] = { "memory_mb", RLIMIT_DATA, "RLIMIT_DATA", "memory" },
	[LIM_NOFILE] = { "nofile", RLIMIT_NOFILE, "RLIMIT_NOFILE", NULL },
	[LIM_TMP] = { "tmp_mb", -1, NULL, NULL },
	[LIM_TIMEOUT] = { "timeout_s", -1, NULL, NULL },
	[LIM_CORE] = { "core", RLIMIT_CORE, "RLIMIT_CORE", NULL },
};
/* clang-format on */

struct LimitsPlan {
	uint64_t value[_LIM_MAX];     /* as applied (nofile may be clamped) */
	uint64_t requested[_LIM_MAX]; /* as the policy asked */
	LimitMech mech[_LIM_MAX];
	struct rlimit rlim[_LIM_MAX]; /* precomputed for the child */
	const char *why[_LIM_MAX];    /* for MECH_UNENFORCED */
	char *degraded[_LIM_MAX + 1]; /* static strings, NULL-terminated */
	LimitsCgroup cg;
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

/* pids and memory: v2, else (root on a hybrid host) v1, else rlimits. */
static void plan_cgroups(LimitsPlan *p, const char *session_id)
{
	uint64_t mem = p->requested[LIM_MEMORY] * 1024 * 1024;
	int r;

	r = limits_cgroup_v2_create(&p->cg, session_id, p->requested[LIM_PIDS], mem);
	if (r >= 0) {
		for (LimitId id = LIM_PIDS; id <= LIM_MEMORY; id++)
			if (p->requested[id])
				p->mech[id] = MECH_CGROUP;
		return;
	}
	limits_cgroup_destroy(&p->cg);
	p->cg.v2_error = -r;

	for (LimitId id = LIM_PIDS; id <= LIM_MEMORY; id++) {
		uint64_t v = id == LIM_MEMORY ? mem : p->requested[id];

		if (v && limits_cgroup_v1_create(&p->cg, limit_info[id].controller, session_id,
						 v) >= 0)
			p->mech[id] = MECH_CGROUP_V1;
	}
	/* A v1 cgroup that failed half-way keeps its path for destroy. */
}

int limits_plan_new(const WardPolicy *pol, const char *session_id, LimitsPlan **ret)
{
	LimitsPlan *p;
	struct rlimit cur;

	if (!pol || !ret || !session_id_valid(session_id))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cg = (LimitsCgroup)LIMITS_CGROUP_INIT;
	p->requested[LIM_PIDS] = pol->pids;
	p->requested[LIM_MEMORY] = pol->memory_mb;
	p->requested[LIM_NOFILE] = pol->nofile;
	p->requested[LIM_TMP] = pol->tmp_mb;
	p->requested[LIM_TIMEOUT] = pol->timeout_s;
	memcpy(p->value, p->requested, sizeof(p->value));
	p->mech[LIM_CORE] = MECH_RLIMIT; /* core dumps are always off */
	p->rlim[LIM_CORE] = (struct rlimit){ 0, 0 };
	if (pol->tmp_mb)
		p->mech[LIM_TMP] = MECH_TMPFS;
	if (pol->timeout_s)
		p->mech[LIM_TIMEOUT] = MECH_TIMER;

	if (pol->pids || pol->memory_mb)
		plan_cgroups(p, session_id);
	for (LimitId id = LIM_PIDS; id <= LIM_MEMORY; id++) {
		rlim_t v = id == LIM_MEMORY ? (rlim_t)p->requested[id] * 1024 * 1024
					    : (rlim_t)p->requested[id];

		if (!p->requested[id] || p->mech[id] != MECH_NONE)
			continue;
		if (id == LIM_PIDS && getuid() == 0) {
			/* fork() exempts the global root user from
			 * RLIMIT_NPROC (kernel/fork.c: INIT_USER), user
			 * namespace or not: an rlimit would be a pretence. */
			p->mech[id] = MECH_UNENFORCED;
			p->why[id] = "RLIMIT_NPROC does not apply to uid 0 and no cgroup is usable";
			p->degraded[0] = (char *)"limit-pids";
			continue;
		}
		p->mech[id] = MECH_RLIMIT;
		p->rlim[id] = (struct rlimit){ v, v };
	}
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
	*ret = p;
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
	return plan->cg.v2_path ? plan->cg.v2_path
	       : plan->cg.v1_pids ? plan->cg.v1_pids
				  : plan->cg.v1_memory;
}

int limits_attach(LimitsPlan *plan, pid_t pid)
{
	if (!plan || pid <= 0)
		return -EINVAL;
	/* Also after clone3(CLONE_INTO_CGROUP): moving a task into the
	 * cgroup it is already in changes nothing. */
	return limits_cgroup_attach(&plan->cg, pid);
}

int limits_apply_child(const LimitsPlan *plan)
{
	int r;

	if (!plan)
		return -EINVAL;
	r = limits_cgroup_join_self(&plan->cg);
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
		if (plan->mech[id] == MECH_UNENFORCED &&
		    !cJSON_AddStringToObject(e, "reason", plan->why[id]))
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
