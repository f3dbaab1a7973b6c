/* The `ward run` argument parser: options, their validation, and where the
 * command starts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cli-args.h"
#include "cli/cli-options.h"
#include "policy/policy.h"

#define PARSE(o, err, ...)                                                                         \
	({                                                                                         \
		char *_argv[] = { "run", __VA_ARGS__, NULL };                                      \
		cli_parse_run((int)(sizeof(_argv) / sizeof(_argv[0])) - 1, _argv, (o), (err));     \
	})

static void test_cli_args_full(void **state)
{
	RunOptions o;
	char *err = NULL;

	assert_int_equal(PARSE(&o, &err, "-w", "/tmp", "-p", "/p.json", "--preset", "git",
			       "--preset", "node", "--timeout", "30", "--env", "FOO=bar", "--env",
			       "BAZ", "--tier", "2", "--strict", "--net", "proxy", "--allow-domain",
			       "example.com", "--git", "commit", "--", "sh", "-c", "echo hi"),
			 0);
	assert_string_equal(o.workspace, "/tmp");
	assert_string_equal(o.policy_file, "/p.json");
	assert_string_equal(o.presets[0], "git");
	assert_string_equal(o.presets[1], "node");
	assert_null(o.presets[2]);
	assert_int_equal(o.timeout_s, 30);
	assert_string_equal(o.env_extra[0], "FOO=bar");
	assert_string_equal(o.env_extra[1], "BAZ");
	assert_int_equal(o.tier, 2);
	assert_true(o.strict);
	assert_int_equal(o.net_mode, NET_MODE_PROXY);
	assert_string_equal(o.allow_domains[0], "example.com");
	assert_int_equal(o.git_mode, GIT_MODE_COMMIT);
	assert_string_equal(o.argv[0], "sh");
	assert_string_equal(o.argv[1], "-c");
	assert_string_equal(o.argv[2], "echo hi");
	assert_null(o.argv[3]);
	run_options_done(&o);
}

static void test_cli_args_command_options_are_not_ours(void **state)
{
	RunOptions o;
	char *err = NULL;

	/* Without "--", the first non-option starts the command and what
	 * follows belongs to it. */
	assert_int_equal(PARSE(&o, &err, "ls", "-w", "--timeout"), 0);
	assert_null(o.workspace);
	assert_int_equal(o.timeout_s, 0);
	assert_string_equal(o.argv[0], "ls");
	assert_string_equal(o.argv[1], "-w");
	assert_int_equal(o.tier, -1);
	assert_int_equal(o.net_mode, -1);
	assert_int_equal(o.git_mode, -1);
	run_options_done(&o);
}

static void expect_error(char **argv, int argc, const char *needle)
{
	RunOptions o;
	char *err = NULL;

	assert_int_equal(cli_parse_run(argc, argv, &o, &err), -EINVAL);
	assert_non_null(err);
	if (!strstr(err, needle))
		fail_msg("error '%s' does not mention '%s'", err, needle);
	free(err);
}

#define EXPECT_ERROR(needle, ...)                                                                  \
	do {                                                                                       \
		char *_argv[] = { "run", __VA_ARGS__, NULL };                                      \
		expect_error(_argv, (int)(sizeof(_argv) / sizeof(_argv[0])) - 1, needle);          \
	} while (0)

