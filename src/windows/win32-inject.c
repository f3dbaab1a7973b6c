/* WinApi.cow_inject: load the redirector DLL into the suspended child and
 * wait for its readiness line, before the executor resumes the child.
 *
 *   pipe     \\.\pipe\ward-cow-<run id>, created here with
 *            FILE_FLAG_FIRST_PIPE_INSTANCE (a name someone else already
 *            holds is an error, never joined), one instance, remote
 *            clients rejected; its DACL: SYSTEM and the owner (ward's
 *            user) all, the run's package or synthetic SID read and
 *            write (an AppContainer or write-restricted client needs its
 *            own ACE), a low label (a W1 client runs at low integrity);
 *   inject   the DLL's path written into the child (VirtualAllocEx,
 *            WriteProcessMemory), a thread started in it at LoadLibraryW
 *            (kernel32 is mapped at the same address in every process of
 *            a boot session); the child's own thread stays suspended;
 *   ready    the DLL, once its hooks are in, connects and writes
 *            "ward-redirect 1 ready <pid>\n": the client's process id
 *            (GetNamedPipeClientProcessId) must be the child's, the line
 *            exact, the loader thread must end with a module handle.
 * Any step failing, or nothing within @ready_ms: an error (the executor
 * kills the child: fail closed). Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <sddl.h>

#include "common/cleanup.h"
#include "windows/win-fault.h"
#include "windows/win32-api.h"
#include "windows/win32-util.h"

static DWORD left_ms(ULONGLONG deadline)
{
	ULONGLONG now = GetTickCount64();

	return now >= deadline ? 0 : (DWORD)(deadline - now);
}

/* Wait for the overlapped @ov on @pipe, or for the loader @thread to end
 * first (the DLL did not load, or returned without connecting). */
static int wait_io(HANDLE pipe, OVERLAPPED *ov, HANDLE thread, ULONGLONG deadline, char *why,
		   size_t n, const char *what)
{
	HANDLE hs[2] = { ov->hEvent, thread };
	DWORD w = WaitForMultipleObjects(thread ? 2 : 1, hs, FALSE, left_ms(deadline)), got = 0;

	if (w == WAIT_OBJECT_0)
		return GetOverlappedResult(pipe, ov, &got, FALSE) ? (int)got
								  : win32_fail_why(why, n, what);
	CancelIo(pipe);
	(void)GetOverlappedResult(pipe, ov, &got, TRUE);
	if (w == WAIT_OBJECT_0 + 1) {
		DWORD code = 0;

		(void)GetExitCodeThread(thread, &code);
		snprintf(why, n, "%s: the redirector's loader thread ended first (LoadLibraryW "
				 "returned %#lx: the DLL did not load, or did not signal)",
			 what, (unsigned long)code);
		return -ENOENT;
	}
	snprintf(why, n, "%s: no readiness signal from the redirector within the time allowed",
		 what);
	return -ETIMEDOUT;
}

#ifndef WARD_TEST_HOOKS
#define WARD_TEST_HOOKS 0
#endif

#if WARD_TEST_HOOKS
/* Test builds only (ward-test.exe): another process's part in the
 * readiness pipe, played by ward-test.exe itself so that it is there at
 * the right moment, deterministically. WARD_TEST_WIN_FAULT lists
 *   cow-squat     the pipe's name taken before ward creates it
 *   cow-intruder  a client that is not the child connects first and
 *                 writes the exact readiness line the child would */
static bool fault_listed(const char *name)
{
	return win_fault_listed(getenv("WARD_TEST_WIN_FAULT"), name);
}

typedef struct Intruder {
	const wchar_t *name;
	DWORD child;
	HANDLE h;
} Intruder;

static DWORD WINAPI intrude(void *data)
{
	Intruder *in = data;
	char line[64];
	DWORD wrote = 0;

	in->h = CreateFileW(in->name, GENERIC_WRITE, 0, NULL, OPEN_EXISTING, 0, NULL);
	if (in->h == INVALID_HANDLE_VALUE)
		return 1;
	snprintf(line, sizeof(line), "ward-redirect 1 ready %lu\n", (unsigned long)in->child);
	return WriteFile(in->h, line, (DWORD)strlen(line), &wrote, NULL) ? 0 : 1;
}
#endif

