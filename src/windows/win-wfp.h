/* The network wall as data: the Windows Filtering Platform filters that
 * confine one identity (an AppContainer package SID, or the sandbox-user
 * tier's user SID) to the egress proxy on loopback and block everything
 * else, raw sockets included. Pure: the plan is a function of its input;
 * the Win32 layer (win32-net.c) converts each filter into an FWPM_FILTER0
 * and the executor (win-net-exec.c) reads every filter back and compares
 * it with the plan through win_wfp_filter_check().
 *
 * The filters, all in a ward sublayer (weight 0xffff) under a ward
 * provider (the fixed WIN_WARD_WFP_* ones for persistent filters; for a
 * dynamic session, its own, derived from the SID, since a session's
 * objects go when it closes), each conditioned on the identity:
 *   proxy-v4 / proxy-v6    ALE_AUTH_CONNECT, PERMIT, weight 15:
 *                          TCP to 127.0.0.1 / ::1, remote port = the proxy's
 *   connect-v4 / -v6       ALE_AUTH_CONNECT, BLOCK, weight 0: every other
 *                          outbound connect and first datagram
 *   accept-v4 / -v6        ALE_AUTH_RECV_ACCEPT, BLOCK, weight 0: inbound
 *   tcp-v4/-v6, udp-v4/-v6 ALE_RESOURCE_ASSIGNMENT, PERMIT, weight 15
 *   raw-v4 / raw-v6        ALE_RESOURCE_ASSIGNMENT, BLOCK, weight 0: a
 *                          socket of any other protocol (raw, ICMP) cannot
 *                          even be bound
 * Without a proxy port the two permits are left out: nothing goes out.
 *
 * Keys are stable: win_guid_from_name("wfp-filter", "<sid>/<name>"), so a
 * persistent filter can be deleted by its key alone and a second add of
 * the same filter is detected. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "windows/win-guid.h"
#include "windows/win-sid.h"

typedef enum WinWfpIdentity {
	WIN_WFP_PACKAGE,   /* FWPM_CONDITION_ALE_PACKAGE_ID = SID (FWP_SID) */
	WIN_WFP_USER,      /* FWPM_CONDITION_ALE_USER_ID: a security descriptor
	                    * "O:LSD:(A;;CC;;;<SID>)" (FWP_SECURITY_DESCRIPTOR_TYPE) */
} WinWfpIdentity;

typedef enum WinWfpLayer {
	WIN_WFP_CONNECT_V4,
	WIN_WFP_CONNECT_V6,
	WIN_WFP_RECV_ACCEPT_V4,
	WIN_WFP_RECV_ACCEPT_V6,
	WIN_WFP_RESOURCE_V4,
	WIN_WFP_RESOURCE_V6,
	_WIN_WFP_LAYER_MAX,
} WinWfpLayer;

typedef enum WinWfpField {
	WIN_WFP_F_PACKAGE,      /* value: sid */
	WIN_WFP_F_USER,         /* value: sddl */
	WIN_WFP_F_REMOTE_V4,    /* value: v4 (host order) */
	WIN_WFP_F_REMOTE_V6,    /* value: v6 */
	WIN_WFP_F_REMOTE_PORT,  /* value: num */
	WIN_WFP_F_PROTOCOL,     /* value: num */
	_WIN_WFP_FIELD_MAX,
} WinWfpField;

typedef struct WinWfpCondition {
	WinWfpField field;      /* always matched FWP_MATCH_EQUAL */
	char text[WIN_SID_STRING_MAX + 32];  /* sid or sddl */
	uint32_t v4;
	uint8_t v6[16];
	uint32_t num;
} WinWfpCondition;

#define WIN_WFP_MAX_CONDITIONS 4
#define WIN_WFP_MAX_FILTERS 12
#define WIN_WFP_NAME_MAX 16

typedef struct WinWfpFilter {
	char name[WIN_WFP_NAME_MAX];   /* "proxy-v4", ... */
	WinGuid key;
	WinWfpLayer layer;
	bool permit;
	uint8_t weight;                /* FWP_UINT8: 0..15 */
	size_t n_cond;
	WinWfpCondition cond[WIN_WFP_MAX_CONDITIONS];
} WinWfpFilter;

typedef struct WinWfpInput {
	WinWfpIdentity identity;
	const char *sid;               /* the package or user SID */
	uint16_t proxy_port;           /* 0: no proxy, block everything */
	bool persistent;               /* the sandbox-user tier's, made by
	                                * ward-setup.exe; else a dynamic session */
} WinWfpInput;

typedef struct WinWfpPlan {
	WinWfpIdentity identity;
	char sid[WIN_SID_STRING_MAX];
	uint16_t proxy_port;
	bool persistent;
	WinGuid provider, sublayer;
	uint16_t sublayer_weight;
	WinWfpFilter filters[WIN_WFP_MAX_FILTERS];
	size_t n;
} WinWfpPlan;

extern const uint16_t WIN_WFP_SUBLAYER_WEIGHT; /* 0xffff */

/* -EINVAL: a SID that does not parse, or one of the wrong kind (a package
 * SID is S-1-15-2-..., a user SID is anything else but S-1-15-*). */
int win_wfp_plan(const WinWfpInput *in, WinWfpPlan *ret);
/* The layer's WFP key. */
const WinGuid *win_wfp_layer_key(WinWfpLayer l);
const char *win_wfp_layer_name(WinWfpLayer l);
/* Compare a filter read back (FwpmFilterGetByKey0, converted) with the
 * plan's: key, layer, action, weight, and the same set of conditions. 0,
 * or -EPERM with what differs in @why. */
int win_wfp_filter_check(const WinWfpFilter *planned, const WinWfpFilter *seen, char *why,
			 size_t n_why);
/* The user condition's security descriptor for @sid. */
int win_wfp_user_sddl(const char *sid, char *ret, size_t n);
