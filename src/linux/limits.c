/* Resource limits: a cgroup v2 subtree (ward.slice/<session>) under the
 * nearest cgroup this user may write and that offers the controllers, else
 * the nearest rlimit. Decided and created in the parent; the child only calls
 * setrlimit. The cgroup is the stronger mechanism: it counts the whole tree
 * (rlimits are per process, or per uid in the user namespace for NPROC) and
 * lets the kernel kill what is left when the run ends (cgroup.kill). */
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
#include "linux/limits.h"

typedef enum LimitMech {
	MECH_NONE,
	MECH_CGROUP,
	MECH_RLIMIT,
	MECH_TMPFS,
	MECH_TIMER,
	_MECH_MAX,
} LimitMech;

static const char *const mech_names[_MECH_MAX] = {
	[MECH_NONE] = NULL,     [MECH_CGROUP] = "cgroup", [MECH_RLIMIT] = "rlimit",
	[MECH_TMPFS] = "tmpfs", [MECH_TIMER] = "timer",
};

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
	char *cgroup_path;
	int cgroup_fd;
	int cgroup_errno; /* why no cgroup, for the audit event */
	bool attached;
};

/* Read a small file into @buf (NUL-terminated). */
static int read_text(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	if (n < 0)
		return -errno;
	buf[len] = '\0';
	return (int)len;
}

static int write_at(int dirfd, const char *name, const char *text)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		return -errno;
	return 0;
}

int limits_parse_self_cgroup(const char *text, char *ret, size_t n)
{
	for (const char *l = text; l && *l;) {
		const char *e = strchrnul(l, '\n');

		if (strncmp(l, "0::", 3) == 0) {
			size_t len = (size_t)(e - l - 3);

			if (len == 0 || len >= n || l[3] != '/')
				return -EINVAL;
			memcpy(ret, l + 3, len);
			ret[len] = '\0';
			return 0;
		}
		l = *e ? e + 1 : e;
	}
	return -ENOENT;
}

/* Mount points in mountinfo escape space, tab, newline and backslash as \ooo. */
static int unescape_into(const char *s, size_t len, char *ret, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3') {
			c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= n)
			return -ENAMETOOLONG;
		ret[o++] = c;
	}
	ret[o] = '\0';
	return 0;
}

int limits_parse_cgroup2_mount(const char *mountinfo, char *ret, size_t n)
{
	for (const char *l = mountinfo; l && *l;) {
		const char *e = strchrnul(l, '\n');
		const char *sep = strstr(l, " - ");

		if (sep && sep < e && strncmp(sep + 3, "cgroup2 ", 8) == 0) {
			/* Fields: id parent major:minor root mountpoint ... */
			const char *f = l;

			for (int i = 0; i < 4 && f; i++) {
				f = memchr(f, ' ', (size_t)(e - f));
				f = f ? f + 1 : NULL;
			}
			if (f) {
				const char *fe = memchr(f, ' ', (size_t)(e - f));

				if (fe)
					return unescape_into(f, (size_t)(fe - f), ret, n);
			}
		}
		l = *e ? e + 1 : e;
	}
	return -ENOENT;
}

bool limits_controllers_have(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; p && *p;) {
		while (*p == ' ' || *p == '\n')
			p++;
		if (strncmp(p, name, len) == 0 && (p[len] == ' ' || p[len] == '\n' || !p[len]))
			return true;
		p = strpbrk(p, " \n");
	}
	return false;
}

/* Can ward create ward.slice/<session> under @base with the pids and
 * memory controllers? Only the root cgroup may have processes and enable
 * controllers for its children at once ("no internal processes"). */
