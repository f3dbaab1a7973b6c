/* The network journal's lines, its parser and the cleanup order. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "windows/win-net-journal.h"

const char WIN_NET_JOURNAL_HEADER[] = "ward-windows-net 1\n";

static const char *const kind_names[_WIN_NETJ_KIND_MAX] = {
	[WIN_NETJ_FILTER] = "filter",
	[WIN_NETJ_SUBLAYER] = "sublayer",
	[WIN_NETJ_PROVIDER] = "provider",
	[WIN_NETJ_LOOPBACK] = "loopback",
};

int win_net_journal_line(const WinNetJournalEntry *e, char *buf, size_t n)
{
	char key[WIN_GUID_STRING_MAX];
	int r;

	win_guid_format(&e->key, key);
	switch (e->kind) {
	case WIN_NETJ_FILTER:
		if (!*e->sid || !*e->name || strpbrk(e->name, "\t\n"))
			return -EINVAL;
		r = snprintf(buf, n, "filter\t%s\t%s\t%s\n", key, e->sid, e->name);
		break;
	case WIN_NETJ_SUBLAYER:
	case WIN_NETJ_PROVIDER:
		r = snprintf(buf, n, "%s\t%s\n", kind_names[e->kind], key);
		break;
	case WIN_NETJ_LOOPBACK:
		if (!*e->sid)
			return -EINVAL;
		r = snprintf(buf, n, "loopback\t%s\n", e->sid);
		break;
	case _WIN_NETJ_KIND_MAX:
	default:
		return -EINVAL;
	}
	return r < 0 || (size_t)r >= n ? -ENAMETOOLONG : 0;
}

static int append(char **text, size_t *len, const char *s)
{
	size_t l = strlen(s);
	char *t = realloc(*text, *len + l + 1);

	if (!t)
		return -ENOMEM;
	memcpy(t + *len, s, l + 1);
	*text = t;
	*len += l;
	return 0;
}

int win_net_journal_plan_lines(const WinWfpPlan *p, char **ret)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	char line[WIN_SID_STRING_MAX + 128];
	WinNetJournalEntry e = { .kind = WIN_NETJ_PROVIDER, .key = p->provider };
	int r;

	if ((r = win_net_journal_line(&e, line, sizeof(line))) < 0 ||
	    (r = append(&text, &len, line)) < 0)
		return r;
	e.kind = WIN_NETJ_SUBLAYER;
	e.key = p->sublayer;
	if ((r = win_net_journal_line(&e, line, sizeof(line))) < 0 ||
	    (r = append(&text, &len, line)) < 0)
		return r;
	for (size_t i = 0; i < p->n; i++) {
		e.kind = WIN_NETJ_FILTER;
		e.key = p->filters[i].key;
		snprintf(e.sid, sizeof(e.sid), "%s", p->sid);
		snprintf(e.name, sizeof(e.name), "%s", p->filters[i].name);
		if ((r = win_net_journal_line(&e, line, sizeof(line))) < 0 ||
		    (r = append(&text, &len, line)) < 0)
			return r;
	}
	*ret = text;
	text = NULL;
	return 0;
}

static int parse_line(char *line, WinNetJournalEntry *e)
{
	char *f[5] = { 0 };
	size_t nf = 0;
	char *save = NULL, *tok;
	char sid[WIN_SID_STRING_MAX];

	/* Exact tab separation: no empty fields. */
	if (!*line || strstr(line, "\t\t") || line[0] == '\t' || line[strlen(line) - 1] == '\t')
		return -EINVAL;
	for (tok = strtok_r(line, "\t", &save); tok; tok = strtok_r(NULL, "\t", &save)) {
		if (nf == 5)
			return -EINVAL;
		f[nf++] = tok;
	}
	memset(e, 0, sizeof(*e));
	if (strcmp(f[0], "filter") == 0 && nf == 4) {
		e->kind = WIN_NETJ_FILTER;
		if (win_guid_parse(f[1], &e->key) < 0 || win_sid_normalize(f[2], sid) < 0 ||
		    strlen(f[3]) >= sizeof(e->name))
			return -EINVAL;
		snprintf(e->sid, sizeof(e->sid), "%s", sid);
		snprintf(e->name, sizeof(e->name), "%s", f[3]);
		return 0;
	}
	if ((strcmp(f[0], "sublayer") == 0 || strcmp(f[0], "provider") == 0) && nf == 2) {
		e->kind = f[0][0] == 's' ? WIN_NETJ_SUBLAYER : WIN_NETJ_PROVIDER;
		return win_guid_parse(f[1], &e->key);
	}
	if (strcmp(f[0], "loopback") == 0 && nf == 2) {
		e->kind = WIN_NETJ_LOOPBACK;
		if (win_sid_normalize(f[1], sid) < 0)
			return -EINVAL;
		snprintf(e->sid, sizeof(e->sid), "%s", sid);
		return 0;
	}
	return -EINVAL;
}

int win_net_journal_parse(const char *text, WinNetJournal *ret)
{
	_cleanup_free_ char *copy = NULL;
	WinNetJournal j = { 0 };
	char *p, *nl;
	size_t hl = strlen(WIN_NET_JOURNAL_HEADER);

	memset(ret, 0, sizeof(*ret));
	if (!text || !*text)
		return 0;
	if (strncmp(text, WIN_NET_JOURNAL_HEADER, hl) != 0)
		return -EINVAL;
	copy = strdup(text + hl);
	if (!copy)
		return -ENOMEM;
	for (p = copy; *p; p = nl + 1) {
		WinNetJournalEntry e, *n;
		int r;

		nl = strchr(p, '\n');
		if (!nl)
			break; /* a truncated last line: the change was never made */
		*nl = 0;
		r = parse_line(p, &e);
		if (r < 0) {
			free(j.entries);
			return r;
		}
		n = realloc(j.entries, (j.n + 1) * sizeof(*n));
		if (!n) {
			free(j.entries);
			return -ENOMEM;
		}
		j.entries = n;
		j.entries[j.n++] = e;
	}
	*ret = j;
	return 0;
}

void win_net_journal_done(WinNetJournal *j)
{
	free(j->entries);
	j->entries = NULL;
	j->n = 0;
}

void win_net_cleanup_order(const WinNetJournal *j, size_t *ret)
{
	static const WinNetJournalKind order[] = { WIN_NETJ_LOOPBACK, WIN_NETJ_FILTER,
						    WIN_NETJ_SUBLAYER, WIN_NETJ_PROVIDER };
	size_t k = 0;

	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++)
		for (size_t i = 0; i < j->n; i++)
			if (j->entries[i].kind == order[o])
				ret[k++] = i;
}

int win_net_journal_rest(const WinNetJournal *j, const bool *done, char **ret)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	bool any = false;
	int r;

	if ((r = append(&text, &len, WIN_NET_JOURNAL_HEADER)) < 0)
		return r;
	for (size_t i = 0; i < j->n; i++) {
		char line[WIN_SID_STRING_MAX + 128];

		if (done[i])
			continue;
		if ((r = win_net_journal_line(&j->entries[i], line, sizeof(line))) < 0 ||
		    (r = append(&text, &len, line)) < 0)
			return r;
		any = true;
	}
	*ret = any ? text : NULL;
	if (any)
		text = NULL;
	return 0;
}
