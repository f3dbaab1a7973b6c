/* ward_live_*: a live session from libward (docs/libward.md, "Live
 * sessions"). The same supervisor as `ward session new --live`
 * (session-server.h, the run module with a SandboxServe) in a process
 * forked here, and the same client as `ward exec` (session-client.h).
 *
 * The supervisor is forked, not exec'ed, for the reasons lib-exec.c gives
 * for a run; unlike the CLI's daemon it stays the caller's child, so that
 * ward_live_close() can wait for it (its pidfd) and the caller's process
 * table holds no orphan of ours. Its owner is the calling process (a
 * pidfd): the session stops when the caller exits, whichever thread opened
 * it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "cow/cow.h"
#include "lib/lib-run.h"
#include "run/run-paths.h"
#include "linux/stdio-relay.h"
#include "run/run.h"
#include "session/session-client.h"
#include "session/session-live.h"
#include "session/session-paths.h"
#include "session/session-server.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

DEFINE_TRIVIAL_CLEANUP_FUNC(CowSession *, cow_session_free)

struct ward_live {
	char *state;
	char id[32];
	pid_t pid;   /* the supervisor, our child */
	int pidfd;
	/* The connection of the ward_live_exec running now (-1: none), for
	 * ward_live_kill() from another thread. */
	pthread_mutex_t lock;
	int exec_sock;
	/* The output copiers of background commands (stdio-relay.h): they
	 * live as long as their command writes; reaped when they are done. */
	pid_t *copiers;
	size_t n_copiers;
	char error[LIB_ERROR_MAX];
};

/* ---- the supervisor (the child) ---- */

static void log_to_stderr(void *userdata, int level, const char *message)
{
	dprintf(STDERR_FILENO, "ward: %s\n", message);
}

_noreturn_ static void supervisor(RunRequest *req, const char *state, const char *id,
				  int listen_fd, int owner_pidfd, int ready_fd, int max_level)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	SessionServerConfig cfg = { .listen_fd = listen_fd, .owner_pidfd = owner_pidfd,
				    .ready_fd = ready_fd, .session_id = id, .tier = 2,
				    .cow = req->cow };
	SandboxServe serve = { .loop = session_server_loop, .userdata = &cfg };
	char *argv0[] = { "ward-session", NULL };
	char path[4096];
	sigset_t none;
	int code = WARD_EXIT_SETUP;

	/* As a run's child (lib-exec.c): default handlers, empty mask, the
	 * caller's descriptors out of everything the session execs, and a
	 * process session of its own (a terminal's ^C to the caller's group
	 * is not the session's). */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
	if (session_live_detach(state, id) < 0)
		_exit(WARD_EXIT_SETUP);
	/* The core's messages into the log, as the CLI daemon's stderr. */
	LibLog route = { .fn = log_to_stderr, .max_level = max_level }, saved;
	lib_log_push(&route, &saved);
	log_set_level(max_level);

	req->argv = argv0;
	req->cow = false; /* the session exists: its storage says whether it is copy-on-write */
	req->session = id;
	req->serve = &serve;
	req->log = NULL;
	req->parent_pid = 0; /* the owner's pidfd stops the session (the CLI daemon's way) */
	for (int i = 0; i < 3; i++)
		req->stdio[i] = 0; /* /dev/null, read-write (session_live_detach) */
	Run *run = run_new(req);
	if (run)
		code = run_all(run);
	run = run_free(run);
	if (cfg.ready)
		session_live_remove(state, id);
	else if (session_live_path(state, id, "ctl", path, sizeof(path)) == 0)
		(void)unlink(path);
	_exit(code);
}

/* ---- the caller ---- */

/* A caller that closed its fd 0, 1 or 2 gets our descriptors there; the
 * supervisor puts /dev/null and its log on 0-2, so ours go above. */
static int above_stdio(int *fd)
{
	if (*fd > 2)
		return 0;
	int n = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
	if (n < 0)
		return -errno;
	(void)close(*fd);
	*fd = n;
	return 0;
}

/* The supervisor's start-up messages: to @log as warnings; the last line
 * into @last (the reason when it failed). */
