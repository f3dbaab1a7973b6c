/* Putting the network walls up, proving them, taking them down, and
 * `ward.exe cleanup`: portable, through WinNetApi.
 *
 * Fail closed: a missing API, a failed call, or a filter that reads back
 * different from the plan (or not at all) refuses, with the step named in
 * @why, and leaves nothing: a dynamic session is closed (Windows deletes
 * what it added), a persistent plan's filters are deleted again, a
 * loopback exemption is taken back. */
#pragma once

#include <stddef.h>

#include "windows/win-net-api.h"
#include "windows/win-wfp.h"

typedef struct WinWalls {
	void *engine;        /* the session: dynamic filters live while it is open */
} WinWalls;

/* Add the plan's provider, sublayer and filters in one transaction, then
 * read each filter back and compare. A persistent plan is journaled first. */
int win_walls_up(const WinNetApi *api, const WinWfpPlan *p, WinWalls *ret, char *why,
		 size_t n_why);
/* Whether the walls can go up, changing nothing: a dynamic session, one
 * transaction with the provider, the sublayer and every filter added, then
 * aborted. 0, or the refusal with the call named in @why (the engine cannot
 * be opened, adding is denied, an API is missing). A run's plan step uses
 * it: what cannot be held is known before --strict decides and before the
 * host changes. A success here is no proof: win_walls_up() reads back. */
int win_walls_try(const WinNetApi *api, const WinWfpPlan *p, char *why, size_t n_why);
/* Whether a persistent plan's filters are in place as planned, changing
 * nothing: a plain session, each filter read back by its key and compared
 * (win_wfp_filter_check()). 0, or the refusal with the call and the filter
 * named in @why: no engine, a filter missing, different or unreadable.
 * The sandbox-user tier checks ward-setup.exe's walls on the offline user
 * this way before every run. */
int win_walls_verify(const WinNetApi *api, const WinWfpPlan *p, char *why, size_t n_why);
/* Close the session (a dynamic plan's filters go with it). */
void win_walls_down(const WinNetApi *api, WinWalls *w);

/* Add @sid to the loopback exemptions (journaled first), and read the list
 * back: it must hold @sid and every SID it held before. */
int win_loopback_exempt(const WinNetApi *api, const char *sid, char *why, size_t n_why);
/* Take @sid out again and drop its journal line; read back. */
int win_loopback_unexempt(const WinNetApi *api, const char *sid, char *why, size_t n_why);

typedef struct WinCleanupReport {
	size_t removed;      /* entries undone (or found already gone) */
	size_t failed;       /* entries left in the journal */
	char why[256];       /* the first failure */
} WinCleanupReport;

/* Undo every entry of the network journal (win_net_cleanup_order); an
 * entry is done when its object is deleted or already absent AND a read
 * back confirms it (a filter: get-by-key says not found; a loopback SID:
 * the list no longer holds it). What is not done stays in the journal.
 * 0 when everything was removed, -EBUSY when something stayed, another
 * -errno when the journal cannot be read. */
int win_net_cleanup(const WinNetApi *api, WinCleanupReport *ret);
