/* ward-setup.exe's steps through WinSetupApi and WinNetApi: each change
 * journaled before it is made and read back after; the blocking steps
 * stop at the first failure (what was done stays journaled, and
 * --uninstall undoes it); the read ACLs are best effort and reported one
 * by one. */
#pragma once

#include <stddef.h>

#include "windows/win-net-api.h"
#include "windows/win-setup-api.h"
#include "windows/win-setup.h"

/* Progress: one line per step ("user WardSandboxOffline: created"). */
typedef void (*WinSetupProgress)(void *data, const char *line);

/* Observe the host for win_setup_plan(). */
int win_setup_observe(const WinSetupApi *api, const char *state_dir, WinSetupSeen *ret);
/* The blocking steps (all but read-acl). -EPERM and the step in @why on
 * the first failure or read-back mismatch. */
int win_setup_apply(const WinSetupApi *api, const WinNetApi *net, const WinSetupPlan *p,
		    WinSetupProgress progress, void *data, char *why, size_t n_why);
/* The read-acl steps; the number that failed. */
size_t win_setup_read_acls(const WinSetupApi *api, const WinSetupPlan *p,
			   WinSetupProgress progress, void *data);
/* Undo the setup journal backwards, then the network journal's entries
 * (win_net_cleanup). What cannot be undone stays journaled; -EBUSY then. */
int win_setup_uninstall(const WinSetupApi *api, const WinNetApi *net, WinSetupProgress progress,
			void *data, char *why, size_t n_why);
