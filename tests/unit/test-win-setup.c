/* The sandbox-user tier's setup (ward-setup.exe): the plan from what the
 * host has, the password and credential record, the credential file's
 * DACL check, the setup journal; and the executor against a fake host
 * that fails and lies: a user "created" that does not read back (Wine's
 * NetUserAdd) refuses, a non-elevated setup refuses before any change,
 * the read ACLs are best effort, --uninstall undoes exactly the journal.
 * Runs natively and, cross-compiled, under Wine. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "common/strv.h"
#include "windows/win-acl.h"
#include "windows/win-setup-exec.h"
#include "windows/win-setup.h"

#define STATE "C:\\Users\\me\\AppData\\Local\\ward"
#define SELF "S-1-5-21-7-8-9-1000"

static void test_setup_plan_fresh_and_converged(void **state)
{
	char *dirs[] = { "C:\\Users\\me", "C:\\Windows", "c:/Program Files/", NULL };
	WinSetupSeen seen = { 0 };
	WinSetupInput in = { .seen = &seen, .state_dir = STATE, .read_dirs = dirs };
	WinSetupPlan p;
	static const WinSetupKind fresh[] = { WIN_SETUP_SID,	     WIN_SETUP_USER, WIN_SETUP_USER,
					      WIN_SETUP_HIDE,	     WIN_SETUP_HIDE,
					      WIN_SETUP_CREDENTIALS, WIN_SETUP_WALLS,
					      WIN_SETUP_WALLS,
					      WIN_SETUP_READ_ACL,    WIN_SETUP_READ_ACL,
					      WIN_SETUP_READ_ACL };

	(void)state;
	assert_int_equal(win_setup_plan(&in, &p), 0);
	assert_int_equal(p.n, sizeof(fresh) / sizeof(fresh[0]));
	for (size_t i = 0; i < p.n; i++)
		assert_int_equal(p.steps[i].kind, fresh[i]);
	assert_true(p.steps[1].create);
	assert_int_equal(p.steps[1].user, 0);
	assert_int_equal(p.steps[2].user, 1);
	assert_string_equal(p.steps[0].path, STATE "\\sandbox-sid");
	assert_string_equal(p.steps[5].path, STATE "\\sandbox-users.dpapi");
	/* The walls: the offline user's, then the online user's. */
	assert_int_equal(p.steps[6].user, 0);
	assert_int_equal(p.steps[7].user, 1);
	assert_string_equal(p.steps[10].path, "C:\\Program Files");
	win_setup_plan_done(&p);

	/* Everything there: only the walls (verified) and the read ACLs. */
	seen = (WinSetupSeen){ .synthetic_sid = "S-1-15-3-1024-1", .exists = { true, true },
			       .hidden = { true, true }, .credentials_ok = true };
	assert_int_equal(win_setup_plan(&in, &p), 0);
	assert_int_equal(p.n, 5);
	assert_int_equal(p.steps[0].kind, WIN_SETUP_WALLS);
	assert_int_equal(p.steps[1].kind, WIN_SETUP_WALLS);
	assert_int_equal(p.steps[1].user, 1);
	win_setup_plan_done(&p);

	/* The record lost: both users exist, so both passwords are reset
	 * (nobody can read the old ones), and a new record written. */
	seen.credentials_ok = false;
	assert_int_equal(win_setup_plan(&in, &p), 0);
	assert_int_equal(p.steps[0].kind, WIN_SETUP_USER);
	assert_false(p.steps[0].create);
	assert_int_equal(p.steps[1].kind, WIN_SETUP_USER);
	assert_false(p.steps[1].create);
	assert_int_equal(p.steps[2].kind, WIN_SETUP_CREDENTIALS);
	win_setup_plan_done(&p);

	/* Bad input. */
	char *bad[] = { "relative\\dir", NULL };
	in.read_dirs = bad;
	assert_int_equal(win_setup_plan(&in, &p), -EINVAL);
	in.read_dirs = dirs;
	in.state_dir = "C:ward";
	assert_int_equal(win_setup_plan(&in, &p), -EINVAL);
}

/* The users' walls, as setup adds them and ward.exe reads them back
 * (one function for both). The offline user: no permit, nothing out.
 * The online user: the same blocks, and permits only for TCP to
 * 127.0.0.1 / ::1 on WIN_SETUP_ONLINE_PROXY_PORT. */
