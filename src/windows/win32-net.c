/* The network walls' Win32 calls: WFP through fwpuclnt.dll, the loopback
 * exemption through firewallapi.dll, the network journal. One call per
 * function, converting and deciding nothing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <fwpmu.h>
#include <sddl.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-net-journal.h"
#include "windows/win32-net.h"
#include "windows/win32-util.h"

/* fwpmtypes.h's flags mingw-w64 10 leaves out (values from the SDK's
 * fwpmtypes.h). */
#define WARD_FWPM_SESSION_FLAG_DYNAMIC 0x00000001u
#define WARD_FWPM_PROVIDER_FLAG_PERSISTENT 0x00000001u
#define WARD_FWPM_SUBLAYER_FLAG_PERSISTENT 0x0001u
#define WARD_FWPM_FILTER_FLAG_PERSISTENT 0x00000001u
#define WARD_RPC_C_AUTHN_WINNT 10u

typedef DWORD(WINAPI *EngineOpenFn)(const wchar_t *, UINT32, void *, const FWPM_SESSION0 *,
				     HANDLE *);
typedef DWORD(WINAPI *HandleFn)(HANDLE);
typedef DWORD(WINAPI *TxnBeginFn)(HANDLE, UINT32);
typedef DWORD(WINAPI *ProviderAddFn)(HANDLE, const FWPM_PROVIDER0 *, PSECURITY_DESCRIPTOR);
typedef DWORD(WINAPI *SubLayerAddFn)(HANDLE, const FWPM_SUBLAYER0 *, PSECURITY_DESCRIPTOR);
typedef DWORD(WINAPI *FilterAddFn)(HANDLE, const FWPM_FILTER0 *, PSECURITY_DESCRIPTOR, UINT64 *);
typedef DWORD(WINAPI *FilterGetFn)(HANDLE, const GUID *, FWPM_FILTER0 **);
typedef DWORD(WINAPI *DeleteByKeyFn)(HANDLE, const GUID *);
typedef void(WINAPI *FreeFn)(void **);
typedef DWORD(WINAPI *LoopbackGetFn)(DWORD *, PSID_AND_ATTRIBUTES *);
typedef DWORD(WINAPI *LoopbackSetFn)(DWORD, PSID_AND_ATTRIBUTES);

/* The function @name of @dll, or NULL. */
static FARPROC lookup(const wchar_t *dll, const char *name)
{
	HMODULE m = LoadLibraryExW(dll, NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);

	return m ? GetProcAddress(m, name) : NULL;
}

#define FWP(T, name) ((T)(void (*)(void))lookup(L"fwpuclnt.dll", name))

static int missing(const char *fn, char *why, size_t n)
{
	snprintf(why, n, "%s is not available on this host", fn);
	return -ENOSYS;
}

/* A Win32 or FWP_E_* result as -errno, the code in @why. */
static int result(DWORD e, char *why, size_t n)
{
	char msg[200];

	switch (e) {
	case ERROR_SUCCESS:
		return 0;
	case (DWORD)FWP_E_FILTER_NOT_FOUND:
	case (DWORD)FWP_E_SUBLAYER_NOT_FOUND:
	case (DWORD)FWP_E_PROVIDER_NOT_FOUND:
	case (DWORD)FWP_E_NOT_FOUND:
		if (why)
			snprintf(why, n, "not found (0x%08lx)", (unsigned long)e);
		return -ENOENT;
	case (DWORD)FWP_E_ALREADY_EXISTS:
		if (why)
			snprintf(why, n, "already exists (0x%08lx)", (unsigned long)e);
		return -EEXIST;
	case (DWORD)FWP_E_IN_USE:
		if (why)
			snprintf(why, n, "in use (0x%08lx)", (unsigned long)e);
		return -EBUSY;
	case RPC_S_CANNOT_SUPPORT:
		if (why)
			snprintf(why, n, "error %lu (RPC_S_CANNOT_SUPPORT: no filtering engine)",
				 (unsigned long)e);
		return -EOPNOTSUPP;
	default:
		if (why) {
			win32_strerror(e, msg, sizeof(msg));
			snprintf(why, n, "error %lu: %s", (unsigned long)e, msg);
		}
		return win32_errno(e) == -EIO && (e & 0xffff0000u) == 0x80320000u ? -EPERM
										   : win32_errno(e);
	}
}

static GUID guid(const WinGuid *g)
{
	GUID r;

	r.Data1 = g->d1;
	r.Data2 = g->d2;
	r.Data3 = g->d3;
	memcpy(r.Data4, g->d4, 8);
	return r;
}

