/* The command runner's request: parse, format, check. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-path.h"
#include "windows/win-runner-proto.h"

void win_runner_request_done(WinRunnerRequest *r)
{
	free(r->app);
	free(r->cwd);
	free(r->cmdline);
	strv_free(r->env);
	memset(r, 0, sizeof(*r));
}

/* The next line: "@key VALUE" (value required) into a new string. */
static int line(const char **p, const char *end, const char *key, char **ret)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t kl = strlen(key), len;

	if (!nl)
		return -EINVAL;
	len = (size_t)(nl - *p);
	if (memchr(*p, 0, len) || memchr(*p, '\r', len) || len < kl)
		return -EINVAL;
	if (strncmp(*p, key, kl) != 0)
		return -ENOENT;
	if (ret) {
		if (len < kl + 2 || (*p)[kl] != ' ')
			return -EINVAL;
		*ret = strndup(*p + kl + 1, len - kl - 1);
		if (!*ret)
			return -ENOMEM;
	} else if (len != kl) {
		return -EINVAL;
	}
	*p = nl + 1;
	return 0;
}

static int normalized(const char *v)
{
	_cleanup_free_ char *n = NULL;

	return win_path_normalize(v, &n, NULL) == 0 && strcmp(n, v) == 0 ? 0 : -EINVAL;
}

static int fail(WinRunnerRequest *r, char *why, size_t n, const char *what)
{
	win_runner_request_done(r);
	snprintf(why, n, "%s", what);
	return -EINVAL;
}

int win_runner_parse(const char *data, size_t n, WinRunnerRequest *ret, char *why, size_t n_why)
{
	const char *p = data, *end = data + n;
	_cleanup_free_ char *v = NULL;
	char sid[WIN_SID_STRING_MAX];
	int r;

	memset(ret, 0, sizeof(*ret));
	if (n > WIN_RUNNER_MAX) {
		snprintf(why, n_why, "request longer than %d bytes", WIN_RUNNER_MAX);
		return -E2BIG;
	}
	if (line(&p, end, "ward-runner 1", NULL) < 0)
		return fail(ret, why, n_why, "not a ward-runner 1 request");
	if (line(&p, end, "run", &v) < 0 || strlen(v) != 16 || strspn(v, "0123456789abcdef") != 16)
		return fail(ret, why, n_why, "line 2: expected 'run' and 16 lower-case hex digits");
	memcpy(ret->run_id, v, 17);
	free(v);
	v = NULL;
	if (line(&p, end, "sid", &v) < 0 || win_sid_normalize(v, sid) < 0 || strcmp(v, sid) != 0 ||
	    strncmp(sid, "S-1-15-3-1024-", 14) != 0)
		return fail(ret, why, n_why, "line 3: expected 'sid' and a synthetic SID");
	memcpy(ret->sid, sid, sizeof(sid));
	if (line(&p, end, "app", &ret->app) < 0 || normalized(ret->app) < 0)
		return fail(ret, why, n_why, "line 4: expected 'app' and a normalized absolute path");
	if (line(&p, end, "cwd", &ret->cwd) < 0 || normalized(ret->cwd) < 0)
		return fail(ret, why, n_why, "line 5: expected 'cwd' and a normalized absolute path");
	if (line(&p, end, "cmdline", &ret->cmdline) < 0)
		return fail(ret, why, n_why, "line 6: expected 'cmdline' and a command line");
	ret->env = calloc(1, sizeof(char *));
	if (!ret->env)
		return fail(ret, why, n_why, "out of memory");
	for (;;) {
		char *e = NULL;

		r = line(&p, end, "env", &e);
		if (r == -ENOENT)
			break;
		if (r < 0 || !strchr(e + (e[0] == '='), '=') || e[0 + (e[0] == '=')] == '=') {
			free(e);
			return fail(ret, why, n_why, "an 'env' line is not NAME=VALUE");
		}
		if (strv_consume(&ret->env, e) < 0)
			return fail(ret, why, n_why, "out of memory");
	}
	if (line(&p, end, "end", NULL) < 0 || p != end)
		return fail(ret, why, n_why, "expected 'end' as the last line");
	return 0;
}

