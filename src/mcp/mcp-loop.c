/* The server's poll loop (mcp-loop.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/fd-write.h"
#include "mcp/jsonrpc.h"
#include "mcp/mcp-exec.h"
#include "mcp/mcp-loop.h"
#include "mcp/mcp-live.h"
#include "mcp/mcp-server.h"

/* Calls waiting for a slot; beyond this a call is answered with an error. */
#define MCP_MAX_PENDING 64

typedef struct Loop {
	const McpConfig *cfg;
	McpServer server;
	int out_fd;
	char tmpdir[64];
	McpExec **active;       /* cfg->max_parallel slots */
	McpCall *pending[MCP_MAX_PENDING];
	size_t n_pending;
	char *buf;              /* the line being read */
	size_t len;
	bool skipping;          /* discarding the rest of an oversized line */
	bool have_tmpdir;
} Loop;

/* Send @msg (taken). */
static int send_msg(Loop *l, cJSON *msg)
{
	_cleanup_free_ char *line = msg ? jsonrpc_print_line(msg) : NULL;

	cJSON_Delete(msg);
	if (!line)
		return -ENOMEM;
	return fd_write_all(l->out_fd, line, strlen(line));
}

static int send_error(Loop *l, const cJSON *id, int code, const char *message)
{
	return send_msg(l, jsonrpc_error(id, code, message));
}

static int start_call(Loop *l, McpCall *call)
{
	for (unsigned i = 0; i < l->cfg->max_parallel; i++)
		if (!l->active[i])
			return mcp_exec_start(l->cfg, l->tmpdir, call, &l->active[i]);
	if (l->n_pending == MCP_MAX_PENDING) {
		int r = send_error(l, call->id, JSONRPC_INTERNAL_ERROR,
				   "Server busy: too many tool calls waiting");
		mcp_call_free(call);
		return r;
	}
	l->pending[l->n_pending++] = call;
	return 0;
}

static void cancel(Loop *l, const cJSON *id)
{
	/* The MCP spec: no response to a cancelled request. */
	for (size_t i = 0; i < l->n_pending; i++)
		if (cJSON_Compare(l->pending[i]->id, id, true)) {
			mcp_call_free(l->pending[i]);
			memmove(l->pending + i, l->pending + i + 1,
				(l->n_pending - i - 1) * sizeof(McpCall *));
			l->n_pending--;
			return;
		}
	for (unsigned i = 0; i < l->cfg->max_parallel; i++)
		if (l->active[i] && cJSON_Compare(mcp_exec_call(l->active[i])->id, id, true))
			mcp_exec_cancel(l->active[i]);
}

static int handle_line(Loop *l, char *line, size_t n)
{
	McpAction a = {};
	int r;

	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	if (n == 0)
		return 0;
	r = mcp_server_handle(&l->server, line, n, &a);
	if (r < 0)
		return r;
	if (a.reply)
		r = send_msg(l, TAKE_PTR(a.reply));
	if (r >= 0 && a.call)
		r = start_call(l, TAKE_PTR(a.call));
	if (r >= 0 && a.cancel)
		cancel(l, a.cancel);
	mcp_action_done(&a);
	return r;
}

