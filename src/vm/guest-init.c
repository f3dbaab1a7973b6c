/* ward's guest init: pid 1 of a tier-3 micro-VM (docs/t3.md). Static, no
 * dependency but libc: the guest's initramfs holds it and the modules its
 * kernel needs, nothing else.
 *
 *   1. mounts /proc, /sys, /dev (the guest's own: the host's are never
 *      exported) and loads the modules listed in /modules/order;
 *   2. mounts the 9p share "wardreq" at /.ward and reads /.ward/request
 *      (vm-request.h: argv, env, cwd, uid, gid, umask, shares, links);
 *   3. mounts each share of the policy's view where the request says (the
 *      exporter, QEMU inside ward's T2 sandbox, enforces read-only);
 *   4. runs the command as the request's user with stdin, stdout and stderr
 *      on the virtio-serial ports ward.in, ward.out and ward.err (kept
 *      apart; the host closing ward.in is EOF), in a session of its own;
 *      the host's signals (^C) come on ward.sig and go to its group;
 *      with network "proxy", eth0 is QEMU's user network (VM_REC_NET);
 *   5. writes "status N" or "signal N" on the control port ward.ctl and powers
 *      off. The command's output never reaches the control port, so it
 *      cannot forge a status; a VM that stops without one is a failed run.
 *
 * Any failure before the command starts is reported as "setup STEP ERRNO"
 * on the control port, and on the console. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <net/route.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vm/vm-request.h"

#define MAX_ITEMS 4096

static int ctl_fd = -1;
static const char *hostile; /* VM_REC_TEST_HOSTILE */

static __attribute__((format(printf, 1, 2))) void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, buf, (size_t)n);
		close(fd);
	}
}

/* The virtio-serial port QEMU named @name (virtserialport,name=...):
 * the node's number depends on the order the devices probed in. Waits up
 * to @tries * 5 ms for it to appear. */
static int port_open_wait(const char *name, int flags, int tries)
{
	for (int i = 0; i < tries; i++) {
		DIR *d = opendir("/sys/class/virtio-ports");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char path[400], buf[64] = "";
			int fd;
			ssize_t n;
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", de->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = 0;
			buf[strcspn(buf, "\n")] = 0;
			if (strcmp(buf, name) != 0)
				continue;
			snprintf(path, sizeof(path), "/dev/%s", de->d_name);
			fd = open(path, flags | O_NOCTTY | O_CLOEXEC);
			if (fd >= 0) {
				closedir(d);
				return fd;
			}
		}
		if (d)
			closedir(d);
		usleep(5000);
	}
	return -1;
}

static int port_open(const char *name, int flags)
{
	return port_open_wait(name, flags, 400);
}

static void ctl_open(void)
{
	/* The control port; its node is root's and 0600, so the command
	 * (unless it runs as the guest's root) cannot write to it. */
	ctl_fd = port_open("ward.ctl", O_WRONLY);
	if (ctl_fd >= 0)
		(void)fchmod(ctl_fd, 0600);
}

static __attribute__((noreturn)) void power_off(void)
{
	sync();
	/* QEMU runs with -no-reboot and the kernel with reboot=t: a reset
	 * ends the VM (a micro-VM without ACPI has no power-off). */
	(void)reboot(RB_AUTOBOOT);
	for (;;)
		pause();
}

static __attribute__((noreturn, format(printf, 1, 2))) void report(const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (ctl_fd < 0)
		ctl_open();
	if (hostile && ctl_fd >= 0) {
		/* A test of the host's parser: what a hostile guest would send. */
		static char junk[65536];
		if (strcmp(hostile, "silent") == 0)
			power_off();
		if (strcmp(hostile, "garbage") == 0)
			(void)!write(ctl_fd, "st\x01tus 0 0\n", 12);
		if (strcmp(hostile, "double") == 0)
			(void)!write(ctl_fd, "status 0\n", 9);
		if (strcmp(hostile, "flood") == 0) {
			memset(junk, 's', sizeof(junk));
			for (int i = 0; i < 32; i++)
				(void)!write(ctl_fd, junk, sizeof(junk));
		}
	}
	if (ctl_fd >= 0 && n > 0)
		(void)!write(ctl_fd, buf, (size_t)n);
	if (ctl_fd >= 0)
		(void)fsync(ctl_fd);
	power_off();
}

