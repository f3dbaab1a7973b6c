/* The protected-path walk (src/linux/workspace-scan.c) on trees built in a
 * temporary directory: what it reports, and where it does not look. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "linux/workspace-scan.h"

static char root[] = "/tmp/ward-test-scan.XXXXXX";

__attribute__((format(printf, 1, 2))) static void sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(cmd));
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	strcpy(root, "/tmp/ward-test-scan.XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	sh("rm -rf '%s'", root);
	return 0;
}

static void scan(char **protected, WorkspaceScan *ret)
{
	char *err = NULL;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(workspace_scan(fd, protected, ret, &err), 0);
	assert_null(err);
	close(fd);
}

static void assert_item(const WorkspaceScan *s, const char *rel, ScanKind kind)
{
	const ScanItem *it = workspace_scan_find(s, rel);

	if (!it)
		fail_msg("'%s' not reported", rel);
	assert_int_equal(it->kind, kind);
}

static void test_workspace_scan_names_at_any_depth(void **state)
{
	char *prot[] = { ".git", ".vscode", ".mcp.json", NULL };
	WorkspaceScan s;

	sh("cd '%s' && mkdir -p .git/hooks lib a/b/c/.vscode x && echo 'gitdir: ../.git/modules/lib' "
	   ">lib/.git && : >a/b/.mcp.json && : >x/.vscodex && : >x/vscode",
	   root);
	scan(prot, &s);
	assert_item(&s, ".git", SCAN_PROTECTED);
	assert_item(&s, "lib/.git", SCAN_PROTECTED);
	assert_item(&s, "a/b/c/.vscode", SCAN_PROTECTED);
	assert_item(&s, "a/b/.mcp.json", SCAN_PROTECTED);
	/* Not inside what is covered, not a prefix or a suffix of a name. */
	assert_null(workspace_scan_find(&s, ".git/hooks"));
	assert_null(workspace_scan_find(&s, "x/.vscodex"));
	assert_null(workspace_scan_find(&s, "x/vscode"));
	assert_int_equal(s.n, 4);
	workspace_scan_done(&s);
}

static void test_workspace_scan_anchored_and_symlinked_parent(void **state)
{
	char *prot[] = { ".git", "ci/.github/workflows", NULL };
	WorkspaceScan s;

	sh("cd '%s' && mkdir -p ci/.github/workflows other/ci/.github/workflows && "
	   "mkdir -p sub && ln -s /tmp sub/ci && mkdir -p t && ln -s /tmp t2",
	   root);
	scan(prot, &s);
	assert_item(&s, "ci/.github/workflows", SCAN_PROTECTED);
	/* Anchored: only at the root. */
	assert_null(workspace_scan_find(&s, "other/ci/.github/workflows"));
	assert_null(workspace_scan_find(&s, "sub/ci"));
	assert_int_equal(s.n, 1);
	workspace_scan_done(&s);

	/* A symlink where the anchored entry's parent belongs. */
	sh("cd '%s' && rm -rf ci && ln -s /tmp ci", root);
	scan(prot, &s);
	assert_item(&s, "ci", SCAN_LINKED_PARENT);
	workspace_scan_done(&s);
}

static void test_workspace_scan_git_dirs(void **state)
{
	char *prot[] = { ".git", NULL };
	WorkspaceScan s;

	/* A bare repository, a separate git dir (commondir), a directory
	 * with only HEAD (not a repository), and one inside node_modules. */
	sh("cd '%s' && mkdir -p bare.git/objects bare.git/refs bare.git/hooks/.git && "
	   ": >bare.git/HEAD && mkdir -p wt && : >wt/HEAD && : >wt/commondir && "
	   "mkdir -p nohead/objects nohead/refs && mkdir -p onlyhead && : >onlyhead/HEAD && "
	   "mkdir -p node_modules/p/.git node_modules/q/objects node_modules/q/refs && "
	   ": >node_modules/q/HEAD",
	   root);
	scan(prot, &s);
	assert_item(&s, "bare.git", SCAN_GITDIR);
	assert_item(&s, "wt", SCAN_GITDIR);
	/* What is inside a git dir is covered by it. */
	assert_null(workspace_scan_find(&s, "bare.git/hooks/.git"));
	assert_null(workspace_scan_find(&s, "nohead"));
	assert_null(workspace_scan_find(&s, "onlyhead"));
	/* node_modules is not walked (docs/sandbox.md). */
	assert_null(workspace_scan_find(&s, "node_modules/p/.git"));
	assert_null(workspace_scan_find(&s, "node_modules/q"));
	assert_int_equal(s.n, 2);
	workspace_scan_done(&s);
}

static void test_workspace_scan_root_git_dir(void **state)
{
	char *prot[] = { ".git", NULL };
	WorkspaceScan s;

	/* The workspace itself is a bare repository: its executable parts are
	 * reported, and the rest is still walked. */
	sh("cd '%s' && mkdir -p objects refs hooks src/.git && : >HEAD && : >config", root);
	scan(prot, &s);
	assert_item(&s, "HEAD", SCAN_GITDIR_PART);
	assert_item(&s, "config", SCAN_GITDIR_PART);
	assert_item(&s, "hooks", SCAN_GITDIR_PART);
	assert_item(&s, "src/.git", SCAN_PROTECTED);
	assert_null(workspace_scan_find(&s, "objects"));
	assert_int_equal(s.n, 4);
	workspace_scan_done(&s);
}

static void test_workspace_scan_identity(void **state)
{
	char *prot[] = { ".claude", NULL };
	WorkspaceScan a, b;

	/* The same path, a new inode: the quarantine compares both. */
	sh("cd '%s' && mkdir -p d/.claude", root);
	scan(prot, &a);
	sh("cd '%s' && mv d/.claude d/old && mkdir d/.claude", root);
	scan(prot, &b);
	assert_int_equal(a.n, 1);
	assert_int_equal(b.n, 1);
	assert_true(a.items[0].ino != b.items[0].ino);
	workspace_scan_done(&a);
	workspace_scan_done(&b);
}

static void test_workspace_scan_too_deep(void **state)
{
	char *prot[] = { ".git", NULL };
	WorkspaceScan s;
	char *err = NULL;
	int fd;

	/* Deeper than the walk goes: the directory is reported, never a
	 * silent miss. */
	sh("cd '%s' && python3 -c 'import os\nfor _ in range(%d): os.mkdir(\"d\"); os.chdir(\"d\")'",
	   root, WORKSPACE_SCAN_MAX_DEPTH + 3);
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(workspace_scan(fd, prot, &s, &err), 0);
	assert_null(err);
	close(fd);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.items[0].kind, SCAN_TOO_DEEP);
	assert_int_equal(strlen(s.items[0].rel), 2 * (WORKSPACE_SCAN_MAX_DEPTH + 1) - 1);
	workspace_scan_done(&s);
}

static void test_workspace_scan_unreadable_own_dir(void **state)
{
	char *prot[] = { ".git", NULL };
	WorkspaceScan s;

	/* Mode 000 protects nothing from a command of the same uid. */
	sh("cd '%s' && mkdir -p locked/.git && chmod 000 locked", root);
	scan(prot, &s);
	assert_item(&s, "locked/.git", SCAN_PROTECTED);
	workspace_scan_done(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_workspace_scan_names_at_any_depth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workspace_scan_anchored_and_symlinked_parent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_workspace_scan_git_dirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workspace_scan_root_git_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workspace_scan_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workspace_scan_too_deep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workspace_scan_unreadable_own_dir, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
