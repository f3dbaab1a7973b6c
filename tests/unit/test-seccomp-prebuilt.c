/* The filter linked in at build time is exactly what libseccomp compiles
 * now, for every option combination. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/filter.h>

#include "linux/seccomp-filter.h"

static void test_seccomp_prebuilt_matches_compiled(void **state)
{
	for (unsigned i = 0; i < SECCOMP_OPTION_COMBINATIONS; i++) {
		SeccompOptions o;
		SeccompProgram *a = NULL, *b = NULL;

		seccomp_options_from_index(i, &o);
		assert_int_equal(seccomp_options_index(&o), i);
		assert_int_equal(seccomp_program_new(&o, &a), 0);
		assert_int_equal(seccomp_program_compile(&o, &b), 0);
		assert_int_equal(seccomp_program_len(a), seccomp_program_len(b));
		assert_true(seccomp_program_len(a) > 10);
		assert_memory_equal(seccomp_program_insns(a), seccomp_program_insns(b),
				    seccomp_program_len(a) * sizeof(struct sock_filter));
		seccomp_program_free(a);
		seccomp_program_free(b);
	}
}

static void test_seccomp_prebuilt_options_differ(void **state)
{
	SeccompOptions strict = {}, loose = { .allow_nested_userns = true, .allow_ptrace = true };
	SeccompProgram *a = NULL, *b = NULL;

	assert_int_equal(seccomp_program_new(&strict, &a), 0);
	assert_int_equal(seccomp_program_new(&loose, &b), 0);
	assert_true(seccomp_program_len(a) != seccomp_program_len(b) ||
		    memcmp(seccomp_program_insns(a), seccomp_program_insns(b),
			   seccomp_program_len(a) * sizeof(struct sock_filter)) != 0);
	seccomp_program_free(a);
	seccomp_program_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seccomp_prebuilt_matches_compiled),
		cmocka_unit_test(test_seccomp_prebuilt_options_differ),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
