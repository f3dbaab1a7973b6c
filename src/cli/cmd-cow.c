/* ward session new / sessions / diff, and what the review subcommands share
 * (cow-cli.h): the CLI over src/cow/. Exit codes (ward.h): 0 ok, 1 failure,
 * 2 usage, 3 some paths refused. Everything printed for a person goes
 * through cow_quote_path() or the diff writer's escaping: session names,
 * workspaces and paths come from places a sandboxed command could write. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "cli/commands.h"
#include "cli/cow-cli.h"
#include "run/run-paths.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "common/path-util.h"
#include "common/strv.h"
#include "policy/ceiling.h"
#include "policy/policy.h"
#include "ward/ward.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(WardPolicy *, policy_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(AuditLog *, audit_close)

void args_done(Args *a)
{
	cli_parsed_done(&a->parsed);
	a->pos = NULL;
}

static int parse_collapse(const char *v, size_t *ret)
{
	char *end;
	unsigned long n;

	if (!v) {
		*ret = 40;
		return 0;
	}
	errno = 0;
	n = strtoul(v, &end, 10);
	if (!v[0] || v[0] == '-' || *end || errno || n == 0 || n > 1000000)
		return -EINVAL;
	*ret = n;
	return 0;
}

static int apply_option(Args *a, const CliOptionValue *v)
{
	switch (v->id) {
	case OPT_HELP: a->help = true; return 0;
	case OPT_COW: a->cow = true; return 0;
	case OPT_JSON: a->json = true; a->modes++; return 0;
	case OPT_FORCE: a->force = true; return 0;
	case OPT_WORKSPACE: a->workspace = v->value; return 0;
	case OPT_POLICY: a->policy = v->value; return 0;
	case OPT_STAT: a->mode = COW_DIFF_STAT; a->modes++; return 0;
	case OPT_NAME_ONLY: a->mode = COW_DIFF_NAME_ONLY; a->modes++; return 0;
	case OPT_NAME_STATUS: a->mode = COW_DIFF_NAME_STATUS; a->modes++; return 0;
	case OPT_SUMMARY: a->mode = COW_DIFF_SUMMARY; a->modes++; return 0;
	case OPT_COLLAPSE:
		if (parse_collapse(v->value, &a->collapse) < 0) {
			log_error("--collapse takes a positive number of lines");
			return -EINVAL;
		}
		return 0;
	case OPT_COLOR:
		if (!v->value || strcmp(v->value, "always") == 0)
			a->color = 1;
		else if (strcmp(v->value, "never") == 0)
			a->color = 0;
		else if (strcmp(v->value, "auto") == 0)
			a->color = -1;
		else {
			log_error("--color takes always, never or auto");
			return -EINVAL;
		}
		return 0;
	default:
		return -EINVAL;
	}
}

int usage_error(const char *usage)
{
	fputs(usage, stderr);
	return WARD_EXIT_USAGE;
}

bool parse_or_exit(int argc, char **argv, const CliOption *table, const char *usage,
		   size_t min_pos, size_t max_pos, Args *a, int *ret_exit)
{
	size_t n_pos;
	_cleanup_free_ char *err = NULL;
	int r;

	*a = (Args){ .color = -1, .mode = COW_DIFF_FULL };
	r = cli_parse_options(table, CLI_PARSE_INTERLEAVED, argc, argv, &a->parsed, &err);
	if (r == -ENOMEM) {
		log_oom();
		*ret_exit = WARD_EXIT_FAILURE;
		return true;
	}
	if (r < 0) {
		_cleanup_free_ char *q = cli_quote(err ? err : "bad option");
		log_error("%s: %s", argv[0], err ? q : "bad option");
		fputs(usage, stderr);
		*ret_exit = WARD_EXIT_USAGE;
		return true;
	}
	a->pos = a->parsed.pos;
	for (size_t i = 0; i < a->parsed.n_opts; i++)
		if (apply_option(a, &a->parsed.opts[i]) < 0) {
			*ret_exit = WARD_EXIT_USAGE;
			return true;
		}
	if (a->help) {
		fputs(usage, stdout);
		*ret_exit = 0;
		return true;
	}
	n_pos = strv_length(a->pos);
	if (n_pos < min_pos || n_pos > max_pos) {
		*ret_exit = usage_error(usage);
		return true;
	}
	return false;
}

char *cli_quote(const char *s)
{
	char *q = cow_quote_path(s ? s : "");
	return q ? q : strdup("?");
}

int log_oom(void)
{
	log_error("Out of memory");
	return -ENOMEM;
}

static const CliOption options_session[] = {
	HELP_OPTION,
	JSON_OPTION,
	{ "cow", 0, CLI_ARG_NONE, OPT_COW },
	{ "workspace", 'w', CLI_ARG_REQUIRED, OPT_WORKSPACE },
	{},
};
static const char usage_session[] =
	"Usage: ward session new [--json] [--owner PID] [--cow] [-w DIR] [ward run's policy options]\n"
	"       ward session new --storage-only [--json] [--cow] [-w|--workspace DIR]\n"
	"       ward session ps ID [--json]\n"
	"       ward session stop ID\n\n"
	"Create a session and print its id alone on stdout. Its sandbox starts and\n"
	"stays up: ward exec ID -- CMD runs commands in it, ward session stop ID ends\n"
	"it (docs/sessions.md). With --cow, its writes go to a copy-on-write layer,\n"
	"reviewed with ward diff and applied with ward apply once it stopped. The\n"
	"workspace's identity is recorded: apply and undo write only into that very\n"
	"directory. With --storage-only (or --no-live), no sandbox: the storage\n"
	"alone, for cold runs with ward run --session ID.\n";

static const CliOption options_sessions[] = {
	HELP_OPTION,
	JSON_OPTION,
	{},
};
static const char usage_sessions[] =
	"Usage: ward sessions [--json]\n\n"
	"List sessions, oldest first: id, created, age, runs, pending changes, state,\n"
	"workspace.\n";

static const CliOption options_diff[] = {
	HELP_OPTION,
	JSON_OPTION,
	{ "stat", 0, CLI_ARG_NONE, OPT_STAT },
	{ "summary", 0, CLI_ARG_NONE, OPT_SUMMARY },
	{ "name-only", 0, CLI_ARG_NONE, OPT_NAME_ONLY },
	{ "name-status", 0, CLI_ARG_NONE, OPT_NAME_STATUS },
	{ "collapse", 0, CLI_ARG_OPTIONAL, OPT_COLLAPSE },
	{ "color", 0, CLI_ARG_OPTIONAL, OPT_COLOR },
	POLICY_OPTION,
	{},
};
static const char usage_diff[] =
	"Usage: ward diff ID [PATH]... [--stat|--summary|--name-only|--name-status|--json]\n"
	"                 [--collapse[=LINES]] [--color[=WHEN]] [-p|--policy FILE]\n\n"
	"Show a copy-on-write session's pending changes: one line per change (its\n"
	"kind and path) and a total, then a unified diff. PATH selects a file or a\n"
	"directory's subtree. Control characters and invisible or reordering\n"
	"characters in names and contents are shown escaped.\n\n"
	"  --stat              lines added and removed per file, and a total\n"
	"  --summary           the change list and the total only\n"
	"  --name-only         one path per line\n"
	"  --name-status       kind letter (A M D T m L R), a tab, the path\n"
	"  --json              the change list as JSON (exact names, octal modes)\n"
	"  --collapse[=LINES]  summarize a file's diff when more than LINES lines\n"
	"                      changed (default 40)\n"
	"  --color[=WHEN]      always, never or auto (default: auto)\n"
	"  -p, --policy FILE   protected paths from this policy\n";

/* The first symlink on the way to @path, for a message; NULL if none. */
static char *first_symlink(const char *path, char **ret_target)
{
	_cleanup_free_ char *p = strdup(path);

	*ret_target = NULL;
	if (!p)
		return NULL;
	for (char *slash = p + 1;; slash++) {
		struct stat st;
		char save = *slash;
		if (save != '/' && save != '\0')
			continue;
		*slash = '\0';
		if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode)) {
			char buf[4096];
			ssize_t n = readlink(p, buf, sizeof(buf) - 1);
			buf[n < 0 ? 0 : n] = '\0';
			*ret_target = strdup(buf);
			return strdup(p);
		}
		*slash = save;
		if (save == '\0')
			return NULL;
	}
}

