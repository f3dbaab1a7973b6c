/* ward log's filters, --since times and table rows (src/audit/audit-query.c). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "audit/audit-query.h"

static int64_t t(const char *s)
{
	int64_t v = -1;

	assert_int_equal(audit_parse_rfc3339(s, &v), 0);
	return v;
}

static void test_query_rfc3339(void **state)
{
	int64_t v;

	assert_true(t("1970-01-01T00:00:00Z") == 0);
	assert_true(t("2026-12-03T09:10:11.564Z") == 1796289011564LL);
	/* The same instant in other spellings. */
	assert_true(t("2026-12-03T10:10:11.564+01:00") == 1796289011564LL);
	assert_true(t("2026-12-03t09:10:11.564z") == 1796289011564LL);
	assert_true(t("2026-12-03 04:40:11.564-04:30") == 1796289011564LL);
	assert_true(t("2026-12-03T09:10:11.5641234Z") == 1796289011564LL);
	assert_true(t("2026-12-03") == t("2026-12-03T00:00:00Z"));
	assert_true(t("2024-02-29T00:00:00Z") == 1709164800000LL);
	/* What is not one. */
	const char *bad[] = { "",
			      "2026-12-03T09:10:11",      /* no offset */
			      "2026-12-03T09:10Z",        /* no seconds */
			      "2026-13-01T00:00:00Z",     /* month */
			      "2025-02-29T00:00:00Z",     /* not a leap year */
			      "2026-12-03T24:00:00Z",     /* hour */
			      "2026-12-03T09:10:11.Z",    /* empty fraction */
			      "2026-12-03T09:10:11+0100", /* offset without colon */
			      "2026-12-03T09:10:11Zjunk", "26-12-03", "2026-12-3", "10m" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(audit_parse_rfc3339(bad[i], &v), -EINVAL);
}

