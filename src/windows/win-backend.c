/* The Windows tiers W0, W1, W1-write and W2 as backends of the run module
 * (src/run/backend.h): plan is win_plan_build() over the host's facts,
 * acquire is win_exec_acquire() (every change journaled and read back),
 * run is win_exec_child() then the journal's undo, free undoes whatever an
 * acquire that failed half-way left. The table is win-backends.c.
 * Windows-only: it drives the real Win32 table (win32-api.c), wrapped by
 * WARD_TEST_WIN_FAULT in ward-test.exe. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <bcrypt.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "run/backend.h"
#include "windows/win-backend.h"
#include "windows/win-exec.h"
#include "windows/win-fault.h"
#include "windows/win-net-exec.h"
#include "windows/win-path.h"
#include "windows/win-proxy.h"
#include "windows/win32-api.h"
#include "windows/win32-net.h"
#include "windows/win32-setup.h"
#include "windows/win32-user-run.h"
#include "windows/win32-util.h"
#include "ward/ward.h"

#ifndef WARD_TEST_HOOKS
#define WARD_TEST_HOOKS 0
#endif

struct BackendPlan {
	WinPlan *plan;
	Win32Ctx ctx;
	WinApi api;
	WinHost host;
	char **system_dirs;
	char *comspec;
	char *state;
	char run_id[17];
	bool acquiring;      /* a journal may exist: free() undoes it */
	char **lines;        /* for finish() */
	char **notes;        /* what the tier leaves unconfined, for notes() */
	/* The network walls (W2, network none): WFP filters on the run's
	 * package SID in a dynamic session, up from acquire until the run
	 * ends (docs/windows.md "Network walls in a run"). */
	WinNetApi netapi;
	Win32NetCtx netctx;
	WinWfpPlan wfp;
	bool walls_planned;  /* W2, network none or proxy */
	bool walls_held;     /* the plan's trial went through: acquire puts them up */
	WinWalls walls;
	/* W2, network proxy (docs/windows.md "The proxy"): ward.exe's proxy,
	 * listening from plan (the port goes into the walls and the
	 * environment), serving while the command runs; the run's package
	 * SID exempted from the AppContainer loopback block from acquire to
	 * the end (journaled: `ward.exe cleanup` takes a crashed run's back). */
	WinProxy *proxy;
	bool exempted;
	/* The run's input (it outlives the plan): its audit log is opened
	 * after plan, before run. */
	const BackendInput *input;
	/* The sandbox-user tier: a W1-write plan for ward-setup.exe's
	 * offline user (win-user.h), run through ward-runner.exe. */
	bool user;
	WinSandboxUser su;
};

/* A variable of ward's own environment, UTF-8, or NULL. */
static char *getenv_utf8(const wchar_t *name)
{
	wchar_t buf[32768];
	DWORD n = GetEnvironmentVariableW(name, buf, 32768);

	return n > 0 && n < 32768 ? win32_utf8(buf) : NULL;
}

static char *normalized(const char *p)
{
	char *out = NULL;

	return p && win_path_normalize(p, &out, NULL) == 0 ? out : NULL;
}

static WinFileKind host_stat(void *userdata, const char *path)
{
	WinApi *api = userdata;

	return api->stat(api->ctx, path);
}

/* The host's facts the plan needs: the system directories (paths only the
 * privileged helper may change), cmd.exe. */
static int host_init(BackendPlan *b)
{
	static const wchar_t *const vars[] = { L"SystemRoot", L"ProgramFiles",
					       L"ProgramFiles(x86)", L"ProgramW6432",
					       L"ProgramData" };
	_cleanup_free_ char *root = getenv_utf8(L"SystemRoot"), *comspec = NULL;

	for (size_t i = 0; i < sizeof(vars) / sizeof(*vars); i++) {
		_cleanup_free_ char *v = getenv_utf8(vars[i]);
		char *n = normalized(v);

		if (n && strv_consume(&b->system_dirs, n) < 0)
			return -ENOMEM;
	}
	comspec = getenv_utf8(L"ComSpec");
	b->comspec = normalized(comspec);
	if (!b->comspec && root && asprintf(&b->comspec, "%s\\System32\\cmd.exe", root) < 0)
		return -ENOMEM;
	b->host = (WinHost){ .stat = host_stat, .userdata = &b->api, .comspec = b->comspec,
			     .system_dirs = b->system_dirs };
	return 0;
}

