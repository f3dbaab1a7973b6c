/* The run's cgroups for limits.c: cgroup v2 first, the v1 pids and memory
 * hierarchies as root's fallback on a hybrid host. See limits-cgroup.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "linux/limits-cgroup.h"
#include "linux/limits.h"

/* Read a small file into @buf (NUL-terminated). */
int limits_read_text(const char *path, char *buf, size_t size)
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

int limits_write_at(int dirfd, const char *name, const char *text)
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

/* Where a hierarchy is mounted: cgroup2 when @controller is NULL, else
 * the v1 hierarchy holding @controller. The usual places are checked with
 * statfs() first (a few microseconds); reading mountinfo costs ~50 us on
 * the development VM and is only the fallback for unusual layouts. */
static int v1_mount(const char *mountinfo, const char *controller, char *ret, size_t n);

static int find_mount(const char *controller, char *ret, size_t n)
{
	_cleanup_free_ char *mi = NULL;
	char path[256];
	struct statfs sf;
	int r;

	if (!controller) {
		static const char *const places[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
		bool v1_layout = false;

		for (size_t i = 0; i < ELEMENTSOF(places); i++) {
			if (statfs(places[i], &sf) == 0) {
				if (sf.f_type == CGROUP2_SUPER_MAGIC) {
					snprintf(ret, n, "%s", places[i]);
					return 0;
				}
				v1_layout = i == 0 && sf.f_type == TMPFS_MAGIC;
			} else if (i == 1 && errno == ENOENT && v1_layout &&
				   statfs("/sys/fs/cgroup/pids", &sf) == 0 &&
				   sf.f_type == CGROUP_SUPER_MAGIC)
				/* A tmpfs of v1 hierarchies, no unified/ beside
				 * them, and pids bound to v1 (a controller is in
				 * one hierarchy only): a cgroup v1 container or
				 * a legacy host, where a cgroup2 mounted anywhere
				 * else could not offer pids, so none would do.
				 * Said without reading mountinfo, which was the
				 * one step of a pod's tier-1 run that the host's
				 * did not make (docs/kubernetes.md). */
				return -ENOENT;
		}
	} else {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s", controller);
		/* systemd's layout: one directory per controller, named after
		 * it (co-mounted ones get symlinks: cpu -> cpu,cpuacct). */
		if (statfs(path, &sf) == 0 && sf.f_type == CGROUP_SUPER_MAGIC) {
			snprintf(ret, n, "%s", path);
			return 0;
		}
	}
	/* mountinfo can be long in a container: 1 MiB is plenty. */
	mi = malloc(1 << 20);
	if (!mi)
		return -ENOMEM;
	r = limits_read_text("/proc/self/mountinfo", mi, 1 << 20);
	if (r < 0)
		return r;
	return controller ? v1_mount(mi, controller, ret, n)
			  : limits_parse_cgroup2_mount(mi, ret, n);
}

/* Can ward create ward.slice/<session> under @base with the pids and
 * memory controllers? Only the root cgroup may have processes and enable
 * controllers for its children at once ("no internal processes"). */
static int base_usable(const char *base, bool is_root)
{
	char path[4096 + 64], buf[512];
	int r;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", base);
	r = limits_read_text(path, buf, sizeof(buf));
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
	r = limits_read_text(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	if (limits_controllers_have(buf, "pids") && limits_controllers_have(buf, "memory"))
		return 0;
	/* Not enabled yet: possible only if no process lives there. */
	snprintf(path, sizeof(path), "%s/cgroup.procs", base);
	r = limits_read_text(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	return r == 0 ? 0 : -EBUSY;
}

int limits_cgroup_find_base(char *ret, size_t n)
{
	char text[4096], mnt[1024], self[2048], base[4096];
	int r, best = -EOPNOTSUPP;

	r = find_mount(NULL, mnt, sizeof(mnt));
	if (r < 0)
		return -ENOENT;
	r = limits_read_text("/proc/self/cgroup", text, sizeof(text));
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

/* pids and memory are required; cpu and io are enabled where @dir's
 * parent offers them (an error there only means the limit is not held). */
static int enable_controllers(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[4096 + 32], buf[512];
	int r;

	if (fd < 0)
		return -errno;
	r = limits_write_at(fd, "cgroup.subtree_control", "+pids");
	if (r >= 0)
		r = limits_write_at(fd, "cgroup.subtree_control", "+memory");
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
	if (limits_read_text(path, buf, sizeof(buf)) >= 0) {
		if (limits_controllers_have(buf, "cpu"))
			(void)limits_write_at(fd, "cgroup.subtree_control", "+cpu");
		if (limits_controllers_have(buf, "io"))
			(void)limits_write_at(fd, "cgroup.subtree_control", "+io");
	}
	return 0;
}

/* The CFS quota for @percent of one CPU per 100 ms period. */
static uint64_t cpu_quota_us(uint64_t percent)
{
	return percent * 1000;
}

/* The io weight files, the BFQ one first: io.weight (io.cost) does
 * nothing unless io.cost is enabled for the device, BFQ's weight works
 * wherever BFQ schedules the device. */
static int set_io_weight(int fd, bool v2, uint64_t weight)
{
	char num[32];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)weight);
	if (v2)
		return limits_write_at(fd, "io.bfq.weight", num) >= 0 ||
				       limits_write_at(fd, "io.weight", num) >= 0
			       ? 0
			       : -EOPNOTSUPP;
	/* v1: BFQ's range is 1..1000, CFQ's was 10..1000. */
	snprintf(num, sizeof(num), "%llu",
		 (unsigned long long)(weight > 1000 ? 1000 : weight < 10 ? 10 : weight));
	return limits_write_at(fd, "blkio.bfq.weight", num) >= 0 ||
			       limits_write_at(fd, "blkio.weight", num) >= 0
		       ? 0
		       : -EOPNOTSUPP;
}

/* Remove session cgroups a killed ward left behind. Only empty ones go
 * (rmdir fails on a populated cgroup), and only older than a minute, so a
 * concurrent run's cgroup between mkdir and clone is not taken. */
static void remove_stale_prefixed(const char *slice, const char *prefix)
{
	_cleanup_closedir_ DIR *d = opendir(slice);
	struct dirent *de;
	time_t now = time(NULL);

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    now - st.st_mtime < 60)
			continue;
		(void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
}

int limits_cgroup_v2_create(LimitsCgroup *cg, const char *session_id, const CgroupWant *want,
			    unsigned *ret_holds)
{
	uint64_t pids = want->pids, memory_bytes = want->memory_bytes;
	unsigned holds = 0;
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
	remove_stale_prefixed(path, "");
	snprintf(path, sizeof(path), "%s/ward.slice/%s", base, session_id);
	if (mkdir(path, 0755) < 0) {
		if (errno != EEXIST)
			return -errno;
		/* Left by an earlier run of this session; gone if empty. */
		if (rmdir(path) < 0 || mkdir(path, 0755) < 0)
			return -errno;
	}
	cg->v2_path = strdup(path);
	if (!cg->v2_path) {
		(void)rmdir(path);
		return -ENOMEM;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* From here on a failure leaves cg->v2_path set: the caller's
	 * limits_cgroup_destroy removes the directory. */
	if (pids) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)pids);
		r = limits_write_at(fd, "pids.max", num);
		if (r < 0)
			return r;
	}
	if (memory_bytes) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)memory_bytes);
		r = limits_write_at(fd, "memory.max", num);
		if (r < 0)
			return r;
		/* Without this the hog moves to swap instead of stopping;
		 * absent when the kernel has no swap accounting. */
		(void)limits_write_at(fd, "memory.swap.max", "0");
	}
	if (want->cpu_percent) {
		snprintf(num, sizeof(num), "%llu 100000",
			 (unsigned long long)cpu_quota_us(want->cpu_percent));
		if (limits_write_at(fd, "cpu.max", num) >= 0)
			holds |= CG_HOLDS_CPU;
	}
	if (want->io_weight && set_io_weight(fd, true, want->io_weight) >= 0)
		holds |= CG_HOLDS_IO;
	cg->v2_fd = TAKE_FD(fd);
	*ret_holds = holds;
	return 0;
}

