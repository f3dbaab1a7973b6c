/* The run's named pipe, both ends (win32-pipe.h). Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <sddl.h>

#include "common/cleanup.h"
#include "windows/win32-pipe.h"
#include "windows/win32-util.h"

/* What the client may do on the pipe: read, write data, set the read mode
 * (FILE_WRITE_ATTRIBUTES); not FILE_CREATE_PIPE_INSTANCE. */
#define CLIENT_RIGHTS "0x12018b"

int win32_pipe_name(const char *role, const char *run_id, char *ret, size_t n)
{
	if (!run_id || strlen(run_id) != 16 || strspn(run_id, "0123456789abcdef") != 16)
		return -EINVAL;
	return snprintf(ret, n, "%s%s-%s", WIN32_PIPE_PREFIX, role, run_id) < (int)n ? 0
										      : -ENAMETOOLONG;
}

bool win32_pipe_name_valid(const char *role, const char *name)
{
	size_t k = strlen(WIN32_PIPE_PREFIX), r = strlen(role);

	return name && strncmp(name, WIN32_PIPE_PREFIX, k) == 0 && strncmp(name + k, role, r) == 0 &&
	       name[k + r] == '-' && strlen(name + k + r + 1) == 16 &&
	       strspn(name + k + r + 1, "0123456789abcdef") == 16;
}

static int token_user(HANDLE tok, char *ret, size_t n)
{
	char buf[256];
	DWORD len = 0;
	LPWSTR s = NULL;
	_cleanup_free_ char *u = NULL;

	if (!GetTokenInformation(tok, TokenUser, buf, sizeof(buf), &len))
		return win32_errno(GetLastError());
	if (!ConvertSidToStringSidW(((TOKEN_USER *)buf)->User.Sid, &s))
		return win32_errno(GetLastError());
	u = win32_utf8(s);
	LocalFree(s);
	if (!u)
		return -ENOMEM;
	return snprintf(ret, n, "%s", u) < (int)n ? 0 : -ENAMETOOLONG;
}

int win32_process_user(HANDLE proc, char *ret, size_t n)
{
	HANDLE tok = NULL;
	int r;

	if (!OpenProcessToken(proc, TOKEN_QUERY, &tok))
		return win32_errno(GetLastError());
	r = token_user(tok, ret, n);
	CloseHandle(tok);
	return r;
}

int win32_pipe_create(const char *name, const char *client_sid, Win32Pipe *ret, char *why,
		      size_t n_why)
{
	_cleanup_free_ wchar_t *wname = win32_wide(name), *wsddl = NULL;
	char own[192], sddl[512];
	PSECURITY_DESCRIPTOR sd = NULL;
	SECURITY_ATTRIBUTES sa = { .nLength = sizeof(sa) };
	int r;

	*ret = (Win32Pipe){ .h = INVALID_HANDLE_VALUE };
	if (!wname)
		return -ENOMEM;
	if ((r = win32_process_user(GetCurrentProcess(), own, sizeof(own))) < 0) {
		snprintf(why, n_why, "cannot read ward's own user SID");
		return r;
	}
	/* Protected (no inherited ACE): ward's user, and the client's. */
	snprintf(sddl, sizeof(sddl), "D:P(A;;GA;;;%s)(A;;" CLIENT_RIGHTS ";;;%s)", own,
		 client_sid ? client_sid : own);
	if (!(wsddl = win32_wide(sddl)))
		return -ENOMEM;
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(wsddl, SDDL_REVISION_1, &sd, NULL))
		return win32_fail_why(why, n_why,
				      "ConvertStringSecurityDescriptorToSecurityDescriptorW");
	sa.lpSecurityDescriptor = sd;
	ret->h = CreateNamedPipeW(wname,
				  PIPE_ACCESS_DUPLEX | FILE_FLAG_FIRST_PIPE_INSTANCE |
					  FILE_FLAG_OVERLAPPED,
				  PIPE_TYPE_MESSAGE | PIPE_READMODE_MESSAGE | PIPE_WAIT |
					  PIPE_REJECT_REMOTE_CLIENTS,
				  1, 65536, 65536, 0, &sa);
	LocalFree(sd);
	if (ret->h == INVALID_HANDLE_VALUE)
		return win32_fail_why(why, n_why,
				      "CreateNamedPipeW (FILE_FLAG_FIRST_PIPE_INSTANCE)");
	ret->event = CreateEventW(NULL, TRUE, FALSE, NULL);
	if (!ret->event) {
		r = win32_fail_why(why, n_why, "CreateEventW");
		win32_pipe_close(ret);
		return r;
	}
	return 0;
}

