/* The undo journal's text format. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "windows/win-journal.h"

const char WIN_JOURNAL_HEADER[] = "ward-windows-journal 1\n";

static const char *const kinds[_WIN_JOURNAL_KIND_MAX] = {
	[WIN_JOURNAL_SIDS] = "sids",   [WIN_JOURNAL_PROFILE] = "profile",
	[WIN_JOURNAL_MKDIR] = "mkdir", [WIN_JOURNAL_ACL] = "acl",
	[WIN_JOURNAL_LABEL] = "label", [WIN_JOURNAL_ABSENT] = "absent",
	[WIN_JOURNAL_HELPER] = "helper",
};

/* A run's own SID, in the normal form: its package SID (not the two that
 * name every package) or a synthetic one. */
static bool run_sid(const char *s)
{
	char n[WIN_SID_STRING_MAX];

	if (win_sid_normalize(s, n) < 0 || strcmp(n, s) != 0)
		return false;
	if (strcmp(s, "S-1-15-2-1") == 0 || strcmp(s, "S-1-15-2-2") == 0)
		return false;
	return strncmp(s, "S-1-15-2-", 9) == 0 || strncmp(s, "S-1-15-3-1024-", 14) == 0;
}

int win_journal_helper_split(const char *arg2, char run_id[17], char sid[WIN_SID_STRING_MAX])
{
	if (!arg2 || strlen(arg2) < 18 || strspn(arg2, "0123456789abcdef") != 16 || arg2[16] != ' ' ||
	    strlen(arg2 + 17) >= WIN_SID_STRING_MAX || !run_sid(arg2 + 17))
		return -EINVAL;
	memcpy(run_id, arg2, 16);
	run_id[16] = 0;
	strcpy(sid, arg2 + 17);
	return 0;
}

int win_journal_helper_arg(const char *run_id, const char *sid, char **ret)
{
	char id[17], s[WIN_SID_STRING_MAX];
	_cleanup_free_ char *a = NULL;

	if (!run_id || !sid || asprintf(&a, "%s %s", run_id, sid) < 0)
		return !run_id || !sid ? -EINVAL : -ENOMEM;
	if (win_journal_helper_split(a, id, s) < 0)
		return -EINVAL;
	*ret = TAKE_PTR(a);
	return 0;
}

int win_journal_line(WinJournalKind kind, const char *arg, const char *arg2, char **ret)
{
	if (kind < 0 || kind >= _WIN_JOURNAL_KIND_MAX || !arg || !*arg || strpbrk(arg, "\t\n\r") ||
	    (arg2 && strpbrk(arg2, "\t\n\r")))
		return -EINVAL;
	if (kind == WIN_JOURNAL_HELPER) {
		char id[17], sid[WIN_SID_STRING_MAX];

		if (win_journal_helper_split(arg2, id, sid) < 0)
			return -EINVAL;
		if (asprintf(ret, "%s\t%s\t%s\n", kinds[kind], arg, arg2) < 0)
			return -ENOMEM;
	} else if (kind == WIN_JOURNAL_LABEL) {
		if (asprintf(ret, "%s\t%s\t%s\n", kinds[kind], arg, arg2 && *arg2 ? arg2 : "-") < 0)
			return -ENOMEM;
	} else if (asprintf(ret, "%s\t%s\n", kinds[kind], arg) < 0)
		return -ENOMEM;
	return 0;
}

void win_journal_done(WinJournal *j)
{
	for (size_t i = 0; i < j->n; i++) {
		free(j->entries[i].arg);
		free(j->entries[i].arg2);
	}
	free(j->entries);
	*j = (WinJournal){ 0 };
}

static int parse_line(const char *s, size_t n, WinJournalEntry *ret)
{
	const char *tab = memchr(s, '\t', n), *tab2;
	WinJournalEntry e = { 0 };

	e.kind = _WIN_JOURNAL_KIND_INVALID;
	if (!tab)
		return -EINVAL;
	for (int k = 0; k < _WIN_JOURNAL_KIND_MAX; k++)
		if (strlen(kinds[k]) == (size_t)(tab - s) && strncmp(s, kinds[k], (size_t)(tab - s)) == 0)
			e.kind = (WinJournalKind)k;
	if (e.kind < 0)
		return -EINVAL;
	tab++;
	n -= (size_t)(tab - s);
	tab2 = memchr(tab, '\t', n);
	if ((e.kind == WIN_JOURNAL_LABEL || e.kind == WIN_JOURNAL_HELPER) != (tab2 != NULL))
		return -EINVAL;
	if (tab2) {
		size_t l2 = n - (size_t)(tab2 + 1 - tab);

		if (tab2 == tab || l2 == 0 || memchr(tab2 + 1, '\t', l2))
			return -EINVAL;
		if (e.kind == WIN_JOURNAL_HELPER) {
			_cleanup_free_ char *a2 = strndup(tab2 + 1, l2);
			char id[17], sid[WIN_SID_STRING_MAX];

			if (!a2)
				return -ENOMEM;
			/* An undo ward cannot read is reported, never guessed. */
			if (win_journal_helper_split(a2, id, sid) < 0)
				return -EINVAL;
		}
		e.arg = strndup(tab, (size_t)(tab2 - tab));
		if (!(l2 == 1 && tab2[1] == '-'))
			e.arg2 = strndup(tab2 + 1, l2);
		if (!e.arg || (!(l2 == 1 && tab2[1] == '-') && !e.arg2)) {
			free(e.arg);
			free(e.arg2);
			return -ENOMEM;
		}
	} else {
		if (n == 0)
			return -EINVAL;
		e.arg = strndup(tab, n);
		if (!e.arg)
			return -ENOMEM;
	}
	*ret = e;
	return 0;
}

int win_journal_parse(const char *text, WinJournal *ret)
{
	WinJournal j = { 0 };
	size_t hl = strlen(WIN_JOURNAL_HEADER);
	const char *p;

	if (strncmp(text, WIN_JOURNAL_HEADER, hl) != 0)
		return -EINVAL;
	for (p = text + hl; *p;) {
		const char *nl = strchr(p, '\n');
		WinJournalEntry e, *ne;
		int r;

		if (!nl)
			break; /* the line a crash cut short: its change never started */
		r = parse_line(p, (size_t)(nl - p), &e);
		if (r < 0) {
			win_journal_done(&j);
			return r;
		}
		ne = realloc(j.entries, (j.n + 1) * sizeof(*ne));
		if (!ne) {
			free(e.arg);
			free(e.arg2);
			win_journal_done(&j);
			return -ENOMEM;
		}
		j.entries = ne;
		j.entries[j.n++] = e;
		p = nl + 1;
	}
	*ret = j;
	return 0;
}
