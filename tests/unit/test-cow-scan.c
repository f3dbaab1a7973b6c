/* The upper-dir scanner on trees built by hand (and one real overlay upper
 * dir made with unshare -rm, skipped where that is impossible). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cow-test-util.h"

typedef struct Fix {
	char *root, *upper, *lower;
} Fix;

static int setup(void **state)
{
	Fix *f = calloc(1, sizeof(*f));
	f->root = tu_mkdtemp();
	f->upper = tu_path(f->root, "upper");
	f->lower = tu_path(f->root, "lower");
	tu_dir(f->root, "upper", 0755);
	tu_dir(f->root, "lower", 0755);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	Fix *f = *state;
	tu_rm_rf(f->root);
	free(f->root);
	free(f->upper);
	free(f->lower);
	free(f);
	return 0;
}

static void test_cow_scan_added_modified_deleted(void **state)
{
	Fix *f = *state;
	CowChangeList l = {};
	const CowChange *c;

	tu_file(f->lower, "a", "old\n", 0644);
	tu_file(f->lower, "b", "bee\n", 0644);
	tu_file(f->lower, "same", "same\n", 0644);
	tu_dir(f->lower, "d", 0755);
	tu_file(f->lower, "d/x", "x\n", 0644);
	tu_file(f->lower, "d/keep", "k\n", 0644);

	tu_file(f->upper, "a", "new\n", 0644);
	tu_file(f->upper, "same", "same\n", 0644); /* copied up, unchanged */
	tu_whiteout(f->upper, "b");
	tu_whiteout(f->upper, "ghost"); /* no lower entry: nothing to delete */
	tu_file(f->upper, "n", "added\n", 0600);
	tu_dir(f->upper, "d", 0755);
	tu_opaque(f->upper, "d");
	tu_file(f->upper, "d/y", "y\n", 0644);
	tu_file(f->upper, "d/keep", "k\n", 0644);

	assert_int_equal(tu_scan(f->upper, f->lower, NULL, &l), 0);
	assert_non_null(c = tu_find(&l, "a"));
	assert_int_equal(c->kind, COW_MODIFIED);
	assert_non_null(c = tu_find(&l, "b"));
	assert_int_equal(c->kind, COW_DELETED);
	assert_true(S_ISREG(c->lower_mode));
	assert_null(tu_find(&l, "ghost"));
	assert_null(tu_find(&l, "same"));
	assert_non_null(c = tu_find(&l, "n"));
	assert_int_equal(c->kind, COW_ADDED);
	assert_non_null(c = tu_find(&l, "d"));
	assert_int_equal(c->kind, COW_DIR_REPLACED);
	assert_non_null(c = tu_find(&l, "d/x"));
	assert_int_equal(c->kind, COW_DELETED);
	assert_non_null(c = tu_find(&l, "d/y"));
	assert_int_equal(c->kind, COW_ADDED);
	assert_null(tu_find(&l, "d/keep"));
	assert_int_equal(l.n, 6);
	/* Pre-order, sorted: a, b, d, d/x (hidden lower), d/y, n. */
	assert_string_equal(l.items[0].path, "a");
	assert_string_equal(l.items[2].path, "d");
	assert_string_equal(l.items[5].path, "n");
	cow_change_list_done(&l);
}

static void test_cow_scan_mode_symlink_type(void **state)
{
	Fix *f = *state;
	CowChangeList l = {};
	const CowChange *c;

	tu_file(f->lower, "f", "content\n", 0644);
	tu_symlink(f->lower, "s", "a");
	tu_file(f->lower, "t", "t\n", 0644);
	tu_dir(f->lower, "dd", 0755);
	tu_file(f->lower, "dd/inner", "i\n", 0644);
	tu_file(f->lower, "fd", "f\n", 0644);

	tu_file(f->upper, "f", "content\n", 0755);
	tu_symlink(f->upper, "s", "b");
	tu_symlink(f->upper, "t", "f");
	tu_file(f->upper, "dd", "now a file\n", 0644);
	tu_dir(f->upper, "fd", 0700);
	tu_file(f->upper, "fd/z", "z\n", 0644);

	assert_int_equal(tu_scan(f->upper, f->lower, NULL, &l), 0);
	assert_non_null(c = tu_find(&l, "f"));
	assert_int_equal(c->kind, COW_MODE_CHANGED);
	assert_true(c->flags & COW_F_MODE);
	assert_non_null(c = tu_find(&l, "s"));
	assert_int_equal(c->kind, COW_SYMLINK_CHANGED);
	assert_non_null(c = tu_find(&l, "t"));
	assert_int_equal(c->kind, COW_TYPE_CHANGED);
	assert_true(S_ISLNK(c->upper_mode) && S_ISREG(c->lower_mode));
	assert_non_null(c = tu_find(&l, "dd"));
	assert_int_equal(c->kind, COW_TYPE_CHANGED);
	assert_true(S_ISREG(c->upper_mode) && S_ISDIR(c->lower_mode));
	assert_null(tu_find(&l, "dd/inner")); /* removed with dd on apply */
	assert_non_null(c = tu_find(&l, "fd"));
	assert_int_equal(c->kind, COW_TYPE_CHANGED);
	assert_non_null(c = tu_find(&l, "fd/z"));
	assert_int_equal(c->kind, COW_ADDED);
	cow_change_list_done(&l);
}

