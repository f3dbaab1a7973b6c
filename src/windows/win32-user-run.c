/* The sandbox-user tier's launch (win32-user-run.h): ward-runner.exe as
 * the sandbox user through CreateProcessWithLogonW, in a kill-on-close
 * job, the request over the run's pipe (win32-runner-client.c).
 * Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/cleanup.h"
#include "ward/ward.h"
#include "windows/win-runner-proto.h"
#include "windows/win32-runner-client.h"
#include "windows/win32-user-run.h"
#include "windows/win32-util.h"

#ifndef WARD_TEST_HOOKS
#define WARD_TEST_HOOKS 0
#endif
#if WARD_TEST_HOOKS
#include "windows/win-fault.h"
#endif

typedef struct Logon {
	const WinSandboxUser *u;
} Logon;

/* The runner as the sandbox user: CreateProcessWithLogonW, suspended, no
 * profile loaded, ward's three standard handles. Wine's implementation
 * ignores the credentials (it starts the runner as the calling user):
 * win32_runner_run() reads the runner's token user back and refuses. */
static int logon_launch(void *userdata, const wchar_t *app, wchar_t *cmdline, HANDLE *ret_proc,
			HANDLE *ret_thread, char *why, size_t n_why)
{
	const Logon *l = userdata;
	STARTUPINFOW si = { .cb = sizeof(si), .dwFlags = STARTF_USESTDHANDLES };
	PROCESS_INFORMATION pi = { 0 };
	_cleanup_free_ wchar_t *user = win32_wide(l->u->name);
	wchar_t *pw = win32_wide(l->u->password);
	BOOL ok;
	DWORD e;

	if (!user || !pw) {
		free(pw);
		return -ENOMEM;
	}
	si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
	si.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
	si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
	ok = CreateProcessWithLogonW(user, L".", pw, 0, app, cmdline,
				     CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT, NULL, NULL, &si,
				     &pi);
	e = GetLastError();
	SecureZeroMemory(pw, wcslen(pw) * sizeof(*pw));
	free(pw);
	if (!ok) {
		snprintf(why, n_why, "CreateProcessWithLogonW(%s) failed (error %lu)%s", l->u->name,
			 (unsigned long)e,
			 e == ERROR_LOGON_FAILURE ? ": the password does not log on; run "
						    "ward-setup.exe again"
						  : "");
		return -EPERM;
	}
	*ret_proc = pi.hProcess;
	*ret_thread = pi.hThread;
	return 0;
}


/* @name (ward-runner.exe) next to ward.exe. */
static char *runner_path(const wchar_t *name)
{
	wchar_t buf[MAX_PATH];
	DWORD n = GetModuleFileNameW(NULL, buf, MAX_PATH);
	wchar_t *slash;

	if (n == 0 || n >= MAX_PATH || !(slash = wcsrchr(buf, L'\\')))
		return NULL;
	if ((size_t)(slash - buf) + 1 + wcslen(name) >= MAX_PATH)
		return NULL;
	wcscpy(slash + 1, name);
	return GetFileAttributesW(buf) == INVALID_FILE_ATTRIBUTES ? NULL : win32_utf8(buf);
}

/* The run's timeout: the job is terminated (the runner, the command,
 * all it started); the runner's pipe closes and the run reports it. */
typedef struct Watchdog {
	HANDLE job;
	volatile LONG fired;
} Watchdog;

static void CALLBACK timeout_fired(PVOID data, BOOLEAN timer)
{
	Watchdog *w = data;

	(void)timer;
	InterlockedExchange(&w->fired, 1);
	TerminateJobObject(w->job, WARD_EXIT_SETUP);
}

int win32_user_run(const WinPlan *plan, const WinApi *api, const WinSandboxUser *u,
		   const char *state, WinExecResult *ret, WardError *err)
{
	WinRunnerRequest req = { 0 };
	_cleanup_free_ char *runner = runner_path(L"ward-runner.exe"), *text = NULL;
	Logon logon = { .u = u };
	WinRunnerLaunch l = { .launch = logon_launch, .userdata = &logon, .client_sid = u->sid,
			      .expect_user = u->sid };
	Watchdog dog = { 0 };
	HANDLE timer = NULL;
	void *job = NULL;
	char why[1024] = "";
	uint32_t code = 0;
	bool started = false;
	int r;

	*ret = (WinExecResult){ .exit_code = WARD_EXIT_SETUP };
#if WARD_TEST_HOOKS
	/* logon-plain (ward-test.exe only): the runner started as ward's own
	 * user, since Wine has no second user to log on as; with it the user
	 * check is off and ward-runner-test.exe runs (told by the test's
	 * WARD_TEST_RUNNER_ELEVATED and token-echo to go past Wine's token).
	 * Plumbing only: the command runs unconfined. */
	if (win_fault_listed(getenv("WARD_TEST_WIN_FAULT"), "logon-plain")) {
		free(runner);
		runner = runner_path(L"ward-runner-test.exe");
		l = (WinRunnerLaunch){ .launch = win32_runner_launch_plain };
	}
#endif
	if (!runner)
		return ward_error_set(err, "runner", ENOENT,
				      "ward-runner.exe is not next to ward.exe");
	memcpy(req.run_id, plan->run_id, sizeof(req.run_id));
	snprintf(req.sid, sizeof(req.sid), "%s", u->synthetic_sid);
	req.app = plan->application;
	req.cwd = plan->cwd;
	req.cmdline = plan->cmdline;
	req.env = plan->env;
	r = win_runner_format(&req, &text);
	if (r < 0)
		return ward_error_set(err, "runner", -r, "the runner's request cannot be made");
	/* The plan's job, read back: the runner, the command and all it
	 * starts end with ward. */
	r = api->job_create(api->ctx, &plan->job, &job, why, sizeof(why));
	if (r < 0)
		return ward_error_set(err, "job", -r, "Failed to create the job object: %s", why);
	r = win_exec_check_job(plan, api, job, err);
	if (r < 0)
		goto out;
	l.job = job;
	dog.job = job;
	if (plan->timeout_s &&
	    !CreateTimerQueueTimer(&timer, NULL, timeout_fired, &dog,
				   (DWORD)(plan->timeout_s > 4000000 ? 4000000000u
								     : plan->timeout_s * 1000),
				   0, WT_EXECUTEONLYONCE)) {
		r = ward_error_set(err, "timeout", EIO, "CreateTimerQueueTimer failed (error %lu)",
				   (unsigned long)GetLastError());
		goto out;
	}
	r = win32_runner_run(runner, state, plan->run_id, text, strlen(text), &l, &code, &started,
			     why, sizeof(why));
	if (timer)
		DeleteTimerQueueTimer(NULL, timer, INVALID_HANDLE_VALUE);
	ret->started = started;
	ret->timed_out = dog.fired;
	if (dog.fired) {
		ret->status = WARD_EXIT_SETUP;
		ret->exit_code = 124; /* as a W-tier run that times out */
		r = 0;
	} else if (r < 0) {
		r = ward_error_set(err, "runner", -r, "%s", why);
	} else {
		ret->status = code;
		ret->exit_code = (int)code;
	}
out:
	/* Whatever is left of the run goes with the job. */
	TerminateJobObject(job, WARD_EXIT_SETUP);
	api->close_job(api->ctx, job);
	return r;
}
