/* The privileged helper's request format (issue 13), as data. ward.exe,
 * never elevated, asks the helper (ward-helper.exe, started elevated for
 * one run: win-helper-main.c, win32-helper-client.c) over a named pipe to change what only an administrator may: a read
 * ACE for a run's SID on a path under Program Files, the Windows
 * directory or ProgramData, and to take it back. The helper parses every
 * request with win_helper_parse() and checks it with win_helper_allow()
 * against what the policy lets a run ask; anything else is refused.
 *
 * A request is at most 4096 bytes of UTF-8 text, LF line ends, fields in
 * this order, each exactly once:
 *
 *   ward-helper 1
 *   op grant-read | grant-read-exec | revoke
 *   run <16 lower-case hex digits>
 *   sid <S-1-15-2-...: the run's package SID, or S-1-15-3-1024-...: its synthetic SID>
 *   path <an absolute Windows path, normalized as win_path_normalize does>
 *   end
 *
 * The pipe's side (FILE_FLAG_FIRST_PIPE_INSTANCE, the client's identity
 * checked against the run's) is win32-pipe.c's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "windows/win-acl.h"
#include "windows/win-sid.h"

#define WIN_HELPER_MAX 4096
/* The most paths one run may send to the helper. */
#define WIN_HELPER_GRANTS_MAX 64

typedef enum WinHelperOp {
	WIN_HELPER_GRANT_READ,
	WIN_HELPER_GRANT_READ_EXEC,
	WIN_HELPER_REVOKE,
	_WIN_HELPER_OP_MAX,
} WinHelperOp;

typedef struct WinHelperRequest {
	WinHelperOp op;
	char run_id[17];
	char sid[WIN_SID_STRING_MAX];
	char *path;               /* normalized */
} WinHelperRequest;

/* -EINVAL for anything but the format above (and @why says which line);
 * -E2BIG over WIN_HELPER_MAX. */
int win_helper_parse(const char *data, size_t n, WinHelperRequest *ret, char *why, size_t n_why);
void win_helper_request_done(WinHelperRequest *r);
/* The request as text (the client's side). */
int win_helper_format(const WinHelperRequest *r, char **ret);

/* What a run may ask: its id, its SIDs, and the paths its plan marked as
 * needing the helper with the access the policy gave them. */
typedef struct WinHelperGrant {
	const char *path;         /* normalized */
	bool exec;                /* fs.read_exec (else fs.read) */
} WinHelperGrant;

typedef struct WinHelperPolicy {
	const char *run_id;
	const char *package_sid;  /* may be NULL */
	const char *synthetic_sid;
	const WinHelperGrant *grants;
	size_t n_grants;
} WinHelperPolicy;

/* 0 when @r is exactly something @p allows: the run's own id and SID, a
 * path the policy lists (the path itself, not a parent or a child), a
 * grant no wider than the policy's (read-exec only where fs.read_exec
 * said so); a revoke of any of those. -EPERM otherwise, with why. */
int win_helper_allow(const WinHelperPolicy *p, const WinHelperRequest *r, char *why, size_t n_why);

/* The DACL change a request stands for: every explicit ACE of its SID
 * goes; a grant then adds one allow ACE (object and container inherit)
 * for that SID with read, or read and execute. The helper applies it and
 * checks the read-back against it; the fakes of the helper apply it too.
 * @chg points into the struct itself: fill it where it is used (with
 * win_helper_change()) and do not copy it. */
typedef struct WinHelperChange {
	WinAclChange chg;
	WinAce ace;
	char *remove[2];
} WinHelperChange;

/* @op for @sid (a request's, or a run's SID when the helper takes back a
 * grant left standing: WIN_HELPER_REVOKE) into @ret. */
void win_helper_change(WinHelperOp op, const char *sid, WinHelperChange *ret);
