/* The Windows executor. Order, and why:
 *   refuse    paths only the privileged helper may change, when they need
 *             more than it grants (write, deny, a label): refused before
 *             any change, so nothing is half-applied;
 *   lock      ward's ACL lock, held while ACLs change (acquire, release),
 *             not while the command runs: runs go on side by side, and
 *             two never rewrite one DACL at once;
 *   recover   journals of runs that died are undone first, so stale ACEs
 *             never pile up and a protected path created meanwhile is
 *             quarantined;
 *   journal   the header and ward's SIDs, then before each change its undo;
 *   profile   W2: the AppContainer profile, and its SID compared with the
 *             plan's derivation (a mismatch means the ACEs would name
 *             another identity);
 *   paths     directories, DACLs and labels, each read back and checked;
 *   helper    after the lock is released (a UAC prompt can take long):
 *             ward-helper.exe started elevated for this run, each grant
 *             journaled, asked for, and read back by ward itself;
 *   job       created and its limits read back before any process exists;
 *   spawn     suspended, assigned to the job, its token read back and
 *             checked; only then resumed (a child that never ran cannot
 *             have done anything);
 *   wait      with the policy's timeout; the job's last handle closing
 *             kills every process left;
 *   undo      the journal, backwards: the helper's grants revoked through
 *             it (and read back), ACEs and labels off, ward's
 *             directories removed, protected paths that were absent and
 *             now exist moved into the quarantine; a failure keeps the
 *             journal for next time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-acl.h"
#include "windows/win-env.h"
#include "windows/win-exec.h"
#include "windows/win-helper-proto.h"
#include "windows/win-journal.h"
#include "windows/win-path.h"

#define WARD_EXIT_SETUP 125
#define WARD_EXIT_TIMEOUT 124
/* How long the redirector DLL may take to load and hook (it is one
 * LoadLibrary in a fresh process: milliseconds; Wine's first start of a
 * process is slower). */
#define WIN_COW_READY_MS 20000

static int journal(const WinApi *api, WinJournalKind kind, const char *arg, const char *arg2)
{
	_cleanup_free_ char *line = NULL;
	int r = win_journal_line(kind, arg, arg2, &line);

	return r < 0 ? r : api->journal_append(api->ctx, line);
}

/* Remove every explicit ACE for @sids from @path's DACL. */
static int undo_acl(const WinApi *api, const char *path, char **sids, WardError *err)
{
	_cleanup_free_ char *cur = NULL, *out = NULL;
	WinAclChange chg = { .remove_sids = sids };
	int r;

	if (api->stat(api->ctx, path) == WIN_FILE_NONE)
		return 0; /* gone: nothing holds the ACEs */
	r = api->get_sddl(api->ctx, path, false, &cur);
	if (r >= 0)
		r = win_acl_change_sddl(cur, &chg, &out);
	if (r >= 0)
		r = api->set_sddl(api->ctx, path, false, out);
	if (r < 0)
		return ward_error_set(err, "undo", r, "Failed to remove ward's ACEs from '%s'", path);
	return 0;
}

/* 1 when @path's DACL holds an explicit ACE for @sid, 0 when not (or
 * the path is gone), -errno when it cannot be read. */
static int ace_standing(const WinApi *api, const char *path, const char *sid)
{
	_cleanup_free_ char *cur = NULL;
	WinAcl acl = { 0 };
	int r, found = 0;

	if (api->stat(api->ctx, path) == WIN_FILE_NONE)
		return 0;
	r = api->get_sddl(api->ctx, path, false, &cur);
	if (r >= 0)
		r = win_acl_parse_sddl(cur, false, &acl);
	if (r < 0)
		return r;
	for (size_t i = 0; i < acl.n; i++)
		if (!(acl.aces[i].flags & WIN_ACE_ID) && strcmp(acl.aces[i].sid, sid) == 0)
			found = 1;
	win_acl_done(&acl);
	return found;
}

/* ward-helper.exe for a dead run's journal @j, revocations only: its
 * command line lists the journal's helper paths (as read grants: a revoke
 * of a listed path is all it will be asked) and SIDs. */
