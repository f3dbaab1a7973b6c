/* The supervisor side of a live session (session-server.h). One process,
 * one poll loop, no threads: the control socket, the connections of the
 * `ward exec` clients whose commands run, pid 1's socket (the commands'
 * starts and ends), the commands' pidfds (a command killed from here
 * reports nothing), the owner, ward's own signals, the timers. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "common/macro.h"
#include "common/strv.h"
#include "common/time-util.h"
#include "policy/env-filter.h"
#include "run/run-result.h"
#include "linux/landlock.h"
#include "linux/quarantine.h"
#include "probe/tiers.h"
#include "session/session-net.h"
#include "session/session-proto.h"
#include "session/session-server.h"
#include "vm/vm-warm.h"
#include "ward/ward.h"

#define CMDS_MAX 64
/* Connections accepted whose request has not come yet: each waits in the
 * loop's poll (never in a blocking read), the oldest dropped when full or
 * after PENDING_MS, so a silent client delays no other. */
#define PENDING_MAX 16
#define PENDING_MS 10000

typedef struct Cmd {
	bool used, started, background, want_result, timed_out, client_gone, stopped;
	uint32_t id;
	int conn;   /* the client's connection; -1 once it is gone or replied to */
	int pidfd;  /* the command's pid 1 (its own pid namespace); -1 until started
		     * and at tier 3 */
	int res;    /* tier 3: the relay's report, readable at the end (vm-warm.h); else -1 */
	bool guest; /* tier 3: runs in the session's VM */
	uint64_t start_ms, deadline_ms;
	char **argv;
	char *cwd;
	SessionNet net; /* its refusals and network counters (session-net.h) */
} Cmd;

typedef struct Server {
	const SessionServerConfig *cfg;
	const SandboxSession *s;
	Cmd cmds[CMDS_MAX];
	uint32_t next_id;
	uint64_t last_activity_ms, idle_ms;
	bool stop;
	char policy_hash[65]; /* the policy's, for each start event: hashed once */
	int stop_conn[8];
	size_t n_stop;
	int pending[PENDING_MAX];
	uint64_t pending_since[PENDING_MAX];
	uint64_t pending_seq[PENDING_MAX], next_seq; /* the order they came in */
	char **not_held, **partly_held; /* the tier table's gaps, as a cold run's result */
	int spare_sock, spare_pidfd; /* pid 1's spare, offered (SANDBOX_EV_SPARE); -1: none */
	char see[PATH_MAX + 64];        /* where every connection is (the refusals' line) */
	bool guest_dead;                /* tier 3: the VM stopped or broke the protocol */
} Server;

