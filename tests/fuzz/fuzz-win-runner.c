/* Fuzz target: the Windows command runner's request parser and check
 * (src/windows/win-runner-proto.c), fed one pipe message: whatever parses
 * formats back to the same bytes and is judged without crashing. The
 * same bytes as one of the runner's replies (ward.exe parses those: the
 * runner runs as another user): a reply that parses formats back to the
 * same bytes. */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "windows/win-runner-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *forbidden[] = { "C:\\Users\\me\\AppData\\Local\\ward", NULL };
	WinRunnerRequest req;
	WinRunnerReply rp;
	char why[256], *back = NULL, again[WIN_RUNNER_REPLY_MAX];
	int r;

	if (win_runner_reply_parse((const char *)data, size, &rp, why, sizeof(why)) == 0) {
		size_t n = win_runner_reply_format(rp.kind, rp.value, rp.why, again);

		assert(n == size && memcmp(again, data, size) == 0);
	}

	r = win_runner_parse((const char *)data, size, &req, why, sizeof(why));
	if (r < 0) {
		assert(r == -EINVAL || r == -E2BIG);
		return 0;
	}
	assert(req.app && req.cwd && req.cmdline && req.env);
	assert(win_runner_format(&req, &back) == 0);
	assert(strlen(back) == size && memcmp(back, data, size) == 0);
	free(back);
	r = win_runner_allow(&req, "S-1-15-3-1024-1-2-3-4-5-6-7-8", forbidden, why, sizeof(why));
	assert(r == 0 || r == -EPERM);
	win_runner_request_done(&req);
	return 0;
}
