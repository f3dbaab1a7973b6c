/* Landlock: the ABI table (which rights each ABI adds and which an older
 * kernel strips), the plan's degraded/enforced names, and, where the kernel
 * has Landlock, the plan applied in a forked child. */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/strv.h"
#include "linux/landlock.h"
#include "linux/syscall-wrappers.h"

static void assert_rights_equal(const LandlockAbiRights *a, const LandlockAbiRights *b)
{
	assert_int_equal(a->fs, b->fs);
	assert_int_equal(a->net, b->net);
	assert_int_equal(a->scoped, b->scoped);
	assert_int_equal(a->restrict_flags, b->restrict_flags);
}

static void test_landlock_abi_table_cumulative(void **state)
{
	LandlockAbiRights r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11;

	assert_int_equal(landlock_abi_rights(0, &r1), -EINVAL);
	assert_int_equal(landlock_abi_rights(1, &r1), 0);
	assert_int_equal(landlock_abi_rights(2, &r2), 0);
	assert_int_equal(landlock_abi_rights(3, &r3), 0);
	assert_int_equal(landlock_abi_rights(4, &r4), 0);
	assert_int_equal(landlock_abi_rights(5, &r5), 0);
	assert_int_equal(landlock_abi_rights(6, &r6), 0);
	assert_int_equal(landlock_abi_rights(7, &r7), 0);
	assert_int_equal(landlock_abi_rights(8, &r8), 0);
	assert_int_equal(landlock_abi_rights(9, &r9), 0);
	assert_int_equal(landlock_abi_rights(10, &r10), 0);
	assert_int_equal(landlock_abi_rights(11, &r11), 0);

	/* ABI 1: the 13 original rights, nothing else. */
	assert_int_equal(r1.fs, (1ULL << 13) - 1);
	assert_int_equal(r1.net, 0);
	assert_int_equal(r1.scoped, 0);
	assert_int_equal(r1.restrict_flags, 0);
	/* Each later ABI adds exactly its feature. */
	assert_int_equal(r2.fs, r1.fs | WARD_LL_FS_REFER);
	assert_int_equal(r3.fs, r2.fs | WARD_LL_FS_TRUNCATE);
	assert_int_equal(r3.net, 0);
	assert_int_equal(r4.fs, r3.fs);
	assert_int_equal(r4.net, WARD_LL_NET_BIND_TCP | WARD_LL_NET_CONNECT_TCP);
	assert_int_equal(r5.fs, r4.fs | WARD_LL_FS_IOCTL_DEV);
	assert_int_equal(r5.scoped, 0);
	assert_int_equal(r6.scoped, WARD_LL_SCOPE_ABSTRACT_UNIX_SOCKET | WARD_LL_SCOPE_SIGNAL);
	assert_int_equal(r6.restrict_flags, 0);
	assert_true(r7.restrict_flags & WARD_LL_RESTRICT_SELF_LOG_NEW_EXEC_ON);
	/* ABI 8 (thread sync) adds nothing ward uses: its child is
	 * single-threaded when it restricts itself. */
	assert_rights_equal(&r7, &r8);
	/* ABI 9: pathname UNIX sockets; ABI 10: UDP. */
	assert_int_equal(r9.fs, r8.fs | WARD_LL_FS_RESOLVE_UNIX);
	assert_int_equal(r9.net, r8.net);
	assert_int_equal(r10.fs, r9.fs);
	assert_int_equal(r10.net, r9.net | WARD_LL_NET_BIND_UDP | WARD_LL_NET_CONNECT_UDP);
	assert_int_equal(r10.restrict_flags, r7.restrict_flags);
	/* Above the target: clamped to 10. */
	assert_rights_equal(&r10, &r11);
	/* The values ward uses for the newer ABIs are the kernel's, wherever
	 * the installed headers know them. */
#ifdef LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	assert_int_equal(WARD_LL_FS_RESOLVE_UNIX, LANDLOCK_ACCESS_FS_RESOLVE_UNIX);
#endif
#ifdef LANDLOCK_ACCESS_NET_BIND_UDP
	assert_int_equal(WARD_LL_NET_BIND_UDP, LANDLOCK_ACCESS_NET_BIND_UDP);
#endif
#ifdef LANDLOCK_ACCESS_NET_CONNECT_UDP
	assert_int_equal(WARD_LL_NET_CONNECT_UDP, LANDLOCK_ACCESS_NET_CONNECT_UDP);
#endif
#ifdef LANDLOCK_RESTRICT_SELF_TSYNC
	assert_int_equal(WARD_LL_RESTRICT_SELF_TSYNC, LANDLOCK_RESTRICT_SELF_TSYNC);
#endif
}