static int make_run_id(char ret[17])
{
	unsigned char r[8];

	if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, r, sizeof(r), BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
		return -EIO;
	for (int i = 0; i < 8; i++)
		snprintf(ret + 2 * i, 3, "%02x", r[i]);
	return 0;
}

/* Take the run's SID off the loopback exemption list (and its journal
 * line); a failure leaves the journal line to `ward.exe cleanup` and is
 * said in @lines when given. */
static void unexempt(BackendPlan *b, char ***lines)
{
	char why[512] = "", line[768];

	if (!b->exempted)
		return;
	b->exempted = false;
	if (win_loopback_unexempt(&b->netapi, b->plan->token.package_sid, why, sizeof(why)) == 0 ||
	    !lines)
		return;
	snprintf(line, sizeof(line),
		 "the loopback exemption of %s could not be removed (%s); it stays in the network "
		 "journal: run `ward.exe cleanup`",
		 b->plan->token.package_sid, why);
	(void)strv_extend(lines, line);
}

static BackendPlan *win_free(BackendPlan *b)
{
	if (b)
		win_user_wipe(&b->su);
	WardError e = { 0 };

	if (!b)
		return NULL;
	/* An acquire that failed half-way: undo what it journaled. */
	if (b->acquiring)
		(void)win_exec_release(&b->api, &e);
	win_proxy_free(b->proxy);
	unexempt(b, NULL);
	win_walls_down(&b->netapi, &b->walls);
	win_plan_free(b->plan);
	strv_free(b->system_dirs);
	strv_free(b->lines);
	strv_free(b->notes);
	free(b->comspec);
	free(b->state);
	free(b);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(BackendPlan *, win_free)

static int win_probe(WardError *reterr)
{
	/* Cheap, as the interface asks: whether the host gives the tier is
	 * proven by the run itself (acquire and the token read back from the
	 * suspended child refuse); `ward.exe probe` tries each tier. */
	return 0;
}

/* --cow: the session dir (the parent of in->cow_upper) and the redirector
 * DLL beside ward.exe. */
static int cow_inputs(const BackendInput *in, char **ret_session, char **ret_dll)
{
	wchar_t exe[MAX_PATH * 4];
	DWORD n = GetModuleFileNameW(NULL, exe, MAX_PATH * 4);
	_cleanup_free_ char *self = NULL;
	char *slash;

	if (!in->cow_upper)
		return 0;
	if (!(*ret_session = strdup(in->cow_upper)))
		return -ENOMEM;
	slash = strrchr(*ret_session, '\\');
	if (slash)
		*slash = 0;
	if (n == 0 || n >= MAX_PATH * 4 || !(self = win32_utf8(exe)))
		return -EIO;
	slash = strrchr(self, '\\');
	if (!slash)
		return -EIO;
	*slash = 0;
	return asprintf(ret_dll, "%s\\ward-redirect.dll", self) < 0 ? -ENOMEM : 0;
}

/* W2 with network none: the WFP walls on the run's package SID. Their
 * trial (added in a transaction, then aborted: nothing changes) says
 * whether acquire can put them up; when it cannot (no filtering engine, as
 * under Wine; adding denied to an unelevated user), the missing
 * internetClient capability is the only network wall left, and the run
 * says so: degraded (--strict refuses) and the tier's "network" row partly
 * held. Other tiers run as the user, whose SID no per-run filter can name:
 * their network is open and reported so by the plan. */
static int plan_walls(BackendPlan *b, const BackendInput *in, WardError *reterr)
{
	WinWfpInput wi = { .identity = WIN_WFP_PACKAGE, .sid = b->plan->token.package_sid,
			   .proxy_port = b->proxy ? win_proxy_port(b->proxy) : 0 };
	char why[512] = "", line[768];

	if (b->plan->tier != WIN_TIER_W2)
		return 0;
	if (win_wfp_plan(&wi, &b->wfp) < 0)
		return -EINVAL;
	b->walls_planned = true;
	if (win_walls_try(&b->netapi, &b->wfp, why, sizeof(why)) == 0) {
		b->walls_held = true;
		return 0;
	}
	/* A command-class program holds internetClient: without the walls
	 * its network would be open. Refuse rather than run it so. */
	if (b->plan->net.cls == WIN_NET_COMMAND)
		return ward_error_set(reterr, "network-wall", EPERM,
				      "%s holds internetClient (network.commands.%s) and the WFP "
				      "filters that keep it to the proxy cannot be put up (%s)",
				      b->plan->application, b->plan->net.command, why);
	snprintf(line, sizeof(line),
		 "network wall: the WFP filters on the run's package SID cannot be put up (%s); "
		 "the AppContainer's missing internetClient capability is the only network wall%s",
		 why, b->proxy ? ", and the loopback exemption the proxy needs opens every loopback "
				 "port of this host to the command, not only the proxy's" : "");
	return strv_extend(&b->plan->degraded, line) < 0 ? -ENOMEM : 0;
}

int win_backend_net_facts(BackendPlan *b, cJSON *facts, unsigned *ret_refused)
{
	ProxyRefusal r[PROXY_REPORT_DISTINCT];
	bool more = false;
	size_t n;
	cJSON *a;

	*ret_refused = 0;
	if (!b || !b->proxy || !facts)
		return 0;
	n = win_proxy_refusals(b->proxy, r, PROXY_REPORT_DISTINCT, &more);
	if (n == 0)
		return 0;
	/* As Linux's (run-hints.c, session-net.c). */
	a = cJSON_AddArrayToObject(facts, "net_refused");
	for (size_t i = 0; a && i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "host", r[i].host);
		cJSON_AddNumberToObject(o, "port", r[i].port);
		cJSON_AddStringToObject(o, "reason", r[i].rule);
		cJSON_AddItemToArray(a, o);
	}
	if (more)
		cJSON_AddBoolToObject(facts, "net_refused_more", true);
	*ret_refused = (unsigned)n;
	return a ? 0 : -ENOMEM;
}

