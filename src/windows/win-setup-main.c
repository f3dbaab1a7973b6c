/* ward-setup.exe: the elevated sandbox-user tier's one-time setup (seed 2).
 *
 *   ward-setup.exe [install] [--no-read-acls]   run elevated: plan, apply, read back
 *   ward-setup.exe --uninstall                  run elevated: undo the journal
 *   ward-setup.exe probe                        no elevation: what this host offers
 *
 * ward.exe itself never runs elevated; this program is the only part that
 * does, and only when the user starts it. Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <shellapi.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-net-exec.h"
#include "windows/win-setup-exec.h"
#include "windows/win32-net.h"
#include "windows/win32-setup.h"
#include "windows/win32-util.h"

#define EXIT_REFUSED 125

static char *env(const wchar_t *name)
{
	wchar_t buf[32768];
	DWORD n = GetEnvironmentVariableW(name, buf, 32768);

	return n > 0 && n < 32768 ? win32_utf8(buf) : NULL;
}

static void print_line(void *data, const char *line)
{
	(void)data;
	printf("%s\n", line);
	fflush(stdout);
}

/* No elevation needed: which steps this host can carry out. */
static int probe(WinSetupApi *api, WinNetApi *net)
{
	static const char record[] = "ward-sandbox-credentials 1\nprobe\n";
	_cleanup_free_ void *blob = NULL, *back = NULL;
	size_t nb = 0, nback = 0;
	char sid[WIN_SID_STRING_MAX], why[512] = "";
	void *engine = NULL;
	int r, el = api->elevated(api->ctx);

	printf("elevated: %s\n", el > 0 ? "yes" : el == 0 ? "no (install needs it)" : "unknown");
	r = api->dpapi_protect(api->ctx, record, sizeof(record), &blob, &nb);
	if (r == 0)
		r = api->dpapi_unprotect(api->ctx, blob, nb, &back, &nback);
	if (r == 0 && (nback != sizeof(record) || memcmp(back, record, nback) != 0 ||
		       (nb == nback && memcmp(blob, record, nb) == 0)))
		r = -EPROTO;
	printf("dpapi: %s\n", r == 0 ? "ok (a record round-trips, and is not stored in clear)"
				     : strerror(-r));
	r = api->user_get(api->ctx, WIN_SETUP_OFFLINE_USER, sid);
	printf("offline user: %s%s\n", r == 0 ? "present, " : "absent", r == 0 ? sid : "");
	r = api->user_get(api->ctx, WIN_SETUP_ONLINE_USER, sid);
	printf("online user: %s%s\n", r == 0 ? "present, " : "absent", r == 0 ? sid : "");
	r = net->wfp_open(net->ctx, true, &engine, why, sizeof(why));
	printf("wfp: %s%s\n", r == 0 ? "engine opens" : "unavailable: ", r == 0 ? "" : why);
	if (engine)
		net->wfp_close(net->ctx, engine);
	{
		WinFwRule rule;

		/* A read only: a rule of ward's name, or why none can be read. */
		why[0] = 0;
		r = api->fw_get(api->ctx, WIN_SETUP_FW_RULE_NAME, &rule, why, sizeof(why));
		printf("firewall: %s%s\n",
		       r == 0 ? "ward's rule present" : r == -ENOENT ? "INetFwPolicy2 answers, no rule of ward's" : "unavailable: ",
		       r == 0 || r == -ENOENT ? "" : *why ? why : strerror(-r));
	}
	return 0;
}

