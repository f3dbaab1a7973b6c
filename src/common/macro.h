/* Small macros shared by every module: errno conversion and array sizes. */
#pragma once

#include <errno.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Turn a libc "-1 and errno" result into "-errno", keep other values. */
#define RET_NERRNO(expr)                                                                           \
	({                                                                                         \
		__typeof__(expr) _r = (expr);                                                      \
		_r < 0 ? -(errno > 0 ? errno : EIO) : _r;                                          \
	})

/* Retry a syscall interrupted by a signal. */
#define RETRY_EINTR(expr)                                                                          \
	({                                                                                         \
		__typeof__(expr) _r;                                                               \
		do                                                                                 \
			_r = (expr);                                                               \
		while (_r < 0 && errno == EINTR);                                                  \
		_r;                                                                                \
	})

#define _unused_ __attribute__((unused))
#ifdef __MINGW32__
/* ward.exe uses mingw's C99 printf (__USE_MINGW_ANSI_STDIO): %zu, %jd. */
#define _printf_(a, b) __attribute__((format(gnu_printf, a, b)))
#else
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#endif
#define _noreturn_ __attribute__((noreturn))
