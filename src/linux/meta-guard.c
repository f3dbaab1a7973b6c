/* Tier 1's wall for file metadata: see meta-guard.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "linux/meta-guard.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "meta-guard: unknown architecture"
#endif

/* Newer than some headers. */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
#ifndef XATTR_NAME_MAX
#define XATTR_NAME_MAX 255
#endif
#ifndef XATTR_SIZE_MAX
#define XATTR_SIZE_MAX 65536
#endif

/* Every call that changes an inode's mode, owner, times or xattrs. */
static const int caught[] = {
#ifdef __NR_chmod
	__NR_chmod,
#endif
	__NR_fchmod,
	__NR_fchmodat,
	__NR_fchmodat2,
#ifdef __NR_chown
	__NR_chown,
	__NR_lchown,
#endif
	__NR_fchown,
	__NR_fchownat,
#ifdef __NR_utime
	__NR_utime,
#endif
#ifdef __NR_utimes
	__NR_utimes,
#endif
#ifdef __NR_futimesat
	__NR_futimesat,
#endif
	__NR_utimensat,
	__NR_setxattr,
	__NR_lsetxattr,
	__NR_fsetxattr,
	__NR_removexattr,
	__NR_lremovexattr,
	__NR_fremovexattr,
	__NR_setxattrat,
	__NR_removexattrat,
};

#define N_CAUGHT ELEMENTSOF(caught)

struct MetaGuard {
	struct sock_filter insns[N_CAUGHT + 5];
	char **writable;
	size_t n_writable;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int n_groups;
	unsigned allowed, refused;
};

typedef enum MetaOp { OP_CHMOD, OP_CHOWN, OP_TIMES, OP_SETX, OP_REMOVEX } MetaOp;

/* A caught call, decoded: the target (@dirfd plus @path, or @dirfd alone
 * when @path_addr is 0) and the operation's own arguments. */
typedef struct MetaCall {
	MetaOp op;
	int dirfd;
	uint64_t path_addr;
	bool nofollow;
	bool empty_path; /* AT_EMPTY_PATH: "" means @dirfd itself */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	enum { TIMES_UTIMBUF, TIMES_TIMEVAL, TIMES_TIMESPEC } times_kind;
	uint64_t times_addr;
	uint64_t name_addr, value_addr, value_size;
	int xflags;
} MetaCall;

MetaGuard *meta_guard_free(MetaGuard *g)
{
	if (!g)
		return NULL;
	for (size_t i = 0; i < g->n_writable; i++)
		free(g->writable[i]);
	free(g->writable);
	free(g->req);
	free(g->resp);
	free(g->groups);
	free(g);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(MetaGuard *, meta_guard_free)

int meta_guard_new(char *const *writable, size_t n_writable, MetaGuard **ret)
{
	_cleanup_(meta_guard_freep) MetaGuard *g = calloc(1, sizeof(*g));
	struct seccomp_notif_sizes sizes;
	size_t k = 0;

	if (!g)
		return -ENOMEM;
	/* arch != native: allow (the main filter kills other ABIs);
	 * nr in caught: notify; else allow. */
	g->insns[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, arch));
	g->insns[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0,
						      N_CAUGHT + 1);
	g->insns[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < N_CAUGHT; i++)
		g->insns[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      (uint32_t)caught[i],
							      (uint8_t)(N_CAUGHT - i), 0);
	g->insns[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	g->insns[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);

	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		return -errno;
	g->req_size = sizes.seccomp_notif > sizeof(struct seccomp_notif) ? sizes.seccomp_notif
									   : sizeof(struct seccomp_notif);
	g->resp_size = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
			       ? sizes.seccomp_notif_resp
			       : sizeof(struct seccomp_notif_resp);
	g->req = calloc(1, g->req_size);
	g->resp = calloc(1, g->resp_size);
	if (!g->req || !g->resp)
		return -ENOMEM;

	g->writable = calloc(n_writable + 1, sizeof(char *));
	if (!g->writable)
		return -ENOMEM;
	for (size_t i = 0; i < n_writable; i++) {
		size_t len = strlen(writable[i]);
		/* "/x/" and "/x" are one hierarchy; "/" would be everything. */
		while (len > 1 && writable[i][len - 1] == '/')
			len--;
		if (writable[i][0] != '/' || len <= 1)
			return -EINVAL;
		if (!(g->writable[g->n_writable] = strndup(writable[i], len)))
			return -ENOMEM;
		g->n_writable++;
	}

	g->uid = geteuid();
	g->gid = getegid();
	int n = getgroups(0, NULL);
	if (n < 0)
		return -errno;
	g->groups = calloc((size_t)n + 1, sizeof(gid_t));
	if (!g->groups)
		return -ENOMEM;
	n = getgroups(n, g->groups);
	if (n < 0)
		return -errno;
	g->n_groups = n;
	*ret = TAKE_PTR(g);
	return 0;
}

int meta_guard_install(const MetaGuard *g)
{
	struct sock_fprog prog = { .len = (unsigned short)ELEMENTSOF(g->insns),
				   .filter = (struct sock_filter *)g->insns };
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			  &prog);

	return fd < 0 ? -errno : (int)fd;
}

