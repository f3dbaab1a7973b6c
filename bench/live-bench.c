/* bench/warm.sh's harness view (issue 14): a program that links libward
 * runs each command in a live session with ward_live_exec(), with no
 * `ward exec` process per command; measured against the same program
 * starting the bare command itself (posix_spawn + waitpid), interleaved,
 * stdio on /dev/null. Prints the medians and 99th percentiles (ms) and
 * the ratios.
 *   live-bench N PROGRAM [ARG]...     (run in the workspace directory) */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ward/ward.h>

extern char **environ;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts @v. */
static double quantile(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[(int)(q * (n - 1) + 0.5)];
}

static int bare(char *const *argv, int devnull)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int r, status;

	posix_spawn_file_actions_init(&fa);
	for (int i = 0; i < 3; i++)
		posix_spawn_file_actions_adddup2(&fa, devnull, i);
	r = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0)
		return -r;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0, devnull, r;
	char cwd[4096];
	ward_policy *p;
	ward_run *config;
	ward_live *l = NULL;
	double *tb, *tl;

	if (n < 1) {
		fprintf(stderr, "usage: live-bench N PROGRAM [ARG]...\n");
		return 2;
	}
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	tb = calloc((size_t)n, sizeof(*tb));
	tl = calloc((size_t)n, sizeof(*tl));
	if (devnull < 0 || !tb || !tl || !getcwd(cwd, sizeof(cwd)))
		return 1;
	p = ward_policy_new();
	config = p ? ward_run_new(p) : NULL;
	if (!config || ward_run_set_workspace(config, cwd) < 0) {
		fprintf(stderr, "live-bench: %s\n", config ? ward_run_last_error(config) : "no memory");
		return 1;
	}
	r = ward_live_open(config, &l);
	if (r < 0) {
		fprintf(stderr, "live-bench: ward_live_open: %s\n", ward_run_last_error(config));
		return 1;
	}
	/* Settle both (page cache, the session's first spare). */
	if (bare(argv + 2, devnull) != 0 ||
	    ward_live_exec(l, (const char *const *)argv + 2, NULL, NULL, 0, devnull, devnull,
			   devnull, NULL) != 0) {
		fprintf(stderr, "live-bench: the command failed: %s\n", ward_live_last_error(l));
		return 1;
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			/* Alternate which goes first, so neither always follows the other. */
			bool live = (i + k) % 2;
			double t0 = now_ms();

			r = live ? ward_live_exec(l, (const char *const *)argv + 2, NULL, NULL, 0,
						  devnull, devnull, devnull, NULL)
				 : bare(argv + 2, devnull);
			(live ? tl : tb)[i] = now_ms() - t0;
			if (r != 0) {
				fprintf(stderr, "live-bench: %s exited %d (%s)\n",
					live ? "ward_live_exec" : "the bare command", r,
					live ? ward_live_last_error(l) : "");
				return 1;
			}
		}
	ward_live_close(l);
	ward_run_free(config);
	ward_policy_free(p);
	{
		double mb = quantile(tb, n, 0.5), pb = quantile(tb, n, 0.99);
		double ml = quantile(tl, n, 0.5), pl = quantile(tl, n, 0.99);

		printf("  posix_spawn %-16s median %7.3f   p99 %7.3f\n", argv[2], mb, pb);
		printf("  ward_live_exec %-13s median %7.3f   p99 %7.3f\n", argv[2], ml, pl);
		printf("%s: ward_live_exec / posix_spawn  median %.2fx (target <= 2.0)   p99 %.2fx "
		       "(target <= 3.0)\n",
		       argv[2], ml / mb, pl / pb);
	}
	return 0;
}
