/* sys-probe NAME...|all|list: try something the sandbox's seccomp filter
 * should deny (or, for the controls, allow), print "NAME: RESULT" with the
 * errno the kernel answered, and exit 0 when every result is the expected
 * one (EPERM for a denial, ENOSYS for clone3, success for a control), else 1.
 * x32 and i386 are expected to kill the process (the caller checks for
 * SIGSYS). Each probe runs in a forked child, and the arguments are chosen so
 * that a call the filter lets through does nothing harmful. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SYS_open_tree_attr
#define SYS_open_tree_attr 467
#endif

/* The test build uses the project's sanitizers; LeakSanitizer's exit-time
 * scan needs ptrace, which the sandbox denies, and would turn a clean exit
 * into a failure. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

enum { EXPECT_EPERM, EXPECT_ENOSYS, EXPECT_OK, EXPECT_KILL };

static long p_bpf(void) { return syscall(SYS_bpf, 0, NULL, 0); }
static long p_perf(void) { return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0); }
/* UFFD_USER_MODE_ONLY: allowed unprivileged since 5.11 when not filtered. */
static long p_userfaultfd(void) { return syscall(SYS_userfaultfd, 1); }
static long p_keyctl(void) { return syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3, 0); }
static long p_add_key(void) { return syscall(SYS_add_key, "ward-nonexistent", "x", "", 0, -2); }
static long p_request_key(void) { return syscall(SYS_request_key, "user", "ward-none", NULL, 0); }
static long p_kexec_load(void) { return syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL); }
static long p_kexec_file_load(void) { return syscall(SYS_kexec_file_load, -1, -1, 0, "", ~0UL); }
static long p_init_module(void) { return syscall(SYS_init_module, NULL, 0, ""); }
static long p_finit_module(void) { return syscall(SYS_finit_module, -1, "", 0); }
static long p_delete_module(void) { return syscall(SYS_delete_module, "ward_none", O_NONBLOCK); }
static long p_io_uring(void) { return syscall(SYS_io_uring_setup, 1, NULL); }
static long p_io_uring_enter(void) { return syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0); }
static long p_io_uring_register(void) { return syscall(SYS_io_uring_register, -1, 0, NULL, 0); }
static long p_mount(void) { return mount("none", "/nonexistent-ward", "tmpfs", 0, NULL); }
static long p_umount(void) { return umount2("/nonexistent-ward", 0); }
static long p_pivot_root(void) { return syscall(SYS_pivot_root, "/nonexistent-a", "/nonexistent-b"); }
static long p_move_mount(void) { return syscall(SYS_move_mount, -1, "", -1, "", 0); }
static long p_open_tree(void) { return syscall(SYS_open_tree, -1, "/nonexistent-ward", 0); }
static long p_open_tree_attr(void) { return syscall(SYS_open_tree_attr, -1, "/nonexistent-ward", 0, NULL, 0); }
static long p_fsopen(void) { return syscall(SYS_fsopen, "ward-nonexistent-fs", 0); }
static long p_fsconfig(void) { return syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0); }
static long p_fsmount(void) { return syscall(SYS_fsmount, -1, 0, 0); }
static long p_fspick(void) { return syscall(SYS_fspick, -1, "/nonexistent-ward", 0); }
static long p_mount_setattr(void) { return syscall(SYS_mount_setattr, -1, "/nonexistent-ward", 0, NULL, 0); }
static long p_setns(void) { return syscall(SYS_setns, -1, 0); }
static long p_unshare_user(void) { return unshare(CLONE_NEWUSER); }
static long p_clone_user(void)
{
	long pid = syscall(SYS_clone, (unsigned long)CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return pid < 0 ? -1 : 0;
}
static long p_clone3(void)
{
	unsigned long long args[11] = { 0 };
	long pid;

	args[4] = SIGCHLD; /* exit_signal */
	pid = syscall(SYS_clone3, args, sizeof(args));
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return pid < 0 ? -1 : 0;
}
static long p_ptrace(void) { return ptrace(PTRACE_PEEKUSER, 999999999, 0, 0) == -1 && errno ? -1 : 0; }
static long p_process_vm_readv(void) { return syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 0); }
static long p_process_vm_writev(void) { return syscall(SYS_process_vm_writev, getpid(), NULL, 0, NULL, 0, 0); }
static long p_personality(void) { return personality(PER_LINUX32); }
static long p_acct(void) { return syscall(SYS_acct, "/nonexistent-ward/acct"); }
static long p_swapon(void) { return syscall(SYS_swapon, "/nonexistent-ward", 0); }
static long p_swapoff(void) { return syscall(SYS_swapoff, "/nonexistent-ward"); }
/* Bad magic: EINVAL even for a privileged caller. */
static long p_reboot(void) { return syscall(SYS_reboot, 0, 0, 0, NULL); }
static long p_settimeofday(void) { return syscall(SYS_settimeofday, NULL, NULL); }
static long p_clock_settime(void)
{
	struct timespec ts = { 0, -1 }; /* invalid: EINVAL if it got through */

	return syscall(SYS_clock_settime, CLOCK_REALTIME, &ts);
}
static long p_adjtimex(void)
{
	struct timex t = { .modes = 0 }; /* a read-only query */

	return syscall(SYS_adjtimex, &t) < 0 ? -1 : 0;
}
static long p_clock_adjtime(void)
{
	struct timex t = { .modes = 0 };

	return syscall(SYS_clock_adjtime, CLOCK_REALTIME, &t) < 0 ? -1 : 0;
}
static long p_name_to_handle_at(void)
{
	struct { unsigned int bytes; int type; unsigned char h[128]; } fh = { .bytes = 128 };
	int mount_id;

	return syscall(SYS_name_to_handle_at, AT_FDCWD, ".", &fh, &mount_id, 0);
}
static long p_open_by_handle_at(void) { return syscall(SYS_open_by_handle_at, -1, NULL, 0); }
static long p_quotactl(void) { return syscall(SYS_quotactl, 0x800001 /* Q_SYNC */, NULL, 0, NULL); }
static long p_lookup_dcookie(void) { return syscall(SYS_lookup_dcookie, 0, NULL, 0); }
static long p_vhangup(void)
{
	/* Only under a filter: unfiltered as root, it hangs up our terminal. */
	char buf[4096];
	FILE *f = fopen("/proc/self/status", "re");
	int filtered = 0;

	while (f && fgets(buf, sizeof(buf), f))
		if (strncmp(buf, "Seccomp:", 8) == 0)
			filtered = atoi(buf + 8) == 2;
	if (f)
		fclose(f);
	if (!filtered) {
		errno = ECANCELED;
		return -1;
	}
	return syscall(SYS_vhangup);
}
static long p_syslog(void) { return syscall(SYS_syslog, 10 /* SIZE_BUFFER */, NULL, 0); }
/* x86 only: elsewhere run_one reports "not applicable". */
#ifdef SYS_iopl
static long p_iopl(void) { return syscall(SYS_iopl, 0); }
static long p_ioperm(void) { return syscall(SYS_ioperm, 0, 0, 0); }
#else
static long p_iopl(void) { return -1; }
static long p_ioperm(void) { return -1; }
#endif
/* A terminal to try the ioctl on: stdin, the controlling tty, or else a
 * fresh pty (where the kernel itself would refuse a foreign tty, so only
 * the test under a real controlling terminal tells the filter apart). */