static int base_usable(const char *base, bool is_root)
{
	char path[4096 + 64], buf[512];
	int r;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", base);
	r = read_text(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	if (!limits_controllers_have(buf, "pids") || !limits_controllers_have(buf, "memory"))
		return -EOPNOTSUPP;
	if (access(base, W_OK | X_OK) < 0)
		return -EACCES;
	snprintf(path, sizeof(path), "%s/cgroup.procs", base);
	if (access(path, W_OK) < 0)
		return -EACCES;
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", base);
	if (access(path, W_OK) < 0)
		return -EACCES;
	if (is_root)
		return 0;
	r = read_text(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	if (limits_controllers_have(buf, "pids") && limits_controllers_have(buf, "memory"))
		return 0;
	/* Not enabled yet: possible only if no process lives there. */
	snprintf(path, sizeof(path), "%s/cgroup.procs", base);
	r = read_text(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	return r == 0 ? 0 : -EBUSY;
}

int limits_cgroup_find_base(char *ret, size_t n)
{
	char text[4096], mnt[1024], self[2048], base[4096];
	int r, best = -EOPNOTSUPP;

	{
		/* mountinfo can be long in a container: 1 MiB is plenty. */
		_cleanup_free_ char *mi = malloc(1 << 20);

		if (!mi)
			return -ENOMEM;
		r = read_text("/proc/self/mountinfo", mi, 1 << 20);
		if (r >= 0)
			r = limits_parse_cgroup2_mount(mi, mnt, sizeof(mnt));
		if (r < 0)
			return -ENOENT;
	}
	r = read_text("/proc/self/cgroup", text, sizeof(text));
	if (r < 0)
		return r;
	r = limits_parse_self_cgroup(text, self, sizeof(self));
	if (r < 0)
		return -ENOENT;

	/* Root may use the top of its cgroup namespace; everyone tries the
	 * ancestors of their own cgroup, nearest first (a delegated
	 * user@.service subtree, a container's delegated root). */
	if (geteuid() == 0) {
		r = base_usable(mnt, true);
		if (r == 0) {
			snprintf(ret, n, "%s", mnt);
			return 0;
		}
		best = r;
	}
	for (char *slash = strrchr(self, '/'); slash && slash != self; slash = strrchr(self, '/')) {
		*slash = '\0';
		snprintf(base, sizeof(base), "%s%s", mnt, self);
		r = base_usable(base, false);
		if (r == 0) {
			snprintf(ret, n, "%s", base);
			return 0;
		}
		if (r != -ENOENT)
			best = r;
	}
	return best;
}

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

static int enable_controllers(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = write_at(fd, "cgroup.subtree_control", "+pids");
	if (r >= 0)
		r = write_at(fd, "cgroup.subtree_control", "+memory");
	return r;
}

/* Remove session cgroups a killed ward left behind. Only empty ones go
 * (rmdir fails on a populated cgroup), and only older than a minute, so a
 * concurrent run's cgroup between mkdir and clone is not taken. */
static void remove_stale(const char *slice)
{
	_cleanup_closedir_ DIR *d = opendir(slice);
	struct dirent *de;
	time_t now = time(NULL);

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    now - st.st_mtime < 60)
			continue;
		(void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
}

static int cgroup_create(LimitsPlan *p, const char *session_id)
{
	char base[4096], path[4096 + 256], num[32];
	_cleanup_close_ int fd = -EBADF;
	int r;

	r = limits_cgroup_find_base(base, sizeof(base));
	if (r < 0)
		return r;
	r = enable_controllers(base);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/ward.slice", base);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	r = enable_controllers(path);
	if (r < 0)
		return r;
	remove_stale(path);
	snprintf(path, sizeof(path), "%s/ward.slice/%s", base, session_id);
	if (mkdir(path, 0755) < 0) {
		if (errno != EEXIST)
			return -errno;
		/* Left by an earlier run of this session; gone if empty. */
		if (rmdir(path) < 0 || mkdir(path, 0755) < 0)
			return -errno;
	}
	p->cgroup_path = strdup(path);
	if (!p->cgroup_path) {
		(void)rmdir(path);
		return -ENOMEM;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (p->requested[LIM_PIDS]) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)p->requested[LIM_PIDS]);
		r = write_at(fd, "pids.max", num);
		if (r < 0)
			return r;
	}
	if (p->requested[LIM_MEMORY]) {
		snprintf(num, sizeof(num), "%llu",
			 (unsigned long long)p->requested[LIM_MEMORY] * 1024 * 1024);
		r = write_at(fd, "memory.max", num);
		if (r < 0)
			return r;
		/* Without this the hog moves to swap instead of stopping;
		 * absent when the kernel has no swap accounting. */
		(void)write_at(fd, "memory.swap.max", "0");
	}
	p->cgroup_fd = TAKE_FD(fd);
	return 0;
}

static void cgroup_destroy(LimitsPlan *p)
{
	if (!p->cgroup_path)
		return;
	if (p->cgroup_fd >= 0 && write_at(p->cgroup_fd, "cgroup.kill", "1") < 0) {
		/* Before Linux 5.14: kill what cgroup.procs lists. */
		char buf[4096];
		char path[4096 + 32];

		snprintf(path, sizeof(path), "%s/cgroup.procs", p->cgroup_path);
		if (read_text(path, buf, sizeof(buf)) > 0)
			for (char *s = buf, *e; *s; s = e) {
				long pid = strtol(s, &e, 10);

				if (e == s)
					break;
				if (pid > 0)
					(void)kill((pid_t)pid, SIGKILL);
			}
	}
	/* rmdir fails with EBUSY until the killed tasks are gone; they go
	 * quickly, so a bounded retry is enough (a leftover empty cgroup is
	 * removed by the next run's remove_stale). */
	for (int i = 0; i < 200 && rmdir(p->cgroup_path) < 0 && errno == EBUSY; i++) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		(void)nanosleep(&ts, NULL);
	}
}

