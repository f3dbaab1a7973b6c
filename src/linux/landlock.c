/* Landlock: the filesystem policy as a second wall, plus TCP ports and
 * scopes where the kernel's ABI has them. The ABI handling is a table (the
 * kernel's samples/landlock/sandboxer.c fallthrough switch turned into data):
 * ward targets ABI 10, uses min(kernel, target) and never asks for a right the
 * effective ABI lacks, so an old kernel yields a weaker but valid ruleset and
 * the difference is named in landlock_plan_degraded(). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "common/strv.h"
#include "linux/landlock.h"
#include "linux/syscall-wrappers.h"

#define LANDLOCK_TARGET_ABI 10

/* clang-format off */
#define LL_FS_V1 (WARD_LL_FS_EXECUTE | WARD_LL_FS_WRITE_FILE | WARD_LL_FS_READ_FILE |             \
		  WARD_LL_FS_READ_DIR | WARD_LL_FS_REMOVE_DIR | WARD_LL_FS_REMOVE_FILE |            \
		  WARD_LL_FS_MAKE_CHAR | WARD_LL_FS_MAKE_DIR | WARD_LL_FS_MAKE_REG |                \
		  WARD_LL_FS_MAKE_SOCK | WARD_LL_FS_MAKE_FIFO | WARD_LL_FS_MAKE_BLOCK |             \
		  WARD_LL_FS_MAKE_SYM)

/* Rights that make sense on a non-directory; the kernel refuses the others
 * in a rule whose parent_fd is a file (sandboxer.c ACCESS_FILE). */
#define LL_FS_FILE (WARD_LL_FS_EXECUTE | WARD_LL_FS_WRITE_FILE | WARD_LL_FS_READ_FILE |            \
		    WARD_LL_FS_TRUNCATE | WARD_LL_FS_IOCTL_DEV | WARD_LL_FS_RESOLVE_UNIX)

/* What each ABI adds. Index i describes ABI i+1. */
static const LandlockAbiRights abi_adds[LANDLOCK_TARGET_ABI] = {
	{ .fs = LL_FS_V1 },                                          /* 1: Linux 5.13 */
	{ .fs = WARD_LL_FS_REFER },                                  /* 2: 5.19 */
	{ .fs = WARD_LL_FS_TRUNCATE },                               /* 3: 6.2 */
	{ .net = WARD_LL_NET_BIND_TCP | WARD_LL_NET_CONNECT_TCP },   /* 4: 6.7 */
	{ .fs = WARD_LL_FS_IOCTL_DEV },                              /* 5: 6.10 */
	{ .scoped = WARD_LL_SCOPE_ABSTRACT_UNIX_SOCKET |
		    WARD_LL_SCOPE_SIGNAL },                          /* 6: 6.12 */
	/* 7 (6.15): audit logging. Denials by ward's own setup code are
	 * not interesting (same exec: off); denials by the command after its
	 * execve are, so the kernel audit log gets them (new exec: on). */
	{ .restrict_flags = WARD_LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF |
			    WARD_LL_RESTRICT_SELF_LOG_NEW_EXEC_ON },
	/* 8: thread synchronisation (TSYNC). The child that restricts
	 * itself has one thread, so nothing here uses it. */
	{ 0 },
	/* 9: pathname UNIX sockets: connect() needs RESOLVE_UNIX on the
	 * socket file, which closes "a host process listening on a socket in
	 * the workspace is reachable from inside" (only the private /tmp
	 * grants it, see class_rights). */
	{ .fs = WARD_LL_FS_RESOLVE_UNIX },
	/* 10: UDP bind and connect/sendto by port. */
	{ .net = WARD_LL_NET_BIND_UDP | WARD_LL_NET_CONNECT_UDP },
};

#define LL_NET_TCP (WARD_LL_NET_BIND_TCP | WARD_LL_NET_CONNECT_TCP)
#define LL_NET_UDP (WARD_LL_NET_BIND_UDP | WARD_LL_NET_CONNECT_UDP)

