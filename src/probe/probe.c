/* What this kernel offers: namespaces, overlayfs in a user namespace,
 * Landlock, seccomp, cgroup v2 delegation, and the tier that results. The
 * cheap probe reads sysctls and /proc and never clones (it runs before every
 * `ward run`); the full probe (`ward probe`) also tries each namespace and
 * an overlay mount in throwaway children whose mounts die with them. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "common/macro.h"
#include "linux/landlock.h"
#include "linux/limits.h"
#include "linux/seccomp-filter.h"
#include "probe/probe.h"
#include "probe/probe-steps.h"

/* -1 when the file is missing or unreadable. */
static long read_long(const char *path)
{
	char buf[64];
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

static bool filesystem_known(const char *name)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/filesystems", "re");
	char line[128];

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *t = strrchr(line, '\t');

		t = t ? t + 1 : line;
		t[strcspn(t, "\n")] = '\0';
		if (strcmp(t, name) == 0)
			return true;
	}
	/* Not loaded yet: modprobe on first mount would find it. */
	return access("/sys/module/overlay", F_OK) == 0;
}

/* Sysctls that turn unprivileged user namespaces off, in the order a fix
 * should look at them. */
static void userns_sysctls(WardFeatures *f)
{
	bool root = geteuid() == 0;

	if (access("/proc/self/ns/user", F_OK) < 0) {
		snprintf(f->userns_reason, sizeof(f->userns_reason),
			 "the kernel has no user namespaces (CONFIG_USER_NS)");
		return;
	}
	if (read_long("/proc/sys/user/max_user_namespaces") == 0) {
		snprintf(f->userns_reason, sizeof(f->userns_reason),
			 "user.max_user_namespaces is 0");
		return;
	}
	if (!root && read_long("/proc/sys/kernel/unprivileged_userns_clone") == 0) {
		snprintf(f->userns_reason, sizeof(f->userns_reason),
			 "kernel.unprivileged_userns_clone is 0");
		return;
	}
	if (!root && read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1) {
		snprintf(f->userns_reason, sizeof(f->userns_reason),
			 "kernel.apparmor_restrict_unprivileged_userns is 1");
		return;
	}
	f->userns_reason[0] = '\0';
}

/* The "Seccomp:" field of /proc/self/status: 0 none, 1 strict, 2 filter. */
static int seccomp_mode_of_self(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Seccomp:", 8) == 0)
			return atoi(line + 8);
	return -1;
}

static int write_self(const char *file, const char *text)
{
	_cleanup_close_ int fd = open(file, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	return write(fd, text, len) == (ssize_t)len ? 0 : -errno;
}

/* In a child: a user namespace mapping our own ids, plus @flags. */
static int child_unshare(int flags, uid_t uid, gid_t gid)
{
	char map[64];

	if (unshare(CLONE_NEWUSER | flags) < 0)
		return errno;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	if (write_self("/proc/self/uid_map", map) < 0)
		return errno;
	if (write_self("/proc/self/setgroups", "deny") < 0)
		return errno;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	if (write_self("/proc/self/gid_map", map) < 0)
		return errno;
	return 0;
}

/* Everything happens on a tmpfs inside the child's own mount namespace,
 * so nothing is created on the host. */
static int child_overlay(uid_t uid, gid_t gid)
{
	static const char *const dirs[] = { "/tmp/l", "/tmp/u", "/tmp/w", "/tmp/m" };
	int r = child_unshare(CLONE_NEWNS, uid, gid);

	if (r)
		return r;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0)
		return errno;
	for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
		if (mkdir(dirs[i], 0700) < 0)
			return errno;
	if (mount("overlay", "/tmp/m", "overlay", 0, "lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w") <
	    0)
		return errno;
	return 0;
}

typedef enum ProbeTest {
	TEST_NS,
	TEST_OVERLAY,
	TEST_SECCOMP,
} ProbeTest;