bool win_backend_walls_missing(const BackendPlan *b)
{
	return b->walls_planned && !b->walls_held;
}

static int plan_tier(WinTier tier, const BackendInput *in, BackendPlan **ret, WardError *reterr)
{
	_cleanup_(win_freep) BackendPlan *b = calloc(1, sizeof(*b));
	_cleanup_free_ char *cow_session = NULL, *cow_dll = NULL;
	WinPlanInput pin;
	char why[1024] = "";
	int r;

	if (!b)
		return -ENOMEM;
	win32_api_init(&b->api, &b->ctx);
	win32_net_init(&b->netapi, &b->netctx);
#if WARD_TEST_HOOKS
	if (win_fault_install(&b->api, getenv("WARD_TEST_WIN_FAULT")) < 0)
		return ward_error_set(reterr, "test-hooks", EINVAL, "WARD_TEST_WIN_FAULT: unknown fault");
	(void)win_fault_net_install(&b->netapi, getenv("WARD_TEST_WIN_FAULT"));
#endif
	if ((r = host_init(b)) < 0)
		return r;
	if (make_run_id(b->run_id) < 0)
		return ward_error_set(reterr, "plan", EIO, "cannot make a run id");
	if (!(b->state = strdup(in->state_dir)))
		return -ENOMEM;
	b->input = in;
	if ((r = cow_inputs(in, &cow_session, &cow_dll)) < 0)
		return ward_error_set(reterr, "cow", -r, "cannot place the redirector DLL");
	b->netctx.state_dir = b->state;
	/* W2 with network.mode proxy: the proxy listens first, its port goes
	 * into the plan (walls, environment). It serves only from run(). */
	if (tier == WIN_TIER_W2 && in->policy->net_mode == NET_MODE_PROXY) {
		WinProxyConfig pc = { .policy = in->policy, .audit = in->audit,
				      .max_connections = (unsigned)(in->policy->max_connections > 4096
								    ? 4096
								    : in->policy->max_connections) };

		r = win_proxy_listen(&pc, &b->proxy, why, sizeof(why));
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			return ward_error_set(reterr, "proxy", -r, "cannot start the proxy: %s", why);
	}
	pin = (WinPlanInput){ .policy = in->policy, .tier = tier, .workspace = in->workspace,
			      .config_dir = in->config_dir, .state_dir = in->state_dir,
			      .run_id = b->run_id, .argv = in->argv, .envp = in->envp,
			      .env_extra = in->env_extra, .host = &b->host,
			      .cow_session = cow_session, .cow_dll = cow_dll,
			      .proxy_port = b->proxy ? win_proxy_port(b->proxy) : 0 };
	r = win_plan_build(&pin, &b->plan, why, sizeof(why));
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ward_error_set(reterr, "plan", 0, "%s", why);
	if ((r = plan_walls(b, in, reterr)) < 0)
		return r;
	/* network.commands: the command class gets its own allow list. */
	if (b->proxy)
		win_proxy_set_program(b->proxy, b->plan->net.cls == WIN_NET_COMMAND
							? b->plan->net.command
							: NULL);
	STRV_FOREACH(d, b->plan->degraded) {
		char line[1024];

		snprintf(line, sizeof(line), "tier %s: %s", win_tier_to_string(tier), *d);
		if (strv_extend(&b->notes, line) < 0)
			return -ENOMEM;
	}
	b->ctx.state_dir = b->state;
	memcpy(b->ctx.run_id, b->run_id, sizeof(b->run_id));
	b->ctx.sandbox_sid = b->plan->our_sids ? b->plan->our_sids[0] : NULL;
	*ret = TAKE_PTR(b);
	return 0;
}

