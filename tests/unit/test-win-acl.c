/* Windows plan layer: SDDL in and out, canonical merge, read-back check. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "windows/win-acl.h"

#define PKG "S-1-15-2-1-2-3-4-5-6-7"

static void test_win_acl_parse_aliases_and_format(void **state)
{
	WinAcl acl = { 0 };
	char *s;

	assert_int_equal(win_acl_parse_sddl("O:BAG:SYD:PAI(A;OICI;FA;;;SY)(A;OICIID;0x1200a9;;;BU)"
					    "(D;;FW;;;S-1-5-21-1-2-3-1001)S:(ML;;NW;;;LW)",
					    false, &acl), 0);
	assert_true(acl.protected_);
	assert_true(acl.auto_inherited);
	assert_int_equal(acl.n, 3);
	assert_string_equal(acl.aces[0].sid, "S-1-5-18");
	assert_int_equal(acl.aces[0].mask, WIN_FILE_ALL);
	assert_int_equal(acl.aces[0].flags, WIN_ACE_OI | WIN_ACE_CI);
	assert_int_equal(acl.aces[1].flags, WIN_ACE_OI | WIN_ACE_CI | WIN_ACE_ID);
	assert_string_equal(acl.aces[1].sid, "S-1-5-32-545");
	assert_int_equal(acl.aces[2].type, WIN_ACE_DENY);
	assert_int_equal(acl.aces[2].mask, 0x120116);
	s = win_acl_format_sddl(&acl, false);
	assert_string_equal(s, "D:PAI(A;OICI;0x1f01ff;;;S-1-5-18)(A;OICIID;0x1200a9;;;S-1-5-32-545)"
			       "(D;;0x120116;;;S-1-5-21-1-2-3-1001)");
	free(s);
	win_acl_done(&acl);

	/* The label part of the same descriptor. */
	assert_int_equal(win_acl_parse_sddl("O:BAD:(A;;FA;;;SY)S:(ML;OICI;NW;;;LW)", true, &acl), 0);
	assert_int_equal(acl.n, 1);
	assert_int_equal(acl.aces[0].type, WIN_ACE_LABEL);
	assert_string_equal(acl.aces[0].sid, "S-1-16-4096");
	s = win_acl_format_sddl(&acl, true);
	assert_string_equal(s, "S:(ML;OICI;0x1;;;S-1-16-4096)");
	free(s);
	win_acl_done(&acl);

	/* No D: part at all is an empty DACL; callback ACEs are kept verbatim. */
	assert_int_equal(win_acl_parse_sddl("O:BA", false, &acl), 0);
	assert_int_equal(acl.n, 0);
	win_acl_done(&acl);
	assert_int_equal(win_acl_parse_sddl("D:(XA;;FR;;;WD;(Member_of {SID(BA)}))(A;;FA;;;SY)",
					    false, &acl), 0);
	assert_int_equal(acl.n, 2);
	assert_int_equal(acl.aces[0].type, WIN_ACE_OTHER_ALLOW);
	s = win_acl_format_sddl(&acl, false);
	assert_string_equal(s, "D:(XA;;FR;;;WD;(Member_of {SID(BA)}))(A;;0x1f01ff;;;S-1-5-18)");
	free(s);
	win_acl_done(&acl);
}

static void test_win_acl_parse_refuses(void **state)
{
	static const char *const bad[] = {
		"D:(A;;FA;;;ZZ)",          /* unknown SID alias */
		"D:(A;;QQ;;;SY)",          /* unknown right */
		"D:(A;;FA;;SY)",           /* too few fields */
		"D:(A;XX;FA;;;SY)",        /* unknown flag */
		"D:(A;;FA;;;S-1-5-99999999999)",
		"D:(A;;FA;;;SY",           /* unterminated */
		"D:NO_ACCESS_CONTROL",     /* a NULL DACL */
		"D:(Q;;FA;;;SY)",          /* unknown type */
		"D:(A;;0x123456789;;;SY)",
	};
	WinAcl acl = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		print_message("# %s\n", bad[i]);
		assert_int_equal(win_acl_parse_sddl(bad[i], false, &acl), -EINVAL);
	}
}