static void reply(int conn, SessionReplyKind kind, int code, const char *text)
{
	size_t len = text ? strlen(text) : 0;
	SessionReplyHead h = { .magic = SESSION_REPLY_MAGIC, .kind = kind, .code = code };
	_cleanup_free_ char *buf = NULL;

	if (conn < 0)
		return;
	if (len > SESSION_REPLY_MAX)
		len = SESSION_REPLY_MAX;
	h.len = (uint32_t)len;
	buf = malloc(sizeof(h) + len);
	if (!buf)
		return;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), text ? text : "", len);
	(void)send(conn, buf, sizeof(h) + len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* A reply carrying one descriptor (the command's pty master). */
static void reply_fd(int conn, SessionReplyKind kind, int fd)
{
	SessionReplyHead h = { .magic = SESSION_REPLY_MAGIC, .kind = kind };
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = {};
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			     .msg_controllen = sizeof(u.b) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	if (conn < 0)
		return;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	(void)sendmsg(conn, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void cmd_free(Cmd *c)
{
	if (c->conn >= 0)
		close(c->conn);
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->res >= 0)
		close(c->res);
	strv_free(c->argv);
	free(c->cwd);
	session_net_done(&c->net);
	*c = (Cmd){ .conn = -1, .pidfd = -1, .res = -1 };
}

static Cmd *cmd_find(Server *srv, uint32_t id)
{
	for (size_t i = 0; i < CMDS_MAX; i++)
		if (srv->cmds[i].used && srv->cmds[i].id == id)
			return &srv->cmds[i];
	return NULL;
}

static void audit(Server *srv, const char *event, cJSON *fields)
{
	if (!fields)
		return;
	if (!srv->s->audit) {
		cJSON_Delete(fields);
		return;
	}
	(void)audit_write(srv->s->audit, event, fields);
}

/* The proxy's refusals reported so far, each to every command running
 * now (session-net.h). The proxy reports a refusal before it answers the
 * client (proxy.h, report_every), so a command that ended finds its own
 * here when its end is handled. */
static void drain_reports(Server *srv)
{
	ProxyRefusal recs[PROXY_REPORT_DISTINCT + 1];
	size_t n;

	if (srv->s->report_rd < 0)
		return;
	while ((n = proxy_refusals_read(srv->s->report_rd, recs, ELEMENTSOF(recs))) > 0) {
		for (size_t i = 0; i < CMDS_MAX; i++)
			for (size_t k = 0; srv->cmds[i].used && k < n; k++)
				session_net_add(&srv->cmds[i].net, &recs[k]);
		if (n < ELEMENTSOF(recs))
			break;
	}
}

/* The line on the client's stderr after a command's check of protected
 * paths moved something (or failed): quarantine_check() wrote the details
 * to the session's log and the audit log. */
static bool quarantine_note(const Server *srv, int r, char *buf, size_t n)
{
	const QuarantineInput *q = srv->s->quarantine;

	if (r > 0)
		snprintf(buf, n,
			 "Made during the command under protected names: %d path%s, moved to "
			 "'%s/quarantine/%s' (the audit log lists each)",
			 r, r == 1 ? "" : "s", q->state_dir, q->run_id);
	else if (r < 0)
		snprintf(buf, n,
			 "Could not check '%s' for what the command made under protected names "
			 "(%s). Treat the workspace as untrusted until it is checked.",
			 q->workspace, strerror(-r));
	return r != 0;
}

/* The tier table's gaps on this kernel (probe/tiers.h), as a cold run's
 * result and start event have them. */
static char **tier_gaps(int tier, TierHold which)
{
	int abi = landlock_abi_version();
	cJSON *g = tier_gaps_json(tier, abi < 0 ? 0 : abi, which);
	const cJSON *it;
	char **l = NULL;

	cJSON_ArrayForEach(it, g)
	if (cJSON_IsString(it) && strv_extend(&l, it->valuestring) < 0)
		break;
	cJSON_Delete(g);
	return l;
}

/* The command ended (or never started): its result object, its `exit`
 * event, the client's reply, exactly as `ward run` makes them. */
static void cmd_finish(Server *srv, Cmd *c, int wstatus, const WardError *err, int err_exit)
{
	RunResult rr = { .status = -1, .tier = srv->cfg->tier, .cow = srv->cfg->cow };
	RunOutcome o = { .result = &rr, .error = err, .session_id = srv->cfg->session_id,
			 .argv = c->argv, .workspace = srv->s->workspace };
	cJSON *obj;
	_cleanup_free_ char *text = NULL;
	_cleanup_cjson_ cJSON *facts = NULL;

	snprintf(rr.session_id, sizeof(rr.session_id), "%s", srv->cfg->session_id);
	rr.degraded = (char **)srv->s->degraded;
	rr.not_held = srv->not_held;
	rr.partly_held = srv->partly_held;
	/* What it made under protected names, moved out before anyone is
	 * told it ended (a cold run's after-run check, quarantine.h). */
	int quarantined = 0;
	if (c->started && !c->stopped && srv->s->quarantine) {
		quarantined = quarantine_check(srv->s->quarantine);
		if (quarantined > 0)
			rr.quarantined = (unsigned)quarantined;
		rr.protected_check_failed = quarantined < 0;
	}
	/* What the proxy refused and the namespace counted while it ran. */
	drain_reports(srv);
	if (c->started) {
		const cJSON *v;
		facts = session_net_facts(&c->net, srv->s->netstat_fds);
		o.facts = facts;
		v = facts ? cJSON_GetObjectItemCaseSensitive(facts, "net_refused") : NULL;
		rr.net_refused = (unsigned)cJSON_GetArraySize(v);
	}
	rr.duration_ms = monotonic_ms() - c->start_ms;
	rr.timed_out = c->timed_out;
	rr.parent_died = c->client_gone && !c->background;
	if (err) {
		rr.exit_code = err_exit;
	} else if (c->timed_out) {
		rr.started = true;
		rr.signal = SIGKILL;
		rr.exit_code = WARD_EXIT_TIMEOUT;
	} else if (wstatus < 0) { /* killed from here: stop, a gone client */
		rr.started = true;
		rr.signal = SIGKILL;
		rr.exit_code = WARD_EXIT_SIGNAL_BASE + SIGKILL;
	} else if (WIFEXITED(wstatus)) {
		rr.started = true;
		rr.status = WEXITSTATUS(wstatus);
		rr.exit_code = rr.status;
	} else {
		rr.started = true;
		rr.signal = WTERMSIG(wstatus);
		rr.exit_code = WARD_EXIT_SIGNAL_BASE + rr.signal;
	}
	obj = run_event_exit(&o);
	if (obj) {
		cJSON_AddNumberToObject(obj, "exec_id", c->id);
		cJSON_AddBoolToObject(obj, "background", c->background);
	}
	audit(srv, err ? "error" : "exit", obj);
	if (c->conn >= 0 && !c->background) {
		char note[4096];
		if (c->started && session_net_line(&c->net, srv->see, note, sizeof(note)) == 0)
			reply(c->conn, SESSION_REP_NOTE, 0, note);
		if (quarantine_note(srv, quarantined, note, sizeof(note)))
			reply(c->conn, SESSION_REP_NOTE, 0, note);
		if (c->want_result) {
			obj = run_result_object(&o);
			if (obj) {
				cJSON_AddNumberToObject(obj, "exec_id", c->id);
				text = cJSON_PrintUnformatted(obj);
				cJSON_Delete(obj);
			}
		}
		if (err) {
			char line[512];
			run_error_message(err, line, sizeof(line));
			if (!c->want_result) {
				free(text);
				text = strdup(line);
			}
			reply(c->conn, SESSION_REP_ERROR, rr.exit_code, text ? text : line);
		} else
			reply(c->conn, SESSION_REP_EXIT, rr.exit_code, text);
	}
	srv->last_activity_ms = monotonic_ms();
	cmd_free(c);
}

static void cmd_fail(Server *srv, Cmd *c, const char *step, int error, int exit_code,
		     const char *detail)
{
	WardError e = {};

	(void)ward_error_set(&e, step, error, "%s", detail ? detail : "");
	cmd_finish(srv, c, -1, &e, exit_code);
}

/* Anything a directory or an O_PATH descriptor reaches, or a writable
 * file on fd 1 or 2 (truncate, F_SETFL): the `ward exec` client replaces
 * these (stdio-relay.h) before it sends; refuse what was not. *@ret_plain:
 * each is a pipe, a socket or /dev/null (the spare serves only those). */
static const char *stdio_refused(const int fds[3], bool *ret_plain)
{
	static char why[96];

	*ret_plain = true;
	for (int i = 0; i < 3; i++) {
		struct stat st;
		int fl = fcntl(fds[i], F_GETFL);
		if (fl < 0 || fstat(fds[i], &st) < 0 || (fl & O_PATH) || S_ISDIR(st.st_mode)) {
			*ret_plain = false;
			snprintf(why, sizeof(why), "fd %d is a directory or an O_PATH descriptor", i);
			return why;
		}
		if (S_ISREG(st.st_mode) && (fl & O_ACCMODE) != O_RDONLY) {
			*ret_plain = false;
			snprintf(why, sizeof(why), "fd %d is a writable regular file (send a pipe)", i);
			return why;
		}
		if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode) &&
		    !(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)))
			*ret_plain = false;
	}
	return NULL;
}