static WinGuid winguid(const GUID *g)
{
	WinGuid r;

	r.d1 = g->Data1;
	r.d2 = g->Data2;
	r.d3 = g->Data3;
	memcpy(r.d4, g->Data4, 8);
	return r;
}

static int n_open(void *ctx, bool dynamic, void **ret, char *why, size_t n)
{
	EngineOpenFn open = FWP(EngineOpenFn, "FwpmEngineOpen0");
	FWPM_SESSION0 s;
	HANDLE h = NULL;
	int r;

	(void)ctx;
	if (!open)
		return missing("fwpuclnt.dll!FwpmEngineOpen0", why, n);
	memset(&s, 0, sizeof(s));
	s.flags = dynamic ? WARD_FWPM_SESSION_FLAG_DYNAMIC : 0;
	s.displayData.name = (wchar_t *)L"ward";
	r = result(open(NULL, WARD_RPC_C_AUTHN_WINNT, NULL, &s, &h), why, n);
	if (r < 0)
		return r;
	if (!h) {
		snprintf(why, n, "reported success without an engine handle");
		return -EPROTO;
	}
	*ret = h;
	return 0;
}

static void n_close(void *ctx, void *engine)
{
	HandleFn close = FWP(HandleFn, "FwpmEngineClose0");

	(void)ctx;
	if (close && engine)
		close(engine);
}

static int n_begin(void *ctx, void *engine, char *why, size_t n)
{
	TxnBeginFn begin = FWP(TxnBeginFn, "FwpmTransactionBegin0");

	(void)ctx;
	return begin ? result(begin(engine, 0), why, n)
		     : missing("FwpmTransactionBegin0", why, n);
}

static int n_commit(void *ctx, void *engine, char *why, size_t n)
{
	HandleFn commit = FWP(HandleFn, "FwpmTransactionCommit0");

	(void)ctx;
	return commit ? result(commit(engine), why, n) : missing("FwpmTransactionCommit0", why, n);
}

static void n_abort(void *ctx, void *engine)
{
	HandleFn abort_ = FWP(HandleFn, "FwpmTransactionAbort0");

	(void)ctx;
	if (abort_)
		abort_(engine);
}

static int n_add_provider(void *ctx, void *engine, const WinWfpPlan *p, char *why, size_t n)
{
	ProviderAddFn add = FWP(ProviderAddFn, "FwpmProviderAdd0");
	FWPM_PROVIDER0 v;
	int r;

	(void)ctx;
	if (!add)
		return missing("FwpmProviderAdd0", why, n);
	memset(&v, 0, sizeof(v));
	v.providerKey = guid(&p->provider);
	v.displayData.name = (wchar_t *)L"ward";
	v.displayData.description = (wchar_t *)L"ward's sandbox network walls";
	v.flags = p->persistent ? WARD_FWPM_PROVIDER_FLAG_PERSISTENT : 0;
	r = result(add(engine, &v, NULL), why, n);
	return r == -EEXIST ? 0 : r;
}

static int n_add_sublayer(void *ctx, void *engine, const WinWfpPlan *p, char *why, size_t n)
{
	SubLayerAddFn add = FWP(SubLayerAddFn, "FwpmSubLayerAdd0");
	FWPM_SUBLAYER0 v;
	GUID prov = guid(&p->provider);
	int r;

	(void)ctx;
	if (!add)
		return missing("FwpmSubLayerAdd0", why, n);
	memset(&v, 0, sizeof(v));
	v.subLayerKey = guid(&p->sublayer);
	v.displayData.name = (wchar_t *)L"ward";
	v.flags = p->persistent ? WARD_FWPM_SUBLAYER_FLAG_PERSISTENT : 0;
	v.providerKey = &prov;
	v.weight = p->sublayer_weight;
	r = result(add(engine, &v, NULL), why, n);
	return r == -EEXIST ? 0 : r;
}

