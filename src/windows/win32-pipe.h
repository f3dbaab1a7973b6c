/* The named pipes between ward.exe and ward-runner.exe (and, later, the
 * privileged helper): one message-mode pipe per run, one client.
 *
 * Server (ward.exe): the pipe is created with FILE_FLAG_FIRST_PIPE_INSTANCE
 * (a squatter that made the name first makes the create fail: refused, never
 * joined), PIPE_REJECT_REMOTE_CLIENTS, one instance, and a protected DACL
 * naming only ward's own user and the one client SID; the client that
 * connects must be the process ward started (GetNamedPipeClientProcessId
 * against its pid) and run as the expected user (its token's user SID).
 * Client (the runner): opens with SECURITY_IDENTIFICATION (the server can
 * learn who it is, never act as it), and checks the server is the process
 * its command line named (GetNamedPipeServerProcessId).
 * The wait for the client also waits on its process, so a runner that
 * dies before it connects never leaves ward blocked; once connected, a
 * peer's end closes its handle and breaks the pipe (no handle of the pipe
 * is ever inheritable). Windows-only. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <windows.h>

#define WIN32_PIPE_PREFIX "\\\\.\\pipe\\ward-"

typedef struct Win32Pipe {
	HANDLE h;
	HANDLE event;       /* the overlapped I/O's */
	HANDLE peer;        /* the peer's process, waited on with each I/O; not owned */
} Win32Pipe;

/* "\\.\pipe\ward-<role>-<run id>" (@role "runner" or "helper");
 * -EINVAL unless @run_id is 16 lower-case hex digits. */
int win32_pipe_name(const char *role, const char *run_id, char *ret, size_t n);
/* Whether @name is exactly such a name for @role. */
bool win32_pipe_name_valid(const char *role, const char *name);

/* Create the server end; @client_sid may write and read, ward's user owns. */
int win32_pipe_create(const char *name, const char *client_sid, Win32Pipe *ret, char *why,
		      size_t n_why);
/* Wait (up to @timeout_ms) for @peer to connect, then check it: its pid,
 * and when @user_sid is given, its token's user. -EPERM: the wrong client
 * (disconnected); -ESRCH: @peer ended first; -ETIMEDOUT. */
int win32_pipe_accept(Win32Pipe *p, HANDLE peer, const char *user_sid, DWORD timeout_ms,
		      char *why, size_t n_why);
/* Open the client end and check the server's pid is @server_pid. */
int win32_pipe_open(const char *name, DWORD server_pid, Win32Pipe *ret, char *why, size_t n_why);

/* win32_pipe_open(), waiting (up to @timeout_ms) for the server to create
 * the pipe, as long as process @server runs. */
int win32_pipe_connect(const char *name, HANDLE server, DWORD timeout_ms, Win32Pipe *ret,
		       char *why, size_t n_why);

/* One message. read: -EMSGSIZE when longer than @n (the rest is
 * discarded, the pipe is then unusable: close it), -EPIPE when the peer
 * closed (or ended). */
int win32_pipe_write(Win32Pipe *p, const void *data, size_t n);
int win32_pipe_read(Win32Pipe *p, void *buf, size_t n, size_t *ret_n);
void win32_pipe_close(Win32Pipe *p);

/* The user SID of process @proc's token, as a string. */
int win32_process_user(HANDLE proc, char *ret, size_t n);
