/* Tier 2's first steps tried in a throwaway child, cached. See
 * probe-steps.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "config.h"
#include "probe/probe-steps.h"

#define NS_FLAGS                                                                                   \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

typedef struct StepReport {
	char step[32];
	int error;
	int hostname_errno;
} StepReport;

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int e;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	e = errno;
	(void)close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -(n < 0 ? e : EIO);
}

_noreturn_ static void child(int fd, uid_t uid, gid_t gid)
{
	StepReport rep = {};
	char map[64];
	int r = 0;

#define STEP(name_, expr_)                                                                         \
	do {                                                                                       \
		snprintf(rep.step, sizeof(rep.step), "%s", name_);                                 \
		if ((r = (expr_)) < 0)                                                             \
			goto out;                                                                  \
	} while (0)
#define NERR(expr_) ((expr_) < 0 ? -errno : 0)

	/* As a run maps: the caller's own ids, nothing else. */
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	STEP("uid-map", write_file("/proc/self/uid_map", map));
	STEP("setgroups", write_file("/proc/self/setgroups", "deny"));
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	STEP("gid-map", write_file("/proc/self/gid_map", map));
	/* Cosmetic in a run too: recorded, never a failure. */
	if (sethostname("ward", 4) < 0)
		rep.hostname_errno = errno;
	STEP("mount-private", NERR(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)));
	STEP("mount-tmpfs", NERR(mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64k")));
	STEP("mount-proc", NERR(mkdir("/tmp/proc", 0700)));
	/* A fresh /proc of the new pid namespace: the kernel refuses it
	 * where the /proc we can see has parts covered (a container's masked
	 * paths), which is the failure that a per-namespace unshare misses. */
	STEP("mount-proc", NERR(mount("proc", "/tmp/proc", "proc",
				      MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)));
	rep.step[0] = '\0';
out:
	rep.error = r < 0 ? -r : 0;
	(void)!write(fd, &rep, sizeof(rep));
	_exit(0);
#undef STEP
#undef NERR
}

int probe_steps_run(ProbeSteps *ret)
{
	struct clone_args args = { .flags = NS_FLAGS, .exit_signal = SIGCHLD };
	_cleanup_close_ int rd = -EBADF, wr = -EBADF;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	StepReport rep = {};
	ProbeSteps s = {};
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	rd = p[0];
	wr = p[1];
	/* The way a run clones: clone3, then clone where a container's
	 * profile answers clone3 with ENOSYS (containerd's default does). */
	pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0 && errno == ENOSYS) {
		s.clone3_enosys = true;
		pid = (pid_t)syscall(SYS_clone, NS_FLAGS | SIGCHLD, 0, NULL, NULL, 0);
	}
	if (pid == 0) {
		(void)close(rd);
		child(wr, uid, gid);
	}
	if (pid < 0) {
		snprintf(s.step, sizeof(s.step), "clone");
		s.error = errno;
		*ret = s;
		return 0;
	}
	wr = -EBADF;
	(void)close(p[1]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (read(rd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep)) {
		snprintf(s.step, sizeof(s.step), "child");
		s.error = EPROTO;
		*ret = s;
		return 0;
	}
	snprintf(s.step, sizeof(s.step), "%s", rep.step);
	s.error = rep.error;
	s.ok = rep.step[0] == '\0';
	s.hostname_failed = rep.hostname_errno != 0;
	*ret = s;
	return 0;
}

static void read_first_line(const char *path, char *buf, size_t n)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f && fgets(buf, (int)n, f))
		buf[strcspn(buf, "\n")] = '\0';
}

/* "Key: value" from /proc/self/status. */
static void status_field(const char *key, char *buf, size_t n)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	size_t k = strlen(key);

	buf[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, k) == 0 && line[k] == ':') {
			char *v = line + k + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(buf, n, "%s", v);
			return;
		}
}

