/* The run module's outputs, byte for byte against golden files: the result
 * object (tests/data/expected/result-*.json: a normal run, a timeout, a
 * command not found, a policy error) and the start, exit and error events
 * (tests/data/expected/run-events.jsonl). Then the lifecycle: a run that
 * fails before its first phase has a complete result, --result-fd gets one
 * line, and run_prepare() leaves nothing on the host (no state or config
 * dir, no audit record) while run_acquire() makes them. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "run/run-result.h"
#include "run/run.h"
#include "ward/ward.h"

static char tmpdir[64];

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-run-result-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The first line of @name in tests/data/expected/, or line @nth. */
static char *golden_line(const char *name, int nth)
{
	char path[512], buf[16384];
	_cleanup_fclose_ FILE *f = NULL;

	snprintf(path, sizeof(path), "%s/expected/%s", TEST_DATA_DIR, name);
	f = fopen(path, "re");
	assert_non_null(f);
	for (int i = 0; i <= nth; i++)
		assert_non_null(fgets(buf, sizeof(buf), f));
	buf[strcspn(buf, "\n")] = '\0';
	return strdup(buf);
}

static void check_golden(cJSON *obj, const char *name, int nth)
{
	_cleanup_free_ char *got = cJSON_PrintUnformatted(obj), *want = golden_line(name, nth);

	if (strcmp(got, want) != 0)
		printf("# %s[%d] got:\n# %s\n", name, nth, got);
	assert_string_equal(got, want);
	cJSON_Delete(obj);
}

static char *const argv_make[] = { "make", "test", NULL };
static char *const argv_missing[] = { "/nonexistent/cmd", NULL };

static void test_result_normal(void **state)
{
	char *deg[] = { "cgroup-v2", NULL };
	char *partly[] = { "unix-pathname", NULL };
	RunResult r = { .exit_code = 2, .status = 2, .started = true, .duration_ms = 6551,
			.tier = 2, .session_id = "9f1c2a7b4e0d3c55", .degraded = deg,
			.partly_held = partly };
	RunOutcome o = { .result = &r, .session_id = r.session_id, .argv = argv_make,
			 .workspace = "/home/you/proj" };

	check_golden(run_result_object(&o), "result-normal.json", 0);
	check_golden(run_event_exit(&o), "run-events.jsonl", 1);
}

static void test_result_timeout_with_facts(void **state)
{
	RunResult r = { .exit_code = WARD_EXIT_TIMEOUT, .status = -1, .signal = 9,
			.started = true, .timed_out = true, .duration_ms = 5004, .tier = 2,
			.session_id = "0c4e1b9a77d2f310", .cow = true, .quarantined = 1 };
	_cleanup_cjson_ cJSON *facts = cJSON_Parse(
		"{\"changes\":{\"added\":1,\"modified\":0,\"deleted\":0,\"total\":1,\"refused\":0},"
		"\"net_refused\":[{\"host\":\"evil.test\",\"port\":443,\"reason\":\"not in "
		"network.allow\"}],\"net_attempts\":{\"no_route\":1,\"udp_no_port\":0,"
		"\"tcp_refused\":0}}");
	RunOutcome o = { .result = &r, .session_id = r.session_id, .argv = argv_make,
			 .workspace = "/home/you/proj", .facts = facts, .audit_error = -ENOSPC,
			 .events_lost = 2 };

	check_golden(run_result_object(&o), "result-timeout.json", 0);
	check_golden(run_event_exit(&o), "run-events.jsonl", 2);
}

static void test_result_not_found(void **state)
{
	WardError e = { .step = "exec", .detail = "exec: /nonexistent/cmd", .error = ENOENT };
	RunResult r = { .exit_code = WARD_EXIT_NOTFOUND, .status = -1, .duration_ms = 12,
			.tier = 2, .session_id = "5b0f9e2d41c8a736" };
	RunOutcome o = { .result = &r, .error = &e, .session_id = r.session_id,
			 .argv = argv_missing, .workspace = "/home/you/proj" };

	check_golden(run_result_object(&o), "result-setup.json", 0);
	check_golden(run_event_exit(&o), "run-events.jsonl", 3);
	check_golden(run_event_error(&o), "run-events.jsonl", 4);
}

