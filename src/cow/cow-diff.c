/* Showing changes: a summary list, a unified diff (Myers' O(ND) algorithm
 * over lines, 3 lines of context), and JSON for harnesses. Binary files
 * (a NUL byte in the first 8000, as git decides) and large files are named,
 * not dumped; odd names are C-quoted (cow_quote_path). */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "cow/cow-fsops.h"
#include "cow/cow-review.h"

#define CONTEXT 3
#define MAX_EDIT 1000 /* beyond this edit distance, show a whole replacement */

typedef struct Line {
	const char *s;
	size_t len;
	uint64_t h;
} Line;

typedef struct Text {
	char *buf;
	size_t len;
	Line *lines;
	size_t n;
	bool no_eol; /* last line lacks '\n' */
} Text;

static void text_done(Text *t)
{
	free(t->buf);
	free(t->lines);
	*t = (Text){};
}

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static int text_split(Text *t)
{
	size_t a = 0;

	for (size_t i = 0; i < t->len;) {
		const char *nl = memchr(t->buf + i, '\n', t->len - i);
		size_t end = nl ? (size_t)(nl - t->buf) : t->len;
		if (t->n == a) {
			a = a ? a * 2 : 64;
			Line *n = realloc(t->lines, a * sizeof(Line));
			if (!n)
				return -ENOMEM;
			t->lines = n;
		}
		t->lines[t->n++] = (Line){ t->buf + i, end - i, fnv(t->buf + i, end - i) };
		if (!nl)
			t->no_eol = true;
		i = end + 1;
	}
	return 0;
}

/* Read a file (or a symlink's target, as one line) beneath @root. */
static int text_load(int root, const char *path, size_t max, Text *t, bool *ret_binary,
		     bool *ret_large)
{
	_cleanup_close_ int pfd = -EBADF, fd = -EBADF;
	const char *name;
	struct stat st;

	*ret_binary = *ret_large = false;
	pfd = cow_open_parent(root, path, &name);
	if (pfd < 0)
		return pfd;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode)) {
		t->buf = malloc(PATH_MAX + 1);
		if (!t->buf)
			return -ENOMEM;
		ssize_t n = readlinkat(pfd, name, t->buf, PATH_MAX);
		if (n < 0)
			return -errno;
		t->len = (size_t)n;
		if (memchr(t->buf, '\n', t->len))
			*ret_binary = true;
		return text_split(t);
	}
	if (!S_ISREG(st.st_mode))
		return -EBADFD;
	if ((size_t)st.st_size > max) {
		*ret_large = true;
		return 0;
	}
	fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADFD;
	if ((size_t)st.st_size > max) {
		*ret_large = true;
		return 0;
	}
	t->buf = malloc((size_t)st.st_size + 1);
	if (!t->buf)
		return -ENOMEM;
	while (t->len < (size_t)st.st_size) {
		ssize_t n = RETRY_EINTR(read(fd, t->buf + t->len, (size_t)st.st_size - t->len));
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		t->len += (size_t)n;
	}
	if (memchr(t->buf, '\0', t->len < 8000 ? t->len : 8000)) {
		*ret_binary = true;
		return 0;
	}
	return text_split(t);
}

