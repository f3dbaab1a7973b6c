/* The network walls against a fake WFP engine and loopback list that
 * record every call and can fail or lie at any step: every filter is read
 * back, any failure, missing API or lie refuses, and nothing stays behind;
 * the loopback exemption keeps the other applications' SIDs; `ward.exe
 * cleanup` removes exactly what the journal tracks, and keeps what it
 * could not remove. Runs natively and, cross-compiled, under Wine. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "common/strv.h"
#include "windows/win-net-exec.h"
#include "windows/win-net-journal.h"

#define PKG "S-1-15-2-1111111111-2222222222-3333333333-444444444-555555555-666666666-777777777"
#define OTHER "S-1-15-2-42"
#define USER "S-1-5-21-1-2-3-1001"
#define MAXF 64

typedef struct Fake {
	WinWfpFilter committed[MAXF]; /* the engine's filters */
	size_t n;
	WinWfpFilter pending[MAXF];   /* this transaction's */
	size_t n_pending;
	bool open, in_txn, dynamic;
	char **loopback;
	char *journal;
	const char *fail_at;          /* the call that fails */
	int fail_with;
	const char *lie_at;           /* "add_filter": success, nothing added;
	                               * "get_filter": a wider filter read back;
	                               * "loopback_set": success, nothing set;
	                               * "delete_filter": success, still there */
	size_t lie_filter;            /* which filter the get_filter lie is about */
	char **calls;
} Fake;

static Fake *F;

static void call(const char *name)
{
	assert_int_equal(strv_extend(&F->calls, name), 0);
}

static bool fails(const char *name, int *r)
{
	call(name);
	if (F->fail_at && strcmp(F->fail_at, name) == 0) {
		*r = F->fail_with;
		return true;
	}
	return false;
}

static int f_open(void *ctx, bool dynamic, void **ret, char *why, size_t n)
{
	int r;

	(void)ctx;
	if (fails("open", &r)) {
		snprintf(why, n, "error 1764");
		return r;
	}
	F->open = true;
	F->dynamic = dynamic;
	*ret = F;
	return 0;
}

static void f_close(void *ctx, void *e)
{
	(void)ctx;
	assert_ptr_equal(e, F);
	call("close");
	F->open = false;
	/* Windows deletes a dynamic session's objects with its handle. */
	if (F->dynamic)
		F->n = 0;
}

static int f_begin(void *ctx, void *e, char *why, size_t n)
{
	int r;

	(void)ctx, (void)e, (void)why, (void)n;
	if (fails("begin", &r))
		return r;
	F->in_txn = true;
	F->n_pending = 0;
	return 0;
}

static int f_commit(void *ctx, void *e, char *why, size_t n)
{
	int r;

	(void)ctx, (void)e, (void)why, (void)n;
	if (fails("commit", &r))
		return r;
	memcpy(F->committed + F->n, F->pending, F->n_pending * sizeof(WinWfpFilter));
	F->n += F->n_pending;
	F->in_txn = false;
	return 0;
}

static void f_abort(void *ctx, void *e)
{
	(void)ctx, (void)e;
	call("abort");
	F->in_txn = false;
	F->n_pending = 0;
}

static int f_add_provider(void *ctx, void *e, const WinWfpPlan *p, char *why, size_t n)
{
	int r;

	(void)ctx, (void)e, (void)p, (void)why, (void)n;
	assert_true(F->in_txn);
	return fails("add_provider", &r) ? r : 0;
}

static int f_add_sublayer(void *ctx, void *e, const WinWfpPlan *p, char *why, size_t n)
{
	int r;

	(void)ctx, (void)e, (void)p, (void)why, (void)n;
	assert_true(F->in_txn);
	return fails("add_sublayer", &r) ? r : 0;
}

