/* ward: a kernel-enforced sandbox for the shell commands of AI coding agents.
 * Umbrella header: exit codes shared by the CLI and the library. */
#pragma once

/* Exit codes of `ward run` (and of the other subcommands where they apply).
 * Anything else is the command's own status. */
enum {
	WARD_EXIT_TIMEOUT = 124,  /* --timeout / limits.timeout_s expired; tree killed */
	WARD_EXIT_SETUP = 125,    /* ward could not run the command: policy error, tier
	                           * unavailable, setup failure (one-line reason on stderr) */
	WARD_EXIT_NOEXEC = 126,   /* command found but not executable (as in the shell) */
	WARD_EXIT_NOTFOUND = 127, /* command not found (as in the shell) */
	WARD_EXIT_SIGNAL_BASE = 128, /* 128+N: the command was killed by signal N */
};

/* Exit codes of the review commands (diff/apply/undo). */
enum {
	WARD_EXIT_OK = 0,
	WARD_EXIT_FAILURE = 1,  /* operation failed (I/O error, ...) */
	WARD_EXIT_USAGE = 2,    /* bad command line */
	WARD_EXIT_REFUSED = 3,  /* some paths were refused (conflict, protected, escape) */
};
