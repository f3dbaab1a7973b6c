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

/* ward-runner.exe next to ward.exe. */
static char *runner_path(void)
{
	wchar_t buf[MAX_PATH];
	DWORD n = GetModuleFileNameW(NULL, buf, MAX_PATH);
	wchar_t *slash;

	if (n == 0 || n >= MAX_PATH || !(slash = wcsrchr(buf, L'\\')))
		return NULL;
	if ((size_t)(slash - buf) + 18 >= MAX_PATH)
		return NULL;
	wcscpy(slash + 1, L"ward-runner.exe");
	return GetFileAttributesW(buf) == INVALID_FILE_ATTRIBUTES ? NULL : win32_utf8(buf);
}

int win32_user_run(const WinPlan *plan, const WinSandboxUser *u, const char *state,
		   WinExecResult *ret, WardError *err)
{
	WinRunnerRequest req = { 0 };
	_cleanup_free_ char *runner = runner_path(), *text = NULL;
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION lim = { 0 };
	Logon logon = { .u = u };
	WinRunnerLaunch l = { .launch = logon_launch, .userdata = &logon, .client_sid = u->sid,
			      .expect_user = u->sid };
	char why[1024] = "";
	uint32_t code = 0;
	bool started = false;
	int r;

	*ret = (WinExecResult){ .exit_code = WARD_EXIT_SETUP };
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
	/* The job: the runner, the command and all it starts end with ward. */
	l.job = CreateJobObjectW(NULL, NULL);
	if (!l.job)
		return ward_error_set(err, "job", EIO, "CreateJobObjectW failed (error %lu)",
				      (unsigned long)GetLastError());
	lim.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
					       JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
	if (!SetInformationJobObject(l.job, JobObjectExtendedLimitInformation, &lim, sizeof(lim))) {
		CloseHandle(l.job);
		return ward_error_set(err, "job", EIO, "SetInformationJobObject failed (error %lu)",
				      (unsigned long)GetLastError());
	}
	r = win32_runner_run(runner, state, plan->run_id, text, strlen(text), &l, &code, &started,
			     why, sizeof(why));
	/* Whatever is left of the run goes with the job. */
	TerminateJobObject(l.job, WARD_EXIT_SETUP);
	CloseHandle(l.job);
	ret->started = started;
	if (r < 0)
		return ward_error_set(err, "runner", -r, "%s", why);
	ret->status = code;
	ret->exit_code = (int)code;
	return 0;
}
