/* `ward.exe diff/apply/undo/discard` on a Windows copy-on-write session:
 * <state>\sessions\<id>\ holds session.json, upper\ (what the redirector
 * wrote: copied-up and new files, new directories), whiteout\ (an empty
 * file per name the session deleted), and, as on Linux (src/cow/,
 * cow-journal.h), ops\<seq>.jsonl (the apply and undo records, Linux's
 * journal line format) with ops\<seq>.d\<step> (backups), and
 * journal.jsonl while an apply or undo runs.
 *
 * Semantics as on Linux (docs/cow.md): a change is an upper entry that
 * differs from the workspace, or a whiteout over a workspace entry; an
 * applied change stops being pending (the workspace now matches), undo
 * makes it pending again; protected paths are refused unless named;
 * discard drops the session. Portable: every file operation goes through
 * WinCowFs (win32-cow-fs.c on Windows, POSIX in the Linux unit tests).
 * Paths are normalized Windows paths; relative paths use '\'. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "windows/win-plan.h"

typedef struct WinCowFs {
	void *ctx;
	WinFileKind (*stat)(void *ctx, const char *path);
	/* Names in @dir (no "." or ".."), any order; new strv in @ret. */
	int (*list)(void *ctx, const char *dir, char ***ret);
	int (*mkdir)(void *ctx, const char *path);               /* one level; exists: 0 */
	int (*remove)(void *ctx, const char *path);              /* a file or an empty dir */
	/* Replace @to with a copy of the file @from (a temporary beside @to,
	 * flushed, renamed over it). */
	int (*copy)(void *ctx, const char *from, const char *to);
	int (*same)(void *ctx, const char *a, const char *b);    /* 1 same bytes, 0 not, <0 */
	int (*read)(void *ctx, const char *path, char **ret);    /* whole file, NUL-terminated */
	/* Create or replace @path with @text, flushed before it returns. */
	int (*write)(void *ctx, const char *path, const char *text);
	/* Append @line, flushed before it returns. */
	int (*append)(void *ctx, const char *path, const char *line);
	int (*rename)(void *ctx, const char *from, const char *to); /* replaces */
	/* The entry's change time in 100-ns units (NTFS's ChangeTime: no
	 * program can set it), not through a link; -ENOENT when absent. */
	int (*ctime)(void *ctx, const char *path, int64_t *ret);
	/* The clock the file system stamps change times from, same units. */
	int64_t (*now)(void *ctx);
	/* Lock the file @path (created if missing, its directory must exist:
	 * else -ENOENT) for this process until @unlock; another holder:
	 * -EBUSY at once, never a wait. Released when the process dies. */
	int (*lock)(void *ctx, const char *path, void **ret);
	void (*unlock)(void *ctx, void *lock);
} WinCowFs;

typedef enum WinCowChangeKind {
	WIN_COW_ADDED,
	WIN_COW_MODIFIED,
	WIN_COW_DELETED,
	WIN_COW_TYPE_CHANGED,
} WinCowChangeKind;

typedef struct WinCowChange {
	char *path;           /* relative to the workspace */
	WinCowChangeKind kind;
	bool directory;       /* what the change leaves (deleted: what was there) */
	bool refused;         /* protected */
} WinCowChange;

typedef struct WinCowLayout {
	char *session;        /* <state>\sessions\<id> */
	char *upper, *whiteout, *ops, *journal;
	char *stamps;         /* stamps.jsonl: the change time each apply, undo or
	                       * rollback step left on a workspace path */
	char *workspace;      /* from session.json */
	int64_t start;        /* session.json's "start" (0: none, every entry
	                       * that exists counts as changed) */
	char **protected_;    /* from session.json */
	/* Several runs (win-cow-session.c): */
	char *baseline;       /* baseline.jsonl: per upper or whiteout path, the
	                       * start of the run that made it */
	int runs;             /* session.json's "runs" */
	int64_t open_run;     /* session.json's "open_run": the start of a run
	                       * that has not ended (0: none) */
	struct WinCowBase *base; /* baseline.jsonl, read at open: sorted by path
	                          * (case-insensitive), one per path */
	size_t n_base;
} WinCowLayout;

typedef struct WinCowBase {
	char *path;
	int64_t t;
	size_t seq;           /* order of recording: the first record holds */
} WinCowBase;

const char *win_cow_kind_name(WinCowChangeKind k); /* Linux's: "added", ... */

/* Create the session: its directories and session.json
 * ({"v":1,"id","workspace","cow":true,"runs":1,"protected":[...],
 * "start":"<fs->now(), decimal>","open_run":<the same>}): made by the
 * run that is its first. */
