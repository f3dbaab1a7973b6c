#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-args.h"
#include "cli/cli-options.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/strv.h"
#include "policy/policy.h"

const char cli_run_usage[] =
	"Usage: ward run [OPTION]... [--] COMMAND [ARG]...\n"
	"\n"
	"Run COMMAND in a kernel-enforced sandbox built from the policy.\n"
	"\n"
	"  -w, --workspace DIR     the writable workspace and starting directory\n"
	"                          (default: the current directory)\n"
	"      --allow-unsafe-workspace\n"
	"                          accept a system directory or a directory of\n"
	"                          credentials or configuration in $HOME as workspace\n"
	"  -p, --policy FILE       policy file (default: $XDG_CONFIG_HOME/ward/policy.json)\n"
	"      --preset NAME       add a preset: git, node, python, rust, go (repeatable)\n"
	"      --timeout SECONDS   kill the whole command tree after SECONDS (exit 124)\n"
	"      --env NAME[=VALUE]  pass NAME from the environment, or set it (repeatable)\n"
	"      --net MODE          network: none (default) or proxy\n"
	"      --allow-domain HOST allow HOST through the proxy (repeatable; implies proxy)\n"
	"      --git MODE          repository metadata: read-only (default), commit\n"
	"                          (objects, refs, index, logs writable) or off\n"
	"      --allow-host-port PORT\n"
	"                          make 127.0.0.1:PORT inside reach the host's\n"
	"                          127.0.0.1:PORT (TCP; repeatable)\n"
	"      --tier N            2: namespaces, Landlock and seccomp (default);\n"
	"                          1: Landlock and seccomp without namespaces, for\n"
	"                          hosts without user namespaces (docs/tiers.md);\n"
	"                          0: no isolation (explicit opt-out);\n"
	"                          3: a QEMU micro-VM inside the tier-2 sandbox\n"
	"                          (explicit; 'ward setup vm' once; docs/t3.md)\n"
	"      --strict            refuse to run if any protection is degraded\n"
	"      --cow               copy-on-write: writes go to a new session, see ward diff\n"
	"      --session ID        run in an existing session\n"
	"      --result FILE       write the run's result object (JSON) to FILE\n"
	"      --result-fd N       write the result object as one JSON line to fd N\n"
	"      --events-fd N       write the run's audit events to fd N as JSON lines,\n"
	"                          live (ward log, docs/audit.md)\n"
	"      --log-level LEVEL   error, warning (default), info or debug\n"
	"  -h, --help              show this help\n"
	"\n"
	"Exit status: the command's own; 128+N if signal N killed it; 124 on timeout;\n"
	"125 if ward could not run it; 126 not executable; 127 not found.\n";

enum {
	OPT_WORKSPACE = 1,
	OPT_POLICY,
	OPT_PRESET,
	OPT_TIMEOUT,
	OPT_ENV,
	OPT_TIER,
	OPT_STRICT,
	OPT_COW,
	OPT_SESSION,
	OPT_NET,
	OPT_ALLOW_DOMAIN,
	OPT_RESULT,
	OPT_RESULT_FD,
	OPT_LOG_LEVEL,
	OPT_GIT,
	OPT_ALLOW_UNSAFE_WORKSPACE,
	OPT_ALLOW_HOST_PORT,
	OPT_EVENTS_FD,
	OPT_HELP,
};

/* The same table parses the command line and finds --result in one that
 * does not parse (cli_find_result_file, cli_find_result_fd). */
static const CliOption run_options[] = {
	{ "workspace", 'w', CLI_ARG_REQUIRED, OPT_WORKSPACE },
	{ "policy", 'p', CLI_ARG_REQUIRED, OPT_POLICY },
	{ "preset", 0, CLI_ARG_REQUIRED, OPT_PRESET },
	{ "timeout", 0, CLI_ARG_REQUIRED, OPT_TIMEOUT },
	{ "env", 0, CLI_ARG_REQUIRED, OPT_ENV },
	{ "tier", 0, CLI_ARG_REQUIRED, OPT_TIER },
	{ "strict", 0, CLI_ARG_NONE, OPT_STRICT },
	{ "cow", 0, CLI_ARG_NONE, OPT_COW },
	{ "session", 0, CLI_ARG_REQUIRED, OPT_SESSION },
	{ "net", 0, CLI_ARG_REQUIRED, OPT_NET },
	{ "allow-domain", 0, CLI_ARG_REQUIRED, OPT_ALLOW_DOMAIN },
	{ "allow-host-port", 0, CLI_ARG_REQUIRED, OPT_ALLOW_HOST_PORT },
	{ "result", 0, CLI_ARG_REQUIRED, OPT_RESULT },
	{ "events-fd", 0, CLI_ARG_REQUIRED, OPT_EVENTS_FD },
	{ "result-fd", 0, CLI_ARG_REQUIRED, OPT_RESULT_FD },
	{ "log-level", 0, CLI_ARG_REQUIRED, OPT_LOG_LEVEL },
	{ "git", 0, CLI_ARG_REQUIRED, OPT_GIT },
	{ "allow-unsafe-workspace", 0, CLI_ARG_NONE, OPT_ALLOW_UNSAFE_WORKSPACE },
	{ "help", 'h', CLI_ARG_NONE, OPT_HELP },
	{}
};

