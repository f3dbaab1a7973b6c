/* Finding tier 3's guest image and ward's helpers (vm-image.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "config.h"
#include "vm/vm-engine.h"
#include "vm/vm-image.h"
#include "windows/win-sha256.h"

#define VM_SYSTEM_DIR "/var/lib/ward/vm"
#define VM_INIT_MAX (16u << 20)

int vm_image_default_dir(char **ret)
{
	_cleanup_free_ char *home = NULL;
	const char *e = getenv("WARD_VM_DIR");
	int r;

	if (e && e[0] == '/')
		return (*ret = strdup(e)) ? 0 : -ENOMEM;
	e = getenv("XDG_DATA_HOME");
	if (e && e[0] == '/')
		return asprintf(ret, "%s/ward/vm", e) < 0 ? -ENOMEM : 0;
	if ((r = ward_home_dir(&home)) < 0)
		return r;
	return asprintf(ret, "%s/.local/share/ward/vm", home) < 0 ? -ENOMEM : 0;
}

/* The sha256 (hex) of the guest init this ward ships (ward-guest-init
 * beside it or in its libexec dir), once per process. An image records the
 * init it was made with (DIR/<key>/init.sha256, ward-setup-vm.sh): the
 * request, stdio and status protocol between the backend and the guest
 * init changes with ward, so an image made by another ward is never used. */
static int own_init_sum(const char **ret)
{
	static char sum[65];
	static int cached;
	_cleanup_free_ char *path = NULL, *buf = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	uint8_t md[32];
	size_t got = 0;
	int r;

	if (cached) {
		*ret = sum;
		return cached < 0 ? cached : 0;
	}
	if ((r = vm_helper_path("ward-guest-init", &path)) < 0)
		return cached = r;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return cached = -errno;
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > VM_INIT_MAX)
		return cached = -EINVAL;
	if (!(buf = malloc((size_t)st.st_size)))
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return cached = n < 0 ? -errno : -EIO;
		got += (size_t)n;
	}
	win_sha256(buf, got, md);
	for (int i = 0; i < 32; i++)
		snprintf(sum + 2 * i, 3, "%02x", md[i]);
	cached = 1;
	*ret = sum;
	return 0;
}

/* Whether the image @img is ready and was made with the guest init @sum. */
static bool image_fits(const char *img, const char *sum)
{
	_cleanup_free_ char *ready = NULL, *sumfile = NULL;
	_cleanup_close_ int fd = -1;
	char buf[80];

	if (asprintf(&ready, "%s/ready", img) < 0 || access(ready, R_OK) < 0)
		return false;
	if (asprintf(&sumfile, "%s/init.sha256", img) < 0)
		return false;
	fd = open(sumfile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd >= 0 && read(fd, buf, sizeof(buf)) >= 64 && strncmp(buf, sum, 64) == 0;
}

/* DIR/current when it fits this ward, else the newest ready image in DIR
 * that does (another ward may have pointed current at its own image).
 * -ESTALE when DIR has images but none fits, -ENOENT when it has none. */
static int ready_in(const char *dir, const char *sum, char **ret)
{
	_cleanup_free_ char *cur = NULL, *real = NULL, *best = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	time_t best_mtime = 0;
	bool seen;

	if (asprintf(&cur, "%s/current", dir) < 0)
		return -ENOMEM;
	real = realpath(cur, NULL);
	if (real && image_fits(real, sum)) {
		*ret = TAKE_PTR(real);
		return 0;
	}
	seen = real != NULL;
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		_cleanup_free_ char *img = NULL, *ready = NULL;
		struct stat st;
		if (de->d_name[0] == '.' || strcmp(de->d_name, "current") == 0)
			continue;
		if (asprintf(&img, "%s/%s", dir, de->d_name) < 0 ||
		    asprintf(&ready, "%s/ready", img) < 0)
			return -ENOMEM;
		if (lstat(ready, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		seen = true;
		if (!image_fits(img, sum) || (best && st.st_mtime <= best_mtime))
			continue;
		free(best);
		best = realpath(img, NULL);
		best_mtime = st.st_mtime;
	}
	if (best) {
		*ret = TAKE_PTR(best);
		return 0;
	}
	return seen ? -ESTALE : -ENOENT;
}

int vm_image_find(char **ret_dir)
{
	_cleanup_free_ char *dir = NULL;
	static bool hinted;
	const char *sum;
	int r;

	if ((r = vm_image_default_dir(&dir)) < 0)
		return r;
	if ((r = own_init_sum(&sum)) < 0) {
		if (!hinted)
			log_hint("ward's guest init (ward-guest-init) is neither beside ward nor "
				 "in " WARD_LIBEXECDIR ": tier 3 cannot tell which image is ward's");
		hinted = true;
		return r;
	}
	r = ready_in(dir, sum, ret_dir);
	/* An explicit WARD_VM_DIR (an absolute path, as vm_image_default_dir()
	 * takes it): nothing else is looked at. An empty one is no choice. */
	const char *e = getenv("WARD_VM_DIR");
	if (r < 0 && !(e && e[0] == '/')) {
		int r2 = ready_in(VM_SYSTEM_DIR, sum, ret_dir);
		if (r2 == 0)
			return 0;
		if (r == -ENOENT)
			r = r2;
	}
	if (r == -ESTALE && !hinted) {
		log_hint("the guest images here were made by another version of ward (their "
			 "guest init is not this ward's): 'ward setup vm' makes this ward's");
		hinted = true;
	}
	return r;
}

int vm_helper_path(const char *name, char **ret)
{
	char exe[PATH_MAX];
	_cleanup_free_ char *p = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if (asprintf(&p, "%s/%s", exe, name) < 0)
				return -ENOMEM;
			if (access(p, R_OK) == 0) {
				*ret = TAKE_PTR(p);
				return 0;
			}
		}
	}
	free(p);
	if (asprintf(&p, "%s/%s", WARD_LIBEXECDIR, name) < 0)
		return -ENOMEM;
	if (access(p, R_OK) < 0)
		return -ENOENT;
	*ret = TAKE_PTR(p);
	return 0;
}

