/* Directory listings of the merged view: NtQueryDirectoryFile(Ex) on a
 * handle to a workspace directory that the session changed (it has an
 * upper directory, or whiteouts below it) answers from a list built once
 * per handle: the workspace's entries less the whiteouted ones and those
 * the upper has, then the upper's entries. NtClose drops the list.
 *
 * Only synchronous queries (no event, no APC) in the information classes
 * whose layout is known here (Directory, FullDirectory, BothDirectory,
 * Names, IdBothDirectory, IdFullDirectory) are merged; anything else
 * gets the workspace's own listing, as a query on a directory the session
 * did not change always does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <winternl.h>

#include "windows/redirect/redirect.h"
#include "windows/win-path.h"

#define ST_NO_MORE_FILES ((NTSTATUS)0x80000006L)
#define ST_NO_SUCH_FILE ((NTSTATUS)0xC000000FL)
#define ST_BUFFER_TOO_SMALL ((NTSTATUS)0xC0000023L)
#define ST_PENDING ((NTSTATUS)0x00000103L)

typedef BOOLEAN(NTAPI *NameInExprFn)(PUNICODE_STRING, PUNICODE_STRING, BOOLEAN, PWCH);

RedirectQueryDirFn redirect_o_querydir;
RedirectQueryDirExFn redirect_o_querydir_ex;
RedirectCloseFn redirect_o_close;
static NameInExprFn name_in_expr;

/* Where FileNameLength and FileName sit in an entry of class @cls; 0 for
 * a class not merged. */
static int name_offsets(ULONG cls, size_t *len_at, size_t *name_at)
{
	switch (cls) {
	case 1: *len_at = 60, *name_at = 64; return 1;   /* FileDirectoryInformation */
	case 2: *len_at = 60, *name_at = 68; return 1;   /* FileFullDirectoryInformation */
	case 3: *len_at = 60, *name_at = 94; return 1;   /* FileBothDirectoryInformation */
	case 12: *len_at = 8, *name_at = 12; return 1;   /* FileNamesInformation */
	case 37: *len_at = 60, *name_at = 104; return 1; /* FileIdBothDirectoryInformation */
	case 38: *len_at = 60, *name_at = 80; return 1;  /* FileIdFullDirectoryInformation */
	default: return 0;
	}
}

typedef struct Listing {
	HANDLE h;
	ULONG cls;
	BYTE **items;   /* entries, NextEntryOffset 0 */
	ULONG *sizes;
	size_t n, pos;
} Listing;

#define MAX_LISTINGS 64
static Listing listings[MAX_LISTINGS];
static CRITICAL_SECTION lock;

void redirect_dir_init(void)
{
	InitializeCriticalSection(&lock);
	name_in_expr = (NameInExprFn)(void *)GetProcAddress(GetModuleHandleW(L"ntdll.dll"),
							     "RtlIsNameInExpression");
}

static void listing_free(Listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i]);
	free(l->items);
	free(l->sizes);
	memset(l, 0, sizeof(*l));
}

static char *utf8(const WCHAR *w, size_t n)
{
	int m = WideCharToMultiByte(CP_UTF8, 0, w, (int)n, NULL, 0, NULL, NULL);
	char *s = malloc((size_t)m + 1);

	if (!s)
		return NULL;
	WideCharToMultiByte(CP_UTF8, 0, w, (int)n, s, m, NULL, NULL);
	s[m] = 0;
	return s;
}

static bool dot(const WCHAR *n, ULONG bytes)
{
	return (bytes == 2 && n[0] == L'.') || (bytes == 4 && n[0] == L'.' && n[1] == L'.');
}

/* Whether the upper or the whiteout tree has @rel: the name is the
 * session's, not the workspace's. */
static bool session_has(const char *dir_rel, const WCHAR *name, ULONG bytes, bool *whiteout)
{
	char *n = utf8(name, bytes / sizeof(WCHAR)), *rel = NULL, *up = NULL;
	bool has = false;

	*whiteout = false;
	if (!n)
		return false;
	rel = malloc(strlen(dir_rel) + strlen(n) + 2);
	if (rel) {
		strcpy(rel, dir_rel);
		if (*dir_rel)
			strcat(rel, "\\");
		strcat(rel, n);
		*whiteout = redirect_whiteout_covers(rel);
		up = malloc(strlen(redirect_cfg.session.upper) + strlen(rel) + 2);
		if (up) {
			WCHAR w[4096];

			strcpy(up, redirect_cfg.session.upper);
			strcat(up, "\\");
			strcat(up, rel);
			if (MultiByteToWideChar(CP_UTF8, 0, up, -1, w, 4096) > 0)
				has = GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES;
		}
	}
	free(n);
	free(rel);
	free(up);
	return has;
}