__attribute__((format(printf, 2, 3))) static int fail(char **reterr, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(reterr, fmt, ap);
	va_end(ap);
	if (n < 0)
		*reterr = NULL;
	return -EINVAL;
}


static bool parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (!s[0] || s[0] == '-' || s[0] == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*ret = v;
	return true;
}

static bool env_name_valid(const char *s, size_t n)
{
	if (n == 0 || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

static int set_string(char **field, const char *v)
{
	free(*field);
	*field = strdup(v);
	return *field ? 0 : -ENOMEM;
}

/* One option of the table, validated, into @o. */
static int apply_option(RunOptions *o, int id, const char *arg, char **reterr)
{
	uint64_t v;
	int r = 0;

	switch (id) {
	case OPT_WORKSPACE:
		r = set_string(&o->workspace, arg);
		break;
	case OPT_POLICY:
		r = set_string(&o->policy_file, arg);
		break;
	case OPT_PRESET:
		r = strv_extend(&o->presets, arg);
		break;
	case OPT_TIMEOUT:
		if (!parse_u64(arg, 365ULL * 24 * 3600, &v) || v == 0) {
			r = fail(reterr, "--timeout: expected a positive number of seconds, got '%s'",
				 arg);
			break;
		}
		o->timeout_s = v;
		break;
	case OPT_ENV: {
		const char *eq = strchr(arg, '=');
		size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
		if (!env_name_valid(arg, n)) {
			r = fail(reterr, "--env: expected NAME or NAME=VALUE, got '%s'", arg);
			break;
		}
		r = strv_extend(&o->env_extra, arg);
		break;
	}
	case OPT_TIER:
		if (!parse_u64(arg, 3, &v)) {
			r = fail(reterr, "--tier: expected 0, 1, 2 or 3, got '%s'", arg);
			break;
		}
		o->tier = (int)v;
		break;
	case OPT_STRICT:
		o->strict = true;
		break;
	case OPT_ALLOW_UNSAFE_WORKSPACE:
		o->allow_unsafe_workspace = true;
		break;
	case OPT_COW:
		o->cow = true;
		break;
	case OPT_SESSION:
		r = set_string(&o->session, arg);
		break;
	case OPT_NET: {
		NetMode m = net_mode_from_string(arg);
		if (m < 0) {
			r = fail(reterr, "--net: expected 'none' or 'proxy', got '%s'", arg);
			break;
		}
		o->net_mode = m;
		break;
	}
	case OPT_GIT: {
		GitMode m = git_mode_from_string(arg);
		if (m < 0) {
			r = fail(reterr, "--git: expected 'read-only', 'commit' or 'off', got '%s'",
				 arg);
			break;
		}
		o->git_mode = m;
		break;
	}
	case OPT_ALLOW_DOMAIN: {
		const char *lo = policy_loopback_pattern(arg);
		if (lo) {
			r = fail(reterr,
				 "--allow-domain %s: %s inside the sandbox is the sandbox's own "
				 "loopback; to reach a service on the host's 127.0.0.1:PORT use "
				 "--allow-host-port PORT",
				 arg, lo);
			break;
		}
		r = strv_extend(&o->allow_domains, arg);
		break;
	}
	case OPT_ALLOW_HOST_PORT:
		if (!parse_u64(arg, 65535, &v) || v == 0) {
			r = fail(reterr, "--allow-host-port: expected a TCP port from 1 to 65535, got '%s'",
				 arg);
			break;
		}
		if (o->n_host_ports >= ELEMENTSOF(o->host_ports)) {
			r = fail(reterr, "--allow-host-port: at most %zu ports",
				 ELEMENTSOF(o->host_ports));
			break;
		}
		o->host_ports[o->n_host_ports++] = (uint16_t)v;
		break;
	case OPT_RESULT:
		r = set_string(&o->result_file, arg);
		break;
	case OPT_EVENTS_FD:
		if (!parse_u64(arg, INT_MAX, &v))
			r = fail(reterr, "--events-fd: expected a file descriptor number, got '%s'",
				 arg);
		else
			o->events_fd = (int)v;
		break;
	case OPT_RESULT_FD:
		if (!parse_u64(arg, INT_MAX, &v)) {
			r = fail(reterr, "--result-fd: expected a file descriptor number, got '%s'", arg);
			break;
		}
		o->result_fd = (int)v;
		break;
	case OPT_LOG_LEVEL:
		o->log_level = log_parse_level(arg);
		if (o->log_level < 0)
			r = fail(reterr, "--log-level: expected error, warning, info or debug, got '%s'",
				 arg);
		break;
	case OPT_HELP:
		o->help = true;
		break;
	}
	return r;
}

int cli_parse_run(int argc, char **argv, RunOptions *ret, char **reterr)
{
	RunOptions o = { .tier = -1, .net_mode = -1, .log_level = -1, .git_mode = -1,
			  .events_fd = -1, .result_fd = -1 };
	_cleanup_(cli_parsed_done) CliParsed p = {};
	int r;

	*reterr = NULL;
	/* Options end at the first non-option (or "--"): what follows is the
	 * command's, untouched. */
	r = cli_parse_options(run_options, CLI_PARSE_STOP_AT_POSITIONAL, argc, argv, &p, reterr);
	if (r < 0)
		return r;
	for (size_t i = 0; i < p.n_opts; i++)
		if ((r = apply_option(&o, p.opts[i].id, p.opts[i].value, reterr)) < 0)
			goto fail;
	if (o.cow && o.session) {
		r = fail(reterr, "%s", "--cow starts a new session; it cannot be combined with --session");
		goto fail;
	}
	if (o.allow_domains && o.net_mode == NET_MODE_NONE) {
		r = fail(reterr, "%s", "--allow-domain needs --net proxy, not --net none");
		goto fail;
	}
	if (!o.help && !p.pos) {
		r = fail(reterr, "%s", "missing COMMAND (ward run [OPTION]... -- COMMAND [ARG]...)");
		goto fail;
	}
	o.argv = TAKE_PTR(p.pos);
	*ret = o;
	return 0;
fail:
	run_options_done(&o);
	return r < 0 ? r : -EINVAL;
}

const char *cli_find_result_file(int argc, char **argv)
{
	_cleanup_(cli_parsed_done) CliParsed p = {};
	_cleanup_free_ char *err = NULL;
	const char *found = NULL;

	/* The same table and rules as cli_parse_run, skipping what does not
	 * parse: the last --result before the command. */
	if (cli_parse_options(run_options, CLI_PARSE_STOP_AT_POSITIONAL | CLI_PARSE_LENIENT, argc,
			      argv, &p, &err) < 0)
		return NULL;
	for (size_t i = 0; i < p.n_opts; i++)
		if (p.opts[i].id == OPT_RESULT)
			found = p.opts[i].value;
	return found && found[0] ? found : NULL;
}

int cli_find_result_fd(int argc, char **argv)
{
	_cleanup_(cli_parsed_done) CliParsed p = {};
	_cleanup_free_ char *err = NULL;
	uint64_t v;
	int found = -1;

	if (cli_parse_options(run_options, CLI_PARSE_STOP_AT_POSITIONAL | CLI_PARSE_LENIENT, argc,
			      argv, &p, &err) < 0)
		return -1;
	for (size_t i = 0; i < p.n_opts; i++)
		if (p.opts[i].id == OPT_RESULT_FD && p.opts[i].value &&
		    parse_u64(p.opts[i].value, INT_MAX, &v))
			found = (int)v;
	return found;
}

void run_options_done(RunOptions *o)
{
	free(o->workspace);
	free(o->policy_file);
	strv_free(o->presets);
	strv_free(o->env_extra);
	free(o->session);
	strv_free(o->allow_domains);
	free(o->result_file);
	strv_free(o->argv);
	*o = (RunOptions){ .tier = -1, .net_mode = -1, .log_level = -1, .git_mode = -1,
			   .events_fd = -1, .result_fd = -1 };
}