static void test_cow_scan_protected(void **state)
{
	Fix *f = *state;
	char *prot[] = { ".git", ".ward", "sub/.harness", ".codex", ".agents", "keep/.harness",
			 "deep/sub/.harness", NULL };
	CowChangeList l = {};
	const CowChange *c;

	tu_dir(f->lower, ".git", 0755);
	tu_dir(f->lower, ".git/hooks", 0755);
	tu_file(f->lower, ".git/config", "[core]\n", 0644);
	/* The sandbox makes no placeholders: whatever the command made at a
	 * protected path is listed and refused, empty or not. */
	tu_dir(f->upper, ".ward", 0755);
	tu_file(f->upper, ".codex", "", 0444);
	tu_file(f->upper, ".agents", "not empty", 0444);
	tu_dir(f->upper, "sub", 0755);
	tu_dir(f->upper, "sub/.harness", 0755);
	/* Anything under a protected path: refused. */
	tu_dir(f->upper, ".git", 0755);
	tu_dir(f->upper, ".git/hooks", 0755);
	tu_file(f->upper, ".git/hooks/pre-commit", "#!/bin/sh\ncurl evil\n", 0755);
	tu_whiteout(f->upper, ".git/config");
	tu_file(f->upper, ".gitignore", "ok\n", 0644);
	/* Deleting or replacing a directory that holds a protected path. */
	tu_dir(f->lower, "keep", 0755);
	tu_dir(f->lower, "keep/.harness", 0755);
	tu_whiteout(f->upper, "keep");
	tu_dir(f->lower, "deep", 0755);
	tu_dir(f->lower, "deep/sub", 0755);
	tu_dir(f->lower, "deep/sub/.harness", 0755);
	tu_dir(f->upper, "deep", 0755);
	tu_opaque(f->upper, "deep");

	assert_int_equal(tu_scan(f->upper, f->lower, prot, &l), 0);
	assert_non_null(c = tu_find(&l, ".ward"));
	assert_int_equal(c->kind, COW_ADDED);
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_non_null(c = tu_find(&l, "sub"));
	assert_int_equal(c->refused, COW_REFUSE_NONE);
	assert_non_null(c = tu_find(&l, "sub/.harness"));
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_null(tu_find(&l, ".git"));
	assert_null(tu_find(&l, ".git/hooks"));
	assert_non_null(c = tu_find(&l, ".git/hooks/pre-commit"));
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_non_null(c = tu_find(&l, ".git/config"));
	assert_int_equal(c->kind, COW_DELETED);
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_non_null(c = tu_find(&l, ".gitignore"));
	assert_int_equal(c->refused, COW_REFUSE_NONE);
	assert_non_null(c = tu_find(&l, ".codex"));
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_non_null(c = tu_find(&l, ".agents"));
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_non_null(c = tu_find(&l, "keep"));
	assert_int_equal(c->kind, COW_DELETED);
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_non_null(c = tu_find(&l, "deep/sub"));
	assert_int_equal(c->kind, COW_DELETED);
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_int_equal(l.n, 11);
	cow_change_list_done(&l);
}

/* Nested repository metadata, whatever the list says, and a directory
 * git would take for a git dir. */
