/* The sandbox-user tier's portable part (win-user.h): what ward-setup.exe
 * left is read back and checked before a run, every step refusing with
 * its name (no setup, a bad SID file, a record with a wider DACL, one
 * that does not decrypt or parse, a missing user); and the run's ACL plan
 * (the recorded synthetic SID and the user's twin ACEs, deny-all for the
 * user on fs.deny). Runs natively and, cross-compiled, under Wine. */
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
#include "policy/policy.h"
#include "windows/win-acl.h"
#include "windows/win-env.h"
#include "windows/win-user.h"
#include "win-test-host.h"

#define STATE "C:\\Users\\me\\AppData\\Local\\ward"
#define SELF "S-1-5-21-7-8-9-1000"
#define SYN "S-1-15-3-1024-11-22-33-44"
#define OFFLINE_SID "S-1-5-21-7-8-9-1005"
#define ONLINE_SID "S-1-5-21-7-8-9-1006"
#define PW0 "Ab3!aaaaaaaaaaaaaaaaaaaa"
#define PW1 "Cd4#bbbbbbbbbbbbbbbbbbbb"

/* The fake host: two files, a DACL, DPAPI as XOR, one user. */
static struct {
	const char *sid_file;     /* NULL: absent */
	const char *cred_text;    /* the record before "DPAPI"; NULL: absent */
	const char *cred_sddl;
	bool dpapi_fails;
	bool user_missing;
	const char *user_sid;
} H;

static int h_self(void *c, char ret[WIN_SID_STRING_MAX])
{
	(void)c;
	snprintf(ret, WIN_SID_STRING_MAX, "%s", SELF);
	return 0;
}

static int h_file_read(void *c, const char *path, void **ret, size_t *nr)
{
	const char *text = NULL;
	char *b;
	size_t n;

	(void)c;
	if (strstr(path, "\\sandbox-sid"))
		text = H.sid_file;
	else if (strstr(path, "\\sandbox-users.dpapi"))
		text = H.cred_text;
	if (!text)
		return -ENOENT;
	n = strlen(text);
	b = malloc(n + 1);
	assert_non_null(b);
	memcpy(b, text, n + 1);
	if (strstr(path, ".dpapi"))
		for (size_t i = 0; i < n; i++)
			b[i] ^= 0x5a;
	*ret = b;
	*nr = n;
	return 0;
}

static int h_unprotect(void *c, const void *in, size_t n, void **ret, size_t *nr)
{
	char *b;

	(void)c;
	if (H.dpapi_fails)
		return -EIO;
	b = malloc(n ? n : 1);
	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		b[i] = ((const char *)in)[i] ^ 0x5a;
	*ret = b;
	*nr = n;
	return 0;
}

static int h_dacl_get(void *c, const char *path, char **ret)
{
	(void)c;
	if (!strstr(path, "\\sandbox-users.dpapi") || !H.cred_text)
		return -ENOENT;
	*ret = strdup(H.cred_sddl);
	return *ret ? 0 : -ENOMEM;
}

static int h_user_get(void *c, const char *name, char ret[WIN_SID_STRING_MAX])
{
	(void)c;
	if (H.user_missing || strcmp(name, WIN_SETUP_OFFLINE_USER) != 0)
		return -ENOENT;
	snprintf(ret, WIN_SID_STRING_MAX, "%s", H.user_sid);
	return 0;
}

static const WinSetupApi api = {
	.self_sid = h_self,
	.file_read = h_file_read,
	.dpapi_unprotect = h_unprotect,
	.dacl_get = h_dacl_get,
	.user_get = h_user_get,
};

static int setup(void **state)
{
	(void)state;
	H.sid_file = SYN "\n";
	H.cred_text = "ward-sandbox-credentials 1\n" WIN_SETUP_OFFLINE_USER "\t" PW0
		      "\n" WIN_SETUP_ONLINE_USER "\t" PW1 "\n";
	H.cred_sddl = "D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;" SELF ")";
	H.dpapi_fails = false;
	H.user_missing = false;
	H.user_sid = OFFLINE_SID;
	return 0;
}

static void refused(const char *step, const char *needle)
{
	WinSandboxUser u;
	const char *got = NULL;
	char why[512] = "";

	memset(&u, 0, sizeof(u));
	assert_int_equal(win_user_load(&api, STATE, 0, &u, &got, why, sizeof(why)), -EPERM);
	print_message("# %s: %s\n", got, why);
	assert_string_equal(got, step);
	assert_non_null(strstr(why, needle));
	assert_string_equal(u.password, "");
}