static int helper_start_for_undo(const WinApi *api, const WinJournal *j, char *why, size_t n_why)
{
	WinHelperGrant g[WIN_HELPER_GRANTS_MAX];
	char pkg[WIN_SID_STRING_MAX] = "", syn[WIN_SID_STRING_MAX] = "", run[17] = "";
	WinHelperPolicy p = { .grants = g };

	for (size_t i = 0; i < j->n; i++) {
		char id[17], sid[WIN_SID_STRING_MAX], *slot;
		bool listed = false;

		if (j->entries[i].kind != WIN_JOURNAL_HELPER)
			continue;
		if (win_journal_helper_split(j->entries[i].arg2, id, sid) < 0)
			return -EINVAL;
		if (*run && strcmp(run, id) != 0) {
			snprintf(why, n_why, "the journal names two runs (%s, %s)", run, id);
			return -EINVAL;
		}
		memcpy(run, id, sizeof(run));
		/* A run has at most one package SID and one synthetic SID. */
		slot = strncmp(sid, "S-1-15-2-", 9) == 0 ? pkg : syn;
		if (*slot && strcmp(slot, sid) != 0) {
			snprintf(why, n_why, "the journal names more SIDs than one run has");
			return -EINVAL;
		}
		strcpy(slot, sid);
		for (size_t k = 0; k < p.n_grants; k++)
			if (strcmp(g[k].path, j->entries[i].arg) == 0)
				listed = true;
		if (listed)
			continue;
		if (p.n_grants == WIN_HELPER_GRANTS_MAX) {
			snprintf(why, n_why, "more than %d helper grants", WIN_HELPER_GRANTS_MAX);
			return -E2BIG;
		}
		g[p.n_grants++] = (WinHelperGrant){ .path = j->entries[i].arg };
	}
	p.run_id = run;
	p.package_sid = *pkg ? pkg : NULL;
	p.synthetic_sid = *syn ? syn : NULL;
	if (!api->helper_start) {
		snprintf(why, n_why, "no privileged helper on this platform");
		return -ENOSYS;
	}
	return api->helper_start(api->ctx, &p, why, n_why);
}

/* A helper grant: revoked through the helper (the run's own, or, with
 * @elevate, one started for this journal), then read back. */
static int undo_helper(const WinApi *api, const WinJournal *j, const WinJournalEntry *e,
		       bool elevate, bool *started, WardError *err)
{
	char id[17], sid[WIN_SID_STRING_MAX], why[512] = "";
	WinHelperRequest req = { .op = WIN_HELPER_REVOKE, .path = e->arg };
	_cleanup_free_ char *text = NULL;
	int r;

	if (win_journal_helper_split(e->arg2, id, sid) < 0)
		return ward_error_set(err, "undo", EINVAL, "A helper entry of the journal is malformed");
	r = ace_standing(api, e->arg, sid);
	if (r < 0)
		return ward_error_set(err, "undo", r, "Failed to read the DACL of '%s'", e->arg);
	if (r == 0)
		return 0; /* revoked already (the helper does so when its client goes) */
	memcpy(req.run_id, id, sizeof(req.run_id));
	snprintf(req.sid, sizeof(req.sid), "%s", sid);
	if ((r = win_helper_format(&req, &text)) < 0)
		return ward_error_set(err, "undo", r, "Cannot ask the helper about '%s'", e->arg);
	r = api->helper_ask ? api->helper_ask(api->ctx, text, strlen(text), why, sizeof(why))
			    : -ENOTCONN;
	if (r == -ENOTCONN && elevate && !*started) {
		r = helper_start_for_undo(api, j, why, sizeof(why));
		if (r < 0)
			return ward_error_set(err, "helper", r,
					      "'%s' still grants %s read, and ward-helper.exe could "
					      "not be started to take it back: %s",
					      e->arg, sid, why);
		*started = true;
		r = api->helper_ask(api->ctx, text, strlen(text), why, sizeof(why));
	}
	if (r == -ENOTCONN)
		return ward_error_set(err, "undo", EPERM,
				      "'%s' still grants %s read (run %s), and only ward's privileged "
				      "helper can take it back: run `ward.exe cleanup` (it asks for "
				      "elevation)",
				      e->arg, sid, id);
	if (r < 0 && api->helper_stop) {
		uint32_t code = 0;

		/* A helper that ended the conversation (it refused a request)
		 * revokes what stands when it goes: wait for it to be gone,
		 * then the read-back below decides. */
		(void)api->helper_stop(api->ctx, &code);
		if (ace_standing(api, e->arg, sid) == 0)
			return 0;
	}
	if (r < 0)
		return ward_error_set(err, "helper", r, "ward-helper.exe did not revoke %s on '%s': %s",
				      sid, e->arg, why);
	/* Read back: the helper's "ok" proves nothing until the DACL says so. */
	r = ace_standing(api, e->arg, sid);
	if (r != 0)
		return ward_error_set(err, "helper-readback", r < 0 ? r : EPERM,
				      "'%s' still holds an ACE for %s after the helper's revoke", e->arg,
				      sid);
	return 0;
}