static int f_add_filter(void *ctx, void *e, const WinWfpPlan *p, const WinWfpFilter *f, char *why,
			size_t n)
{
	int r;

	(void)ctx, (void)e, (void)p, (void)why, (void)n;
	assert_true(F->in_txn);
	if (fails("add_filter", &r))
		return r;
	if (F->lie_at && strcmp(F->lie_at, "add_filter") == 0)
		return 0;
	F->pending[F->n_pending++] = *f;
	return 0;
}

static WinWfpFilter *lookup(const WinGuid *key)
{
	for (size_t i = 0; i < F->n; i++)
		if (win_guid_equal(&F->committed[i].key, key))
			return &F->committed[i];
	return NULL;
}

static int f_get_filter(void *ctx, void *e, const WinGuid *key, WinWfpFilter *ret, char *why,
			size_t n)
{
	WinWfpFilter *f;
	int r;

	(void)ctx, (void)e, (void)why, (void)n;
	if (fails("get_filter", &r))
		return r;
	f = lookup(key);
	if (!f)
		return -ENOENT;
	*ret = *f;
	if (F->lie_at && strcmp(F->lie_at, "get_filter") == 0 && f == &F->committed[F->lie_filter])
		ret->n_cond = 1; /* e.g. the port condition silently dropped */
	return 0;
}

static int f_delete_filter(void *ctx, void *e, const WinGuid *key)
{
	WinWfpFilter *f;
	int r;

	(void)ctx, (void)e;
	if (fails("delete_filter", &r))
		return r;
	f = lookup(key);
	if (!f)
		return -ENOENT;
	if (F->lie_at && strcmp(F->lie_at, "delete_filter") == 0)
		return 0;
	*f = F->committed[--F->n];
	return 0;
}

static int f_delete_sublayer(void *ctx, void *e, const WinGuid *key)
{
	int r;

	(void)ctx, (void)e, (void)key;
	if (fails("delete_sublayer", &r))
		return r;
	/* FWP_E_IN_USE while ward's filters remain (another product's, which
	 * the fake gives no name, live in their own sublayer). */
	for (size_t i = 0; i < F->n; i++)
		if (F->committed[i].name[0])
			return -EBUSY;
	return 0;
}

static int f_delete_provider(void *ctx, void *e, const WinGuid *key)
{
	int r;

	(void)ctx, (void)e, (void)key;
	return fails("delete_provider", &r) ? r : 0;
}

static int f_loopback_get(void *ctx, char ***ret, char *why, size_t n)
{
	int r;

	(void)ctx, (void)why, (void)n;
	if (fails("loopback_get", &r))
		return r;
	*ret = F->loopback ? strv_copy(F->loopback) : calloc(1, sizeof(char *));
	return *ret ? 0 : -ENOMEM;
}

static int f_loopback_set(void *ctx, char *const *sids, char *why, size_t n)
{
	int r;

	(void)ctx, (void)why, (void)n;
	if (fails("loopback_set", &r))
		return r;
	if (F->lie_at && strcmp(F->lie_at, "loopback_set") == 0)
		return 0;
	strv_free(F->loopback);
	F->loopback = strv_copy(sids);
	return 0;
}

static int f_journal_read(void *ctx, char **ret)
{
	(void)ctx;
	call("journal_read");
	if (!F->journal)
		return -ENOENT;
	*ret = strdup(F->journal);
	return 0;
}

static int f_journal_append(void *ctx, const char *text)
{
	size_t a = F->journal ? strlen(F->journal) : 0;
	const char *h = a ? "" : WIN_NET_JOURNAL_HEADER;
	char *j;
	int r;

	(void)ctx;
	if (fails("journal_append", &r))
		return r;
	j = malloc(a + strlen(h) + strlen(text) + 1);
	assert_non_null(j);
	sprintf(j, "%s%s%s", a ? F->journal : "", h, text);
	free(F->journal);
	F->journal = j;
	return 0;
}