static void test_result_policy_error(void **state)
{
	WardError e = { .step = "policy",
			.detail = "Invalid policy: /home/you/bad.json: limits.pids: expected a "
				  "positive number" };
	RunResult r = { .exit_code = WARD_EXIT_SETUP, .status = -1, .tier = 2,
			.session_id = "3e8d2c1f0a9b7654" };
	RunOutcome o = { .result = &r, .error = &e, .session_id = r.session_id,
			 .argv = argv_make, .workspace = "/home/you/proj" };

	check_golden(run_result_object(&o), "result-policy.json", 0);
	check_golden(run_event_error(&o), "run-events.jsonl", 5);
}

static void test_event_start(void **state)
{
	char *const sources[] = { "/home/you/.config/ward/policy.json", NULL };
	const uint16_t ports[] = { 5432 };
	_cleanup_cjson_ cJSON *desc = cJSON_Parse(
		"{\"enforced\":[\"landlock-fs\",\"seccomp\"],\"degraded\":[],\"landlock_abi\":7,"
		"\"tier\":99}");
	_cleanup_cjson_ cJSON *hidden =
		cJSON_Parse("[{\"path\":\"/opt/x/bin\",\"expose\":\"fs.read_exec: [\\\"/opt/x\\\"]\"}]");
	char *const partly[] = { "unix-pathname", NULL };
	RunStart s = { .argv = argv_make, .workspace = "/home/you/proj", .tier = 2,
		       .partly_held = partly,
		       .policy_hash = "abababababababababababababababababababababababababababababababab",
		       .policy_sources = sources, .network = "proxy", .host_ports = ports,
		       .n_host_ports = 1, .cow = true, .path_hidden = hidden, .describe = desc };

	/* The backend's description cannot override the run's own fields. */
	check_golden(run_event_start(&s), "run-events.jsonl", 0);
}

static void test_error_message(void **state)
{
	WardError e = { .step = "session", .detail = "Failed to open session 'x'", .error = ENOENT };
	char buf[256];

	run_error_message(&e, buf, sizeof(buf));
	assert_string_equal(buf, "Failed to open session 'x': No such file or directory");
	e = (WardError){ .step = "strict", .detail = "Refusing" };
	run_error_message(&e, buf, sizeof(buf));
	assert_string_equal(buf, "Refusing");
}

/* Counts the errors a run reports through its callback. */
static void logger(void *userdata, RunLogLevel level, const char *message)
{
	if (level == RUN_LOG_ERROR)
		(*(int *)userdata)++;
}

/* A run failed by its caller (the CLI's usage error) before any phase. */
static void test_run_fail_before_prepare(void **state)
{
	RunRequest req = RUN_REQUEST_INIT;
	int logged = 0;
	Run *run;
	cJSON *obj;

	req.log = logger;
	req.log_userdata = &logged;
	run = run_new(&req);
	assert_non_null(run);
	assert_int_equal(run_fail(run, "arguments", 0, "unknown option '--x'"), -EINVAL);
	assert_int_equal(run_prepare(run), -EINVAL);
	assert_int_equal(run_acquire(run), -EINVAL);
	assert_int_equal(run_execute(run), -EINVAL);
	assert_int_equal(run_result(run)->exit_code, WARD_EXIT_SETUP);
	assert_string_equal(run_error(run)->step, "arguments");
	obj = run_result_json(run);
	assert_int_equal(cJSON_GetObjectItem(obj, "v")->valueint, 1);
	assert_string_equal(cJSON_GetObjectItem(obj, "setup_step")->valuestring, "arguments");
	assert_string_equal(cJSON_GetObjectItem(obj, "error")->valuestring, "unknown option '--x'");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(obj, "errno")));
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(obj, "started")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(obj, "argv")));
	assert_int_equal(logged, 1); /* once, through the callback */
	cJSON_Delete(obj);
	run_free(run);
}

static bool exists(const char *dir, const char *name)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

/* prepare: policy -> plan, nothing on the host; acquire makes ward's dirs
 * and the audit log; the result goes to an fd as one line. */