static int undo_journal(const WinApi *api, const char *text, unsigned *moved, bool elevate,
			WardError *err)
{
	WinJournal j = { 0 };
	_cleanup_strv_ char **sids = NULL;
	int r = win_journal_parse(text, &j), first = 0;
	bool started = false;

	if (r < 0)
		return ward_error_set(err, "undo", r, "Failed to read the undo journal");
	for (size_t i = 0; i < j.n; i++)
		if (j.entries[i].kind == WIN_JOURNAL_SIDS) {
			char *save = NULL, *s = strdup(j.entries[i].arg);

			if (!s) {
				first = -ENOMEM;
				break;
			}
			for (char *t = strtok_r(s, " ", &save); t; t = strtok_r(NULL, " ", &save))
				if (strv_extend(&sids, t) < 0)
					first = -ENOMEM;
			free(s);
		}
	/* Backwards, and on: one failure does not stop the other undos. */
	for (size_t i = j.n; i-- > 0 && first != -ENOMEM;) {
		const WinJournalEntry *e = &j.entries[i];

		switch (e->kind) {
		case WIN_JOURNAL_ACL:
			r = undo_acl(api, e->arg, sids, err);
			break;
		case WIN_JOURNAL_LABEL:
			if (api->stat(api->ctx, e->arg) == WIN_FILE_NONE) {
				r = 0;
				break;
			}
			r = api->set_sddl(api->ctx, e->arg, true, e->arg2 ? e->arg2 : "S:");
			if (r < 0)
				ward_error_set(err, "undo", r, "Failed to restore the label of '%s'", e->arg);
			break;
		case WIN_JOURNAL_MKDIR:
			r = api->rmdir(api->ctx, e->arg);
			/* A directory ward made that is not empty now (TEMP the
			 * command left files in) stays. */
			if (r == -ENOENT || r == -ENOTEMPTY)
				r = 0;
			if (r < 0)
				ward_error_set(err, "undo", r, "Failed to remove '%s'", e->arg);
			break;
		case WIN_JOURNAL_PROFILE:
			r = api->profile_delete(api->ctx, e->arg);
			/* Journaled before the create: a profile that was never
			 * made (no such profile, or no userenv function to make
			 * one) is undone already. */
			if (r == -ENOENT || r == -ENOSYS)
				r = 0;
			if (r < 0)
				ward_error_set(err, "undo", r, "Failed to delete AppContainer profile %s",
					       e->arg);
			break;
		case WIN_JOURNAL_ABSENT: {
			_cleanup_free_ char *to = NULL;

			/* Absent when the run began: anything there now the run made
			 * (the command, or something racing it), and host tools would
			 * trust it. Moved out, never deleted: the user decides. */
			if (api->stat(api->ctx, e->arg) == WIN_FILE_NONE) {
				r = 0;
				break;
			}
			r = api->quarantine(api->ctx, e->arg, &to);
			if (r < 0)
				ward_error_set(err, "quarantine", r,
					       "Failed to move '%s', created during the run, out of the "
					       "workspace", e->arg);
			else if (moved)
				(*moved)++;
			break;
		}
		case WIN_JOURNAL_HELPER:
			r = undo_helper(api, &j, e, elevate, &started, err);
			break;
		case WIN_JOURNAL_SIDS:
		case _WIN_JOURNAL_KIND_MAX:
		case _WIN_JOURNAL_KIND_INVALID:
		default:
			r = 0;
			break;
		}
		if (r < 0 && first == 0)
			first = r;
	}
	/* A helper started for this journal only: closing its pipe makes it
	 * revoke whatever still stands, and exit. */
	if (started && api->helper_stop) {
		uint32_t code = 0;

		(void)api->helper_stop(api->ctx, &code);
	}
	win_journal_done(&j);
	return first;
}