int report_failure(CowSession *s, int r, const char *what)
{
	const char *ws = cow_session_workspace(s);
	_cleanup_free_ char *qws = cli_quote(ws), *id = cli_quote(cow_session_id(s));

	if (r == -ELOOP) {
		_cleanup_free_ char *target = NULL, *link = first_symlink(ws, &target);
		_cleanup_free_ char *ql = cli_quote(link ? link : ws);
		_cleanup_free_ char *qt = cli_quote(target ? target : "?");
		log_error("Refusing to %s: the workspace path %s of session %s now goes through the "
			  "symlink %s -> %s; ward does not follow it (a sandboxed command could have "
			  "planted it)",
			  what, qws, id, ql, qt);
	} else if (r == -ESTALE)
		log_error("Refusing to %s: %s is no longer the directory session %s was made for "
			  "(another directory is at that path now)",
			  what, qws, id);
	else if (r == -ENOTDIR || r == -ENOENT)
		log_error("Refusing to %s: the workspace %s of session %s is gone", what, qws, id);
	else
		log_error_errno(r, "Failed to %s in session %s: %m", what, id);
	return WARD_EXIT_FAILURE;
}

static int state_dir(char **ret)
{
	int r = ward_state_dir(ret);
	if (r < 0)
		log_error_errno(r, "Failed to find the state directory: %m");
	return r;
}