/* The command's environment: the client's, filtered by the session's
 * policy as `ward run` filters it; --env may only set a name the policy
 * passes (a request narrows, never widens). */
static char **exec_env(Server *srv, const SessionRequest *rq, char *why, size_t n)
{
	_cleanup_strv_ char **env = run_env_build(srv->s->policy, srv->s->proxy, rq->env, NULL);

	if (!env) {
		snprintf(why, n, "out of memory");
		return NULL;
	}
	STRV_FOREACH(x, rq->extra) {
		char *one[] = { *x, NULL };
		_cleanup_strv_ char **kept = env_filter(srv->s->policy, one, NULL);
		size_t name = strcspn(*x, "=");
		if (!kept || !kept[0] || strcmp(kept[0], *x) != 0) {
			snprintf(why, n,
				 "--env %.*s: the session's policy does not pass this variable (a "
				 "request can only narrow what the session allows)",
				 (int)name, *x);
			return NULL;
		}
		for (size_t k = 0; env[k];) {
			if (strncmp(env[k], *x, name + 1) == 0) {
				free(env[k]);
				memmove(&env[k], &env[k + 1], (strv_length(env + k + 1) + 1) * sizeof(char *));
			} else
				k++;
		}
		if (strv_extend(&env, *x) < 0)
			return NULL;
	}
	return TAKE_PTR(env);
}

/* A refused exec: the reason, and with --result the result object of a
 * run that failed in step "request" (as `ward run` leaves one for a bad
 * command line). */
static void refuse(Server *srv, int conn, const SessionRequest *rq, const char *why)
{
	RunResult rr = { .status = -1, .exit_code = WARD_EXIT_SETUP, .tier = srv->cfg->tier,
			 .cow = srv->cfg->cow, .degraded = (char **)srv->s->degraded };
	WardError e = {};
	RunOutcome o = { .result = &rr, .error = &e, .session_id = srv->cfg->session_id,
			 .argv = rq->argv, .workspace = srv->s->workspace };
	_cleanup_free_ char *text = NULL;

	reply(conn, SESSION_REP_ERROR, WARD_EXIT_SETUP, why);
	if (!(rq->flags & SESSION_EXEC_RESULT))
		return;
	snprintf(rr.session_id, sizeof(rr.session_id), "%s", srv->cfg->session_id);
	(void)ward_error_set(&e, "request", EINVAL, "%s", why);
	cJSON *obj = run_result_object(&o);
	if (obj) {
		text = cJSON_PrintUnformatted(obj);
		cJSON_Delete(obj);
	}
	reply(conn, SESSION_REP_EXIT, WARD_EXIT_SETUP, text);
}

/* The command runs, in the pid namespace whose pid 1 @pidfd is. */
static void cmd_started(Server *srv, Cmd *c, int pidfd)
{
	(void)srv;
	c->started = true;
	c->pidfd = pidfd;
	if (c->background) {
		char id[16];
		snprintf(id, sizeof(id), "%u", c->id);
		reply(c->conn, SESSION_REP_STARTED, (int)c->id, id);
		close(c->conn);
		c->conn = -1;
	} else if (c->client_gone)
		(void)pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
}

static void spare_forget(Server *srv)
{
	if (srv->spare_sock >= 0)
		close(srv->spare_sock);
	if (srv->spare_pidfd >= 0)
		close(srv->spare_pidfd);
	srv->spare_sock = srv->spare_pidfd = -1;
}

/* Pass the command to pid 1, or when it can take it (@plain: fds 0-2
 * pipes, sockets or /dev/null; no pty) to pid 1's spare directly: then
 * *@ret_pidfd is the command's (as a STARTED event's), which
 * cmd_started() takes. A client that relays a terminal
 * (SESSION_EXEC_PTY, a foreground command): the command gets a pty of the
 * sandbox's own, as in a cold run; the terminal itself never enters the
 * sandbox (/dev/null in its place). */