static bool line_eq(const Line *a, const Line *b)
{
	return a->h == b->h && a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

/* Edit script entries: ' ' keep, '-' delete a[ai], '+' insert b[bi]. */
typedef struct Edit {
	char op;
	size_t ai, bi;
} Edit;

/* Myers' greedy forward algorithm, keeping each round's V for the
 * backtrack. Returns the number of edits in *ret, or -E2BIG past MAX_EDIT. */
static int myers(const Line *a, size_t n, const Line *b, size_t m, Edit **ret, size_t *ret_n)
{
	long max = (long)(n + m), dmax = max < MAX_EDIT ? max : MAX_EDIT, off = dmax + 1;
	_cleanup_free_ long *v = calloc((size_t)(2 * dmax + 3), sizeof(long));
	_cleanup_free_ long *trace = NULL;
	long d, found = -1;
	Edit *e;
	size_t k_n = 0;

	if (!v)
		return -ENOMEM;
	for (d = 0; d <= dmax; d++) {
		/* Round d only reads V at k in [-d+1, d-1]: keep that slice, at
		 * offset d*d in the trace. */
		long *nt = realloc(trace, sizeof(long) * (size_t)((d + 1) * (d + 1)));
		if (!nt)
			return -ENOMEM;
		trace = nt;
		memcpy(trace + d * d, v + off - d, sizeof(long) * (size_t)(2 * d + 1));
		for (long k = -d; k <= d; k += 2) {
			long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
					 ? v[off + k + 1]
					 : v[off + k - 1] + 1;
			long y = x - k;
			while (x < (long)n && y < (long)m && line_eq(&a[x], &b[y]))
				x++, y++;
			v[off + k] = x;
			if (x >= (long)n && y >= (long)m) {
				found = d;
				goto done;
			}
		}
	}
	return -E2BIG;
done:
	e = malloc(sizeof(Edit) * (n + m + 1));
	if (!e)
		return -ENOMEM;
	/* Walk back from (n, m), writing the script from its end. */
	size_t pos = n + m + 1;
	long x = (long)n, y = (long)m;
	for (d = found; d > 0; d--) {
		long *pv = trace + d * d + d, k = x - y; /* pv[k] is V[k] before round d */
		long pk = (k == -d || (k != d && pv[k - 1] < pv[k + 1])) ? k + 1 : k - 1;
		long px = pv[pk], py = px - pk;
		while (x > px && y > py)
			e[--pos] = (Edit){ ' ', (size_t)--x, (size_t)--y };
		if (x == px)
			e[--pos] = (Edit){ '+', (size_t)x, (size_t)--y };
		else
			e[--pos] = (Edit){ '-', (size_t)--x, (size_t)y };
	}
	while (x > 0 && y > 0)
		e[--pos] = (Edit){ ' ', (size_t)--x, (size_t)--y };
	k_n = n + m + 1 - pos;
	memmove(e, e + pos, k_n * sizeof(Edit));
	*ret = e;
	*ret_n = k_n;
	return 0;
}

/* Whole replacement when the edit distance is too large to search. */
static int replace_all(size_t n, size_t m, Edit **ret, size_t *ret_n)
{
	Edit *e = malloc(sizeof(Edit) * (n + m + 1));
	size_t k = 0;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		e[k++] = (Edit){ '-', i, 0 };
	for (size_t i = 0; i < m; i++)
		e[k++] = (Edit){ '+', n, i };
	*ret = e;
	*ret_n = k;
	return 0;
}

typedef struct Colors {
	const char *meta, *frag, *old, *new, *reset, *esc_on, *esc_off;
} Colors;

static const Colors plain = { "", "", "", "", "", "", "" };
static const Colors ansi = { "\033[1m", "\033[36m", "\033[31m", "\033[32m", "\033[m",
			     "\033[7m", "\033[27m" };

static void put_line(FILE *f, const Colors *c, char op, const Line *l, bool last_no_eol,
		     size_t *escaped)
{
	const char *col = op == '-' ? c->old : op == '+' ? c->new : "";
	fprintf(f, "%s%c", col, op);
	*escaped += cow_put_escaped(f, l->s, l->len, c->esc_on, c->esc_off);
	fprintf(f, "%s\n", op == ' ' ? "" : c->reset);
	if (last_no_eol)
		fprintf(f, "\\ No newline at end of file\n");
}

static void print_hunks(FILE *f, const Colors *c, const Text *a, const Text *b, const Edit *e,
			size_t n, size_t *escaped)
{
	for (size_t i = 0; i < n;) {
		/* Find the next change, then extend the hunk while changes are
		 * within 2*CONTEXT lines of each other. */
		while (i < n && e[i].op == ' ')
			i++;
		if (i >= n)
			break;
		size_t start = i >= CONTEXT ? i - CONTEXT : 0, end = i;
		for (size_t j = i; j < n; j++) {
			if (e[j].op != ' ')
				end = j;
			else if (j - end > 2 * CONTEXT)
				break;
		}
		end = end + CONTEXT + 1 < n ? end + CONTEXT + 1 : n;
		size_t as = 0, al = 0, bs = 0, bl = 0;
		as = e[start].ai;
		bs = e[start].bi;
		for (size_t j = start; j < end; j++) {
			if (e[j].op != '+')
				al++;
			if (e[j].op != '-')
				bl++;
		}
		fprintf(f, "%s@@ -%zu,%zu +%zu,%zu @@%s\n", c->frag, al ? as + 1 : as, al,
			bl ? bs + 1 : bs, bl, c->reset);
		for (size_t j = start; j < end; j++) {
			if (e[j].op == '+')
				put_line(f, c, '+', &b->lines[e[j].bi],
					 b->no_eol && e[j].bi == b->n - 1, escaped);
			else
				put_line(f, c, e[j].op, &a->lines[e[j].ai],
					 a->no_eol && e[j].ai == a->n - 1 &&
						 (e[j].op == '-' || !b->no_eol),
					 escaped);
		}
		i = end;
	}
}

static const char *mode_word(mode_t m)
{
	return S_ISDIR(m) ? "directory" : S_ISLNK(m) ? "symlink" : S_ISREG(m) ? "file" : "special file";
}

/* Both sides of one change, loaded and compared. */
typedef struct Pair {
	Text a, b;
	bool a_text, b_text;      /* the side has content to compare */
	bool binary, large;
	Edit *e;
	size_t ne;
	size_t added, removed;    /* lines */
} Pair;

static void pair_done(Pair *p)
{
	text_done(&p->a);
	text_done(&p->b);
	free(p->e);
	*p = (Pair){};
}

/* 0, or -ENOENT/-EBADFD when a side cannot be read as a file, or -errno. */
static int pair_load(int ws_fd, int upper_fd, const CowChange *ch, size_t max, Pair *p)
{
	bool abin = false, bbin = false, alarge = false, blarge = false;
	int r;

	p->a_text = ch->lower_mode && !S_ISDIR(ch->lower_mode) && ch->kind != COW_MODE_CHANGED;
	p->b_text = ch->upper_mode && !S_ISDIR(ch->upper_mode) && ch->kind != COW_MODE_CHANGED &&
		    ch->refused != COW_REFUSE_SPECIAL;
	if (p->a_text && (r = text_load(ws_fd, ch->path, max, &p->a, &abin, &alarge)) < 0)
		return r;
	if (p->b_text && (r = text_load(upper_fd, ch->path, max, &p->b, &bbin, &blarge)) < 0)
		return r;
	p->large = alarge || blarge;
	p->binary = !p->large && (abin || bbin);
	if (p->large || p->binary || (!p->a_text && !p->b_text))
		return 0;
	r = myers(p->a.lines, p->a.n, p->b.lines, p->b.n, &p->e, &p->ne);
	if (r == -E2BIG)
		r = replace_all(p->a.n, p->b.n, &p->e, &p->ne);
	if (r < 0)
		return r;
	for (size_t i = 0; i < p->ne; i++) {
		if (p->e[i].op == '+')
			p->added++;
		else if (p->e[i].op == '-')
			p->removed++;
	}
	return 0;
}

static int diff_one(int ws_fd, int upper_fd, const CowChange *ch, FILE *f, const Colors *c,
		    const CowDiffOptions *o, size_t max)
{
	_cleanup_free_ char *q = cow_quote_path(ch->path);
	_cleanup_(pair_done) Pair p = {};
	size_t escaped = 0;
	int r;

	if (!q)
		return -ENOMEM;
	fprintf(f, "%sdiff --ward %s%s\n", c->meta, q, c->reset);
	if (ch->refused != COW_REFUSE_NONE)
		fprintf(f, "%srefused: %s%s\n", c->meta, cow_refusal_to_string(ch->refused), c->reset);
	if (!ch->lower_mode)
		fprintf(f, "%snew %s mode %06o%s\n", c->meta, mode_word(ch->upper_mode),
			ch->upper_mode & 0177777, c->reset);
	else if (!ch->upper_mode)
		fprintf(f, "%sdeleted %s mode %06o%s\n", c->meta, mode_word(ch->lower_mode),
			ch->lower_mode & 0177777, c->reset);
	else if ((ch->lower_mode & S_IFMT) != (ch->upper_mode & S_IFMT))
		fprintf(f, "%stype changed: %s -> %s%s\n", c->meta, mode_word(ch->lower_mode),
			mode_word(ch->upper_mode), c->reset);
	if (ch->lower_mode && ch->upper_mode && (ch->flags & COW_F_MODE))
		fprintf(f, "%sold mode %06o\nnew mode %06o%s\n", c->meta, ch->lower_mode & 0177777,
			(ch->upper_mode & S_IFMT) | cow_effective_mode(ch->upper_mode), c->reset);
	if (ch->flags & COW_F_SETUID_STRIPPED)
		fprintf(f, "%snote: setuid/setgid/sticky bits are not applied%s\n", c->meta, c->reset);
	if (ch->flags & COW_F_HARDLINK)
		fprintf(f, "%snote: hard link, applied as a copy%s\n", c->meta, c->reset);
	r = pair_load(ws_fd, upper_fd, ch, max, &p);
	if (r == -ENOENT || r == -EBADFD) {
		fprintf(f, "(content not readable: %s)\n", strerror(-r));
		return 0;
	}
	if (r < 0)
		return r;
	if (!p.a_text && !p.b_text)
		return 0;
	if (p.large) {
		fprintf(f, "Large file %s not shown (more than %zu bytes)\n", q, max);
		return 0;
	}
	if (p.binary) {
		fprintf(f, "Binary files %s%s and %s%s differ\n", p.a_text ? "a/" : "/dev/null",
			p.a_text ? q : "", p.b_text ? "b/" : "/dev/null", p.b_text ? q : "");
		return 0;
	}
	fprintf(f, "%s--- %s%s%s\n", c->meta, p.a_text ? "a/" : "/dev/null", p.a_text ? q : "",
		c->reset);
	fprintf(f, "%s+++ %s%s%s\n", c->meta, p.b_text ? "b/" : "/dev/null", p.b_text ? q : "",
		c->reset);
	if (o->collapse > 0 && p.added + p.removed > o->collapse) {
		fprintf(f, "%s@@ collapsed: %zu lines added, %zu removed (shown without --collapse) @@%s\n",
			c->frag, p.added, p.removed, c->reset);
		return 0;
	}
	print_hunks(f, c, &p.a, &p.b, p.e, p.ne, &escaped);
	if (escaped > 0)
		fprintf(f, "%snote: %zu control or invisible character%s shown escaped (\\r, \\xNN, \\uNNNN)%s\n",
			c->meta, escaped, escaped == 1 ? "" : "s", c->reset);
	return 0;
}

static const char *kind_letter(CowKind k)
{
	static const char *const t[_COW_KIND_MAX] = { "A", "M", "D", "T", "m", "L", "R" };
	return k >= 0 && k < _COW_KIND_MAX ? t[k] : "?";
}

static bool is_dir_change(const CowChange *ch)
{
	return S_ISDIR(ch->upper_mode ? ch->upper_mode : ch->lower_mode);
}

/* One line per change, naming its kind once: "modified        src/a.c". */
static int write_summary(const CowChangeList *l, const bool *selected, FILE *f)
{
	unsigned counts[_COW_KIND_MAX] = {};
	size_t shown = 0, refused = 0;

	for (size_t i = 0; i < l->n; i++) {
		const CowChange *ch = &l->items[i];
		_cleanup_free_ char *q = NULL;
		if (selected && !selected[i])
			continue;
		q = cow_quote_path(ch->path);
		if (!q)
			return -ENOMEM;
		fprintf(f, "%-15s %s%s", cow_kind_to_string(ch->kind), q, is_dir_change(ch) ? "/" : "");
		if (ch->refused != COW_REFUSE_NONE) {
			fprintf(f, "  [refused: %s]", cow_refusal_to_string(ch->refused));
			refused++;
		}
		fputc('\n', f);
		counts[ch->kind]++;
		shown++;
	}
	if (shown == 0) {
		fputs("no changes\n", f);
		return 0;
	}
	fprintf(f, "%zu change%s:", shown, shown == 1 ? "" : "s");
	for (int k = 0, first = 1; k < _COW_KIND_MAX; k++)
		if (counts[k]) {
			fprintf(f, "%s %u %s", first ? "" : ",", counts[k], cow_kind_to_string(k));
			first = 0;
		}
	if (refused)
		fprintf(f, " (%zu refused)", refused);
	fputc('\n', f);
	return 0;
}

static int write_names(const CowChangeList *l, const bool *selected, FILE *f, bool status)
{
	for (size_t i = 0; i < l->n; i++) {
		_cleanup_free_ char *q = NULL;
		if (selected && !selected[i])
			continue;
		q = cow_quote_path(l->items[i].path);
		if (!q)
			return -ENOMEM;
		if (status)
			fprintf(f, "%s\t", kind_letter(l->items[i].kind));
		fprintf(f, "%s\n", q);
	}
	return 0;
}

/* Per file: kind, path, lines added and removed; then the totals. */
static int write_stat(int ws_fd, int upper_fd, const CowChangeList *l, const bool *selected,
		      FILE *f, size_t max)
{
	size_t width = 0, files = 0, added = 0, removed = 0;
	int r;

	for (size_t i = 0; i < l->n; i++) {
		_cleanup_free_ char *q = NULL;
		if ((selected && !selected[i]) || is_dir_change(&l->items[i]))
			continue;
		q = cow_quote_path(l->items[i].path);
		if (!q)
			return -ENOMEM;
		if (strlen(q) > width)
			width = strlen(q);
	}
	if (width > 60)
		width = 60;
	for (size_t i = 0; i < l->n; i++) {
		const CowChange *ch = &l->items[i];
		_cleanup_(pair_done) Pair p = {};
		_cleanup_free_ char *q = NULL;
		if ((selected && !selected[i]) || is_dir_change(ch))
			continue;
		q = cow_quote_path(ch->path);
		if (!q)
			return -ENOMEM;
		r = pair_load(ws_fd, upper_fd, ch, max, &p);
		if (r < 0 && r != -ENOENT && r != -EBADFD)
			return r;
		fprintf(f, " %-15s %-*s | ", cow_kind_to_string(ch->kind), (int)width, q);
		if (r < 0)
			fputs("unreadable", f);
		else if (p.large)
			fputs("large file", f);
		else if (p.binary)
			fputs("binary", f);
		else if (!p.a_text && !p.b_text)
			fputs("mode only", f);
		else
			fprintf(f, "+%zu -%zu", p.added, p.removed);
		if (ch->refused != COW_REFUSE_NONE)
			fprintf(f, "  [refused: %s]", cow_refusal_to_string(ch->refused));
		fputc('\n', f);
		files++;
		added += p.added;
		removed += p.removed;
	}
	fprintf(f, " %zu file%s changed, %zu line%s added, %zu removed\n", files,
		files == 1 ? "" : "s", added, added == 1 ? "" : "s", removed);
	return 0;
}

int cow_diff_write(CowSession *s, const CowChangeList *l, const bool *selected, FILE *f,
		   const CowDiffOptions *o)
{
	const Colors *c = o->color ? &ansi : &plain;
	_cleanup_close_ int ws_fd = -EBADF, upper_fd = -EBADF;
	size_t max = o->max_file ? o->max_file : 8u << 20, shown = 0;
	int r;

	switch (o->mode) {
	case COW_DIFF_NAME_ONLY:
	case COW_DIFF_NAME_STATUS:
		return write_names(l, selected, f, o->mode == COW_DIFF_NAME_STATUS);
	case COW_DIFF_SUMMARY:
		return write_summary(l, selected, f);
	case COW_DIFF_FULL:
		r = write_summary(l, selected, f);
		if (r < 0)
			return r;
		break;
	case COW_DIFF_STAT:
		break;
	case _COW_DIFF_MODE_MAX:
	case _COW_DIFF_MODE_INVALID:
	default:
		return -EINVAL;
	}
	for (size_t i = 0; i < l->n; i++)
		if (!selected || selected[i])
			shown++;
	if (shown == 0 && o->mode == COW_DIFF_FULL)
		return 0;
	ws_fd = cow_session_open_workspace(s);
	if (ws_fd < 0)
		return ws_fd;
	upper_fd = openat(cow_session_dir_fd(s), "upper",
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (upper_fd < 0)
		return -errno;
	if (o->mode == COW_DIFF_STAT)
		return write_stat(ws_fd, upper_fd, l, selected, f, max);
	fputc('\n', f);
	for (size_t i = 0; i < l->n; i++) {
		if (selected && !selected[i])
			continue;
		r = diff_one(ws_fd, upper_fd, &l->items[i], f, c, o, max);
		if (r < 0)
			return r;
	}
	return 0;
}
