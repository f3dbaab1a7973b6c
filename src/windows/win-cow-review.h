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
} WinCowLayout;

const char *win_cow_kind_name(WinCowChangeKind k); /* Linux's: "added", ... */

/* Create the session: its directories and session.json
 * ({"v":1,"id","workspace","cow":true,"runs":1,"protected":[...],
 * "start":"<fs->now(), decimal>"}). */
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
/* Remove the session's directory. */
int win_cow_discard(const WinCowFs *fs, const WinCowLayout *l);
/* A journal.jsonl left by an apply or undo that was killed: an apply is
 * rolled back from its backups, an undo finished. 1 if one was found. */
int win_cow_recover(const WinCowFs *fs, const WinCowLayout *l);
