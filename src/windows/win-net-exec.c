/* The network walls through WinNetApi: add, read back, refuse on any
 * difference; the loopback exemption; `ward.exe cleanup`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-net-exec.h"
#include "windows/win-net-journal.h"
#include "windows/win-net.h"

/* Delete what a persistent plan added (best effort: the journal keeps
 * whatever stays, for cleanup). */
static void persistent_undo(const WinNetApi *api, void *engine, const WinWfpPlan *p)
{
	for (size_t i = 0; i < p->n; i++)
		(void)api->wfp_delete_filter(api->ctx, engine, &p->filters[i].key);
}

static int fail(char *why, size_t n_why, int r, const char *step, const char *detail)
{
	char d[256];

	snprintf(d, sizeof(d), "%s", detail && *detail ? detail : strerror(-r));
	snprintf(why, n_why, "network walls: %s: %s", step, d);
	return r == -ENOSYS ? r : (r < 0 ? r : -EPERM);
}

/* Begin a transaction and add the provider, the sublayer and every
 * filter; on failure the transaction is aborted (nothing added) and @why
 * names the call. The engine stays open either way. */
static int add_all(const WinNetApi *api, void *engine, const WinWfpPlan *p, char *why,
		   size_t n_why)
{
	char detail[256] = "";
	int r;

	r = api->wfp_begin(api->ctx, engine, detail, sizeof(detail));
	if (r < 0)
		return fail(why, n_why, r, "FwpmTransactionBegin0", detail);
	r = api->wfp_add_provider(api->ctx, engine, p, detail, sizeof(detail));
	if (r < 0) {
		fail(why, n_why, r, "FwpmProviderAdd0", detail);
		goto abort;
	}
	r = api->wfp_add_sublayer(api->ctx, engine, p, detail, sizeof(detail));
	if (r < 0) {
		fail(why, n_why, r, "FwpmSubLayerAdd0", detail);
		goto abort;
	}
	for (size_t i = 0; i < p->n; i++) {
		r = api->wfp_add_filter(api->ctx, engine, p, &p->filters[i], detail, sizeof(detail));
		if (r < 0) {
			char step[64];

			snprintf(step, sizeof(step), "FwpmFilterAdd0 %s", p->filters[i].name);
			fail(why, n_why, r, step, detail);
			goto abort;
		}
	}
	return 0;
abort:
	api->wfp_abort(api->ctx, engine);
	return r == -ENOSYS ? r : -EPERM;
}

int win_walls_try(const WinNetApi *api, const WinWfpPlan *p, char *why, size_t n_why)
{
	void *engine = NULL;
	char detail[256] = "";
	int r;

	if (p->n == 0 || p->persistent)
		return fail(why, n_why, -EINVAL, "plan", "a trial is for a dynamic plan's filters");
	r = api->wfp_open(api->ctx, true, &engine, detail, sizeof(detail));
	if (r < 0)
		return fail(why, n_why, r, "FwpmEngineOpen0", detail);
	r = add_all(api, engine, p, why, n_why);
	if (r == 0)
		api->wfp_abort(api->ctx, engine);
	api->wfp_close(api->ctx, engine);
	return r;
}

int win_walls_up(const WinNetApi *api, const WinWfpPlan *p, WinWalls *ret, char *why,
		 size_t n_why)
{
	void *engine = NULL;
	char detail[256] = "";
	int r;

	ret->engine = NULL;
	if (p->n == 0)
		return fail(why, n_why, -EINVAL, "plan", "no filters");
	if (p->persistent) {
		_cleanup_free_ char *lines = NULL;

		r = win_net_journal_plan_lines(p, &lines);
		if (r < 0)
			return fail(why, n_why, r, "journal", NULL);
		r = api->journal_append(api->ctx, lines);
		if (r < 0)
			return fail(why, n_why, r, "journal", NULL);
	}
	r = api->wfp_open(api->ctx, !p->persistent, &engine, detail, sizeof(detail));
	if (r < 0)
		return fail(why, n_why, r, "FwpmEngineOpen0", detail);
	r = add_all(api, engine, p, why, n_why);
	if (r < 0) {
		api->wfp_close(api->ctx, engine);
		return r;
	}
	r = api->wfp_commit(api->ctx, engine, detail, sizeof(detail));
	if (r < 0) {
		fail(why, n_why, r, "FwpmTransactionCommit0", detail);
		goto abort;
	}
	/* Read back: a success proves nothing until the engine says so. */
	for (size_t i = 0; i < p->n; i++) {
		WinWfpFilter seen;
		char step[64];

		snprintf(step, sizeof(step), "FwpmFilterGetByKey0 %s", p->filters[i].name);
		memset(&seen, 0, sizeof(seen));
		r = api->wfp_get_filter(api->ctx, engine, &p->filters[i].key, &seen, detail,
					sizeof(detail));
		if (r == -ENOENT)
			snprintf(detail, sizeof(detail), "the filter added is not there");
		if (r < 0) {
			fail(why, n_why, r, step, detail);
			goto undo;
		}
		r = win_wfp_filter_check(&p->filters[i], &seen, detail, sizeof(detail));
		if (r < 0) {
			fail(why, n_why, r, "read-back", detail);
			goto undo;
		}
	}
	ret->engine = engine;
	return 0;

abort:
	api->wfp_abort(api->ctx, engine);
	api->wfp_close(api->ctx, engine);
	return r == -ENOSYS ? r : -EPERM;
undo:
	if (p->persistent)
		persistent_undo(api, engine, p);
	api->wfp_close(api->ctx, engine);
	return -EPERM;
}