static int exec_send(Server *srv, Cmd *c, char **env, const int fds[3], bool want_pty, bool plain,
		     int *ret_pidfd)
{
	PtyPlan pty = { .term_fd = -1 };
	_cleanup_close_ int null = -EBADF;
	int sent[3] = { fds[0], fds[1], fds[2] };

	*ret_pidfd = -1;

	if (want_pty && !c->background)
		pty_plan_init_fds(&pty, fds);
	if (pty.enabled) {
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0)
			return -errno;
		for (int i = 0; i < 3; i++)
			if (isatty(fds[i]))
				sent[i] = null;
	}
	if (plain && !pty.enabled && srv->spare_sock >= 0) {
		int r = sandbox_session_send(srv->spare_sock, c->id, c->cwd, c->argv, env, sent);
		if (r == -E2BIG) /* not sent: pid 1 would say the same */
			return r;
		if (r == 0)
			*ret_pidfd = TAKE_FD(srv->spare_pidfd);
		else /* never half-used: pid 1 makes the next when this one is gone */
			(void)pidfd_send_signal(srv->spare_pidfd, SIGKILL, NULL, 0);
		spare_forget(srv);
		if (r == 0)
			return 0;
	}
	return sandbox_session_send_tty(srv->s->init_sock, c->id, c->cwd, c->argv, env, sent,
					pty.enabled ? &pty : NULL);
}

/* Tier 3: what the session's VM cannot take (docs/t3.md): a background
 * command (the guest init takes one command at a time), a second command
 * while one runs, any command once the VM is dead. */
static int guest_refused(const Server *srv, const SessionRequest *rq, char *why, size_t n)
{
	if (srv->guest_dead) {
		snprintf(why, n, "the session's VM stopped: stop the session (ward session stop) and "
				 "start another");
		return -EPIPE;
	}
	if (rq->flags & SESSION_EXEC_BACKGROUND) {
		snprintf(why, n, "--background is not available at tier 3: the session's VM runs "
				 "one command at a time (start a dev server in the foreground "
				 "of its own session, or use a tier-2 session)");
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < CMDS_MAX; i++)
		if (srv->cmds[i].used && srv->cmds[i].guest) {
			snprintf(why, n, "busy: a tier-3 session runs one command at a time, and "
					 "exec %u is running",
				 srv->cmds[i].id);
			return -EBUSY;
		}
	return 0;
}

static void handle_exec(Server *srv, int conn, const SessionRequest *rq, int fds[3])
{
	const WardPolicy *pol = srv->s->policy;
	uint64_t timeout = rq->value, max = pol->timeout_s;
	char why[512];
	const char *bad;
	_cleanup_strv_ char **env = NULL;
	_cleanup_free_ char *cwd = NULL;
	Cmd *c = NULL;
	bool plain;
	int r, pidfd = -1;

	if (max && timeout > max) {
		snprintf(why, sizeof(why),
			 "--timeout %llu is longer than the session's limits.timeout_s (%llu): a "
			 "request can only narrow what the session allows",
			 (unsigned long long)timeout, (unsigned long long)max);
		refuse(srv, conn, rq, why);
		return;
	}
	if (!timeout)
		timeout = max;
	if (srv->s->guest && (r = guest_refused(srv, rq, why, sizeof(why))) < 0) {
		refuse(srv, conn, rq, why);
		return;
	}
	if ((bad = stdio_refused(fds, &plain))) {
		snprintf(why, sizeof(why), "refused: %s", bad);
		refuse(srv, conn, rq, why);
		return;
	}
	env = exec_env(srv, rq, why, sizeof(why));
	if (!env) {
		refuse(srv, conn, rq, why);
		return;
	}
	if (!rq->cwd)
		cwd = strdup(srv->s->workspace);
	else if (rq->cwd[0] == '/')
		cwd = strdup(rq->cwd);
	else if (asprintf(&cwd, "%s/%s", srv->s->workspace, rq->cwd) < 0)
		cwd = NULL;
	for (size_t i = 0; i < CMDS_MAX && !c; i++)
		if (!srv->cmds[i].used)
			c = &srv->cmds[i];
	if (!cwd || !c) {
		refuse(srv, conn, rq, c ? "out of memory" : "too many commands running in this session");
		return;
	}
	*c = (Cmd){ .used = true, .id = ++srv->next_id, .conn = -1, .pidfd = -1, .res = -1,
		    .background = rq->flags & SESSION_EXEC_BACKGROUND,
		    .want_result = rq->flags & SESSION_EXEC_RESULT, .start_ms = monotonic_ms() };
	c->deadline_ms = timeout ? c->start_ms + timeout * 1000 : 0;
	drain_reports(srv); /* the earlier commands' refusals are not this one's */
	session_net_begin(&c->net, srv->s->netstat_fds);
	c->argv = strv_copy(rq->argv);
	c->cwd = TAKE_PTR(cwd);
	if (!c->argv) {
		cmd_free(c);
		refuse(srv, conn, rq, "out of memory");
		return;
	}
	c->conn = fcntl(conn, F_DUPFD_CLOEXEC, 3);
	srv->last_activity_ms = c->start_ms;
	/* The command first, its `start` event while it starts: this loop
	 * handles nothing of the command (its end, a signal) before the event
	 * is written, and the event records what the request asked. */
	if (srv->s->guest) {
		/* Tier 3: in the session's VM, through a relay (vm-warm.h). */
		c->guest = true;
		r = vm_warm_exec(srv->s->guest, c->id, c->argv, env, c->cwd, fds, &c->res);
		c->started = r >= 0;
		if (r == -EPIPE) /* the relay is gone: so is the VM's use */
			srv->guest_dead = true;
	} else
		r = exec_send(srv, c, env, fds, rq->flags & SESSION_EXEC_PTY, plain, &pidfd);
	/* The `start` event of a cold run, for this command (the session's
	 * own start event has the sandbox's enforced and degraded lists). */
	if (!srv->policy_hash[0] && policy_hash(pol, srv->policy_hash) < 0)
		snprintf(srv->policy_hash, sizeof(srv->policy_hash), "unknown");
	RunStart st = { .argv = c->argv, .workspace = srv->s->workspace, .tier = srv->cfg->tier,
			.not_held = srv->not_held, .partly_held = srv->partly_held,
			.policy_hash = srv->policy_hash, .policy_sources = pol->sources,
			.network = srv->s->proxy ? "proxy" : "none", .cow = srv->cfg->cow };
	cJSON *ev = run_event_start(&st);
	if (ev) {
		cJSON *deg = cJSON_AddArrayToObject(ev, "degraded");
		for (size_t i = 0; deg && srv->s->degraded && srv->s->degraded[i]; i++)
			cJSON_AddItemToArray(deg, cJSON_CreateString(srv->s->degraded[i]));
		cJSON_AddNumberToObject(ev, "exec_id", c->id);
		cJSON_AddStringToObject(ev, "cwd", c->cwd);
		cJSON_AddBoolToObject(ev, "background", c->background);
		cJSON_AddNumberToObject(ev, "timeout_s", (double)timeout);
	}
	audit(srv, "start", ev);
	if (pidfd >= 0) /* the spare took it: as pid 1's STARTED */
		cmd_started(srv, c, pidfd);
	if (r < 0)
		cmd_fail(srv, c, "session", -r, WARD_EXIT_SETUP,
			 r == -E2BIG ? "the command and its environment are too large"
				     : "could not pass the command to the sandbox");
}