int open_session(const char *id, CowSession **ret)
{
	_cleanup_free_ char *state = NULL, *qid = cli_quote(id);
	int r;

	if (state_dir(&state) < 0)
		return WARD_EXIT_FAILURE;
	r = cow_session_open(state, id, ret);
	if (r == -ENOENT)
		return log_error("No session %s", qid), WARD_EXIT_FAILURE;
	if (r == -EBUSY)
		return log_error("Session %s has a live sandbox: stop it first (ward session stop %s)",
				 qid, qid),
		       WARD_EXIT_FAILURE;
	if (r == -ELOOP || r == -ESTALE) {
		/* Recovery needs the workspace; the session itself is fine. */
		_cleanup_(cow_session_freep) CowSession *u = NULL;
		if (cow_session_open_unlocked(state, id, &u) >= 0)
			return report_failure(u, r, "recover an interrupted apply or undo");
	}
	if (r < 0)
		return log_error_errno(r, "Failed to open session %s: %m", qid), WARD_EXIT_FAILURE;
	if (cow_session_recovered(*ret)) {
		const char *what = cow_session_recovered(*ret);
		log_warning("Session %s: an interrupted %s was found and %s", qid,
			    strstr(what, "undo") ? "undo" : "apply",
			    strcmp(what, "rolled-back-apply") == 0 ? "rolled back"
			    : strcmp(what, "finished-undo") == 0   ? "finished"
								   : "completed");
		cJSON *ev = cJSON_CreateObject();
		cJSON_AddStringToObject(ev, "workspace", cow_session_workspace(*ret));
		cJSON_AddStringToObject(ev, "recovered", what);
		write_audit(*ret, "recover", ev);
	}
	return 0;
}

int session_from_args(const Args *a, const char *usage, CowSession **ret)
{
	int r;

	if (!a->pos)
		return usage_error(usage);
	r = open_session(a->pos[0], ret);
	if (r != 0)
		return r;
	if (!cow_session_is_cow(*ret)) {
		_cleanup_free_ char *q = cli_quote(a->pos[0]);
		log_error("Session %s is not a copy-on-write session", q);
		return WARD_EXIT_FAILURE;
	}
	return 0;
}

int session_paths_from_args(const Args *a, const char *usage, CowSession **ret,
			    char ***ret_prot, char ***ret_paths)
{
	int r;

	r = session_from_args(a, usage, ret);
	if (r != 0)
		return r;
	if (protected_paths(*ret, a->policy, ret_prot) < 0)
		return WARD_EXIT_FAILURE;
	if (resolve_paths(*ret, a->pos + 1, ret_paths) < 0)
		return log_oom(), WARD_EXIT_FAILURE;
	return 0;
}

