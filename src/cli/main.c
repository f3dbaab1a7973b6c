/* ward's entry point: dispatch to a subcommand. Everything else lives in
 * cmd-*.c and the ward-core library. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "cli/commands.h"
#include "common/macro.h"
#include "ward/ward.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "exec", cmd_exec, "run a command in a live session" },
	{ "run", cmd_run, "run a command in the sandbox" },
	{ "probe", cmd_probe, "show what this kernel can enforce" },
	{ "setup", cmd_setup, "install host support (setup apparmor|vm)" },
	{ "policy", cmd_policy, "check or show a policy" },
	{ "session", cmd_session, "create, list or stop a session (session new|ps|stop)" },
	{ "sessions", cmd_sessions, "list sessions" },
	{ "diff", cmd_diff, "show a copy-on-write session's changes" },
	{ "apply", cmd_apply, "apply a session's changes to the workspace" },
	{ "undo", cmd_undo, "undo an apply" },
	{ "discard", cmd_discard, "drop a session's changes" },
	{ "log", cmd_log, "show the audit log" },
	{ "mcp", cmd_mcp, "serve the Model Context Protocol on stdio" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: ward COMMAND [OPTION]...\n\n"
		   "A kernel-enforced sandbox for the shell commands of coding agents.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nOptions:\n"
		   "  -h, --help     show this help\n"
		   "      --version  show ward's version\n"
		   "\nSee 'ward COMMAND --help' and ward(1).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return WARD_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("ward %s\n", WARD_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "ward: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return WARD_EXIT_USAGE;
}
