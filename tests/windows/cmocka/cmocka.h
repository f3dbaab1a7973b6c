/* The part of cmocka's API the plan-layer unit tests use, for the Windows
 * cross build (Debian ships no mingw cmocka). Same names and meaning: a
 * failed assertion ends the test, its teardown runs, the group goes on;
 * output is TAP (what CMOCKA_MESSAGE_OUTPUT=TAP gives on Linux). Written
 * for ward, not taken from cmocka. */
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*CMUnitTestFunction)(void **state);
typedef int (*CMFixtureFunction)(void **state);

struct CMUnitTest {
	const char *name;
	CMUnitTestFunction test_func;
	CMFixtureFunction setup_func;
	CMFixtureFunction teardown_func;
	void *initial_state;
};

#define cmocka_unit_test(f) { #f, f, NULL, NULL, NULL }
#define cmocka_unit_test_setup_teardown(f, s, t) { #f, f, s, t, NULL }

extern jmp_buf ward_cm_jmp;
extern int ward_cm_failed;

static inline void print_message(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

static inline void ward_cm_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("# %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	ward_cm_failed = 1;
	longjmp(ward_cm_jmp, 1);
}

#define assert_true(c)                                                                             \
	do {                                                                                       \
		if (!(c))                                                                          \
			ward_cm_fail(__FILE__, __LINE__, "%s is false", #c);                       \
	} while (0)
#define assert_false(c)                                                                            \
	do {                                                                                       \
		if (c)                                                                             \
			ward_cm_fail(__FILE__, __LINE__, "%s is true", #c);                        \
	} while (0)
#define assert_int_equal(a, b)                                                                     \
	do {                                                                                       \
		intmax_t _a = (intmax_t)(a), _b = (intmax_t)(b);                                   \
		if (_a != _b)                                                                      \
			ward_cm_fail(__FILE__, __LINE__, "%jd != %jd", _a, _b);                    \
	} while (0)
#define assert_int_not_equal(a, b)                                                                 \
	do {                                                                                       \
		intmax_t _a = (intmax_t)(a), _b = (intmax_t)(b);                                   \
		if (_a == _b)                                                                      \
			ward_cm_fail(__FILE__, __LINE__, "%jd == %jd", _a, _b);                    \
	} while (0)
#define assert_string_equal(a, b)                                                                  \
	do {                                                                                       \
		const char *_a = (a), *_b = (b);                                                   \
		if (!_a || !_b || strcmp(_a, _b) != 0)                                             \
			ward_cm_fail(__FILE__, __LINE__, "\"%s\" != \"%s\"", _a ? _a : "(null)",   \
				     _b ? _b : "(null)");                                          \
	} while (0)
#define assert_null(p)                                                                             \
	do {                                                                                       \
		if ((p) != NULL)                                                                   \
			ward_cm_fail(__FILE__, __LINE__, "%s is not NULL", #p);                    \
	} while (0)
#define assert_non_null(p)                                                                         \
	do {                                                                                       \
		if ((p) == NULL)                                                                   \
			ward_cm_fail(__FILE__, __LINE__, "%s is NULL", #p);                        \
	} while (0)
#define assert_ptr_equal(a, b)                                                                     \
	do {                                                                                       \
		if ((const void *)(a) != (const void *)(b))                                        \
			ward_cm_fail(__FILE__, __LINE__, "%s != %s", #a, #b);                      \
	} while (0)

int ward_cm_run(const struct CMUnitTest *tests, size_t n);
#define cmocka_run_group_tests(t, s, d) ward_cm_run(t, sizeof(t) / sizeof((t)[0]))
