/* ward session new / sessions / diff / apply / undo / discard: the CLI over
 * src/cow/. Exit codes (ward.h): 0 ok, 1 failure, 2 usage, 3 some paths
 * refused. */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "audit/audit.h"
#include "cli/commands.h"
#include "cli/run-paths.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "common/path-util.h"
#include "common/strv.h"
#include "cow/cow-review.h"
#include "policy/policy.h"
#include "ward/ward.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(CowSession *, cow_session_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(WardPolicy *, policy_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(AuditLog *, audit_close)

static void cow_result_donep(CowResult *r)
{
	cow_result_done(r);
}

/* Each command's own options, parsed with getopt_long from argv[0] = name. */
typedef struct Args {
	bool help, cow, json, stat, force;
	int color; /* -1 auto, 0 never, 1 always */
	char *workspace;
	char *policy;
	char **pos; /* positional arguments */
} Args;

static void args_done(Args *a)
{
	strv_free(a->pos);
}

enum { OPT_COLOR = 0x100 };

static int parse_args(int argc, char **argv, const char *usage, Args *a)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "cow", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "stat", no_argument, NULL, 's' },
		{ "force", no_argument, NULL, 'f' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "policy", required_argument, NULL, 'p' },
		{ "color", optional_argument, NULL, OPT_COLOR },
		{},
	};
	int c;

	*a = (Args){ .color = -1 };
	optind = 1;
	opterr = 0;
	/* Options and positionals in any order ("ward apply ID --force");
	 * everything after "--" is positional. */
	while (optind < argc) {
		if (strcmp(argv[optind], "--") == 0) {
			for (int i = optind + 1; i < argc; i++)
				if (strv_extend(&a->pos, argv[i]) < 0)
					return -ENOMEM;
			break;
		}
		if (argv[optind][0] != '-' || argv[optind][1] == '\0') {
			if (strv_extend(&a->pos, argv[optind++]) < 0)
				return -ENOMEM;
			continue;
		}
		c = getopt_long(argc, argv, "+hw:p:f", opts, NULL);
		if (c < 0)
			break;
		/* Only options named in the command's usage text are accepted. */
		const char *name = NULL;
		for (const struct option *o = opts; o->name; o++)
			if (o->val == c)
				name = o->name;
		if (c == '?' || !name || (c != 'h' && !strstr(usage, name))) {
			log_error("%s: unknown option '%s'", argv[0], argv[optind - 1]);
			fputs(usage, stderr);
			return -EINVAL;
		}
		switch (c) {
		case 'h': a->help = true; break;
		case 'c': a->cow = true; break;
		case 'j': a->json = true; break;
		case 's': a->stat = true; break;
		case 'f': a->force = true; break;
		case 'w': a->workspace = optarg; break;
		case 'p': a->policy = optarg; break;
		case OPT_COLOR:
			if (!optarg || strcmp(optarg, "always") == 0)
				a->color = 1;
			else if (strcmp(optarg, "never") == 0)
				a->color = 0;
			else if (strcmp(optarg, "auto") == 0)
				a->color = -1;
			else {
				log_error("--color takes always, never or auto");
				return -EINVAL;
			}
			break;
		default: return -EINVAL;
		}
	}
	return 0;
}

/* Parse the arguments; on a usage error or --help (which prints @usage),
 * returns true with the exit code in @ret_exit. */
static bool parse_or_exit(int argc, char **argv, const char *usage, Args *a, int *ret_exit)
{
	if (parse_args(argc, argv, usage, a) < 0) {
		*ret_exit = WARD_EXIT_USAGE;
		return true;
	}
	if (a->help) {
		fputs(usage, stdout);
		*ret_exit = 0;
		return true;
	}
	return false;
}

static int log_oom(void)
{
	log_error("Out of memory");
	return -ENOMEM;
}

static const char usage_session[] =
	"Usage: ward session new [--cow] [-w|--workspace DIR]\n\n"
	"Create a session and print its id alone on stdout. With --cow, runs in it\n"
	"(ward run --session ID) write to a copy-on-write layer, reviewed with\n"
	"ward diff and applied with ward apply.\n";
static const char usage_sessions[] = "Usage: ward sessions [--json]\n\n"
				     "List sessions: id, created, workspace, runs, pending changes, state.\n";
static const char usage_diff[] =
	"Usage: ward diff ID [PATH]... [--stat] [--json] [--color[=WHEN]] [-p|--policy FILE]\n\n"
	"Show a copy-on-write session's pending changes: a summary, then a unified\n"
	"diff. PATH selects a file or a directory's subtree.\n";
