/* ward-setup.exe's steps: journal, apply, read back; best-effort read
 * ACLs; uninstall. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "common/strv.h"
#include "windows/win-acl.h"
#include "windows/win-net-exec.h"
#include "windows/win-setup-exec.h"
#include "windows/win-wfp.h"

static void report(WinSetupProgress progress, void *data, const char *fmt, ...)
	_printf_(3, 4);
static void report(WinSetupProgress progress, void *data, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!progress)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	progress(data, line);
}

static int refuse(char *why, size_t n, int r, const char *fmt, ...)
	_printf_(4, 5);
static int refuse(char *why, size_t n, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return r == -ENOSYS ? r : -EPERM;
}

static int journal(const WinSetupApi *api, WinSetupJournalKind k, const char *arg,
		   const char *sids)
{
	_cleanup_free_ char *line = NULL;
	int r = win_setup_journal_line(k, arg, sids, &line);

	return r < 0 ? r : api->journal_append(api->ctx, line);
}

/* The credential record, decrypted and parsed. */
static int read_creds(const WinSetupApi *api, const char *path,
		      char pw[2][WIN_SETUP_PASSWORD_LEN + 1])
{
	_cleanup_free_ void *blob = NULL, *plain = NULL;
	_cleanup_free_ char *text = NULL;
	size_t n = 0, np = 0;
	int r;

	r = api->file_read(api->ctx, path, &blob, &n);
	if (r < 0)
		return r;
	r = api->dpapi_unprotect(api->ctx, blob, n, &plain, &np);
	if (r < 0)
		return r;
	text = malloc(np + 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, plain, np);
	text[np] = 0;
	return win_setup_creds_parse(text, pw);
}

int win_setup_observe(const WinSetupApi *api, const char *state_dir, WinSetupSeen *ret)
{
	WinSetupSeen s = { 0 };
	WinSetupInput in = { .seen = &s, .state_dir = state_dir };
	WinSetupPlan p;
	char sid[WIN_SID_STRING_MAX], pw[2][WIN_SETUP_PASSWORD_LEN + 1];
	_cleanup_free_ void *data = NULL;
	size_t n = 0;
	int r;

	r = win_setup_plan(&in, &p); /* for the file names */
	if (r < 0)
		return r;
	if (api->file_read(api->ctx, p.sid_file, &data, &n) == 0 && n < sizeof(sid)) {
		char buf[WIN_SID_STRING_MAX];

		memcpy(buf, data, n);
		buf[n] = 0;
		buf[strcspn(buf, "\r\n")] = 0;
		if (win_sid_normalize(buf, sid) == 0)
			memcpy(s.synthetic_sid, sid, sizeof(sid));
	}
	for (int u = 0; u < 2; u++) {
		s.exists[u] = api->user_get(api->ctx, WIN_SETUP_USERS[u], sid) == 0;
		if (api->hidden_get(api->ctx, WIN_SETUP_USERS[u], &s.hidden[u]) < 0)
			s.hidden[u] = false;
	}
	s.credentials_ok = s.exists[0] && s.exists[1] && read_creds(api, p.cred_file, pw) == 0;
	win_setup_plan_done(&p);
	*ret = s;
	return 0;
}