/* Wait for the overlapped operation, or for the peer to end. */
static int finish(Win32Pipe *p, OVERLAPPED *ov, DWORD timeout_ms, DWORD *ret_n)
{
	HANDLE w[2] = { p->event, p->peer };
	DWORD r = WaitForMultipleObjects(p->peer ? 2 : 1, w, FALSE, timeout_ms);

	if (r == WAIT_OBJECT_0)
		return GetOverlappedResult(p->h, ov, ret_n, FALSE) ? 0 : win32_errno(GetLastError());
	CancelIoEx(p->h, ov);
	(void)GetOverlappedResult(p->h, ov, ret_n, TRUE);
	return r == WAIT_TIMEOUT ? -ETIMEDOUT : -ESRCH;
}

int win32_pipe_accept(Win32Pipe *p, HANDLE peer, const char *user_sid, DWORD timeout_ms,
		      char *why, size_t n_why)
{
	OVERLAPPED ov = { .hEvent = p->event };
	ULONG pid = 0;
	DWORD dummy = 0;
	int r = 0;

	p->peer = peer;
	ResetEvent(p->event);
	if (!ConnectNamedPipe(p->h, &ov)) {
		DWORD e = GetLastError();

		if (e == ERROR_IO_PENDING)
			r = finish(p, &ov, timeout_ms, &dummy);
		else if (e != ERROR_PIPE_CONNECTED)
			return win32_fail_why(why, n_why, "ConnectNamedPipe");
	}
	if (r == -ESRCH) {
		snprintf(why, n_why, "the runner ended before it connected");
		return r;
	}
	if (r < 0) {
		snprintf(why, n_why, "no client connected: %s", strerror(-r));
		return r;
	}
	if (!GetNamedPipeClientProcessId(p->h, &pid)) {
		r = win32_fail_why(why, n_why, "GetNamedPipeClientProcessId");
		DisconnectNamedPipe(p->h);
		return r;
	}
	if (pid != GetProcessId(peer)) {
		snprintf(why, n_why, "the pipe's client is process %lu, not the expected process %lu",
			 (unsigned long)pid, (unsigned long)GetProcessId(peer));
		DisconnectNamedPipe(p->h);
		return -EPERM;
	}
	if (user_sid) {
		char seen[192];

		r = win32_process_user(peer, seen, sizeof(seen));
		if (r < 0) {
			snprintf(why, n_why, "cannot read the runner's user: %s", strerror(-r));
			DisconnectNamedPipe(p->h);
			return -EPERM;
		}
		if (strcmp(seen, user_sid) != 0) {
			snprintf(why, n_why, "the runner runs as %s, not as %s", seen, user_sid);
			DisconnectNamedPipe(p->h);
			return -EPERM;
		}
	}
	return 0;
}

