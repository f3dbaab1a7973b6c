/* The executor: carries out a WinPlan through a WinApi, step by step, each
 * change journaled before it is made and read back after, and undoes the
 * journal when the run ends, whatever way it ends. It refuses (exit 125)
 * on the first step that fails or reads back wrong, before the child is
 * resumed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "windows/win-api.h"
#include "windows/win-plan.h"

typedef struct WinExecResult {
	int exit_code;       /* what ward.exe exits with */
	uint32_t status;     /* the child's exit code, when it ran */
	bool started;        /* the child was resumed */
	bool timed_out;
	bool undo_failed;    /* the journal is kept for the next run */
	unsigned quarantined; /* protected paths the run created, moved out */
} WinExecResult;

/* The phases, for a run module that drives acquire / run / release
 * itself (src/run/backend.h's shape):
 *   win_exec_acquire   refuse helper-only paths, then under ward's ACL lock
 *                      recover dead runs' journals and journal, make and
 *                      read back every change;
 *   win_exec_child     job, suspended child, token read-back, resume, wait;
 *   win_exec_release   undo this run's journal (also after a failed acquire).
 * Each returns 0 or -errno with @err filled. */
int win_exec_acquire(const WinPlan *plan, const WinApi *api, WardError *err);
int win_exec_child(const WinPlan *plan, const WinApi *api, WinExecResult *ret, WardError *err);
int win_exec_release(const WinApi *api, WardError *err);
/* As win_exec_release, counting the protected paths it moved out. */
int win_exec_release_count(const WinApi *api, unsigned *ret_quarantined, WardError *err);

/* All three: run @plan. 0 when the command ran (whatever its status), else -errno
 * with @err filled (step and reason) and exit_code 125. */
/* The job's limits read back (job_read) equal the plan's, else
 * "job-readback". For a backend that makes its own job (the sandbox-user
 * tier's runner). */
int win_exec_check_job(const WinPlan *plan, const WinApi *api, void *job, WardError *err);
int win_exec_run(const WinPlan *plan, const WinApi *api, WinExecResult *ret, WardError *err);
/* Undo the journals of runs that died (crashed, killed); 0 if there were
 * none or all were undone, else -errno (and those journals stay). */
int win_exec_recover(const WinApi *api, WardError *err);
/* `ward.exe cleanup`: as win_exec_recover, and a privileged helper's
 * grant a dead run left standing is revoked by starting ward-helper.exe
 * (UAC) for that journal's revocations only (win_exec_recover, a run's
 * own recovery, refuses then and names `ward.exe cleanup`). */
int win_exec_cleanup(const WinApi *api, WardError *err);