static void handle_ps(Server *srv, int conn, bool json)
{
	cJSON *arr = cJSON_CreateArray();
	_cleanup_free_ char *text = NULL;
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);

	if (!arr || !f) {
		cJSON_Delete(arr);
		if (f)
			fclose(f);
		free(line);
		reply(conn, SESSION_REP_ERROR, 1, "out of memory");
		return;
	}
	if (!json)
		fprintf(f, "%-6s %-8s %s\n", "ID", "AGE", "COMMAND");
	for (size_t i = 0; i < CMDS_MAX; i++) {
		Cmd *c = &srv->cmds[i];
		if (!c->used || !c->background || !c->started)
			continue;
		uint64_t age = (monotonic_ms() - c->start_ms) / 1000;
		cJSON *o = cJSON_CreateObject(), *a;
		cJSON_AddNumberToObject(o, "id", c->id);
		cJSON_AddNumberToObject(o, "age_s", (double)age);
		a = cJSON_AddArrayToObject(o, "argv");
		STRV_FOREACH(x, c->argv)
			cJSON_AddItemToArray(a, cJSON_CreateString(*x));
		cJSON_AddStringToObject(o, "cwd", c->cwd);
		cJSON_AddItemToArray(arr, o);
		if (!json) {
			char agebuf[24];
			snprintf(agebuf, sizeof(agebuf), "%llus", (unsigned long long)age);
			fprintf(f, "%-6u %-8s", c->id, agebuf);
			STRV_FOREACH(x, c->argv)
				fprintf(f, " %s", *x);
			fputc('\n', f);
		}
	}
	fclose(f);
	text = json ? cJSON_PrintUnformatted(arr) : line;
	if (json)
		free(line);
	cJSON_Delete(arr);
	reply(conn, SESSION_REP_OK, 0, text);
}

static void pending_add(Server *srv, int conn)
{
	size_t slot = 0;

	for (size_t i = 0; i < PENDING_MAX; i++) {
		if (srv->pending[i] < 0) {
			slot = i;
			break;
		}
		if (srv->pending_seq[i] < srv->pending_seq[slot])
			slot = i;
	}
	if (srv->pending[slot] >= 0) /* full: the oldest silent one goes */
		close(srv->pending[slot]);
	srv->pending[slot] = conn;
	srv->pending_since[slot] = monotonic_ms();
	srv->pending_seq[slot] = ++srv->next_seq;
}

/* Silent for PENDING_MS: dropped. Returns the next such deadline, or 0. */
static uint64_t pending_expire(Server *srv, uint64_t now)
{
	uint64_t next = 0;

	for (size_t i = 0; i < PENDING_MAX; i++) {
		if (srv->pending[i] < 0)
			continue;
		uint64_t end = srv->pending_since[i] + PENDING_MS;
		if (now >= end) {
			close(srv->pending[i]);
			srv->pending[i] = -1;
		} else if (!next || end < next)
			next = end;
	}
	return next;
}

/* Read and serve the one request of @conn (readable, or not: then it
 * waits in srv->pending). Takes ownership of @conn. */
