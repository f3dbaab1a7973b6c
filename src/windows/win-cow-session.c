/* Several runs in one Windows copy-on-write session, and the session's
 * lock: see win-cow-review.h ("several runs in one session"). Portable:
 * every file operation goes through WinCowFs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-cow-review.h"

static bool valid_id(const char *id)
{
	return id && strlen(id) == 16 && strspn(id, "0123456789abcdef") == 16;
}

int win_cow_session_lock(const WinCowFs *fs, const char *state, const char *id, void **ret)
{
	_cleanup_free_ char *path = NULL;

	*ret = NULL;
	if (!valid_id(id))
		return -EINVAL;
	if (!fs->lock)
		return -EOPNOTSUPP;
	if (asprintf(&path, "%s\\sessions\\%s\\lock", state, id) < 0)
		return -ENOMEM;
	return fs->lock(fs->ctx, path, ret);
}

void win_cow_session_unlock(const WinCowFs *fs, void *lock)
{
	if (lock && fs->unlock)
		fs->unlock(fs->ctx, lock);
}

static int base_add(WinCowLayout *l, const char *rel, int64_t t)
{
	int64_t *n = realloc(l->base_times, (l->n_base + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	l->base_times = n;
	if (strv_extend(&l->base_paths, rel) < 0)
		return -ENOMEM;
	n[l->n_base++] = t;
	return 0;
}

/* The index of @rel's own record, or -1. */
static ssize_t base_find(const WinCowLayout *l, const char *rel)
{
	for (size_t i = 0; i < l->n_base; i++)
		if (strcasecmp(l->base_paths[i], rel) == 0)
			return (ssize_t)i;
	return -1;
}

int win_cow_baseline_load(const WinCowFs *fs, WinCowLayout *l)
{
	_cleanup_free_ char *text = NULL;
	int r = fs->read(fs->ctx, l->baseline, &text);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	for (char *line = text, *next; line && *line; line = next) {
		_cleanup_cjson_ cJSON *j = NULL;
		_cleanup_free_ char *rel = NULL;
		const cJSON *p, *t;

		next = strchr(line, '\n');
		if (!next)
			break; /* unterminated: a crash mid-write; that path falls back */
		*next++ = 0;
		j = cJSON_Parse(line);
		p = cJSON_GetObjectItemCaseSensitive(j, "p");
		t = cJSON_GetObjectItemCaseSensitive(j, "t");
		if (!cJSON_IsString(p) || !cJSON_IsString(t) || !(rel = win_cow_unhex(p->valuestring)) ||
		    strspn(t->valuestring, "0123456789") != strlen(t->valuestring) ||
		    !*t->valuestring || strlen(t->valuestring) >= 19)
			continue;
		if (base_find(l, rel) >= 0)
			continue; /* the first record of a path holds */
		if ((r = base_add(l, rel, strtoll(t->valuestring, NULL, 10))) < 0)
			return r;
	}
	return 0;
}

int64_t win_cow_baseline(const WinCowLayout *l, const char *rel)
{
	_cleanup_free_ char *up = strdup(rel);
	ssize_t i = base_find(l, rel);
	char *slash;

	if (i >= 0)
		return l->base_times[i];
	/* A workspace entry under a directory the session deleted or
	 * replaced (or an entry a run that has not ended made under one
	 * recorded before): its parent's. */
	while (up && (slash = strrchr(up, '\\'))) {
		*slash = 0;
		if ((i = base_find(l, up)) >= 0)
			return l->base_times[i];
	}
	return l->open_run ? l->open_run : l->start;
}

/* Record @t for every entry under <@root>\@rel that has no record yet. */
static int record_tree(const WinCowFs *fs, WinCowLayout *l, const char *root, const char *rel,
		       int64_t t)
{
	_cleanup_free_ char *dir = win_cow_join(root, rel);
	_cleanup_strv_ char **names = NULL;
	int r;

	if (!dir)
		return -ENOMEM;
	r = fs->list(fs->ctx, dir, &names);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	STRV_FOREACH(n, names) {
		_cleanup_free_ char *sub = win_cow_join(rel, *n), *full = NULL, *h = NULL,
				    *line = NULL;

		if (!sub || !(full = win_cow_join(root, sub)))
			return -ENOMEM;
		if (base_find(l, sub) < 0) {
			if (!(h = win_cow_hex(sub)) ||
			    asprintf(&line, "{\"p\":\"%s\",\"t\":\"%lld\"}\n", h, (long long)t) < 0)
				return -ENOMEM;
			/* On disk before it counts: a crash leaves the path
			 * without a record, which falls back to an earlier time. */
			if ((r = fs->append(fs->ctx, l->baseline, line)) < 0 ||
			    (r = base_add(l, sub, t)) < 0)
				return r;
		}
		/* A reparse point is NONE: never walked through. */
		if (fs->stat(fs->ctx, full) == WIN_FILE_DIRECTORY &&
		    (r = record_tree(fs, l, root, sub, t)) < 0)
			return r;
	}
	return 0;
}

