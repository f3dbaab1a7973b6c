/* ward-helper.exe: the privileged helper (docs/windows.md "The privileged
 * helper"). An elevated process started for one run (ward.exe never runs
 * elevated; the user's consent to the elevation is the consent to the
 * grants on this command line):
 *
 *   ward-helper.exe --pipe \\.\pipe\ward-helper-<run id> --client-pid PID
 *                   --user SID --run ID --sid SID [--sid SID]
 *                   [--read PATH | --read-exec PATH]...
 *
 * What the run may ask is fixed here, before any request: its id, its
 * package and/or synthetic SID, each path the run's plan sends to the
 * helper with the access the policy gave it (win-helper-proto.h's
 * WinHelperPolicy). The helper then creates the pipe
 * (FILE_FLAG_FIRST_PIPE_INSTANCE, a protected DACL naming only --user and
 * the helper's own user), accepts only process --client-pid running as
 * --user, and serves requests, one message each (at most 4096 bytes):
 * win_helper_parse() then win_helper_allow(); anything else is refused
 * ("refused WHY") and the connection closed. An allowed grant removes the
 * SID's explicit ACEs on the path and adds one allow ACE (read or read and
 * execute, inheritable), then reads the DACL back and compares; revoke
 * removes them and reads back. Reply "ok". When the client goes, every
 * grant still standing is revoked (read back) before the helper exits:
 * nothing it made outlives the run. Windows-only. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-acl.h"
#include "windows/win-helper-proto.h"
#include "windows/win-path.h"
#include "windows/win-runner-proto.h"
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
#define MAX_GRANTS WIN_HELPER_GRANTS_MAX

typedef struct Helper {
	WinHelperPolicy pol;
	WinHelperGrant grants[MAX_GRANTS];
	char *sids[2];
	bool granted[MAX_GRANTS][2]; /* standing grants: path x SID */
	WinApi api;
	Win32Ctx ctx;
} Helper;

static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ward-helper: refused: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_REFUSED;
}

static bool elevated(void)
{
	HANDLE tok = NULL;
	TOKEN_ELEVATION e = { 0 };
	DWORD len = 0;
	bool ok;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return false;
	ok = GetTokenInformation(tok, TokenElevation, &e, sizeof(e), &len) && e.TokenIsElevated;
	CloseHandle(tok);
	return ok;
}

static bool sid_of_run(const char *s)
{
	char n[WIN_SID_STRING_MAX];

	return win_sid_normalize(s, n) == 0 && strcmp(n, s) == 0 &&
	       (strncmp(s, "S-1-15-2-", 9) == 0 || strncmp(s, "S-1-15-3-1024-", 14) == 0);
}

static bool user_sid(const char *s)
{
	char n[WIN_SID_STRING_MAX];

	return win_sid_normalize(s, n) == 0 && strcmp(n, s) == 0 && strncmp(s, "S-1-5-", 6) == 0;
}

/* The command line: every option known, each value checked, paths
 * normalized. */
static int parse_args(int argc, char **argv, Helper *h, const char **pipe, DWORD *client,
		      const char **user)
{
	size_t n_sids = 0;
	char *end = NULL;
	unsigned long v;

	for (int i = 1; i < argc; i += 2) {
		const char *o = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val)
			return -EINVAL;
		if (strcmp(o, "--pipe") == 0 && !*pipe)
			*pipe = val;
		else if (strcmp(o, "--client-pid") == 0 && !*client) {
			v = strtoul(val, &end, 10);
			if (!*val || *end || v == 0 || v > 0xffffffffUL)
				return -EINVAL;
			*client = (DWORD)v;
		} else if (strcmp(o, "--user") == 0 && !*user && user_sid(val))
			*user = val;
		else if (strcmp(o, "--run") == 0 && !h->pol.run_id && strlen(val) == 16 &&
			 strspn(val, "0123456789abcdef") == 16)
			h->pol.run_id = val;
		else if (strcmp(o, "--sid") == 0 && n_sids < 2 && sid_of_run(val)) {
			h->sids[n_sids++] = (char *)val;
			if (val[7] == '2')
				h->pol.package_sid = val;
			else
				h->pol.synthetic_sid = val;
		} else if ((strcmp(o, "--read") == 0 || strcmp(o, "--read-exec") == 0) &&
			   h->pol.n_grants < MAX_GRANTS) {
			char *norm = NULL;

			if (win_path_normalize(val, &norm, NULL) < 0 || strcmp(norm, val) != 0) {
				free(norm);
				return -EINVAL;
			}
			free(norm);
			h->grants[h->pol.n_grants].path = val;
			h->grants[h->pol.n_grants].exec = o[6] == '-';
			h->pol.n_grants++;
		} else
			return -EINVAL;
	}
	h->pol.grants = h->grants;
	if (!*pipe || !win32_pipe_name_valid("helper", *pipe) || !*client || !*user ||
	    !h->pol.run_id || n_sids == 0 || h->pol.n_grants == 0)
		return -EINVAL;
	/* The pipe is the run's. */
	return strcmp(*pipe + strlen(*pipe) - 16, h->pol.run_id) == 0 ? 0 : -EINVAL;
}