static const char usage_apply[] =
	"Usage: ward apply ID [PATH]... [--force] [--json] [-p|--policy FILE]\n\n"
	"Write the session's changes (all, or those under each PATH) into the real\n"
	"workspace, atomically per file. Protected paths and paths outside the\n"
	"workspace are refused; so are files changed in the workspace during the\n"
	"session, unless --force. Exit status 3 when some paths were refused.\n";
static const char usage_undo[] = "Usage: ward undo ID [--force] [--json]\n\n"
				 "Put back what the last apply replaced or removed, and remove what it\n"
				 "added. Files changed again since the apply are refused unless --force.\n";
static const char usage_discard[] = "Usage: ward discard ID\n\n"
				    "Drop the session: its pending changes, its layer and its records.\n";

static void write_audit(CowSession *s, const char *event, cJSON *fields);

static int state_dir(char **ret)
{
	int r = ward_state_dir(ret);
	if (r < 0)
		log_error_errno(r, "Failed to find the state directory: %m");
	return r;
}

static int open_session(const char *id, CowSession **ret)
{
	_cleanup_free_ char *state = NULL;
	int r;

	if (state_dir(&state) < 0)
		return WARD_EXIT_FAILURE;
	r = cow_session_open(state, id, ret);
	if (r == -ENOENT)
		return log_error("No session '%s'", id), WARD_EXIT_FAILURE;
	if (r < 0)
		return log_error_errno(r, "Failed to open session '%s': %m", id), WARD_EXIT_FAILURE;
	if (cow_session_recovered(*ret)) {
		const char *what = cow_session_recovered(*ret);
		log_warning("Session '%s': an interrupted %s was found and %s", id,
			    strstr(what, "undo") ? "undo" : "apply",
			    strcmp(what, "rolled-back-apply") == 0 ? "rolled back"
			    : strcmp(what, "finished-undo") == 0   ? "finished"
								   : "completed");
		cJSON *ev = cJSON_CreateObject();
		cJSON_AddStringToObject(ev, "recovered", what);
		write_audit(*ret, "recover", ev);
	}
	return 0;
}

/* Protected paths: what runs in the session recorded, plus the policy's. */
static int protected_paths(CowSession *s, const char *policy_file, char ***ret)
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
static int resolve_paths(CowSession *s, char *const *in, char ***ret)
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

static void write_audit(CowSession *s, const char *event, cJSON *fields)
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

/* The exit status of a review command that wrote audit records. */
static int audit_exit(int status)
{
	return audit_lost && status == 0 ? WARD_EXIT_FAILURE : status;
}

static cJSON *strv_to_json(char *const *l)
{
	cJSON *a = cJSON_CreateArray();
	STRV_FOREACH(p, l) {
		_cleanup_free_ char *q = cow_quote_path(*p);
		cJSON_AddItemToArray(a, cJSON_CreateString(q ? q : "?"));
	}
	return a;
}

static cJSON *result_json(const CowResult *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "changed", (double)strv_length(r->done));
	cJSON_AddNumberToObject(o, "refused", (double)strv_length(r->refused));
	cJSON_AddNumberToObject(o, "failed", (double)strv_length(r->failed));
	cJSON_AddItemToObject(o, "paths", strv_to_json(r->done));
	cJSON *ref = cJSON_AddArrayToObject(o, "refused_paths");
	for (size_t i = 0; r->refused && r->refused[i]; i++) {
		_cleanup_free_ char *q = cow_quote_path(r->refused[i]);
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "path", q ? q : "?");
		cJSON_AddStringToObject(e, "reason", r->refused_why[i]);
		cJSON_AddItemToArray(ref, e);
	}
	cJSON *fail = cJSON_AddArrayToObject(o, "failed_paths");
	for (size_t i = 0; r->failed && r->failed[i]; i++) {
		_cleanup_free_ char *q = cow_quote_path(r->failed[i]);
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "path", q ? q : "?");
		cJSON_AddStringToObject(e, "error", r->failed_why[i]);
		cJSON_AddItemToArray(fail, e);
	}
	return o;
}

/* Print a result; the exit code follows from it. */
static int report(const char *verb, const CowResult *r, bool json)
{
	if (json) {
		_cleanup_cjson_ cJSON *o = result_json(r);
		_cleanup_free_ char *t = cJSON_Print(o);
		if (t)
			printf("%s\n", t);
	} else {
		STRV_FOREACH(p, r->done) {
			_cleanup_free_ char *q = cow_quote_path(*p);
			printf("%s %s\n", verb, q ? q : "?");
		}
	}
	for (size_t i = 0; r->refused && r->refused[i]; i++) {
		_cleanup_free_ char *q = cow_quote_path(r->refused[i]);
		log_warning("Refused '%s': %s%s", q ? q : "?", r->refused_why[i],
			    strcmp(r->refused_why[i], "conflict") == 0 ||
					    strcmp(r->refused_why[i], "changed-since-apply") == 0
				    ? " (use --force to override)"
				    : "");
	}
	for (size_t i = 0; r->failed && r->failed[i]; i++) {
		_cleanup_free_ char *q = cow_quote_path(r->failed[i]);
		log_error("Failed to %s '%s': %s", strcmp(verb, "applied") == 0 ? "apply" : "restore",
			  q ? q : "?", r->failed_why[i]);
	}
	if (r->failed)
		return WARD_EXIT_FAILURE;
	return r->refused ? WARD_EXIT_REFUSED : WARD_EXIT_OK;
}

