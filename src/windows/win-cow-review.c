/* Review of a Windows copy-on-write session: see win-cow-review.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-cow-review.h"

static const char *const kind_names[] = {
	[WIN_COW_ADDED] = "added",
	[WIN_COW_MODIFIED] = "modified",
	[WIN_COW_DELETED] = "deleted",
	[WIN_COW_TYPE_CHANGED] = "type-changed",
};

const char *win_cow_kind_name(WinCowChangeKind k)
{
	return k <= WIN_COW_TYPE_CHANGED ? kind_names[k] : "?";
}

static char *join(const char *a, const char *b)
{
	char *s = NULL;

	if (asprintf(&s, *a && *b ? "%s\\%s" : "%s%s", a, b) < 0)
		return NULL;
	return s;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool valid_id(const char *id)
{
	return id && strlen(id) == 16 && strspn(id, "0123456789abcdef") == 16;
}

void win_cow_layout_done(WinCowLayout *l)
{
	free(l->session);
	free(l->upper);
	free(l->whiteout);
	free(l->ops);
	free(l->journal);
	free(l->stamps);
	free(l->workspace);
	strv_free(l->protected_);
	free(l->baseline);
	for (size_t i = 0; i < l->n_base; i++)
		free(l->base[i].path);
	free(l->base);
	memset(l, 0, sizeof(*l));
}

static int layout(const char *state, const char *id, WinCowLayout *l)
{
	memset(l, 0, sizeof(*l));
	if (asprintf(&l->session, "%s\\sessions\\%s", state, id) < 0 ||
	    !(l->upper = join(l->session, "upper")) || !(l->whiteout = join(l->session, "whiteout")) ||
	    !(l->ops = join(l->session, "ops")) || !(l->journal = join(l->session, "journal.jsonl")) ||
	    !(l->stamps = join(l->session, "stamps.jsonl")) ||
	    !(l->baseline = join(l->session, "baseline.jsonl"))) {
		win_cow_layout_done(l);
		return -ENOMEM;
	}
	return 0;
}

int win_cow_session_create(const WinCowFs *fs, const char *state, const char *id,
			   const char *workspace, char *const *protected_)
{
	_cleanup_free_ char *sessions = join(state, "sessions"), *meta = NULL, *text = NULL;
	_cleanup_cjson_ cJSON *j = cJSON_CreateObject();
	WinCowLayout l;
	cJSON *prot;
	char start[24];
	int r;

	if (!valid_id(id))
		return -EINVAL;
	/* Before anything of the session exists: an edit made after this is
	 * one the session did not see. */
	snprintf(start, sizeof(start), "%lld", (long long)fs->now(fs->ctx));
	if (!sessions || !j || (r = layout(state, id, &l)) < 0)
		return -ENOMEM;
	r = fs->mkdir(fs->ctx, sessions);
	if (r >= 0 && fs->stat(fs->ctx, l.session) != WIN_FILE_NONE)
		r = -EEXIST;
	if (r >= 0)
		r = fs->mkdir(fs->ctx, l.session);
	if (r >= 0)
		r = fs->mkdir(fs->ctx, l.upper);
	if (r >= 0)
		r = fs->mkdir(fs->ctx, l.whiteout);
	if (r >= 0)
		r = fs->mkdir(fs->ctx, l.ops);
	prot = cJSON_CreateArray();
	if (r >= 0 && (!prot || !cJSON_AddNumberToObject(j, "v", 1) ||
		       !cJSON_AddStringToObject(j, "id", id) ||
		       !cJSON_AddStringToObject(j, "workspace", workspace) ||
		       !cJSON_AddBoolToObject(j, "cow", true) || !cJSON_AddNumberToObject(j, "runs", 1) ||
		       !cJSON_AddStringToObject(j, "start", start) ||
		       !cJSON_AddStringToObject(j, "open_run", start)))
		r = -ENOMEM;
	if (prot) {
		for (char *const *p = protected_; p && *p; p++)
			cJSON_AddItemToArray(prot, cJSON_CreateString(*p));
		cJSON_AddItemToObject(j, "protected", prot);
	}
	if (r >= 0 && (!(text = cJSON_PrintUnformatted(j)) || !(meta = join(l.session, "session.json"))))
		r = -ENOMEM;
	if (r >= 0)
		r = fs->write(fs->ctx, meta, text);
	win_cow_layout_done(&l);
	return r;
}

/* A time as session.json keeps it (a decimal string); 0 when absent or
 * not one. */
static int64_t time_of(const cJSON *it)
{
	if (cJSON_IsString(it) && strspn(it->valuestring, "0123456789") == strlen(it->valuestring) &&
	    strlen(it->valuestring) > 0 && strlen(it->valuestring) < 19)
		return strtoll(it->valuestring, NULL, 10);
	return 0;
}

