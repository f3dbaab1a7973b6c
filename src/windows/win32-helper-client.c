/* ward.exe's side of the privileged helper (win-api.h's helper_start,
 * helper_ask, helper_stop; docs/windows.md "The privileged helper").
 * ward.exe never runs elevated: for a run whose plan has paths only an
 * administrator may change, it starts ward-helper.exe (next to ward.exe)
 * through UAC (ShellExecuteExW, verb "runas": the user's consent to the
 * elevation is the consent to the grants on the helper's command line:
 * the run's id, its SIDs, each path and its access), connects to the
 * run's pipe, which the helper creates with FILE_FLAG_FIRST_PIPE_INSTANCE,
 * and checks that the pipe's server is the process ShellExecuteExW
 * started (GetNamedPipeServerProcessId): a name another process took first
 * is never talked to. Every reply is parsed: "ok", or "refused WHY"
 * (anything else, or a closed pipe, is a refusal). Closing the pipe makes
 * the helper revoke whatever it granted and still stands, and exit.
 * Windows-only. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <shellapi.h>

#include "common/cleanup.h"
#include "windows/win-cmdline.h"
#include "windows/win-fault.h"
#include "windows/win-runner-proto.h"
#include "windows/win32-api.h"
#include "windows/win32-pipe.h"
#include "windows/win32-util.h"

#ifndef WARD_TEST_HOOKS
#define WARD_TEST_HOOKS 0
#endif

/* The helper's name next to ward.exe; ward-test.exe starts the test
 * build of the helper (WARD_TEST_WIN_FAULT reaches it too). */
#if WARD_TEST_HOOKS
#define HELPER_EXE L"ward-helper-test.exe"
#else
#define HELPER_EXE L"ward-helper.exe"
#endif

/* From the consent to the helper's pipe: the helper starts and creates
 * it at once (the UAC prompt itself is over when ShellExecuteExW
 * returns). */
#define CONNECT_TIMEOUT_MS 60000
#define STOP_TIMEOUT_MS 30000

typedef struct Win32Helper {
	HANDLE proc;
	Win32Pipe pipe;
} Win32Helper;

#if WARD_TEST_HOOKS
/* Test builds only (ward-test.exe), what Wine cannot produce. In
 * WARD_TEST_WIN_FAULT:
 *   helper-declined  ShellExecuteExW is not called and fails as when the
 *                    user declines the UAC prompt (ERROR_CANCELLED)
 *   helper-squat     the helper's pipe name is taken (by ward-test.exe
 *                    itself, a process that is not the helper) before
 *                    the helper starts */
static bool fault_listed(const char *name)
{
	return win_fault_listed(getenv("WARD_TEST_WIN_FAULT"), name);
}
#endif

/* ward-helper.exe beside this program. */
static wchar_t *helper_path(void)
{
	wchar_t buf[MAX_PATH * 4], *slash, *ret;
	DWORD n = GetModuleFileNameW(NULL, buf, MAX_PATH * 4);

	if (n == 0 || n >= MAX_PATH * 4 - 32 || !(slash = wcsrchr(buf, L'\\')))
		return NULL;
	wcscpy(slash + 1, HELPER_EXE);
	ret = malloc((wcslen(buf) + 1) * sizeof(wchar_t));
	if (ret)
		wcscpy(ret, buf);
	return ret;
}

