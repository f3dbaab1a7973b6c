/* ward.exe's side of the privileged helper's pipe, for the Wine tests
 * (test-wine-runner.sh): start HELPER (plain CreateProcessW: Wine has no
 * UAC) for run RUN_ID with the grants in ARGS, connect (checking the
 * server is that process), send each REQUEST_FILE's bytes as one message,
 * print each reply, then close and print the helper's exit code.
 *
 *   win-helper-peer.exe HELPER RUN_ID ARGS REQUEST_FILE...
 *
 * PEER_CLIENT_PID=decoy:EXE (another process, EXE started with "sleep")
 * or PEER_USER=SID, when set, are told to the helper instead of this
 * process's pid and user (a wrong client). Exits 0 when the helper
 * ran and exited, 125 otherwise. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "windows/win32-pipe.h"

static char *slurp(const char *path, size_t *ret_n)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(64 * 1024);

	if (!f || !buf)
		exit(125);
	*ret_n = fread(buf, 1, 64 * 1024, f);
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	char name[96], user[192], cmd[8192], why[512] = "", reply[1024];
	STARTUPINFOA si = { .cb = sizeof(si) };
	PROCESS_INFORMATION pi = { 0 };
	Win32Pipe p;
	DWORD code = 0;
	int r;

	if (argc < 4 || win32_pipe_name("helper", argv[2], name, sizeof(name)) < 0 ||
	    win32_process_user(GetCurrentProcess(), user, sizeof(user)) < 0)
		return 125;
	{
		const char *cp = getenv("PEER_CLIENT_PID");
		unsigned long pid = GetCurrentProcessId();

		/* "decoy:EXE": a process that is not this one, left running. */
		if (cp && strncmp(cp, "decoy:", 6) == 0) {
			STARTUPINFOA dsi = { .cb = sizeof(dsi) };
			PROCESS_INFORMATION dpi = { 0 };
			char dcmd[1024];

			snprintf(dcmd, sizeof(dcmd), "\"%s\" sleep", cp + 6);
			if (!CreateProcessA(NULL, dcmd, NULL, NULL, FALSE, 0, NULL, NULL, &dsi, &dpi))
				return 125;
			pid = dpi.dwProcessId;
		}
		snprintf(cmd, sizeof(cmd), "\"%s\" --pipe %s --client-pid %lu --user %s --run %s %s",
			 argv[1], name, pid, getenv("PEER_USER") ? getenv("PEER_USER") : user, argv[2],
			 argv[3]);
	}
	if (!CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
		return 125;
	r = win32_pipe_connect(name, pi.hProcess, 30000, &p, why, sizeof(why));
	if (r < 0) {
		printf("peer: no connection: %s\n", why);
	} else {
		for (int i = 4; i < argc; i++) {
			size_t n = 0;
			char *req = slurp(argv[i], &n);

			r = win32_pipe_write(&p, req, n);
			free(req);
			if (r == 0)
				r = win32_pipe_read(&p, reply, sizeof(reply) - 1, &n);
			if (r < 0) {
				printf("reply: none (%s)\n", r == -EPIPE ? "closed" : "error");
				break;
			}
			reply[n] = 0;
			printf("reply: %s\n", reply);
		}
		win32_pipe_close(&p);
	}
	WaitForSingleObject(pi.hProcess, 30000);
	GetExitCodeProcess(pi.hProcess, &code);
	printf("helper exit %lu\n", (unsigned long)code);
	return 0;
}
