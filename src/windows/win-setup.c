/* The sandbox-user tier's setup plan, credential record and journal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-acl.h"
#include "windows/win-path.h"
#include "windows/win-setup.h"

const char *const WIN_SETUP_USERS[2] = { WIN_SETUP_OFFLINE_USER, WIN_SETUP_ONLINE_USER };
const char WIN_SETUP_JOURNAL_HEADER[] = "ward-windows-setup 1\n";

static const char *const kind_names[_WIN_SETUP_KIND_MAX] = {
	[WIN_SETUP_SID] = "sid",
	[WIN_SETUP_USER] = "user",
	[WIN_SETUP_HIDE] = "hide",
	[WIN_SETUP_CREDENTIALS] = "credentials",
	[WIN_SETUP_WALLS] = "walls",
	[WIN_SETUP_READ_ACL] = "read-acl",
};

const char *win_setup_kind_name(WinSetupKind k)
{
	return k >= 0 && k < _WIN_SETUP_KIND_MAX ? kind_names[k] : "?";
}

void win_setup_plan_done(WinSetupPlan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->steps[i].path);
	free(p->sid_file);
	free(p->cred_file);
	memset(p, 0, sizeof(*p));
}

static WinSetupStep *step(WinSetupPlan *p, WinSetupKind k)
{
	WinSetupStep *s = &p->steps[p->n++];

	memset(s, 0, sizeof(*s));
	s->kind = k;
	return s;
}

int win_setup_plan(const WinSetupInput *in, WinSetupPlan *ret)
{
	WinSetupPlan p = { 0 };
	_cleanup_free_ char *state = NULL;
	size_t n_dirs = strv_length(in->read_dirs);
	int r;

	memset(ret, 0, sizeof(*ret));
	if (!in->state_dir || !in->seen || n_dirs > WIN_SETUP_MAX_STEPS - 8)
		return -EINVAL;
	r = win_path_normalize(in->state_dir, &state, NULL);
	if (r < 0)
		return r;
	if ((r = win_path_join(state, "sandbox-sid", &p.sid_file)) < 0 ||
	    (r = win_path_join(state, "sandbox-users.dpapi", &p.cred_file)) < 0)
		goto fail;

	if (!*in->seen->synthetic_sid && !(step(&p, WIN_SETUP_SID)->path = strdup(p.sid_file))) {
		r = -ENOMEM;
		goto fail;
	}
	/* A lost record means new passwords: a user that exists gets its
	 * password reset, since nobody can read the old one. */
	for (int u = 0; u < 2; u++)
		if (!in->seen->exists[u] || !in->seen->credentials_ok) {
			WinSetupStep *s = step(&p, WIN_SETUP_USER);

			s->user = u;
			s->create = !in->seen->exists[u];
		}
	for (int u = 0; u < 2; u++)
		if (!in->seen->hidden[u])
			step(&p, WIN_SETUP_HIDE)->user = u;
	if (!in->seen->exists[0] || !in->seen->exists[1] || !in->seen->credentials_ok)
		if (!(step(&p, WIN_SETUP_CREDENTIALS)->path = strdup(p.cred_file))) {
			r = -ENOMEM;
			goto fail;
		}
	/* Always: existing walls are verified by re-adding and reading back,
	 * the offline user's, then the online user's. */
	step(&p, WIN_SETUP_WALLS);
	step(&p, WIN_SETUP_WALLS)->user = 1;
	for (char *const *d = in->read_dirs; d && *d; d++) {
		WinSetupStep *s = step(&p, WIN_SETUP_READ_ACL);

		r = win_path_normalize(*d, &s->path, NULL);
		if (r < 0)
			goto fail;
	}
	*ret = p;
	return 0;
fail:
	win_setup_plan_done(&p);
	return r;
}

int win_setup_walls_plan(int user, const char *sid, WinWfpPlan *ret)
{
	WinWfpInput in = { .identity = WIN_WFP_USER, .sid = sid, .persistent = true };

	if (user < 0 || user > 1)
		return -EINVAL;
	/* The online user's only way out is ward.exe's proxy on this port;
	 * ward.exe holds it exclusively for the run, so nothing else listens
	 * there while the online user can run (docs/windows.md). */
	if (user == 1)
		in.proxy_port = WIN_SETUP_ONLINE_PROXY_PORT;
	return win_wfp_plan(&in, ret);
}