/* Undo the journal @id (NULL: this run's) and remove it. */
static int undo_one(const WinApi *api, const char *id, unsigned *moved, bool elevate,
		    WardError *err)
{
	_cleanup_free_ char *text = NULL;
	int r = api->journal_read(api->ctx, id, &text);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return ward_error_set(err, "undo", r, "Failed to read the undo journal");
	r = undo_journal(api, text, moved, elevate, err);
	if (r < 0)
		return r;
	return api->journal_remove(api->ctx, id);
}

/* Under the lock: the journals of runs that died. */
static int recover_locked(const WinApi *api, bool elevate, WardError *err)
{
	_cleanup_strv_ char **ids = NULL;
	int r = api->journal_stale(api->ctx, &ids), first = 0;

	if (r < 0)
		return ward_error_set(err, "recover", r, "Failed to look for unfinished runs");
	STRV_FOREACH(id, ids) {
		r = undo_one(api, *id, NULL, elevate, err);
		if (r < 0 && first == 0)
			first = r;
	}
	return first;
}

int win_exec_recover(const WinApi *api, WardError *err)
{
	int r = api->lock(api->ctx);

	if (r < 0)
		return ward_error_set(err, "lock", r, "Failed to take ward's ACL lock");
	r = recover_locked(api, false, err);
	api->unlock(api->ctx);
	return r;
}

int win_exec_cleanup(const WinApi *api, WardError *err)
{
	int r = api->lock(api->ctx);

	if (r < 0)
		return ward_error_set(err, "lock", r, "Failed to take ward's ACL lock");
	r = recover_locked(api, true, err);
	api->unlock(api->ctx);
	return r;
}

/* mkdir -p, journaling each directory before creating it. */
static int ensure_dir(const WinApi *api, const char *path, WardError *err)
{
	_cleanup_free_ char *p = strdup(path);
	size_t root;
	int r;

	if (!p)
		return -ENOMEM;
	if (api->stat(api->ctx, p) == WIN_FILE_DIRECTORY)
		return 0;
	root = p[1] == ':' ? 3 : 2;
	for (char *s = p + root;; s++) {
		char c = *s;

		if (c != '\\' && c != '\0')
			continue;
		*s = '\0';
		if (api->stat(api->ctx, p) == WIN_FILE_NONE && s > p + root) {
			r = journal(api, WIN_JOURNAL_MKDIR, p, NULL);
			if (r >= 0)
				r = api->mkdir(api->ctx, p);
			if (r < 0 && r != -EEXIST)
				return ward_error_set(err, "mkdir", r, "Failed to create '%s'", p);
		}
		*s = c;
		if (!c)
			break;
	}
	if (api->stat(api->ctx, path) != WIN_FILE_DIRECTORY)
		return ward_error_set(err, "mkdir", ENOTDIR, "'%s' is not a directory", path);
	return 0;
}

static int apply_acl(const WinPlan *plan, const WinPathPlan *pp, const WinApi *api, WardError *err)
{
	_cleanup_free_ char *cur = NULL, *out = NULL, *back = NULL;
	WinAcl seen = { 0 };
	WinAclChange chg;
	char why[256] = "";
	int r;

	win_plan_acl_change(plan, pp, &chg);
	r = api->get_sddl(api->ctx, pp->path, false, &cur);
	if (r < 0) {
		ward_error_set(err, "acl", r, "Failed to read the DACL of '%s'", pp->path);
		goto out;
	}
	r = win_acl_change_sddl(cur, &chg, &out);
	if (r == -EINVAL) {
		ward_error_set(err, "acl", r, "The DACL of '%s' holds entries ward cannot parse",
			       pp->path);
		goto out;
	}
	if (r >= 0)
		r = journal(api, WIN_JOURNAL_ACL, pp->path, NULL);
	if (r >= 0)
		r = api->set_sddl(api->ctx, pp->path, false, out);
	if (r < 0) {
		ward_error_set(err, "acl", r, "Failed to set the DACL of '%s'", pp->path);
		goto out;
	}
	/* Read back: success from SetNamedSecurityInfo proves nothing. */
	r = api->get_sddl(api->ctx, pp->path, false, &back);
	if (r >= 0)
		r = win_acl_parse_sddl(back, false, &seen);
	if (r >= 0)
		r = win_acl_check(&seen, &chg, why, sizeof(why));
	if (r < 0)
		ward_error_set(err, "acl-readback", r, "The DACL of '%s' is not what ward set: %s",
			       pp->path, *why ? why : "unreadable");
out:
	win_acl_done(&seen);
	return r;
}