static void relay_log(const char *state, const char *id, const LibLog *log, char *last,
		      size_t lastlen)
{
	char path[4096], line[1024];
	FILE *f;

	if (session_live_path(state, id, "log", path, sizeof(path)) < 0 || !(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		const char *msg = strncmp(line, "ward: ", 6) == 0 ? line + 6 : line;
		if (!*msg)
			continue;
		if (log->fn && WARD_LOG_WARNING <= log->max_level)
			log->fn(log->userdata, WARD_LOG_WARNING, msg);
		snprintf(last, lastlen, "%s", msg);
	}
	fclose(f);
}

static int check_config(ward_run *c)
{
	if (c->executed)
		return lib_error(c->error, -EALREADY, "The run was executed already");
	if (c->tier >= 0 && c->tier != 2)
		return lib_error(c->error, -EINVAL, "A live session needs tier 2");
	if (c->session || c->env || c->events_fd >= 0 || c->stdio[0] >= 0 || c->stdio[1] >= 0 ||
	    c->stdio[2] >= 0)
		return lib_error(c->error, -EINVAL,
				 "A live session takes no session, env, stdio or events fd: "
				 "they belong to each ward_live_exec");
	return 0;
}

WARD_PUBLIC int ward_live_open(ward_run *c, ward_live **ret)
{
	_cleanup_free_ char *overrides = NULL, *ws = NULL;
	_cleanup_(cow_session_freep) CowSession *cs = NULL;
	_cleanup_close_ int listen_fd = -EBADF, owner = -EBADF, rfd = -EBADF, wfd = -EBADF;
	ward_live *l = NULL;
	RunRequest req;
	WardError we = {};
	char buf[8] = "", last[1024] = "";
	int r, pfd[2];
	ssize_t n;

	if (!c || !ret)
		return -EINVAL;
	c->error[0] = 0;
	if ((r = check_config(c)) < 0)
		return r;
	l = calloc(1, sizeof(*l));
	if (!l)
		return lib_error(c->error, -ENOMEM, "Out of memory");
	l->pidfd = -1;
	l->exec_sock = -1;
	(void)pthread_mutex_init(&l->lock, NULL);
	if (run_resolve_workspace(c->workspace, &ws, &we) < 0) {
		r = lib_error(c->error, we.error ? -abs(we.error) : -EINVAL, "%s", we.detail);
		goto fail;
	}
	if ((r = ward_state_dir(&l->state)) < 0 || (r = ward_dir_ensure(l->state)) < 0) {
		r = lib_error(c->error, r, "ward's state directory: %s", strerror(-r));
		goto fail;
	}
	if ((r = cow_session_create(l->state, ws, c->cow, &cs)) < 0) {
		r = lib_error(c->error, r, "Failed to create a session: %s", strerror(-r));
		goto fail;
	}
	snprintf(l->id, sizeof(l->id), "%s", cow_session_id(cs));
	cs = cow_session_free(cs); /* the supervisor's run holds it */
	if ((r = session_live_listen(l->state, l->id, &listen_fd)) < 0) {
		session_live_remove(l->state, l->id);
		r = lib_error(c->error, r, "The control socket of session %s: %s", l->id,
			      strerror(-r));
		goto fail;
	}
	owner = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (owner < 0 || pipe2(pfd, O_CLOEXEC) < 0) {
		r = lib_error(c->error, -errno, "Failed to watch the caller: %m");
		session_live_remove(l->state, l->id);
		goto fail;
	}
	rfd = pfd[0];
	wfd = pfd[1];
	if ((r = above_stdio(&listen_fd)) < 0 || (r = above_stdio(&owner)) < 0 ||
	    (r = above_stdio(&wfd)) < 0) {
		r = lib_error(c->error, r, "Failed to move a descriptor: %s", strerror(-r));
		session_live_remove(l->state, l->id);
		goto fail;
	}
	if ((r = lib_run_build_request(c, (const char *const[]){ "ward-session", NULL }, &req,
				       &overrides)) < 0) {
		r = lib_error(c->error, r, "Out of memory");
		session_live_remove(l->state, l->id);
		goto fail;
	}
	l->pid = fork();
	if (l->pid < 0) {
		r = lib_error(c->error, -errno, "Failed to fork the session: %m");
		session_live_remove(l->state, l->id);
		goto fail;
	}
	if (l->pid == 0)
		supervisor(&req, l->state, l->id, listen_fd, owner, wfd,
			   c->log.fn ? c->log.max_level : WARD_LOG_WARNING);
	l->pidfd = (int)syscall(SYS_pidfd_open, l->pid, 0);
	(void)close(TAKE_FD(wfd));
	do
		n = read(rfd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	relay_log(l->state, l->id, &c->log, last, sizeof(last));
	if (n < 3 || strncmp(buf, "ok\n", 3) != 0) {
		(void)waitpid(l->pid, NULL, 0);
		l->pid = 0;
		session_live_remove(l->state, l->id);
		r = lib_error(c->error, -ECHILD, "The session's sandbox did not start%s%s",
			      last[0] ? ": " : "", last);
		goto fail;
	}
	*ret = l;
	return 0;
fail:
	if (l->pidfd >= 0)
		(void)close(l->pidfd);
	free(l->state);
	free(l);
	return r;
}

WARD_PUBLIC const char *ward_live_id(const ward_live *l)
{
	return l ? l->id : NULL;
}

WARD_PUBLIC const char *ward_live_last_error(const ward_live *l)
{
	return l ? l->error : "";
}

/* Reap the background commands' copiers that are done (@wait: all). */
static void reap_copiers(ward_live *l, bool wait)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n_copiers; i++) {
		pid_t p;
		do
			p = waitpid(l->copiers[i], NULL, wait ? 0 : WNOHANG);
		while (p < 0 && errno == EINTR);
		if (p == 0)
			l->copiers[k++] = l->copiers[i];
	}
	l->n_copiers = k;
}