static void handle_request(Server *srv, int conn)
{
	static char buf[sizeof(SessionReqHead) + SESSION_REQ_MAX + 1];
	char err[160];
	SessionRequest rq = {};
	int fds[3] = { -1, -1, -1 }, nfd = 0;
	union {
		char b[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			     .msg_controllen = sizeof(u.b) };
	ssize_t n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		pending_add(srv, conn);
		return;
	}
	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int got[4];
		memcpy(got, CMSG_DATA(c), sizeof(int) * (k > 4 ? 4 : k));
		for (size_t i = 0; i < k && i < 4; i++) {
			if (nfd < 3)
				fds[nfd++] = got[i];
			else
				close(got[i]);
		}
	}
	if (n <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		reply(conn, SESSION_REP_ERROR, WARD_EXIT_SETUP, "refused: a malformed request");
	else if (session_request_parse(buf, (size_t)n, &rq, err, sizeof(err)) < 0) {
		char why[200];
		snprintf(why, sizeof(why), "refused: %s", err);
		reply(conn, SESSION_REP_ERROR, WARD_EXIT_SETUP, why);
	} else if (rq.kind == SESSION_REQ_EXEC && nfd != 3)
		reply(conn, SESSION_REP_ERROR, WARD_EXIT_SETUP,
		      "refused: an exec passes exactly three descriptors");
	else if (rq.kind != SESSION_REQ_EXEC && nfd != 0)
		reply(conn, SESSION_REP_ERROR, WARD_EXIT_SETUP, "refused: unexpected descriptors");
	else if (rq.kind == SESSION_REQ_EXEC)
		handle_exec(srv, conn, &rq, fds);
	else if (rq.kind == SESSION_REQ_PS)
		handle_ps(srv, conn, rq.flags & SESSION_PS_JSON);
	else if (rq.kind == SESSION_REQ_STOP) {
		srv->stop = true;
		if (srv->n_stop < ELEMENTSOF(srv->stop_conn)) {
			/* Closed when this process exits: the client waits for it. */
			srv->stop_conn[srv->n_stop++] = conn;
			conn = -1;
		}
	} else
		reply(conn, SESSION_REP_ERROR, WARD_EXIT_SETUP, "refused: not a request of its own");
	session_request_done(&rq);
	for (int i = 0; i < nfd; i++)
		close(fds[i]);
	if (conn >= 0)
		close(conn);
}

/* Every connection waiting on the listening socket: the session's user
 * only, each request read when it comes (handle_request). */
static void handle_accept(Server *srv)
{
	for (int k = 0; k < PENDING_MAX; k++) {
		int conn = accept4(srv->cfg->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred cred;
		socklen_t cl = sizeof(cred);

		if (conn < 0)
			return;
		/* The session's user only: another user's process reaching the
		 * socket (the directory is 0700) is refused all the same. */
		if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
		    cred.uid != getuid()) {
			reply(conn, SESSION_REP_ERROR, WARD_EXIT_SETUP,
			      "refused: this session belongs to another user");
			close(conn);
			continue;
		}
		handle_request(srv, conn);
	}
}

static void send_signal(int pidfd, int sig, bool group)
{
	siginfo_t si = { .si_signo = sig, .si_code = SI_QUEUE };

	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_int = group ? FORWARD_TO_GROUP : 0;
	if (pidfd_send_signal(pidfd, sig, &si, 0) < 0)
		(void)pidfd_send_signal(pidfd, sig, NULL, 0);
}

/* A running command's client: a signal to pass on, or gone. */
static void handle_conn(Server *srv, Cmd *c)
{
	char buf[sizeof(SessionReqHead) + 64];
	SessionRequest rq = {};
	ssize_t n = recv(c->conn, buf, sizeof(buf), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* The harness is gone: so is its command (a cold run's
		 * --die-with-parent). */
		c->client_gone = true;
		close(c->conn);
		c->conn = -1;
		if (c->guest)
			vm_warm_signal(srv->s->guest, c->id, 0);
		else if (c->pidfd >= 0)
			(void)pidfd_send_signal(c->pidfd, SIGKILL, NULL, 0);
		return;
	}
	if (session_request_parse(buf, (size_t)n, &rq, NULL, 0) == 0 && rq.kind == SESSION_REQ_SIGNAL) {
		/* Tier 3: always to the command's process group in the guest. */
		if (c->guest && rq.value > 0 && rq.value < 65)
			vm_warm_signal(srv->s->guest, c->id, (int)rq.value);
		else if (c->pidfd >= 0)
			send_signal(c->pidfd, (int)rq.value, rq.flags & SESSION_SIGNAL_GROUP);
	}
	session_request_done(&rq);
}

static void handle_event(Server *srv, const SandboxEvent *ev, int pidfd, int sock)
{
	Cmd *c;

	if (ev->kind == SANDBOX_EV_SPARE) { /* the next spare: any older one is gone */
		spare_forget(srv);
		srv->spare_sock = sock;
		srv->spare_pidfd = pidfd;
		return;
	}
	c = cmd_find(srv, ev->id);

	if (!c) {
		if (pidfd >= 0)
			close(pidfd);
		return;
	}
	switch (ev->kind) {
	case SANDBOX_EV_STARTED:
		cmd_started(srv, c, pidfd);
		break;
	case SANDBOX_EV_EXIT:
		cmd_finish(srv, c, ev->value, NULL, 0);
		break;
	case SANDBOX_EV_PTY: /* the master, to the client that relays it */
		if (!c->background)
			reply_fd(c->conn, SESSION_REP_PTY, pidfd);
		close(pidfd);
		break;
	case SANDBOX_EV_STOPPED:
		if (!c->background)
			reply(c->conn, SESSION_REP_STOPPED, ev->value, NULL);
		break;
	case SANDBOX_EV_FAILED: {
		const char *step = sandbox_step_to_string(ev->step);
		int code = WARD_EXIT_SETUP;
		if (ev->step == SANDBOX_STEP_EXEC)
			code = ev->error == ENOENT ? WARD_EXIT_NOTFOUND : WARD_EXIT_NOEXEC;
		if (pidfd >= 0)
			close(pidfd);
		cmd_fail(srv, c, step && *step ? step : "init", ev->error, code, ev->detail);
		break;
	}
	default:
		if (pidfd >= 0)
			close(pidfd);
	}
}

