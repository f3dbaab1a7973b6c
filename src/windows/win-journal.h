/* The undo journal of a Windows run: before the executor changes anything
 * on the host it appends a line saying how to undo it, and flushes; after
 * the run (or at the next start, after a crash) the journal is replayed
 * backwards. Text, one entry a line, tab-separated (Windows paths cannot
 * hold tabs or newlines: win_path_normalize refuses control characters):
 *
 *   ward-windows-journal 1
 *   sids	S-1-15-2-...          the SIDs whose explicit ACEs are ward's
 *   profile	ward.run.<id>       an AppContainer profile to delete
 *   mkdir	C:\ws\.git           a directory ward created (removed if empty)
 *   acl	C:\ws                the DACL ward changed: remove ward's SIDs' ACEs
 *   label	C:\ws	S:(ML;;NW;;;ME)   the label to put back ("-": none)
 *   absent	C:\ws\.git          a protected path that did not exist: moved
 *                               into the quarantine if it exists at undo
 *   helper	C:\Program Files\x	<run id> <SID>
 *                               a read grant the privileged helper is asked
 *                               for (journaled before the request): undone
 *                               by the helper (revoke), since only an
 *                               administrator may change that DACL
 *
 * Undoing an ACL removes every explicit ACE for ward's SIDs, not a saved
 * copy: whatever the user changed meanwhile stays. */
#pragma once

#include <stddef.h>

#include "windows/win-sid.h"

typedef enum WinJournalKind {
	WIN_JOURNAL_SIDS,
	WIN_JOURNAL_PROFILE,
	WIN_JOURNAL_MKDIR,
	WIN_JOURNAL_ACL,
	WIN_JOURNAL_LABEL,
	WIN_JOURNAL_ABSENT,
	WIN_JOURNAL_HELPER,
	_WIN_JOURNAL_KIND_MAX,
	_WIN_JOURNAL_KIND_INVALID = -22,
} WinJournalKind;

typedef struct WinJournalEntry {
	WinJournalKind kind;
	char *arg;   /* the path, profile name or space-separated SIDs */
	char *arg2;  /* label: the original label SDDL, or NULL for none;
	              * helper: "<run id> <SID>" */
} WinJournalEntry;

typedef struct WinJournal {
	WinJournalEntry *entries;
	size_t n;
} WinJournal;

extern const char WIN_JOURNAL_HEADER[]; /* "ward-windows-journal 1\n" */

/* One line for @kind (with its '\n'); @arg2 only for labels (NULL: none)
 * and helper grants (required: win_journal_helper_arg()).
 * -EINVAL if an argument holds a tab or newline. Caller frees. */
int win_journal_line(WinJournalKind kind, const char *arg, const char *arg2, char **ret);
/* Parse a whole journal. A truncated last line (a crash mid-write) is
 * ignored; anything else malformed is -EINVAL: an undo ward cannot read is
 * reported, never guessed. */
int win_journal_parse(const char *text, WinJournal *ret);
void win_journal_done(WinJournal *j);
/* A helper entry's second field: "<16 lower-case hex> <a run's SID>".
 * win_journal_helper_arg() makes it (-EINVAL for anything else);
 * win_journal_helper_split() reads it back into @run_id and @sid. */
int win_journal_helper_arg(const char *run_id, const char *sid, char **ret);
int win_journal_helper_split(const char *arg2, char run_id[17], char sid[WIN_SID_STRING_MAX]);