int win_cow_session_open(const WinCowFs *fs, const char *state, const char *id,
			 WinCowLayout *ret)
{
	_cleanup_free_ char *meta = NULL, *text = NULL;
	_cleanup_cjson_ cJSON *j = NULL;
	const cJSON *ws, *prot, *it;
	int r;

	if (!valid_id(id))
		return -EINVAL;
	if ((r = layout(state, id, ret)) < 0)
		return r;
	if (!(meta = join(ret->session, "session.json"))) {
		r = -ENOMEM;
		goto fail;
	}
	r = fs->read(fs->ctx, meta, &text);
	if (r < 0)
		goto fail;
	j = cJSON_Parse(text);
	ws = cJSON_GetObjectItemCaseSensitive(j, "workspace");
	if (!cJSON_IsString(ws)) {
		r = -EBADMSG;
		goto fail;
	}
	if (!(ret->workspace = strdup(ws->valuestring))) {
		r = -ENOMEM;
		goto fail;
	}
	/* No start (or one that does not parse): 0, so every workspace entry
	 * an apply touches counts as changed (refused without --force). */
	it = cJSON_GetObjectItemCaseSensitive(j, "start");
	ret->start = time_of(it);
	ret->open_run = time_of(cJSON_GetObjectItemCaseSensitive(j, "open_run"));
	it = cJSON_GetObjectItemCaseSensitive(j, "runs");
	ret->runs = cJSON_IsNumber(it) && it->valuedouble >= 0 && it->valuedouble < 1e9
			    ? (int)it->valuedouble
			    : 0;
	prot = cJSON_GetObjectItemCaseSensitive(j, "protected");
	cJSON_ArrayForEach(it, prot)
	if (cJSON_IsString(it) && strv_extend(&ret->protected_, it->valuestring) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = win_cow_baseline_load(fs, ret)) < 0)
		goto fail;
	return 0;
fail:
	win_cow_layout_done(ret);
	return r;
}

/* A protected name: as a single component anywhere (".git" protects
 * "lib\.git\config" too), or a multi-component prefix. */
static bool is_protected(char *const *prot, const char *rel)
{
	for (char *const *p = prot; p && *p; p++) {
		size_t n = strlen(*p);

		if (strchr(*p, '\\') || strchr(*p, '/')) {
			if (strncasecmp(rel, *p, n) == 0 && (rel[n] == 0 || rel[n] == '\\'))
				return true;
			continue;
		}
		for (const char *c = rel; c; c = strchr(c, '\\')) {
			if (*c == '\\')
				c++;
			if (strncasecmp(c, *p, n) == 0 && (c[n] == 0 || c[n] == '\\'))
				return true;
		}
	}
	return false;
}

typedef struct Walk {
	const WinCowFs *fs;
	const WinCowLayout *l;
	WinCowChange *items;
	size_t n;
} Walk;

static int add(Walk *w, const char *rel, WinCowChangeKind kind, bool dir)
{
	WinCowChange *t = realloc(w->items, (w->n + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	w->items = t;
	t[w->n] = (WinCowChange){ .path = strdup(rel), .kind = kind, .directory = dir,
				  .refused = is_protected(w->l->protected_, rel) };
	if (!t[w->n].path)
		return -ENOMEM;
	w->n++;
	return 0;
}

typedef int (*VisitFn)(Walk *w, const char *rel);

/* @visit each entry of <@root>\@rel by its relative path (nothing when
 * the directory does not exist). */
static int each_entry(Walk *w, const char *root, const char *rel, VisitFn visit)
{
	_cleanup_free_ char *dir = join(root, rel);
	_cleanup_strv_ char **names = NULL;
	int r;

	if (!dir)
		return -ENOMEM;
	r = w->fs->list(w->fs->ctx, dir, &names);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	STRV_FOREACH(nm, names) {
		_cleanup_free_ char *r2 = join(rel, *nm);

		if (!r2)
			return -ENOMEM;
		if ((r = visit(w, r2)) < 0)
			return r;
	}
	return 0;
}

/* An upper entry: added, type-changed or modified against the workspace;
 * a directory is walked into. */
static int visit_upper(Walk *w, const char *rel)
{
	_cleanup_free_ char *up = join(w->l->upper, rel), *ws = join(w->l->workspace, rel);
	WinFileKind ku, kw;
	int r = 0;

	if (!up || !ws)
		return -ENOMEM;
	ku = w->fs->stat(w->fs->ctx, up);
	kw = w->fs->stat(w->fs->ctx, ws);
	if (ku == WIN_FILE_DIRECTORY) {
		if (kw == WIN_FILE_NONE)
			r = add(w, rel, WIN_COW_ADDED, true);
		else if (kw == WIN_FILE_REGULAR)
			r = add(w, rel, WIN_COW_TYPE_CHANGED, true);
		return r < 0 ? r : each_entry(w, w->l->upper, rel, visit_upper);
	}
	if (ku != WIN_FILE_REGULAR)
		return 0;
	if (kw == WIN_FILE_NONE)
		return add(w, rel, WIN_COW_ADDED, false);
	if (kw == WIN_FILE_DIRECTORY)
		return add(w, rel, WIN_COW_TYPE_CHANGED, false);
	r = w->fs->same(w->fs->ctx, up, ws);
	return r == 0 ? add(w, rel, WIN_COW_MODIFIED, false) : r < 0 ? r : 0;
}

/* A whiteout: a deletion of what the workspace has there and the upper
 * does not; a whiteout directory is walked into. */
static int visit_whiteout(Walk *w, const char *rel)
{
	_cleanup_free_ char *wh = join(w->l->whiteout, rel), *ws = join(w->l->workspace, rel),
			    *up = join(w->l->upper, rel);
	WinFileKind kw;

	if (!wh || !ws || !up)
		return -ENOMEM;
	if (w->fs->stat(w->fs->ctx, wh) == WIN_FILE_DIRECTORY)
		return each_entry(w, w->l->whiteout, rel, visit_whiteout);
	kw = w->fs->stat(w->fs->ctx, ws);
	if (kw != WIN_FILE_NONE && w->fs->stat(w->fs->ctx, up) == WIN_FILE_NONE)
		return add(w, rel, WIN_COW_DELETED, kw == WIN_FILE_DIRECTORY);
	return 0;
}

static int cmp_change(const void *a, const void *b)
{
	return strcmp(((const WinCowChange *)a)->path, ((const WinCowChange *)b)->path);
}

void win_cow_changes_free(WinCowChange *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].path);
	free(c);
}

