/* Windows network walls as data: the WFP GUIDs mingw lacks (pinned), the
 * stable keys, the filter plan per identity, the read-back comparison, the
 * network journal and its cleanup order, the network class of a command
 * and the loopback exemption list. Runs natively and, cross-compiled,
 * under Wine. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/strv.h"
#include "windows/win-guid.h"
#include "windows/win-net-journal.h"
#include "windows/win-net.h"
#include "windows/win-wfp.h"

#define PKG "S-1-15-2-1111111111-2222222222-3333333333-444444444-555555555-666666666-777777777"
#define USER "S-1-5-21-1-2-3-1001"

static void expect_guid(const WinGuid *g, const char *s)
{
	char buf[WIN_GUID_STRING_MAX];
	WinGuid back;

	win_guid_format(g, buf);
	assert_string_equal(buf, s);
	assert_int_equal(win_guid_parse(s, &back), 0);
	assert_true(win_guid_equal(g, &back));
}

static void test_win_guid_wfp_values_pinned(void **state)
{
	(void)state;
	/* The values of Microsoft's fwpmu.h; a typo here would silently put
	 * a filter on the wrong layer (or none), so each is pinned. */
	expect_guid(&WIN_FWPM_LAYER_ALE_AUTH_CONNECT_V4, "{c38d57d1-05a7-4c33-904f-7fbceee60e82}");
	expect_guid(&WIN_FWPM_LAYER_ALE_AUTH_CONNECT_V6, "{4a72393b-319f-44bc-84c3-ba54dcb3b6b4}");
	expect_guid(&WIN_FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V4,
		    "{e1cd9fe7-f4b5-4273-96c0-592e487b8650}");
	expect_guid(&WIN_FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V6,
		    "{a3b42c97-9f04-4672-b87e-cee9c483257f}");
	expect_guid(&WIN_FWPM_LAYER_ALE_RESOURCE_ASSIGNMENT_V4,
		    "{1247d66d-0b60-4a15-8d44-7155d0f53a0c}");
	expect_guid(&WIN_FWPM_LAYER_ALE_RESOURCE_ASSIGNMENT_V6,
		    "{55a650e1-5f0a-4eca-a653-88f53b26aa8c}");
	expect_guid(&WIN_FWPM_CONDITION_ALE_PACKAGE_ID, "{71bc78fa-f17c-4997-a602-6abb261f351c}");
	expect_guid(&WIN_FWPM_CONDITION_ALE_USER_ID, "{af043a0a-b34d-4f86-979c-c90371af6e66}");
	expect_guid(&WIN_FWPM_CONDITION_IP_REMOTE_ADDRESS,
		    "{b235ae9a-1d64-49b8-a44c-5ff3d9095045}");
	expect_guid(&WIN_FWPM_CONDITION_IP_REMOTE_PORT, "{c35a604d-d22b-4e1a-91b4-68f674ee674b}");
	expect_guid(&WIN_FWPM_CONDITION_IP_PROTOCOL, "{3971ef2b-623e-4f9a-8cb1-6e79b806b9a7}");
}

static void test_win_guid_parse_rejects_and_names(void **state)
{
	WinGuid g, h;

	(void)state;
	assert_int_equal(win_guid_parse("c38d57d1-05a7-4c33-904f-7fbceee60e82", &g), -EINVAL);
	assert_int_equal(win_guid_parse("{c38d57d1-05a7-4c33-904f-7fbceee60e8}", &g), -EINVAL);
	assert_int_equal(win_guid_parse("{c38d57d1-05a7-4c33-904f-7fbceee60e8g}", &g), -EINVAL);
	assert_int_equal(win_guid_parse("{c38d57d105a7-4c33-904f-7fbceee60e82a}", &g), -EINVAL);
	assert_int_equal(win_guid_parse("{C38D57D1-05A7-4C33-904F-7FBCEEE60E82}", &g), 0);
	assert_true(win_guid_equal(&g, &WIN_FWPM_LAYER_ALE_AUTH_CONNECT_V4));
	/* ward's own keys are the documented derivations. */
	win_guid_from_name("wfp", "provider", &g);
	assert_true(win_guid_equal(&g, &WIN_WARD_WFP_PROVIDER));
	win_guid_from_name("wfp", "sublayer", &g);
	assert_true(win_guid_equal(&g, &WIN_WARD_WFP_SUBLAYER));
	/* Stable and distinct: same input, same key; any change, another key;
	 * version 8, variant 10. */
	win_guid_from_name("wfp-filter", PKG "/raw-v4", &g);
	win_guid_from_name("wfp-filter", PKG "/raw-v4", &h);
	assert_true(win_guid_equal(&g, &h));
	assert_int_equal(g.d3 >> 12, 8);
	assert_int_equal(g.d4[0] >> 6, 2);
	win_guid_from_name("wfp-filter", PKG "/raw-v6", &h);
	assert_false(win_guid_equal(&g, &h));
	win_guid_from_name("wfp", "filter" PKG "/raw-v4", &h); /* the NUL separates */
	assert_false(win_guid_equal(&g, &h));
}

