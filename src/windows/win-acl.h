/* Discretionary ACLs and mandatory labels as data: SDDL in and out, the
 * change a plan makes (ACEs for ward's SIDs added or removed) merged in
 * canonical order, and the read-back check that the object's ACL now is
 * what the plan said. The Win32 layer only converts SDDL to and from
 * security descriptors (ConvertStringSecurityDescriptorToSecurityDescriptorW
 * and back); every decision about an ACL is made here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "windows/win-sid.h"

/* Access masks (winnt.h), as ward uses them on files and directories. */
#define WIN_FILE_READ        UINT32_C(0x00120089) /* FILE_GENERIC_READ, SDDL "FR" */
#define WIN_FILE_READ_EXEC   UINT32_C(0x001200A9) /* FR | FILE_GENERIC_EXECUTE */
#define WIN_FILE_MODIFY      UINT32_C(0x001301BF) /* icacls "M": read, write, execute, delete */
#define WIN_FILE_ALL         UINT32_C(0x001F01FF) /* FILE_ALL_ACCESS, "FA" */
/* Every right that changes an object: data, attributes, EAs, delete,
 * delete-child, the DACL and the owner. A deny ACE with it leaves reading. */
#define WIN_FILE_DENY_WRITE  UINT32_C(0x000D0156)
#define WIN_LABEL_NO_WRITE_UP UINT32_C(0x1)       /* SYSTEM_MANDATORY_LABEL_NO_WRITE_UP, "NW" */

/* ACE flags (winnt.h values). */
enum {
	WIN_ACE_OI = 0x01, /* OBJECT_INHERIT_ACE */
	WIN_ACE_CI = 0x02, /* CONTAINER_INHERIT_ACE */
	WIN_ACE_NP = 0x04, /* NO_PROPAGATE_INHERIT_ACE */
	WIN_ACE_IO = 0x08, /* INHERIT_ONLY_ACE */
	WIN_ACE_ID = 0x10, /* INHERITED_ACE */
};

typedef enum WinAceType {
	WIN_ACE_ALLOW,       /* "A" */
	WIN_ACE_DENY,        /* "D" */
	WIN_ACE_LABEL,       /* "ML", in the SACL */
	WIN_ACE_OTHER_ALLOW, /* object/callback allow kinds, kept verbatim */
	WIN_ACE_OTHER_DENY,  /* object/callback deny kinds, kept verbatim */
	_WIN_ACE_TYPE_MAX,
	_WIN_ACE_TYPE_INVALID = -22,
} WinAceType;

typedef struct WinAce {
	WinAceType type;
	uint8_t flags;
	uint32_t mask;
	char sid[WIN_SID_STRING_MAX]; /* canonical "S-1-..." */
	char *raw;                    /* OTHER kinds: the "(...)" text, else NULL */
} WinAce;

typedef struct WinAcl {
	WinAce *aces;
	size_t n;
	bool protected_;  /* "P": not inheriting from the parent */
	bool auto_inherited; /* "AI" */
} WinAcl;

void win_acl_done(WinAcl *acl);
int win_acl_append(WinAcl *acl, WinAceType type, uint8_t flags, uint32_t mask, const char *sid);

/* Parse the "D:" part (or, with @label, the "S:" part) of an SDDL string;
 * owner and group parts are skipped. A missing part is an empty ACL. SID
 * aliases (SY, BA, WD, AC, ...) and rights aliases (FA, FR, GA, ...) are
 * mapped; an unknown alias, a malformed ACE or a right that is not a
 * number or alias is -EINVAL, so an ACL ward does not understand is
 * never rewritten. */
int win_acl_parse_sddl(const char *sddl, bool label, WinAcl *ret);
/* "D:[P][AI](...)..." (or "S:..." for labels); rights in hex, SIDs as
 * strings. Caller frees. NULL on OOM. */
char *win_acl_format_sddl(const WinAcl *acl, bool label);

/* The change a plan makes to one object's DACL: every explicit ACE whose
 * SID is in @remove_sids goes, then @add is added. */
typedef struct WinAclChange {
	char **remove_sids;
	const WinAce *add;
	size_t n_add;
} WinAclChange;

/* @cur with @chg applied, in canonical order: explicit deny, explicit
 * allow, then the inherited ACEs in their original order (inherited ACEs
 * are never touched). Into @ret (win_acl_done it). */
int win_acl_apply_change(const WinAcl *cur, const WinAclChange *chg, WinAcl *ret);
/* The same on SDDL text: @sddl's DACL with @chg applied, formatted, into
 * @ret (caller frees). -EINVAL when @sddl is not a DACL ward understands
 * (win_acl_parse_sddl), -ENOMEM. */
int win_acl_change_sddl(const char *sddl, const WinAclChange *chg, char **ret);
/* Canonical order, as above. */
bool win_acl_is_canonical(const WinAcl *acl);
/* The read-back: the explicit ACEs of @observed for the SIDs in
 * @chg->remove_sids must be exactly @chg->add (same type, flags, mask;
 * order free) and @observed must be canonical. 0, or -EPERM with a reason
 * in @why. */
int win_acl_check(const WinAcl *observed, const WinAclChange *chg, char *why, size_t n_why);