static void test_cli_args_errors(void **state)
{
	EXPECT_ERROR("--timeout", "--timeout", "abc", "--", "true");
	EXPECT_ERROR("--timeout", "--timeout", "0", "--", "true");
	EXPECT_ERROR("--timeout", "--timeout", "-5", "--", "true");
	EXPECT_ERROR("--tier", "--tier", "7", "--", "true");
	EXPECT_ERROR("--tier", "--tier", "x", "--", "true");
	EXPECT_ERROR("--env", "--env", "1BAD=x", "--", "true");
	EXPECT_ERROR("--env", "--env", "=x", "--", "true");
	EXPECT_ERROR("--net", "--net", "open", "--", "true");
	EXPECT_ERROR("--git: expected 'read-only', 'commit' or 'off'", "--git", "rw", "--", "true");
	EXPECT_ERROR("unknown option", "--frobnicate", "--", "true");
	EXPECT_ERROR("needs an argument", "--timeout");
	EXPECT_ERROR("missing COMMAND", "--timeout", "5");
	EXPECT_ERROR("missing COMMAND", "--");
	EXPECT_ERROR("--session", "--cow", "--session", "abc", "--", "true");
	EXPECT_ERROR("--allow-domain", "--net", "none", "--allow-domain", "x.org", "--", "true");
	/* The sandbox's own loopback: the refusal names the flag that works. */
	EXPECT_ERROR("--allow-host-port PORT", "--allow-domain", "localhost", "--", "true");
	EXPECT_ERROR("--allow-host-port PORT", "--allow-domain", "localhost:5432", "--", "true");
	EXPECT_ERROR("--allow-host-port PORT", "--allow-domain", "127.0.0.1:5432", "--", "true");
	EXPECT_ERROR("--allow-host-port PORT", "--allow-domain", "[::1]:5432", "--", "true");
	EXPECT_ERROR("--allow-host-port PORT", "--allow-domain", "db.localhost", "--", "true");
	EXPECT_ERROR("--allow-host-port", "--allow-host-port", "0", "--", "true");
	EXPECT_ERROR("--allow-host-port", "--allow-host-port", "65536", "--", "true");
	EXPECT_ERROR("--allow-host-port", "--allow-host-port", "http", "--", "true");
}

static void test_cli_args_find_result(void **state)
{
	char *a[] = { "run", "--timeout", "x", "--result", "r.json", "--", "true", NULL };
	char *b[] = { "run", "-w", "--result", "--result=s.json", "true", NULL };
	char *c[] = { "run", "--bogus", "echo", "--result", "not-ours", NULL };
	char *d[] = { "run", "--env", "--result", "--", "x", NULL };

	assert_string_equal(cli_find_result_file(7, a), "r.json");
	/* "-w --result": --result is -w's value. */
	assert_string_equal(cli_find_result_file(5, b), "s.json");
	/* After the command, arguments are the command's. */
	assert_null(cli_find_result_file(5, c));
	assert_null(cli_find_result_file(5, d));
}

static void test_cli_args_find_result_same_table(void **state)
{
	/* What does not parse is skipped, by the same table and rules as
	 * cli_parse_run: a value for a flag, a bad short option. */
	char *a[] = { "run", "--strict=x", "--result", "a.json", "--", "true", NULL };
	char *b[] = { "run", "-x", "--result=b.json", "true", NULL };
	/* An abbreviation is not --result. */
	char *c[] = { "run", "--res", "c.json", "true", NULL };
	/* The last one wins, as in cli_parse_run; "--result" missing its
	 * value at the end gives nothing new. */
	char *d[] = { "run", "--result", "d1.json", "-p", "x", "--result=d2.json", "--result", NULL };
	/* After "--", the command's. */
	char *e[] = { "run", "--", "--result", "e.json", NULL };

	assert_string_equal(cli_find_result_file(6, a), "a.json");
	assert_string_equal(cli_find_result_file(4, b), "b.json");
	assert_null(cli_find_result_file(4, c));
	assert_string_equal(cli_find_result_file(7, d), "d2.json");
	assert_null(cli_find_result_file(4, e));
}

static void test_cli_args_result_fd(void **state)
{
	RunOptions o;
	char *err = NULL;
	char *a[] = { "run", "--timeout", "x", "--result-fd", "7", "--", "true", NULL };
	char *b[] = { "run", "--result-fd=x", "true", NULL };
	char *c[] = { "run", "--", "--result-fd", "3", NULL };

	assert_int_equal(PARSE(&o, &err, "--result-fd", "3", "--result", "r.json", "--", "true"), 0);
	assert_int_equal(o.result_fd, 3);
	assert_string_equal(o.result_file, "r.json");
	run_options_done(&o);
	assert_int_equal(PARSE(&o, &err, "--", "true"), 0);
	assert_int_equal(o.result_fd, -1);
	run_options_done(&o);
	EXPECT_ERROR("--result-fd: expected a file descriptor number", "--result-fd", "-1", "--",
		     "true");
	EXPECT_ERROR("--result-fd: expected a file descriptor number", "--result-fd", "stdout",
		     "--", "true");
	/* Found on a command line that does not parse; not after the command. */
	assert_int_equal(cli_find_result_fd(7, a), 7);
	assert_int_equal(cli_find_result_fd(3, b), -1);
	assert_int_equal(cli_find_result_fd(4, c), -1);
}