static void test_setup_walls_plans(void **state)
{
	WinWfpPlan off, on;
	size_t permits = 0;

	(void)state;
	assert_int_equal(win_setup_walls_plan(0, "S-1-5-21-7-8-9-1005", &off), 0);
	assert_int_equal(win_setup_walls_plan(1, "S-1-5-21-7-8-9-1006", &on), 0);
	assert_true(off.persistent && on.persistent);
	assert_int_equal(off.proxy_port, 0);
	assert_int_equal(off.n, 10);
	assert_int_equal(on.n, 12);
	for (size_t i = 0; i < off.n; i++) {
		assert_int_equal(off.filters[i].cond[0].field, WIN_WFP_F_USER);
		assert_non_null(strstr(off.filters[i].cond[0].text, "S-1-5-21-7-8-9-1005"));
		if (off.filters[i].layer == WIN_WFP_CONNECT_V4 ||
		    off.filters[i].layer == WIN_WFP_CONNECT_V6)
			assert_false(off.filters[i].permit);
	}
	/* Below Windows's dynamic range: no ephemeral bind lands there. */
	assert_true(WIN_SETUP_ONLINE_PROXY_PORT > 1024 && WIN_SETUP_ONLINE_PROXY_PORT < 49152);
	for (size_t i = 0; i < on.n; i++) {
		const WinWfpFilter *f = &on.filters[i];
		bool port = false, tcp = false, loop = false;

		assert_int_equal(f->cond[0].field, WIN_WFP_F_USER);
		assert_non_null(strstr(f->cond[0].text, "S-1-5-21-7-8-9-1006"));
		for (size_t j = 0; j < off.n; j++)
			assert_false(win_guid_equal(&f->key, &off.filters[j].key));
		if (!f->permit || (f->layer != WIN_WFP_CONNECT_V4 && f->layer != WIN_WFP_CONNECT_V6))
			continue;
		permits++;
		assert_int_equal(f->n_cond, 4);
		for (size_t k = 1; k < f->n_cond; k++) {
			const WinWfpCondition *c = &f->cond[k];

			if (c->field == WIN_WFP_F_REMOTE_PORT)
				port = c->num == WIN_SETUP_ONLINE_PROXY_PORT;
			if (c->field == WIN_WFP_F_PROTOCOL)
				tcp = c->num == 6;
			if (c->field == WIN_WFP_F_REMOTE_V4)
				loop = c->v4 == 0x7f000001u;
			if (c->field == WIN_WFP_F_REMOTE_V6)
				loop = c->v6[15] == 1 && c->v6[0] == 0;
		}
		assert_true(port && tcp && loop);
	}
	assert_int_equal(permits, 2);
	/* Not a sandbox user, not a user SID. */
	assert_int_equal(win_setup_walls_plan(2, "S-1-5-21-7-8-9-1006", &on), -EINVAL);
	assert_int_equal(win_setup_walls_plan(-1, "S-1-5-21-7-8-9-1006", &on), -EINVAL);
	assert_int_equal(win_setup_walls_plan(1, "S-1-15-2-1-2-3-4-5-6-7", &on), -EINVAL);
	assert_int_equal(win_setup_walls_plan(1, "not a sid", &on), -EINVAL);
}

static void test_setup_password_and_sid(void **state)
{
	uint8_t rnd[WIN_SETUP_PASSWORD_LEN];
	char pw[WIN_SETUP_PASSWORD_LEN + 1], sid[WIN_SID_STRING_MAX], again[WIN_SID_STRING_MAX];

	(void)state;
	for (int seed = 0; seed < 256; seed++) {
		for (int i = 0; i < WIN_SETUP_PASSWORD_LEN; i++)
			rnd[i] = (uint8_t)(seed * 31 + i * 7);
		win_setup_password(rnd, pw);
		assert_int_equal(strlen(pw), WIN_SETUP_PASSWORD_LEN);
		assert_true(pw[0] >= 'A' && pw[0] <= 'Z');
		assert_true(pw[1] >= 'a' && pw[1] <= 'z');
		assert_true(pw[2] >= '0' && pw[2] <= '9');
		assert_non_null(strchr("!#%+-=?@^_", pw[3]));
		assert_null(strpbrk(pw, "\t\n\" "));
	}
	assert_int_equal(win_setup_synthetic_sid("00112233445566ff", sid), 0);
	assert_int_equal(strncmp(sid, "S-1-15-3-1024-", 14), 0);
	assert_int_equal(win_setup_synthetic_sid("00112233445566ff", again), 0);
	assert_string_equal(sid, again);
	assert_int_equal(win_setup_synthetic_sid("00112233445566fe", again), 0);
	assert_true(strcmp(sid, again) != 0);
	assert_int_equal(win_setup_synthetic_sid("00112233445566FF", sid), -EINVAL);
	assert_int_equal(win_setup_synthetic_sid("0011", sid), -EINVAL);
}

static void test_setup_credential_record(void **state)
{
	const char *pw[2] = { "Ab3!aaaaaaaaaaaaaaaaaaaa", "Cd4#bbbbbbbbbbbbbbbbbbbb" };
	char back[2][WIN_SETUP_PASSWORD_LEN + 1];
	char *text = NULL;

	(void)state;
	assert_int_equal(win_setup_creds_format(pw, &text), 0);
	assert_int_equal(win_setup_creds_parse(text, back), 0);
	assert_string_equal(back[0], pw[0]);
	assert_string_equal(back[1], pw[1]);
	/* Truncated, extended, reordered: refused. */
	text[strlen(text) - 2] = 0;
	assert_int_equal(win_setup_creds_parse(text, back), -EINVAL);
	free(text);
	assert_int_equal(win_setup_creds_parse("ward-sandbox-credentials 1\nWardSandboxOnline\t"
					       "Ab3!aaaaaaaaaaaaaaaaaaaa\nWardSandboxOffline\t"
					       "Cd4#bbbbbbbbbbbbbbbbbbbb\n",
					       back),
			 -EINVAL);
	assert_int_equal(win_setup_creds_parse("", back), -EINVAL);
	const char *shortpw[2] = { "x", pw[1] };
	assert_int_equal(win_setup_creds_format(shortpw, &text), -EINVAL);
}

