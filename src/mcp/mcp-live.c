/* The live session of `ward mcp --session` (mcp-live.h). */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/strv.h"
#include "mcp/mcp-live.h"
#include "mcp/mcp-proc.h"
#include "session/session-client.h"
#include "session/session-paths.h"

/* Run ward with @argv to its end; its exit code, its output in @out, @err. */
static int run_ward(const McpConfig *cfg, char **argv, McpCapture *out, McpCapture *err)
{
	McpProc *p = NULL;
	int r, code = -1;

	if (mcp_capture_init(out, 4096) < 0 || mcp_capture_init(err, 8192) < 0)
		return -ENOMEM;
	if ((r = mcp_proc_spawn(cfg->ward_exe, argv, out, err, &p)) < 0)
		return r;
	for (;;) {
		struct pollfd fds[MCP_PROC_POLLFDS];
		size_t n = mcp_proc_pollfds(p, fds);
		if (poll(fds, n, -1) < 0 && errno != EINTR)
			break;
		if (mcp_proc_events(p, fds, n, &code) == 1)
			break;
	}
	mcp_proc_free(p);
	return code;
}

static bool live_up(const char *id)
{
	_cleanup_free_ char *state = NULL;
	SessionRequest ps = { .kind = SESSION_REQ_PS };
	SessionReplyHead h;
	char *text = NULL;
	bool up;
	int fd;

	if (!id[0] || ward_state_dir(&state) < 0 || session_client_connect(state, id, &fd) < 0)
		return false;
	/* A request it answers at once (a silent connection would hold the
	 * supervisor up to its read bound). */
	up = session_client_send(fd, &ps, NULL, 0) == 0 && session_client_reply(fd, &h, &text) == 0;
	free(text);
	close(fd);
	return up;
}

int mcp_live_ensure(const McpConfig *cfg, char **reterr)
{
	McpLive *lv = cfg->live;
	McpCapture out = {}, err = {};
	_cleanup_strv_ char **argv = NULL;
	_cleanup_free_ char *text = NULL, *etext = NULL;
	char owner[32], t[32];
	int code;

	*reterr = NULL;
	if (live_up(lv->id))
		return 0;
	lv->id[0] = 0;
	snprintf(owner, sizeof(owner), "%d", (int)getpid());
	snprintf(t, sizeof(t), "%" PRIu64, cfg->timeout_s);
	if (strv_extend(&argv, "ward") < 0 || strv_extend(&argv, "session") < 0 ||
	    strv_extend(&argv, "new") < 0 || strv_extend(&argv, "--live") < 0 ||
	    strv_extend(&argv, "--owner") < 0 || strv_extend(&argv, owner) < 0 ||
	    strv_extend_strv(&argv, cfg->run_flags) < 0 || strv_extend(&argv, "--timeout") < 0 ||
	    strv_extend(&argv, t) < 0 || strv_extend(&argv, "-w") < 0 ||
	    strv_extend(&argv, cfg->root) < 0 || (cfg->force_cow && strv_extend(&argv, "--cow") < 0))
		return -ENOMEM;
	code = run_ward(cfg, argv, &out, &err);
	text = mcp_capture_text(&out);
	etext = mcp_capture_text(&err);
	mcp_capture_done(&out);
	mcp_capture_done(&err);
	if (!text || !etext)
		return -ENOMEM;
	text[strcspn(text, "\n")] = 0;
	if (code != 0 || !session_id_valid(text)) {
		if (asprintf(reterr, "The server's live session did not start (exit %d): %s", code,
			     etext) < 0)
			*reterr = NULL;
		return *reterr ? -EPERM : -ENOMEM;
	}
	snprintf(lv->id, sizeof(lv->id), "%s", text);
	return 0;
}

void mcp_live_stop(const McpConfig *cfg)
{
	McpCapture out = {}, err = {};
	char *argv[] = { "ward", "session", "stop", cfg->live->id, NULL };

	if (!cfg->live->id[0])
		return;
	(void)run_ward(cfg, argv, &out, &err);
	mcp_capture_done(&out);
	mcp_capture_done(&err);
	cfg->live->id[0] = 0;
}
