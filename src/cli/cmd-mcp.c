/* ward mcp: a Model Context Protocol server on stdin/stdout (docs/mcp.md).
 * This file owns the command line: the operator's policy flags, checked
 * here once as `ward run` would check them, become McpConfig; src/mcp/
 * does the rest. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-args.h"
#include "cli/cli-options.h"
#include "cli/commands.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/strv.h"
#include "mcp/mcp-config.h"
#include "mcp/mcp-loop.h"
#include "policy/policy.h"
#include "run/run-paths.h"
#include "ward/ward.h"

static const char usage[] =
	"Usage: ward mcp [OPTION]...\n"
	"\n"
	"Serve the Model Context Protocol on stdin and stdout (newline-delimited\n"
	"JSON-RPC 2.0), offering the tools run_command, session_diff, session_apply\n"
	"and session_discard. Every command runs through `ward run` with the policy\n"
	"given here; a client's requests cannot change it.\n"
	"\n"
	"  -w, --workspace DIR     the workspace root: runs may use DIR or a directory\n"
	"                          beneath it, nothing else (default: the current\n"
	"                          directory)\n"
	"      --timeout SECONDS   default and maximum timeout of a run (default: the\n"
	"                          policy's limits.timeout_s, else 600)\n"
	"      --cow               every run writes to a copy-on-write session\n"
	"      --no-apply          do not offer session_apply (a person applies)\n"
	"      --session           run every command in one live session, started on\n"
	"                          the first run_command and stopped when the\n"
	"                          connection ends (ward exec semantics: commands\n"
	"                          share /tmp and the workspace; docs/mcp.md)\n"
	"      --max-output BYTES  bytes of stdout, of stderr and of a diff returned\n"
	"                          (default 65536; 1024 to 16777216)\n"
	"      --max-parallel N    tool calls running at once (default 4, at most 64)\n"
	"\n"
	"Passed to every `ward run` (see ward run --help):\n"
	"  -p, --policy FILE, --preset NAME, --env NAME[=VALUE], --net MODE,\n"
	"  --allow-domain HOST, --allow-host-port PORT, --git MODE, --tier N,\n"
	"  --strict, --allow-unsafe-workspace, --log-level LEVEL\n"
	"  -h, --help              show this help\n";

enum {
	OPT_WORKSPACE = 1,
	OPT_TIMEOUT,
	OPT_COW,
	OPT_NO_APPLY,
	OPT_SESSION,
	OPT_MAX_OUTPUT,
	OPT_MAX_PARALLEL,
	OPT_HELP,
	OPT_POLICY,
	OPT_PRESET,
	/* Forwarded to ward run unchanged, from here on. */
	OPT_FORWARD_FIRST,
	OPT_FWD_ENV = OPT_FORWARD_FIRST,
	OPT_FWD_NET,
	OPT_FWD_ALLOW_DOMAIN,
	OPT_FWD_ALLOW_HOST_PORT,
	OPT_FWD_GIT,
	OPT_FWD_TIER,
	OPT_FWD_STRICT,
	OPT_FWD_ALLOW_UNSAFE_WORKSPACE,
	OPT_FWD_LOG_LEVEL,
};