static int push(Listing *l, const BYTE *e, ULONG size)
{
	BYTE *c = malloc(size);
	void *t1 = realloc(l->items, (l->n + 1) * sizeof(*l->items));

	if (t1)
		l->items = t1;
	t1 = realloc(l->sizes, (l->n + 1) * sizeof(*l->sizes));
	if (t1)
		l->sizes = t1;
	if (!c || !t1) {
		free(c);
		return -1;
	}
	memcpy(c, e, size);
	*(ULONG *)c = 0;
	l->items[l->n] = c;
	l->sizes[l->n++] = size;
	return 0;
}

/* Add every entry of the directory @h to @l (from the start), keeping
 * those @keep says. */
static int collect(HANDLE h, ULONG cls, PUNICODE_STRING mask, Listing *l, const char *dir_rel,
		   bool workspace)
{
	size_t len_at, name_at;
	BYTE *buf = malloc(64 * 1024);
	BOOLEAN restart = TRUE;

	if (!buf || !name_offsets(cls, &len_at, &name_at)) {
		free(buf);
		return -1;
	}
	for (;;) {
		IO_STATUS_BLOCK io = { 0 };
		NTSTATUS s = redirect_o_querydir(h, NULL, NULL, NULL, &io, buf, 64 * 1024, cls, FALSE,
						 NULL, restart);
		BYTE *e = buf;

		restart = FALSE;
		if (s == ST_NO_MORE_FILES || s == ST_NO_SUCH_FILE)
			break;
		if (s < 0 || s == ST_PENDING) {
			free(buf);
			return -1;
		}
		for (;;) {
			ULONG next = *(ULONG *)e, nlen = *(ULONG *)(e + len_at);
			WCHAR *nm = (WCHAR *)(e + name_at);
			UNICODE_STRING us = { (USHORT)nlen, (USHORT)nlen, nm };
			bool wh = false, keep = true;

			if (workspace && !dot(nm, nlen) && session_has(dir_rel, nm, nlen, &wh))
				keep = false; /* the upper's entry stands for it */
			if (workspace && wh)
				keep = false;
			if (!workspace && dot(nm, nlen))
				keep = false; /* the workspace's . and .. */
			if (keep && mask && mask->Length && name_in_expr &&
			    !(mask->Length == 2 && mask->Buffer[0] == L'*') &&
			    !name_in_expr(mask, &us, TRUE, NULL))
				keep = false;
			if (keep && push(l, e, (ULONG)(name_at + nlen)) < 0) {
				free(buf);
				return -1;
			}
			if (!next)
				break;
			e += next;
		}
	}
	free(buf);
	return 0;
}