static void check_prepare_is_pure(int tier)
{
	char home[128], ws[160], line[8192];
	char *const argv[] = { "true", NULL };
	int pfd[2], logged = 0;
	RunRequest req = RUN_REQUEST_INIT;
	Run *run;
	ssize_t n;

	snprintf(home, sizeof(home), "%s/home%d", tmpdir, tier);
	snprintf(ws, sizeof(ws), "%s/ws", home);
	assert_int_equal(mkdir(home, 0700), 0);
	assert_int_equal(mkdir(ws, 0700), 0);
	setenv("HOME", home, 1);
	unsetenv("XDG_STATE_HOME");
	unsetenv("XDG_CONFIG_HOME");
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);

	req.argv = argv;
	req.workspace = ws;
	req.tier = tier;
	req.result_fd = pfd[1];
	req.log = logger;
	req.log_userdata = &logged;
	run = run_new(&req);
	assert_non_null(run);
	assert_int_equal(run_prepare(run), 0);
	/* Nothing made: not ~/.local, not ~/.config, no session, no log. */
	assert_false(exists(home, ".local"));
	assert_false(exists(home, ".config"));
	assert_int_equal(run_acquire(run), 0);
	assert_true(exists(home, ".local/state/ward/audit.jsonl"));
	assert_true(exists(home, ".config/ward"));
	assert_string_not_equal(run_result(run)->session_id, "");
	/* Report without executing: the result still says what happened. */
	assert_int_equal(run_report(run), 0);
	n = read(pfd[0], line, sizeof(line) - 1);
	assert_true(n > 0);
	line[n] = '\0';
	assert_non_null(strchr(line, '\n'));
	assert_ptr_equal(strchr(line, '\n'), line + n - 1); /* one line */
	assert_non_null(strstr(line, "\"v\":1,"));
	assert_non_null(strstr(line, "\"started\":false"));
	run_free(run);
	close(pfd[0]);
	close(pfd[1]);
}

/* Tier 2's prepare probes the host's setup steps (probe-steps.h) and must
 * not write the answer's cache even where ward's state dir exists already:
 * acquire writes it. First of the tier-2 tests, so that this process has
 * no answer in memory yet and the probe runs here. */
static void test_prepare_writes_no_probe_cache(void **state)
{
	char home[128], ws[160], sdir[200];
	char *const argv[] = { "true", NULL };
	RunRequest req = RUN_REQUEST_INIT;
	int logged = 0;
	Run *run;

	/* Under a seccomp filter the answer is never cached (probe-steps.c). */
	FILE *st = fopen("/proc/self/status", "re");
	char l[256];
	bool filtered = false;
	while (st && fgets(l, sizeof(l), st))
		filtered = filtered || strncmp(l, "Seccomp:\t2", 10) == 0;
	if (st)
		fclose(st);
	if (filtered)
		skip();
	snprintf(home, sizeof(home), "%s/home-probe", tmpdir);
	snprintf(ws, sizeof(ws), "%s/ws", home);
	snprintf(sdir, sizeof(sdir), "%s/.local/state/ward", home);
	assert_int_equal(mkdir(home, 0700), 0);
	assert_int_equal(mkdir(ws, 0700), 0);
	assert_int_equal(mkdir_p(sdir, 0700), 0);
	setenv("HOME", home, 1);
	unsetenv("XDG_STATE_HOME");
	unsetenv("XDG_CONFIG_HOME");
	req.argv = argv;
	req.workspace = ws;
	req.tier = 2;
	req.log = logger;
	req.log_userdata = &logged;
	run = run_new(&req);
	assert_non_null(run);
	if (run_prepare(run) < 0) {
		run_free(run);
		skip(); /* no tier 2 here: nothing probed */
	}
	assert_false(exists(sdir, "probe-t2"));
	assert_int_equal(run_acquire(run), 0);
	assert_true(exists(sdir, "probe-t2"));
	run_free(run);
}

static void test_prepare_is_pure_tier0(void **state)
{
	check_prepare_is_pure(0);
}

/* Tier 1 as an entry of the table: a pure plan, the TMPDIR and the
 * session id only at acquire. */
static void test_prepare_is_pure_tier1(void **state)
{
	check_prepare_is_pure(1);
}

static void test_prepare_is_pure_tier2(void **state)
{
	check_prepare_is_pure(2);
}

/* A tier this host cannot run (tier 3 without a guest image) is refused
 * through the table, in prepare. */
static void test_unbuilt_tier(void **state)
{
	char *const argv[] = { "true", NULL };
	RunRequest req = RUN_REQUEST_INIT;
	int logged = 0;
	Run *run;

	setenv("WARD_VM_DIR", "/nonexistent/ward-vm", 1);

	req.argv = argv;
	req.tier = 3;
	req.log = logger;
	req.log_userdata = &logged;
	run = run_new(&req);
	assert_int_equal(run_prepare(run), -EOPNOTSUPP);
	assert_string_equal(run_error(run)->step, "tier");
	assert_int_equal(logged, 1); /* through the callback, not stderr */
	run_free(run);
	unsetenv("WARD_VM_DIR");
}