/* @op for @sid on @path (win_helper_change()), read back. */
static int change_acl(Helper *h, const char *path, WinHelperOp op, const char *sid, char *why,
		      size_t n_why)
{
	_cleanup_free_ char *cur = NULL, *next = NULL, *back = NULL;
	WinHelperChange c;
	WinAcl seen = { 0 };
	int r;

	if ((r = h->api.get_sddl(h->api.ctx, path, false, &cur)) < 0) {
		snprintf(why, n_why, "reading the DACL of %s: %s", path, strerror(-r));
		return r;
	}
	win_helper_change(op, sid, &c);
	if ((r = win_acl_change_sddl(cur, &c.chg, &next)) < 0) {
		snprintf(why, n_why, r == -EINVAL ? "the DACL of %s is not one ward understands"
						  : "cannot compute the DACL of %s",
			 path);
		return r;
	}
	if ((r = h->api.set_sddl(h->api.ctx, path, false, next)) < 0) {
		snprintf(why, n_why, "setting the DACL of %s: %s", path, strerror(-r));
		return r;
	}
	/* A success proves nothing until read back. */
	if ((r = h->api.get_sddl(h->api.ctx, path, false, &back)) < 0 ||
	    (r = win_acl_parse_sddl(back, false, &seen)) < 0) {
		snprintf(why, n_why, "reading the DACL of %s back failed", path);
		return r < 0 ? r : -EIO;
	}
	r = win_acl_check(&seen, &c.chg, why, n_why);
	win_acl_done(&seen);
	return r;
}

static int grant_index(const Helper *h, const char *path)
{
	for (size_t i = 0; i < h->pol.n_grants; i++)
		if (win_path_equal(h->grants[i].path, path))
			return (int)i;
	return -1;
}

static int sid_index(const Helper *h, const char *sid)
{
	return h->sids[0] && strcmp(h->sids[0], sid) == 0 ? 0
	       : h->sids[1] && strcmp(h->sids[1], sid) == 0 ? 1
							     : -1;
}

/* One request: parse, allow, apply. */
static int serve_one(Helper *h, const char *msg, size_t n, char *why, size_t n_why)
{
	WinHelperRequest req;
	int r, g, s;

	if (win_helper_parse(msg, n, &req, why, n_why) < 0)
		return -EINVAL;
	if ((r = win_helper_allow(&h->pol, &req, why, n_why)) < 0)
		goto out;
	g = grant_index(h, req.path);
	s = sid_index(h, req.sid);
	if (g < 0 || s < 0) {
		snprintf(why, n_why, "internal: allowed but not listed");
		r = -EPERM;
		goto out;
	}
	/* Marked standing before the change: a failure half-way is undone
	 * at exit too. */
	if (req.op != WIN_HELPER_REVOKE)
		h->granted[g][s] = true;
	r = change_acl(h, req.path, req.op, req.sid, why, n_why);
	if (r == 0 && req.op == WIN_HELPER_REVOKE)
		h->granted[g][s] = false;
out:
	win_helper_request_done(&req);
	return r;
}

/* Every grant still standing, revoked and read back. */
static int revoke_all(Helper *h)
{
	int failed = 0, done = 0;

	for (size_t g = 0; g < h->pol.n_grants; g++)
		for (int s = 0; s < 2; s++) {
			char why[512] = "";

			if (!h->granted[g][s])
				continue;
			if (change_acl(h, h->grants[g].path, WIN_HELPER_REVOKE, h->sids[s], why,
				       sizeof(why)) < 0) {
				fprintf(stderr, "ward-helper: revoking %s on %s: %s\n", h->sids[s],
					h->grants[g].path, why);
				failed++;
			} else {
				h->granted[g][s] = false;
				done++;
			}
		}
	fprintf(stderr, "ward-helper: the client is gone: %d standing grant(s) revoked and read back, %d failed\n",
		done, failed);
	return failed;
}

