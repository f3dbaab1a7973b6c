/* ward: a kernel-enforced sandbox for the shell commands of AI coding agents.
 * Umbrella header: the exit codes shared by the CLI and the library, and
 * libward, the library a harness links to run commands in the sandbox
 * without going through the CLI (docs/libward.md).
 *
 * libward's lifecycle (minijail's model: opaque objects, configure, run,
 * read, free):
 *
 *   ward_policy *p = ward_policy_new();           defaults + the user's file
 *   ward_policy_add_preset(p, "git");             configure (each call checks
 *   ward_policy_allow_host(p, "github.com");      what it is given at once)
 *   ward_run *r = ward_run_new(p);                copies the policy
 *   ward_run_set_workspace(r, "/src/project");    run options
 *   ward_run_set_cow(r, true);
 *   ward_run_exec(r, argv);                       run it and wait
 *   ward_run_exit_code(r); ward_run_result_json(r); ...   read the result
 *   ward_session *s = ward_session_new();
 *   ward_session_open(s, ward_run_session_id(r)); review copy-on-write
 *   ward_session_diff(s, WARD_DIFF_TEXT, &text);  changes: diff, apply,
 *   ward_session_apply(s, NULL, 0, &json);        undo, discard
 *   ward_session_free(s); ward_run_free(r); ward_policy_free(p);
 *   ward_live_open(r2, &l);                       one sandbox, many commands
 *   ward_live_exec(l, argv, ...); ward_live_close(l);   (a live session)
 *
 * Conventions, for every function below:
 * - Functions that can fail return an int: >= 0 on success, a negative
 *   errno on failure. The object then holds a one-line message for a
 *   person, read with ward_*_last_error(); it stays until the next failing
 *   call on that object. Constructors return NULL only when out of memory.
 * - The library never prints, never calls exit(), and leaves the caller's
 *   process as it found it: ward_run_exec() runs ward's supervisor in a
 *   child process it forks (see there). Messages go to a log callback when
 *   one is set (ward_run_set_log), nowhere otherwise.
 * - Threads: objects are independent; different objects may be used from
 *   different threads at once. One object must not be used by two threads
 *   at the same time, except: ward_run_kill() on a run another thread is
 *   executing, ward_live_kill() on a live session whose ward_live_exec
 *   another thread is waiting in, and ward_run_new() on one configured ward_policy from many
 *   threads (it only reads and copies it).
 * - Strings returned as `char **ret` are the caller's, freed with free();
 *   strings returned as `const char *` belong to the object and live until
 *   it is changed or freed. Destructors accept NULL and return NULL.
 * - Paths are byte strings; JSON texts are UTF-8 (docs/result.md). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes of `ward run` (and of the other subcommands where they apply).
 * Anything else is the command's own status. ward_run_exit_code() gives
 * the same numbers. */
enum {
	WARD_EXIT_TIMEOUT = 124,  /* --timeout / limits.timeout_s expired; tree killed */
	WARD_EXIT_SETUP = 125,    /* ward could not run the command: policy error, tier
	                           * unavailable, setup failure (one-line reason on stderr) */
	WARD_EXIT_NOEXEC = 126,   /* command found but not executable (as in the shell) */
	WARD_EXIT_NOTFOUND = 127, /* command not found (as in the shell) */
	WARD_EXIT_SIGNAL_BASE = 128, /* 128+N: the command was killed by signal N */
};

/* Exit codes of the review commands (diff/apply/undo). */
enum {
	WARD_EXIT_OK = 0,
	WARD_EXIT_FAILURE = 1,  /* operation failed (I/O error, ...) */
	WARD_EXIT_USAGE = 2,    /* bad command line */
	WARD_EXIT_REFUSED = 3,  /* some paths were refused (conflict, protected, escape) */
};

#if defined(WARD_BUILDING_LIBWARD)
#define WARD_PUBLIC __attribute__((visibility("default")))
#else
#define WARD_PUBLIC
#endif

/* ------------------------------------------------------------------ */
/* Library                                                            */