static void test_cli_args_host_ports(void **state)
{
	RunOptions o;
	char *err = NULL;

	assert_int_equal(PARSE(&o, &err, "--allow-host-port", "5432", "--allow-host-port", "6379",
			       "--", "psql"),
			 0);
	assert_int_equal(o.n_host_ports, 2);
	assert_int_equal(o.host_ports[0], 5432);
	assert_int_equal(o.host_ports[1], 6379);
	assert_int_equal(o.net_mode, -1); /* no proxy implied */
	run_options_done(&o);
}

static void test_cli_args_events_fd(void **state)
{
	RunOptions o;
	char *err = NULL;

	assert_int_equal(PARSE(&o, &err, "--", "true"), 0);
	assert_int_equal(o.events_fd, -1);
	run_options_done(&o);
	assert_int_equal(PARSE(&o, &err, "--events-fd", "3", "--", "true"), 0);
	assert_int_equal(o.events_fd, 3);
	run_options_done(&o);
	assert_int_equal(PARSE(&o, &err, "--events-fd=0", "true"), 0);
	assert_int_equal(o.events_fd, 0);
	run_options_done(&o);
	char *bad[] = { "-1", "x", "3x", "", "2147483648", "+3" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(PARSE(&o, &err, "--events-fd", bad[i], "--", "true"), -EINVAL);
		assert_non_null(strstr(err, "--events-fd"));
		free(err);
		err = NULL;
	}
}

static void test_cli_args_help_needs_no_command(void **state)
{
	RunOptions o;
	char *err = NULL;

	assert_int_equal(PARSE(&o, &err, "--help"), 0);
	assert_true(o.help);
	assert_null(o.argv);
	run_options_done(&o);
}

static void test_cli_args_reparse(void **state)
{
	RunOptions o;
	char *err = NULL;

	/* A second parse starts afresh (no global parser state). */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(PARSE(&o, &err, "--cow", "--", "true"), 0);
		assert_true(o.cow);
		assert_string_equal(o.argv[0], "true");
		run_options_done(&o);
	}
}

static void expect_error_is(char **argv, int argc, const char *want)
{
	RunOptions o;
	char *err = NULL;

	assert_int_equal(cli_parse_run(argc, argv, &o, &err), -EINVAL);
	assert_non_null(err);
	assert_string_equal(err, want);
	free(err);
}

#define EXPECT_ERROR_IS(want, ...)                                                                 \
	do {                                                                                       \
		char *_argv[] = { "run", __VA_ARGS__, NULL };                                      \
		expect_error_is(_argv, (int)(sizeof(_argv) / sizeof(_argv[0])) - 1, want);         \
	} while (0)

static void test_cli_args_no_abbreviations(void **state)
{
	/* getopt_long took a unique prefix for the option: not any more. */
	EXPECT_ERROR_IS("unknown option '--allow-d'", "--allow-d", "x.org", "--", "true");
	EXPECT_ERROR_IS("unknown option '--work'", "--work", "/tmp", "--", "true");
	EXPECT_ERROR_IS("unknown option '--stric'", "--stric", "--", "true");
	EXPECT_ERROR_IS("unknown option '--res'", "--res=r.json", "--", "true");
	/* Unknown options are named as written, short ones one letter. */
	EXPECT_ERROR_IS("unknown option '--frobnicate'", "--frobnicate=1", "--", "true");
	EXPECT_ERROR_IS("unknown option '-x'", "-hx", "--", "true");
	EXPECT_ERROR_IS("unknown option '-W'", "-W", "d", "--", "true");
	EXPECT_ERROR_IS("option '--strict' takes no argument", "--strict=yes", "--", "true");
	EXPECT_ERROR_IS("option '--workspace' needs an argument", "--workspace");
	EXPECT_ERROR_IS("option '-p' needs an argument", "-p");
}

