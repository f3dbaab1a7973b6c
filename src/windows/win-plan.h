/* The Windows plan: everything `ward.exe run` will do, decided from the
 * policy before any Win32 call. Which tier and token (AppContainer package
 * SID and capabilities, or a restricted / write-restricted token and its
 * integrity level), which ACEs go on which path and which come off, which
 * directories are created, which paths need the privileged helper, the job
 * object's limits, the program, its command line and its environment. The
 * executor (win-exec.c) carries it out step by step and reads every step
 * back; it decides nothing. Pure: no <windows.h>; the host is seen only
 * through WinHost's callbacks, so Linux tests build plans for fake hosts.
 *
 * Lifecycle: win_plan_build() -> win_plan_describe() / win_exec_run() ->
 * win_plan_free(). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "windows/win-acl.h"
#include "windows/win-net.h"

typedef enum WinTier {
	WIN_TIER_W0,       /* no isolation: job object, filtered environment; explicit only */
	WIN_TIER_W1,       /* restricted token + low integrity */
	WIN_TIER_W1_WRITE, /* write-restricted token + the synthetic sandbox-write SID */
	WIN_TIER_W2,       /* AppContainer: the default */
	_WIN_TIER_MAX,
	_WIN_TIER_INVALID = -22,
} WinTier;

const char *win_tier_to_string(WinTier t);  /* "W0", "W1", "W1-write", "W2" */
WinTier win_tier_from_string(const char *s); /* also "0", "1", "1w", "2" */

typedef enum WinFileKind {
	WIN_FILE_NONE,
	WIN_FILE_REGULAR,
	WIN_FILE_DIRECTORY,
} WinFileKind;

/* What the plan may ask of the host: read-only questions. */
typedef struct WinHost {
	WinFileKind (*stat)(void *userdata, const char *path);
	void *userdata;
	const char *comspec;  /* absolute cmd.exe */
	/* Trees an unelevated user cannot change the DACL of (the Windows
	 * directory, Program Files, ProgramData): ACEs there are the
	 * privileged helper's job. Normalized, absolute. */
	char *const *system_dirs;
} WinHost;

typedef struct WinPlanInput {
	const WardPolicy *policy; /* fs paths absolute Windows paths; protected relative */
	WinTier tier;
	const char *workspace;
	const char *config_dir;   /* ward's own config and state dirs: never reachable */
	const char *state_dir;
	const char *run_id;       /* 16 lowercase hex digits */
	char *const *argv;
	char *const *envp;
	char *const *env_extra;   /* --env */
	const WinHost *host;
	/* Copy-on-write (--cow): the session's directory (normalized; its
	 * upper\ and whiteout\ exist) and the redirector DLL; NULL: off. */
	const char *cow_session;
	const char *cow_dll;
	/* network.mode proxy on W2: the loopback port ward.exe's proxy
	 * listens on (win-proxy.h); 0: no proxy, and W2 refuses proxy mode. */
	uint16_t proxy_port;
} WinPlanInput;

/* One object the plan changes. */
typedef struct WinPathPlan {
	char *path;
	char *why;              /* "workspace", "fs.read", "protected .git", ... */
	bool create_dir;        /* the executor creates it (temp, state) */
	/* A protected path that does not exist when the run starts: whatever
	 * sits there after the run was made by the command (or during it), and
	 * host tools would trust it: it is moved out of the workspace into
	 * <state>\quarantine\ (journaled, so a crash cannot skip it). */
	bool absent;
	WinAce *add;            /* explicit ACEs for ward's SIDs (others for them go) */
	size_t n_add;
	uint32_t label_rid;     /* 0: no label change; else ML;OICI;NW at this RID */
	bool needs_helper;      /* under a system dir: the privileged helper's job */
} WinPathPlan;

typedef struct WinTokenPlan {
	bool appcontainer;
	char package_name[64];          /* CreateAppContainerProfile's name */
	char package_sid[WIN_SID_STRING_MAX];
	char **capabilities;            /* names */
	char **capability_sids;
	bool restricted;                /* CreateRestrictedToken */
	bool write_restricted;          /* ... with WRITE_RESTRICTED */
	bool disable_max_privilege;     /* ... with DISABLE_MAX_PRIVILEGE */
	char **restricting_sids;        /* may hold WIN_SID_LOGON_PLACEHOLDER */
	uint32_t integrity_rid;         /* what the child must run at; 0: not checked (W0) */
} WinTokenPlan;

typedef struct WinJobPlan {
	bool kill_on_close;          /* JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE */
	bool die_on_unhandled;       /* JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION */
	bool no_breakaway;           /* neither BREAKAWAY_OK nor SILENT_BREAKAWAY_OK */
	uint32_t ui_limits;          /* JOB_OBJECT_UILIMIT_* */
	uint32_t active_processes;   /* 0: none */
	uint64_t job_memory;         /* bytes, 0: none */
} WinJobPlan;

/* Copy-on-write: the workspace is granted read (+execute) only, the
 * upper and whiteout directories modify; the redirector DLL (read+execute
 * for the sandbox) is injected before the resume and told where they are
 * through WARD_COW_* variables; it signals readiness on @pipe. */
typedef struct WinCowPlan {
	char *upper;
	char *whiteout;
	char *dll;
	char *pipe;                 /* \\.\pipe\ward-cow-<run id> */
} WinCowPlan;

typedef struct WinPlan {
	WinTier tier;
	char run_id[17];
	char **our_sids;            /* SIDs whose explicit ACEs are ward's alone */
	WinPathPlan *paths;
	size_t n_paths;
	WinTokenPlan token;
	WinJobPlan job;
	char *application;          /* absolute program CreateProcessW starts */
	char *cmdline;
	char *cwd;
	char *temp_dir;             /* TEMP/TMP, created and granted for the run */
	char **env;                 /* sorted "NAME=VALUE" */
	char **degraded;            /* what this tier does not hold */
	char **needs_helper;        /* paths only the privileged helper may change */
	uint64_t timeout_s;
	WinCowPlan cow;             /* all NULL without --cow */
	/* W2: the network class (win-net.h); cls none when not W2 or not
	 * proxy mode. The command class holds internetClient. */
	WinNetDecision net;
} WinPlan;

/* Build the plan. -EINVAL with a reason for a human in @why (which path,
 * which rule) when the policy cannot be planned on this tier; -ENOENT when
 * the program is not found; -ENOMEM. Nothing on the host changes. */
int win_plan_build(const WinPlanInput *in, WinPlan **ret, char *why, size_t n_why);
WinPlan *win_plan_free(WinPlan *plan);
/* The proxy's variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY to
 * 127.0.0.1:@port, NO_PROXY empty) set over whatever the plan's
 * environment held, as W2's proxy mode sets them: for the sandbox-user
 * tier's online user, whose proxy port is known only after the plan.
 * -EINVAL for port 0, -ENOMEM. */
int win_plan_proxy_env(WinPlan *plan, uint16_t port);
/* The plan as text, one fact a line ("tier W2", "grant C:\ws modify",
 * ...), for `ward.exe run --dry-run` and the tests. Caller frees. */
char *win_plan_describe(const WinPlan *plan);
/* The DACL change for @pp (remove every explicit ACE for plan->our_sids,
 * add pp->add). Points into @plan and @pp. */
void win_plan_acl_change(const WinPlan *plan, const WinPathPlan *pp, WinAclChange *ret);