static void test_query_since_relative(void **state)
{
	const int64_t now = 1796289011564LL;
	int64_t v;

	assert_int_equal(audit_parse_since("90s", now, &v), 0);
	assert_true(v == now - 90000);
	assert_int_equal(audit_parse_since("10m", now, &v), 0);
	assert_true(v == now - 600000);
	assert_int_equal(audit_parse_since("2h", now, &v), 0);
	assert_true(v == now - 7200000);
	assert_int_equal(audit_parse_since("7d", now, &v), 0);
	assert_true(v == now - 7 * 86400000LL);
	assert_int_equal(audit_parse_since("1w", now, &v), 0);
	assert_true(v == now - 7 * 86400000LL);
	assert_int_equal(audit_parse_since("0s", now, &v), 0);
	assert_true(v == now);
	assert_int_equal(audit_parse_since("2026-12-03T09:00:00Z", now, &v), 0);
	assert_true(v == t("2026-12-03T09:00:00Z"));
	const char *bad[] = { "", "m", "10", "10x", "10mm", "-5m", "1.5h", "yesterday", "10 m" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_true(audit_parse_since(bad[i], now, &v) < 0);
}

static cJSON *ev(const char *json)
{
	cJSON *o = cJSON_Parse(json);

	assert_non_null(o);
	return o;
}

static void test_query_filter(void **state)
{
	cJSON *start = ev("{\"v\":1,\"ts\":\"2026-12-03T09:00:00.000Z\",\"event\":\"start\","
			  "\"session\":\"9f1c2a7b4e0d3c55\"}");
	cJSON *net = ev("{\"v\":1,\"ts\":\"2026-12-03T09:05:00.000Z\",\"event\":\"net\","
			"\"session\":\"9f1c2a7b4e0d3c55\",\"verdict\":\"deny\"}");
	cJSON *other = ev("{\"v\":1,\"ts\":\"2026-12-03T09:10:00.000Z\",\"event\":\"exit\","
			  "\"session\":\"0000000000000001\"}");
	cJSON *nosess = ev("{\"v\":1,\"ts\":\"2026-12-03T09:10:00.000Z\",\"event\":\"net\"}");
	cJSON *badts = ev("{\"v\":1,\"ts\":\"later\",\"event\":\"net\"}");
	char *evs[] = { (char *)"net", (char *)"exit", NULL };
	AuditFilter f = {};

	/* No filter: everything. */
	assert_true(audit_filter_match(&f, start));
	assert_true(audit_filter_match(&f, badts));
	/* --session: the id or a prefix; an event without one never. */
	f.session = "9f1c2a7b4e0d3c55";
	assert_true(audit_filter_match(&f, start));
	assert_true(audit_filter_match(&f, net));
	assert_false(audit_filter_match(&f, other));
	assert_false(audit_filter_match(&f, nosess));
	f.session = "9f1c";
	assert_true(audit_filter_match(&f, net));
	f.session = "9f1c2a7b4e0d3c55ff";
	assert_false(audit_filter_match(&f, net));
	f.session = NULL;
	/* --event: any of the names. */
	f.events = evs;
	assert_false(audit_filter_match(&f, start));
	assert_true(audit_filter_match(&f, net));
	assert_true(audit_filter_match(&f, other));
	f.events = NULL;
	/* --since: at or after; a line without a valid time is not "after". */
	f.has_since = true;
	f.since_ms = t("2026-12-03T09:05:00Z");
	assert_false(audit_filter_match(&f, start));
	assert_true(audit_filter_match(&f, net));
	assert_true(audit_filter_match(&f, other));
	assert_false(audit_filter_match(&f, badts));
	/* All together. */
	f.session = "9f1c";
	f.events = evs;
	assert_true(audit_filter_match(&f, net));
	assert_false(audit_filter_match(&f, other));
	cJSON_Delete(start);
	cJSON_Delete(net);
	cJSON_Delete(other);
	cJSON_Delete(nosess);
	cJSON_Delete(badts);
}

static void test_query_events_known(void **state)
{
	const char *names[] = { "start", "exit",    "net",     "error",  "quarantine",
				"apply", "undo",    "discard", "recover" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_true(audit_event_known(names[i]));
		assert_non_null(strstr(audit_event_names, names[i]));
	}
	assert_false(audit_event_known("Start"));
	assert_false(audit_event_known(""));
	assert_false(audit_event_known("net_deny"));
}

static void row_is(const char *json, const char *want)
{
	cJSON *o = ev(json);
	char *row = audit_format_row(o);

	assert_non_null(row);
	assert_string_equal(row, want);
	free(row);
	cJSON_Delete(o);
}

static void test_query_rows(void **state)
{
	row_is("{\"v\":1,\"ts\":\"2026-12-03T09:00:00.000Z\",\"event\":\"start\",\"session\":"
	       "\"9f1c2a7b4e0d3c55\",\"argv\":[\"sh\",\"-c\",\"echo 'hi'\"],\"workspace\":\"/w\","
	       "\"tier\":2,\"network\":\"proxy\",\"cow\":true,\"degraded\":[\"x\"]}",
	       "2026-12-03T09:00:00.000Z 9f1c2a7b4e0d3c55 start      tier 2, net proxy, cow, 1 "
	       "degraded, in /w: sh -c 'echo '\\''hi'\\'''");
	row_is("{\"v\":1,\"ts\":\"2026-12-03T09:00:01.000Z\",\"event\":\"exit\",\"session\":"
	       "\"9f1c2a7b4e0d3c55\",\"exit_code\":137,\"status\":null,\"signal\":9,"
	       "\"timed_out\":true,\"duration_ms\":1500,\"events_lost\":2}",
	       "2026-12-03T09:00:01.000Z 9f1c2a7b4e0d3c55 exit       exit 137 (signal 9) in 1500 ms, "
	       "timed out, 2 event(s) lost");
	row_is("{\"v\":1,\"ts\":\"2026-12-03T09:00:00.500Z\",\"event\":\"net\",\"session\":"
	       "\"9f1c2a7b4e0d3c55\",\"kind\":\"http-connect\",\"host\":\"evil.example\",\"port\":443,"
	       "\"verdict\":\"deny\",\"rule\":\"*.example\",\"list\":\"network.deny\"}",
	       "2026-12-03T09:00:00.500Z 9f1c2a7b4e0d3c55 net        deny evil.example:443 "
	       "(http-connect) rule *.example in network.deny");
	row_is("{\"v\":1,\"ts\":\"2026-12-03T09:00:00.000Z\",\"event\":\"error\",\"session\":"
	       "\"9f1c2a7b4e0d3c55\",\"step\":\"policy\",\"error\":\"Invalid policy\"}",
	       "2026-12-03T09:00:00.000Z 9f1c2a7b4e0d3c55 error      policy: Invalid policy");
	row_is("{\"v\":1,\"ts\":\"2026-12-03T09:00:00.000Z\",\"event\":\"quarantine\",\"session\":"
	       "\"9f1c2a7b4e0d3c55\",\"path\":\"sub/.git\",\"reason\":\"a protected name\","
	       "\"action\":\"moved\",\"to\":\"/q/sub/.git\"}",
	       "2026-12-03T09:00:00.000Z 9f1c2a7b4e0d3c55 quarantine moved sub/.git (a protected "
	       "name) to /q/sub/.git");
	/* No session, an event this ward does not know: its fields. */
	row_is("{\"v\":1,\"ts\":\"2026-12-03T09:00:00.000Z\",\"event\":\"future\",\"x\":1}",
	       "2026-12-03T09:00:00.000Z -                future     {\"x\":1}");
}

/* Text from the log is the sandbox's (argv, host names): no escape
 * sequence, control character, bidi override or invalid UTF-8 reaches the
 * terminal. */
static void test_query_rows_escape(void **state)
{
	row_is("{\"ts\":\"2026-12-03T09:00:00.000Z\",\"event\":\"net\",\"session\":\"s\","
	       "\"verdict\":\"deny\",\"host\":\"a\\u001b]0;pwned\\u0007b\\u009b\\u202e\\u00e9\","
	       "\"port\":1}",
	       "2026-12-03T09:00:00.000Z s                net        deny "
	       "a\\x1b]0;pwned\\x07b\\x9b\\u202e\xc3\xa9:1");
	row_is("{\"ts\":\"2026-12-03T09:00:00.000Z\",\"event\":\"start\",\"session\":\"s\","
	       "\"argv\":[\"x\\ny\",\"\\u001b[2J\"]}",
	       "2026-12-03T09:00:00.000Z s                start      : 'x\\ny' '\\x1b[2J'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_rfc3339),
		cmocka_unit_test(test_query_since_relative),
		cmocka_unit_test(test_query_filter),
		cmocka_unit_test(test_query_events_known),
		cmocka_unit_test(test_query_rows),
		cmocka_unit_test(test_query_rows_escape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
