/* The conflict baseline: for every path this session's applies, undos and
 * rollbacks touched, the inode and ctime the last of them left there, read
 * back from the result lines of ops/<seq>.jsonl, oldest first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "cow/cow-journal.h"
#include "cow/cow-review.h"

static int cmp_entry(const void *a, const void *b)
{
	const CowBaselineEntry *x = a, *y = b;
	return strcmp(x->path, y->path);
}

static int cmp_entry_order(const void *a, const void *b)
{
	const CowBaselineEntry *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c != 0)
		return c;
	return x->order > y->order ? -1 : x->order < y->order;
}

static int baseline_add(CowBaseline *b, size_t *alloc, const CowOp *op)
{
	if (b->n == *alloc) {
		size_t na = *alloc ? *alloc * 2 : 64;
		CowBaselineEntry *n = realloc(b->items, na * sizeof(*n));
		if (!n)
			return -ENOMEM;
		b->items = n;
		*alloc = na;
	}
	CowBaselineEntry *e = &b->items[b->n];
	e->path = strdup(op->path);
	if (!e->path)
		return -ENOMEM;
	e->type = op->new_absent ? 'n' : cow_type_char(op->new_st.st_mode);
	e->dev = op->new_st.st_dev;
	e->ino = op->new_st.st_ino;
	e->ctime_ns = cow_ctime_ns(&op->new_st);
	e->size = op->new_st.st_size;
	e->order = b->n;
	b->n++;
	return 0;
}

/* Result lines of every record, oldest first, each later one overriding. */
static int baseline_scan_text(CowBaseline *b, size_t *alloc, const char *text)
{
	const char *p = text;
	int r;

	for (const char *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		_cleanup_free_ char *line = strndup(p, (size_t)(nl - p));
		if (!line)
			return -ENOMEM;
		if (!strstr(line, "\"d\":"))
			continue;
		_cleanup_cjson_ cJSON *l = cJSON_Parse(line);
		const cJSON *p_hex = cJSON_GetObjectItemCaseSensitive(l, "p");
		if (!cJSON_IsString(p_hex))
			continue;
		CowOp op = {};
		op.path = cow_hex_decode(p_hex->valuestring);
		if (!op.path)
			continue;
		cow_record_parse_stat(l, &op);
		r = baseline_add(b, alloc, &op);
		free(op.path);
		if (r < 0)
			return r;
	}
	return 0;
}

int cow_baseline_load(int session_dfd, CowBaseline *ret)
{
	CowBaseline b = {};
	size_t alloc = 0;
	int max = cow_next_seq(session_dfd), r = 0;

	for (int seq = 1; seq < max && r >= 0; seq++) {
		_cleanup_free_ char *text = NULL;
		char name[64];
		snprintf(name, sizeof(name), "ops/%d.jsonl", seq);
		if (cow_read_file_at(session_dfd, name, 1 << 30, &text, NULL) < 0)
			continue;
		r = baseline_scan_text(&b, &alloc, text);
	}
	if (r < 0) {
		cow_baseline_done(&b);
		return r;
	}
	/* Keep only the newest entry per path: sort by path, newest first
	 * among equals, then drop the older duplicates. */
	if (b.n > 1)
		qsort(b.items, b.n, sizeof(CowBaselineEntry), cmp_entry_order);
	size_t w = 0;
	for (size_t i = 0; i < b.n; i++) {
		if (w > 0 && strcmp(b.items[w - 1].path, b.items[i].path) == 0) {
			free(b.items[i].path);
			continue;
		}
		b.items[w++] = b.items[i];
	}
	b.n = w;
	*ret = b;
	return 0;
}

const CowBaselineEntry *cow_baseline_find(const CowBaseline *b, const char *path)
{
	CowBaselineEntry key = { .path = (char *)path };

	if (b->n == 0)
		return NULL;
	return bsearch(&key, b->items, b->n, sizeof(CowBaselineEntry), cmp_entry);
}

void cow_baseline_done(CowBaseline *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->items[i].path);
	free(b->items);
	*b = (CowBaseline){};
}