static void test_landlock_class_rights_stripped_per_abi(void **state)
{
	uint64_t rw1 = landlock_class_access(LANDLOCK_CLASS_READ_WRITE, 1);
	uint64_t rw7 = landlock_class_access(LANDLOCK_CLASS_READ_WRITE, 7);

	assert_false(rw1 & (WARD_LL_FS_REFER | WARD_LL_FS_TRUNCATE | WARD_LL_FS_IOCTL_DEV));
	assert_true(rw1 & WARD_LL_FS_MAKE_REG);
	assert_int_equal(rw7, (1ULL << 16) - 1);
	/* Writable is not "connect to the sockets there" (ABI 9): only the
	 * run's private directories get that. */
	assert_false(landlock_class_access(LANDLOCK_CLASS_READ_WRITE, 9) & WARD_LL_FS_RESOLVE_UNIX);
	assert_true(landlock_class_access(LANDLOCK_CLASS_PRIVATE, 9) & WARD_LL_FS_RESOLVE_UNIX);
	assert_false(landlock_class_access(LANDLOCK_CLASS_PRIVATE, 8) & WARD_LL_FS_RESOLVE_UNIX);
	assert_int_equal(landlock_class_access(LANDLOCK_CLASS_PRIVATE, 7), rw7);
	assert_false(landlock_class_access(LANDLOCK_CLASS_READ_EXEC, 10) & WARD_LL_FS_RESOLVE_UNIX);
	assert_false(landlock_class_access(LANDLOCK_CLASS_READ_WRITE, 2) & WARD_LL_FS_TRUNCATE);
	assert_true(landlock_class_access(LANDLOCK_CLASS_READ_WRITE, 2) & WARD_LL_FS_REFER);

	/* read is never write nor exec; read_exec adds only exec. */
	assert_int_equal(landlock_class_access(LANDLOCK_CLASS_READ, 7),
			 WARD_LL_FS_READ_FILE | WARD_LL_FS_READ_DIR);
	assert_int_equal(landlock_class_access(LANDLOCK_CLASS_READ_EXEC, 7),
			 WARD_LL_FS_READ_FILE | WARD_LL_FS_READ_DIR | WARD_LL_FS_EXECUTE);

	/* Devices get ioctl only where the ABI has it, never creation. */
	assert_false(landlock_class_access(LANDLOCK_CLASS_DEVICE, 4) & WARD_LL_FS_IOCTL_DEV);
	assert_true(landlock_class_access(LANDLOCK_CLASS_DEVICE, 5) & WARD_LL_FS_IOCTL_DEV);
	assert_false(landlock_class_access(LANDLOCK_CLASS_DEVICE, 7) &
		     (WARD_LL_FS_MAKE_REG | WARD_LL_FS_MAKE_CHAR | WARD_LL_FS_EXECUTE));

	/* /proc: write existing files (with O_TRUNC where the ABI knows it),
	 * never execute or create. */
	assert_true(landlock_class_access(LANDLOCK_CLASS_PROC, 7) & WARD_LL_FS_WRITE_FILE);
	assert_true(landlock_class_access(LANDLOCK_CLASS_PROC, 7) & WARD_LL_FS_TRUNCATE);
	assert_false(landlock_class_access(LANDLOCK_CLASS_PROC, 2) & WARD_LL_FS_TRUNCATE);
	assert_false(landlock_class_access(LANDLOCK_CLASS_PROC, 7) &
		     (WARD_LL_FS_EXECUTE | WARD_LL_FS_MAKE_REG | WARD_LL_FS_REMOVE_FILE));

	/* list: directories only, never a file's contents. */
	assert_int_equal(landlock_class_access(LANDLOCK_CLASS_LIST, 7), WARD_LL_FS_READ_DIR);

	assert_int_equal(landlock_class_access(_LANDLOCK_CLASS_MAX, 7), 0);
	assert_int_equal(landlock_class_access(LANDLOCK_CLASS_READ, 0), 0);
	assert_string_equal(landlock_class_to_string(LANDLOCK_CLASS_READ_EXEC), "read_exec");
	assert_null(landlock_class_to_string(_LANDLOCK_CLASS_INVALID));
}