int cmd_session(int argc, char **argv)
{
	_cleanup_(args_done) Args a = {};
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_free_ char *state = NULL, *ws = NULL;
	int r;

	if (parse_or_exit(argc, argv, usage_session, &a, &r))
		return r;
	if (strv_length(a.pos) != 1 || strcmp(a.pos[0], "new") != 0) {
		fputs(usage_session, stderr);
		return WARD_EXIT_USAGE;
	}
	/* Not through a symlink a sandboxed command could have planted
	 * (run-paths.h); ward run checks the rest when the session is used. */
	if (run_resolve_workspace(a.workspace, &ws) != 0)
		return WARD_EXIT_FAILURE;
	if (state_dir(&state) < 0)
		return WARD_EXIT_FAILURE;
	r = cow_session_create(state, ws, a.cow, &s);
	if (r < 0)
		return log_error_errno(r, "Failed to create a session: %m"), WARD_EXIT_FAILURE;
	printf("%s\n", cow_session_id(s));
	return 0;
}

static const char *session_state(CowSession *s, long pending)
{
	if (!cow_session_is_cow(s))
		return "plain";
	if (cow_session_has_journal(s))
		return "interrupted";
	if (pending > 0)
		return "pending";
	return cow_session_count_undoable(s) > 0 ? "applied" : "clean";
}

int cmd_sessions(int argc, char **argv)
{
	_cleanup_(args_done) Args a = {};
	_cleanup_free_ char *state = NULL;
	_cleanup_strv_ char **ids = NULL;
	_cleanup_cjson_ cJSON *arr = cJSON_CreateArray();
	int r;

	if (parse_or_exit(argc, argv, usage_sessions, &a, &r))
		return r;
	if (a.pos) {
		fputs(usage_sessions, stderr);
		return WARD_EXIT_USAGE;
	}
	if (state_dir(&state) < 0)
		return WARD_EXIT_FAILURE;
	r = cow_session_list(state, &ids);
	if (r < 0)
		return log_error_errno(r, "Failed to list sessions: %m"), WARD_EXIT_FAILURE;
	if (!a.json)
		printf("%-16s  %-20s  %4s  %7s  %-11s  %s\n", "ID", "CREATED", "RUNS", "PENDING",
		       "STATE", "WORKSPACE");
	STRV_FOREACH(id, ids) {
		_cleanup_(cow_session_freep) CowSession *s = NULL;
		_cleanup_(cow_change_list_done) CowChangeList l = {};
		long pending = 0;

		/* Unlocked: listing must not wait for a running session. */
		if (cow_session_open_unlocked(state, *id, &s) < 0)
			continue;
		_cleanup_strv_ char **prot = NULL;
		if (cow_session_is_cow(s) && protected_paths(s, NULL, &prot) >= 0 &&
		    cow_session_scan(s, prot, &l) >= 0)
			pending = (long)l.n;
		const char *st = session_state(s, pending);
		if (a.json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "id", *id);
			cJSON_AddStringToObject(o, "created", cow_session_created(s));
			cJSON_AddStringToObject(o, "workspace", cow_session_workspace(s));
			cJSON_AddBoolToObject(o, "cow", cow_session_is_cow(s));
			cJSON_AddNumberToObject(o, "runs", cow_session_runs(s));
			cJSON_AddNumberToObject(o, "pending", (double)pending);
			cJSON_AddStringToObject(o, "state", st);
			cJSON_AddItemToArray(arr, o);
		} else {
			_cleanup_free_ char *q = cow_quote_path(cow_session_workspace(s));
			printf("%-16s  %-20s  %4d  %7ld  %-11s  %s\n", *id, cow_session_created(s),
			       cow_session_runs(s), pending, st, q ? q : "?");
		}
	}
	if (a.json) {
		_cleanup_free_ char *t = cJSON_Print(arr);
		if (t)
			printf("%s\n", t);
	}
	return 0;
}