int vm_qemu_path(char **ret)
{
	const char *path = getenv("PATH");
	_cleanup_free_ char *copy = strdup(path && path[0] ? path : "/usr/bin:/bin");

	if (!copy)
		return -ENOMEM;
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		_cleanup_free_ char *p = NULL;
		if (d[0] != '/')
			continue;
		if (asprintf(&p, "%s/qemu-system-x86_64", d) < 0)
			return -ENOMEM;
		if (access(p, X_OK) == 0) {
			*ret = TAKE_PTR(p);
			return 0;
		}
	}
	return -ENOENT;
}

void vm_status(VmStatus *ret, bool may_boot)
{
	_cleanup_free_ char *q = NULL, *img = NULL, *kfile = NULL;
	VmEngine e;
	FILE *f;

	*ret = (VmStatus){};
	snprintf(ret->engine, sizeof(ret->engine), "tcg");
	ret->qemu = vm_qemu_path(&q) == 0;
	ret->image = vm_image_find(&img) == 0;
	if (img) {
		snprintf(ret->image_dir, sizeof(ret->image_dir), "%s", img);
		if (asprintf(&kfile, "%s/kernel", img) >= 0 && (f = fopen(kfile, "re"))) {
			if (fgets(ret->kernel, sizeof(ret->kernel), f))
				ret->kernel[strcspn(ret->kernel, "\n")] = 0;
			fclose(f);
		}
	}
	if (!ret->qemu) {
		snprintf(ret->line, sizeof(ret->line),
			 "not ready: qemu-system-x86_64 missing (Debian: apt-get install "
			 "qemu-system-x86), then 'ward setup vm'");
		return;
	}
	if (!ret->image) {
		snprintf(ret->line, sizeof(ret->line),
			 "not ready: no guest image; run 'ward setup vm' once");
		return;
	}
	vm_engine_choose(q, img, may_boot, &e);
	snprintf(ret->engine, sizeof(ret->engine), "%s", e.kvm ? "kvm" : "tcg");
	snprintf(ret->engine_why, sizeof(ret->engine_why), "%s", e.why);
	snprintf(ret->line, sizeof(ret->line),
		 "ready (--tier 3): engine %s, %s%s; %s; kernel: %s", ret->engine,
		 vm_engine_cost(&e), e.kvm ? "" : ", --strict refuses it", e.why,
		 ret->kernel[0] ? ret->kernel : "unknown");
}
