/* Where tier 3's guest image is (`ward setup vm`, src/vm/ward-setup-vm.sh)
 * and where ward's helper files for it are. */
#pragma once

#include <stdbool.h>

/* The directory `ward setup vm` writes by default: $WARD_VM_DIR, else
 * $XDG_DATA_HOME/ward/vm, else ~/.local/share/ward/vm. Caller frees. */
int vm_image_default_dir(char **ret);

/* The ready image: DIR/current/{vmlinux,initrd.img} of the default dir,
 * else of /var/lib/ward/vm (a system-wide `ward setup vm --dir`).
 * @ret_dir: the image's own directory (canonical). -ENOENT when none. */
int vm_image_find(char **ret_dir);

/* A helper shipped with ward ("ward-guest-init", "ward-setup-vm.sh"): next
 * to this ward binary (the build dir), else in ward's libexec dir.
 * -ENOENT when neither has it. Caller frees. */
int vm_helper_path(const char *name, char **ret);

/* qemu-system-x86_64 on $PATH or in /usr/bin. Caller frees. */
int vm_qemu_path(char **ret);

/* For `ward probe`: whether tier 3 can run here, and one line saying so
 * (the engine and its cost, or what is missing and how to make it). */
typedef struct VmStatus {
	bool qemu;
	bool image;
	char engine[8];      /* "kvm" or "tcg" (vm-engine.h) */
	char engine_why[200];
	char kernel[128];    /* the image's "kernel" file: "minimal ...", "stock ..." */
	char image_dir[512];
	char line[1024];
} VmStatus;

/* @may_boot: boot the KVM probe guest when its answer is not cached
 * (`ward probe`; --quick reads the cache only). */
void vm_status(VmStatus *ret, bool may_boot);
