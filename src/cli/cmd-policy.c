/* ward policy check FILE | ward policy show [-p FILE] [--preset NAME]... [-w DIR] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "common/strv.h"
#include "policy/policy.h"
#include "ward/ward.h"

static void usage_policy(FILE *f)
{
	fprintf(f, "Usage: ward policy check FILE\n"
		   "       ward policy show [-p FILE] [--preset NAME]... [-w DIR]\n\n"
		   "Validate a policy file, or print the effective policy as JSON.\n\n"
		   "Commands:\n"
		   "  check FILE   validate FILE on top of the built-in defaults\n"
		   "  show         print the merged, finalized policy `ward run` would use\n\n"
		   "See 'ward policy check --help', 'ward policy show --help' and docs/policy.md.\n");
}

static void usage_check(FILE *f)
{
	fprintf(f, "Usage: ward policy check FILE\n\n"
		   "Parse FILE (schema version 1) on top of the built-in defaults and validate it,\n"
		   "with the current directory as the workspace. Prints \"FILE: ok\" and exits 0,\n"
		   "or prints the error (file, JSON path, what was expected) and exits 125.\n\n"
		   "  -h, --help   show this help\n");
}

static void usage_show(FILE *f)
{
	fprintf(f, "Usage: ward policy show [-p FILE] [--preset NAME]... [-w DIR]\n\n"
		   "Print the effective policy as JSON: built-in defaults, then the presets, then\n"
		   "FILE (default: $XDG_CONFIG_HOME/ward/policy.json if it exists), with \"~\"\n"
		   "expanded and paths normalized against DIR.\n\n"
		   "  -p, --policy FILE    the user's policy file\n"
		   "      --preset NAME    apply a built-in preset (git, node, python, rust, go)\n"
		   "  -w, --workspace DIR  the workspace (default: the current directory)\n"
		   "  -h, --help           show this help\n");
}

static int report(const PolicyError *e)
{
	char line[1400];

	policy_error_format(e, line, sizeof(line));
	log_error("%s", line);
	return WARD_EXIT_SETUP;
}

/* Finalize against the invoking user's home and @workspace (or the cwd). */
static int finalize(WardPolicy *p, const char *workspace)
{
	_cleanup_free_ char *home = NULL, *ws = NULL;
	PolicyError e = { 0 };
	int r;

	r = ward_home_dir(&home);
	if (r < 0) {
		log_error_errno(r, "Failed to find the home directory: %m");
		return WARD_EXIT_SETUP;
	}
	ws = realpath(workspace ? workspace : ".", NULL);
	if (!ws) {
		log_error_errno(-errno, "Failed to resolve workspace '%s': %m",
				workspace ? workspace : ".");
		return WARD_EXIT_SETUP;
	}
	r = policy_finalize(p, &(PolicyContext){ .home = home, .workspace = ws }, &e);
	if (r == -ENOMEM) {
		log_error_errno(r, "Failed to finalize the policy: %m");
		return WARD_EXIT_SETUP;
	}
	if (r < 0)
		return report(&e);
	return 0;
}

static int policy_check(int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	WardPolicy *p = NULL;
	PolicyError e = { 0 };
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
		switch (c) {
		case 'h':
			usage_check(stdout);
			return 0;
		default:
			usage_check(stderr);
			return WARD_EXIT_USAGE;
		}
	if (argc - optind != 1) {
		usage_check(stderr);
		return WARD_EXIT_USAGE;
	}

	p = policy_new_defaults();
	if (!p)
		return log_error_errno(-ENOMEM, "Failed to allocate the policy: %m"), WARD_EXIT_SETUP;
	r = policy_merge_file(p, argv[optind], &e);
	if (r < 0) {
		policy_free(p);
		return report(&e);
	}
	r = finalize(p, NULL);
	policy_free(p);
	if (r != 0)
		return r;
	printf("%s: ok\n", argv[optind]);
	return 0;
}

static int policy_show(int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "policy", required_argument, NULL, 'p' },
		{ "preset", required_argument, NULL, 'P' },
		{ "workspace", required_argument, NULL, 'w' },
		{},
	};
	_cleanup_strv_ char **presets = NULL;
	_cleanup_free_ char *json = NULL;
	const char *file = NULL, *workspace = NULL;
	WardPolicy *p = NULL;
	PolicyError e = { 0 };
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+hp:w:", options, NULL)) >= 0)
		switch (c) {
		case 'h':
			usage_show(stdout);
			return 0;
		case 'p':
			file = optarg;
			break;
		case 'P':
			if (strv_extend(&presets, optarg) < 0)
				return log_error_errno(-ENOMEM, "Out of memory: %m"), WARD_EXIT_SETUP;
			break;
		case 'w':
			workspace = optarg;
			break;
		default:
			usage_show(stderr);
			return WARD_EXIT_USAGE;
		}
	if (optind != argc) {
		usage_show(stderr);
		return WARD_EXIT_USAGE;
	}

	r = policy_load(file, presets, &p, &e);
	if (r < 0)
		return report(&e);
	r = finalize(p, workspace);
	if (r != 0) {
		policy_free(p);
		return r;
	}
	json = policy_to_json(p);
	policy_free(p);
	if (!json)
		return log_error_errno(-ENOMEM, "Failed to format the policy: %m"), WARD_EXIT_SETUP;
	printf("%s\n", json);
	return 0;
}

int cmd_policy(int argc, char **argv)
{
	if (argc < 2) {
		usage_policy(stderr);
		return WARD_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage_policy(stdout);
		return 0;
	}
	if (strcmp(argv[1], "check") == 0)
		return policy_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return policy_show(argc - 1, argv + 1);
	log_error("Unknown policy command '%s'", argv[1]);
	usage_policy(stderr);
	return WARD_EXIT_USAGE;
}
