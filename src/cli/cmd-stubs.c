/* Temporary: subcommands whose files have not landed yet. Each owner removes
 * its entry when adding its cmd-*.c. */
#include <stdio.h>

#include "cli/commands.h"
#include "ward/ward.h"

#define STUB(fn)                                                                                   \
	int fn(int argc, char **argv)                                                              \
	{                                                                                          \
		(void)argc;                                                                        \
		fprintf(stderr, "ward: '%s' is not built yet\n", argv[0]);                         \
		return WARD_EXIT_SETUP;                                                            \
	}

