/* Choosing changes: PATH arguments -> the selected subset of a change list
 * (with the new directories a selected entry needs), and the result type
 * that apply and undo fill. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "cow/cow-fsops.h"
#include "cow/cow-review.h"

void cow_result_done(CowResult *r)
{
	strv_free(r->done);
	strv_free(r->removed);
	strv_free(r->refused);
	strv_free(r->refused_why);
	strv_free(r->failed);
	strv_free(r->failed_why);
	*r = (CowResult){};
}

int cow_result_note_removed(CowResult *r, int ws_fd)
{
	STRV_FOREACH(p, r->done) {
		_cleanup_close_ int pfd = -EBADF;
		const char *name;
		struct stat st;

		pfd = cow_open_parent(ws_fd, *p, &name);
		if (pfd >= 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		if (strv_extend(&r->removed, *p) < 0)
			return -ENOMEM;
	}
	return 0;
}

static char *normalize_arg(const char *a)
{
	char *s;
	size_t n;

	while (a[0] == '.' && a[1] == '/')
		a += 2;
	while (a[0] == '/' && a[1] == '/')
		a++;
	s = strdup(a);
	if (!s)
		return NULL;
	n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

static bool needs_parent(const CowChange *c)
{
	return S_ISDIR(c->upper_mode) && (c->kind == COW_ADDED || c->kind == COW_TYPE_CHANGED);
}

int cow_select(const CowChangeList *l, char *const *paths, bool *selected, char ***ret_unmatched)
{
	_cleanup_strv_ char **unmatched = NULL;

	if (!paths || !paths[0]) {
		for (size_t i = 0; i < l->n; i++)
			selected[i] = true;
		if (ret_unmatched)
			*ret_unmatched = NULL;
		return 0;
	}
	for (size_t i = 0; i < l->n; i++)
		selected[i] = false;
	STRV_FOREACH(p, paths) {
		_cleanup_free_ char *a = normalize_arg(*p);
		bool any = false;
		if (!a)
			return -ENOMEM;
		for (size_t i = 0; i < l->n; i++)
			if (strcmp(a, ".") == 0 || cow_path_has_prefix(l->items[i].path, a)) {
				selected[i] = true;
				any = true;
			}
		if (!any && strv_extend(&unmatched, *p) < 0)
			return -ENOMEM;
	}
	/* A selected entry inside a new directory needs that directory. The list
	 * is in pre-order, so an ancestor comes before its descendants; walk
	 * back from each selected entry. */
	for (size_t i = l->n; i-- > 0;) {
		if (!selected[i])
			continue;
		for (size_t k = i; k-- > 0;)
			if (needs_parent(&l->items[k]) &&
			    cow_path_has_prefix(l->items[i].path, l->items[k].path))
				selected[k] = true;
	}
	if (ret_unmatched)
		*ret_unmatched = TAKE_PTR(unmatched);
	return 0;
}

