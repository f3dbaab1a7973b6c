/* A harness's view of ward, from a program that links libward, measured
 * against the same program starting the bare command itself (posix_spawn +
 * waitpid), interleaved, stdio on /dev/null. Prints the medians and 99th
 * percentiles (ms) and the ratios.
 *   live-bench N PROGRAM [ARG]...
 *       bench/warm.sh (issue 14): each command in one live session with
 *       ward_live_exec(), with no `ward exec` process per command.
 *   live-bench --cold TIER N PROGRAM [ARG]...
 *       bench/startup.sh (issue 11): each command a cold run of its own
 *       (ward_run_new, ward_run_exec, ward_run_free) at TIER, with no
 *       `ward run` process to start: what a sandboxed command costs once
 *       the CLI's own process start is gone.
 * Run it in the workspace directory. */
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

/* One cold run of @argv at @tier, configured like `ward run --tier TIER`
 * with the default policy. Returns the command's exit code, or -1 with the
 * reason printed. */
static int cold(const ward_policy *p, const char *cwd, int tier, char *const *argv, int devnull)
{
	ward_run *r = ward_run_new(p);
	int code = -1;

	if (!r)
		return -1;
	if (ward_run_set_workspace(r, cwd) < 0 || ward_run_set_tier(r, tier) < 0 ||
	    ward_run_set_stdio(r, devnull, devnull, devnull) < 0 ||
	    ward_run_exec(r, (const char *const *)argv) < 0)
		fprintf(stderr, "live-bench: %s\n", ward_run_last_error(r));
	else
		code = ward_run_exit_code(r);
	ward_run_free(r);
	return code;
}

static void report(const char *what, const char *prog, double *tb, double *tw, int n,
		   const char *targets)
{
	double mb = quantile(tb, n, 0.5), pb = quantile(tb, n, 0.99);
	double mw = quantile(tw, n, 0.5), pw = quantile(tw, n, 0.99);

	printf("  %-14s %-16s median %7.3f   p99 %7.3f\n", "posix_spawn", prog, mb, pb);
	printf("  %-14s %-16s median %7.3f   p99 %7.3f\n", what, prog, mw, pw);
	printf("%s: %s / posix_spawn  median %.2fx   p99 %.2fx   %s\n", prog, what, mw / mb,
	       pw / pb, targets);
}

/* `--cold TIER N PROGRAM [ARG]...`: see the top of the file. */
static int main_cold(int argc, char **argv, const char *cwd, int devnull)
{
	int tier = argc > 4 ? atoi(argv[2]) : -1, n = argc > 4 ? atoi(argv[3]) : 0;
	char *const *cmd = argv + 4;
	ward_policy *p = ward_policy_new();
	double *tb = calloc((size_t)(n > 0 ? n : 1), sizeof(*tb));
	double *tw = calloc((size_t)(n > 0 ? n : 1), sizeof(*tw));
	char what[32];

	if (tier < 0 || n < 1) {
		fprintf(stderr, "usage: live-bench --cold TIER N PROGRAM [ARG]...\n");
		return 2;
	}
	if (!p || !tb || !tw)
		return 1;
	/* Settle both (page cache, ward's state directory). */
	if (bare(cmd, devnull) != 0 || cold(p, cwd, tier, cmd, devnull) != 0)
		return 1;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			bool run = (i + k) % 2;
			double t0 = now_ms();
			int r = run ? cold(p, cwd, tier, cmd, devnull) : bare(cmd, devnull);

			(run ? tw : tb)[i] = now_ms() - t0;
			if (r != 0) {
				fprintf(stderr, "live-bench: %s exited %d\n",
					run ? "ward_run_exec" : "the bare command", r);
				return 1;
			}
		}
	ward_policy_free(p);
	snprintf(what, sizeof(what), "ward_run T%d", tier);
	report(what, cmd[0], tb, tw, n, tier == 1 ? "(issue 11's target for `ward run --tier 1`: <= 2.0)" : "");
	free(tb);
	free(tw);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0, devnull, r;
	char cwd[4096];
	ward_policy *p;
	ward_run *config;
	ward_live *l = NULL;
	double *tb, *tl;

	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || !getcwd(cwd, sizeof(cwd)))
		return 1;
	if (argc > 1 && strcmp(argv[1], "--cold") == 0)
		return main_cold(argc, argv, cwd, devnull);
	if (n < 1) {
		fprintf(stderr, "usage: live-bench [--cold TIER] N PROGRAM [ARG]...\n");
		return 2;
	}
	tb = calloc((size_t)n, sizeof(*tb));
	tl = calloc((size_t)n, sizeof(*tl));
	if (!tb || !tl)
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
	report("ward_live_exec", argv[2], tb, tl, n, "(targets: median <= 2.0, p99 <= 3.0)");
	return 0;
}
