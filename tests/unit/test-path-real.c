/* path_real(): the same answer as realpath(3) (path or errno) for every
 * kind of path, inside the cache scope and outside it, and a cached
 * answer is dropped with the scope. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/path-real.h"

static char root[64];

static void mk(const char *kind, const char *rel, const char *target)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (strcmp(kind, "dir") == 0)
		assert_int_equal(mkdir(p, 0755), 0);
	else if (strcmp(kind, "file") == 0) {
		int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
	} else
		assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state)
{
	char abs[256];

	snprintf(root, sizeof(root), "/tmp/test-path-real.XXXXXX");
	assert_non_null(mkdtemp(root));
	mk("dir", "d", NULL);
	mk("dir", "d/e", NULL);
	mk("file", "d/f", NULL);
	mk("link", "rel", "d/e");          /* relative */
	snprintf(abs, sizeof(abs), "%s/d", root);
	mk("link", "abs", abs);            /* absolute */
	mk("link", "chain", "rel");        /* to a link */
	mk("link", "up", "d/e/..");        /* with ".." */
	mk("link", "tofile", "d/f");
	mk("link", "slash", "d/");         /* trailing slash */
	mk("link", "dangling", "nowhere");
	mk("link", "loop", "loop");
	mk("link", "d/e/back", "../../abs");
	mk("link", "root", "/");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void same_as_realpath(const char *rel)
{
	char p[256];
	char *want, *got;
	int want_errno, got_errno;

	if (rel[0] == '/')
		snprintf(p, sizeof(p), "%s", rel);
	else
		snprintf(p, sizeof(p), "%s/%s", root, rel);
	errno = 0;
	want = realpath(p, NULL);
	want_errno = want ? 0 : errno;
	errno = 0;
	got = path_real(p);
	got_errno = got ? 0 : errno;
	if ((want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0) ||
	    want_errno != got_errno)
		fail_msg("'%s': realpath '%s' (%d), path_real '%s' (%d)", p, want ? want : "-",
			 want_errno, got ? got : "-", got_errno);
	free(want);
	free(got);
}

static const char *const cases[] = {
	"d", "d/e", "d/f", "d/", "d/e/", "d/f/", "d/f/x", "d/f/.", "d/f/..", "d/./e/../e",
	"d//e", "rel", "rel/", "rel/..", "abs", "abs/e/back/e", "chain", "chain/../f",
	"up", "tofile", "tofile/", "tofile/..", "slash", "slash/f", "dangling", "dangling/x",
	"loop", "loop/x", "nothing", "nothing/x", "d/e/back", "d/e/back/f", "root", "root/tmp",
	"..", "../..", "/", "//", "/.", "/..", "/tmp/..", "/etc/passwd", "/proc/self",
};

static void test_same_outside_scope(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		same_as_realpath(cases[i]);
}

static void test_same_in_scope(void **state)
{
	path_real_begin();
	for (int round = 0; round < 2; round++) /* the second from the cache */
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			same_as_realpath(cases[i]);
	path_real_end();
}

/* A change the scope has seen is not seen until the scope ends; then it
 * is. */
static void test_scope_ends(void **state)
{
	char p[256], n[256];
	char *r;

	snprintf(p, sizeof(p), "%s/later", root);
	snprintf(n, sizeof(n), "%s/d/e", root);
	path_real_begin();
	path_real_begin();
	errno = 0;
	assert_null(path_real(p));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(symlink("d/e", p), 0);
	path_real_end(); /* nested: still cached */
	assert_null(path_real(p));
	path_real_end();
	r = path_real(p);
	assert_non_null(r);
	assert_string_equal(r, n);
	free(r);
	path_real_begin();
	r = path_real(p);
	assert_non_null(r);
	assert_string_equal(r, n);
	free(r);
	path_real_end();
	assert_int_equal(unlink(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_outside_scope),
		cmocka_unit_test(test_same_in_scope),
		cmocka_unit_test(test_scope_ends),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