/* The library's version, "MAJOR.MINOR.PATCH" (the same as `ward --version`). */
WARD_PUBLIC const char *ward_version(void);

/* Message levels given to a log callback. */
enum {
	WARD_LOG_ERROR = 3,
	WARD_LOG_WARNING = 4,
	WARD_LOG_INFO = 6,
	WARD_LOG_DEBUG = 7,
};

/* A log callback: one message, one line without its newline, the same
 * text `ward run` would print after "ward: ". Called on the thread that
 * called the library function, never after that function returned. */
typedef void (*ward_log_fn)(void *userdata, int level, const char *message);

/* ------------------------------------------------------------------ */
/* Policies                                                           */

/* A policy under construction: the sources `ward run` merges (docs/policy.md)
 * in the same order: built-in defaults, presets, one policy file (the
 * user's $XDG_CONFIG_HOME/ward/policy.json unless ward_policy_load_file
 * names another), then JSON fragments and setters, last one wins for
 * scalars, lists append. Every call checks what it adds at once (a bad key
 * or value fails there, naming it); paths are expanded and the whole
 * policy is checked against the workspace when a run starts. */
typedef struct ward_policy ward_policy;

/* Built-in defaults plus the user's policy file when it exists (what
 * `ward run` uses without flags). NULL only when out of memory; an invalid
 * user file is reported by the first call that checks (ward_policy_check,
 * a setter, or the run). */
WARD_PUBLIC ward_policy *ward_policy_new(void);
WARD_PUBLIC ward_policy *ward_policy_free(ward_policy *p);

/* Use the policy file @path instead of the user's (`ward run -p`). One
 * file per policy: a second call fails with -EBUSY (merge more with
 * ward_policy_merge_json). The file is read and checked now and read again
 * when a run starts; the sandbox never sees it. -ENOENT, -EINVAL (syntax or
 * schema, the message names file, JSON path and what was expected). */
WARD_PUBLIC int ward_policy_load_file(ward_policy *p, const char *path);
/* Add a built-in preset ("git", "node", "python", ...; `ward policy
 * presets`). -EINVAL for an unknown name. */
WARD_PUBLIC int ward_policy_add_preset(ward_policy *p, const char *name);
/* Merge a policy document (the file format, "version" optional) given as
 * JSON text. -EINVAL with the JSON path for anything the file format
 * refuses; on failure nothing of @json is kept. */
WARD_PUBLIC int ward_policy_merge_json(ward_policy *p, const char *json);

/* fs lists (docs/policy.md "fs"). */
typedef enum ward_fs_access {
	WARD_FS_READ,       /* fs.read: readable, not executable */
	WARD_FS_READ_EXEC,  /* fs.read_exec */
	WARD_FS_READ_WRITE, /* fs.read_write */
	WARD_FS_DENY,       /* fs.deny: wins over every allow */
	WARD_FS_PROTECTED,  /* fs.protected: relative to the workspace, read-only */
} ward_fs_access;
/* Add @path to the list @access names. Absolute or "~/..." (protected:
 * relative). -EINVAL for an unknown @access or a path the list refuses. */
WARD_PUBLIC int ward_policy_add_path(ward_policy *p, ward_fs_access access, const char *path);
/* network.mode: "none" (no network) or "proxy" (the allow list, through
 * ward's proxy). -EINVAL otherwise. */
WARD_PUBLIC int ward_policy_set_network(ward_policy *p, const char *mode);
/* Add @host ("github.com", "*.example.org", "host:443") to network.allow and
 * set network.mode to "proxy" (as `ward run --allow`). */
WARD_PUBLIC int ward_policy_allow_host(ward_policy *p, const char *host);
/* Set limits.@name ("timeout_s", "memory_mb", "pids", "tmp_mb", ...; 0
 * unsets). -EINVAL for an unknown limit or an out-of-range value. */
WARD_PUBLIC int ward_policy_set_limit(ward_policy *p, const char *name, uint64_t value);
/* Check the policy as a run in @workspace (NULL: the current directory)
 * would, without running anything. -EINVAL (message: file, path, what). */