static int check_exec_args(ward_live *l, const char *const *argv, const char *const *env,
			   unsigned timeout_s)
{
	if (!argv || !argv[0] || !argv[0][0])
		return lib_error(l->error, -EINVAL, "No command given");
	for (size_t i = 0; env && env[i]; i++)
		if (!strchr(env[i], '=') || env[i][0] == '=')
			return lib_error(l->error, -EINVAL, "An env entry is NAME=VALUE: %s", env[i]);
	if (timeout_s > 2592000)
		return lib_error(l->error, -EINVAL, "A timeout is at most 2592000 seconds");
	return 0;
}

/* The replies to an exec request on @sock, until its end (or, for a
 * background command, until it started: *@ret_code its id). */
static int exec_replies(ward_live *l, int sock, bool background, int *ret_code,
			char **ret_result)
{
	int code = -EPIPE, r;

	for (;;) {
		SessionReplyHead h;
		_cleanup_free_ char *text = NULL;
		r = session_client_reply(sock, &h, &text);
		if (r < 0) {
			if (code >= 0)
				break; /* refused, and no result followed */
			return lib_error(l->error, r, "The session ended without a result: %s",
					 strerror(-r));
		}
		if (h.kind == SESSION_REP_ERROR) {
			/* A refused request: the result object follows (not for
			 * a background one, which asks for none). */
			code = h.code;
			(void)lib_error(l->error, -EINVAL, "%s", text);
			if (background)
				return -EINVAL;
			continue;
		}
		if (h.kind == SESSION_REP_STARTED && background) {
			code = h.code;
			break;
		}
		if (h.kind == SESSION_REP_EXIT) {
			code = h.code;
			if (*text && ret_result)
				*ret_result = TAKE_PTR(text);
			break;
		}
	}
	*ret_code = code;
	return 0;
}

static int live_exec(ward_live *l, const char *const *argv, const char *const *env,
		     const char *cwd, unsigned timeout_s, const int stdio[3], bool background,
		     char **ret_result_json)
{
	extern char **environ;
	SessionRequest rq = { .kind = SESSION_REQ_EXEC, .value = timeout_s, .cwd = cwd,
			      .argv = (char **)argv, .env = environ, .extra = (char **)env };
	_cleanup_close_ int sock = -EBADF;
	_cleanup_free_ char *result = NULL;
	_cleanup_(stdio_relay_done) StdioRelay relay = STDIO_RELAY_INIT;
	int fds[3], r, code = -EPIPE;

	if (!l)
		return -EINVAL;
	l->error[0] = 0;
	if (ret_result_json)
		*ret_result_json = NULL;
	if ((r = check_exec_args(l, argv, env, timeout_s)) < 0)
		return r;
	reap_copiers(l, false);
	rq.flags = background ? SESSION_EXEC_BACKGROUND : SESSION_EXEC_RESULT;
	if ((r = session_client_connect(l->state, l->id, &sock)) < 0)
		return lib_error(l->error, r == -ENOENT || r == -ECONNREFUSED ? -EPIPE : r,
				 "Session %s has no live sandbox: %s", l->id, strerror(-r));
	/* The rules of a cold run's stdio (stdio-relay.h), as `ward exec`
	 * applies them: a writable file on 1 or 2 gets a pipe and a copier. */
	for (int i = 0; i < 3; i++)
		relay.src[i] = stdio[i] >= 0 ? stdio[i] : i;
	if ((r = stdio_relay_prepare(&relay)) < 0)
		return lib_error(l->error, r, "Preparing the standard descriptors: %s", strerror(-r));
	for (int i = 0; i < 3; i++)
		fds[i] = relay.child_fd[i] >= 0 ? relay.child_fd[i] : relay.src[i];
	if ((r = session_client_send(sock, &rq, fds, 3)) < 0)
		return lib_error(l->error, r, "Sending the request: %s", strerror(-r));
	if ((r = stdio_relay_start(&relay)) < 0)
		return lib_error(l->error, r, "Starting the output copier: %s", strerror(-r));
	if (!background) {
		(void)pthread_mutex_lock(&l->lock);
		l->exec_sock = sock;
		(void)pthread_mutex_unlock(&l->lock);
	}
	r = exec_replies(l, sock, background, &code, &result);
	if (!background) {
		(void)pthread_mutex_lock(&l->lock);
		l->exec_sock = -1;
		(void)pthread_mutex_unlock(&l->lock);
	}
	/* A background command's copier lives as long as it writes. */
	if (background && relay.copier > 0) {
		pid_t *n = realloc(l->copiers, (l->n_copiers + 1) * sizeof(*n));
		if (n) {
			l->copiers = n;
			l->copiers[l->n_copiers++] = relay.copier;
			relay.copier = 0;
		}
	}
	if (r < 0)
		return r;
	if (ret_result_json)
		*ret_result_json = TAKE_PTR(result);
	return code;
}