static int step_sid(const WinSetupApi *api, const WinSetupStep *st, char *why, size_t n)
{
	uint8_t rnd[8];
	char id[17], sid[WIN_SID_STRING_MAX], line[WIN_SID_STRING_MAX + 2];
	_cleanup_free_ void *back = NULL;
	size_t nb = 0;
	int r;

	if ((r = api->random(api->ctx, rnd, sizeof(rnd))) < 0)
		return refuse(why, n, r, "sid: no random bytes");
	for (int i = 0; i < 8; i++)
		snprintf(id + 2 * i, 3, "%02x", rnd[i]);
	if (win_setup_synthetic_sid(id, sid) < 0)
		return refuse(why, n, -EINVAL, "sid: derivation failed");
	snprintf(line, sizeof(line), "%s\n", sid);
	if ((r = journal(api, WIN_SETUPJ_FILE, st->path, NULL)) < 0)
		return refuse(why, n, r, "sid: journal: %s", strerror(-r));
	if ((r = api->file_write(api->ctx, st->path, line, strlen(line), NULL)) < 0)
		return refuse(why, n, r, "sid: writing %s: %s", st->path, strerror(-r));
	if ((r = api->file_read(api->ctx, st->path, &back, &nb)) < 0 || nb != strlen(line) ||
	    memcmp(back, line, nb) != 0)
		return refuse(why, n, -EPERM, "sid: %s reads back different", st->path);
	return 0;
}

static int step_user(const WinSetupApi *api, const WinSetupStep *st, const char *pw, char *why,
		     size_t n)
{
	const char *name = WIN_SETUP_USERS[st->user];
	char sid[WIN_SID_STRING_MAX], detail[256] = "";
	int r;

	if (st->create) {
		if ((r = journal(api, WIN_SETUPJ_USER, name, NULL)) < 0)
			return refuse(why, n, r, "user %s: journal: %s", name, strerror(-r));
		r = api->user_add(api->ctx, name, pw, detail, sizeof(detail));
		if (r < 0)
			return refuse(why, n, r, "user %s: NetUserAdd: %s", name, detail);
	} else {
		r = api->user_set_password(api->ctx, name, pw, detail, sizeof(detail));
		if (r < 0)
			return refuse(why, n, r, "user %s: NetUserSetInfo: %s", name, detail);
	}
	/* Read back: the account exists, and the password is its password. */
	r = api->user_get(api->ctx, name, sid);
	if (r < 0)
		return refuse(why, n, -EPERM,
			      "user %s: reported %s, but the account cannot be read back (%s)", name,
			      st->create ? "created" : "changed", strerror(-r));
	r = api->user_logon_check(api->ctx, name, pw, detail, sizeof(detail));
	if (r < 0)
		return refuse(why, n, -EPERM, "user %s: its new password does not log on: %s", name,
			      detail);
	return 0;
}

static int step_hide(const WinSetupApi *api, const WinSetupStep *st, char *why, size_t n)
{
	const char *name = WIN_SETUP_USERS[st->user];
	bool hidden = false;
	int r;

	if ((r = journal(api, WIN_SETUPJ_HIDE, name, NULL)) < 0)
		return refuse(why, n, r, "hide %s: journal: %s", name, strerror(-r));
	if ((r = api->hidden_set(api->ctx, name)) < 0)
		return refuse(why, n, r, "hide %s: %s", name, strerror(-r));
	if (api->hidden_get(api->ctx, name, &hidden) < 0 || !hidden)
		return refuse(why, n, -EPERM, "hide %s: the UserList value does not read back", name);
	return 0;
}