/* Every event pid 1 and the commands' inits queued. -EPIPE: pid 1 is gone. */
static int drain_events(Server *srv)
{
	for (;;) {
		SandboxEvent ev;
		int pidfd, sock, r = sandbox_session_recv2(srv->s->init_sock, &ev, &pidfd, &sock);
		if (r == -EAGAIN)
			return 0;
		if (r == -EPIPE)
			return r;
		if (r < 0)
			continue;
		handle_event(srv, &ev, pidfd, sock);
	}
}

/* Tier 3: the relay of @c ended; a relay that failed leaves the VM dead
 * (the protocol broke or the guest stopped): the session then stops. */
static void guest_finish(Server *srv, Cmd *c)
{
	WardError e = {};
	int wstatus = -1;

	if (vm_warm_result(c->res, &wstatus, &e) < 0) {
		log_error("session %s: exec %u: %s", srv->cfg->session_id, c->id, e.detail);
		srv->guest_dead = true;
		if (!c->timed_out || c->client_gone) {
			cmd_finish(srv, c, -1, &e, WARD_EXIT_SETUP);
			return;
		}
	}
	cmd_finish(srv, c, wstatus, NULL, 0);
}

static bool guest_running(const Server *srv)
{
	for (size_t i = 0; i < CMDS_MAX; i++)
		if (srv->cmds[i].used && srv->cmds[i].guest)
			return true;
	return false;
}

/* The end of the session: every command is killed with pid 1 (the
 * caller's); each gets its record. */
static void finish_all(Server *srv)
{
	for (size_t i = 0; i < CMDS_MAX; i++) {
		Cmd *c = &srv->cmds[i];
		if (!c->used)
			continue;
		if (c->pidfd >= 0)
			(void)pidfd_send_signal(c->pidfd, SIGKILL, NULL, 0);
		c->stopped = true;
		cmd_finish(srv, c, -1, NULL, 0);
	}
}

static int wait_ready(Server *srv)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = srv->s->init_sock, .events = POLLIN },
				       { .fd = srv->s->init_pidfd, .events = POLLIN } };
		SandboxEvent ev;
		int pidfd;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[0].revents) {
			int r = sandbox_session_recv(srv->s->init_sock, &ev, &pidfd);
			if (r == 0 && pidfd >= 0)
				close(pidfd);
			if (r == 0 && ev.kind == SANDBOX_EV_READY)
				return 0;
			if (r == -EPIPE)
				return r;
			continue;
		}
		if (p[1].revents)
			return -ESRCH;
	}
}