static void test_setup_cred_dacl_check(void **state)
{
	char *sddl = NULL, why[256];

	(void)state;
	assert_int_equal(win_setup_cred_sddl(SELF, &sddl), 0);
	assert_int_equal(win_setup_cred_check(sddl, SELF, why, sizeof(why)), 0);
	free(sddl);
	/* Any other reader (a sandbox user, Users, Everyone) refuses. */
	assert_int_equal(win_setup_cred_check("D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;" SELF
					      ")(A;;FR;;;S-1-5-21-7-8-9-1005)",
					      SELF, why, sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "S-1-5-21-7-8-9-1005"));
	assert_int_equal(win_setup_cred_check("D:P(A;;FA;;;SY)(A;;FR;;;BU)(A;;FA;;;" SELF ")", SELF,
					      why, sizeof(why)),
			 -EPERM);
	/* Inheriting from the directory: refused. */
	assert_int_equal(win_setup_cred_check("D:(A;;FA;;;SY)(A;;FA;;;" SELF ")", SELF, why,
					      sizeof(why)),
			 -EPERM);
	/* The owner without access: refused. */
	assert_int_equal(win_setup_cred_check("D:P(A;;FA;;;SY)", SELF, why, sizeof(why)), -EPERM);
}

static void test_setup_journal_parse(void **state)
{
	WinSetupJournalEntry *e = NULL;
	size_t n = 0;
	char *line = NULL;

	(void)state;
	assert_int_equal(win_setup_journal_line(WIN_SETUPJ_ACL, "C:\\Windows", "S-1-5-21-1 S-1-5-21-2",
						&line),
			 0);
	assert_string_equal(line, "acl\tC:\\Windows\tS-1-5-21-1 S-1-5-21-2\n");
	free(line);
	assert_int_equal(win_setup_journal_line(WIN_SETUPJ_USER, "a\tb", NULL, &line), -EINVAL);
	assert_int_equal(win_setup_journal_line(WIN_SETUPJ_USER, "x", "S-1-1-0", &line), -EINVAL);
	assert_int_equal(win_setup_journal_parse("ward-windows-setup 1\nuser\tWardSandboxOffline\n"
						 "acl\tC:\\x\tS-1-5-21-1\nhide\tWardSand",
						 &e, &n),
			 0);
	assert_int_equal(n, 2);
	assert_int_equal(e[1].kind, WIN_SETUPJ_ACL);
	assert_string_equal(e[1].sids, "S-1-5-21-1");
	win_setup_journal_free(e, n);
	assert_int_equal(win_setup_journal_parse("ward-windows-setup 1\nacl\tC:\\x\tnot-a-sid\n", &e,
						 &n),
			 -EINVAL);
	assert_int_equal(win_setup_journal_parse("ward-windows-setup 1\nuser\tx\tS-1-1-0\n", &e, &n),
			 -EINVAL);
	assert_int_equal(win_setup_journal_parse("ward-windows-setup 1\ndrop\tx\n", &e, &n), -EINVAL);
	assert_int_equal(win_setup_journal_parse("other 1\n", &e, &n), -EINVAL);
}

/* ---- the executor against a fake host ---- */

typedef struct FakeUser {
	char name[32];
	char pw[WIN_SETUP_PASSWORD_LEN + 1];
	char sid[WIN_SID_STRING_MAX];
	bool hidden;
} FakeUser;

typedef struct FakeFile {
	char path[128];
	void *data;
	size_t n;
	char *sddl;
} FakeFile;

typedef struct Host {
	bool elevated;
	FakeUser users[4];
	size_t n_users;
	FakeFile files[16];
	size_t n_files;
	char *journal;
	WinFwRule fw;           /* the one firewall rule; name "": none */
	bool no_com;            /* INetFwPolicy2 missing (Wine): -ENOSYS */
	const char *lie;        /* "user_add": success, no user; "dacl_set": success, no change;
	                         * "fw_add": success, no rule; "fw_get": reads back inbound */
	const char *fail;       /* "dacl_set": -EACCES */
	int next_rid;
} Host;

static Host *H;

static FakeUser *user(const char *name)
{
	for (size_t i = 0; i < H->n_users; i++)
		if (strcasecmp(H->users[i].name, name) == 0)
			return &H->users[i];
	return NULL;
}

static FakeFile *file(const char *path)
{
	for (size_t i = 0; i < H->n_files; i++)
		if (strcasecmp(H->files[i].path, path) == 0)
			return &H->files[i];
	return NULL;
}

static int h_elevated(void *c)
{
	(void)c;
	return H->elevated;
}