static int step_creds(const WinSetupApi *api, const WinSetupStep *st,
		      char pw[2][WIN_SETUP_PASSWORD_LEN + 1], char *why, size_t n)
{
	const char *const p2[2] = { pw[0], pw[1] };
	_cleanup_free_ char *text = NULL, *sddl = NULL, *dacl = NULL;
	_cleanup_free_ void *blob = NULL;
	char self[WIN_SID_STRING_MAX], back[2][WIN_SETUP_PASSWORD_LEN + 1], detail[256] = "";
	size_t nb = 0;
	int r;

	if ((r = win_setup_creds_format(p2, &text)) < 0)
		return refuse(why, n, r, "credentials: the record cannot be formed");
	if ((r = api->self_sid(api->ctx, self)) < 0 || (r = win_setup_cred_sddl(self, &sddl)) < 0)
		return refuse(why, n, r, "credentials: the running user's SID is unknown");
	if ((r = api->dpapi_protect(api->ctx, text, strlen(text), &blob, &nb)) < 0)
		return refuse(why, n, r, "credentials: CryptProtectData: %s", strerror(-r));
	if ((r = journal(api, WIN_SETUPJ_FILE, st->path, NULL)) < 0)
		return refuse(why, n, r, "credentials: journal: %s", strerror(-r));
	if ((r = api->file_write(api->ctx, st->path, blob, nb, sddl)) < 0)
		return refuse(why, n, r, "credentials: writing %s: %s", st->path, strerror(-r));
	/* Read back: it decrypts to what was written, and only its owner,
	 * SYSTEM and Administrators can open it. */
	r = read_creds(api, st->path, back);
	if (r < 0 || strcmp(back[0], pw[0]) != 0 || strcmp(back[1], pw[1]) != 0)
		return refuse(why, n, -EPERM, "credentials: %s does not decrypt to the record written",
			      st->path);
	if ((r = api->dacl_get(api->ctx, st->path, &dacl)) < 0)
		return refuse(why, n, -EPERM, "credentials: the DACL of %s cannot be read back",
			      st->path);
	if ((r = win_setup_cred_check(dacl, self, detail, sizeof(detail))) < 0)
		return refuse(why, n, -EPERM, "%s", detail);
	return 0;
}

/* The firewall variant of the walls: journaled, added, read back. */
static int step_firewall(const WinSetupApi *api, const char *sid, char *why, size_t n)
{
	WinFwRule want, seen;
	char detail[256] = "";
	int r;

	if (win_setup_fw_rule(sid, &want) < 0)
		return refuse(why, n, -EPERM, "firewall: no rule for %s", sid);
	r = journal(api, WIN_SETUPJ_FWRULE, want.name, NULL);
	if (r < 0)
		return refuse(why, n, r, "firewall: the journal cannot be written");
	r = api->fw_add(api->ctx, &want, detail, sizeof(detail));
	if (r < 0)
		return refuse(why, n, r, "firewall: INetFwPolicy2 rule add: %s",
			      *detail ? detail : strerror(-r));
	memset(&seen, 0, sizeof(seen));
	r = api->fw_get(api->ctx, want.name, &seen, detail, sizeof(detail));
	if (r < 0)
		return refuse(why, n, r, "firewall: the rule added does not read back (%s)",
			      r == -ENOENT ? "not there" : *detail ? detail : strerror(-r));
	if (win_setup_fw_check(&want, &seen, detail, sizeof(detail)) < 0)
		return refuse(why, n, -EPERM, "%s", detail);
	return 0;
}

/* The walls of sandbox user @user: its persistent WFP filters (replaced
 * by key, then read back); for the offline user also the firewall rule.
 * The online user gets no firewall rule: its one way out, TCP to the
 * proxy's loopback port, is a permit a blanket outbound block would not
 * leave; its WFP filters are its walls. */
static int step_walls(const WinSetupApi *api, const WinNetApi *net, int user, char *why, size_t n)
{
	char sid[WIN_SID_STRING_MAX], detail[512] = "";
	WinWfpPlan plan;
	WinWalls walls;
	void *engine = NULL;
	int r;

	if ((r = api->user_get(api->ctx, WIN_SETUP_USERS[user], sid)) < 0)
		return refuse(why, n, -EPERM, "walls: the %s user cannot be read back",
			      user ? "online" : "offline");
	if ((r = win_setup_walls_plan(user, sid, &plan)) < 0)
		return refuse(why, n, r, "walls: no plan for %s", sid);
	/* Existing filters are replaced (same keys), so that what is read
	 * back is what this setup added. */
	r = net->wfp_open(net->ctx, false, &engine, detail, sizeof(detail));
	if (r < 0)
		return refuse(why, n, r, "walls: FwpmEngineOpen0: %s", detail);
	for (size_t i = 0; i < plan.n; i++)
		(void)net->wfp_delete_filter(net->ctx, engine, &plan.filters[i].key);
	net->wfp_close(net->ctx, engine);
	r = win_walls_up(net, &plan, &walls, detail, sizeof(detail));
	if (r < 0)
		return refuse(why, n, r, "walls: %s", detail);
	win_walls_down(net, &walls);
	return user == 0 ? step_firewall(api, sid, why, n) : 0;
}

