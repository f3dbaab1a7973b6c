/* The elevated sandbox-user tier's setup (seed 2), as data: what
 * ward-setup.exe must do on this host, decided from what it observed, and
 * the journal that undoes it. Pure: the Win32 layer observes and applies
 * (win32-setup.c), the executor (win-setup-exec.c) reads every step back.
 *
 * Steps, in order:
 *   sid          the synthetic "sandbox-write" SID, if missing: a
 *                capability-style SID derived from a random install id,
 *                kept in <state>\sandbox-sid (not a secret)
 *   user         a local user, offline or online, created if missing
 *                (random 24-character password), or its password reset when
 *                the credential record is lost
 *   hide         the user hidden from the sign-in screen (Winlogon
 *                SpecialAccounts\UserList\<name> = 0)
 *   credentials  both users' passwords, DPAPI-encrypted for the user who runs
 *                setup (CryptProtectData, user scope), in a file whose DACL
 *                holds only that user, SYSTEM and Administrators
 *   walls        persistent WFP filters on the offline user's SID (win-wfp.h
 *                with WIN_WFP_USER): nothing goes out; and a Windows
 *                Firewall rule (INetFwPolicy2) blocking every outbound
 *                connection of that user (WinFwRule), read back. Then
 *                the online user's: the same filters with the two
 *                permits to TCP 127.0.0.1 / ::1 port
 *                WIN_SETUP_ONLINE_PROXY_PORT, the port ward.exe's proxy
 *                binds for that user's runs (win_setup_walls_plan())
 *   read-acl     best effort, after the rest reports ready: a read+execute
 *                ACE for both users on the user's profile, the Windows
 *                directory, Program Files (both), ProgramData; each reported,
 *                a failure never fails setup */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "windows/win-sid.h"
#include "windows/win-wfp.h"

#define WIN_SETUP_OFFLINE_USER "WardSandboxOffline"
#define WIN_SETUP_ONLINE_USER "WardSandboxOnline"
#define WIN_SETUP_PASSWORD_LEN 24
#define WIN_SETUP_MAX_STEPS 24
/* The loopback port the online user's walls let through, and the one
 * ward.exe's proxy binds (exclusively, on 127.0.0.1 and ::1) for a
 * sandbox-user run with network.mode proxy. Fixed, because the filters
 * are persistent and ward.exe never elevated cannot add a per-run one;
 * below Windows's dynamic port range (49152-65535), so no ephemeral bind
 * lands on it. docs/windows.md "The online user". */
#define WIN_SETUP_ONLINE_PROXY_PORT 47329

typedef enum WinSetupKind {
	WIN_SETUP_SID,
	WIN_SETUP_USER,
	WIN_SETUP_HIDE,
	WIN_SETUP_CREDENTIALS,
	WIN_SETUP_WALLS,
	WIN_SETUP_READ_ACL,
	_WIN_SETUP_KIND_MAX,
} WinSetupKind;

typedef struct WinSetupStep {
	WinSetupKind kind;
	int user;              /* 0 offline, 1 online (user, hide, walls) */
	bool create;           /* user: create (else reset the password) */
	char *path;            /* read-acl: the directory; sid, credentials: the file */
} WinSetupStep;

/* What the Win32 layer saw before planning. */
typedef struct WinSetupSeen {
	char synthetic_sid[WIN_SID_STRING_MAX]; /* "": none yet */
	bool exists[2];        /* offline, online */
	bool hidden[2];
	bool credentials_ok;   /* the record decrypts and holds both users */
} WinSetupSeen;

typedef struct WinSetupInput {
	const WinSetupSeen *seen;
	const char *state_dir;        /* %LOCALAPPDATA%\ward of the user running setup */
	char *const *read_dirs;       /* profile, Windows, Program Files..., ProgramData */
} WinSetupInput;

typedef struct WinSetupPlan {
	WinSetupStep steps[WIN_SETUP_MAX_STEPS];
	size_t n;
	char *sid_file;
	char *cred_file;
} WinSetupPlan;

extern const char *const WIN_SETUP_USERS[2];

const char *win_setup_kind_name(WinSetupKind k);
/* -EINVAL: a state dir or read dir that does not normalize, too many dirs. */
int win_setup_plan(const WinSetupInput *in, WinSetupPlan *ret);
/* The persistent WFP walls of sandbox user @user (0 offline, 1 online)
 * whose SID is @sid: what ward-setup.exe adds and ward.exe reads back
 * before each run, from this one function so they cannot disagree. The
 * offline user: nothing goes out. The online user: only TCP to
 * 127.0.0.1 / ::1 port WIN_SETUP_ONLINE_PROXY_PORT. -EINVAL: a bad user
 * or a SID that is not a user's. */
