/* ward.exe's side of the command runner (ward-runner.exe, seed 2's
 * two-step flow): make the run's pipe, start the runner suspended through
 * @launch (CreateProcessWithLogonW as the sandbox user in ward.exe; plain
 * CreateProcessW in the Wine test peer), put it in the run's job, resume
 * it, accept only that process on the pipe (and, when asked, only if its
 * token's user is @expect_user), send the one request, and relay: the
 * runner's "started", then its "exit N", which must agree with the
 * runner's own exit code. Every reply is parsed (win-runner-proto.h): the
 * runner runs as another user, its replies are input. Any failure kills
 * the runner (and, through the job, whatever it started) and refuses.
 * Windows-only. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <windows.h>

typedef struct WinRunnerLaunch {
	/* Create process @app with @cmdline SUSPENDED; its process and thread. */
	int (*launch)(void *userdata, const wchar_t *app, wchar_t *cmdline, HANDLE *ret_proc,
		      HANDLE *ret_thread, char *why, size_t n_why);
	void *userdata;
	const char *client_sid;   /* who may open the pipe (NULL: ward's own user) */
	const char *expect_user;  /* the runner's token user; NULL: not checked */
	HANDLE job;               /* the run's kill-on-close job; NULL: none */
	uint32_t server_pid;      /* tests only: what the runner is told (0: ours) */
	HANDLE decoy;             /* tests only: the process the pipe expects */
} WinRunnerLaunch;

#if defined(WARD_TEST_HOOKS) && WARD_TEST_HOOKS
/* Test builds only: a WinRunnerLaunch.launch that starts the runner as
 * ward's own user with plain CreateProcessW (Wine has no second user to
 * log on as): ward-test.exe's logon-plain, the Wine tests' runner peer. */
int win32_runner_launch_plain(void *userdata, const wchar_t *app, wchar_t *cmdline,
			      HANDLE *ret_proc, HANDLE *ret_thread, char *why, size_t n_why);
#endif

/* Run @request (@n bytes, sent as is) through @runner_exe. 0 with the
 * command's exit code in @ret_code; -EPERM (a refusal, by the runner or
 * by ward: @why says which and why) or another -errno. @ret_started: the
 * runner said "started" (the command ran). */
int win32_runner_run(const char *runner_exe, const char *state, const char *run_id,
		     const char *request, size_t n, const WinRunnerLaunch *l, uint32_t *ret_code,
		     bool *ret_started, char *why, size_t n_why);
