/* SDDL parsing and formatting for file DACLs and labels, the canonical
 * merge, and the read-back check. SDDL grammar: "Security Descriptor
 * String Format" and "ACE Strings" in the Windows documentation. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "common/strv.h"
#include "windows/win-acl.h"

static const struct {
	const char *alias;
	const char *sid;
} sid_aliases[] = {
	{ "WD", "S-1-1-0" },         { "CO", "S-1-3-0" },      { "CG", "S-1-3-1" },
	{ "OW", "S-1-3-4" },         { "NU", "S-1-5-2" },      { "IU", "S-1-5-4" },
	{ "SU", "S-1-5-6" },         { "AN", "S-1-5-7" },      { "PS", "S-1-5-10" },
	{ "AU", "S-1-5-11" },        { "RC", "S-1-5-12" },     { "SY", "S-1-5-18" },
	{ "LS", "S-1-5-19" },        { "NS", "S-1-5-20" },     { "WR", "S-1-5-33" },
	{ "BA", "S-1-5-32-544" },    { "BU", "S-1-5-32-545" }, { "BG", "S-1-5-32-546" },
	{ "PU", "S-1-5-32-547" },    { "BO", "S-1-5-32-551" }, { "RD", "S-1-5-32-555" },
	{ "ER", "S-1-5-32-573" },    { "AC", "S-1-15-2-1" },   { "LW", "S-1-16-4096" },
	{ "ME", "S-1-16-8192" },     { "MP", "S-1-16-8448" },  { "HI", "S-1-16-12288" },
	{ "SI", "S-1-16-16384" },
};

static const struct {
	const char *alias;
	uint32_t mask;
} right_aliases[] = {
	{ "GA", 0x10000000 }, { "GR", 0x80000000 }, { "GW", 0x40000000 }, { "GX", 0x20000000 },
	{ "FA", 0x001F01FF }, { "FR", 0x00120089 }, { "FW", 0x00120116 }, { "FX", 0x001200A0 },
	{ "KA", 0x000F003F }, { "KR", 0x00020019 }, { "KW", 0x00020006 }, { "KX", 0x00020019 },
	{ "SD", 0x00010000 }, { "RC", 0x00020000 }, { "WD", 0x00040000 }, { "WO", 0x00080000 },
	{ "CC", 0x00000001 }, { "DC", 0x00000002 }, { "LC", 0x00000004 }, { "SW", 0x00000008 },
	{ "RP", 0x00000010 }, { "WP", 0x00000020 }, { "DT", 0x00000040 }, { "LO", 0x00000080 },
	{ "CR", 0x00000100 }, { "NW", 0x00000001 }, { "NR", 0x00000002 }, { "NX", 0x00000004 },
};

void win_acl_done(WinAcl *acl)
{
	for (size_t i = 0; i < acl->n; i++)
		free(acl->aces[i].raw);
	free(acl->aces);
	*acl = (WinAcl){ 0 };
}

static int push(WinAcl *acl, const WinAce *ace)
{
	WinAce *a = realloc(acl->aces, (acl->n + 1) * sizeof(WinAce));

	if (!a)
		return -ENOMEM;
	acl->aces = a;
	a[acl->n] = *ace;
	if (ace->raw) {
		a[acl->n].raw = strdup(ace->raw);
		if (!a[acl->n].raw)
			return -ENOMEM;
	}
	acl->n++;
	return 0;
}

int win_acl_append(WinAcl *acl, WinAceType type, uint8_t flags, uint32_t mask, const char *sid)
{
	WinAce ace = { .type = type, .flags = flags, .mask = mask };

	if (win_sid_normalize(sid, ace.sid) < 0)
		return -EINVAL;
	return push(acl, &ace);
}

static int parse_sid(const char *s, size_t n, char ret[WIN_SID_STRING_MAX])
{
	char buf[WIN_SID_STRING_MAX];

	if (n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (n == 2) {
		for (size_t i = 0; i < ELEMENTSOF(sid_aliases); i++)
			if (strcmp(buf, sid_aliases[i].alias) == 0) {
				strcpy(ret, sid_aliases[i].sid);
				return 0;
			}
		return -EINVAL;
	}
	return win_sid_normalize(buf, ret);
}

static int parse_rights(const char *s, size_t n, uint32_t *ret)
{
	uint32_t m = 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		char buf[16], *end;
		unsigned long long v;

		if (n - 2 > 8)
			return -EINVAL;
		memcpy(buf, s, n);
		buf[n] = '\0';
		v = strtoull(buf, &end, 16);
		if (*end)
			return -EINVAL;
		*ret = (uint32_t)v;
		return 0;
	}
	if (n == 0 || n % 2)
		return -EINVAL;
	for (size_t i = 0; i < n; i += 2) {
		bool found = false;

		for (size_t j = 0; j < ELEMENTSOF(right_aliases); j++)
			if (strncmp(s + i, right_aliases[j].alias, 2) == 0) {
				m |= right_aliases[j].mask;
				found = true;
				break;
			}
		if (!found)
			return -EINVAL;
	}
	*ret = m;
	return 0;
}

static int parse_flags(const char *s, size_t n, uint8_t *ret)
{
	static const char *const names[] = { "OI", "CI", "NP", "IO", "ID", "SA", "FA" };
	static const uint8_t bits[] = { WIN_ACE_OI, WIN_ACE_CI, WIN_ACE_NP, WIN_ACE_IO, WIN_ACE_ID,
					0x40, 0x80 };
	uint8_t f = 0;

	if (n % 2)
		return -EINVAL;
	for (size_t i = 0; i < n; i += 2) {
		bool found = false;

		for (size_t j = 0; j < ELEMENTSOF(names); j++)
			if (strncmp(s + i, names[j], 2) == 0) {
				f |= bits[j];
				found = true;
			}
		if (!found)
			return -EINVAL;
	}
	*ret = f;
	return 0;
}

/* One "(type;flags;rights;object;inherit-object;sid[;condition])". */
static int parse_ace(const char *s, size_t n, bool label, WinAce *ret)
{
	const char *field[7];
	size_t len[7], nf = 0, start = 0;
	WinAce ace = { 0 };
	int r;

	for (size_t i = 0; i <= n && nf < 7; i++)
		if (i == n || s[i] == ';') {
			field[nf] = s + start;
			len[nf++] = i - start;
			start = i + 1;
		}
	if (nf < 6)
		return -EINVAL;

	if (len[0] == 1 && s[0] == 'A' && !label)
		ace.type = WIN_ACE_ALLOW;
	else if (len[0] == 1 && s[0] == 'D' && !label)
		ace.type = WIN_ACE_DENY;
	else if (len[0] == 2 && strncmp(s, "ML", 2) == 0 && label)
		ace.type = WIN_ACE_LABEL;
	else if (!label && len[0] == 2 && (strncmp(s, "OA", 2) == 0 || strncmp(s, "XA", 2) == 0 ||
					   strncmp(s, "ZA", 2) == 0))
		ace.type = WIN_ACE_OTHER_ALLOW;
	else if (!label && len[0] == 2 && (strncmp(s, "OD", 2) == 0 || strncmp(s, "XD", 2) == 0))
		ace.type = WIN_ACE_OTHER_DENY;
	else if (label)
		return 1; /* audit and other SACL entries: not ours, skipped */
	else
		return -EINVAL;

	r = parse_flags(field[1], len[1], &ace.flags);
	if (r < 0)
		return r;
	if (ace.type == WIN_ACE_OTHER_ALLOW || ace.type == WIN_ACE_OTHER_DENY) {
		/* Kept verbatim, never compared; the SID is still validated. */
		if (parse_sid(field[5], len[5], ace.sid) < 0)
			return -EINVAL;
		ace.raw = strndup(s - 1, n + 2);
		if (!ace.raw)
			return -ENOMEM;
		*ret = ace;
		return 0;
	}
	if (nf != 6 || len[3] || len[4])
		return -EINVAL;
	r = parse_rights(field[2], len[2], &ace.mask);
	if (r < 0)
		return r;
	r = parse_sid(field[5], len[5], ace.sid);
	if (r < 0)
		return r;
	*ret = ace;
	return 0;
}

