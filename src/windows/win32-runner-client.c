/* ward.exe's side of the command runner (win32-runner-client.h).
 * Windows-only. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/cleanup.h"
#include "windows/win-cmdline.h"
#include "windows/win-runner-proto.h"
#include "windows/win32-pipe.h"
#include "windows/win32-runner-client.h"
#include "windows/win32-util.h"

#ifndef WARD_TEST_HOOKS
#define WARD_TEST_HOOKS 0
#endif

#if WARD_TEST_HOOKS
int win32_runner_launch_plain(void *userdata, const wchar_t *app, wchar_t *cmdline,
			      HANDLE *ret_proc, HANDLE *ret_thread, char *why, size_t n_why)
{
	STARTUPINFOW si = { .cb = sizeof(si) };
	PROCESS_INFORMATION pi = { 0 };

	(void)userdata;
	if (!CreateProcessW(app, cmdline, NULL, NULL, FALSE, CREATE_SUSPENDED, NULL, NULL, &si,
			    &pi)) {
		snprintf(why, n_why, "CreateProcessW(runner) failed (error %lu)",
			 (unsigned long)GetLastError());
		return -EIO;
	}
	*ret_proc = pi.hProcess;
	*ret_thread = pi.hThread;
	return 0;
}
#endif

/* How long the runner may take to start and connect (a logon can be slow). */
#define CONNECT_TIMEOUT_MS 60000

/* The runner closed its end: it is refusing (a server it does not trust
 * gets no word from it) or it died. Its exit code (and its stderr, which
 * is ward's) are the report: wait for it, a little. */
static int closed(HANDLE proc, const char *when, char *why, size_t n_why)
{
	DWORD code = 0;

	if (WaitForSingleObject(proc, 10000) == WAIT_OBJECT_0 && GetExitCodeProcess(proc, &code))
		snprintf(why, n_why, "the runner closed the pipe %s (it exited %lu)", when,
			 (unsigned long)code);
	else
		snprintf(why, n_why, "the runner closed the pipe %s", when);
	return -EPERM;
}

static int reply(Win32Pipe *p, HANDLE proc, WinRunnerReply *ret, const char *when, char *why,
		 size_t n_why)
{
	char buf[WIN_RUNNER_REPLY_MAX], detail[160] = "";
	size_t n = 0;
	int r = win32_pipe_read(p, buf, sizeof(buf), &n);

	if (r == -EPIPE)
		return closed(proc, when, why, n_why);
	if (r < 0) {
		snprintf(why, n_why, "reading the runner's reply %s: %s", when,
			 r == -EMSGSIZE ? "too long" : strerror(-r));
		return -EPERM;
	}
	if (win_runner_reply_parse(buf, n, ret, detail, sizeof(detail)) < 0) {
		snprintf(why, n_why, "%s %s", detail, when);
		return -EPERM;
	}
	if (ret->kind == WIN_RUNNER_REFUSED) {
		snprintf(why, n_why, "the runner refused: %s", ret->why);
		return -EPERM;
	}
	return 0;
}

int win32_runner_run(const char *runner_exe, const char *state, const char *run_id,
		     const char *request, size_t n, const WinRunnerLaunch *l, uint32_t *ret_code,
		     bool *ret_started, char *why, size_t n_why)
{
	char name[96], pid[16];
	_cleanup_free_ char *cmdline = NULL;
	_cleanup_free_ wchar_t *wapp = NULL, *wcmd = NULL;
	Win32Pipe pipe = { .h = INVALID_HANDLE_VALUE };
	HANDLE proc = NULL, thread = NULL;
	WinRunnerReply rp;
	DWORD code = 0;
	int r;

	*ret_started = false;
	if (win32_pipe_name("runner", run_id, name, sizeof(name)) < 0) {
		snprintf(why, n_why, "run id '%s' names no pipe", run_id);
		return -EINVAL;
	}
	snprintf(pid, sizeof(pid), "%lu",
		 (unsigned long)(l->server_pid ? l->server_pid : GetCurrentProcessId()));
	{
		char *const argv[] = { (char *)runner_exe, "--pipe", name, "--server-pid", pid,
				       "--state", (char *)state, NULL };

		if (win_cmdline_quote(argv, &cmdline) < 0) {
			snprintf(why, n_why, "cannot quote the runner's command line");
			return -EINVAL;
		}
	}
	if (!(wapp = win32_wide(runner_exe)) || !(wcmd = win32_wide(cmdline)))
		return -ENOMEM;
	/* The name is ours alone or the run is refused: a squatter that made
	 * it first fails FILE_FLAG_FIRST_PIPE_INSTANCE. */
	r = win32_pipe_create(name, l->client_sid, &pipe, why, n_why);
	if (r < 0)
		return -EPERM;
	r = l->launch(l->userdata, wapp, wcmd, &proc, &thread, why, n_why);
	if (r < 0) {
		win32_pipe_close(&pipe);
		return -EPERM;
	}
	if (l->job && !AssignProcessToJobObject(l->job, proc)) {
		snprintf(why, n_why, "AssignProcessToJobObject(runner) failed (error %lu)",
			 (unsigned long)GetLastError());
		r = -EPERM;
		goto fail;
	}
	if (ResumeThread(thread) == (DWORD)-1) {
		snprintf(why, n_why, "ResumeThread(runner) failed (error %lu)",
			 (unsigned long)GetLastError());
		r = -EPERM;
		goto fail;
	}
	r = win32_pipe_accept(&pipe, l->decoy ? l->decoy : proc, l->expect_user, CONNECT_TIMEOUT_MS,
			      why, n_why);
	if (r < 0) {
		r = -EPERM;
		goto fail;
	}
	if ((r = win32_pipe_write(&pipe, request, n)) < 0) {
		if (r == -EPIPE)
			closed(proc, "before the request", why, n_why);
		else
			snprintf(why, n_why, "sending the request to the runner: write failed");
		r = -EPERM;
		goto fail;
	}
	if ((r = reply(&pipe, proc, &rp, "before the start", why, n_why)) < 0)
		goto fail;
	if (rp.kind != WIN_RUNNER_STARTED) {
		snprintf(why, n_why, "the runner said 'exit' before 'started'");
		r = -EPERM;
		goto fail;
	}
	*ret_started = true;
	if ((r = reply(&pipe, proc, &rp, "while the command ran", why, n_why)) < 0)
		goto fail;
	if (rp.kind != WIN_RUNNER_EXIT) {
		snprintf(why, n_why, "the runner said 'started' twice");
		r = -EPERM;
		goto fail;
	}
	/* Its own exit code must say the same. */
	if (WaitForSingleObject(proc, INFINITE) != WAIT_OBJECT_0 || !GetExitCodeProcess(proc, &code) ||
	    code != rp.value) {
		snprintf(why, n_why, "the runner reported exit %lu but exited %lu",
			 (unsigned long)rp.value, (unsigned long)code);
		r = -EPERM;
		goto fail;
	}
	*ret_code = rp.value;
	r = 0;
	goto out;
fail:
	TerminateProcess(proc, 125);
	WaitForSingleObject(proc, 5000);
out:
	CloseHandle(thread);
	CloseHandle(proc);
	win32_pipe_close(&pipe);
	return r;
}