static const WinWfpFilter *find(const WinWfpPlan *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->filters[i].name, name) == 0)
			return &p->filters[i];
	return NULL;
}

static const WinWfpCondition *cond(const WinWfpFilter *f, WinWfpField field)
{
	for (size_t i = 0; i < f->n_cond; i++)
		if (f->cond[i].field == field)
			return &f->cond[i];
	return NULL;
}

static void test_win_wfp_plan_package_proxy(void **state)
{
	WinWfpInput in = { .identity = WIN_WFP_PACKAGE, .sid = PKG, .proxy_port = 49152 };
	WinWfpPlan p;
	const WinWfpFilter *f;
	size_t blocks = 0, permits = 0;

	(void)state;
	assert_int_equal(win_wfp_plan(&in, &p), 0);
	assert_int_equal(p.n, 12);
	assert_false(p.persistent);
	/* A dynamic session has its own sublayer and provider, per SID:
	 * two runs never share objects one of them deletes on close. */
	assert_false(win_guid_equal(&p.sublayer, &WIN_WARD_WFP_SUBLAYER));
	assert_false(win_guid_equal(&p.provider, &WIN_WARD_WFP_PROVIDER));
	{
		WinWfpInput other = in;
		WinWfpPlan q;

		other.sid = "S-1-15-2-9-9-9-9-9-9-9";
		assert_int_equal(win_wfp_plan(&other, &q), 0);
		assert_false(win_guid_equal(&p.sublayer, &q.sublayer));
		assert_int_equal(win_wfp_plan(&in, &q), 0);
		assert_true(win_guid_equal(&p.sublayer, &q.sublayer));
	}
	assert_int_equal(p.sublayer_weight, 0xffff);
	for (size_t i = 0; i < p.n; i++) {
		const WinWfpCondition *id = cond(&p.filters[i], WIN_WFP_F_PACKAGE);

		/* Every filter is conditioned on the package SID, no other identity. */
		assert_non_null(id);
		assert_string_equal(id->text, PKG);
		assert_null(cond(&p.filters[i], WIN_WFP_F_USER));
		/* Permits outweigh the blocks of their layer. */
		assert_int_equal(p.filters[i].weight, p.filters[i].permit ? 15 : 0);
		blocks += !p.filters[i].permit;
		permits += p.filters[i].permit;
		for (size_t j = 0; j < i; j++)
			assert_false(win_guid_equal(&p.filters[i].key, &p.filters[j].key));
	}
	assert_int_equal(blocks, 6);
	assert_int_equal(permits, 6);
	/* The one way out: TCP to the proxy's port on loopback, v4 and v6. */
	f = find(&p, "proxy-v4");
	assert_non_null(f);
	assert_int_equal(f->layer, WIN_WFP_CONNECT_V4);
	assert_true(f->permit);
	assert_int_equal(f->n_cond, 4);
	assert_int_equal(cond(f, WIN_WFP_F_REMOTE_V4)->v4, 0x7f000001);
	assert_int_equal(cond(f, WIN_WFP_F_REMOTE_PORT)->num, 49152);
	assert_int_equal(cond(f, WIN_WFP_F_PROTOCOL)->num, 6);
	f = find(&p, "proxy-v6");
	assert_non_null(f);
	assert_int_equal(f->layer, WIN_WFP_CONNECT_V6);
	{
		static const uint8_t lo6[16] = { [15] = 1 };

		assert_int_equal(memcmp(cond(f, WIN_WFP_F_REMOTE_V6)->v6, lo6, 16), 0);
	}
	/* Everything else blocked, outbound, inbound, and raw sockets. */
	for (const char *const *b = (const char *const[]){ "connect-v4", "connect-v6", "accept-v4",
							    "accept-v6", "raw-v4", "raw-v6", NULL };
	     *b; b++) {
		f = find(&p, *b);
		assert_non_null(f);
		assert_false(f->permit);
		assert_int_equal(f->n_cond, 1); /* identity only: matches every flow of it */
	}
	assert_int_equal(find(&p, "connect-v4")->layer, WIN_WFP_CONNECT_V4);
	assert_int_equal(find(&p, "accept-v6")->layer, WIN_WFP_RECV_ACCEPT_V6);
	assert_int_equal(find(&p, "raw-v4")->layer, WIN_WFP_RESOURCE_V4);
	assert_int_equal(cond(find(&p, "udp-v6"), WIN_WFP_F_PROTOCOL)->num, 17);
	assert_int_equal(find(&p, "tcp-v6")->layer, WIN_WFP_RESOURCE_V6);
	assert_true(win_guid_equal(win_wfp_layer_key(WIN_WFP_RESOURCE_V6),
				   &WIN_FWPM_LAYER_ALE_RESOURCE_ASSIGNMENT_V6));
}