/* Run a test in a forked child; 0 on success, else the child's errno. */
static int in_child(ProbeTest what, int flags, const SeccompProgram *prog)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int status, r = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		switch (what) {
		case TEST_NS:
			r = child_unshare(flags, uid, gid);
			break;
		case TEST_OVERLAY:
			r = child_overlay(uid, gid);
			break;
		case TEST_SECCOMP:
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
			    seccomp_program_load(prog) < 0)
				r = errno ? errno : EINVAL;
			else if (syscall(SYS_bpf, 0, NULL, 0) != -1 || errno != EPERM)
				r = EPROTO; /* loaded, but not doing its job */
			break;
		}
		_exit(r > 0 && r < 256 ? r : (r ? EIO : 0));
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	if (!WIFEXITED(status))
		return EIO;
	return WEXITSTATUS(status);
}

static void probe_seccomp(WardFeatures *f, bool full)
{
	SeccompOptions opt = {};
	SeccompProgram *prog = NULL;
	unsigned int action = SECCOMP_RET_KILL_PROCESS;

	/* PR_GET_SECCOMP fails with EINVAL without CONFIG_SECCOMP; the
	 * action query needs filter mode (and 4.14 for KILL_PROCESS). */
	f->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 &&
		     syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
	if (!f->seccomp || seccomp_program_new(&opt, &prog) < 0)
		return;
	f->seccomp_filter_len = (unsigned)seccomp_program_len(prog);
	f->seccomp_filter = !full || in_child(TEST_SECCOMP, 0, prog) == 0;
	seccomp_program_free(prog);
}

/* What would hold memory, cpu and io limits (the same choice limits.c
 * makes, without creating anything), and whether the per-user shares can
 * be written. */
static void probe_limits(WardFeatures *f)
{
	char path[4096], buf[512];
	struct statvfs sv;

	f->memory_limit = "rlimit";
	f->cpu_limit = f->io_limit = "none";
	if (f->cgroup_delegated) {
		f->memory_limit = "cgroup";
		_cleanup_fclose_ FILE *c = NULL;

		snprintf(path, sizeof(path), "%s/cgroup.controllers", f->cgroup_path);
		c = fopen(path, "re");
		if (c && fgets(buf, sizeof(buf), c)) {
			if (limits_controllers_have(buf, "cpu"))
				f->cpu_limit = "cgroup";
			if (limits_controllers_have(buf, "io"))
				f->io_limit = "cgroup";
		}
	} else if (geteuid() == 0) {
		if (limits_cgroup_v1_find("memory", path, sizeof(path)) == 0)
			f->memory_limit = "cgroup-v1";
		if (limits_cgroup_v1_find("cpu", path, sizeof(path)) == 0)
			f->cpu_limit = "cgroup-v1";
		if (limits_cgroup_v1_find("blkio", path, sizeof(path)) == 0)
			f->io_limit = "cgroup-v1";
	}
	f->user_shares = statvfs("/proc/sys/user", &sv) == 0 && !(sv.f_flag & ST_RDONLY);
}

