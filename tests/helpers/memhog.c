/* memhog [MAX_MB [KIND]]: take memory 16 MiB at a time until the kernel
 * refuses or MAX_MB (default 8192) is reached; print how far it got. Exit 0
 * when an allocation failed (a limit held), 1 when MAX_MB was reached. A
 * cgroup memory.max kills it instead (SIGKILL), which the caller checks;
 * "memhog: at N MiB" lines after each step say how far it got then.
 * KIND is the memory taken:
 *   private  private anonymous mmap (the default; what RLIMIT_DATA counts)
 *   memfd    pages of a memfd, never mapped (shared memory, written)
 *   shared   a shared anonymous mapping, touched
 *   shm      a file in /dev/shm (a tmpfs), written
 * Under AddressSanitizer "private" cannot run with RLIMIT_DATA (the shadow
 * memory counts), so such a build says so and exits 77. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
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

#define CHUNK (16 << 20)

/* Shared memory: a memfd or a /dev/shm file grown by write(), or a shared
 * anonymous mapping touched page by page. */
static int hog_shared(const char *kind, long max)
{
	static char buf[1 << 20];
	long mb = 0;
	int fd = -1;

	memset(buf, 1, sizeof(buf));
	if (strcmp(kind, "memfd") == 0)
		fd = memfd_create("memhog", MFD_CLOEXEC);
	else if (strcmp(kind, "shm") == 0)
		fd = open("/dev/shm/memhog", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	else if (strcmp(kind, "shared") != 0)
		return 2;
	if (strcmp(kind, "shared") != 0 && fd < 0) {
		printf("memhog: %s: %s\n", kind, strerrorname_np(errno));
		return 2;
	}
	while (mb < max) {
		if (fd >= 0) {
			for (int i = 0; i < CHUNK / (int)sizeof(buf); i++)
				if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
					printf("memhog: stopped at %ld MiB: %s\n", mb + i,
					       strerrorname_np(errno));
					return 0;
				}
		} else {
			char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED) {
				printf("memhog: stopped at %ld MiB: %s\n", mb,
				       strerrorname_np(errno));
				return 0;
			}
			memset(p, 1, CHUNK);
		}
		mb += 16;
		printf("memhog: at %ld MiB\n", mb);
		fflush(stdout);
	}
	printf("memhog: reached %ld MiB without a limit\n", mb);
	return 1;
}

int main(int argc, char **argv)
{
	long max = argc > 1 ? strtol(argv[1], NULL, 10) : 8192;
	long mb = 0;

	if (argc > 2 && strcmp(argv[2], "private") != 0)
		return hog_shared(argv[2], max);
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
