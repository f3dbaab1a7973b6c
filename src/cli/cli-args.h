/* `ward run` command line -> RunOptions. Pure (no I/O), so that the unit
 * tests can drive it; docs/ward.1 documents the same options. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct RunOptions {
	char *workspace;      /* -w DIR; NULL: the current directory */
	char *policy_file;    /* -p FILE */
	char **presets;       /* --preset NAME... */
	uint64_t timeout_s;   /* --timeout SECONDS; 0 unset */
	char **env_extra;     /* --env NAME[=VALUE]... */
	int tier;             /* --tier N; -1 unset (T2) */
	bool strict;          /* --strict: refuse degraded runs */
	bool cow;             /* --cow: new copy-on-write session */
	char *session;        /* --session ID */
	int net_mode;         /* --net none|proxy; -1 unset */
	char **allow_domains; /* --allow-domain HOST... (implies proxy) */
	uint16_t host_ports[32]; /* --allow-host-port PORT... */
	size_t n_host_ports;
	char *result_file;    /* --result FILE */
	int events_fd;        /* --events-fd N; -1 unset */
	int result_fd;        /* --result-fd N; -1 unset */
	int log_level;        /* --log-level; -1 unset */
	int git_mode;         /* --git read-only|commit|off; -1 unset */
	bool allow_unsafe_workspace; /* --allow-unsafe-workspace */
	bool help;
	char **argv;          /* the command */
} RunOptions;

/* Parse argv (argv[0] is "run"). On error returns -EINVAL and a message in
 * @reterr (caller frees). */
int cli_parse_run(int argc, char **argv, RunOptions *ret, char **reterr);
void run_options_done(RunOptions *o);
/* The --result FILE among ward's own options in @argv, even when they do
 * not parse (so that a usage error still leaves a result), or NULL. */
const char *cli_find_result_file(int argc, char **argv);
/* The same for --result-fd N: the fd, or -1. */
int cli_find_result_fd(int argc, char **argv);
extern const char cli_run_usage[];
