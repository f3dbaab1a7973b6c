/* ward policy check FILE | ward policy show [-p FILE] [--preset NAME]... [-w DIR] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli-options.h"
#include "cli/commands.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "common/strv.h"
#include "policy/ceiling.h"
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

DEFINE_TRIVIAL_CLEANUP_FUNC(Ceiling *, ceiling_free)

static int report_ceiling(const PolicyError *e)
{
	char line[1400];

	policy_error_format(e, line, sizeof(line));
	log_error("Refused by the managed policy: %s", line);
	return WARD_EXIT_SETUP;
}

/* The effective policy as `ward run` makes it: within the managed ceiling
 * @c (may be NULL), finalized against the home and @workspace. */
static int show_load(Ceiling *c, const char *file, char *const *presets, const char *workspace,
		     WardPolicy **ret)
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
	PolicyContext ctx = { .home = home, .workspace = ws };
	r = policy_load_bounded(c, file, presets, NULL, NULL, &ctx, ret, &e);
	if (r == -ENOMEM)
		return log_error_errno(r, "Failed to load the policy: %m"), WARD_EXIT_SETUP;
	if (r == -EPERM)
		return report_ceiling(&e);
	if (r < 0)
		return report(&e);
	if (c && ceiling_check_run(c, ceiling_default_tier(c) , "the policy", true, ws, &e) < 0 &&
	    strcmp(e.path, "workspace") == 0)
		return report_ceiling(&e);
	return 0;
}

/* The policy's JSON; with a ceiling, a "managed" member marks what came
 * from it (remove it to reload the output as a policy file). */
static char *show_json(const WardPolicy *p, const Ceiling *c)
{
	_cleanup_free_ char *text = policy_to_json(p);
	_cleanup_cjson_ cJSON *doc = NULL;
	cJSON *m;

	if (!text || !c)
		return TAKE_PTR(text);
	doc = cJSON_Parse(text);
	m = ceiling_marks(c);
	if (!doc || !m || !cJSON_AddItemToObject(doc, "managed", m)) {
		cJSON_Delete(m);
		return NULL;
	}
	return cJSON_Print(doc);
}

enum {
	OPT_HELP = 1,
	OPT_POLICY,
	OPT_PRESET,
	OPT_WORKSPACE,
};

/* Parse with @table (cli-options.h); on a usage error say what is wrong,
 * print the usage and return the exit status, else 0 (or -1: --help was
 * shown, exit 0). */
static int parse(const char *cmd, const CliOption *table, int argc, char **argv,
		 void (*usage)(FILE *f), CliParsed *ret)
{
	_cleanup_free_ char *err = NULL;
	int r;

	r = cli_parse_options(table, CLI_PARSE_INTERLEAVED, argc, argv, ret, &err);
	if (r == -ENOMEM)
		return log_error_errno(r, "Out of memory: %m"), WARD_EXIT_SETUP;
	if (r < 0) {
		log_error("%s: %s", cmd, err ? err : "bad option");
		usage(stderr);
		return WARD_EXIT_USAGE;
	}
	for (size_t i = 0; i < ret->n_opts; i++)
		if (ret->opts[i].id == OPT_HELP) {
			usage(stdout);
			return -1;
		}
	return 0;
}

static int policy_check(int argc, char **argv)
{
	static const CliOption options[] = {
		{ "help", 'h', CLI_ARG_NONE, OPT_HELP },
		{},
	};
	_cleanup_(cli_parsed_done) CliParsed a = {};
	_cleanup_(ceiling_freep) Ceiling *ceiling = NULL;
	WardPolicy *p = NULL;
	PolicyError e = { 0 };
	const char *file;
	int r;

	r = parse("policy check", options, argc, argv, usage_check, &a);
	if (r != 0)
		return r < 0 ? 0 : r;
	if (strv_length(a.pos) != 1) {
		usage_check(stderr);
		return WARD_EXIT_USAGE;
	}
	file = a.pos[0];

	r = ceiling_load_system(&ceiling, &e);
	if (r == -ENOMEM)
		return log_error_errno(r, "Out of memory: %m"), WARD_EXIT_SETUP;
	if (r < 0)
		return report_ceiling(&e);
	/* The defaults (within the managed ceiling, if any), then FILE. */
	r = show_load(ceiling, file, NULL, NULL, &p);
	policy_free(p);
	if (r != 0)
		return r;
	printf("%s: ok\n", file);
	return 0;
}

static int policy_show(int argc, char **argv)
{
	static const CliOption options[] = {
		{ "help", 'h', CLI_ARG_NONE, OPT_HELP },
		{ "policy", 'p', CLI_ARG_REQUIRED, OPT_POLICY },
		{ "preset", 0, CLI_ARG_REQUIRED, OPT_PRESET },
		{ "workspace", 'w', CLI_ARG_REQUIRED, OPT_WORKSPACE },
		{},
	};
	_cleanup_(cli_parsed_done) CliParsed a = {};
	_cleanup_strv_ char **presets = NULL;
	_cleanup_(ceiling_freep) Ceiling *ceiling = NULL;
	_cleanup_free_ char *json = NULL;
	const char *file = NULL, *workspace = NULL;
	WardPolicy *p = NULL;
	PolicyError e = { 0 };
	int r;

	r = parse("policy show", options, argc, argv, usage_show, &a);
	if (r != 0)
		return r < 0 ? 0 : r;
	for (size_t i = 0; i < a.n_opts; i++)
		switch (a.opts[i].id) {
		case OPT_POLICY:
			file = a.opts[i].value;
			break;
		case OPT_PRESET:
			if (strv_extend(&presets, a.opts[i].value) < 0)
				return log_error_errno(-ENOMEM, "Out of memory: %m"), WARD_EXIT_SETUP;
			break;
		case OPT_WORKSPACE:
			workspace = a.opts[i].value;
			break;
		}
	if (a.pos) {
		log_error("policy show: unexpected argument '%s'", a.pos[0]);
		usage_show(stderr);
		return WARD_EXIT_USAGE;
	}

	r = ceiling_load_system(&ceiling, &e);
	if (r == -ENOMEM)
		return log_error_errno(r, "Out of memory: %m"), WARD_EXIT_SETUP;
	if (r < 0)
		return report_ceiling(&e);
	r = show_load(ceiling, file, presets, workspace, &p);
	if (r != 0)
		return r;
	json = show_json(p, ceiling);
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
