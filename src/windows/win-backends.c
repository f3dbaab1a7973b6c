/* ward.exe's backend table (src/run/backend.h; Linux's is
 * src/run/backends.c): W0, W1, W2 at Linux's numbers 0, 1, 2 and W1-write
 * at 4 (win-backend.h); 3, the micro-VM tier, refuses. Windows-only. */
#include <errno.h>
#include <io.h>
#include <stddef.h>

#include "common/macro.h"
#include "run/backend.h"
#include "windows/win-backend.h"

extern const Backend backend_win_w0;
extern const Backend backend_win_w1;
extern const Backend backend_win_w1_write;
extern const Backend backend_win_w2;
extern const Backend backend_win_user;

static int t3_probe(WardError *reterr)
{
	return ward_error_set(reterr, "tier", EOPNOTSUPP,
			      "Tier 3 (a micro-VM) does not exist on Windows; use --tier W2 (the "
			      "default), W1-write, W1 or W0");
}

static const Backend backend_t3_none = { .tier = 3, .name = "none", .probe = t3_probe };

static const Backend *const backends[] = {
	[WIN_RUN_TIER_W0] = &backend_win_w0,
	[WIN_RUN_TIER_W1] = &backend_win_w1,
	[WIN_RUN_TIER_W2] = &backend_win_w2,
	[3] = &backend_t3_none,
	[WIN_RUN_TIER_W1_WRITE] = &backend_win_w1_write,
	[WIN_RUN_TIER_USER] = &backend_win_user,
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
		if (in->stdio[fd] >= 0 && _get_osfhandle(in->stdio[fd]) == -1)
			return ward_error_set(reterr, "stdio", EBADF,
					      "the descriptor passed for fd %d (%d) is not open", fd,
					      in->stdio[fd]);
	return 0;
}

int win_run_tier(WinTier t)
{
	switch (t) {
	case WIN_TIER_W0:
		return WIN_RUN_TIER_W0;
	case WIN_TIER_W1:
		return WIN_RUN_TIER_W1;
	case WIN_TIER_W1_WRITE:
		return WIN_RUN_TIER_W1_WRITE;
	case WIN_TIER_W2:
		return WIN_RUN_TIER_W2;
	case _WIN_TIER_MAX:
	case _WIN_TIER_INVALID:
		break;
	}
	return -EINVAL;
}

WinTier win_tier_of_run(int tier)
{
	switch (tier) {
	case WIN_RUN_TIER_W0:
		return WIN_TIER_W0;
	case WIN_RUN_TIER_W1:
		return WIN_TIER_W1;
	case WIN_RUN_TIER_W1_WRITE:
		return WIN_TIER_W1_WRITE;
	case WIN_RUN_TIER_W2:
		return WIN_TIER_W2;
	default:
		return _WIN_TIER_INVALID;
	}
}