static const GUID *field_key(WinWfpField f, GUID *buf)
{
	static const WinGuid *const keys[_WIN_WFP_FIELD_MAX] = {
		[WIN_WFP_F_PACKAGE] = &WIN_FWPM_CONDITION_ALE_PACKAGE_ID,
		[WIN_WFP_F_USER] = &WIN_FWPM_CONDITION_ALE_USER_ID,
		[WIN_WFP_F_REMOTE_V4] = &WIN_FWPM_CONDITION_IP_REMOTE_ADDRESS,
		[WIN_WFP_F_REMOTE_V6] = &WIN_FWPM_CONDITION_IP_REMOTE_ADDRESS,
		[WIN_WFP_F_REMOTE_PORT] = &WIN_FWPM_CONDITION_IP_REMOTE_PORT,
		[WIN_WFP_F_PROTOCOL] = &WIN_FWPM_CONDITION_IP_PROTOCOL,
	};

	*buf = guid(keys[f]);
	return buf;
}

typedef struct CondStore {
	PSID sid;
	PSECURITY_DESCRIPTOR sd;
	FWP_BYTE_BLOB blob;
	FWP_BYTE_ARRAY16 v6;
} CondStore;

static int n_add_filter(void *ctx, void *engine, const WinWfpPlan *p, const WinWfpFilter *f,
			char *why, size_t n)
{
	FilterAddFn add = FWP(FilterAddFn, "FwpmFilterAdd0");
	FWPM_FILTER_CONDITION0 conds[WIN_WFP_MAX_CONDITIONS];
	CondStore store[WIN_WFP_MAX_CONDITIONS];
	FWPM_FILTER0 v;
	GUID prov = guid(&p->provider);
	wchar_t name[64];
	UINT64 id = 0;
	int r = 0;

	(void)ctx;
	if (!add)
		return missing("FwpmFilterAdd0", why, n);
	memset(conds, 0, sizeof(conds));
	memset(store, 0, sizeof(store));
	for (size_t i = 0; i < f->n_cond && r == 0; i++) {
		const WinWfpCondition *c = &f->cond[i];
		_cleanup_free_ wchar_t *w = win32_wide(c->text);
		ULONG len = 0;

		field_key(c->field, &conds[i].fieldKey);
		conds[i].matchType = FWP_MATCH_EQUAL;
		switch (c->field) {
		case WIN_WFP_F_PACKAGE:
			if (!w || !ConvertStringSidToSidW(w, &store[i].sid))
				r = result(GetLastError(), why, n);
			conds[i].conditionValue.type = FWP_SID;
			conds[i].conditionValue.sid = store[i].sid;
			break;
		case WIN_WFP_F_USER:
			if (!w || !ConvertStringSecurityDescriptorToSecurityDescriptorW(
					  w, SDDL_REVISION_1, &store[i].sd, &len))
				r = result(GetLastError(), why, n);
			store[i].blob.size = len;
			store[i].blob.data = store[i].sd;
			conds[i].conditionValue.type = FWP_SECURITY_DESCRIPTOR_TYPE;
			conds[i].conditionValue.sd = &store[i].blob;
			break;
		case WIN_WFP_F_REMOTE_V4:
			conds[i].conditionValue.type = FWP_UINT32;
			conds[i].conditionValue.uint32 = c->v4;
			break;
		case WIN_WFP_F_REMOTE_V6:
			memcpy(store[i].v6.byteArray16, c->v6, 16);
			conds[i].conditionValue.type = FWP_BYTE_ARRAY16_TYPE;
			conds[i].conditionValue.byteArray16 = &store[i].v6;
			break;
		case WIN_WFP_F_REMOTE_PORT:
			conds[i].conditionValue.type = FWP_UINT16;
			conds[i].conditionValue.uint16 = (UINT16)c->num;
			break;
		case WIN_WFP_F_PROTOCOL:
			conds[i].conditionValue.type = FWP_UINT8;
			conds[i].conditionValue.uint8 = (UINT8)c->num;
			break;
		case _WIN_WFP_FIELD_MAX:
		default:
			r = -EINVAL;
		}
	}
	if (r == 0) {
		memset(&v, 0, sizeof(v));
		v.filterKey = guid(&f->key);
		swprintf(name, 64, L"ward %hs", f->name);
		v.displayData.name = name;
		v.flags = p->persistent ? WARD_FWPM_FILTER_FLAG_PERSISTENT : 0;
		v.providerKey = &prov;
		v.layerKey = guid(win_wfp_layer_key(f->layer));
		v.subLayerKey = guid(&p->sublayer);
		v.weight.type = FWP_UINT8;
		v.weight.uint8 = f->weight;
		v.numFilterConditions = (UINT32)f->n_cond;
		v.filterCondition = conds;
		v.action.type = f->permit ? FWP_ACTION_PERMIT : FWP_ACTION_BLOCK;
		r = result(add(engine, &v, NULL, &id), why, n);
	}
	for (size_t i = 0; i < WIN_WFP_MAX_CONDITIONS; i++) {
		if (store[i].sid)
			LocalFree(store[i].sid);
		if (store[i].sd)
			LocalFree(store[i].sd);
	}
	return r;
}