static int f_journal_replace(void *ctx, const char *text)
{
	(void)ctx;
	call("journal_replace");
	free(F->journal);
	F->journal = text ? strdup(text) : NULL;
	return 0;
}

static const WinNetApi fake_api = {
	.wfp_open = f_open,
	.wfp_close = f_close,
	.wfp_begin = f_begin,
	.wfp_commit = f_commit,
	.wfp_abort = f_abort,
	.wfp_add_provider = f_add_provider,
	.wfp_add_sublayer = f_add_sublayer,
	.wfp_add_filter = f_add_filter,
	.wfp_get_filter = f_get_filter,
	.wfp_delete_filter = f_delete_filter,
	.wfp_delete_sublayer = f_delete_sublayer,
	.wfp_delete_provider = f_delete_provider,
	.loopback_get = f_loopback_get,
	.loopback_set = f_loopback_set,
	.journal_read = f_journal_read,
	.journal_append = f_journal_append,
	.journal_replace = f_journal_replace,
};

static int setup(void **state)
{
	(void)state;
	F = calloc(1, sizeof(*F));
	return F ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	strv_free(F->calls);
	strv_free(F->loopback);
	free(F->journal);
	free(F);
	return 0;
}

static void plan(WinWfpPlan *p, bool persistent)
{
	WinWfpInput in = { .identity = persistent ? WIN_WFP_USER : WIN_WFP_PACKAGE,
			   .sid = persistent ? USER : PKG,
			   .proxy_port = persistent ? 0 : 3128,
			   .persistent = persistent };

	assert_int_equal(win_wfp_plan(&in, p), 0);
}

static bool called(const char *name)
{
	return strv_contains(F->calls, name);
}

static void test_walls_up_dynamic_read_back(void **state)
{
	WinWfpPlan p;
	WinWalls w;
	char why[512] = "";
	size_t gets = 0;

	(void)state;
	plan(&p, false);
	assert_int_equal(win_walls_up(&fake_api, &p, &w, why, sizeof(why)), 0);
	assert_true(F->dynamic);
	assert_int_equal(F->n, p.n);
	/* Each filter read back once; a dynamic session journals nothing. */
	for (char **c = F->calls; *c; c++)
		gets += strcmp(*c, "get_filter") == 0;
	assert_int_equal(gets, p.n);
	assert_null(F->journal);
	win_walls_down(&fake_api, &w);
	assert_false(F->open);
	assert_int_equal(F->n, 0);
}

static void refuses(const char *fail_at, int err, const char *lie_at, const char *step)
{
	WinWfpPlan p;
	WinWalls w;
	char why[512] = "";
	int r;

	F->fail_at = fail_at;
	F->fail_with = err;
	F->lie_at = lie_at;
	plan(&p, false);
	r = win_walls_up(&fake_api, &p, &w, why, sizeof(why));
	assert_true(r < 0);
	assert_null(w.engine);
	if (!strstr(why, step))
		printf("# expected '%s' in '%s'\n", step, why);
	assert_non_null(strstr(why, step));
	/* Nothing stays: the session is closed, so Windows drops its filters. */
	assert_false(F->open);
	assert_int_equal(F->n, 0);
	strv_free(F->calls);
	F->calls = NULL;
	F->fail_at = F->lie_at = NULL;
}

static void test_walls_fail_closed(void **state)
{
	(void)state;
	/* Wine's fwpuclnt: FwpmEngineOpen0 returns RPC_S_CANNOT_SUPPORT. */
	refuses("open", -EOPNOTSUPP, NULL, "FwpmEngineOpen0: error 1764");
	refuses("open", -ENOSYS, NULL, "FwpmEngineOpen0");
	refuses("begin", -EIO, NULL, "FwpmTransactionBegin0");
	refuses("add_provider", -EACCES, NULL, "FwpmProviderAdd0");
	refuses("add_sublayer", -EACCES, NULL, "FwpmSubLayerAdd0");
	refuses("add_filter", -EINVAL, NULL, "FwpmFilterAdd0 proxy-v4");
	refuses("commit", -EIO, NULL, "FwpmTransactionCommit0");
	refuses("get_filter", -ENOSYS, NULL, "FwpmFilterGetByKey0");
	/* Success reported, nothing done: the read-back finds no filter. */
	refuses(NULL, 0, "add_filter", "is not there");
	/* A filter that reads back wider than planned. */
	F->lie_filter = 0;
	refuses(NULL, 0, "get_filter", "read-back: filter proxy-v4");
}