int probe_features(WardFeatures *ret, bool full)
{
	static const struct {
		const char *ns;
		int flag;
		size_t off;
	} nss[] = {
		{ "mnt", CLONE_NEWNS, offsetof(WardFeatures, mountns) },
		{ "pid", CLONE_NEWPID, offsetof(WardFeatures, pidns) },
		{ "net", CLONE_NEWNET, offsetof(WardFeatures, netns) },
		{ "ipc", CLONE_NEWIPC, offsetof(WardFeatures, ipcns) },
		{ "uts", CLONE_NEWUTS, offsetof(WardFeatures, utsns) },
	};
	WardFeatures f = {};
	char path[4096];
	int r;

	if (!ret)
		return -EINVAL;
	f.full = full;

	userns_sysctls(&f);
	f.userns = f.userns_reason[0] == '\0';
	if (full) {
		r = in_child(TEST_NS, 0, NULL);
		f.userns = r == 0;
		f.userns_errno = r;
		if (r && !f.userns_reason[0])
			/* No sysctl explains it: a container's seccomp
			 * profile (or an enclosing sandbox's) or an LSM
			 * usually does. */
			snprintf(f.userns_reason, sizeof(f.userns_reason),
				 "creating a user namespace failed: %s%s", strerror(r),
				 seccomp_mode_of_self() == 2
					 ? " (a seccomp filter is in force on this process)"
					 : "");
	}
	for (size_t i = 0; i < ELEMENTSOF(nss); i++) {
		bool *b = (bool *)((char *)&f + nss[i].off);

		snprintf(path, sizeof(path), "/proc/self/ns/%s", nss[i].ns);
		*b = f.userns && access(path, F_OK) == 0;
		if (full && *b)
			*b = in_child(TEST_NS, nss[i].flag, NULL) == 0;
	}

	/* Overlayfs in a user namespace arrived in Linux 5.11. */
	f.overlay_userns = f.userns && f.mountns && kernel_at_least(5, 11) &&
			   filesystem_known("overlay");
	if (full && f.overlay_userns)
		f.overlay_userns = in_child(TEST_OVERLAY, 0, NULL) == 0;

	/* What a run does, not only what each namespace allows alone: a
	 * masked /proc, a blocked id map or mount shows only here. */
	if (full && f.userns) {
		ProbeSteps ps;
		if (probe_steps_run(&ps) >= 0) {
			f.t2_steps = ps.ok;
			snprintf(f.t2_step, sizeof(f.t2_step), "%s", ps.step);
			f.t2_errno = ps.error;
			f.clone3_enosys = ps.clone3_enosys;
			f.hostname_blocked = ps.hostname_failed;
		}
	}

	r = landlock_abi_version();
	f.landlock_abi = r > 0 ? r : 0;
	f.landlock_errno = r > 0 ? 0 : -r;

	probe_seccomp(&f, full);

	r = limits_cgroup_find_base(f.cgroup_path, sizeof(f.cgroup_path));
	f.cgroup_delegated = r == 0;
	if (r < 0) {
		f.cgroup_path[0] = '\0';
		snprintf(f.cgroup_reason, sizeof(f.cgroup_reason), "%s",
			 r == -ENOENT	    ? "no cgroup v2 hierarchy"
			 : r == -EOPNOTSUPP ? "pids and memory controllers not available in cgroup v2"
			 : r == -EBUSY	    ? "nearest writable cgroup has processes and no controllers enabled"
					    : "no writable cgroup v2 subtree");
		f.cgroup_v1 = geteuid() == 0 &&
			      limits_cgroup_v1_find("pids", path, sizeof(path)) == 0 &&
			      limits_cgroup_v1_find("memory", path, sizeof(path)) == 0;
	}
	probe_limits(&f);

	*ret = f;
	return 0;
}

int probe_best_tier(const WardFeatures *f)
{
	if (!f)
		return 0;
	/* T2: all six namespaces. Landlock and seccomp are further walls
	 * whose absence is reported as degraded, not a lower tier. */
	if (f->userns && f->mountns && f->pidns && f->netns && f->ipcns && f->utsns &&
	    (!f->full || f->t2_steps))
		return 2;
	/* T1: no namespaces, so Landlock and seccomp are the only walls. */
	if (f->landlock_abi >= 1 && f->seccomp)
		return 1;
	return 0;
}

const char *const *probe_landlock_features(int abi, size_t *ret_n)
{
	static const char *const names[] = { "fs",     "refer", "truncate",  "tcp",
					     "ioctl-dev", "scopes", "audit", "tsync",
					     "unix-path", "udp" };

	if (ret_n)
		*ret_n = abi <= 0 ? 0 : abi > (int)ELEMENTSOF(names) ? ELEMENTSOF(names) : (size_t)abi;
	return names;
}

