/* ward.exe: `ward.exe run [OPTIONS] -- COMMAND [ARG]...`, `ward.exe probe`,
 * `ward.exe --version`. The CLI owns argv, the host's facts (directories,
 * environment) and printing; `run` goes through the run module
 * (src/run/run.h) as Linux's does, to the Windows backends
 * (win-backend.c): the plan layer decides, the executor carries the plan
 * out through the Win32 table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <windows.h>
#include <bcrypt.h>

#include "cli/cli-options.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "probe/tiers.h"
#include "run/backend.h"
#include "run/run.h"
#include "windows/win-backend.h"
#include "windows/win-cow-review.h"
#include "windows/win-defaults.h"
#include "windows/win-path.h"
#include "windows/win-plan.h"
#include "windows/win32-cow-fs.h"
#include "windows/win32-util.h"

#ifndef WARD_TEST_HOOKS
#define WARD_TEST_HOOKS 0
#endif
#define WARD_VERSION_STRING "0.1.0"
#define EXIT_SETUP 125

enum {
	OPT_TIER = 1, OPT_STRICT, OPT_DRY_RUN, OPT_READ, OPT_READ_EXEC, OPT_READ_WRITE, OPT_DENY,
	OPT_PROTECT, OPT_ENV, OPT_TIMEOUT, OPT_WORKSPACE, OPT_POLICY, OPT_PRESET, OPT_RESULT,
	OPT_HELP, OPT_COW, OPT_SESSION,
};

static const CliOption run_options[] = {
	{ "tier", 0, CLI_ARG_REQUIRED, OPT_TIER },
	{ "strict", 0, CLI_ARG_NONE, OPT_STRICT },
	{ "dry-run", 0, CLI_ARG_NONE, OPT_DRY_RUN },
	{ "read", 0, CLI_ARG_REQUIRED, OPT_READ },
	{ "read-exec", 0, CLI_ARG_REQUIRED, OPT_READ_EXEC },
	{ "read-write", 0, CLI_ARG_REQUIRED, OPT_READ_WRITE },
	{ "deny", 0, CLI_ARG_REQUIRED, OPT_DENY },
	{ "protect", 0, CLI_ARG_REQUIRED, OPT_PROTECT },
	{ "env", 'e', CLI_ARG_REQUIRED, OPT_ENV },
	{ "timeout", 0, CLI_ARG_REQUIRED, OPT_TIMEOUT },
	{ "workspace", 'C', CLI_ARG_REQUIRED, OPT_WORKSPACE },
	{ "policy", 'p', CLI_ARG_REQUIRED, OPT_POLICY },
	{ "preset", 0, CLI_ARG_REQUIRED, OPT_PRESET },
	{ "result", 0, CLI_ARG_REQUIRED, OPT_RESULT },
	{ "help", 'h', CLI_ARG_NONE, OPT_HELP },
	{ "cow", 0, CLI_ARG_NONE, OPT_COW },
	{ "session", 0, CLI_ARG_REQUIRED, OPT_SESSION },
	{ NULL },
};

static void policy_freep(WardPolicy **p)
{
	policy_free(*p);
}

static void usage(FILE *f)
{
	fputs("Usage: ward.exe run [OPTIONS] [--] COMMAND [ARG]...\n"
	      "       ward.exe probe [--tier T] [--table]\n"
	      "       ward.exe net-check [--proxy-port PORT]\n"
	      "       ward.exe cleanup\n"
	      "       ward.exe diff ID [--json] | apply [--force] ID [PATH]... | undo ID | discard ID\n"
	      "       ward.exe --version\n"
	      "\n"
	      "  --tier W2|W1|W1-write|W0|sandbox-user\n"
	      "                             W2 (AppContainer) is the default; the others only\n"
	      "                             when asked for (docs/windows.md); sandbox-user needs\n"
	      "                             ward-setup.exe run once, as an administrator\n"
	      "  --strict                   refuse when the tier leaves something unconfined\n"
	      "  --dry-run                  print the plan, change nothing, run nothing\n"
	      "  --cow                      copy-on-write: the workspace stays as it is, writes\n"
	      "                             go to a new session (its id on stderr) for diff/apply\n"
	      "  --session ID               run again in that copy-on-write session: its earlier\n"
	      "                             runs' writes are seen, this run's added (--cow implied)\n"
	      "  --read PATH, --read-exec PATH, --read-write PATH, --deny PATH\n"
	      "  --protect REL              a path in the workspace the command cannot change\n"
	      "  -p, --policy FILE          the policy (docs/policy.md); default:\n"
	      "                             %APPDATA%\\ward\\policy.json when it exists\n"
	      "  --preset NAME              a built-in preset, before the policy file\n"
	      "  -e, --env NAME[=VALUE]     pass or set one variable\n"
	      "  --timeout SECONDS\n"
	      "  --result FILE              the result object (docs/result.md), however the\n"
	      "                             run ends\n"
	      "  -C, --workspace DIR        default: the current directory\n",
	      f);
}

static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die(const char *fmt, ...)
{
	va_list ap;

	fputs("ward: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_SETUP;
}

static void run_freep(Run **r)
{
	run_free(*r);
}

/* A usage error still leaves its record, as on Linux: the `error` event
 * in the audit log and --result. */
