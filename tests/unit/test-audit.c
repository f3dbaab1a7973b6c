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
#include <sys/socket.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit/audit-os.h"
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


/* Lines in @path and its rotated files .1 .. .@keep: each a JSON object
 * with an "n" (or none); counts in @seen[n]. Returns the line count. */
static size_t count_all(const char *path, unsigned keep, unsigned *seen, size_t max_n)
{
	size_t total = 0;

	for (unsigned i = 0; i <= keep; i++) {
		char p[256], buf[8192];
		FILE *f;

		if (i == 0)
			snprintf(p, sizeof(p), "%s", path);
		else
			snprintf(p, sizeof(p), "%s.%u", path, i);
		f = fopen(p, "re");
		if (!f)
			continue;
		while (fgets(buf, sizeof(buf), f)) {
			size_t len = strlen(buf);
			cJSON *o, *n;

			/* Whole lines only, each one JSON object. */
			assert_true(len > 0 && buf[len - 1] == '\n');
			o = cJSON_Parse(buf);
			assert_true(cJSON_IsObject(o));
			n = cJSON_GetObjectItemCaseSensitive(o, "n");
			if (cJSON_IsNumber(n) && n->valueint >= 0 && (size_t)n->valueint < max_n)
				seen[n->valueint]++;
			cJSON_Delete(o);
			total++;
		}
		fclose(f);
	}
	return total;
}

static void test_audit_rotation_env(void **state)
{
	AuditRotation r;
	char *err = NULL;

	unsetenv("WARD_AUDIT_MAX_SIZE");
	unsetenv("WARD_AUDIT_KEEP");
	assert_int_equal(audit_rotation_from_env(&r, &err), 0);
	assert_true(r.max_size == AUDIT_MAX_SIZE_DEFAULT && r.keep == AUDIT_KEEP_DEFAULT);
	setenv("WARD_AUDIT_MAX_SIZE", "64M", 1);
	setenv("WARD_AUDIT_KEEP", "7", 1);
	assert_int_equal(audit_rotation_from_env(&r, &err), 0);
	assert_true(r.max_size == 64ULL << 20 && r.keep == 7);
	setenv("WARD_AUDIT_MAX_SIZE", "0", 1);
	assert_int_equal(audit_rotation_from_env(&r, &err), 0);
	assert_true(r.max_size == 0);
	setenv("WARD_AUDIT_MAX_SIZE", "12345", 1);
	assert_int_equal(audit_rotation_from_env(&r, &err), 0);
	assert_true(r.max_size == 12345);
	setenv("WARD_AUDIT_MAX_SIZE", "1KiB", 1);
	assert_int_equal(audit_rotation_from_env(&r, &err), 0);
	assert_true(r.max_size == 1024);
	const char *bad_size[] = { "", "-1", "1T", "M", "1 M", "99999999999999999999", "1.5M" };
	for (size_t i = 0; i < sizeof(bad_size) / sizeof(bad_size[0]); i++) {
		setenv("WARD_AUDIT_MAX_SIZE", bad_size[i], 1);
		assert_int_equal(audit_rotation_from_env(&r, &err), -EINVAL);
		assert_non_null(strstr(err, "WARD_AUDIT_MAX_SIZE"));
		free(err);
		err = NULL;
	}
	setenv("WARD_AUDIT_MAX_SIZE", "1M", 1);
	const char *bad_keep[] = { "0", "101", "x", "1K", "" };
	for (size_t i = 0; i < sizeof(bad_keep) / sizeof(bad_keep[0]); i++) {
		setenv("WARD_AUDIT_KEEP", bad_keep[i], 1);
		assert_int_equal(audit_rotation_from_env(&r, &err), -EINVAL);
		assert_non_null(strstr(err, "WARD_AUDIT_KEEP"));
		free(err);
		err = NULL;
	}
	/* An invalid setting: the log does not open (the caller says why). */
	AuditLog *a = NULL;
	setenv("WARD_AUDIT_KEEP", "0", 1);
	assert_int_equal(audit_open(tmpdir, NULL, &a), -EINVAL);
	unsetenv("WARD_AUDIT_MAX_SIZE");
	unsetenv("WARD_AUDIT_KEEP");
}

static void write_n(AuditLog *a, int n)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddNumberToObject(f, "n", n);
	cJSON_AddStringToObject(f, "pad", "..............................................");
	assert_int_equal(audit_write(a, "net", f), 0);
}

/* Past the limit the file becomes audit.jsonl.1, .1 becomes .2, ...; the
 * oldest beyond KEEP is dropped; no file goes over the limit (a line that
 * is longer than the limit alone would); nothing else is lost. */
