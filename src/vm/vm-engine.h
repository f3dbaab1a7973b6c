/* Tier 3's engine (KVM or TCG) and the machine part of QEMU's command
 * line, shared by the runs (backend-t3.c) and the KVM probe.
 *
 * "Do not trust /dev/kvm because it opens" (issue 17): KVM is used only
 * when a probe guest, booted once with it, reaches ward's guest init and
 * reports through the control port within VM_PROBE_MS. The answer is
 * cached per boot id, QEMU and guest image; anything else is TCG, and
 * the reason is kept for the start event, --result and `ward probe`. */
#pragma once

#include <stdbool.h>

#define VM_PROBE_MS 2000

typedef struct VmEngine {
	bool kvm;
	bool probed_now;    /* the probe guest booted for this call */
	bool cached;        /* the answer came from the cache */
	bool test_no_kvm;   /* WARD_TEST_VM_NO_KVM (test builds): KVM refused */
	unsigned probe_ms;  /* the probe's wall time (now or when cached) */
	char why[200];      /* one line: why this engine */
} VmEngine;

/* Chooses the engine for @image_dir. @may_boot: boot the probe guest when
 * there is no cached answer (false: `ward probe --quick`; then an
 * unprobed but openable /dev/kvm reads as TCG with why "not probed yet").
 * Never fails: any error is TCG with its reason. */
void vm_engine_choose(const char *qemu, const char *image_dir, bool may_boot, VmEngine *ret);

typedef struct VmMachine {
	const char *image_dir;  /* vmlinux, initrd.img, cmdline */
	const char *console;    /* QEMU's -serial target: "file:PATH" etc. */
	unsigned mem_mb;
	bool kvm;
} VmMachine;

/* Appends QEMU's machine, accelerator, kernel and console arguments (no
 * devices) to @argv, the qemu binary not included. */
int vm_machine_args(char ***argv, const VmMachine *m);

/* One line on what the engine costs, for the start event and `ward probe`. */
const char *vm_engine_cost(const VmEngine *e);