static int apply_label(const WinPathPlan *pp, const WinApi *api, WardError *err)
{
	_cleanup_free_ char *cur = NULL, *back = NULL;
	WinAcl orig = { 0 }, seen = { 0 };
	char want[64];
	bool ok = false;
	int r;

	r = api->get_sddl(api->ctx, pp->path, true, &cur);
	if (r >= 0)
		r = win_acl_parse_sddl(cur, true, &orig);
	if (r < 0) {
		ward_error_set(err, "label", r, "Failed to read the integrity label of '%s'", pp->path);
		goto out;
	}
	snprintf(want, sizeof(want), "S:(ML;OICI;NW;;;S-1-16-%u)", (unsigned)pp->label_rid);
	r = journal(api, WIN_JOURNAL_LABEL, pp->path, orig.n ? cur : NULL);
	if (r >= 0)
		r = api->set_sddl(api->ctx, pp->path, true, want);
	if (r < 0) {
		ward_error_set(err, "label", r, "Failed to set the integrity label of '%s'", pp->path);
		goto out;
	}
	r = api->get_sddl(api->ctx, pp->path, true, &back);
	if (r >= 0)
		r = win_acl_parse_sddl(back, true, &seen);
	for (size_t i = 0; r >= 0 && i < seen.n; i++) {
		char sid[WIN_SID_STRING_MAX];

		snprintf(sid, sizeof(sid), "S-1-16-%u", (unsigned)pp->label_rid);
		if (!(seen.aces[i].flags & WIN_ACE_ID) && strcmp(seen.aces[i].sid, sid) == 0 &&
		    (seen.aces[i].mask & WIN_LABEL_NO_WRITE_UP))
			ok = true;
	}
	if (r >= 0 && !ok)
		r = -EPERM;
	if (r < 0)
		ward_error_set(err, "label-readback", r,
			       "The integrity label of '%s' is not what ward set", pp->path);
out:
	win_acl_done(&orig);
	win_acl_done(&seen);
	return r;
}

static int prepare_host(const WinPlan *plan, const WinApi *api, WardError *err)
{
	_cleanup_free_ char *sids = NULL;
	size_t len = 0;
	int r;

	r = api->journal_append(api->ctx, WIN_JOURNAL_HEADER);
	if (r < 0)
		return ward_error_set(err, "journal", r, "Failed to write the undo journal");
	STRV_FOREACH(s, plan->our_sids)
		len += strlen(*s) + 1;
	if (len) {
		sids = calloc(1, len);
		if (!sids)
			return -ENOMEM;
		STRV_FOREACH(s, plan->our_sids) {
			if (*sids)
				strcat(sids, " ");
			strcat(sids, *s);
		}
		r = journal(api, WIN_JOURNAL_SIDS, sids, NULL);
		if (r < 0)
			return ward_error_set(err, "journal", r, "Failed to write the undo journal");
	}
	if (plan->token.appcontainer) {
		char sid[WIN_SID_STRING_MAX] = "", why[256] = "";
		char norm[WIN_SID_STRING_MAX];

		r = journal(api, WIN_JOURNAL_PROFILE, plan->token.package_name, NULL);
		if (r >= 0)
			r = api->profile_create(api->ctx, plan->token.package_name, sid, why, sizeof(why));
		if (r < 0)
			return ward_error_set(err, "appcontainer", r,
					      "Failed to create AppContainer profile %s: %s",
					      plan->token.package_name, why);
		if (win_sid_normalize(sid, norm) < 0 || strcmp(norm, plan->token.package_sid) != 0)
			return ward_error_set(err, "appcontainer", EPERM,
					      "AppContainer profile %s has SID %s, the plan derived %s",
					      plan->token.package_name, sid, plan->token.package_sid);
	}
	for (size_t i = 0; i < plan->n_paths; i++) {
		const WinPathPlan *pp = &plan->paths[i];

		if (pp->absent && (r = journal(api, WIN_JOURNAL_ABSENT, pp->path, NULL)) < 0)
			return ward_error_set(err, "journal", r, "Failed to write the undo journal");
		if (pp->create_dir && (r = ensure_dir(api, pp->path, err)) < 0)
			return r;
		if (pp->needs_helper)
			continue; /* the helper's (helper_acquire), after the lock */
		if (pp->n_add && (r = apply_acl(plan, pp, api, err)) < 0)
			return r;
		if (pp->label_rid && (r = apply_label(pp, api, err)) < 0)
			return r;
	}
	return 0;
}