int win_cow_changes(const WinCowFs *fs, const WinCowLayout *l, WinCowChange **ret, size_t *n)
{
	Walk w = { .fs = fs, .l = l };
	int r = each_entry(&w, l->upper, "", visit_upper);

	if (r >= 0)
		r = each_entry(&w, l->whiteout, "", visit_whiteout);
	if (r < 0) {
		win_cow_changes_free(w.items, w.n);
		return r;
	}
	if (w.n)
		qsort(w.items, w.n, sizeof(*w.items), cmp_change);
	*ret = w.items;
	*n = w.n;
	return 0;
}

char *win_cow_changes_json(const WinCowChange *c, size_t n)
{
	_cleanup_cjson_ cJSON *arr = cJSON_CreateArray();

	if (!arr)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return NULL;
		cJSON_AddItemToArray(arr, o);
		if (!cJSON_AddStringToObject(o, "path", c[i].path) ||
		    !cJSON_AddStringToObject(o, "kind", win_cow_kind_name(c[i].kind)) ||
		    !cJSON_AddStringToObject(o, "type", c[i].directory ? "directory" : "file") ||
		    (c[i].refused && !cJSON_AddStringToObject(o, "refused", "protected")))
			return NULL;
	}
	return cJSON_PrintUnformatted(arr);
}

/* ---- apply, undo, recovery: Linux's journal lines (cow-journal.h) ---- */

typedef enum Op { OP_PUT, OP_MKDIR, OP_UNLINK, OP_RMDIR } Op;
static const char *const op_names[] = { "put", "mkdir", "unlink", "rmdir" };

typedef struct Step {
	Op op;
	char *path;
	char old; /* 'n' nothing, 'f' file, 'd' directory */
} Step;

static char *hex(const char *s)
{
	size_t n = strlen(s);
	char *h = malloc(2 * n + 1);

	if (!h)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(h + 2 * i, 3, "%02x", (unsigned char)s[i]);
	h[2 * n] = 0;
	return h;
}

static char *unhex(const char *h)
{
	size_t n = strlen(h);
	char *s;

	if (n % 2)
		return NULL;
	s = malloc(n / 2 + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(h + 2 * i, "%2x", &v) != 1 || !v) {
			free(s);
			return NULL;
		}
		s[i] = (char)v;
	}
	s[n / 2] = 0;
	return s;
}

static int append_json(const WinCowFs *fs, const char *path, cJSON *line)
{
	_cleanup_cjson_ cJSON *j = line;
	_cleanup_free_ char *text = j ? cJSON_PrintUnformatted(j) : NULL, *nl = NULL;

	if (!text || asprintf(&nl, "%s\n", text) < 0)
		return -ENOMEM;
	return fs->append(fs->ctx, path, nl);
}

