/* The audit writer: directory and file modes, one JSON object per line,
 * the envelope fields, and session ids. Each line is parsed back. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit/audit.h"
#include "common/cleanup.h"

static char tmpdir[64];

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-audit-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Read all lines of @path into @lines (at most @max), returning the count. */
static size_t read_lines(const char *path, char **lines, size_t max)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char buf[8192];
	size_t n = 0;

	assert_non_null(f);
	while (n < max && fgets(buf, sizeof(buf), f)) {
		size_t len = strlen(buf);
		assert_true(len > 0 && buf[len - 1] == '\n');
		buf[len - 1] = '\0';
		lines[n++] = strdup(buf);
	}
	return n;
}

static void check_ts(const char *ts)
{
	/* 2026-12-02T18:27:02.564Z */
	assert_int_equal(strlen(ts), 24);
	for (int i = 0; i < 24; i++) {
		switch (i) {
		case 4:
		case 7:
			assert_int_equal(ts[i], '-');
			break;
		case 10:
			assert_int_equal(ts[i], 'T');
			break;
		case 13:
		case 16:
			assert_int_equal(ts[i], ':');
			break;
		case 19:
			assert_int_equal(ts[i], '.');
			break;
		case 23:
			assert_int_equal(ts[i], 'Z');
			break;
		default:
			assert_true(ts[i] >= '0' && ts[i] <= '9');
		}
	}
}

static void check_ts_prefix(const char *ts)
{
	char buf[25];

	assert_true(strlen(ts) > 24 && ts[24] == '"');
	memcpy(buf, ts, 24);
	buf[24] = '\0';
	check_ts(buf);
}

static void test_audit_creates_dir_and_file_modes(void **state)
{
	char dir[128], path[160];
	AuditLog *a = NULL;
	struct stat st;
	int fl;

	snprintf(dir, sizeof(dir), "%s/state/ward", tmpdir);
	assert_int_equal(audit_open(dir, NULL, &a), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	fl = fcntl(audit_fd(a), F_GETFL);
	assert_true(fl & O_APPEND);
	assert_true(fcntl(audit_fd(a), F_GETFD) & FD_CLOEXEC);
	audit_close(a);
}

static void test_audit_line_format(void **state)
{
	char path[160], *lines[4] = { 0 };
	AuditLog *a = NULL;
	cJSON *f, *argv, *o, *c;
	size_t n;

	assert_int_equal(audit_open(tmpdir, "0123456789abcdef", &a), 0);
	f = cJSON_CreateObject();
	argv = cJSON_AddArrayToObject(f, "argv");
	cJSON_AddItemToArray(argv, cJSON_CreateString("sh"));
	cJSON_AddItemToArray(argv, cJSON_CreateString("-c\necho \"hi\"")); /* newline inside */
	cJSON_AddStringToObject(f, "workspace", "/w");
	cJSON_AddNumberToObject(f, "tier", 2);
	/* Reserved names cannot be forged by the caller. */
	cJSON_AddStringToObject(f, "event", "exit");
	cJSON_AddStringToObject(f, "v", "99");
	assert_int_equal(audit_write(a, "start", f), 0);
	assert_int_equal(audit_write(a, "exit", NULL), 0);
	audit_close(a);

	snprintf(path, sizeof(path), "%s/audit.jsonl", tmpdir);
	n = read_lines(path, lines, 4);
	assert_int_equal(n, 2);

	o = cJSON_Parse(lines[0]);
	assert_non_null(o);
	/* The envelope first, in this order. */
	c = o->child;
	assert_string_equal(c->string, "v");
	assert_int_equal(c->valuedouble, 1);
	c = c->next;
	assert_string_equal(c->string, "ts");
	check_ts(c->valuestring);
	c = c->next;
	assert_string_equal(c->string, "event");
	assert_string_equal(c->valuestring, "start");
	c = c->next;
	assert_string_equal(c->string, "session");
	assert_string_equal(c->valuestring, "0123456789abcdef");
	argv = cJSON_GetObjectItemCaseSensitive(o, "argv");
	assert_int_equal(cJSON_GetArraySize(argv), 2);
	assert_string_equal(cJSON_GetArrayItem(argv, 1)->valuestring, "-c\necho \"hi\"");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "workspace")->valuestring, "/w");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(o, "tier")->valuedouble, 2);
	assert_int_equal(cJSON_GetArraySize(o), 7);
	cJSON_Delete(o);

	o = cJSON_Parse(lines[1]);
	assert_non_null(o);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "event")->valuestring, "exit");
	assert_int_equal(cJSON_GetArraySize(o), 4);
	cJSON_Delete(o);
	free(lines[0]);
	free(lines[1]);
}

static void test_audit_no_session_and_append(void **state)
{
	char dir[128], path[160], *lines[4] = { 0 };
	AuditLog *a = NULL, *b = NULL;
	cJSON *o;

	snprintf(dir, sizeof(dir), "%s/two", tmpdir);
	/* Two writers on the same file append, never truncate. */
	assert_int_equal(audit_open(dir, NULL, &a), 0);
	assert_int_equal(audit_open(dir, "s2", &b), 0);
	assert_int_equal(audit_write(a, "net", NULL), 0);
	assert_int_equal(audit_write(b, "net", NULL), 0);
	assert_int_equal(audit_write(a, "error", NULL), 0);
	audit_close(a);
	audit_close(b);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	assert_int_equal(read_lines(path, lines, 4), 3);
	o = cJSON_Parse(lines[0]);
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "session"));
	cJSON_Delete(o);
	o = cJSON_Parse(lines[1]);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "session")->valuestring, "s2");
	cJSON_Delete(o);
	for (int i = 0; i < 3; i++)
		free(lines[i]);
}