static int some_tty(void)
{
	int m, fd;

	if (isatty(0))
		return 0;
	fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0)
		return fd;
	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !ptsname(m))
		return -1;
	return open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
}

static long p_tiocsti(void)
{
	const char *s = "WARDINJECT";
	int fd = some_tty();

	if (fd < 0)
		return -1;
	for (const char *c = s; *c; c++)
		if (ioctl(fd, TIOCSTI, c) < 0)
			return -1;
	return 0;
}
static long p_tioclinux(void)
{
	char sub = 0; /* TIOCL_... */
	int fd = some_tty();

	return ioctl(fd < 0 ? 0 : fd, TIOCLINUX, &sub);
}
static long sock(int family, int type, int proto)
{
	int fd = socket(family, type | SOCK_CLOEXEC, proto);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? -1 : 0;
}
static long p_socket_vsock(void) { return sock(AF_VSOCK, SOCK_STREAM, 0); }
static long p_socket_packet(void) { return sock(AF_PACKET, SOCK_DGRAM, 0); }
static long p_socket_bluetooth(void) { return sock(AF_BLUETOOTH, SOCK_STREAM, 0); }
static long p_socket_alg(void) { return sock(AF_ALG, SOCK_SEQPACKET, 0); }
static long p_socket_key(void) { return sock(AF_KEY, SOCK_RAW, 2); }
static long p_socket_tipc(void) { return sock(AF_TIPC, SOCK_RDM, 0); }
static long p_socketpair_vsock(void)
{
	int sv[2];

	return socketpair(AF_VSOCK, SOCK_STREAM, 0, sv);
}
static long p_x32(void) { return syscall(0x40000000L | SYS_getpid); }
static long p_i386(void)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory"); /* i386 getpid */
	return ret;