static cJSON *obj_num(const char *k, double v)
{
	cJSON *o = cJSON_CreateObject();

	if (o && !cJSON_AddNumberToObject(o, k, v)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *obj_true(const char *k)
{
	cJSON *o = cJSON_CreateObject();

	if (o && !cJSON_AddTrueToObject(o, k)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int next_seq(const WinCowFs *fs, const WinCowLayout *l)
{
	_cleanup_strv_ char **names = NULL;
	int max = 0, r = fs->list(fs->ctx, l->ops, &names);

	if (r < 0 && r != -ENOENT)
		return r;
	STRV_FOREACH(n, names) {
		int v = atoi(*n);

		if (v > max)
			max = v;
	}
	return max + 1;
}

static char *backup_path(const WinCowLayout *l, int seq, int i)
{
	char *s = NULL;

	return asprintf(&s, "%s\\%d.d\\%d", l->ops, seq, i) < 0 ? NULL : s;
}

/* Record the change time a step of this session left on @rel, so that
 * a later apply does not take it for an edit made in the workspace. */
static int stamp(const WinCowFs *fs, const WinCowLayout *l, const char *rel)
{
	_cleanup_free_ char *ws = join(l->workspace, rel), *h = hex(rel);
	char c[24] = "-";
	int64_t t = 0;
	cJSON *line;

	if (!ws || !h)
		return -ENOMEM;
	if (fs->ctime(fs->ctx, ws, &t) == 0)
		snprintf(c, sizeof(c), "%lld", (long long)t);
	line = cJSON_CreateObject();
	if (!line || !cJSON_AddStringToObject(line, "p", h) || !cJSON_AddStringToObject(line, "c", c)) {
		cJSON_Delete(line);
		return -ENOMEM;
	}
	return append_json(fs, l->stamps, line);
}

/* The last change time this session's own steps left on @rel: 1 and
 * @ret, or 0 when none did. */
static int stamped(const WinCowFs *fs, const WinCowLayout *l, const char *rel, int64_t *ret)
{
	_cleanup_free_ char *text = NULL, *h = hex(rel);
	int found = 0;

	if (!h)
		return -ENOMEM;
	if (fs->read(fs->ctx, l->stamps, &text) < 0)
		return 0;
	for (char *line = text, *next; line && *line; line = next) {
		_cleanup_cjson_ cJSON *j = NULL;
		const cJSON *p, *c;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		j = cJSON_Parse(line);
		p = cJSON_GetObjectItemCaseSensitive(j, "p");
		c = cJSON_GetObjectItemCaseSensitive(j, "c");
		if (!cJSON_IsString(p) || !cJSON_IsString(c) || strcmp(p->valuestring, h) != 0)
			continue;
		found = strcmp(c->valuestring, "-") != 0;
		if (found)
			*ret = strtoll(c->valuestring, NULL, 10);
	}
	return found;
}

/* Whether the workspace entry @rel changed during the session, by someone
 * else than this session's own steps. */
static int conflict(const WinCowFs *fs, const WinCowLayout *l, const char *rel)
{
	_cleanup_free_ char *ws = join(l->workspace, rel);
	int64_t t = 0, mine = 0;
	int r;

	if (!ws)
		return -ENOMEM;
	r = fs->ctime(fs->ctx, ws, &t);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return 1; /* cannot tell: a conflict */
	/* From when the session holds its own version of @rel: an edit
	 * before that was seen by the run that took it. */
	if (t < win_cow_baseline(l, rel))
		return 0;
	r = stamped(fs, l, rel, &mine);
	if (r < 0)
		return r;
	return !(r == 1 && mine == t);
}

/* Put back what step @i did (idempotent: a step that never ran, or ran
 * before, ends in the same state). */
static int restore(const WinCowFs *fs, const WinCowLayout *l, int seq, int i, const Step *s)
{
	_cleanup_free_ char *ws = join(l->workspace, s->path), *bk = backup_path(l, seq, i);
	WinFileKind k;
	int r = 0;

	if (!ws || !bk)
		return -ENOMEM;
	k = fs->stat(fs->ctx, ws);
	if (s->old == 'f') {
		if (k == WIN_FILE_DIRECTORY)
			r = fs->remove(fs->ctx, ws);
		if (r >= 0)
			r = fs->copy(fs->ctx, bk, ws);
	} else if (s->old == 'd') {
		if (k == WIN_FILE_REGULAR)
			r = fs->remove(fs->ctx, ws);
		if (r >= 0 && k != WIN_FILE_DIRECTORY)
			r = fs->mkdir(fs->ctx, ws);
	} else if (k != WIN_FILE_NONE)
		r = fs->remove(fs->ctx, ws);
	return r < 0 ? r : stamp(fs, l, s->path);
}

static int do_step(const WinCowFs *fs, const WinCowLayout *l, const Step *s)
{
	_cleanup_free_ char *ws = join(l->workspace, s->path), *up = join(l->upper, s->path);

	if (!ws || !up)
		return -ENOMEM;
	switch (s->op) {
	case OP_PUT:
		return fs->copy(fs->ctx, up, ws);
	case OP_MKDIR:
		return fs->mkdir(fs->ctx, ws);
	case OP_UNLINK:
	case OP_RMDIR:
	default:
		return fs->remove(fs->ctx, ws);
	}
}

typedef struct Plan {
	Step *steps;
	size_t n;
} Plan;

static void plan_done(Plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->steps[i].path);
	free(p->steps);
	memset(p, 0, sizeof(*p));
}

static int plan_add(Plan *p, Op op, const char *path, char old)
{
	Step *t = realloc(p->steps, (p->n + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	p->steps = t;
	t[p->n] = (Step){ .op = op, .path = strdup(path), .old = old };
	if (!t[p->n].path)
		return -ENOMEM;
	p->n++;
	return 0;
}

/* Remove the workspace tree @rel, children first. */
static int plan_remove_tree(const WinCowFs *fs, const WinCowLayout *l, Plan *p, const char *rel)
{
	_cleanup_free_ char *ws = join(l->workspace, rel);
	_cleanup_strv_ char **names = NULL;
	int r;

	if (!ws)
		return -ENOMEM;
	if (fs->stat(fs->ctx, ws) != WIN_FILE_DIRECTORY)
		return plan_add(p, OP_UNLINK, rel, 'f');
	r = fs->list(fs->ctx, ws, &names);
	if (r < 0)
		return r;
	if (names)
		qsort(names, strv_length(names), sizeof(char *), cmp_str);
	STRV_FOREACH(n, names) {
		_cleanup_free_ char *r2 = join(rel, *n);

		if (!r2)
			return -ENOMEM;
		if ((r = plan_remove_tree(fs, l, p, r2)) < 0)
			return r;
	}
	return plan_add(p, OP_RMDIR, rel, 'd');
}

static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);

	return !*root || (strncasecmp(path, root, n) == 0 && (path[n] == 0 || path[n] == '\\'));
}

static bool covered(char *const *paths, const char *path)
{
	if (!paths || !*paths)
		return true;
	for (char *const *p = paths; *p; p++)
		if (under(path, *p))
			return true;
	return false;
}

/* Whether @c is chosen by @paths; for a protected change, only when named
 * or covered by a protected path. */
static bool chosen(const WinCowLayout *l, const WinCowChange *c, char *const *paths)
{
	if (!paths || !*paths)
		return !c->refused;
	for (char *const *p = paths; *p; p++) {
		if (!under(c->path, *p))
			continue;
		if (!c->refused || strcasecmp(c->path, *p) == 0 || is_protected(l->protected_, *p))
			return true;
	}
	return false;
}

static int run_steps(const WinCowFs *fs, const WinCowLayout *l, int seq, Plan *p, char ***out)
{
	_cleanup_free_ char *bdir = NULL;
	size_t done = 0;
	int r = 0;

	if (asprintf(&bdir, "%s\\%d.d", l->ops, seq) < 0)
		return -ENOMEM;
	if ((r = fs->mkdir(fs->ctx, bdir)) < 0)
		return r;
	for (; done < p->n; done++) {
		Step *s = &p->steps[done];
		_cleanup_free_ char *ws = join(l->workspace, s->path), *bk = backup_path(l, seq, (int)done),
				    *h = hex(s->path);
		cJSON *line = cJSON_CreateObject();

		if (!ws || !bk || !h || !line) {
			cJSON_Delete(line);
			r = -ENOMEM;
			break;
		}
		/* Backed up (flushed) before the step line, the step line
		 * (flushed) before the workspace changes. */
		if (s->old == 'f' && (r = fs->copy(fs->ctx, ws, bk)) < 0) {
			cJSON_Delete(line);
			break;
		}
		cJSON_AddNumberToObject(line, "i", (double)done);
		cJSON_AddStringToObject(line, "op", op_names[s->op]);
		cJSON_AddStringToObject(line, "p", h);
		cJSON_AddStringToObject(line, "ot", (char[]){ s->old, 0 });
		if ((r = append_json(fs, l->journal, line)) < 0)
			break;
		if ((r = do_step(fs, l, s)) < 0 || (r = stamp(fs, l, s->path)) < 0)
			break;
		line = obj_num("d", (double)done);
		if (line)
			cJSON_AddStringToObject(line, "p", h);
		if ((r = append_json(fs, l->journal, line)) < 0)
			break;
		if (out && strv_extendf(out, "%s %s", s->op == OP_PUT || s->op == OP_MKDIR ? "applied"
											  : "removed",
					s->path) < 0) {
			r = -ENOMEM;
			break;
		}
	}
	if (r < 0) {
		int e = r;

		(void)append_json(fs, l->journal, obj_num("f", (double)done));
		for (size_t i = done + 1; i-- > 0;)
			if (i < p->n)
				(void)restore(fs, l, seq, (int)i, &p->steps[i]);
		(void)append_json(fs, l->journal, obj_true("rollback"));
		return e;
	}
	return 0;
}

static int finish(const WinCowFs *fs, const WinCowLayout *l, int seq)
{
	_cleanup_free_ char *rec = NULL;
	int r = append_json(fs, l->journal, obj_true("commit"));

	if (r < 0)
		return r;
	if (asprintf(&rec, "%s\\%d.jsonl", l->ops, seq) < 0)
		return -ENOMEM;
	return fs->rename(fs->ctx, l->journal, rec);
}

static cJSON *header(const char *type, int seq)
{
	cJSON *h = cJSON_CreateObject();

	if (h && (!cJSON_AddStringToObject(h, "type", type) || !cJSON_AddNumberToObject(h, "seq", seq))) {
		cJSON_Delete(h);
		return NULL;
	}
	return h;
}

int win_cow_recover(const WinCowFs *fs, const WinCowLayout *l);

/* Append @sub to @p unless a workspace entry it touches changed during
 * the session (then *@ret_conflict, and nothing of it is planned). */
static int plan_checked(const WinCowFs *fs, const WinCowLayout *l, Plan *p, Plan *sub,
			bool force, bool *ret_conflict)
{
	int r;

	*ret_conflict = false;
	for (size_t k = 0; !force && k < sub->n; k++) {
		if ((r = conflict(fs, l, sub->steps[k].path)) < 0)
			return r;
		if (r) {
			*ret_conflict = true;
			return 0;
		}
	}
	for (size_t k = 0; k < sub->n; k++) {
		Step *t = realloc(p->steps, (p->n + 1) * sizeof(*t));

		if (!t)
			return -ENOMEM;
		p->steps = t;
		p->steps[p->n++] = sub->steps[k];
		sub->steps[k].path = NULL;
	}
	return 0;
}

static int refuse_conflict(const WinCowChange *c, char ***out, bool *refused)
{
	*refused = true;
	return out && strv_extendf(out, "refused %s: changed in the workspace since the session "
					"started (a conflict); to apply it anyway: apply --force",
				   c->path) < 0
		       ? -ENOMEM
		       : 0;
}

int win_cow_apply(const WinCowFs *fs, const WinCowLayout *l, char *const *paths, bool force,
		  char ***out)
{
	WinCowChange *c = NULL;
	size_t n = 0;
	Plan p = { 0 };
	bool refused = false, *skip = NULL;
	int r, seq;

	if ((r = win_cow_recover(fs, l)) < 0)
		return r;
	if ((r = win_cow_changes(fs, l, &c, &n)) < 0)
		return r;
	if (n && !(skip = calloc(n, sizeof(*skip))))
		r = -ENOMEM;
	/* Removals first, deepest first; then what is added, parents first.
	 * A change whose workspace side changed during the session is left
	 * out whole (its removal and its addition). */
	for (size_t i = n; r >= 0 && i-- > 0;) {
		Plan sub = { 0 };

		if (!chosen(l, &c[i], paths)) {
			if (c[i].refused && covered(paths, c[i].path))
				refused = true;
			continue;
		}
		if (c[i].kind == WIN_COW_DELETED || c[i].kind == WIN_COW_TYPE_CHANGED)
			r = plan_remove_tree(fs, l, &sub, c[i].path);
		if (r >= 0)
			r = plan_checked(fs, l, &p, &sub, force, &skip[i]);
		if (r >= 0 && skip[i])
			r = refuse_conflict(&c[i], out, &refused);
		plan_done(&sub);
	}
	for (size_t i = 0; r >= 0 && i < n; i++) {
		Plan sub = { 0 };

		if (!chosen(l, &c[i], paths) || c[i].kind == WIN_COW_DELETED || skip[i])
			continue;
		r = plan_add(&sub, c[i].directory ? OP_MKDIR : OP_PUT, c[i].path,
			     c[i].kind == WIN_COW_MODIFIED ? 'f' : 'n');
		if (r >= 0)
			r = plan_checked(fs, l, &p, &sub, force, &skip[i]);
		if (r >= 0 && skip[i])
			r = refuse_conflict(&c[i], out, &refused);
		plan_done(&sub);
	}
	for (size_t i = 0; r >= 0 && out && i < n; i++)
		if (c[i].refused && !chosen(l, &c[i], paths) && covered(paths, c[i].path) &&
		    strv_extendf(out, "refused %s: a protected path (host tools trust it); to apply "
				      "it anyway, name it",
				 c[i].path) < 0)
			r = -ENOMEM;
	free(skip);
	win_cow_changes_free(c, n);
	if (r >= 0 && p.n) {
		seq = next_seq(fs, l);
		r = seq < 0 ? seq : fs->write(fs->ctx, l->journal, "");
		if (r >= 0)
			r = append_json(fs, l->journal, header("apply", seq));
		if (r >= 0)
			r = run_steps(fs, l, seq, &p, out);
		if (r >= 0)
			r = finish(fs, l, seq);
		else {
			_cleanup_free_ char *rec = NULL;

			/* Rolled back: kept as a record undo skips. */
			if (asprintf(&rec, "%s\\%d.jsonl", l->ops, seq) >= 0)
				(void)fs->rename(fs->ctx, l->journal, rec);
		}
	}
	plan_done(&p);
	return r < 0 ? r : refused ? 1 : 0;
}

/* A parsed record: its header and steps. */
typedef struct Record {
	char type[8];
	int seq, of;
	bool committed, rolled_back;
	Plan plan;      /* apply: steps by number */
	int *undo_plan; /* undo: apply step numbers */
	size_t n_undo;
} Record;

static void record_done(Record *rec)
{
	plan_done(&rec->plan);
	free(rec->undo_plan);
	memset(rec, 0, sizeof(*rec));
}

static int record_parse(const char *text, Record *rec)
{
	memset(rec, 0, sizeof(*rec));
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		_cleanup_free_ char *one = NULL;
		_cleanup_cjson_ cJSON *j = NULL;
		const cJSON *v;

		if (!nl)
			break; /* unterminated: a crash mid-write */
		if (!(one = strndup(line, (size_t)(nl - line))))
			return -ENOMEM;
		line = nl + 1;
		if (!(j = cJSON_Parse(one)))
			return -EBADMSG;
		if ((v = cJSON_GetObjectItemCaseSensitive(j, "type")) && cJSON_IsString(v)) {
			snprintf(rec->type, sizeof(rec->type), "%s", v->valuestring);
			rec->seq = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "seq"));
			if ((v = cJSON_GetObjectItemCaseSensitive(j, "of")))
				rec->of = (int)cJSON_GetNumberValue(v);
			cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(j, "plan"))
			{
				int *t = realloc(rec->undo_plan, (rec->n_undo + 1) * sizeof(int));

				if (!t)
					return -ENOMEM;
				rec->undo_plan = t;
				t[rec->n_undo++] = (int)cJSON_GetNumberValue(v);
			}
		} else if (cJSON_GetObjectItemCaseSensitive(j, "op")) {
			const cJSON *op = cJSON_GetObjectItemCaseSensitive(j, "op"),
				    *p = cJSON_GetObjectItemCaseSensitive(j, "p"),
				    *ot = cJSON_GetObjectItemCaseSensitive(j, "ot");
			int i = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "i"));
			_cleanup_free_ char *path = NULL;
			int k = -1;

			for (int t = 0; t < 4; t++)
				if (cJSON_IsString(op) && strcmp(op->valuestring, op_names[t]) == 0)
					k = t;
			if (k < 0 || i != (int)rec->plan.n || !cJSON_IsString(p) || !cJSON_IsString(ot) ||
			    !(path = unhex(p->valuestring)) || strstr(path, "..") || path[0] == '\\' ||
			    strchr(path, ':'))
				return -EBADMSG;
			if (plan_add(&rec->plan, (Op)k, path, ot->valuestring[0]) < 0)
				return -ENOMEM;
		} else if (cJSON_GetObjectItemCaseSensitive(j, "commit"))
			rec->committed = true;
		else if (cJSON_GetObjectItemCaseSensitive(j, "rollback"))
			rec->rolled_back = true;
	}
	return rec->type[0] ? 0 : -EBADMSG;
}