static const CliOption options[] = {
	{ "workspace", 'w', CLI_ARG_REQUIRED, OPT_WORKSPACE },
	{ "timeout", 0, CLI_ARG_REQUIRED, OPT_TIMEOUT },
	{ "cow", 0, CLI_ARG_NONE, OPT_COW },
	{ "no-apply", 0, CLI_ARG_NONE, OPT_NO_APPLY },
	{ "session", 0, CLI_ARG_NONE, OPT_SESSION },
	{ "max-output", 0, CLI_ARG_REQUIRED, OPT_MAX_OUTPUT },
	{ "max-parallel", 0, CLI_ARG_REQUIRED, OPT_MAX_PARALLEL },
	{ "help", 'h', CLI_ARG_NONE, OPT_HELP },
	{ "policy", 'p', CLI_ARG_REQUIRED, OPT_POLICY },
	{ "preset", 0, CLI_ARG_REQUIRED, OPT_PRESET },
	{ "env", 0, CLI_ARG_REQUIRED, OPT_FWD_ENV },
	{ "net", 0, CLI_ARG_REQUIRED, OPT_FWD_NET },
	{ "allow-domain", 0, CLI_ARG_REQUIRED, OPT_FWD_ALLOW_DOMAIN },
	{ "allow-host-port", 0, CLI_ARG_REQUIRED, OPT_FWD_ALLOW_HOST_PORT },
	{ "git", 0, CLI_ARG_REQUIRED, OPT_FWD_GIT },
	{ "tier", 0, CLI_ARG_REQUIRED, OPT_FWD_TIER },
	{ "strict", 0, CLI_ARG_NONE, OPT_FWD_STRICT },
	{ "allow-unsafe-workspace", 0, CLI_ARG_NONE, OPT_FWD_ALLOW_UNSAFE_WORKSPACE },
	{ "log-level", 0, CLI_ARG_REQUIRED, OPT_FWD_LOG_LEVEL },
	{}
};

static int parse_number(const char *opt, const char *v, uint64_t min, uint64_t max,
			uint64_t *ret)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (!v[0] || v[0] == '-' || v[0] == '+' || *end || errno || n < min || n > max) {
		log_error("%s: expected a number from %" PRIu64 " to %" PRIu64 ", got '%s'", opt,
			  min, max, v);
		return -EINVAL;
	}
	*ret = n;
	return 0;
}

/* The flags for ward run, checked by ward run's own parser (the same
 * messages), then the policy loaded once, so that a broken file or an
 * unknown preset stops the server now rather than every call later. */
static int check_run_flags(char *const *flags, const char *policy_file, char *const *presets,
			   uint64_t *ret_policy_timeout)
{
	_cleanup_strv_ char **argv = NULL;
	_cleanup_free_ char *err = NULL;
	_cleanup_(run_options_done) RunOptions o = {};
	WardPolicy *pol = NULL;
	PolicyError pe = {};
	char buf[1400];
	int r;

	if (strv_extend(&argv, "run") < 0 || strv_extend_strv(&argv, flags) < 0 ||
	    strv_extend(&argv, "--") < 0 || strv_extend(&argv, "true") < 0)
		return log_error_errno(-ENOMEM, "Out of memory");
	r = cli_parse_run((int)strv_length(argv), argv, &o, &err);
	if (r < 0) {
		log_error("%s", err ? err : "invalid options");
		return r;
	}
	r = policy_load(policy_file, presets, &pol, &pe);
	if (r < 0) {
		policy_error_format(&pe, buf, sizeof(buf));
		log_error("Invalid policy: %s", buf);
		return r;
	}
	*ret_policy_timeout = pol->timeout_s;
	policy_free(pol);
	return 0;
}