/* A write that runs out of room (here the file size limit, the same short
 * write a full file system gives) leaves no fragment: the file is as before,
 * the call says why, and the log counts the loss. In a child: the rlimit
 * must not stay with the test runner. */
static void test_audit_short_write_leaves_no_fragment(void **state)
{
	char dir[128], path[160];
	AuditLog *a = NULL;
	struct stat st;
	int status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/short", tmpdir);
	assert_int_equal(audit_open(dir, "s", &a), 0);
	assert_int_equal(audit_write(a, "start", NULL), 0);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	assert_int_equal(stat(path, &st), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { (rlim_t)st.st_size + 10, (rlim_t)st.st_size + 10 };
		cJSON *o = cJSON_CreateObject();
		int err = 0;

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(1);
		cJSON_AddStringToObject(o, "pad", "0123456789012345678901234567890123456789");
		if (audit_write(a, "exit", o) != -EFBIG)
			_exit(2);
		if (audit_failures(a, &err) != 1 || err != -EFBIG)
			_exit(3);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	{
		struct stat after;

		assert_int_equal(stat(path, &after), 0);
		assert_int_equal(after.st_size, st.st_size);
	}
	/* The next record goes on as usual. */
	assert_int_equal(audit_write(a, "exit", NULL), 0);
	assert_int_equal(audit_failures(a, NULL), 0);
	audit_close(a);
}

static void test_audit_rejects_bad_input(void **state)
{
	char dir[128], path[160];
	AuditLog *a = NULL;

	/* fields must be an object (and is freed either way: ASan checks). */
	assert_int_equal(audit_open(tmpdir, NULL, &a), 0);
	assert_int_equal(audit_write(a, "x", cJSON_CreateArray()), -EINVAL);
	assert_int_equal(audit_write(a, NULL, NULL), -EINVAL);
	audit_close(a);

	/* A symlink in place of the log is refused, not followed. */
	snprintf(dir, sizeof(dir), "%s/link", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	assert_int_equal(symlink("/dev/null", path), 0);
	assert_int_equal(audit_open(dir, NULL, &a), -ELOOP);
}

/* Byte-for-byte against tests/data/expected/audit-run.jsonl, with the
 * timestamps replaced by "<TS>". */
static void test_audit_golden(void **state)
{
	char dir[128], path[160], *lines[4] = { 0 }, *want[4] = { 0 };
	AuditLog *a = NULL;
	cJSON *f, *argv;
	size_t n;

	snprintf(dir, sizeof(dir), "%s/golden", tmpdir);
	assert_int_equal(audit_open(dir, "0123456789abcdef", &a), 0);
	f = cJSON_CreateObject();
	argv = cJSON_AddArrayToObject(f, "argv");
	cJSON_AddItemToArray(argv, cJSON_CreateString("sh"));
	cJSON_AddItemToArray(argv, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(argv, cJSON_CreateString("echo \"hi\"\n"));
	cJSON_AddStringToObject(f, "workspace", "/w");
	cJSON_AddNumberToObject(f, "tier", 2);
	cJSON_AddStringToObject(f, "policy_hash",
				"abababababababababababababababababababababababababababababababab");
	assert_int_equal(audit_write(a, "start", f), 0);
	f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "exit_code", 0);
	cJSON_AddNumberToObject(f, "status", 0);
	cJSON_AddNullToObject(f, "signal");
	cJSON_AddBoolToObject(f, "timed_out", false);
	cJSON_AddNumberToObject(f, "duration_ms", 12);
	assert_int_equal(audit_write(a, "exit", f), 0);
	audit_close(a);

	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	n = read_lines(path, lines, 4);
	assert_int_equal(read_lines(TEST_DATA_DIR "/expected/audit-run.jsonl", want, 4), n);
	for (size_t i = 0; i < n; i++) {
		char *ts = strstr(lines[i], "\"ts\":\"");
		char norm[8192];

		assert_non_null(ts);
		ts += 6;
		check_ts_prefix(ts);
		snprintf(norm, sizeof(norm), "%.*s<TS>%s", (int)(ts - lines[i]), lines[i], ts + 24);
		assert_string_equal(norm, want[i]);
		free(lines[i]);
		free(want[i]);
	}
}

static void test_audit_session_id(void **state)
{
	char a[17], b[17];

	assert_int_equal(audit_new_session_id(a), 0);
	assert_int_equal(audit_new_session_id(b), 0);
	assert_int_equal(strlen(a), 16);
	assert_int_equal(strspn(a, "0123456789abcdef"), 16);
	assert_string_not_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_audit_creates_dir_and_file_modes),
		cmocka_unit_test(test_audit_line_format),
		cmocka_unit_test(test_audit_no_session_and_append),
		cmocka_unit_test(test_audit_short_write_leaves_no_fragment),
		cmocka_unit_test(test_audit_rejects_bad_input),
		cmocka_unit_test(test_audit_golden),
		cmocka_unit_test(test_audit_session_id),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