#define PLAN_FN(name, tier)                                                                  \
	static int name(const BackendInput *in, BackendPlan **ret, WardError *reterr)        \
	{                                                                                    \
		return plan_tier(tier, in, ret, reterr);                                     \
	}
PLAN_FN(plan_w0, WIN_TIER_W0)
PLAN_FN(plan_w1, WIN_TIER_W1)
PLAN_FN(plan_w1_write, WIN_TIER_W1_WRITE)
PLAN_FN(plan_w2, WIN_TIER_W2)

/* The sandbox-user tier: ward-setup.exe's record read back (its DACL
 * first), the user's walls read back, then the W1-write plan made the
 * user's (win-user.h). network.mode none: the offline user, walled off
 * entirely. network.mode proxy: the online user, whose walls permit only
 * loopback TCP to WIN_SETUP_ONLINE_PROXY_PORT; ward.exe's proxy holds that
 * port exclusively for the run. Every refusal names its step; nothing has
 * changed yet; never degraded on the network. */
static int plan_user(const BackendInput *in, BackendPlan **ret, WardError *reterr)
{
	_cleanup_(win_freep) BackendPlan *b = NULL;
	WinSetupApi sapi;
	Win32SetupCtx sctx = { 0 };
	const char *step = "setup";
	char why[768] = "";
	int user, r;

	if (in->policy->net_mode != NET_MODE_NONE && in->policy->net_mode != NET_MODE_PROXY)
		return ward_error_set(reterr, "tier", EOPNOTSUPP,
				      "the sandbox-user tier runs network none (the offline user) "
				      "or proxy (the online user) only");
	if (in->cow_upper)
		return ward_error_set(reterr, "tier", EOPNOTSUPP,
				      "--cow is not available on the sandbox-user tier");
	user = in->policy->net_mode == NET_MODE_PROXY;
	r = plan_tier(WIN_TIER_W1_WRITE, in, &b, reterr);
	if (r < 0)
		return r;
	sctx.state_dir = b->state;
	win32_setup_init(&sapi, &sctx);
#if WARD_TEST_HOOKS
	win_fault_setup_install(&sapi, getenv("WARD_TEST_WIN_FAULT"));
#endif
	r = win_user_load(&sapi, b->state, user, &b->su, &step, why, sizeof(why));
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ward_error_set(reterr, step, EPERM, "%s", why);
	if (win_setup_walls_plan(user, b->su.sid, &b->wfp) < 0)
		return ward_error_set(reterr, "network-wall", EINVAL, "no wall plan for %s",
				      b->su.sid);
#if WARD_TEST_HOOKS
	win_fault_net_seed(getenv("WARD_TEST_WIN_FAULT"), &b->wfp);
#endif
	r = win_walls_verify(&b->netapi, &b->wfp, why, sizeof(why));
	if (r < 0)
		return ward_error_set(reterr, "network-wall", -r,
				      "ward-setup.exe's WFP filters on the %s user %s: %s",
				      user ? "online" : "offline", b->su.sid, why);
	r = win_user_plan(b->plan, &b->su);
	if (r < 0)
		return r == -ENOMEM ? r : ward_error_set(reterr, "plan", -r, "not a W1-write plan");
	if (user) {
		/* The one port the walls let through, held by this run's proxy
		 * alone (127.0.0.1 and ::1, exclusively): another listener
		 * there would be reachable by the command, so it refuses. */
		WinProxyConfig pc = { .policy = in->policy, .audit = in->audit,
				      .port = WIN_SETUP_ONLINE_PROXY_PORT };

		r = win_proxy_listen(&pc, &b->proxy, why, sizeof(why));
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			return ward_error_set(reterr, "proxy", -r,
					      "cannot start the proxy on the port the online user's "
					      "walls permit: %s%s",
					      why, r == -EADDRINUSE ? " (another sandbox-user run, or "
								      "another program, holds it)"
								    : "");
		r = win_plan_proxy_env(b->plan, win_proxy_port(b->proxy));
		if (r < 0)
			return r;
	}
	strv_free(b->notes);
	b->notes = NULL;
	STRV_FOREACH(d, b->plan->degraded) {
		char line[1024];

		snprintf(line, sizeof(line), "tier sandbox-user: %s", *d);
		if (strv_extend(&b->notes, line) < 0)
			return -ENOMEM;
	}
	b->ctx.sandbox_sid = b->su.synthetic_sid;
	b->user = true;
	*ret = TAKE_PTR(b);
	return 0;
}

