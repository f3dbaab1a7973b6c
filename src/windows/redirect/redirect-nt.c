/* The hooks: NtCreateFile, NtOpenFile, NtQueryAttributesFile,
 * NtQueryFullAttributesFile (a read sees the upper copy, a deleted file is
 * gone), NtSetInformationFile (delete and rename: whiteouts, the new name
 * in the upper, moves out of the workspace and hard links refused),
 * NtDeleteFile. Each maps the path it is given to a Win32 path, asks
 * win_cow_decide() with what the session has (an upper copy, a whiteout,
 * the workspace's file), and carries the answer out: pass, redirect to
 * the upper, copy up first, not found, access denied.
 *
 * Directory listings: redirect-dir.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>
#include <winternl.h>

#include "windows/redirect/redirect.h"
#include "windows/win-path.h"

#define ST_ACCESS_DENIED ((NTSTATUS)0xC0000022L)
#define ST_NOT_FOUND ((NTSTATUS)0xC0000034L)
#define ST_NO_MEMORY ((NTSTATUS)0xC0000017L)
#define NT_OK(s) ((NTSTATUS)(s) >= 0)

typedef NTSTATUS(NTAPI *CreateFileFn)(PHANDLE, ACCESS_MASK, POBJECT_ATTRIBUTES, PIO_STATUS_BLOCK,
				      PLARGE_INTEGER, ULONG, ULONG, ULONG, ULONG, PVOID, ULONG);
typedef NTSTATUS(NTAPI *OpenFileFn)(PHANDLE, ACCESS_MASK, POBJECT_ATTRIBUTES, PIO_STATUS_BLOCK,
				    ULONG, ULONG);
typedef NTSTATUS(NTAPI *QueryAttrFn)(POBJECT_ATTRIBUTES, PVOID);
typedef NTSTATUS(NTAPI *SetInfoFn)(HANDLE, PIO_STATUS_BLOCK, PVOID, ULONG, ULONG);
typedef NTSTATUS(NTAPI *DeleteFileFn)(POBJECT_ATTRIBUTES);

static CreateFileFn o_create;
static OpenFileFn o_open;
static QueryAttrFn o_qattr, o_qfull;
static SetInfoFn o_setinfo;
static DeleteFileFn o_delete;

/* FILE_INFORMATION_CLASS values NtSetInformationFile takes here. */
enum {
	INFO_RENAME = 10,
	INFO_LINK = 11,
	INFO_DISPOSITION = 13,
	INFO_DISPOSITION_EX = 64,
	INFO_RENAME_EX = 65,
	INFO_LINK_EX = 72,
};

typedef struct RenameInfo {
	union {
		BOOLEAN replace;
		ULONG flags;
	};
	HANDLE root;
	ULONG length;
	WCHAR name[1];
} RenameInfo;

static char *utf8_n(const WCHAR *w, size_t n_chars)
{
	int n = WideCharToMultiByte(CP_UTF8, 0, w, (int)n_chars, NULL, 0, NULL, NULL);
	char *s = malloc((size_t)n + 1);

	if (!s)
		return NULL;
	WideCharToMultiByte(CP_UTF8, 0, w, (int)n_chars, s, n, NULL, NULL);
	s[n] = 0;
	return s;
}

static WCHAR *wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
	WCHAR *w = n > 0 ? malloc((size_t)n * sizeof(WCHAR)) : NULL;

	if (w)
		MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n);
	return w;
}

/* The handle's path as "C:\x" (UTF-8), NULL if it has none ward can use. */
char *redirect_handle_path(HANDLE h)
{
	WCHAR buf[4096];
	DWORD n = GetFinalPathNameByHandleW(h, buf, 4096, VOLUME_NAME_DOS);
	const WCHAR *p = buf;

	if (n == 0 || n >= 4096)
		return NULL;
	if (wcsncmp(p, L"\\\\?\\UNC\\", 8) == 0) {
		char *rest = utf8_n(p + 8, n - 8), *s = NULL;

		if (rest && (s = malloc(strlen(rest) + 3)))
			sprintf(s, "\\\\%s", rest);
		free(rest);
		return s;
	}
	if (wcsncmp(p, L"\\\\?\\", 4) == 0)
		p += 4;
	return utf8_n(p, n - (DWORD)(p - buf));
}