#else
	return -1; /* not reached: run_one reports "not applicable" */
#endif
}
/* Controls: the filter must leave these alone. */
static long c_getpid(void) { return getpid() > 0 ? 0 : -1; }
static long c_socket_inet(void) { return sock(AF_INET, SOCK_STREAM, 0); }
static long c_socket_inet6(void) { return sock(AF_INET6, SOCK_DGRAM, 0); }
static long c_socket_unix(void) { return sock(AF_UNIX, SOCK_STREAM, 0); }
static long c_socket_netlink(void) { return sock(AF_NETLINK, SOCK_RAW, 0); }
static long c_personality_query(void) { return personality(0xffffffff) < 0 ? -1 : 0; }
static long c_unshare_fs(void) { return unshare(CLONE_FS | CLONE_FILES); }
static long c_fork(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return pid < 0 ? -1 : 0;
}
static long c_ioctl_fionread(void)
{
	int n, sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -1;
	return ioctl(sv[0], FIONREAD, &n);
}

#define P(n, f) { n, f, EXPECT_EPERM }
static const struct {
	const char *name;
	long (*fn)(void);
	int expect;
} probes[] = {
	P("bpf", p_bpf), P("perf", p_perf), P("userfaultfd", p_userfaultfd),
	P("keyctl", p_keyctl), P("add_key", p_add_key), P("request_key", p_request_key),
	P("kexec_load", p_kexec_load), P("kexec_file_load", p_kexec_file_load),
	P("init_module", p_init_module), P("finit_module", p_finit_module),
	P("delete_module", p_delete_module), P("io_uring", p_io_uring),
	P("io_uring_enter", p_io_uring_enter), P("io_uring_register", p_io_uring_register),
	P("mount", p_mount), P("umount", p_umount), P("pivot_root", p_pivot_root),
	P("move_mount", p_move_mount), P("open_tree", p_open_tree),
	P("open_tree_attr", p_open_tree_attr), P("fsopen", p_fsopen), P("fsconfig", p_fsconfig),
	P("fsmount", p_fsmount), P("fspick", p_fspick), P("mount_setattr", p_mount_setattr),
	P("setns", p_setns), P("unshare-user", p_unshare_user), P("clone-user", p_clone_user),
	{ "clone3", p_clone3, EXPECT_ENOSYS },
	P("ptrace", p_ptrace), P("process_vm_readv", p_process_vm_readv),
	P("process_vm_writev", p_process_vm_writev), P("personality", p_personality),
	P("acct", p_acct), P("swapon", p_swapon), P("swapoff", p_swapoff), P("reboot", p_reboot),
	P("settimeofday", p_settimeofday), P("clock_settime", p_clock_settime),
	P("adjtimex", p_adjtimex), P("clock_adjtime", p_clock_adjtime),
	P("name_to_handle_at", p_name_to_handle_at), P("open_by_handle_at", p_open_by_handle_at),
	P("quotactl", p_quotactl), P("lookup_dcookie", p_lookup_dcookie), P("vhangup", p_vhangup),
	P("syslog", p_syslog), P("iopl", p_iopl), P("ioperm", p_ioperm),
	P("tiocsti", p_tiocsti), P("tioclinux", p_tioclinux),
	P("socket-vsock", p_socket_vsock), P("socket-packet", p_socket_packet),
	P("socket-bluetooth", p_socket_bluetooth), P("socket-alg", p_socket_alg),
	P("socket-key", p_socket_key), P("socket-tipc", p_socket_tipc),
	P("socketpair-vsock", p_socketpair_vsock),
	{ "x32", p_x32, EXPECT_KILL }, { "i386", p_i386, EXPECT_KILL },
	{ "getpid", c_getpid, EXPECT_OK }, { "socket-inet", c_socket_inet, EXPECT_OK },
	{ "socket-inet6", c_socket_inet6, EXPECT_OK }, { "socket-unix", c_socket_unix, EXPECT_OK },
	{ "socket-netlink", c_socket_netlink, EXPECT_OK },
	{ "personality-query", c_personality_query, EXPECT_OK },
	{ "unshare-fs", c_unshare_fs, EXPECT_OK }, { "fork", c_fork, EXPECT_OK },
	{ "ioctl-fionread", c_ioctl_fionread, EXPECT_OK },
};