/* The plan step's trial: every add is tried in a transaction that is then
 * aborted, so nothing is left; each failing call is named. */
static void test_walls_try_changes_nothing(void **state)
{
	const char *fail_at[] = { "open", "begin", "add_provider", "add_sublayer", "add_filter" };
	const char *step[] = { "FwpmEngineOpen0", "FwpmTransactionBegin0", "FwpmProviderAdd0",
			       "FwpmSubLayerAdd0", "FwpmFilterAdd0 proxy-v4" };
	WinWfpPlan p;
	char why[512] = "";

	(void)state;
	plan(&p, false);
	assert_int_equal(win_walls_try(&fake_api, &p, why, sizeof(why)), 0);
	assert_true(called("abort"));
	assert_false(called("commit"));
	assert_false(F->open);
	assert_int_equal(F->n, 0);
	assert_null(F->journal);
	for (size_t i = 0; i < sizeof(fail_at) / sizeof(*fail_at); i++) {
		strv_free(F->calls);
		F->calls = NULL;
		F->fail_at = fail_at[i];
		F->fail_with = -EACCES;
		why[0] = 0;
		assert_true(win_walls_try(&fake_api, &p, why, sizeof(why)) < 0);
		if (!strstr(why, step[i]))
			printf("# expected '%s' in '%s'\n", step[i], why);
		assert_non_null(strstr(why, step[i]));
		assert_false(F->open);
		assert_int_equal(F->n, 0);
	}
	/* A persistent plan is never tried: it is ward-setup.exe's. */
	plan(&p, true);
	F->fail_at = NULL;
	assert_true(win_walls_try(&fake_api, &p, why, sizeof(why)) < 0);
}

static void test_walls_persistent_journal_first(void **state)
{
	WinWfpPlan p;
	WinWalls w;
	WinNetJournal j;
	char why[512] = "";

	(void)state;
	plan(&p, true);
	assert_int_equal(win_walls_up(&fake_api, &p, &w, why, sizeof(why)), 0);
	assert_false(F->dynamic);
	/* Journaled before the engine was even opened. */
	assert_string_equal(F->calls[0], "journal_append");
	assert_int_equal(win_net_journal_parse(F->journal, &j), 0);
	assert_int_equal(j.n, p.n + 2);
	win_net_journal_done(&j);
	win_walls_down(&fake_api, &w);
	assert_int_equal(F->n, p.n); /* persistent: still there */

	/* A journal that cannot be written: nothing is added. */
	teardown(NULL);
	setup(NULL);
	F->fail_at = "journal_append";
	F->fail_with = -ENOSPC;
	assert_true(win_walls_up(&fake_api, &p, &w, why, sizeof(why)) < 0);
	assert_false(called("open"));
	assert_int_equal(F->n, 0);

	/* A lie at read-back: what was added is deleted again. */
	teardown(NULL);
	setup(NULL);
	F->lie_at = "get_filter";
	F->lie_filter = 4; /* tcp-v4: its protocol condition dropped */
	assert_true(win_walls_up(&fake_api, &p, &w, why, sizeof(why)) < 0);
	assert_int_equal(F->n, 0);
}

/* The sandbox-user tier's check of ward-setup.exe's walls: it reads
 * back, adds nothing, and refuses a missing, wider or unreadable filter
 * and a missing engine. */
