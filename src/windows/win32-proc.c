/* The Win32 layer, processes: the logon SID, AppContainer profiles
 * (userenv.dll, looked up at run time), restricted tokens, job objects,
 * suspended creation, the token read back, resume, wait. One call, or the
 * fixed sequence a step needs (a token before CreateProcessAsUserW), per
 * entry; nothing decided here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <sddl.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win32-api.h"
#include "windows/win32-util.h"

static int sid_string(PSID sid, char *ret, size_t n)
{
	LPWSTR s = NULL;
	char *u;

	if (!ConvertSidToStringSidW(sid, &s))
		return win32_errno(GetLastError());
	u = win32_utf8(s);
	LocalFree(s);
	if (!u)
		return -ENOMEM;
	snprintf(ret, n, "%s", u);
	free(u);
	return 0;
}

/* GetTokenInformation into a new buffer. */
static void *token_info(HANDLE tok, TOKEN_INFORMATION_CLASS cls)
{
	DWORD n = 0;
	void *buf;

	(void)GetTokenInformation(tok, cls, NULL, 0, &n);
	if (n == 0)
		return NULL;
	buf = calloc(1, n);
	if (buf && !GetTokenInformation(tok, cls, buf, n, &n)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int w_logon_sid(void *ctx, char ret[WIN_SID_STRING_MAX])
{
	HANDLE tok;
	TOKEN_GROUPS *g;
	int r = -ENOENT;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return win32_errno(GetLastError());
	g = token_info(tok, TokenGroups);
	for (DWORD i = 0; g && i < g->GroupCount; i++)
		if ((g->Groups[i].Attributes & SE_GROUP_LOGON_ID) == SE_GROUP_LOGON_ID) {
			r = sid_string(g->Groups[i].Sid, ret, WIN_SID_STRING_MAX);
			break;
		}
	free(g);
	CloseHandle(tok);
	return r;
}

typedef HRESULT(WINAPI *CreateProfileFn)(PCWSTR, PCWSTR, PCWSTR, PSID_AND_ATTRIBUTES, DWORD, PSID *);
typedef HRESULT(WINAPI *DeriveSidFn)(PCWSTR, PSID *);
typedef HRESULT(WINAPI *DeleteProfileFn)(PCWSTR);

/* userenv.dll's AppContainer functions, looked up at run time: a Windows
 * (or Wine) without them must refuse W2, not fail to start ward.exe. */
static FARPROC userenv_fn(const char *name)
{
	HMODULE m = LoadLibraryExW(L"userenv.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);

	if (!m)
		m = LoadLibraryW(L"userenv.dll");
	return m ? GetProcAddress(m, name) : NULL;
}

static int w_profile_create(void *ctx, const char *name, char ret[WIN_SID_STRING_MAX], char *why,
			    size_t n_why)
{
	CreateProfileFn create = (CreateProfileFn)(void (*)(void))userenv_fn("CreateAppContainerProfile");
	DeriveSidFn derive =
		(DeriveSidFn)(void (*)(void))userenv_fn("DeriveAppContainerSidFromAppContainerName");
	_cleanup_free_ wchar_t *w = win32_wide(name);
	PSID sid = NULL;
	HRESULT hr;
	int r;

	if (!create || !derive) {
		snprintf(why, n_why, "userenv.dll has no %s",
			 !create ? "CreateAppContainerProfile"
				 : "DeriveAppContainerSidFromAppContainerName");
		return -ENOSYS;
	}
	if (!w)
		return -ENOMEM;
	hr = create(w, w, L"ward sandbox", NULL, 0, &sid);
	if (hr == HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS))
		hr = derive(w, &sid);
	if (FAILED(hr) || !sid) {
		snprintf(why, n_why, "HRESULT 0x%08lx", (unsigned long)hr);
		return hr == E_NOTIMPL ? -ENOSYS : -EIO;
	}
	r = sid_string(sid, ret, WIN_SID_STRING_MAX);
	FreeSid(sid);
	return r;
}

static int w_profile_delete(void *ctx, const char *name)
{
	DeleteProfileFn del = (DeleteProfileFn)(void (*)(void))userenv_fn("DeleteAppContainerProfile");
	_cleanup_free_ wchar_t *w = win32_wide(name);
	HRESULT hr;

	if (!del)
		return -ENOSYS;
	if (!w)
		return -ENOMEM;
	hr = del(w);
	return SUCCEEDED(hr) || hr == HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND) ? 0 : -EIO;
}

static int w_job_create(void *ctx, const WinJobPlan *job, void **ret, char *why, size_t n_why)
{
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION x = { 0 };
	JOBOBJECT_BASIC_UI_RESTRICTIONS ui = { 0 };
	HANDLE h = CreateJobObjectW(NULL, NULL);
	DWORD f = 0;

	if (!h)
		return win32_fail_why(why, n_why, "CreateJobObjectW");
	if (job->kill_on_close)
		f |= JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
	if (job->die_on_unhandled)
		f |= JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
	if (job->active_processes) {
		f |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
		x.BasicLimitInformation.ActiveProcessLimit = job->active_processes;
	}
	if (job->job_memory) {
		f |= JOB_OBJECT_LIMIT_JOB_MEMORY;
		x.JobMemoryLimit = (SIZE_T)job->job_memory;
	}
	/* Neither BREAKAWAY_OK nor SILENT_BREAKAWAY_OK: nothing leaves. */
	x.BasicLimitInformation.LimitFlags = f;
	if (!SetInformationJobObject(h, JobObjectExtendedLimitInformation, &x, sizeof(x))) {
		int r = win32_fail_why(why, n_why, "SetInformationJobObject(limits)");

		CloseHandle(h);
		return r;
	}
	ui.UIRestrictionsClass = job->ui_limits;
	if (job->ui_limits &&
	    !SetInformationJobObject(h, JobObjectBasicUIRestrictions, &ui, sizeof(ui))) {
		int r = win32_fail_why(why, n_why, "SetInformationJobObject(UI)");

		CloseHandle(h);
		return r;
	}
	*ret = h;
	return 0;
}

static int w_job_read(void *ctx, void *job, WinJobPlan *ret)
{
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION x = { 0 };
	JOBOBJECT_BASIC_UI_RESTRICTIONS ui = { 0 };
	DWORD f;

	if (!QueryInformationJobObject(job, JobObjectExtendedLimitInformation, &x, sizeof(x), NULL))
		return win32_errno(GetLastError());
	if (!QueryInformationJobObject(job, JobObjectBasicUIRestrictions, &ui, sizeof(ui), NULL))
		return win32_errno(GetLastError());
	f = x.BasicLimitInformation.LimitFlags;
	*ret = (WinJobPlan){
		.kill_on_close = f & JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		.die_on_unhandled = f & JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION,
		.no_breakaway = !(f & (JOB_OBJECT_LIMIT_BREAKAWAY_OK |
				       JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK)),
		.ui_limits = ui.UIRestrictionsClass,
		.active_processes = (f & JOB_OBJECT_LIMIT_ACTIVE_PROCESS)
					    ? x.BasicLimitInformation.ActiveProcessLimit : 0,
		.job_memory = (f & JOB_OBJECT_LIMIT_JOB_MEMORY) ? x.JobMemoryLimit : 0,
	};
	return 0;
}


static void free_sids(PSID *sids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		LocalFree(sids[i]);
}

/* @t's restricted token, from ward's own. */
static int restricted_token(const WinTokenPlan *t, const char *logon, HANDLE *ret, char *why,
			    size_t n_why)
{
	HANDLE self = NULL, rt = NULL;
	PSID sids[8] = { 0 };
	SID_AND_ATTRIBUTES sa[8] = { { 0 } };
	size_t n = 0;
	DWORD flags = 0;
	int r = 0;

	STRV_FOREACH(s, t->restricting_sids) {
		const char *str = strcmp(*s, WIN_SID_LOGON_PLACEHOLDER) == 0 ? logon : *s;
		_cleanup_free_ wchar_t *w = str ? win32_wide(str) : NULL;

		if (n == 8 || !w || !ConvertStringSidToSidW(w, &sids[n])) {
			snprintf(why, n_why, "cannot convert restricting SID %s", str ? str : "LOGON");
			free_sids(sids, n);
			return -EINVAL;
		}
		sa[n].Sid = sids[n];
		n++;
	}
	if (t->disable_max_privilege)
		flags |= DISABLE_MAX_PRIVILEGE;
	if (t->write_restricted)
		flags |= WRITE_RESTRICTED;
	if (!OpenProcessToken(GetCurrentProcess(),
			      TOKEN_DUPLICATE | TOKEN_QUERY | TOKEN_ASSIGN_PRIMARY | TOKEN_ADJUST_DEFAULT,
			      &self)) {
		r = win32_fail_why(why, n_why, "OpenProcessToken");
		goto out;
	}
	if (!CreateRestrictedToken(self, flags, 0, NULL, 0, NULL, (DWORD)n, n ? sa : NULL, &rt)) {
		r = win32_fail_why(why, n_why, "CreateRestrictedToken");
		goto out;
	}
	if (t->integrity_rid && t->integrity_rid != 8192) {
		SID_IDENTIFIER_AUTHORITY ml = SECURITY_MANDATORY_LABEL_AUTHORITY;
		PSID il = NULL;
		TOKEN_MANDATORY_LABEL tml = { 0 };

		if (!AllocateAndInitializeSid(&ml, 1, t->integrity_rid, 0, 0, 0, 0, 0, 0, 0, &il)) {
			r = win32_fail_why(why, n_why, "AllocateAndInitializeSid");
			goto out;
		}
		tml.Label.Sid = il;
		tml.Label.Attributes = SE_GROUP_INTEGRITY;
		if (!SetTokenInformation(rt, TokenIntegrityLevel, &tml,
					 sizeof(tml) + GetLengthSid(il))) {
			r = win32_fail_why(why, n_why, "SetTokenInformation(TokenIntegrityLevel)");
			FreeSid(il);
			goto out;
		}
		FreeSid(il);
	}
	*ret = rt;
	rt = NULL;
out:
	if (rt)
		CloseHandle(rt);
	if (self)
		CloseHandle(self);
	free_sids(sids, n);
	return r;
}

static int w_spawn(void *ctx, const WinSpawn *s, void **ret, char *why, size_t n_why)
{
	_cleanup_free_ wchar_t *app = win32_wide(s->application), *cmd = win32_wide(s->cmdline),
			       *cwd = win32_wide(s->cwd),
			       *env = win32_wide_block(s->env_block, s->env_len);
	STARTUPINFOEXW si = { 0 };
	PROCESS_INFORMATION pi = { 0 };
	SECURITY_CAPABILITIES sc = { 0 };
	SID_AND_ATTRIBUTES caps[8] = { { 0 } };
	HANDLE std[3], token = NULL;
	SIZE_T size = 0;
	DWORD n_std = 0, n_caps = 0;
	BOOL ok;
	int r = 0;
	Win32Proc *p;

	if (!app || !cmd || !cwd || !env)
		return -ENOMEM;
	/* The child inherits exactly its three standard handles. */
	for (DWORD i = 0; i < 3; i++) {
		HANDLE h = GetStdHandle(i == 0 ? STD_INPUT_HANDLE
					       : i == 1 ? STD_OUTPUT_HANDLE : STD_ERROR_HANDLE);

		if (h && h != INVALID_HANDLE_VALUE &&
		    SetHandleInformation(h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT)) {
			bool dup = false;

			for (DWORD j = 0; j < n_std; j++)
				dup |= std[j] == h;
			if (!dup)
				std[n_std++] = h;
		}
	}
	si.StartupInfo.cb = sizeof(si);
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.StartupInfo.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
	si.StartupInfo.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
	si.StartupInfo.hStdError = GetStdHandle(STD_ERROR_HANDLE);

	(void)InitializeProcThreadAttributeList(NULL, 2, 0, &size);
	si.lpAttributeList = calloc(1, size);
	if (!si.lpAttributeList)
		return -ENOMEM;
	if (!InitializeProcThreadAttributeList(si.lpAttributeList, 2, 0, &size)) {
		free(si.lpAttributeList);
		return win32_fail_why(why, n_why, "InitializeProcThreadAttributeList");
	}
	if (n_std && !UpdateProcThreadAttribute(si.lpAttributeList, 0,
						PROC_THREAD_ATTRIBUTE_HANDLE_LIST, std,
						n_std * sizeof(HANDLE), NULL, NULL)) {
		r = win32_fail_why(why, n_why, "UpdateProcThreadAttribute(HANDLE_LIST)");
		goto out;
	}
	if (s->token->appcontainer) {
		_cleanup_free_ wchar_t *pkg = win32_wide(s->token->package_sid);

		if (!pkg || !ConvertStringSidToSidW(pkg, &sc.AppContainerSid)) {
			r = win32_fail_why(why, n_why, "ConvertStringSidToSidW(package)");
			goto out;
		}
		STRV_FOREACH(c, s->token->capability_sids) {
			_cleanup_free_ wchar_t *w = win32_wide(*c);

			if (n_caps == 8 || !w || !ConvertStringSidToSidW(w, &caps[n_caps].Sid)) {
				r = win32_fail_why(why, n_why,
						   "ConvertStringSidToSidW(capability)");
				goto out;
			}
			caps[n_caps++].Attributes = SE_GROUP_ENABLED;
		}
		sc.Capabilities = n_caps ? caps : NULL;
		sc.CapabilityCount = n_caps;
		if (!UpdateProcThreadAttribute(si.lpAttributeList, 0,
					       PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES, &sc,
					       sizeof(sc), NULL, NULL)) {
			r = win32_fail_why(why, n_why,
					   "UpdateProcThreadAttribute(SECURITY_CAPABILITIES)");
			goto out;
		}
	} else if (s->token->restricted) {
		r = restricted_token(s->token, s->logon_sid, &token, why, n_why);
		if (r < 0)
			goto out;
	}
	if (token)
		ok = CreateProcessAsUserW(token, app, cmd, NULL, NULL, TRUE,
					  CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT |
						  EXTENDED_STARTUPINFO_PRESENT,
					  env, cwd, &si.StartupInfo, &pi);
	else
		ok = CreateProcessW(app, cmd, NULL, NULL, TRUE,
				    CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT |
					    EXTENDED_STARTUPINFO_PRESENT,
				    env, cwd, &si.StartupInfo, &pi);
	if (!ok) {
		r = win32_fail_why(why, n_why, token ? "CreateProcessAsUserW" : "CreateProcessW");
		goto out;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		TerminateProcess(pi.hProcess, 125);
		CloseHandle(pi.hProcess);
		CloseHandle(pi.hThread);
		r = -ENOMEM;
		goto out;
	}
	p->process = pi.hProcess;
	p->thread = pi.hThread;
	*ret = p;
out:
	DeleteProcThreadAttributeList(si.lpAttributeList);
	free(si.lpAttributeList);
	if (sc.AppContainerSid)
		LocalFree(sc.AppContainerSid);
	for (DWORD i = 0; i < n_caps; i++)
		LocalFree(caps[i].Sid);
	if (token)
		CloseHandle(token);
	return r;
}

static int w_job_assign(void *ctx, void *job, void *proc)
{
	Win32Proc *p = proc;

	return AssignProcessToJobObject(job, p->process) ? 0 : win32_errno(GetLastError());
}

static int groups_to_strv(TOKEN_GROUPS *g, char ***ret)
{
	for (DWORD i = 0; g && i < g->GroupCount; i++) {
		char s[WIN_SID_STRING_MAX];
		int r = sid_string(g->Groups[i].Sid, s, sizeof(s));

		if (r < 0 || (r = strv_extend(ret, s)) < 0)
			return r;
	}
	return 0;
}

static int w_token_read(void *ctx, void *proc, WinTokenObserved *ret)
{
	Win32Proc *p = proc;
	WinTokenObserved o = { 0 };
	HANDLE tok;
	DWORD *isac;
	TOKEN_APPCONTAINER_INFORMATION *ac;
	TOKEN_MANDATORY_LABEL *il;
	TOKEN_GROUPS *g;
	TOKEN_PRIVILEGES *privs;
	int r = 0;

	if (!OpenProcessToken(p->process, TOKEN_QUERY, &tok))
		return win32_errno(GetLastError());
	isac = token_info(tok, TokenIsAppContainer);
	o.appcontainer = isac && *isac;
	free(isac);
	ac = o.appcontainer ? token_info(tok, TokenAppContainerSid) : NULL;
	if (ac && ac->TokenAppContainer) {
		char s[WIN_SID_STRING_MAX];

		if (sid_string(ac->TokenAppContainer, s, sizeof(s)) >= 0)
			o.package_sid = strdup(s);
	}
	free(ac);
	g = token_info(tok, TokenCapabilities);
	if (r >= 0)
		r = groups_to_strv(g, &o.capability_sids);
	free(g);
	il = token_info(tok, TokenIntegrityLevel);
	if (il && il->Label.Sid && *GetSidSubAuthorityCount(il->Label.Sid) > 0)
		o.integrity_rid =
			*GetSidSubAuthority(il->Label.Sid, *GetSidSubAuthorityCount(il->Label.Sid) - 1);
	free(il);
	g = token_info(tok, TokenRestrictedSids);
	if (r >= 0)
		r = groups_to_strv(g, &o.restricting_sids);
	free(g);
	/* WRITE_RESTRICTED shows as S-1-5-33 among the restricting SIDs. */
	if (o.restricting_sids && strv_contains(o.restricting_sids, "S-1-5-33")) {
		o.write_restricted = true;
		strv_remove(o.restricting_sids, "S-1-5-33");
	}
	privs = token_info(tok, TokenPrivileges);
	for (DWORD i = 0; r >= 0 && privs && i < privs->PrivilegeCount; i++) {
		wchar_t name[128];
		DWORD len = 128;
		char *u;

		if (!LookupPrivilegeNameW(NULL, &privs->Privileges[i].Luid, name, &len))
			continue;
		u = win32_utf8(name);
		r = u ? strv_consume(&o.privileges, u) : -ENOMEM;
	}
	free(privs);
	CloseHandle(tok);
	if (r < 0) {
		win_token_observed_done(&o);
		return r;
	}
	*ret = o;
	return 0;
}

static int w_resume(void *ctx, void *proc)
{
	Win32Proc *p = proc;

	return ResumeThread(p->thread) == (DWORD)-1 ? win32_errno(GetLastError()) : 0;
}

static int w_wait(void *ctx, void *proc, uint64_t timeout_ms, uint32_t *ret)
{
	Win32Proc *p = proc;
	DWORD t = timeout_ms == 0 || timeout_ms >= INFINITE ? INFINITE : (DWORD)timeout_ms;
	DWORD w = WaitForSingleObject(p->process, t), code = 0;

	if (w == WAIT_TIMEOUT)
		return -ETIMEDOUT;
	if (w != WAIT_OBJECT_0 || !GetExitCodeProcess(p->process, &code))
		return win32_errno(GetLastError());
	*ret = code;
	return 0;
}

static int w_terminate(void *ctx, void *proc, uint32_t code)
{
	Win32Proc *p = proc;

	if (!TerminateProcess(p->process, code))
		return win32_errno(GetLastError());
	(void)WaitForSingleObject(p->process, 5000);
	return 0;
}

static void w_close_proc(void *ctx, void *proc)
{
	Win32Proc *p = proc;

	CloseHandle(p->thread);
	CloseHandle(p->process);
	free(p);
}

static void w_close_job(void *ctx, void *job)
{
	CloseHandle(job);
}

unsigned long win32_proc_pid(void *proc)
{
	Win32Proc *p = proc;

	return GetProcessId(p->process);
}

void win32_proc_init(WinApi *api)
{
	api->logon_sid = w_logon_sid;
	api->profile_create = w_profile_create;
	api->profile_delete = w_profile_delete;
	api->job_create = w_job_create;
	api->job_read = w_job_read;
	api->spawn_suspended = w_spawn;
	api->job_assign = w_job_assign;
	api->token_read = w_token_read;
	api->resume = w_resume;
	api->wait = w_wait;
	api->terminate = w_terminate;
	api->close_proc = w_close_proc;
	api->close_job = w_close_job;
}