int win_setup_walls_plan(int user, const char *sid, WinWfpPlan *ret);
void win_setup_plan_done(WinSetupPlan *p);

/* 24 characters from @rnd (24 random bytes): an upper-case letter, a
 * lower-case letter, a digit and a symbol first (Windows's complexity
 * rule), then 20 from a 64-character alphabet (6 bits each). */
void win_setup_password(const uint8_t rnd[WIN_SETUP_PASSWORD_LEN], char ret[WIN_SETUP_PASSWORD_LEN + 1]);
/* The synthetic SID for install id @id (16 hex digits). */
int win_setup_synthetic_sid(const char *id, char ret[WIN_SID_STRING_MAX]);

/* The credential record (before DPAPI): "ward-sandbox-credentials 1\n"
 * then "<user>\t<password>\n" for each. Parse refuses anything else. */
int win_setup_creds_format(const char *const pw[2], char **ret);
int win_setup_creds_parse(const char *text, char pw[2][WIN_SETUP_PASSWORD_LEN + 1]);

/* The DACL of the credential file: protected (no inheritance), full
 * control for SYSTEM, Administrators and @owner only; the sandbox users
 * hold nothing. */
int win_setup_cred_sddl(const char *owner, char **ret);
/* Whether the DACL read back is exactly that (any order). */
int win_setup_cred_check(const char *sddl, const char *owner, char *why, size_t n_why);

/* The setup journal (%LOCALAPPDATA%\ward\setup.journal), appended before
 * each change; --uninstall undoes it backwards:
 *   ward-windows-setup 1
 *   file	<path>           a file setup wrote: deleted
 *   user	<name>           a user setup created: deleted (an existing one never)
 *   hide	<name>           the UserList value setup set: deleted
 *   acl	<path>	<sid>...  remove every explicit ACE for these SIDs
 *   fwrule	<name>         the firewall rule setup added: removed
 * The persistent WFP filters are in the network journal (win-net-journal.h). */
typedef enum WinSetupJournalKind {
	WIN_SETUPJ_FILE,
	WIN_SETUPJ_USER,
	WIN_SETUPJ_HIDE,
	WIN_SETUPJ_ACL,
	WIN_SETUPJ_FWRULE,
	_WIN_SETUPJ_KIND_MAX,
} WinSetupJournalKind;

typedef struct WinSetupJournalEntry {
	WinSetupJournalKind kind;
	char *arg;
	char *sids;             /* acl: space-separated */
} WinSetupJournalEntry;

extern const char WIN_SETUP_JOURNAL_HEADER[];

int win_setup_journal_line(WinSetupJournalKind kind, const char *arg, const char *sids, char **ret);
/* A truncated last line is ignored; anything else malformed: -EINVAL. */
int win_setup_journal_parse(const char *text, WinSetupJournalEntry **ret, size_t *n);
void win_setup_journal_free(WinSetupJournalEntry *e, size_t n);

/* The offline user's Windows Firewall rule (the firewall variant of the
 * walls, seed 2): outbound, block, enabled, every profile, any protocol,
 * for that user only (INetFwRule3's LocalUserAuthorizedList, an SDDL
 * granting the user's SID). */
#define WIN_SETUP_FW_RULE_NAME "ward sandbox: WardSandboxOffline outbound blocked"
#define WIN_FW_PROFILES_ALL 0x7fffffff /* NET_FW_PROFILE2_ALL */
#define WIN_FW_PROTOCOL_ANY 256        /* NET_FW_IP_PROTOCOL_ANY */

typedef struct WinFwRule {
	char name[64];
	char users[WIN_SID_STRING_MAX + 32]; /* "O:LSD:(A;;CC;;;<sid>)" */
	bool outbound;
	bool block;
	bool enabled;
	int32_t profiles;
	int32_t protocol;
} WinFwRule;

/* The rule for user @sid. -EINVAL: not a SID. */
int win_setup_fw_rule(const char *sid, WinFwRule *ret);
/* A rule read back must be exactly the planned one (the user list
 * compared as parsed SDDL: the same single SID). 0 or -EPERM with @why. */
int win_setup_fw_check(const WinFwRule *want, const WinFwRule *seen, char *why, size_t n_why);