/* One condition read back; -EPROTO for one ward never adds. */
static int read_cond(const FWPM_FILTER_CONDITION0 *c, WinWfpCondition *ret)
{
	WinGuid k = winguid(&c->fieldKey);
	wchar_t *w = NULL;
	char *s;

	memset(ret, 0, sizeof(*ret));
	if (c->matchType != FWP_MATCH_EQUAL)
		return -EPROTO;
	if (win_guid_equal(&k, &WIN_FWPM_CONDITION_ALE_PACKAGE_ID) &&
	    c->conditionValue.type == FWP_SID) {
		ret->field = WIN_WFP_F_PACKAGE;
		if (!ConvertSidToStringSidW(c->conditionValue.sid, &w))
			return -EPROTO;
	} else if (win_guid_equal(&k, &WIN_FWPM_CONDITION_ALE_USER_ID) &&
		   c->conditionValue.type == FWP_SECURITY_DESCRIPTOR_TYPE) {
		ret->field = WIN_WFP_F_USER;
		if (!ConvertSecurityDescriptorToStringSecurityDescriptorW(
			    c->conditionValue.sd->data, SDDL_REVISION_1,
			    OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, &w, NULL))
			return -EPROTO;
	} else if (win_guid_equal(&k, &WIN_FWPM_CONDITION_IP_REMOTE_ADDRESS) &&
		   c->conditionValue.type == FWP_UINT32) {
		ret->field = WIN_WFP_F_REMOTE_V4;
		ret->v4 = c->conditionValue.uint32;
		return 0;
	} else if (win_guid_equal(&k, &WIN_FWPM_CONDITION_IP_REMOTE_ADDRESS) &&
		   c->conditionValue.type == FWP_BYTE_ARRAY16_TYPE) {
		ret->field = WIN_WFP_F_REMOTE_V6;
		memcpy(ret->v6, c->conditionValue.byteArray16->byteArray16, 16);
		return 0;
	} else if (win_guid_equal(&k, &WIN_FWPM_CONDITION_IP_REMOTE_PORT) &&
		   c->conditionValue.type == FWP_UINT16) {
		ret->field = WIN_WFP_F_REMOTE_PORT;
		ret->num = c->conditionValue.uint16;
		return 0;
	} else if (win_guid_equal(&k, &WIN_FWPM_CONDITION_IP_PROTOCOL) &&
		   c->conditionValue.type == FWP_UINT8) {
		ret->field = WIN_WFP_F_PROTOCOL;
		ret->num = c->conditionValue.uint8;
		return 0;
	} else {
		return -EPROTO;
	}
	s = win32_utf8(w);
	LocalFree(w);
	if (!s || strlen(s) >= sizeof(ret->text)) {
		free(s);
		return -EPROTO;
	}
	memcpy(ret->text, s, strlen(s) + 1);
	free(s);
	return 0;
}

static int n_get_filter(void *ctx, void *engine, const WinGuid *key, WinWfpFilter *ret, char *why,
			size_t n)
{
	FilterGetFn get = FWP(FilterGetFn, "FwpmFilterGetByKey0");
	FreeFn fr = FWP(FreeFn, "FwpmFreeMemory0");
	FWPM_FILTER0 *f = NULL;
	GUID k = guid(key);
	WinGuid layer;
	int r;

	(void)ctx;
	if (!get || !fr)
		return missing("FwpmFilterGetByKey0", why, n);
	r = result(get(engine, &k, &f), why, n);
	if (r < 0)
		return r;
	if (!f) {
		snprintf(why, n, "reported success without a filter");
		return -EPROTO;
	}
	memset(ret, 0, sizeof(*ret));
	ret->key = winguid(&f->filterKey);
	layer = winguid(&f->layerKey);
	ret->layer = _WIN_WFP_LAYER_MAX; /* unknown: never equal to a plan's */
	for (int l = 0; l < _WIN_WFP_LAYER_MAX; l++)
		if (win_guid_equal(&layer, win_wfp_layer_key((WinWfpLayer)l)))
			ret->layer = (WinWfpLayer)l;
	ret->permit = f->action.type == FWP_ACTION_PERMIT;
	if (f->action.type != FWP_ACTION_PERMIT && f->action.type != FWP_ACTION_BLOCK)
		r = -EPROTO;
	ret->weight = f->weight.type == FWP_UINT8 ? f->weight.uint8 : 0xff;
	if (f->numFilterConditions > WIN_WFP_MAX_CONDITIONS)
		r = -EPROTO;
	for (UINT32 i = 0; r == 0 && i < f->numFilterConditions; i++)
		r = read_cond(&f->filterCondition[i], &ret->cond[ret->n_cond++]);
	fr((void **)&f);
	if (r < 0)
		snprintf(why, n, "the filter read back holds what ward never adds");
	return r;
}

