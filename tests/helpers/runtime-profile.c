/* runtime-profile MODE... -- CMD [ARG]...: run CMD under a seccomp filter
 * that reproduces what container runtimes' default profiles do to ward,
 * for tests/integration/test-tier1.sh:
 *   clone3-enosys    clone3 answers ENOSYS (containerd's default)
 *   hostname-eperm   sethostname answers EPERM (CRI-O's, Podman's)
 *   no-userns        clone/unshare with CLONE_NEWUSER answer EPERM and
 *                    clone3 ENOSYS (Docker's default without CAP_SYS_ADMIN)
 * Sets no_new_privs (a filter needs it). */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int i, r = 0;

	if (!ctx)
		return 125;
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "clone3-enosys") == 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
		else if (strcmp(argv[i], "hostname-eperm") == 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sethostname), 0);
		else if (strcmp(argv[i], "no-userns") == 0) {
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
			if (r >= 0)
				r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
						     SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER,
								CLONE_NEWUSER));
			if (r >= 0)
				r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
						     SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER,
								CLONE_NEWUSER));
		} else {
			fprintf(stderr, "runtime-profile: unknown mode '%s'\n", argv[i]);
			return 125;
		}
		if (r < 0) {
			fprintf(stderr, "runtime-profile: %s: %s\n", argv[i], strerror(-r));
			return 125;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: runtime-profile MODE... -- CMD [ARG]...\n");
		return 125;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_load(ctx) < 0) {
		perror("runtime-profile: loading the filter");
		return 125;
	}
	seccomp_release(ctx);
	execvp(argv[i + 1], argv + i + 1);
	perror(argv[i + 1]);
	return 127;
}
