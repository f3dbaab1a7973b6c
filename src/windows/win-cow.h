/* Copy-on-write on Windows (seed 1's --cow), the redirect decision as
 * data. The session's workspace is read-only to the sandbox identity by
 * its ACL (the boundary); the redirector DLL in the child
 * (ward-redirect.dll, src/windows/redirect/) hooks NtCreateFile/NtOpenFile
 * and the other file calls and asks this function, per open, where the
 * open goes. Pure: the DLL supplies the path as the hook sees
 * it, the access and disposition asked for, and what the session has
 * (an upper copy, a whiteout); the answer says where to go.
 *
 * The DLL is convenience, never the boundary: a process that bypasses it
 * (direct system calls, OpenFileById, a path form it cannot map, a child
 * it was not injected into) meets the read-only ACL and gets
 * ACCESS_DENIED; nothing reaches the workspace. docs/windows.md
 * "Copy-on-write" lists what it does not cover. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef enum WinCowAction {
	WIN_COW_PASS,        /* leave the open as it is (outside the workspace, or a
	                      * read of an unchanged file) */
	WIN_COW_REDIRECT,    /* open the upper copy instead (create it there if the
	                      * disposition creates; parent directories made first) */
	WIN_COW_COPY_UP,     /* copy the workspace file to the upper, then redirect */
	WIN_COW_NOT_FOUND,   /* deleted in this session (a whiteout): STATUS_OBJECT_NAME_NOT_FOUND */
	WIN_COW_MERGE,       /* a directory listing: upper + workspace - whiteouts */
	WIN_COW_DENY,        /* STATUS_ACCESS_DENIED: protected path, short name,
	                      * stream, hard link, a move out of the workspace */
	_WIN_COW_ACTION_MAX,
} WinCowAction;

/* The access bits that change a file (NT ACCESS_MASK). */
#define WIN_COW_WRITE_ACCESS                                                                       \
	(UINT32_C(0x00000002) /* FILE_WRITE_DATA */ | UINT32_C(0x00000004) /* APPEND */ |          \
	 UINT32_C(0x00000010) /* WRITE_EA */ | UINT32_C(0x00000100) /* WRITE_ATTRIBUTES */ |       \
	 UINT32_C(0x00010000) /* DELETE */ | UINT32_C(0x00040000) /* WRITE_DAC */ |                \
	 UINT32_C(0x00080000) /* WRITE_OWNER */ | UINT32_C(0x02000000) /* MAXIMUM_ALLOWED */ |     \
	 UINT32_C(0x10000000) /* GENERIC_ALL */ | UINT32_C(0x40000000) /* GENERIC_WRITE */)

/* NtCreateFile's CreateDisposition. */
enum {
	WIN_FILE_SUPERSEDE = 0,
	WIN_FILE_OPEN = 1,
	WIN_FILE_CREATE = 2,
	WIN_FILE_OPEN_IF = 3,
	WIN_FILE_OVERWRITE = 4,
	WIN_FILE_OVERWRITE_IF = 5,
};
#define WIN_FILE_DIRECTORY_FILE UINT32_C(0x00000001)
#define WIN_FILE_DELETE_ON_CLOSE UINT32_C(0x00001000)

typedef struct WinCowSession {
	const char *workspace;     /* normalized */
	const char *upper;         /* normalized, outside the workspace */
	char *const *protected_;   /* relative names (".git", ".codex", ...) */
} WinCowSession;

typedef struct WinCowOpen {
	const char *path;          /* as the hook sees it: "\??\C:\ws\f", or Win32 form */
	uint32_t access;
	uint32_t disposition;
	uint32_t options;          /* FILE_DIRECTORY_FILE, FILE_DELETE_ON_CLOSE */
	bool in_upper;             /* the session already has an upper copy */
	bool whiteout;             /* the session deleted it */
	bool in_workspace;         /* the workspace has it */
	bool is_directory;         /* what exists is a directory */
} WinCowOpen;

typedef struct WinCowDecision {
	WinCowAction action;
	char *target;              /* REDIRECT, COPY_UP: the upper path (caller frees) */
	const char *why;           /* DENY: the reason */
} WinCowDecision;

const char *win_cow_action_name(WinCowAction a);
/* "\??\C:\x" -> "C:\x", "\??\UNC\s\sh\x" -> "\\s\sh\x", Win32 forms as
 * win_path_normalize; -EINVAL for forms the hook cannot map
 * ("\Device\...", "\??\GLOBALROOT\..."). New string in @ret. */
int win_cow_path(const char *nt, char **ret);
/* The decision; -ENOMEM only. */
int win_cow_decide(const WinCowSession *s, const WinCowOpen *o, WinCowDecision *ret);
/* A rename or hard link from @src to @dst (NtSetInformationFile). */
int win_cow_decide_rename(const WinCowSession *s, const char *src, const char *dst, bool link,
			  WinCowDecision *ret);