int session_server_loop(void *userdata, const SandboxSession *s)
{
	SessionServerConfig *cfg = userdata;
	Server srv = { .cfg = cfg, .s = s };
	uint64_t idle_s = s->policy->session_idle_s ? s->policy->session_idle_s
						    : POLICY_SESSION_IDLE_DEFAULT_S;

	for (size_t i = 0; i < CMDS_MAX; i++)
		srv.cmds[i] = (Cmd){ .conn = -1, .pidfd = -1, .res = -1 };
	for (size_t i = 0; i < PENDING_MAX; i++)
		srv.pending[i] = -1;
	srv.idle_ms = idle_s * 1000;
	srv.spare_sock = srv.spare_pidfd = -1;
	if (wait_ready(&srv) < 0)
		return 0;
	if (s->guest) {
		WardError e = {};
		cfg->tier = 3; /* "tier": 3 in a policy file as well as --tier 3 */
		if (vm_warm_start(s->guest, s, &e) < 0)
			return 0;
	}
	_cleanup_free_ char *state = NULL;
	if (ward_state_dir(&state) == 0)
		snprintf(srv.see, sizeof(srv.see), "every connection is in %s/audit.jsonl (session %s)",
			 state, cfg->session_id);
	else
		snprintf(srv.see, sizeof(srv.see), "every connection is in the audit log (session %s)",
			 cfg->session_id);
	srv.not_held = tier_gaps(cfg->tier, TIER_NOT_HELD);
	srv.partly_held = tier_gaps(cfg->tier, TIER_PARTLY);
	cfg->ready = true;
	if (cfg->ready_fd >= 0) {
		(void)!write(cfg->ready_fd, "ok\n", 3);
		close(cfg->ready_fd);
	}
	log_info("session %s is up", cfg->session_id);
	srv.last_activity_ms = monotonic_ms();

	enum { P_LISTEN, P_INIT_SOCK, P_INIT, P_SIG, P_OWNER, P_REPORT, P_GUEST, P_FIXED };
	while (!srv.stop) {
		struct pollfd p[P_FIXED + 2 * CMDS_MAX + PENDING_MAX];
		Cmd *owner[P_FIXED + 2 * CMDS_MAX + PENDING_MAX];
		size_t n = P_FIXED, n_cmd;
		uint64_t now = monotonic_ms(), next = pending_expire(&srv, now);
		bool busy = false;

		p[P_LISTEN] = (struct pollfd){ .fd = cfg->listen_fd, .events = POLLIN };
		p[P_INIT_SOCK] = (struct pollfd){ .fd = s->init_sock, .events = POLLIN };
		p[P_INIT] = (struct pollfd){ .fd = s->init_pidfd, .events = POLLIN };
		p[P_SIG] = (struct pollfd){ .fd = s->sigfd, .events = POLLIN };
		p[P_OWNER] = (struct pollfd){ .fd = cfg->owner_pidfd, .events = POLLIN };
		p[P_REPORT] = (struct pollfd){ .fd = s->report_rd, .events = POLLIN };
		p[P_GUEST] = (struct pollfd){ .fd = s->guest && !srv.guest_dead ? s->guest->qemu_pidfd : -1,
					       .events = POLLIN };
		for (size_t i = 0; i < CMDS_MAX; i++) {
			Cmd *c = &srv.cmds[i];
			if (!c->used)
				continue;
			if (!c->background)
				busy = true;
			if (c->conn >= 0 && !c->background) {
				owner[n] = c;
				p[n++] = (struct pollfd){ .fd = c->conn, .events = POLLIN };
			}
			if (c->pidfd >= 0 || c->res >= 0) {
				owner[n] = c;
				p[n++] = (struct pollfd){ .fd = c->guest ? c->res : c->pidfd,
							  .events = POLLIN };
			}
			if (c->deadline_ms && !c->timed_out && (!next || c->deadline_ms < next))
				next = c->deadline_ms;
		}
		n_cmd = n;
		for (size_t i = 0; i < PENDING_MAX; i++)
			if (srv.pending[i] >= 0) {
				owner[n] = NULL;
				p[n++] = (struct pollfd){ .fd = srv.pending[i], .events = POLLIN };
			}
		if (busy)
			srv.last_activity_ms = now;
		else if (!next || srv.last_activity_ms + srv.idle_ms < next)
			next = srv.last_activity_ms + srv.idle_ms;
		int timeout = next ? (next > now ? (int)(next - now > INT32_MAX ? INT32_MAX : next - now) : 0) : -1;
		int k = poll(p, n, timeout);
		if (k < 0 && errno != EINTR)
			break;
		now = monotonic_ms();
		/* Timers. */
		for (size_t i = 0; i < CMDS_MAX; i++) {
			Cmd *c = &srv.cmds[i];
			if (c->used && c->deadline_ms && !c->timed_out && now >= c->deadline_ms) {
				c->timed_out = true;
				/* Tier 3: the relay has the guest end the command
				 * (the VM stays up). */
				if (c->guest)
					vm_warm_signal(srv.s->guest, c->id, 0);
				else if (c->pidfd >= 0)
					(void)pidfd_send_signal(c->pidfd, SIGKILL, NULL, 0);
			}
		}
		if (!busy && now >= srv.last_activity_ms + srv.idle_ms) {
			log_info("session %s: idle for %llu s, stopping", cfg->session_id,
				 (unsigned long long)idle_s);
			srv.stop = true;
		}
		if (k <= 0)
			continue;
		if (p[P_REPORT].revents)
			drain_reports(&srv);
		if (p[P_INIT_SOCK].revents && drain_events(&srv) == -EPIPE)
			break;
		if (p[P_INIT].revents)
			break; /* pid 1 is gone: so is everything inside */
		if (p[P_GUEST].revents) {
			/* The VM stopped: a command running ends when its relay
			 * sees it (125); then the session stops. */
			log_error("session %s: its VM stopped", cfg->session_id);
			srv.guest_dead = true;
		}
		if (p[P_OWNER].revents) {
			log_info("session %s: its owner exited, stopping", cfg->session_id);
			srv.stop = true;
		}
		if (p[P_SIG].revents) {
			struct signalfd_siginfo si;
			while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				if (si.ssi_signo != SIGCHLD && si.ssi_signo != SIGWINCH)
					srv.stop = true;
		}
		/* Requests that came on accepted connections (before the
		 * commands' events: a request may start one). */
		for (size_t i = n_cmd; i < n; i++) {
			if (!p[i].revents)
				continue;
			for (size_t j = 0; j < PENDING_MAX; j++)
				if (srv.pending[j] == p[i].fd) {
					srv.pending[j] = -1;
					handle_request(&srv, p[i].fd);
				}
		}
		for (size_t i = P_FIXED; i < n_cmd; i++) {
			Cmd *c = owner[i];
			if (!p[i].revents || !c->used)
				continue;
			if (p[i].fd == c->conn)
				handle_conn(&srv, c);
			else if (c->guest && p[i].fd == c->res)
				guest_finish(&srv, c);
			else if (p[i].fd == c->pidfd) {
				/* Its end reported first, if it had one. */
				uint32_t id = c->id;
				if (drain_events(&srv) == -EPIPE)
					break;
				if (c->used && c->id == id)
					cmd_finish(&srv, c, -1, NULL, 0);
			}
		}
		if (p[P_LISTEN].revents)
			handle_accept(&srv);
		if (srv.guest_dead && !guest_running(&srv))
			srv.stop = true;
	}
	finish_all(&srv);
	spare_forget(&srv);
	for (size_t i = 0; i < PENDING_MAX; i++)
		if (srv.pending[i] >= 0)
			close(srv.pending[i]);
	log_info("session %s is stopping", cfg->session_id);
	strv_free(srv.not_held);
	strv_free(srv.partly_held);
	return 1;
}
