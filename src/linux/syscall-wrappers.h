/* Raw syscall wrappers and the kernel UAPI bits that Debian 12's headers
 * (linux-libc-dev 6.1) lack: Landlock up to ABI 7, clone3 and its args.
 * Kept apart, like bubblewrap's "syscall wrappers" block, so the rest of the
 * code never calls syscall(2) directly. Every wrapper is async-signal-safe
 * and returns the raw syscall result (-1 and errno on failure). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* x86_64 numbers, used only where glibc's headers are too old. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif

/* Landlock UAPI (include/uapi/linux/landlock.h, Linux 6.15, ABI 7). Our own
 * names so they never clash with an older or newer <linux/landlock.h>. */
typedef struct WardLandlockRulesetAttr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
} WardLandlockRulesetAttr;

typedef struct __attribute__((packed)) WardLandlockPathBeneathAttr {
	uint64_t allowed_access;
	int32_t parent_fd;
} WardLandlockPathBeneathAttr;

typedef struct WardLandlockNetPortAttr {
	uint64_t allowed_access;
	uint64_t port;
} WardLandlockNetPortAttr;

enum {
	WARD_LANDLOCK_RULE_PATH_BENEATH = 1,
	WARD_LANDLOCK_RULE_NET_PORT = 2,
};

#define WARD_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)

/* Filesystem rights, one bit each. */
#define WARD_LL_FS_EXECUTE (1ULL << 0)
#define WARD_LL_FS_WRITE_FILE (1ULL << 1)
#define WARD_LL_FS_READ_FILE (1ULL << 2)
#define WARD_LL_FS_READ_DIR (1ULL << 3)
#define WARD_LL_FS_REMOVE_DIR (1ULL << 4)
#define WARD_LL_FS_REMOVE_FILE (1ULL << 5)
#define WARD_LL_FS_MAKE_CHAR (1ULL << 6)
#define WARD_LL_FS_MAKE_DIR (1ULL << 7)
#define WARD_LL_FS_MAKE_REG (1ULL << 8)
#define WARD_LL_FS_MAKE_SOCK (1ULL << 9)
#define WARD_LL_FS_MAKE_FIFO (1ULL << 10)
#define WARD_LL_FS_MAKE_BLOCK (1ULL << 11)
#define WARD_LL_FS_MAKE_SYM (1ULL << 12)
#define WARD_LL_FS_REFER (1ULL << 13)     /* ABI 2 */
#define WARD_LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define WARD_LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
/* ABI 9: connecting to a pathname UNIX socket needs this right on the
 * socket file (LANDLOCK_ACCESS_FS_RESOLVE_UNIX). The value follows the
 * upstream series; tests/unit/test-landlock.c checks it against
 * <linux/landlock.h> wherever the installed headers define it. */
#define WARD_LL_FS_RESOLVE_UNIX (1ULL << 16)

/* Network rights (ABI 4). */
#define WARD_LL_NET_BIND_TCP (1ULL << 0)
#define WARD_LL_NET_CONNECT_TCP (1ULL << 1)
/* ABI 10: UDP (bind; connect and sendto to a remote port). Values as the
 * upstream series has them; checked like WARD_LL_FS_RESOLVE_UNIX. */
#define WARD_LL_NET_BIND_UDP (1ULL << 2)
#define WARD_LL_NET_CONNECT_UDP (1ULL << 3)

/* Scopes (ABI 6). */
#define WARD_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define WARD_LL_SCOPE_SIGNAL (1ULL << 1)

/* landlock_restrict_self() flags (ABI 7): audit logging of denials. */
#define WARD_LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#define WARD_LL_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#define WARD_LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)
/* ABI 8: apply the domain to every thread of the process. ward's child
 * is single-threaded when it restricts itself, so ward does not set it. */
#define WARD_LL_RESTRICT_SELF_TSYNC (1U << 3)

static inline int sys_landlock_create_ruleset(const WardLandlockRulesetAttr *attr, size_t size,
					      uint32_t flags)
{
	return (int)syscall(__NR_landlock_create_ruleset, attr, size, flags);
}

static inline int sys_landlock_add_rule(int ruleset_fd, int rule_type, const void *rule_attr,
					uint32_t flags)
{
	return (int)syscall(__NR_landlock_add_rule, ruleset_fd, rule_type, rule_attr, flags);
}

static inline int sys_landlock_restrict_self(int ruleset_fd, uint32_t flags)
{
	return (int)syscall(__NR_landlock_restrict_self, ruleset_fd, flags);
}

/* clone3 (Linux 5.3; CLONE_INTO_CGROUP needs 5.7). */
typedef struct WardCloneArgs {
	uint64_t flags;
	uint64_t pidfd;
	uint64_t child_tid;
	uint64_t parent_tid;
	uint64_t exit_signal;
	uint64_t stack;
	uint64_t stack_size;
	uint64_t tls;
	uint64_t set_tid;
	uint64_t set_tid_size;
	uint64_t cgroup;
} WardCloneArgs;

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* Like fork() when @args->stack is 0: returns twice. The child must not
 * return from the caller's frame into libc state it shares (use _exit). */
static inline long sys_clone3(WardCloneArgs *args, size_t size)
{
	return syscall(__NR_clone3, args, size);
}
