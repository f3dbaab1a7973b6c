/* Probe: tier selection from features, the Landlock feature names, the
 * Hint: lines, and a probe of this kernel that must agree with itself. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "linux/landlock.h"
#include "probe/probe.h"

static WardFeatures all_ns(void)
{
	WardFeatures f = { .userns = true, .mountns = true, .pidns = true,
			   .netns = true,  .ipcns = true,   .utsns = true };

	return f;
}

static void test_probe_best_tier(void **state)
{
	WardFeatures f = all_ns();

	assert_int_equal(probe_best_tier(&f), 2);
	/* Landlock and seccomp missing degrade T2, they do not lower it. */
	assert_int_equal(f.landlock_abi, 0);
	f.netns = false;
	assert_int_equal(probe_best_tier(&f), 0);
	f.landlock_abi = 1;
	f.seccomp = true;
	assert_int_equal(probe_best_tier(&f), 1);
	f = (WardFeatures){ .landlock_abi = 4 };
	assert_int_equal(probe_best_tier(&f), 0); /* no seccomp: no T1 */
	assert_int_equal(probe_best_tier(NULL), 0);
}

static void test_probe_landlock_feature_names(void **state)
{
	const char *const *n;
	size_t len;

	n = probe_landlock_features(3, &len);
	assert_int_equal(len, 3);
	assert_string_equal(n[0], "fs");
	assert_string_equal(n[1], "refer");
	assert_string_equal(n[2], "truncate");
	n = probe_landlock_features(6, &len);
	assert_int_equal(len, 6);
	assert_string_equal(n[3], "tcp");
	assert_string_equal(n[4], "ioctl-dev");
	assert_string_equal(n[5], "scopes");
	probe_landlock_features(0, &len);
	assert_int_equal(len, 0);
	n = probe_landlock_features(42, &len);
	assert_int_equal(len, 10);
	assert_string_equal(n[6], "audit");
	assert_string_equal(n[7], "tsync");
	assert_string_equal(n[8], "unix-path");
	assert_string_equal(n[9], "udp");
}

/* Run probe_explain_missing with stderr captured into @buf. */
static void capture_explain(const WardFeatures *f, char *buf, size_t size)
{
	char path[] = "/tmp/ward-test-probe-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fd, 2), 2);
	probe_explain_missing(f);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	n = pread(fd, buf, size - 1, 0);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
	unlink(path);
}

static void test_probe_explain_hints(void **state)
{
	WardFeatures f = {};
	char out[8192];

	snprintf(f.userns_reason, sizeof(f.userns_reason),
		 "kernel.apparmor_restrict_unprivileged_userns is 1");
	f.landlock_errno = EOPNOTSUPP;
	capture_explain(&f, out, sizeof(out));
	assert_non_null(strstr(out, "apparmor_restrict_unprivileged_userns"));
	assert_non_null(strstr(out, "Hint:"));
	assert_non_null(strstr(out, "lsm="));

	snprintf(f.userns_reason, sizeof(f.userns_reason), "user.max_user_namespaces is 0");
	f.landlock_errno = ENOSYS;
	capture_explain(&f, out, sizeof(out));
	assert_non_null(strstr(out, "Hint: sysctl -w user.max_user_namespaces="));
	assert_non_null(strstr(out, "CONFIG_SECURITY_LANDLOCK"));
	assert_null(strstr(out, "lsm="));

	snprintf(f.userns_reason, sizeof(f.userns_reason), "kernel.unprivileged_userns_clone is 0");
	capture_explain(&f, out, sizeof(out));
	assert_non_null(strstr(out, "Hint: sysctl -w kernel.unprivileged_userns_clone=1"));

	/* No sysctl to blame: the container hint. */
	snprintf(f.userns_reason, sizeof(f.userns_reason),
		 "creating a user namespace failed: Operation not permitted");
	capture_explain(&f, out, sizeof(out));
	assert_non_null(strstr(out, "container"));

	/* Everything present: nothing to say. */
	f = all_ns();
	f.landlock_abi = 7;
	f.seccomp = f.seccomp_filter = true;
	capture_explain(&f, out, sizeof(out));
	assert_string_equal(out, "");
}

static void test_probe_this_kernel_consistent(void **state)
{
	WardFeatures quick, full;
	int abi = landlock_abi_version();

	assert_int_equal(probe_features(&quick, false), 0);
	assert_false(quick.full);
	assert_int_equal(quick.landlock_abi, abi > 0 ? abi : 0);
	if (abi <= 0)
		assert_true(quick.landlock_errno == ENOSYS || quick.landlock_errno == EOPNOTSUPP);
	assert_int_equal(quick.cgroup_delegated, quick.cgroup_path[0] != '\0');
	assert_int_equal(quick.cgroup_delegated, quick.cgroup_reason[0] == '\0');
	/* The v1 fallback is root's, and only when v2 cannot be used. */
	if (quick.cgroup_v1)
		assert_true(geteuid() == 0 && !quick.cgroup_delegated);

	assert_int_equal(probe_features(&full, true), 0);
	assert_true(full.full);
	assert_int_equal(full.landlock_abi, quick.landlock_abi);
	if (full.userns)
		assert_int_equal(full.userns_errno, 0);
	else
		assert_true(full.userns_reason[0] != '\0');
	/* No namespace works without a user namespace. */
	if (!full.userns)
		assert_false(full.mountns || full.pidns || full.netns || full.overlay_userns);
	if (full.seccomp_filter)
		assert_true(full.seccomp_filter_len > 0);
	assert_int_equal(probe_features(NULL, false), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_best_tier),
		cmocka_unit_test(test_probe_landlock_feature_names),
		cmocka_unit_test(test_probe_explain_hints),
		cmocka_unit_test(test_probe_this_kernel_consistent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
