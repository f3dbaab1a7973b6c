/* ward.exe: `ward.exe run [OPTIONS] -- COMMAND [ARG]...`, `ward.exe probe`,
 * `ward.exe --version`. The CLI owns argv, the host's facts (directories,
 * environment) and printing; the plan layer decides, the executor carries
 * the plan out through the Win32 table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <bcrypt.h>

#include "cli/cli-options.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/strv.h"
#include "windows/win-defaults.h"
#include "windows/win-exec.h"
#include "windows/win-fault.h"
#include "windows/win-path.h"
#include "windows/win-plan.h"
#include "windows/win32-api.h"
#include "windows/win32-util.h"

#ifndef WARD_TEST_HOOKS
#define WARD_TEST_HOOKS 0
#endif
#define WARD_VERSION_STRING "0.1.0"
#define EXIT_SETUP 125

enum {
	OPT_TIER = 1, OPT_STRICT, OPT_DRY_RUN, OPT_READ, OPT_READ_EXEC, OPT_READ_WRITE, OPT_DENY,
	OPT_PROTECT, OPT_ENV, OPT_TIMEOUT, OPT_WORKSPACE, OPT_POLICY, OPT_PRESET, OPT_HELP,
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
	{ "help", 'h', CLI_ARG_NONE, OPT_HELP },
	{ NULL },
};

static void policy_freep(WardPolicy **p)
{
	policy_free(*p);
}

static void usage(FILE *f)
{
	fputs("Usage: ward.exe run [OPTIONS] [--] COMMAND [ARG]...\n"
	      "       ward.exe probe\n"
	      "       ward.exe net-check [--proxy-port PORT]\n"
	      "       ward.exe cleanup\n"
	      "       ward.exe --version\n"
	      "\n"
	      "  --tier W2|W1|W1-write|W0   W2 (AppContainer) is the default; the others only\n"
	      "                             when asked for (docs/windows.md)\n"
	      "  --strict                   refuse when the tier leaves something unconfined\n"
	      "  --dry-run                  print the plan, change nothing, run nothing\n"
	      "  --read PATH, --read-exec PATH, --read-write PATH, --deny PATH\n"
	      "  --protect REL              a path in the workspace the command cannot change\n"
	      "  -p, --policy FILE          the policy (docs/policy.md); default:\n"
	      "                             %APPDATA%\\ward\\policy.json when it exists\n"
	      "  --preset NAME              a built-in preset, before the policy file\n"
	      "  -e, --env NAME[=VALUE]     pass or set one variable\n"
	      "  --timeout SECONDS\n"
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

/* A variable of ward's own environment, UTF-8, or NULL. */
static char *getenv_utf8(const wchar_t *name)
{
	wchar_t buf[32768];
	DWORD n = GetEnvironmentVariableW(name, buf, 32768);

	return n > 0 && n < 32768 ? win32_utf8(buf) : NULL;
}

static char **environment(void)
{
	wchar_t *block = GetEnvironmentStringsW();
	char **l = calloc(1, sizeof(char *));

	for (wchar_t *p = block; l && p && *p; p += wcslen(p) + 1) {
		char *u = win32_utf8(p);

		if (!u || strv_consume(&l, u) < 0) {
			strv_free(l);
			l = NULL;
		}
	}
	if (block)
		FreeEnvironmentStringsW(block);
	return l;
}

static char *normalized(const char *p)
{
	char *out = NULL;

	return p && win_path_normalize(p, &out, NULL) == 0 ? out : NULL;
}

/* Host facts the plan needs: system dirs, cmd.exe. */
typedef struct Host {
	WinHost host;
	char **system_dirs;
	char *comspec;
} Host;

static WinFileKind host_stat(void *userdata, const char *path)
{
	WinApi *api = userdata;

	return api->stat(api->ctx, path);
}