int main(void)
{
	int argc = 0;
	_cleanup_(strv_freep) char **argv = win32_utf8_argv(&argc);
	_cleanup_free_ char *local = env(L"LOCALAPPDATA"), *state = NULL;
	_cleanup_(strv_freep) char **dirs = NULL;
	static const wchar_t *const dir_vars[] = { L"USERPROFILE", L"SystemRoot", L"ProgramFiles",
						   L"ProgramFiles(x86)", L"ProgramData" };
	Win32SetupCtx sctx = { 0 };
	Win32NetCtx nctx = { 0 };
	WinSetupApi api;
	WinNetApi net;
	WinSetupSeen seen;
	WinSetupPlan plan;
	WinSetupInput in;
	bool uninstall = false, acls = true, do_probe = false;
	char why[512] = "";
	size_t len;
	int r;

	if (!argv)
		return EXIT_REFUSED;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "install") == 0)
			continue;
		if (strcmp(argv[i], "--uninstall") == 0)
			uninstall = true;
		else if (strcmp(argv[i], "--no-read-acls") == 0)
			acls = false;
		else if (strcmp(argv[i], "probe") == 0)
			do_probe = true;
		else {
			fprintf(stderr, "ward-setup: unknown argument '%s' (install [--no-read-acls], "
					"--uninstall, probe)\n",
				argv[i]);
			return EXIT_REFUSED;
		}
	}
	if (!local) {
		fprintf(stderr, "ward-setup: LOCALAPPDATA is not set\n");
		return EXIT_REFUSED;
	}
	len = strlen(local) + sizeof("\\ward");
	state = malloc(len);
	if (!state)
		return EXIT_REFUSED;
	snprintf(state, len, "%s\\ward", local);
	{
		_cleanup_free_ wchar_t *w = win32_wide(state);

		if (w)
			CreateDirectoryW(w, NULL);
	}
	sctx.state_dir = state;
	win32_setup_init(&api, &sctx);
	nctx.state_dir = state;
	win32_net_init(&net, &nctx);
	if (do_probe)
		return probe(&api, &net);
	if (win32_net_lock(&nctx) < 0) {
		fprintf(stderr, "ward-setup: cannot take %s\\network.lock\n", state);
		return EXIT_REFUSED;
	}
	if (uninstall) {
		r = win_setup_uninstall(&api, &net, print_line, NULL, why, sizeof(why));
		win32_net_unlock(&nctx);
		if (r < 0) {
			fprintf(stderr, "ward-setup: uninstall incomplete: %s\n", why);
			return EXIT_REFUSED;
		}
		printf("uninstalled\n");
		return 0;
	}
	for (size_t i = 0; i < sizeof(dir_vars) / sizeof(dir_vars[0]); i++) {
		char *d = env(dir_vars[i]);

		if (d && strv_consume(&dirs, d) < 0)
			return EXIT_REFUSED;
	}
	in = (WinSetupInput){ .seen = &seen, .state_dir = state, .read_dirs = acls ? dirs : NULL };
	if ((r = win_setup_observe(&api, state, &seen)) < 0 || (r = win_setup_plan(&in, &plan)) < 0) {
		win32_net_unlock(&nctx);
		fprintf(stderr, "ward-setup: cannot plan: %s\n", strerror(-r));
		return EXIT_REFUSED;
	}
	for (size_t i = 0; i < plan.n; i++) {
		const WinSetupStep *st = &plan.steps[i];
		bool who = st->kind == WIN_SETUP_USER || st->kind == WIN_SETUP_HIDE ||
			   st->kind == WIN_SETUP_WALLS;

		printf("plan: %s%s%s%s%s\n", win_setup_kind_name(st->kind), who ? " " : "",
		       who ? WIN_SETUP_USERS[st->user] : "", st->path ? " " : "",
		       st->path ? st->path : "");
	}
	r = win_setup_apply(&api, &net, &plan, print_line, NULL, why, sizeof(why));
	win32_net_unlock(&nctx);
	if (r < 0) {
		fprintf(stderr,
			"ward-setup: refused: %s\nward-setup: what was done is in %s\\setup.journal; "
			"`ward-setup.exe --uninstall` undoes it\n",
			why, state);
		win_setup_plan_done(&plan);
		return EXIT_REFUSED;
	}
	printf("ready: the sandbox users can run commands\n");
	fflush(stdout);
	if (acls) {
		size_t failed = win_setup_read_acls(&api, &plan, print_line, NULL);

		printf("read ACLs: %zu of the common directories failed (best effort)\n", failed);
	}
	win_setup_plan_done(&plan);
	return 0;
}
