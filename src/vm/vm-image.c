/* Finding tier 3's guest image and ward's helpers (vm-image.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "config.h"
#include "vm/vm-engine.h"
#include "vm/vm-image.h"

#define VM_SYSTEM_DIR "/var/lib/ward/vm"

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

static int ready_in(const char *dir, char **ret)
{
	_cleanup_free_ char *cur = NULL, *ready = NULL, *real = NULL;

	if (asprintf(&cur, "%s/current", dir) < 0)
		return -ENOMEM;
	real = realpath(cur, NULL);
	if (!real)
		return -ENOENT;
	if (asprintf(&ready, "%s/ready", real) < 0)
		return -ENOMEM;
	if (access(ready, R_OK) < 0)
		return -ENOENT;
	*ret = TAKE_PTR(real);
	return 0;
}

int vm_image_find(char **ret_dir)
{
	_cleanup_free_ char *dir = NULL;
	int r;

	if ((r = vm_image_default_dir(&dir)) < 0)
		return r;
	if (ready_in(dir, ret_dir) == 0)
		return 0;
	if (getenv("WARD_VM_DIR"))
		return -ENOENT; /* an explicit dir: nothing else is looked at */
	return ready_in(VM_SYSTEM_DIR, ret_dir);
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