static int w_cow_inject(void *ctx, void *proc, const WinCowLaunch *l, char *why, size_t n)
{
	Win32Proc *p = proc;
	_cleanup_free_ wchar_t *dll = win32_wide(l->dll), *name = win32_wide(l->pipe);
	HANDLE pipe = INVALID_HANDLE_VALUE, thread = NULL, ev = NULL;
	OVERLAPPED ov = { 0 };
	ULONGLONG deadline = GetTickCount64() + l->ready_ms;
	void *remote = NULL;
	size_t size;
	char line[128] = "", want[64];
	ULONG client = 0;
	DWORD code = 0;
	FARPROC load;
	PSECURITY_DESCRIPTOR sd = NULL;
	SECURITY_ATTRIBUTES sa = { .nLength = sizeof(sa) };
	int r, got;

#if WARD_TEST_HOOKS
	HANDLE squatter = INVALID_HANDLE_VALUE, intruder = NULL;
	Intruder in = { .h = INVALID_HANDLE_VALUE };
#endif

	if (!dll || !name)
		return -ENOMEM;
	if (GetFileAttributesW(dll) == INVALID_FILE_ATTRIBUTES)
		return win32_fail_why(why, n, l->dll);
#if WARD_TEST_HOOKS
	if (fault_listed("cow-squat"))
		squatter = CreateNamedPipeW(name, PIPE_ACCESS_INBOUND, PIPE_TYPE_BYTE, 1, 0, 4096, 0,
					    NULL);
#endif
	{
		Win32Ctx *c = ctx;
		wchar_t sddl[512];

		_snwprintf(sddl, 512, L"D:P(A;;GA;;;SY)(A;;GA;;;OW)%s%hs%hsS:(ML;;NW;;;LW)",
			   c && c->sandbox_sid ? L"(A;;0x12019f;;;" : L"",
			   c && c->sandbox_sid ? c->sandbox_sid : "",
			   c && c->sandbox_sid ? ")" : "");
		if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl, SDDL_REVISION_1, &sd,
									  NULL))
			return win32_fail_why(why, n, "the readiness pipe's security descriptor");
		sa.lpSecurityDescriptor = sd;
	}
	ev = CreateEventW(NULL, TRUE, FALSE, NULL);
	if (!ev) {
		LocalFree(sd);
		return win32_fail_why(why, n, "CreateEventW");
	}
	pipe = CreateNamedPipeW(name,
				PIPE_ACCESS_INBOUND | FILE_FLAG_FIRST_PIPE_INSTANCE |
					FILE_FLAG_OVERLAPPED,
				PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT |
					PIPE_REJECT_REMOTE_CLIENTS,
				1, 0, 4096, 0, &sa);
	if (pipe == INVALID_HANDLE_VALUE) {
		r = win32_fail_why(why, n, "CreateNamedPipeW (first instance)");
		goto out;
	}
	ov.hEvent = ev;
	if (!ConnectNamedPipe(pipe, &ov) && GetLastError() != ERROR_IO_PENDING &&
	    GetLastError() != ERROR_PIPE_CONNECTED) {
		r = win32_fail_why(why, n, "ConnectNamedPipe");
		goto out;
	}
	if (GetLastError() == ERROR_PIPE_CONNECTED)
		SetEvent(ev);
#if WARD_TEST_HOOKS
	/* The intruder is connected before the DLL is even loaded. */
	if (fault_listed("cow-intruder")) {
		in.name = name;
		in.child = GetProcessId(p->process);
		intruder = CreateThread(NULL, 0, intrude, &in, 0, NULL);
		if (intruder)
			WaitForSingleObject(intruder, 10000);
	}
#endif

	size = (wcslen(dll) + 1) * sizeof(wchar_t);
	remote = VirtualAllocEx(p->process, NULL, size, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
	if (!remote) {
		r = win32_fail_why(why, n, "VirtualAllocEx");
		goto out;
	}
	if (!WriteProcessMemory(p->process, remote, dll, size, NULL)) {
		r = win32_fail_why(why, n, "WriteProcessMemory");
		goto out;
	}
	load = GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "LoadLibraryW");
	if (!load) {
		r = win32_fail_why(why, n, "GetProcAddress(LoadLibraryW)");
		goto out;
	}
	thread = CreateRemoteThread(p->process, NULL, 0, (LPTHREAD_START_ROUTINE)(void *)load,
				    remote, 0, NULL);
	if (!thread) {
		r = win32_fail_why(why, n, "CreateRemoteThread(LoadLibraryW)");
		goto out;
	}

	r = wait_io(pipe, &ov, thread, deadline, why, n, "readiness pipe");
	if (r < 0)
		goto out;
	if (!GetNamedPipeClientProcessId(pipe, &client) || client != GetProcessId(p->process)) {
		snprintf(why, n, "readiness pipe: the client is process %lu, not the child %lu",
			 (unsigned long)client, (unsigned long)GetProcessId(p->process));
		r = -EPERM;
		goto out;
	}
	/* The one line, whole, in one message of at most 127 bytes. */
	memset(&ov, 0, sizeof(ov));
	ov.hEvent = ev;
	ResetEvent(ev);
	if (!ReadFile(pipe, line, sizeof(line) - 1, NULL, &ov) && GetLastError() != ERROR_IO_PENDING) {
		r = win32_fail_why(why, n, "ReadFile(readiness pipe)");
		goto out;
	}
	got = wait_io(pipe, &ov, NULL, deadline, why, n, "readiness line");
	if (got < 0) {
		r = got;
		goto out;
	}
	line[got] = 0;
	snprintf(want, sizeof(want), "ward-redirect 1 ready %lu\n",
		 (unsigned long)GetProcessId(p->process));
	if (strcmp(line, want) != 0) {
		snprintf(why, n, "readiness pipe: unexpected line '%.60s'", line);
		r = -EPROTO;
		goto out;
	}
	/* LoadLibraryW has returned the module: DllMain succeeded. */
	if (WaitForSingleObject(thread, left_ms(deadline)) != WAIT_OBJECT_0 ||
	    !GetExitCodeThread(thread, &code) || code == 0) {
		snprintf(why, n, "the redirector's loader thread did not return a module (%#lx)",
			 (unsigned long)code);
		r = -EIO;
		goto out;
	}
	r = 0;
out:
	if (thread) {
		/* Never free the string under a thread that may still read it. */
		if (WaitForSingleObject(thread, 0) == WAIT_OBJECT_0 && remote)
			VirtualFreeEx(p->process, remote, 0, MEM_RELEASE);
		CloseHandle(thread);
	} else if (remote)
		VirtualFreeEx(p->process, remote, 0, MEM_RELEASE);
	if (pipe != INVALID_HANDLE_VALUE)
		CloseHandle(pipe);
	CloseHandle(ev);
	LocalFree(sd);
#if WARD_TEST_HOOKS
	if (squatter != INVALID_HANDLE_VALUE)
		CloseHandle(squatter);
	if (intruder)
		CloseHandle(intruder);
	if (in.h != INVALID_HANDLE_VALUE)
		CloseHandle(in.h);
#endif
	return r;
}

void win32_inject_init(WinApi *api)
{
	api->cow_inject = w_cow_inject;
}
