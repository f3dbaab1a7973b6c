/* Tier 3's machine arguments (vm-engine.h): the image's kernel line is
 * passed on under TCG, the TCG-only calibration shortcuts are dropped under
 * KVM, TCG's translation cache is capped, and a missing or garbled cmdline
 * file falls back to the default line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/strv.h"
#include "vm/vm-engine.h"

static char dir[] = "/tmp/ward-test-vm-engine.XXXXXX";

static void write_cmdline(const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cmdline", dir);
	if (!text) {
		(void)unlink(path);
		return;
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The word after @flag in @argv (NULL when @flag is absent or last). */
static const char *after(char **argv, const char *flag)
{
	for (size_t i = 0; argv && argv[i]; i++)
		if (strcmp(argv[i], flag) == 0)
			return argv[i + 1];
	return NULL;
}

static char **args(bool kvm)
{
	VmMachine m = { .image_dir = dir, .console = "file:/dev/null", .mem_mb = 256, .kvm = kvm };
	char **argv = NULL;

	assert_int_equal(vm_machine_args(&argv, &m), 0);
	return argv;
}

#define LINE "console=ttyS0 quiet tsc_early_khz=2000000 lapic_timer_period=10000000 rdinit=/init"

static void test_tcg_keeps_the_line(void **state)
{
	char **argv;

	(void)state;
	write_cmdline(LINE "\n");
	argv = args(false);
	assert_string_equal(after(argv, "-append"), LINE);
	assert_string_equal(after(argv, "-accel"), "tcg,tb-size=48");
	assert_string_equal(after(argv, "-cpu"), "qemu64");
	assert_string_equal(after(argv, "-m"), "256");
	strv_free(argv);
}

static void test_kvm_drops_the_tcg_shortcuts(void **state)
{
	char **argv;

	(void)state;
	write_cmdline(LINE "\n");
	argv = args(true);
	assert_string_equal(after(argv, "-append"), "console=ttyS0 quiet rdinit=/init");
	assert_string_equal(after(argv, "-accel"), "kvm");
	assert_string_equal(after(argv, "-cpu"), "host");
	strv_free(argv);
}

static void test_missing_or_garbled_line(void **state)
{
	char **argv;

	(void)state;
	write_cmdline(NULL);
	argv = args(false);
	assert_non_null(strstr(after(argv, "-append"), "rdinit=/init"));
	strv_free(argv);
	/* A control character: not a line QEMU is given. */
	write_cmdline("console=ttyS0 \x01 rdinit=/evil\n");
	argv = args(false);
	assert_null(strstr(after(argv, "-append"), "evil"));
	assert_non_null(strstr(after(argv, "-append"), "rdinit=/init"));
	strv_free(argv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcg_keeps_the_line),
		cmocka_unit_test(test_kvm_drops_the_tcg_shortcuts),
		cmocka_unit_test(test_missing_or_garbled_line),
	};
	int r;

	if (!mkdtemp(dir))
		return 1;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	write_cmdline(NULL);
	(void)rmdir(dir);
	return r;
}
