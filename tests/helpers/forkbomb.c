/* forkbomb [MAX]: fork children that sleep until fork fails or MAX (default
 * 5000) is reached; print how many were made and why it stopped; kill them
 * all. Exit 0 when fork failed with EAGAIN (a limit held), 1 when MAX was
 * reached, 2 on another error. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
	long max = argc > 1 ? strtol(argv[1], NULL, 10) : 5000;
	pid_t *kids = calloc((size_t)max + 1, sizeof(pid_t));
	long n = 0;
	int err = 0;

	if (!kids || max <= 0)
		return 2;
	while (n < max) {
		pid_t pid = fork();

		if (pid == 0) {
			pause();
			_exit(0);
		}
		if (pid < 0) {
			err = errno;
			break;
		}
		kids[n++] = pid;
	}
	for (long i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (long i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	if (err) {
		printf("forkbomb: %ld processes, then %s\n", n, strerrorname_np(err));
		return err == EAGAIN ? 0 : 2;
	}
	printf("forkbomb: reached %ld processes without a limit\n", n);
	return 1;
}