LimitsPlan *limits_plan_free(LimitsPlan *plan)
{
	if (!plan)
		return NULL;
	cgroup_destroy(plan);
	if (plan->cgroup_fd >= 0)
		(void)close(plan->cgroup_fd);
	free(plan->cgroup_path);
	free(plan);
	return NULL;
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
	p->cgroup_fd = -EBADF;
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

	if (pol->pids || pol->memory_mb) {
		int r = cgroup_create(p, session_id);

		if (r < 0) {
			p->cgroup_errno = -r;
			cgroup_destroy(p);
			free(p->cgroup_path);
			p->cgroup_path = NULL;
			if (p->cgroup_fd >= 0)
				(void)close(p->cgroup_fd);
			p->cgroup_fd = -EBADF;
		}
	}
	for (LimitId id = LIM_PIDS; id <= LIM_MEMORY; id++) {
		if (!p->requested[id])
			continue;
		if (p->cgroup_path)
			p->mech[id] = MECH_CGROUP;
		else {
			rlim_t v = id == LIM_MEMORY ? (rlim_t)p->requested[id] * 1024 * 1024
						    : (rlim_t)p->requested[id];

			p->mech[id] = MECH_RLIMIT;
			p->rlim[id] = (struct rlimit){ v, v };
		}
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

int limits_cgroup_fd(const LimitsPlan *plan)
{
	return plan && plan->cgroup_fd >= 0 ? plan->cgroup_fd : -1;
}

const char *limits_cgroup_path(const LimitsPlan *plan)
{
	return plan ? plan->cgroup_path : NULL;
}

int limits_attach(LimitsPlan *plan, pid_t pid)
{
	char num[32];
	int r;

	if (!plan || pid <= 0)
		return -EINVAL;
	if (plan->cgroup_fd < 0 || plan->attached)
		return 0;
	snprintf(num, sizeof(num), "%d", (int)pid);
	r = write_at(plan->cgroup_fd, "cgroup.procs", num);
	if (r >= 0)
		plan->attached = true;
	return r;
}

int limits_apply_child(const LimitsPlan *plan)
{
	if (!plan)
		return -EINVAL;
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
		if (plan->value[id] != plan->requested[id] && id != LIM_CORE &&
		    !cJSON_AddNumberToObject(e, "requested", (double)plan->requested[id]))
			goto oom;
	}
	if (plan->cgroup_path && !cJSON_AddStringToObject(o, "cgroup", plan->cgroup_path))
		goto oom;
	if (!plan->cgroup_path && plan->cgroup_errno &&
	    !cJSON_AddStringToObject(o, "cgroup_unavailable", strerror(plan->cgroup_errno)))
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

	if (!plan || plan->cgroup_fd < 0)
		return NULL;
	oom = events_value(plan->cgroup_fd, "memory.events", "oom_kill");
	pmax = events_value(plan->cgroup_fd, "pids.events", "max");
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
