/* Copy-on-write on Windows: the redirect decision per open and per
 * rename. The DLL that would ask it is not built; these are the rules it
 * would follow, and the ACL stays the boundary whatever they say. Runs
 * natively and, cross-compiled, under Wine. */
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

#include "windows/win-cow.h"

#define READ UINT32_C(0x00120089)
#define WRITE UINT32_C(0x00120116)
#define UPPER "C:\\Users\\me\\AppData\\Local\\ward\\cow\\s1\\upper"

static char *prot[] = { ".git", ".codex", NULL };
static const WinCowSession S = { .workspace = "C:\\ws", .upper = UPPER, .protected_ = prot };

static WinCowAction decide(const char *path, uint32_t access, uint32_t disp, uint32_t opts,
			   bool in_upper, bool whiteout, bool in_ws, const char *target)
{
	WinCowOpen o = { .path = path, .access = access, .disposition = disp, .options = opts,
			 .in_upper = in_upper, .whiteout = whiteout, .in_workspace = in_ws };
	WinCowDecision d;

	assert_int_equal(win_cow_decide(&S, &o, &d), 0);
	if (target) {
		assert_non_null(d.target);
		assert_string_equal(d.target, target);
	}
	free(d.target);
	return d.action;
}

static void test_cow_paths(void **state)
{
	char *p = NULL;

	(void)state;
	assert_int_equal(win_cow_path("\\??\\C:\\ws\\a.txt", &p), 0);
	assert_string_equal(p, "C:\\ws\\a.txt");
	free(p);
	assert_int_equal(win_cow_path("\\??\\c:\\ws\\.\\b\\..\\a.txt", &p), 0);
	assert_string_equal(p, "C:\\ws\\a.txt");
	free(p);
	assert_int_equal(win_cow_path("\\??\\UNC\\srv\\share\\x", &p), 0);
	assert_string_equal(p, "\\\\srv\\share\\x");
	free(p);
	assert_int_equal(win_cow_path("C:/ws/a.txt", &p), 0);
	free(p);
	assert_int_equal(win_cow_path("\\Device\\HarddiskVolume3\\ws\\a.txt", &p), -EINVAL);
	assert_int_equal(win_cow_path("\\??\\GLOBALROOT\\Device\\X", &p), -EINVAL);
	assert_int_equal(win_cow_path("\\??\\Volume{1234}\\ws", &p), -EINVAL);
	assert_int_equal(win_cow_path("\\??\\C:\\ws\\a.txt:stream", &p), -EINVAL);
}

static void test_cow_reads(void **state)
{
	(void)state;
	/* Outside the workspace: untouched. */
	assert_int_equal(decide("\\??\\C:\\other\\f", WRITE, WIN_FILE_OPEN, 0, false, false, true, NULL),
			 WIN_COW_PASS);
	/* The upper itself: untouched. */
	assert_int_equal(decide("\\??\\" UPPER "\\f", WRITE, WIN_FILE_OPEN, 0, false, false, true,
				NULL),
			 WIN_COW_PASS);
	/* A read of an unchanged file: the original. */
	assert_int_equal(decide("\\??\\C:\\ws\\src\\a.c", READ, WIN_FILE_OPEN, 0, false, false, true,
				NULL),
			 WIN_COW_PASS);
	/* A read of a file the session changed: the upper copy. */
	assert_int_equal(decide("\\??\\C:\\ws\\src\\a.c", READ, WIN_FILE_OPEN, 0, true, false, true,
				UPPER "\\src\\a.c"),
			 WIN_COW_REDIRECT);
	/* A file the session deleted: not found, for reads and plain opens. */
	assert_int_equal(decide("\\??\\C:\\ws\\gone", READ, WIN_FILE_OPEN, 0, false, true, true, NULL),
			 WIN_COW_NOT_FOUND);
	assert_int_equal(decide("\\??\\C:\\ws\\gone", WRITE, WIN_FILE_OVERWRITE, 0, false, true, true,
				NULL),
			 WIN_COW_NOT_FOUND);
	/* A directory listing merges. */
	WinCowOpen o = { .path = "C:\\ws\\src", .access = READ, .disposition = WIN_FILE_OPEN,
			 .options = WIN_FILE_DIRECTORY_FILE, .in_workspace = true,
			 .is_directory = true };
	WinCowDecision d;
	assert_int_equal(win_cow_decide(&S, &o, &d), 0);
	assert_int_equal(d.action, WIN_COW_MERGE);
	/* A path form the hook cannot place: passed, the ACL decides. */
	assert_int_equal(decide("\\Device\\HarddiskVolume3\\ws\\a.c", WRITE, WIN_FILE_OPEN, 0, false,
				false, true, NULL),
			 WIN_COW_PASS);
}