/* Rights per class, before masking with what the ABI handles. */
static const uint64_t class_rights[_LANDLOCK_CLASS_MAX] = {
	[LANDLOCK_CLASS_READ] = WARD_LL_FS_READ_FILE | WARD_LL_FS_READ_DIR,
	[LANDLOCK_CLASS_LIST] = WARD_LL_FS_READ_DIR,
	[LANDLOCK_CLASS_READ_EXEC] = WARD_LL_FS_READ_FILE | WARD_LL_FS_READ_DIR | WARD_LL_FS_EXECUTE,
	/* Writable, but no connecting to a socket found there (ABI 9): a
	 * host process may listen on one in the workspace or a writable
	 * cache, and reaching it is reaching outside. */
	[LANDLOCK_CLASS_READ_WRITE] = UINT64_MAX & ~WARD_LL_FS_RESOLVE_UNIX,
	/* The sandbox's private /tmp (T2) or TMPDIR (T1): every socket in it
	 * was made by the run itself. */
	[LANDLOCK_CLASS_PRIVATE] = UINT64_MAX,
	[LANDLOCK_CLASS_DEVICE] = WARD_LL_FS_READ_FILE | WARD_LL_FS_READ_DIR | WARD_LL_FS_WRITE_FILE |
				  WARD_LL_FS_TRUNCATE | WARD_LL_FS_IOCTL_DEV,
	/* A process writes its own /proc/<pid> entries (oom_score_adj,
	 * task/<tid>/comm, uid_map for a nested sandbox) and opens them with
	 * O_TRUNC. Landlock cannot tell /proc/self from /proc/sys, so the
	 * mount layer keeps /proc/sys read-only; docs/hardening.md. */
	[LANDLOCK_CLASS_PROC] = WARD_LL_FS_READ_FILE | WARD_LL_FS_READ_DIR | WARD_LL_FS_WRITE_FILE |
				WARD_LL_FS_TRUNCATE,
};

static const char *const class_names[_LANDLOCK_CLASS_MAX] = {
	[LANDLOCK_CLASS_LIST] = "list",
	[LANDLOCK_CLASS_READ] = "read",
	[LANDLOCK_CLASS_READ_EXEC] = "read_exec",
	[LANDLOCK_CLASS_READ_WRITE] = "read_write",
	[LANDLOCK_CLASS_DEVICE] = "device",
	[LANDLOCK_CLASS_PROC] = "proc",
	[LANDLOCK_CLASS_PRIVATE] = "private",
};
/* clang-format on */

typedef struct LandlockPlanRule {
	char *path;
	uint64_t access; /* for a directory; narrowed to LL_FS_FILE at apply time */
	LandlockPathType type;
} LandlockPlanRule;

struct LandlockPlan {
	int abi;          /* effective, 0: none */
	int kernel_errno; /* why none */
	LandlockAbiRights rights;
	LandlockPlanRule *rules;
	size_t n_rules;
	uint16_t *connect_ports;
	size_t n_connect_ports;
	uint16_t *bind_ports;
	size_t n_bind_ports;
	bool stdio_rules;
	char **degraded;
	char **enforced;
	char **missing;
};

int landlock_abi_rights(int abi, LandlockAbiRights *ret)
{
	LandlockAbiRights r = {};

	if (abi < 1)
		return -EINVAL;
	if (abi > LANDLOCK_TARGET_ABI)
		abi = LANDLOCK_TARGET_ABI;
	for (int i = 0; i < abi; i++) {
		r.fs |= abi_adds[i].fs;
		r.net |= abi_adds[i].net;
		r.scoped |= abi_adds[i].scoped;
		r.restrict_flags |= abi_adds[i].restrict_flags;
	}
	*ret = r;
	return 0;
}

uint64_t landlock_class_access(LandlockClass cls, int abi)
{
	LandlockAbiRights r;

	if (cls < 0 || cls >= _LANDLOCK_CLASS_MAX || landlock_abi_rights(abi, &r) < 0)
		return 0;
	return class_rights[cls] & r.fs;
}

const char *landlock_class_to_string(LandlockClass cls)
{
	if (cls < 0 || cls >= _LANDLOCK_CLASS_MAX)
		return NULL;
	return class_names[cls];
}

int landlock_abi_version(void)
{
	int v = sys_landlock_create_ruleset(NULL, 0, WARD_LANDLOCK_CREATE_RULESET_VERSION);

	if (v < 0)
		return -(errno == ENOSYS || errno == EOPNOTSUPP ? errno : EOPNOTSUPP);
	return v;
}