/* The path an OBJECT_ATTRIBUTES (or a rename's root + name) names, in the
 * hook's form ("\??\C:\x" or a Win32 path); NULL if it cannot be told. */
static char *object_path(HANDLE root, const WCHAR *name, size_t n_chars)
{
	char *rel = utf8_n(name, n_chars), *base, *s;

	if (!rel || !root)
		return rel;
	base = redirect_handle_path(root);
	s = base ? malloc(strlen(base) + strlen(rel) + 2) : NULL;
	if (s)
		sprintf(s, "%s\\%s", base, rel);
	free(base);
	free(rel);
	return s;
}

static char *oa_path(POBJECT_ATTRIBUTES oa)
{
	if (!oa || !oa->ObjectName || !oa->ObjectName->Buffer)
		return NULL;
	return object_path(oa->RootDirectory, oa->ObjectName->Buffer,
			   oa->ObjectName->Length / sizeof(WCHAR));
}

static char *join(const char *a, const char *b)
{
	char *s = malloc(strlen(a) + strlen(b) + 2);

	if (s)
		sprintf(s, *b ? "%s\\%s" : "%s", a, b);
	return s;
}

static DWORD attrs(const char *path)
{
	WCHAR *w = wide(path);
	DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;

	free(w);
	return a;
}

/* mkdir -p for the directories of @path below @root (which exists). */
static void make_parents(const char *root, const char *path, bool self)
{
	size_t n = strlen(root);
	char *p = strdup(path);

	if (!p)
		return;
	for (char *c = p + n + 1; *c; c++) {
		if (*c != '\\')
			continue;
		*c = 0;
		{
			WCHAR *w = wide(p);

			if (w)
				CreateDirectoryW(w, NULL);
			free(w);
		}
		*c = '\\';
	}
	if (self) {
		WCHAR *w = wide(p);

		if (w)
			CreateDirectoryW(w, NULL);
		free(w);
	}
	free(p);
}

/* Remove the tree @w (the whiteouts of a directory's entries, now covered
 * by the directory's own). */
static void rm_tree(const WCHAR *w)
{
	WIN32_FIND_DATAW fd;
	size_t n = wcslen(w);
	WCHAR *pat = malloc((n + 3) * sizeof(WCHAR));
	HANDLE f;

	if (!pat)
		return;
	memcpy(pat, w, n * sizeof(WCHAR));
	memcpy(pat + n, L"\\*", 3 * sizeof(WCHAR));
	f = FindFirstFileW(pat, &fd);
	if (f != INVALID_HANDLE_VALUE) {
		do {
			WCHAR *c;

			if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L".."))
				continue;
			c = malloc((n + wcslen(fd.cFileName) + 2) * sizeof(WCHAR));
			if (!c)
				continue;
			memcpy(c, w, n * sizeof(WCHAR));
			c[n] = L'\\';
			memcpy(c + n + 1, fd.cFileName, (wcslen(fd.cFileName) + 1) * sizeof(WCHAR));
			if (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
				rm_tree(c);
			else
				DeleteFileW(c);
			free(c);
		} while (FindNextFileW(f, &fd));
		FindClose(f);
	}
	free(pat);
	RemoveDirectoryW(w);
}