static int h_self(void *c, char ret[WIN_SID_STRING_MAX])
{
	(void)c;
	snprintf(ret, WIN_SID_STRING_MAX, "%s", SELF);
	return 0;
}

static int h_random(void *c, void *buf, size_t n)
{
	(void)c;
	for (size_t i = 0; i < n; i++)
		((uint8_t *)buf)[i] = (uint8_t)(i * 13 + (size_t)H->next_rid);
	return 0;
}

static int h_user_get(void *c, const char *name, char sid[WIN_SID_STRING_MAX])
{
	FakeUser *u = user(name);

	(void)c;
	if (!u)
		return -ENOENT;
	snprintf(sid, WIN_SID_STRING_MAX, "%s", u->sid);
	return 0;
}

static int h_user_add(void *c, const char *name, const char *pw, char *why, size_t n)
{
	FakeUser *u;

	(void)c, (void)why, (void)n;
	if (H->lie && strcmp(H->lie, "user_add") == 0)
		return 0; /* Wine: NERR_Success, nothing created */
	u = &H->users[H->n_users++];
	snprintf(u->name, sizeof(u->name), "%s", name);
	snprintf(u->pw, sizeof(u->pw), "%s", pw);
	snprintf(u->sid, sizeof(u->sid), "S-1-5-21-7-8-9-%d", 1001 + H->next_rid++);
	return 0;
}

static int h_user_set_password(void *c, const char *name, const char *pw, char *why, size_t n)
{
	FakeUser *u = user(name);

	(void)c, (void)why, (void)n;
	if (!u)
		return -ENOENT;
	snprintf(u->pw, sizeof(u->pw), "%s", pw);
	return 0;
}

static int h_logon(void *c, const char *name, const char *pw, char *why, size_t n)
{
	FakeUser *u = user(name);

	(void)c;
	if (!u || strcmp(u->pw, pw) != 0) {
		snprintf(why, n, "ERROR_LOGON_FAILURE");
		return -EACCES;
	}
	return 0;
}

static int h_user_delete(void *c, const char *name)
{
	FakeUser *u = user(name);

	(void)c;
	if (!u)
		return -ENOENT;
	*u = H->users[--H->n_users];
	return 0;
}

static int h_hidden_get(void *c, const char *name, bool *ret)
{
	FakeUser *u = user(name);

	(void)c;
	*ret = u && u->hidden;
	return 0;
}

static int h_hidden_set(void *c, const char *name)
{
	FakeUser *u = user(name);

	(void)c;
	if (u)
		u->hidden = true;
	return 0;
}

static int h_hidden_delete(void *c, const char *name)
{
	FakeUser *u = user(name);

	(void)c;
	if (u)
		u->hidden = false;
	return 0;
}

/* "DPAPI": a reversible transform, enough to show the round trip. */
static int h_protect(void *c, const void *in, size_t n, void **ret, size_t *nr)
{
	uint8_t *o = malloc(n + 4);

	(void)c;
	memcpy(o, "DPAP", 4);
	for (size_t i = 0; i < n; i++)
		o[4 + i] = ((const uint8_t *)in)[i] ^ 0x5a;
	*ret = o;
	*nr = n + 4;
	return 0;
}

static int h_unprotect(void *c, const void *in, size_t n, void **ret, size_t *nr)
{
	uint8_t *o;

	(void)c;
	if (n < 4 || memcmp(in, "DPAP", 4) != 0)
		return -EINVAL;
	o = malloc(n - 4 + 1);
	for (size_t i = 4; i < n; i++)
		o[i - 4] = ((const uint8_t *)in)[i] ^ 0x5a;
	*ret = o;
	*nr = n - 4;
	return 0;
}

static int h_file_write(void *c, const char *path, const void *data, size_t n, const char *sddl)
{
	FakeFile *f = file(path);

	(void)c;
	if (!f) {
		f = &H->files[H->n_files++];
		snprintf(f->path, sizeof(f->path), "%s", path);
		f->sddl = strdup("D:(A;OICIID;FA;;;BA)");
	}
	free(f->data);
	f->data = malloc(n);
	memcpy(f->data, data, n);
	f->n = n;
	if (sddl) {
		free(f->sddl);
		f->sddl = strdup(sddl);
	}
	return 0;
}

static int h_file_read(void *c, const char *path, void **ret, size_t *nr)
{
	FakeFile *f = file(path);

	(void)c;
	if (!f || !f->data)
		return -ENOENT;
	*ret = malloc(f->n + 1);
	memcpy(*ret, f->data, f->n);
	*nr = f->n;
	return 0;
}

static int h_file_delete(void *c, const char *path)
{
	FakeFile *f = file(path);

	(void)c;
	if (!f || !f->data)
		return -ENOENT;
	free(f->data);
	f->data = NULL;
	return 0;
}

static int h_dacl_get(void *c, const char *path, char **ret)
{
	FakeFile *f = file(path);

	(void)c;
	if (!f)
		return -ENOENT;
	*ret = strdup(f->sddl);
	return 0;
}