static __attribute__((noreturn)) void fail(const char *step, int err)
{
	say("ward-guest-init: %s: %s\n", step, strerror(err));
	report("setup %s %d\n", step, err);
}

/* The module parameters the kernel command line gives @mod ("MOD.KEY=V"
 * tokens): modprobe would pass them, finit_module does not. QEMU's
 * microvm lists its virtio-mmio devices this way. */
static void cmdline_params(const char *mod, char *out, size_t n)
{
	static char cmdline[4096];
	size_t ml = strlen(mod), used = 0;
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t k;

	out[0] = 0;
	if (fd < 0)
		return;
	k = read(fd, cmdline, sizeof(cmdline) - 1);
	close(fd);
	if (k <= 0)
		return;
	cmdline[k] = 0;
	for (char *save = NULL, *t = strtok_r(cmdline, " \n", &save); t;
	     t = strtok_r(NULL, " \n", &save)) {
		size_t tl;
		if (strncmp(t, mod, ml) != 0 || t[ml] != '.')
			continue;
		t += ml + 1;
		tl = strlen(t);
		if (used + tl + 2 > n)
			break;
		if (used)
			out[used++] = ' ';
		memcpy(out + used, t, tl + 1);
		used += tl;
	}
}

static int load_modules(void)
{
	FILE *f = fopen("/modules/order", "re");
	char line[256];

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		char path[300], params[2048], name[256];
		int fd;
		line[strcspn(line, "\n")] = 0;
		if (!line[0])
			continue;
		snprintf(name, sizeof(name), "%s", line);
		name[strcspn(name, ".")] = 0;
		cmdline_params(name, params, sizeof(params));
		snprintf(path, sizeof(path), "/modules/%s", line);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fclose(f);
			return -errno;
		}
		if (syscall(SYS_finit_module, fd, params, 0) < 0 && errno != EEXIST) {
			int e = errno;
			say("ward-guest-init: module %s: %s\n", line, strerror(e));
			close(fd);
			fclose(f);
			return -e;
		}
		close(fd);
	}
	fclose(f);
	return 0;
}

static int mount_9p(const char *tag, const char *where)
{
	/* The device may still be probing right after the module loaded. */
	for (int i = 0; i < 200; i++) {
		if (mount(tag, where, "9p", 0,
			  "trans=virtio,version=9p2000.L,msize=262144,cache=loose,access=client") == 0)
			return 0;
		if (errno != ENOENT && errno != ENODEV)
			return -errno;
		usleep(5000);
	}
	return -errno;
}

/* Whether QEMU exports @tag: it exports only the shares that exist in
 * the view it runs in (a path the policy hides entirely is not there). */