/* Everything that could change the answer, as one line. */
static void cache_key(char *buf, size_t n)
{
	char boot[64], caps[32], sc[16], nfilters[16], nnp[16], max_ns[32], unpriv[32], aa[32],
		ns[64] = "", pidns[64] = "";
	ssize_t l;

	read_first_line("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	read_first_line("/proc/sys/user/max_user_namespaces", max_ns, sizeof(max_ns));
	read_first_line("/proc/sys/kernel/unprivileged_userns_clone", unpriv, sizeof(unpriv));
	read_first_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", aa, sizeof(aa));
	status_field("CapEff", caps, sizeof(caps));
	status_field("Seccomp", sc, sizeof(sc));
	status_field("Seccomp_filters", nfilters, sizeof(nfilters));
	status_field("NoNewPrivs", nnp, sizeof(nnp));
	l = readlink("/proc/self/ns/user", ns, sizeof(ns) - 1);
	ns[l > 0 ? l : 0] = '\0';
	l = readlink("/proc/self/ns/pid", pidns, sizeof(pidns) - 1);
	pidns[l > 0 ? l : 0] = '\0';
	snprintf(buf, n,
		 "v2 %s %s uid=%u caps=%s seccomp=%s filters=%s nnp=%s %s %s max=%s unpriv=%s aa=%s",
		 WARD_VERSION, boot, (unsigned)geteuid(), caps, sc, nfilters, nnp, ns, pidns, max_ns,
		 unpriv, aa);
}

/* The answer this process found and has not written yet (prepare writes
 * nothing: probe_steps_store, at acquire, does), by its key: it also
 * answers the process's next runs (libward, ward mcp) without a probe. */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char key[512];
	ProbeSteps steps;
	bool valid;
	bool stored;
} pending;

static bool read_cache(const char *path, const char *key, ProbeSteps *ret)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[1024], step[32];
	int ok, err, c3, hn;

	/* key \t ok \t step \t errno \t clone3_enosys \t hostname */
	if (!f || !fgets(line, sizeof(line), f))
		return false;
	char *tab = strchr(line, '\t');
	if (!tab || (size_t)(tab - line) != strlen(key) || strncmp(line, key, strlen(key)) != 0 ||
	    sscanf(tab + 1, "%d\t%31[^\t]\t%d\t%d\t%d", &ok, step, &err, &c3, &hn) != 5)
		return false;
	*ret = (ProbeSteps){ .ok = ok, .error = err, .clone3_enosys = c3, .hostname_failed = hn,
			     .cached = true };
	snprintf(ret->step, sizeof(ret->step), "%s", strcmp(step, "-") ? step : "");
	return true;
}

int probe_steps_cached(const char *state_dir, ProbeSteps *ret)
{
	_cleanup_free_ char *path = NULL;
	char key[512];
	ProbeSteps s = {};
	int r;

	cache_key(key, sizeof(key));
	/* Under a seccomp filter (a container's profile, a harness's own
	 * sandbox) nothing readable says which filter: two filters with the
	 * same count in the same namespaces look the same to the key. Only a
	 * positive answer is kept then: one that is wrong for another filter
	 * makes that run fail at the refused step, as the probe would have
	 * (125, no weaker sandbox), while a negative one would refuse runs
	 * that work. So a container whose profile allows tier 2 (every run in
	 * a pod: the same filter, the same namespaces) probes once, and one
	 * whose profile does not probes every time (about a millisecond). */
	bool filtered = strstr(key, " seccomp=2 ") != NULL;

	pthread_mutex_lock(&pending_lock);
	bool hit = pending.valid && strcmp(pending.key, key) == 0;
	if (hit)
		s = pending.steps;
	pthread_mutex_unlock(&pending_lock);
	if (hit && (s.ok || !filtered)) {
		s.cached = true;
		*ret = s;
		return 0;
	}
	if (asprintf(&path, "%s/probe-t2", state_dir) < 0)
		return -ENOMEM;
	if (read_cache(path, key, ret) && (ret->ok || !filtered))
		return 0;
	r = probe_steps_run(&s);
	if (r < 0)
		return r;
	if (filtered && !s.ok) {
		*ret = s;
		return 0;
	}
	pthread_mutex_lock(&pending_lock);
	snprintf(pending.key, sizeof(pending.key), "%s", key);
	pending.steps = s;
	pending.valid = true;
	pending.stored = false;
	pthread_mutex_unlock(&pending_lock);
	*ret = s;
	return 0;
}