/* Kill every pid listed in @dir/cgroup.procs; returns how many were listed. */
static int kill_listed(const char *dir)
{
	char buf[8192], path[4096 + 32];
	int n = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (limits_read_text(path, buf, sizeof(buf)) <= 0)
		return 0;
	for (char *s = buf, *e; *s; s = e) {
		long pid = strtol(s, &e, 10);

		if (e == s)
			break;
		if (pid > 0) {
			(void)kill((pid_t)pid, SIGKILL);
			n++;
		}
	}
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000 * 1000 };

	(void)nanosleep(&ts, NULL);
}

/* Empty @dir of processes and remove it. cgroup.kill (v2, Linux 5.14) is
 * atomic against forks; otherwise kill what is listed until nothing is
 * (a fork racing the kill shows up on the next read). rmdir fails with
 * EBUSY until the killed tasks are gone; that takes moments, so a bounded
 * retry is enough, and a leftover empty v2 cgroup goes with the next run's
 * remove_stale. */
static void destroy_dir(const char *dir, int fd)
{
	if (!dir)
		return;
	if (fd < 0 || limits_write_at(fd, "cgroup.kill", "1") < 0)
		for (int i = 0; i < 100 && kill_listed(dir) > 0; i++)
			sleep_ms(2);
	for (int i = 0; i < 200 && rmdir(dir) < 0 && errno == EBUSY; i++)
		sleep_ms(5);
}

