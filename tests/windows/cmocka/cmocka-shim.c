/* The runner of cmocka.h's shim: TAP, one line per test. */
#include <stdio.h>

#include "cmocka.h"

jmp_buf ward_cm_jmp;
int ward_cm_failed;

int ward_cm_run(const struct CMUnitTest *tests, size_t n)
{
	volatile int failed = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	printf("1..%zu\n", n);
	for (volatile size_t i = 0; i < n; i++) {
		void *state = tests[i].initial_state;

		ward_cm_failed = 0;
		if (tests[i].setup_func && tests[i].setup_func(&state) != 0)
			ward_cm_failed = 1;
		else if (setjmp(ward_cm_jmp) == 0)
			tests[i].test_func(&state);
		if (tests[i].teardown_func)
			tests[i].teardown_func(&state);
		printf("%s %zu - %s\n", ward_cm_failed ? "not ok" : "ok", i + 1, tests[i].name);
		failed += ward_cm_failed;
	}
	return failed ? 1 : 0;
}