void win_setup_password(const uint8_t rnd[WIN_SETUP_PASSWORD_LEN],
			char ret[WIN_SETUP_PASSWORD_LEN + 1])
{
	static const char upper[] = "ABCDEFGHJKLMNPQRSTUVWXYZ", lower[] = "abcdefghijkmnopqrstuvwxyz",
			  digit[] = "23456789", symbol[] = "!#%+-=?@^_",
			  all[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

	ret[0] = upper[rnd[0] % (sizeof(upper) - 1)];
	ret[1] = lower[rnd[1] % (sizeof(lower) - 1)];
	ret[2] = digit[rnd[2] % (sizeof(digit) - 1)];
	ret[3] = symbol[rnd[3] % (sizeof(symbol) - 1)];
	for (int i = 4; i < WIN_SETUP_PASSWORD_LEN; i++)
		ret[i] = all[rnd[i] & 63];
	ret[WIN_SETUP_PASSWORD_LEN] = 0;
}

int win_setup_synthetic_sid(const char *id, char ret[WIN_SID_STRING_MAX])
{
	char name[64];
	WinSid sid;

	if (!id || strlen(id) != 16 || strspn(id, "0123456789abcdef") != 16)
		return -EINVAL;
	snprintf(name, sizeof(name), "ward.sandbox-user-write.%s", id);
	if (win_sid_capability(name, &sid) < 0)
		return -EINVAL;
	win_sid_format(&sid, ret);
	return 0;
}

static const char CREDS_HEADER[] = "ward-sandbox-credentials 1\n";

int win_setup_creds_format(const char *const pw[2], char **ret)
{
	size_t n = sizeof(CREDS_HEADER) + 2 * (32 + WIN_SETUP_PASSWORD_LEN + 2);
	char *s;

	for (int u = 0; u < 2; u++)
		if (!pw[u] || strlen(pw[u]) != WIN_SETUP_PASSWORD_LEN || strpbrk(pw[u], "\t\n"))
			return -EINVAL;
	s = malloc(n);
	if (!s)
		return -ENOMEM;
	snprintf(s, n, "%s%s\t%s\n%s\t%s\n", CREDS_HEADER, WIN_SETUP_USERS[0], pw[0],
		 WIN_SETUP_USERS[1], pw[1]);
	*ret = s;
	return 0;
}

int win_setup_creds_parse(const char *text, char pw[2][WIN_SETUP_PASSWORD_LEN + 1])
{
	const char *p;

	if (!text || strncmp(text, CREDS_HEADER, sizeof(CREDS_HEADER) - 1) != 0)
		return -EINVAL;
	p = text + sizeof(CREDS_HEADER) - 1;
	for (int u = 0; u < 2; u++) {
		size_t ln = strlen(WIN_SETUP_USERS[u]);

		if (strncmp(p, WIN_SETUP_USERS[u], ln) != 0 || p[ln] != '\t')
			return -EINVAL;
		p += ln + 1;
		if (strcspn(p, "\t\n") != WIN_SETUP_PASSWORD_LEN || p[WIN_SETUP_PASSWORD_LEN] != '\n')
			return -EINVAL;
		memcpy(pw[u], p, WIN_SETUP_PASSWORD_LEN);
		pw[u][WIN_SETUP_PASSWORD_LEN] = 0;
		p += WIN_SETUP_PASSWORD_LEN + 1;
	}
	return *p ? -EINVAL : 0;
}

int win_setup_cred_sddl(const char *owner, char **ret)
{
	char sid[WIN_SID_STRING_MAX];
	size_t n;
	char *s;

	if (win_sid_normalize(owner, sid) < 0)
		return -EINVAL;
	n = strlen(sid) + 64;
	s = malloc(n);
	if (!s)
		return -ENOMEM;
	snprintf(s, n, "D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;%s)", sid);
	*ret = s;
	return 0;
}

int win_setup_cred_check(const char *sddl, const char *owner, char *why, size_t n_why)
{
	static const char *const fixed[] = { "S-1-5-18", "S-1-5-32-544" };
	char sid[WIN_SID_STRING_MAX];
	WinAcl acl;
	bool seen[3] = { false, false, false };
	int r;

	if (win_sid_normalize(owner, sid) < 0)
		return -EINVAL;
	r = win_acl_parse_sddl(sddl, false, &acl);
	if (r < 0) {
		snprintf(why, n_why, "credential file: its DACL does not parse");
		return -EPERM;
	}
	r = acl.protected_ ? 0 : -EPERM;
	if (r < 0)
		snprintf(why, n_why, "credential file: its DACL inherits from the directory");
	for (size_t i = 0; r == 0 && i < acl.n; i++) {
		const WinAce *a = &acl.aces[i];
		int who = strcmp(a->sid, fixed[0]) == 0   ? 0
			  : strcmp(a->sid, fixed[1]) == 0 ? 1
			  : strcmp(a->sid, sid) == 0      ? 2
							  : -1;

		if (a->type == WIN_ACE_DENY)
			continue; /* a deny only narrows */
		if (who < 0 || a->type != WIN_ACE_ALLOW) {
			snprintf(why, n_why, "credential file: %s may access it", a->sid);
			r = -EPERM;
		} else {
			seen[who] = true;
		}
	}
	if (r == 0 && !seen[2]) {
		snprintf(why, n_why, "credential file: its owner %s has no access", sid);
		r = -EPERM;
	}
	win_acl_done(&acl);
	return r;
}

static const char *const jkind[_WIN_SETUPJ_KIND_MAX] = {
	[WIN_SETUPJ_FILE] = "file",
	[WIN_SETUPJ_USER] = "user",
	[WIN_SETUPJ_HIDE] = "hide",
	[WIN_SETUPJ_ACL] = "acl",
	[WIN_SETUPJ_FWRULE] = "fwrule",
};

int win_setup_journal_line(WinSetupJournalKind kind, const char *arg, const char *sids, char **ret)
{
	size_t n;
	char *s;

	if (kind < 0 || kind >= _WIN_SETUPJ_KIND_MAX || !arg || !*arg || strpbrk(arg, "\t\n") ||
	    (kind == WIN_SETUPJ_ACL) != (sids != NULL) || (sids && (!*sids || strpbrk(sids, "\t\n"))))
		return -EINVAL;
	n = strlen(arg) + (sids ? strlen(sids) : 0) + 16;
	s = malloc(n);
	if (!s)
		return -ENOMEM;
	if (sids)
		snprintf(s, n, "%s\t%s\t%s\n", jkind[kind], arg, sids);
	else
		snprintf(s, n, "%s\t%s\n", jkind[kind], arg);
	*ret = s;
	return 0;
}

void win_setup_journal_free(WinSetupJournalEntry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].arg);
		free(e[i].sids);
	}
	free(e);
}

