/* Executing a tool call (mcp-exec.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/path-util.h"
#include "common/safe-path.h"
#include "common/strv.h"
#include "cow/cow-review.h"
#include "mcp/mcp-exec.h"
#include "mcp/mcp-live.h"
#include "mcp/mcp-proc.h"

/* JSON a ward command prints for a program (ward diff --json, the
 * --result file): read whole, up to this much. */
#define MCP_MAX_JSON (4 * 1024 * 1024)

struct McpExec {
	const McpConfig *cfg;
	McpCall *call;
	McpOutcome outcome;
	char **steps[MCP_MAX_STEPS]; /* the ward command lines */
	size_t n_steps, cur;
	bool json_stdout[MCP_MAX_STEPS]; /* the step prints its result on stdout */
	char *result_file;               /* ward run --result */
	McpProc *proc;
	bool cancelled;
};

__attribute__((format(printf, 3, 4))) static int refuse(char **reterr, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(reterr, fmt, ap) < 0)
		*reterr = NULL;
	va_end(ap);
	return *reterr ? r : -ENOMEM;
}

int mcp_resolve_workspace(const char *root, const char *given, char **ret, char **reterr)
{
	_cleanup_free_ char *joined = NULL, *norm = NULL, *real = NULL, *link = NULL,
			    *target = NULL;
	_cleanup_close_ int fd = -EBADF;

	*reterr = NULL;
	if (!given) {
		*ret = strdup(root);
		return *ret ? 0 : -ENOMEM;
	}
	if (path_is_absolute(given)) {
		if (path_normalize(given, &norm) < 0)
			return -ENOMEM;
	} else if (path_join(root, given, &joined) < 0 || path_normalize(joined, &norm) < 0)
		return -ENOMEM;
	/* Lexically first (a clear message for "../x"), then for real: a
	 * symlink beneath the root that leads out of it is not followed
	 * unless only the system could have made it, and what it resolves
	 * to must still be beneath the root. */
	if (!path_is_beneath(norm, root))
		return refuse(reterr, -EPERM,
			      "Refused: the workspace %s is outside this server's workspace root %s "
			      "(set by the operator with ward mcp -w)",
			      norm, root);
	fd = path_open_trusted(norm, &real, &link, &target);
	if (fd == -ELOOP)
		return refuse(reterr, -EPERM,
			      "Refused: the workspace path goes through the symlink %s -> %s, which "
			      "ward does not follow",
			      link ? link : "?", target ? target : "?");
	if (fd < 0)
		return refuse(reterr, -EPERM, "Refused: the workspace %s: %s", norm, strerror(-fd));
	if (!path_is_beneath(real, root))
		return refuse(reterr, -EPERM,
			      "Refused: the workspace %s is outside this server's workspace root %s",
			      real, root);
	*ret = TAKE_PTR(real);
	return 0;
}

/* May the client use session @id? Only one of a workspace beneath the
 * root; with --cow only a copy-on-write one. */
static int check_session(const McpConfig *cfg, const char *id, char **reterr)
{
	_cleanup_free_ char *state = NULL;
	CowSession *s = NULL;
	int r;

	if ((r = ward_state_dir(&state)) < 0)
		return refuse(reterr, -EPERM, "Refused: no state directory: %s", strerror(-r));
	r = cow_session_open_unlocked(state, id, &s);
	if (r == -ENOENT)
		return refuse(reterr, -EPERM, "Refused: there is no session %s", id);
	if (r < 0)
		return refuse(reterr, -EPERM, "Refused: session %s: %s", id, strerror(-r));
	if (!path_is_beneath(cow_session_workspace(s), cfg->root))
		r = refuse(reterr, -EPERM,
			   "Refused: session %s belongs to a workspace outside this server's "
			   "workspace root %s",
			   id, cfg->root);
	else if (cfg->force_cow && !cow_session_is_cow(s))
		r = refuse(reterr, -EPERM,
			   "Refused: session %s is not copy-on-write, and this server runs every "
			   "command copy-on-write (ward mcp --cow)",
			   id);
	cow_session_free(s);
	return r;
}

static int push(char ***l, const char *s)
{
	return strv_extend(l, s);
}

/* ward SUBCOMMAND ID [OPTIONS] -- PATHS */
static int review_step(McpExec *e, const char *sub, const char *opt)
{
	char ***l = &e->steps[e->n_steps];

	if (push(l, "ward") < 0 || push(l, sub) < 0 || push(l, e->call->session) < 0)
		return -ENOMEM;
	if (opt && push(l, opt) < 0)
		return -ENOMEM;
	if (strcmp(sub, "discard") != 0 && e->cfg->policy_file &&
	    (push(l, "-p") < 0 || push(l, e->cfg->policy_file) < 0))
		return -ENOMEM;
	if (e->call->paths && (push(l, "--") < 0 || strv_extend_strv(l, e->call->paths) < 0))
		return -ENOMEM;
	e->json_stdout[e->n_steps] = opt && strcmp(opt, "--json") == 0;
	e->n_steps++;
	return 0;
}

