/* The command runner's request (seed 2's two-step flow): only the exact
 * format parses and round-trips; the runner takes only the synthetic SID
 * ward-setup.exe recorded and never a program or directory under ward's
 * own state. Runs natively and, cross-compiled, under Wine. */
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

#include "windows/win-runner-proto.h"

#define SYN "S-1-15-3-1024-1-2-3-4-5-6-7-8"
#define HEAD "ward-runner 1\nrun 00000000000000aa\nsid " SYN "\n"
#define GOOD                                                                                       \
	HEAD "app C:\\Program Files\\Git\\cmd\\git.exe\ncwd C:\\ws\ncmdline git status\n"              \
	     "env PATH=C:\\Windows\nenv =C:=C:\\ws\nenv EMPTY=\nend\n"

static int parse(const char *s, WinRunnerRequest *r)
{
	char why[256];

	return win_runner_parse(s, strlen(s), r, why, sizeof(why));
}

static void test_runner_roundtrip(void **state)
{
	WinRunnerRequest r;
	char *back = NULL;

	(void)state;
	assert_int_equal(parse(GOOD, &r), 0);
	assert_string_equal(r.app, "C:\\Program Files\\Git\\cmd\\git.exe");
	assert_string_equal(r.cmdline, "git status");
	assert_string_equal(r.env[1], "=C:=C:\\ws");
	assert_null(r.env[3]);
	assert_int_equal(win_runner_format(&r, &back), 0);
	assert_string_equal(back, GOOD);
	free(back);
	win_runner_request_done(&r);
	/* No environment at all is a valid request. */
	assert_int_equal(parse(HEAD "app C:\\a.exe\ncwd C:\\ws\ncmdline a\nend\n", &r), 0);
	assert_null(r.env[0]);
	win_runner_request_done(&r);
}

static void test_runner_rejects(void **state)
{
	static const char *const bad[] = {
		"",
		"ward-runner 2\n",
		HEAD "app C:\\a.exe\ncwd C:\\ws\ncmdline a\nend\nx\n",
		HEAD "app C:\\a.exe\ncwd C:\\ws\ncmdline a\nend",
		HEAD "app a.exe\ncwd C:\\ws\ncmdline a\nend\n",
		HEAD "app C:/a.exe\ncwd C:\\ws\ncmdline a\nend\n",
		HEAD "app C:\\a.exe\ncwd C:\\ws\\..\\x\ncmdline a\nend\n",
		HEAD "app C:\\a.exe\ncwd C:\\ws\ncmdline a\r\nend\n",
		HEAD "app C:\\a.exe\ncwd C:\\ws\ncmdline \nend\n",
		HEAD "app C:\\a.exe\ncwd C:\\ws\ncmdline a\nenv NOVALUE\nend\n",
		HEAD "app C:\\a.exe\ncwd C:\\ws\ncmdline a\nenv =x\nend\n",
		HEAD "app C:\\a.exe\ncwd C:\\ws\ncmdline a\nenv ==\nend\n",
		HEAD "cwd C:\\ws\napp C:\\a.exe\ncmdline a\nend\n",
		"ward-runner 1\nrun 00000000000000aa\nsid S-1-15-2-1-2\napp C:\\a.exe\ncwd C:\\ws\n"
		"cmdline a\nend\n",
		"ward-runner 1\nrun 00000000000000aa\nsid S-1-5-18\napp C:\\a.exe\ncwd C:\\ws\n"
		"cmdline a\nend\n",
		"ward-runner 1\nrun xyz\nsid " SYN "\napp C:\\a.exe\ncwd C:\\ws\ncmdline a\nend\n",
	};
	WinRunnerRequest r;
	char why[256];
	char *big = malloc(WIN_RUNNER_MAX + 2);

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &r) != -EINVAL)
			printf("# accepted: case %zu\n", i);
		assert_int_equal(parse(bad[i], &r), -EINVAL);
	}
	assert_non_null(big);
	memset(big, 'a', WIN_RUNNER_MAX + 2);
	assert_int_equal(win_runner_parse(big, WIN_RUNNER_MAX + 1, &r, why, sizeof(why)), -E2BIG);
	free(big);
}