int win_setup_apply(const WinSetupApi *api, const WinNetApi *net, const WinSetupPlan *p,
		    WinSetupProgress progress, void *data, char *why, size_t n_why)
{
	char pw[2][WIN_SETUP_PASSWORD_LEN + 1] = { "", "" };
	bool need_old = false;
	int r = api->elevated(api->ctx);

	if (r <= 0)
		return refuse(why, n_why, -EPERM,
			      "ward-setup.exe must run elevated (as an administrator)%s",
			      r < 0 ? ": the token cannot be read" : "");
	for (size_t i = 0; i < p->n; i++)
		if (p->steps[i].kind == WIN_SETUP_CREDENTIALS)
			need_old = true;
	/* Users whose password stays keep the one in the record. */
	if (need_old && read_creds(api, p->cred_file, pw) < 0)
		pw[0][0] = pw[1][0] = 0;
	for (size_t i = 0; i < p->n; i++) {
		const WinSetupStep *st = &p->steps[i];

		switch (st->kind) {
		case WIN_SETUP_SID:
			r = step_sid(api, st, why, n_why);
			break;
		case WIN_SETUP_USER: {
			uint8_t rnd[WIN_SETUP_PASSWORD_LEN];

			r = api->random(api->ctx, rnd, sizeof(rnd));
			if (r < 0) {
				r = refuse(why, n_why, r, "user: no random bytes");
				break;
			}
			win_setup_password(rnd, pw[st->user]);
			r = step_user(api, st, pw[st->user], why, n_why);
			break;
		}
		case WIN_SETUP_HIDE:
			r = step_hide(api, st, why, n_why);
			break;
		case WIN_SETUP_CREDENTIALS:
			if (!pw[0][0] || !pw[1][0]) {
				r = refuse(why, n_why, -EPERM,
					   "credentials: a user's password is neither new nor in the "
					   "record");
				break;
			}
			r = step_creds(api, st, pw, why, n_why);
			break;
		case WIN_SETUP_WALLS:
			r = step_walls(api, net, st->user, why, n_why);
			break;
		case WIN_SETUP_READ_ACL:
			continue; /* win_setup_read_acls(), after ready */
		case _WIN_SETUP_KIND_MAX:
		default:
			r = -EINVAL;
		}
		if (r < 0)
			return r;
		report(progress, data, "%s%s%s: ok", win_setup_kind_name(st->kind),
		       st->kind == WIN_SETUP_USER || st->kind == WIN_SETUP_HIDE ||
				       st->kind == WIN_SETUP_WALLS
			       ? " "
			       : "",
		       st->kind == WIN_SETUP_USER || st->kind == WIN_SETUP_HIDE ||
				       st->kind == WIN_SETUP_WALLS
			       ? WIN_SETUP_USERS[st->user]
			       : "");
	}
	return 0;
}

/* @chg on @path's DACL, set and read back. 0, or -errno with why
 * (win_acl_check's reason, or the errno's text); with @missing_ok a path
 * that is not there is 0 (nothing holds ACEs on it). */
static int change_dacl(const WinSetupApi *api, const char *path, const WinAclChange *chg,
		       bool missing_ok, char *why, size_t n)
{
	_cleanup_free_ char *cur = NULL, *next = NULL, *back = NULL;
	WinAcl seen = { 0 };
	int r;

	r = api->dacl_get(api->ctx, path, &cur);
	if (r == -ENOENT && missing_ok)
		return 0;
	if (r == 0)
		r = win_acl_change_sddl(cur, chg, &next);
	if (r == 0)
		r = api->dacl_set(api->ctx, path, next);
	if (r == 0)
		r = api->dacl_get(api->ctx, path, &back);
	if (r == 0)
		r = win_acl_parse_sddl(back, false, &seen);
	if (r == 0)
		r = win_acl_check(&seen, chg, why, n);
	else
		snprintf(why, n, "%s", strerror(-r));
	win_acl_done(&seen);
	return r;
}

