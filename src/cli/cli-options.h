/* One table-driven option parser for the subcommands: each command lists
 * its options in a CliOption table, and anything not in it is an error
 * naming the option (no abbreviations, no options borrowed from another
 * command). Pure (no I/O), so the unit tests drive it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum CliArgKind {
	CLI_ARG_NONE,     /* --flag */
	CLI_ARG_REQUIRED, /* --name VALUE, --name=VALUE, -n VALUE, -nVALUE */
	CLI_ARG_OPTIONAL, /* --name or --name=VALUE only */
} CliArgKind;

typedef struct CliOption {
	const char *name; /* long name without "--"; NULL ends the table */
	char short_name;  /* 0: none */
	CliArgKind arg;
	int id;           /* > 0, returned for each occurrence */
} CliOption;

typedef struct CliOptionValue {
	int id;
	const char *value; /* points into argv; NULL when none was given */
} CliOptionValue;

typedef struct CliParsed {
	CliOptionValue *opts; /* in command-line order */
	size_t n_opts;
	char **pos;           /* positional arguments (strv, may be NULL) */
} CliParsed;

enum {
	/* Options and positionals in any order; "--" ends the options. */
	CLI_PARSE_INTERLEAVED = 0,
	/* The first positional ends the options (a command and its arguments). */
	CLI_PARSE_STOP_AT_POSITIONAL = 1 << 0,
	/* Never fail on usage: skip unknown options, a value given to a flag
	 * and a missing value. Only to find one option on a command line that
	 * does not parse (ward run's --result, so a usage error still leaves
	 * a record); never to accept a command line. */
	CLI_PARSE_LENIENT = 1 << 1,
};

/* Parse @argv[1..@argc) against @table. On a usage error returns -EINVAL
 * with a message in @reterr ("unknown option '--x'", "option '--policy'
 * needs an argument", "option '--json' takes no argument"; caller frees);
 * -ENOMEM on OOM. Exact names only: an abbreviation ("--allow-d") is an
 * unknown option. "--" ends the options; "-" alone is a positional. */
int cli_parse_options(const CliOption *table, unsigned flags, int argc, char **argv,
		      CliParsed *ret, char **reterr);
void cli_parsed_done(CliParsed *p);