static int win_acquire(BackendPlan *b, WardError *reterr)
{
	int r;

	/* The run is alive while this process holds the file: a crash or a
	 * kill leaves its journal to the next run's recovery. */
	r = win32_run_alive(&b->ctx);
	if (r < 0)
		return ward_error_set(reterr, "state", -r, "cannot mark the run alive in '%s'",
				      b->state);
	/* The walls go up before anything else changes and before the child
	 * exists; a failure here (the trial passed, so the engine is there)
	 * refuses: nothing to undo, the session closes with nothing in it. */
	if (b->walls_held) {
		char why[512] = "";

		r = win_walls_up(&b->netapi, &b->wfp, &b->walls, why, sizeof(why));
		if (r < 0)
			return ward_error_set(reterr, "network-wall", -r,
					      "the WFP filters on the run's package SID %s: %s",
					      b->wfp.sid, why);
	}
	/* The proxy's way in: the run's package SID exempted from the
	 * AppContainer loopback block (journaled first), read back. */
	if (b->plan->net.loopback_exempt) {
		char why[512] = "";

		r = win_loopback_exempt(&b->netapi, b->plan->token.package_sid, why, sizeof(why));
		if (r < 0) {
			char ignored[256];

			/* Take back whatever of it went through; its journal
			 * line goes only when the list proves it gone, else
			 * `ward.exe cleanup` finishes it. */
			(void)win_loopback_unexempt(&b->netapi, b->plan->token.package_sid, ignored,
						    sizeof(ignored));
			win_walls_down(&b->netapi, &b->walls);
			return ward_error_set(reterr, "loopback-exemption", -r,
					      "the AppContainer loopback exemption of %s (the proxy's "
					      "way in): %s",
					      b->plan->token.package_sid, why);
		}
		b->exempted = true;
	}
	b->acquiring = true;
	r = win_exec_acquire(b->plan, &b->api, reterr);
	if (r < 0) {
		/* Refused half-way: undo what was journaled now, before the
		 * refusal is reported. */
		WardError undo = { 0 };

		if (win_exec_release(&b->api, &undo) < 0) {
			size_t n = strlen(reterr->detail);

			snprintf(reterr->detail + n, sizeof(reterr->detail) - n,
				 "; undoing its changes failed too (%s: %s), the journal stays "
				 "in '%s' for the next run",
				 undo.step, undo.detail, b->state);
		}
		b->acquiring = false;
		unexempt(b, NULL);
		win_walls_down(&b->netapi, &b->walls);
	}
	return r;
}

