/* The Win32 calls the network walls make, behind a table like WinApi's
 * (win-api.h): win32-net.c is the real one (fwpuclnt.dll and
 * firewallapi.dll, both looked up at run time), the unit tests use a fake
 * that records calls, fails and lies. One call per function, deciding
 * nothing. Each returns 0 or a negative errno; @why gets the Win32 error
 * for a human. -ENOSYS: the DLL or the function is missing. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "windows/win-guid.h"
#include "windows/win-wfp.h"

typedef struct WinNetApi {
	void *ctx;
	/* FwpmEngineOpen0, with FWPM_SESSION_FLAG_DYNAMIC when @dynamic. */
	int (*wfp_open)(void *ctx, bool dynamic, void **ret, char *why, size_t n_why);
	void (*wfp_close)(void *ctx, void *engine);
	int (*wfp_begin)(void *ctx, void *engine, char *why, size_t n_why);
	int (*wfp_commit)(void *ctx, void *engine, char *why, size_t n_why);
	void (*wfp_abort)(void *ctx, void *engine);
	/* FwpmProviderAdd0 / FwpmSubLayerAdd0 (persistent when @p->persistent);
	 * an existing one with the same key is success. */
	int (*wfp_add_provider)(void *ctx, void *engine, const WinWfpPlan *p, char *why,
				size_t n_why);
	int (*wfp_add_sublayer)(void *ctx, void *engine, const WinWfpPlan *p, char *why,
				size_t n_why);
	/* FwpmFilterAdd0 of one planned filter. */
	int (*wfp_add_filter)(void *ctx, void *engine, const WinWfpPlan *p, const WinWfpFilter *f,
			      char *why, size_t n_why);
	/* FwpmFilterGetByKey0, converted back; -ENOENT: no such filter. A
	 * condition ward does not know makes the filter unreadable: -EPROTO. */
	int (*wfp_get_filter)(void *ctx, void *engine, const WinGuid *key, WinWfpFilter *ret,
			      char *why, size_t n_why);
	/* FwpmFilterDeleteByKey0 / FwpmSubLayerDeleteByKey0 /
	 * FwpmProviderDeleteByKey0; -ENOENT: not there. */
	int (*wfp_delete_filter)(void *ctx, void *engine, const WinGuid *key);
	int (*wfp_delete_sublayer)(void *ctx, void *engine, const WinGuid *key);
	int (*wfp_delete_provider)(void *ctx, void *engine, const WinGuid *key);
	/* NetworkIsolationGetAppContainerConfig / ...SetAppContainerConfig:
	 * the loopback-exempt AppContainer SIDs, the whole list. */
	int (*loopback_get)(void *ctx, char ***ret, char *why, size_t n_why);
	int (*loopback_set)(void *ctx, char *const *sids, char *why, size_t n_why);
	/* The network journal (win-net-journal.h): read whole (-ENOENT: none),
	 * append (on disk before it returns), replace whole (NULL: delete). */
	int (*journal_read)(void *ctx, char **ret);
	int (*journal_append)(void *ctx, const char *text);
	int (*journal_replace)(void *ctx, const char *text);
} WinNetApi;
