/* The control socket's wire format (session-proto.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/session-proto.h"

static int bad(char *err, size_t errlen, const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", why);
	return -EBADMSG;
}

void session_request_done(SessionRequest *r)
{
	free(r->argv);
	free(r->env);
	free(r->extra);
	*r = (SessionRequest){};
}

/* @n strings from *@p (below @end) into a new NULL-terminated array. */
static int take(const char **p, const char *end, uint32_t n, char ***ret)
{
	char **v = calloc((size_t)n + 1, sizeof(char *));

	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const char *z = memchr(*p, 0, (size_t)(end - *p));
		if (!z) {
			free(v);
			return -EBADMSG;
		}
		v[i] = (char *)*p;
		*p = z + 1;
	}
	*ret = v;
	return 0;
}

int session_request_parse(const char *buf, size_t n, SessionRequest *ret, char *err, size_t errlen)
{
	SessionReqHead h;
	SessionRequest r = {};
	const char *p, *end, *z;
	int k;

	*ret = (SessionRequest){};
	if (n < sizeof(h))
		return bad(err, errlen, "a short request");
	if (n > sizeof(h) + SESSION_REQ_MAX)
		return bad(err, errlen, "a request larger than the limit");
	memcpy(&h, buf, sizeof(h));
	if (h.magic != SESSION_PROTO_MAGIC)
		return bad(err, errlen, "not a ward session request (another version of ward?)");
	if (h.kind == 0 || h.kind >= _SESSION_REQ_MAX)
		return bad(err, errlen, "an unknown request");
	if (h.flags & ~(uint32_t)_SESSION_REQ_FLAGS_ALL)
		return bad(err, errlen, "unknown request flags");
	if (h.len != n - sizeof(h))
		return bad(err, errlen, "a request whose length does not match");
	if ((uint64_t)h.n_argv + h.n_env + h.n_extra + 1 > SESSION_REQ_STRINGS_MAX)
		return bad(err, errlen, "too many strings");
	if (h.kind == SESSION_REQ_EXEC && h.n_argv == 0)
		return bad(err, errlen, "an exec without a command");
	if (h.kind != SESSION_REQ_EXEC && (h.n_argv || h.n_env || h.n_extra))
		return bad(err, errlen, "strings in a request that takes none");
	if (h.kind == SESSION_REQ_SIGNAL && !session_signal_allowed((int)h.value))
		return bad(err, errlen, "a signal that cannot be passed on");
	p = buf + sizeof(h);
	end = buf + n;
	r.kind = (SessionReqKind)h.kind;
	r.flags = h.flags;
	r.value = h.value;
	if (h.kind == SESSION_REQ_EXEC) {
		z = memchr(p, 0, (size_t)(end - p));
		if (!z)
			return bad(err, errlen, "an unterminated cwd");
		r.cwd = *p ? p : NULL;
		p = z + 1;
		if ((k = take(&p, end, h.n_argv, &r.argv)) < 0 ||
		    (k = take(&p, end, h.n_env, &r.env)) < 0 ||
		    (k = take(&p, end, h.n_extra, &r.extra)) < 0) {
			session_request_done(&r);
			return k == -ENOMEM ? -ENOMEM : bad(err, errlen, "an unterminated string");
		}
		if (!r.argv[0][0]) {
			session_request_done(&r);
			return bad(err, errlen, "an empty command name");
		}
		for (char **e = r.extra; *e; e++)
			if (!strchr(*e, '=') || **e == '=') {
				session_request_done(&r);
				return bad(err, errlen, "an --env entry that is not NAME=VALUE");
			}
	}
	if (p != end) {
		session_request_done(&r);
		return bad(err, errlen, "trailing bytes after the request");
	}
	*ret = r;
	return 0;
}

static size_t strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

int session_request_encode(const SessionRequest *r, char **ret_buf, size_t *ret_len)
{
	SessionReqHead h = { .magic = SESSION_PROTO_MAGIC, .kind = r->kind, .flags = r->flags,
			     .value = r->value };
	size_t len = 0, off;
	char *buf;

	if (r->kind == SESSION_REQ_EXEC) {
		char *const *lists[] = { r->argv, r->env, r->extra };
		len = strlen(r->cwd ? r->cwd : "") + 1;
		for (size_t l = 0; l < 3; l++)
			for (size_t i = 0; lists[l] && lists[l][i]; i++) {
				len += strlen(lists[l][i]) + 1;
				if (len > SESSION_REQ_MAX)
					return -E2BIG;
			}
		h.n_argv = (uint32_t)strv_len(r->argv);
		h.n_env = (uint32_t)strv_len(r->env);
		h.n_extra = (uint32_t)strv_len(r->extra);
		if ((uint64_t)h.n_argv + h.n_env + h.n_extra + 1 > SESSION_REQ_STRINGS_MAX)
			return -E2BIG;
	}
	if (len > SESSION_REQ_MAX)
		return -E2BIG;
	h.len = (uint32_t)len;
	buf = malloc(sizeof(h) + len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	off = sizeof(h);
	if (r->kind == SESSION_REQ_EXEC) {
		char *const *lists[] = { r->argv, r->env, r->extra };
		const char *cwd = r->cwd ? r->cwd : "";
		memcpy(buf + off, cwd, strlen(cwd) + 1);
		off += strlen(cwd) + 1;
		for (size_t l = 0; l < 3; l++)
			for (size_t i = 0; lists[l] && lists[l][i]; i++) {
				size_t k = strlen(lists[l][i]) + 1;
				memcpy(buf + off, lists[l][i], k);
				off += k;
			}
	}
	*ret_buf = buf;
	*ret_len = off;
	return 0;
}

bool session_signal_allowed(int sig)
{
	switch (sig) {
	case SIGINT:
	case SIGTERM:
	case SIGHUP:
	case SIGQUIT:
	case SIGCONT:
		return true;
	default:
		return false;
	}
}