int win_acl_parse_sddl(const char *sddl, bool label, WinAcl *ret)
{
	WinAcl acl = { 0 };
	const char *p = sddl, *want = label ? "S:" : "D:";
	int r;

	/* Find our part at parenthesis depth 0 ("O:..G:..D:..S:.."): an ACE's
	 * condition may hold anything, "D:" included. */
	for (int depth = 0;; p++) {
		if (!*p) {
			*ret = acl;
			return 0;
		}
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		else if (depth == 0 && strncmp(p, want, 2) == 0)
			break;
	}
	p += 2;
	while (*p && *p != '(' && p[1] != ':') {
		if (p[0] == 'P')
			acl.protected_ = true, p++;
		else if (strncmp(p, "AI", 2) == 0)
			acl.auto_inherited = true, p += 2;
		else if (strncmp(p, "AR", 2) == 0)
			p += 2;
		else if (strncmp(p, "NO_ACCESS_CONTROL", 17) == 0)
			return -EINVAL; /* a NULL DACL: everyone has every right */
		else
			return -EINVAL;
	}
	while (*p == '(') {
		const char *end = p;
		WinAce ace;
		int depth = 0;

		/* The matching ')': a condition nests parentheses. */
		for (; *end; end++)
			if (*end == '(')
				depth++;
			else if (*end == ')' && --depth == 0)
				break;
		if (!*end)
			end = NULL;

		if (!end) {
			win_acl_done(&acl);
			return -EINVAL;
		}
		r = parse_ace(p + 1, (size_t)(end - p - 1), label, &ace);
		if (r < 0) {
			win_acl_done(&acl);
			return r;
		}
		if (r == 0) {
			r = push(&acl, &ace);
			free(ace.raw);
			if (r < 0) {
				win_acl_done(&acl);
				return r;
			}
		}
		p = end + 1;
	}
	if (*p && !(p[1] == ':' && strchr("OGDS", p[0]))) {
		win_acl_done(&acl);
		return -EINVAL;
	}
	*ret = acl;
	return 0;
}

