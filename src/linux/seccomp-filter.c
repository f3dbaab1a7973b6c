/* The seccomp filter: default ALLOW, EPERM for kernel attack surface a build
 * or test never needs, and KILL_PROCESS for any non-native syscall ABI.
 * Compiled with libseccomp in the parent, exported to BPF in memory, and
 * loaded in the child with one syscall (no allocation after clone). Every
 * entry and its reason is in docs/seccomp.md; keep the two in step. */
#include <errno.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "common/cleanup.h"
#include "common/macro.h"
#include "linux/seccomp-filter.h"

struct SeccompProgram {
	struct sock_filter *insns;
	size_t len;
};

SeccompProgram *seccomp_program_free(SeccompProgram *p)
{
	if (!p)
		return NULL;
	free(p->insns);
	free(p);
	return NULL;
}

int seccomp_program_from_insns(const void *insns, size_t len, SeccompProgram **ret)
{
	SeccompProgram *p;

	if (!insns || len == 0 || len > BPF_MAXINSNS)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->insns = malloc(len * sizeof(struct sock_filter));
	if (!p->insns) {
		free(p);
		return -ENOMEM;
	}
	memcpy(p->insns, insns, len * sizeof(struct sock_filter));
	p->len = len;
	*ret = p;
	return 0;
}

const void *seccomp_program_insns(const SeccompProgram *p)
{
	return p ? p->insns : NULL;
}

size_t seccomp_program_len(const SeccompProgram *p)
{
	return p ? p->len : 0;
}

unsigned seccomp_options_index(const SeccompOptions *opt)
{
	return (opt->allow_nested_userns ? 1U : 0U) | (opt->allow_ptrace ? 2U : 0U) |
	       (opt->tier1 ? 4U : 0U) | (opt->deny_unix_socket ? 8U : 0U);
}

void seccomp_options_from_index(unsigned i, SeccompOptions *ret)
{
	*ret = (SeccompOptions){
		.allow_nested_userns = (i & 1U) != 0,
		.allow_ptrace = (i & 2U) != 0,
		.tier1 = (i & 4U) != 0,
		.deny_unix_socket = (i & 8U) != 0,
	};
}

int seccomp_program_load(const SeccompProgram *p)
{
	struct sock_fprog prog;

	if (!p || p->len == 0 || p->len > USHRT_MAX)
		return -EINVAL;
	prog.len = (unsigned short)p->len;
	prog.filter = p->insns;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
	/* Kernels before 3.17 have only the prctl entry point. */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return -errno;
	return 0;
}

#if HAVE_SECCOMP

#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <sched.h>

DEFINE_TRIVIAL_CLEANUP_FUNC(scmp_filter_ctx, seccomp_release)
#define _cleanup_seccomp_ _cleanup_(seccomp_releasep)

/* Which switch, if any, lifts an entry. */
typedef enum SeccompGroup {
	SC_ALWAYS,
	SC_NESTED, /* lifted by allow_nested_sandbox */
	SC_PTRACE, /* lifted by allow_ptrace */
} SeccompGroup;

typedef struct SeccompEntry {
	const char *name;
	int nr;  /* used when libseccomp 2.5.4 does not know the name */
	SeccompGroup group;
} SeccompEntry;

/* Denied outright with EPERM, whatever the arguments. The reasons are in
 * docs/seccomp.md, one line per entry. */