static void test_cow_writes(void **state)
{
	(void)state;
	/* The first write to a workspace file: copied up, then redirected. */
	assert_int_equal(decide("\\??\\C:\\ws\\src\\a.c", WRITE, WIN_FILE_OPEN, 0, false, false, true,
				UPPER "\\src\\a.c"),
			 WIN_COW_COPY_UP);
	/* Every write bit counts: append, attributes, delete, DAC, generic. */
	for (uint32_t bit = 1; bit; bit <<= 1) {
		WinCowAction a;

		if (!(bit & WIN_COW_WRITE_ACCESS))
			continue;
		a = decide("C:\\ws\\a.c", bit, WIN_FILE_OPEN, 0, false, false, true, NULL);
		assert_int_equal(a, WIN_COW_COPY_UP);
	}
	/* Delete-on-close with read access is a write. */
	assert_int_equal(decide("C:\\ws\\a.c", READ, WIN_FILE_OPEN, WIN_FILE_DELETE_ON_CLOSE, false,
				false, true, NULL),
			 WIN_COW_COPY_UP);
	/* Replaced whole: no copy needed. */
	assert_int_equal(decide("C:\\ws\\a.c", WRITE, WIN_FILE_OVERWRITE_IF, 0, false, false, true,
				UPPER "\\a.c"),
			 WIN_COW_REDIRECT);
	assert_int_equal(decide("C:\\ws\\a.c", WRITE, WIN_FILE_SUPERSEDE, 0, false, false, true, NULL),
			 WIN_COW_REDIRECT);
	/* A new file: created in the upper; also after a whiteout. */
	assert_int_equal(decide("C:\\ws\\new.txt", WRITE, WIN_FILE_CREATE, 0, false, false, false,
				UPPER "\\new.txt"),
			 WIN_COW_REDIRECT);
	assert_int_equal(decide("C:\\ws\\gone", WRITE, WIN_FILE_CREATE, 0, false, true, true,
				UPPER "\\gone"),
			 WIN_COW_REDIRECT);
	/* An OPEN_IF with read access only still may create: a write. */
	assert_int_equal(decide("C:\\ws\\maybe", READ, WIN_FILE_OPEN_IF, 0, false, false, false, NULL),
			 WIN_COW_REDIRECT);
	/* Already copied: the upper. */
	assert_int_equal(decide("C:\\ws\\a.c", WRITE, WIN_FILE_OPEN, 0, true, false, true,
				UPPER "\\a.c"),
			 WIN_COW_REDIRECT);
}

static void test_cow_denials(void **state)
{
	(void)state;
	/* Protected paths: never written, not even into the upper. */
	assert_int_equal(decide("C:\\ws\\.git\\config", WRITE, WIN_FILE_OPEN, 0, false, false, true,
				NULL),
			 WIN_COW_DENY);
	assert_int_equal(decide("C:\\ws\\.GIT\\hooks\\pre-commit", WRITE, WIN_FILE_CREATE, 0, false,
				false, false, NULL),
			 WIN_COW_DENY);
	assert_int_equal(decide("C:\\ws\\.git. \\config", WRITE, WIN_FILE_OPEN, 0, false, false, true,
				NULL),
			 WIN_COW_DENY);
	assert_int_equal(decide("C:\\ws\\.codex", WRITE, WIN_FILE_CREATE, 0, false, false, false, NULL),
			 WIN_COW_DENY);
	/* Reading them: passed (the ACL decides, as without the DLL). */
	assert_int_equal(decide("C:\\ws\\.git\\HEAD", READ, WIN_FILE_OPEN, 0, false, false, true, NULL),
			 WIN_COW_PASS);
	/* .github is not .git. */
	assert_int_equal(decide("C:\\ws\\.github\\ci.yml", WRITE, WIN_FILE_OPEN, 0, false, false, true,
				NULL),
			 WIN_COW_COPY_UP);
	/* Short names could alias a protected one: writes refused. */
	assert_int_equal(decide("C:\\ws\\GIT~1\\config", WRITE, WIN_FILE_OPEN, 0, false, false, true,
				NULL),
			 WIN_COW_DENY);
}

static void test_cow_renames(void **state)
{
	WinCowDecision d;

	(void)state;
	assert_int_equal(win_cow_decide_rename(&S, "C:\\ws\\a", "C:\\ws\\b", false, &d), 0);
	assert_int_equal(d.action, WIN_COW_COPY_UP);
	assert_string_equal(d.target, UPPER "\\b");
	free(d.target);
	assert_int_equal(win_cow_decide_rename(&S, "C:\\tmp\\a", "C:\\ws\\b", false, &d), 0);
	assert_int_equal(d.action, WIN_COW_REDIRECT);
	free(d.target);
	assert_int_equal(win_cow_decide_rename(&S, "C:\\ws\\a", "C:\\tmp\\a", false, &d), 0);
	assert_int_equal(d.action, WIN_COW_DENY);
	assert_int_equal(win_cow_decide_rename(&S, "C:\\ws\\a", "C:\\ws\\.git\\hooks\\x", false, &d),
			 0);
	assert_int_equal(d.action, WIN_COW_DENY);
	assert_int_equal(win_cow_decide_rename(&S, "C:\\ws\\a", "C:\\ws\\b", true, &d), 0);
	assert_int_equal(d.action, WIN_COW_DENY);
	assert_int_equal(win_cow_decide_rename(&S, "C:\\x\\a", "C:\\x\\b", false, &d), 0);
	assert_int_equal(d.action, WIN_COW_PASS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cow_paths),  cmocka_unit_test(test_cow_reads),
		cmocka_unit_test(test_cow_writes), cmocka_unit_test(test_cow_denials),
		cmocka_unit_test(test_cow_renames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