WARD_PUBLIC int ward_policy_check(ward_policy *p, const char *workspace);
/* The effective policy for @workspace (NULL: the current directory) as
 * JSON text (`ward policy show`). Caller frees *@ret. */
WARD_PUBLIC int ward_policy_to_json(ward_policy *p, const char *workspace, char **ret);
/* The message of the last failed call on @p, or "" if none. */
WARD_PUBLIC const char *ward_policy_last_error(const ward_policy *p);

/* ------------------------------------------------------------------ */
/* Runs                                                               */

/* One run of one command: options, then ward_run_exec() once, then the
 * result. */
typedef struct ward_run ward_run;

/* A run with @policy (copied: @policy may be changed or freed afterwards;
 * NULL: ward_policy_new()'s policy). NULL only when out of memory. */
WARD_PUBLIC ward_run *ward_run_new(const ward_policy *policy);
/* Frees the run. Never waits: ward_run_exec() has already waited. */
WARD_PUBLIC ward_run *ward_run_free(ward_run *r);

/* The workspace: the directory the command runs in and may write (NULL:
 * the caller's current directory when ward_run_exec is called). */
WARD_PUBLIC int ward_run_set_workspace(ward_run *r, const char *dir);
/* Pass one more environment variable: "NAME=VALUE" sets it, "NAME" passes
 * the caller's value (`ward run --env`). The rest of the environment is the
 * caller's, filtered by the policy's env rules. -EINVAL for a bad name. */
WARD_PUBLIC int ward_run_add_env(ward_run *r, const char *name_or_assignment);
/* limits.timeout_s for this run only (0: the policy's). */
WARD_PUBLIC int ward_run_set_timeout(ward_run *r, unsigned seconds);
/* network.mode for this run only ("none" or "proxy"; NULL: the policy's). */
WARD_PUBLIC int ward_run_set_network(ward_run *r, const char *mode);
/* The tier: 2 (the default, full isolation), 1 (Landlock and seccomp
 * without namespaces, docs/tiers.md) or 0 (no isolation); 1 and 0 are never
 * implied. Unset: the policy's "tier", else 2. Others: -EINVAL now, or the
 * run refuses them if not built. */
WARD_PUBLIC int ward_run_set_tier(ward_run *r, int tier);
/* Refuse to run when a protection is degraded (`ward run --strict`). */
WARD_PUBLIC int ward_run_set_strict(ward_run *r, bool strict);
/* Run in a new copy-on-write session: the workspace's changes stay in the
 * session until ward_session_apply(). Exclusive with ward_run_set_session. */
WARD_PUBLIC int ward_run_set_cow(ward_run *r, bool cow);
/* Run in the existing session @id (NULL: none): the command sees the
 * session's earlier changes. -EINVAL for a malformed id. */
WARD_PUBLIC int ward_run_set_session(ward_run *r, const char *id);
/* The command's stdin, stdout and stderr: each an open descriptor of the
 * caller's, or -1 for the caller's own 0, 1, 2 (the default). They are not
 * closed, and must stay open until ward_run_exec returns. Descriptors that
 * are directories or O_PATH are replaced by /dev/null (they would lead
 * into the host's file tree), with a warning. */
WARD_PUBLIC int ward_run_set_stdio(ward_run *r, int stdin_fd, int stdout_fd, int stderr_fd);
/* Write the run's events (start, each refused connection, exit) as JSON
 * lines to @fd while the run goes on (docs/result.md); -1: none. Not
 * closed. */
WARD_PUBLIC int ward_run_set_events_fd(ward_run *r, int fd);
/* Send ward's messages for this run (what `ward run` prints on stderr) to
 * @fn up to @max_level (WARD_LOG_*); NULL: no messages (the default). */
WARD_PUBLIC int ward_run_set_log(ward_run *r, ward_log_fn fn, void *userdata, int max_level);