static int record_load(const WinCowFs *fs, const WinCowLayout *l, int seq, Record *rec)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	int r;

	if (asprintf(&path, "%s\\%d.jsonl", l->ops, seq) < 0)
		return -ENOMEM;
	if ((r = fs->read(fs->ctx, path, &text)) < 0)
		return r;
	r = record_parse(text, rec);
	if (r < 0)
		record_done(rec);
	return r;
}

static int undo_plan_run(const WinCowFs *fs, const WinCowLayout *l, const Record *apply,
			 const int *order, size_t n, char ***out)
{
	for (size_t k = 0; k < n; k++) {
		int i = order[k], r;
		const Step *s;

		if (i < 0 || (size_t)i >= apply->plan.n)
			return -EBADMSG;
		s = &apply->plan.steps[i];
		if ((r = restore(fs, l, apply->seq, i, s)) < 0)
			return r;
		if ((r = append_json(fs, l->journal, obj_num("u", i))) < 0)
			return r;
		if (out && strv_extendf(out, "%s %s", s->old == 'n' ? "removed" : "restored",
					s->path) < 0)
			return -ENOMEM;
	}
	return 0;
}

int win_cow_undo(const WinCowFs *fs, const WinCowLayout *l, char ***out)
{
	_cleanup_free_ bool *undone = NULL;
	_cleanup_free_ int *order = NULL;
	cJSON *h, *plan;
	Record apply = { 0 };
	int r, seq, target = 0;

	if ((r = win_cow_recover(fs, l)) < 0)
		return r;
	seq = next_seq(fs, l);
	if (seq < 0)
		return seq;
	undone = calloc((size_t)seq + 1, sizeof(bool));
	if (!undone)
		return -ENOMEM;
	/* The newest committed apply that no undo names. */
	for (int s = seq - 1; s >= 1; s--) {
		Record rec;

		if (record_load(fs, l, s, &rec) < 0)
			continue;
		if (strcmp(rec.type, "undo") == 0 && rec.committed && rec.of > 0 && rec.of <= seq)
			undone[rec.of] = true;
		else if (strcmp(rec.type, "apply") == 0 && rec.committed && !rec.rolled_back &&
			 !undone[s] && !target) {
			target = s;
			apply = rec;
			break;
		}
		record_done(&rec);
	}
	if (!target)
		return -ENOENT;
	order = calloc(apply.plan.n + 1, sizeof(int));
	h = header("undo", seq);
	plan = cJSON_CreateArray();
	if (!order || !h || !plan) {
		cJSON_Delete(h);
		cJSON_Delete(plan);
		record_done(&apply);
		return -ENOMEM;
	}
	for (size_t k = 0; k < apply.plan.n; k++) {
		order[k] = (int)(apply.plan.n - 1 - k);
		cJSON_AddItemToArray(plan, cJSON_CreateNumber(order[k]));
	}
	cJSON_AddNumberToObject(h, "of", target);
	cJSON_AddItemToObject(h, "plan", plan);
	/* The whole plan is in the header: a killed undo is finished. */
	r = fs->write(fs->ctx, l->journal, "");
	if (r >= 0)
		r = append_json(fs, l->journal, h);
	else
		cJSON_Delete(h);
	if (r >= 0)
		r = undo_plan_run(fs, l, &apply, order, apply.plan.n, out);
	if (r >= 0)
		r = finish(fs, l, seq);
	record_done(&apply);
	return r;
}