void limits_cgroup_destroy(LimitsCgroup *cg)
{
	destroy_dir(cg->v2_path, cg->v2_fd);
	for (CgroupV1 i = 0; i < _CG_V1_MAX; i++)
		destroy_dir(cg->v1_path[i], -1);
	if (cg->v2_fd >= 0)
		(void)close(cg->v2_fd);
	for (CgroupV1 i = 0; i < _CG_V1_MAX; i++) {
		if (cg->v1_fd[i] >= 0)
			(void)close(cg->v1_fd[i]);
		free(cg->v1_path[i]);
	}
	free(cg->v2_path);
	*cg = (LimitsCgroup)LIMITS_CGROUP_INIT;
}

/* "N:pids:/path" or "N:cpu,cpuacct:/path" in /proc/self/cgroup. */
static int v1_self_path(const char *text, const char *controller, char *ret, size_t n)
{
	size_t clen = strlen(controller);

	for (const char *l = text; l && *l;) {
		const char *e = strchrnul(l, '\n'), *c1 = memchr(l, ':', (size_t)(e - l));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;

		if (c2)
			for (const char *t = c1 + 1; t < c2;) {
				const char *te = memchr(t, ',', (size_t)(c2 - t));

				te = te ? te : c2;
				if ((size_t)(te - t) == clen && strncmp(t, controller, clen) == 0) {
					int w = snprintf(ret, n, "%.*s", (int)(e - c2 - 1), c2 + 1);

					return w > 0 && (size_t)w < n ? 0 : -ENAMETOOLONG;
				}
				t = te + 1;
			}
		l = *e ? e + 1 : e;
	}
	return -ENOENT;
}

/* The mount point of the v1 hierarchy holding @controller. */
static int v1_mount(const char *mountinfo, const char *controller, char *ret, size_t n)
{
	size_t clen = strlen(controller);

	for (const char *l = mountinfo; l && *l;) {
		const char *e = strchrnul(l, '\n'), *sep = strstr(l, " - ");

		if (sep && sep < e && strncmp(sep + 3, "cgroup ", 7) == 0) {
			/* "- cgroup SOURCE OPTIONS": find @controller in OPTIONS. */
			const char *src = sep + 10, *opts = memchr(src, ' ', (size_t)(e - src));

			for (const char *t = opts ? opts + 1 : e; t < e;) {
				const char *te = memchr(t, ',', (size_t)(e - t));

				te = te ? te : e;
				if ((size_t)(te - t) == clen && strncmp(t, controller, clen) == 0) {
					const char *f = l;

					for (int i = 0; i < 4 && f; i++) {
						f = memchr(f, ' ', (size_t)(e - f));
						f = f ? f + 1 : NULL;
					}
					const char *fe = f ? memchr(f, ' ', (size_t)(e - f)) : NULL;

					if (!fe)
						return -EINVAL;
					return unescape_into(f, (size_t)(fe - f), ret, n);
				}
				t = te + 1;
			}
		}
		l = *e ? e + 1 : e;
	}
	return -ENOENT;
}

int limits_cgroup_v1_find(const char *controller, char *ret, size_t n)
{
	char self[2048], mnt[1024], text[4096];
	int r;

	r = find_mount(controller, mnt, sizeof(mnt));
	if (r < 0)
		return r;
	r = limits_read_text("/proc/self/cgroup", text, sizeof(text));
	if (r < 0)
		return r;
	r = v1_self_path(text, controller, self, sizeof(self));
	if (r < 0)
		return r;
	/* A child of ward's own cgroup: whatever limits the machine set on
	 * ward's cgroup keep covering the run (v1 has no "no internal
	 * processes" rule, so this is allowed). */
	r = snprintf(ret, n, "%s%s", mnt, strcmp(self, "/") == 0 ? "" : self);
	if (r < 0 || (size_t)r >= n)
		return -ENAMETOOLONG;
	if (access(ret, W_OK | X_OK) < 0)
		return -errno;
	return 0;
}