static int plan_run(McpExec *e, const char *tmpdir, char **reterr)
{
	static unsigned counter;
	const McpCall *c = e->call;
	_cleanup_free_ char *ws = NULL;
	char ***l = &e->steps[0];
	char t[32];
	int r;

	if (c->session && (r = check_session(e->cfg, c->session, reterr)) < 0)
		return r;
	if ((c->workspace || !c->session) &&
	    (r = mcp_resolve_workspace(e->cfg->root, c->workspace, &ws, reterr)) < 0)
		return r;
	if (asprintf(&e->result_file, "%s/result-%u.json", tmpdir, ++counter) < 0) {
		e->result_file = NULL;
		return -ENOMEM;
	}
	snprintf(t, sizeof(t), "%" PRIu64, c->timeout_s);
	if (push(l, "ward") < 0 || push(l, "run") < 0 ||
	    strv_extend_strv(l, e->cfg->run_flags) < 0 || push(l, "--timeout") < 0 ||
	    push(l, t) < 0 || push(l, "--result") < 0 || push(l, e->result_file) < 0)
		return -ENOMEM;
	if (ws && (push(l, "-w") < 0 || push(l, ws) < 0))
		return -ENOMEM;
	if (c->cow && push(l, "--cow") < 0)
		return -ENOMEM;
	if (c->session && (push(l, "--session") < 0 || push(l, c->session) < 0))
		return -ENOMEM;
	if (push(l, "--") < 0 || strv_extend_strv(l, c->argv) < 0)
		return -ENOMEM;
	e->n_steps = 1;
	return 0;
}

/* --session: ward exec ID --timeout T --result FILE [-C DIR] -- ARGV, in the
 * server's live session (mcp-live.h). */
static int plan_live_run(McpExec *e, const char *tmpdir, char **reterr)
{
	static unsigned counter;
	const McpCall *c = e->call;
	_cleanup_free_ char *ws = NULL;
	char ***l = &e->steps[0];
	char t[32];
	int r;

	if (c->session)
		return refuse(reterr, -EPERM,
			      "Refused: this server runs every command in its own live session "
			      "(ward mcp --session); 'session' is not allowed");
	if (c->cow && !e->cfg->force_cow)
		return refuse(reterr, -EPERM,
			      "Refused: this server runs every command in one live session "
			      "(ward mcp --session) that is not copy-on-write; 'cow' is not allowed");
	if (c->workspace && (r = mcp_resolve_workspace(e->cfg->root, c->workspace, &ws, reterr)) < 0)
		return r;
	if ((r = mcp_live_ensure(e->cfg, reterr)) < 0)
		return r;
	if (asprintf(&e->result_file, "%s/result-live-%u.json", tmpdir, ++counter) < 0) {
		e->result_file = NULL;
		return -ENOMEM;
	}
	snprintf(t, sizeof(t), "%" PRIu64, c->timeout_s);
	if (push(l, "ward") < 0 || push(l, "exec") < 0 || push(l, e->cfg->live->id) < 0 ||
	    push(l, "--timeout") < 0 || push(l, t) < 0 || push(l, "--result") < 0 ||
	    push(l, e->result_file) < 0)
		return -ENOMEM;
	if (ws && (push(l, "-C") < 0 || push(l, ws) < 0))
		return -ENOMEM;
	if (c->background && push(l, "--background") < 0)
		return -ENOMEM;
	if (push(l, "--") < 0)
		return -ENOMEM;
	/* A background command gets /dev/null on 0-2 inside: the pipes this
	 * call reads would otherwise stay open as long as it runs, and the
	 * call would never end. */
	if (c->background && (push(l, "sh") < 0 || push(l, "-c") < 0 ||
			      push(l, "exec \"$@\" </dev/null >/dev/null 2>&1") < 0 ||
			      push(l, "sh") < 0))
		return -ENOMEM;
	if (strv_extend_strv(l, c->argv) < 0)
		return -ENOMEM;
	e->n_steps = 1;
	return 0;
}

static int plan(McpExec *e, const char *tmpdir, char **reterr)
{
	int r;

	switch (e->call->tool) {
	case MCP_TOOL_RUN_COMMAND:
		if (e->cfg->live)
			return plan_live_run(e, tmpdir, reterr);
		return plan_run(e, tmpdir, reterr);
	case MCP_TOOL_SESSION_DIFF:
		if ((r = check_session(e->cfg, e->call->session, reterr)) < 0)
			return r;
		if ((r = review_step(e, "diff", "--json")) < 0)
			return r;
		return review_step(e, "diff", "--color=never");
	case MCP_TOOL_SESSION_APPLY:
		if ((r = check_session(e->cfg, e->call->session, reterr)) < 0)
			return r;
		return review_step(e, "apply", "--json");
	case MCP_TOOL_SESSION_DISCARD:
		if ((r = check_session(e->cfg, e->call->session, reterr)) < 0)
			return r;
		return review_step(e, "discard", NULL);
	case _MCP_TOOL_MAX:
	case _MCP_TOOL_INVALID:
		break;
	}
	return -EINVAL;
}

