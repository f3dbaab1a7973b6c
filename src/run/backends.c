/* The backend table: one entry per tier (run/backend.h). A tier that is
 * not built here has an entry whose probe refuses, so that the run module
 * never special-cases a tier. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>

#include "common/macro.h"
#include "run/backend.h"

extern const Backend backend_tier0;
extern const Backend backend_linux_t1;
extern const Backend backend_linux_t2;

extern const Backend backend_vm_t3;

static const Backend *const backends[] = {
	[0] = &backend_tier0,
	[1] = &backend_linux_t1,
	[2] = &backend_linux_t2,
	[3] = &backend_vm_t3,
};

const Backend *backend_for_tier(int tier)
{
	if (tier < 0 || (size_t)tier >= ELEMENTSOF(backends))
		return NULL;
	return backends[tier];
}

int backend_check_stdio(const BackendInput *in, WardError *reterr)
{
	for (int fd = 0; fd <= 2; fd++)
		if (in->stdio[fd] >= 0 && fcntl(in->stdio[fd], F_GETFD) < 0)
			return ward_error_set(reterr, "stdio", EBADF,
					      "the descriptor passed for fd %d (%d) is not open", fd,
					      in->stdio[fd]);
	return 0;
}
