/* Fuzz target: the Windows privileged helper's request parser and policy
 * check (src/windows/win-helper-proto.c), fed one pipe message. Whatever
 * parses must be a request the format allows, format back to the same
 * bytes, and be judged by the policy without crashing. */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "windows/win-helper-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const WinHelperGrant grants[] = { { "C:\\Program Files\\tools", false },
						 { "C:\\Program Files\\Git", true } };
	static const WinHelperPolicy policy = {
		.run_id = "00000000000000aa",
		.package_sid = "S-1-15-2-1-2-3-4-5-6-7",
		.grants = grants,
		.n_grants = 2,
	};
	WinHelperRequest req;
	char why[256], *back = NULL;
	int r;

	r = win_helper_parse((const char *)data, size, &req, why, sizeof(why));
	if (r < 0) {
		assert(r == -EINVAL || r == -E2BIG);
		assert(memchr(why, 0, sizeof(why)) != NULL);
		return 0;
	}
	assert(req.op >= 0 && req.op < _WIN_HELPER_OP_MAX);
	assert(strlen(req.run_id) == 16);
	assert(strncmp(req.sid, "S-1-15-", 7) == 0);
	assert(req.path && req.path[0]);
	/* Round trip: the canonical text is what was sent. */
	assert(win_helper_format(&req, &back) == 0);
	assert(strlen(back) == size && memcmp(back, data, size) == 0);
	free(back);
	r = win_helper_allow(&policy, &req, why, sizeof(why));
	assert(r == 0 || r == -EPERM);
	win_helper_request_done(&req);
	return 0;
}