int win_walls_verify(const WinNetApi *api, const WinWfpPlan *p, char *why, size_t n_why)
{
	void *engine = NULL;
	char detail[256] = "";
	int r;

	if (p->n == 0 || !p->persistent)
		return fail(why, n_why, -EINVAL, "plan", "not a persistent plan");
	r = api->wfp_open(api->ctx, false, &engine, detail, sizeof(detail));
	if (r < 0)
		return fail(why, n_why, r, "FwpmEngineOpen0", detail);
	for (size_t i = 0; i < p->n; i++) {
		WinWfpFilter seen;
		char step[64];

		snprintf(step, sizeof(step), "FwpmFilterGetByKey0 %s", p->filters[i].name);
		memset(&seen, 0, sizeof(seen));
		detail[0] = 0;
		r = api->wfp_get_filter(api->ctx, engine, &p->filters[i].key, &seen, detail,
					sizeof(detail));
		if (r == -ENOENT)
			snprintf(detail, sizeof(detail), "not there (run ward-setup.exe again)");
		if (r >= 0 && (r = win_wfp_filter_check(&p->filters[i], &seen, detail,
							 sizeof(detail))) < 0)
			snprintf(step, sizeof(step), "read-back %s", p->filters[i].name);
		if (r < 0) {
			api->wfp_close(api->ctx, engine);
			fail(why, n_why, r, step, detail);
			return r == -ENOSYS ? r : -EPERM;
		}
	}
	api->wfp_close(api->ctx, engine);
	return 0;
}

void win_walls_down(const WinNetApi *api, WinWalls *w)
{
	if (w->engine)
		api->wfp_close(api->ctx, w->engine);
	w->engine = NULL;
}

static bool holds(char *const *l, const char *sid)
{
	for (; l && *l; l++)
		if (strcasecmp(*l, sid) == 0)
			return true;
	return false;
}

int win_loopback_exempt(const WinNetApi *api, const char *sid, char *why, size_t n_why)
{
	_cleanup_(strv_freep) char **before = NULL, **want = NULL, **after = NULL;
	WinNetJournalEntry e = { .kind = WIN_NETJ_LOOPBACK };
	char line[WIN_SID_STRING_MAX + 16], detail[256] = "";
	int r;

	if (win_sid_normalize(sid, e.sid) < 0)
		return fail(why, n_why, -EINVAL, "loopback exemption", "not a SID");
	r = api->loopback_get(api->ctx, &before, detail, sizeof(detail));
	if (r < 0)
		return fail(why, n_why, r, "NetworkIsolationGetAppContainerConfig", detail);
	r = win_loopback_with(before, e.sid, &want);
	if (r < 0)
		return fail(why, n_why, r, "loopback exemption", NULL);
	if ((r = win_net_journal_line(&e, line, sizeof(line))) < 0 ||
	    (r = api->journal_append(api->ctx, line)) < 0)
		return fail(why, n_why, r, "journal", NULL);
	r = api->loopback_set(api->ctx, want, detail, sizeof(detail));
	if (r < 0)
		return fail(why, n_why, r, "NetworkIsolationSetAppContainerConfig", detail);
	r = api->loopback_get(api->ctx, &after, detail, sizeof(detail));
	if (r < 0)
		return fail(why, n_why, r, "NetworkIsolationGetAppContainerConfig", detail);
	if (!holds(after, e.sid))
		return fail(why, n_why, -EPERM, "read-back",
			    "the loopback exemption list does not hold the run's SID");
	for (char **s = before; s && *s; s++)
		if (!holds(after, *s))
			return fail(why, n_why, -EPERM, "read-back",
				    "the loopback exemption list lost another application's SID");
	return 0;
}

/* Drop the journal's loopback lines for @sid (the rest stays as it was). */
static int journal_forget_loopback(const WinNetApi *api, const char *sid)
{
	_cleanup_free_ char *text = NULL, *rest = NULL;
	_cleanup_free_ bool *done = NULL;
	WinNetJournal j;
	int r;

	r = api->journal_read(api->ctx, &text);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = win_net_journal_parse(text, &j);
	if (r < 0)
		return r;
	done = calloc(j.n + 1, sizeof(bool));
	if (!done) {
		win_net_journal_done(&j);
		return -ENOMEM;
	}
	for (size_t i = 0; i < j.n; i++)
		done[i] = j.entries[i].kind == WIN_NETJ_LOOPBACK && strcasecmp(j.entries[i].sid, sid) == 0;
	r = win_net_journal_rest(&j, done, &rest);
	win_net_journal_done(&j);
	if (r < 0)
		return r;
	return api->journal_replace(api->ctx, rest);
}

