/* The Windows privileged helper's request format and policy check: only
 * the exact format parses, only what the run's policy sent to the helper
 * is allowed. Runs natively and, cross-compiled, under Wine. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "windows/win-helper-proto.h"

#define RUN "00000000000000aa"
#define PKG "S-1-15-2-1-2-3-4-5-6-7"
#define REQ(op, run, sid, path) "ward-helper 1\nop " op "\nrun " run "\nsid " sid "\npath " path "\nend\n"

static int parse(const char *s, WinHelperRequest *r)
{
	char why[256];

	return win_helper_parse(s, strlen(s), r, why, sizeof(why));
}

static void test_helper_parse_valid(void **state)
{
	WinHelperRequest r;
	char *back = NULL;
	const char *s = REQ("grant-read-exec", RUN, PKG, "C:\\Program Files\\Git");

	(void)state;
	assert_int_equal(parse(s, &r), 0);
	assert_int_equal(r.op, WIN_HELPER_GRANT_READ_EXEC);
	assert_string_equal(r.run_id, RUN);
	assert_string_equal(r.sid, PKG);
	assert_string_equal(r.path, "C:\\Program Files\\Git");
	assert_int_equal(win_helper_format(&r, &back), 0);
	assert_string_equal(back, s);
	free(back);
	win_helper_request_done(&r);
	assert_int_equal(parse(REQ("revoke", RUN, "S-1-15-3-1024-1-2-3-4-5-6-7-8", "C:\\Windows"), &r),
			 0);
	win_helper_request_done(&r);
}

static void test_helper_parse_rejects(void **state)
{
	static const char *const bad[] = {
		"",
		"ward-helper 2\nop revoke\nrun " RUN "\nsid " PKG "\npath C:\\x\nend\n",
		REQ("grant-write", RUN, PKG, "C:\\x"),
		REQ("grant-read ", RUN, PKG, "C:\\x"),
		REQ("grant-read", "00000000000000AA", PKG, "C:\\x"),
		REQ("grant-read", "0000000000000aa", PKG, "C:\\x"),
		REQ("grant-read", RUN, "S-1-1-0", "C:\\x"),            /* Everyone */
		REQ("grant-read", RUN, "S-1-5-32-545", "C:\\x"),       /* Users */
		REQ("grant-read", RUN, "S-1-5-21-1-2-3-1001", "C:\\x"), /* a user */
		REQ("grant-read", RUN, "S-1-15-2-1", "C:\\x"),         /* all packages */
		REQ("grant-read", RUN, "S-1-15-2-2", "C:\\x"),
		REQ("grant-read", RUN, "S-1-15-2-01-2", "C:\\x"),      /* not canonical */
		REQ("grant-read", RUN, PKG, "C:/x"),                   /* not normalized */
		REQ("grant-read", RUN, PKG, "C:\\x\\"),
		REQ("grant-read", RUN, PKG, "C:\\x\\..\\Windows"),
		REQ("grant-read", RUN, PKG, "c:\\x"),
		REQ("grant-read", RUN, PKG, "x"),
		REQ("grant-read", RUN, PKG, "C:\\x:stream"),
		REQ("grant-read", RUN, PKG, "\\\\?\\C:\\x"),
		"ward-helper 1\nop revoke\nsid " PKG "\nrun " RUN "\npath C:\\x\nend\n", /* order */
		"ward-helper 1\nop revoke\nop revoke\nrun " RUN "\nsid " PKG "\npath C:\\x\nend\n",
		"ward-helper 1\r\nop revoke\r\nrun " RUN "\r\nsid " PKG "\r\npath C:\\x\r\nend\r\n",
		"ward-helper 1\nop revoke\nrun " RUN "\nsid " PKG "\npath C:\\x\nend",  /* no LF */
		"ward-helper 1\nop revoke\nrun " RUN "\nsid " PKG "\npath C:\\x\nend\n\n",
		"ward-helper 1\nop  revoke\nrun " RUN "\nsid " PKG "\npath C:\\x\nend\n",
	};
	WinHelperRequest r;
	char why[256], big[WIN_HELPER_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &r) != -EINVAL)
			printf("# accepted: case %zu\n", i);
		assert_int_equal(parse(bad[i], &r), -EINVAL);
	}
	/* A NUL inside a line. */
	assert_int_equal(win_helper_parse("ward-helper 1\nop re\0voke\n", 25, &r, why, sizeof(why)),
			 -EINVAL);
	memset(big, 'a', sizeof(big));
	assert_int_equal(win_helper_parse(big, sizeof(big), &r, why, sizeof(why)), -E2BIG);
}