/* The helper's arguments (ShellExecuteExW's lpParameters), quoted. */
static int helper_params(const WinHelperPolicy *p, const char *pipe, const char *user,
			 char **ret)
{
	_cleanup_free_ char **argv = calloc(16 + 2 * p->n_grants, sizeof(char *));
	_cleanup_free_ char *line = NULL;
	char pid[16];
	size_t n = 0;

	if (!argv)
		return -ENOMEM;
	snprintf(pid, sizeof(pid), "%lu", (unsigned long)GetCurrentProcessId());
	argv[n++] = "x"; /* the program's slot, cut off below */
	argv[n++] = "--pipe";
	argv[n++] = (char *)pipe;
	argv[n++] = "--client-pid";
	argv[n++] = pid;
	argv[n++] = "--user";
	argv[n++] = (char *)user;
	argv[n++] = "--run";
	argv[n++] = (char *)p->run_id;
	if (p->package_sid) {
		argv[n++] = "--sid";
		argv[n++] = (char *)p->package_sid;
	}
	if (p->synthetic_sid) {
		argv[n++] = "--sid";
		argv[n++] = (char *)p->synthetic_sid;
	}
	for (size_t i = 0; i < p->n_grants; i++) {
		argv[n++] = p->grants[i].exec ? "--read-exec" : "--read";
		argv[n++] = (char *)p->grants[i].path;
	}
	if (win_cmdline_quote(argv, &line) < 0)
		return -EINVAL;
	/* The program is written quoted ("x"): cut it and its space. */
	if (strncmp(line, "\"x\" ", 4) != 0)
		return -EINVAL;
	if (!(*ret = strdup(line + 4)))
		return -ENOMEM;
	return 0;
}

static int h_start(void *ctx, const WinHelperPolicy *p, char *why, size_t n_why)
{
	Win32Ctx *c = ctx;
	_cleanup_free_ wchar_t *exe = helper_path(), *wparams = NULL;
	_cleanup_free_ char *params = NULL, *exe8 = NULL;
	char name[96], user[WIN_SID_STRING_MAX];
	SHELLEXECUTEINFOW sei = { .cbSize = sizeof(sei) };
	Win32Helper *h;
	BOOL ok;
	int r;
#if WARD_TEST_HOOKS
	HANDLE squatter = INVALID_HANDLE_VALUE;
#endif

	if (c->helper) {
		snprintf(why, n_why, "a helper is running for this run already");
		return -EBUSY;
	}
	if (!exe || !(exe8 = win32_utf8(exe)))
		return -ENOMEM;
	if (win32_pipe_name("helper", p->run_id, name, sizeof(name)) < 0) {
		snprintf(why, n_why, "run id '%s' names no pipe", p->run_id);
		return -EINVAL;
	}
	if ((r = win32_process_user(GetCurrentProcess(), user, sizeof(user))) < 0) {
		snprintf(why, n_why, "cannot read ward's own user SID");
		return r;
	}
	if ((r = helper_params(p, name, user, &params)) < 0 || !(wparams = win32_wide(params))) {
		snprintf(why, n_why, "cannot quote the helper's command line");
		return r < 0 ? r : -ENOMEM;
	}
	/* A clear reason before UAC's own. */
	if (GetFileAttributesW(exe) == INVALID_FILE_ATTRIBUTES) {
		snprintf(why, n_why, "%s is not there (it belongs next to ward.exe)", exe8);
		return -ENOENT;
	}
#if WARD_TEST_HOOKS
	if (fault_listed("helper-squat")) {
		_cleanup_free_ wchar_t *wname = win32_wide(name);

		squatter = wname ? CreateNamedPipeW(wname, PIPE_ACCESS_DUPLEX, PIPE_TYPE_MESSAGE |
							    PIPE_READMODE_MESSAGE, 1, 4096, 4096, 0,
						    NULL)
				 : INVALID_HANDLE_VALUE;
	}
#endif
	sei.fMask = SEE_MASK_NOCLOSEPROCESS | SEE_MASK_NOASYNC | SEE_MASK_FLAG_NO_UI;
	sei.lpVerb = L"runas";
	sei.lpFile = exe;
	sei.lpParameters = wparams;
	sei.nShow = SW_HIDE;
#if WARD_TEST_HOOKS
	if (fault_listed("helper-declined")) {
		SetLastError(ERROR_CANCELLED);
		ok = FALSE;
	} else
#endif
		ok = ShellExecuteExW(&sei);
	if (!ok) {
		DWORD e = GetLastError();

		if (e == ERROR_CANCELLED) {
			snprintf(why, n_why, "the elevation was declined");
			r = -ECANCELED;
		} else
			r = win32_fail_why(why, n_why, "ShellExecuteExW(runas, ward-helper.exe)");
		goto out;
	}
	if (!sei.hProcess) {
		snprintf(why, n_why, "ShellExecuteExW started no process we can wait for");
		r = -EPERM;
		goto out;
	}
	if (!(h = calloc(1, sizeof(*h)))) {
		CloseHandle(sei.hProcess);
		r = -ENOMEM;
		goto out;
	}
	h->proc = sei.hProcess;
	/* Only the process we started: GetNamedPipeServerProcessId must be
	 * its pid, or the pipe is someone else's. */
	r = win32_pipe_connect(name, h->proc, CONNECT_TIMEOUT_MS, &h->pipe, why, n_why);
	if (r == -ESRCH) {
		DWORD code = 0;

		/* It refused (its reason is on its own console) or died. */
		if (GetExitCodeProcess(h->proc, &code)) {
			size_t l = strlen(why);

			snprintf(why + l, n_why - l, " (it exited %lu)", (unsigned long)code);
		}
	}
	if (r < 0) {
		/* It gives up on its own when nobody connects (and it may be
		 * beyond our rights to end, being elevated). */
		TerminateProcess(h->proc, 125);
		CloseHandle(h->proc);
		free(h);
		r = -EPERM;
		goto out;
	}
	c->helper = h;
	r = 0;
out:
#if WARD_TEST_HOOKS
	if (squatter != INVALID_HANDLE_VALUE)
		CloseHandle(squatter);
#endif
	return r;
}