/* Run @argv (argv[0] is looked up on the sandbox's PATH; NULL-terminated)
 * and wait for it. Returns the exit code (>= 0, what `ward run` exits
 * with: the command's status, 128+N, 124 timeout, 125 ward could not run
 * it, the reason in ward_run_last_error), or a negative errno when the
 * library could not even try (-ENOMEM, -EALREADY: this run was executed
 * already, -EINVAL: empty @argv, -ECHILD: the run process died without a
 * result).
 *
 * How it leaves the caller alone: the supervisor (signal handlers, child
 * subreaper, the proxy, timers) runs in a child process forked here; only
 * the result comes back, through a pipe. The calling thread blocks; other
 * threads go on. The caller's signal handlers, mask, children and
 * resources are untouched; the child resets its signals to their defaults
 * and leaves the caller's descriptors out of the sandbox. The caller sees
 * one SIGCHLD per run; if a SIGCHLD handler of the caller reaps it first,
 * the result still arrives. If the caller (or the calling thread) dies,
 * the run is killed with everything it started. The child of a
 * multithreaded caller may use only locks fork() resets: glibc's malloc
 * does; an allocator without fork handlers (ASan's) can hang the run
 * (docs/libward.md). */
WARD_PUBLIC int ward_run_exec(ward_run *r, const char *const *argv);

/* Send @sig to the run while ward_run_exec waits for it; the one call that
 * may be made from another thread than the one in ward_run_exec. The
 * supervisor passes SIGINT, SIGTERM, SIGHUP and SIGQUIT on to the command
 * (as `ward run` does for a terminal's ^C); SIGKILL ends the supervisor,
 * and with it the sandbox and everything in it; so does any signal that
 * arrives while the run is still being set up (ward_run_exec then returns
 * -ECHILD). -ESRCH when the run is not running (not started yet, or
 * over), -EINVAL for a bad signal. */
WARD_PUBLIC int ward_run_kill(ward_run *r, int sig);

/* The result, valid after ward_run_exec returned >= 0. Before that the
 * numbers are 0, strings NULL. */
WARD_PUBLIC int ward_run_exit_code(const ward_run *r);
/* The command's exit status, -1 when a signal ended it or it never ran. */
WARD_PUBLIC int ward_run_status(const ward_run *r);
/* The signal that ended the command, 0 if none. */
WARD_PUBLIC int ward_run_signal(const ward_run *r);
/* The command was started (false: ward refused or failed before). */
WARD_PUBLIC bool ward_run_started(const ward_run *r);
WARD_PUBLIC bool ward_run_timed_out(const ward_run *r);
WARD_PUBLIC uint64_t ward_run_duration_ms(const ward_run *r);
/* The session id (the audit log's; the copy-on-write session's with
 * ward_run_set_cow/session), NULL if the run never got one. */
WARD_PUBLIC const char *ward_run_session_id(const ward_run *r);
/* Protections this run did not have (NULL-terminated, maybe empty), as
 * in the audit `start` event ("landlock-abi-...", "tier-0-no-isolation"). */
WARD_PUBLIC const char *const *ward_run_degraded(const ward_run *r);
/* Connections the proxy refused (details: ward_run_result_json, events). */
WARD_PUBLIC unsigned ward_run_net_refused(const ward_run *r);
/* Paths changed in the copy-on-write session, pending review. */
WARD_PUBLIC unsigned ward_run_cow_changes(const ward_run *r);
/* The whole result object as JSON text (docs/result.md, "v": 1), also for
 * a run that failed before its command started. */
WARD_PUBLIC const char *ward_run_result_json(const ward_run *r);
/* Why the run failed before or around its command ("" if it did not):
 * "STEP: DETAIL". */
WARD_PUBLIC const char *ward_run_last_error(const ward_run *r);

/* ------------------------------------------------------------------ */
/* Copy-on-write sessions                                             */

/* A copy-on-write session to review (`ward diff/apply/undo/discard`). Each
 * operation takes the session's lock for its own duration only, so a
 * ward_session may be kept open while runs use the session. */