static int tag_exported(const char *tag)
{
	const char *base = "/sys/bus/virtio/drivers/9pnet_virtio";
	DIR *d = opendir(base);
	struct dirent *de;
	int found = 0;

	while (d && !found && (de = readdir(d))) {
		char path[400], buf[64];
		ssize_t n;
		int fd;
		if (strncmp(de->d_name, "virtio", 6) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/mount_tag", base, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		buf[strcspn(buf, "\n")] = 0;
		found = strcmp(buf, tag) == 0;
	}
	if (d)
		closedir(d);
	return found;
}

static int mkdir_p(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static char *read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 65536, n = 0;
	char *buf;

	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	while (buf) {
		ssize_t k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
		if (n == cap) {
			char *nb = cap > VM_REQUEST_MAX ? NULL : realloc(buf, cap * 2 + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf;
}

/* The host's signals for the command (port ward.sig): a decimal number a
 * line, sent to the command's process group (it leads a session of its
 * own), as a terminal's ^C would be. Runs in a child of pid 1, which
 * kills it when the command ends. Only the signals ward forwards. */
static __attribute__((noreturn)) void signal_relay(pid_t cmd)
{
	static const int allowed[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };
	char buf[64];
	size_t used = 0;
	int fd = port_open_wait("ward.sig", O_RDONLY, 40);

	if (fd < 0)
		_exit(1);
	for (;;) {
		ssize_t k = read(fd, buf + used, sizeof(buf) - 1 - used);
		char *nl;
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			_exit(0);
		used += (size_t)k;
		while ((nl = memchr(buf, '\n', used))) {
			long sig;
			*nl = 0;
			sig = strtol(buf, NULL, 10);
			for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
				if (allowed[i] == sig && kill(-cmd, (int)sig) < 0)
					(void)kill(cmd, (int)sig);
			used -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, used);
		}
		if (used == sizeof(buf) - 1)
			used = 0; /* a line that long is no signal */
	}
}

static int if_ioctl(int s, unsigned long req, struct ifreq *ifr)
{
	/* The NIC may still be probing right after its module loaded. */
	for (int i = 0; i < 200; i++) {
		if (ioctl(s, req, ifr) == 0)
			return 0;
		if (errno != ENODEV)
			return -errno;
		usleep(5000);
	}
	return -errno;
}

static int set_addr(int s, unsigned long req, const char *ifname, in_addr_t a)
{
	struct ifreq ifr = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = a;
	return if_ioctl(s, req, &ifr);
}

static int link_up(int s, const char *ifname)
{
	struct ifreq ifr = { 0 };
	int r;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if ((r = if_ioctl(s, SIOCGIFFLAGS, &ifr)) < 0)
		return r;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	return if_ioctl(s, SIOCSIFFLAGS, &ifr);
}

/* VM_REC_NET "ADDR GATEWAY": lo up, eth0 (QEMU's user network, which runs
 * inside ward's T2 sandbox: its only way out is ward's proxy) at ADDR/24
 * with a default route through GATEWAY. */
static int net_setup(char *val)
{
	char *sp = strchr(val, ' ');
	struct in_addr addr, gw;
	struct rtentry rt = { 0 };
	struct sockaddr_in *sin;
	int s, r;

	if (!sp)
		return -EINVAL;
	*sp = 0;
	if (inet_pton(AF_INET, val, &addr) != 1 || inet_pton(AF_INET, sp + 1, &gw) != 1)
		return -EINVAL;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if ((r = link_up(s, "lo")) < 0 || (r = set_addr(s, SIOCSIFADDR, "eth0", addr.s_addr)) < 0 ||
	    (r = set_addr(s, SIOCSIFNETMASK, "eth0", htonl(0xffffff00u))) < 0 ||
	    (r = link_up(s, "eth0")) < 0)
		goto out;
	sin = (struct sockaddr_in *)&rt.rt_dst;
	sin->sin_family = AF_INET;
	sin = (struct sockaddr_in *)&rt.rt_genmask;
	sin->sin_family = AF_INET;
	sin = (struct sockaddr_in *)&rt.rt_gateway;
	sin->sin_family = AF_INET;
	sin->sin_addr = gw;
	rt.rt_flags = RTF_UP | RTF_GATEWAY;
	rt.rt_dev = (char *)"eth0";
	if (ioctl(s, SIOCADDRT, &rt) < 0)
		r = -errno;
out:
	close(s);
	return r;
}

int main(void)
{
	char *argv[MAX_ITEMS + 1], *envp[MAX_ITEMS + 1];
	size_t argc = 0, envc = 0, len = 0;
	const char *cwd = "/";
	unsigned long uid = 0, gid = 0, mask = 022;
	char *req;
	pid_t child;
	int r, status;

	(void)mkdir("/proc", 0555);
	(void)mkdir("/sys", 0555);
	(void)mkdir("/dev", 0755);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		fail("proc", errno);
	if (mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		fail("sys", errno);
	if (mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755") < 0)
		fail("dev", errno);
	if ((r = load_modules()) < 0)
		fail("modules", -r);
	ctl_open();
	if (ctl_fd < 0)
		fail("control", errno);
	(void)mkdir("/.ward", 0700);
	if ((r = mount_9p(VM_TAG_REQUEST, "/.ward")) < 0)
		fail("request-mount", -r);
	req = read_all("/.ward/" VM_REQUEST_FILE, &len);
	if (!req)
		fail("request-read", errno ? errno : ENOMEM);

	/* Records: one type byte, the value, a NUL (vm-request.h). */
	for (size_t i = 0; i < len;) {
		char type = req[i];
		char *val = req + i + 1;
		size_t vlen = strnlen(val, len - i - 1);
		if (i + 1 + vlen >= len)
			fail("request-parse", EINVAL);
		i += vlen + 2;
		switch (type) {
		case VM_REC_ARG:
			if (argc >= MAX_ITEMS)
				fail("request-argv", E2BIG);
			argv[argc++] = val;
			break;
		case VM_REC_ENV:
			if (envc >= MAX_ITEMS)
				fail("request-env", E2BIG);
			envp[envc++] = val;
			break;
		case VM_REC_CWD:
			cwd = val;
			break;
		case VM_REC_UID:
			uid = strtoul(val, NULL, 10);
			break;
		case VM_REC_GID:
			gid = strtoul(val, NULL, 10);
			break;
		case VM_REC_UMASK:
			mask = strtoul(val, NULL, 8) & 0777;
			break;
		case VM_REC_SHARE: {
			/* "TAG PATH": the share TAG is the view's PATH. */
			char *sp = strchr(val, ' ');
			if (!sp || sp[1] != '/')
				fail("request-share", EINVAL);
			*sp = 0;
			if (!tag_exported(val))
				break;
			if ((r = mkdir_p(sp + 1)) < 0)
				fail("share-dir", -r);
			if ((r = mount_9p(val, sp + 1)) < 0) {
				say("ward-guest-init: share %s at %s\n", val, sp + 1);
				fail("share-mount", -r);
			}
			break;
		}
		case VM_REC_NET:
			if ((r = net_setup(val)) < 0)
				fail("network", -r);
			break;
		case VM_REC_TEST_HOSTILE:
			hostile = val;
			break;
		case VM_REC_LINK: {
			/* "PATH TARGET": a symlink of the view's root (/bin -> usr/bin). */
			char *sp = strchr(val, ' ');
			if (!sp || val[0] != '/')
				fail("request-link", EINVAL);
			*sp = 0;
			if (symlink(sp + 1, val) < 0 && errno != EEXIST)
				fail("link", errno);
			break;
		}
		default:
			fail("request-parse", EINVAL);
		}
	}
	if (argc == 0)
		fail("request-argv", EINVAL);
	argv[argc] = NULL;
	envp[envc] = NULL;
	/* /tmp: the sandbox's private one when exported, else the guest's. */
	if (mkdir("/tmp", 01777) == 0)
		(void)mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m");
	(void)umount2("/.ward", MNT_DETACH);

	child = fork();
	if (child < 0)
		fail("fork", errno);
	if (child == 0) {
		int out = port_open("ward.out", O_WRONLY);
		int err = port_open("ward.err", O_WRONLY);
		/* The caller's stdin, relayed by the host to EOF: when the
		 * host closes its side, a read returns 0. */
		int in = port_open_wait("ward.in", O_RDONLY, 40);
		/* A host without the port (an older ward): no stdin. The
		 * ports appear together, before ward.ctl is opened. */
		if (in < 0)
			in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (out < 0 || err < 0 || in < 0)
			_exit(125);
		if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(125);
		(void)setsid();
		umask((mode_t)mask);
		if (setgroups(0, NULL) < 0 || setgid((gid_t)gid) < 0 || setuid((uid_t)uid) < 0) {
			dprintf(2, "ward: the guest could not switch to uid %lu: %s\n", uid,
				strerror(errno));
			_exit(125);
		}
		if (chdir(cwd) < 0) {
			dprintf(2, "ward: cannot enter %s in the guest: %s\n", cwd, strerror(errno));
			_exit(125);
		}
		for (size_t k = 0; k < envc; k++)
			if (strncmp(envp[k], "PATH=", 5) == 0)
				setenv("PATH", envp[k] + 5, 1);
		execvpe(argv[0], argv, envp);
		dprintf(2, "ward: %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (fork() == 0)
		signal_relay(child);
	/* pid 1 reaps every orphan; the run ends with the command. */
	for (;;) {
		pid_t p = waitpid(-1, &status, 0);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			fail("wait", errno);
		if (p == child)
			break;
	}
	/* What the command left running ends with it, as in the T2 sandbox. */
	(void)kill(-1, SIGKILL);
	if (WIFSIGNALED(status))
		report("signal %d\n", WTERMSIG(status));
	report("status %d\n", WEXITSTATUS(status));
}