LandlockPlan *landlock_plan_free(LandlockPlan *plan)
{
	if (!plan)
		return NULL;
	for (size_t i = 0; i < plan->n_rules; i++)
		free(plan->rules[i].path);
	free(plan->rules);
	free(plan->connect_ports);
	free(plan->bind_ports);
	strv_free(plan->degraded);
	strv_free(plan->enforced);
	strv_free(plan->missing);
	free(plan);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(LandlockPlan *, landlock_plan_free)

static int copy_ports(const uint16_t *src, size_t n, uint16_t **ret, size_t *ret_n)
{
	if (n == 0)
		return 0;
	*ret = calloc(n, sizeof(uint16_t));
	if (!*ret)
		return -ENOMEM;
	memcpy(*ret, src, n * sizeof(uint16_t));
	*ret_n = n;
	return 0;
}

/* Name what the effective ABI gives and what it lacks relative to ward's
 * target, so the start audit event and `ward probe` can say so. A feature
 * whose absence another wall covers (or that closes a gap ward has always
 * documented) goes to "missing", not "degraded": --strict refuses only
 * what the tier promises and this kernel cannot hold. */
static int plan_describe(LandlockPlan *p, const LandlockRequest *req)
{
	/* clang-format off */
	static const struct {
		int abi;
		const char *enforced;
		const char *enforced2;
		const char *degraded;
		int only;      /* 1: only with restrict_tcp, 2: only with restrict_udp */
		bool missing;  /* absent: listed in missing, not degraded */
	} features[] = {
		{ 1, "landlock-fs", NULL, "landlock", 0, false },
		{ 2, "landlock-refer", NULL, "landlock-refer", 0, false },
		{ 3, "landlock-truncate", NULL, "landlock-truncate", 0, false },
		{ 4, "landlock-net", NULL, "landlock-net", 1, false },
		{ 5, "landlock-ioctl-dev", NULL, "landlock-ioctl-dev", 0, false },
		{ 6, "landlock-scope-abstract-unix", "landlock-scope-signal", "landlock-scope", 0, false },
		{ 9, "landlock-unix-path", NULL, "landlock-unix-path", 0, true },
		{ 10, "landlock-udp", NULL, "landlock-udp", 2, true },
	};
	/* clang-format on */
	int r;

	/* The lists exist (possibly empty) so callers can iterate blindly. */
	p->degraded = calloc(1, sizeof(char *));
	p->enforced = calloc(1, sizeof(char *));
	p->missing = calloc(1, sizeof(char *));
	if (!p->degraded || !p->enforced || !p->missing)
		return -ENOMEM;

	if (p->abi == 0)
		return strv_extend(&p->degraded, "landlock");

	for (size_t i = 0; i < ELEMENTSOF(features); i++) {
		if ((features[i].only == 1 && !req->restrict_tcp) ||
		    (features[i].only == 2 && !req->restrict_udp))
			continue;
		if (p->abi >= features[i].abi) {
			r = strv_extend(&p->enforced, features[i].enforced);
			if (r >= 0 && features[i].enforced2)
				r = strv_extend(&p->enforced, features[i].enforced2);
		} else
			r = strv_extend(features[i].missing ? &p->missing : &p->degraded,
					features[i].degraded);
		if (r < 0)
			return r;
	}
	return 0;
}

int landlock_plan_new_for_abi(const LandlockRequest *req, int kernel_abi, LandlockPlan **ret_plan)
{
	_cleanup_(landlock_plan_freep) LandlockPlan *p = NULL;
	int target, r;

	if (!req || !ret_plan || (req->n_rules > 0 && !req->rules))
		return -EINVAL;
	target = req->target_abi > 0 ? req->target_abi : LANDLOCK_TARGET_ABI;
	if (target > LANDLOCK_TARGET_ABI)
		target = LANDLOCK_TARGET_ABI;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;

	if (kernel_abi > 0) {
		p->abi = kernel_abi < target ? kernel_abi : target;
		r = landlock_abi_rights(p->abi, &p->rights);
		if (r < 0)
			return r;
		if (!req->restrict_tcp)
			p->rights.net &= ~LL_NET_TCP;
		if (!req->restrict_udp)
			p->rights.net &= ~LL_NET_UDP;
	} else
		p->kernel_errno = kernel_abi < 0 ? -kernel_abi : EOPNOTSUPP;

	p->stdio_rules = !req->no_stdio_rules;
	if (req->n_rules > 0) {
		p->rules = calloc(req->n_rules, sizeof(LandlockPlanRule));
		if (!p->rules)
			return -ENOMEM;
	}
	for (size_t i = 0; i < req->n_rules; i++) {
		const LandlockPathRule *rule = &req->rules[i];

		if (!rule->path || rule->path[0] != '/' || rule->cls < 0 ||
		    rule->cls >= _LANDLOCK_CLASS_MAX)
			return -EINVAL;
		p->rules[i].path = strdup(rule->path);
		if (!p->rules[i].path)
			return -ENOMEM;
		p->rules[i].access = class_rights[rule->cls] & p->rights.fs;
		p->rules[i].type = rule->type;
		p->n_rules++;
	}

	if (p->rights.net & LL_NET_TCP) {
		r = copy_ports(req->tcp_connect_ports, req->n_tcp_connect_ports, &p->connect_ports,
			       &p->n_connect_ports);
		if (r < 0)
			return r;
		r = copy_ports(req->tcp_bind_ports, req->n_tcp_bind_ports, &p->bind_ports,
			       &p->n_bind_ports);
		if (r < 0)
			return r;
	}

	r = plan_describe(p, req);
	if (r < 0)
		return r;

	*ret_plan = TAKE_PTR(p);
	return 0;
}

int landlock_plan_new(const LandlockRequest *req, LandlockPlan **ret_plan)
{
	return landlock_plan_new_for_abi(req, landlock_abi_version(), ret_plan);
}

int landlock_plan_abi(const LandlockPlan *plan)
{
	return plan ? plan->abi : 0;
}

int landlock_plan_errno(const LandlockPlan *plan)
{
	return plan ? plan->kernel_errno : 0;
}

char *const *landlock_plan_degraded(const LandlockPlan *plan)
{
	return plan ? plan->degraded : NULL;
}

char *const *landlock_plan_enforced(const LandlockPlan *plan)
{
	return plan ? plan->enforced : NULL;
}

char *const *landlock_plan_missing(const LandlockPlan *plan)
{
	return plan ? plan->missing : NULL;
}

const char *landlock_missing_reason(const char *name)
{
	if (!name)
		return NULL;
	if (strcmp(name, "landlock-unix-path") == 0)
		return "ABI 9 (pathname UNIX sockets) is missing: a process outside the sandbox that "
		       "listens on a socket in a path the run can reach (the workspace) can be "
		       "connected to from inside; at T1 seccomp refuses socket(AF_UNIX) instead";
	if (strcmp(name, "landlock-udp") == 0)
		return "ABI 10 (UDP ports) is missing: at T1 seccomp refuses UDP sockets instead";
	return NULL;
}

/* Child side from here on: syscalls and the stack only. */

/* The directory of the previous rule, kept open: the rules that cut a
 * denied path out of a grant (deny-split.h) come as runs of entries of one
 * directory, and openat() from it saves a full path walk per entry. */
typedef struct DirCache {
	int fd;
	size_t len;
	char path[PATH_MAX];
} DirCache;

static int open_rule_path(DirCache *c, const char *path)
{
	const char *sl = strrchr(path, '/');
	size_t len = (size_t)(sl - path);

	if (sl == path || len >= sizeof(c->path))
		return open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (c->fd < 0 || c->len != len || strncmp(c->path, path, len) != 0) {
		if (c->fd >= 0)
			(void)close(c->fd);
		memcpy(c->path, path, len);
		c->path[len] = '\0';
		c->len = len;
		c->fd = open(c->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (c->fd < 0)
			return -1;
	}
	return openat(c->fd, sl + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

static int add_path_rule(int ruleset_fd, DirCache *cache, const LandlockPlanRule *rule)
{
	WardLandlockPathBeneathAttr attr = {};
	LandlockPathType type = rule->type;
	bool looked = type == LANDLOCK_PATH_UNKNOWN;
	struct stat st;
	int fd, r;

	/* O_NOFOLLOW: a rule lands on what the plan named, never on what a
	 * symlink put in its place since points to (a symlink gets no rule:
	 * its target has its own). */
	fd = open_rule_path(cache, rule->path);
	if (fd < 0) {
		/* A rule only ever adds rights, so a path missing from this
		 * view (an optional system dir, a preset cache that does not
		 * exist) is skipped: fewer rights, never more. */
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return -errno;
	}
	attr.parent_fd = fd;
	for (;;) {
		/* The plan's type saves an fstat; without one, or when the
		 * kernel refuses the rule (EINVAL: directory rights on what is
		 * no longer a directory), look. A symlink gets no rule. */
		if (type == LANDLOCK_PATH_UNKNOWN) {
			if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
				r = 0;
				break;
			}
			type = S_ISDIR(st.st_mode) ? LANDLOCK_PATH_DIR : LANDLOCK_PATH_FILE;
		}
		attr.allowed_access = rule->access;
		if (type != LANDLOCK_PATH_DIR)
			attr.allowed_access &= LL_FS_FILE;
		if (attr.allowed_access == 0) {
			r = 0;
			break;
		}
		r = sys_landlock_add_rule(ruleset_fd, WARD_LANDLOCK_RULE_PATH_BENEATH, &attr, 0);
		r = r < 0 ? -errno : 0;
		if (r != -EINVAL || looked)
			break;
		looked = true;
		type = LANDLOCK_PATH_UNKNOWN;
	}
	(void)close(fd);
	return r;
}

static int add_port_rules(int ruleset_fd, const uint16_t *ports, size_t n, uint64_t access)
{
	for (size_t i = 0; i < n; i++) {
		WardLandlockNetPortAttr attr = { .allowed_access = access, .port = ports[i] };

		if (sys_landlock_add_rule(ruleset_fd, WARD_LANDLOCK_RULE_NET_PORT, &attr, 0) < 0)
			return -errno;
	}
	return 0;
}

/* Rules for the files behind stdin, stdout and stderr, so that reopening
 * them by /proc/self/fd/N works: the magic link resolves to the file's own
 * path (the harness's terminal, a file it redirected stdin from), which no
 * other rule covers. A rule may grant no more than the descriptor itself:
 * read and write as its open mode allows, never truncate (an O_APPEND log
 * reopened with O_TRUNC would lose the harness's records), nothing beneath
 * a directory. By the time this runs, stdio-relay.c has replaced
 * directories and O_PATH descriptors with /dev/null and writable regular
 * files with pipes, so a regular file here is a read-only one; anything
 * else gets no rule. Pipes and sockets need none (Landlock does not check
 * internal filesystems). Failures are skipped: a missing rule only means
 * fewer rights. stdio_access(): the access fd @fd gets, 0 for none. */
static uint64_t stdio_access(int fd, uint64_t handled)
{
	struct stat st;
	int flags = fcntl(fd, F_GETFL);
	uint64_t a = 0;

	if (flags < 0 || (flags & O_PATH) || fstat(fd, &st) < 0)
		return 0;
	if (S_ISREG(st.st_mode)) {
		if ((flags & O_ACCMODE) != O_RDONLY)
			return 0;
		a = WARD_LL_FS_READ_FILE;
	} else if (S_ISCHR(st.st_mode)) {
		if ((flags & O_ACCMODE) != O_WRONLY)
			a |= WARD_LL_FS_READ_FILE;
		if ((flags & O_ACCMODE) != O_RDONLY)
			a |= WARD_LL_FS_WRITE_FILE;
		a |= WARD_LL_FS_IOCTL_DEV;
	}
	return a & handled & LL_FS_FILE;
}

static void add_stdio_rules(int ruleset_fd, uint64_t handled)
{
	for (int fd = 0; fd <= 2; fd++) {
		WardLandlockPathBeneathAttr attr = { .parent_fd = fd,
						     .allowed_access = stdio_access(fd, handled) };

		if (attr.allowed_access)
			(void)sys_landlock_add_rule(ruleset_fd, WARD_LANDLOCK_RULE_PATH_BENEATH, &attr,
						    0);
	}
}

/* The ruleset of @plan; @stdio: with the rules for fds 0-2. */
static int build_ruleset(const LandlockPlan *plan, bool stdio, int *ret_fd)
{
	WardLandlockRulesetAttr attr = {};
	int fd, r = 0;

	attr.handled_access_fs = plan->rights.fs;
	attr.handled_access_net = plan->rights.net;
	attr.scoped = plan->rights.scoped;
	/* sizeof(attr) also on older kernels: they accept a larger struct as
	 * long as the fields they do not know are zero, and the ABI table
	 * guarantees that. */
	fd = sys_landlock_create_ruleset(&attr, sizeof(attr), 0);
	if (fd < 0)
		return -errno;

	DirCache cache = { .fd = -1 };
	for (size_t i = 0; i < plan->n_rules && r >= 0; i++)
		r = add_path_rule(fd, &cache, &plan->rules[i]);
	if (cache.fd >= 0)
		(void)close(cache.fd);
	if (r >= 0 && stdio)
		add_stdio_rules(fd, plan->rights.fs);
	if (r >= 0 && (plan->rights.net & LL_NET_TCP)) {
		r = add_port_rules(fd, plan->connect_ports, plan->n_connect_ports,
				   WARD_LL_NET_CONNECT_TCP);
		if (r >= 0)
			r = add_port_rules(fd, plan->bind_ports, plan->n_bind_ports,
					   WARD_LL_NET_BIND_TCP);
	}
	if (r < 0) {
		(void)close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int landlock_plan_apply(const LandlockPlan *plan)
{
	return landlock_plan_apply_prebuilt(plan, -EBADF);
}

/* /dev/null, the one device the prebuilt ruleset has a rule for. */
static bool is_dev_null(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

int landlock_plan_prebuild(const LandlockPlan *plan, int *ret_fd)
{
	*ret_fd = -EBADF;
	if (!plan || plan->abi == 0)
		return 0;
	/* fds 0-2 must be /dev/null, open for reading and writing: the rule
	 * every command whose stdio is /dev/null would get. */
	for (int i = 0; i <= 2; i++)
		if (!is_dev_null(i) || (fcntl(i, F_GETFL) & O_ACCMODE) != O_RDWR)
			return -EINVAL;
	return build_ruleset(plan, plan->stdio_rules, ret_fd);
}

int landlock_plan_add_rules_beneath(const LandlockPlan *plan, int ruleset_fd, const char *path)
{
	DirCache cache = { .fd = -1 };
	size_t n = strlen(path);
	int r = 0;

	if (!plan || plan->abi == 0 || ruleset_fd < 0)
		return 0;
	for (size_t i = 0; i < plan->n_rules && r >= 0; i++) {
		const char *p = plan->rules[i].path;
		if (strncmp(p, path, n) == 0 && (p[n] == 0 || p[n] == '/'))
			r = add_path_rule(ruleset_fd, &cache, &plan->rules[i]);
	}
	if (cache.fd >= 0)
		(void)close(cache.fd);
	return r;
}

/* The prebuilt ruleset has every rule but those for fds 0-2, and
 * /dev/null's: it serves exactly when they would add no other. */
static bool stdio_needs_own_rules(const LandlockPlan *plan, const int fds[3])
{
	for (int i = 0; plan->stdio_rules && i <= 2; i++)
		if (stdio_access(fds[i], plan->rights.fs) && !is_dev_null(fds[i]))
			return true;
	return false;
}

bool landlock_plan_prebuilt_serves(const LandlockPlan *plan, int prebuilt, const int fds[3])
{
	if (!plan || plan->abi == 0)
		return true;
	return prebuilt >= 0 && !stdio_needs_own_rules(plan, fds);
}

int landlock_plan_apply_prebuilt(const LandlockPlan *plan, int prebuilt)
{
	static const int stdio_fds[3] = { 0, 1, 2 };
	int fd = prebuilt, r = 0;

	if (!plan)
		return -EINVAL;
	if (plan->abi == 0)
		return 0; /* nothing to enforce; the plan says so in degraded */
	if (fd < 0 || stdio_needs_own_rules(plan, stdio_fds)) {
		r = build_ruleset(plan, plan->stdio_rules, &fd);
		if (r < 0)
			return r;
	}
	if (sys_landlock_restrict_self(fd, plan->rights.restrict_flags) < 0)
		r = -errno;
	if (fd != prebuilt)
		(void)close(fd);
	return r;
}