/* clang-format off */
static const SeccompEntry deny_entries[] = {
	{ "bpf", -1, SC_ALWAYS },
	{ "perf_event_open", -1, SC_ALWAYS },
	{ "userfaultfd", -1, SC_ALWAYS },
	{ "keyctl", -1, SC_ALWAYS },
	{ "add_key", -1, SC_ALWAYS },
	{ "request_key", -1, SC_ALWAYS },
	{ "kexec_load", -1, SC_ALWAYS },
	{ "kexec_file_load", -1, SC_ALWAYS },
	{ "init_module", -1, SC_ALWAYS },
	{ "finit_module", -1, SC_ALWAYS },
	{ "delete_module", -1, SC_ALWAYS },
	{ "io_uring_setup", -1, SC_ALWAYS },
	{ "io_uring_enter", -1, SC_ALWAYS },
	{ "io_uring_register", -1, SC_ALWAYS },
	{ "acct", -1, SC_ALWAYS },
	{ "swapon", -1, SC_ALWAYS },
	{ "swapoff", -1, SC_ALWAYS },
	{ "reboot", -1, SC_ALWAYS },
	{ "settimeofday", -1, SC_ALWAYS },
	{ "clock_settime", -1, SC_ALWAYS },
	{ "clock_adjtime", -1, SC_ALWAYS },
	{ "adjtimex", -1, SC_ALWAYS },
	{ "name_to_handle_at", -1, SC_ALWAYS },
	{ "open_by_handle_at", -1, SC_ALWAYS },
	{ "quotactl", -1, SC_ALWAYS },
	{ "quotactl_fd", -1, SC_ALWAYS },
	{ "lookup_dcookie", -1, SC_ALWAYS },
	{ "vhangup", -1, SC_ALWAYS },
	{ "syslog", -1, SC_ALWAYS },
	{ "uselib", -1, SC_ALWAYS },
	{ "iopl", -1, SC_ALWAYS },
	{ "ioperm", -1, SC_ALWAYS },
	/* The mount family, old and new API: a nested sandbox needs them
	 * inside its own user namespace, so they go with that switch. */
	{ "mount", -1, SC_NESTED },
	{ "umount2", -1, SC_NESTED },
	{ "pivot_root", -1, SC_NESTED },
	{ "move_mount", -1, SC_NESTED },
	{ "open_tree", -1, SC_NESTED },
	{ "open_tree_attr", 467, SC_NESTED }, /* Linux 6.15, unknown to libseccomp 2.5.4 */
	{ "fsopen", -1, SC_NESTED },
	{ "fsconfig", -1, SC_NESTED },
	{ "fsmount", -1, SC_NESTED },
	{ "fspick", -1, SC_NESTED },
	{ "mount_setattr", -1, SC_NESTED },
	{ "setns", -1, SC_NESTED },
	{ "ptrace", -1, SC_PTRACE },
	{ "process_vm_readv", -1, SC_PTRACE },
	{ "process_vm_writev", -1, SC_PTRACE },
	{ "pidfd_getfd", -1, SC_PTRACE },
};
/* clang-format on */

static bool entry_applies(SeccompGroup g, const SeccompOptions *opt)
{
	switch (g) {
	case SC_ALWAYS:
		return true;
	case SC_NESTED:
		return !opt->allow_nested_userns;
	case SC_PTRACE:
		return !opt->allow_ptrace;
	}
	return true;
}

static int resolve(const SeccompEntry *e)
{
	int nr = seccomp_syscall_resolve_name(e->name);

	if (nr == __NR_SCMP_ERROR)
		nr = e->nr;
	return nr; /* < 0: not on this architecture */
}

/* EPERM when argument @arg is not one of @allowed (sorted ascending).
 * libseccomp cannot combine two comparisons of one argument in a rule, so
 * "not in the set" is a union of single comparisons: one GT for everything
 * above the largest allowed value, and for each gap below it the aligned
 * power-of-two blocks that tile it, each one masked compare (mask ~(2^k-1)
 * over all 64 bits, so a block never matches a value with upper bits set).
 * The kernel reads these arguments as int: garbage in the upper 32 bits of
 * an allowed family is denied too (GT), never let through. {1,2,10,16}
 * takes 7 rules instead of one per denied value. */
static int deny_not_in(scmp_filter_ctx ctx, int nr, unsigned arg, const uint64_t *allowed,
		       size_t n_allowed)
{
	uint64_t lo = 0;
	int r;

	r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
			     SCMP_CMP64(arg, SCMP_CMP_GT, allowed[n_allowed - 1]));
	for (size_t i = 0; i < n_allowed && r >= 0; i++) {
		/* The gap [lo, allowed[i]) in aligned blocks. */
		while (lo < allowed[i] && r >= 0) {
			uint64_t size = lo ? lo & -lo : 1ULL << 63;

			while (lo + size > allowed[i])
				size >>= 1;
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					     SCMP_CMP64(arg, SCMP_CMP_MASKED_EQ, ~(size - 1), lo));
			lo += size;
		}
		lo = allowed[i] + 1;
	}
	return r;
}

