/* Windows plan layer: policy -> plan per tier (ACEs, labels, placeholders,
 * helper paths, token, job, program lookup, environment), the token
 * read-back check, and the undo journal's format. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "common/strv.h"
#include "policy/policy.h"
#include "windows/win-defaults.h"
#include "windows/win-journal.h"
#include "windows/win-env.h"
#include "windows/win-plan.h"
#include "windows/win-token.h"
#include "win-test-host.h"

#define RUN_ID "0123456789abcdef"

static WardPolicy *policy(void)
{
	WardPolicy *p = policy_new_empty();

	assert_non_null(p);
	assert_int_equal(strv_extend(&p->env_pass, "PATH"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "PATHEXT"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "SYSTEMROOT"), 0);
	assert_int_equal(strv_extend(&p->env_strip, "*_TOKEN"), 0);
	assert_int_equal(strv_extend(&p->fs_protected, ".git"), 0);
	assert_int_equal(strv_extend(&p->fs_protected, ".harness"), 0);
	return p;
}

static char *envp[] = { "Path=C:\\Windows\\System32;relative\\bin;C:\\Program Files\\Git\\cmd",
			"PATHEXT=.COM;.EXE;.BAT;.CMD", "SystemRoot=C:\\Windows", "GH_TOKEN=x",
			NULL };

static int build(const WardPolicy *p, WinTier tier, char **argv, WinPlan **ret, char *why,
		 size_t n)
{
	WinPlanInput in = {
		.policy = p, .tier = tier, .workspace = "C:\\ws",
		.config_dir = "C:\\Users\\me\\AppData\\Roaming\\ward",
		.state_dir = "C:\\Users\\me\\AppData\\Local\\ward", .run_id = RUN_ID,
		.argv = argv, .envp = envp, .host = &fake_host,
	};

	return win_plan_build(&in, ret, why, n);
}

/* The plan's text as TAP diagnostics. */
static void show(const char *d)
{
	for (const char *p = d; *p;) {
		size_t n = strcspn(p, "\n");

		print_message("# %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static const WinPathPlan *find(const WinPlan *plan, const char *path)
{
	for (size_t i = 0; i < plan->n_paths; i++)
		if (strcmp(plan->paths[i].path, path) == 0)
			return &plan->paths[i];
	return NULL;
}

static void test_win_plan_w2_appcontainer(void **state)
{
	WardPolicy *p = policy();
	char *argv[] = { "tool.exe", "a b", NULL };
	WinPlan *plan = NULL;
	char why[512] = "", *d;
	const WinPathPlan *pp;

	assert_int_equal(strv_extend(&p->fs_read, "C:\\Users\\me\\.gitconfig"), 0);
	assert_int_equal(strv_extend(&p->fs_read_write, "c:/users/me/cache/"), 0);
	assert_int_equal(strv_extend(&p->fs_read_exec, "C:\\Users\\me\\missing"), 0);
	assert_int_equal(strv_extend(&p->fs_deny, "C:\\ws\\secrets"), 0);
	assert_int_equal(build(p, WIN_TIER_W2, argv, &plan, why, sizeof(why)), -ENOENT);
	/* tool.exe is in the workspace, which is not on PATH: not found. */
	argv[0] = "C:\\ws\\tool.exe";
	assert_int_equal(build(p, WIN_TIER_W2, argv, &plan, why, sizeof(why)), 0);
	d = win_plan_describe(plan);
	show(d);
	assert_true(plan->token.appcontainer);
	assert_string_equal(plan->token.package_name, "ward.run." RUN_ID);
	assert_null(plan->token.capabilities); /* network none: no internetClient */
	assert_true(has_line(d, "grant C:\\ws modify (workspace)"));
	assert_true(has_line(d, "grant C:\\Users\\me\\.gitconfig read (fs.read)"));
	assert_true(has_line(d, "grant C:\\users\\me\\cache modify (fs.read_write)"));
	assert_null(strstr(d, "missing")); /* nothing to grant on a missing path */
	assert_true(has_line(d, "deny C:\\ws\\.git write (protected .git)"));
	/* .harness does not exist: nothing to hold an ACE; whatever the run
	 * creates there is moved out after it. */
	assert_true(has_line(d, "quarantine-if-created C:\\ws\\.harness (protected .harness)"));
	assert_null(strstr(d, "mkdir C:\\ws\\.harness"));
	assert_null(strstr(d, "deny C:\\ws\\.harness"));
	assert_true(has_line(d, "deny C:\\ws\\secrets all (fs.deny)"));
	assert_true(has_line(d, "deny C:\\Users\\me\\AppData\\Roaming\\ward all (ward config)"));
	assert_true(has_line(d, "mkdir C:\\Users\\me\\AppData\\Local\\ward"));
	assert_true(has_line(d, "deny C:\\Users\\me\\AppData\\Local\\ward all (ward state)"));
	assert_true(has_line(d, "grant C:\\Users\\me\\AppData\\Local\\ward\\tmp\\run-" RUN_ID
				" modify (temp)"));
	assert_true(has_line(d, "integrity 4096"));
	assert_true(has_line(d, "env TEMP"));
	assert_null(strstr(d, "GH_TOKEN"));
	assert_null(plan->degraded);
	assert_null(plan->needs_helper);
	/* Every ACE names the package SID, inheritable. */
	pp = find(plan, "C:\\ws");
	assert_non_null(pp);
	assert_int_equal(pp->n_add, 1);
	assert_string_equal(pp->add[0].sid, plan->token.package_sid);
	assert_int_equal(pp->add[0].flags, WIN_ACE_OI | WIN_ACE_CI);
	assert_int_equal(strv_length(plan->our_sids), 1);
	assert_string_equal(plan->application, "C:\\ws\\tool.exe");
	assert_string_equal(plan->cmdline, "\"C:\\ws\\tool.exe\" \"a b\"");
	assert_true(plan->job.kill_on_close);
	assert_true(plan->job.no_breakaway);
	assert_int_equal(plan->job.ui_limits, 0xFF);
	free(d);
	win_plan_free(plan);
	policy_free(p);
}

static void test_win_plan_w2_refuses_proxy_and_unknown(void **state)
{
	WardPolicy *p = policy();
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	WinPlan *plan = NULL;
	char why[512] = "";

	p->net_mode = NET_MODE_PROXY;
	assert_int_equal(build(p, WIN_TIER_W2, argv, &plan, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "network.mode proxy"));
	assert_null(plan);
	p->net_mode = NET_MODE_NONE;
	assert_int_equal(strv_extend(&p->fs_cache, "C:\\Users\\me\\cache"), 0);
	assert_int_equal(build(p, WIN_TIER_W2, argv, &plan, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "fs.cache"));
	policy_free(p);
}

static int build_proxy(const WardPolicy *p, WinTier tier, char **argv, char **env, uint16_t port,
		       WinPlan **ret, char *why, size_t n)
{
	WinPlanInput in = {
		.policy = p, .tier = tier, .workspace = "C:\\ws",
		.config_dir = "C:\\Users\\me\\AppData\\Roaming\\ward",
		.state_dir = "C:\\Users\\me\\AppData\\Local\\ward", .run_id = RUN_ID,
		.argv = argv, .envp = env, .host = &fake_host, .proxy_port = port,
	};

	return win_plan_build(&in, ret, why, n);
}

static bool env_has(const WinPlan *plan, const char *kv)
{
	STRV_FOREACH(e, plan->env)
		if (strcmp(*e, kv) == 0)
			return true;
	return false;
}

/* network.mode proxy on W2 (ward.exe's proxy on @port): the proxy class,
 * the loopback exemption, no capability, the variables pointing at the
 * proxy whatever the host's said; a network.commands program outside the
 * writable roots gets internetClient, one planted in the workspace does
 * not; W1 gets neither class nor variables. */
static void test_win_plan_w2_proxy(void **state)
{
	WardPolicy *p = policy();
	char *tool[] = { "C:\\ws\\tool.exe", NULL }, *git[] = { "git", NULL },
	     *planted[] = { "C:\\ws\\git.exe", NULL };
	char *env[] = { "Path=C:\\Windows\\System32;C:\\Program Files\\Git\\cmd",
			"PATHEXT=.COM;.EXE;.BAT;.CMD", "HTTP_PROXY=http://evil.example:1",
			"NO_PROXY=*", NULL };
	WinPlan *plan = NULL;
	char why[512] = "", *text;

	p->net_mode = NET_MODE_PROXY;
	assert_int_equal(strv_extend(&p->env_pass, "HTTP_PROXY"), 0);
	assert_int_equal(strv_extend(&p->env_pass, "NO_PROXY"), 0);
	p->net_commands = calloc(1, sizeof(*p->net_commands));
	assert_non_null(p->net_commands);
	p->net_commands[0].name = strdup("git");
	p->n_net_commands = 1;

	/* No port: refused, never widened. */
	assert_int_equal(build_proxy(p, WIN_TIER_W2, tool, env, 0, &plan, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "network.mode proxy"));
	assert_null(plan);

	assert_int_equal(build_proxy(p, WIN_TIER_W2, tool, env, 50123, &plan, why, sizeof(why)), 0);
	assert_int_equal(plan->net.cls, WIN_NET_PROXY);
	assert_true(plan->net.loopback_exempt);
	assert_int_equal(plan->net.proxy_port, 50123);
	assert_null(plan->token.capabilities);
	assert_true(env_has(plan, "HTTP_PROXY=http://127.0.0.1:50123"));
	assert_true(env_has(plan, "HTTPS_PROXY=http://127.0.0.1:50123"));
	assert_true(env_has(plan, "ALL_PROXY=socks5h://127.0.0.1:50123"));
	assert_true(env_has(plan, "NO_PROXY="));
	assert_false(env_has(plan, "HTTP_PROXY=http://evil.example:1"));
	assert_false(env_has(plan, "NO_PROXY=*"));
	text = win_plan_describe(plan);
	show(text);
	assert_true(has_line(text, "network-class proxy proxy 127.0.0.1:50123 loopback-exempt"));
	free(text);
	plan = win_plan_free(plan);

	/* git from Program Files: the command class, internetClient. */
	assert_int_equal(build_proxy(p, WIN_TIER_W2, git, env, 50123, &plan, why, sizeof(why)), 0);
	assert_int_equal(plan->net.cls, WIN_NET_COMMAND);
	assert_string_equal(plan->net.command, "git");
	assert_int_equal(strv_length(plan->token.capabilities), 1);
	assert_string_equal(plan->token.capabilities[0], "internetClient");
	assert_string_equal(plan->token.capability_sids[0], "S-1-15-3-1");
	plan = win_plan_free(plan);

	/* git.exe in the workspace: the command could have planted it. */
	assert_int_equal(build_proxy(p, WIN_TIER_W2, planted, env, 50123, &plan, why, sizeof(why)), 0);
	assert_int_equal(plan->net.cls, WIN_NET_PROXY);
	assert_null(plan->token.capabilities);
	assert_non_null(strstr(plan->net.note, "writable"));
	plan = win_plan_free(plan);

	/* W1: the network is open and said so; no proxy class, no variables. */
	assert_int_equal(build_proxy(p, WIN_TIER_W1, tool, env, 50123, &plan, why, sizeof(why)), 0);
	assert_int_equal(plan->net.cls, WIN_NET_NONE);
	assert_false(env_has(plan, "HTTP_PROXY=http://127.0.0.1:50123"));
	plan = win_plan_free(plan);
	policy_free(p);
}

static void test_win_plan_refuses_bad_paths(void **state)
{
	static const char *const bad[] = {
		"relative\\x", "C:\\ws\\PROGRA~1", "C:\\ws\\x:stream", "\\\\.\\C:\\x", "C:\\ws\\nul",
	};
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	char why[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		WardPolicy *p = policy();
		WinPlan *plan = NULL;

		assert_int_equal(strv_extend(&p->fs_read, bad[i]), 0);
		assert_int_equal(build(p, WIN_TIER_W2, argv, &plan, why, sizeof(why)), -EINVAL);
		print_message("# %s\n", why);
		assert_non_null(strstr(why, "fs.read"));
		policy_free(p);
	}
	{
		WardPolicy *p = policy();
		WinPlan *plan = NULL;

		assert_int_equal(strv_extend(&p->fs_protected, "..\\outside"), 0);
		assert_int_equal(build(p, WIN_TIER_W2, argv, &plan, why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, "fs.protected"));
		policy_free(p);
	}
}

static void test_win_plan_system_paths_need_helper(void **state)
{
	WardPolicy *p = policy();
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	WinPlan *plan = NULL;
	char why[512], *d;

	assert_int_equal(strv_extend(&p->fs_read_exec, "C:\\Program Files\\tools"), 0);
	assert_int_equal(build(p, WIN_TIER_W2, argv, &plan, why, sizeof(why)), 0);
	assert_int_equal(strv_length(plan->needs_helper), 1);
	assert_string_equal(plan->needs_helper[0], "C:\\Program Files\\tools");
	d = win_plan_describe(plan);
	assert_true(has_line(d, "grant C:\\Program Files\\tools read+execute (fs.read_exec) "
				"needs-helper"));
	free(d);
	win_plan_free(plan);
	policy_free(p);
}

static void test_win_plan_w1_labels(void **state)
{
	WardPolicy *p = policy();
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	WinPlan *plan = NULL;
	char why[512], *d;

	assert_int_equal(strv_extend(&p->fs_read, "C:\\Users\\me\\.gitconfig"), 0);
	assert_int_equal(build(p, WIN_TIER_W1, argv, &plan, why, sizeof(why)), 0);
	d = win_plan_describe(plan);
	show(d);
	assert_true(plan->token.restricted);
	assert_false(plan->token.write_restricted);
	assert_true(plan->token.disable_max_privilege);
	assert_int_equal(plan->token.integrity_rid, 4096);
	assert_null(plan->our_sids);
	assert_true(has_line(d, "label C:\\ws low (workspace)"));
	assert_true(has_line(d, "label C:\\ws\\.git medium (protected .git)"));
	/* Reads are not confined on W1: nothing to grant for fs.read. */
	assert_null(strstr(d, ".gitconfig"));
	assert_null(strstr(d, "grant "));
	/* The table's W1 row, said per run. */
	assert_int_equal(strv_length(plan->degraded), 2);
	assert_non_null(strstr(plan->degraded[0], "fs reads"));
	assert_non_null(strstr(plan->degraded[1], "network"));
	free(d);
	win_plan_free(plan);
	policy_free(p);
}

static void test_win_plan_w1_write_sid(void **state)
{
	WardPolicy *p = policy();
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	WinPlan *plan = NULL;
	char why[512], *d;
	const WinPathPlan *pp;

	assert_int_equal(strv_extend(&p->fs_read_write, "C:\\Users\\me\\cache"), 0);
	assert_int_equal(build(p, WIN_TIER_W1_WRITE, argv, &plan, why, sizeof(why)), 0);
	d = win_plan_describe(plan);
	show(d);
	assert_true(plan->token.write_restricted);
	assert_int_equal(strv_length(plan->token.restricting_sids), 3);
	assert_string_equal(plan->token.restricting_sids[0], "S-1-1-0");
	assert_string_equal(plan->token.restricting_sids[1], "LOGON");
	assert_string_equal(plan->our_sids[0], plan->token.restricting_sids[2]);
	assert_int_equal(plan->token.integrity_rid, 8192);
	assert_true(has_line(d, "grant C:\\ws modify (workspace)"));
	assert_true(has_line(d, "grant C:\\Users\\me\\cache modify (fs.read_write)"));
	assert_true(has_line(d, "deny C:\\ws\\.git write (protected .git)"));
	/* W1-write cannot hide ward's config from reads: deny-write only. */
	assert_true(has_line(d, "deny C:\\Users\\me\\AppData\\Roaming\\ward write (ward config)"));
	pp = find(plan, "C:\\ws\\.git");
	assert_string_equal(pp->add[0].sid, plan->token.restricting_sids[2]);
	assert_int_equal(pp->add[0].mask, WIN_FILE_DENY_WRITE);
	free(d);
	win_plan_free(plan);
	policy_free(p);
}

static void test_win_plan_program_lookup(void **state)
{
	WardPolicy *p = policy();
	WinPlan *plan = NULL;
	char why[512];
	char *git[] = { "git", "status", NULL };
	char *where[] = { "where.exe", NULL };
	char *bat[] = { "run.bat", "x y", NULL };
	char *bat_bad[] = { "run.bat", "%USERPROFILE%", NULL };
	char *ps1[] = { "script.ps1", NULL };
	char *none[] = { "nope", NULL };

	/* PATHEXT order: git.exe before git.cmd; the workspace's git.exe is
	 * not on PATH and the current directory is not searched. */
	assert_int_equal(build(p, WIN_TIER_W2, git, &plan, why, sizeof(why)), 0);
	assert_string_equal(plan->application, "C:\\Program Files\\Git\\cmd\\git.EXE");
	assert_string_equal(plan->cmdline, "\"C:\\Program Files\\Git\\cmd\\git.EXE\" status");
	plan = win_plan_free(plan);
	assert_int_equal(build(p, WIN_TIER_W2, where, &plan, why, sizeof(why)), 0);
	assert_string_equal(plan->application, "C:\\Windows\\System32\\where.exe");
	plan = win_plan_free(plan);
	/* A batch file runs through cmd.exe, arguments quoted... */
	bat[0] = "C:\\ws\\run.bat";
	assert_int_equal(build(p, WIN_TIER_W2, bat, &plan, why, sizeof(why)), 0);
	assert_string_equal(plan->application, "C:\\Windows\\System32\\cmd.exe");
	assert_string_equal(plan->cmdline, "\"C:\\Windows\\System32\\cmd.exe\" /d /e:on /v:off /s "
					   "/c \"\"C:\\ws\\run.bat\" \"x y\"\"");
	plan = win_plan_free(plan);
	/* ...or refused when cmd.exe would expand one. */
	bat_bad[0] = "C:\\ws\\run.bat";
	assert_int_equal(build(p, WIN_TIER_W2, bat_bad, &plan, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "'%'"));
	ps1[0] = "C:\\ws\\script.ps1";
	assert_int_equal(build(p, WIN_TIER_W2, ps1, &plan, why, sizeof(why)), -EINVAL);
	assert_int_equal(build(p, WIN_TIER_W2, none, &plan, why, sizeof(why)), -ENOENT);
	/* A relative path with a separator is relative to the workspace. */
	none[0] = ".\\tool.exe";
	assert_int_equal(build(p, WIN_TIER_W2, none, &plan, why, sizeof(why)), 0);
	assert_string_equal(plan->application, "C:\\ws\\tool.exe");
	plan = win_plan_free(plan);
	policy_free(p);
}

static void test_win_plan_w0_and_limits(void **state)
{
	WardPolicy *p = policy();
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	WinPlan *plan = NULL;
	char why[512], *d;

	p->pids = 64;
	p->memory_mb = 512;
	p->tmp_mb = 10;
	assert_int_equal(build(p, WIN_TIER_W0, argv, &plan, why, sizeof(why)), 0);
	d = win_plan_describe(plan);
	assert_null(strstr(d, "grant "));
	assert_null(strstr(d, "deny "));
	assert_null(strstr(d, "label "));
	assert_true(has_line(d, "mkdir C:\\Users\\me\\AppData\\Local\\ward\\tmp\\run-" RUN_ID));
	assert_int_equal(plan->job.active_processes, 64);
	assert_true(plan->job.job_memory == 512ull * 1024 * 1024);
	assert_true(plan->job.kill_on_close);
	assert_int_equal(plan->job.ui_limits, 0);
	assert_int_equal(strv_length(plan->degraded), 3);
	free(d);
	win_plan_free(plan);
	policy_free(p);
}

static void test_win_plan_workspace_checks(void **state)
{
	WardPolicy *p = policy();
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	WinPlan *plan = NULL;
	char why[512];
	WinPlanInput in = {
		.policy = p, .tier = WIN_TIER_W2, .workspace = "C:\\", .state_dir = "C:\\st",
		.run_id = RUN_ID, .argv = argv, .envp = envp, .host = &fake_host,
	};

	assert_int_equal(win_plan_build(&in, &plan, why, sizeof(why)), -EINVAL);
	in.workspace = "C:\\nonexistent";
	assert_int_equal(win_plan_build(&in, &plan, why, sizeof(why)), -EINVAL);
	in.workspace = "C:\\ws";
	in.run_id = "../x";
	assert_int_equal(win_plan_build(&in, &plan, why, sizeof(why)), -EINVAL);
	in.run_id = RUN_ID;
	in.state_dir = "C:\\";
	assert_int_equal(win_plan_build(&in, &plan, why, sizeof(why)), -EINVAL);
	assert_null(plan);
	policy_free(p);
}

/* --cow on every tier: the workspace is never writable to the sandbox
 * identity (the ACL is the boundary, the redirector DLL only convenience),
 * the session's upper and whiteout dirs are, the DLL is readable, the
 * readiness pipe is per run; W0, which has no ACLs, says so (degraded). */
static void test_win_plan_cow(void **state)
{
	static const WinTier tiers[] = { WIN_TIER_W2, WIN_TIER_W1_WRITE, WIN_TIER_W1, WIN_TIER_W0 };
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	char why[512];

	for (size_t i = 0; i < 4; i++) {
		WardPolicy *p = policy();
		WinPlan *plan = NULL;
		const WinPathPlan *ws, *up;
		WinPlanInput in = {
			.policy = p, .tier = tiers[i], .workspace = "C:\\ws",
			.state_dir = "C:\\Users\\me\\AppData\\Local\\ward", .run_id = RUN_ID,
			.argv = argv, .envp = envp, .host = &fake_host,
			.cow_session = "C:\\Users\\me\\AppData\\Local\\ward\\sessions\\0000000000000001",
			.cow_dll = "C:\\Program Files\\ward\\ward-redirect.dll",
		};
		char *d;

		assert_int_equal(win_plan_build(&in, &plan, why, sizeof(why)), 0);
		d = win_plan_describe(plan);
		show(d);
		ws = find(plan, "C:\\ws");
		up = find(plan, "C:\\Users\\me\\AppData\\Local\\ward\\sessions\\0000000000000001\\upper");
		assert_string_equal(plan->cow.pipe, "\\\\.\\pipe\\ward-cow-" RUN_ID);
		assert_non_null(strstr(d, "cow inject C:\\Program Files\\ward\\ward-redirect.dll ready"));
		/* Never a write grant or a low label on the workspace. */
		if (ws) {
			for (size_t k = 0; k < ws->n_add; k++)
				assert_int_not_equal(ws->add[k].mask, WIN_FILE_MODIFY);
			assert_int_not_equal(ws->label_rid, 4096);
		}
		if (tiers[i] == WIN_TIER_W2) {
			assert_true(has_line(d, "grant C:\\ws read+execute (workspace (copy-on-write: "
						"read-only))"));
			/* Under Program Files: readable to every package already,
			 * no grant (which only the helper could make). */
			assert_null(strstr(d, "cow redirector"));
			assert_null(plan->needs_helper);
		}
		if (tiers[i] == WIN_TIER_W0) {
			assert_null(up);
			assert_non_null(strstr(plan->degraded[0], "copy-on-write: W0 leaves the "
								  "workspace writable"));
		} else {
			assert_non_null(up);
			assert_true(up->n_add ? up->add[0].mask == WIN_FILE_MODIFY
					      : up->label_rid == 4096);
		}
		free(d);
		win_plan_free(plan);
		policy_free(p);
	}
	/* The session may not overlap the workspace. */
	{
		WardPolicy *p = policy();
		WinPlan *plan = NULL;
		WinPlanInput in = {
			.policy = p, .tier = WIN_TIER_W2, .workspace = "C:\\ws",
			.state_dir = "C:\\st", .run_id = RUN_ID, .argv = argv, .envp = envp,
			.host = &fake_host, .cow_session = "C:\\ws\\session",
			.cow_dll = "C:\\ward\\ward-redirect.dll",
		};

		assert_int_equal(win_plan_build(&in, &plan, why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, "overlap"));
		policy_free(p);
	}
}

static void test_win_token_check(void **state)
{
	WinTokenPlan t = { 0 };
	char *ok_rs[] = { "S-1-1-0", "S-1-5-5-0-123", NULL };
	char why[256];
	WinTokenObserved o = { 0 };

	assert_int_equal(win_token_plan(WIN_TIER_W1_WRITE, RUN_ID, false, &t), 0);
	{
		char *rs[] = { t.restricting_sids[2], "S-1-5-5-0-123", "S-1-1-0", NULL };
		char *privs[] = { "SeChangeNotifyPrivilege", NULL };

		o = (WinTokenObserved){ .integrity_rid = 8192, .restricting_sids = rs,
					.write_restricted = true, .privileges = privs };
		assert_int_equal(win_token_check(&t, "S-1-5-5-0-123", &o, why, sizeof(why)), 0);
		/* Wine: "success", and the token is not restricted at all. */
		o.restricting_sids = NULL;
		assert_int_equal(win_token_check(&t, "S-1-5-5-0-123", &o, why, sizeof(why)), -EPERM);
		o.restricting_sids = ok_rs;
		assert_int_equal(win_token_check(&t, "S-1-5-5-0-123", &o, why, sizeof(why)), -EPERM);
		o.restricting_sids = rs;
		o.write_restricted = false;
		assert_int_equal(win_token_check(&t, "S-1-5-5-0-123", &o, why, sizeof(why)), -EPERM);
		o.write_restricted = true;
		o.integrity_rid = 12288; /* ward running elevated */
		assert_int_equal(win_token_check(&t, "S-1-5-5-0-123", &o, why, sizeof(why)), -EPERM);
		o.integrity_rid = 8192;
		privs[0] = "SeDebugPrivilege";
		assert_int_equal(win_token_check(&t, "S-1-5-5-0-123", &o, why, sizeof(why)), -EPERM);
		assert_non_null(strstr(why, "SeDebugPrivilege"));
		/* The logon SID must be the one the plan resolved. */
		privs[0] = "SeChangeNotifyPrivilege";
		assert_int_equal(win_token_check(&t, "S-1-5-5-0-999", &o, why, sizeof(why)), -EPERM);
	}
	win_token_plan_done(&t);

	assert_int_equal(win_token_plan(WIN_TIER_W2, RUN_ID, false, &t), 0);
	{
		char *caps[] = { "S-1-15-3-1", NULL };

		o = (WinTokenObserved){ .appcontainer = true, .package_sid = t.package_sid,
					.integrity_rid = 4096 };
		assert_int_equal(win_token_check(&t, NULL, &o, why, sizeof(why)), 0);
		o.capability_sids = caps; /* internetClient slipped in */
		assert_int_equal(win_token_check(&t, NULL, &o, why, sizeof(why)), -EPERM);
		o.capability_sids = NULL;
		o.package_sid = "S-1-15-2-1-2-3-4-5-6-7";
		assert_int_equal(win_token_check(&t, NULL, &o, why, sizeof(why)), -EPERM);
		o.package_sid = t.package_sid;
		o.appcontainer = false;
		assert_int_equal(win_token_check(&t, NULL, &o, why, sizeof(why)), -EPERM);
		o.appcontainer = true;
		o.integrity_rid = 8192;
		assert_int_equal(win_token_check(&t, NULL, &o, why, sizeof(why)), -EPERM);
	}
	win_token_plan_done(&t);
	assert_int_equal(win_token_plan(WIN_TIER_W2, RUN_ID, true, &t), 0);
	assert_string_equal(t.capability_sids[0], "S-1-15-3-1");
	win_token_plan_done(&t);
}

static void test_win_journal_format_parse(void **state)
{
	char *l1 = NULL, *l2 = NULL, *l3 = NULL, *l4 = NULL, *text = NULL;
	WinJournal j = { 0 };

	assert_int_equal(win_journal_line(WIN_JOURNAL_SIDS, "S-1-15-2-1 S-1-15-3-9", NULL, &l1), 0);
	assert_int_equal(win_journal_line(WIN_JOURNAL_MKDIR, "C:\\ws\\.git", NULL, &l2), 0);
	assert_int_equal(win_journal_line(WIN_JOURNAL_LABEL, "C:\\ws", NULL, &l3), 0);
	assert_int_equal(win_journal_line(WIN_JOURNAL_LABEL, "C:\\ws\\a", "S:(ML;;NW;;;ME)", &l4), 0);
	assert_string_equal(l3, "label\tC:\\ws\t-\n");
	assert_int_equal(asprintf(&text, "%s%s%s%s%sacl\tC:\\cut-sh", WIN_JOURNAL_HEADER, l1, l2, l3,
				  l4), (int)(strlen(WIN_JOURNAL_HEADER) + strlen(l1) + strlen(l2) +
					     strlen(l3) + strlen(l4) + strlen("acl\tC:\\cut-sh")));
	/* The truncated last line is ignored: its change never began. */
	assert_int_equal(win_journal_parse(text, &j), 0);
	assert_int_equal(j.n, 4);
	assert_int_equal(j.entries[0].kind, WIN_JOURNAL_SIDS);
	assert_int_equal(j.entries[1].kind, WIN_JOURNAL_MKDIR);
	assert_string_equal(j.entries[1].arg, "C:\\ws\\.git");
	assert_null(j.entries[2].arg2);
	assert_string_equal(j.entries[3].arg2, "S:(ML;;NW;;;ME)");
	win_journal_done(&j);
	free(text);

	assert_int_equal(win_journal_line(WIN_JOURNAL_ACL, "C:\\a\nb", NULL, &text), -EINVAL);
	assert_int_equal(win_journal_parse("garbage\n", &j), -EINVAL);
	assert_int_equal(win_journal_parse("ward-windows-journal 1\nbogus\tx\n", &j), -EINVAL);
	assert_int_equal(win_journal_parse("ward-windows-journal 1\nacl\n", &j), -EINVAL);
	free(l1);
	free(l2);
	free(l3);
	free(l4);
}

/* The privileged helper's grant: "helper PATH RUNID SID", the second field
 * checked both ways (an undo ward cannot read is refused, never guessed). */
static void test_win_journal_helper(void **state)
{
	char *arg = NULL, *line = NULL, id[17], sid[WIN_SID_STRING_MAX];
	WinJournal j = { 0 };
	_cleanup_free_ char *text = NULL;
	static const char *const bad[] = {
		"helper\tC:\\Program Files\\x\n",                                 /* no run */
		"helper\tC:\\x\t00000000000000aa\n",                                /* no SID */
		"helper\tC:\\x\t00000000000000AA S-1-15-2-1-2-3-4-5-6-7\n",          /* upper case */
		"helper\tC:\\x\t00000000000000aa S-1-1-0\n",                        /* Everyone */
		"helper\tC:\\x\t00000000000000aa S-1-15-2-1\n",                     /* ALL APP PACKAGES */
		"helper\tC:\\x\t00000000000000aa S-1-5-21-1-2-3-1001\n",            /* a user */
		"helper\tC:\\x\t00000000000000aa S-1-15-2-1-2-3-4-5-6-7\textra\n", /* a third field */
		"helper\tC:\\x\t00000000000000aa  S-1-15-2-1-2-3-4-5-6-7\n",        /* two spaces */
		"helper\tC:\\x\t0000000000000aa S-1-15-2-1-2-3-4-5-6-7\n",          /* 15 digits */
		"helper\t\t00000000000000aa S-1-15-2-1-2-3-4-5-6-7\n",                /* no path */
	};

	assert_int_equal(win_journal_helper_arg("00000000000000aa", "S-1-15-2-1-2-3-4-5-6-7", &arg), 0);
	assert_int_equal(win_journal_line(WIN_JOURNAL_HELPER, "C:\\Program Files\\x", arg, &line), 0);
	assert_string_equal(line, "helper\tC:\\Program Files\\x\t00000000000000aa S-1-15-2-1-2-3-4-5-6-7\n");
	assert_int_equal(asprintf(&text, "%s%s", WIN_JOURNAL_HEADER, line) > 0, 1);
	assert_int_equal(win_journal_parse(text, &j), 0);
	assert_int_equal(j.n, 1);
	assert_int_equal(j.entries[0].kind, WIN_JOURNAL_HELPER);
	assert_string_equal(j.entries[0].arg, "C:\\Program Files\\x");
	assert_int_equal(win_journal_helper_split(j.entries[0].arg2, id, sid), 0);
	assert_string_equal(id, "00000000000000aa");
	assert_string_equal(sid, "S-1-15-2-1-2-3-4-5-6-7");
	win_journal_done(&j);
	free(line);
	free(arg);
	arg = NULL;
	/* A synthetic SID is a run's too. */
	assert_int_equal(win_journal_helper_arg("00000000000000aa", "S-1-15-3-1024-1-2-3-4-5-6-7-8", &arg), 0);
	free(arg);
	/* Only a run's id and SID, and no line without them. */
	assert_int_equal(win_journal_helper_arg("00000000000000aa", "S-1-1-0", &arg), -EINVAL);
	assert_int_equal(win_journal_helper_arg("zz", "S-1-15-2-1-2-3-4-5-6-7", &arg), -EINVAL);
	assert_int_equal(win_journal_line(WIN_JOURNAL_HELPER, "C:\\x", NULL, &line), -EINVAL);
	assert_int_equal(win_journal_line(WIN_JOURNAL_HELPER, "C:\\x", "00000000000000aa S-1-1-0", &line),
			 -EINVAL);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_free_ char *t = NULL;

		assert_int_equal(asprintf(&t, "%s%s", WIN_JOURNAL_HEADER, bad[i]) > 0, 1);
		if (win_journal_parse(t, &j) != -EINVAL)
			printf("# parsed: %s", bad[i]);
		assert_int_equal(win_journal_parse(t, &j), -EINVAL);
	}
}

static void test_win_policy_defaults(void **state)
{
	WardPolicy *p = win_policy_defaults();
	char *argv[] = { "C:\\ws\\tool.exe", NULL };
	WinPlan *plan = NULL;
	char why[512];

	assert_non_null(p);
	/* The shared defaults, without Linux's file lists. */
	assert_null(p->fs_read);
	assert_null(p->fs_read_exec);
	assert_null(p->fs_deny);
	assert_true(strv_contains(p->fs_protected, ".git"));
	assert_true(strv_contains(p->fs_protected, ".harness"));
	assert_true(strv_contains(p->env_strip, "*_TOKEN"));
	assert_true(strv_contains(p->env_pass, "SYSTEMROOT"));
	assert_int_equal(p->net_mode, NET_MODE_NONE);
	/* And it plans on W2 with nothing degraded. */
	assert_int_equal(build(p, WIN_TIER_W2, argv, &plan, why, sizeof(why)), 0);
	assert_null(plan->degraded);
	assert_null(win_env_get(plan->env, "GH_TOKEN"));
	assert_non_null(win_env_get(plan->env, "SystemRoot"));
	win_plan_free(plan);
	policy_free(p);
}

/* win_policy_load: Linux's order (defaults, presets, the file, then the
 * flags' document), "~" against the given home, errors naming the file
 * and the JSON path. Portable: natively and under Wine. */
static void test_win_policy_load(void **state)
{
	const char *flags = "{\"fs\": {\"read\": [\"~/docs\", \"~\"]}, \"limits\": {\"timeout_s\": 9}}";
	PolicyError pe = { 0 };
	WardPolicy *p = NULL;
	char *git[] = { "git", NULL }, *nope[] = { "nope", NULL };

	/* No default file, wherever this runs. */
	putenv("XDG_CONFIG_HOME=/nonexistent-ward-test");
	putenv("APPDATA=C:\\nonexistent-ward-test");
	assert_int_equal(win_policy_load(NULL, NULL, flags, "C:\\Users\\u", &p, &pe), 0);
	assert_true(strv_contains(p->fs_read, "C:\\Users\\u/docs"));
	assert_true(strv_contains(p->fs_read, "C:\\Users\\u"));
	assert_int_equal(p->timeout_s, 9);
	/* Still ward.exe's defaults underneath, not Linux's file lists. */
	assert_true(strv_contains(p->env_pass, "SYSTEMROOT"));
	assert_null(p->fs_read_exec);
	policy_free(p);
	p = NULL;

	/* "~" without a home is an error naming the field, not a guess. */
	assert_int_equal(win_policy_load(NULL, NULL, flags, NULL, &p, &pe), -EINVAL);
	assert_null(p);
	assert_string_equal(pe.path, "fs.read");

	/* The flags' document is checked like a file, and named. */
	assert_int_equal(win_policy_load(NULL, NULL, "{\"fs\": {\"read\": 3}}", NULL, &p, &pe),
			 -EINVAL);
	assert_string_equal(pe.file, "<command line>");
	assert_string_equal(pe.path, "fs.read");

	/* Presets apply in order before the file (their fs.sanitize is then
	 * the plan's to refuse); an unknown one is an error. */
	assert_int_equal(win_policy_load(NULL, git, NULL, "C:\\Users\\u", &p, &pe), 0);
	assert_true(strv_contains(p->fs_read, "C:\\Users\\u/.gitconfig"));
	assert_non_null(p->fs_sanitize);
	policy_free(p);
	p = NULL;
	assert_int_equal(win_policy_load(NULL, nope, NULL, NULL, &p, &pe), -EINVAL);
	assert_non_null(strstr(pe.msg, "unknown preset"));

	/* A missing explicit file is an error, not the defaults. */
	assert_true(win_policy_load("C:\\nonexistent-ward-test\\p.json", NULL, NULL, NULL, &p,
				    &pe) < 0);
	assert_null(p);
	assert_non_null(strstr(pe.file, "p.json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_win_plan_cow),
		cmocka_unit_test(test_win_plan_w2_appcontainer),
		cmocka_unit_test(test_win_plan_w2_refuses_proxy_and_unknown),
		cmocka_unit_test(test_win_plan_w2_proxy),
		cmocka_unit_test(test_win_plan_refuses_bad_paths),
		cmocka_unit_test(test_win_plan_system_paths_need_helper),
		cmocka_unit_test(test_win_plan_w1_labels),
		cmocka_unit_test(test_win_plan_w1_write_sid),
		cmocka_unit_test(test_win_plan_program_lookup),
		cmocka_unit_test(test_win_plan_w0_and_limits),
		cmocka_unit_test(test_win_plan_workspace_checks),
		cmocka_unit_test(test_win_token_check),
		cmocka_unit_test(test_win_journal_format_parse),
		cmocka_unit_test(test_win_journal_helper),
		cmocka_unit_test(test_win_policy_defaults),
		cmocka_unit_test(test_win_policy_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
