/* ward log [--session ID] [--since TIME] [--event NAME]... [--follow] [--json]:
 * the audit log (and its rotated files, oldest first) as a table or as JSON
 * lines, filtered; --follow then waits for new lines and follows the log
 * across rotations. The filters and rows are src/audit/audit-query.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "audit/audit-query.h"
#include "cli/cli-options.h"
#include "cli/commands.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "common/macro.h"
#include "common/strv.h"
#include "ward/ward.h"

static const char usage[] =
	"Usage: ward log [--session ID] [--since TIME] [--event NAME]... [--follow] [--json]\n"
	"\n"
	"Show ward's audit log ($XDG_STATE_HOME/ward/audit.jsonl and its rotated files\n"
	"audit.jsonl.N, oldest first) as a table, or as JSON lines with --json.\n"
	"\n"
	"      --session ID   only this session (a run's or a copy-on-write session's id,\n"
	"                     or the start of one)\n"
	"      --since TIME   only events at or after TIME: RFC 3339 (2026-12-03T09:00:00Z,\n"
	"                     2026-12-03T10:00:00+01:00, 2026-12-03) or a time ago\n"
	"                     (90s, 10m, 2h, 7d, 1w)\n"
	"      --event NAME   only these events (repeatable, or NAME,NAME): start, exit,\n"
	"                     net, error, quarantine, apply, undo, discard, recover\n"
	"  -f, --follow       then wait for new events (until interrupted)\n"
	"      --json         print the matching lines as they are in the log\n"
	"  -h, --help         show this help\n";

enum { OPT_SESSION = 1, OPT_SINCE, OPT_EVENT, OPT_FOLLOW, OPT_JSON, OPT_HELP };

static const CliOption table[] = {
	{ "session", 0, CLI_ARG_REQUIRED, OPT_SESSION },
	{ "since", 0, CLI_ARG_REQUIRED, OPT_SINCE },
	{ "event", 0, CLI_ARG_REQUIRED, OPT_EVENT },
	{ "follow", 'f', CLI_ARG_NONE, OPT_FOLLOW },
	{ "json", 0, CLI_ARG_NONE, OPT_JSON },
	{ "help", 'h', CLI_ARG_NONE, OPT_HELP },
	{},
};

#define ROTATED_MAX 1000

typedef struct Reader {
	AuditFilter filter;
	bool json;
	unsigned malformed;
	char *buf; /* the start of a line not complete yet */
	size_t len, cap;
} Reader;

static void show_line(Reader *rd, const char *line, size_t len)
{
	_cleanup_cjson_ cJSON *o = NULL;

	if (len == 0)
		return;
	o = cJSON_ParseWithLength(line, len);
	if (!cJSON_IsObject(o)) {
		rd->malformed++;
		return;
	}
	if (!audit_filter_match(&rd->filter, o))
		return;
	if (rd->json) {
		fwrite(line, 1, len, stdout);
		putchar('\n');
		return;
	}
	_cleanup_free_ char *row = audit_format_row(o);
	if (row)
		puts(row);
}

/* Read @fd from where it is to its end, showing each complete line; an
 * incomplete last line waits in rd->buf (a write in progress). */
static int read_to_end(Reader *rd, int fd)
{
	char chunk[65536];

	for (;;) {
		ssize_t k = read(fd, chunk, sizeof(chunk));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return 0;
		if (rd->len + (size_t)k > rd->cap) {
			size_t cap = (rd->len + (size_t)k) * 2;
			char *b = realloc(rd->buf, cap);
			if (!b)
				return -ENOMEM;
			rd->buf = b;
			rd->cap = cap;
		}
		memcpy(rd->buf + rd->len, chunk, (size_t)k);
		rd->len += (size_t)k;
		size_t start = 0;
		for (size_t i = 0; i < rd->len; i++)
			if (rd->buf[i] == '\n') {
				show_line(rd, rd->buf + start, i - start);
				start = i + 1;
			}
		memmove(rd->buf, rd->buf + start, rd->len - start);
		rd->len -= start;
	}
}