static int parse_entry(char *line, WinSetupJournalEntry *e)
{
	char *tab = strchr(line, '\t'), *tab2;
	int k = -1;

	if (!tab)
		return -EINVAL;
	*tab = 0;
	for (int i = 0; i < _WIN_SETUPJ_KIND_MAX; i++)
		if (strcmp(line, jkind[i]) == 0)
			k = i;
	if (k < 0 || !tab[1])
		return -EINVAL;
	tab2 = strchr(tab + 1, '\t');
	if ((k == WIN_SETUPJ_ACL) != (tab2 != NULL))
		return -EINVAL;
	if (tab2) {
		char *save = NULL;
		_cleanup_free_ char *copy = NULL;

		*tab2 = 0;
		if (!tab2[1] || strchr(tab2 + 1, '\t'))
			return -EINVAL;
		copy = strdup(tab2 + 1);
		if (!copy)
			return -ENOMEM;
		for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			char sid[WIN_SID_STRING_MAX];

			if (win_sid_normalize(t, sid) < 0)
				return -EINVAL;
		}
		if (!(e->sids = strdup(tab2 + 1)))
			return -ENOMEM;
	}
	e->kind = (WinSetupJournalKind)k;
	e->arg = strdup(tab + 1);
	return e->arg ? 0 : -ENOMEM;
}