/* personality(): allow only 0 (PER_LINUX) and 0xffffffff (the query).
 * A 32-bit value is all-zeros or all-ones exactly when every pair of
 * neighbouring bits is equal, so EPERM fires when some pair differs: two
 * masked compares per pair, each a single comparison as libseccomp needs. */
static int deny_personality(scmp_filter_ctx ctx)
{
	int nr = SCMP_SYS(personality), r;

	for (unsigned b = 0; b < 31; b++) {
		uint64_t pair = 3ULL << b;

		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
				     SCMP_A0_64(SCMP_CMP_MASKED_EQ, pair, 1ULL << b));
		if (r >= 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					     SCMP_A0_64(SCMP_CMP_MASKED_EQ, pair, 2ULL << b));
		if (r < 0)
			return r;
	}
	return 0;
}

/* Calls that set a file's mode, and where the mode is: a set-uid or
 * set-gid bit in it is refused (docs/seccomp.md, "No set-id files").
 * @flags_arg >= 0: only when the open flags create a file (O_CREAT,
 * O_TMPFILE); without them the kernel ignores the mode. */
typedef struct SetidEntry {
	const char *name;
	int nr;        /* used when libseccomp 2.5.4 does not know the name */
	int mode_arg;
	int flags_arg; /* -1: none */
} SetidEntry;

/* clang-format off */
static const SetidEntry setid_entries[] = {
	{ "chmod",     -1,  1, -1 },
	{ "fchmod",    -1,  1, -1 },
	{ "fchmodat",  -1,  2, -1 },
	{ "fchmodat2", 452, 2, -1 }, /* Linux 6.6, unknown to libseccomp 2.5.4 */
	{ "mknod",     -1,  1, -1 },
	{ "mknodat",   -1,  2, -1 },
	{ "creat",     -1,  1, -1 },
	{ "open",      -1,  2, 1 },
	{ "openat",    -1,  3, 2 },
};
/* clang-format on */

/* The kernel reads these modes as umode_t and the flags as int: a masked
 * compare of one bit reads exactly the bit the kernel acts on, whatever
 * the upper bits hold. */
static int deny_setid_modes(scmp_filter_ctx ctx)
{
	static const uint64_t setid_bits[] = { S_ISUID, S_ISGID };
	static const uint64_t create_flags[] = { O_CREAT, __O_TMPFILE };
	int r = 0;

	for (size_t i = 0; i < ELEMENTSOF(setid_entries) && r >= 0; i++) {
		const SetidEntry *e = &setid_entries[i];
		int nr = seccomp_syscall_resolve_name(e->name);

		if (nr == __NR_SCMP_ERROR)
			nr = e->nr;
		if (nr < 0)
			continue; /* not on this architecture (open, creat on arm64) */
		for (size_t b = 0; b < ELEMENTSOF(setid_bits) && r >= 0; b++) {
			struct scmp_arg_cmp mode = {
				.arg = (unsigned)e->mode_arg, .op = SCMP_CMP_MASKED_EQ,
				.datum_a = setid_bits[b], .datum_b = setid_bits[b],
			};
			if (e->flags_arg < 0) {
				r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, mode);
				continue;
			}
			for (size_t f = 0; f < ELEMENTSOF(create_flags) && r >= 0; f++) {
				struct scmp_arg_cmp flags = {
					.arg = (unsigned)e->flags_arg, .op = SCMP_CMP_MASKED_EQ,
					.datum_a = create_flags[f], .datum_b = create_flags[f],
				};
				r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2, flags, mode);
			}
		}
	}
	/* openat2 takes flags and mode in a struct in memory, which a filter
	 * cannot read: ENOSYS, and libc and runtimes fall back to openat. */
	if (r >= 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
	return r;
}