static void test_win_wfp_plan_no_proxy_and_user(void **state)
{
	WinWfpInput in = { .identity = WIN_WFP_PACKAGE, .sid = PKG };
	WinWfpPlan p, q;
	char key1[WIN_GUID_STRING_MAX], key2[WIN_GUID_STRING_MAX];

	(void)state;
	/* No proxy: no permit that lets anything leave. */
	assert_int_equal(win_wfp_plan(&in, &p), 0);
	assert_int_equal(p.n, 10);
	assert_null(find(&p, "proxy-v4"));
	assert_null(find(&p, "proxy-v6"));
	for (size_t i = 0; i < p.n; i++)
		if (p.filters[i].permit)
			assert_true(p.filters[i].layer == WIN_WFP_RESOURCE_V4 ||
				    p.filters[i].layer == WIN_WFP_RESOURCE_V6);
	/* The key does not depend on the port, only on SID and name. */
	in.proxy_port = 8080;
	assert_int_equal(win_wfp_plan(&in, &q), 0);
	win_guid_format(&find(&p, "raw-v4")->key, key1);
	win_guid_format(&find(&q, "raw-v4")->key, key2);
	assert_string_equal(key1, key2);

	/* The sandbox user: the condition is a security descriptor. */
	in = (WinWfpInput){ .identity = WIN_WFP_USER, .sid = USER, .persistent = true };
	assert_int_equal(win_wfp_plan(&in, &p), 0);
	assert_true(p.persistent);
	assert_true(win_guid_equal(&p.sublayer, &WIN_WARD_WFP_SUBLAYER));
	assert_true(win_guid_equal(&p.provider, &WIN_WARD_WFP_PROVIDER));
	{
		const WinWfpCondition *u = cond(&p.filters[0], WIN_WFP_F_USER);

		assert_non_null(u);
		assert_string_equal(u->text, "O:LSD:(A;;CC;;;" USER ")");
	}
	assert_null(cond(&p.filters[0], WIN_WFP_F_PACKAGE));

	/* The wrong kind of SID, or none, or one that names every package. */
	in = (WinWfpInput){ .identity = WIN_WFP_PACKAGE, .sid = USER };
	assert_int_equal(win_wfp_plan(&in, &p), -EINVAL);
	in = (WinWfpInput){ .identity = WIN_WFP_USER, .sid = PKG };
	assert_int_equal(win_wfp_plan(&in, &p), -EINVAL);
	in = (WinWfpInput){ .identity = WIN_WFP_PACKAGE, .sid = "S-1-15-2-1" };
	assert_int_equal(win_wfp_plan(&in, &p), -EINVAL);
	in = (WinWfpInput){ .identity = WIN_WFP_PACKAGE, .sid = "S-1-15-2-x" };
	assert_int_equal(win_wfp_plan(&in, &p), -EINVAL);
	in = (WinWfpInput){ .identity = WIN_WFP_PACKAGE };
	assert_int_equal(win_wfp_plan(&in, &p), -EINVAL);
}