int protected_paths(CowSession *s, const char *policy_file, char ***ret)
{
	_cleanup_(policy_freep) WardPolicy *p = NULL;
	_cleanup_free_ char *home = NULL;
	_cleanup_strv_ char **l = strv_copy(cow_session_protected(s));
	PolicyError e = {};
	int r;

	if (!l)
		return -ENOMEM;
	r = policy_load(policy_file, NULL, &p, &e);
	if (r >= 0 && ward_home_dir(&home) >= 0) {
		PolicyContext ctx = { .home = home, .workspace = cow_session_workspace(s) };
		r = policy_finalize(p, &ctx, &e);
	}
	if (r < 0) {
		char buf[1400];
		policy_error_format(&e, buf, sizeof(buf));
		log_error("Invalid policy: %s", buf);
		return r;
	}
	STRV_FOREACH(x, p->fs_protected)
		if (strv_extend_unique(&l, *x) < 0)
			return -ENOMEM;
	*ret = TAKE_PTR(l);
	return 0;
}

/* PATH arguments: absolute ones must be in the workspace; relative ones
 * are relative to the current directory when it is inside the workspace,
 * else to the workspace root. */
int resolve_paths(CowSession *s, char *const *in, char ***ret)
{
	const char *ws = cow_session_workspace(s);
	_cleanup_free_ char *cwd = getcwd(NULL, 0), *rel_cwd = NULL;
	_cleanup_strv_ char **out = NULL;

	if (cwd && path_is_beneath(cwd, ws) && strcmp(cwd, ws) != 0)
		rel_cwd = strdup(cwd + strlen(ws) + (strcmp(ws, "/") != 0));
	STRV_FOREACH(p, in) {
		_cleanup_free_ char *joined = NULL, *norm = NULL;
		const char *q = *p;
		if (q[0] == '/') {
			if (path_normalize(q, &norm) < 0)
				return -ENOMEM;
			if (strcmp(norm, ws) == 0)
				q = ".";
			else if (path_is_beneath(norm, ws))
				q = norm + strlen(ws) + (strcmp(ws, "/") != 0);
			else
				q = *p; /* refused as an escape */
		} else if (rel_cwd) {
			if (path_join(rel_cwd, q, &joined) < 0)
				return -ENOMEM;
			if (path_normalize(joined, &norm) < 0)
				return -ENOMEM;
			q = norm;
		} else if (path_normalize(q, &norm) >= 0)
			q = norm;
		if (strv_extend(&out, q) < 0)
			return -ENOMEM;
	}
	*ret = TAKE_PTR(out);
	return 0;
}

/* Set when an audit record could not be written: the review command then
 * exits with WARD_EXIT_FAILURE (audit_exit), whatever else it did. */
static bool audit_lost;

void write_audit(CowSession *s, const char *event, cJSON *fields)
{
	_cleanup_(audit_closep) AuditLog *a = NULL;
	_cleanup_free_ char *state = NULL;
	int r;

	if ((r = ward_state_dir(&state)) < 0 || (r = audit_open(state, cow_session_id(s), &a)) < 0) {
		cJSON_Delete(fields);
		audit_lost = true;
		log_error_errno(r, "Failed to open the audit log: the '%s' record is lost: %m", event);
		return;
	}
	r = audit_write(a, event, fields);
	if (r < 0) {
		audit_lost = true;
		log_error_errno(r, "Failed to write the '%s' record to the audit log in '%s': %m",
				event, state);
	}
}

int audit_exit(int status)
{
	return audit_lost && status == 0 ? WARD_EXIT_FAILURE : status;
}

/* The managed ceiling (policy/ceiling.h) may require copy-on-write and
 * bounds the workspace: refused before the session exists. */
int session_within_ceiling(bool cow, const char *ws)
{
	_cleanup_free_ char *home = NULL;
	PolicyError e = {};
	char line[1400];
	int r;

	if ((r = ward_home_dir(&home)) < 0)
		return log_error_errno(r, "Failed to find the home directory: %m");
	r = ceiling_check_request(cow, ws, home, &e);
	if (r == -ENOMEM)
		return log_error_errno(r, "Out of memory: %m");
	if (r < 0) {
		policy_error_format(&e, line, sizeof(line));
		log_error("Refused by the managed policy: %s", line);
	}
	return r;
}