static int build_filter(const SeccompOptions *opt, scmp_filter_ctx *ret)
{
	_cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
	static const uint64_t socket_families[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };
	static const unsigned long tty_ioctls[] = { TIOCSTI, TIOCLINUX };
	int r;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;

	/* Only the native ABI is in the filter; any other (i386 through
	 * int 0x80, and x32, whose syscall numbers carry __X32_SYSCALL_BIT
	 * under the x86_64 audit arch and which libseccomp checks for
	 * when x32 is not added) takes the bad-arch action: kill. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r < 0)
		return r;
	/* A binary tree over syscall numbers instead of a linear list. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

	for (size_t i = 0; i < ELEMENTSOF(deny_entries); i++) {
		int nr;

		if (!entry_applies(deny_entries[i].group, opt))
			continue;
		nr = resolve(&deny_entries[i]);
		if (nr < 0)
			continue;
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (r < 0)
			return r;
	}

	if (!opt->allow_nested_userns) {
		/* clone's flags are a register: check CLONE_NEWUSER there.
		 * clone3's are in memory where BPF cannot look, so clone3
		 * returns ENOSYS and glibc (2.34+) falls back to clone. */
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				     SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
		if (r >= 0)
			r = seccomp_rule_add(
				ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
				SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
		if (r >= 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
		if (r < 0)
			return r;
	}

	r = deny_personality(ctx);
	if (r < 0)
		return r;

	r = deny_setid_modes(ctx);
	if (r < 0)
		return r;

	/* Terminal input injection (CVE-2017-5226 class). The request is an
	 * unsigned int in the kernel: compare the low 32 bits only. */
	for (size_t i = 0; i < ELEMENTSOF(tty_ioctls); i++) {
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
				     SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL, tty_ioctls[i]));
		if (r < 0)
			return r;
	}

	/* Socket families: AF_VSOCK reaches the hypervisor and is not
	 * isolated by a network namespace; AF_PACKET, AF_BLUETOOTH, AF_ALG,
	 * AF_KEY and the rest are attack surface nothing here needs. */
	r = deny_not_in(ctx, SCMP_SYS(socket), 0, socket_families,
			    ELEMENTSOF(socket_families));
	if (r >= 0)
		r = deny_not_in(ctx, SCMP_SYS(socketpair), 0, socket_families,
				    ELEMENTSOF(socket_families));
	if (r < 0)
		return r;

	/* Tier 1: no network, IPC or pid namespace. */
	if (opt->tier1) {
		static const uint64_t fams[] = { AF_INET, AF_INET6 };

		/* Landlock's network rules know TCP and nothing else: every
		 * other IPv4/IPv6 socket would reach the host's network
		 * unchecked. Not only datagrams: MPTCP (SOCK_STREAM with
		 * IPPROTO_MPTCP, which falls back to TCP against any server)
		 * connected straight past a T1 "network: none" on this
		 * kernel, and SCTP, DCCP or SMC would where loaded. So an
		 * IPv4/IPv6 socket is a SOCK_STREAM of protocol 0 or
		 * IPPROTO_TCP, or refused. The type carries SOCK_CLOEXEC and
		 * SOCK_NONBLOCK in its upper bits: the low four are the
		 * kernel's SOCK_TYPE_MASK. The protocol is an int: anything
		 * above 6, upper bits included, is refused. */
		for (size_t f = 0; f < ELEMENTSOF(fams) && r >= 0; f++) {
			struct scmp_arg_cmp fam = SCMP_A0_64(SCMP_CMP_EQ, fams[f]);

			for (uint64_t t = 0; t < 16 && r >= 0; t++)
				if (t != SOCK_STREAM)
					r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
							     SCMP_SYS(socket), 2, fam,
							     SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xf, t));
			/* Protocol not in {0, 6}: above 6, or 1, 2-3, 4-5. */
			if (r >= 0)
				r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
						     fam, SCMP_A2_64(SCMP_CMP_GT, IPPROTO_TCP));
			static const uint64_t blocks[][2] = { { ~0ULL, 1 }, { ~1ULL, 2 }, { ~1ULL, 4 } };
			for (size_t b = 0; b < ELEMENTSOF(blocks) && r >= 0; b++)
				r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
						     fam,
						     SCMP_A2_64(SCMP_CMP_MASKED_EQ, blocks[b][0],
								blocks[b][1]));
		}
		if (r < 0)
			return r;
		/* No IPC namespace: the host user's SysV shared memory,
		 * semaphores and message queues, and POSIX message queues
		 * (whose names are not paths Landlock sees), are shared. */
		static const char *const ipc[] = { "shmget", "shmat",	   "shmctl",
						   "shmdt",  "semget",	   "semop",
						   "semctl", "semtimedop", "msgget",
						   "msgsnd", "msgrcv",	   "msgctl",
						   "mq_open", "mq_unlink" };
		for (size_t i = 0; i < ELEMENTSOF(ipc) && r >= 0; i++) {
			int nr = seccomp_syscall_resolve_name(ipc[i]);
			if (nr != __NR_SCMP_ERROR)
				r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		}
		/* Inode flags (chattr) are metadata too, set by ioctl on any
		 * descriptor the owner holds, a read-only one included: at T2
		 * the read-only binds refuse them, at T1 nothing else would
		 * (the metadata guard, meta-guard.h, takes the other calls).
		 * The request is an unsigned int: the low 32 bits. */
		/* No pid namespace: the user's host processes (the harness,
		 * the agent) are reachable by pid. Landlock scopes signals and
		 * ptrace-class access, not these: each may act on the caller
		 * only (pid or who 0; PRIO_PGRP and PRIO_USER reach ward's
		 * process group and every process of the user). */
		static const char *const self_only[] = { "prlimit64", "sched_setaffinity",
							 "sched_setscheduler", "sched_setparam",
							 "sched_setattr" };
		static const uint64_t zero[] = { 0 }, prio_process[] = { PRIO_PROCESS },
				      ioprio_process[] = { 1 /* IOPRIO_WHO_PROCESS */ };
		for (size_t i = 0; i < ELEMENTSOF(self_only) && r >= 0; i++) {
			int nr = seccomp_syscall_resolve_name(self_only[i]);
			if (nr != __NR_SCMP_ERROR)
				r = deny_not_in(ctx, nr, 0, zero, 1);
		}
		if (r >= 0)
			r = deny_not_in(ctx, SCMP_SYS(setpriority), 0, prio_process, 1);
		if (r >= 0)
			r = deny_not_in(ctx, SCMP_SYS(setpriority), 1, zero, 1);
		if (r >= 0)
			r = deny_not_in(ctx, SCMP_SYS(ioprio_set), 0, ioprio_process, 1);
		if (r >= 0)
			r = deny_not_in(ctx, SCMP_SYS(ioprio_set), 1, zero, 1);
		static const unsigned long flag_ioctls[] = { FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS,
							     FS_IOC_FSSETXATTR };
		for (size_t i = 0; i < ELEMENTSOF(flag_ioctls) && r >= 0; i++)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
					     SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xffffffffULL,
							flag_ioctls[i]));
		if (r < 0)
			return r;
	}
	/* Tier 1 without Landlock ABI 9: connect() to a pathname socket is
	 * not checked by anything, so no AF_UNIX socket at all (a socketpair
	 * reaches nothing outside and stays allowed). */
	if (opt->deny_unix_socket) {
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
				     SCMP_A0_64(SCMP_CMP_EQ, AF_UNIX));
		if (r < 0)
			return r;
	}

	*ret = TAKE_PTR(ctx);
	return 0;
}

