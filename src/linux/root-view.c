/* The view for a uid-0 caller (root-view.h says what and why).
 *
 * Which binds: read-only ones in the system's directories (system_roots),
 * never under $HOME nor the repository's own git dirs.
 *
 * Idmapped mounts: only a process with CAP_SYS_ADMIN over the file system's
 * user namespace may idmap a mount, i.e. the supervisor (real root) and not
 * the sandbox's init (root only in its own user namespace). So the
 * supervisor clones each read-only system tree (open_tree OPEN_TREE_CLONE),
 * sets it read-only, nosuid, nodev, slave and idmapped in one
 * mount_setattr(), and init attaches the detached tree with move_mount().
 * The idmapping is a user namespace with uid and gid maps "1 1 4294967294":
 * every id maps to itself except 0, which maps to nothing, so a file of
 * root's shows as the overflow id (nobody) and the command, host uid 0, is
 * "other" to it (and CAP_DAC_OVERRIDE, were it held, does not apply to a
 * file whose owner is unmapped). Where the kernel or the file system refuses
 * (no CAP_SYS_ADMIN in a container, a file system without idmap support),
 * the tree is bound as before and the start event says
 * "root-system-files" is degraded.
 *
 * sysfs and procfs: neither supports idmapped mounts. /sys is reduced to
 * the subtrees below (CPU and NUMA topology, transparent huge pages, the
 * sandbox's own network devices), and every entry under them and under
 * /proc (all but the processes, net, sys/net and irq) that root can read
 * and others cannot is masked. The
 * scan runs in the supervisor on the host's /sys and /proc; a mask whose
 * path does not exist in the sandbox's fresh sysfs or procfs is skipped. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "common/strv.h"
#include "linux/mount-plan.h"
#include "linux/root-masks-cache.h"
#include "linux/root-view.h"

struct RootView {
	int *tree_fds;      /* per spec index, -EBADF when none */
	bool *wants;        /* per spec index: to be idmapped (the plan's choice) */
	size_t n_trees;
	bool acquired;      /* root_view_acquire ran (tree_fds, idmapped_all, masks) */
	bool idmapped_all;
	struct RootScan *scan; /* the masks' scan, joined by acquire */
	char **file_masks;  /* "/newroot/..." */
	char **dir_masks;
};

/* The /sys subtrees a root caller's command sees (relative to /sys). */
static const char *const sys_keep[] = {
	"devices/system/cpu",                /* nproc, hwloc, lscpu */
	"devices/system/node",               /* NUMA topology */
	"kernel/mm/transparent_hugepage",    /* jemalloc, the JVM */
	/* The sandbox's network namespace has only lo (and a scan of the
	 * host's devices/virtual/net would cost ms for devices it never sees). */
	"class/net", "devices/virtual/net/lo",
};

/* ---- parent ---- */

static int write_map(pid_t pid, const char *which)
{
	char path[64];
	_cleanup_close_ int fd = -EBADF;
	static const char map[] = "1 1 4294967294\n";

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, which);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, map, sizeof(map) - 1) != (ssize_t)(sizeof(map) - 1))
		return -errno;
	return 0;
}

/* The idmap namespace is the same for every run: one per boot, kept by a
 * bind mount of its nsfs file (as ip-netns keeps network namespaces in
 * /run/netns), so that a run opens a file instead of forking a helper and
 * waiting for it twice (0.3 ms idle, up to 30 ms on a loaded machine). Only
 * root may mount, and the directory is root's (0700): nothing a sandboxed
 * command or another user writes can put a namespace there. What a run
 * opens is checked anyway (idmap_userns_valid), and every tree made with
 * it must show host root's files as not root's (idmap_tree): a wrong or
 * stale file costs the fork, never the protection. */
#define IDMAP_DIR "/run/ward"
#define IDMAP_FILE IDMAP_DIR "/idmap-userns"