typedef struct ward_session ward_session;

WARD_PUBLIC ward_session *ward_session_new(void);
WARD_PUBLIC ward_session *ward_session_free(ward_session *s);
/* Open the session @id (ward_run_session_id) in ward's state directory.
 * -ENOENT: no such session; -EMEDIUMTYPE: not a copy-on-write session;
 * -EINVAL: malformed id. An interrupted apply or undo is recovered here
 * (rolled back or finished), with a warning to the log callback. */
WARD_PUBLIC int ward_session_open(ward_session *s, const char *id);
WARD_PUBLIC const char *ward_session_id(const ward_session *s);
/* The workspace the session belongs to. */
WARD_PUBLIC const char *ward_session_workspace(const ward_session *s);
/* Send messages (recovery, refusals explained) to @fn; NULL: none. */
WARD_PUBLIC int ward_session_set_log(ward_session *s, ward_log_fn fn, void *userdata,
				     int max_level);

typedef enum ward_diff_format {
	WARD_DIFF_TEXT,      /* `ward diff`: summary and unified diff, escaped for a terminal */
	WARD_DIFF_STAT,      /* per-file line counts */
	WARD_DIFF_NAME_ONLY, /* one path per line (quoted where needed) */
	WARD_DIFF_JSON,      /* `ward diff --json`: an array of changes, exact paths */
} ward_diff_format;
/* The pending changes in @format, as a NUL-terminated text in *@ret
 * (caller frees). Protected paths (the ones runs in this session had, and
 * the user's policy's) are listed as refused. */
WARD_PUBLIC int ward_session_diff(ward_session *s, ward_diff_format format, char **ret);

enum {
	WARD_APPLY_FORCE = 1 << 0, /* apply (undo) over files changed meanwhile */
};
/* Write the changes under @paths (NULL-terminated, relative to the
 * workspace; NULL: all) into the workspace, atomically per file, with an
 * undo record (`ward apply`). Returns 0 when everything selected was
 * applied, WARD_EXIT_REFUSED (3) when some paths were refused (conflict,
 * protected, escape...), or a negative errno (-EIO and others: some paths
 * failed). *@ret_json (may be NULL; caller frees) gets `ward apply --json`'s
 * object: done, refused and failed paths with reasons. */
WARD_PUBLIC int ward_session_apply(ward_session *s, const char *const *paths, unsigned flags,
				   char **ret_json);
/* Undo the most recent apply (`ward undo`). Returns as ward_session_apply;
 * -ENOENT when there is nothing to undo. */
WARD_PUBLIC int ward_session_undo(ward_session *s, unsigned flags, char **ret_json);
/* Drop the session: pending changes, layer and records (`ward discard`).
 * Only ward_session_free() may follow. */
WARD_PUBLIC int ward_session_discard(ward_session *s);
/* The message of the last failed call on @s, or "" if none. */
WARD_PUBLIC const char *ward_session_last_error(const ward_session *s);

/* ------------------------------------------------------------------ */
/* Live sessions                                                      */

/* A live session (docs/sessions.md): one sandbox (namespaces, view,
 * proxy, Landlock, seccomp) prepared once, in which each command costs
 * little more than an exec; commands share its workspace, /tmp and
 * network as commands of one shell do (`ward session new --live` and
 * `ward exec`). */
typedef struct ward_live ward_live;

/* Start a live session with the policy and options of @config, a
 * configured ward_run that is not executed (its policy, workspace,
 * network, timeout: the session's limits.timeout_s, strict, cow, log;
 * tier 2 only, and neither a session, env, stdio nor events fd: those are
 * per command). Returns once the sandbox is ready; @config may then be
 * freed. The supervisor is a process forked here that stays the caller's
 * child until ward_live_close() reaps it; the session also stops when the
 * calling process exits (it watches it through a pidfd) or after
 * limits.session_idle_s without a command. -EINVAL (bad options),
 * -ECHILD (the sandbox did not start: the reason is in
 * ward_run_last_error(@config)), or another negative errno. */