int main(void)
{
	int argc = 0;
	_cleanup_strv_ char **argv = win32_utf8_argv(&argc);
	const char *pipe = NULL, *user = NULL;
	char why[512] = "", msg[WIN_HELPER_MAX + 1], reply[WIN_RUNNER_REPLY_MAX];
	Win32Pipe p = { .h = INVALID_HANDLE_VALUE };
	static Helper h;
	DWORD client = 0;
	HANDLE cproc;
	size_t n;
	int r, rc = 0;

#if WARD_TEST_HOOKS
	/* Started through ShellExecuteExW its stderr is a console of its own:
	 * the tests read what it says here. */
	if (getenv("WARD_TEST_HELPER_LOG") && !freopen(getenv("WARD_TEST_HELPER_LOG"), "a", stderr))
		return EXIT_REFUSED;
#endif
	if (!argv)
		return die("cannot read the command line");
	if (parse_args(argc, argv, &h, &pipe, &client, &user) < 0) {
		fprintf(stderr,
			"usage: ward-helper.exe --pipe \\\\.\\pipe\\ward-helper-<run id> --client-pid PID "
			"--user SID --run ID --sid SID [--sid SID] (--read PATH | --read-exec PATH)... "
			"(started elevated by ward.exe only)\n");
		return EXIT_REFUSED;
	}
	if (!elevated() && !(WARD_TEST_HOOKS && getenv("WARD_TEST_HELPER_UNELEVATED")))
		return die("not elevated: the helper changes what only an administrator may");
	/* The client's process, held from now on: its pid cannot be reused
	 * while this handle is open. */
	cproc = OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE, client);
	if (!cproc)
		return die("client process %lu: cannot open it", (unsigned long)client);
	win32_api_init(&h.api, &h.ctx);
#if WARD_TEST_HOOKS
	/* WARD_TEST_HELPER_FAULT, when set, is the helper's own (ward-test.exe
	 * passes its environment on through ShellExecuteExW). */
	if (win_fault_install(&h.api, getenv("WARD_TEST_HELPER_FAULT")
					      ? getenv("WARD_TEST_HELPER_FAULT")
					      : getenv("WARD_TEST_WIN_FAULT")) < 0)
		return die("WARD_TEST_WIN_FAULT: unknown fault");
#endif
	if ((r = win32_pipe_create(pipe, user, &p, why, sizeof(why))) < 0)
		return die("%s", why);
	if ((r = win32_pipe_accept(&p, cproc, user, 60000, why, sizeof(why))) < 0) {
		win32_pipe_close(&p);
		return die("%s", why);
	}
	for (;;) {
		r = win32_pipe_read(&p, msg, sizeof(msg), &n);
		if (r == -EPIPE)
			break; /* the client is done (or gone) */
		if (r == -EMSGSIZE || (r == 0 && n > WIN_HELPER_MAX)) {
			snprintf(why, sizeof(why), "request longer than %d bytes", WIN_HELPER_MAX);
			r = -E2BIG;
		} else if (r < 0) {
			snprintf(why, sizeof(why), "reading a request: %s", strerror(-r));
		} else
			r = serve_one(&h, msg, n, why, sizeof(why));
		if (r < 0) {
			n = win_runner_reply_format(WIN_RUNNER_REFUSED, 0, why, reply);
			fprintf(stderr, "ward-helper: refused: %s\n", why);
			(void)win32_pipe_write(&p, reply, n);
			rc = EXIT_REFUSED;
			/* A request that is not allowed ends the conversation:
			 * the client is not doing what its run should. */
			if (r == -EINVAL || r == -E2BIG || r == -EPERM)
				break;
			continue;
		}
		if (win32_pipe_write(&p, "ok", 2) < 0)
			break;
	}
	win32_pipe_close(&p);
	CloseHandle(cproc);
	if (revoke_all(&h) > 0)
		rc = EXIT_REFUSED;
	return rc;
}