/* A user namespace created by root, a child of ours. */
static bool idmap_userns_valid(int fd)
{
	_cleanup_close_ int parent = -EBADF, self = -EBADF;
	struct statfs sf;
	struct stat a, b;
	uid_t owner = (uid_t)-1;

	if (fstatfs(fd, &sf) < 0 || sf.f_type != NSFS_MAGIC ||
	    ioctl(fd, NS_GET_NSTYPE) != CLONE_NEWUSER || ioctl(fd, NS_GET_OWNER_UID, &owner) < 0 ||
	    owner != 0)
		return false;
	parent = ioctl(fd, NS_GET_PARENT);
	self = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	return parent >= 0 && self >= 0 && fstat(parent, &a) == 0 && fstat(self, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* IDMAP_DIR, root's and writable by root only (made when missing). */
static bool idmap_dir_ok(bool create)
{
	struct stat st;

	if (create && mkdir(IDMAP_DIR, 0700) < 0 && errno != EEXIST)
		return false;
	return lstat(IDMAP_DIR, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* Keep the namespace of @pid for the next runs: best effort. A concurrent
 * run that got there first is left alone. */
static void idmap_userns_persist(pid_t pid)
{
	_cleanup_close_ int fd = -EBADF;
	char src[64];
	struct statfs sf;

	if (!idmap_dir_ok(true))
		return;
	fd = open(IDMAP_FILE, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fstatfs(fd, &sf) < 0 || sf.f_type == NSFS_MAGIC)
		return;
	snprintf(src, sizeof(src), "/proc/%d/ns/user", (int)pid);
	(void)mount(src, IDMAP_FILE, NULL, MS_BIND, NULL);
}

/* A user namespace whose maps leave 0 out, as an fd. A short-lived child
 * creates it; we write its maps (we are root in its parent namespace). */
static int idmap_userns_open(void)
{
	int go[2], ready[2], fd = -EBADF, r;
	char c = 0;
	pid_t pid;

	fd = open(IDMAP_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && idmap_dir_ok(false) && idmap_userns_valid(fd))
		return fd;
	if (fd >= 0)
		close(fd);
	fd = -EBADF;
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(ready, O_CLOEXEC) < 0) {
		r = -errno;
		close(go[0]);
		close(go[1]);
		return r;
	}
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(ready[0]);
		c = unshare(CLONE_NEWUSER) == 0 ? 'u' : 'e';
		(void)!write(ready[1], &c, 1);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	r = pid < 0 ? -errno : 0;
	if (r == 0 && (read(ready[0], &c, 1) != 1 || c != 'u'))
		r = -EPERM;
	if (r == 0)
		r = write_map(pid, "uid_map");
	if (r == 0)
		r = write_map(pid, "gid_map");
	if (r == 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			r = -errno;
		else
			idmap_userns_persist(pid);
	}
	close(go[1]); /* releases the child */
	close(ready[0]);
	if (pid > 0)
		(void)waitpid(pid, NULL, 0);
	return r < 0 ? r : fd;
}

static bool at_or_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The system's directories: a read-only bind at or below one of these is
 * idmapped. Elsewhere a read-only path is one the user named (a data
 * directory, a CA bundle under /tmp) and stays as the caller sees it. */
static const char *const system_roots[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc",
	"/var", "/srv", "/boot", "/snap", "/nix", "/run",
};

/* Should the read-only bind of @view be idmapped? Not under $HOME, not the
 * repository's own git dirs or working tree (git refuses a repository
 * owned by someone else: "dubious ownership"), and only in the system's
 * directories. */
static bool wants_idmap(const MountPlan *plan, const char *view, const char *home)
{
	bool system = false;

	if (at_or_below(view, home) ||
	    (plan->git.worktree && (at_or_below(view, plan->git.worktree) ||
				    at_or_below(plan->git.worktree, view))))
		return false;
	STRV_FOREACH(g, plan->git.gitdirs)
	if (at_or_below(view, *g) || at_or_below(*g, view))
		return false;
	for (size_t i = 0; i < ELEMENTSOF(system_roots); i++)
		system = system || at_or_below(view, system_roots[i]);
	return system;
}

static int idmap_tree(const char *host, bool noexec, int userns)
{
	struct mount_attr a = {
		.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			    MOUNT_ATTR_NODEV | (noexec ? MOUNT_ATTR_NOEXEC : 0),
		/* Nothing mounted on it inside may reach the host's peers. */
		.propagation = MS_SLAVE,
		.userns_fd = (uint64_t)userns,
	};
	_cleanup_close_ int tree = -EBADF;

	struct stat before, after;

	tree = open_tree(AT_FDCWD, host,
			 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
	if (tree < 0)
		return -errno;
	if (fstat(tree, &before) < 0 ||
	    mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0 ||
	    fstat(tree, &after) < 0)
		return -errno;
	/* The idmapping at work: host root's top directory is not root's. */
	if ((before.st_uid == 0 && after.st_uid == 0) || (before.st_gid == 0 && after.st_gid == 0))
		return -EPERM;
	return TAKE_FD(tree);
}

/* Does only root (owner or group 0) get to read this? */
static bool only_root_reads(const struct stat *st)
{
	mode_t m = st->st_mode;
	bool root_r = (st->st_uid == 0 && (m & S_IRUSR)) || (st->st_gid == 0 && (m & S_IRGRP));

	if (S_ISLNK(m))
		return false;
	if (S_ISDIR(m))
		return root_r && (m & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH);
	return root_r && !(m & S_IROTH);
}

/* Walk @dfd (host @rel_view under the view), adding masks. No symlinks
 * followed; a masked directory is not entered. The listing is read with
 * getdents64 itself: fdopendir() would add an fcntl and a 32 KiB buffer
 * per directory, of which the walk enters a hundred or more. Takes @dfd. */
static int scan(RootView *rv, int dfd, const char *view, unsigned depth, bool top_proc)
{
	_cleanup_close_ int fd = dfd;
	char buf[8192] __attribute__((aligned(8)));
	ssize_t n;
	int r = 0;

	while (r >= 0 && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n && r >= 0;) {
			struct linux_dirent64 {
				uint64_t d_ino;
				int64_t d_off;
				unsigned short d_reclen;
				unsigned char d_type;
				char d_name[];
			} *de = (void *)(buf + off);
			char path[PATH_MAX];
			struct stat st;

			off += de->d_reclen;
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			/* Processes are the sandbox's own in its /proc. */
			if (top_proc && (de->d_name[0] >= '0' && de->d_name[0] <= '9'))
				continue;
			if (de->d_type == DT_LNK)
				continue; /* a link's own mode opens nothing */
			if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			if ((size_t)snprintf(path, sizeof(path), MP_NEWROOT "%s/%s", view,
					     de->d_name) >= sizeof(path))
				continue;
			if (only_root_reads(&st)) {
				r = strv_extend(S_ISDIR(st.st_mode) ? &rv->dir_masks : &rv->file_masks,
						path);
				continue;
			}
			/* Under /proc: not sys (scanned without sys/net by the caller)
			 * nor irq (per-interrupt files, all world-readable in mainline,
			 * many on a large machine). net is a link (skipped above). */
			if (!S_ISDIR(st.st_mode) || depth >= 16 ||
			    (top_proc &&
			     (strcmp(de->d_name, "sys") == 0 || strcmp(de->d_name, "irq") == 0)))
				continue;
			int sub = openat(fd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				r = scan(rv, sub, path + strlen(MP_NEWROOT), depth + 1, false);
		}
	return r;
}

static int scan_root(RootView *rv, const char *host, bool top_proc)
{
	int fd = open(host, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return 0; /* not on this kernel */
	return scan(rv, fd, host, 0, top_proc);
}

/* /proc/sys but net: from the cache when it provably holds them
 * (root-masks-cache.h), else walked (and cached). */
static int scan_proc_sys(RootView *rv)
{
	static const char *const proc_sys[] = { "abi", "crypto", "debug", "dev",  "fs",
						"kernel", "user", "vm" };
	/* What is walked and how: change it with the walk (scan, only_root_reads). */
	static const char scope[] = "v1 proc/sys:abi,crypto,debug,dev,fs,kernel,user,vm";
	_cleanup_free_ char *key = root_masks_cache_key(scope), *after = NULL;
	RootView walked = { 0 };
	int r;

	if (key && (r = root_masks_cache_load(key, &rv->file_masks, &rv->dir_masks)) != 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(proc_sys); i++) {
		char host[PATH_MAX];
		snprintf(host, sizeof(host), "/proc/sys/%s", proc_sys[i]);
		if ((r = scan_root(&walked, host, false)) < 0)
			goto out;
	}
	/* Cached only if nothing moved while walking. */
	after = key ? root_masks_cache_key(scope) : NULL;
	if (after && strcmp(key, after) == 0)
		root_masks_cache_store(key, walked.file_masks, walked.dir_masks);
	if ((r = strv_extend_strv(&rv->file_masks, walked.file_masks)) >= 0)
		r = strv_extend_strv(&rv->dir_masks, walked.dir_masks);
out:
	strv_free(walked.file_masks);
	strv_free(walked.dir_masks);
	return r < 0 ? r : 0;
}

/* The masks of /sys and /proc: the same for every run of this caller,
 * independent of the rest of the plan. */
static int scan_all(RootView *rv)
{
	int r;

	for (size_t i = 0; i < ELEMENTSOF(sys_keep); i++) {
		char host[PATH_MAX];
		snprintf(host, sizeof(host), "/sys/%s", sys_keep[i]);
		if ((r = scan_root(rv, host, false)) < 0)
			return r;
	}
	/* /proc/sys/net and /proc/net are the sandbox's own network namespace:
	 * its secrets (tcp_fastopen_key, stable_secret) are its own. */
	if ((r = scan_root(rv, "/proc", true)) < 0)
		return r;
	return scan_proc_sys(rv);
}

/* The scan (~4 ms on the development VM, most of root's plan) runs in a
 * thread from the start of the plan, joined before the masks are used:
 * on two cores it overlaps the mount plan, the protected-path walk and
 * the idmapped trees. Same scan, same masks, only earlier. */
struct RootScan {
	pthread_t thread;
	RootView masks; /* only file_masks and dir_masks */
	int r;
};

static void *scan_thread(void *arg)
{
	RootScan *sc = arg;

	sc->r = scan_all(&sc->masks);
	return NULL;
}

RootScan *root_view_scan_start(void)
{
	RootScan *sc = calloc(1, sizeof(*sc));
	sigset_t all, saved;
	int r;

	if (!sc)
		return NULL;
	/* The thread blocks every signal: they stay the main thread's. */
	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &saved) != 0) {
		free(sc);
		return NULL;
	}
	r = pthread_create(&sc->thread, NULL, scan_thread, sc);
	(void)pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (r != 0) {
		free(sc);
		return NULL;
	}
	return sc;
}

/* Join; the masks move to @rv when given, else are dropped. */
static int scan_finish(RootScan *sc, RootView *rv)
{
	int r;

	(void)pthread_join(sc->thread, NULL);
	r = sc->r;
	if (rv && r >= 0) {
		rv->file_masks = TAKE_PTR(sc->masks.file_masks);
		rv->dir_masks = TAKE_PTR(sc->masks.dir_masks);
	}
	strv_free(sc->masks.file_masks);
	strv_free(sc->masks.dir_masks);
	free(sc);
	return r;
}

RootScan *root_view_scan_free(RootScan *sc)
{
	if (sc)
		(void)scan_finish(sc, NULL);
	return NULL;
}

int root_view_prepare(MountPlan *plan, const char *home, RootScan **scan)
{
	RootView *rv = calloc(1, sizeof(*rv));

	if (!rv)
		return -ENOMEM;
	plan->root = rv;
	rv->n_trees = plan->n_specs;
	rv->tree_fds = calloc(plan->n_specs + 1, sizeof(int));
	rv->wants = calloc(plan->n_specs + 1, sizeof(bool));
	if (!rv->tree_fds || !rv->wants)
		return -ENOMEM;
	for (size_t i = 0; i < plan->n_specs; i++) {
		const MountSpec *s = &plan->specs[i];

		rv->tree_fds[i] = -EBADF;
		rv->wants[i] = (s->kind == MOUNT_BIND_RO || s->kind == MOUNT_BIND_RO_EXEC) && s->src &&
			       wants_idmap(plan, s->view, home);
	}

	/* Joined by root_view_acquire, after the idmapped trees: the scan
	 * keeps overlapping planning and the trees. */
	rv->scan = scan ? TAKE_PTR(*scan) : NULL;
	return 0;
}

int root_view_acquire(MountPlan *plan, bool *ret_idmapped)
{
	RootView *rv = plan->root;
	_cleanup_close_ int userns = -EBADF;
	bool all = true;
	int r;

	if (!rv || rv->acquired) {
		*ret_idmapped = !rv || rv->idmapped_all;
		return 0;
	}
	/* A process (it makes the user namespace), a namespace and detached
	 * mounts: kernel objects, none visible on the host's file system, but
	 * not the plan's to make. */
	userns = idmap_userns_open();
	for (size_t i = 0; i < rv->n_trees && i < plan->n_specs; i++) {
		const MountSpec *s = &plan->specs[i];

		if (!rv->wants[i])
			continue;
		r = userns < 0 ? userns :
				 idmap_tree(s->src + strlen(MP_OLDROOT), s->kind == MOUNT_BIND_RO,
					    userns);
		if (r < 0)
			all = false;
		else
			rv->tree_fds[i] = r;
	}
	/* The masks: the scan started with the plan, or here. */
	r = rv->scan ? scan_finish(TAKE_PTR(rv->scan), rv) : scan_all(rv);
	if (r < 0)
		return r;
	rv->acquired = true;
	rv->idmapped_all = all;
	*ret_idmapped = all;
	return 0;
}

void root_view_release_trees(RootView *rv)
{
	if (!rv)
		return;
	for (size_t i = 0; i < rv->n_trees; i++)
		if (rv->tree_fds[i] >= 0) {
			close(rv->tree_fds[i]);
			rv->tree_fds[i] = -EBADF;
		}
}

RootView *root_view_free(RootView *rv)
{
	if (!rv)
		return NULL;
	root_view_release_trees(rv);
	rv->scan = root_view_scan_free(rv->scan);
	free(rv->tree_fds);
	free(rv->wants);
	strv_free(rv->file_masks);
	strv_free(rv->dir_masks);
	free(rv);
	return NULL;
}

/* ---- child ---- */

int root_view_attach(const MountPlan *plan, const MountSpec *s)
{
	size_t i = (size_t)(s - plan->specs);
	int fd;

	if (!plan->root || i >= plan->root->n_trees || plan->root->tree_fds[i] < 0)
		return 0;
	fd = plan->root->tree_fds[i];
	if (move_mount(fd, "", AT_FDCWD, s->dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return -errno;
	return 1;
}

static int bind_ro(const char *src, const char *dst, bool recursive)
{
	struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
					    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };

	if (mount(src, dst, NULL, MS_BIND | (recursive ? MS_REC : 0), NULL) < 0)
		return -errno;
	return RET_NERRNO(mount_setattr(AT_FDCWD, dst, recursive ? AT_RECURSIVE : 0, &a,
					sizeof(a)));
}

static int mkdir_p(char *path)
{
	for (char *s = path + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		int r = mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
		*s = '/';
		if (r < 0)
			return r;
	}
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

int root_view_sysfs(const MountPlan *plan, const MountSpec *s)
{
	/* The fresh sysfs goes to the scratch root, which the final pivot
	 * detaches: only the binds below stay reachable. */
	static const char scratch[] = "/.ward-sysfs";
	const unsigned long common = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	int r;

	if (mkdir(scratch, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (mount("sysfs", scratch, "sysfs", common | MS_RDONLY, NULL) < 0 &&
	    (r = bind_ro(s->src, scratch, true)) < 0)
		return r;
	{
		char dst[PATH_MAX];
		snprintf(dst, sizeof(dst), "%s", s->dst);
		if ((r = mkdir_p(dst)) < 0)
			return r;
	}
	if (mount("tmpfs", s->dst, "tmpfs", common, "mode=0755,size=64k,nr_inodes=256") < 0)
		return -errno;
	for (size_t i = 0; i < ELEMENTSOF(sys_keep); i++) {
		char src[PATH_MAX], dst[PATH_MAX];
		struct stat st;

		snprintf(src, sizeof(src), "%s/%s", scratch, sys_keep[i]);
		snprintf(dst, sizeof(dst), "%s/%s", s->dst, sys_keep[i]);
		if (lstat(src, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if ((r = mkdir_p(dst)) < 0 || (r = bind_ro(src, dst, true)) < 0)
			return r;
	}
	struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
	return RET_NERRNO(mount_setattr(AT_FDCWD, s->dst, 0, &a, sizeof(a)));
}

int root_view_masks(const MountPlan *plan, const char **reterr_path)
{
	struct stat st;
	int r;

	if (!plan->root)
		return 0;
	STRV_FOREACH(p, plan->root->file_masks)
	{
		if (lstat(*p, &st) < 0 || S_ISDIR(st.st_mode))
			continue; /* not in the sandbox's own sysfs or procfs */
		if ((r = bind_ro(plan->empty_file, *p, false)) < 0) {
			*reterr_path = *p;
			return r;
		}
	}
	STRV_FOREACH(p, plan->root->dir_masks)
	{
		if (lstat(*p, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (mount("tmpfs", *p, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
			  "mode=000,size=4k,nr_inodes=1") < 0) {
			*reterr_path = *p;
			return -errno;
		}
	}
	return 0;
}

/* The masks' paths are the view's after the pivot: MP_NEWROOT off. */
static const char *mask_view(const char *p)
{
	return strncmp(p, MP_NEWROOT "/", sizeof(MP_NEWROOT)) == 0 ? p + sizeof(MP_NEWROOT) - 1 : p;
}

static bool beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

int root_view_mask_source(const MountPlan *plan, const char *view)
{
	if (!plan->root)
		return -ENOENT;
	STRV_FOREACH(p, plan->root->file_masks)
	{
		const char *v = mask_view(*p);
		struct statfs sf;
		int fd;

		if (!beneath(v, view))
			continue;
		fd = open_tree(AT_FDCWD, v, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
		if (fd < 0)
			continue; /* not in the sandbox's own procfs: not masked */
		/* The mask (a bind of the empty file), not the entry itself. */
		if (fstatfs(fd, &sf) == 0 && sf.f_type != PROC_SUPER_MAGIC &&
		    sf.f_type != SYSFS_MAGIC)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int root_view_masks_again(const MountPlan *plan, const char *view, int empty_fd,
			  const char **reterr_path)
{
	struct stat st;

	if (!plan->root)
		return 0;
	STRV_FOREACH(p, plan->root->file_masks)
	{
		const char *v = mask_view(*p);
		_cleanup_close_ int t = -EBADF;

		if (!beneath(v, view) || lstat(v, &st) < 0 || S_ISDIR(st.st_mode))
			continue; /* as root_view_masks() */
		*reterr_path = v;
		if (empty_fd < 0)
			return -ENOENT;
		t = open_tree(empty_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (t < 0 || move_mount(t, "", AT_FDCWD, v, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			return -errno;
	}
	STRV_FOREACH(p, plan->root->dir_masks)
	{
		const char *v = mask_view(*p);

		if (!beneath(v, view) || lstat(v, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		*reterr_path = v;
		if (mount("tmpfs", v, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
			  "mode=000,size=4k,nr_inodes=1") < 0)
			return -errno;
	}
	return 0;
}
