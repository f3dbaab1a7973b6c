/* The Win32 calls the executor makes, one function per step, behind a
 * table: win32-api.c implements it with the real API (ward.exe), the unit
 * tests with a fake that records calls and injects failures, and
 * win-fault.c wraps the real one for the Wine fail-closed tests. An
 * implementation converts and calls; it decides nothing (what to ask for
 * comes from the plan, whether the result is right is checked by the plan
 * layer from what the read-back functions return).
 *
 * Every function returns 0 or a negative errno; @why (where given) gets
 * the Win32 error for a human. Handles are opaque void pointers that
 * close_proc() and close_job() release. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "windows/win-helper-proto.h"
#include "windows/win-plan.h"
#include "windows/win-token.h"

typedef struct WinSpawn {
	const char *application;
	const char *cmdline;
	const char *cwd;
	const char *env_block;       /* UTF-8, see win_env_block() */
	size_t env_len;
	const WinTokenPlan *token;   /* what token to build and pass */
	const char *logon_sid;       /* resolves the LOGON placeholder */
	void *job;
} WinSpawn;

/* Copy-on-write's launch step (win32-inject.c): load @dll into the
 * suspended child and wait, at most @ready_ms, for the DLL's readiness
 * line on the pipe @pipe (created here, first instance only; the client
 * must be the child). */
typedef struct WinCowLaunch {
	const char *dll;
	const char *pipe;
	uint32_t ready_ms;
} WinCowLaunch;

typedef struct WinApi {
	void *ctx;
	WinFileKind (*stat)(void *ctx, const char *path);
	int (*mkdir)(void *ctx, const char *path);          /* one level */
	int (*rmdir)(void *ctx, const char *path);          /* only when empty: -ENOTEMPTY */
	/* Move @path (a file or a whole tree) out of the workspace into ward's
	 * quarantine (<state>\quarantine\<run id>\); the new place in @ret. */
	int (*quarantine)(void *ctx, const char *path, char **ret);
	/* The object's DACL ("D:...") or mandatory label ("S:..."), as SDDL. */
	int (*get_sddl)(void *ctx, const char *path, bool label, char **ret);
	int (*set_sddl)(void *ctx, const char *path, bool label, const char *sddl);
	/* The undo journals, one per run, in ward's state dir. @id NULL is
	 * this run's own. Appended lines are on disk before it returns. */
	int (*journal_append)(void *ctx, const char *text);
	int (*journal_read)(void *ctx, const char *id, char **ret); /* -ENOENT: none */
	int (*journal_remove)(void *ctx, const char *id);
	/* The ids of journals whose runs are gone (their liveness handle is
	 * closed: they crashed or were killed). New strv in @ret. */
	int (*journal_stale)(void *ctx, char ***ret);
	/* ward's lock around DACL read-modify-write: held while a run changes
	 * or restores ACLs (not while the command runs), so that two runs
	 * never write one DACL at once. */
	int (*lock)(void *ctx);
	void (*unlock)(void *ctx);
	/* The logon SID of ward's own token. */
	int (*logon_sid)(void *ctx, char ret[WIN_SID_STRING_MAX]);
	/* CreateAppContainerProfile (an existing profile: its SID); the SID
	 * Windows gives back, as a string. -ENOSYS: userenv lacks it. */
	int (*profile_create)(void *ctx, const char *name, char ret[WIN_SID_STRING_MAX], char *why,
			      size_t n_why);
	int (*profile_delete)(void *ctx, const char *name);
	int (*job_create)(void *ctx, const WinJobPlan *job, void **ret, char *why, size_t n_why);
	/* The job's limits as Windows reports them (QueryInformationJobObject). */
	int (*job_read)(void *ctx, void *job, WinJobPlan *ret);
	/* Create the process suspended with the token @s->token asks for. */
	int (*spawn_suspended)(void *ctx, const WinSpawn *s, void **ret_proc, char *why, size_t n_why);
	int (*job_assign)(void *ctx, void *job, void *proc);
	/* The suspended child's token, read back. */
	int (*token_read)(void *ctx, void *proc, WinTokenObserved *ret);
	/* --cow: inject the redirector and wait for its readiness, before
	 * the resume. Any failure: the executor kills the child. */
	int (*cow_inject)(void *ctx, void *proc, const WinCowLaunch *l, char *why, size_t n_why);
	int (*resume)(void *ctx, void *proc);
	/* -ETIMEDOUT after @timeout_ms (0: no timeout). */
	int (*wait)(void *ctx, void *proc, uint64_t timeout_ms, uint32_t *ret_code);
	int (*terminate)(void *ctx, void *proc, uint32_t code);
	void (*close_proc)(void *ctx, void *proc);
	/* Closing the job's last handle kills what is left in it. */
	void (*close_job)(void *ctx, void *job);
	/* The privileged helper (win32-helper-client.c), one per context:
	 * ward-helper.exe started elevated (UAC) with exactly @p on its
	 * command line, and connected (the pipe's server must be the process
	 * started). -ECANCELED: the elevation was declined; -ENOENT: no
	 * helper next to ward.exe; -EPERM: refused (why). */
	int (*helper_start)(void *ctx, const WinHelperPolicy *p, char *why, size_t n_why);
	/* One request (win_helper_format()'s bytes); 0 when the helper said
	 * "ok", -EPERM when it refused or closed (why), -ENOTCONN with no
	 * helper started. */
	int (*helper_ask)(void *ctx, const char *req, size_t n, char *why, size_t n_why);
	/* Close the pipe (the helper revokes what still stands and exits) and
	 * wait for it; its exit code. No-op without a helper. */
	int (*helper_stop)(void *ctx, uint32_t *ret_code);
} WinApi;