static void test_cow_scan_nested_metadata(void **state)
{
	Fix *f = *state;
	CowChangeList l = {};
	const CowChange *c;

	tu_dir(f->lower, "lib", 0755);
	tu_dir(f->lower, "lib/.git", 0755);
	tu_file(f->lower, "lib/.git/config", "[core]\n", 0644);
	tu_dir(f->lower, "sub", 0755);
	tu_file(f->lower, "sub/.git", "gitdir: ../.git/modules/sub\n", 0644);
	tu_dir(f->upper, "lib", 0755);
	tu_dir(f->upper, "lib/.git", 0755);
	tu_file(f->upper, "lib/.git/config", "[core]\n\tfsmonitor = evil\n", 0644);
	tu_dir(f->upper, "sub", 0755);
	tu_dir(f->upper, "sub/.git", 0755);
	tu_file(f->upper, "sub/.git/config", "[core]\n", 0644);
	tu_dir(f->upper, "bare", 0755);
	tu_file(f->upper, "bare/HEAD", "ref: refs/heads/main\n", 0644);
	tu_dir(f->upper, "bare/refs", 0755);
	tu_dir(f->upper, "bare/objects", 0755);
	tu_file(f->upper, "bare/config", "[core]\n\tfsmonitor = evil\n", 0644);
	tu_dir(f->upper, "notbare", 0755);
	tu_file(f->upper, "notbare/HEAD", "just a file\n", 0644);

	assert_int_equal(tu_scan(f->upper, f->lower, NULL, &l), 0);
	assert_non_null(c = tu_find(&l, "lib/.git/config"));
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_non_null(c = tu_find(&l, "sub/.git"));
	assert_int_equal(c->kind, COW_TYPE_CHANGED);
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_non_null(c = tu_find(&l, "bare"));
	assert_int_equal(c->refused, COW_REFUSE_NONE);
	assert_non_null(c = tu_find(&l, "bare/config"));
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_non_null(c = tu_find(&l, "bare/HEAD"));
	assert_int_equal(c->refused, COW_REFUSE_PROTECTED);
	assert_non_null(c = tu_find(&l, "notbare/HEAD"));
	assert_int_equal(c->refused, COW_REFUSE_NONE);
	cow_change_list_done(&l);
}

static void test_cow_scan_special_setuid_hardlink(void **state)
{
	Fix *f = *state;
	CowChangeList l = {};
	const CowChange *c;
	char *p = tu_path(f->upper, "fifo"), *q = tu_path(f->upper, "link2");
	char *o = tu_path(f->upper, "link1");

	assert_int_equal(mkfifo(p, 0644), 0);
	tu_file(f->upper, "suid", "#!/bin/sh\n", 04755);
	/* Copied up unchanged, setuid bit and all: not a change. */
	tu_file(f->lower, "own-suid", "bin\n", 04755);
	tu_file(f->upper, "own-suid", "bin\n", 04755);
	/* Only a setuid bit added: nothing apply would write. */
	tu_file(f->lower, "add-suid", "bin\n", 0755);
	tu_file(f->upper, "add-suid", "bin\n", 04755);
	tu_file(f->upper, "link1", "shared\n", 0644);
	assert_int_equal(link(o, q), 0);

	assert_int_equal(tu_scan(f->upper, f->lower, NULL, &l), 0);
	assert_non_null(c = tu_find(&l, "fifo"));
	assert_int_equal(c->refused, COW_REFUSE_SPECIAL);
	assert_non_null(c = tu_find(&l, "suid"));
	assert_true(c->flags & COW_F_SETUID_STRIPPED);
	assert_int_equal(cow_effective_mode(c->upper_mode), 0755);
	assert_null(tu_find(&l, "own-suid"));
	assert_null(tu_find(&l, "add-suid"));
	assert_non_null(c = tu_find(&l, "link2"));
	assert_true(c->flags & COW_F_HARDLINK);
	cow_change_list_done(&l);
	free(p);
	free(q);
	free(o);
}