static int host_init(Host *h, WinApi *api)
{
	static const wchar_t *const vars[] = { L"SystemRoot", L"ProgramFiles",
					       L"ProgramFiles(x86)", L"ProgramW6432",
					       L"ProgramData" };
	_cleanup_free_ char *root = getenv_utf8(L"SystemRoot");

	for (size_t i = 0; i < sizeof(vars) / sizeof(*vars); i++) {
		_cleanup_free_ char *v = getenv_utf8(vars[i]);
		char *n = normalized(v);

		if (n && strv_consume(&h->system_dirs, n) < 0)
			return -ENOMEM;
	}
	h->comspec = normalized(getenv_utf8(L"ComSpec"));
	if (!h->comspec && root && asprintf(&h->comspec, "%s\\System32\\cmd.exe", root) < 0)
		return -ENOMEM;
	h->host = (WinHost){ .stat = host_stat, .userdata = api, .comspec = h->comspec,
			     .system_dirs = h->system_dirs };
	return 0;
}

static int make_run_id(char ret[17])
{
	unsigned char b[8];

	if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, b, sizeof(b), BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
		return -EIO;
	for (int i = 0; i < 8; i++)
		snprintf(ret + 2 * i, 3, "%02x", b[i]);
	return 0;
}

static int mkdir_win(const char *path)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 3;; s++) {
		char c = *s;

		if (c != '\\' && c != '\0')
			continue;
		*s = '\0';
		{
			_cleanup_free_ wchar_t *w = win32_wide(p);

			if (!w || (!CreateDirectoryW(w, NULL) &&
				   GetLastError() != ERROR_ALREADY_EXISTS))
				return -EIO;
		}
		*s = c;
		if (!c)
			return 0;
	}
}

static int add_path(char ***l, const char *v)
{
	return strv_extend(l, v);
}

/* "~" and "~/x" (or "~\\x") in the fs lists, against %USERPROFILE%: the
 * presets and policies written for both systems name the home that way.
 * Everything else stays as written; the plan refuses what is not an
 * absolute Windows path. */
static int expand_home(char **l, const char *home)
{
	for (char **s = l; s && *s; s++) {
		char *e;

		if ((*s)[0] != '~' || ((*s)[1] && (*s)[1] != '/' && (*s)[1] != '\\'))
			continue;
		if (!home)
			return -ENXIO;
		if (asprintf(&e, "%s%s", home, *s + 1) < 0)
			return -ENOMEM;
		free(*s);
		*s = e;
	}
	return 0;
}