/* The paths only the privileged helper may change: each must need only
 * what it grants (allow read or read+execute, inheritable, for one of
 * the run's SIDs), no directory created, no label, and at most
 * WIN_HELPER_GRANTS_MAX of them. Checked before any change. */
static int helper_check(const WinPlan *plan, WardError *err)
{
	size_t n = 0;

	for (size_t i = 0; i < plan->n_paths; i++) {
		const WinPathPlan *pp = &plan->paths[i];

		if (!pp->needs_helper)
			continue;
		if (++n > WIN_HELPER_GRANTS_MAX)
			return ward_error_set(err, "helper", E2BIG,
					      "more than %d paths need ward's privileged helper",
					      WIN_HELPER_GRANTS_MAX);
		if (pp->label_rid || pp->create_dir || pp->absent)
			return ward_error_set(err, "helper", EPERM,
					      "'%s' (%s) needs a change under a system directory that "
					      "ward's privileged helper never makes (a label or a new "
					      "directory)", pp->path, pp->why);
		for (size_t k = 0; k < pp->n_add; k++) {
			const WinAce *a = &pp->add[k];

			if (a->type != WIN_ACE_ALLOW || a->flags != (WIN_ACE_OI | WIN_ACE_CI) ||
			    (a->mask != WIN_FILE_READ && a->mask != WIN_FILE_READ_EXEC) ||
			    !strv_contains(plan->our_sids, a->sid) ||
			    (strncmp(a->sid, "S-1-15-2-", 9) != 0 &&
			     strncmp(a->sid, "S-1-15-3-1024-", 14) != 0))
				return ward_error_set(err, "helper", EPERM,
						      "'%s' (%s) is under a system directory and needs "
						      "more than read or read+execute; ward's privileged "
						      "helper grants only those (never write or deny)",
						      pp->path, pp->why);
		}
	}
	return 0;
}

/* Start the helper for this run with exactly the plan's helper grants on
 * its command line, then for each grant: journal it, ask for it, and
 * read the DACL back. */
static int helper_acquire(const WinPlan *plan, const WinApi *api, WardError *err)
{
	WinHelperGrant g[WIN_HELPER_GRANTS_MAX];
	WinHelperPolicy pol = { .run_id = plan->run_id, .grants = g };
	char why[512] = "";
	int r;

	for (size_t i = 0; i < plan->n_paths; i++) {
		const WinPathPlan *pp = &plan->paths[i];
		bool exec = false;

		if (!pp->needs_helper)
			continue;
		for (size_t k = 0; k < pp->n_add; k++) {
			exec |= pp->add[k].mask == WIN_FILE_READ_EXEC;
			if (strncmp(pp->add[k].sid, "S-1-15-2-", 9) == 0)
				pol.package_sid = pp->add[k].sid;
			else
				pol.synthetic_sid = pp->add[k].sid;
		}
		g[pol.n_grants++] = (WinHelperGrant){ .path = pp->path, .exec = exec };
	}
	if (!api->helper_start)
		return ward_error_set(err, "helper", ENOSYS, "no privileged helper on this platform");
	r = api->helper_start(api->ctx, &pol, why, sizeof(why));
	if (r == -ECANCELED)
		return ward_error_set(err, "helper", ECANCELED,
				      "the elevation of ward-helper.exe was declined (UAC): '%s' and "
				      "%zu more path(s) under system directories need it",
				      g[0].path, pol.n_grants - 1);
	if (r < 0)
		return ward_error_set(err, "helper", r, "Failed to start ward-helper.exe: %s", why);
	for (size_t i = 0; i < plan->n_paths; i++) {
		const WinPathPlan *pp = &plan->paths[i];
		_cleanup_free_ char *back = NULL;
		WinAcl seen = { 0 };
		WinAclChange chg;

		if (!pp->needs_helper)
			continue;
		for (size_t k = 0; k < pp->n_add; k++) {
			WinHelperRequest req = {
				.op = pp->add[k].mask == WIN_FILE_READ_EXEC ? WIN_HELPER_GRANT_READ_EXEC
									    : WIN_HELPER_GRANT_READ,
				.path = pp->path,
			};
			_cleanup_free_ char *arg = NULL, *text = NULL;

			memcpy(req.run_id, plan->run_id, sizeof(req.run_id));
			snprintf(req.sid, sizeof(req.sid), "%s", pp->add[k].sid);
			r = win_journal_helper_arg(plan->run_id, pp->add[k].sid, &arg);
			if (r >= 0)
				r = journal(api, WIN_JOURNAL_HELPER, pp->path, arg);
			if (r < 0)
				return ward_error_set(err, "journal", r, "Failed to write the undo journal");
			if ((r = win_helper_format(&req, &text)) < 0)
				return ward_error_set(err, "helper", r, "Cannot ask the helper for '%s'",
						      pp->path);
			r = api->helper_ask(api->ctx, text, strlen(text), why, sizeof(why));
			if (r < 0)
				return ward_error_set(err, "helper", r,
						      "ward-helper.exe did not grant %s read on '%s': %s",
						      pp->add[k].sid, pp->path, why);
		}
		/* Read back by ward itself: the helper's "ok" is its word. */
		win_plan_acl_change(plan, pp, &chg);
		r = api->get_sddl(api->ctx, pp->path, false, &back);
		if (r >= 0)
			r = win_acl_parse_sddl(back, false, &seen);
		if (r >= 0)
			r = win_acl_check(&seen, &chg, why, sizeof(why));
		win_acl_done(&seen);
		if (r < 0)
			return ward_error_set(err, "helper-readback", r,
					      "The DACL of '%s' is not what the helper reported: %s",
					      pp->path, *why ? why : "unreadable");
	}
	return 0;
}

