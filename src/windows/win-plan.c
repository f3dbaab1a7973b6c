/* policy -> WinPlan. Every rule of docs/windows.md's tier table is a line
 * here; the executor only carries the result out. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "common/strv.h"
#include "windows/win-cmdline.h"
#include "windows/win-env.h"
#include "windows/win-path.h"
#include "windows/win-plan.h"
#include "windows/win-token.h"

static const char *const tier_names[_WIN_TIER_MAX] = {
	[WIN_TIER_W0] = "W0",
	[WIN_TIER_W1] = "W1",
	[WIN_TIER_W1_WRITE] = "W1-write",
	[WIN_TIER_W2] = "W2",
};

const char *win_tier_to_string(WinTier t)
{
	return t >= 0 && t < _WIN_TIER_MAX ? tier_names[t] : NULL;
}

WinTier win_tier_from_string(const char *s)
{
	static const char *const alt[_WIN_TIER_MAX] = { "0", "1", "1w", "2" };

	for (int t = 0; s && t < _WIN_TIER_MAX; t++)
		if (strcasecmp(s, tier_names[t]) == 0 || strcmp(s, alt[t]) == 0)
			return (WinTier)t;
	return _WIN_TIER_INVALID;
}

_printf_(3, 4) static int fail(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

WinPlan *win_plan_free(WinPlan *plan)
{
	if (!plan)
		return NULL;
	for (size_t i = 0; i < plan->n_paths; i++) {
		free(plan->paths[i].path);
		free(plan->paths[i].why);
		free(plan->paths[i].add);
	}
	free(plan->paths);
	strv_free(plan->our_sids);
	win_token_plan_done(&plan->token);
	free(plan->application);
	free(plan->cmdline);
	free(plan->cwd);
	free(plan->temp_dir);
	strv_free(plan->env);
	strv_free(plan->degraded);
	strv_free(plan->needs_helper);
	free(plan->cow.upper);
	free(plan->cow.whiteout);
	free(plan->cow.dll);
	free(plan->cow.pipe);
	free(plan);
	return NULL;
}

/* The entry for @path (normalized), made on first use. */
static WinPathPlan *path_entry(WinPlan *plan, const char *path, const char *why)
{
	WinPathPlan *pp;

	for (size_t i = 0; i < plan->n_paths; i++)
		if (win_path_equal(plan->paths[i].path, path))
			return &plan->paths[i];
	pp = realloc(plan->paths, (plan->n_paths + 1) * sizeof(*pp));
	if (!pp)
		return NULL;
	plan->paths = pp;
	pp = &plan->paths[plan->n_paths];
	*pp = (WinPathPlan){ .path = strdup(path), .why = strdup(why) };
	if (!pp->path || !pp->why) {
		free(pp->path);
		free(pp->why);
		return NULL;
	}
	plan->n_paths++;
	return pp;
}