char *win_acl_format_sddl(const WinAcl *acl, bool label)
{
	size_t cap = 16 + acl->n * (WIN_SID_STRING_MAX + 40);
	char *s = malloc(cap);
	size_t n;

	if (!s)
		return NULL;
	n = (size_t)snprintf(s, cap, "%s%s%s", label ? "S:" : "D:", acl->protected_ ? "P" : "",
			     acl->auto_inherited ? "AI" : "");
	for (size_t i = 0; i < acl->n; i++) {
		const WinAce *a = &acl->aces[i];
		char flags[16] = "";

		if (a->raw) {
			size_t l = strlen(a->raw);
			char *t = realloc(s, cap + l);

			if (!t) {
				free(s);
				return NULL;
			}
			s = t;
			cap += l;
			n += (size_t)snprintf(s + n, cap - n, "%s", a->raw);
			continue;
		}
		if (a->flags & WIN_ACE_OI)
			strcat(flags, "OI");
		if (a->flags & WIN_ACE_CI)
			strcat(flags, "CI");
		if (a->flags & WIN_ACE_NP)
			strcat(flags, "NP");
		if (a->flags & WIN_ACE_IO)
			strcat(flags, "IO");
		if (a->flags & WIN_ACE_ID)
			strcat(flags, "ID");
		n += (size_t)snprintf(s + n, cap - n, "(%s;%s;0x%" PRIx32 ";;;%s)",
				      a->type == WIN_ACE_ALLOW ? "A" : a->type == WIN_ACE_DENY ? "D" : "ML",
				      flags, a->mask, a->sid);
	}
	return s;
}