static int usage_error(const char *result_file, const char *msg)
{
	RunRequest req = RUN_REQUEST_INIT;
	_cleanup_(run_freep) Run *run = NULL;

	req.result_file = result_file;
	run = run_new(&req);
	if (!run)
		return die("out of memory");
	(void)run_fail(run, "arguments", 0, "%s", msg);
	return run_all(run);
}

/* The flags that set policy, as a policy document merged last ("<command
 * line>"): the same validation and messages as a file. */
typedef struct Flags {
	cJSON *doc, *fs;
} Flags;

static int flag_path(Flags *f, const char *key, const char *v)
{
	cJSON *a;

	if (!f->fs && !(f->fs = cJSON_AddObjectToObject(f->doc, "fs")))
		return -ENOMEM;
	a = cJSON_GetObjectItemCaseSensitive(f->fs, key);
	if (!a && !(a = cJSON_AddArrayToObject(f->fs, key)))
		return -ENOMEM;
	return cJSON_AddItemToArray(a, cJSON_CreateString(v)) ? 0 : -ENOMEM;
}

/* --dry-run: the plan the run would carry out, through the backend's own
 * plan(); nothing is created, changed or run. */
static int dry_run(const RunRequest *req)
{
	_cleanup_(policy_freep) WardPolicy *p = NULL;
	_cleanup_free_ char *home = NULL, *state = NULL, *config = NULL, *ws = NULL, *given = NULL,
			    *text = NULL, *upper = NULL;
	_cleanup_strv_ char **envp = win32_environment();
	const Backend *b;
	BackendInput in = BACKEND_INPUT_INIT;
	BackendPlan *plan = NULL;
	PolicyError pe = { 0 };
	WardError e = { 0 };
	char buf[1400];
	int r;

	(void)ward_home_dir(&home);
	if (ward_state_dir(&state) < 0 || ward_config_dir(&config) < 0)
		return die("run: LOCALAPPDATA or APPDATA is not an absolute path");
	if (req->workspace)
		given = strdup(req->workspace);
	else {
		wchar_t cwd[MAX_PATH * 4];

		if (GetCurrentDirectoryW(MAX_PATH * 4, cwd))
			given = win32_utf8(cwd);
	}
	if (!given || win_path_normalize(given, &ws, NULL) < 0)
		return die("run: the workspace is not an absolute Windows path ward can hold");
	r = win_policy_load(req->policy_file, req->presets, req->policy_overrides, home, &p, &pe);
	if (r < 0) {
		policy_error_format(&pe, buf, sizeof(buf));
		return die("Invalid policy: %s", r == -ENOMEM ? "out of memory" : buf);
	}
	/* The tier as the run would choose it: asked for, else the policy's,
	 * else W2. */
	b = backend_for_tier(req->tier >= 0 ? req->tier : p->has_tier ? p->tier : WIN_RUN_TIER_W2);
	if (!b || !b->plan)
		return die("run: no such tier");
	in.policy = p;
	in.workspace = ws;
	in.home = home;
	in.argv = req->argv;
	in.envp = envp;
	in.env_extra = req->env_extra;
	in.state_dir = state;
	in.config_dir = config;
	/* --cow: the session a run would make (its id here is a placeholder);
	 * --session: that one's (its workspace checked as the run checks it). */
	if (req->session) {
		WinCowLayout l = { 0 };
		WinCowFs fs;

		win32_cow_fs_init(&fs);
		r = win_cow_session_open(&fs, state, req->session, &l);
		if (r < 0)
			return die("run: session '%s': %s", req->session,
				   r == -EINVAL	  ? "not a session id (16 hex digits)"
				   : r == -ENOENT ? "no such copy-on-write session"
						  : "cannot read the session's record");
		if (req->workspace && strcasecmp(ws, l.workspace) != 0) {
			die("run: session '%s' belongs to workspace '%s', not '%s'", req->session,
			    l.workspace, req->workspace);
			win_cow_layout_done(&l);
			return EXIT_SETUP;
		}
		free(ws);
		in.workspace = ws = l.workspace;
		l.workspace = NULL;
		win_cow_layout_done(&l);
	}
	if ((req->cow || req->session) &&
	    asprintf(&upper, "%s\\sessions\\%s\\upper", state,
		     req->session ? req->session : "0000000000000000") < 0)
		return die("out of memory");
	in.cow_upper = upper;
	r = b->plan(&in, &plan, &e);
	if (r < 0)
		return die("%s%s%s", e.step, e.step[0] ? ": " : "",
			   r == -ENOMEM ? "out of memory" : e.detail);
	text = win_backend_plan_text(plan);
	b->free(plan);
	if (!text)
		return die("out of memory");
	fputs(text, stdout);
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	_cleanup_strv_ char **extra = NULL, **presets = NULL;
	_cleanup_free_ char *reterr = NULL, *overrides = NULL;
	_cleanup_(run_freep) Run *run = NULL;
	Flags fl = { .doc = cJSON_CreateObject() };
	_cleanup_cjson_ cJSON *doc = fl.doc;
	const char *workspace = NULL, *policy = NULL, *result = NULL;
	RunRequest req = RUN_REQUEST_INIT;
	CliParsed parsed = { 0 };
	bool strict = false, dry = false;
	int tier = -1, r = 0;

	if (!doc)
		return die("out of memory");
	r = cli_parse_options(run_options, CLI_PARSE_STOP_AT_POSITIONAL, argc, argv, &parsed,
			      &reterr);
	if (r < 0)
		return usage_error(NULL, reterr ? reterr : "invalid arguments");
	for (size_t i = 0; i < parsed.n_opts; i++)
		if (parsed.opts[i].id == OPT_RESULT)
			result = parsed.opts[i].value;
	for (size_t i = 0; r >= 0 && i < parsed.n_opts; i++) {
		const char *v = parsed.opts[i].value;
		char msg[512];

		switch (parsed.opts[i].id) {
		case OPT_TIER: {
			WinTier t = win_tier_from_string(v);

			/* The sandbox-user tier is not a plan-layer tier of its own:
			 * a W1-write plan for ward-setup.exe's user (win-user.h). */
			if (strcmp(v, "sandbox-user") == 0) {
				tier = WIN_RUN_TIER_USER;
				break;
			}
			if (t < 0) {
				snprintf(msg, sizeof(msg),
					 "--tier: unknown tier '%s' (W2, W1-write, W1, W0, "
					 "sandbox-user)", v);
				cli_parsed_done(&parsed);
				return usage_error(result, msg);
			}
			tier = win_run_tier(t);
			break;
		}
		case OPT_COW:
			req.cow = true;
			break;
		case OPT_SESSION:
			req.session = v;
			break;
		case OPT_STRICT:
			strict = true;
			break;
		case OPT_DRY_RUN:
			dry = true;
			break;
		case OPT_READ:
			r = flag_path(&fl, "read", v);
			break;
		case OPT_READ_EXEC:
			r = flag_path(&fl, "read_exec", v);
			break;
		case OPT_READ_WRITE:
			r = flag_path(&fl, "read_write", v);
			break;
		case OPT_DENY:
			r = flag_path(&fl, "deny", v);
			break;
		case OPT_PROTECT:
			r = flag_path(&fl, "protected", v);
			break;
		case OPT_ENV:
			r = strv_extend(&extra, v);
			break;
		case OPT_TIMEOUT: {
			char *end;
			unsigned long long t = strtoull(v, &end, 10);
			cJSON *lim = cJSON_GetObjectItemCaseSensitive(doc, "limits");

			if (!*v || *end || *v == '-') {
				snprintf(msg, sizeof(msg), "--timeout: expected seconds, got '%s'", v);
				cli_parsed_done(&parsed);
				return usage_error(result, msg);
			}
			if (!lim && !(lim = cJSON_AddObjectToObject(doc, "limits")))
				r = -ENOMEM;
			else {
				cJSON_DeleteItemFromObjectCaseSensitive(lim, "timeout_s");
				r = cJSON_AddNumberToObject(lim, "timeout_s", (double)t) ? 0 : -ENOMEM;
			}
			break;
		}
		case OPT_WORKSPACE:
			workspace = v;
			break;
		case OPT_POLICY:
			policy = v;
			break;
		case OPT_PRESET:
			r = strv_extend(&presets, v);
			break;
		case OPT_HELP:
			usage(stdout);
			cli_parsed_done(&parsed);
			return 0;
		default:
			break;
		}
	}
	if (r < 0 || !(overrides = cJSON_PrintUnformatted(doc))) {
		cli_parsed_done(&parsed);
		return die("out of memory");
	}
	req.argv = parsed.pos;
	req.workspace = workspace;
	req.policy_file = policy;
	req.presets = presets;
	req.policy_overrides = overrides;
	req.env_extra = extra;
	req.tier = tier; /* -1: the policy's "tier", else W2 */
	req.strict = strict;
	req.result_file = result;
	if (!req.argv || !req.argv[0]) {
		cli_parsed_done(&parsed);
		return usage_error(result, "no command (ward.exe run [OPTIONS] -- COMMAND [ARG]...)");
	}
	if (dry) {
		r = dry_run(&req);
		cli_parsed_done(&parsed);
		return r;
	}
	/* The run module, as on Linux: exit code, --result, the audit
	 * events and the tier's gaps come from the same code. */
	run = run_new(&req);
	cli_parsed_done(&parsed);
	if (!run)
		return die("out of memory");
	return run_all(run);
}

