/* Reviewing a copy-on-write session: list, diff, apply, undo, discard.
 * Used by the CLI (src/cli/cmd-cow.c). Every function expects a session
 * opened with cow_session_open() (which holds the session's lock and has
 * already recovered an interrupted apply/undo), except where noted.
 *
 * Lifecycle: cow_session_open -> cow_session_scan -> cow_diff_write /
 * cow_apply / cow_undo / cow_discard -> cow_result_done -> cow_session_free. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "cow/cow-internal.h"

bool cow_session_id_is_valid(const char *id);
/* Read a session's metadata without taking its lock or recovering (for
 * `ward sessions`, which must not block on a running session). */
int cow_session_open_unlocked(const char *state_dir, const char *id, CowSession **ret);
/* Ids of all sessions under @state_dir, sorted. Caller frees (strv). */
int cow_session_list(const char *state_dir, char ***ret);
/* Scan the session's upper dir against the workspace (empty for a non-CoW
 * session). */
int cow_session_scan(CowSession *s, char *const *protected_paths, CowChangeList *ret);
/* True while an apply/undo journal is waiting for recovery. */
bool cow_session_has_journal(const CowSession *s);
/* Number of applies that can still be undone. */
int cow_session_count_undoable(const CowSession *s);

/* What an apply/undo/discard did. Paths are raw (unquoted). */
typedef struct CowResult {
	char **done;          /* paths changed in the workspace */
	char **removed;       /* those of @done that no longer exist there */
	char **refused;       /* paths not touched, with... */
	char **refused_why;   /* ...a reason each ("conflict", "protected", ...) */
	char **failed;        /* paths where an I/O error stopped the change */
	char **failed_why;
	int seq;              /* the apply/undo record number, 0 if none */
} CowResult;

void cow_result_done(CowResult *r);
/* Fill @r->removed: the entries of @r->done that are gone beneath @ws_fd. */
int cow_result_note_removed(CowResult *r, int ws_fd);

/* Select the changes under any of @paths (all when NULL/empty); ancestors a
 * selected change needs (new directories) are selected too. Each entry of
 * @paths that matches nothing is returned in @ret_unmatched. */
int cow_select(const CowChangeList *l, char *const *paths, bool *selected, char ***ret_unmatched);

typedef enum CowDiffMode {
	COW_DIFF_FULL,        /* summary list, totals, unified diff */
	COW_DIFF_SUMMARY,     /* summary list and totals */
	COW_DIFF_STAT,        /* per-file added/removed line counts and a total */
	COW_DIFF_NAME_ONLY,   /* one path per line */
	COW_DIFF_NAME_STATUS, /* kind letter, tab, path */
	_COW_DIFF_MODE_MAX,
	_COW_DIFF_MODE_INVALID = -22,
} CowDiffMode;

typedef struct CowDiffOptions {
	bool color;       /* ANSI colors (the caller checks isatty) */
	CowDiffMode mode;
	size_t collapse;  /* FULL: a file with more changed lines is summarized; 0 never */
	size_t max_file;  /* larger files are named, not diffed; 0: 8 MiB */
} CowDiffOptions;

/* Write the selected changes to @f in @o->mode, for a person: every name
 * is quoted (cow_quote_path) and every content byte that could act on a
 * terminal is escaped (cow_put_escaped). */
int cow_diff_write(CowSession *s, const CowChangeList *l, const bool *selected, FILE *f,
		   const CowDiffOptions *o);
/* The selected changes as a JSON array, exact: a path that is valid UTF-8
 * is given as it is (JSON escapes its controls); one that is not is given
 * C-quoted with "quoted": true and its bytes in "path_hex". Modes are
 * octal strings ("0644"). */
int cow_changes_to_json(const CowChangeList *l, const bool *selected, cJSON **ret);
/* A path for JSON under @key, exact as cow_changes_to_json does it (for a
 * key other than "path", only "<key>_hex" marks a quoted value). */
bool cow_json_add_path(cJSON *o, const char *key, const char *path);
/* The result of an apply, undo or discard: what `ward apply --json` and
 * libward print and the audit event records. @requested (the paths asked
 * for) is left out when NULL. */
cJSON *cow_result_to_json(CowSession *s, const CowResult *r, char *const *requested, bool force);

/* Print @len bytes of @s to @f with everything that could act on a terminal
 * shown as an escape (\r, \xNN for other controls and bytes that are not
 * UTF-8, \uNNNN for C1 controls and bidi/zero-width characters), each
 * wrapped in @on/@off (colors, or ""). Tab passes. Returns the number of
 * escapes. */
size_t cow_put_escaped(FILE *f, const char *s, size_t len, const char *on, const char *off);
/* Is @s (@len bytes) valid UTF-8 without NUL? */
bool cow_utf8_valid(const char *s, size_t len);

typedef struct CowApplyOptions {
	char *const *paths;           /* NULL: everything */
	char *const *protected_paths; /* relative to the workspace */
	bool force;                   /* apply over conflicts */
} CowApplyOptions;

/* Apply the selected changes to the real workspace (journal + undo record).
 * Returns 0 (see @ret for refused/failed paths) or -errno. */
int cow_apply(CowSession *s, const CowApplyOptions *o, CowResult *ret);
/* Undo the most recent apply not yet undone. -ENOENT when there is none. */
int cow_undo(CowSession *s, bool force, CowResult *ret);
/* Remove the whole session: layer, records, metadata. The session must not
 * be used afterwards except for cow_session_free(). */
int cow_discard(CowSession *s);

/* Finish (undo) or roll back (apply) an interrupted operation. Fills
 * @ret_what ("rolled-back-apply", "finished-undo", NULL if nothing) when
 * non-NULL. Called by cow_session_open(). */
int cow_journal_recover(CowSession *s, const char **ret_what);

/* What cow_session_open() found and recovered: "rolled-back-apply",
 * "finished-undo", "committed" (killed after its commit line), or NULL. */
const char *cow_session_recovered(const CowSession *s);

/* Shared helpers (cow-session.c). */
int cow_write_file_atomic(int dirfd, const char *name, const char *data, size_t len);
int cow_read_file_at(int dirfd, const char *name, size_t max, char **ret, size_t *ret_len);
