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
#include <sys/utsname.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "vm/vm-mux.h"
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

/* ---- A warm session (VM_REC_WARM): one command at a time on ward.mux ---- */

/* The shares of a warm session that are not read-only trees: mounted
 * afresh after each command, so that the next one sees what the host
 * changed in between (docs/t3.md, "Coherence"). */
struct Share {
	const char *tag, *path;
};
static struct Share fresh_shares[64];
static size_t n_fresh;

/* A new mount of each such share in place of the old one: a new 9p
 * superblock, with no page, dentry or attribute cached. (Dropping every
 * cache instead cost each command the re-reads of the read-only trees
 * and, under TCG, the translation of all the code it runs again: 30-90 ms
 * of a trivial command's 35-100.) A share that cannot be mounted again
 * ends the VM: the next command would see a view that is not the
 * policy's. */
static void warm_remount(const char *cwd)
{
	struct stat st;

	for (size_t i = 0; i < n_fresh; i++) {
		int r;
		(void)umount2(fresh_shares[i].path, MNT_DETACH);
		if ((r = mount_9p(fresh_shares[i].tag, fresh_shares[i].path)) < 0) {
			say("ward-guest-init: share %s at %s: %s\n", fresh_shares[i].tag,
			    fresh_shares[i].path, strerror(-r));
			power_off();
		}
	}
	/* The next command most likely starts where the last one did (the
	 * workspace): look its directory up now, while the host is busy
	 * with the last `ward exec`, rather than component by component
	 * over 9p before the next command can start (a few ms under TCG).
	 * Only the path's own directories are cached this early; what is
	 * in them is read afresh. */
	if (n_fresh)
		(void)stat(cwd, &st);
}

/* Whether the kernel's counts of dirty and under-writeback pages are
 * exact: a kernel without SMP (the minimal one) keeps one global count
 * that every change updates; an SMP kernel folds per-CPU deltas into it
 * now and then, so a count of 0 there proves nothing. */
static bool exact_vmstat;

/* Pages the page cache holds dirty or under writeback (/proc/vmstat), or
 * -1 when that is not known. */
static long dirty_pages(void)
{
	static char buf[8192];
	long dirty = -1, wb = -1;
	int fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "nr_dirty ", 9) == 0)
			dirty = strtol(l + 9, NULL, 10);
		else if (strncmp(l, "nr_writeback ", 13) == 0)
			wb = strtol(l + 13, NULL, 10);
	}
	return dirty < 0 || wb < 0 ? -1 : dirty + wb;
}

/* What the command wrote, written back to the host: only the shares it
 * could write to (the read-only trees hold nothing dirty; sync() would
 * wait on each of their superblocks too), and nothing when the kernel's
 * exact count says no page is dirty: 9p writes attributes, names and
 * links to the host as they happen, only file data waits in the page
 * cache. A share that cannot be synced is synced the long way. */
static void warm_sync(void)
{
	if (exact_vmstat && dirty_pages() == 0)
		return;
	for (size_t i = 0; i < n_fresh; i++) {
		int fd = open(fresh_shares[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || syncfs(fd) < 0) {
			if (fd >= 0)
				close(fd);
			sync();
			return;
		}
		close(fd);
	}
}

typedef struct Warm {
	int port;
	uint32_t id;           /* the running command's exec id */
	pid_t reaper;          /* the reaper (pid 1 of the commands' pid namespace); 0: none */
	int rp;                /* the init's end of its pair (reaper()) */
	bool running;          /* a command runs */
	int in, out, err;      /* its stdin (write end), stdout, stderr */
	bool in_eof;           /* the host sent STDIN_EOF */
	char inbuf[VM_MUX_WINDOW + VM_MUX_CHUNK];
	size_t in_len;
	unsigned char rx[VM_MUX_HEAD + VM_MUX_MAX];
	size_t rx_len;
	unsigned long uid, gid, mask;
	char cwd[4096]; /* the last command's working directory */
} Warm;

static Warm warm;
static int warm_sfd = -1;
static volatile pid_t warm_cmd; /* in the reaper: the command */

/* Write all of @buf to the port (non-blocking: waits for room). */
static void port_write(const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t k = write(warm.port, p, n);
		if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd pf = { .fd = warm.port, .events = POLLOUT };
			(void)poll(&pf, 1, 100);
			continue;
		}
		if (k <= 0) {
			/* The host is gone: nothing to serve any more. */
			say("ward-guest-init: the control port failed: %s\n", strerror(errno));
			power_off();
		}
		p += k;
		n -= (size_t)k;
	}
}