static bool is_deny(const WinAce *a)
{
	return a->type == WIN_ACE_DENY || a->type == WIN_ACE_OTHER_DENY;
}

/* 0 explicit deny, 1 explicit allow (and labels), 2 inherited. */
static int rank(const WinAce *a)
{
	if (a->flags & WIN_ACE_ID)
		return 2;
	return is_deny(a) ? 0 : 1;
}

bool win_acl_is_canonical(const WinAcl *acl)
{
	for (size_t i = 1; i < acl->n; i++)
		if (rank(&acl->aces[i]) < rank(&acl->aces[i - 1]))
			return false;
	return true;
}

static bool removed(const WinAclChange *chg, const WinAce *a)
{
	if (a->flags & WIN_ACE_ID)
		return false;
	STRV_FOREACH(s, chg->remove_sids)
		if (strcmp(*s, a->sid) == 0)
			return true;
	return false;
}

int win_acl_apply_change(const WinAcl *cur, const WinAclChange *chg, WinAcl *ret)
{
	WinAcl out = { .protected_ = cur->protected_, .auto_inherited = cur->auto_inherited };
	int r;

	/* Three passes keep each rank's relative order: the plan's ACEs go
	 * first within their rank, so a deny ward adds precedes the user's. */
	for (int k = 0; k <= 2; k++) {
		for (size_t i = 0; k < 2 && i < chg->n_add; i++)
			if (rank(&chg->add[i]) == k && (r = push(&out, &chg->add[i])) < 0)
				goto fail;
		for (size_t i = 0; i < cur->n; i++)
			if (rank(&cur->aces[i]) == k && !removed(chg, &cur->aces[i]) &&
			    (r = push(&out, &cur->aces[i])) < 0)
				goto fail;
	}
	*ret = out;
	return 0;
fail:
	win_acl_done(&out);
	return r;
}

int win_acl_change_sddl(const char *sddl, const WinAclChange *chg, char **ret)
{
	WinAcl cur = { 0 }, next = { 0 };
	char *s = NULL;
	int r;

	r = win_acl_parse_sddl(sddl, false, &cur);
	if (r < 0)
		return r;
	r = win_acl_apply_change(&cur, chg, &next);
	win_acl_done(&cur);
	if (r < 0)
		return r;
	s = win_acl_format_sddl(&next, false);
	win_acl_done(&next);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

int win_acl_check(const WinAcl *observed, const WinAclChange *chg, char *why, size_t n_why)
{
	size_t ours = 0;

	if (!win_acl_is_canonical(observed)) {
		snprintf(why, n_why, "the ACL is not in canonical order");
		return -EPERM;
	}
	for (size_t i = 0; i < chg->n_add; i++) {
		const WinAce *want = &chg->add[i];
		bool found = false;

		for (size_t j = 0; j < observed->n && !found; j++) {
			const WinAce *a = &observed->aces[j];

			found = !(a->flags & WIN_ACE_ID) && a->type == want->type &&
				a->flags == want->flags && a->mask == want->mask &&
				strcmp(a->sid, want->sid) == 0;
		}
		if (!found) {
			snprintf(why, n_why, "the %s ACE for %s (mask 0x%" PRIx32 ") is missing",
				 want->type == WIN_ACE_DENY ? "deny" : "allow", want->sid, want->mask);
			return -EPERM;
		}
	}
	for (size_t j = 0; j < observed->n; j++)
		if (removed(chg, &observed->aces[j]))
			ours++;
	if (ours != chg->n_add) {
		snprintf(why, n_why, "%zu explicit ACEs for ward's SIDs where the plan has %zu", ours,
			 chg->n_add);
		return -EPERM;
	}
	return 0;
}