static void test_cow_scan_odd_names(void **state)
{
	Fix *f = *state;
	CowChangeList l = {};
	const CowChange *c;
	_cleanup_free_ char *q = NULL;

	tu_file(f->upper, "new\nline", "x", 0644);
	tu_file(f->upper, "bad\xff", "x", 0644);
	tu_file(f->upper, "..\n", "x", 0644);
	tu_file(f->upper, "caf\xc3\xa9", "x", 0644);
	assert_int_equal(tu_scan(f->upper, f->lower, NULL, &l), 0);
	assert_int_equal(l.n, 4);
	assert_non_null(c = tu_find(&l, "new\nline"));
	assert_true(c->flags & COW_F_ODD_NAME);
	q = cow_quote_path(c->path);
	assert_string_equal(q, "\"new\\nline\"");
	assert_non_null(c = tu_find(&l, "bad\xff"));
	assert_true(c->flags & COW_F_ODD_NAME);
	assert_non_null(c = tu_find(&l, "..\n"));
	assert_int_equal(c->kind, COW_ADDED);
	assert_non_null(c = tu_find(&l, "caf\xc3\xa9"));
	assert_false(c->flags & COW_F_ODD_NAME);
	cow_change_list_done(&l);
}

static void test_cow_scan_deep_tree(void **state)
{
	Fix *f = *state;
	CowChangeList l = {};
	char rel[2 * (COW_MAX_DEPTH + 20) + 1] = "";
	size_t refused = 0;

	for (int i = 0; i < COW_MAX_DEPTH + 10; i++) {
		strcat(rel, i ? "/d" : "d");
		tu_dir(f->upper, rel, 0755);
	}
	assert_int_equal(tu_scan(f->upper, f->lower, NULL, &l), 0);
	for (size_t i = 0; i < l.n; i++)
		if (l.items[i].refused == COW_REFUSE_TOO_DEEP)
			refused++;
	assert_int_equal(refused, 1);
	assert_true(l.n < COW_MAX_DEPTH + 1);
	cow_change_list_done(&l);
}

static void test_cow_scan_symlink_not_followed(void **state)
{
	Fix *f = *state;
	CowChangeList l = {};
	const CowChange *c;

	/* Upper "escape" is a symlink to /; the scanner must list it, not walk it. */
	tu_symlink(f->upper, "escape", "/");
	tu_dir(f->lower, "escape", 0755);
	assert_int_equal(tu_scan(f->upper, f->lower, NULL, &l), 0);
	assert_int_equal(l.n, 1);
	assert_non_null(c = tu_find(&l, "escape"));
	assert_int_equal(c->kind, COW_TYPE_CHANGED);
	assert_true(S_ISLNK(c->upper_mode));
	cow_change_list_done(&l);
}

static void test_cow_scan_real_overlay(void **state)
{
	Fix *f = *state;
	CowChangeList l = {};
	const CowChange *c;
	char *cmd;

	tu_file(f->lower, "keep", "k\n", 0644);
	tu_file(f->lower, "gone", "g\n", 0644);
	tu_file(f->lower, "edit", "one\n", 0644);
	tu_dir(f->lower, "olddir", 0755);
	tu_file(f->lower, "olddir/f", "f\n", 0644);
	tu_dir(f->root, "work", 0755);
	tu_dir(f->root, "merged", 0755);
	assert_true(asprintf(&cmd,
			     "unshare -rm sh -c 'mount -t overlay overlay -o "
			     "lowerdir=%s,upperdir=%s,workdir=%s/work,userxattr %s/merged && "
			     "cd %s/merged && rm gone && echo two >> edit && mv olddir newdir && "
			     "chmod 600 keep' 2>/dev/null",
			     f->lower, f->upper, f->root, f->root, f->root) > 0);
	if (system(cmd) != 0) {
		free(cmd);
		skip();
	}
	free(cmd);
	assert_int_equal(tu_scan(f->upper, f->lower, NULL, &l), 0);
	assert_non_null(c = tu_find(&l, "gone"));
	assert_int_equal(c->kind, COW_DELETED);
	assert_non_null(c = tu_find(&l, "edit"));
	assert_int_equal(c->kind, COW_MODIFIED);
	assert_non_null(c = tu_find(&l, "keep"));
	assert_int_equal(c->kind, COW_MODE_CHANGED);
	/* A renamed directory: whiteout plus a full copy. */
	assert_non_null(c = tu_find(&l, "olddir"));
	assert_int_equal(c->kind, COW_DELETED);
	assert_non_null(c = tu_find(&l, "newdir"));
	assert_int_equal(c->kind, COW_ADDED);
	assert_non_null(tu_find(&l, "newdir/f"));
	cow_change_list_done(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cow_scan_added_modified_deleted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_scan_mode_symlink_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_scan_protected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_scan_nested_metadata, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_scan_special_setuid_hardlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_scan_odd_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_scan_deep_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_scan_symlink_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cow_scan_real_overlay, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