/* One frame in one write: one virtio buffer, one write by QEMU to the
 * host's socket, one wakeup of the host's relay (a head and its payload
 * written apart cost a second round of each). */
static void frame(char type, const void *data, size_t n)
{
	static unsigned char buf[VM_MUX_HEAD + VM_MUX_CHUNK];

	vm_mux_head(buf, type, warm.id, (uint32_t)n);
	if (n > VM_MUX_CHUNK) { /* none does: output comes in chunks */
		port_write(buf, VM_MUX_HEAD);
		port_write(data, n);
		return;
	}
	if (n)
		memcpy(buf + VM_MUX_HEAD, data, n);
	port_write(buf, VM_MUX_HEAD + n);
}

static void warm_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void reaper_forward(int sig)
{
	if (warm_cmd > 0)
		(void)kill(-warm_cmd, sig);
}

/* A REQUEST's payload into @argv, @envp (MAX_ITEMS + 1 each, pointing
 * into @req) and *@cwd: 0, or -1 when it breaks the records' rules. */
static int parse_request(char *req, size_t len, char **argv, char **envp, const char **cwd)
{
	size_t argc = 0, envc = 0;

	*cwd = "/";
	for (size_t i = 0; i < len;) {
		char type = req[i];
		char *val = req + i + 1;
		size_t vlen = strnlen(val, len - i - 1);
		if (i + 1 + vlen >= len)
			return -1;
		i += vlen + 2;
		if (type == VM_REC_ARG && argc < MAX_ITEMS)
			argv[argc++] = val;
		else if (type == VM_REC_ENV && envc < MAX_ITEMS)
			envp[envc++] = val;
		else if (type == VM_REC_CWD)
			*cwd = val;
		else
			return -1;
	}
	argv[argc] = NULL;
	envp[envc] = NULL;
	return argc ? 0 : -1;
}

/* In the reaper: one command, from its request to its wait status. The
 * child shares the reaper's memory until it execs (vfork: under TCG a
 * fork's copy of the page tables, and their teardown at exec, is emulated
 * work on every command): it only makes system calls and writes on its
 * own stack. Signals stay blocked until its handlers are the default
 * ones; the host's signals that come meanwhile wait for the reaper, which
 * forwards them once it knows the command's pid. */
static int reaper_run(char **argv, char **envp, const char *cwd, const int fds[3])
{
	static const int fwd[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };
	sigset_t all, none;
	pid_t c;

	sigfillset(&all);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &all, NULL);
	/* execvpe searches the PATH of this process: the command's, set
	 * here so that the child below changes no memory. */
	(void)unsetenv("PATH");
	for (size_t k = 0; envp[k]; k++)
		if (strncmp(envp[k], "PATH=", 5) == 0)
			setenv("PATH", envp[k] + 5, 1);
	c = vfork();
	if (c == 0) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		char msg[256];
		int e;
		for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
			(void)sigaction(fwd[i], &dfl, NULL);
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(fds[0], 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[2], 2) < 0)
			_exit(125);
		(void)setsid();
		umask((mode_t)warm.mask);
		if (setgroups(0, NULL) < 0 || setgid((gid_t)warm.gid) < 0 ||
		    setuid((uid_t)warm.uid) < 0) {
			e = errno;
			snprintf(msg, sizeof(msg), "ward: the guest could not switch to uid %lu: %s\n",
				 warm.uid, strerror(e));
			(void)!write(2, msg, strlen(msg));
			_exit(125);
		}
		if (chdir(cwd) < 0) {
			e = errno;
			snprintf(msg, sizeof(msg), "ward: cannot enter %s in the guest: %s\n", cwd,
				 strerror(e));
			(void)!write(2, msg, strlen(msg));
			_exit(125);
		}
		execvpe(argv[0], argv, envp);
		e = errno;
		snprintf(msg, sizeof(msg), "ward: %s: %s\n", argv[0], strerror(e));
		(void)!write(2, msg, strlen(msg));
		_exit(e == ENOENT ? 127 : 126);
	}
	/* After the vfork: what the child did to the stack is not this. */
	int status = W_EXITCODE(125, 0);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	if (c < 0) {
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
		return status;
	}
	warm_cmd = c;
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	for (;;) { /* the command, and the orphans it leaves meanwhile */
		int s;
		pid_t p = waitpid(-1, &s, 0);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break;
		if (p == c) {
			status = s;
			break;
		}
	}
	warm_cmd = 0;
	/* Whatever it left running dies with it, as at T2: every process of
	 * this pid namespace but its pid 1 (the reaper), again until none is
	 * left (one may fork while the first round goes), each reaped. In a
	 * kernel without pid namespaces (the reaper a plain fork) that is
	 * every process of the guest but the init and the reaper: the same
	 * ones, as nothing else runs there. */
	for (;;) {
		bool any = kill(-1, SIGKILL) == 0;
		pid_t p;
		while ((p = waitpid(-1, NULL, any ? 0 : WNOHANG)) > 0 || (p < 0 && errno == EINTR))
			;
		if (!any)
			break;
	}
	return status;
}