/* Probes of x86-only syscalls and ABIs. */
static bool not_applicable(const char *name)
{
#if defined(__x86_64__)
	(void)name;
	return false;
#else
	return strcmp(name, "x32") == 0 || strcmp(name, "i386") == 0 ||
	       strcmp(name, "iopl") == 0 || strcmp(name, "ioperm") == 0;
#endif
}

/* Probes the caller marked absent on this host (--skip NAME): the i386
 * entry point, for one, faults without any filter on some x86_64 hosts
 * (seen in a PVM guest), so a filter cannot be what kills it there. */
static const char *skipped[8];
static size_t n_skipped;

static bool skipped_here(const char *name)
{
	for (size_t i = 0; i < n_skipped; i++)
		if (strcmp(skipped[i], name) == 0)
			return true;
	return false;
}

/* Does int 0x80 reach the kernel's i386 entry here? Run unfiltered, on the
 * host: exit 0 when getpid through it answers, 1 when it faults. */
static int i386_entry(void)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL); /* not a sanitizer's report */
		_exit(p_i386() > 0 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 2;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("i386-entry: present\n");
		return 0;
	}
	printf("i386-entry: absent (%s %d without a filter)\n",
	       WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return 1;
}

/* Run probe @i in a child; print its line; return 0 when as expected. */
static int run_one(size_t i)
{
	int pipefd[2], status, err = 0;
	long ret = 0;
	pid_t pid;

	if (not_applicable(probes[i].name)) {
		printf("%s: not applicable on this architecture\n", probes[i].name);
		return 0;
	}
	if (skipped_here(probes[i].name)) {
		printf("%s: not applicable on this host\n", probes[i].name);
		return 0;
	}

	fflush(stdout);
	if (pipe(pipefd) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		int out[2];

		close(pipefd[0]);
		errno = 0;
		ret = probes[i].fn();
		out[0] = ret < 0 ? -1 : 0;
		out[1] = errno;
		(void)!write(pipefd[1], out, sizeof(out));
		_exit(0);
	}
	close(pipefd[1]);
	if (pid < 0)
		return 1;
	{
		int in[2] = { 0, 0 };
		ssize_t n = read(pipefd[0], in, sizeof(in));

		close(pipefd[0]);
		waitpid(pid, &status, 0);
		if (n != sizeof(in)) {
			int killed = WIFSIGNALED(status) ? WTERMSIG(status) : 0;

			printf("%s: killed by signal %d\n", probes[i].name, killed);
			return probes[i].expect == EXPECT_KILL && killed == SIGSYS ? 0 : 1;
		}
		ret = in[0];
		err = in[1];
	}
	if (ret >= 0)
		printf("%s: ok\n", probes[i].name);
	else
		printf("%s: %s (%s)\n", probes[i].name, strerrorname_np(err) ?: "?", strerror(err));
	switch (probes[i].expect) {
	case EXPECT_EPERM:
		return ret < 0 && err == EPERM ? 0 : 1;
	case EXPECT_ENOSYS:
		return ret < 0 && err == ENOSYS ? 0 : 1;
	case EXPECT_OK:
		return ret >= 0 ? 0 : 1;
	default:
		return 1; /* EXPECT_KILL, and it survived */
	}
}

int main(int argc, char **argv)
{
	int bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: sys-probe [--skip NAME]... NAME...|all|list|i386-entry\n");
		return 2;
	}
	while (argc > 2 && strcmp(argv[1], "--skip") == 0 &&
	       n_skipped < sizeof(skipped) / sizeof(skipped[0])) {
		skipped[n_skipped++] = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (strcmp(argv[1], "i386-entry") == 0)
		return i386_entry();
	if (strcmp(argv[1], "list") == 0) {
		for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
			printf("%s\n", probes[i].name);
		return 0;
	}
	for (int a = 1; a < argc; a++) {
		bool all = strcmp(argv[a], "all") == 0, found = false;

		for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
			if (all || strcmp(argv[a], probes[i].name) == 0) {
				found = true;
				bad |= run_one(i);
			}
		if (!found) {
			fprintf(stderr, "sys-probe: unknown probe '%s'\n", argv[a]);
			return 2;
		}
	}
	return bad;
}