static cJSON *win_describe(const BackendPlan *b)
{
	const WinPlan *p = b->plan;
	cJSON *d = cJSON_CreateObject(), *enf = cJSON_CreateArray(), *deg = cJSON_CreateArray(),
	      *helper = cJSON_CreateArray();

	if (!d || !enf || !deg || !helper) {
		cJSON_Delete(d);
		cJSON_Delete(enf);
		cJSON_Delete(deg);
		cJSON_Delete(helper);
		return NULL;
	}
	if (p->token.appcontainer)
		cJSON_AddItemToArray(enf, cJSON_CreateString("appcontainer"));
	if (p->token.write_restricted)
		cJSON_AddItemToArray(enf, cJSON_CreateString("write-restricted-token"));
	else if (p->token.restricted)
		cJSON_AddItemToArray(enf, cJSON_CreateString("restricted-token"));
	if (p->token.integrity_rid)
		cJSON_AddItemToArray(enf, cJSON_CreateString("integrity-level"));
	for (size_t i = 0; i < p->n_paths; i++)
		if (p->paths[i].n_add || p->paths[i].label_rid) {
			cJSON_AddItemToArray(enf, cJSON_CreateString("acls"));
			break;
		}
	/* W2's dynamic walls, or the sandbox user's persistent ones (read
	 * back in plan: a run without them never gets here). */
	if (b->walls_held || b->user)
		cJSON_AddItemToArray(enf, cJSON_CreateString("wfp-walls"));
	if (b->proxy)
		cJSON_AddItemToArray(enf, cJSON_CreateString("proxy"));
	if (p->job.kill_on_close)
		cJSON_AddItemToArray(enf, cJSON_CreateString("job-kill-on-close"));
	cJSON_AddItemToArray(enf, cJSON_CreateString("env-filter"));
	STRV_FOREACH(s, p->degraded)
		cJSON_AddItemToArray(deg, cJSON_CreateString(*s));
	STRV_FOREACH(s, p->needs_helper)
		cJSON_AddItemToArray(helper, cJSON_CreateString(*s));
	cJSON_AddStringToObject(d, "platform", "windows");
	cJSON_AddStringToObject(d, "windows_tier",
				b->user ? "sandbox-user" : win_tier_to_string(p->tier));
	cJSON_AddStringToObject(d, "run_id", b->run_id);
	cJSON_AddItemToObject(d, "enforced", enf);
	cJSON_AddItemToObject(d, "degraded", deg);
	cJSON_AddItemToObject(d, "needs_helper", helper);
	return d;
}

static int win_run(BackendPlan *b, BackendResult *ret, WardError *reterr)
{
	WinExecResult res = { .exit_code = WARD_EXIT_SETUP };
	WardError err = { 0 }, undo = { 0 };
	ULONGLONG t0 = GetTickCount64();
	unsigned moved = 0;
	int r, u;

	fflush(stdout);
	fflush(stderr);
	if (b->proxy)
		win_proxy_set_audit(b->proxy, b->input->audit);
	if (b->proxy && win_proxy_start(b->proxy) < 0) {
		err = (WardError){ 0 };
		ward_error_set(&err, "proxy", EAGAIN, "cannot start the proxy's thread");
		r = -EAGAIN;
	} else if (b->user)
		r = win32_user_run(b->plan, &b->api, &b->su, b->state, &res, &err);
	else
		r = win_exec_child(b->plan, &b->api, &res, &err);
	win_user_wipe(&b->su);
	/* The job is closed: nothing of the run is left to wall or serve. */
	if (b->proxy) {
		ProxyRefusal refused[PROXY_REPORT_DISTINCT + 1];
		bool more = false;
		size_t n;
		char line[2048], see[1024];

		win_proxy_stop(b->proxy);
		n = win_proxy_refusals(b->proxy, refused, PROXY_REPORT_DISTINCT, &more);
		if (more)
			refused[n++] = (ProxyRefusal){ .overflow = true };
		snprintf(see, sizeof(see), "every connection is in %s\\audit.jsonl", b->state);
		if (n && (proxy_refusals_format(refused, n, see, line, sizeof(line)), 1) &&
		    strv_extend(&b->lines, line) < 0)
			return -ENOMEM;
	}
	unexempt(b, &b->lines);
	win_walls_down(&b->netapi, &b->walls);
	/* Undo whatever was journaled, however the run ended. */
	u = win_exec_release_count(&b->api, &moved, &undo);
	b->acquiring = false;
	*ret = (BackendResult){ .exit_code = res.exit_code, .status = -1,
				.duration_ms = GetTickCount64() - t0, .quarantined = (int)moved,
				.timed_out = res.timed_out };
	if (res.started)
		ret->status = (int)res.status;
	if (r < 0) {
		ret->exit_code = WARD_EXIT_SETUP;
		ret->setup_failed = true;
		ret->error = err;
	}
	if (moved) {
		char line[1024];

		snprintf(line, sizeof(line),
			 "%u protected path(s) the run created were moved out of the workspace "
			 "into '%s\\quarantine\\%s'",
			 moved, b->state, b->run_id);
		if (strv_extend(&b->lines, line) < 0)
			return -ENOMEM;
	}
	if (u < 0) {
		/* The journal stays; the next run finishes it. The run's
		 * outcome cannot be trusted to have left the host as it was. */
		char line[1024];

		ret->protected_check_failed = true;
		snprintf(line, sizeof(line),
			 "undoing the run's changes failed (%s: %s); its journal stays in '%s' and "
			 "the next run finishes it",
			 undo.step, undo.detail, b->state);
		if (strv_extend(&b->lines, line) < 0)
			return -ENOMEM;
		if (!ret->setup_failed) {
			ret->exit_code = WARD_EXIT_SETUP;
			ret->setup_failed = true;
			ret->error = undo;
		}
	}
	(void)reterr;
	return 0;
}