static void test_win_wfp_filter_check(void **state)
{
	WinWfpInput in = { .identity = WIN_WFP_PACKAGE, .sid = PKG, .proxy_port = 3128 };
	WinWfpPlan p;
	WinWfpFilter seen;
	const WinWfpFilter *f;
	char why[256];

	(void)state;
	assert_int_equal(win_wfp_plan(&in, &p), 0);
	f = find(&p, "proxy-v4");
	seen = *f;
	assert_int_equal(win_wfp_filter_check(f, &seen, why, sizeof(why)), 0);
	/* Conditions in another order are the same filter. */
	seen.cond[0] = f->cond[3];
	seen.cond[3] = f->cond[0];
	assert_int_equal(win_wfp_filter_check(f, &seen, why, sizeof(why)), 0);
	/* Each kind of difference refuses. */
	seen = *f;
	seen.permit = false;
	assert_int_equal(win_wfp_filter_check(f, &seen, why, sizeof(why)), -EPERM);
	seen = *f;
	seen.weight = 0;
	assert_int_equal(win_wfp_filter_check(f, &seen, why, sizeof(why)), -EPERM);
	seen = *f;
	seen.layer = WIN_WFP_CONNECT_V6;
	assert_int_equal(win_wfp_filter_check(f, &seen, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "ALE_AUTH_CONNECT_V6"));
	seen = *f;
	seen.key.d1 ^= 1;
	assert_int_equal(win_wfp_filter_check(f, &seen, why, sizeof(why)), -EPERM);
	seen = *f;
	seen.cond[2].num = 3129; /* another port */
	assert_int_equal(win_wfp_filter_check(f, &seen, why, sizeof(why)), -EPERM);
	seen = *f;
	seen.n_cond = 3; /* a condition dropped: wider than planned */
	assert_int_equal(win_wfp_filter_check(f, &seen, why, sizeof(why)), -EPERM);
	seen = *f;
	seen.cond[3] = seen.cond[2]; /* one duplicated, one missing */
	assert_int_equal(win_wfp_filter_check(f, &seen, why, sizeof(why)), -EPERM);
	seen = *f;
	seen.cond[0].text[10] = '9'; /* another package */
	assert_int_equal(win_wfp_filter_check(f, &seen, why, sizeof(why)), -EPERM);
	seen = *f;
	seen.cond[0].field = WIN_WFP_F_USER;
	assert_int_equal(win_wfp_filter_check(f, &seen, why, sizeof(why)), -EPERM);
}

static void test_win_net_journal_roundtrip_and_order(void **state)
{
	WinWfpInput in = { .identity = WIN_WFP_USER, .sid = USER, .persistent = true };
	WinWfpPlan p;
	WinNetJournal j;
	char *lines = NULL, *text = NULL, *rest = NULL;
	size_t order[32];
	bool done[32] = { 0 };

	(void)state;
	assert_int_equal(win_wfp_plan(&in, &p), 0);
	assert_int_equal(win_net_journal_plan_lines(&p, &lines), 0);
	text = malloc(strlen(WIN_NET_JOURNAL_HEADER) + strlen(PKG) + strlen(lines) + 16);
	assert_non_null(text);
	sprintf(text, "%sloopback\t%s\n%s", WIN_NET_JOURNAL_HEADER, PKG, lines);
	assert_int_equal(win_net_journal_parse(text, &j), 0);
	assert_int_equal(j.n, 1 + 2 + p.n);
	assert_int_equal(j.entries[0].kind, WIN_NETJ_LOOPBACK);
	assert_string_equal(j.entries[0].sid, PKG);
	assert_int_equal(j.entries[1].kind, WIN_NETJ_PROVIDER);
	assert_true(win_guid_equal(&j.entries[1].key, &WIN_WARD_WFP_PROVIDER));
	assert_int_equal(j.entries[3].kind, WIN_NETJ_FILTER);
	assert_true(win_guid_equal(&j.entries[3].key, &p.filters[0].key));
	assert_string_equal(j.entries[3].name, p.filters[0].name);
	/* Undo order: loopback, filters, then the sublayer, then the provider. */
	win_net_cleanup_order(&j, order);
	assert_int_equal(order[0], 0);
	for (size_t k = 1; k <= p.n; k++)
		assert_int_equal(j.entries[order[k]].kind, WIN_NETJ_FILTER);
	assert_int_equal(j.entries[order[p.n + 1]].kind, WIN_NETJ_SUBLAYER);
	assert_int_equal(j.entries[order[p.n + 2]].kind, WIN_NETJ_PROVIDER);
	/* What stays is exactly what was not done; nothing left: no file. */
	done[0] = true;
	for (size_t i = 3; i < j.n; i++)
		done[i] = true;
	assert_int_equal(win_net_journal_rest(&j, done, &rest), 0);
	assert_non_null(rest);
	assert_non_null(strstr(rest, "provider\t"));
	assert_non_null(strstr(rest, "sublayer\t"));
	assert_null(strstr(rest, "filter\t"));
	assert_null(strstr(rest, "loopback\t"));
	free(rest);
	for (size_t i = 0; i < j.n; i++)
		done[i] = true;
	assert_int_equal(win_net_journal_rest(&j, done, &rest), 0);
	assert_null(rest);
	win_net_journal_done(&j);
	free(text);
	free(lines);
}