static void test_walls_verify_reads_back(void **state)
{
	WinWfpPlan p, dyn;
	WinWalls w;
	char why[512] = "";
	size_t n;

	(void)state;
	plan(&p, true);
	/* Nothing there yet (setup never ran): refused, nothing added. */
	assert_int_equal(win_walls_verify(&fake_api, &p, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "ward-setup.exe"));
	assert_int_equal(F->n, 0);
	assert_int_equal(win_walls_up(&fake_api, &p, &w, why, sizeof(why)), 0);
	win_walls_down(&fake_api, &w);
	n = F->n;
	strv_free(F->calls);
	F->calls = NULL;
	assert_int_equal(win_walls_verify(&fake_api, &p, why, sizeof(why)), 0);
	assert_false(called("add_filter"));
	assert_false(called("journal_append"));
	assert_int_equal(F->n, n);
	assert_false(F->open);
	/* A filter that reads back wider: refused, the filter named. */
	F->lie_at = "get_filter";
	F->lie_filter = 4;
	assert_int_equal(win_walls_verify(&fake_api, &p, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, p.filters[4].name));
	assert_false(F->open);
	F->lie_at = NULL;
	/* No engine (Wine's 1764), a failed read: refused. */
	F->fail_at = "open";
	F->fail_with = -ENOSYS;
	assert_true(win_walls_verify(&fake_api, &p, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "FwpmEngineOpen0"));
	F->fail_at = "get_filter";
	F->fail_with = -EIO;
	assert_int_equal(win_walls_verify(&fake_api, &p, why, sizeof(why)), -EPERM);
	assert_false(F->open);
	/* Only a persistent plan is checked this way. */
	F->fail_at = NULL;
	plan(&dyn, false);
	assert_int_equal(win_walls_verify(&fake_api, &dyn, why, sizeof(why)), -EINVAL);
}

static void test_loopback_exempt_and_back(void **state)
{
	char why[512] = "";

	(void)state;
	assert_int_equal(strv_extend(&F->loopback, OTHER), 0);
	assert_int_equal(win_loopback_exempt(&fake_api, PKG, why, sizeof(why)), 0);
	assert_true(strv_contains(F->loopback, PKG));
	assert_true(strv_contains(F->loopback, OTHER));
	assert_non_null(strstr(F->journal, "loopback\t" PKG "\n"));
	assert_int_equal(win_loopback_unexempt(&fake_api, PKG, why, sizeof(why)), 0);
	assert_false(strv_contains(F->loopback, PKG));
	assert_true(strv_contains(F->loopback, OTHER));
	assert_null(F->journal); /* nothing left to undo */
}

static void test_loopback_fail_closed(void **state)
{
	char why[512] = "";

	(void)state;
	/* firewallapi.dll missing (Wine): refused, nothing journaled. */
	F->fail_at = "loopback_get";
	F->fail_with = -ENOSYS;
	assert_int_equal(win_loopback_exempt(&fake_api, PKG, why, sizeof(why)), -ENOSYS);
	assert_non_null(strstr(why, "NetworkIsolationGetAppContainerConfig"));
	assert_null(F->journal);
	/* Set reports success and changes nothing: the read-back refuses. */
	F->fail_at = NULL;
	F->lie_at = "loopback_set";
	assert_true(win_loopback_exempt(&fake_api, PKG, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "does not hold the run's SID"));
	/* Journaled before the attempt, so cleanup finds it either way. */
	assert_non_null(strstr(F->journal, "loopback\t" PKG));
	/* Set that drops another application's SID is refused too. */
	teardown(NULL);
	setup(NULL);
	assert_int_equal(strv_extend(&F->loopback, OTHER), 0);
	F->fail_at = "loopback_set";
	F->fail_with = -EACCES;
	assert_true(win_loopback_exempt(&fake_api, PKG, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "NetworkIsolationSetAppContainerConfig"));
}