int win_exec_check_job(const WinPlan *plan, const WinApi *api, void *job, WardError *err)
{
	WinJobPlan seen = { 0 };
	int r = api->job_read(api->ctx, job, &seen);

	if (r < 0)
		return ward_error_set(err, "job-readback", r, "Failed to read the job object's limits");
	if (seen.kill_on_close != plan->job.kill_on_close || seen.no_breakaway != plan->job.no_breakaway ||
	    seen.active_processes != plan->job.active_processes ||
	    seen.job_memory != plan->job.job_memory || seen.ui_limits != plan->job.ui_limits)
		return ward_error_set(err, "job-readback", EPERM,
				      "The job object's limits are not what ward set");
	return 0;
}

static int run_child(const WinPlan *plan, const WinApi *api, WinExecResult *res, WardError *err)
{
	char logon[WIN_SID_STRING_MAX] = "", why[512] = "";
	_cleanup_free_ char *block = NULL;
	void *job = NULL, *proc = NULL;
	WinTokenObserved seen = { 0 };
	size_t len = 0;
	uint32_t code = 0;
	int r;

	if (plan->token.restricting_sids && strv_contains(plan->token.restricting_sids,
							  WIN_SID_LOGON_PLACEHOLDER)) {
		r = api->logon_sid(api->ctx, logon);
		if (r < 0)
			return ward_error_set(err, "logon-sid", r, "Failed to read ward's logon SID");
	}
	block = win_env_block(plan->env, &len);
	if (!block)
		return -ENOMEM;
	r = api->job_create(api->ctx, &plan->job, &job, why, sizeof(why));
	if (r < 0)
		return ward_error_set(err, "job", r, "Failed to create the job object: %s", why);
	r = win_exec_check_job(plan, api, job, err);
	if (r < 0)
		goto out;
	{
		WinSpawn s = {
			.application = plan->application, .cmdline = plan->cmdline, .cwd = plan->cwd,
			.env_block = block, .env_len = len, .token = &plan->token,
			.logon_sid = *logon ? logon : NULL, .job = job,
		};

		r = api->spawn_suspended(api->ctx, &s, &proc, why, sizeof(why));
	}
	if (r < 0) {
		ward_error_set(err, "spawn", r, "Failed to create the process: %s", why);
		goto out;
	}
	r = api->job_assign(api->ctx, job, proc);
	if (r < 0) {
		ward_error_set(err, "job-assign", r, "Failed to put the process in the job");
		goto kill;
	}
	r = api->token_read(api->ctx, proc, &seen);
	if (r < 0) {
		ward_error_set(err, "token-readback", r, "Failed to read the child's token back");
		goto kill;
	}
	r = win_token_check(&plan->token, *logon ? logon : NULL, &seen, why, sizeof(why));
	if (r < 0) {
		ward_error_set(err, "token-readback", r, "The child's token is not what the plan "
							"says, refusing to run it: %s", why);
		goto kill;
	}
	if (plan->cow.dll) {
		/* Copy-on-write: the redirector is in and hooked before the
		 * command's first instruction, or the command never runs. */
		WinCowLaunch l = { .dll = plan->cow.dll, .pipe = plan->cow.pipe,
				   .ready_ms = WIN_COW_READY_MS };

		r = api->cow_inject ? api->cow_inject(api->ctx, proc, &l, why, sizeof(why)) : -ENOSYS;
		if (r < 0) {
			ward_error_set(err, "cow-inject", r, "The copy-on-write redirector was not "
				       "loaded and ready in the child, refusing to run it: %s", why);
			goto kill;
		}
	}
	r = api->resume(api->ctx, proc);
	if (r < 0) {
		ward_error_set(err, "resume", r, "Failed to resume the process");
		goto kill;
	}
	res->started = true;
	r = api->wait(api->ctx, proc, plan->timeout_s * 1000, &code);
	if (r == -ETIMEDOUT) {
		res->timed_out = true;
		res->exit_code = WARD_EXIT_TIMEOUT;
		r = 0;
		goto kill;
	}
	if (r < 0) {
		ward_error_set(err, "wait", r, "Failed to wait for the process");
		goto kill;
	}
	res->status = code;
	res->exit_code = (int)code;
	goto out;
kill:
	(void)api->terminate(api->ctx, proc, WARD_EXIT_SETUP);
out:
	win_token_observed_done(&seen);
	if (proc)
		api->close_proc(api->ctx, proc);
	/* The job's last handle: kill-on-close ends every process in it. */
	if (job)
		api->close_job(api->ctx, job);
	return r;
}