static char *const *win_notes(const BackendPlan *b)
{
	return b->notes;
}

static int win_finish(BackendPlan *b, const BackendResult *res, char ***ret_lines)
{
	return strv_extend_strv(ret_lines, b->lines) < 0 ? -ENOMEM : 0;
}

char *win_backend_plan_text(const BackendPlan *b)
{
	char *text = win_plan_describe(b->plan);

	if (text && b->user) {
		char *more = NULL, proxy[128] = "";

		if (b->proxy)
			snprintf(proxy, sizeof(proxy),
				 "proxy 127.0.0.1:%u (the one port the walls permit, held exclusively)\n",
				 (unsigned)win_proxy_port(b->proxy));
		if (asprintf(&more, "sandbox-user %s %s (ward-runner.exe, CreateProcessWithLogonW; "
				    "the W1-write plan below is the user's)\n"
				    "walls %zu persistent filters on %s (ward-setup.exe's, read back)\n%s%s",
			     b->su.name, b->su.sid, b->wfp.n, b->su.sid, proxy, text) < 0) {
			free(text);
			return NULL;
		}
		free(text);
		text = more;
	}
	if (text && b->walls_held) {
		char *more = NULL;

		if (asprintf(&more, "%swfp-walls %zu filters on %s (a dynamic session, read back "
				    "before the child starts)\n",
			     text, b->wfp.n, b->wfp.sid) < 0) {
			free(text);
			return NULL;
		}
		free(text);
		text = more;
	}

	STRV_FOREACH(h, b->plan->needs_helper) {
		char *more = NULL;

		if (!text || asprintf(&more, "%sneeds-helper %s\n", text, *h) < 0) {
			free(text);
			return NULL;
		}
		free(text);
		text = more;
	}
	return text;
}

#define WIN_BACKEND(var, t, nm, planfn)                                                       \
	const Backend var = { .tier = t,                                                    \
			      .name = nm,                                                   \
			      .flags = 0,                                                   \
			      .probe = win_probe,                                           \
			      .plan = planfn,                                               \
			      .acquire = win_acquire,                                       \
			      .describe = win_describe,                                     \
			      .notes = win_notes,                                           \
			      .run = win_run,                                               \
			      .finish = win_finish,                                         \
			      .free = win_free }
WIN_BACKEND(backend_win_w0, WIN_RUN_TIER_W0, "windows-w0", plan_w0);
WIN_BACKEND(backend_win_w1, WIN_RUN_TIER_W1, "windows-w1", plan_w1);
WIN_BACKEND(backend_win_w1_write, WIN_RUN_TIER_W1_WRITE, "windows-w1-write", plan_w1_write);
WIN_BACKEND(backend_win_w2, WIN_RUN_TIER_W2, "windows-w2", plan_w2);
WIN_BACKEND(backend_win_user, WIN_RUN_TIER_USER, "windows-sandbox-user", plan_user);
