/* ward run: parse the command line, run the command behind the run
 * module's boundary (run/run.h), exit with its exit code. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli-args.h"
#include "cli/commands.h"
#include "cli/run-request.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "run/run.h"
#include "ward/ward.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(Run *, run_free)

static void run_options_donep(RunOptions *o)
{
	run_options_done(o);
}

int cmd_run(int argc, char **argv)
{
	/* First thing: who started us, to die with it. */
	const pid_t parent = getppid();
	_cleanup_(run_options_donep) RunOptions o = {};
	_cleanup_free_ char *err = NULL, *overrides = NULL;
	_cleanup_(run_freep) Run *run = NULL;
	RunRequest req = RUN_REQUEST_INIT;
	int r;

	r = cli_parse_run(argc, argv, &o, &err);
	if (r < 0) {
		/* Still a record for the harness: --result and the audit log. */
		req.result_file = cli_find_result_file(argc, argv);
		req.result_fd = cli_find_result_fd(argc, argv);
		run = run_new(&req);
		if (!run)
			return log_error("Out of memory"), WARD_EXIT_SETUP;
		(void)run_fail(run, "arguments", 0, "%s", err ? err : "invalid arguments");
		r = run_all(run);
		fprintf(stderr, "Try 'ward run --help'.\n");
		return r;
	}
	if (o.help) {
		fputs(cli_run_usage, stdout);
		return 0;
	}
	if (o.log_level >= 0)
		log_set_level(o.log_level);
	if (cli_run_request(&o, parent, &req, &overrides) < 0 || !(run = run_new(&req)))
		return log_error("Out of memory"), WARD_EXIT_SETUP;
	return run_all(run);
}