int cmd_session_storage(int argc, char **argv)
{
	_cleanup_(args_done) Args a = {};
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_free_ char *state = NULL, *ws = NULL;
	int r;

	if (parse_or_exit(argc, argv, options_session, usage_session, 1, 1, &a, &r))
		return r;
	if (strcmp(a.pos[0], "new") != 0)
		return usage_error(usage_session);
	/* Not through a symlink a sandboxed command could have planted
	 * (run-paths.h); the session records the directory's identity, which
	 * apply, undo and ward run --session check. */
	WardError we;
	if (run_resolve_workspace(a.workspace, &ws, &we) < 0) {
		log_error("%s%s%s", we.detail, we.error ? ": " : "", we.error ? strerror(we.error) : "");
		return WARD_EXIT_FAILURE;
	}
	if (state_dir(&state) < 0)
		return WARD_EXIT_FAILURE;
	if (session_within_ceiling(a.cow, ws) < 0)
		return WARD_EXIT_SETUP;
	r = cow_session_create(state, ws, a.cow, &s);
	if (r < 0)
		return log_error_errno(r, "Failed to create a session: %m"), WARD_EXIT_FAILURE;
	if (a.json) {
		_cleanup_cjson_ cJSON *obj = cJSON_CreateObject();
		_cleanup_free_ char *text = NULL;
		if (!obj || !cJSON_AddStringToObject(obj, "id", cow_session_id(s)) ||
		    !cJSON_AddStringToObject(obj, "workspace", ws) ||
		    !cJSON_AddBoolToObject(obj, "cow", a.cow) ||
		    !cJSON_AddBoolToObject(obj, "live", false) ||
		    !(text = cJSON_PrintUnformatted(obj)))
			return log_oom(), WARD_EXIT_FAILURE;
		printf("%s\n", text);
	} else
		printf("%s\n", cow_session_id(s));
	return 0;
}

static const char *session_state(CowSession *s, long pending, int scan_error)
{
	if (!cow_session_is_cow(s))
		return "plain";
	if (scan_error == -ELOOP || scan_error == -ESTALE || scan_error == -ENOENT ||
	    scan_error == -ENOTDIR)
		return "moved";
	if (cow_session_has_journal(s))
		return "interrupted";
	if (pending > 0)
		return "pending";
	return cow_session_count_undoable(s) > 0 ? "applied" : "clean";
}

static void format_age(int64_t start_ns, char *buf, size_t size)
{
	struct timespec now;
	long long s;

	clock_gettime(CLOCK_REALTIME, &now);
	s = ((long long)now.tv_sec * 1000000000LL + now.tv_nsec - start_ns) / 1000000000LL;
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, size, "%llds", s);
	else if (s < 7200)
		snprintf(buf, size, "%lldm", s / 60);
	else if (s < 172800)
		snprintf(buf, size, "%lldh", s / 3600);
	else
		snprintf(buf, size, "%lldd", s / 86400);
}

static int cmp_session_age(const void *x, const void *y)
{
	const CowSession *a = *(CowSession *const *)x, *b = *(CowSession *const *)y;
	int64_t sa = cow_session_start_ns(a), sb = cow_session_start_ns(b);

	if (sa != sb)
		return sa < sb ? -1 : 1;
	return strcmp(cow_session_id(a), cow_session_id(b));
}