static void test_cli_args_values(void **state)
{
	RunOptions o;
	char *err = NULL;

	/* --opt=value, --opt value, -oVALUE, -o VALUE; repeated options. */
	assert_int_equal(PARSE(&o, &err, "--workspace=/a", "-w/b", "--policy=p=q.json", "--preset",
			       "git", "--preset=node", "--timeout=7", "--env=A=b", "--result=",
			       "--net=proxy", "--", "true"),
			 0);
	assert_string_equal(o.workspace, "/b"); /* the last one wins */
	assert_string_equal(o.policy_file, "p=q.json");
	assert_string_equal(o.presets[0], "git");
	assert_string_equal(o.presets[1], "node");
	assert_int_equal(o.timeout_s, 7);
	assert_string_equal(o.env_extra[0], "A=b");
	assert_string_equal(o.result_file, "");
	assert_int_equal(o.net_mode, NET_MODE_PROXY);
	run_options_done(&o);
	/* A value that looks like an option is still the value. */
	assert_int_equal(PARSE(&o, &err, "-w", "--strict", "true"), 0);
	assert_string_equal(o.workspace, "--strict");
	assert_false(o.strict);
	run_options_done(&o);
	/* Clustered short flags. */
	assert_int_equal(PARSE(&o, &err, "-hw", "/x"), 0);
	assert_true(o.help);
	assert_string_equal(o.workspace, "/x");
	run_options_done(&o);
}

static void test_cli_args_command_untouched(void **state)
{
	RunOptions o;
	char *err = NULL;

	/* "--" ends ward's options; everything after is the command's. */
	assert_int_equal(PARSE(&o, &err, "--", "ls", "--color"), 0);
	assert_string_equal(o.argv[0], "ls");
	assert_string_equal(o.argv[1], "--color");
	assert_null(o.argv[2]);
	run_options_done(&o);
	/* Without "--", the command's -w is not ward's workspace. */
	assert_int_equal(PARSE(&o, &err, "ls", "-w", "x"), 0);
	assert_null(o.workspace);
	assert_string_equal(o.argv[0], "ls");
	assert_string_equal(o.argv[1], "-w");
	assert_string_equal(o.argv[2], "x");
	assert_null(o.argv[3]);
	run_options_done(&o);
	/* Only the first "--" is ward's: a second one is the command's
	 * (getopt's caller used to drop it too). */
	assert_int_equal(PARSE(&o, &err, "--strict", "--", "--", "x", "--"), 0);
	assert_true(o.strict);
	assert_string_equal(o.argv[0], "--");
	assert_string_equal(o.argv[1], "x");
	assert_string_equal(o.argv[2], "--");
	assert_null(o.argv[3]);
	run_options_done(&o);
	/* After "--", ward's own option names are the command's. */
	assert_int_equal(PARSE(&o, &err, "--", "-w", "x", "--help", "--bogus"), 0);
	assert_null(o.workspace);
	assert_false(o.help);
	assert_string_equal(o.argv[0], "-w");
	assert_string_equal(o.argv[3], "--bogus");
	run_options_done(&o);
	/* "-" alone is a command name, not an option. */
	assert_int_equal(PARSE(&o, &err, "-", "-w"), 0);
	assert_string_equal(o.argv[0], "-");
	assert_string_equal(o.argv[1], "-w");
	run_options_done(&o);
}

/* The table-driven parser the review subcommands use. */
enum { T_HELP = 1, T_JSON, T_POLICY, T_COLOR, T_FORCE };
static const CliOption t_table[] = {
	{ "help", 'h', CLI_ARG_NONE, T_HELP },
	{ "json", 0, CLI_ARG_NONE, T_JSON },
	{ "policy", 'p', CLI_ARG_REQUIRED, T_POLICY },
	{ "color", 0, CLI_ARG_OPTIONAL, T_COLOR },
	{ "force", 'f', CLI_ARG_NONE, T_FORCE },
	{},
};

#define OPTS(p, err, flags, ...)                                                                   \
	({                                                                                         \
		char *_argv[] = { "apply", __VA_ARGS__, NULL };                                    \
		cli_parse_options(t_table, (flags), (int)(sizeof(_argv) / sizeof(_argv[0])) - 1,   \
				  _argv, (p), (err));                                              \
	})