static int h_dacl_set(void *c, const char *path, const char *sddl)
{
	FakeFile *f = file(path);

	(void)c;
	if (H->fail && strcmp(H->fail, "dacl_set") == 0)
		return -EACCES;
	if (!f)
		return -ENOENT;
	if (H->lie && strcmp(H->lie, "dacl_set") == 0)
		return 0;
	free(f->sddl);
	f->sddl = strdup(sddl);
	return 0;
}

static int h_journal_read(void *c, char **ret)
{
	(void)c;
	if (!H->journal)
		return -ENOENT;
	*ret = strdup(H->journal);
	return 0;
}

static int h_journal_append(void *c, const char *text)
{
	size_t a = H->journal ? strlen(H->journal) : 0;
	const char *hdr = a ? "" : WIN_SETUP_JOURNAL_HEADER;
	char *j = malloc(a + strlen(hdr) + strlen(text) + 1);

	(void)c;
	sprintf(j, "%s%s%s", a ? H->journal : "", hdr, text);
	free(H->journal);
	H->journal = j;
	return 0;
}

static int h_journal_replace(void *c, const char *text)
{
	(void)c;
	free(H->journal);
	H->journal = text ? strdup(text) : NULL;
	return 0;
}

static int h_fw_add(void *c, const WinFwRule *rule, char *why, size_t n)
{
	(void)c;
	if (H->no_com) {
		snprintf(why, n, "CoCreateInstance(NetFwPolicy2): class not registered");
		return -ENOSYS;
	}
	if (!(H->lie && strcmp(H->lie, "fw_add") == 0))
		H->fw = *rule;
	return 0;
}

static int h_fw_get(void *c, const char *name, WinFwRule *ret, char *why, size_t n)
{
	(void)c, (void)why, (void)n;
	if (H->no_com)
		return -ENOSYS;
	if (!*H->fw.name || strcmp(H->fw.name, name) != 0)
		return -ENOENT;
	*ret = H->fw;
	if (H->lie && strcmp(H->lie, "fw_get") == 0)
		ret->outbound = false;
	return 0;
}

static int h_fw_remove(void *c, const char *name)
{
	(void)c;
	if (H->no_com)
		return -ENOSYS;
	if (!*H->fw.name || strcmp(H->fw.name, name) != 0)
		return -ENOENT;
	memset(&H->fw, 0, sizeof(H->fw));
	return 0;
}

static const WinSetupApi host_api = {
	.fw_add = h_fw_add,
	.fw_get = h_fw_get,
	.fw_remove = h_fw_remove,
	.elevated = h_elevated,
	.self_sid = h_self,
	.random = h_random,
	.user_get = h_user_get,
	.user_add = h_user_add,
	.user_set_password = h_user_set_password,
	.user_logon_check = h_logon,
	.user_delete = h_user_delete,
	.hidden_get = h_hidden_get,
	.hidden_set = h_hidden_set,
	.hidden_delete = h_hidden_delete,
	.dpapi_protect = h_protect,
	.dpapi_unprotect = h_unprotect,
	.file_write = h_file_write,
	.file_read = h_file_read,
	.file_delete = h_file_delete,
	.dacl_get = h_dacl_get,
	.dacl_set = h_dacl_set,
	.journal_read = h_journal_read,
	.journal_append = h_journal_append,
	.journal_replace = h_journal_replace,
};

/* A WFP engine that works (the walls' own tests are test-win-net-exec.c). */
static WinWfpFilter wfp[32];
static size_t n_wfp;
static char *net_journal;

static int w_open(void *c, bool d, void **ret, char *why, size_t n)
{
	(void)c, (void)d, (void)why, (void)n;
	*ret = &n_wfp;
	return 0;
}
static void w_close(void *c, void *e) { (void)c, (void)e; }
static int w_ok(void *c, void *e, char *why, size_t n)
{
	(void)c, (void)e, (void)why, (void)n;
	return 0;
}
static void w_abort(void *c, void *e) { (void)c, (void)e; }
static int w_plan_ok(void *c, void *e, const WinWfpPlan *p, char *why, size_t n)
{
	(void)c, (void)e, (void)p, (void)why, (void)n;
	return 0;
}
static int w_add(void *c, void *e, const WinWfpPlan *p, const WinWfpFilter *f, char *why, size_t n)
{
	(void)c, (void)e, (void)p, (void)why, (void)n;
	wfp[n_wfp++] = *f;
	return 0;
}
static int w_get(void *c, void *e, const WinGuid *k, WinWfpFilter *ret, char *why, size_t n)
{
	(void)c, (void)e, (void)why, (void)n;
	for (size_t i = 0; i < n_wfp; i++)
		if (win_guid_equal(&wfp[i].key, k)) {
			*ret = wfp[i];
			return 0;
		}
	return -ENOENT;
}
static int w_del(void *c, void *e, const WinGuid *k)
{
	(void)c, (void)e;
	for (size_t i = 0; i < n_wfp; i++)
		if (win_guid_equal(&wfp[i].key, k)) {
			wfp[i] = wfp[--n_wfp];
			return 0;
		}
	return -ENOENT;
}
static int w_del_other(void *c, void *e, const WinGuid *k)
{
	(void)c, (void)e, (void)k;
	return 0;
}
static int w_lb_get(void *c, char ***ret, char *why, size_t n)
{
	(void)c, (void)why, (void)n;
	*ret = calloc(1, sizeof(char *));
	return 0;
}
static int w_lb_set(void *c, char *const *s, char *why, size_t n)
{
	(void)c, (void)s, (void)why, (void)n;
	return 0;
}
static int w_j_read(void *c, char **ret)
{
	(void)c;
	if (!net_journal)
		return -ENOENT;
	*ret = strdup(net_journal);
	return 0;
}
static int w_j_append(void *c, const char *t)
{
	size_t a = net_journal ? strlen(net_journal) : 0;
	const char *hdr = a ? "" : "ward-windows-net 1\n";
	char *j = malloc(a + strlen(hdr) + strlen(t) + 1);

	(void)c;
	sprintf(j, "%s%s%s", a ? net_journal : "", hdr, t);
	free(net_journal);
	net_journal = j;
	return 0;
}
static int w_j_replace(void *c, const char *t)
{
	(void)c;
	free(net_journal);
	net_journal = t ? strdup(t) : NULL;
	return 0;
}

