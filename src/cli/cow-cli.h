/* Shared by the review subcommands (cmd-cow.c: session, sessions, diff;
 * cmd-cow-apply.c: apply, undo, discard). Not a library interface. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "cli/cli-options.h"
#include "common/cleanup.h"
#include "cow/cow-review.h"

/* ward session new without --live: the session's storage alone (cmd-cow.c). */
int cmd_session_storage(int argc, char **argv);
/* The managed ceiling's word on a new session (cmd-cow.c): 0, or -errno
 * after saying why on stderr. */
int session_within_ceiling(bool cow, const char *ws);

/* Option ids shared by the per-command tables. */
enum {
	OPT_HELP = 1,
	OPT_COW,
	OPT_JSON,
	OPT_FORCE,
	OPT_WORKSPACE,
	OPT_POLICY,
	OPT_COLOR,
	OPT_STAT,
	OPT_NAME_ONLY,
	OPT_NAME_STATUS,
	OPT_SUMMARY,
	OPT_COLLAPSE,
};

typedef struct Args {
	bool help, cow, json, force;
	int color;        /* -1 auto, 0 never, 1 always */
	CowDiffMode mode; /* diff */
	int modes;        /* how many output modes were asked for */
	size_t collapse;
	const char *workspace;
	const char *policy;
	CliParsed parsed; /* owns pos */
	char **pos;
} Args;

/* Entries more than one per-command table has. */
#define HELP_OPTION { "help", 'h', CLI_ARG_NONE, OPT_HELP }
#define FORCE_OPTION { "force", 'f', CLI_ARG_NONE, OPT_FORCE }
#define JSON_OPTION { "json", 0, CLI_ARG_NONE, OPT_JSON }
#define POLICY_OPTION { "policy", 'p', CLI_ARG_REQUIRED, OPT_POLICY }

DEFINE_TRIVIAL_CLEANUP_FUNC(CowSession *, cow_session_free)

void args_done(Args *a);
/* Parse with @table; on a usage error, on fewer than @min_pos or more than
 * @max_pos positional arguments (both print @usage on stderr) or on
 * --help (which prints @usage on stdout) returns true with the exit code
 * in @ret_exit. */
bool parse_or_exit(int argc, char **argv, const CliOption *table, const char *usage,
		   size_t min_pos, size_t max_pos, Args *a, int *ret_exit);
/* Print @usage on stderr; WARD_EXIT_USAGE. */
int usage_error(const char *usage);

/* @s quoted for a message or a listing (cow_quote_path); never NULL. */
char *cli_quote(const char *s);
int log_oom(void);
/* Open the session named @id (locked, recovered); an exit code. */
int open_session(const char *id, CowSession **ret);
/* Open the session named by a->pos[0] and check it is a CoW one. */
int session_from_args(const Args *a, const char *usage, CowSession **ret);
/* For commands taking ID [PATH]...: session_from_args(), then the
 * protected paths (with a->policy's) in *@ret_prot and the PATHs,
 * resolved, in *@ret_paths; an exit code. */
int session_paths_from_args(const Args *a, const char *usage, CowSession **ret,
			    char ***ret_prot, char ***ret_paths);
/* Protected paths: what runs in the session recorded, plus the policy's. */
int protected_paths(CowSession *s, const char *policy_file, char ***ret);
/* PATH arguments relative to the workspace. */
int resolve_paths(CowSession *s, char *const *in, char ***ret);
/* Log why an operation on @s failed with @r, naming a moved workspace
 * clearly; returns WARD_EXIT_FAILURE. */
int report_failure(CowSession *s, int r, const char *what);
/* Write an audit event (@fields taken). A record that cannot be written is
 * said on stderr and remembered: */
void write_audit(CowSession *s, const char *event, cJSON *fields);
/* the exit status of a review command that wrote audit records: @status,
 * or WARD_EXIT_FAILURE instead of 0 when a record was lost. */
int audit_exit(int status);
