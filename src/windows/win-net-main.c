/* `ward.exe cleanup` and `ward.exe net-check`: the network walls' two
 * commands. cleanup removes what the network journal tracks (persistent
 * WFP filters, ward's sublayer and provider, loopback exemptions) and
 * keeps what it could not remove; net-check puts the walls up for a
 * throwaway package SID, reads them back, takes them down, and does the
 * same with the loopback exemption: it says whether this host can give
 * the walls, without running anything. Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/cleanup.h"
#include "windows/win-exec.h"
#include "windows/win-net-exec.h"
#include "windows/win-wfp.h"
#include "windows/win32-api.h"
#include "windows/win32-net.h"
#include "windows/win32-util.h"

#ifndef WARD_TEST_HOOKS
#define WARD_TEST_HOOKS 0
#endif
#if WARD_TEST_HOOKS
#include "windows/win-fault.h"
#endif

int win_cleanup_main(int argc, char **argv);
int win_netcheck_main(int argc, char **argv);

#define EXIT_REFUSED 125

/* %LOCALAPPDATA%\ward, created if missing; NULL if unset. */
static char *state_dir(void)
{
	wchar_t buf[32768];
	DWORD n = GetEnvironmentVariableW(L"LOCALAPPDATA", buf, 32768);
	_cleanup_free_ char *local = n > 0 && n < 32768 ? win32_utf8(buf) : NULL;
	_cleanup_free_ wchar_t *w = NULL;
	char *dir;
	size_t len;

	if (!local)
		return NULL;
	len = strlen(local) + sizeof("\\ward");
	dir = malloc(len);
	if (!dir)
		return NULL;
	snprintf(dir, len, "%s\\ward", local);
	w = win32_wide(dir);
	if (w)
		CreateDirectoryW(w, NULL);
	return dir;
}

/* The undo journals of runs that died (killed, crashed): undone as the
 * next run would, and a privileged helper's grant such a run left
 * standing is revoked by starting ward-helper.exe (UAC) for it. */
static int cleanup_runs(const char *state)
{
	Win32Ctx c = { .state_dir = state };
	WardError err = { 0 };
	WinApi api;
	int r;

	win32_api_init(&api, &c);
#if WARD_TEST_HOOKS
	if (win_fault_install(&api, getenv("WARD_TEST_WIN_FAULT")) < 0) {
		fprintf(stderr, "ward: cleanup: WARD_TEST_WIN_FAULT: unknown fault\n");
		return -EINVAL;
	}
#endif
	r = win_exec_cleanup(&api, &err);
	if (r < 0) {
		fprintf(stderr, "ward: cleanup: a dead run's undo journal stays in %s (%s: %s)\n",
			state, err.step, err.detail);
		return r;
	}
	printf("cleanup: dead runs' undo journals: none left\n");
	return 0;
}

int win_cleanup_main(int argc, char **argv)
{
	_cleanup_free_ char *state = state_dir();
	Win32NetCtx ctx = { 0 };
	WinCleanupReport rep;
	WinNetApi api;
	bool runs_failed = false;
	int r;

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "ward: cleanup takes no arguments\n");
		return EXIT_REFUSED;
	}
	if (!state) {
		fprintf(stderr, "ward: cleanup: LOCALAPPDATA is not set; ward's state dir lives there\n");
		return EXIT_REFUSED;
	}
	if (cleanup_runs(state) < 0)
		runs_failed = true;
	ctx.state_dir = state;
	win32_net_init(&api, &ctx);
	r = win32_net_lock(&ctx);
	if (r < 0) {
		fprintf(stderr, "ward: cleanup: cannot take %s\\network.lock: %s\n", state, strerror(-r));
		return EXIT_REFUSED;
	}
	r = win_net_cleanup(&api, &rep);
	win32_net_unlock(&ctx);
	if (r == 0) {
		printf("cleanup: %zu network change(s) removed, none left\n", rep.removed);
		return runs_failed ? EXIT_REFUSED : 0;
	}
	if (r == -EBUSY) {
		fprintf(stderr,
			"ward: cleanup: %zu removed, %zu left in %s\\network.journal; first: %s\n",
			rep.removed, rep.failed, state, rep.why);
		return EXIT_REFUSED;
	}
	fprintf(stderr, "ward: cleanup: %s\n", *rep.why ? rep.why : strerror(-r));
	return EXIT_REFUSED;
}

int win_netcheck_main(int argc, char **argv)
{
	_cleanup_free_ char *state = state_dir();
	Win32NetCtx ctx = { 0 };
	WinNetApi api;
	WinWfpInput in = { .identity = WIN_WFP_PACKAGE, .proxy_port = 3128 };
	WinWfpPlan plan;
	WinWalls walls;
	WinSid sid;
	char sidstr[WIN_SID_STRING_MAX], why[512] = "";
	bool ok = true;
	int r;

	for (int i = 1; i < argc; i++) {
		char *end = NULL;
		unsigned long v;

		if (strcmp(argv[i], "--proxy-port") != 0 || i + 1 >= argc) {
			fprintf(stderr, "ward: net-check [--proxy-port PORT]\n");
			return EXIT_REFUSED;
		}
		v = strtoul(argv[++i], &end, 10);
		if (!*argv[i] || *end || v == 0 || v > 65535) {
			fprintf(stderr, "ward: net-check: --proxy-port: not a port 1-65535: '%s'\n",
				argv[i]);
			return EXIT_REFUSED;
		}
		in.proxy_port = (uint16_t)v;
	}
	if (!state) {
		fprintf(stderr, "ward: net-check: LOCALAPPDATA is not set\n");
		return EXIT_REFUSED;
	}
	/* A package SID no profile has: the walls condition on the SID alone. */
	if (win_sid_appcontainer("ward.net-check", &sid) < 0)
		return EXIT_REFUSED;
	win_sid_format(&sid, sidstr);
	in.sid = sidstr;
	if (win_wfp_plan(&in, &plan) < 0)
		return EXIT_REFUSED;
	ctx.state_dir = state;
	win32_net_init(&api, &ctx);
	r = win32_net_lock(&ctx);
	if (r < 0) {
		fprintf(stderr, "ward: net-check: cannot take %s\\network.lock: %s\n", state,
			strerror(-r));
		return EXIT_REFUSED;
	}
	printf("identity: %s (ward.net-check)\n", sidstr);
	r = win_walls_up(&api, &plan, &walls, why, sizeof(why));
	if (r == 0) {
		printf("wfp: ok: %zu filters added in a dynamic session and read back\n", plan.n);
		win_walls_down(&api, &walls);
	} else {
		printf("wfp: unavailable: %s\n", why);
		ok = false;
	}
	r = win_loopback_exempt(&api, sidstr, why, sizeof(why));
	if (r == 0) {
		r = win_loopback_unexempt(&api, sidstr, why, sizeof(why));
		if (r == 0)
			printf("loopback exemption: ok: added, read back, removed\n");
	}
	if (r < 0) {
		printf("loopback exemption: unavailable: %s\n", why);
		ok = false;
	}
	win32_net_unlock(&ctx);
	printf("network walls: %s\n", ok ? "available" : "unavailable (proxy mode is refused)");
	return ok ? 0 : EXIT_REFUSED;
}