WARD_PUBLIC int ward_live_open(ward_run *config, ward_live **ret);
/* The session's id (ward_session_open it after close for a cow session). */
WARD_PUBLIC const char *ward_live_id(const ward_live *l);
/* Run @argv in the session and wait for it, as `ward exec`: @env (NULL or
 * NULL-terminated "NAME=VALUE") may only narrow what the session's policy
 * passes of the caller's environment; @cwd (NULL: the workspace) must be in
 * the view; @timeout_s (0: the session's) may only be shorter. The stdio
 * descriptors (-1: the caller's 0, 1, 2) are not closed and follow
 * ward_run_set_stdio's rules: a directory or O_PATH one becomes /dev/null,
 * a writable regular file as stdout/stderr gets a pipe whose output a
 * process forked here appends to it. Returns the exit code (the
 * command's status, 128+N, 124, 125 with the reason in
 * ward_live_last_error for a refused request), or a negative errno when
 * the session could not be asked (-EPIPE: it is gone). *@ret_result_json
 * (may be NULL; caller frees) gets the result object of docs/result.md
 * with its exec_id, also for a refused request. ward_live_kill() from
 * another thread signals the command while this waits. */
WARD_PUBLIC int ward_live_exec(ward_live *l, const char *const *argv, const char *const *env,
			       const char *cwd, unsigned timeout_s, int stdin_fd, int stdout_fd,
			       int stderr_fd, char **ret_result_json);
/* Start @argv in the session as `ward exec --background` does, with
 * ward_live_exec's arguments, and return once it runs: a dev server, a
 * watcher. It runs until its main process exits, its @timeout_s (0: the
 * session's limits.timeout_s) passes, or the session stops
 * (ward_live_close); ward_live_ps() lists it; its start and exit are in
 * the audit log (`start`/`exit` events with its exec_id). A writable file
 * as its stdout or stderr gets a copier process forked here (as for
 * ward_live_exec), which lives as long as the command writes and is
 * reaped by a later call on @l or by ward_live_close. Returns the
 * command's id in the session (>= 1, ward_live_ps's "id"), or a negative
 * errno: -EINVAL for a refused request (the reason in
 * ward_live_last_error), -EPIPE when the session is gone. */
WARD_PUBLIC int ward_live_start(ward_live *l, const char *const *argv, const char *const *env,
				const char *cwd, unsigned timeout_s, int stdin_fd, int stdout_fd,
				int stderr_fd);
/* ward_live_kill's flag: to the command's foreground process group, as a
 * terminal's ^C reaches it (`ward exec` under a terminal), rather than to
 * the command's main process alone (a `kill` of `ward exec`). */
#define WARD_KILL_GROUP 1
/* Send @sig to the command a ward_live_exec on @l is running: the one
 * call that may be made on @l from another thread meanwhile. SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT and SIGCONT, as `ward exec` passes them on:
 * to that command only, never to the session, another command or a
 * background one. @flags: 0 or WARD_KILL_GROUP. 0 once sent (the command
 * decides what it does with it; its end is ward_live_exec's return),
 * -ESRCH when no ward_live_exec is running, -EINVAL for another signal. */
WARD_PUBLIC int ward_live_kill(ward_live *l, int sig, int flags);
/* The session's background commands, as `ward session ps --json`: a JSON
 * array of {"id", "age_s", "argv", "cwd"} objects (docs/sessions.md);
 * *@ret_json is the caller's to free. -EPIPE when the session is gone. */
WARD_PUBLIC int ward_live_ps(ward_live *l, char **ret_json);
/* Stop the session (every command in it ends), wait for its supervisor,
 * and free @l. Accepts NULL; returns NULL. No ward_live_exec may be
 * running on @l meanwhile (one object, one thread at a time). */
WARD_PUBLIC ward_live *ward_live_close(ward_live *l);
/* The message of the last failed call on @l, or "" if none. */
WARD_PUBLIC const char *ward_live_last_error(const ward_live *l);

#ifdef __cplusplus
}
#endif