static const WinNetApi net_api = {
	.wfp_open = w_open, .wfp_close = w_close, .wfp_begin = w_ok, .wfp_commit = w_ok,
	.wfp_abort = w_abort, .wfp_add_provider = w_plan_ok, .wfp_add_sublayer = w_plan_ok,
	.wfp_add_filter = w_add, .wfp_get_filter = w_get, .wfp_delete_filter = w_del,
	.wfp_delete_sublayer = w_del_other, .wfp_delete_provider = w_del_other,
	.loopback_get = w_lb_get, .loopback_set = w_lb_set, .journal_read = w_j_read,
	.journal_append = w_j_append, .journal_replace = w_j_replace,
};

static char **progress_lines;
static void progress(void *data, const char *line)
{
	(void)data;
	assert_int_equal(strv_extend(&progress_lines, line), 0);
}

static int host_setup(void **state)
{
	(void)state;
	H = calloc(1, sizeof(*H));
	H->elevated = true;
	/* The directories the read ACLs go on. */
	h_file_write(NULL, "C:\\Windows", "", 0, "D:(A;OICIID;FA;;;SY)(A;OICIID;0x1200a9;;;BU)");
	h_file_write(NULL, "C:\\Users\\me", "", 0, "D:P(A;OICI;FA;;;" SELF ")(A;OICI;FA;;;SY)");
	n_wfp = 0;
	return 0;
}

static int host_teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < H->n_files; i++) {
		free(H->files[i].data);
		free(H->files[i].sddl);
	}
	free(H->journal);
	free(H);
	free(net_journal);
	net_journal = NULL;
	strv_free(progress_lines);
	progress_lines = NULL;
	return 0;
}

static int plan_now(WinSetupPlan *p)
{
	static char *dirs[] = { "C:\\Users\\me", "C:\\Windows", NULL };
	WinSetupSeen seen;
	WinSetupInput in = { .seen = &seen, .state_dir = STATE, .read_dirs = dirs };

	assert_int_equal(win_setup_observe(&host_api, STATE, &seen), 0);
	return win_setup_plan(&in, p);
}