static void test_audit_rotation(void **state)
{
	char dir[128], path[160], p[200];
	AuditRotation rot = { .max_size = 1000, .keep = 3 };
	unsigned seen[200] = { 0 };
	AuditLog *a = NULL;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/rot", tmpdir);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	assert_int_equal(audit_open(dir, "0123456789abcdef", &a), 0);
	audit_set_rotation(a, &rot);
	/* ~130 bytes a line: 7 per file. */
	for (int i = 0; i < 20; i++)
		write_n(a, i);
	for (unsigned i = 0; i <= 3; i++) {
		if (i)
			snprintf(p, sizeof(p), "%s.%u", path, i);
		else
			snprintf(p, sizeof(p), "%s", path);
		assert_int_equal(stat(p, &st), 0);
		assert_true(st.st_size <= 1000);
		assert_int_equal(st.st_mode & 07777, 0600);
	}
	assert_int_equal(count_all(path, 3, seen, 200), 20);
	/* More: the oldest go, the newest stay, none twice. */
	for (int i = 20; i < 60; i++)
		write_n(a, i);
	snprintf(p, sizeof(p), "%s.4", path);
	assert_int_equal(stat(p, &st), -1);
	memset(seen, 0, sizeof(seen));
	size_t total = count_all(path, 3, seen, 200);
	assert_true(total >= 22 && total <= 28);
	for (int i = 60 - (int)total; i < 60; i++)
		assert_int_equal(seen[i], 1);
	audit_close(a);
}

/* Several processes write at once, some on their own open of the log and
 * some on one inherited across fork (as the proxy does), while the file
 * rotates under them: every line is whole and none is lost (KEEP is large
 * enough to hold them all). */
static void test_audit_rotation_concurrent(void **state)
{
	enum { PROCS = 8, LINES = 150 };
	char dir[128], path[160];
	AuditRotation rot = { .max_size = 4096, .keep = 100 };
	static unsigned seen[PROCS * LINES];
	AuditLog *shared = NULL;
	pid_t pids[PROCS];

	snprintf(dir, sizeof(dir), "%s/conc", tmpdir);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	assert_int_equal(audit_open(dir, "shared", &shared), 0);
	audit_set_rotation(shared, &rot);
	for (int p = 0; p < PROCS; p++) {
		pids[p] = fork();
		assert_true(pids[p] >= 0);
		if (pids[p] == 0) {
			AuditLog *a = shared;
			if (p % 2 == 0) {
				a = NULL;
				if (audit_open(dir, "own", &a) < 0)
					_exit(1);
				audit_set_rotation(a, &rot);
			}
			for (int i = 0; i < LINES; i++) {
				cJSON *f = cJSON_CreateObject();
				cJSON_AddNumberToObject(f, "n", p * LINES + i);
				if (audit_write(a, "net", f) < 0)
					_exit(2);
			}
			_exit(0);
		}
	}
	for (int p = 0; p < PROCS; p++) {
		int status;
		assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(count_all(path, 100, seen, PROCS * LINES), PROCS * LINES);
	for (int i = 0; i < PROCS * LINES; i++)
		assert_int_equal(seen[i], 1);
	/* It did rotate. */
	char p1[200];
	snprintf(p1, sizeof(p1), "%s.5", path);
	assert_int_equal(access(p1, F_OK), 0);
	audit_close(shared);
}

/* A writer whose file was rotated away by another process writes into the
 * new file, on the same fd number (forked processes keep it by number). */
static void test_audit_rotation_reopen_same_fd(void **state)
{
	char dir[128], path[160], moved[200];
	AuditLog *a = NULL;
	struct stat st, fst;
	int fd;

	snprintf(dir, sizeof(dir), "%s/reopen", tmpdir);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	snprintf(moved, sizeof(moved), "%s.1", path);
	assert_int_equal(audit_open(dir, NULL, &a), 0);
	fd = audit_fd(a);
	write_n(a, 1);
	assert_int_equal(rename(path, moved), 0);
	write_n(a, 2);
	assert_int_equal(audit_fd(a), fd);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(fstat(fd, &fst), 0);
	assert_true(st.st_ino == fst.st_ino);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(fd, F_GETFL) & O_APPEND);
	unsigned seen[4] = { 0 };
	assert_int_equal(count_all(path, 0, seen, 4), 1);
	assert_int_equal(seen[2], 1);
	audit_close(a);
}