int limits_cgroup_v1_create(LimitsCgroup *cg, CgroupV1 which, const char *session,
			    uint64_t value)
{
	static const char *const controllers[_CG_V1_MAX] = {
		[CG_V1_PIDS] = "pids",
		[CG_V1_MEMORY] = "memory",
		[CG_V1_CPU] = "cpu",
		[CG_V1_BLKIO] = "blkio",
	};
	const char *controller = controllers[which];
	char dir[4096], num[32];
	_cleanup_close_ int fd = -EBADF;
	char **slot = &cg->v1_path[which];
	int *slot_fd = &cg->v1_fd[which];
	int r;

	r = limits_cgroup_v1_find(controller, dir, sizeof(dir));
	if (r < 0)
		return r;
	remove_stale_prefixed(dir, "ward-");
	r = snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/ward-%s", session);
	if (r < 0 || (size_t)r >= sizeof(dir) - 1)
		return -ENAMETOOLONG;
	if (mkdir(dir, 0755) < 0 && (errno != EEXIST || rmdir(dir) < 0 || mkdir(dir, 0755) < 0))
		return -errno;
	*slot = strdup(dir);
	if (!*slot) {
		(void)rmdir(dir);
		return -ENOMEM;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)value);
	switch (which) {
	case CG_V1_PIDS:
		r = limits_write_at(fd, "pids.max", num);
		break;
	case CG_V1_MEMORY:
		r = limits_write_at(fd, "memory.limit_in_bytes", num);
		/* memory+swap as well, where swap accounting exists. */
		if (r >= 0)
			(void)limits_write_at(fd, "memory.memsw.limit_in_bytes", num);
		break;
	case CG_V1_CPU:
		snprintf(num, sizeof(num), "%llu", (unsigned long long)cpu_quota_us(value));
		r = limits_write_at(fd, "cpu.cfs_period_us", "100000");
		if (r >= 0)
			r = limits_write_at(fd, "cpu.cfs_quota_us", num);
		break;
	case CG_V1_BLKIO:
		r = set_io_weight(fd, false, value);
		break;
	case _CG_V1_MAX:
	default:
		r = -EINVAL;
	}
	if (r < 0)
		return r;
	*slot_fd = TAKE_FD(fd);
	return 0;
}

int limits_cgroup_join_self(const LimitsCgroup *cg, CgroupV2Join v2)
{
	const int fds[] = { cg->v2_fd, cg->v1_fd[0], cg->v1_fd[1], cg->v1_fd[2], cg->v1_fd[3] };

	/* "0" is the writing process. Joining before the command is forked
	 * means nothing it starts can be outside the limit, whatever the
	 * parent's limits_cgroup_attach raced with. The v2 cgroup is joined
	 * by clone3(CLONE_INTO_CGROUP) or the supervisor already at T2 (@v2:
	 * CG_V2_JOIN_SKIP), so v1 (root, no clone3 path) fails closed here,
	 * and v2 with CG_V2_JOIN_MUST (T1 after a fork: no one else moves it).
	 *
	 * v1 through "tasks", not "cgroup.procs": moving a whole thread group
	 * takes cgroup_threadgroup_rwsem for writing, which waits for an RCU
	 * grace period (8-20 ms on the development VM, per run); moving the
	 * writing thread itself ("0" to tasks) does not take it (kernel
	 * cgroup_procs_write_start, since Linux 5.2). The caller is init, a
	 * clone3() child with one thread that starts none, so its only thread
	 * is the process: the command it forks next is born in the cgroup,
	 * and memory v1 charges its mm's owner, that same thread. */
	for (size_t i = 0; i < ELEMENTSOF(fds); i++) {
		int fd, r;

		if (fds[i] < 0 || (i == 0 && v2 == CG_V2_JOIN_SKIP))
			continue;
		fd = openat(fds[i], i == 0 ? "cgroup.procs" : "tasks", O_WRONLY | O_CLOEXEC);
		r = fd < 0 ? -errno : write(fd, "0", 1) == 1 ? 0 : -errno;
		if (fd >= 0)
			(void)close(fd);
		if (r < 0)
			return r;
	}
	return 0;
}

int limits_cgroup_attach(LimitsCgroup *cg, pid_t pid)
{
	const int fds[] = { cg->v2_fd, cg->v1_fd[0], cg->v1_fd[1], cg->v1_fd[2], cg->v1_fd[3] };
	char num[32];
	int r = 0;

	snprintf(num, sizeof(num), "%d", (int)pid);
	for (size_t i = 0; i < ELEMENTSOF(fds) && r >= 0; i++)
		if (fds[i] >= 0)
			r = limits_write_at(fds[i], "cgroup.procs", num);
	return r;
}
