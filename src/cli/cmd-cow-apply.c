/* ward apply / undo / discard: write a session's changes into its
 * workspace, put them back, drop the session. What they did is printed
 * (one line per path, names quoted), given as JSON with --json, and
 * written to the audit log as the same object (docs/audit.md). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/cow-cli.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/strv.h"
#include "ward/ward.h"

static void cow_result_donep(CowResult *r)
{
	cow_result_done(r);
}

static const CliOption options_apply[] = {
	HELP_OPTION,
	FORCE_OPTION,
	JSON_OPTION,
	POLICY_OPTION,
	{},
};
static const char usage_apply[] =
	"Usage: ward apply ID [PATH]... [-f|--force] [--json] [-p|--policy FILE]\n\n"
	"Write the session's changes (all, or those under each PATH) into the\n"
	"workspace the session was made for, atomically per file, with the modes and\n"
	"modification times the session gave them. Refused: paths outside the\n"
	"workspace, files changed in the workspace during the session (unless\n"
	"--force), and protected paths - repository metadata (.git, .gitmodules at\n"
	"any depth) and fs.protected - unless PATH names them. Exit status 3 when\n"
	"some paths were refused.\n";

static const CliOption options_undo[] = {
	HELP_OPTION,
	FORCE_OPTION,
	JSON_OPTION,
	{},
};
static const char usage_undo[] =
	"Usage: ward undo ID [-f|--force] [--json]\n\n"
	"Put back what the last apply replaced or removed, and remove what it\n"
	"added. Files changed again since the apply are refused unless --force.\n";

static const CliOption options_discard[] = {
	HELP_OPTION,
	{},
};
static const char usage_discard[] = "Usage: ward discard ID\n\n"
				    "Drop the session: its pending changes, its layer and its records.\n";

/* Why a path was refused, in words, with how to get past it. */
static void explain_refusal(const char *id, const char *path, const char *why,
			    char *const *prot)
{
	_cleanup_free_ char *q = cli_quote(path), *qid = cli_quote(id);

	if (strcmp(why, "protected") == 0) {
		const char *e = cow_protected_entry(path, strlen(path), prot);
		bool repo = !e || strcmp(e, ".git") == 0 || strcmp(e, ".gitmodules") == 0;
		_cleanup_free_ char *qe = cli_quote(e ? e : "");
		if (e && repo)
			log_warning("Refused %s: repository metadata (%s): git run on the host reads "
				    "it and can run commands from it; to apply it anyway, name it: "
				    "ward apply %s %s",
				    q, qe, qid, q);
		else if (e)
			log_warning("Refused %s: protected by fs.protected entry %s; to apply it "
				    "anyway, name it: ward apply %s %s",
				    q, qe, qid, q);
		else
			log_warning("Refused %s: it holds or is inside repository metadata (a .git, "
				    ".gitmodules or git directory); to apply it anyway, name it: "
				    "ward apply %s %s",
				    q, qid, q);
		return;
	}
	if (strcmp(why, "conflict") == 0 || strcmp(why, "changed-since-apply") == 0) {
		log_warning("Refused %s: %s (changed in the workspace meanwhile; --force overrides)",
			    q, why);
		return;
	}
	log_warning("Refused %s: %s", q, why);
}

/* Print a result; the exit code follows from it. */
static int report(CowSession *s, const char *verb, const CowResult *r, cJSON *json,
		  char *const *prot)
{
	_cleanup_free_ char *ws = cli_quote(cow_session_workspace(s));

	if (json) {
		_cleanup_free_ char *t = cJSON_Print(json);
		if (t)
			printf("%s\n", t);
	} else {
		printf("workspace %s\n", ws);
		STRV_FOREACH(p, r->done) {
			_cleanup_free_ char *q = cli_quote(*p);
			printf("%s %s\n", strv_contains(r->removed, *p) ? "removed" : verb, q);
		}
	}
	for (size_t i = 0; r->refused && r->refused[i]; i++)
		explain_refusal(cow_session_id(s), r->refused[i], r->refused_why[i], prot);
	for (size_t i = 0; r->failed && r->failed[i]; i++) {
		_cleanup_free_ char *q = cli_quote(r->failed[i]);
		log_error("Failed to %s %s: %s", strcmp(verb, "applied") == 0 ? "apply" : "restore",
			  q, r->failed_why[i]);
	}
	if (r->failed)
		return WARD_EXIT_FAILURE;
	return r->refused ? WARD_EXIT_REFUSED : WARD_EXIT_OK;
}

int cmd_apply(int argc, char **argv)
{
	_cleanup_(args_done) Args a = {};
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_(cow_result_donep) CowResult res = {};
	_cleanup_strv_ char **prot = NULL, **paths = NULL;
	_cleanup_cjson_ cJSON *j = NULL;
	int r;

	if (parse_or_exit(argc, argv, options_apply, usage_apply, 1, SIZE_MAX, &a, &r))
		return r;
	r = session_paths_from_args(&a, usage_apply, &s, &prot, &paths);
	if (r != 0)
		return r;
	CowApplyOptions o = { .paths = paths, .protected_paths = prot, .force = a.force };
	r = cow_apply(s, &o, &res);
	if (r < 0)
		return report_failure(s, r, "apply");
	j = cow_result_to_json(s, &res, paths ? paths : (char *[]){ NULL }, a.force);
	write_audit(s, "apply", cJSON_Duplicate(j, true));
	return audit_exit(report(s, "applied", &res, a.json ? j : NULL, prot));
}

int cmd_undo(int argc, char **argv)
{
	_cleanup_(args_done) Args a = {};
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_(cow_result_donep) CowResult res = {};
	_cleanup_cjson_ cJSON *j = NULL;
	int r;

	if (parse_or_exit(argc, argv, options_undo, usage_undo, 1, 1, &a, &r))
		return r;
	r = session_from_args(&a, usage_undo, &s);
	if (r != 0)
		return r;
	r = cow_undo(s, a.force, &res);
	if (r == -ENOENT) {
		_cleanup_free_ char *q = cli_quote(a.pos[0]);
		return log_error("Session %s has no apply to undo", q), WARD_EXIT_FAILURE;
	}
	if (r < 0)
		return report_failure(s, r, "undo");
	j = cow_result_to_json(s, &res, NULL, a.force);
	write_audit(s, "undo", cJSON_Duplicate(j, true));
	return audit_exit(report(s, "restored", &res, a.json ? j : NULL, NULL));
}

int cmd_discard(int argc, char **argv)
{
	_cleanup_(args_done) Args a = {};
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	_cleanup_(cow_change_list_done) CowChangeList l = {};
	_cleanup_strv_ char **prot = NULL;
	int r;

	if (parse_or_exit(argc, argv, options_discard, usage_discard, 1, 1, &a, &r))
		return r;
	r = open_session(a.pos[0], &s);
	if (r != 0)
		return r;
	if (protected_paths(s, NULL, &prot) >= 0)
		(void)cow_session_scan(s, prot, &l);
	r = cow_discard(s);
	cJSON *ev = cJSON_CreateObject();
	cow_json_add_path(ev, "workspace", cow_session_workspace(s));
	cJSON_AddStringToObject(ev, "result", r >= 0 ? "ok" : "failed");
	cJSON_AddNumberToObject(ev, "dropped", (double)l.n);
	write_audit(s, "discard", ev);
	if (r < 0) {
		_cleanup_free_ char *q = cli_quote(a.pos[0]);
		return log_error_errno(r, "Failed to discard session %s: %m", q), WARD_EXIT_FAILURE;
	}
	return audit_exit(0);
}