int probe_steps_store(const char *state_dir)
{
	_cleanup_free_ char *path = NULL, *tmp = NULL;
	ProbeSteps s;
	char key[512];
	int r = 0;

	pthread_mutex_lock(&pending_lock);
	bool todo = pending.valid && !pending.stored;
	if (todo) {
		snprintf(key, sizeof(key), "%s", pending.key);
		s = pending.steps;
		pending.stored = true;
	}
	pthread_mutex_unlock(&pending_lock);
	if (!todo)
		return 0;
	if (asprintf(&path, "%s/probe-t2", state_dir) < 0 ||
	    asprintf(&tmp, "%s/probe-t2.%d", state_dir, (int)getpid()) < 0)
		return -ENOMEM;
	/* Written whole and renamed: a concurrent run reads the old answer
	 * or the new one. A cache that cannot be written costs the next run
	 * a millisecond, nothing else. */
	{
		_cleanup_fclose_ FILE *f = fopen(tmp, "wxe");

		if (!f)
			r = -errno;
		else {
			fprintf(f, "%s\t%d\t%s\t%d\t%d\t%d\n", key, s.ok, s.step[0] ? s.step : "-",
				s.error, s.clone3_enosys, s.hostname_failed);
			if (fflush(f) == 0 && rename(tmp, path) == 0)
				tmp[0] = '\0';
			else
				r = -errno;
		}
		if (tmp[0])
			(void)unlink(tmp);
	}
	return r;
}

const char *probe_steps_hint(const ProbeSteps *s)
{
	const char *st = s->step;
	int e = s->error;

	if (s->ok)
		return NULL;
	if (strcmp(st, "clone") == 0) {
		if (e == ENOSPC)
			return "creating the namespaces failed with ENOSPC: user.max_user_namespaces "
			       "(or a namespace count) is exhausted or 0; raise it with sysctl";
		if (e == EPERM || e == EACCES)
			return "creating the namespaces failed with EPERM: unprivileged user namespaces "
			       "are forbidden here (a sysctl, AppArmor: 'sudo ward setup apparmor', or a "
			       "container's seccomp profile: docs/containers.md)";
		return "creating the namespaces failed: docs/containers.md lists what a container "
		       "must allow";
	}
	if (strcmp(st, "uid-map") == 0 || strcmp(st, "gid-map") == 0 ||
	    strcmp(st, "setgroups") == 0) {
		if (geteuid() == 0 && e == EPERM)
			return "writing the user namespace's id map failed with EPERM: uid 0 without "
			       "CAP_SETFCAP cannot map itself (Linux 5.12+); give the container "
			       "CAP_SETFCAP back, or run ward as a non-root user";
		return "writing the user namespace's id map failed: an LSM or the container's "
		       "runtime forbids it (docs/containers.md)";
	}
	if (strcmp(st, "mount-proc") == 0)
		return "mounting a fresh /proc in the sandbox's pid namespace failed: the /proc "
		       "ward sees has masked (over-mounted) paths, as container runtimes do by "
		       "default; ask for an unmasked /proc (podman --security-opt unmask=ALL, "
		       "docker --security-opt systempaths=unconfined, Kubernetes procMount: "
		       "Unmasked with hostUsers: false; docs/containers.md)";
	if (strncmp(st, "mount", 5) == 0)
		return "mounting inside the sandbox's own mount namespace failed: an LSM profile "
		       "(docker-default AppArmor) or a seccomp profile forbids mount; "
		       "docs/containers.md";
	return "the sandbox's first steps failed in a test child: docs/containers.md";
}