void meta_guard_counts(const MetaGuard *g, unsigned *ret_allowed, unsigned *ret_refused)
{
	*ret_allowed = g ? g->allowed : 0;
	*ret_refused = g ? g->refused : 0;
}

/* ---- reading the calling task ---- */

/* Up to @len bytes at @addr of task @pid: process_vm_readv, or where a
 * container's seccomp profile refuses it, /proc/PID/mem (the same ptrace
 * check). Bytes read, or -errno. */
static ssize_t read_some(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	char path[64];

	if (n >= 0)
		return n;
	if (errno == ESRCH)
		return -ESRCH;
	if (errno != EPERM && errno != ENOSYS)
		return -EFAULT;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -EPERM;
	n = pread(fd, buf, len, (off_t)addr);
	return n < 0 ? -EFAULT : n;
}

/* @len bytes at @addr of task @pid. */
static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = read_some(pid, addr, buf, len);

	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* A NUL-terminated string at @addr, page by page (the string may end
 * right before an unmapped page). */
static int read_str(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		size_t page = 4096 - (size_t)((addr + got) & 4095);
		size_t want = page < size - got ? page : size - got;
		ssize_t n = read_some(pid, addr + got, buf + got, want);

		if (n <= 0)
			return n < 0 ? (int)n : -EFAULT;
		if (memchr(buf + got, '\0', (size_t)n))
			return 0;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}

/* The call's starting point, as a descriptor of ours: the task's working
 * directory or its descriptor @dirfd (through /proc, which checks that we
 * may look into it). */
static int open_base(pid_t pid, int dirfd)
{
	char p[64];
	int fd;

	if (dirfd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%d/cwd", (int)pid);
	else if (dirfd >= 0)
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)pid, dirfd);
	else
		return -EBADF;
	fd = open(p, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT && dirfd != AT_FDCWD ? -EBADF : -EPERM;
	return fd;
}

/* The inode the call names, held as an O_PATH descriptor: resolved from
 * the task's starting point, without magic links (a /proc/self/... would
 * be ours, not the task's). */
static int resolve(int base, const char *path, bool nofollow)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
				.resolve = RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, base, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* ---- the decision ---- */

/* Inside one of the writable hierarchies? By the path the kernel gives
 * for the inode we hold (what Landlock also judges by: the hierarchy the
 * file is in). Anything without such a path (pipes, sockets, memfds,
 * deleted files) is not. */
static bool inside_writable(const MetaGuard *g, int fd)
{
	static const char deleted[] = " (deleted)";
	char link[64], path[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0 || (size_t)n >= sizeof(path) - 1)
		return false;
	path[n] = '\0';
	if (path[0] != '/' || ((size_t)n >= sizeof(deleted) - 1 &&
			       strcmp(path + n - (sizeof(deleted) - 1), deleted) == 0))
		return false;
	for (size_t i = 0; i < g->n_writable; i++) {
		size_t wl = strlen(g->writable[i]);

		if (strncmp(path, g->writable[i], wl) == 0 && (path[wl] == '\0' || path[wl] == '/'))
			return true;
	}
	return false;
}

static bool in_groups(const MetaGuard *g, gid_t gid)
{
	if (gid == g->gid)
		return true;
	for (int i = 0; i < g->n_groups; i++)
		if (g->groups[i] == gid)
			return true;
	return false;
}

/* The mode bits' answer for the command, which holds no capability
 * (dropped at T1 for root too): no DAC override here. */
static bool may_write(const MetaGuard *g, const struct stat *st)
{
	if (st->st_uid == g->uid)
		return st->st_mode & S_IWUSR;
	if (in_groups(g, st->st_gid))
		return st->st_mode & S_IWGRP;
	return st->st_mode & S_IWOTH;
}