int cmd_sessions(int argc, char **argv)
{
	_cleanup_(args_done) Args a = {};
	_cleanup_free_ char *state = NULL;
	_cleanup_free_ CowSession **list = NULL;
	_cleanup_strv_ char **ids = NULL;
	_cleanup_cjson_ cJSON *arr = cJSON_CreateArray();
	size_t n = 0;
	int r;

	if (parse_or_exit(argc, argv, options_sessions, usage_sessions, 0, 0, &a, &r))
		return r;
	if (state_dir(&state) < 0)
		return WARD_EXIT_FAILURE;
	r = cow_session_list(state, &ids);
	if (r < 0)
		return log_error_errno(r, "Failed to list sessions: %m"), WARD_EXIT_FAILURE;
	list = calloc(strv_length(ids) + 1, sizeof(CowSession *));
	if (!list)
		return log_oom(), WARD_EXIT_FAILURE;
	/* Unlocked: listing must not wait for a running session. */
	STRV_FOREACH(id, ids)
		if (cow_session_open_unlocked(state, *id, &list[n]) >= 0)
			n++;
	qsort(list, n, sizeof(CowSession *), cmp_session_age);
	if (!a.json)
		printf("%-16s  %-20s  %5s  %4s  %7s  %-11s  %s\n", "ID", "CREATED", "AGE", "RUNS",
		       "PENDING", "STATE", "WORKSPACE");
	for (size_t i = 0; i < n; i++) {
		CowSession *s = list[i];
		_cleanup_(cow_change_list_done) CowChangeList l = {};
		_cleanup_strv_ char **prot = NULL;
		long pending = 0;
		int scan = 0;
		char age[32];

		if (cow_session_is_cow(s) && protected_paths(s, NULL, &prot) >= 0) {
			scan = cow_session_scan(s, prot, &l);
			if (scan >= 0)
				pending = (long)l.n;
		}
		const char *st = session_state(s, pending, scan);
		format_age(cow_session_start_ns(s), age, sizeof(age));
		if (a.json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "id", cow_session_id(s));
			cJSON_AddStringToObject(o, "created", cow_session_created(s));
			cJSON_AddNumberToObject(o, "age_s",
						(double)(time(NULL) - cow_session_start_ns(s) / 1000000000LL));
			cow_json_add_path(o, "workspace", cow_session_workspace(s));
			cJSON_AddBoolToObject(o, "cow", cow_session_is_cow(s));
			cJSON_AddNumberToObject(o, "runs", cow_session_runs(s));
			cJSON_AddNumberToObject(o, "pending", (double)pending);
			cJSON_AddStringToObject(o, "state", st);
			cJSON_AddItemToArray(arr, o);
		} else {
			_cleanup_free_ char *q = cli_quote(cow_session_workspace(s));
			printf("%-16s  %-20s  %5s  %4d  %7ld  %-11s  %s\n", cow_session_id(s),
			       cow_session_created(s), age, cow_session_runs(s), pending, st, q);
		}
	}
	for (size_t i = 0; i < n; i++)
		cow_session_free(list[i]);
	if (a.json) {
		_cleanup_free_ char *t = cJSON_Print(arr);
		if (t)
			printf("%s\n", t);
	}
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	_cleanup_(args_done) Args a = {};
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_(cow_change_list_done) CowChangeList l = {};
	_cleanup_strv_ char **prot = NULL, **paths = NULL, **unmatched = NULL;
	_cleanup_free_ bool *sel = NULL;
	int r;

	/* ID is checked by session_from_args(), after the modes. */
	if (parse_or_exit(argc, argv, options_diff, usage_diff, 0, SIZE_MAX, &a, &r))
		return r;
	if (a.modes > 1) {
		log_error("diff: --stat, --summary, --name-only, --name-status and --json exclude "
			  "each other");
		return usage_error(usage_diff);
	}
	r = session_paths_from_args(&a, usage_diff, &s, &prot, &paths);
	if (r != 0)
		return r;
	r = cow_session_scan(s, prot, &l);
	if (r < 0)
		return report_failure(s, r, "show the diff");
	sel = calloc(l.n + 1, sizeof(bool));
	if (!sel || cow_select(&l, paths, sel, &unmatched) < 0)
		return log_oom(), WARD_EXIT_FAILURE;
	STRV_FOREACH(u, unmatched) {
		_cleanup_free_ char *q = cli_quote(*u);
		log_warning("No change at %s", q);
	}
	if (a.json) {
		_cleanup_cjson_ cJSON *j = NULL;
		_cleanup_free_ char *t = NULL;
		r = cow_changes_to_json(&l, sel, &j);
		if (r < 0 || !(t = cJSON_Print(j)))
			return log_oom(), WARD_EXIT_FAILURE;
		printf("%s\n", t);
		return audit_exit(0);
	}
	CowDiffOptions o = {
		.color = a.color == 1 || (a.color < 0 && isatty(STDOUT_FILENO)),
		.mode = a.mode,
		.collapse = a.collapse,
	};
	r = cow_diff_write(s, &l, sel, stdout, &o);
	if (r < 0)
		return report_failure(s, r, "show the diff");
	return audit_exit(0);
}
