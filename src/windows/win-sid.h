/* Security identifiers as data: parse and format the "S-1-5-32-544" string
 * form, compare, and derive the AppContainer package SID and capability
 * SIDs from names the way Windows documents it (SHA-256 of the UTF-16LE
 * name). Pure: no <windows.h>; the Win32 layer converts with
 * ConvertStringSidToSidW and the plan layer compares strings it produced. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIN_SID_MAX_SUB 15          /* SID_MAX_SUB_AUTHORITIES */
#define WIN_SID_STRING_MAX 192      /* "S-1-" + 48-bit authority + 15 x "-4294967295" */

typedef struct WinSid {
	uint8_t revision;           /* always 1 */
	uint64_t authority;         /* 48 bits */
	uint8_t n_sub;
	uint32_t sub[WIN_SID_MAX_SUB];
} WinSid;

/* Parse "S-1-<authority>-<sub>...". Refuses anything else: revision other
 * than 1, an authority above 2^48-1, a sub-authority above 2^32-1, more
 * than 15 sub-authorities, signs, spaces, empty or leading-zero-padded
 * numbers are all -EINVAL. SDDL's two-letter aliases are not SIDs here
 * (win-acl.c maps them). Hex authorities ("0x...") are accepted, as
 * ConvertStringSidToSid does for authorities >= 2^32. */
int win_sid_parse(const char *s, WinSid *ret);
/* Format as Windows does (decimal authority below 2^32, else 0x%012llX). */
void win_sid_format(const WinSid *sid, char ret[WIN_SID_STRING_MAX]);
bool win_sid_equal(const WinSid *a, const WinSid *b);
/* Canonicalise a string SID through parse+format; -EINVAL if invalid. */
int win_sid_normalize(const char *s, char ret[WIN_SID_STRING_MAX]);

/* DeriveAppContainerSidFromAppContainerName: S-1-15-2- and the first 28
 * bytes of SHA-256(UTF-16LE(lowercase(name))) as seven little-endian
 * dwords. @name: 1..64 characters of [A-Za-z0-9._-] (what
 * CreateAppContainerProfile accepts for a ward profile); else -EINVAL. */
int win_sid_appcontainer(const char *name, WinSid *ret);
/* DeriveCapabilitySidsFromName's capability SID: the well-known
 * S-1-15-3-<rid> for the documented capabilities (internetClient = 1,
 * internetClientServer = 2, privateNetworkClientServer = 3, ...), else
 * S-1-15-3-1024- and SHA-256(UTF-16LE(uppercase(name))) as eight dwords. */
int win_sid_capability(const char *name, WinSid *ret);

/* Well-known SIDs the plans use. */
extern const char WIN_SID_EVERYONE[];            /* S-1-1-0 */
extern const char WIN_SID_ALL_APP_PACKAGES[];    /* S-1-15-2-1 */
extern const char WIN_SID_INTEGRITY_LOW[];       /* S-1-16-4096 */
extern const char WIN_SID_INTEGRITY_MEDIUM[];    /* S-1-16-8192 */
/* Stands for the logon SID of the running session in a plan; the executor
 * resolves it from its own token (TokenLogonSid) and the read-back compares
 * against that. Not a valid SID string on purpose. */
extern const char WIN_SID_LOGON_PLACEHOLDER[];   /* "LOGON" */