/* A file that ended without its last newline: count what is left. */
static void drop_partial(Reader *rd)
{
	if (rd->len > 0)
		rd->malformed++;
	rd->len = 0;
}

static char *rotated_path(const char *path, unsigned i)
{
	char *p = NULL;

	if (i == 0)
		return strdup(path);
	return asprintf(&p, "%s.%u", path, i) < 0 ? NULL : p;
}

static int open_log(const char *path, unsigned i)
{
	_cleanup_free_ char *p = rotated_path(path, i);

	if (!p)
		return -ENOMEM;
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

static bool same_file(int fd, const struct stat *st)
{
	struct stat s;

	return fstat(fd, &s) == 0 && s.st_ino == st->st_ino && s.st_dev == st->st_dev;
}

/* Show the rotated files audit.jsonl.@from down to .1, those that exist. */
static void show_rotated(Reader *rd, const char *path, unsigned from)
{
	for (unsigned i = from; i >= 1; i--) {
		_cleanup_close_ int fd = open_log(path, i);
		if (fd < 0)
			continue;
		(void)read_to_end(rd, fd);
		drop_partial(rd);
	}
}

/* Everything now in the log: opened newest first (so that a rotation
 * while we open moves files only towards names we open later; a file seen
 * twice is read once), read oldest first. Returns the current file's fd
 * (or -ENOENT), positioned at its end. */
static int show_all(Reader *rd, const char *path)
{
	int fds[ROTATED_MAX + 1];
	size_t n = 0;
	int cur = -ENOENT;

	unsigned missing = 0;

	for (unsigned i = 0; i <= ROTATED_MAX; i++) {
		int fd = open_log(path, i);
		struct stat st;
		bool dup = false;

		/* Two missing in a row: the end (one is a rotation in progress,
		 * which renames .1 to .2 before the log to .1). */
		if (fd == -ENOENT && i > 0 && ++missing >= 2)
			break;
		if (fd >= 0)
			missing = 0;
		if (fd < 0) {
			if (fd != -ENOENT)
				log_warning_errno(fd, "Failed to open the audit log '%s' (.%u): %m",
						  path, i);
			fds[n++] = -1;
			continue;
		}
		if (fstat(fd, &st) == 0)
			for (size_t j = 0; j < n && !dup; j++)
				dup = fds[j] >= 0 && same_file(fds[j], &st);
		fds[n++] = dup ? (close(fd), -1) : fd;
	}
	for (size_t j = n; j-- > 0;) {
		if (fds[j] < 0)
			continue;
		int r = read_to_end(rd, fds[j]);
		if (r < 0)
			log_warning_errno(r, "Failed to read the audit log '%s': %m", path);
		if (j == 0)
			cur = fds[j];
		else {
			drop_partial(rd);
			close(fds[j]);
		}
	}
	return cur;
}

/* --follow: wait for lines, and when the file was rotated, read what the
 * old one still had and whatever rotated files came between, then go on
 * in the new one. */
static int safe_close(int fd)
{
	if (fd >= 0)
		close(fd);
	return -EBADF;
}

static int oom(void)
{
	log_error("Out of memory");
	return WARD_EXIT_FAILURE;
}

_noreturn_ static void follow(Reader *rd, const char *dir, const char *path, int cur)
{
	_cleanup_close_ int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);

	if (in >= 0 && inotify_add_watch(in, dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO |
							  IN_MOVED_FROM | IN_DELETE) < 0)
		in = safe_close(in);
	for (;;) {
		struct pollfd p = { .fd = in, .events = POLLIN };
		struct stat st;
		char ev[4096];

		fflush(stdout);
		/* inotify wakes us; the timeout is the fallback without it. */
		(void)poll(&p, in >= 0 ? 1 : 0, in >= 0 ? 5000 : 500);
		while (in >= 0 && read(in, ev, sizeof(ev)) > 0)
			;
		if (cur >= 0)
			(void)read_to_end(rd, cur);
		bool exists = lstat(path, &st) == 0;
		if (cur >= 0 ? exists && same_file(cur, &st) : !exists)
			continue;
		if (cur >= 0) {
			/* Rotated: where did our file go? Files between it and
			 * the new one came and went while we slept. */
			struct stat old;
			unsigned at = 0;
			if (fstat(cur, &old) == 0)
				for (unsigned i = 1; i <= ROTATED_MAX && at == 0; i++) {
					_cleanup_free_ char *rp = rotated_path(path, i);
					struct stat rs;
					if (!rp || lstat(rp, &rs) < 0)
						break;
					if (rs.st_ino == old.st_ino && rs.st_dev == old.st_dev)
						at = i;
				}
			(void)read_to_end(rd, cur);
			drop_partial(rd);
			cur = safe_close(cur);
			if (at > 1)
				show_rotated(rd, path, at - 1);
		}
		cur = open_log(path, 0);
		if (cur >= 0)
			(void)read_to_end(rd, cur);
	}
}