int win_probe_main(void);
int win_cleanup_main(int argc, char **argv);   /* win-net-main.c */
int win_proxy_main(int argc, char **argv);     /* win-proxy-main.c, ward-test.exe only */
int win_netcheck_main(int argc, char **argv);
int win_cow_main(int argc, char **argv);       /* win-cow-main.c */

/* ward.exe probe [--tier T] [--table]: which tiers this host gives (each
 * tried as a run would: a suspended child, its token read back); with
 * --tier, what that tier holds; with --table, the Windows rows of the tier
 * table (src/probe/tiers.c, as `ward probe --table` and docs/tiers.md
 * print them), with what of each is verified. */
static int cmd_probe(int argc, char **argv)
{
	enum { P_TIER = 1, P_TABLE, P_HELP };
	static const CliOption opts[] = {
		{ "tier", 0, CLI_ARG_REQUIRED, P_TIER },
		{ "table", 0, CLI_ARG_NONE, P_TABLE },
		{ "help", 'h', CLI_ARG_NONE, P_HELP },
		{ NULL },
	};
	_cleanup_free_ char *err = NULL;
	CliParsed a = { 0 };
	const char *tier = NULL;
	bool table = false;

	if (cli_parse_options(opts, 0, argc, argv, &a, &err) < 0)
		return die("probe: %s", err ? err : "out of memory");
	for (size_t i = 0; i < a.n_opts; i++) {
		if (a.opts[i].id == P_TABLE)
			table = true;
		else if (a.opts[i].id == P_HELP) {
			cli_parsed_done(&a);
			puts("Usage: ward.exe probe [--tier W0|W1|W1-write|W2] [--table]");
			return 0;
		} else if (a.opts[i].id == P_TIER) {
			WinTier t = win_tier_from_string(a.opts[i].value);

			if (t < 0) {
				cli_parsed_done(&a);
				return die("probe: --tier: unknown tier (W2, W1-write, W1, W0)");
			}
			tier = win_tier_to_string(t);
		}
	}
	cli_parsed_done(&a);
	if (table) {
		_cleanup_free_ char *t = tier_windows_table_markdown();

		if (!t)
			return die("out of memory");
		fputs(t, stdout);
		return 0;
	}
	if (win_probe_main() < 0)
		return EXIT_SETUP;
	if (!tier)
		return 0;
	printf("\nWhat %s holds (docs/tiers.md):\n", tier);
	for (size_t i = 0; i < tier_windows_guarantees(); i++) {
		const char *verified;
		TierFact f;

		if (tier_windows_fact(tier, i, &f, &verified) < 0)
			continue;
		printf("  %-36s %-9s %s\n  %-36s           verified: %s\n", f.name,
		       tier_hold_to_string(f.hold), f.how, "", verified);
	}
	return 0;
}

int main(void)
{
	int argc = 0;
	_cleanup_strv_ char **argv = win32_utf8_argv(&argc);

	if (!argv)
		return die("cannot read the command line");
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("ward %s (Windows)\n", WARD_VERSION_STRING);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(argv[1], "probe") == 0)
		return cmd_probe(argc - 1, argv + 1);
	if (strcmp(argv[1], "cleanup") == 0)
		return win_cleanup_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "net-check") == 0)
		return win_netcheck_main(argc - 1, argv + 1);
#if WARD_TEST_HOOKS
	if (strcmp(argv[1], "proxy-serve") == 0)
		return win_proxy_main(argc - 1, argv + 1);
#endif
	if (strcmp(argv[1], "diff") == 0 || strcmp(argv[1], "apply") == 0 ||
	    strcmp(argv[1], "undo") == 0 || strcmp(argv[1], "discard") == 0)
		return win_cow_main(argc - 1, argv + 1);
	return die("unknown command '%s' (run, probe, net-check, cleanup, diff, apply, undo, "
		   "discard)", argv[1]);
}