static int unexempt(const WinNetApi *api, const char *sid, char *detail, size_t n)
{
	_cleanup_(strv_freep) char **before = NULL, **want = NULL, **after = NULL;
	char *const drop[] = { (char *)sid, NULL };
	int r;

	r = api->loopback_get(api->ctx, &before, detail, n);
	if (r < 0)
		return r;
	if (holds(before, sid)) {
		r = win_loopback_without(before, drop, &want);
		if (r < 0)
			return r;
		r = api->loopback_set(api->ctx, want, detail, n);
		if (r < 0)
			return r;
	}
	r = api->loopback_get(api->ctx, &after, detail, n);
	if (r < 0)
		return r;
	if (holds(after, sid)) {
		snprintf(detail, n, "%s is still in the loopback exemption list", sid);
		return -EPERM;
	}
	return 0;
}

int win_loopback_unexempt(const WinNetApi *api, const char *sid, char *why, size_t n_why)
{
	char s[WIN_SID_STRING_MAX], detail[256] = "";
	int r;

	if (win_sid_normalize(sid, s) < 0)
		return fail(why, n_why, -EINVAL, "loopback exemption", "not a SID");
	r = unexempt(api, s, detail, sizeof(detail));
	if (r < 0)
		return fail(why, n_why, r, "loopback exemption removal", detail);
	r = journal_forget_loopback(api, s);
	if (r < 0)
		return fail(why, n_why, r, "journal", NULL);
	return 0;
}

static int undo_entry(const WinNetApi *api, void **engine, const WinNetJournalEntry *e,
		      char *detail, size_t n)
{
	int r;

	if (e->kind == WIN_NETJ_LOOPBACK)
		return unexempt(api, e->sid, detail, n);
	if (!*engine) {
		r = api->wfp_open(api->ctx, false, engine, detail, n);
		if (r < 0) {
			*engine = NULL;
			return r;
		}
	}
	switch (e->kind) {
	case WIN_NETJ_FILTER: {
		WinWfpFilter seen;

		r = api->wfp_delete_filter(api->ctx, *engine, &e->key);
		if (r < 0 && r != -ENOENT)
			return r;
		r = api->wfp_get_filter(api->ctx, *engine, &e->key, &seen, detail, n);
		if (r == -ENOENT)
			return 0;
		if (r == 0) {
			snprintf(detail, n, "filter %.15s still there after its deletion", e->name);
			return -EPERM;
		}
		return r;
	}
	case WIN_NETJ_SUBLAYER:
		r = api->wfp_delete_sublayer(api->ctx, *engine, &e->key);
		return r == -ENOENT ? 0 : r;
	case WIN_NETJ_PROVIDER:
		r = api->wfp_delete_provider(api->ctx, *engine, &e->key);
		return r == -ENOENT ? 0 : r;
	case WIN_NETJ_LOOPBACK:
	case _WIN_NETJ_KIND_MAX:
	default:
		return -EINVAL;
	}
}

int win_net_cleanup(const WinNetApi *api, WinCleanupReport *ret)
{
	_cleanup_free_ char *text = NULL, *rest = NULL;
	_cleanup_free_ size_t *order = NULL;
	_cleanup_free_ bool *done = NULL;
	WinNetJournal j;
	void *engine = NULL;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = api->journal_read(api->ctx, &text);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		snprintf(ret->why, sizeof(ret->why), "the network journal cannot be read: %s",
			 strerror(-r));
		return r;
	}
	r = win_net_journal_parse(text, &j);
	if (r < 0) {
		snprintf(ret->why, sizeof(ret->why),
			 "the network journal is malformed; nothing was removed");
		return r;
	}
	order = calloc(j.n + 1, sizeof(size_t));
	done = calloc(j.n + 1, sizeof(bool));
	if (!order || !done) {
		win_net_journal_done(&j);
		return -ENOMEM;
	}
	win_net_cleanup_order(&j, order);
	for (size_t k = 0; k < j.n; k++) {
		const WinNetJournalEntry *e = &j.entries[order[k]];
		char detail[200] = "";

		r = undo_entry(api, &engine, e, detail, sizeof(detail));
		if (r == 0) {
			done[order[k]] = true;
			ret->removed++;
			continue;
		}
		ret->failed++;
		if (!*ret->why) {
			char line[WIN_SID_STRING_MAX + 128] = "";

			(void)win_net_journal_line(e, line, sizeof(line));
			line[strcspn(line, "\n")] = 0;
			snprintf(ret->why, sizeof(ret->why), "%s: %s", line,
				 *detail ? detail : strerror(-r));
		}
	}
	if (engine)
		api->wfp_close(api->ctx, engine);
	r = win_net_journal_rest(&j, done, &rest);
	win_net_journal_done(&j);
	if (r < 0)
		return r;
	r = api->journal_replace(api->ctx, rest);
	if (r < 0)
		return r;
	return ret->failed ? -EBUSY : 0;
}