static const LandlockPathRule some_rules[] = {
	{ "/usr", LANDLOCK_CLASS_READ_EXEC },
	{ "/work", LANDLOCK_CLASS_READ_WRITE },
};

static void test_landlock_plan_degraded_names(void **state)
{
	LandlockRequest req = {
		.rules = some_rules, .n_rules = 2, .restrict_tcp = true,
	};
	LandlockPlan *p = NULL;

	/* ABI 3: fs, refer, truncate; no net, ioctl-dev, scopes. */
	assert_int_equal(landlock_plan_new_for_abi(&req, 3, &p), 0);
	assert_int_equal(landlock_plan_abi(p), 3);
	assert_true(strv_contains(landlock_plan_enforced(p), "landlock-fs"));
	assert_true(strv_contains(landlock_plan_enforced(p), "landlock-refer"));
	assert_true(strv_contains(landlock_plan_enforced(p), "landlock-truncate"));
	assert_false(strv_contains(landlock_plan_enforced(p), "landlock-net"));
	assert_true(strv_contains(landlock_plan_degraded(p), "landlock-net"));
	assert_true(strv_contains(landlock_plan_degraded(p), "landlock-ioctl-dev"));
	assert_true(strv_contains(landlock_plan_degraded(p), "landlock-scope"));
	assert_int_equal(strv_length(landlock_plan_degraded(p)), 3);
	p = landlock_plan_free(p);

	/* Without TCP restriction asked for, "landlock-net" is neither. */
	req.restrict_tcp = false;
	assert_int_equal(landlock_plan_new_for_abi(&req, 3, &p), 0);
	assert_false(strv_contains(landlock_plan_degraded(p), "landlock-net"));
	p = landlock_plan_free(p);

	/* ABI 7: everything enforced, nothing degraded. */
	req.restrict_tcp = true;
	assert_int_equal(landlock_plan_new_for_abi(&req, 7, &p), 0);
	assert_int_equal(strv_length(landlock_plan_degraded(p)), 0);
	assert_true(strv_contains(landlock_plan_enforced(p), "landlock-net"));
	assert_true(strv_contains(landlock_plan_enforced(p), "landlock-scope-signal"));
	assert_true(strv_contains(landlock_plan_enforced(p), "landlock-scope-abstract-unix"));

	/* ABI 7 lacks 9 and 10: missing (named, with a reason), never
	 * degraded: --strict does not refuse a T2 run for them. */
	assert_true(strv_contains(landlock_plan_missing(p), "landlock-unix-path"));
	assert_false(strv_contains(landlock_plan_missing(p), "landlock-udp"));
	assert_non_null(landlock_missing_reason("landlock-unix-path"));
	p = landlock_plan_free(p);
	req.restrict_udp = true;
	assert_int_equal(landlock_plan_new_for_abi(&req, 7, &p), 0);
	assert_true(strv_contains(landlock_plan_missing(p), "landlock-udp"));
	assert_int_equal(strv_length(landlock_plan_degraded(p)), 0);
	p = landlock_plan_free(p);

	/* ABI 8: as 7. ABI 9: unix-path enforced. ABI 10: UDP too. */
	assert_int_equal(landlock_plan_new_for_abi(&req, 8, &p), 0);
	assert_int_equal(landlock_plan_abi(p), 8);
	assert_true(strv_contains(landlock_plan_missing(p), "landlock-unix-path"));
	p = landlock_plan_free(p);
	assert_int_equal(landlock_plan_new_for_abi(&req, 9, &p), 0);
	assert_int_equal(landlock_plan_abi(p), 9);
	assert_true(strv_contains(landlock_plan_enforced(p), "landlock-unix-path"));
	assert_false(strv_contains(landlock_plan_missing(p), "landlock-unix-path"));
	assert_true(strv_contains(landlock_plan_missing(p), "landlock-udp"));
	p = landlock_plan_free(p);
	assert_int_equal(landlock_plan_new_for_abi(&req, 10, &p), 0);
	assert_true(strv_contains(landlock_plan_enforced(p), "landlock-udp"));
	assert_int_equal(strv_length(landlock_plan_missing(p)), 0);
	p = landlock_plan_free(p);
	req.restrict_udp = false;

	/* A kernel newer than the target is used at the target. */
	assert_int_equal(landlock_plan_new_for_abi(&req, 12, &p), 0);
	assert_int_equal(landlock_plan_abi(p), 10);
	p = landlock_plan_free(p);

	/* A pinned target wins over a newer kernel. */
	req.target_abi = 2;
	assert_int_equal(landlock_plan_new_for_abi(&req, 7, &p), 0);
	assert_int_equal(landlock_plan_abi(p), 2);
	assert_true(strv_contains(landlock_plan_degraded(p), "landlock-truncate"));
	p = landlock_plan_free(p);

	/* No Landlock: a plan that applies nothing and says why. */
	assert_int_equal(landlock_plan_new_for_abi(&req, -EOPNOTSUPP, &p), 0);
	assert_int_equal(landlock_plan_abi(p), 0);
	assert_int_equal(landlock_plan_errno(p), EOPNOTSUPP);
	assert_true(strv_contains(landlock_plan_degraded(p), "landlock"));
	assert_int_equal(strv_length(landlock_plan_enforced(p)), 0);
	assert_int_equal(landlock_plan_apply(p), 0);
	p = landlock_plan_free(p);
}

