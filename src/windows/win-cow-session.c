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

/* The records: appended as they come (@seq in order), then sorted by
 * path and made unique, the first record of a path kept. */
static int base_add(WinCowLayout *l, size_t *cap, const char *rel, int64_t t)
{
	char *p;

	if (l->n_base == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		WinCowBase *b = realloc(l->base, n * sizeof(*b));

		if (!b)
			return -ENOMEM;
		l->base = b;
		*cap = n;
	}
	if (!(p = strdup(rel)))
		return -ENOMEM;
	l->base[l->n_base] = (WinCowBase){ .path = p, .t = t, .seq = l->n_base };
	l->n_base++;
	return 0;
}

static int cmp_base(const void *a, const void *b)
{
	const WinCowBase *x = a, *y = b;
	int c = strcasecmp(x->path, y->path);

	return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void base_sort(WinCowLayout *l)
{
	size_t k = 0;

	if (l->n_base > 1)
		qsort(l->base, l->n_base, sizeof(*l->base), cmp_base);
	for (size_t i = 0; i < l->n_base; i++) {
		if (k && strcasecmp(l->base[k - 1].path, l->base[i].path) == 0) {
			free(l->base[i].path);
			continue;
		}
		l->base[k++] = l->base[i];
	}
	l->n_base = k;
	for (size_t i = 0; i < l->n_base; i++)
		l->base[i].seq = i;
}

/* @rel's own record, or NULL (binary search: the list is sorted). */
static const WinCowBase *base_find(const WinCowLayout *l, const char *rel)
{
	size_t lo = 0, hi = l->n_base;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcasecmp(l->base[mid].path, rel);

		if (c == 0)
			return &l->base[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int win_cow_baseline_load(const WinCowFs *fs, WinCowLayout *l)
{
	_cleanup_free_ char *text = NULL;
	size_t cap = 0;
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
		if ((r = base_add(l, &cap, rel, strtoll(t->valuestring, NULL, 10))) < 0)
			return r;
	}
	base_sort(l); /* the first record of a path holds */
	return 0;
}

int64_t win_cow_baseline(const WinCowLayout *l, const char *rel)
{
	_cleanup_free_ char *up = strdup(rel);
	const WinCowBase *b = base_find(l, rel);
	char *slash;

	if (b)
		return b->t;
	/* A workspace entry under a directory the session deleted or
	 * replaced (or an entry a run that has not ended made under one
	 * recorded before): its parent's. */
	while (up && (slash = strrchr(up, '\\'))) {
		*slash = 0;
		if ((b = base_find(l, up)))
			return b->t;
	}
	return l->open_run ? l->open_run : l->start;
}

/* The paths a walk found without a record: their lines, appended in one
 * write at the end (a torn write leaves paths without a record, which
 * fall back to an earlier time). */
typedef struct Pending {
	char **paths;
	char *lines;
	size_t len;
} Pending;

/* Every entry under <@root>\@rel that has no record yet, into @p. */
static int find_unrecorded(const WinCowFs *fs, const WinCowLayout *l, const char *root,
			   const char *rel, int64_t t, Pending *p)
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
		if (!base_find(l, sub)) {
			size_t k;
			char *grown;

			if (!(h = win_cow_hex(sub)) ||
			    asprintf(&line, "{\"p\":\"%s\",\"t\":\"%lld\"}\n", h, (long long)t) < 0)
				return -ENOMEM;
			k = strlen(line);
			if (!(grown = realloc(p->lines, p->len + k + 1)))
				return -ENOMEM;
			p->lines = grown;
			memcpy(p->lines + p->len, line, k + 1);
			p->len += k;
			if (strv_extend(&p->paths, sub) < 0)
				return -ENOMEM;
		}
		/* A reparse point is NONE: never walked through. */
		if (fs->stat(fs->ctx, full) == WIN_FILE_DIRECTORY &&
		    (r = find_unrecorded(fs, l, root, sub, t, p)) < 0)
			return r;
	}
	return 0;
}

/* Record @t for every upper and whiteout entry that has none: on disk
 * first, then in @l. */
static int record_all(const WinCowFs *fs, WinCowLayout *l, int64_t t)
{
	Pending p = { 0 };
	size_t cap = l->n_base;
	int r = find_unrecorded(fs, l, l->upper, "", t, &p);

	if (r >= 0)
		r = find_unrecorded(fs, l, l->whiteout, "", t, &p);
	if (r >= 0 && p.len)
		r = fs->append(fs->ctx, l->baseline, p.lines);
	STRV_FOREACH(s, p.paths)
		if (r >= 0)
			r = base_add(l, &cap, *s, t);
	if (p.paths)
		base_sort(l);
	strv_free(p.paths);
	free(p.lines);
	return r;
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
