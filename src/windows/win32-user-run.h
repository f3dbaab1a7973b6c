/* The sandbox-user tier's run (docs/windows.md "The sandbox-user tier in
 * `ward.exe run`"): ward-runner.exe, next to ward.exe, started as the
 * sandbox user @u with CreateProcessWithLogonW, suspended, in the plan's
 * job (made through @api and read back; the timeout terminates it); accepted on the run's pipe only if it is that process
 * and its token's user is @u's SID; sent the plan's program, directory,
 * command line and environment with the recorded synthetic SID; its
 * "started" and "exit N" relayed. The job is terminated and closed when
 * the run ends, however it ends. Any refusal: -errno, @err's step
 * "runner" (or "job"), @ret->exit_code 125. Windows-only. */
#pragma once

#include "common/error.h"
#include "windows/win-api.h"
#include "windows/win-exec.h"
#include "windows/win-plan.h"
#include "windows/win-user.h"

int win32_user_run(const WinPlan *plan, const WinApi *api, const WinSandboxUser *u,
		   const char *state, WinExecResult *ret, WardError *err);