static int delete_by(const char *fn, void *engine, const WinGuid *key)
{
	DeleteByKeyFn del = FWP(DeleteByKeyFn, fn);
	GUID k = guid(key);

	return del ? result(del(engine, &k), NULL, 0) : -ENOSYS;
}

static int n_delete_filter(void *ctx, void *engine, const WinGuid *key)
{
	(void)ctx;
	return delete_by("FwpmFilterDeleteByKey0", engine, key);
}

static int n_delete_sublayer(void *ctx, void *engine, const WinGuid *key)
{
	(void)ctx;
	return delete_by("FwpmSubLayerDeleteByKey0", engine, key);
}

static int n_delete_provider(void *ctx, void *engine, const WinGuid *key)
{
	(void)ctx;
	return delete_by("FwpmProviderDeleteByKey0", engine, key);
}

static int n_loopback_get(void *ctx, char ***ret, char *why, size_t n)
{
	LoopbackGetFn get = (LoopbackGetFn)(void (*)(void))lookup(
		L"firewallapi.dll", "NetworkIsolationGetAppContainerConfig");
	_cleanup_(strv_freep) char **l = calloc(1, sizeof(char *));
	PSID_AND_ATTRIBUTES sids = NULL;
	DWORD count = 0;
	int r;

	(void)ctx;
	if (!get)
		return missing("firewallapi.dll!NetworkIsolationGetAppContainerConfig", why, n);
	if (!l)
		return -ENOMEM;
	r = result(get(&count, &sids), why, n);
	if (r < 0)
		return r;
	/* The array and its SIDs belong to the caller; they are not freed
	 * here (ward.exe is short-lived, and the right deallocator is one
	 * more thing to verify on real Windows). */
	for (DWORD i = 0; i < count; i++) {
		wchar_t *w = NULL;
		char *s;

		if (!ConvertSidToStringSidW(sids[i].Sid, &w))
			return result(GetLastError(), why, n);
		s = win32_utf8(w);
		LocalFree(w);
		if (!s || strv_consume(&l, s) < 0)
			return -ENOMEM;
	}
	*ret = l;
	l = NULL;
	return 0;
}

static int n_loopback_set(void *ctx, char *const *list, char *why, size_t n)
{
	LoopbackSetFn set = (LoopbackSetFn)(void (*)(void))lookup(
		L"firewallapi.dll", "NetworkIsolationSetAppContainerConfig");
	size_t count = strv_length(list);
	_cleanup_free_ SID_AND_ATTRIBUTES *sids = calloc(count + 1, sizeof(*sids));
	int r = 0;

	(void)ctx;
	if (!set)
		return missing("firewallapi.dll!NetworkIsolationSetAppContainerConfig", why, n);
	if (!sids)
		return -ENOMEM;
	for (size_t i = 0; i < count && r == 0; i++) {
		_cleanup_free_ wchar_t *w = win32_wide(list[i]);

		if (!w || !ConvertStringSidToSidW(w, &sids[i].Sid))
			r = -EINVAL;
	}
	if (r == 0)
		r = result(set((DWORD)count, sids), why, n);
	for (size_t i = 0; i < count; i++)
		if (sids[i].Sid)
			LocalFree(sids[i].Sid);
	return r;
}

static wchar_t *journal_path(Win32NetCtx *c, const char *name)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s\\%s", c->state_dir, name);
	return win32_wide(buf);
}

int win32_text_read(const wchar_t *path, char **ret)
{
	HANDLE h;
	LARGE_INTEGER size;
	char *buf;
	DWORD got = 0;

	h = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, 0, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return win32_errno(GetLastError());
	if (!GetFileSizeEx(h, &size) || size.QuadPart > 16 * 1024 * 1024) {
		CloseHandle(h);
		return -EFBIG;
	}
	buf = malloc((size_t)size.QuadPart + 1);
	if (!buf || !ReadFile(h, buf, (DWORD)size.QuadPart, &got, NULL) ||
	    got != (DWORD)size.QuadPart) {
		free(buf);
		CloseHandle(h);
		return -EIO;
	}
	CloseHandle(h);
	buf[got] = 0;
	*ret = buf;
	return 0;
}