static void test_setup_apply_reads_back(void **state)
{
	WinSetupPlan p;
	char why[512] = "";
	char pw[2][WIN_SETUP_PASSWORD_LEN + 1];
	void *blob = NULL, *plain = NULL;
	size_t nb = 0, np = 0;
	FakeUser *off, *on;

	(void)state;
	assert_int_equal(plan_now(&p), 0);
	assert_int_equal(win_setup_apply(&host_api, &net_api, &p, progress, NULL, why, sizeof(why)),
			 0);
	off = user(WIN_SETUP_OFFLINE_USER);
	on = user(WIN_SETUP_ONLINE_USER);
	assert_non_null(off);
	assert_non_null(on);
	assert_true(off->hidden);
	assert_true(on->hidden);
	/* The record decrypts to the users' real passwords; its DACL is private. */
	assert_int_equal(h_file_read(NULL, STATE "\\sandbox-users.dpapi", &blob, &nb), 0);
	assert_int_equal(h_unprotect(NULL, blob, nb, &plain, &np), 0);
	((char *)plain)[np] = 0;
	assert_int_equal(win_setup_creds_parse(plain, pw), 0);
	assert_string_equal(pw[0], off->pw);
	assert_string_equal(pw[1], on->pw);
	assert_true(strcmp(pw[0], pw[1]) != 0);
	free(blob);
	free(plain);
	assert_int_equal(strncmp(file(STATE "\\sandbox-users.dpapi")->sddl, "D:P(", 4), 0);
	/* Both users walled: persistent filters on their SIDs, journaled;
	 * the offline user's 10 (nothing out), the online user's 12 (the two
	 * proxy permits more). */
	assert_int_equal(n_wfp, 22);
	assert_non_null(net_journal);
	assert_non_null(strstr(net_journal, off->sid));
	assert_non_null(strstr(net_journal, on->sid));
	{
		size_t permits = 0;

		for (size_t i = 0; i < n_wfp; i++)
			if (wfp[i].permit && (wfp[i].layer == WIN_WFP_CONNECT_V4 ||
					      wfp[i].layer == WIN_WFP_CONNECT_V6)) {
				permits++;
				assert_non_null(strstr(wfp[i].cond[0].text, on->sid));
			}
		assert_int_equal(permits, 2);
	}
	assert_true(strv_contains(progress_lines, "walls WardSandboxOffline: ok"));
	assert_true(strv_contains(progress_lines, "walls WardSandboxOnline: ok"));
	/* And the firewall rule: outbound block for the offline user only,
	 * journaled before it was added. */
	assert_string_equal(H->fw.name, WIN_SETUP_FW_RULE_NAME);
	assert_true(H->fw.outbound && H->fw.block && H->fw.enabled);
	assert_non_null(strstr(H->fw.users, off->sid));
	assert_null(strstr(H->fw.users, on->sid));
	assert_non_null(strstr(H->journal, "fwrule\t" WIN_SETUP_FW_RULE_NAME "\n"));
	/* Journaled: the two users, the hides, the two files. */
	assert_non_null(strstr(H->journal, "user\tWardSandboxOffline\n"));
	assert_non_null(strstr(H->journal, "hide\tWardSandboxOnline\n"));
	assert_non_null(strstr(H->journal, "file\t" STATE "\\sandbox-users.dpapi\n"));

	/* Read ACLs: best effort, reported one by one. */
	assert_int_equal(win_setup_read_acls(&host_api, &p, progress, NULL), 0);
	assert_non_null(strstr(file("C:\\Windows")->sddl, off->sid));
	assert_true(strv_contains(progress_lines, "read-acl 2/2 C:\\Windows: ok"));
	win_setup_plan_done(&p);

	/* A second setup converges: nothing to create. */
	assert_int_equal(plan_now(&p), 0);
	assert_int_equal(p.steps[0].kind, WIN_SETUP_WALLS);
	assert_int_equal(win_setup_apply(&host_api, &net_api, &p, progress, NULL, why, sizeof(why)),
			 0);
	assert_int_equal(n_wfp, 22); /* replaced, not doubled */
	win_setup_plan_done(&p);

	/* Uninstall: everything in the journal goes, read back. */
	assert_int_equal(win_setup_uninstall(&host_api, &net_api, progress, NULL, why, sizeof(why)),
			 0);
	assert_null(user(WIN_SETUP_OFFLINE_USER));
	assert_null(user(WIN_SETUP_ONLINE_USER));
	assert_null(file(STATE "\\sandbox-users.dpapi")->data);
	assert_null(strstr(file("C:\\Windows")->sddl, "S-1-5-21-7-8-9-100"));
	/* The rest untouched. */
	assert_true(strstr(file("C:\\Windows")->sddl, "BU") ||
		    strstr(file("C:\\Windows")->sddl, "S-1-5-32-545"));
	assert_null(H->journal);
	assert_int_equal(n_wfp, 0);
	assert_null(net_journal);
	assert_string_equal(H->fw.name, "");
}

/* The firewall variant fails closed: no INetFwPolicy2 (Wine), a rule
 * "added" that is not there, one that reads back different: refused; the
 * journal keeps the rule line for --uninstall. */
static void test_setup_firewall_fail_closed(void **state)
{
	WinSetupPlan p;
	char why[512] = "";
	WinFwRule a, b;

	(void)state;
	assert_int_equal(win_setup_fw_rule("S-1-5-21-7-8-9-1005", &a), 0);
	assert_string_equal(a.users, "O:LSD:(A;;CC;;;S-1-5-21-7-8-9-1005)");
	b = a;
	assert_int_equal(win_setup_fw_check(&a, &b, why, sizeof(why)), 0);
	b.profiles = 1;
	assert_int_equal(win_setup_fw_check(&a, &b, why, sizeof(why)), -EPERM);
	b = a;
	snprintf(b.users, sizeof(b.users), "O:LSD:(A;;CC;;;S-1-5-21-7-8-9-1005)(A;;CC;;;WD)");
	assert_int_equal(win_setup_fw_check(&a, &b, why, sizeof(why)), -EPERM);
	b = a;
	b.block = false;
	assert_int_equal(win_setup_fw_check(&a, &b, why, sizeof(why)), -EPERM);
	assert_int_equal(win_setup_fw_rule("not a sid", &a), -EINVAL);

	H->no_com = true;
	assert_int_equal(plan_now(&p), 0);
	assert_int_equal(win_setup_apply(&host_api, &net_api, &p, progress, NULL, why, sizeof(why)),
			 -ENOSYS);
	assert_non_null(strstr(why, "firewall: INetFwPolicy2"));
	win_setup_plan_done(&p);
	H->no_com = false;
	H->lie = "fw_add";
	assert_int_equal(plan_now(&p), 0);
	assert_int_equal(win_setup_apply(&host_api, &net_api, &p, progress, NULL, why, sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "does not read back (not there)"));
	win_setup_plan_done(&p);
	H->lie = "fw_get";
	assert_int_equal(plan_now(&p), 0);
	assert_int_equal(win_setup_apply(&host_api, &net_api, &p, progress, NULL, why, sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "inbound"));
	win_setup_plan_done(&p);
	H->lie = NULL;
	/* The rule line stayed journaled; uninstall removes the rule. */
	assert_non_null(strstr(H->journal, "fwrule\t"));
	assert_int_equal(win_setup_uninstall(&host_api, &net_api, progress, NULL, why, sizeof(why)),
			 0);
	assert_string_equal(H->fw.name, "");
	assert_null(H->journal);
}

