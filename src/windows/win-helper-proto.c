/* The privileged helper's request parser and its policy check. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "windows/win-helper-proto.h"
#include "windows/win-path.h"

static const char *const op_names[_WIN_HELPER_OP_MAX] = {
	[WIN_HELPER_GRANT_READ] = "grant-read",
	[WIN_HELPER_GRANT_READ_EXEC] = "grant-read-exec",
	[WIN_HELPER_REVOKE] = "revoke",
};

void win_helper_request_done(WinHelperRequest *r)
{
	free(r->path);
	r->path = NULL;
}

/* The next line of @p (up to @end) as "key value" with the key @key; the
 * value (NUL-terminated in @buf) in @ret. */
static int field(const char **p, const char *end, const char *key, char *buf, size_t n,
		 const char **ret)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t kl = strlen(key), len;

	if (!nl)
		return -EINVAL;
	len = (size_t)(nl - *p);
	if (len >= n || memchr(*p, 0, len))
		return -EINVAL;
	memcpy(buf, *p, len);
	buf[len] = 0;
	*p = nl + 1;
	if (strncmp(buf, key, kl) != 0)
		return -EINVAL;
	if (buf[kl] == 0 && !ret)
		return 0;
	if (buf[kl] != ' ' || !ret || !buf[kl + 1] || buf[kl + 1] == ' ')
		return -EINVAL;
	*ret = buf + kl + 1;
	return 0;
}

/* A run's package SID or synthetic SID; never the SIDs that name every
 * package (ALL APPLICATION PACKAGES S-1-15-2-1, ALL RESTRICTED APPLICATION
 * PACKAGES S-1-15-2-2). */
static bool ward_sid(const char *s)
{
	if (strcmp(s, "S-1-15-2-1") == 0 || strcmp(s, "S-1-15-2-2") == 0)
		return false;
	return strncmp(s, "S-1-15-2-", 9) == 0 || strncmp(s, "S-1-15-3-1024-", 14) == 0;
}

int win_helper_parse(const char *data, size_t n, WinHelperRequest *ret, char *why, size_t n_why)
{
	const char *p = data, *end = data + n, *v;
	char buf[WIN_HELPER_MAX];
	char sid[WIN_SID_STRING_MAX];
	int op = -1;

	memset(ret, 0, sizeof(*ret));
	if (n > WIN_HELPER_MAX) {
		snprintf(why, n_why, "request longer than %d bytes", WIN_HELPER_MAX);
		return -E2BIG;
	}
	if (field(&p, end, "ward-helper 1", buf, sizeof(buf), NULL) < 0) {
		snprintf(why, n_why, "not a ward-helper 1 request");
		return -EINVAL;
	}
	if (field(&p, end, "op", buf, sizeof(buf), &v) < 0)
		goto bad_op;
	for (int i = 0; i < _WIN_HELPER_OP_MAX; i++)
		if (strcmp(v, op_names[i]) == 0)
			op = i;
	if (op < 0)
		goto bad_op;
	ret->op = (WinHelperOp)op;
	if (field(&p, end, "run", buf, sizeof(buf), &v) < 0 || strlen(v) != 16 ||
	    strspn(v, "0123456789abcdef") != 16) {
		snprintf(why, n_why, "line 3: expected 'run' and 16 lower-case hex digits");
		return -EINVAL;
	}
	memcpy(ret->run_id, v, 17);
	if (field(&p, end, "sid", buf, sizeof(buf), &v) < 0 || win_sid_normalize(v, sid) < 0 ||
	    strcmp(v, sid) != 0 || !ward_sid(sid)) {
		snprintf(why, n_why, "line 4: expected 'sid' and a run's package or synthetic SID");
		return -EINVAL;
	}
	memcpy(ret->sid, sid, sizeof(sid));
	if (field(&p, end, "path", buf, sizeof(buf), &v) < 0 ||
	    win_path_normalize(v, &ret->path, NULL) < 0 || strcmp(v, ret->path) != 0) {
		win_helper_request_done(ret);
		snprintf(why, n_why, "line 5: expected 'path' and a normalized absolute path");
		return -EINVAL;
	}
	if (field(&p, end, "end", buf, sizeof(buf), NULL) < 0 || p != end) {
		win_helper_request_done(ret);
		snprintf(why, n_why, "expected 'end' as the last line");
		return -EINVAL;
	}
	return 0;
bad_op:
	snprintf(why, n_why, "line 2: expected 'op' and grant-read, grant-read-exec or revoke");
	return -EINVAL;
}

int win_helper_format(const WinHelperRequest *r, char **ret)
{
	size_t n;
	char *s;

	if (r->op < 0 || r->op >= _WIN_HELPER_OP_MAX || !r->path)
		return -EINVAL;
	n = strlen(r->path) + strlen(r->sid) + 96;
	s = malloc(n);
	if (!s)
		return -ENOMEM;
	snprintf(s, n, "ward-helper 1\nop %s\nrun %s\nsid %s\npath %s\nend\n", op_names[r->op],
		 r->run_id, r->sid, r->path);
	*ret = s;
	return 0;
}

int win_helper_allow(const WinHelperPolicy *p, const WinHelperRequest *r, char *why, size_t n_why)
{
	const WinHelperGrant *g = NULL;

	if (!p->run_id || strcmp(p->run_id, r->run_id) != 0) {
		snprintf(why, n_why, "run %s is not the client's run", r->run_id);
		return -EPERM;
	}
	if (!((p->package_sid && strcmp(p->package_sid, r->sid) == 0) ||
	      (p->synthetic_sid && strcmp(p->synthetic_sid, r->sid) == 0))) {
		snprintf(why, n_why, "%s is not one of the run's SIDs", r->sid);
		return -EPERM;
	}
	for (size_t i = 0; i < p->n_grants && !g; i++)
		if (win_path_equal(p->grants[i].path, r->path))
			g = &p->grants[i];
	if (!g) {
		snprintf(why, n_why, "%s is not a path the run's policy sends to the helper", r->path);
		return -EPERM;
	}
	if (r->op == WIN_HELPER_GRANT_READ_EXEC && !g->exec) {
		snprintf(why, n_why, "%s: the policy grants read, not read-exec", r->path);
		return -EPERM;
	}
	return 0;
}

void win_helper_change(WinHelperOp op, const char *sid, WinHelperChange *ret)
{
	*ret = (WinHelperChange){
		.ace = { .type = WIN_ACE_ALLOW, .flags = WIN_ACE_OI | WIN_ACE_CI,
			 .mask = op == WIN_HELPER_GRANT_READ_EXEC ? WIN_FILE_READ_EXEC : WIN_FILE_READ },
	};
	snprintf(ret->ace.sid, sizeof(ret->ace.sid), "%s", sid);
	ret->remove[0] = ret->ace.sid;
	ret->chg.remove_sids = ret->remove;
	if (op != WIN_HELPER_REVOKE) {
		ret->chg.add = &ret->ace;
		ret->chg.n_add = 1;
	}
}
