/* ward.exe's side of the runner protocol, for the Wine tests
 * (test-wine-runner.sh): win32_runner_run() with the runner started by
 * plain CreateProcessW (Wine has no second user to log on as).
 *
 *   win-runner-peer.exe RUNNER STATE RUN_ID REQUEST_FILE [OPTION]...
 *     --expect-user SID   the runner's token user must be SID
 *     --server-pid N      tell the runner the server is process N
 *     --decoy EXE         expect process EXE (started, left running) on
 *                         the pipe instead of the runner: a wrong client
 *     --squat             create the run's pipe first, as a squatter would
 *
 * Sends REQUEST_FILE's bytes as the request, verbatim. Prints
 * "peer: exit N" (the command's code, relayed) or "peer: refused: WHY";
 * exits with N, or 125. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "windows/win32-pipe.h"
#include "windows/win32-runner-client.h"
#include "windows/win32-util.h"

static char *slurp(const char *path, size_t *ret_n)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(256 * 1024);
	size_t n;

	if (!f || !buf)
		exit(125);
	n = fread(buf, 1, 256 * 1024, f);
	fclose(f);
	*ret_n = n;
	return buf;
}

int main(int argc, char **argv)
{
	WinRunnerLaunch l = { .launch = win32_runner_launch_plain };
	Win32Pipe squatter = { .h = INVALID_HANDLE_VALUE };
	char why[1024] = "";
	uint32_t code = 0;
	bool started = false;
	size_t n = 0;
	char *req;
	int r;

	if (argc < 5) {
		fprintf(stderr, "usage: win-runner-peer RUNNER STATE RUN_ID REQUEST_FILE [OPTION]...\n");
		return 125;
	}
	req = slurp(argv[4], &n);
	for (int i = 5; i < argc; i++) {
		if (strcmp(argv[i], "--expect-user") == 0 && i + 1 < argc)
			l.expect_user = argv[++i];
		else if (strcmp(argv[i], "--server-pid") == 0 && i + 1 < argc)
			l.server_pid = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--decoy") == 0 && i + 1 < argc) {
			STARTUPINFOA si = { .cb = sizeof(si) };
			PROCESS_INFORMATION pi = { 0 };
			char cmd[1024];

			snprintf(cmd, sizeof(cmd), "\"%s\" sleep", argv[++i]);
			if (!CreateProcessA(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
				return 125;
			l.decoy = pi.hProcess;
		} else if (strcmp(argv[i], "--squat") == 0) {
			char name[96];

			if (win32_pipe_name("runner", argv[3], name, sizeof(name)) < 0 ||
			    win32_pipe_create(name, NULL, &squatter, why, sizeof(why)) < 0) {
				fprintf(stderr, "peer: cannot squat: %s\n", why);
				return 125;
			}
		} else {
			fprintf(stderr, "peer: unknown option %s\n", argv[i]);
			return 125;
		}
	}
	r = win32_runner_run(argv[1], argv[2], argv[3], req, n, &l, &code, &started, why,
			     sizeof(why));
	if (l.decoy) {
		TerminateProcess(l.decoy, 0);
		CloseHandle(l.decoy);
	}
	win32_pipe_close(&squatter);
	free(req);
	fflush(stdout);
	if (r < 0) {
		printf("peer: refused%s: %s\n", started ? " after the start" : "", why);
		return 125;
	}
	printf("peer: exit %lu\n", (unsigned long)code);
	return (int)code;
}
