/* ward.exe diff|apply|undo|discard ID: review of a copy-on-write session
 * (win-cow-review.h), with Linux's output words and exit codes
 * (docs/cow.md): diff lists "kind path" lines then a total, --json the
 * change list; apply prints "applied/removed/refused" lines, exit 3 when
 * something was refused; undo "restored/removed"; 1 for an I/O error, 2
 * for a usage error. Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/strv.h"
#include "windows/win-cow-review.h"
#include "windows/win32-cow-fs.h"

int win_cow_main(int argc, char **argv);

static int usage_err(const char *cmd)
{
	fprintf(stderr, "ward: usage: ward.exe %s ID%s\n", cmd,
		strcmp(cmd, "diff") == 0    ? " [--json]"
		: strcmp(cmd, "apply") == 0 ? " [--force] [PATH]..."
					    : "");
	return 2;
}

static void print_lines(char **lines)
{
	STRV_FOREACH(l, lines)
		printf("%s\n", *l);
}

/* A PATH argument as a workspace-relative path with '\' (a '/' is taken
 * as '\'; "." or "" is everything). */
static char *rel_arg(const char *a)
{
	char *s = strdup(a);
	size_t n;

	if (!s)
		return NULL;
	for (char *c = s; *c; c++)
		if (*c == '/')
			*c = '\\';
	while ((n = strlen(s)) && s[n - 1] == '\\')
		s[n - 1] = 0;
	if (strcmp(s, ".") == 0)
		s[0] = 0;
	return s;
}

int win_cow_main(int argc, char **argv)
{
	const char *cmd = argv[0], *id = NULL;
	_cleanup_free_ char *state = NULL;
	_cleanup_strv_ char **paths = NULL, **out = NULL;
	WinCowLayout l = { 0 };
	WinCowFs fs;
	void *lock = NULL;
	bool json = false, force = false;
	int r;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 && strcmp(cmd, "diff") == 0)
			json = true;
		else if (strcmp(argv[i], "--force") == 0 && strcmp(cmd, "apply") == 0)
			force = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return usage_err(cmd);
		else if (!id)
			id = argv[i];
		else if (strcmp(cmd, "apply") == 0) {
			char *p = rel_arg(argv[i]);

			if (!p || strv_consume(&paths, p) < 0)
				return 1;
		} else
			return usage_err(cmd);
	}
	if (!id)
		return usage_err(cmd);
	if (ward_state_dir(&state) < 0) {
		fprintf(stderr, "ward: LOCALAPPDATA is not an absolute path\n");
		return 1;
	}
	win32_cow_fs_init(&fs);
	/* The lock first, then the record: a discard that ran meanwhile
	 * leaves no record to open. */
	r = win_cow_session_lock(&fs, state, id, &lock);
	if (r >= 0)
		r = win_cow_session_open(&fs, state, id, &l);
	if (r < 0) {
		fprintf(stderr, "ward: %s: %s\n", id,
			r == -EINVAL   ? "not a session id (16 hex digits)"
			: r == -ENOENT ? "no such copy-on-write session (unknown or discarded)"
			: r == -EBUSY  ? "the session is in use by another ward.exe run or review; "
					 "try again when it has ended"
				       : "cannot read the session's record");
		win_cow_session_unlock(&fs, lock);
		return r == -EINVAL ? 2 : 1;
	}
	if (strcmp(cmd, "discard") == 0) {
		r = win_cow_discard(&fs, &l);
		if (r >= 0) {
			win_cow_session_unlock(&fs, lock);
			lock = NULL;
			win_cow_discard_finish(&fs, &l);
			printf("discarded %s\n", id);
		}
	} else if (strcmp(cmd, "undo") == 0) {
		r = win_cow_undo(&fs, &l, &out);
		if (r >= 0) {
			printf("workspace %s\n", l.workspace);
			print_lines(out);
		} else if (r == -ENOENT)
			fprintf(stderr, "ward: %s: nothing to undo\n", id);
	} else if (strcmp(cmd, "apply") == 0) {
		r = win_cow_apply(&fs, &l, paths, force, &out);
		if (r >= 0) {
			printf("workspace %s\n", l.workspace);
			print_lines(out);
			if (r == 1) {
				win_cow_layout_done(&l);
				win_cow_session_unlock(&fs, lock);
				return 3;
			}
		}
	} else {
		WinCowChange *c = NULL;
		size_t n = 0, refused = 0;

		r = win_cow_recover(&fs, &l);
		if (r >= 0)
			r = win_cow_changes(&fs, &l, &c, &n);
		if (r >= 0 && json) {
			_cleanup_free_ char *j = win_cow_changes_json(c, n);

			if (!j)
				r = -ENOMEM;
			else
				printf("%s\n", j);
		} else if (r >= 0) {
			for (size_t i = 0; i < n; i++) {
				printf("%-15s %s%s%s\n", win_cow_kind_name(c[i].kind), c[i].path,
				       c[i].directory ? "\\" : "",
				       c[i].refused ? " [refused: protected]" : "");
				refused += c[i].refused;
			}
			printf("%zu change%s (%zu refused)\n", n, n == 1 ? "" : "s", refused);
		}
		win_cow_changes_free(c, n);
	}
	if (r < 0 && r != -ENOENT)
		fprintf(stderr, "ward: %s %s: %s\n", cmd, id, strerror(-r));
	win_cow_layout_done(&l);
	win_cow_session_unlock(&fs, lock);
	return r < 0 ? 1 : 0;
}
