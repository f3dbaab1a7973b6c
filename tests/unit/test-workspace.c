/* Which directories may be a workspace (workspace.c), and resolving paths
 * without following untrusted symlinks (safe-path.c). */
#include <errno.h>
#include <fcntl.h>
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

#include "common/safe-path.h"
#include "common/workspace.h"

static int check(const char *ws, bool allow)
{
	char *deny[] = { "/home/u/proj/secret", "/srv/keys", NULL };
	char *why = NULL;
	WorkspaceCheck c = { .workspace = ws,
			     .home = "/home/u",
			     .deny = deny,
			     .state_dir = "/home/u/.local/state/ward",
			     .config_dir = "/home/u/.config/ward",
			     .allow_unsafe = allow };
	int r = workspace_check(&c, &why);

	assert_true(r == 0 ? why == NULL : why != NULL);
	free(why);
	return r;
}

static void test_workspace_check_table(void **state)
{
	static const struct {
		const char *ws;
		int plain, allowed;
	} t[] = {
		{ "/home/u/proj", 0, 0 },
		{ "/tmp/build", 0, 0 },
		{ "/srv/app", 0, 0 },
		{ "/", -EPERM, -EPERM },
		{ "/home", -EPERM, -EPERM },
		{ "/home/u", -EPERM, -EPERM },
		{ "/home/u/proj/secret", -EPERM, -EPERM },
		{ "/home/u/proj/secret/x", -EPERM, -EPERM },
		{ "/srv/keys", -EPERM, -EPERM },
		{ "/home/u/.config/ward", -EPERM, -EPERM },
		{ "/home/u/.local/state/ward/sessions", -EPERM, -EPERM },
		{ "/home/u/.local/state", -EPERM, -EPERM }, /* holds ward's state */
		{ "/etc", -EACCES, 0 },
		{ "/etc/nginx", -EACCES, 0 },
		{ "/usr", -EACCES, 0 },
		{ "/usr/local/src", -EACCES, 0 },
		{ "/var", -EACCES, 0 },
		{ "/tmp", -EACCES, 0 },
		{ "/srv", -EACCES, 0 },
		{ "/home/u/.ssh", -EACCES, 0 },
		{ "/home/u/.ssh/keys", -EACCES, 0 },
		{ "/home/u/.gnupg", -EACCES, 0 },
		{ "/home/u/.config/gh", -EACCES, 0 },
		{ "/home/u/.cache", -EACCES, 0 },
		{ "/home/u/.cache/project", 0, 0 },
		{ "/home/u/.sshx", -EACCES, 0 }, /* a dot-directory of $HOME */
		{ "/home/u/src/.ssh", 0, 0 },
		{ "/home/uu", 0, 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (check(t[i].ws, false) != t[i].plain || check(t[i].ws, true) != t[i].allowed)
			fail_msg("%s: expected %d/%d, got %d/%d", t[i].ws, t[i].plain,
				 t[i].allowed, check(t[i].ws, false), check(t[i].ws, true));
	}
}

static void test_path_is_system_dir(void **state)
{
	assert_true(path_is_system_dir("/"));
	assert_true(path_is_system_dir("/etc/ssh"));
	assert_true(path_is_system_dir("/lib64"));
	assert_true(path_is_system_dir("/var/lib"));
	assert_false(path_is_system_dir("/var/lib/jenkins/ws"));
	assert_false(path_is_system_dir("/opt/app"));
	assert_false(path_is_system_dir("/etcetera"));
	assert_false(path_is_system_dir("/usrlocal"));
}

static char tmpdir[] = "/tmp/ward-test-safepath.XXXXXX";

static void test_path_open_trusted(void **state)
{
	char p[PATH_MAX], q[PATH_MAX];
	char *real = NULL, *link = NULL, *target = NULL;
	int fd;

	assert_non_null(mkdtemp(tmpdir));
	snprintf(p, sizeof(p), "%s/real/sub", tmpdir);
	snprintf(q, sizeof(q), "%s/real", tmpdir);
	assert_int_equal(mkdir(q, 0755), 0);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/link", tmpdir);
	assert_int_equal(symlink("real", p), 0);

	/* A plain path resolves to itself, "." and ".." included. */
	snprintf(p, sizeof(p), "%s/real/./sub/../sub", tmpdir);
	fd = path_open_trusted(p, &real, &link, &target);
	assert_true(fd >= 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/real/sub", tmpdir);
	assert_string_equal(real, p);
	free(real);
	real = NULL;

	/* Our own symlink, in a directory we can write: refused, named. */
	snprintf(p, sizeof(p), "%s/link/sub", tmpdir);
	assert_int_equal(path_open_trusted(p, &real, &link, &target), -ELOOP);
	snprintf(p, sizeof(p), "%s/link", tmpdir);
	assert_string_equal(link, p);
	assert_string_equal(target, "real");
	assert_null(real);
	free(link);
	free(target);

	/* A root-made link in a root-owned directory nobody else writes
	 * (merged /usr: /lib -> usr/lib) is followed, whoever we are. */
	struct stat st;
	if (lstat("/lib", &st) == 0 && S_ISLNK(st.st_mode)) {
		fd = path_open_trusted("/lib", &real, NULL, NULL);
		assert_true(fd >= 0);
		close(fd);
		assert_string_equal(real, "/usr/lib");
		free(real);
	}
	snprintf(p, sizeof(p), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(p), 0);
}

static void test_write_file_safe(void **state)
{
	char dir[] = "/tmp/ward-test-wfs.XXXXXX", p[PATH_MAX], v[PATH_MAX], buf[64] = "";
	char *link = NULL, *target = NULL;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(v, sizeof(v), "%s/victim", dir);
	f = fopen(v, "we");
	assert_non_null(f);
	fputs("precious", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/result", dir);
	assert_int_equal(symlink(v, p), 0);
	assert_int_equal(write_file_safe(p, "x\n", 2, 0644, &link, &target), -ELOOP);
	assert_string_equal(target, v);
	free(link);
	free(target);
	f = fopen(v, "re");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "precious");

	snprintf(p, sizeof(p), "%s/fresh", dir);
	assert_int_equal(write_file_safe(p, "hello\n", 6, 0644, NULL, NULL), 0);
	assert_int_equal(write_file_safe(p, "again\n", 6, 0644, NULL, NULL), 0);
	f = fopen(p, "re");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "again\n");
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workspace_check_table),
		cmocka_unit_test(test_path_is_system_dir),
		cmocka_unit_test(test_path_open_trusted),
		cmocka_unit_test(test_write_file_safe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