static void test_cli_options_interleaved(void **state)
{
	CliParsed p;
	char *err = NULL;

	assert_int_equal(OPTS(&p, &err, CLI_PARSE_INTERLEAVED, "ID", "--json", "a", "-p", "pol",
			      "--color", "--color=never", "-fh", "--policy=x", "-py", "--", "--json"),
			 0);
	assert_string_equal(p.pos[0], "ID");
	assert_string_equal(p.pos[1], "a");
	assert_string_equal(p.pos[2], "--json");
	assert_null(p.pos[3]);
	assert_int_equal(p.n_opts, 8);
	assert_int_equal(p.opts[0].id, T_JSON);
	assert_int_equal(p.opts[1].id, T_POLICY);
	assert_string_equal(p.opts[1].value, "pol");
	assert_int_equal(p.opts[2].id, T_COLOR);
	assert_null(p.opts[2].value);
	assert_string_equal(p.opts[3].value, "never");
	assert_int_equal(p.opts[4].id, T_FORCE);
	assert_int_equal(p.opts[5].id, T_HELP);
	assert_string_equal(p.opts[6].value, "x");
	assert_string_equal(p.opts[7].value, "y");
	cli_parsed_done(&p);
}

static void test_cli_options_rejects_unknown(void **state)
{
	CliParsed p;
	char *err = NULL;

	/* The bug of issue 9: an option of another command (named in no table
	 * here), an abbreviation, a value for a flag, a missing value. */
	assert_int_equal(OPTS(&p, &err, CLI_PARSE_INTERLEAVED, "ID", "--workspace", "X"), -EINVAL);
	assert_string_equal(err, "unknown option '--workspace'");
	free(err);
	assert_int_equal(OPTS(&p, &err, CLI_PARSE_INTERLEAVED, "--js"), -EINVAL);
	assert_string_equal(err, "unknown option '--js'");
	free(err);
	assert_int_equal(OPTS(&p, &err, CLI_PARSE_INTERLEAVED, "-x"), -EINVAL);
	assert_string_equal(err, "unknown option '-x'");
	free(err);
	assert_int_equal(OPTS(&p, &err, CLI_PARSE_INTERLEAVED, "-fw"), -EINVAL);
	assert_string_equal(err, "unknown option '-w'");
	free(err);
	assert_int_equal(OPTS(&p, &err, CLI_PARSE_INTERLEAVED, "--json=yes"), -EINVAL);
	assert_string_equal(err, "option '--json' takes no argument");
	free(err);
	assert_int_equal(OPTS(&p, &err, CLI_PARSE_INTERLEAVED, "ID", "--policy"), -EINVAL);
	assert_string_equal(err, "option '--policy' needs an argument");
	free(err);
	assert_int_equal(OPTS(&p, &err, CLI_PARSE_INTERLEAVED, "ID", "-p"), -EINVAL);
	assert_string_equal(err, "option '-p' needs an argument");
	free(err);
}

static void test_cli_options_stop_at_positional(void **state)
{
	CliParsed p;
	char *err = NULL;

	assert_int_equal(OPTS(&p, &err, CLI_PARSE_STOP_AT_POSITIONAL, "--json", "ls", "--bogus",
			      "-p"),
			 0);
	assert_int_equal(p.n_opts, 1);
	assert_string_equal(p.pos[0], "ls");
	assert_string_equal(p.pos[1], "--bogus");
	assert_string_equal(p.pos[2], "-p");
	cli_parsed_done(&p);
	/* "-" alone is a positional. */
	assert_int_equal(OPTS(&p, &err, CLI_PARSE_INTERLEAVED, "-"), 0);
	assert_string_equal(p.pos[0], "-");
	cli_parsed_done(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_args_full),
		cmocka_unit_test(test_cli_options_interleaved),
		cmocka_unit_test(test_cli_options_rejects_unknown),
		cmocka_unit_test(test_cli_options_stop_at_positional),
		cmocka_unit_test(test_cli_args_command_options_are_not_ours),
		cmocka_unit_test(test_cli_args_errors),
		cmocka_unit_test(test_cli_args_host_ports),
		cmocka_unit_test(test_cli_args_events_fd),
		cmocka_unit_test(test_cli_args_result_fd),
		cmocka_unit_test(test_cli_args_find_result),
		cmocka_unit_test(test_cli_args_find_result_same_table),
		cmocka_unit_test(test_cli_args_no_abbreviations),
		cmocka_unit_test(test_cli_args_values),
		cmocka_unit_test(test_cli_args_command_untouched),
		cmocka_unit_test(test_cli_args_help_needs_no_command),
		cmocka_unit_test(test_cli_args_reparse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