int win_exec_acquire(const WinPlan *plan, const WinApi *api, WardError *err)
{
	int r;

	/* Refused before any change: nothing is half-applied. */
	if ((r = helper_check(plan, err)) < 0)
		return r;
	r = api->lock(api->ctx);
	if (r < 0)
		return ward_error_set(err, "lock", r, "Failed to take ward's ACL lock");
	r = recover_locked(api, false, err);
	if (r >= 0)
		r = prepare_host(plan, api, err);
	api->unlock(api->ctx);
	/* The helper's grants, outside the lock: its UAC prompt waits for a
	 * person. */
	if (r >= 0 && plan->needs_helper && plan->needs_helper[0])
		r = helper_acquire(plan, api, err);
	return r;
}

int win_exec_child(const WinPlan *plan, const WinApi *api, WinExecResult *ret, WardError *err)
{
	WinExecResult res = { .exit_code = WARD_EXIT_SETUP };
	int r = run_child(plan, api, &res, err);

	if (r < 0)
		res.exit_code = WARD_EXIT_SETUP;
	*ret = res;
	return r;
}

int win_exec_release_count(const WinApi *api, unsigned *ret_quarantined, WardError *err)
{
	int r = api->lock(api->ctx);

	if (r < 0)
		return ward_error_set(err, "lock", r, "Failed to take ward's ACL lock");
	r = undo_one(api, NULL, ret_quarantined, false, err);
	api->unlock(api->ctx);
	/* The run's helper, if it has one: its grants are revoked and read
	 * back by now; closing its pipe makes it revoke whatever still stands
	 * (a failed undo) and exit. */
	if (api->helper_stop) {
		uint32_t code = 0;

		(void)api->helper_stop(api->ctx, &code);
	}
	return r;
}

int win_exec_release(const WinApi *api, WardError *err)
{
	return win_exec_release_count(api, NULL, err);
}

int win_exec_run(const WinPlan *plan, const WinApi *api, WinExecResult *ret, WardError *err)
{
	WinExecResult res = { .exit_code = WARD_EXIT_SETUP };
	WardError undo_err = { 0 };
	int r, u;

	r = win_exec_acquire(plan, api, err);
	if (r >= 0)
		r = win_exec_child(plan, api, &res, err);
	if (r < 0)
		res.exit_code = WARD_EXIT_SETUP;

	/* Undo whatever was journaled, however the run ended. */
	u = win_exec_release_count(api, &res.quarantined, r < 0 ? &undo_err : err);
	if (u < 0) {
		res.undo_failed = true;
		if (r >= 0) {
			res.exit_code = WARD_EXIT_SETUP;
			r = u;
		}
	}
	*ret = res;
	return r;
}