static int record_all(const WinCowFs *fs, WinCowLayout *l, int64_t t)
{
	int r = record_tree(fs, l, l->upper, "", t);

	return r < 0 ? r : record_tree(fs, l, l->whiteout, "", t);
}

/* session.json with @edit applied, replaced whole. */
static int meta_update(const WinCowFs *fs, const WinCowLayout *l,
		       int (*edit)(cJSON *j, const WinCowLayout *l, void *arg), void *arg)
{
	_cleanup_free_ char *meta = win_cow_join(l->session, "session.json"), *tmp = NULL,
			    *text = NULL, *out = NULL;
	_cleanup_cjson_ cJSON *j = NULL;
	int r;

	if (!meta || asprintf(&tmp, "%s.tmp", meta) < 0)
		return -ENOMEM;
	if ((r = fs->read(fs->ctx, meta, &text)) < 0)
		return r;
	if (!(j = cJSON_Parse(text)) || !cJSON_IsObject(j))
		return -EBADMSG;
	if ((r = edit(j, l, arg)) < 0)
		return r;
	if (!(out = cJSON_PrintUnformatted(j)))
		return -ENOMEM;
	if ((r = fs->write(fs->ctx, tmp, out)) < 0)
		return r;
	return fs->rename(fs->ctx, tmp, meta);
}

static int set_item(cJSON *j, const char *key, cJSON *v)
{
	if (!v)
		return -ENOMEM;
	cJSON_DeleteItemFromObjectCaseSensitive(j, key);
	return cJSON_AddItemToObject(j, key, v) ? 0 : -ENOMEM;
}

static int edit_begin(cJSON *j, const WinCowLayout *l, void *arg)
{
	char *const *protected_ = arg;
	cJSON *prot = cJSON_GetObjectItemCaseSensitive(j, "protected");
	char t[24];
	int r;

	snprintf(t, sizeof(t), "%lld", (long long)l->open_run);
	if ((r = set_item(j, "runs", cJSON_CreateNumber(l->runs))) < 0 ||
	    (r = set_item(j, "open_run", cJSON_CreateString(t))) < 0)
		return r;
	if (!cJSON_IsArray(prot)) {
		if ((r = set_item(j, "protected", cJSON_CreateArray())) < 0)
			return r;
		prot = cJSON_GetObjectItemCaseSensitive(j, "protected");
	}
	for (char *const *p = protected_; p && *p; p++) {
		const cJSON *it;
		bool have = false;

		cJSON_ArrayForEach(it, prot)
		have = have || (cJSON_IsString(it) && strcasecmp(it->valuestring, *p) == 0);
		if (!have && !cJSON_AddItemToArray(prot, cJSON_CreateString(*p)))
			return -ENOMEM;
	}
	return 0;
}

int win_cow_run_begin(const WinCowFs *fs, WinCowLayout *l, char *const *protected_)
{
	int64_t now = fs->now(fs->ctx);
	int r;

	/* What a run that did not end (or anything else) left unrecorded
	 * dates from that run's start, else from the session's: never later
	 * than the truth. */
	if ((r = record_all(fs, l, l->open_run ? l->open_run : l->start)) < 0)
		return r;
	l->runs++;
	l->open_run = now;
	if ((r = meta_update(fs, l, edit_begin, (void *)protected_)) < 0)
		return r;
	for (char *const *p = protected_; p && *p; p++)
		if (!strv_contains(l->protected_, *p) && strv_extend(&l->protected_, *p) < 0)
			return -ENOMEM;
	return 0;
}

static int edit_end(cJSON *j, const WinCowLayout *l, void *arg)
{
	cJSON_DeleteItemFromObjectCaseSensitive(j, "open_run");
	return 0;
}

int win_cow_run_end(const WinCowFs *fs, WinCowLayout *l)
{
	int r;

	if (!l->open_run)
		return 0;
	if ((r = record_all(fs, l, l->open_run)) < 0)
		return r;
	if ((r = meta_update(fs, l, edit_end, NULL)) < 0)
		return r;
	l->open_run = 0;
	return 0;
}