/* The reaper: pid 1 of the commands' pid namespace (where the kernel
 * allows one), started with the session's first command and kept: a pid
 * namespace made and torn down per command cost each about a millisecond
 * of guest time under TCG. Takes each command from the init on @sock (its
 * request, and its stdin, stdout and stderr), and answers with its wait
 * status once nothing it started is left. The init ends it (SIGKILL: the
 * namespace and all in it) when a command is to end (KILL). */
static __attribute__((noreturn)) void reaper(int sock)
{
	static const int fwd[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM };
	static char req[VM_MUX_MAX];
	struct sigaction sa = { .sa_handler = reaper_forward };

	for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
		(void)sigaction(fwd[i], &sa, NULL);
	for (;;) {
		char *argv[MAX_ITEMS + 1], *envp[MAX_ITEMS + 1];
		char cbuf[CMSG_SPACE(3 * sizeof(int))];
		struct iovec iov = { .iov_base = req, .iov_len = sizeof(req) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;
		const char *cwd;
		int fds[3], status;
		ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0); /* the init is gone */
		cm = CMSG_FIRSTHDR(&mh);
		if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(3 * sizeof(int)))
			_exit(125);
		memcpy(fds, CMSG_DATA(cm), sizeof(fds));
		if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
		    parse_request(req, (size_t)n, argv, envp, &cwd) < 0) {
			for (int i = 0; i < 3; i++)
				close(fds[i]);
			status = W_EXITCODE(125, 0);
		} else
			status = reaper_run(argv, envp, cwd, fds);
		if (send(sock, &status, sizeof(status), MSG_NOSIGNAL) < 0)
			_exit(0);
	}
}

/* The reaper, made where none runs: 0, or -1. */
static int reaper_start(void)
{
	int sv[2], big = 2 * (int)VM_MUX_MAX;
	pid_t r;

	if (warm.reaper > 0)
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	/* A request is one message: up to VM_MUX_MAX bytes (the init is the
	 * guest's root: it may raise the buffer past the default). */
	(void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	(void)setsockopt(sv[1], SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	/* A pid namespace of its own where the kernel has them; else a fork. */
	r = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, NULL, NULL, 0);
	if (r < 0 && (errno == EINVAL || errno == EPERM))
		r = fork();
	if (r == 0) {
		close(warm.port);
		close(warm_sfd);
		close(sv[0]);
		reaper(sv[1]);
	}
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		return -1;
	}
	warm.reaper = r;
	warm.rp = sv[0];
	return 0;
}

/* A REQUEST frame: the command's argv, env and cwd (vm-request.h
 * records), passed to the reaper with the command's ends of three pipes. */