/* Read what is in @fd now (non-blocking) into @buf. */
static size_t drain(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t k;

	while (n < cap - 1 && (k = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)k;
	buf[n] = '\0';
	return n;
}

/* Every line of the log also goes to the events fd, byte for byte the
 * same; the log keeps its own close-on-exec copy of the fd. */
static void test_audit_events_tee(void **state)
{
	char dir[128], path[160], got[8192], want[8192];
	AuditLog *a = NULL;
	int p[2];

	snprintf(dir, sizeof(dir), "%s/tee", tmpdir);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	assert_int_equal(audit_open(dir, "s", &a), 0);
	assert_int_equal(audit_set_events_fd(a, p[1]), 0);
	assert_int_equal(audit_set_events_fd(a, p[1]), -EEXIST);
	assert_true(audit_events_fd(a) != p[1]);
	assert_true(fcntl(audit_events_fd(a), F_GETFD) & FD_CLOEXEC);
	write_n(a, 1);
	write_n(a, 2);
	close(p[1]);
	{
		int f = open(path, O_RDONLY);
		drain(f, want, sizeof(want));
		close(f);
	}
	drain(p[0], got, sizeof(got));
	assert_string_equal(got, want);
	assert_int_equal(audit_events_lost(a, NULL), 0);
	audit_close(a);
	close(p[0]);

	/* Not writable: refused. */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(audit_open(dir, "s", &a), 0);
	assert_int_equal(audit_set_events_fd(a, p[0]), -EBADF);
	assert_int_equal(audit_set_events_fd(a, 1000), -EBADF);
	audit_close(a);
	close(p[0]);
	close(p[1]);
}

/* A reader that stopped reading: lines that do not fit are dropped and
 * counted, nothing blocks for long (the test would hang otherwise), and the
 * stream resumes, with whole lines only, once the reader catches up. The
 * harness's own end of the pipe stays blocking. */
static void test_audit_events_slow_reader(void **state)
{
	char dir[128];
	AuditLog *a = NULL;
	static char buf[1 << 20];
	int p[2], written = 0;

	snprintf(dir, sizeof(dir), "%s/slow", tmpdir);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fcntl(p[1], F_SETPIPE_SZ, 4096) >= 0, 1);
	assert_int_equal(audit_open(dir, "s", &a), 0);
	assert_int_equal(audit_set_events_fd(a, p[1]), 0);
	assert_false(fcntl(p[1], F_GETFL) & O_NONBLOCK);
	for (int i = 0; i < 200; i++, written++)
		write_n(a, i);
	unsigned lost = audit_events_lost(a, NULL);
	assert_true(lost > 0 && lost < 200);
	/* The reader catches up: the next line gets through whole. */
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	size_t n = drain(p[0], buf, sizeof(buf));
	write_n(a, 1000);
	assert_int_equal(audit_events_lost(a, NULL), lost);
	n += drain(p[0], buf + n, sizeof(buf) - n);
	size_t lines = 0;
	for (char *l = buf, *e; (e = strchr(l, '\n')); l = e + 1, lines++) {
		*e = '\0';
		cJSON *o = cJSON_Parse(l);
		assert_true(cJSON_IsObject(o));
		cJSON_Delete(o);
	}
	assert_int_equal(lines + lost, written + 1);
	audit_close(a);
	close(p[0]);
	close(p[1]);
}

/* The reader is gone: no SIGPIPE (the default action would kill the test),
 * the loss is counted and the reason given; the log itself is complete. */