int win32_pipe_open(const char *name, DWORD server_pid, Win32Pipe *ret, char *why, size_t n_why)
{
	_cleanup_free_ wchar_t *wname = win32_wide(name);
	DWORD mode = PIPE_READMODE_MESSAGE;
	ULONG pid = 0;
	int r;

	*ret = (Win32Pipe){ .h = INVALID_HANDLE_VALUE };
	if (!wname)
		return -ENOMEM;
	ret->h = CreateFileW(wname, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
			     FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION,
			     NULL);
	if (ret->h == INVALID_HANDLE_VALUE) {
		if (GetLastError() == ERROR_PIPE_BUSY) {
			snprintf(why, n_why, "%s is busy (another client holds it)", name);
			return -EBUSY;
		}
		return win32_fail_why(why, n_why, "CreateFileW(pipe)");
	}
	if (!SetNamedPipeHandleState(ret->h, &mode, NULL, NULL)) {
		r = win32_fail_why(why, n_why, "SetNamedPipeHandleState");
		goto fail;
	}
	if (!GetNamedPipeServerProcessId(ret->h, &pid)) {
		r = win32_fail_why(why, n_why, "GetNamedPipeServerProcessId");
		goto fail;
	}
	if (pid != server_pid) {
		snprintf(why, n_why, "the pipe's server is process %lu, not %lu", (unsigned long)pid,
			 (unsigned long)server_pid);
		r = -EPERM;
		goto fail;
	}
	ret->event = CreateEventW(NULL, TRUE, FALSE, NULL);
	if (!ret->event) {
		r = win32_fail_why(why, n_why, "CreateEventW");
		goto fail;
	}
	return 0;
fail:
	win32_pipe_close(ret);
	return r;
}

int win32_pipe_connect(const char *name, HANDLE server, DWORD timeout_ms, Win32Pipe *ret,
		       char *why, size_t n_why)
{
	ULONGLONG until = GetTickCount64() + timeout_ms;

	for (;;) {
		int r = win32_pipe_open(name, GetProcessId(server), ret, why, n_why);

		if (r != -ENOENT && r != -EBUSY)
			return r;
		if (WaitForSingleObject(server, 50) == WAIT_OBJECT_0) {
			snprintf(why, n_why, "the server ended before it made %s", name);
			return -ESRCH;
		}
		if (GetTickCount64() > until) {
			snprintf(why, n_why, "no pipe %s", name);
			return -ETIMEDOUT;
		}
	}
}

int win32_pipe_write(Win32Pipe *p, const void *data, size_t n)
{
	OVERLAPPED ov = { .hEvent = p->event };
	DWORD done = 0;
	int r = 0;

	if (n > 1024 * 1024)
		return -EMSGSIZE;
	ResetEvent(p->event);
	if (!WriteFile(p->h, data, (DWORD)n, NULL, &ov)) {
		DWORD e = GetLastError();

		if (e != ERROR_IO_PENDING)
			return e == ERROR_BROKEN_PIPE || e == ERROR_NO_DATA ||
					       e == ERROR_PIPE_NOT_CONNECTED
				       ? -EPIPE
				       : -EIO;
	}
	r = GetOverlappedResult(p->h, &ov, &done, TRUE) ? 0 : -EPIPE;
	if (r == 0 && done != n)
		r = -EIO;
	return r;
}

int win32_pipe_read(Win32Pipe *p, void *buf, size_t n, size_t *ret_n)
{
	OVERLAPPED ov = { .hEvent = p->event };
	DWORD got = 0, e;
	int r;

	*ret_n = 0;
	ResetEvent(p->event);
	if (ReadFile(p->h, buf, (DWORD)n, NULL, &ov))
		e = 0;
	else
		e = GetLastError();
	/* No wait on the peer: when it ends, its handle closes and the read
	 * fails with a broken pipe (what it wrote before is read first). */
	if (e == ERROR_IO_PENDING || e == 0)
		e = GetOverlappedResult(p->h, &ov, &got, TRUE) ? 0 : GetLastError();
	if (e == ERROR_MORE_DATA)
		return -EMSGSIZE;
	if (e == ERROR_BROKEN_PIPE || e == ERROR_PIPE_NOT_CONNECTED || e == ERROR_NO_DATA)
		return -EPIPE;
	if (e != 0) {
		r = win32_errno(e);
		return r < 0 ? r : -EIO;
	}
	*ret_n = got;
	return 0;
}

void win32_pipe_close(Win32Pipe *p)
{
	if (p->h && p->h != INVALID_HANDLE_VALUE)
		CloseHandle(p->h);
	if (p->event)
		CloseHandle(p->event);
	*p = (Win32Pipe){ .h = INVALID_HANDLE_VALUE };
}