int win_runner_format(const WinRunnerRequest *r, char **ret)
{
	size_t n = 128 + strlen(r->sid) + strlen(r->app) + strlen(r->cwd) + strlen(r->cmdline);
	char *s, *q;

	for (char **e = r->env; e && *e; e++)
		n += strlen(*e) + 5;
	s = malloc(n);
	if (!s)
		return -ENOMEM;
	q = s + snprintf(s, n, "ward-runner 1\nrun %s\nsid %s\napp %s\ncwd %s\ncmdline %s\n",
			 r->run_id, r->sid, r->app, r->cwd, r->cmdline);
	for (char **e = r->env; e && *e; e++)
		q += snprintf(q, n - (size_t)(q - s), "env %s\n", *e);
	snprintf(q, n - (size_t)(q - s), "end\n");
	*ret = s;
	return 0;
}

int win_runner_allow(const WinRunnerRequest *r, const char *synthetic_sid, char *const *forbidden,
		     char *why, size_t n_why)
{
	if (!synthetic_sid || strcmp(r->sid, synthetic_sid) != 0) {
		snprintf(why, n_why, "%s is not the synthetic SID ward-setup.exe recorded", r->sid);
		return -EPERM;
	}
	for (char *const *f = forbidden; f && *f; f++)
		if (win_path_is_within(r->app, *f) || win_path_is_within(r->cwd, *f)) {
			snprintf(why, n_why, "the program or directory is under %s", *f);
			return -EPERM;
		}
	return 0;
}

static int number(const char *s, size_t n, uint32_t *ret)
{
	uint64_t v = 0;

	if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

int win_runner_reply_parse(const char *data, size_t n, WinRunnerReply *ret, char *why,
			   size_t n_why)
{
	memset(ret, 0, sizeof(*ret));
	if (n >= 8 && memcmp(data, "started ", 8) == 0 && number(data + 8, n - 8, &ret->value) == 0) {
		ret->kind = WIN_RUNNER_STARTED;
		return 0;
	}
	if (n >= 5 && memcmp(data, "exit ", 5) == 0 && number(data + 5, n - 5, &ret->value) == 0) {
		ret->kind = WIN_RUNNER_EXIT;
		return 0;
	}
	if (n > 8 && n - 8 < sizeof(ret->why) && memcmp(data, "refused ", 8) == 0) {
		for (size_t i = 8; i < n; i++)
			if (data[i] < 0x20 || data[i] > 0x7e)
				goto bad;
		ret->kind = WIN_RUNNER_REFUSED;
		memcpy(ret->why, data + 8, n - 8);
		return 0;
	}
bad:
	snprintf(why, n_why, "the runner's reply is not 'started PID', 'exit CODE' or 'refused WHY'");
	return -EINVAL;
}

size_t win_runner_reply_format(WinRunnerReplyKind kind, uint32_t value, const char *why,
			       char buf[WIN_RUNNER_REPLY_MAX])
{
	size_t n;

	switch (kind) {
	case WIN_RUNNER_STARTED:
		return (size_t)snprintf(buf, WIN_RUNNER_REPLY_MAX, "started %u", (unsigned)value);
	case WIN_RUNNER_EXIT:
		return (size_t)snprintf(buf, WIN_RUNNER_REPLY_MAX, "exit %u", (unsigned)value);
	case WIN_RUNNER_REFUSED:
		break;
	}
	n = (size_t)snprintf(buf, WIN_RUNNER_REPLY_MAX, "refused %.400s", why && *why ? why : "?");
	for (size_t i = 8; i < n; i++)
		if (buf[i] < 0x20 || buf[i] > 0x7e)
			buf[i] = '?';
	return n;
}