static int decode(const struct seccomp_notif *req, MetaCall *c)
{
	const __u64 *a = req->data.args;
	const int nr = req->data.nr;

	*c = (MetaCall){ .dirfd = AT_FDCWD, .uid = (uid_t)-1, .gid = (gid_t)-1 };
#ifdef __NR_chmod
	if (nr == __NR_chmod) {
		*c = (MetaCall){ .op = OP_CHMOD, .dirfd = AT_FDCWD, .path_addr = a[0],
				 .mode = (mode_t)a[1] };
		return 0;
	}
	if (nr == __NR_chown || nr == __NR_lchown) {
		*c = (MetaCall){ .op = OP_CHOWN, .dirfd = AT_FDCWD, .path_addr = a[0],
				 .uid = (uid_t)a[1], .gid = (gid_t)a[2],
				 .nofollow = nr == __NR_lchown };
		return 0;
	}
#endif
#ifdef __NR_utime
	if (nr == __NR_utime) {
		*c = (MetaCall){ .op = OP_TIMES, .dirfd = AT_FDCWD, .path_addr = a[0],
				 .times_kind = TIMES_UTIMBUF, .times_addr = a[1] };
		return a[0] ? 0 : -EFAULT;
	}
#endif
#ifdef __NR_utimes
	if (nr == __NR_utimes) {
		*c = (MetaCall){ .op = OP_TIMES, .dirfd = AT_FDCWD, .path_addr = a[0],
				 .times_kind = TIMES_TIMEVAL, .times_addr = a[1] };
		return a[0] ? 0 : -EFAULT;
	}
#endif
#ifdef __NR_futimesat
	if (nr == __NR_futimesat) {
		*c = (MetaCall){ .op = OP_TIMES, .dirfd = (int)a[0], .path_addr = a[1],
				 .times_kind = TIMES_TIMEVAL, .times_addr = a[2] };
		return 0;
	}
#endif
	switch (nr) {
	case __NR_fchmod:
		*c = (MetaCall){ .op = OP_CHMOD, .dirfd = (int)a[0], .mode = (mode_t)a[1] };
		return 0;
	case __NR_fchmodat:
		*c = (MetaCall){ .op = OP_CHMOD, .dirfd = (int)a[0], .path_addr = a[1],
				 .mode = (mode_t)a[2] };
		return a[1] ? 0 : -EFAULT;
	case __NR_fchmodat2:
		if ((int)a[3] & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return -EINVAL;
		*c = (MetaCall){ .op = OP_CHMOD, .dirfd = (int)a[0], .path_addr = a[1],
				 .mode = (mode_t)a[2], .nofollow = (int)a[3] & AT_SYMLINK_NOFOLLOW,
				 .empty_path = (int)a[3] & AT_EMPTY_PATH };
		return a[1] ? 0 : -EFAULT;
	case __NR_fchown:
		*c = (MetaCall){ .op = OP_CHOWN, .dirfd = (int)a[0], .uid = (uid_t)a[1],
				 .gid = (gid_t)a[2] };
		return 0;
	case __NR_fchownat:
		if ((int)a[4] & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return -EINVAL;
		*c = (MetaCall){ .op = OP_CHOWN, .dirfd = (int)a[0], .path_addr = a[1],
				 .uid = (uid_t)a[2], .gid = (gid_t)a[3],
				 .nofollow = (int)a[4] & AT_SYMLINK_NOFOLLOW,
				 .empty_path = (int)a[4] & AT_EMPTY_PATH };
		return a[1] ? 0 : -EFAULT;
	case __NR_utimensat:
		/* A NULL path: the descriptor itself (futimens). */
		if ((int)a[3] & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) || (!a[1] && (int)a[3]))
			return -EINVAL;
		*c = (MetaCall){ .op = OP_TIMES, .dirfd = (int)a[0], .path_addr = a[1],
				 .times_kind = TIMES_TIMESPEC, .times_addr = a[2],
				 .nofollow = (int)a[3] & AT_SYMLINK_NOFOLLOW,
				 .empty_path = (int)a[3] & AT_EMPTY_PATH };
		return 0;
	case __NR_setxattr:
	case __NR_lsetxattr:
	case __NR_fsetxattr:
		*c = (MetaCall){ .op = OP_SETX, .name_addr = a[1], .value_addr = a[2],
				 .value_size = a[3], .xflags = (int)a[4],
				 .nofollow = nr == __NR_lsetxattr };
		if (nr == __NR_fsetxattr)
			c->dirfd = (int)a[0];
		else {
			c->dirfd = AT_FDCWD;
			c->path_addr = a[0];
		}
		return nr != __NR_fsetxattr && !a[0] ? -EFAULT : 0;
	case __NR_removexattr:
	case __NR_lremovexattr:
	case __NR_fremovexattr:
		*c = (MetaCall){ .op = OP_REMOVEX, .name_addr = a[1],
				 .nofollow = nr == __NR_lremovexattr };
		if (nr == __NR_fremovexattr)
			c->dirfd = (int)a[0];
		else {
			c->dirfd = AT_FDCWD;
			c->path_addr = a[0];
		}
		return nr != __NR_fremovexattr && !a[0] ? -EFAULT : 0;
	default:
		/* setxattrat, removexattrat: libc does not use them; a caller
		 * falls back to the classic calls on ENOSYS. */
		return -ENOSYS;
	}
}

/* The times a call asks for, as utimensat's pair; *ret_now: NULL or both
 * UTIME_NOW (which needs only write access), *ret_omit: nothing to do. */
static int read_times(pid_t pid, const MetaCall *c, struct timespec ts[2], bool *ret_null,
		      bool *ret_now, bool *ret_omit)
{
	int r;

	*ret_null = *ret_now = *ret_omit = false;
	if (!c->times_addr) {
		*ret_null = *ret_now = true;
		return 0;
	}
	switch (c->times_kind) {
	case TIMES_UTIMBUF: {
		struct {
			time_t actime, modtime;
		} u;
		if ((r = read_mem(pid, c->times_addr, &u, sizeof(u))) < 0)
			return r;
		ts[0] = (struct timespec){ u.actime, 0 };
		ts[1] = (struct timespec){ u.modtime, 0 };
		break;
	}
	case TIMES_TIMEVAL: {
		struct timeval tv[2];
		if ((r = read_mem(pid, c->times_addr, tv, sizeof(tv))) < 0)
			return r;
		for (int i = 0; i < 2; i++) {
			if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
				return -EINVAL;
			ts[i] = (struct timespec){ tv[i].tv_sec, tv[i].tv_usec * 1000 };
		}
		break;
	}
	case TIMES_TIMESPEC:
		if ((r = read_mem(pid, c->times_addr, ts, 2 * sizeof(struct timespec))) < 0)
			return r;
		*ret_now = ts[0].tv_nsec == UTIME_NOW && ts[1].tv_nsec == UTIME_NOW;
		*ret_omit = ts[0].tv_nsec == UTIME_OMIT && ts[1].tv_nsec == UTIME_OMIT;
		break;
	}
	return 0;
}

/* What the call carries in the task's memory, read before the
 * notification is checked to still stand (the pid could be another
 * task's by then, never after). */
typedef struct MetaArgs {
	char path[PATH_MAX];
	struct timespec ts[2];
	bool times_null, times_now, times_omit;
	char name[XATTR_NAME_MAX + 1];
	void *value;
} MetaArgs;

static int read_args(pid_t pid, const MetaCall *c, MetaArgs *a)
{
	int r;

	if (c->path_addr && (r = read_str(pid, c->path_addr, a->path, sizeof(a->path))) < 0)
		return r;
	switch (c->op) {
	case OP_TIMES:
		return read_times(pid, c, a->ts, &a->times_null, &a->times_now, &a->times_omit);
	case OP_SETX:
	case OP_REMOVEX:
		if ((r = read_str(pid, c->name_addr, a->name, sizeof(a->name))) < 0)
			return r == -ENAMETOOLONG ? -ERANGE : r;
		if (c->op == OP_REMOVEX || !c->value_size)
			return 0;
		if (c->value_size > XATTR_SIZE_MAX)
			return -E2BIG;
		if (!(a->value = malloc(c->value_size)))
			return -ENOMEM;
		return read_mem(pid, c->value_addr, a->value, c->value_size);
	case OP_CHMOD:
	case OP_CHOWN:
		break;
	}
	return 0;
}

/* Do what @c asks on @fd (ours, O_PATH, the inode the call named) when
 * the command itself may: the kernel's rules for an unprivileged caller. */
static int apply(MetaGuard *g, const MetaCall *c, const MetaArgs *a, int fd, const struct stat *st)
{
	char self[64];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	switch (c->op) {
	case OP_CHMOD:
		if (S_ISLNK(st->st_mode))
			return -EOPNOTSUPP;
		if (st->st_uid != g->uid)
			return -EPERM;
		/* The main filter refuses set-id bits before this one runs;
		 * refused here as well, whatever reaches us. */
		if (c->mode & (S_ISUID | S_ISGID))
			return -EPERM;
		return fchmodat(AT_FDCWD, self, c->mode & 07777, 0) < 0 ? -errno : 0;
	case OP_CHOWN:
		if (st->st_uid != g->uid)
			return -EPERM;
		if (c->uid != (uid_t)-1 && c->uid != st->st_uid)
			return -EPERM;
		if (c->gid != (gid_t)-1 && c->gid != st->st_gid && !in_groups(g, c->gid))
			return -EPERM;
		return fchownat(fd, "", c->uid, c->gid, AT_EMPTY_PATH) < 0 ? -errno : 0;
	case OP_TIMES:
		if (a->times_omit)
			return 0;
		if (st->st_uid != g->uid && !(a->times_now && may_write(g, st)))
			return a->times_now ? -EACCES : -EPERM;
		return utimensat(fd, "", a->times_null ? NULL : a->ts, AT_EMPTY_PATH) < 0 ? -errno
											   : 0;
	case OP_SETX:
	case OP_REMOVEX:
		/* Only the user namespace: the others need a capability the
		 * command does not hold (trusted., security.) or change who
		 * may do what (system.posix_acl_*): not offered at T1. */
		if (strncmp(a->name, "user.", 5) != 0)
			return strncmp(a->name, "system.posix_acl_", 17) == 0 ? -EOPNOTSUPP : -EPERM;
		if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
			return -EPERM;
		if (!may_write(g, st))
			return -EACCES;
		if (c->op == OP_REMOVEX)
			return removexattr(self, a->name) < 0 ? -errno : 0;
		return setxattr(self, a->name, a->value, c->value_size, c->xflags) < 0 ? -errno : 0;
	}
	return -ENOSYS;
}

/* "/proc/self/fd/N" (or thread-self): what libc's fchmodat with
 * AT_SYMLINK_NOFOLLOW passes. "self" would be ward here: the task's own
 * descriptor N instead. -1: not that form. */
static int self_fd_form(const char *path)
{
	const char *rest = NULL;
	char *end;
	long n;

	if (strncmp(path, "/proc/self/fd/", 14) == 0)
		rest = path + 14;
	else if (strncmp(path, "/proc/thread-self/fd/", 21) == 0)
		rest = path + 21;
	if (!rest || *rest < '0' || *rest > '9')
		return -1;
	errno = 0;
	n = strtol(rest, &end, 10);
	return errno || *end || n > INT_MAX ? -1 : (int)n;
}

static int handle(MetaGuard *g, int listener, const struct seccomp_notif *req)
{
	_cleanup_close_ int base = -EBADF, target = -EBADF;
	_cleanup_free_ MetaArgs *a = calloc(1, sizeof(*a));
	struct stat st;
	MetaCall c;
	int r, self_fd;

	if (!a)
		return -ENOMEM;
	if ((r = decode(req, &c)) < 0)
		return r;
	/* No path: the descriptor itself, which must be one (the kernel's
	 * EBADF for fchmod(AT_FDCWD), EFAULT for utimensat(AT_FDCWD, NULL)). */
	if (!c.path_addr && c.dirfd < 0)
		return c.op == OP_TIMES ? -EFAULT : -EBADF;
	r = read_args(req->pid, &c, a);
	if (r >= 0) {
		self_fd = c.path_addr ? self_fd_form(a->path) : -1;
		base = open_base(req->pid, self_fd >= 0 ? self_fd : c.dirfd);
	}
	/* Until here the pid could have been another task's: what was read
	 * and opened counts only if the notification still stands. */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
		r = -ESRCH;
	if (r < 0 || base < 0) {
		free(a->value);
		return r < 0 ? r : base;
	}
	if (!c.path_addr || self_fd >= 0)
		target = TAKE_FD(base);
	else if (a->path[0] == '\0')
		target = c.empty_path ? TAKE_FD(base) : -ENOENT;
	else
		target = resolve(base, a->path, c.nofollow);
	if (target < 0)
		r = target;
	else if (fstatat(target, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		r = -errno;
	else if (!inside_writable(g, target))
		r = -EPERM;
	else
		r = apply(g, &c, a, target, &st);
	free(a->value);
	return r;
}

int meta_guard_serve(MetaGuard *g, int listener)
{
	int r;

	memset(g->req, 0, g->req_size);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, g->req) < 0)
		return errno == EINTR || errno == ENOENT ? 0 : -errno;
	r = handle(g, listener, g->req);
	memset(g->resp, 0, g->resp_size);
	g->resp->id = g->req->id;
	g->resp->error = r < 0 ? r : 0;
	g->resp->val = 0;
	if (r < 0)
		g->refused++;
	else
		g->allowed++;
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, g->resp) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}