static void explain_userns(const WardFeatures *f)
{
	const char *why = f->userns_reason;

	log_error("User namespaces are not available: %s.", why[0] ? why : "unknown reason");
	if (strstr(why, "max_user_namespaces"))
		log_hint("sysctl -w user.max_user_namespaces=15000 (and persist it in "
			 "/etc/sysctl.d/).");
	else if (strstr(why, "unprivileged_userns_clone"))
		log_hint("sysctl -w kernel.unprivileged_userns_clone=1 (and persist it in "
			 "/etc/sysctl.d/).");
	else if (strstr(why, "apparmor_restrict"))
		log_hint("'sudo ward setup apparmor' installs the AppArmor profile that lets ward "
			 "create user namespaces ('ward setup apparmor --print' shows it); or sysctl "
			 "-w kernel.apparmor_restrict_unprivileged_userns=0 for every program.");
	else if (strstr(why, "CONFIG_USER_NS"))
		log_hint("use a kernel built with CONFIG_USER_NS=y.");
	else {
		log_hint("inside a container, the runtime's seccomp profile or missing user "
			 "namespace support usually blocks this: docs/containers.md lists what to "
			 "ask of the runtime (user namespaces for the pod, an unmasked /proc, the "
			 "seccomp profile ward ships).");
	}
	if (f->landlock_abi >= 1 && f->seccomp)
		log_hint("'ward run --tier 1' runs here without namespaces (Landlock ABI %d and "
			 "seccomp): it accepts a weaker sandbox explicitly; docs/tiers.md and 'ward "
			 "probe' list what tier 1 does not hold.",
			 f->landlock_abi);
	else
		log_hint("'ward run --tier 0' runs without isolation, explicitly (tier 1 needs "
			 "Landlock and seccomp, which this kernel lacks).");
}

bool probe_userns_blocked(char *reason, size_t n)
{
	WardFeatures f = {};

	userns_sysctls(&f);
	if (!f.userns_reason[0])
		return false;
	snprintf(reason, n, "%s", f.userns_reason);
	return true;
}

void probe_explain_missing(const WardFeatures *f)
{
	static const struct {
		const char *name;
		size_t off;
	} nss[] = {
		{ "mount", offsetof(WardFeatures, mountns) },
		{ "pid", offsetof(WardFeatures, pidns) },
		{ "net", offsetof(WardFeatures, netns) },
		{ "ipc", offsetof(WardFeatures, ipcns) },
		{ "uts", offsetof(WardFeatures, utsns) },
	};

	if (!f)
		return;
	if (!f->userns)
		explain_userns(f);
	else if (f->full && !f->t2_steps && f->t2_step[0]) {
		ProbeSteps ps = { .error = f->t2_errno };
		snprintf(ps.step, sizeof(ps.step), "%s", f->t2_step);
		log_error("Tier 2's first steps fail here: %s: %s.", f->t2_step, strerror(f->t2_errno));
		log_hint("%s.", probe_steps_hint(&ps));
		if (f->landlock_abi >= 1 && f->seccomp)
			log_hint("'ward run --tier 1' runs here without namespaces (Landlock ABI %d "
				 "and seccomp): it accepts a weaker sandbox explicitly; docs/tiers.md "
				 "and 'ward probe' list what tier 1 does not hold.",
				 f->landlock_abi);
	} else
		for (size_t i = 0; i < ELEMENTSOF(nss); i++)
			if (!*(const bool *)((const char *)f + nss[i].off))
				log_error("%s namespaces are not available inside a user namespace.",
					  nss[i].name);

	if (f->landlock_abi == 0) {
		if (f->landlock_errno == ENOSYS)
			log_error("Landlock is not built into this kernel (ENOSYS).");
		else
			log_error("Landlock is built in but not enabled (EOPNOTSUPP).");
		if (f->landlock_errno == ENOSYS)
			log_hint("use a kernel with CONFIG_SECURITY_LANDLOCK=y (Linux 5.13 or newer).");
		else
			log_hint("add landlock to the lsm= boot parameter, e.g. "
				 "lsm=landlock,lockdown,yama,integrity,apparmor (see "
				 "/sys/kernel/security/lsm for the current list).");
	}
	if (!f->seccomp)
		log_error("seccomp filters are not available (CONFIG_SECCOMP_FILTER).");
	else if (!f->seccomp_filter)
		log_error("ward's seccomp filter could not be built or loaded.");
}