static void test_runner_allow(void **state)
{
	char *forbidden[] = { "C:\\Users\\me\\AppData\\Local\\ward", NULL };
	WinRunnerRequest r;
	char why[256];

	(void)state;
	assert_int_equal(parse(GOOD, &r), 0);
	assert_int_equal(win_runner_allow(&r, SYN, forbidden, why, sizeof(why)), 0);
	assert_int_equal(win_runner_allow(&r, "S-1-15-3-1024-9", forbidden, why, sizeof(why)),
			 -EPERM);
	assert_int_equal(win_runner_allow(&r, NULL, forbidden, why, sizeof(why)), -EPERM);
	win_runner_request_done(&r);
	assert_int_equal(parse(HEAD "app C:\\Users\\me\\AppData\\Local\\ward\\x.exe\ncwd C:\\ws\n"
				    "cmdline x\nend\n",
			       &r),
			 0);
	assert_int_equal(win_runner_allow(&r, SYN, forbidden, why, sizeof(why)), -EPERM);
	win_runner_request_done(&r);
	assert_int_equal(parse(HEAD "app C:\\a.exe\ncwd c:\\users\\ME\\appdata\\local\\ward\\q\n"
				    "cmdline x\nend\n",
			       &r),
			 -EINVAL); /* not normalized (drive letter) */
	assert_int_equal(parse(HEAD "app C:\\a.exe\ncwd C:\\users\\ME\\appdata\\local\\ward\\q\n"
				    "cmdline x\nend\n",
			       &r),
			 0);
	assert_int_equal(win_runner_allow(&r, SYN, forbidden, why, sizeof(why)), -EPERM);
	win_runner_request_done(&r);
}

/* The runner's replies: exactly the three forms; a reply from the other
 * user's process that is anything else is refused. */
static void test_runner_replies(void **state)
{
	const char *bad[] = { "", "started", "started ", "started -1", "started 01", "started 1 ",
			      "started 4294967296", "exit", "exit 1x", "exit  1", "refused ",
			      "refused a\nb", "refused \x1b[2J", "Started 1", "ok", "exit 0\n",
			      "refused \xc3\xa9" };
	WinRunnerReply r;
	char buf[WIN_RUNNER_REPLY_MAX], why[256], big[600];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		if (win_runner_reply_parse(bad[i], strlen(bad[i]), &r, why, sizeof(why)) == 0)
			printf("# accepted: '%s'\n", bad[i]);
		assert_int_equal(win_runner_reply_parse(bad[i], strlen(bad[i]), &r, why, sizeof(why)),
				 -EINVAL);
	}
	n = win_runner_reply_format(WIN_RUNNER_STARTED, 4242, NULL, buf);
	assert_int_equal(win_runner_reply_parse(buf, n, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, WIN_RUNNER_STARTED);
	assert_int_equal(r.value, 4242);
	n = win_runner_reply_format(WIN_RUNNER_EXIT, 4294967295u, NULL, buf);
	assert_int_equal(win_runner_reply_parse(buf, n, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, WIN_RUNNER_EXIT);
	assert_true(r.value == 4294967295u);
	/* A refusal: control characters replaced, cut at 400 bytes, parses. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	big[3] = '\n';
	n = win_runner_reply_format(WIN_RUNNER_REFUSED, 0, big, buf);
	assert_int_equal(n, 8 + 400);
	assert_int_equal(win_runner_reply_parse(buf, n, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, WIN_RUNNER_REFUSED);
	assert_int_equal(r.why[3], '?');
	assert_int_equal(strlen(r.why), 400);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runner_roundtrip),
		cmocka_unit_test(test_runner_rejects),
		cmocka_unit_test(test_runner_allow),
		cmocka_unit_test(test_runner_replies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