WARD_PUBLIC int ward_live_exec(ward_live *l, const char *const *argv, const char *const *env,
			       const char *cwd, unsigned timeout_s, int stdin_fd, int stdout_fd,
			       int stderr_fd, char **ret_result_json)
{
	const int stdio[3] = { stdin_fd, stdout_fd, stderr_fd };

	return live_exec(l, argv, env, cwd, timeout_s, stdio, false, ret_result_json);
}

WARD_PUBLIC int ward_live_start(ward_live *l, const char *const *argv, const char *const *env,
				const char *cwd, unsigned timeout_s, int stdin_fd, int stdout_fd,
				int stderr_fd)
{
	const int stdio[3] = { stdin_fd, stdout_fd, stderr_fd };
	int r = live_exec(l, argv, env, cwd, timeout_s, stdio, true, NULL);

	if (r >= 0 && r < 1) /* no id: cannot happen */
		return lib_error(l->error, -EPROTO, "The session gave no id for the command");
	return r;
}

WARD_PUBLIC int ward_live_kill(ward_live *l, int sig, int flags)
{
	SessionRequest rq = { .kind = SESSION_REQ_SIGNAL, .value = (uint32_t)sig };
	int r;

	if (!l || (flags & ~WARD_KILL_GROUP) || !session_signal_allowed(sig))
		return -EINVAL;
	if (flags & WARD_KILL_GROUP)
		rq.flags = SESSION_SIGNAL_GROUP;
	(void)pthread_mutex_lock(&l->lock);
	r = l->exec_sock < 0 ? -ESRCH : session_client_send(l->exec_sock, &rq, NULL, 0);
	(void)pthread_mutex_unlock(&l->lock);
	/* No message in l->error: the exec's thread may be writing it. */
	return r;
}

WARD_PUBLIC int ward_live_ps(ward_live *l, char **ret_json)
{
	SessionRequest rq = { .kind = SESSION_REQ_PS, .flags = SESSION_PS_JSON };
	_cleanup_close_ int sock = -EBADF;
	_cleanup_free_ char *text = NULL;
	SessionReplyHead h;
	int r;

	if (!l || !ret_json)
		return -EINVAL;
	l->error[0] = 0;
	*ret_json = NULL;
	reap_copiers(l, false);
	if ((r = session_client_connect(l->state, l->id, &sock)) < 0)
		return lib_error(l->error, r == -ENOENT || r == -ECONNREFUSED ? -EPIPE : r,
				 "Session %s has no live sandbox: %s", l->id, strerror(-r));
	if ((r = session_client_send(sock, &rq, NULL, 0)) < 0 ||
	    (r = session_client_reply(sock, &h, &text)) < 0)
		return lib_error(l->error, r, "Asking the session: %s", strerror(-r));
	if (h.kind != SESSION_REP_OK)
		return lib_error(l->error, -EPROTO, "The session refused: %s", text);
	*ret_json = TAKE_PTR(text);
	return 0;
}

WARD_PUBLIC ward_live *ward_live_close(ward_live *l)
{
	int sock;

	if (!l)
		return NULL;
	if (l->pid > 0) {
		SessionRequest rq = { .kind = SESSION_REQ_STOP };
		if (session_client_connect(l->state, l->id, &sock) == 0) {
			SessionReplyHead h;
			char *text = NULL;
			if (session_client_send(sock, &rq, NULL, 0) == 0)
				(void)session_client_reply(sock, &h, &text);
			free(text);
			(void)close(sock);
		} else if (l->pidfd >= 0)
			(void)syscall(SYS_pidfd_send_signal, l->pidfd, SIGTERM, NULL, 0);
		/* Our child: reap it (a caller's SIGCHLD handler may have). */
		while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
			;
		session_live_remove(l->state, l->id);
	}
	/* The session stopped: its commands' pipes are closed. */
	reap_copiers(l, true);
	free(l->copiers);
	(void)pthread_mutex_destroy(&l->lock);
	if (l->pidfd >= 0)
		(void)close(l->pidfd);
	free(l->state);
	free(l);
	return NULL;
}