static void warm_start(char *req, size_t len)
{
	char *argv[MAX_ITEMS + 1], *envp[MAX_ITEMS + 1];
	char cbuf[CMSG_SPACE(3 * sizeof(int))] = {};
	struct iovec iov = { .iov_base = req, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	const char *cwd;
	int in[2], out[2], err[2], *pipes[3] = { in, out, err }, r;

	if (parse_request(req, len, argv, envp, &cwd) < 0 || reaper_start() < 0)
		goto fail;
	for (int i = 0; i < 3; i++)
		if (pipe2(pipes[i], O_CLOEXEC) < 0) {
			while (i-- > 0) {
				close(pipes[i][0]);
				close(pipes[i][1]);
			}
			goto fail;
		}
	snprintf(warm.cwd, sizeof(warm.cwd), "%s", cwd);
	/* Only the command's ends go: its stdin's EOF is the host's. */
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(3 * sizeof(int));
	memcpy(CMSG_DATA(cm), (int[3]){ in[0], out[1], err[1] }, 3 * sizeof(int));
	r = (int)sendmsg(warm.rp, &mh, MSG_NOSIGNAL);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	warm.in = in[1];
	warm.out = out[0];
	warm.err = err[0];
	warm.in_eof = false;
	warm.in_len = 0;
	warm.running = true;
	(void)fcntl(warm.in, F_SETFL, O_NONBLOCK);
	(void)fcntl(warm.out, F_SETFL, O_NONBLOCK);
	(void)fcntl(warm.err, F_SETFL, O_NONBLOCK);
	if (r < 0) /* the reaper is gone: this command ends as killed */
		(void)kill(warm.reaper, SIGKILL);
	return;
fail:
	frame(VM_MUX_EXIT, "status 125\n", 11);
}

/* Relay what the command wrote (all of it, when @drain), framed. */
static void warm_output(int *fd, char type, bool drain)
{
	static char buf[VM_MUX_CHUNK];

	while (*fd >= 0) {
		ssize_t k = read(*fd, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			return;
		if (k <= 0) {
			warm_close(fd);
			return;
		}
		frame(type, buf, (size_t)k);
		if (!drain)
			return;
	}
}

/* The command's stdin: what the host sent, acknowledged as it is taken
 * (or dropped, once the command closed its end). */
static void warm_stdin(void)
{
	unsigned char ack[4];
	size_t took = 0;

	while (warm.in >= 0 && warm.in_len > 0) {
		ssize_t k = write(warm.in, warm.inbuf, warm.in_len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			break;
		if (k < 0) { /* EPIPE: it will not read more */
			took += warm.in_len;
			warm.in_len = 0;
			warm_close(&warm.in);
			break;
		}
		memmove(warm.inbuf, warm.inbuf + k, warm.in_len - (size_t)k);
		warm.in_len -= (size_t)k;
		took += (size_t)k;
	}
	if (warm.in_eof && warm.in_len == 0)
		warm_close(&warm.in);
	if (took) {
		for (int i = 0; i < 4; i++)
			ack[i] = (unsigned char)(took >> (8 * i));
		frame(VM_MUX_ACK, ack, sizeof(ack));
	}
}

/* The command ended (its wait status): the rest of its output, then its
 * status. */
static void warm_finish(int status)
{
	char line[64];

	warm_output(&warm.out, VM_MUX_STDOUT, true);
	warm_output(&warm.err, VM_MUX_STDERR, true);
	warm_close(&warm.out);
	warm_close(&warm.err);
	warm_close(&warm.in);
	warm.running = false;
	/* What the command wrote reaches the host before ward exec returns
	 * (the shares are mounted cache=loose: writes sit in the guest's
	 * page cache until written back). */
	warm_sync();
	if (WIFSIGNALED(status))
		snprintf(line, sizeof(line), "signal %d\n", WTERMSIG(status));
	else
		snprintf(line, sizeof(line), "status %d\n", WEXITSTATUS(status));
	if (hostile) {
		static char junk[65536];
		if (strcmp(hostile, "silent") == 0)
			power_off();
		if (strcmp(hostile, "garbage") == 0)
			port_write("st\x01tus 0 0\n", 12);
		if (strcmp(hostile, "flood") == 0) {
			memset(junk, 's', sizeof(junk));
			for (int i = 0; i < 32; i++)
				port_write(junk, sizeof(junk));
		}
		if (strcmp(hostile, "double") == 0)
			frame(VM_MUX_EXIT, line, strlen(line));
	}
	frame(VM_MUX_EXIT, line, strlen(line));
	/* After the status: the next command finds fresh mounts, and this
	 * one's `ward exec` does not wait for them. */
	warm_remount(warm.cwd);
}

/* The reaper's answer: the command's wait status. */
static void reaper_status(void)
{
	int status;
	ssize_t k = recv(warm.rp, &status, sizeof(status), MSG_DONTWAIT);

	if (k == (ssize_t)sizeof(status))
		warm_finish(status);
	else if (k == 0) /* the reaper is gone: its SIGCHLD says how */
		warm_close(&warm.rp);
}

/* The reaper ended (KILL had the init kill it: its pid namespace went
 * with it): a command it ran ends as killed, unless its status came
 * first. The next command starts another. */
static void reaper_gone(int rstatus)
{
	if (warm.running)
		reaper_status();
	warm.reaper = 0;
	warm_close(&warm.rp);
	if (warm.running)
		warm_finish(WIFSIGNALED(rstatus) ? rstatus : (SIGKILL & 0x7f));
}

/* One frame from the host. Frames for another exec (what was in flight
 * when the last command ended) are dropped. */
static void warm_frame(char type, uint32_t id, char *data, size_t n)
{
	if (type == VM_MUX_HELLO) {
		frame(VM_MUX_READY, NULL, 0);
		return;
	}
	if (type == VM_MUX_REQUEST && !warm.running) {
		/* The writable shares were mounted afresh after the last
		 * command (warm_remount); the read-only trees keep their cache. */
		warm.id = id;
		warm_start(data, n);
		return;
	}
	if (!warm.running || id != warm.id)
		return;
	switch (type) {
	case VM_MUX_STDIN:
		if (warm.in < 0 || warm.in_len + n > sizeof(warm.inbuf)) {
			unsigned char ack[4];
			for (int i = 0; i < 4; i++)
				ack[i] = (unsigned char)(n >> (8 * i));
			frame(VM_MUX_ACK, ack, sizeof(ack));
			return;
		}
		memcpy(warm.inbuf + warm.in_len, data, n);
		warm.in_len += n;
		warm_stdin();
		break;
	case VM_MUX_STDIN_EOF:
		warm.in_eof = true;
		warm_stdin();
		break;
	case VM_MUX_SIGNAL:
		if (n == 1 && (data[0] == SIGHUP || data[0] == SIGINT || data[0] == SIGQUIT ||
			       data[0] == SIGTERM))
			(void)kill(warm.reaper, data[0]);
		break;
	case VM_MUX_KILL: /* the reaper's pid namespace, and all in it */
		(void)kill(warm.reaper, SIGKILL);
		break;
	default:
		break;
	}
}

/* Read what the host sent; handle each whole frame. */
static void warm_rx(void)
{
	for (;;) {
		ssize_t k = read(warm.port, warm.rx + warm.rx_len, sizeof(warm.rx) - warm.rx_len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			break;
		if (k <= 0) {
			/* No host connected (yet, or any more): wait for one. */
			usleep(10000);
			break;
		}
		warm.rx_len += (size_t)k;
		size_t off = 0;
		while (warm.rx_len - off >= VM_MUX_HEAD) {
			unsigned char *h = warm.rx + off;
			uint32_t len = vm_mux_u32(h + 5);
			if (len > VM_MUX_MAX) {
				say("ward-guest-init: a frame of %u bytes from the host\n", len);
				power_off();
			}
			if (warm.rx_len - off < VM_MUX_HEAD + len)
				break;
			warm_frame((char)h[0], vm_mux_u32(h + 1), (char *)h + VM_MUX_HEAD, len);
			off += VM_MUX_HEAD + len;
		}
		memmove(warm.rx, warm.rx + off, warm.rx_len - off);
		warm.rx_len -= off;
	}
}

static __attribute__((noreturn)) void warm_loop(unsigned long uid, unsigned long gid,
						unsigned long mask, const char *cwd)
{
	struct utsname u;
	sigset_t chld;
	int sfd;

	exact_vmstat = uname(&u) == 0 && !strstr(u.version, "SMP");
	snprintf(warm.cwd, sizeof(warm.cwd), "%s", cwd);
	warm.uid = uid;
	warm.gid = gid;
	warm.mask = mask;
	warm.in = warm.out = warm.err = warm.rp = -1;
	warm.port = port_open(VM_MUX_PORT, O_RDWR | O_NONBLOCK);
	if (warm.port < 0)
		fail("control", errno);
	(void)fchmod(warm.port, 0600);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	(void)sigprocmask(SIG_BLOCK, &chld, NULL);
	sfd = warm_sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		fail("signalfd", errno);
	for (;;) {
		struct pollfd p[6] = {
			{ .fd = warm.port, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
			{ .fd = warm.out, .events = POLLIN },
			{ .fd = warm.err, .events = POLLIN },
			{ .fd = warm.in_len ? warm.in : -1, .events = POLLOUT },
			{ .fd = warm.running ? warm.rp : -1, .events = POLLIN },
		};
		if (poll(p, 6, -1) < 0 && errno != EINTR)
			fail("poll", errno);
		if (p[2].revents)
			warm_output(&warm.out, VM_MUX_STDOUT, false);
		if (p[3].revents)
			warm_output(&warm.err, VM_MUX_STDERR, false);
		if (p[4].revents)
			warm_stdin();
		if (p[5].revents)
			reaper_status();
		if (p[1].revents) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				;
			for (;;) {
				int s;
				pid_t w = waitpid(-1, &s, WNOHANG);
				if (w <= 0)
					break;
				if (w == warm.reaper)
					reaper_gone(s);
			}
		}
		if (p[0].revents)
			warm_rx();
	}
}

int main(void)
{
	char *argv[MAX_ITEMS + 1], *envp[MAX_ITEMS + 1];
	size_t argc = 0, envc = 0, len = 0;
	const char *cwd = "/";
	unsigned long uid = 0, gid = 0, mask = 022;
	bool warm_mode = false;
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

	/* A warm session (its record comes first, but the shares' cache mode
	 * depends on it whatever the order). */
	for (size_t i = 0; i < len; i += strnlen(req + i, len - i) + 1)
		if (req[i] == VM_REC_WARM)
			warm_mode = true;
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
			/* "TAG PATH": the share TAG is the view's PATH. In a
			 * warm session, a read-only tree comes as TAG + "ro"
			 * (vm-request.h) and keeps its cache; the others are
			 * mounted afresh after each command (warm_remount). */
			char *sp = strchr(val, ' '), tag[64];
			bool fresh = warm_mode;
			if (!sp || sp[1] != '/' || (size_t)(sp - val) + 3 > sizeof(tag))
				fail("request-share", EINVAL);
			*sp = 0;
			snprintf(tag, sizeof(tag), "%s", val);
			if (!tag_exported(tag)) {
				snprintf(tag, sizeof(tag), "%s" VM_TAG_RO_SUFFIX, val);
				if (!tag_exported(tag))
					break;
				fresh = false;
			}
			if ((r = mkdir_p(sp + 1)) < 0)
				fail("share-dir", -r);
			if (fresh) {
				if (n_fresh >= sizeof(fresh_shares) / sizeof(fresh_shares[0]))
					fail("request-share", E2BIG);
				fresh_shares[n_fresh++] = (struct Share){ .tag = val, .path = sp + 1 };
			}
			if ((r = mount_9p(tag, sp + 1)) < 0) {
				say("ward-guest-init: share %s at %s\n", tag, sp + 1);
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
		case VM_REC_WARM:
			warm_mode = true;
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
	if (argc == 0 && !warm_mode)
		fail("request-argv", EINVAL);
	argv[argc] = NULL;
	envp[envc] = NULL;
	/* /tmp: the sandbox's private one when exported, else the guest's. */
	if (mkdir("/tmp", 01777) == 0)
		(void)mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m");
	(void)umount2("/.ward", MNT_DETACH);
	if (warm_mode)
		warm_loop(uid, gid, mask, cwd);

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