static void test_landlock_plan_rejects_bad_rules(void **state)
{
	LandlockPathRule bad[] = { { "relative/path", LANDLOCK_CLASS_READ } };
	LandlockPathRule badcls[] = { { "/usr", _LANDLOCK_CLASS_MAX } };
	LandlockRequest req = { .rules = bad, .n_rules = 1 };
	LandlockPlan *p = NULL;

	assert_int_equal(landlock_plan_new_for_abi(&req, 7, &p), -EINVAL);
	assert_null(p);
	req.rules = badcls;
	assert_int_equal(landlock_plan_new_for_abi(&req, 7, &p), -EINVAL);
	assert_null(p);
	assert_null(landlock_plan_free(NULL));
}

/* Fork, run @fn in the child (which applies Landlock to itself only) and
 * return its exit code; 0 means every check inside passed. */
static int in_child(int (*fn)(const char *), const char *dir)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn(dir));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static char tmpdir[] = "/tmp/ward-test-landlock-XXXXXX";

static int child_fs(const char *dir)
{
	char allowed[256], secret[256], rwfile[256];
	LandlockPathRule rules[2];
	LandlockRequest req = { .rules = rules, .n_rules = 2 };
	LandlockPlan *p = NULL;
	int fd;

	snprintf(allowed, sizeof(allowed), "%s/ro", dir);
	snprintf(rwfile, sizeof(rwfile), "%s/rw", dir);
	snprintf(secret, sizeof(secret), "%s/secret/key", dir);
	rules[0] = (LandlockPathRule){ allowed, LANDLOCK_CLASS_READ };
	rules[1] = (LandlockPathRule){ rwfile, LANDLOCK_CLASS_READ_WRITE };
	if (landlock_plan_new(&req, &p) < 0)
		return 10;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return 11;
	if (landlock_plan_apply(p) < 0)
		return 12;
	landlock_plan_free(p);

	snprintf(allowed, sizeof(allowed), "%s/ro/file", dir);
	fd = open(allowed, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 20; /* read of an allowed file must work */
	close(fd);
	if (open(allowed, O_WRONLY | O_CLOEXEC) >= 0 || errno != EACCES)
		return 21; /* write to a read path must fail */
	if (open(secret, O_RDONLY | O_CLOEXEC) >= 0 || errno != EACCES)
		return 22; /* a path with no rule must be unreadable */
	snprintf(rwfile, sizeof(rwfile), "%s/rw/new", dir);
	fd = open(rwfile, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 23; /* create in a read_write dir must work */
	close(fd);
	if (unlink(rwfile) < 0)
		return 24;
	snprintf(rwfile, sizeof(rwfile), "%s/ro/new", dir);
	if (open(rwfile, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) >= 0 || errno != EACCES)
		return 25; /* create in a read dir must fail */
	return 0;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mkdir_in(const char *dir, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(mkdir(path, 0700), 0);
}

static int child_stdio(const char *arg);

static void test_landlock_apply_fs_in_child(void **state)
{
	if (landlock_abi_version() < 1)
		skip();
	assert_non_null(mkdtemp(tmpdir));
	mkdir_in(tmpdir, "ro");
	mkdir_in(tmpdir, "rw");
	mkdir_in(tmpdir, "secret");
	write_file(tmpdir, "ro/file", "public\n");
	write_file(tmpdir, "secret/key", "secret\n");
	assert_int_equal(in_child(child_fs, tmpdir), 0);
	assert_int_equal(in_child(child_stdio, tmpdir), 0);
	{
		char off[300];

		snprintf(off, sizeof(off), "%s+", tmpdir);
		assert_int_equal(in_child(child_stdio, off), 0);
	}
	/* Host side: the child's denied create left nothing behind. */
	assert_int_equal(access("/tmp", F_OK), 0);
	{
		char p[256];

		snprintf(p, sizeof(p), "%s/ro/new", tmpdir);
		assert_int_equal(access(p, F_OK), -1);
	}
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		assert_int_equal(system(cmd), 0);
	}
}

/* fd 0 is a read-only host file and fd 1 a writable one, neither covered
 * by a rule, as when the caller redirects them; @dir ends in "+" when stdio
 * rules are off. A rule may grant no more than the descriptor: stdin may
 * be reopened for reading only, and a writable regular file gets no rule
 * at all (ward relays it through a pipe: stdio-relay.h), so that an
 * O_APPEND log cannot be reopened with O_TRUNC. */
static int child_stdio(const char *arg)
{
	char dir[256], out[300], in[300];
	bool off = arg[strlen(arg) - 1] == '+';
	LandlockRequest req = { .no_stdio_rules = off };
	LandlockPlan *p = NULL;
	int fd;

	snprintf(dir, sizeof(dir), "%.*s", (int)(strlen(arg) - (off ? 1 : 0)), arg);
	snprintf(out, sizeof(out), "%s/secret/out", dir);
	snprintf(in, sizeof(in), "%s/secret/in", dir);
	fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0 || dup2(fd, 1) != 1)
		return 10;
	close(fd);
	fd = open(in, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 12;
	close(fd);
	fd = open(in, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || dup2(fd, 0) != 0)
		return 13;
	close(fd);
	if (landlock_plan_new(&req, &p) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    landlock_plan_apply(p) < 0)
		return 11;
	landlock_plan_free(p);
	/* Never a truncating reopen of the writable file. */
	fd = open("/proc/self/fd/1", O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd >= 0 || errno != EACCES)
		return 20;
	fd = open("/proc/self/fd/0", O_RDONLY | O_CLOEXEC);
	if (off)
		return fd < 0 && errno == EACCES ? 0 : 21;
	if (fd < 0)
		return 22; /* reopening our own stdin for reading works */
	close(fd);
	/* ... but only as it was opened: no write, no truncate. */
	if (open("/proc/self/fd/0", O_WRONLY | O_CLOEXEC) >= 0 || errno != EACCES)
		return 23;
	if (truncate(in, 0) == 0 || errno != EACCES)
		return 24;
	/* And the directory around it is still closed. */
	snprintf(out, sizeof(out), "%s/secret/key", dir);
	if (open(out, O_RDONLY | O_CLOEXEC) >= 0 || errno != EACCES)
		return 25;
	return 0;
}

static int bind_port(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -errno;
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static int child_net(const char *unused)
{
	static uint16_t bind_ok[] = { 0 };
	LandlockRequest req = { .restrict_tcp = true, .tcp_bind_ports = bind_ok,
				.n_tcp_bind_ports = 1 };
	LandlockPlan *p = NULL;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	uint16_t free_port;
	int fd;

	/* Find a port that is free, so a failure below is Landlock's. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		return 10;
	free_port = ntohs(sa.sin_port);
	close(fd);

	if (landlock_plan_new(&req, &p) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    landlock_plan_apply(p) < 0)
		return 11;
	landlock_plan_free(p);
	if (bind_port(free_port) != -EACCES)
		return 20; /* a port not in the list */
	if (bind_port(0) != 0)
		return 21; /* port 0 (ephemeral) was allowed */
	if (kill(getppid(), 0) == 0 || errno != EPERM)
		return 22; /* ABI 6 signal scope: the parent is outside */
	return 0;
}

static void test_landlock_apply_net_and_scope_in_child(void **state)
{
	if (landlock_abi_version() < 6)
		skip();
	assert_int_equal(in_child(child_net, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_landlock_abi_table_cumulative),
		cmocka_unit_test(test_landlock_class_rights_stripped_per_abi),
		cmocka_unit_test(test_landlock_plan_degraded_names),
		cmocka_unit_test(test_landlock_plan_rejects_bad_rules),
		cmocka_unit_test(test_landlock_apply_fs_in_child),
		cmocka_unit_test(test_landlock_apply_net_and_scope_in_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