static void test_win_net_journal_parse_rejects(void **state)
{
	WinNetJournal j;

	(void)state;
	assert_int_equal(win_net_journal_parse("", &j), 0);
	assert_int_equal(j.n, 0);
	/* A crash mid-line: that change was never made. */
	assert_int_equal(win_net_journal_parse("ward-windows-net 1\nloopback\tS-1-15-2-1-2\nfil",
					       &j),
			 0);
	assert_int_equal(j.n, 1);
	win_net_journal_done(&j);
	assert_int_equal(win_net_journal_parse("ward-windows-net 2\n", &j), -EINVAL);
	assert_int_equal(win_net_journal_parse("ward-windows-net 1\nloopback\tnot-a-sid\n", &j),
			 -EINVAL);
	assert_int_equal(win_net_journal_parse("ward-windows-net 1\nfilter\t{bad}\tS-1-1-0\tx\n",
					       &j),
			 -EINVAL);
	assert_int_equal(win_net_journal_parse("ward-windows-net 1\nprovider\t\t{c38d57d1-05a7-"
					       "4c33-904f-7fbceee60e82}\n",
					       &j),
			 -EINVAL);
	assert_int_equal(win_net_journal_parse("ward-windows-net 1\nremove-all\n", &j), -EINVAL);
	assert_int_equal(win_net_journal_parse("ward-windows-net 1\nsublayer\t{c38d57d1-05a7-4c33-"
					       "904f-7fbceee60e82}\textra\n",
					       &j),
			 -EINVAL);
}

