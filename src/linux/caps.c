#include <errno.h>
#include <stdint.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macro.h"
#include "linux/caps.h"

int caps_drop_all(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	/* A uid-0 user stays uid 0 inside: without NOROOT, execve would hand
	 * the command a full set again. Locked so the command cannot undo it. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
					     SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
					     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
					     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
		return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	/* Until the kernel says there is no such capability. */
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break;
			return -errno;
		}
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	return 0;
}

int caps_keep_only(uint64_t keep)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {
		{ .effective = (uint32_t)keep, .permitted = (uint32_t)keep },
		{ .effective = (uint32_t)(keep >> 32), .permitted = (uint32_t)(keep >> 32) },
	};

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	for (int cap = 0; cap <= 63; cap++) {
		if (keep & (UINT64_C(1) << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break;
			return -errno;
		}
	}
	return RET_NERRNO(syscall(SYS_capset, &hdr, data));
}
