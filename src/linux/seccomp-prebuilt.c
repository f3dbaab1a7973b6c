/* seccomp_program_new(): the filter compiled at build time (seccomp-gen.c),
 * or, in builds without the generator, compiled now. test-seccomp-prebuilt
 * checks the two are the same program. */
#include <errno.h>
#include <linux/filter.h>
#include <stddef.h>

#include "config.h"
#include "linux/seccomp-filter.h"
#if HAVE_SECCOMP
#include "src/linux/seccomp-prebuilt.h"
#endif

int seccomp_program_new(const SeccompOptions *opt, SeccompProgram **ret)
{
	if (!opt || !ret)
		return -EINVAL;
#ifdef WARD_SECCOMP_PREBUILT
	unsigned i = seccomp_options_index(opt);
	return seccomp_program_from_insns(seccomp_prebuilt[i].insns, seccomp_prebuilt[i].len, ret);
#else
	return seccomp_program_compile(opt, ret);
#endif
}