static int write_all(HANDLE h, const char *s)
{
	size_t len = strlen(s);
	DWORD put = 0;

	if (!WriteFile(h, s, (DWORD)len, &put, NULL) || put != len)
		return win32_errno(GetLastError());
	return FlushFileBuffers(h) ? 0 : win32_errno(GetLastError());
}

int win32_text_append(const wchar_t *path, const char *header, const char *text)
{
	LARGE_INTEGER size;
	HANDLE h;
	int r;

	h = CreateFileW(path, FILE_APPEND_DATA | FILE_READ_ATTRIBUTES, FILE_SHARE_READ, NULL,
			OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return win32_errno(GetLastError());
	r = GetFileSizeEx(h, &size) ? 0 : win32_errno(GetLastError());
	if (r == 0 && size.QuadPart == 0)
		r = write_all(h, header);
	if (r == 0)
		r = write_all(h, text);
	CloseHandle(h);
	return r;
}

int win32_text_replace(const wchar_t *path, const char *text)
{
	size_t n = wcslen(path) + 8;
	_cleanup_free_ wchar_t *tmp = malloc(n * sizeof(wchar_t));
	HANDLE h;
	int r;

	if (!text)
		return DeleteFileW(path) || GetLastError() == ERROR_FILE_NOT_FOUND
			       ? 0
			       : win32_errno(GetLastError());
	if (!tmp)
		return -ENOMEM;
	swprintf(tmp, n, L"%ls.new", path);
	h = CreateFileW(tmp, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE)
		return win32_errno(GetLastError());
	r = write_all(h, text);
	CloseHandle(h);
	if (r == 0 && !MoveFileExW(tmp, path, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
		r = win32_errno(GetLastError());
	if (r < 0)
		DeleteFileW(tmp);
	return r;
}

static int n_journal_read(void *ctx, char **ret)
{
	_cleanup_free_ wchar_t *path = journal_path(ctx, "network.journal");

	return path ? win32_text_read(path, ret) : -ENOMEM;
}

static int n_journal_append(void *ctx, const char *text)
{
	_cleanup_free_ wchar_t *path = journal_path(ctx, "network.journal");

	return path ? win32_text_append(path, WIN_NET_JOURNAL_HEADER, text) : -ENOMEM;
}

static int n_journal_replace(void *ctx, const char *text)
{
	_cleanup_free_ wchar_t *path = journal_path(ctx, "network.journal");

	return path ? win32_text_replace(path, text) : -ENOMEM;
}

int win32_net_lock(Win32NetCtx *c)
{
	_cleanup_free_ wchar_t *path = journal_path(c, "network.lock");

	if (!path)
		return -ENOMEM;
	for (int i = 0; i < 600; i++) {
		HANDLE h = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_ALWAYS,
				       FILE_ATTRIBUTE_NORMAL, NULL);

		if (h != INVALID_HANDLE_VALUE) {
			c->lock = h;
			return 0;
		}
		if (GetLastError() != ERROR_SHARING_VIOLATION)
			return win32_errno(GetLastError());
		Sleep(50);
	}
	return -EBUSY;
}

void win32_net_unlock(Win32NetCtx *c)
{
	if (c->lock)
		CloseHandle(c->lock);
	c->lock = NULL;
}

void win32_net_init(WinNetApi *api, Win32NetCtx *ctx)
{
	*api = (WinNetApi){
		.ctx = ctx,
		.wfp_open = n_open,
		.wfp_close = n_close,
		.wfp_begin = n_begin,
		.wfp_commit = n_commit,
		.wfp_abort = n_abort,
		.wfp_add_provider = n_add_provider,
		.wfp_add_sublayer = n_add_sublayer,
		.wfp_add_filter = n_add_filter,
		.wfp_get_filter = n_get_filter,
		.wfp_delete_filter = n_delete_filter,
		.wfp_delete_sublayer = n_delete_sublayer,
		.wfp_delete_provider = n_delete_provider,
		.loopback_get = n_loopback_get,
		.loopback_set = n_loopback_set,
		.journal_read = n_journal_read,
		.journal_append = n_journal_append,
		.journal_replace = n_journal_replace,
	};
}