int win_cow_session_create(const WinCowFs *fs, const char *state, const char *id,
			   const char *workspace, char *const *protected_);
/* Open: the layout and session.json; -ENOENT for an unknown id, -EINVAL for
 * an id that is not 16 hex digits. */
int win_cow_session_open(const WinCowFs *fs, const char *state, const char *id,
			 WinCowLayout *ret);
void win_cow_layout_done(WinCowLayout *l);

/* The pending changes, sorted by path. */
int win_cow_changes(const WinCowFs *fs, const WinCowLayout *l, WinCowChange **ret, size_t *n);
void win_cow_changes_free(WinCowChange *c, size_t n);
/* As JSON text, Linux's `ward diff --json` shape:
 * [{"path","kind","type"("file"|"directory")[,"refused":"protected"]}]. */
char *win_cow_changes_json(const WinCowChange *c, size_t n);

/* Apply the changes under @paths (NULL: all; a protected change only when
 * a path names it or a protected path covering it). Journaled, backed up;
 * a step that fails rolls the apply back. Lines for a human in @out
 * ("applied X", "removed X", "refused X: why"). 0 all applied, 1 some
 * refused, <0 error.
 *
 * Conflicts, as on Linux (docs/cow.md): a change whose workspace entry
 * (or, for a removed directory, any entry below it) has a change time not
 * older than the session's start, and not the one this session's own last
 * step left there (stamps.jsonl), was changed in the workspace during the
 * session: it is refused unless @force. */
int win_cow_apply(const WinCowFs *fs, const WinCowLayout *l, char *const *paths, bool force,
		  char ***out);
/* Undo the newest apply not undone yet. -ENOENT: nothing to undo. */
int win_cow_undo(const WinCowFs *fs, const WinCowLayout *l, char ***out);
/* Remove the session's directory: everything but the lock file,
 * session.json last; then the lock file and the directory, which fails
 * while the caller holds the lock: win_cow_discard_finish() after
 * win_cow_session_unlock(). */
int win_cow_discard(const WinCowFs *fs, const WinCowLayout *l);
void win_cow_discard_finish(const WinCowFs *fs, const WinCowLayout *l);
/* A journal.jsonl left by an apply or undo that was killed: an apply is
 * rolled back from its backups, an undo finished. 1 if one was found. */
int win_cow_recover(const WinCowFs *fs, const WinCowLayout *l);

/* ---- several runs in one session, and its lock (win-cow-session.c) ----
 *
 * `ward.exe run --session ID` runs again in a session: the redirector
 * reads and writes the same upper and whiteouts. Conflict detection at
 * apply needs, per path, the time from which the session holds its own
 * version (the workspace may change between runs): the BASELINE of a
 * path is the start of the run in which it first appeared in the upper
 * or the whiteouts (baseline.jsonl, written by ward, outside the sandbox's
 * reach, never by the redirector); a workspace edit from then on is a
 * conflict, one before it was seen by that run (a copy-up took it). */

/* The session's lock (<session>\lock), for a run or a review: -EBUSY when
 * another holds it (never waited on), -ENOENT when there is no such
 * session directory, -EINVAL for an id that is not 16 hex digits. */
int win_cow_session_lock(const WinCowFs *fs, const char *state, const char *id, void **ret);
void win_cow_session_unlock(const WinCowFs *fs, void *lock);
/* baseline.jsonl into @l (win_cow_session_open calls it). */
int win_cow_baseline_load(const WinCowFs *fs, WinCowLayout *l);
/* A run begins (the session locked): every upper or whiteout entry
 * without a baseline gets the start of the run that did not end
 * ("open_run"), else the session's start; then "runs" + 1, "open_run" =
 * now, @protected_ merged into the recorded ones; session.json replaced
 * whole (a temporary file renamed over it). */
int win_cow_run_begin(const WinCowFs *fs, WinCowLayout *l, char *const *protected_);
/* The run ended: every entry without a baseline gets "open_run", which
 * is then dropped. */
int win_cow_run_end(const WinCowFs *fs, WinCowLayout *l);
/* @rel's baseline: its own record, else its nearest recorded parent's,
 * else "open_run", else the session's start (0 without one: everything
 * is a conflict). */
int64_t win_cow_baseline(const WinCowLayout *l, const char *rel);

/* Helpers shared by win-cow-review.c and win-cow-session.c. */
char *win_cow_hex(const char *s);
char *win_cow_unhex(const char *h);
char *win_cow_join(const char *a, const char *b);