static void whiteout_set(const char *rel, bool on)
{
	char *p = join(redirect_cfg.whiteout, rel);
	WCHAR *w;

	if (!p)
		return;
	w = wide(p);
	if (w && on) {
		HANDLE h;

		make_parents(redirect_cfg.whiteout, p, false);
		if (GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES)
			rm_tree(w);
		h = CreateFileW(w, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
		if (h != INVALID_HANDLE_VALUE)
			CloseHandle(h);
	} else if (w && GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES)
		DeleteFileW(w);
	free(w);
	free(p);
}

/* @path (normalized) relative to the workspace, or NULL. */
const char *redirect_ws_rel(const char *path)
{
	const char *ws = redirect_cfg.session.workspace;
	size_t n = strlen(ws);

	if (!win_path_is_within(path, ws) || win_path_is_within(path, redirect_cfg.session.upper))
		return NULL;
	return path[n] == '\\' ? path + n + 1 : path + n;
}

/* A whiteout on @rel or on a directory above it (a deleted directory
 * hides everything under it). */
bool redirect_whiteout_covers(const char *rel)
{
	char *p = join(redirect_cfg.whiteout, rel);
	size_t base = strlen(redirect_cfg.whiteout);
	bool hit = false;

	if (!p)
		return false;
	for (size_t i = strlen(p); !hit && i > base; i--) {
		if (p[i] != 0 && p[i] != '\\')
			continue;
		{
			char c = p[i];
			DWORD a;

			p[i] = 0;
			a = attrs(p);
			hit = a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
			p[i] = c;
		}
	}
	free(p);
	return hit;
}

typedef struct Route {
	WinCowAction action;
	char *rel;          /* relative to the workspace, when inside it */
	char *target;       /* REDIRECT / COPY_UP: the upper path */
	bool whiteout;      /* a whiteout was there */
	UNICODE_STRING us;  /* "\??\<target>" */
	OBJECT_ATTRIBUTES oa;
} Route;

static void route_done(Route *r)
{
	free(r->rel);
	free(r->target);
	free(r->us.Buffer);
}

/* Decide where an open of @oa goes; fills @r. */
static NTSTATUS route(POBJECT_ATTRIBUTES oa, ACCESS_MASK access, ULONG disp, ULONG opts, Route *r)
{
	char *raw = oa_path(oa), *norm = NULL, *up = NULL, *wh = NULL, *wsp = NULL;
	const char *rel;
	WinCowOpen o = { .access = access, .disposition = disp, .options = opts };
	WinCowDecision d = { 0 };
	DWORD a_up, a_ws;

	memset(r, 0, sizeof(*r));
	r->action = WIN_COW_PASS;
	if (!raw || win_cow_path(raw, &norm) < 0 || !(rel = redirect_ws_rel(norm))) {
		free(raw);
		free(norm);
		return 0;
	}
	r->rel = strdup(rel);
	up = join(redirect_cfg.session.upper, rel);
	wh = join(redirect_cfg.whiteout, rel);
	wsp = join(redirect_cfg.session.workspace, rel);
	if (!r->rel || !up || !wh || !wsp) {
		free(raw), free(norm), free(up), free(wh), free(wsp);
		return ST_NO_MEMORY;
	}
	a_up = attrs(up);
	a_ws = attrs(wsp);
	o.path = raw;
	o.in_upper = a_up != INVALID_FILE_ATTRIBUTES;
	o.whiteout = *rel && redirect_whiteout_covers(rel);
	o.in_workspace = a_ws != INVALID_FILE_ATTRIBUTES;
	o.is_directory = (o.in_workspace && (a_ws & FILE_ATTRIBUTE_DIRECTORY)) ||
			 (o.in_upper && (a_up & FILE_ATTRIBUTE_DIRECTORY));
	r->whiteout = o.whiteout;
	if (win_cow_decide(&redirect_cfg.session, &o, &d) < 0) {
		free(raw), free(norm), free(up), free(wh), free(wsp);
		return ST_NO_MEMORY;
	}
	r->action = d.action;
	r->target = d.target;
	/* A directory the workspace has, opened to read or list: the
	 * workspace's (a relative open under it then routes per file). No
	 * merged listing: see the top of this file. */
	if (r->action == WIN_COW_REDIRECT && o.in_workspace && (a_ws & FILE_ATTRIBUTE_DIRECTORY) &&
	    !(access & WIN_COW_WRITE_ACCESS) && disp == WIN_FILE_OPEN &&
	    !(opts & WIN_FILE_DELETE_ON_CLOSE))
		r->action = WIN_COW_PASS;
	if (r->action == WIN_COW_COPY_UP || r->action == WIN_COW_REDIRECT) {
		WCHAR *w;
		size_t n;

		make_parents(redirect_cfg.session.upper, r->target, false);
		if (r->action == WIN_COW_COPY_UP) {
			WCHAR *from = wide(wsp), *to = wide(r->target);

			if (!from || !to || (!CopyFileW(from, to, TRUE) &&
					     GetLastError() != ERROR_FILE_EXISTS)) {
				free(from), free(to);
				free(raw), free(norm), free(up), free(wh), free(wsp);
				/* Never fall back to the workspace file. */
				return ST_ACCESS_DENIED;
			}
			free(from), free(to);
		} else if (o.is_directory && !o.in_upper && o.in_workspace)
			make_parents(redirect_cfg.session.upper, r->target, true);
		w = wide(r->target);
		n = w ? wcslen(w) : 0;
		r->us.Buffer = w ? malloc((n + 5) * sizeof(WCHAR)) : NULL;
		if (!r->us.Buffer) {
			free(w);
			free(raw), free(norm), free(up), free(wh), free(wsp);
			return ST_NO_MEMORY;
		}
		memcpy(r->us.Buffer, L"\\??\\", 4 * sizeof(WCHAR));
		memcpy(r->us.Buffer + 4, w, (n + 1) * sizeof(WCHAR));
		free(w);
		r->us.Length = (USHORT)((n + 4) * sizeof(WCHAR));
		r->us.MaximumLength = r->us.Length + sizeof(WCHAR);
		r->oa = *oa;
		r->oa.RootDirectory = NULL;
		r->oa.ObjectName = &r->us;
	}
	free(raw), free(norm), free(up), free(wh), free(wsp);
	return 0;
}

static bool ws_has(const char *rel);

/* After a redirected open: a name created again loses its whiteout; an
 * open with delete-on-close (how DeleteFileW and RemoveDirectoryW delete)
 * deletes the upper copy when closed, so the workspace's file is hidden
 * by a whiteout from now on. */
static void opened(const Route *r, ULONG opts)
{
	if (opts & WIN_FILE_DELETE_ON_CLOSE) {
		if (ws_has(r->rel))
			whiteout_set(r->rel, true);
	} else if (r->whiteout)
		whiteout_set(r->rel, false);
}

/* The arguments of an NtCreateFile or NtOpenFile call but its object
 * attributes, and which of the two it was. */
typedef struct OpenCall {
	bool create;
	PHANDLE h;
	ACCESS_MASK access;
	PIO_STATUS_BLOCK io;
	PLARGE_INTEGER alloc;
	ULONG fattr, share, disp, opts;
	PVOID ea;
	ULONG ealen;
} OpenCall;

static NTSTATUS call_original(const OpenCall *c, POBJECT_ATTRIBUTES oa)
{
	if (c->create)
		return o_create(c->h, c->access, oa, c->io, c->alloc, c->fattr, c->share, c->disp,
				c->opts, c->ea, c->ealen);
	return o_open(c->h, c->access, oa, c->io, c->share, c->opts);
}

/* What both open hooks do: route the name, then deny, say not found, or
 * make the call on the routed name (noting a copy-up or new entry) or on
 * the caller's. */
static NTSTATUS routed_open(const OpenCall *c, POBJECT_ATTRIBUTES oa)
{
	Route r;
	NTSTATUS s;

	if (!redirect_enter())
		return call_original(c, oa);
	s = route(oa, c->access, c->disp, c->opts, &r);
	if (NT_OK(s)) {
		switch (r.action) {
		case WIN_COW_DENY:
			s = ST_ACCESS_DENIED;
			break;
		case WIN_COW_NOT_FOUND:
			s = ST_NOT_FOUND;
			break;
		case WIN_COW_REDIRECT:
		case WIN_COW_COPY_UP:
			s = call_original(c, &r.oa);
			if (NT_OK(s))
				opened(&r, c->opts);
			break;
		case WIN_COW_PASS:
		case WIN_COW_MERGE:
		case _WIN_COW_ACTION_MAX:
		default:
			s = call_original(c, oa);
		}
	}
	route_done(&r);
	redirect_leave();
	return s;
}

static NTSTATUS NTAPI h_create(PHANDLE h, ACCESS_MASK access, POBJECT_ATTRIBUTES oa,
			       PIO_STATUS_BLOCK io, PLARGE_INTEGER alloc, ULONG fattr, ULONG share,
			       ULONG disp, ULONG opts, PVOID ea, ULONG ealen)
{
	OpenCall c = { .create = true, .h = h, .access = access, .io = io, .alloc = alloc,
		       .fattr = fattr, .share = share, .disp = disp, .opts = opts, .ea = ea,
		       .ealen = ealen };

	return routed_open(&c, oa);
}

/* NtOpenFile is NtCreateFile's FILE_OPEN: routed as one. */
static NTSTATUS NTAPI h_open(PHANDLE h, ACCESS_MASK access, POBJECT_ATTRIBUTES oa,
			     PIO_STATUS_BLOCK io, ULONG share, ULONG opts)
{
	OpenCall c = { .create = false, .h = h, .access = access, .io = io, .share = share,
		       .disp = WIN_FILE_OPEN, .opts = opts };

	return routed_open(&c, oa);
}

static NTSTATUS query_attr(QueryAttrFn fn, POBJECT_ATTRIBUTES oa, PVOID info)
{
	Route r;
	NTSTATUS s;

	if (!redirect_enter())
		return fn(oa, info);
	s = route(oa, FILE_READ_ATTRIBUTES, WIN_FILE_OPEN, 0, &r);
	if (NT_OK(s)) {
		if (r.action == WIN_COW_NOT_FOUND)
			s = ST_NOT_FOUND;
		else if (r.action == WIN_COW_REDIRECT)
			s = fn(&r.oa, info);
		else
			s = fn(oa, info);
	}
	route_done(&r);
	redirect_leave();
	return s;
}

static NTSTATUS NTAPI h_qattr(POBJECT_ATTRIBUTES oa, PVOID info)
{
	return query_attr(o_qattr, oa, info);
}

static NTSTATUS NTAPI h_qfull(POBJECT_ATTRIBUTES oa, PVOID info)
{
	return query_attr(o_qfull, oa, info);
}

/* The workspace-relative name of a handle opened in the upper; NULL if
 * it is not the session's. */
static char *upper_rel(HANDLE h)
{
	char *p = redirect_handle_path(h), *n = NULL, *rel = NULL;
	const char *up = redirect_cfg.session.upper;

	if (p && win_path_normalize(p, &n, NULL) == 0 && win_path_is_within(n, up) &&
	    strlen(n) > strlen(up))
		rel = strdup(n + strlen(up) + 1);
	free(p);
	free(n);
	return rel;
}

static bool ws_has(const char *rel)
{
	char *p = join(redirect_cfg.session.workspace, rel);
	bool has = p && attrs(p) != INVALID_FILE_ATTRIBUTES;

	free(p);
	return has;
}

static NTSTATUS rename_hook(HANDLE h, PIO_STATUS_BLOCK io, RenameInfo *ri, ULONG len, ULONG cls)
{
	bool link = cls == INFO_LINK || cls == INFO_LINK_EX;
	char *rel = upper_rel(h), *src = NULL, *dst = NULL, *own = NULL;
	WinCowDecision d = { 0 };
	RenameInfo *nri = NULL;
	NTSTATUS s;

	if (len < offsetof(RenameInfo, name))
		return o_setinfo(h, io, ri, len, cls);
	src = rel ? join(redirect_cfg.session.workspace, rel) : (own = redirect_handle_path(h));
	dst = object_path(ri->root, ri->name, ri->length / sizeof(WCHAR));
	if (!src || !dst || win_cow_decide_rename(&redirect_cfg.session, src, dst, link, &d) < 0) {
		s = ST_NO_MEMORY;
		goto out;
	}
	if (d.action == WIN_COW_DENY) {
		s = ST_ACCESS_DENIED;
		goto out;
	}
	if (d.action == WIN_COW_PASS || !d.target) {
		s = o_setinfo(h, io, ri, len, cls);
		goto out;
	}
	{
		WCHAR *w = wide(d.target);
		size_t n = w ? wcslen(w) : 0, size = offsetof(RenameInfo, name) + (n + 5) * sizeof(WCHAR);

		nri = w ? calloc(1, size) : NULL;
		if (!nri) {
			free(w);
			s = ST_NO_MEMORY;
			goto out;
		}
		nri->flags = ri->flags;
		nri->root = NULL;
		memcpy(nri->name, L"\\??\\", 4 * sizeof(WCHAR));
		memcpy(nri->name + 4, w, n * sizeof(WCHAR));
		nri->length = (ULONG)((n + 4) * sizeof(WCHAR));
		free(w);
		make_parents(redirect_cfg.session.upper, d.target, false);
		s = o_setinfo(h, io, nri, (ULONG)size, cls);
	}
	if (NT_OK(s)) {
		char *dn = NULL;
		const char *drel;

		if (!link && rel && ws_has(rel))
			whiteout_set(rel, true);
		if (win_cow_path(dst, &dn) == 0 && (drel = redirect_ws_rel(dn)))
			whiteout_set(drel, false);
		free(dn);
	}
out:
	free(d.target);
	free(nri);
	free(rel);
	free(own);
	free(dst);
	return s;
}

static NTSTATUS NTAPI h_setinfo(HANDLE h, PIO_STATUS_BLOCK io, PVOID info, ULONG len, ULONG cls)
{
	NTSTATUS s;

	if (!redirect_enter())
		return o_setinfo(h, io, info, len, cls);
	if (cls == INFO_RENAME || cls == INFO_RENAME_EX || cls == INFO_LINK || cls == INFO_LINK_EX) {
		s = rename_hook(h, io, info, len, cls);
	} else if ((cls == INFO_DISPOSITION || cls == INFO_DISPOSITION_EX) && len >= 1) {
		/* Deleting the upper copy of a workspace file: the workspace's
		 * stays, hidden by a whiteout. (DispositionEx's flag 1 and the
		 * old BOOLEAN both mean "delete".) */
		bool del = (*(BYTE *)info & 1) != 0;
		char *rel = del ? upper_rel(h) : NULL;

		s = o_setinfo(h, io, info, len, cls);
		if (NT_OK(s) && rel && ws_has(rel))
			whiteout_set(rel, true);
		free(rel);
	} else
		s = o_setinfo(h, io, info, len, cls);
	redirect_leave();
	return s;
}

static NTSTATUS NTAPI h_delete(POBJECT_ATTRIBUTES oa)
{
	Route r;
	NTSTATUS s;

	if (!redirect_enter())
		return o_delete(oa);
	s = route(oa, DELETE, WIN_FILE_OPEN, 0, &r);
	if (NT_OK(s)) {
		if (r.action == WIN_COW_DENY)
			s = ST_ACCESS_DENIED;
		else if (r.action == WIN_COW_NOT_FOUND)
			s = ST_NOT_FOUND;
		else if (r.action == WIN_COW_REDIRECT || r.action == WIN_COW_COPY_UP) {
			s = o_delete(&r.oa);
			if (NT_OK(s) && ws_has(r.rel))
				whiteout_set(r.rel, true);
		} else
			s = o_delete(oa);
	}
	route_done(&r);
	redirect_leave();
	return s;
}

int redirect_hooks_install(unsigned *ret_patched)
{
	HMODULE nt = GetModuleHandleW(L"ntdll.dll"), self = NULL;
	struct {
		const char *name;
		void **orig;
		void *hook;
	} t[] = {
		{ "NtCreateFile", (void **)&o_create, (void *)h_create },
		{ "NtOpenFile", (void **)&o_open, (void *)h_open },
		{ "NtQueryAttributesFile", (void **)&o_qattr, (void *)h_qattr },
		{ "NtQueryFullAttributesFile", (void **)&o_qfull, (void *)h_qfull },
		{ "NtSetInformationFile", (void **)&o_setinfo, (void *)h_setinfo },
		{ "NtDeleteFile", (void **)&o_delete, (void *)h_delete },
		{ "NtQueryDirectoryFile", (void **)&redirect_o_querydir, (void *)redirect_h_querydir },
		{ "NtClose", (void **)&redirect_o_close, (void *)redirect_h_close },
		/* Windows 10 1709 and later; Wine 8's kernelbase does not import it. */
		{ "NtQueryDirectoryFileEx", (void **)&redirect_o_querydir_ex,
		  (void *)redirect_h_querydir_ex },
	};
	unsigned n = 0, create = 0;

	if (!nt || !GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
					       GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
				       (LPCWSTR)(void *)redirect_hooks_install, &self))
		return -ENOENT;
	redirect_dir_init();
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++)
		if (!(*t[i].orig = (void *)GetProcAddress(nt, t[i].name)) &&
		    strcmp(t[i].name, "NtQueryDirectoryFileEx") != 0)
			return -ENOENT;
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		if (!*t[i].orig)
			continue;
		unsigned k = redirect_iat_patch(self, *t[i].orig, t[i].hook);

		n += k;
		if (i == 0)
			create = k;
	}
	*ret_patched = n;
	/* No module imports NtCreateFile: nothing would be redirected. */
	return create ? 0 : -ENOENT;
}