size_t win_setup_read_acls(const WinSetupApi *api, const WinSetupPlan *p,
			   WinSetupProgress progress, void *data)
{
	char sids[2][WIN_SID_STRING_MAX], joined[2 * WIN_SID_STRING_MAX + 2];
	size_t total = 0, k = 0, failed = 0;
	bool have = api->user_get(api->ctx, WIN_SETUP_USERS[0], sids[0]) == 0 &&
		    api->user_get(api->ctx, WIN_SETUP_USERS[1], sids[1]) == 0;

	for (size_t i = 0; i < p->n; i++)
		total += p->steps[i].kind == WIN_SETUP_READ_ACL;
	snprintf(joined, sizeof(joined), "%s %s", sids[0], sids[1]);
	for (size_t i = 0; i < p->n; i++) {
		const WinSetupStep *st = &p->steps[i];
		char *rm[] = { sids[0], sids[1], NULL };
		WinAce add[2];
		WinAclChange chg = { .remove_sids = rm, .add = add, .n_add = 2 };
		char why[256] = "";
		int r;

		if (st->kind != WIN_SETUP_READ_ACL)
			continue;
		k++;
		if (!have) {
			report(progress, data, "read-acl %zu/%zu %s: failed: the sandbox users are "
			       "missing", k, total, st->path);
			failed++;
			continue;
		}
		memset(add, 0, sizeof(add));
		for (int u = 0; u < 2; u++) {
			add[u].type = WIN_ACE_ALLOW;
			add[u].flags = WIN_ACE_OI | WIN_ACE_CI;
			add[u].mask = WIN_FILE_READ_EXEC;
			memcpy(add[u].sid, sids[u], sizeof(add[u].sid));
		}
		r = journal(api, WIN_SETUPJ_ACL, st->path, joined);
		if (r == 0)
			r = change_dacl(api, st->path, &chg, false, why, sizeof(why));
		else
			snprintf(why, sizeof(why), "%s", strerror(-r));
		if (r < 0)
			failed++;
		report(progress, data, "read-acl %zu/%zu %s: %s%s", k, total, st->path,
		       r < 0 ? "failed (best effort, not fatal): " : "ok", r < 0 ? why : "");
	}
	return failed;
}

static int undo(const WinSetupApi *api, const WinSetupJournalEntry *e, char *why, size_t n)
{
	char sid[WIN_SID_STRING_MAX];
	bool hidden = true;
	int r;

	switch (e->kind) {
	case WIN_SETUPJ_FILE:
		r = api->file_delete(api->ctx, e->arg);
		return r == -ENOENT ? 0 : r;
	case WIN_SETUPJ_USER:
		r = api->user_delete(api->ctx, e->arg);
		if (r < 0 && r != -ENOENT)
			return r;
		if (api->user_get(api->ctx, e->arg, sid) != -ENOENT) {
			snprintf(why, n, "user %s still exists after its deletion", e->arg);
			return -EPERM;
		}
		return 0;
	case WIN_SETUPJ_HIDE:
		r = api->hidden_delete(api->ctx, e->arg);
		if (r < 0 && r != -ENOENT)
			return r;
		if (api->hidden_get(api->ctx, e->arg, &hidden) == 0 && hidden) {
			snprintf(why, n, "the UserList value for %s is still there", e->arg);
			return -EPERM;
		}
		return 0;
	case WIN_SETUPJ_ACL: {
		_cleanup_(strv_freep) char **rm = NULL;
		_cleanup_free_ char *copy = strdup(e->sids);
		WinAclChange chg = { 0 };
		char *save = NULL;

		if (!copy)
			return -ENOMEM;
		for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
			if (strv_extend(&rm, t) < 0)
				return -ENOMEM;
		chg.remove_sids = rm;
		return change_dacl(api, e->arg, &chg, true, why, n);
	}
	case WIN_SETUPJ_FWRULE: {
		WinFwRule seen;

		r = api->fw_remove(api->ctx, e->arg);
		if (r < 0 && r != -ENOENT)
			return r;
		if (api->fw_get(api->ctx, e->arg, &seen, why, n) != -ENOENT) {
			snprintf(why, n, "firewall rule '%s' still there after its removal", e->arg);
			return -EPERM;
		}
		return 0;
	}
	case _WIN_SETUPJ_KIND_MAX:
	default:
		return -EINVAL;
	}
}