int seccomp_program_dump(const SeccompOptions *opt, int fd)
{
	_cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
	int r;

	if (!opt)
		return -EINVAL;
	r = build_filter(opt, &ctx);
	if (r < 0)
		return r;
	return seccomp_export_pfc(ctx, fd);
}

int seccomp_program_compile(const SeccompOptions *opt, SeccompProgram **ret)
{
	_cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
	_cleanup_close_ int fd = -EBADF;
	SeccompProgram *p;
	struct stat st;
	ssize_t n;
	int r;

	if (!opt || !ret)
		return -EINVAL;
	r = build_filter(opt, &ctx);
	if (r < 0)
		return r;

	/* libseccomp 2.5 exports only to an fd; a memfd keeps it in memory. */
	fd = memfd_create("ward-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return r;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -E2BIG;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->insns = malloc((size_t)st.st_size);
	if (!p->insns) {
		seccomp_program_free(p);
		return -ENOMEM;
	}
	n = pread(fd, p->insns, (size_t)st.st_size, 0);
	if (n != st.st_size) {
		seccomp_program_free(p);
		return n < 0 ? -errno : -EIO;
	}
	p->len = (size_t)st.st_size / sizeof(struct sock_filter);
	*ret = p;
	return 0;
}

#else /* !HAVE_SECCOMP */

int seccomp_program_compile(const SeccompOptions *opt, SeccompProgram **ret)
{
	return -EOPNOTSUPP;
}

int seccomp_program_dump(const SeccompOptions *opt, int fd)
{
	return -EOPNOTSUPP;
}

#endif