static void test_win_acl_change_canonical(void **state)
{
	WinAcl cur = { 0 }, out = { 0 };
	WinAce add[2] = {
		{ .type = WIN_ACE_ALLOW, .flags = WIN_ACE_OI | WIN_ACE_CI, .mask = WIN_FILE_MODIFY,
		  .sid = PKG },
		{ .type = WIN_ACE_DENY, .flags = WIN_ACE_OI | WIN_ACE_CI, .mask = WIN_FILE_DENY_WRITE,
		  .sid = PKG },
	};
	char *sids[] = { PKG, NULL };
	WinAclChange chg = { .remove_sids = sids, .add = add, .n_add = 2 };
	char *s;

	/* A stale explicit ACE for the package goes, inherited ones stay. */
	assert_int_equal(win_acl_parse_sddl("D:AI(A;OICI;FA;;;SY)(A;;FR;;;" PKG ")(D;;FW;;;BG)"
					    "(A;OICIID;FR;;;" PKG ")(A;OICIID;FA;;;BA)",
					    false, &cur), 0);
	assert_false(win_acl_is_canonical(&cur));
	assert_int_equal(win_acl_apply_change(&cur, &chg, &out), 0);
	assert_true(win_acl_is_canonical(&out));
	s = win_acl_format_sddl(&out, false);
	assert_string_equal(s, "D:AI(D;OICI;0xd0156;;;" PKG ")(D;;0x120116;;;S-1-5-32-546)"
			       "(A;OICI;0x1301bf;;;" PKG ")(A;OICI;0x1f01ff;;;S-1-5-18)"
			       "(A;OICIID;0x120089;;;" PKG ")(A;OICIID;0x1f01ff;;;S-1-5-32-544)");
	free(s);

	/* What was set reads back as right. */
	{
		char why[128];

		assert_int_equal(win_acl_check(&out, &chg, why, sizeof(why)), 0);
	}
	win_acl_done(&out);
	win_acl_done(&cur);

	/* The same on SDDL text; a DACL ward does not understand is refused. */
	s = NULL;
	assert_int_equal(win_acl_change_sddl("D:AI(A;OICI;FA;;;SY)(A;;FR;;;" PKG ")(D;;FW;;;BG)"
					     "(A;OICIID;FR;;;" PKG ")(A;OICIID;FA;;;BA)",
					     &chg, &s), 0);
	assert_string_equal(s, "D:AI(D;OICI;0xd0156;;;" PKG ")(D;;0x120116;;;S-1-5-32-546)"
			       "(A;OICI;0x1301bf;;;" PKG ")(A;OICI;0x1f01ff;;;S-1-5-18)"
			       "(A;OICIID;0x120089;;;" PKG ")(A;OICIID;0x1f01ff;;;S-1-5-32-544)");
	free(s);
	s = NULL;
	assert_int_equal(win_acl_change_sddl("D:(A;;FR;;;NOTASID)", &chg, &s), -EINVAL);
	assert_null(s);
}

static void test_win_acl_check_catches_lies(void **state)
{
	WinAce add[1] = { { .type = WIN_ACE_ALLOW, .flags = WIN_ACE_OI | WIN_ACE_CI,
			    .mask = WIN_FILE_READ, .sid = PKG } };
	char *sids[] = { PKG, NULL };
	WinAclChange chg = { .remove_sids = sids, .add = add, .n_add = 1 };
	static const char *const seen[] = {
		/* The set "succeeded" and nothing changed. */
		"D:(A;OICI;FA;;;SY)",
		/* The right SID with a wider mask. */
		"D:(A;OICI;FA;;;" PKG ")",
		/* Without inheritance. */
		"D:(A;;FR;;;" PKG ")",
		/* An extra ACE for the package. */
		"D:(A;OICI;FR;;;" PKG ")(A;;FW;;;" PKG ")",
		/* Out of canonical order. */
		"D:(A;OICI;FR;;;" PKG ")(D;;FA;;;BG)",
	};
	char why[256];

	for (size_t i = 0; i < sizeof(seen) / sizeof(*seen); i++) {
		WinAcl acl = { 0 };

		print_message("# %s\n", seen[i]);
		assert_int_equal(win_acl_parse_sddl(seen[i], false, &acl), 0);
		assert_int_equal(win_acl_check(&acl, &chg, why, sizeof(why)), -EPERM);
		win_acl_done(&acl);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_win_acl_parse_aliases_and_format),
		cmocka_unit_test(test_win_acl_parse_refuses),
		cmocka_unit_test(test_win_acl_change_canonical),
		cmocka_unit_test(test_win_acl_check_catches_lies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