static void test_audit_events_reader_gone(void **state)
{
	char dir[128], path[160];
	AuditLog *a = NULL;
	int p[2], err = 0;
	unsigned seen[8] = { 0 };

	snprintf(dir, sizeof(dir), "%s/gone", tmpdir);
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	signal(SIGPIPE, SIG_DFL);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(audit_open(dir, "s", &a), 0);
	assert_int_equal(audit_set_events_fd(a, p[1]), 0);
	close(p[0]);
	write_n(a, 1);
	write_n(a, 2);
	assert_int_equal(audit_events_lost(a, &err), 2);
	assert_int_equal(err, -EPIPE);
	assert_int_equal(count_all(path, 0, seen, 8), 2);
	{
		sigset_t pending;
		sigpending(&pending);
		assert_false(sigismember(&pending, SIGPIPE));
	}
	audit_close(a);
	close(p[1]);

	/* A socket whose peer is gone: the same. */
	int sp[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	assert_int_equal(audit_open(dir, "s", &a), 0);
	assert_int_equal(audit_set_events_fd(a, sp[0]), 0);
	close(sp[1]);
	write_n(a, 3);
	assert_int_equal(audit_events_lost(a, &err), 1);
	assert_int_equal(err, -EPIPE);
	audit_close(a);
	close(sp[0]);
}

/* A forked process (the proxy) writes through the same log: its lines
 * reach the stream, and its losses are counted where the parent reads the
 * count. Lines longer than PIPE_BUF from both processes never interleave. */
static void test_audit_events_across_fork(void **state)
{
	char dir[128];
	AuditLog *a = NULL;
	static char buf[1 << 20];
	int p[2];
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/fork", tmpdir);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(audit_open(dir, "s", &a), 0);
	assert_int_equal(audit_set_events_fd(a, p[1]), 0);
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	char big[3 * PIPE_BUF];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		for (int i = 0; i < 20; i++) {
			cJSON *f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "big", big);
			cJSON_AddNumberToObject(f, "from", 1);
			(void)audit_write(a, "net", f);
		}
		_exit(0);
	}
	size_t n = 0;
	int lines = 0, status;
	for (int i = 0; i < 20; i++) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "big", big);
		cJSON_AddNumberToObject(f, "from", 0);
		(void)audit_write(a, "net", f);
		n += drain(p[0], buf + n, sizeof(buf) - n);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	unsigned lost = audit_events_lost(a, NULL);
	audit_close(a);
	fcntl(p[0], F_SETFL, 0);
	for (ssize_t k; n < sizeof(buf) - 1 && (k = read(p[0], buf + n, sizeof(buf) - 1 - n)) > 0;)
		n += (size_t)k;
	buf[n] = '\0';
	for (char *l = buf, *e; (e = strchr(l, '\n')); l = e + 1, lines++) {
		*e = '\0';
		cJSON *o = cJSON_Parse(l);
		assert_true(cJSON_IsObject(o));
		assert_int_equal(strlen(cJSON_GetObjectItem(o, "big")->valuestring), sizeof(big) - 1);
		cJSON_Delete(o);
	}
	/* Every line was read whole or counted lost (by either process). */
	assert_int_equal(lines + (int)lost, 40);
	close(p[0]);
}

/* Losses of a forked writer are counted in the parent's count. */
static void test_audit_events_lost_counted_across_fork(void **state)
{
	char dir[128];
	AuditLog *a = NULL;
	int p[2], status, err = 0;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/forklost", tmpdir);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(audit_open(dir, "s", &a), 0);
	assert_int_equal(audit_set_events_fd(a, p[1]), 0);
	close(p[0]); /* no reader */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		write_n(a, 1);
		write_n(a, 2);
		write_n(a, 3);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(audit_events_lost(a, &err), 3);
	assert_int_equal(err, -EPIPE);
	audit_close(a);
	close(p[1]);
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

/* The stamp is computed without gmtime_r (no time zone load): it must
 * read as gmtime_r's UTC for the same second. */
static void test_audit_timestamp_is_utc(void **state)
{
	char buf[32], want[80];

	for (int i = 0; i < 3; i++) {
		struct timespec t0, t1;
		struct tm tm;

		assert_int_equal(clock_gettime(CLOCK_REALTIME, &t0), 0);
		assert_int_equal(audit_os_timestamp(buf), 0);
		assert_int_equal(clock_gettime(CLOCK_REALTIME, &t1), 0);
		assert_non_null(gmtime_r(&t0.tv_sec, &tm));
		snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		if (t0.tv_sec == t1.tv_sec) {
			assert_int_equal(strlen(buf), 24);
			assert_memory_equal(buf, want, 20);
			assert_int_equal(buf[23], 'Z');
			return;
		}
	}
	fail_msg("the clock moved during each of three tries");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_audit_timestamp_is_utc),
		cmocka_unit_test(test_audit_creates_dir_and_file_modes),
		cmocka_unit_test(test_audit_line_format),
		cmocka_unit_test(test_audit_no_session_and_append),
		cmocka_unit_test(test_audit_short_write_leaves_no_fragment),
		cmocka_unit_test(test_audit_rejects_bad_input),
		cmocka_unit_test(test_audit_golden),
		cmocka_unit_test(test_audit_session_id),
		cmocka_unit_test(test_audit_rotation_env),
		cmocka_unit_test(test_audit_rotation),
		cmocka_unit_test(test_audit_rotation_concurrent),
		cmocka_unit_test(test_audit_rotation_reopen_same_fd),
		cmocka_unit_test(test_audit_events_tee),
		cmocka_unit_test(test_audit_events_slow_reader),
		cmocka_unit_test(test_audit_events_reader_gone),
		cmocka_unit_test(test_audit_events_across_fork),
		cmocka_unit_test(test_audit_events_lost_counted_across_fork),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