static void test_helper_allow(void **state)
{
	static const WinHelperGrant grants[] = { { "C:\\Program Files\\tools", false },
						 { "C:\\Program Files\\Git", true } };
	WinHelperPolicy p = { .run_id = RUN, .package_sid = PKG, .grants = grants, .n_grants = 2 };
	WinHelperRequest r;
	char why[256];

	(void)state;
	assert_int_equal(parse(REQ("grant-read", RUN, PKG, "C:\\Program Files\\tools"), &r), 0);
	assert_int_equal(win_helper_allow(&p, &r, why, sizeof(why)), 0);
	win_helper_request_done(&r);
	/* Read-exec only where the policy said fs.read_exec. */
	assert_int_equal(parse(REQ("grant-read-exec", RUN, PKG, "C:\\Program Files\\tools"), &r), 0);
	assert_int_equal(win_helper_allow(&p, &r, why, sizeof(why)), -EPERM);
	win_helper_request_done(&r);
	assert_int_equal(parse(REQ("grant-read-exec", RUN, PKG, "C:\\PROGRAM FILES\\git"), &r), 0);
	assert_int_equal(win_helper_allow(&p, &r, why, sizeof(why)), 0);
	win_helper_request_done(&r);
	/* Not the path itself: a parent, a child, a sibling. */
	static const char *const paths[] = { "C:\\Program Files", "C:\\Program Files\\tools\\bin",
					     "C:\\Program Files\\toolsx", "C:\\Windows" };
	for (size_t i = 0; i < 4; i++) {
		char buf[512];

		snprintf(buf, sizeof(buf), REQ("grant-read", RUN, PKG, "%s"), paths[i]);
		assert_int_equal(parse(buf, &r), 0);
		assert_int_equal(win_helper_allow(&p, &r, why, sizeof(why)), -EPERM);
		win_helper_request_done(&r);
	}
	/* Another run, another package. */
	assert_int_equal(parse(REQ("revoke", "00000000000000bb", PKG, "C:\\Program Files\\tools"), &r),
			 0);
	assert_int_equal(win_helper_allow(&p, &r, why, sizeof(why)), -EPERM);
	win_helper_request_done(&r);
	assert_int_equal(parse(REQ("revoke", RUN, "S-1-15-2-9-9", "C:\\Program Files\\tools"), &r), 0);
	assert_int_equal(win_helper_allow(&p, &r, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "S-1-15-2-9-9"));
	win_helper_request_done(&r);
}

/* @cur with @op for @sid applied, as SDDL. */
static char *changed(const char *cur, WinHelperOp op, const char *sid)
{
	WinHelperChange c;
	char *s = NULL;

	win_helper_change(op, sid, &c);
	assert_int_equal(win_acl_change_sddl(cur, &c.chg, &s), 0);
	return s;
}

static void test_helper_change(void **state)
{
	/* An explicit ACE of the run's SID left over, another SID's, inherited ones. */
	static const char cur[] = "D:AI(A;OICI;FA;;;" PKG ")(A;;FR;;;S-1-15-2-9-9)"
				  "(A;OICIID;FR;;;" PKG ")(A;OICIID;FA;;;BA)";
	static const char inherited[] =
		"(A;OICIID;0x120089;;;" PKG ")(A;OICIID;0x1f01ff;;;S-1-5-32-544)";
	WinHelperChange c;
	char *s;

	(void)state;
	win_helper_change(WIN_HELPER_GRANT_READ, PKG, &c);
	assert_non_null(c.chg.add);
	assert_int_equal(c.chg.n_add, 1);
	assert_int_equal(c.chg.add->type, WIN_ACE_ALLOW);
	assert_int_equal(c.chg.add->flags, WIN_ACE_OI | WIN_ACE_CI);
	assert_int_equal(c.chg.add->mask, WIN_FILE_READ);
	assert_string_equal(c.chg.add->sid, PKG);
	assert_string_equal(c.chg.remove_sids[0], PKG);
	assert_null(c.chg.remove_sids[1]);
	win_helper_change(WIN_HELPER_GRANT_READ_EXEC, PKG, &c);
	assert_int_equal(c.chg.add->mask, WIN_FILE_READ_EXEC);
	win_helper_change(WIN_HELPER_REVOKE, PKG, &c);
	assert_null(c.chg.add);
	assert_int_equal(c.chg.n_add, 0);
	assert_string_equal(c.chg.remove_sids[0], PKG);
	assert_null(c.chg.remove_sids[1]);

	/* The stale ACE is replaced, not added to; others' and inherited ones stay. */
	s = changed(cur, WIN_HELPER_GRANT_READ, PKG);
	assert_non_null(strstr(s, "(A;OICI;0x120089;;;" PKG ")"));
	assert_null(strstr(s, "(A;OICI;0x1f01ff;;;" PKG ")"));
	assert_non_null(strstr(s, "(A;;0x120089;;;S-1-15-2-9-9)"));
	assert_non_null(strstr(s, inherited));
	free(s);
	s = changed(cur, WIN_HELPER_GRANT_READ_EXEC, PKG);
	assert_non_null(strstr(s, "(A;OICI;0x1200a9;;;" PKG ")"));
	assert_null(strstr(s, "0x1f01ff;;;" PKG ")"));
	free(s);
	s = changed(cur, WIN_HELPER_REVOKE, PKG);
	assert_string_equal(s, "D:AI(A;;0x120089;;;S-1-15-2-9-9)"
			       "(A;OICIID;0x120089;;;" PKG ")(A;OICIID;0x1f01ff;;;S-1-5-32-544)");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helper_parse_valid),
		cmocka_unit_test(test_helper_parse_rejects),
		cmocka_unit_test(test_helper_allow),
		cmocka_unit_test(test_helper_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
