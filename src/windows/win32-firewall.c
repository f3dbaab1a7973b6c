/* INetFwPolicy2 rules (win32-firewall.h): one COM call sequence per
 * function, deciding nothing; what was added is read back by the caller
 * (win-setup-exec.c). Windows-only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <initguid.h>
#include <netfw.h>
#include <oleauto.h>

#include "common/cleanup.h"
#include "windows/win32-firewall.h"
#include "windows/win32-util.h"

static int hr_why(HRESULT hr, const char *what, char *why, size_t n)
{
	if (why && n)
		snprintf(why, n, "%s: HRESULT 0x%08lx", what, (unsigned long)hr);
	if (hr == REGDB_E_CLASSNOTREG || hr == E_NOINTERFACE || hr == E_NOTIMPL ||
	    hr == CO_E_NOTINITIALIZED)
		return -ENOSYS;
	if (hr == HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND))
		return -ENOENT;
	if (hr == E_ACCESSDENIED)
		return -EACCES;
	return -EIO;
}

/* The policy's rule collection; COM initialized for this thread. */
static int rules_open(INetFwRules **ret, char *why, size_t n)
{
	INetFwPolicy2 *policy = NULL;
	HRESULT hr = CoInitializeEx(NULL, COINIT_APARTMENTTHREADED);

	if (FAILED(hr) && hr != RPC_E_CHANGED_MODE)
		return hr_why(hr, "CoInitializeEx", why, n);
	hr = CoCreateInstance(&CLSID_NetFwPolicy2, NULL, CLSCTX_INPROC_SERVER, &IID_INetFwPolicy2,
			      (void **)&policy);
	if (FAILED(hr))
		return hr_why(hr, "CoCreateInstance(NetFwPolicy2)", why, n);
	hr = policy->lpVtbl->get_Rules(policy, ret);
	policy->lpVtbl->Release(policy);
	if (FAILED(hr) || !*ret)
		return hr_why(FAILED(hr) ? hr : E_NOTIMPL, "INetFwPolicy2::get_Rules", why, n);
	return 0;
}

static BSTR bstr(const char *s)
{
	_cleanup_free_ wchar_t *w = win32_wide(s);

	return w ? SysAllocString(w) : NULL;
}

int win32_fw_add(void *ctx, const WinFwRule *r, char *why, size_t n)
{
	INetFwRules *rules = NULL;
	INetFwRule3 *rule = NULL;
	BSTR name = bstr(r->name), users = bstr(r->users);
	HRESULT hr;
	int ret;

	if (!name || !users) {
		SysFreeString(name);
		SysFreeString(users);
		return -ENOMEM;
	}
	ret = rules_open(&rules, why, n);
	if (ret < 0)
		goto out;
	(void)rules->lpVtbl->Remove(rules, name); /* one of the same name is replaced */
	hr = CoCreateInstance(&CLSID_NetFwRule, NULL, CLSCTX_INPROC_SERVER, &IID_INetFwRule3,
			      (void **)&rule);
	if (FAILED(hr)) {
		ret = hr_why(hr, "CoCreateInstance(NetFwRule, INetFwRule3)", why, n);
		goto out;
	}
	hr = rule->lpVtbl->put_Name(rule, name);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->put_Direction(rule, r->outbound ? NET_FW_RULE_DIR_OUT
								   : NET_FW_RULE_DIR_IN);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->put_Action(rule, r->block ? NET_FW_ACTION_BLOCK
							     : NET_FW_ACTION_ALLOW);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->put_Protocol(rule, r->protocol);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->put_Profiles(rule, r->profiles);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->put_LocalUserAuthorizedList(rule, users);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->put_Enabled(rule, r->enabled ? VARIANT_TRUE : VARIANT_FALSE);
	if (FAILED(hr)) {
		ret = hr_why(hr, "INetFwRule3::put_*", why, n);
		goto out;
	}
	hr = rules->lpVtbl->Add(rules, (INetFwRule *)rule);
	ret = FAILED(hr) ? hr_why(hr, "INetFwRules::Add", why, n) : 0;
out:
	if (rule)
		rule->lpVtbl->Release(rule);
	if (rules)
		rules->lpVtbl->Release(rules);
	SysFreeString(name);
	SysFreeString(users);
	return ret;
}

int win32_fw_get(void *ctx, const char *name_utf8, WinFwRule *ret, char *why, size_t n)
{
	INetFwRules *rules = NULL;
	INetFwRule *item = NULL;
	INetFwRule3 *rule = NULL;
	BSTR name = bstr(name_utf8), users = NULL, got = NULL;
	NET_FW_RULE_DIRECTION dir = NET_FW_RULE_DIR_IN;
	NET_FW_ACTION act = NET_FW_ACTION_ALLOW;
	VARIANT_BOOL en = VARIANT_FALSE;
	LONG proto = 0, prof = 0;
	HRESULT hr;
	int r;

	if (!name)
		return -ENOMEM;
	r = rules_open(&rules, why, n);
	if (r < 0)
		goto out;
	hr = rules->lpVtbl->Item(rules, name, &item);
	if (FAILED(hr) || !item) {
		r = hr_why(FAILED(hr) ? hr : HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND),
			   "INetFwRules::Item", why, n);
		goto out;
	}
	hr = item->lpVtbl->QueryInterface(item, &IID_INetFwRule3, (void **)&rule);
	if (FAILED(hr)) {
		r = hr_why(hr, "QueryInterface(INetFwRule3)", why, n);
		goto out;
	}
	hr = rule->lpVtbl->get_Name(rule, &got);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->get_Direction(rule, &dir);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->get_Action(rule, &act);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->get_Protocol(rule, &proto);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->get_Profiles(rule, &prof);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->get_LocalUserAuthorizedList(rule, &users);
	if (SUCCEEDED(hr))
		hr = rule->lpVtbl->get_Enabled(rule, &en);
	if (FAILED(hr)) {
		r = hr_why(hr, "INetFwRule3::get_*", why, n);
		goto out;
	}
	memset(ret, 0, sizeof(*ret));
	{
		_cleanup_free_ char *a = got ? win32_utf8(got) : NULL, *b = users ? win32_utf8(users) : NULL;

		snprintf(ret->name, sizeof(ret->name), "%s", a ? a : "");
		snprintf(ret->users, sizeof(ret->users), "%s", b ? b : "");
	}
	ret->outbound = dir == NET_FW_RULE_DIR_OUT;
	ret->block = act == NET_FW_ACTION_BLOCK;
	ret->enabled = en == VARIANT_TRUE;
	ret->protocol = proto;
	ret->profiles = prof;
	r = 0;
out:
	if (rule)
		rule->lpVtbl->Release(rule);
	if (item)
		item->lpVtbl->Release(item);
	if (rules)
		rules->lpVtbl->Release(rules);
	SysFreeString(name);
	SysFreeString(users);
	SysFreeString(got);
	return r;
}

int win32_fw_remove(void *ctx, const char *name_utf8)
{
	INetFwRules *rules = NULL;
	BSTR name = bstr(name_utf8);
	HRESULT hr;
	int r;

	if (!name)
		return -ENOMEM;
	r = rules_open(&rules, NULL, 0);
	if (r >= 0) {
		hr = rules->lpVtbl->Remove(rules, name);
		r = FAILED(hr) ? hr_why(hr, "INetFwRules::Remove", NULL, 0) : 0;
		rules->lpVtbl->Release(rules);
	}
	SysFreeString(name);
	return r;
}