static int load_policy(WardPolicy *p, const CliParsed *parsed)
{
	_cleanup_strv_ char **presets = NULL;
	_cleanup_free_ char *home = NULL;
	const char *file = NULL;
	PolicyError pe = { 0 };
	char buf[1400];
	int r;

	for (size_t i = 0; i < parsed->n_opts; i++) {
		if (parsed->opts[i].id == OPT_POLICY)
			file = parsed->opts[i].value;
		else if (parsed->opts[i].id == OPT_PRESET &&
			 strv_extend(&presets, parsed->opts[i].value) < 0)
			return die("out of memory");
	}
	r = policy_load_over(p, file, presets, &pe);
	if (r == -ENOMEM)
		return die("out of memory");
	if (r < 0) {
		policy_error_format(&pe, buf, sizeof(buf));
		return die("run: invalid policy: %s", buf);
	}
	(void)ward_home_dir(&home);
	char **lists[] = { p->fs_read, p->fs_read_exec, p->fs_read_write, p->fs_cache,
			   p->fs_sanitize, p->fs_deny };
	for (size_t i = 0; i < sizeof(lists) / sizeof(*lists); i++) {
		r = expand_home(lists[i], home);
		if (r == -ENXIO)
			return die("run: the policy names \"~\" and USERPROFILE is not an "
				   "absolute path");
		if (r < 0)
			return die("out of memory");
	}
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	_cleanup_(policy_freep) WardPolicy *p = win_policy_defaults();
	_cleanup_strv_ char **envp = environment(), **extra = NULL, **cmd = NULL;
	_cleanup_free_ char *workspace = NULL, *config = NULL, *state = NULL,
			    *appdata = getenv_utf8(L"APPDATA"),
			    *local = getenv_utf8(L"LOCALAPPDATA"), *reterr = NULL;
	CliParsed parsed = { 0 };
	WinTier tier = WIN_TIER_W2;
	bool strict = false, dry = false;
	WinPlan *plan = NULL;
	Win32Ctx ctx = { 0 };
	WinApi api;
	Host host = { 0 };
	WinPlanInput in;
	WinExecResult res = { .exit_code = EXIT_SETUP };
	WardError err = { 0 };
	char run_id[17], why[1024] = "";
	int r;

	if (!p || !envp)
		return die("out of memory");
	r = cli_parse_options(run_options, CLI_PARSE_STOP_AT_POSITIONAL, argc, argv, &parsed,
			      &reterr);
	if (r < 0)
		return die("run: %s", reterr ? reterr : "out of memory");
	/* The policy first (presets, then --policy FILE or the default
	 * %APPDATA%\ward\policy.json), the flags over it: Linux's order. */
	r = load_policy(p, &parsed);
	if (r != 0) {
		cli_parsed_done(&parsed);
		return r;
	}
	for (size_t i = 0; i < parsed.n_opts; i++) {
		const char *v = parsed.opts[i].value;

		switch (parsed.opts[i].id) {
		case OPT_TIER:
			tier = win_tier_from_string(v);
			if (tier < 0) {
				cli_parsed_done(&parsed);
				return die("run: --tier: unknown tier '%s' (W2, W1, W1-write, W0)", v);
			}
			break;
		case OPT_STRICT:
			strict = true;
			break;
		case OPT_DRY_RUN:
			dry = true;
			break;
		case OPT_READ:
			r = add_path(&p->fs_read, v);
			break;
		case OPT_READ_EXEC:
			r = add_path(&p->fs_read_exec, v);
			break;
		case OPT_READ_WRITE:
			r = add_path(&p->fs_read_write, v);
			break;
		case OPT_DENY:
			r = add_path(&p->fs_deny, v);
			break;
		case OPT_PROTECT:
			r = add_path(&p->fs_protected, v);
			break;
		case OPT_ENV:
			r = strv_extend(&extra, v);
			break;
		case OPT_TIMEOUT: {
			char *end;
			unsigned long long t = strtoull(v, &end, 10);

			if (!*v || *end || t == 0 || t > 86400 * 365) {
				cli_parsed_done(&parsed);
				return die("run: --timeout: expected seconds, got '%s'", v);
			}
			p->timeout_s = t;
			break;
		}
		case OPT_WORKSPACE:
			free(workspace);
			workspace = strdup(v);
			break;
		case OPT_HELP:
			usage(stdout);
			cli_parsed_done(&parsed);
			return 0;
		default:
			break;
		}
		if (r < 0) {
			cli_parsed_done(&parsed);
			return die("out of memory");
		}
	}
	cmd = TAKE_PTR(parsed.pos);
	cli_parsed_done(&parsed);
	if (!cmd || !cmd[0])
		return die("run: no command (ward.exe run [OPTIONS] -- COMMAND [ARG]...)");
	if (!workspace) {
		wchar_t cwd[MAX_PATH * 4];

		if (!GetCurrentDirectoryW(MAX_PATH * 4, cwd) || !(workspace = win32_utf8(cwd)))
			return die("run: cannot read the current directory");
	}
	if (!appdata || !local)
		return die("run: APPDATA or LOCALAPPDATA is not set; ward's config and state dirs "
			   "live there");
	if (asprintf(&config, "%s\\ward", appdata) < 0 || asprintf(&state, "%s\\ward", local) < 0)
		return die("out of memory");

	win32_api_init(&api, &ctx);
	ctx.state_dir = state;
#if WARD_TEST_HOOKS
	if (win_fault_install(&api, getenv("WARD_TEST_WIN_FAULT")) < 0)
		return die("WARD_TEST_WIN_FAULT: unknown fault");
#endif
	if (host_init(&host, &api) < 0 || make_run_id(run_id) < 0)
		return die("run: cannot read the host's directories or make a run id");
	memcpy(ctx.run_id, run_id, sizeof(run_id));
	/* ward's own state dir holds the journals: made before the plan. */
	if (!dry && (mkdir_win(state) < 0 || win32_run_alive(&ctx) < 0))
		return die("run: cannot create '%s' or mark the run alive there", state);

	in = (WinPlanInput){ .policy = p, .tier = tier, .workspace = workspace,
			     .config_dir = config, .state_dir = state, .run_id = run_id,
			     .argv = cmd, .envp = envp, .env_extra = extra, .host = &host.host };
	r = win_plan_build(&in, &plan, why, sizeof(why));
	if (r < 0) {
		strv_free(host.system_dirs);
		free(host.comspec);
		return die("run: %s", r == -ENOMEM ? "out of memory" : why);
	}
	if (dry) {
		_cleanup_free_ char *d = win_plan_describe(plan);

		fputs(d ? d : "", stdout);
		STRV_FOREACH(h, plan->needs_helper)
			printf("needs-helper %s\n", *h);
		win_plan_free(plan);
		strv_free(host.system_dirs);
		free(host.comspec);
		return 0;
	}
	STRV_FOREACH(d, plan->degraded)
		fprintf(stderr, "ward: %s: tier %s: %s\n", strict ? "refusing" : "warning",
			win_tier_to_string(plan->tier), *d);
	if (strict && plan->degraded && plan->degraded[0]) {
		win_plan_free(plan);
		strv_free(host.system_dirs);
		free(host.comspec);
		return die("run: --strict: tier %s leaves the above unconfined",
			   win_tier_to_string(tier));
	}
	fflush(stdout);
	fflush(stderr);
	r = win_exec_run(plan, &api, &res, &err);
	if (r < 0)
		die("run: %s%s%s", err.step, *err.step ? ": " : "", err.detail);
	if (res.quarantined)
		fprintf(stderr,
			"ward: %u protected path(s) the run created were moved out of the workspace "
			"into '%s\\quarantine\\%s'\n",
			res.quarantined, state, run_id);
	if (res.undo_failed)
		die("warning: undoing the run's changes failed; its journal stays in '%s' and the "
		    "next run finishes it", state);
	win_plan_free(plan);
	strv_free(host.system_dirs);
	free(host.comspec);
	return res.exit_code;
}

int win_probe_main(void);
int win_cleanup_main(int argc, char **argv);   /* win-net-main.c */
int win_netcheck_main(int argc, char **argv);

/* argv as UTF-8, from the UTF-16 command line (main's argv is in the ANSI
 * code page and loses what it cannot represent). */
static char **utf8_argv(int *ret_argc)
{
	int n = 0;
	wchar_t **w = CommandLineToArgvW(GetCommandLineW(), &n);
	char **l = calloc((size_t)n + 1, sizeof(char *));

	for (int i = 0; w && l && i < n; i++)
		if (!(l[i] = win32_utf8(w[i]))) {
			strv_free(l);
			l = NULL;
		}
	if (w)
		LocalFree(w);
	*ret_argc = n;
	return l;
}

int main(void)
{
	int argc = 0;
	_cleanup_strv_ char **argv = utf8_argv(&argc);

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
		return win_probe_main();
	if (strcmp(argv[1], "cleanup") == 0)
		return win_cleanup_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "net-check") == 0)
		return win_netcheck_main(argc - 1, argv + 1);
	return die("unknown command '%s' (run, probe, net-check, cleanup)", argv[1]);
}
