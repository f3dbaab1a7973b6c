/* GUIDs as data: parse and format the "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}"
 * form, derive a stable GUID from a name, and the Windows Filtering
 * Platform GUIDs ward uses that mingw-w64 (10.0) does not define, in one
 * place with their source. Pure: no <windows.h>; the Win32 layer copies a
 * WinGuid field by field into a GUID (same layout). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define WIN_GUID_STRING_MAX 39 /* "{" 36 "}" NUL */

typedef struct WinGuid {
	uint32_t d1;
	uint16_t d2;
	uint16_t d3;
	uint8_t d4[8];
} WinGuid;

/* "{c38d57d1-05a7-4c33-904f-7fbceee60e82}", lower-case hex. */
void win_guid_format(const WinGuid *g, char ret[WIN_GUID_STRING_MAX]);
/* The braced form, either case; anything else is -EINVAL. */
int win_guid_parse(const char *s, WinGuid *ret);
bool win_guid_equal(const WinGuid *a, const WinGuid *b);
/* A name-based GUID (RFC 9562 version 8, variant 10): the first 16 bytes
 * of SHA-256("ward\0" @ns "\0" @name). The same inputs give the same key
 * on every run and every machine, so a filter ward added can be found and
 * removed by its key alone. */
void win_guid_from_name(const char *ns, const char *name, WinGuid *ret);

/* Windows Filtering Platform layer and condition keys. Values from
 * Microsoft's fwpmu.h (Windows SDK 10), cross-checked against the
 * windows-rs metadata (Win32::NetworkManagement::WindowsFilteringPlatform);
 * mingw-w64 10's fwpmu.h declares the functions but not these GUIDs. A
 * unit test pins each value. */
extern const WinGuid WIN_FWPM_LAYER_ALE_AUTH_CONNECT_V4;          /* c38d57d1-05a7-4c33-904f-7fbceee60e82 */
extern const WinGuid WIN_FWPM_LAYER_ALE_AUTH_CONNECT_V6;          /* 4a72393b-319f-44bc-84c3-ba54dcb3b6b4 */
extern const WinGuid WIN_FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V4;      /* e1cd9fe7-f4b5-4273-96c0-592e487b8650 */
extern const WinGuid WIN_FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V6;      /* a3b42c97-9f04-4672-b87e-cee9c483257f */
extern const WinGuid WIN_FWPM_LAYER_ALE_RESOURCE_ASSIGNMENT_V4;   /* 1247d66d-0b60-4a15-8d44-7155d0f53a0c */
extern const WinGuid WIN_FWPM_LAYER_ALE_RESOURCE_ASSIGNMENT_V6;   /* 55a650e1-5f0a-4eca-a653-88f53b26aa8c */
extern const WinGuid WIN_FWPM_CONDITION_ALE_PACKAGE_ID;           /* 71bc78fa-f17c-4997-a602-6abb261f351c */
extern const WinGuid WIN_FWPM_CONDITION_ALE_USER_ID;              /* af043a0a-b34d-4f86-979c-c90371af6e66 */
extern const WinGuid WIN_FWPM_CONDITION_IP_REMOTE_ADDRESS;        /* b235ae9a-1d64-49b8-a44c-5ff3d9095045 */
extern const WinGuid WIN_FWPM_CONDITION_IP_REMOTE_PORT;           /* c35a604d-d22b-4e1a-91b4-68f674ee674b */
extern const WinGuid WIN_FWPM_CONDITION_IP_PROTOCOL;              /* 3971ef2b-623e-4f9a-8cb1-6e79b806b9a7 */

/* ward's own WFP provider and sublayer: fixed, so that `ward.exe cleanup`
 * and a read-back recognise them; each equals win_guid_from_name("wfp",
 * "provider"/"sublayer") (a unit test checks it). */
extern const WinGuid WIN_WARD_WFP_PROVIDER;
extern const WinGuid WIN_WARD_WFP_SUBLAYER;