int win_setup_journal_parse(const char *text, WinSetupJournalEntry **ret, size_t *n)
{
	_cleanup_free_ char *copy = NULL;
	WinSetupJournalEntry *l = NULL;
	size_t cnt = 0, hl = strlen(WIN_SETUP_JOURNAL_HEADER);
	char *p, *nl;

	*ret = NULL;
	*n = 0;
	if (!text || !*text)
		return 0;
	if (strncmp(text, WIN_SETUP_JOURNAL_HEADER, hl) != 0)
		return -EINVAL;
	copy = strdup(text + hl);
	if (!copy)
		return -ENOMEM;
	for (p = copy; (nl = strchr(p, '\n')); p = nl + 1) {
		WinSetupJournalEntry *m = realloc(l, (cnt + 1) * sizeof(*l));
		int r;

		if (!m) {
			win_setup_journal_free(l, cnt);
			return -ENOMEM;
		}
		l = m;
		*nl = 0;
		memset(&l[cnt], 0, sizeof(l[cnt]));
		r = parse_entry(p, &l[cnt]);
		cnt++;
		if (r < 0) {
			win_setup_journal_free(l, cnt);
			return r;
		}
	}
	*ret = l;
	*n = cnt;
	return 0;
}

int win_setup_fw_rule(const char *sid, WinFwRule *ret)
{
	char norm[WIN_SID_STRING_MAX];

	if (!sid || win_sid_normalize(sid, norm) < 0)
		return -EINVAL;
	*ret = (WinFwRule){ .outbound = true, .block = true, .enabled = true,
			    .profiles = WIN_FW_PROFILES_ALL, .protocol = WIN_FW_PROTOCOL_ANY };
	snprintf(ret->name, sizeof(ret->name), "%s", WIN_SETUP_FW_RULE_NAME);
	snprintf(ret->users, sizeof(ret->users), "O:LSD:(A;;CC;;;%s)", norm);
	return 0;
}

/* The one SID an "O:LSD:(A;;CC;;;<sid>)" list grants, or -EINVAL. */
static int fw_user(const char *users, char ret[WIN_SID_STRING_MAX])
{
	const char *p = strstr(users, "D:(A;;CC;;;");
	char sid[WIN_SID_STRING_MAX];
	size_t n;

	if (!p || strchr(p + 1, '(') != p + 2)
		return -EINVAL;
	p += strlen("D:(A;;CC;;;");
	n = strcspn(p, ")");
	if (n == 0 || n >= sizeof(sid) || strcmp(p + n, ")") != 0)
		return -EINVAL;
	memcpy(sid, p, n);
	sid[n] = 0;
	return win_sid_normalize(sid, ret);
}

int win_setup_fw_check(const WinFwRule *want, const WinFwRule *seen, char *why, size_t n_why)
{
	char a[WIN_SID_STRING_MAX], b[WIN_SID_STRING_MAX];

	if (strcmp(want->name, seen->name) != 0)
		snprintf(why, n_why, "firewall rule: its name reads back as '%s'", seen->name);
	else if (!seen->outbound || !seen->block || !seen->enabled)
		snprintf(why, n_why, "firewall rule: it reads back %s%s%s", !seen->outbound ? "inbound " : "",
			 !seen->block ? "allow " : "", !seen->enabled ? "disabled" : "");
	else if (seen->profiles != want->profiles)
		snprintf(why, n_why, "firewall rule: profiles %#x, not every profile",
			 (unsigned)seen->profiles);
	else if (seen->protocol != want->protocol)
		snprintf(why, n_why, "firewall rule: protocol %d, not any", (int)seen->protocol);
	else if (fw_user(want->users, a) < 0 || fw_user(seen->users, b) < 0 || strcmp(a, b) != 0)
		snprintf(why, n_why, "firewall rule: its users read back as '%.120s'", seen->users);
	else
		return 0;
	return -EPERM;
}