static cJSON *parse_json(const char *text, size_t len)
{
	return text && len ? cJSON_ParseWithLength(text, len) : NULL;
}

static cJSON *read_result_file(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	if (fd < 0)
		return NULL;
	buf = malloc(MCP_MAX_JSON);
	if (!buf)
		return NULL;
	for (;;) {
		ssize_t k = read(fd, buf + len, MCP_MAX_JSON - len);
		if (k <= 0)
			break;
		len += (size_t)k;
		if (len == MCP_MAX_JSON)
			return NULL;
	}
	return parse_json(buf, len);
}

/* Start step e->cur; on failure the call ends with what it has. */
static void start_step(McpExec *e)
{
	McpStep *st = &e->outcome.steps[e->cur];
	bool json = e->json_stdout[e->cur];
	int r;

	e->outcome.n_steps = e->cur + 1;
	/* JSON for a program is kept whole (up to MCP_MAX_JSON); text for
	 * the model is cut at the server's limit. */
	if (mcp_capture_init(&st->out, json ? MCP_MAX_JSON : e->cfg->max_output) < 0 ||
	    mcp_capture_init(&st->err, e->cfg->max_output) < 0)
		return;
	r = mcp_proc_spawn(e->cfg->ward_exe, e->steps[e->cur], &st->out, &st->err, &e->proc);
	if (r < 0) {
		free(e->outcome.refusal);
		if (asprintf(&e->outcome.refusal, "ward could not start: %s", strerror(-r)) < 0)
			e->outcome.refusal = NULL;
		return;
	}
	st->ran = true;
}

static void step_finished(McpExec *e, int exit_code)
{
	McpStep *st = &e->outcome.steps[e->cur];

	st->exit_code = exit_code;
	e->proc = mcp_proc_free(e->proc);
	if (e->json_stdout[e->cur]) {
		_cleanup_free_ char *t = NULL;
		/* The capture holds it whole unless it was larger than
		 * MCP_MAX_JSON, and then it does not parse. */
		if (!mcp_capture_truncated(&st->out) && (t = malloc(st->out.total + 1))) {
			memcpy(t, st->out.head, st->out.head_len);
			for (size_t i = 0; i < st->out.tail_len; i++)
				t[st->out.head_len + i] = st->out.tail[i];
			st->result = parse_json(t, (size_t)st->out.total);
		}
	} else if (e->result_file) {
		st->result = read_result_file(e->result_file);
		(void)unlink(e->result_file);
	}
	/* A failed first step (no such session, ...) ends the call. */
	if (exit_code != 0 && !(e->call->tool == MCP_TOOL_SESSION_APPLY && exit_code == 3))
		e->cur = e->n_steps;
	else
		e->cur++;
	if (e->cur < e->n_steps && !e->cancelled)
		start_step(e);
}

int mcp_exec_start(const McpConfig *cfg, const char *tmpdir, McpCall *call, McpExec **ret)
{
	McpExec *e = calloc(1, sizeof(*e));
	char *why = NULL;
	int r;

	if (!e) {
		mcp_call_free(call);
		return -ENOMEM;
	}
	e->cfg = cfg;
	e->call = call;
	r = plan(e, tmpdir, &why);
	if (r == -ENOMEM) {
		mcp_exec_free(e);
		return r;
	}
	if (r < 0) {
		e->outcome.refusal = why ? why : strdup("Refused");
		e->cur = e->n_steps;
	} else
		start_step(e);
	*ret = e;
	return 0;
}

bool mcp_exec_done(const McpExec *e)
{
	return !e->proc;
}

size_t mcp_exec_pollfds(const McpExec *e, struct pollfd *fds)
{
	return e->proc ? mcp_proc_pollfds(e->proc, fds) : 0;
}

void mcp_exec_events(McpExec *e, const struct pollfd *fds, size_t n)
{
	int code;

	if (e->proc && mcp_proc_events(e->proc, fds, n, &code) > 0)
		step_finished(e, code);
}

void mcp_exec_cancel(McpExec *e)
{
	e->cancelled = true;
	if (e->proc)
		mcp_proc_signal(e->proc, SIGTERM);
}

bool mcp_exec_cancelled(const McpExec *e)
{
	return e->cancelled;
}

const McpCall *mcp_exec_call(const McpExec *e)
{
	return e->call;
}

const McpOutcome *mcp_exec_outcome(const McpExec *e)
{
	return &e->outcome;
}

McpExec *mcp_exec_free(McpExec *e)
{
	if (!e)
		return NULL;
	mcp_proc_free(e->proc);
	mcp_outcome_done(&e->outcome);
	for (size_t i = 0; i < MCP_MAX_STEPS; i++)
		strv_free(e->steps[i]);
	if (e->result_file)
		(void)unlink(e->result_file);
	free(e->result_file);
	mcp_call_free(e->call);
	free(e);
	return NULL;
}
