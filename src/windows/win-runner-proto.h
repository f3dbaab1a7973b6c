/* The request ward.exe sends the command runner (seed 2's two-step flow),
 * as data. ward.exe (never elevated) starts ward-runner.exe as the sandbox
 * user with CreateProcessWithLogonW; the runner opens its own token, makes
 * the write-restricted token (restricting SIDs: Everyone, its logon SID,
 * the synthetic SID) and starts the command with CreateProcessAsUserW,
 * suspended, for ward.exe to put into its job, read back and resume. The
 * one-step flow (ward.exe making a restricted token of another user) fails
 * at the privilege boundary; this is the flow the article arrived at.
 * Neither executable side is built; the request format and the runner's
 * checks are.
 *
 * One request, at most 64 KiB of UTF-8, LF line ends, in this order:
 *   ward-runner 1
 *   run <16 lower-case hex digits>
 *   sid <the synthetic SID: S-1-15-3-1024-...>
 *   app <normalized absolute path of the program>
 *   cwd <normalized absolute path>
 *   cmdline <the CreateProcessW command line; no CR, LF or NUL>
 *   env <NAME=VALUE>          zero or more; NAME without '=' (but a leading
 *                             '=' as Windows's "=C:" entries), no CR/LF
 *   end */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "windows/win-sid.h"

#define WIN_RUNNER_MAX (64 * 1024)

typedef struct WinRunnerRequest {
	char run_id[17];
	char sid[WIN_SID_STRING_MAX];
	char *app;
	char *cwd;
	char *cmdline;
	char **env;
} WinRunnerRequest;

/* -EINVAL for anything but the format (which line in @why), -E2BIG. */
int win_runner_parse(const char *data, size_t n, WinRunnerRequest *ret, char *why, size_t n_why);
void win_runner_request_done(WinRunnerRequest *r);
int win_runner_format(const WinRunnerRequest *r, char **ret);
/* The runner's own check, before it makes any token: the SID is the one
 * ward-setup.exe recorded (@synthetic_sid), the program and the working
 * directory are not under @forbidden (the runner's and ward's own state
 * directories). 0 or -EPERM with why. */
int win_runner_allow(const WinRunnerRequest *r, const char *synthetic_sid, char *const *forbidden,
		     char *why, size_t n_why);

/* The runner's replies, one pipe message each, in this order:
 *   started <pid>      the command is running (created suspended, its
 *                      token read back and checked, then resumed)
 *   exit <code>        it ended with @code (0..4294967295): the last reply
 * or, instead of either, once:
 *   refused <why>      nothing runs (or the suspended child was killed);
 *                      <why> printable ASCII, at most 400 bytes
 * Anything else from the runner is refused by ward.exe (the runner runs as
 * another user: its replies are input like any other). */
typedef enum WinRunnerReplyKind {
	WIN_RUNNER_STARTED,
	WIN_RUNNER_EXIT,
	WIN_RUNNER_REFUSED,
} WinRunnerReplyKind;

#define WIN_RUNNER_REPLY_MAX 512

typedef struct WinRunnerReply {
	WinRunnerReplyKind kind;
	uint32_t value;                 /* the pid, or the exit code */
	char why[401];                  /* refused */
} WinRunnerReply;

/* One reply message of @n bytes (no line end). -EINVAL with why. */
int win_runner_reply_parse(const char *data, size_t n, WinRunnerReply *ret, char *why,
			   size_t n_why);
/* Into @buf (WIN_RUNNER_REPLY_MAX); returns the length. A refusal's text
 * is cut at 400 bytes and anything unprintable becomes '?'. */
size_t win_runner_reply_format(WinRunnerReplyKind kind, uint32_t value, const char *why,
			       char buf[WIN_RUNNER_REPLY_MAX]);
