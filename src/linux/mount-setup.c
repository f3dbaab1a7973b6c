/* Build the root view in the child (see mount-plan.c for what and why).
 *
 * Steps: make every mount a slave of the host (nothing we do propagates
 * back), put a private tmpfs over /tmp as a scratch root holding /newroot
 * (another tmpfs: the future root) and /oldroot, pivot into the scratch
 * root so the host tree is at /oldroot (the idea bubblewrap uses: the
 * scratch tmpfs hides the host /tmp only for us, and after the pivot the
 * host /tmp is reachable again under /oldroot), execute the plan into
 * /newroot, then detach /oldroot and pivot into /newroot. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "linux/mount-setup.h"
#include "linux/root-view.h"

static int sys_pivot_root(const char *new_root, const char *put_old)
{
	return (int)syscall(SYS_pivot_root, new_root, put_old);
}

/* mkdir -p in a stack buffer (no allocation after clone). */
static int mkdir_parents(const char *path, bool include_last)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (include_last && mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int ensure_mount_point(const MountSpec *s)
{
	int r, fd;

	if (!s->is_file)
		return mkdir_parents(s->dst, true);
	/* Already there (a file inside a read-only bind): O_CREAT would
	 * answer EROFS rather than EEXIST. */
	if (faccessat(AT_FDCWD, s->dst, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	r = mkdir_parents(s->dst, false);
	if (r < 0)
		return r;
	fd = open(s->dst, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0444);
	if (fd < 0)
		return errno == EEXIST || errno == EISDIR ? 0 : -errno;
	close(fd);
	return 0;
}

static int set_attr(const char *path, uint64_t attr, bool recursive)
{
	struct mount_attr a = { .attr_set = attr };

	return RET_NERRNO(mount_setattr(AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a,
					sizeof(a)));
}

static int bind(const char *src, const char *dst, uint64_t attr)
{
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return -errno;
	/* Recursive: submounts of a bound tree become read-only too. Flags
	 * the host locked (nosuid on a host mount...) are kept: we only add. */
	return set_attr(dst, attr, true);
}

/* A protected path: the mount point is inside the (writable, hostile)
 * workspace, so resolve it without following any symlink and attach the
 * read-only tree to that exact inode. */
static int protect(const MountSpec *s, uint64_t attr)
{
	struct mount_attr a = { .attr_set = attr };
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int tree = -EBADF, target = -EBADF;
	struct stat st;

	target = (int)syscall(SYS_openat2, AT_FDCWD, s->dst, &how, sizeof(how));
	if (target < 0)
		return -errno;
	if (fstat(target, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	/* Without a source, the target itself (a pin): cloned from the fd we
	 * resolved, so no second lookup can be raced. */
	if (s->src)
		tree = open_tree(AT_FDCWD, s->src,
				 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
					 AT_SYMLINK_NOFOLLOW);
	else
		tree = open_tree(target, "",
				 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	if (tree < 0)
		return -errno;
	if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
		return -errno;
	return RET_NERRNO(move_mount(tree, "", target, "",
				     MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
}

/* A sanitized file (fs.sanitize): its content, written to the scratch root
 * (gone after the final pivot), bound read-only over the path. */
static int write_data_file(const MountPlan *plan, const MountSpec *s)
{
	char src[64];
	size_t len = s->data ? strlen(s->data) : 0, done = 0;
	int fd;

	snprintf(src, sizeof(src), "/.ward-data-%zu", (size_t)(s - plan->specs));
	fd = open(src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, s->data + done, len - done);
		if (n < 0) {
			int r = -errno;
			close(fd);
			return r;
		}
		done += (size_t)n;
	}
	close(fd);
	return bind(src, s->dst,
		    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

/* A copy-on-write cache (fs.cache): the host's directory as the lower
 * layer, the upper and work dirs in one tmpfs in the scratch root (the
 * overlays keep it alive after the final pivot detaches the rest). Where
 * overlayfs refuses (a kernel without user xattrs on tmpfs, a lower it
 * cannot stack on), an empty private tmpfs: slower, and the host's cache is
 * untouched either way. */
static int mount_cache(const MountPlan *plan, const MountSpec *s)
{
	static const char layers[] = "/.ward-cache";
	const unsigned long common = MS_NOSUID | MS_NODEV;
	size_t i = (size_t)(s - plan->specs);
	char upper[64], work[64], opts[PATH_MAX + 160];
	struct stat st;

	if (stat(layers, &st) < 0) {
		if (mkdir(layers, 0700) < 0)
			return -errno;
		if (mount("tmpfs", layers, "tmpfs", common | MS_NOEXEC, s->data) < 0)
			return -errno;
	}
	snprintf(upper, sizeof(upper), "%s/%zu", layers, i);
	if (mkdir(upper, 0700) < 0)
		return -errno;
	snprintf(upper, sizeof(upper), "%s/%zu/upper", layers, i);
	snprintf(work, sizeof(work), "%s/%zu/work", layers, i);
	if (mkdir(upper, 0755) < 0 || mkdir(work, 0700) < 0)
		return -errno;
	if ((size_t)snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s,userxattr",
			     s->src, upper, work) < sizeof(opts) &&
	    mount("overlay", s->dst, "overlay", common, opts) == 0)
		return 0;
	return RET_NERRNO(mount("tmpfs", s->dst, "tmpfs", common, s->data));
}

static int run_spec(const MountPlan *plan, const MountSpec *s)
{
	const unsigned long common = MS_NOSUID | MS_NODEV;
	int r;

	switch (s->kind) {
	case MOUNT_SYMLINK:
		r = mkdir_parents(s->dst, false);
		if (r < 0)
			return r;
		return RET_NERRNO(symlink(s->src, s->dst));
	case MOUNT_DIR:
		return mkdir_parents(s->dst, true);
	case MOUNT_PROTECT:
		return protect(s, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	case MOUNT_PIN:
		return protect(s, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	case MOUNT_MASK_DIR:
		/* Already there (inside a bound tree): nothing to create. */
		return RET_NERRNO(mount("tmpfs", s->dst, "tmpfs", common | MS_NOEXEC | MS_RDONLY,
					s->data));
	case MOUNT_MASK_FILE:
		return bind(plan->empty_file, s->dst,
			    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				    MOUNT_ATTR_NOEXEC);
	case MOUNT_PROC_RO: {
		struct stat st;
		if (lstat(s->dst, &st) < 0)
			return 0; /* not every kernel has every entry */
		return bind(s->dst, s->dst,
			    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				    MOUNT_ATTR_NOEXEC);
	}
	case MOUNT_BIND_RO:
	case MOUNT_BIND_RO_EXEC:
	case MOUNT_BIND_RW:
	case MOUNT_BIND_DEV:
	case MOUNT_TMPFS:
	case MOUNT_OVERLAY:
	case MOUNT_PROC:
	case MOUNT_SYSFS:
	case MOUNT_DEVPTS:
	case MOUNT_LEAK:
	case MOUNT_CACHE:
	case MOUNT_FILE_DATA:
		break;
	case _MOUNT_KIND_MAX:
	case _MOUNT_KIND_INVALID:
		return -EINVAL;
	}

	r = ensure_mount_point(s);
	if (r < 0)
		return r;

	/* A uid-0 caller: the idmapped tree the supervisor made, or the
	 * reduced /sys (root-view.c). */
	if (plan->root && (s->kind == MOUNT_BIND_RO || s->kind == MOUNT_BIND_RO_EXEC) &&
	    (r = root_view_attach(plan, s)) != 0)
		return r < 0 ? r : 0;
	if (plan->root && s->kind == MOUNT_SYSFS)
		return root_view_sysfs(plan, s);

	switch (s->kind) {
	case MOUNT_BIND_RO:
		return bind(s->src, s->dst,
			    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				    MOUNT_ATTR_NOEXEC);
	case MOUNT_BIND_RO_EXEC:
	case MOUNT_LEAK:
		return bind(s->src, s->dst,
			    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	case MOUNT_BIND_RW:
		return bind(s->src, s->dst, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	case MOUNT_BIND_DEV:
		/* Read-only: a device node on a read-only mount is still read
		 * and written (that is the device's business), but its inode's
		 * mode, owner, times and xattrs are not changed through it.
		 * For a uid-0 caller the node's owner is the sandbox's root:
		 * a rw bind let `chmod 600 /dev/null` inside change the host's. */
		if (mount(s->src, s->dst, NULL, MS_BIND, NULL) < 0)
			return -errno;
		return set_attr(s->dst, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
				false);
	case MOUNT_TMPFS:
		return RET_NERRNO(mount("tmpfs", s->dst, "tmpfs", common, s->data));
	case MOUNT_OVERLAY:
		return RET_NERRNO(mount("overlay", s->dst, "overlay", common, s->data));
	case MOUNT_PROC:
		return RET_NERRNO(mount("proc", s->dst, "proc", common | MS_NOEXEC, NULL));
	case MOUNT_SYSFS:
		/* A fresh sysfs shows only this network namespace's devices; where
		 * the kernel refuses it, a read-only bind of the host's. */
		if (mount("sysfs", s->dst, "sysfs", common | MS_NOEXEC | MS_RDONLY, NULL) == 0)
			return 0;
		return bind(s->src, s->dst,
			    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				    MOUNT_ATTR_NOEXEC);
	case MOUNT_DEVPTS:
		return RET_NERRNO(mount("devpts", s->dst, "devpts", MS_NOSUID | MS_NOEXEC, s->data));
	case MOUNT_CACHE:
		return mount_cache(plan, s);
	case MOUNT_FILE_DATA:
		return write_data_file(plan, s);
	case MOUNT_SYMLINK:
	case MOUNT_DIR:
	case MOUNT_PROTECT:
	case MOUNT_PIN:
	case MOUNT_MASK_DIR:
	case MOUNT_MASK_FILE:
	case MOUNT_PROC_RO:
	case _MOUNT_KIND_MAX:
	case _MOUNT_KIND_INVALID:
		break;
	}
	return -EINVAL;
}

int mount_setup_base(const MountPlan *plan)
{
	int fd;

	/* Nothing done in here may propagate to the host. */
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return -errno;
	/* Scratch: mount points, the mask file, sanitized files (fs.sanitize). */
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=2m") < 0)
		return -errno;
	if (chdir("/tmp") < 0)
		return -errno;
	if (mkdir("newroot", 0755) < 0 || mkdir("oldroot", 0755) < 0)
		return -errno;
	if (mount("tmpfs", "newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0)
		return -errno;
	fd = open(".ward-empty", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	close(fd);
	if (sys_pivot_root(".", "oldroot") < 0)
		return -errno;
	if (chdir("/") < 0)
		return -errno;
	(void)plan;
	return 0;
}

int mount_setup_view(const MountPlan *plan, size_t *reterr_index, const char **reterr_path)
{
	for (size_t i = 0; i < plan->n_specs; i++) {
		/* A cache mount_plan_acquire could not make: not shown. */
		int r = plan->specs[i].skip ? 0 : run_spec(plan, &plan->specs[i]);
		if (r < 0) {
			*reterr_index = i;
			return r;
		}
	}
	/* Over everything: a uid-0 caller's masks in /sys and /proc. */
	return root_view_masks(plan, reterr_path);
}

int mount_setup_finish(void)
{
	/* Detach the host tree, then make /newroot the root: the pivot_root(".", ".")
	 * idiom from pivot_root(2) stacks the old root on top, and the detach
	 * removes it. */
	if (umount2("/oldroot", MNT_DETACH) < 0)
		return -errno;
	if (chdir("/newroot") < 0)
		return -errno;
	if (sys_pivot_root(".", ".") < 0)
		return -errno;
	if (umount2(".", MNT_DETACH) < 0)
		return -errno;
	if (chdir("/") < 0)
		return -errno;
	/* The root and /dev hold only mount points and links: read-only. */
	if (set_attr("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false) < 0)
		return -errno;
	return set_attr("/dev", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false);
}

int mount_setup_own_proc(const MountPlan *plan, const char **reterr_path)
{
	_cleanup_close_ int empty = -EBADF;
	const MountSpec *proc = NULL;
	int r;

	for (size_t i = 0; i < plan->n_specs && !proc; i++)
		if (plan->specs[i].kind == MOUNT_PROC)
			proc = &plan->specs[i];
	if (!proc)
		return 0; /* no /proc in the view */
	*reterr_path = proc->view;
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	/* The view's mounts are private already (nothing propagates to the
	 * session's namespace); this makes sure of the one we mount on. */
	if (mount(NULL, proc->view, NULL, MS_PRIVATE, NULL) < 0)
		return -errno;
	/* The masks' source, taken before the fresh proc covers them. */
	empty = root_view_mask_source(plan, proc->view);
	if (mount("proc", proc->view, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	for (size_t i = 0; i < plan->n_specs; i++) {
		const MountSpec *s = &plan->specs[i];
		struct stat st;

		if (s->kind != MOUNT_PROC_RO || lstat(s->view, &st) < 0)
			continue; /* as run_spec(): not every kernel has every entry */
		*reterr_path = s->view;
		r = bind(s->view, s->view,
			 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
		if (r < 0)
			return r;
	}
	return root_view_masks_again(plan, proc->view, empty, reterr_path);
}
