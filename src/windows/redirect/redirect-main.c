/* ward-redirect.dll's entry: read the session from the WARD_COW_*
 * variables ward.exe put in the child's environment (win-plan.c), install
 * the hooks, then tell ward.exe on its pipe that the child may run. Any
 * failure makes DllMain return FALSE: LoadLibraryW fails, no readiness
 * line is written, and ward.exe kills the still-suspended child. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "windows/redirect/redirect.h"
#include "windows/win-path.h"

RedirectConfig redirect_cfg;
static DWORD tls = TLS_OUT_OF_INDEXES;

bool redirect_enter(void)
{
	if (tls == TLS_OUT_OF_INDEXES || TlsGetValue(tls))
		return false;
	TlsSetValue(tls, (void *)1);
	return true;
}

void redirect_leave(void)
{
	TlsSetValue(tls, NULL);
}

static char *env(const wchar_t *name)
{
	wchar_t buf[32768];
	DWORD n = GetEnvironmentVariableW(name, buf, 32768);
	int m;
	char *s;

	if (n == 0 || n >= 32768)
		return NULL;
	m = WideCharToMultiByte(CP_UTF8, 0, buf, -1, NULL, 0, NULL, NULL);
	s = m > 0 ? malloc((size_t)m) : NULL;
	if (s)
		WideCharToMultiByte(CP_UTF8, 0, buf, -1, s, m, NULL, NULL);
	return s;
}

static char *normalized_env(const wchar_t *name)
{
	char *v = env(name), *n = NULL;

	if (v && win_path_normalize(v, &n, NULL) < 0)
		n = NULL;
	free(v);
	return n;
}

static int config_load(void)
{
	char *prot = env(L"WARD_COW_PROTECTED"), *pipe = env(L"WARD_COW_PIPE");
	size_t n = 1;
	int m;

	redirect_cfg.session.workspace = normalized_env(L"WARD_COW_WORKSPACE");
	redirect_cfg.session.upper = normalized_env(L"WARD_COW_UPPER");
	redirect_cfg.whiteout = normalized_env(L"WARD_COW_WHITEOUT");
	if (!redirect_cfg.session.workspace || !redirect_cfg.session.upper ||
	    !redirect_cfg.whiteout || !pipe || strncmp(pipe, "\\\\.\\pipe\\ward-cow-", 18) != 0) {
		free(prot);
		free(pipe);
		return -1;
	}
	m = MultiByteToWideChar(CP_UTF8, 0, pipe, -1, NULL, 0);
	redirect_cfg.pipe = m > 0 ? malloc((size_t)m * sizeof(wchar_t)) : NULL;
	if (!redirect_cfg.pipe) {
		free(prot);
		free(pipe);
		return -1;
	}
	MultiByteToWideChar(CP_UTF8, 0, pipe, -1, redirect_cfg.pipe, m);
	free(pipe);
	for (const char *c = prot ? prot : ""; *c; c++)
		n += *c == ';';
	redirect_cfg.protected_ = calloc(n + 1, sizeof(char *));
	if (!redirect_cfg.protected_) {
		free(prot);
		return -1;
	}
	n = 0;
	for (char *tok = prot ? strtok(prot, ";") : NULL; tok; tok = strtok(NULL, ";"))
		if (!(redirect_cfg.protected_[n++] = strdup(tok)))
			return -1;
	free(prot);
	redirect_cfg.session.protected_ = redirect_cfg.protected_;
	return 0;
}

/* "ward-redirect 1 ready <pid>\n" to ward.exe's pipe, which admits one
 * client and checks that it is this process. */
static int signal_ready(void)
{
	HANDLE h = CreateFileW(redirect_cfg.pipe, GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
			       SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, NULL);
	char line[64];
	DWORD done = 0;
	BOOL ok;

	if (h == INVALID_HANDLE_VALUE)
		return -1;
	snprintf(line, sizeof(line), "ward-redirect 1 ready %lu\n",
		 (unsigned long)GetCurrentProcessId());
	ok = WriteFile(h, line, (DWORD)strlen(line), &done, NULL) && done == strlen(line);
	FlushFileBuffers(h);
	CloseHandle(h);
	return ok ? 0 : -1;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved);
BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
	unsigned patched = 0;

	if (reason != DLL_PROCESS_ATTACH)
		return TRUE;
	DisableThreadLibraryCalls(inst);
	tls = TlsAlloc();
	if (tls == TLS_OUT_OF_INDEXES || config_load() < 0)
		return FALSE;
	if (redirect_hooks_install(&patched) < 0)
		return FALSE;
	return signal_ready() == 0;
}