static void test_user_load(void **state)
{
	WinSandboxUser u;
	const char *step = NULL;
	char why[512] = "";

	(void)state;
	assert_int_equal(win_user_load(&api, STATE, 0, &u, &step, why, sizeof(why)), 0);
	assert_string_equal(u.name, WIN_SETUP_OFFLINE_USER);
	assert_string_equal(u.sid, OFFLINE_SID);
	assert_string_equal(u.synthetic_sid, SYN);
	assert_string_equal(u.password, PW0);
	win_user_wipe(&u);
	assert_string_equal(u.password, "");
	/* The online user is not there in this fake: refused. */
	assert_int_equal(win_user_load(&api, STATE, 1, &u, &step, why, sizeof(why)), -EPERM);
	assert_string_equal(step, "user");
}

static void test_user_load_fail_closed(void **state)
{
	(void)state;
	/* Setup never ran. */
	H.sid_file = NULL;
	refused("setup", "ward-setup.exe");
	setup(NULL);
	H.cred_text = NULL;
	refused("setup", "ward-setup.exe");
	/* A SID file that is not exactly one synthetic SID. */
	setup(NULL);
	H.sid_file = SYN;
	refused("setup", "synthetic SID");
	H.sid_file = "S-1-5-32-545\n";
	refused("setup", "synthetic SID");
	H.sid_file = SYN "\nS-1-1-0\n";
	refused("setup", "synthetic SID");
	H.sid_file = "s-1-15-3-1024-11-22-33-44\n";
	refused("setup", "synthetic SID");
	/* A record others may read (a sandbox user, Users), or that inherits. */
	setup(NULL);
	H.cred_sddl = "D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;" SELF ")(A;;FR;;;" OFFLINE_SID ")";
	refused("credentials", OFFLINE_SID);
	H.cred_sddl = "D:(A;;FA;;;SY)(A;;FA;;;" SELF ")";
	refused("credentials", "inherits");
	/* Does not decrypt; decrypts to something else. */
	setup(NULL);
	H.dpapi_fails = true;
	refused("credentials", "decrypt");
	setup(NULL);
	H.cred_text = "ward-sandbox-credentials 1\n" WIN_SETUP_OFFLINE_USER "\t" PW0 "\n";
	refused("credentials", "parse");
	/* The user is gone, or is not a local account. */
	setup(NULL);
	H.user_missing = true;
	refused("user", WIN_SETUP_OFFLINE_USER);
	setup(NULL);
	H.user_sid = "S-1-5-32-545";
	refused("user", "not a local user");
}

static const WinAce *ace_for(const WinPathPlan *pp, const char *sid)
{
	for (size_t i = 0; i < pp->n_add; i++)
		if (strcmp(pp->add[i].sid, sid) == 0)
			return &pp->add[i];
	return NULL;
}

static void test_user_plan(void **state)
{
	WardPolicy *p = policy_new_empty();
	char *envp[] = { "SystemRoot=C:\\Windows", NULL };
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	WinPlanInput in = {
		.policy = p, .tier = WIN_TIER_W1_WRITE, .workspace = "C:\\ws",
		.config_dir = "C:\\Users\\me\\AppData\\Roaming\\ward", .state_dir = STATE,
		.run_id = "0123456789abcdef", .argv = argv, .envp = envp, .host = &fake_host,
	};
	WinSandboxUser u = { .name = WIN_SETUP_OFFLINE_USER, .sid = OFFLINE_SID,
			     .synthetic_sid = SYN };
	WinPlan *plan = NULL;
	char why[512] = "", *per_run;
	bool ws = false, deny = false;

	(void)state;
	assert_non_null(p);
	assert_int_equal(strv_extend(&p->fs_protected, ".git"), 0);
	assert_int_equal(strv_extend(&p->fs_deny, "C:\\ws\\secrets"), 0);
	assert_int_equal(win_plan_build(&in, &plan, why, sizeof(why)), 0);
	per_run = strdup(plan->token.restricting_sids[2]);
	assert_non_null(per_run);
	assert_int_equal(win_user_plan(plan, &u), 0);
	assert_string_equal(plan->token.restricting_sids[2], SYN);
	assert_int_equal(strv_length(plan->our_sids), 2);
	assert_string_equal(plan->our_sids[0], SYN);
	assert_string_equal(plan->our_sids[1], OFFLINE_SID);
	for (size_t i = 0; i < plan->n_paths; i++) {
		const WinPathPlan *pp = &plan->paths[i];
		const WinAce *s = ace_for(pp, SYN), *o = ace_for(pp, OFFLINE_SID);

		/* The per-run SID is gone everywhere; each synthetic ACE has a twin. */
		assert_null(ace_for(pp, per_run));
		assert_true(!s == !o);
		if (!s)
			continue;
		assert_int_equal(s->type, o->type);
		if (strcmp(pp->path, "C:\\ws") == 0) {
			ws = true;
			assert_int_equal(s->type, WIN_ACE_ALLOW);
			assert_int_equal(o->mask, s->mask);
		}
		if (strcmp(pp->path, "C:\\ws\\secrets") == 0) {
			deny = true;
			/* Reads are checked against the user: deny them too. */
			assert_int_equal(s->mask, WIN_FILE_DENY_WRITE);
			assert_int_equal(o->mask, WIN_FILE_ALL);
		}
	}
	assert_true(ws);
	assert_true(deny);
	/* W1-write's "network: not confined" is not this tier's. */
	STRV_FOREACH(d, plan->degraded)
		assert_true(strncmp(*d, "network:", 8) != 0);
	assert_true(strv_length(plan->degraded) >= 1);
	free(per_run);
	win_plan_free(plan);

	/* Only a W1-write plan is rewritten. */
	in.tier = WIN_TIER_W2;
	assert_int_equal(win_plan_build(&in, &plan, why, sizeof(why)), 0);
	assert_int_equal(win_user_plan(plan, &u), -EINVAL);
	win_plan_free(plan);
	policy_free(p);
}

