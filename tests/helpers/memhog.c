/* memhog [MAX_MB]: map and touch memory 16 MiB at a time until the kernel
 * refuses or MAX_MB (default 8192) is reached; print how far it got. Exit 0
 * when an allocation failed (an rlimit held), 1 when MAX_MB was reached. A
 * cgroup memory.max kills it instead (SIGKILL), which the caller checks.
 * Under AddressSanitizer it cannot run with RLIMIT_DATA (the shadow memory
 * counts), so such a build says so and exits 77. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define WARD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WARD_ASAN 1
#endif
#endif

/* The test build uses the project's sanitizers; LeakSanitizer's exit-time
 * scan needs ptrace, which the sandbox denies, and would turn a clean exit
 * into a failure. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

int main(int argc, char **argv)
{
	long max = argc > 1 ? strtol(argv[1], NULL, 10) : 8192;
	long mb = 0;

#ifdef WARD_ASAN
	printf("memhog: built with AddressSanitizer, cannot run under RLIMIT_DATA\n");
	return 77;
#endif
	while (mb < max) {
		char *p = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p == MAP_FAILED) {
			printf("memhog: stopped at %ld MiB: %s\n", mb, strerrorname_np(errno));
			return 0;
		}
		memset(p, 1, 16 << 20);
		mb += 16;
	}
	printf("memhog: reached %ld MiB without a limit\n", mb);
	return 1;
}