int win_cow_recover(const WinCowFs *fs, const WinCowLayout *l)
{
	_cleanup_free_ char *text = NULL;
	Record rec;
	int r = fs->read(fs->ctx, l->journal, &text);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if ((r = record_parse(text, &rec)) < 0)
		return r;
	if (strcmp(rec.type, "apply") == 0) {
		for (size_t i = rec.plan.n; i-- > 0;)
			if ((r = restore(fs, l, rec.seq, (int)i, &rec.plan.steps[i])) < 0)
				break;
		if (r >= 0)
			r = append_json(fs, l->journal, obj_true("rollback"));
		if (r >= 0) {
			_cleanup_free_ char *dst = NULL;

			if (asprintf(&dst, "%s\\%d.jsonl", l->ops, rec.seq) < 0)
				r = -ENOMEM;
			else
				r = fs->rename(fs->ctx, l->journal, dst);
		}
	} else {
		Record apply;

		r = record_load(fs, l, rec.of, &apply);
		if (r >= 0) {
			r = undo_plan_run(fs, l, &apply, rec.undo_plan, rec.n_undo, NULL);
			record_done(&apply);
		}
		if (r >= 0)
			r = finish(fs, l, rec.seq);
	}
	record_done(&rec);
	return r < 0 ? r : 1;
}