int cmd_mcp(int argc, char **argv)
{
	_cleanup_(cli_parsed_done) CliParsed p = {};
	_cleanup_free_ char *err = NULL, *root = NULL;
	_cleanup_strv_ char **flags = NULL, **presets = NULL;
	const char *workspace = NULL, *policy_file = NULL;
	uint64_t timeout = 0, max_output = MCP_DEFAULT_MAX_OUTPUT,
		 max_parallel = MCP_DEFAULT_MAX_PARALLEL, policy_timeout = 0;
	bool cow = false, no_apply = false, session = false;
	McpLive live = {};
	int r;

	r = cli_parse_options(options, CLI_PARSE_INTERLEAVED, argc, argv, &p, &err);
	if (r < 0) {
		log_error("mcp: %s", err ? err : "bad option");
		fputs(usage, stderr);
		return WARD_EXIT_USAGE;
	}
	if (p.pos) {
		log_error("mcp: unexpected argument '%s'", p.pos[0]);
		fputs(usage, stderr);
		return WARD_EXIT_USAGE;
	}
	for (size_t i = 0; i < p.n_opts; i++) {
		const CliOptionValue *v = &p.opts[i];
		const CliOption *o = NULL;

		switch (v->id) {
		case OPT_HELP:
			fputs(usage, stdout);
			return 0;
		case OPT_WORKSPACE:
			workspace = v->value;
			break;
		case OPT_TIMEOUT:
			if (parse_number("--timeout", v->value, 1, 365ULL * 24 * 3600, &timeout) < 0)
				return WARD_EXIT_USAGE;
			break;
		case OPT_MAX_OUTPUT:
			if (parse_number("--max-output", v->value, 1024, 16 * 1024 * 1024,
					 &max_output) < 0)
				return WARD_EXIT_USAGE;
			break;
		case OPT_MAX_PARALLEL:
			if (parse_number("--max-parallel", v->value, 1, 64, &max_parallel) < 0)
				return WARD_EXIT_USAGE;
			break;
		case OPT_COW:
			cow = true;
			break;
		case OPT_NO_APPLY:
			no_apply = true;
			break;
		case OPT_SESSION:
			session = true;
			break;
		case OPT_POLICY:
			policy_file = v->value;
			if (strv_extend(&flags, "--policy") < 0 || strv_extend(&flags, v->value) < 0)
				return log_error_errno(-ENOMEM, "Out of memory"), WARD_EXIT_FAILURE;
			break;
		case OPT_PRESET:
			if (strv_extend(&presets, v->value) < 0)
				return log_error_errno(-ENOMEM, "Out of memory"), WARD_EXIT_FAILURE;
			__attribute__((fallthrough));
		default:
			/* Forwarded as "--name" [value], as given. */
			for (const CliOption *t = options; t->name && !o; t++)
				if (t->id == v->id)
					o = t;
			if (!o || strv_extendf(&flags, "--%s", o->name) < 0 ||
			    (o->arg != CLI_ARG_NONE && strv_extend(&flags, v->value) < 0))
				return log_error_errno(-ENOMEM, "Out of memory"), WARD_EXIT_FAILURE;
			break;
		}
	}
	if (check_run_flags(flags, policy_file, presets, &policy_timeout) < 0)
		return WARD_EXIT_USAGE;
	/* A live session's commands get the caller's environment as the
	 * policy filters it; `ward exec --env` only narrows, so an operator's
	 * --env (which adds) has no place there. Its sandbox is tier 2. */
	for (size_t i = 0; session && flags && flags[i]; i++)
		if (strcmp(flags[i], "--env") == 0 ||
		    (strcmp(flags[i], "--tier") == 0 && flags[i + 1] && strcmp(flags[i + 1], "2") != 0)) {
			log_error("mcp: --session takes neither --env (use env.set in the policy) nor a "
				  "tier other than 2");
			return WARD_EXIT_USAGE;
		}
	WardError we;
	if (run_resolve_workspace(workspace, &root, &we) < 0) {
		log_error("%s%s%s", we.detail, we.error ? ": " : "", we.error ? strerror(we.error) : "");
		return WARD_EXIT_FAILURE;
	}

	McpConfig cfg = {
		.ward_exe = "/proc/self/exe",
		.root = root,
		.policy_file = policy_file,
		.run_flags = flags,
		.timeout_s = timeout ? timeout : policy_timeout ? policy_timeout : MCP_DEFAULT_TIMEOUT_S,
		.max_output = (size_t)max_output,
		.max_parallel = (unsigned)max_parallel,
		.force_cow = cow,
		.allow_apply = !no_apply,
		.live = session ? &live : NULL,
	};
	r = mcp_serve(&cfg, 0, 1);
	if (r == -EPIPE)
		return 0; /* the client went away */
	if (r < 0)
		return log_error_errno(r, "ward mcp: %m"), WARD_EXIT_FAILURE;
	return 0;
}