/* RunRequest.stdio: the command's fds 0..2 are the caller's descriptors,
 * not ward's own; a directory passed as stdin is not (T2: /dev/null). */
static void check_stdio(int tier)
{
	char home[128], ws[160], buf[256] = "";
	char *const argv[] = { "sh", "-c", "cat; echo out; echo err >&2; ls /proc/self/fd/0/ 2>&1 | head -1",
			       NULL };
	int in[2], out[2], dirfd, logged = 0;
	RunRequest req = RUN_REQUEST_INIT;
	Run *run;
	ssize_t n;
	size_t got = 0;

	snprintf(home, sizeof(home), "%s/stdio%d", tmpdir, tier);
	snprintf(ws, sizeof(ws), "%s/ws", home);
	assert_int_equal(mkdir(home, 0700), 0);
	assert_int_equal(mkdir(ws, 0700), 0);
	setenv("HOME", home, 1);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(write(in[1], "in\n", 3), 3);
	close(in[1]);

	req.argv = argv;
	req.workspace = ws;
	req.tier = tier;
	req.stdio[0] = in[0];
	req.stdio[1] = out[1];
	req.stdio[2] = out[1];
	req.log = logger;
	req.log_userdata = &logged;
	run = run_new(&req);
	assert_int_equal(run_all(run), 0);
	run_free(run);
	close(out[1]);
	while ((n = read(out[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(out[0]);
	close(in[0]);
	assert_non_null(strstr(buf, "in\nout\nerr\n"));

	/* A directory on stdin would lead into the host's tree. */
	if (tier != 2)
		return;
	dirfd = open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	req.stdio[0] = dirfd;
	req.stdio[1] = out[1];
	req.stdio[2] = out[1];
	run = run_new(&req);
	assert_int_equal(run_all(run), 0);
	run_free(run);
	close(out[1]);
	got = 0;
	while ((n = read(out[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(out[0]);
	close(dirfd);
	assert_null(strstr(buf, "passwd"));
	assert_non_null(strstr(buf, "out\nerr\n"));
}

static void test_stdio_tier0(void **state)
{
	check_stdio(0);
}

static void test_stdio_tier1(void **state)
{
	check_stdio(1);
}

static void test_stdio_tier2(void **state)
{
	check_stdio(2);
}

/* A passed descriptor that is not open is refused in prepare. */
static void test_stdio_bad_fd(void **state)
{
	char *const argv[] = { "true", NULL };
	RunRequest req = RUN_REQUEST_INIT;
	int logged = 0, r;
	char ws[128];
	Run *run;

	snprintf(ws, sizeof(ws), "%s/stdio2/ws", tmpdir); /* made by test_stdio_tier2 */
	req.argv = argv;
	req.workspace = ws;
	req.stdio[1] = 987;
	req.log = logger;
	req.log_userdata = &logged;
	run = run_new(&req);
	r = run_prepare(run);
	if (r != -EBADF)
		printf("# %s: %s\n", run_error(run)->step, run_error(run)->detail);
	assert_int_equal(r, -EBADF);
	assert_string_equal(run_error(run)->step, "stdio");
	run_free(run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_normal),
		cmocka_unit_test(test_result_timeout_with_facts),
		cmocka_unit_test(test_result_not_found),
		cmocka_unit_test(test_result_policy_error),
		cmocka_unit_test(test_event_start),
		cmocka_unit_test(test_error_message),
		cmocka_unit_test(test_run_fail_before_prepare),
		cmocka_unit_test(test_prepare_writes_no_probe_cache),
		cmocka_unit_test(test_prepare_is_pure_tier0),
		cmocka_unit_test(test_prepare_is_pure_tier1),
		cmocka_unit_test(test_prepare_is_pure_tier2),
		cmocka_unit_test(test_unbuilt_tier),
		cmocka_unit_test(test_stdio_tier0),
		cmocka_unit_test(test_stdio_tier1),
		cmocka_unit_test(test_stdio_tier2),
		cmocka_unit_test(test_stdio_bad_fd),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