static int h_ask(void *ctx, const char *req, size_t n, char *why, size_t n_why)
{
	Win32Ctx *c = ctx;
	Win32Helper *h = c->helper;
	char buf[WIN_RUNNER_REPLY_MAX], detail[160] = "";
	WinRunnerReply rp;
	size_t got = 0;
	int r;

	if (!h)
		return -ENOTCONN;
	r = win32_pipe_write(&h->pipe, req, n);
	if (r == 0)
		r = win32_pipe_read(&h->pipe, buf, sizeof(buf), &got);
	if (r == -EPIPE) {
		snprintf(why, n_why, "the helper closed the pipe");
		return -EPERM;
	}
	if (r < 0) {
		snprintf(why, n_why, "talking to the helper: %s",
			 r == -EMSGSIZE ? "reply too long" : strerror(-r));
		return -EPERM;
	}
	if (got == 2 && memcmp(buf, "ok", 2) == 0)
		return 0;
	/* Its refusal has the runner's form (win_runner_reply_format). */
	if (win_runner_reply_parse(buf, got, &rp, detail, sizeof(detail)) < 0 ||
	    rp.kind != WIN_RUNNER_REFUSED) {
		snprintf(why, n_why, "the helper's reply is neither 'ok' nor a refusal");
		return -EPERM;
	}
	snprintf(why, n_why, "the helper refused: %s", rp.why);
	return -EPERM;
}

static int h_stop(void *ctx, uint32_t *ret_code)
{
	Win32Ctx *c = ctx;
	Win32Helper *h = c->helper;
	DWORD code = 125;
	int r = 0;

	*ret_code = 0;
	if (!h)
		return 0;
	win32_pipe_close(&h->pipe);
	if (WaitForSingleObject(h->proc, STOP_TIMEOUT_MS) != WAIT_OBJECT_0 ||
	    !GetExitCodeProcess(h->proc, &code))
		r = -ETIMEDOUT;
	*ret_code = code;
	CloseHandle(h->proc);
	free(h);
	c->helper = NULL;
	return r;
}

void win32_helper_init(WinApi *api)
{
	api->helper_start = h_start;
	api->helper_ask = h_ask;
	api->helper_stop = h_stop;
}
