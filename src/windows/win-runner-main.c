/* ward-runner.exe: the command runner of the sandbox-user tier (seed 2's
 * two-step flow, docs/windows.md "The command runner").
 *
 *   ward-runner.exe --pipe \\.\pipe\ward-runner-<run id> --server-pid PID --state DIR
 *
 * ward.exe starts it as the sandbox user (CreateProcessWithLogonW), in the
 * run's kill-on-close job. An elevated runner refuses (the sandbox user is
 * a standard user). The runner connects to the run's pipe (and
 * checks its server is process PID), reads ONE request message
 * (win-runner-proto.h; anything else, longer, or a second message is
 * refused), checks it (the synthetic SID ward-setup.exe recorded in
 * DIR\sandbox-sid, no program or directory under DIR or the runner's own),
 * opens its own token and makes the write-restricted token (restricting
 * SIDs: Everyone, its logon SID, the synthetic SID; DISABLE_MAX_PRIVILEGE),
 * starts the command with it suspended (CreateProcessAsUserW, exactly its
 * own three standard handles inherited), reads the child's token back and
 * compares it with what it asked for, and only then resumes it. It relays
 * the exit code: "exit N" on the pipe and as its own exit code. Any
 * refusal: "refused WHY" on the pipe (when there is one), exit 125, no
 * command left running. Windows-only. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-env.h"
#include "windows/win-path.h"
#include "windows/win-runner-proto.h"
#include "windows/win-token.h"
#include "windows/win32-api.h"
#include "windows/win32-pipe.h"
#include "windows/win32-util.h"

#ifndef WARD_TEST_HOOKS
#define WARD_TEST_HOOKS 0
#endif
#if WARD_TEST_HOOKS
#include "windows/win-fault.h"
#endif

#define EXIT_REFUSED 125

typedef struct Runner {
	Win32Pipe pipe;
	bool connected;
} Runner;

/* The refusal: on stderr, and on the pipe when connected. */
static int refuse(Runner *rn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(Runner *rn, const char *fmt, ...)
{
	char why[512], msg[WIN_RUNNER_REPLY_MAX];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fprintf(stderr, "ward-runner: refused: %s\n", why);
	if (rn->connected) {
		n = win_runner_reply_format(WIN_RUNNER_REFUSED, 0, why, msg);
		(void)win32_pipe_write(&rn->pipe, msg, n);
	}
	return EXIT_REFUSED;
}

/* The runner's own directory, normalized. */
static char *own_dir(void)
{
	wchar_t buf[32768];
	DWORD n = GetModuleFileNameW(NULL, buf, 32768);
	_cleanup_free_ char *exe = NULL;
	char *out = NULL, *slash;

	if (n == 0 || n >= 32768 || !(exe = win32_utf8(buf)))
		return NULL;
	if (win_path_normalize(exe, &out, NULL) < 0)
		return NULL;
	slash = strrchr(out, '\\');
	if (slash && slash > out + 2)
		*slash = 0;
	return out;
}

/* DIR\sandbox-sid: "<SID>\n", as ward-setup.exe writes it. */
static int read_synthetic_sid(const char *state, char ret[WIN_SID_STRING_MAX])
{
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ wchar_t *w = NULL;
	char buf[WIN_SID_STRING_MAX + 2];
	DWORD got = 0;
	HANDLE h;

	if (asprintf(&path, "%s\\sandbox-sid", state) < 0 || !(w = win32_wide(path)))
		return -ENOMEM;
	h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
			FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return win32_errno(GetLastError());
	if (!ReadFile(h, buf, sizeof(buf) - 1, &got, NULL)) {
		CloseHandle(h);
		return -EIO;
	}
	CloseHandle(h);
	buf[got] = 0;
	if (got == 0 || buf[got - 1] != '\n')
		return -EINVAL;
	buf[got - 1] = 0;
	if (win_sid_normalize(buf, ret) < 0 || strcmp(buf, ret) != 0 ||
	    strncmp(ret, "S-1-15-3-1024-", 14) != 0)
		return -EINVAL;
	return 0;
}

static int parse_args(int argc, char **argv, const char **pipe, DWORD *server, char **state)
{
	const char *srv = NULL, *st = NULL;
	char *end = NULL;
	unsigned long v;

	*pipe = NULL;
	for (int i = 1; i < argc; i += 2) {
		const char **slot = strcmp(argv[i], "--pipe") == 0 ? pipe
				    : strcmp(argv[i], "--server-pid") == 0 ? &srv
				    : strcmp(argv[i], "--state") == 0 ? &st
									: NULL;

		if (!slot || *slot || i + 1 >= argc)
			return -EINVAL;
		*slot = argv[i + 1];
	}
	if (!*pipe || !srv || !st || !win32_pipe_name_valid("runner", *pipe))
		return -EINVAL;
	v = strtoul(srv, &end, 10);
	if (!*srv || *end || v == 0 || v > 0xffffffffUL)
		return -EINVAL;
	*server = (DWORD)v;
	if (win_path_normalize(st, state, NULL) < 0 || strcmp(*state, st) != 0)
		return -EINVAL;
	return 0;
}

/* An elevated token: the runner must run as the sandbox user, a standard
 * user; an elevated one would hand the command an administrator's reads. */
static bool elevated(void)
{
	HANDLE tok = NULL;
	TOKEN_ELEVATION e = { 0 };
	DWORD len = 0;
	bool yes;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return true; /* unknown: as if */
	yes = !GetTokenInformation(tok, TokenElevation, &e, sizeof(e), &len) || e.TokenIsElevated;
	CloseHandle(tok);
	return yes;
}

/* The write-restricted token seed 2 describes. */
static int token_plan(const char *synthetic, WinTokenPlan *ret)
{
	*ret = (WinTokenPlan){ .restricted = true, .write_restricted = true,
			       .disable_max_privilege = true, .integrity_rid = 8192 };
	if (strv_extend(&ret->restricting_sids, WIN_SID_EVERYONE) < 0 ||
	    strv_extend(&ret->restricting_sids, WIN_SID_LOGON_PLACEHOLDER) < 0 ||
	    strv_extend(&ret->restricting_sids, synthetic) < 0)
		return -ENOMEM;
	return 0;
}

int main(void)
{
	int argc = 0;
	_cleanup_strv_ char **argv = win32_utf8_argv(&argc);
	_cleanup_free_ char *state = NULL, *self = NULL, *block = NULL;
	_cleanup_free_ char *msg = NULL;
	_cleanup_strv_ char **forbidden = NULL;
	char synthetic[WIN_SID_STRING_MAX], logon[WIN_SID_STRING_MAX], why[512] = "";
	char reply[WIN_RUNNER_REPLY_MAX];
	const char *pipe = NULL;
	WinRunnerRequest req = { 0 };
	WinTokenObserved seen = { 0 };
	WinTokenPlan tp = { 0 };
	Runner rn = { .pipe = { .h = INVALID_HANDLE_VALUE } };
	Win32Ctx ctx = { 0 };
	WinApi api;
	WinSpawn sp;
	DWORD server = 0;
	uint32_t code = 0;
	size_t n = 0, len = 0;
	void *proc = NULL;
	int r, rc;

	if (!argv)
		return refuse(&rn, "cannot read the command line");
	if (parse_args(argc, argv, &pipe, &server, &state) < 0) {
		fprintf(stderr, "usage: ward-runner.exe --pipe \\\\.\\pipe\\ward-runner-<16 hex> "
				"--server-pid PID --state DIR (started by ward.exe only)\n");
		return EXIT_REFUSED;
	}
	/* Wine reports every token elevated: the test build may be told to
	 * go on (WARD_TEST_RUNNER_ELEVATED), the real runner never. */
	if (elevated() && !(WARD_TEST_HOOKS && getenv("WARD_TEST_RUNNER_ELEVATED")))
		return refuse(&rn, "the runner's token is elevated: it must run as the sandbox "
				   "user, a standard user");
	if ((r = read_synthetic_sid(state, synthetic)) < 0)
		return refuse(&rn, "%s\\sandbox-sid: %s (run ward-setup.exe)", state,
			      r == -EINVAL ? "not a synthetic SID" : strerror(-r));
	if (!(self = own_dir()) || strv_extend(&forbidden, state) < 0 ||
	    strv_extend(&forbidden, self) < 0)
		return refuse(&rn, "cannot tell the runner's own directory");
	r = win32_pipe_open(pipe, server, &rn.pipe, why, sizeof(why));
	if (r < 0)
		return refuse(&rn, "pipe %s: %s", pipe, why);
	rn.connected = true;
	/* One message: the request, whole. */
	if (!(msg = malloc(WIN_RUNNER_MAX + 1)))
		return refuse(&rn, "out of memory");
	r = win32_pipe_read(&rn.pipe, msg, WIN_RUNNER_MAX + 1, &n);
	if (r == -EMSGSIZE || (r == 0 && n > WIN_RUNNER_MAX))
		return refuse(&rn, "request longer than %d bytes", WIN_RUNNER_MAX);
	if (r < 0)
		return refuse(&rn, "reading the request: %s", strerror(-r));
	if (win_runner_parse(msg, n, &req, why, sizeof(why)) < 0)
		return refuse(&rn, "malformed request: %s", why);
	if (win_runner_allow(&req, synthetic, forbidden, why, sizeof(why)) < 0) {
		win_runner_request_done(&req);
		return refuse(&rn, "%s", why);
	}
	win32_api_init(&api, &ctx);
#if WARD_TEST_HOOKS
	if (win_fault_install(&api, getenv("WARD_TEST_WIN_FAULT")) < 0) {
		win_runner_request_done(&req);
		return refuse(&rn, "WARD_TEST_WIN_FAULT: unknown fault");
	}
#endif
	rc = EXIT_REFUSED;
	if (token_plan(req.sid, &tp) < 0 || !(block = win_env_block(req.env, &len))) {
		refuse(&rn, "out of memory");
		goto out;
	}
	/* The runner's own token: the sandbox user's, its logon SID. */
	if ((r = api.logon_sid(api.ctx, logon)) < 0) {
		refuse(&rn, "cannot read the logon SID of the runner's token: %s", strerror(-r));
		goto out;
	}
	sp = (WinSpawn){ .application = req.app, .cmdline = req.cmdline, .cwd = req.cwd,
			 .env_block = block, .env_len = len, .token = &tp, .logon_sid = logon };
	r = api.spawn_suspended(api.ctx, &sp, &proc, why, sizeof(why));
	if (r < 0) {
		refuse(&rn, "starting the command: %s", why);
		goto out;
	}
	/* A success proves nothing until read back (Wine hands out the
	 * unrestricted token and says it restricted it). */
	r = api.token_read(api.ctx, proc, &seen);
	if (r == 0)
		r = win_token_check(&tp, logon, &seen, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "cannot read it: %s", strerror(-r));
	if (r < 0) {
		(void)api.terminate(api.ctx, proc, EXIT_REFUSED);
		refuse(&rn, "the command's token read back: %s", why);
		goto out;
	}
	n = win_runner_reply_format(WIN_RUNNER_STARTED, (uint32_t)win32_proc_pid(proc), NULL,
				    reply);
	if (win32_pipe_write(&rn.pipe, reply, n) < 0 || api.resume(api.ctx, proc) < 0) {
		/* ward.exe went away, or the child cannot run: never a
		 * command ward does not know about. */
		(void)api.terminate(api.ctx, proc, EXIT_REFUSED);
		fprintf(stderr, "ward-runner: refused: cannot report the start or resume\n");
		goto out;
	}
	r = api.wait(api.ctx, proc, 0, &code);
	if (r < 0) {
		(void)api.terminate(api.ctx, proc, EXIT_REFUSED);
		refuse(&rn, "waiting for the command: %s", strerror(-r));
		goto out;
	}
	n = win_runner_reply_format(WIN_RUNNER_EXIT, code, NULL, reply);
	(void)win32_pipe_write(&rn.pipe, reply, n);
	rc = (int)code;
out:
	if (proc)
		api.close_proc(api.ctx, proc);
	win_token_observed_done(&seen);
	win_token_plan_done(&tp);
	win_runner_request_done(&req);
	win32_pipe_close(&rn.pipe);
	return rc;
}