static void test_cleanup_removes_tracked_only(void **state)
{
	WinWfpPlan p;
	WinWalls w;
	WinCleanupReport rep;
	WinWfpFilter foreign;
	char why[512] = "";

	(void)state;
	plan(&p, true);
	assert_int_equal(win_walls_up(&fake_api, &p, &w, why, sizeof(why)), 0);
	win_walls_down(&fake_api, &w);
	assert_int_equal(win_loopback_exempt(&fake_api, PKG, why, sizeof(why)), 0);
	assert_int_equal(strv_extend(&F->loopback, OTHER), 0);
	/* Someone else's filter: not in the journal, never touched. */
	memset(&foreign, 0, sizeof(foreign));
	win_guid_from_name("other", "product", &foreign.key);
	F->committed[F->n++] = foreign;

	assert_int_equal(win_net_cleanup(&fake_api, &rep), 0);
	assert_int_equal(rep.failed, 0);
	assert_int_equal(rep.removed, p.n + 3);
	assert_int_equal(F->n, 1);
	assert_true(win_guid_equal(&F->committed[0].key, &foreign.key));
	assert_false(strv_contains(F->loopback, PKG));
	assert_true(strv_contains(F->loopback, OTHER));
	assert_null(F->journal);
	assert_false(F->open);
	/* Again: nothing to do. */
	assert_int_equal(win_net_cleanup(&fake_api, &rep), 0);
	assert_int_equal(rep.removed, 0);
}

static void test_cleanup_keeps_what_stays(void **state)
{
	WinWfpPlan p;
	WinWalls w;
	WinCleanupReport rep;
	WinNetJournal j;
	char why[512] = "";

	(void)state;
	plan(&p, true);
	assert_int_equal(win_walls_up(&fake_api, &p, &w, why, sizeof(why)), 0);
	win_walls_down(&fake_api, &w);
	/* Deletion reported done, the filter still there: not done. */
	F->lie_at = "delete_filter";
	assert_int_equal(win_net_cleanup(&fake_api, &rep), -EBUSY);
	assert_int_equal(rep.failed, p.n + 1); /* the filters, and the sublayer in use */
	assert_non_null(strstr(rep.why, "still there"));
	assert_int_equal(win_net_journal_parse(F->journal, &j), 0);
	assert_int_equal(j.n, p.n + 1); /* the provider went, the rest stays */
	win_net_journal_done(&j);
	/* Next time it works: all gone. */
	F->lie_at = NULL;
	assert_int_equal(win_net_cleanup(&fake_api, &rep), 0);
	assert_int_equal(F->n, 0);
	assert_null(F->journal);

	/* WFP unavailable (Wine): everything stays, reported. */
	assert_int_equal(win_walls_up(&fake_api, &p, &w, why, sizeof(why)), 0);
	win_walls_down(&fake_api, &w);
	F->fail_at = "open";
	F->fail_with = -EOPNOTSUPP;
	assert_int_equal(win_net_cleanup(&fake_api, &rep), -EBUSY);
	assert_int_equal(rep.removed, 0);
	assert_int_equal(win_net_journal_parse(F->journal, &j), 0);
	assert_int_equal(j.n, p.n + 2);
	win_net_journal_done(&j);
	/* A malformed journal: nothing removed, nothing rewritten. */
	F->fail_at = NULL;
	free(F->journal);
	F->journal = strdup("ward-windows-net 1\nwhat\n");
	strv_free(F->calls);
	F->calls = NULL;
	assert_int_equal(win_net_cleanup(&fake_api, &rep), -EINVAL);
	assert_false(called("journal_replace"));
	assert_string_equal(F->journal, "ward-windows-net 1\nwhat\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_walls_up_dynamic_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walls_fail_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walls_try_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walls_persistent_journal_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walls_verify_reads_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loopback_exempt_and_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loopback_fail_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cleanup_removes_tracked_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cleanup_keeps_what_stays, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
