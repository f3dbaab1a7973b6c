/* ward setup apparmor: the AppArmor profile that lets ward create user
 * namespaces where AppArmor restricts them (Ubuntu 23.10 and later,
 * kernel.apparmor_restrict_unprivileged_userns=1). As root it writes the
 * profile and loads it; otherwise, or with --print, it prints the profile
 * and the commands to install it. It grants ward "userns," and nothing
 * else: the profile is unconfined otherwise, as Ubuntu's own profiles for
 * bwrap and unprivileged_userns are. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli-options.h"
#include "cli/commands.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "ward/ward.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: ward setup apparmor [--print] [--dir DIR] [--binary PATH]\n"
		   "       ward setup vm [--dir DIR]   (tier 3's guest image: 'ward setup vm -h')\n\n"
		   "Write the AppArmor profile that allows this ward binary to create user\n"
		   "namespaces (needed for tier 2 where AppArmor restricts them, as on Ubuntu\n"
		   "23.10 and later) and load it with apparmor_parser. Needs root; without\n"
		   "root, or with --print, prints the profile and the commands instead.\n\n"
		   "  --print        print the profile and the install commands, write nothing\n"
		   "  --dir DIR      where to write it (default /etc/apparmor.d); a directory\n"
		   "                 other than the default is written but not loaded\n"
		   "  --binary PATH  the ward binary the profile is for (default: this one)\n"
		   "  -h, --help     show this help\n");
}

/* AppArmor names the profile after the binary's path; a path with spaces
 * or quotes would need quoting rules this does not implement. */
static bool path_ok(const char *p)
{
	return p[0] == '/' && !strpbrk(p, " \t\n\"'{}[]*?^,#");
}

static int profile_text(const char *binary, char *buf, size_t n)
{
	int r = snprintf(buf, n,
			 "# Written by 'ward setup apparmor': lets ward create the user namespaces\n"
			 "# of its tier-2 sandbox where AppArmor restricts them\n"
			 "# (kernel.apparmor_restrict_unprivileged_userns=1). Grants nothing else.\n"
			 "abi <abi/4.0>,\n"
			 "include <tunables/global>\n"
			 "\n"
			 "profile ward %s flags=(unconfined) {\n"
			 "  userns,\n"
			 "\n"
			 "  include if exists <local/ward>\n"
			 "}\n",
			 binary);
	return r < 0 || (size_t)r >= n ? -ENAMETOOLONG : 0;
}

static int write_profile(const char *path, const char *text)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -EBADF;
	size_t len = strlen(text);
	int r;

	if (asprintf(&tmp, "%s.ward-tmp", path) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) < 0) {
		r = -errno;
		(void)unlink(tmp);
		return r ? r : -EIO;
	}
	if (rename(tmp, path) < 0) {
		r = -errno;
		(void)unlink(tmp);
		return r;
	}
	return 0;
}

static int load_profile(const char *path)
{
	const char *parser = access("/sbin/apparmor_parser", X_OK) == 0 ? "/sbin/apparmor_parser"
			     : access("/usr/sbin/apparmor_parser", X_OK) == 0
				     ? "/usr/sbin/apparmor_parser"
				     : NULL;
	int status;
	pid_t pid;

	if (!parser || access("/sys/kernel/security/apparmor", F_OK) < 0)
		return -ENOENT;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execl(parser, parser, "-r", path, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static int setup_apparmor(int argc, char **argv)
{
	enum { OPT_PRINT = 1, OPT_DIR, OPT_BINARY, OPT_HELP };
	static const CliOption opts[] = {
		{ "print", 0, CLI_ARG_NONE, OPT_PRINT },
		{ "dir", 0, CLI_ARG_REQUIRED, OPT_DIR },
		{ "binary", 0, CLI_ARG_REQUIRED, OPT_BINARY },
		{ "help", 'h', CLI_ARG_NONE, OPT_HELP },
		{},
	};
	_cleanup_(cli_parsed_done) CliParsed a = {};
	_cleanup_free_ char *err = NULL, *self = NULL, *path = NULL;
	const char *dir = "/etc/apparmor.d", *binary = NULL;
	bool print = false;
	char text[PATH_MAX + 1024];
	int r;

	r = cli_parse_options(opts, CLI_PARSE_INTERLEAVED, argc, argv, &a, &err);
	if (r < 0) {
		log_error("setup apparmor: %s", err ? err : "bad option");
		usage(stderr);
		return WARD_EXIT_USAGE;
	}
	for (size_t i = 0; i < a.n_opts; i++)
		switch (a.opts[i].id) {
		case OPT_PRINT:
			print = true;
			break;
		case OPT_DIR:
			dir = a.opts[i].value;
			break;
		case OPT_BINARY:
			binary = a.opts[i].value;
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
	if (!binary) {
		self = realpath("/proc/self/exe", NULL);
		if (!self)
			return log_error_errno(-errno, "Failed to find ward's own binary: %m"),
			       WARD_EXIT_SETUP;
		binary = self;
	}
	if (!path_ok(binary)) {
		log_error("The binary path '%s' is not absolute or holds characters an AppArmor "
			  "profile name cannot take unquoted; install ward in a plain path",
			  binary);
		return WARD_EXIT_USAGE;
	}
	if (profile_text(binary, text, sizeof(text)) < 0 || asprintf(&path, "%s/ward", dir) < 0)
		return log_error("Out of memory"), WARD_EXIT_SETUP;

	if (print || geteuid() != 0) {
		if (!print)
			fprintf(stderr, "ward: not root: nothing written. As root, run "
					"'ward setup apparmor', or install this profile:\n");
		fputs(text, stdout);
		fprintf(stderr,
			"ward: to install it: save it as %s, then run 'apparmor_parser -r %s'\n",
			path, path);
		return 0;
	}
	r = write_profile(path, text);
	if (r < 0)
		return log_error_errno(r, "Failed to write '%s': %m", path), WARD_EXIT_SETUP;
	printf("Wrote %s (user namespaces for %s).\n", path, binary);
	if (strcmp(dir, "/etc/apparmor.d") != 0) {
		printf("Not loaded (not the system's profile directory).\n");
		return 0;
	}
	r = load_profile(path);
	if (r == -ENOENT) {
		printf("Not loaded: AppArmor is not active here (no apparmor_parser or "
		       "/sys/kernel/security/apparmor); nothing restricts user namespaces.\n");
		return 0;
	}
	if (r < 0)
		return log_error_errno(r, "Failed to load '%s' with apparmor_parser: %m", path),
		       WARD_EXIT_SETUP;
	printf("Loaded. 'ward probe' should now report tier 2.\n");
	return 0;
}

int cmd_setup(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? WARD_EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "apparmor") == 0)
		return setup_apparmor(argc - 1, argv + 1);
	if (strcmp(argv[1], "vm") == 0)
		return setup_vm(argc - 1, argv + 1);
	log_error("Unknown setup target '%s' (known: apparmor, vm).", argv[1]);
	return WARD_EXIT_USAGE;
}
