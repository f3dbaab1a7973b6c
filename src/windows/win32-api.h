/* The real WinApi (win-api.h): one Win32 call, or a short fixed sequence
 * of them, per function, deciding nothing. Windows-only. */
#pragma once

#include "windows/win-api.h"

typedef struct Win32Ctx {
	const char *state_dir;  /* ward's state dir: journals, liveness files, the lock */
	char run_id[17];
	void *alive;            /* this run's liveness handle (alive-<id>), held to exit */
	void *lock;             /* the ACL lock's handle while held */
	/* The run's package or synthetic SID (NULL for W0, W1): --cow's
	 * readiness pipe grants it write (win32-inject.c). */
	const char *sandbox_sid;
	void *helper;           /* the run's privileged helper, once started (win32-helper-client.c) */
} Win32Ctx;

/* A process of the table (spawn_suspended's handle). */
typedef struct Win32Proc {
	void *process;
	void *thread;
} Win32Proc;

/* The process entries of the table (win32-proc.c). */
void win32_proc_init(WinApi *api);
/* cow_inject (win32-inject.c). */
void win32_inject_init(WinApi *api);
/* helper_start, helper_ask, helper_stop (win32-helper-client.c). */
void win32_helper_init(WinApi *api);
/* The table, with @ctx (not owned) as its context. */
void win32_api_init(WinApi *api, Win32Ctx *ctx);
/* Mark run @ctx->run_id alive: a file in the state dir opened without
 * sharing and deleted on close, which a crash or kill closes too; its
 * journal is stale exactly when that file can be opened. */
int win32_run_alive(Win32Ctx *ctx);

/* The process id of a process spawn_suspended() made. */
unsigned long win32_proc_pid(void *proc);