int cmd_log(int argc, char **argv)
{
	_cleanup_(cli_parsed_done) CliParsed p = {};
	_cleanup_free_ char *err = NULL, *dir = NULL, *path = NULL;
	_cleanup_strv_ char **events = NULL;
	Reader rd = {};
	bool do_follow = false;
	int r, cur;

	r = cli_parse_options(table, CLI_PARSE_INTERLEAVED, argc, argv, &p, &err);
	if (r < 0) {
		log_error("log: %s", err ? err : "out of memory");
		fputs(usage, stderr);
		return WARD_EXIT_USAGE;
	}
	if (p.pos) {
		log_error("log: unexpected argument '%s'", p.pos[0]);
		fputs(usage, stderr);
		return WARD_EXIT_USAGE;
	}
	for (size_t i = 0; i < p.n_opts; i++) {
		const char *v = p.opts[i].value;
		switch (p.opts[i].id) {
		case OPT_SESSION:
			if (!v[0]) {
				log_error("log: --session needs an id");
				return WARD_EXIT_USAGE;
			}
			rd.filter.session = v;
			break;
		case OPT_SINCE: {
			struct timespec now;
			clock_gettime(CLOCK_REALTIME, &now);
			if (audit_parse_since(v, (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000,
					      &rd.filter.since_ms) < 0) {
				log_error("log: --since '%s': expected an RFC 3339 time "
					  "(2026-12-03T09:00:00Z) or a time ago (10m, 2h, 7d)",
					  v);
				return WARD_EXIT_USAGE;
			}
			rd.filter.has_since = true;
			break;
		}
		case OPT_EVENT: {
			_cleanup_free_ char *copy = strdup(v);
			char *save = NULL;
			if (!copy)
				return oom();
			for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				if (!audit_event_known(t)) {
					log_error("log: --event '%s': not an event of the audit log (%s)",
						  t, audit_event_names);
					return WARD_EXIT_USAGE;
				}
				if (strv_extend(&events, t) < 0)
					return oom();
			}
			if (!events) {
				log_error("log: --event needs a name (%s)", audit_event_names);
				return WARD_EXIT_USAGE;
			}
			break;
		}
		case OPT_FOLLOW:
			do_follow = true;
			break;
		case OPT_JSON:
			rd.json = true;
			break;
		case OPT_HELP:
			fputs(usage, stdout);
			return 0;
		}
	}
	rd.filter.events = events;

	if ((r = ward_state_dir(&dir)) < 0)
		return log_error_errno(r, "Failed to find ward's state directory: %m"), WARD_EXIT_FAILURE;
	if (asprintf(&path, "%s/audit.jsonl", dir) < 0)
		return oom();
	if (!rd.json)
		puts(audit_table_header);
	cur = show_all(&rd, path);
	if (do_follow) {
		/* Made as ward run makes it, so there is something to watch. */
		if ((r = ward_dir_ensure(dir)) < 0)
			return log_error_errno(r, "Failed to prepare '%s': %m", dir), WARD_EXIT_FAILURE;
		follow(&rd, dir, path, cur);
	}
	if (cur >= 0)
		close(cur);
	free(rd.buf);
	if (rd.malformed)
		log_warning("Skipped %u line(s) of '%s' that are not JSON objects", rd.malformed,
			    path);
	if (fflush(stdout) != 0)
		return WARD_EXIT_FAILURE;
	return 0;
}
