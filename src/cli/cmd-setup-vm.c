/* ward setup vm: assemble tier 3's guest image (docs/t3.md). The work is
 * done by ward-setup-vm.sh (shipped with ward, src/vm/), which prints each
 * step and is idempotent; this finds it, the guest init and the image
 * directory, and runs it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli-options.h"
#include "cli/commands.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "config.h"
#include "vm/vm-image.h"
#include "ward/ward.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: ward setup vm [--dir DIR] [--kernel auto|minimal|stock]\n\n"
		   "Assemble the guest image of tier 3 (ward run --tier 3) from Debian packages:\n"
		   "a kernel and ward's static guest init in an initramfs. Idempotent: an image\n"
		   "already built for the same kernel, config and init is kept.\n\n"
		   "  --dir DIR        where to keep it (default $WARD_VM_DIR, else\n"
		   "                   $XDG_DATA_HOME/ward/vm, else ~/.local/share/ward/vm;\n"
		   "                   /var/lib/ward/vm is looked at too, for every user)\n"
		   "  --kernel KIND    minimal: a small config over Debian's linux-source-6.1,\n"
		   "                   built once (minutes; make, gcc, flex, bison, bc,\n"
		   "                   libelf-dev) and cached; boots in well under a second;\n"
		   "                   stock: Debian's linux-image-amd64 and its modules,\n"
		   "                   nothing to compile, boots in seconds under TCG;\n"
		   "                   auto (default): minimal when its tools and source\n"
		   "                   package are there, else stock (docs/t3.md)\n"
		   "  -h, --help       show this help\n");
}

int setup_vm(int argc, char **argv)
{
	enum { OPT_DIR = 1, OPT_KERNEL, OPT_HELP };
	static const CliOption opts[] = {
		{ "dir", 0, CLI_ARG_REQUIRED, OPT_DIR },
		{ "kernel", 0, CLI_ARG_REQUIRED, OPT_KERNEL },
		{ "help", 'h', CLI_ARG_NONE, OPT_HELP },
		{},
	};
	_cleanup_(cli_parsed_done) CliParsed a = {};
	_cleanup_free_ char *err = NULL, *dir = NULL, *script = NULL, *init = NULL, *frag = NULL;
	const char *kind = "auto";
	int r, status;
	pid_t pid;

	r = cli_parse_options(opts, CLI_PARSE_INTERLEAVED, argc, argv, &a, &err);
	if (r < 0) {
		log_error("setup vm: %s", err ? err : "bad option");
		usage(stderr);
		return WARD_EXIT_USAGE;
	}
	for (size_t i = 0; i < a.n_opts; i++)
		switch (a.opts[i].id) {
		case OPT_DIR:
			free(dir);
			dir = strdup(a.opts[i].value);
			if (!dir)
				return WARD_EXIT_SETUP;
			break;
		case OPT_KERNEL:
			kind = a.opts[i].value;
			if (strcmp(kind, "auto") != 0 && strcmp(kind, "minimal") != 0 &&
			    strcmp(kind, "stock") != 0) {
				log_error("setup vm: --kernel takes auto, minimal or stock, got '%s'",
					  kind);
				return WARD_EXIT_USAGE;
			}
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		}
	if (a.pos) {
		log_error("Unexpected argument '%s'.", a.pos[0]);
		usage(stderr);
		return WARD_EXIT_USAGE;
	}
	if (dir && dir[0] != '/') {
		log_error("setup vm: --dir needs an absolute path, got '%s'", dir);
		return WARD_EXIT_USAGE;
	}
	if (!dir && (r = vm_image_default_dir(&dir)) < 0)
		return log_error_errno(r, "Failed to find ward's data directory: %m"), WARD_EXIT_SETUP;
	if ((r = vm_helper_path("ward-setup-vm.sh", &script)) < 0 ||
	    (r = vm_helper_path("ward-guest-init", &init)) < 0 ||
	    (r = vm_helper_path("guest-kernel.config", &frag)) < 0)
		return log_error_errno(r, "Failed to find ward's VM helpers (ward-setup-vm.sh, "
					  "ward-guest-init, guest-kernel.config) beside ward or in "
					  WARD_LIBEXECDIR ": %m"),
		       WARD_EXIT_SETUP;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return log_error_errno(-errno, "fork: %m"), WARD_EXIT_SETUP;
	if (pid == 0) {
		execl("/bin/sh", "sh", script, dir, init, kind, frag, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return WARD_EXIT_SETUP;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		log_error("setup vm failed; nothing was changed in %s", dir);
		return WARD_EXIT_SETUP;
	}
	return 0;
}
