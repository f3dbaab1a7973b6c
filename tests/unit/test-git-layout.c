/* git-layout: discovery on temporary trees shaped like git's layouts (no
 * git needed: only the files git-layout.c looks at), pointer refusals, and
 * when the after-run hint is given. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "linux/git-layout.h"

static char root[PATH_MAX];

static void mkd(const char *rel)
{
	char cmd[PATH_MAX * 3];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", root, rel);
	assert_int_equal(system(cmd), 0);
}

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX * 2];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A git dir at @rel: HEAD, objects/, refs/. */
static void gitdir(const char *rel)
{
	char p[PATH_MAX];
	char o[PATH_MAX];
	snprintf(o, sizeof(o), "%s/objects", rel);
	mkd(o);
	snprintf(o, sizeof(o), "%s/refs", rel);
	mkd(o);
	snprintf(p, sizeof(p), "%s/HEAD", rel);
	put(p, "ref: refs/heads/main\n");
}

static char *path(const char *rel)
{
	char *p = NULL;
	assert_true(asprintf(&p, "%s/%s", root, rel) > 0);
	return p;
}

static int setup(void **state)
{
	char t[] = "/tmp/test-git-layout.XXXXXX";
	assert_non_null(mkdtemp(t));
	assert_non_null(realpath(t, root));
	mkd("home");
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void discover(const char *ws_rel, GitLayout *l)
{
	_cleanup_free_ char *ws = path(ws_rel), *home = path("home");
	GitLayoutInput in = { .workspace = ws, .home = home, .hidden = NULL };
	assert_int_equal(git_layout_discover(&in, l), 0);
}

static void test_git_layout_none_and_root(void **state)
{
	GitLayout l;
	_cleanup_free_ char *g = path("repo/.git");

	mkd("empty");
	discover("empty", &l);
	assert_null(l.gitdirs);
	assert_null(l.worktree);
	git_layout_done(&l);

	gitdir("repo/.git");
	discover("repo", &l);
	assert_string_equal(l.gitdirs[0], g);
	assert_null(l.worktree);
	assert_null(l.notes);
	git_layout_done(&l);
}

static void test_git_layout_subdirectory(void **state)
{
	GitLayout l;
	_cleanup_free_ char *top = path("repo");

	gitdir("repo/.git");
	mkd("repo/pkg/src");
	discover("repo/pkg/src", &l);
	assert_string_equal(l.worktree, top);
	assert_int_equal(strv_length(l.gitdirs), 1);
	git_layout_done(&l);

	/* A repository that contains the home directory: nothing. */
	gitdir(".git");
	mkd("home/proj");
	discover("home/proj", &l);
	assert_null(l.worktree);
	assert_null(l.gitdirs);
	assert_non_null(strstr(l.notes[0], "contains the home directory"));
	git_layout_done(&l);
}

static void test_git_layout_worktree(void **state)
{
	GitLayout l;
	_cleanup_free_ char *common = path("main/.git"), *wtg = path("main/.git/worktrees/wt"),
			    *dotgit = path("wt/.git"), *line = NULL;

	gitdir("main/.git");
	mkd("main/.git/worktrees/wt");
	mkd("wt");
	put("main/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n");
	put("main/.git/worktrees/wt/commondir", "../..\n");
	assert_true(asprintf(&line, "gitdir: %s\n", wtg) > 0);
	put("wt/.git", line);

	/* The back-pointer is missing: refused. */
	discover("wt", &l);
	assert_null(l.gitdirs);
	assert_non_null(strstr(l.notes[0], "does not point back"));
	git_layout_done(&l);

	free(line);
	assert_true(asprintf(&line, "%s\n", dotgit) > 0);
	put("main/.git/worktrees/wt/gitdir", line);
	discover("wt", &l);
	assert_int_equal(strv_length(l.gitdirs), 2);
	assert_string_equal(l.gitdirs[0], wtg);
	assert_string_equal(l.gitdirs[1], common);
	assert_null(l.worktree);
	git_layout_done(&l);

	/* A commondir that is not the directory the worktree sits in. */
	gitdir("elsewhere");
	put("main/.git/worktrees/wt/commondir", "../../../../elsewhere\n");
	discover("wt", &l);
	assert_null(l.gitdirs);
	assert_non_null(strstr(l.notes[0], "is not in the worktrees of"));
	git_layout_done(&l);
}

static void test_git_layout_submodule_and_hostile(void **state)
{
	GitLayout l;
	_cleanup_free_ char *mod = path("super/.git/modules/lib");

	gitdir("super/.git");
	gitdir("super/.git/modules/lib");
	mkd("super/lib");
	put("super/lib/.git", "gitdir: ../.git/modules/lib\n");
	discover("super/lib", &l);
	assert_int_equal(strv_length(l.gitdirs), 1);
	assert_string_equal(l.gitdirs[0], mod);
	git_layout_done(&l);

	/* The same kind of pointer from a directory that is not beneath it. */
	mkd("evil");
	put("evil/.git", "gitdir: ../super/.git/modules/lib\n");
	discover("evil", &l);
	assert_null(l.gitdirs);
	assert_non_null(strstr(l.notes[0], "not a submodule git dir"));
	git_layout_done(&l);

	/* Not a git dir at all. */
	mkd("home/.ssh");
	put("evil/.git", "gitdir: ../home/.ssh\n");
	discover("evil", &l);
	assert_null(l.gitdirs);
	assert_non_null(strstr(l.notes[0], "not a git directory"));
	git_layout_done(&l);

	/* An empty file (a mark): nothing, and nothing to say. */
	put("evil/.git", "");
	discover("evil", &l);
	assert_null(l.gitdirs);
	assert_null(l.notes);
	git_layout_done(&l);
}

static void test_git_layout_hint(void **state)
{
	GitLayout l = { 0 };
	char *git[] = { "/usr/bin/git", "stash", NULL };
	char *sh[] = { "sh", "-c", "make && git commit -am x", NULL };
	char *gitk[] = { "sh", "-c", "gitk; legit", NULL };
	char *hint;

	assert_int_equal(strv_extend(&l.gitdirs, "/r/.git"), 0);
	hint = git_layout_hint(&l, 1, git, 1);
	assert_non_null(hint);
	assert_non_null(strstr(hint, "'/r/.git' is read-only"));
	assert_non_null(strstr(hint, "--git commit"));
	free(hint);
	hint = git_layout_hint(&l, 1, sh, 128);
	assert_non_null(hint);
	free(hint);
	assert_null(git_layout_hint(&l, 1, gitk, 1));
	assert_null(git_layout_hint(&l, 1, git, 0));
	assert_null(git_layout_hint(&l, 1, git, 137)); /* a signal */
	assert_null(git_layout_hint(&l, 1, git, 124)); /* the timeout */
	assert_null(git_layout_hint(&l, 0, git, 1));   /* commit mode */
	git_layout_done(&l);
	assert_null(git_layout_hint(&l, 1, git, 1)); /* no repository */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_git_layout_none_and_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_git_layout_subdirectory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_git_layout_worktree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_git_layout_submodule_and_hostile, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_git_layout_hint, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