static void test_win_net_class(void **state)
{
	char *cmds[] = { "git", "cargo", NULL };
	char *writable[] = { "C:\\ws", "C:\\Users\\me\\.cache", NULL };
	WinNetInput in = { .proxy = true, .commands = cmds, .writable = writable, .proxy_port = 3128,
			   .application = "C:\\Program Files\\Git\\cmd\\GIT.EXE" };
	WinNetDecision d;
	char why[256];

	(void)state;
	/* A named command: its own class with internetClient, still walled. */
	assert_int_equal(win_net_decide(&in, &d, why, sizeof(why)), 0);
	assert_int_equal(d.cls, WIN_NET_COMMAND);
	assert_string_equal(d.capability, "internetClient");
	assert_string_equal(d.command, "git");
	assert_true(d.wfp);
	assert_int_equal(d.proxy_port, 3128);
	/* Any other program: the proxy class, no capability. */
	in.application = "C:\\Windows\\System32\\cmd.exe";
	assert_int_equal(win_net_decide(&in, &d, why, sizeof(why)), 0);
	assert_int_equal(d.cls, WIN_NET_PROXY);
	assert_null(d.capability);
	assert_true(d.loopback_exempt);
	/* Base names compare whole: git-lfs and gitx are not git. */
	in.application = "C:\\tools\\git-lfs.exe";
	assert_int_equal(win_net_decide(&in, &d, why, sizeof(why)), 0);
	assert_int_equal(d.cls, WIN_NET_PROXY);
	in.application = "C:\\tools\\gitx.exe";
	assert_int_equal(win_net_decide(&in, &d, why, sizeof(why)), 0);
	assert_int_equal(d.cls, WIN_NET_PROXY);
	/* A git.exe the command could have written is not trusted. */
	in.application = "C:\\ws\\node_modules\\.bin\\git.exe";
	assert_int_equal(win_net_decide(&in, &d, why, sizeof(why)), 0);
	assert_int_equal(d.cls, WIN_NET_PROXY);
	assert_null(d.capability);
	assert_non_null(strstr(d.note, "writable"));
	in.application = "c:\\users\\ME\\.cache\\cargo.exe";
	assert_int_equal(win_net_decide(&in, &d, why, sizeof(why)), 0);
	assert_int_equal(d.cls, WIN_NET_PROXY);
	/* network none: nothing, whatever the commands say. */
	in.proxy = false;
	in.application = "C:\\Program Files\\Git\\cmd\\git.exe";
	assert_int_equal(win_net_decide(&in, &d, why, sizeof(why)), 0);
	assert_int_equal(d.cls, WIN_NET_NONE);
	assert_null(d.capability);
	assert_false(d.loopback_exempt);
	assert_true(d.wfp);
	/* Keys that are not bare names are refused, naming the entry. */
	char *bad[] = { "C:\\tools\\git.exe", NULL };
	in.commands = bad;
	assert_int_equal(win_net_decide(&in, &d, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "C:\\tools\\git.exe"));
	char *star[] = { "g*", NULL };
	in.commands = star;
	assert_int_equal(win_net_decide(&in, &d, why, sizeof(why)), -EINVAL);
	char *dots[] = { "..", NULL };
	in.commands = dots;
	assert_int_equal(win_net_decide(&in, &d, why, sizeof(why)), -EINVAL);
	/* Proxy mode needs a port. */
	in.commands = cmds;
	in.proxy = true;
	in.proxy_port = 0;
	assert_int_equal(win_net_decide(&in, &d, why, sizeof(why)), -EINVAL);
}

static void test_win_loopback_list(void **state)
{
	char *list[] = { "S-1-15-2-9", "S-1-15-2-7", NULL };
	char *drop[] = { "s-1-15-2-9", NULL };
	char **l = NULL;

	(void)state;
	/* Add keeps every other application's SID, and never duplicates. */
	assert_int_equal(win_loopback_with(list, "S-1-15-2-5", &l), 0);
	assert_int_equal(strv_length(l), 3);
	assert_string_equal(l[0], "S-1-15-2-9");
	assert_string_equal(l[2], "S-1-15-2-5");
	strv_free(l);
	assert_int_equal(win_loopback_with(list, "S-1-15-2-7", &l), 0);
	assert_int_equal(strv_length(l), 2);
	strv_free(l);
	assert_int_equal(win_loopback_with(NULL, "S-1-15-2-7", &l), 0);
	assert_int_equal(strv_length(l), 1);
	strv_free(l);
	/* Remove takes out only the named SIDs. */
	assert_int_equal(win_loopback_without(list, drop, &l), 0);
	assert_int_equal(strv_length(l), 1);
	assert_string_equal(l[0], "S-1-15-2-7");
	strv_free(l);
	assert_int_equal(win_loopback_without(NULL, drop, &l), 0);
	assert_int_equal(strv_length(l), 0);
	strv_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_win_guid_wfp_values_pinned),
		cmocka_unit_test(test_win_guid_parse_rejects_and_names),
		cmocka_unit_test(test_win_wfp_plan_package_proxy),
		cmocka_unit_test(test_win_wfp_plan_no_proxy_and_user),
		cmocka_unit_test(test_win_wfp_filter_check),
		cmocka_unit_test(test_win_net_journal_roundtrip_and_order),
		cmocka_unit_test(test_win_net_journal_parse_rejects),
		cmocka_unit_test(test_win_net_class),
		cmocka_unit_test(test_win_loopback_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
