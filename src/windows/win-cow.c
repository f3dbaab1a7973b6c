/* The copy-on-write redirect decision. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "windows/win-cow.h"
#include "windows/win-path.h"

static const char *const action_names[_WIN_COW_ACTION_MAX] = {
	[WIN_COW_PASS] = "pass",
	[WIN_COW_REDIRECT] = "redirect",
	[WIN_COW_COPY_UP] = "copy-up",
	[WIN_COW_NOT_FOUND] = "not-found",
	[WIN_COW_MERGE] = "merge",
	[WIN_COW_DENY] = "deny",
};

const char *win_cow_action_name(WinCowAction a)
{
	return a >= 0 && a < _WIN_COW_ACTION_MAX ? action_names[a] : "?";
}

int win_cow_path(const char *nt, char **ret)
{
	char *tmp;
	int r;

	if (!nt)
		return -EINVAL;
	if (strncmp(nt, "\\??\\", 4) == 0) {
		const char *rest = nt + 4;

		if (strncasecmp(rest, "UNC\\", 4) == 0) {
			size_t n = strlen(rest + 4) + 3;

			tmp = malloc(n);
			if (!tmp)
				return -ENOMEM;
			snprintf(tmp, n, "\\\\%s", rest + 4);
		} else if (((rest[0] | 0x20) >= 'a' && (rest[0] | 0x20) <= 'z') && rest[1] == ':' &&
			   rest[2] == '\\') {
			tmp = strdup(rest);
			if (!tmp)
				return -ENOMEM;
		} else {
			return -EINVAL; /* \??\GLOBALROOT, \??\Volume{...}, devices */
		}
		r = win_path_normalize(tmp, ret, NULL);
		free(tmp);
		return r;
	}
	if (nt[0] == '\\' && nt[1] != '\\')
		return -EINVAL; /* \Device\HarddiskVolume3\..., an NT object path */
	return win_path_normalize(nt, ret, NULL);
}

/* @path relative to @root ("" for the root itself); NULL if not within. */
static const char *rel(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (!win_path_is_within(path, root))
		return NULL;
	return path[n] == '\\' ? path + n + 1 : path + n;
}

static bool is_protected(const WinCowSession *s, const char *r)
{
	for (char *const *p = s->protected_; p && *p; p++) {
		size_t n = strlen(*p);

		if (strncasecmp(r, *p, n) == 0 && (r[n] == 0 || r[n] == '\\'))
			return true;
	}
	return false;
}

static int upper_of(const WinCowSession *s, const char *r, char **ret)
{
	size_t n = strlen(s->upper) + strlen(r) + 2;
	char *t = malloc(n);

	if (!t)
		return -ENOMEM;
	snprintf(t, n, *r ? "%s\\%s" : "%s", s->upper, r);
	*ret = t;
	return 0;
}

static int deny(WinCowDecision *ret, const char *why)
{
	ret->action = WIN_COW_DENY;
	ret->why = why;
	return 0;
}

int win_cow_decide(const WinCowSession *s, const WinCowOpen *o, WinCowDecision *ret)
{
	unsigned flags = 0;
	char *path = NULL;
	const char *r;
	bool writes, creates, replaces;
	int rr;

	memset(ret, 0, sizeof(*ret));
	writes = (o->access & WIN_COW_WRITE_ACCESS) || (o->options & WIN_FILE_DELETE_ON_CLOSE) ||
		 o->disposition != WIN_FILE_OPEN;
	creates = o->disposition != WIN_FILE_OPEN && o->disposition != WIN_FILE_OVERWRITE;
	replaces = o->disposition == WIN_FILE_SUPERSEDE || o->disposition == WIN_FILE_OVERWRITE ||
		   o->disposition == WIN_FILE_OVERWRITE_IF;

	rr = win_cow_path(o->path, &path);
	if (rr == -ENOMEM)
		return rr;
	if (rr < 0) {
		/* A form the hook cannot place. A read goes through; a write
		 * too, since the ACL refuses it if it is the workspace. */
		ret->action = WIN_COW_PASS;
		return 0;
	}
	{
		char *again = NULL;

		if (win_path_normalize(path, &again, &flags) == 0)
			free(again);
	}
	r = rel(path, s->workspace);
	if (!r || win_path_is_within(path, s->upper)) {
		free(path);
		ret->action = WIN_COW_PASS;
		return 0;
	}
	if (is_protected(s, r)) {
		free(path);
		if (!writes) {
			ret->action = WIN_COW_PASS; /* reads of .git: the ACL decides */
			return 0;
		}
		return deny(ret, "a protected path is never written, not even in the session");
	}
	if ((flags & WIN_PATH_SHORT_NAME) && writes) {
		free(path);
		return deny(ret, "an 8.3 short name could alias another name: writes refused");
	}
	if (o->whiteout && !o->in_upper) {
		if (!creates) {
			free(path);
			ret->action = WIN_COW_NOT_FOUND;
			return 0;
		}
		rr = upper_of(s, r, &ret->target);
		free(path);
		ret->action = WIN_COW_REDIRECT;
		return rr;
	}
	if (o->in_upper) {
		rr = upper_of(s, r, &ret->target);
		free(path);
		ret->action = WIN_COW_REDIRECT;
		return rr;
	}
	if (o->in_workspace && o->is_directory && !writes) {
		free(path);
		ret->action = WIN_COW_MERGE;
		return 0;
	}
	if (!writes) {
		free(path);
		ret->action = WIN_COW_PASS;
		return 0;
	}
	rr = upper_of(s, r, &ret->target);
	free(path);
	if (rr < 0)
		return rr;
	/* Changing an existing file: its content first, unless the open
	 * replaces it whole. A directory is made in the upper, not copied. */
	ret->action = o->in_workspace && !replaces && !o->is_directory ? WIN_COW_COPY_UP
								       : WIN_COW_REDIRECT;
	return 0;
}

int win_cow_decide_rename(const WinCowSession *s, const char *src, const char *dst, bool link,
			  WinCowDecision *ret)
{
	char *a = NULL, *b = NULL;
	const char *ra, *rb;
	int r;

	memset(ret, 0, sizeof(*ret));
	if ((r = win_cow_path(src, &a)) < 0 || (r = win_cow_path(dst, &b)) < 0) {
		free(a);
		if (r == -ENOMEM)
			return r;
		ret->action = WIN_COW_PASS; /* unmappable: the ACL decides */
		return 0;
	}
	ra = rel(a, s->workspace);
	rb = rel(b, s->workspace);
	if (!ra && !rb) {
		ret->action = WIN_COW_PASS;
	} else if (link && (ra || rb)) {
		deny(ret, "hard links into or out of the workspace are refused");
	} else if ((ra && is_protected(s, ra)) || (rb && is_protected(s, rb))) {
		deny(ret, "a protected path is never renamed");
	} else if (ra && !rb) {
		deny(ret, "moving a workspace file out of the session is refused (copy it)");
	} else {
		/* Into or within the workspace: the upper takes the new name
		 * (the source copied up first when it is a workspace file; a
		 * whiteout recorded for its old name). */
		r = upper_of(s, rb, &ret->target);
		ret->action = ra ? WIN_COW_COPY_UP : WIN_COW_REDIRECT;
	}
	free(a);
	free(b);
	return r;
}