int win_setup_uninstall(const WinSetupApi *api, const WinNetApi *net, WinSetupProgress progress,
			void *data, char *why, size_t n_why)
{
	_cleanup_free_ char *text = NULL, *rest = NULL;
	WinSetupJournalEntry *e = NULL;
	WinCleanupReport rep;
	size_t n = 0, len = 0, left = 0;
	int r;

	*why = 0;
	r = api->elevated(api->ctx);
	if (r <= 0)
		return refuse(why, n_why, -EPERM, "ward-setup.exe --uninstall must run elevated");
	r = api->journal_read(api->ctx, &text);
	if (r < 0 && r != -ENOENT)
		return refuse(why, n_why, r, "the setup journal cannot be read: %s", strerror(-r));
	r = win_setup_journal_parse(text, &e, &n);
	if (r < 0)
		return refuse(why, n_why, r, "the setup journal is malformed; nothing was undone");
	/* Backwards; what fails stays, in its place. */
	bool *done = calloc(n + 1, sizeof(bool));
	if (!done) {
		win_setup_journal_free(e, n);
		return -ENOMEM;
	}
	for (size_t i = n; i-- > 0;) {
		char detail[256] = "";

		r = undo(api, &e[i], detail, sizeof(detail));
		done[i] = r == 0;
		report(progress, data, "undo %s %s: %s%s", e[i].kind == WIN_SETUPJ_FILE ? "file"
							 : e[i].kind == WIN_SETUPJ_USER ? "user"
							 : e[i].kind == WIN_SETUPJ_HIDE ? "hide"
											  : "acl",
		       e[i].arg, r == 0 ? "ok" : "failed: ", r == 0 ? "" : (*detail ? detail : strerror(-r)));
		if (r < 0 && !*why)
			snprintf(why, n_why, "undo %s: %s", e[i].arg, *detail ? detail : strerror(-r));
	}
	rest = strdup(WIN_SETUP_JOURNAL_HEADER);
	len = rest ? strlen(rest) : 0;
	for (size_t i = 0; rest && i < n; i++) {
		_cleanup_free_ char *line = NULL;
		char *m;

		if (done[i])
			continue;
		left++;
		if (win_setup_journal_line(e[i].kind, e[i].arg, e[i].sids, &line) < 0 ||
		    !(m = realloc(rest, len + strlen(line) + 1))) {
			free(rest);
			rest = NULL;
			break;
		}
		rest = m;
		memcpy(rest + len, line, strlen(line) + 1);
		len += strlen(line);
	}
	free(done);
	win_setup_journal_free(e, n);
	if (!rest)
		return -ENOMEM;
	r = api->journal_replace(api->ctx, left ? rest : NULL);
	if (r < 0)
		return refuse(why, n_why, r, "the setup journal cannot be rewritten");
	r = win_net_cleanup(net, &rep);
	if (r < 0 && !*why)
		snprintf(why, n_why, "network: %s", rep.why);
	report(progress, data, "network journal: %zu removed, %zu left", rep.removed, rep.failed);
	return left || r < 0 ? -EBUSY : 0;
}