static void test_setup_fail_closed(void **state)
{
	WinSetupPlan p;
	char why[512] = "";

	(void)state;
	/* Not elevated: refused before any change. */
	H->elevated = false;
	assert_int_equal(plan_now(&p), 0);
	assert_int_equal(win_setup_apply(&host_api, &net_api, &p, progress, NULL, why, sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "elevated"));
	assert_null(H->journal);
	assert_int_equal(H->n_users, 0);
	/* Wine: NetUserAdd says success, creates nothing: the read-back refuses. */
	H->elevated = true;
	H->lie = "user_add";
	assert_int_equal(win_setup_apply(&host_api, &net_api, &p, progress, NULL, why, sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "cannot be read back"));
	assert_null(strstr(net_journal ? net_journal : "", "filter"));
	assert_int_equal(n_wfp, 0);
	win_setup_plan_done(&p);
	/* Uninstall afterwards finds nothing to delete and says so cleanly. */
	H->lie = NULL;
	assert_int_equal(win_setup_uninstall(&host_api, &net_api, progress, NULL, why, sizeof(why)),
			 0);
	assert_null(H->journal);

	/* A read ACL that does not take (Wine's DACLs for arbitrary SIDs):
	 * reported, counted, not fatal; another that is refused: the same. */
	assert_int_equal(plan_now(&p), 0);
	assert_int_equal(win_setup_apply(&host_api, &net_api, &p, progress, NULL, why, sizeof(why)),
			 0);
	H->lie = "dacl_set";
	assert_int_equal(win_setup_read_acls(&host_api, &p, progress, NULL), 2);
	assert_non_null(strstr(progress_lines[strv_length(progress_lines) - 1],
			       "failed (best effort, not fatal): the allow ACE"));
	H->lie = NULL;
	H->fail = "dacl_set";
	assert_int_equal(win_setup_read_acls(&host_api, &p, progress, NULL), 2);
	/* Uninstall cannot undo those ACLs: they stay journaled, -EBUSY. */
	assert_int_equal(win_setup_uninstall(&host_api, &net_api, progress, NULL, why, sizeof(why)),
			 -EBUSY);
	assert_non_null(H->journal);
	assert_non_null(strstr(H->journal, "acl\tC:\\Windows\t"));
	assert_null(strstr(H->journal, "user\t"));
	assert_null(user(WIN_SETUP_OFFLINE_USER));
	H->fail = NULL;
	assert_int_equal(win_setup_uninstall(&host_api, &net_api, progress, NULL, why, sizeof(why)),
			 0);
	assert_null(H->journal);
	win_setup_plan_done(&p);
}

static void test_setup_existing_user_is_never_deleted(void **state)
{
	WinSetupPlan p;
	char why[512] = "";
	FakeUser *u;

	(void)state;
	/* Someone made WardSandboxOnline before: setup resets its password
	 * (the record is missing) but does not journal it as created. */
	u = &H->users[H->n_users++];
	snprintf(u->name, sizeof(u->name), "%s", WIN_SETUP_ONLINE_USER);
	snprintf(u->sid, sizeof(u->sid), "S-1-5-21-7-8-9-1500");
	assert_int_equal(plan_now(&p), 0);
	assert_int_equal(win_setup_apply(&host_api, &net_api, &p, progress, NULL, why, sizeof(why)),
			 0);
	assert_null(strstr(H->journal, "user\tWardSandboxOnline\n"));
	assert_int_equal(win_setup_uninstall(&host_api, &net_api, progress, NULL, why, sizeof(why)),
			 0);
	assert_non_null(user(WIN_SETUP_ONLINE_USER));
	assert_null(user(WIN_SETUP_OFFLINE_USER));
	win_setup_plan_done(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_setup_plan_fresh_and_converged),
		cmocka_unit_test(test_setup_walls_plans),
		cmocka_unit_test(test_setup_password_and_sid),
		cmocka_unit_test(test_setup_credential_record),
		cmocka_unit_test(test_setup_cred_dacl_check),
		cmocka_unit_test(test_setup_journal_parse),
		cmocka_unit_test_setup_teardown(test_setup_apply_reads_back, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(test_setup_fail_closed, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(test_setup_firewall_fail_closed, host_setup,
						host_teardown),
		cmocka_unit_test_setup_teardown(test_setup_existing_user_is_never_deleted, host_setup,
						host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