/* The online user (network.mode proxy): the same plan made the user's,
 * and the proxy's variables set over whatever the host and the policy
 * said (one of each name, sorted, NO_PROXY emptied). */
static void test_user_online_plan(void **state)
{
	WardPolicy *p = policy_new_empty();
	char *envp[] = { "SystemRoot=C:\\Windows", "http_proxy=http://evil.example:1",
			 "NO_PROXY=*", NULL };
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	WinPlanInput in = {
		.policy = p, .tier = WIN_TIER_W1_WRITE, .workspace = "C:\\ws",
		.config_dir = "C:\\Users\\me\\AppData\\Roaming\\ward", .state_dir = STATE,
		.run_id = "0123456789abcdef", .argv = argv, .envp = envp, .host = &fake_host,
	};
	WinSandboxUser u = { .user = 1, .name = WIN_SETUP_ONLINE_USER, .sid = ONLINE_SID,
			     .synthetic_sid = SYN };
	WinPlan *plan = NULL;
	char why[512] = "";
	size_t n_http = 0;

	(void)state;
	assert_non_null(p);
	p->net_mode = NET_MODE_PROXY;
	assert_int_equal(strv_extend(&p->env_pass, "http_proxy"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "NO_PROXY"), 0);
	assert_int_equal(strv_extend(&p->env_set, "ALL_PROXY=socks5h://elsewhere:9"), 0);
	assert_int_equal(win_plan_build(&in, &plan, why, sizeof(why)), 0);
	/* A plain W1-write plan has no proxy: the variables are the host's. */
	assert_string_equal(win_env_get(plan->env, "HTTP_PROXY"), "http://evil.example:1");
	assert_int_equal(win_user_plan(plan, &u), 0);
	assert_int_equal(win_plan_proxy_env(plan, 0), -EINVAL);
	assert_int_equal(win_plan_proxy_env(plan, WIN_SETUP_ONLINE_PROXY_PORT), 0);
	assert_string_equal(win_env_get(plan->env, "HTTP_PROXY"), "http://127.0.0.1:47329");
	assert_string_equal(win_env_get(plan->env, "HTTPS_PROXY"), "http://127.0.0.1:47329");
	assert_string_equal(win_env_get(plan->env, "ALL_PROXY"), "socks5h://127.0.0.1:47329");
	assert_string_equal(win_env_get(plan->env, "NO_PROXY"), "");
	for (size_t i = 0; plan->env[i]; i++) {
		n_http += strncasecmp(plan->env[i], "HTTP_PROXY=", 11) == 0;
		if (plan->env[i + 1])
			assert_true(strcmp(plan->env[i], plan->env[i + 1]) < 0);
	}
	assert_int_equal(n_http, 1);
	assert_string_equal(plan->our_sids[1], ONLINE_SID);
	STRV_FOREACH(d, plan->degraded)
		assert_true(strncmp(*d, "network:", 8) != 0);
	win_plan_free(plan);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_user_load, setup, NULL),
		cmocka_unit_test_setup_teardown(test_user_load_fail_closed, setup, NULL),
		cmocka_unit_test(test_user_plan),
		cmocka_unit_test(test_user_online_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
