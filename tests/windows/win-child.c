/* The child the Wine plumbing tests (test-wine.sh) run through ward.exe:
 *   argv FILE          write each argv[i] (i >= 3, as the C runtime split
 *                      the UTF-16 command line: wmain), UTF-8, hex, one a line
 *   env FILE           write the environment block, one entry a line
 *   cwd FILE           write the current directory
 *   exit N             exit with N
 *   sleep              wait forever
 *   spawn-grandchild FILE   start "win-child sleep" (in the same job), write
 *                      its pid to FILE, exit 0 leaving it running
 *   alive PID          exit 0 if process PID still runs, 1 if not
 *   kill PID           terminate process PID
 *   write FILE         create FILE with "x" (for the fail-closed tests: it
 *                      must not exist afterwards when ward refused)
 *   cat FILE           copy FILE to stdout (exit 1 if it cannot be opened)
 *   append FILE TEXT   append TEXT to FILE (created if missing)
 *   delete FILE        DeleteFileW
 *   rename FROM TO     MoveFileExW (replacing)
 *   exists FILE        exit 0 if FILE exists, 1 if not
 *   wait-for FILE      exit 0 once FILE exists (2 after 120 s without)
 *   loaded NAME        exit 0 if module NAME is loaded in this process
 *   ls DIR             the names in DIR (FindFirstFileW), one a line, to stdout
 *   proxy-get HOST:PORT FILE   through the proxy $HTTP_PROXY names
 *                      (http://127.0.0.1:N), "GET http://HOST:PORT/";
 *                      the answer to FILE (exit 1 when the proxy cannot
 *                      be reached)
 * Commands chain with "+" as an argument ("append F x + cat F"): each
 * runs in turn in the same process, the first non-zero exit ends it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <winsock2.h>
#include <windows.h>

static FILE *out(const char *path)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		exit(90);
	return f;
}

static int proxy_get(const char *target, const char *path)
{
	const char *proxy = getenv("HTTP_PROXY");
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char req[512], buf[4096];
	WSADATA wsa;
	SOCKET s;
	FILE *f;
	int n;

	if (!proxy || strncmp(proxy, "http://127.0.0.1:", 17) != 0)
		return 1;
	sa.sin_port = htons((u_short)atoi(proxy + 17));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0)
		return 1;
	s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	if (s == INVALID_SOCKET || connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return 1;
	n = snprintf(req, sizeof(req), "GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
		     target, target);
	send(s, req, n, 0);
	f = out(path);
	while ((n = recv(s, buf, sizeof(buf), 0)) > 0)
		fwrite(buf, 1, (size_t)n, f);
	fclose(f);
	closesocket(s);
	return 0;
}

static int child_main(int argc, char **argv, wchar_t **wargv)
{
	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "argv") == 0 && argc >= 3) {
		FILE *f = out(argv[2]);

		for (int i = 3; i < argc; i++) {
			char u[4096] = "";

			WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, u, sizeof(u), NULL, NULL);
			for (const unsigned char *p = (const unsigned char *)u; *p; p++)
				fprintf(f, "%02x", *p);
			fputc('\n', f);
		}
		fclose(f);
		return 0;
	}
	if (strcmp(argv[1], "env") == 0 && argc >= 3) {
		FILE *f = out(argv[2]);
		wchar_t *block = GetEnvironmentStringsW();

		for (wchar_t *p = block; p && *p; p += wcslen(p) + 1) {
			char u[8192] = "";

			WideCharToMultiByte(CP_UTF8, 0, p, -1, u, sizeof(u), NULL, NULL);
			fprintf(f, "%s\n", u);
		}
		fclose(f);
		return 0;
	}
	if (strcmp(argv[1], "cwd") == 0 && argc >= 3) {
		FILE *f = out(argv[2]);
		char buf[MAX_PATH];

		GetCurrentDirectoryA(MAX_PATH, buf);
		fprintf(f, "%s\n", buf);
		fclose(f);
		return 0;
	}
	if (strcmp(argv[1], "exit") == 0 && argc >= 3)
		return atoi(argv[2]);
	if (strcmp(argv[1], "sleep") == 0) {
		Sleep(INFINITE);
		return 0;
	}
	if (strcmp(argv[1], "cat") == 0 && argc >= 3) {
		FILE *f = fopen(argv[2], "rb");
		int c;

		if (!f)
			return 1;
		while ((c = fgetc(f)) != EOF)
			putchar(c);
		fclose(f);
		return 0;
	}
	if (strcmp(argv[1], "append") == 0 && argc >= 4) {
		FILE *f = fopen(argv[2], "ab");

		if (!f)
			return 1;
		fputs(argv[3], f);
		return fclose(f) == 0 ? 0 : 1;
	}
	if (strcmp(argv[1], "delete") == 0 && argc >= 3)
		return DeleteFileW(wargv[2]) ? 0 : 1;
	if (strcmp(argv[1], "rename") == 0 && argc >= 4)
		return MoveFileExW(wargv[2], wargv[3], MOVEFILE_REPLACE_EXISTING) ? 0 : 1;
	if (strcmp(argv[1], "exists") == 0 && argc >= 3)
		return GetFileAttributesW(wargv[2]) != INVALID_FILE_ATTRIBUTES ? 0 : 1;
	if (strcmp(argv[1], "wait-for") == 0 && argc >= 3) {
		for (int i = 0; i < 6000; i++) {
			if (GetFileAttributesW(wargv[2]) != INVALID_FILE_ATTRIBUTES)
				return 0;
			Sleep(20);
		}
		return 2;
	}
	if (strcmp(argv[1], "proxy-get") == 0 && argc >= 4)
		return proxy_get(argv[2], argv[3]);
	if (strcmp(argv[1], "ls") == 0 && argc >= 3) {
		wchar_t pat[4096];
		WIN32_FIND_DATAW fd;
		HANDLE h;

		_snwprintf(pat, 4096, L"%ls\\*", wargv[2]);
		h = FindFirstFileW(pat, &fd);
		if (h == INVALID_HANDLE_VALUE)
			return 1;
		do {
			char u[1024] = "";

			WideCharToMultiByte(CP_UTF8, 0, fd.cFileName, -1, u, sizeof(u), NULL, NULL);
			printf("%s\n", u);
		} while (FindNextFileW(h, &fd));
		FindClose(h);
		return 0;
	}
	if (strcmp(argv[1], "loaded") == 0 && argc >= 3)
		return GetModuleHandleW(wargv[2]) ? 0 : 1;
	if (strcmp(argv[1], "write") == 0 && argc >= 3) {
		FILE *f = out(argv[2]);

		fputs("x", f);
		fclose(f);
		return 0;
	}
	if (strcmp(argv[1], "spawn-grandchild") == 0 && argc >= 3) {
		char self[MAX_PATH], cmd[MAX_PATH + 16];
		STARTUPINFOA si = { .cb = sizeof(si) };
		PROCESS_INFORMATION pi;
		FILE *f;

		GetModuleFileNameA(NULL, self, MAX_PATH);
		snprintf(cmd, sizeof(cmd), "\"%s\" sleep", self);
		if (!CreateProcessA(self, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
			return 91;
		f = out(argv[2]);
		fprintf(f, "%lu\n", (unsigned long)pi.dwProcessId);
		fclose(f);
		return 0;
	}
	if (strcmp(argv[1], "kill") == 0 && argc >= 3) {
		HANDLE h = OpenProcess(PROCESS_TERMINATE, FALSE, (DWORD)strtoul(argv[2], NULL, 10));

		return h && TerminateProcess(h, 9) ? 0 : 1;
	}
	if (strcmp(argv[1], "alive") == 0 && argc >= 3) {
		HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE,
				       (DWORD)strtoul(argv[2], NULL, 10));
		DWORD code = 0;

		if (!h)
			return 1;
		/* A process being torn down by its job: give it the moment the
		 * kernel needs, then look (no timing is asserted: dead or not). */
		(void)WaitForSingleObject(h, 2000);
		if (!GetExitCodeProcess(h, &code)) {
			CloseHandle(h);
			return 1;
		}
		CloseHandle(h);
		return code == STILL_ACTIVE ? 0 : 1;
	}
	return 2;
}

int wmain(int argc, wchar_t **wargv);
int wmain(int argc, wchar_t **wargv)
{
	char **argv = calloc((size_t)argc + 1, sizeof(char *));

	for (int i = 0; argv && i < argc; i++) {
		argv[i] = calloc(4096, 1);
		if (!argv[i])
			return 92;
		WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, argv[i], 4096, NULL, NULL);
	}
	if (!argv)
		return 92;
	for (int start = 0, i = 1;; i++) {
		if (i == argc || strcmp(argv[i], "+") == 0) {
			int n = i - start, r;

			/* child_main sees [program, cmd, args...]. */
			argv[start] = argv[0];
			wargv[start] = wargv[0];
			r = child_main(n, argv + start, wargv + start);
			fflush(stdout);
			if (r != 0 || i == argc)
				return r;
			start = i;
		}
	}
}