/* The session's part of @dir_rel: its upper directory, whiteouts under it. */
static bool session_touched(const char *dir_rel, HANDLE *ret_upper)
{
	char *up = malloc(strlen(redirect_cfg.session.upper) + strlen(dir_rel) + 2),
	     *wh = malloc(strlen(redirect_cfg.whiteout) + strlen(dir_rel) + 2);
	WCHAR w[4096];
	bool touched = false;

	*ret_upper = NULL;
	if (up && wh) {
		sprintf(up, *dir_rel ? "%s\\%s" : "%s%s", redirect_cfg.session.upper, dir_rel);
		sprintf(wh, *dir_rel ? "%s\\%s" : "%s%s", redirect_cfg.whiteout, dir_rel);
		if (MultiByteToWideChar(CP_UTF8, 0, wh, -1, w, 4096) > 0 &&
		    GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES)
			touched = true;
		if (MultiByteToWideChar(CP_UTF8, 0, up, -1, w, 4096) > 0 &&
		    GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES) {
			touched = true;
			*ret_upper = CreateFileW(w, FILE_LIST_DIRECTORY | SYNCHRONIZE,
						 FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
						 NULL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
			if (*ret_upper == INVALID_HANDLE_VALUE)
				*ret_upper = NULL;
		}
	}
	free(up);
	free(wh);
	return touched;
}

/* Serve entries from @l into the caller's buffer. */
static NTSTATUS serve(Listing *l, PIO_STATUS_BLOCK io, BYTE *out, ULONG len, bool single,
		      bool first)
{
	ULONG used = 0, prev = 0;
	bool any = false;

	while (l->pos < l->n) {
		ULONG size = l->sizes[l->pos], at = (used + 7) & ~7u;

		if (at + size > len)
			break;
		if (any)
			*(ULONG *)(out + prev) = at - prev;
		memcpy(out + at, l->items[l->pos], size);
		prev = at;
		used = at + size;
		any = true;
		l->pos++;
		if (single)
			break;
	}
	if (!any) {
		NTSTATUS s = l->pos < l->n ? ST_BUFFER_TOO_SMALL
			     : first      ? ST_NO_SUCH_FILE
					  : ST_NO_MORE_FILES;

		io->Status = s;
		io->Information = 0;
		return s;
	}
	io->Status = 0;
	io->Information = used;
	return 0;
}

static NTSTATUS merged(HANDLE h, HANDLE event, PVOID apc, PIO_STATUS_BLOCK io, PVOID out, ULONG len,
		       ULONG cls, bool single, PUNICODE_STRING mask, bool restart, bool *handled)
{
	char *p = NULL, *norm = NULL;
	const char *rel;
	size_t a, b, slot = MAX_LISTINGS, fresh = MAX_LISTINGS;
	NTSTATUS s = 0;
	HANDLE upper = NULL;

	*handled = false;
	if (event || apc || !name_offsets(cls, &a, &b))
		return 0;
	EnterCriticalSection(&lock);
	for (size_t i = 0; i < MAX_LISTINGS; i++) {
		if (listings[i].h == h)
			slot = i;
		if (!listings[i].h && fresh == MAX_LISTINGS)
			fresh = i;
	}
	if (slot != MAX_LISTINGS && !restart && listings[slot].cls == cls) {
		*handled = true;
		s = serve(&listings[slot], io, out, len, single, false);
		LeaveCriticalSection(&lock);
		return s;
	}
	if (slot != MAX_LISTINGS)
		listing_free(&listings[slot]);
	else
		slot = fresh;
	LeaveCriticalSection(&lock);
	if (slot == MAX_LISTINGS)
		return 0;
	p = redirect_handle_path(h);
	if (!p || win_path_normalize(p, &norm, NULL) < 0 || !(rel = redirect_ws_rel(norm)) ||
	    !session_touched(rel, &upper)) {
		free(p);
		free(norm);
		if (upper)
			CloseHandle(upper);
		return 0;
	}
	{
		Listing l = { .h = h, .cls = cls };

		if (collect(h, cls, mask, &l, rel, true) < 0 ||
		    (upper && collect(upper, cls, mask, &l, rel, false) < 0)) {
			listing_free(&l);
		} else {
			EnterCriticalSection(&lock);
			if (!listings[slot].h) {
				listings[slot] = l;
				*handled = true;
				s = serve(&listings[slot], io, out, len, single, true);
			} else
				listing_free(&l);
			LeaveCriticalSection(&lock);
		}
	}
	if (upper)
		CloseHandle(upper);
	free(p);
	free(norm);
	return s;
}

NTSTATUS NTAPI redirect_h_querydir(HANDLE h, HANDLE event, PVOID apc, PVOID ctx,
				   PIO_STATUS_BLOCK io, PVOID out, ULONG len, ULONG cls,
				   BOOLEAN single, PUNICODE_STRING mask, BOOLEAN restart)
{
	bool handled = false;
	NTSTATUS s = 0;

	if (redirect_enter()) {
		s = merged(h, event, apc, io, out, len, cls, single, mask, restart, &handled);
		redirect_leave();
	}
	return handled ? s
		       : redirect_o_querydir(h, event, apc, ctx, io, out, len, cls, single, mask,
					     restart);
}

NTSTATUS NTAPI redirect_h_querydir_ex(HANDLE h, HANDLE event, PVOID apc, PVOID ctx,
				      PIO_STATUS_BLOCK io, PVOID out, ULONG len, ULONG cls,
				      ULONG flags, PUNICODE_STRING mask)
{
	bool handled = false;
	NTSTATUS s = 0;

	if (redirect_enter()) {
		/* SL_RESTART_SCAN 1, SL_RETURN_SINGLE_ENTRY 2 */
		s = merged(h, event, apc, io, out, len, cls, flags & 2, mask, flags & 1, &handled);
		redirect_leave();
	}
	return handled ? s : redirect_o_querydir_ex(h, event, apc, ctx, io, out, len, cls, flags, mask);
}

NTSTATUS NTAPI redirect_h_close(HANDLE h)
{
	EnterCriticalSection(&lock);
	for (size_t i = 0; i < MAX_LISTINGS; i++)
		if (listings[i].h == h)
			listing_free(&listings[i]);
	LeaveCriticalSection(&lock);
	return redirect_o_close(h);
}