/* Open the session named by the first positional, check it is a CoW one. */
static int session_from_args(const Args *a, const char *usage, CowSession **ret)
{
	int r;

	if (!a->pos) {
		fputs(usage, stderr);
		return WARD_EXIT_USAGE;
	}
	r = open_session(a->pos[0], ret);
	if (r != 0)
		return r;
	if (!cow_session_is_cow(*ret)) {
		log_error("Session '%s' is not a copy-on-write session", a->pos[0]);
		return WARD_EXIT_FAILURE;
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

	if (parse_or_exit(argc, argv, usage_diff, &a, &r))
		return r;
	r = session_from_args(&a, usage_diff, &s);
	if (r != 0)
		return r;
	if (protected_paths(s, a.policy, &prot) < 0)
		return WARD_EXIT_FAILURE;
	if (resolve_paths(s, a.pos + 1, &paths) < 0)
		return log_oom(), WARD_EXIT_FAILURE;
	r = cow_session_scan(s, prot, &l);
	if (r < 0)
		return log_error_errno(r, "Failed to scan session '%s': %m", a.pos[0]),
		       WARD_EXIT_FAILURE;
	sel = calloc(l.n + 1, sizeof(bool));
	if (!sel || cow_select(&l, paths, sel, &unmatched) < 0)
		return log_oom(), WARD_EXIT_FAILURE;
	STRV_FOREACH(u, unmatched)
		log_warning("No change at '%s'", *u);
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
		.stat_only = a.stat,
	};
	r = cow_diff_write(s, &l, sel, stdout, &o);
	if (r < 0)
		return log_error_errno(r, "Failed to show the diff: %m"), WARD_EXIT_FAILURE;
	return audit_exit(0);
}

int cmd_apply(int argc, char **argv)
{
	_cleanup_(args_done) Args a = {};
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_(cow_result_donep) CowResult res = {};
	_cleanup_strv_ char **prot = NULL, **paths = NULL;
	int r;

	if (parse_or_exit(argc, argv, usage_apply, &a, &r))
		return r;
	r = session_from_args(&a, usage_apply, &s);
	if (r != 0)
		return r;
	if (protected_paths(s, a.policy, &prot) < 0)
		return WARD_EXIT_FAILURE;
	if (resolve_paths(s, a.pos + 1, &paths) < 0)
		return log_oom(), WARD_EXIT_FAILURE;
	CowApplyOptions o = { .paths = paths, .protected_paths = prot, .force = a.force };
	r = cow_apply(s, &o, &res);
	if (r < 0)
		return log_error_errno(r, "Failed to apply session '%s': %m", a.pos[0]),
		       WARD_EXIT_FAILURE;
	cJSON *ev = result_json(&res);
	cJSON_AddBoolToObject(ev, "force", a.force);
	write_audit(s, "apply", ev);
	return audit_exit(report("applied", &res, a.json));
}

int cmd_undo(int argc, char **argv)
{
	_cleanup_(args_done) Args a = {};
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_(cow_result_donep) CowResult res = {};
	int r;

	if (parse_or_exit(argc, argv, usage_undo, &a, &r))
		return r;
	if (strv_length(a.pos) > 1) {
		fputs(usage_undo, stderr);
		return WARD_EXIT_USAGE;
	}
	r = session_from_args(&a, usage_undo, &s);
	if (r != 0)
		return r;
	r = cow_undo(s, a.force, &res);
	if (r == -ENOENT)
		return log_error("Session '%s' has no apply to undo", a.pos[0]), WARD_EXIT_FAILURE;
	if (r < 0)
		return log_error_errno(r, "Failed to undo in session '%s': %m", a.pos[0]),
		       WARD_EXIT_FAILURE;
	cJSON *ev = result_json(&res);
	cJSON_AddBoolToObject(ev, "force", a.force);
	write_audit(s, "undo", ev);
	return audit_exit(report("restored", &res, a.json));
}

int cmd_discard(int argc, char **argv)
{
	_cleanup_(args_done) Args a = {};
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_(cow_change_list_done) CowChangeList l = {};
	int r;

	if (parse_or_exit(argc, argv, usage_discard, &a, &r))
		return r;
	if (strv_length(a.pos) != 1) {
		fputs(usage_discard, stderr);
		return WARD_EXIT_USAGE;
	}
	r = open_session(a.pos[0], &s);
	if (r != 0)
		return r;
	_cleanup_strv_ char **prot = NULL;
	if (protected_paths(s, NULL, &prot) >= 0)
		(void)cow_session_scan(s, prot, &l);
	r = cow_discard(s);
	cJSON *ev = cJSON_CreateObject();
	cJSON_AddNumberToObject(ev, "dropped", (double)l.n);
	cJSON_AddBoolToObject(ev, "ok", r >= 0);
	write_audit(s, "discard", ev);
	if (r < 0)
		return log_error_errno(r, "Failed to discard session '%s': %m", a.pos[0]),
		       WARD_EXIT_FAILURE;
	return audit_exit(0);
}