/* Read what is there on @fd; handle each complete line. Returns 1 at EOF. */
static int read_input(Loop *l, int fd)
{
	char chunk[65536];
	ssize_t k;
	int r;

	k = read(fd, chunk, sizeof(chunk));
	if (k < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	if (k == 0)
		return 1;
	for (ssize_t i = 0; i < k;) {
		char *nl = memchr(chunk + i, '\n', (size_t)(k - i));
		size_t take = nl ? (size_t)(nl - (chunk + i)) : (size_t)(k - i);

		if (!l->skipping && l->len + take > MCP_MAX_MESSAGE) {
			/* Answer once, then drop bytes up to the next newline:
			 * the message's id is unknowable. */
			l->skipping = true;
			l->len = 0;
			r = send_error(l, NULL, JSONRPC_INVALID_REQUEST,
				       "Invalid Request: message larger than 1048576 bytes");
			if (r < 0)
				return r;
		}
		if (!l->skipping) {
			memcpy(l->buf + l->len, chunk + i, take);
			l->len += take;
		}
		i += (ssize_t)take;
		if (!nl)
			break;
		i++; /* the newline */
		if (l->skipping)
			l->skipping = false;
		else {
			r = handle_line(l, l->buf, l->len);
			l->len = 0;
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int finish(Loop *l, unsigned slot)
{
	McpExec *e = l->active[slot];
	int r = 0;

	if (!mcp_exec_cancelled(e)) {
		cJSON *m = mcp_server_call_done(&l->server, mcp_exec_call(e), mcp_exec_outcome(e));
		r = m ? send_msg(l, m) : send_error(l, mcp_exec_call(e)->id, JSONRPC_INTERNAL_ERROR,
						    "Internal error: out of memory");
	}
	l->active[slot] = mcp_exec_free(e);
	while (r >= 0 && l->n_pending > 0 && !l->active[slot]) {
		McpCall *c = l->pending[0];
		memmove(l->pending, l->pending + 1, (l->n_pending - 1) * sizeof(McpCall *));
		l->n_pending--;
		r = mcp_exec_start(l->cfg, l->tmpdir, c, &l->active[slot]);
	}
	return r;
}

static int loop_run(Loop *l, int in_fd)
{
	size_t max_fds = 1 + (size_t)l->cfg->max_parallel * MCP_EXEC_POLLFDS;
	_cleanup_free_ struct pollfd *fds = calloc(max_fds, sizeof(struct pollfd));
	_cleanup_free_ size_t *first = calloc(l->cfg->max_parallel + 1, sizeof(size_t));
	int r;

	if (!fds || !first)
		return -ENOMEM;
	for (;;) {
		size_t n = 1;
		bool again;

		/* A call refused before it ran is done already, and finishing
		 * one starts the next waiting call, which may be too: answer
		 * them all before waiting for anything. */
		do {
			again = false;
			for (unsigned i = 0; i < l->cfg->max_parallel; i++)
				if (l->active[i] && mcp_exec_done(l->active[i])) {
					if ((r = finish(l, i)) < 0)
						return r;
					again = true;
				}
		} while (again);
		fds[0] = (struct pollfd){ .fd = in_fd, .events = POLLIN };
		for (unsigned i = 0; i < l->cfg->max_parallel; i++) {
			first[i] = n;
			if (l->active[i])
				n += mcp_exec_pollfds(l->active[i], fds + n);
		}
		first[l->cfg->max_parallel] = n;
		if (poll(fds, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (unsigned i = 0; i < l->cfg->max_parallel; i++) {
			if (!l->active[i] || first[i + 1] == first[i])
				continue;
			mcp_exec_events(l->active[i], fds + first[i], first[i + 1] - first[i]);
		}
		if (fds[0].revents) {
			r = read_input(l, in_fd);
			if (r != 0)
				return r > 0 ? 0 : r;
		}
	}
}

static int make_tmpdir(char *buf, size_t n)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");

	/* Private (0700) and ours: the --result files of the runs. */
	snprintf(buf, n, "%s/ward-mcp.XXXXXX", rt && rt[0] == '/' && strlen(rt) < 40 ? rt : "/tmp");
	return mkdtemp(buf) ? 0 : -errno;
}

static void remove_tmpdir(const char *dir)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			(void)unlinkat(dirfd(d), de->d_name, 0);
	(void)rmdir(dir);
}

int mcp_serve(const McpConfig *cfg, int in_fd, int out_fd)
{
	Loop l = { .cfg = cfg, .out_fd = out_fd };
	int r;

	/* A client that stops reading: write() fails with EPIPE, and the
	 * loop ends, instead of ward dying halfway through a message. */
	(void)signal(SIGPIPE, SIG_IGN);
	mcp_server_init(&l.server, cfg);
	l.buf = malloc(MCP_MAX_MESSAGE + 1);
	l.active = calloc(cfg->max_parallel, sizeof(McpExec *));
	if (!l.buf || !l.active) {
		free(l.buf);
		free(l.active);
		return -ENOMEM;
	}
	r = make_tmpdir(l.tmpdir, sizeof(l.tmpdir));
	if (r >= 0) {
		l.have_tmpdir = true;
		r = loop_run(&l, in_fd);
	}
	/* Running calls are not waited for (mcp-loop.h): their `ward run`
	 * sees us gone. */
	for (unsigned i = 0; i < cfg->max_parallel; i++)
		mcp_exec_free(l.active[i]);
	/* --session: the connection ended, so does its session (and every
	 * command still running in it). */
	if (cfg->live)
		mcp_live_stop(cfg);
	for (size_t i = 0; i < l.n_pending; i++)
		mcp_call_free(l.pending[i]);
	if (l.have_tmpdir)
		remove_tmpdir(l.tmpdir);
	free(l.buf);
	free(l.active);
	return r;
}