/* Add (or widen) the ACE of @type for @sid on @pp. */
static int path_ace(WinPathPlan *pp, WinAceType type, uint32_t mask, const char *sid)
{
	WinAce *a;

	for (size_t i = 0; i < pp->n_add; i++)
		if (pp->add[i].type == type && strcmp(pp->add[i].sid, sid) == 0) {
			pp->add[i].mask |= mask;
			return 0;
		}
	a = realloc(pp->add, (pp->n_add + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	pp->add = a;
	a[pp->n_add] = (WinAce){ .type = type, .flags = WIN_ACE_OI | WIN_ACE_CI, .mask = mask };
	snprintf(a[pp->n_add].sid, sizeof(a->sid), "%s", sid);
	pp->n_add++;
	return 0;
}

/* The SID ward's ACEs name on this tier, or NULL (W0, W1: no ACEs). */
static const char *sandbox_sid(const WinPlan *plan)
{
	switch (plan->tier) {
	case WIN_TIER_W2:
		return plan->token.package_sid;
	case WIN_TIER_W1_WRITE:
		return plan->token.restricting_sids[2];
	case WIN_TIER_W0:
	case WIN_TIER_W1:
	case _WIN_TIER_MAX:
	case _WIN_TIER_INVALID:
	default:
		return NULL;
	}
}

typedef enum Access {
	ACCESS_READ,
	ACCESS_READ_EXEC,
	ACCESS_MODIFY,
	ACCESS_DENY_WRITE,
	ACCESS_DENY_ALL,
} Access;

static int plan_access(WinPlan *plan, const char *path, const char *why, Access acc, bool mkdir)
{
	static const uint32_t masks[] = {
		[ACCESS_READ] = WIN_FILE_READ,
		[ACCESS_READ_EXEC] = WIN_FILE_READ_EXEC,
		[ACCESS_MODIFY] = WIN_FILE_MODIFY,
		[ACCESS_DENY_WRITE] = WIN_FILE_DENY_WRITE,
		[ACCESS_DENY_ALL] = WIN_FILE_ALL,
	};
	const char *sid = sandbox_sid(plan);
	bool deny = acc == ACCESS_DENY_WRITE || acc == ACCESS_DENY_ALL;
	WinPathPlan *pp;

	switch (plan->tier) {
	case WIN_TIER_W0:
		if (!mkdir)
			return 0;
		break;
	case WIN_TIER_W1:
		/* Low integrity cannot write up: writable roots get a low label,
		 * what must stay unwritable inside them an explicit medium one.
		 * Reads are not confined at all. */
		if (acc == ACCESS_READ || acc == ACCESS_READ_EXEC)
			return 0;
		break;
	case WIN_TIER_W1_WRITE:
		/* Only writes are checked against the restricting SIDs. */
		if (acc == ACCESS_READ || acc == ACCESS_READ_EXEC)
			return 0;
		if (acc == ACCESS_DENY_ALL)
			acc = ACCESS_DENY_WRITE;
		break;
	case WIN_TIER_W2:
	case _WIN_TIER_MAX:
	case _WIN_TIER_INVALID:
	default:
		break;
	}
	pp = path_entry(plan, path, why);
	if (!pp)
		return -ENOMEM;
	pp->create_dir |= mkdir;
	if (plan->tier == WIN_TIER_W0)
		return 0;
	if (plan->tier == WIN_TIER_W1) {
		/* A deny outranks a grant of the same path, as in the DACL. */
		if (deny || pp->label_rid != 8192)
			pp->label_rid = deny ? 8192 : 4096;
		return 0;
	}
	return path_ace(pp, deny ? WIN_ACE_DENY : WIN_ACE_ALLOW, masks[acc], sid);
}

static int push_degraded(WinPlan *plan, const char *what)
{
	return strv_extend(&plan->degraded, what);
}

/* Normalize a policy path; 8.3 aliases are refused: "GIT~1" may be ".git",
 * and only the file system knows. */
static int norm(const char *in, const char *field, char **ret, char *why, size_t n)
{
	unsigned flags = 0;
	int r = win_path_normalize(in, ret, &flags);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return fail(why, n, "%s: \"%s\" is not an absolute Windows path ward can hold "
				    "(drive or UNC; no device names, streams or \\\\.\\)", field, in);
	if (flags & WIN_PATH_SHORT_NAME) {
		free(*ret);
		*ret = NULL;
		return fail(why, n, "%s: \"%s\" holds an 8.3 short name; write the long name", field,
			    in);
	}
	return 0;
}

static bool exists(const WinPlanInput *in, const char *path)
{
	return in->host->stat(in->host->userdata, path) != WIN_FILE_NONE;
}

static int plan_list(WinPlan *plan, const WinPlanInput *in, char **list, const char *field,
		     Access acc, char *why, size_t n)
{
	STRV_FOREACH(s, list) {
		_cleanup_free_ char *p = NULL;
		int r = norm(*s, field, &p, why, n);

		if (r < 0)
			return r;
		/* A missing path has nothing to grant or hide yet. */
		if (!exists(in, p))
			continue;
		r = plan_access(plan, p, field, acc, false);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Resolve argv[0] as CreateProcessW will be asked to: a path as given
 * (relative to the workspace), or else PATH x PATHEXT of the child's own
 * environment. The current directory is not searched implicitly (a
 * repository's git.exe must not shadow the real one). */
static int resolve_program(const WinPlanInput *in, char *const *env, const char *cwd, char **ret,
			   char *why, size_t n)
{
	const char *name = in->argv[0];
	const char *path = win_env_get(env, "PATH"), *pathext = win_env_get(env, "PATHEXT");
	_cleanup_free_ char *exts = strdup(pathext ? pathext : ".COM;.EXE;.BAT;.CMD");
	_cleanup_free_ char *dirs = strdup(path ? path : "");
	char *save = NULL;

	if (!exts || !dirs)
		return -ENOMEM;
	if (strpbrk(name, "\\/:")) {
		_cleanup_free_ char *p = NULL;
		int r;

		if (name[0] == '\\' || name[0] == '/' || (name[0] && name[1] == ':'))
			r = win_path_normalize(name, &p, NULL);
		else {
			_cleanup_free_ char *joined = NULL;

			if (asprintf(&joined, "%s\\%s", cwd, name) < 0)
				return -ENOMEM;
			r = win_path_normalize(joined, &p, NULL);
		}
		if (r == -ENOMEM)
			return r;
		if (r < 0 || in->host->stat(in->host->userdata, p) != WIN_FILE_REGULAR) {
			snprintf(why, n, "%s: not found or not a file", name);
			return -ENOENT;
		}
		*ret = TAKE_PTR(p);
		return 0;
	}
	for (char *d = strtok_r(dirs, ";", &save); d; d = strtok_r(NULL, ";", &save)) {
		_cleanup_free_ char *dir = NULL;
		char *esave = NULL;
		_cleanup_free_ char *e = strdup(exts);

		if (!e)
			return -ENOMEM;
		/* Relative PATH entries would make the lookup depend on the cwd. */
		if (win_path_normalize(d, &dir, NULL) < 0)
			continue;
		if (*win_path_extension(name)) {
			_cleanup_free_ char *p = NULL;

			if (win_path_join(dir, name, &p) == 0 &&
			    in->host->stat(in->host->userdata, p) == WIN_FILE_REGULAR) {
				*ret = TAKE_PTR(p);
				return 0;
			}
		}
		for (char *x = strtok_r(e, ";", &esave); x; x = strtok_r(NULL, ";", &esave)) {
			_cleanup_free_ char *full = NULL, *p = NULL;

			if (x[0] != '.' || asprintf(&full, "%s%s", name, x) < 0)
				continue;
			if (win_path_join(dir, full, &p) == 0 &&
			    in->host->stat(in->host->userdata, p) == WIN_FILE_REGULAR) {
				*ret = TAKE_PTR(p);
				return 0;
			}
		}
	}
	snprintf(why, n, "%s: not found on the PATH the command gets (with PATHEXT)", name);
	return -ENOENT;
}

static int plan_command(WinPlan *plan, const WinPlanInput *in, char *why, size_t n)
{
	_cleanup_free_ char *prog = NULL;
	const char *ext;
	int r = resolve_program(in, plan->env, plan->cwd, &prog, why, n);

	if (r < 0)
		return r;
	ext = win_path_extension(prog);
	if (strcasecmp(ext, ".exe") == 0 || strcasecmp(ext, ".com") == 0) {
		_cleanup_strv_ char **argv = strv_copy(in->argv);

		if (!argv)
			return -ENOMEM;
		free(argv[0]);
		argv[0] = strdup(prog);
		if (!argv[0])
			return -ENOMEM;
		r = win_cmdline_quote(argv, &plan->cmdline);
		if (r < 0)
			return r == -ENOMEM ? r : fail(why, n, "cannot quote the command line");
		plan->application = TAKE_PTR(prog);
		return 0;
	}
	if (strcasecmp(ext, ".bat") == 0 || strcasecmp(ext, ".cmd") == 0) {
		if (!in->host->comspec)
			return fail(why, n, "%s: a batch file, and no cmd.exe is known", prog);
		r = win_cmdline_batch(in->host->comspec, prog, in->argv + 1, &plan->cmdline, why, n);
		if (r < 0)
			return r;
		plan->application = strdup(in->host->comspec);
		return plan->application ? 0 : -ENOMEM;
	}
	return fail(why, n, "%s: not a program (.exe, .com) or batch file (.bat, .cmd); run it "
			    "through its interpreter", prog);
}

static bool under_system_dir(const WinPlanInput *in, const char *path)
{
	STRV_FOREACH(d, in->host->system_dirs)
		if (win_path_is_within(path, *d))
			return true;
	return false;
}

static int plan_files(WinPlan *plan, const WinPlanInput *in, char *why, size_t n)
{
	const WardPolicy *p = in->policy;
	_cleanup_free_ char *config = NULL, *state = NULL;
	int r;

	if (p->fs_cache && p->fs_cache[0])
		return fail(why, n, "fs.cache: copy-on-write caches are not available on Windows yet");
	if (p->fs_sanitize && p->fs_sanitize[0])
		return fail(why, n, "fs.sanitize: not available on Windows yet");

	/* Order matters only for the description: grants, then what stays
	 * closed inside them (an explicit deny outranks any allow). */
	if (plan->cow.upper) {
		/* Copy-on-write: the ACL is the boundary, the DLL only
		 * redirects. The workspace is read-only to the sandbox; the
		 * session's upper and whiteout dirs are its only writable
		 * place there (explicit ACEs: they outrank the state dir's
		 * inherited deny). */
		r = plan_access(plan, plan->cwd, "workspace (copy-on-write: read-only)",
				ACCESS_READ_EXEC, false);
		if (r >= 0)
			r = plan_access(plan, plan->cow.upper, "cow upper", ACCESS_MODIFY, false);
		if (r >= 0)
			r = plan_access(plan, plan->cow.whiteout, "cow whiteouts", ACCESS_MODIFY, false);
		/* The DLL: under Program Files (an installed ward) ALL
		 * APPLICATION PACKAGES may read and run it already; anywhere
		 * else the sandbox needs a grant to load it. */
		if (r >= 0 && !under_system_dir(in, plan->cow.dll))
			r = plan_access(plan, plan->cow.dll, "cow redirector", ACCESS_READ_EXEC, false);
	} else
		r = plan_access(plan, plan->cwd, "workspace", ACCESS_MODIFY, false);
	if (r >= 0)
		r = plan_list(plan, in, p->fs_read, "fs.read", ACCESS_READ, why, n);
	if (r >= 0)
		r = plan_list(plan, in, p->fs_read_exec, "fs.read_exec", ACCESS_READ_EXEC, why, n);
	if (r >= 0)
		r = plan_list(plan, in, p->fs_read_write, "fs.read_write", ACCESS_MODIFY, why, n);
	if (r >= 0)
		r = plan_access(plan, plan->temp_dir, "temp", ACCESS_MODIFY, true);
	if (r < 0)
		return r;

	STRV_FOREACH(s, p->fs_protected) {
		_cleanup_free_ char *pp = NULL, *label = NULL;

		r = win_path_join(plan->cwd, *s, &pp);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			return fail(why, n, "fs.protected: \"%s\" must name a place inside the workspace",
				    *s);
		if (asprintf(&label, "protected %s", *s) < 0)
			return -ENOMEM;
		/* What does not exist yet has no object to hold an ACE: the
		 * after-run quarantine covers it (as on Linux, quarantine.h). */
		if (!exists(in, pp)) {
			WinPathPlan *e = path_entry(plan, pp, label);

			if (!e)
				return -ENOMEM;
			e->absent = true;
			continue;
		}
		r = plan_access(plan, pp, label, ACCESS_DENY_WRITE, false);
		if (r < 0)
			return r;
	}
	r = plan_list(plan, in, p->fs_deny, "fs.deny", ACCESS_DENY_ALL, why, n);
	if (r < 0)
		return r;

	/* ward's own config and state: never reachable from inside. The
	 * state dir is created (it holds the temp dir); a missing config dir
	 * has nothing to protect, and the sandbox cannot create it. */
	if (in->config_dir) {
		r = norm(in->config_dir, "config dir", &config, why, n);
		if (r >= 0 && exists(in, config))
			r = plan_access(plan, config, "ward config", ACCESS_DENY_ALL, false);
		if (r < 0)
			return r;
	}
	r = norm(in->state_dir, "state dir", &state, why, n);
	if (r >= 0)
		r = plan_access(plan, state, "ward state", ACCESS_DENY_ALL, true);
	return r;
}

static int plan_degraded(WinPlan *plan, const WardPolicy *p, uint16_t proxy_port, char *why,
			 size_t n)
{
	int r = 0;

	switch (plan->tier) {
	case WIN_TIER_W0:
		r = push_degraded(plan, "filesystem: not confined (W0)");
		if (r >= 0)
			r = push_degraded(plan, "network: not confined (W0)");
		break;
	case WIN_TIER_W1:
	case WIN_TIER_W1_WRITE:
		r = push_degraded(plan, "fs reads: not confined, every file the user can read is "
					"readable (fs.read allowlist and fs.deny hold for writes only)");
		if (r >= 0)
			r = push_degraded(plan, "network: not confined (W1 has no network wall)");
		break;
	case WIN_TIER_W2:
		/* The proxy is ward.exe's (win-proxy.h), reached through the
		 * loopback exemption and the WFP walls; without its port there
		 * is nothing to reach. Granting internetClient instead would
		 * open the network unfiltered: refuse rather than widen. */
		if (p->net_mode == NET_MODE_PROXY && proxy_port == 0)
			return fail(why, n, "network.mode proxy: no proxy port to reach (ward.exe's "
					    "proxy is not running); use network.mode none or W1 "
					    "(network not confined)");
		break;
	case _WIN_TIER_MAX:
	case _WIN_TIER_INVALID:
	default:
		return -EINVAL;
	}
	if (r >= 0 && (p->tmp_mb || p->nofile || p->cpu_percent || p->io_weight || p->shm_mb))
		r = push_degraded(plan, "limits: only timeout_s, pids and memory_mb hold on Windows");
	return r;
}

/* --cow: where the session's layers are, the DLL, the readiness pipe, and
 * the variables that tell the DLL (set after the policy's env, so a policy
 * cannot point the redirector elsewhere; the DLL is convenience anyway). */
static int plan_cow(WinPlan *plan, const WinPlanInput *in, char ***env, char *why, size_t n)
{
	_cleanup_free_ char *session = NULL, *prot = NULL;
	int r;

	if (!in->cow_session)
		return 0;
	if (!in->cow_dll)
		return fail(why, n, "copy-on-write: no redirector DLL");
	r = norm(in->cow_session, "cow session", &session, why, n);
	if (r < 0)
		return r;
	if (win_path_is_within(session, plan->cwd) || win_path_is_within(plan->cwd, session))
		return fail(why, n, "copy-on-write: the session \"%s\" and the workspace overlap",
			    session);
	r = norm(in->cow_dll, "cow dll", &plan->cow.dll, why, n);
	if (r < 0)
		return r;
	if (asprintf(&plan->cow.upper, "%s\\upper", session) < 0 ||
	    asprintf(&plan->cow.whiteout, "%s\\whiteout", session) < 0 ||
	    asprintf(&plan->cow.pipe, "\\\\.\\pipe\\ward-cow-%s", plan->run_id) < 0)
		return -ENOMEM;
	STRV_FOREACH(s, in->policy->fs_protected) {
		size_t old = prot ? strlen(prot) : 0;
		char *t = realloc(prot, old + strlen(*s) + 2);

		if (!t)
			return -ENOMEM;
		prot = t;
		snprintf(prot + old, strlen(*s) + 2, "%s%s", old ? ";" : "", *s);
	}
	if (strv_extendf(env, "WARD_COW_WORKSPACE=%s", plan->cwd) < 0 ||
	    strv_extendf(env, "WARD_COW_UPPER=%s", plan->cow.upper) < 0 ||
	    strv_extendf(env, "WARD_COW_WHITEOUT=%s", plan->cow.whiteout) < 0 ||
	    strv_extendf(env, "WARD_COW_PIPE=%s", plan->cow.pipe) < 0 ||
	    strv_extendf(env, "WARD_COW_PROTECTED=%s", prot ? prot : "") < 0)
		return -ENOMEM;
	if (plan->tier == WIN_TIER_W0)
		return push_degraded(plan, "copy-on-write: W0 leaves the workspace writable; only "
					   "the redirector DLL keeps writes out of it");
	return 0;
}

static bool proxy_mode(const WinPlan *plan, const WinPlanInput *in)
{
	return plan->tier == WIN_TIER_W2 && in->policy->net_mode == NET_MODE_PROXY && in->proxy_port;
}

/* The variables proxy-aware programs read (as on Linux: HTTP(S)_PROXY to
 * the HTTP proxy, ALL_PROXY to SOCKS5, both on the one port), each also
 * in lower case. NO_PROXY is emptied: under the walls only the proxy's
 * port is reachable, loopback included. */
static int proxy_vars(uint16_t port, char ***set)
{
	static const char *const names[][2] = {
		{ "HTTP_PROXY", "http" },  { "http_proxy", "http" },  { "HTTPS_PROXY", "http" },
		{ "https_proxy", "http" }, { "ALL_PROXY", "socks5h" }, { "all_proxy", "socks5h" },
	};

	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		char *kv = NULL;

		if (asprintf(&kv, "%s=%s://127.0.0.1:%u", names[i][0], names[i][1], port) < 0 ||
		    strv_consume(set, kv) < 0)
			return -ENOMEM;
	}
	if (strv_extend(set, "NO_PROXY=") < 0 || strv_extend(set, "no_proxy=") < 0)
		return -ENOMEM;
	return 0;
}

/* W2 with the proxy: its variables, set after the policy's env so a
 * policy cannot point them elsewhere. */
static int plan_proxy_env(WinPlan *plan, const WinPlanInput *in, char ***set)
{
	return proxy_mode(plan, in) ? proxy_vars(in->proxy_port, set) : 0;
}

int win_plan_proxy_env(WinPlan *plan, uint16_t port)
{
	_cleanup_strv_ char **set = NULL;
	int r;

	if (port == 0)
		return -EINVAL;
	r = proxy_vars(port, &set);
	return r < 0 ? r : win_env_set(&plan->env, set);
}

/* W2's network class (win-net.h): none, proxy, or the command class for a
 * network.commands program outside every writable root, which holds
 * internetClient (the WFP walls still keep it to the proxy). */
static int plan_net(WinPlan *plan, const WinPlanInput *in, char *why, size_t n)
{
	_cleanup_strv_ char **cmds = NULL, **writable = NULL;
	const WardPolicy *p = in->policy;
	WinNetInput ni;
	int r;

	plan->net = (WinNetDecision){ .cls = WIN_NET_NONE };
	if (plan->tier != WIN_TIER_W2)
		return 0;
	for (size_t i = 0; i < p->n_net_commands; i++)
		if (strv_extend(&cmds, p->net_commands[i].name) < 0)
			return -ENOMEM;
	/* What the command may write: its workspace (unless copy-on-write
	 * made it read-only), the upper, TEMP, fs.read_write. */
	if (strv_extend(&writable, plan->cow.upper ? plan->cow.upper : plan->cwd) < 0 ||
	    strv_extend(&writable, plan->temp_dir) < 0)
		return -ENOMEM;
	STRV_FOREACH(w, p->fs_read_write) {
		char *nw = NULL;

		if (win_path_normalize(*w, &nw, NULL) < 0)
			continue;
		if (strv_consume(&writable, nw) < 0)
			return -ENOMEM;
	}
	ni = (WinNetInput){ .proxy = proxy_mode(plan, in), .commands = cmds,
			    .application = plan->application, .writable = writable,
			    .proxy_port = in->proxy_port };
	r = win_net_decide(&ni, &plan->net, why, n);
	if (r < 0)
		return r;
	/* The decision's command points into @cmds: keep the policy's. */
	if (plan->net.command)
		for (size_t i = 0; i < p->n_net_commands; i++)
			if (strcmp(p->net_commands[i].name, plan->net.command) == 0)
				plan->net.command = p->net_commands[i].name;
	if (plan->net.cls != WIN_NET_COMMAND)
		return 0;
	win_token_plan_done(&plan->token);
	r = win_token_plan(plan->tier, plan->run_id, true, &plan->token);
	return r == -ENOMEM ? r : r < 0 ? fail(why, n, "unknown tier") : 0;
}

int win_plan_build(const WinPlanInput *in, WinPlan **ret, char *why, size_t n)
{
	WinPlan *plan = NULL;
	_cleanup_strv_ char **set = NULL;
	char *tmpvar = NULL;
	int r;

	if (!in->argv || !in->argv[0] || !*in->argv[0])
		return fail(why, n, "no command");
	if (!in->run_id || strlen(in->run_id) != 16 || strspn(in->run_id, "0123456789abcdef") != 16)
		return fail(why, n, "bad run id");
	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	plan->tier = in->tier;
	memcpy(plan->run_id, in->run_id, 17);
	plan->timeout_s = in->policy->timeout_s;

	r = win_token_plan(in->tier, in->run_id, false, &plan->token);
	if (r < 0) {
		r = r == -ENOMEM ? r : fail(why, n, "unknown tier");
		goto out;
	}
	if (sandbox_sid(plan) && (r = strv_extend(&plan->our_sids, sandbox_sid(plan))) < 0)
		goto out;

	r = norm(in->workspace, "workspace", &plan->cwd, why, n);
	if (r < 0)
		goto out;
	if (strlen(plan->cwd) <= 3 || in->host->stat(in->host->userdata, plan->cwd) != WIN_FILE_DIRECTORY) {
		r = fail(why, n, "workspace \"%s\": not a directory ward can open to the command "
				 "(a drive's root is refused)", plan->cwd);
		goto out;
	}
	{
		_cleanup_free_ char *state = NULL;

		r = norm(in->state_dir, "state dir", &state, why, n);
		if (r < 0)
			goto out;
		if (win_path_is_within(plan->cwd, state)) {
			r = fail(why, n, "workspace \"%s\" is inside ward's state dir", plan->cwd);
			goto out;
		}
		if (asprintf(&plan->temp_dir, "%s\\tmp\\run-%s", state, in->run_id) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}

	/* The environment first: the program is looked up on the PATH the
	 * command will see. */
	if (asprintf(&tmpvar, "TEMP=%s", plan->temp_dir) < 0 || strv_consume(&set, tmpvar) < 0 ||
	    asprintf(&tmpvar, "TMP=%s", plan->temp_dir) < 0 || strv_consume(&set, tmpvar) < 0) {
		r = -ENOMEM;
		goto out;
	}
	r = plan_cow(plan, in, &set, why, n);
	if (r >= 0)
		r = plan_proxy_env(plan, in, &set);
	if (r < 0)
		goto out;
	r = win_env_build(in->policy, in->envp, in->env_extra, set, &plan->env);
	if (r < 0)
		goto out;

	r = plan_degraded(plan, in->policy, in->proxy_port, why, n);
	if (r >= 0)
		r = plan_files(plan, in, why, n);
	if (r >= 0)
		r = plan_command(plan, in, why, n);
	if (r >= 0)
		r = plan_net(plan, in, why, n);
	if (r < 0)
		goto out;

	for (size_t i = 0; i < plan->n_paths; i++) {
		WinPathPlan *pp = &plan->paths[i];

		if (pp->n_add == 0 && pp->label_rid == 0)
			continue;
		STRV_FOREACH(d, in->host->system_dirs)
			if (win_path_is_within(pp->path, *d))
				pp->needs_helper = true;
		if (pp->needs_helper && (r = strv_extend(&plan->needs_helper, pp->path)) < 0)
			goto out;
	}

	plan->job = (WinJobPlan){
		.kill_on_close = true,
		.die_on_unhandled = true,
		.no_breakaway = true,
		/* No clipboard, no global atoms, no desktop switching, no
		 * foreign USER handles, no shutdown, no display settings. */
		.ui_limits = plan->tier == WIN_TIER_W0 ? 0 : 0xFF,
		.active_processes = (uint32_t)(in->policy->pids > UINT32_MAX ? UINT32_MAX : in->policy->pids),
		.job_memory = in->policy->memory_mb * 1024 * 1024,
	};
	*ret = TAKE_PTR(plan);
	r = 0;
out:
	win_plan_free(plan);
	return r;
}

void win_plan_acl_change(const WinPlan *plan, const WinPathPlan *pp, WinAclChange *ret)
{
	*ret = (WinAclChange){ .remove_sids = plan->our_sids, .add = pp->add, .n_add = pp->n_add };
}

static const char *mask_name(uint32_t m)
{
	switch (m) {
	case WIN_FILE_READ:
		return "read";
	case WIN_FILE_READ_EXEC:
		return "read+execute";
	case WIN_FILE_MODIFY:
		return "modify";
	case WIN_FILE_ALL:
		return "all";
	case WIN_FILE_DENY_WRITE:
		return "write";
	default:
		return "mixed";
	}
}

char *win_plan_describe(const WinPlan *plan)
{
	_cleanup_strv_ char **l = NULL;
	char *s = NULL;
	int r = 0;

#define LINE(...) (r = r < 0 ? r : strv_extendf(&l, __VA_ARGS__))
	LINE("tier %s", win_tier_to_string(plan->tier));
	if (plan->token.appcontainer)
		LINE("appcontainer %s %s", plan->token.package_name, plan->token.package_sid);
	STRV_FOREACH(c, plan->token.capabilities)
		LINE("capability %s", *c);
	if (plan->token.restricted)
		LINE("token %srestricted%s", plan->token.write_restricted ? "write-" : "",
		     plan->token.disable_max_privilege ? " no-privileges" : "");
	STRV_FOREACH(c, plan->token.restricting_sids)
		LINE("restricting-sid %s", *c);
	if (plan->token.integrity_rid)
		LINE("integrity %u", (unsigned)plan->token.integrity_rid);
	for (size_t i = 0; i < plan->n_paths; i++) {
		const WinPathPlan *pp = &plan->paths[i];

		if (pp->create_dir)
			LINE("mkdir %s", pp->path);
		if (pp->absent)
			LINE("quarantine-if-created %s (%s)", pp->path, pp->why);
		for (size_t j = 0; j < pp->n_add; j++)
			LINE("%s %s %s (%s)%s", pp->add[j].type == WIN_ACE_DENY ? "deny" : "grant",
			     pp->path, mask_name(pp->add[j].mask), pp->why,
			     pp->needs_helper ? " needs-helper" : "");
		if (pp->label_rid)
			LINE("label %s %s (%s)%s", pp->path, pp->label_rid == 4096 ? "low" : "medium",
			     pp->why, pp->needs_helper ? " needs-helper" : "");
	}
	LINE("job kill-on-close%s%s", plan->job.ui_limits ? " ui-limits" : "",
	     plan->job.active_processes ? " active-process-limit" : "");
	if (plan->net.cls != WIN_NET_NONE)
		LINE("network-class %s proxy 127.0.0.1:%u%s%s%s", win_net_class_name(plan->net.cls),
		     (unsigned)plan->net.proxy_port, plan->net.loopback_exempt ? " loopback-exempt" : "",
		     plan->net.command ? " network.commands." : "",
		     plan->net.command ? plan->net.command : "");
	if (plan->net.note[0])
		LINE("network-note %s", plan->net.note);
	LINE("application %s", plan->application);
	LINE("cmdline %s", plan->cmdline);
	LINE("cwd %s", plan->cwd);
	STRV_FOREACH(e, plan->env) {
		size_t k = strcspn(*e, "=");

		LINE("env %.*s", (int)k, *e);
	}
	STRV_FOREACH(d, plan->degraded)
		LINE("degraded %s", *d);
	if (plan->cow.dll)
		LINE("cow inject %s ready %s", plan->cow.dll, plan->cow.pipe);
#undef LINE
	if (r < 0)
		return NULL;
	STRV_FOREACH(x, l) {
		size_t old = s ? strlen(s) : 0, add = strlen(*x) + 1;
		char *t = realloc(s, old + add + 1);

		if (!t) {
			free(s);
			return NULL;
		}
		s = t;
		memcpy(s + old, *x, add - 1);
		s[old + add - 1] = '\n';
		s[old + add] = '\0';
	}
	return s;
}
