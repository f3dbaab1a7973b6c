/* The network journal: what ward changed in the machine-wide network
 * configuration that does not vanish by itself, so that a crash never
 * leaves it behind and `ward.exe cleanup` can remove it. One file,
 * %LOCALAPPDATA%\ward\network.journal, text, tab-separated, appended and
 * flushed BEFORE each change:
 *
 *   ward-windows-net 1
 *   filter	{key}	<sid>	<name>    a persistent WFP filter
 *   sublayer	{key}                 ward's sublayer, added persistent
 *   provider	{key}                 ward's provider, added persistent
 *   loopback	<sid>                 a SID ward added to the loopback exemptions
 *
 * Dynamic-session filters are not journaled: Windows deletes them when the
 * session's handle closes, which a crash closes too. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "windows/win-guid.h"
#include "windows/win-sid.h"
#include "windows/win-wfp.h"

typedef enum WinNetJournalKind {
	WIN_NETJ_FILTER,
	WIN_NETJ_SUBLAYER,
	WIN_NETJ_PROVIDER,
	WIN_NETJ_LOOPBACK,
	_WIN_NETJ_KIND_MAX,
} WinNetJournalKind;

typedef struct WinNetJournalEntry {
	WinNetJournalKind kind;
	WinGuid key;                        /* filter, sublayer, provider */
	char sid[WIN_SID_STRING_MAX];       /* filter, loopback */
	char name[WIN_WFP_NAME_MAX];        /* filter */
} WinNetJournalEntry;

typedef struct WinNetJournal {
	WinNetJournalEntry *entries;
	size_t n;
} WinNetJournal;

extern const char WIN_NET_JOURNAL_HEADER[]; /* "ward-windows-net 1\n" */

/* The line for @e, with its '\n', into @buf. */
int win_net_journal_line(const WinNetJournalEntry *e, char *buf, size_t n);
/* The lines of a persistent plan: provider, sublayer, each filter. */
int win_net_journal_plan_lines(const WinWfpPlan *p, char **ret);
/* Parse; a truncated last line (a crash mid-write) is ignored; anything
 * else malformed is -EINVAL (an undo ward cannot read is reported, never
 * guessed). An empty text is an empty journal. */
int win_net_journal_parse(const char *text, WinNetJournal *ret);
void win_net_journal_done(WinNetJournal *j);

/* The order cleanup undoes entries in: loopback exemptions, then filters,
 * then sublayers, then providers (a sublayer or provider still holding a
 * filter cannot be deleted). Indices into @j in @ret (j->n of them). */
void win_net_cleanup_order(const WinNetJournal *j, size_t *ret);
/* The journal text that remains after cleanup: the header and the entries
 * whose @done is false, in their original order; NULL in @ret when none
 * remain (the file is deleted). */
int win_net_journal_rest(const WinNetJournal *j, const bool *done, char **ret);