static int rm_tree(const WinCowFs *fs, const char *path)
{
	_cleanup_strv_ char **names = NULL;
	int r;

	if (fs->stat(fs->ctx, path) != WIN_FILE_DIRECTORY)
		return fs->remove(fs->ctx, path);
	r = fs->list(fs->ctx, path, &names);
	if (r < 0)
		return r;
	STRV_FOREACH(n, names) {
		_cleanup_free_ char *c = join(path, *n);

		if (!c)
			return -ENOMEM;
		if ((r = rm_tree(fs, c)) < 0)
			return r;
	}
	return fs->remove(fs->ctx, path);
}

/* Everything but the lock (held by the caller), session.json last: a
 * discard killed halfway leaves a session that opens, and is discarded
 * again. */
int win_cow_discard(const WinCowFs *fs, const WinCowLayout *l)
{
	_cleanup_strv_ char **names = NULL;
	_cleanup_free_ char *meta = join(l->session, "session.json");
	int r;

	if (!meta)
		return -ENOMEM;
	r = fs->list(fs->ctx, l->session, &names);
	if (r < 0)
		return r;
	STRV_FOREACH(n, names) {
		_cleanup_free_ char *c = NULL;

		if (strcasecmp(*n, "lock") == 0 || strcasecmp(*n, "session.json") == 0)
			continue;
		if (!(c = join(l->session, *n)))
			return -ENOMEM;
		if ((r = rm_tree(fs, c)) < 0)
			return r;
	}
	if ((r = fs->remove(fs->ctx, meta)) < 0)
		return r;
	win_cow_discard_finish(fs, l);
	return 0;
}

void win_cow_discard_finish(const WinCowFs *fs, const WinCowLayout *l)
{
	_cleanup_free_ char *lock = join(l->session, "lock");

	/* Best effort: while the lock is held (Windows) these fail, and the
	 * caller calls again once it let go. */
	if (lock)
		(void)fs->remove(fs->ctx, lock);
	(void)fs->remove(fs->ctx, l->session);
}

char *win_cow_hex(const char *s)
{
	return hex(s);
}

char *win_cow_unhex(const char *h)
{
	return unhex(h);
}

char *win_cow_join(const char *a, const char *b)
{
	return join(a, b);
}
