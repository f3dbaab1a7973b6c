/* ward_run_exec: run the run module (src/run/run.h) in a child process
 * and bring its result back through a pipe.
 *
 * Why a child: a run installs signal handlers, blocks signals, becomes a
 * child subreaper, reaps children and starts the proxy; all of that is
 * process-wide and would disturb a harness that links libward (its own
 * handlers, its own children, its other threads). Forked, the supervisor
 * has a process of its own and the caller only waits on one pipe and one
 * pidfd. Considered instead: exec'ing the `ward` binary (a clean process
 * image even after a fork from a threaded caller, but the library would
 * need to find a binary of its own version) and running in the caller (the
 * disturbance above). The fork's known cost: the child of a multithreaded
 * caller starts with one thread; glibc resets its malloc and stdio locks in
 * the child, and libward's child uses nothing else of the caller's.
 *
 * The pipe carries frames: a header {length, type, level} and a payload.
 * Log frames fit in PIPE_BUF, so each is one atomic write(2) even if a
 * process the supervisor forked writes one too; the result frame comes
 * last, from the child itself. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fd-write.h"
#include "common/json-util.h"
#include "common/log.h"
#include "common/strv.h"
#include "lib/lib-run.h"
#include "run/run.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

enum {
	FRAME_LOG = 'L',
	FRAME_RESULT = 'R',
};

typedef struct FrameHead {
	uint32_t len; /* payload bytes */
	uint8_t type;
	uint8_t level;
	uint8_t pad[2];
} FrameHead;

#define FRAME_LOG_MAX (PIPE_BUF - sizeof(FrameHead))
#define FRAME_RESULT_MAX (16U << 20)

/* ---- the child ---- */

static int wire_fd = -1;
static pid_t wire_pid;

/* The child's log callback: one frame, one write. */
static void wire_log(void *userdata, int level, const char *message)
{
	char buf[PIPE_BUF];
	size_t n = strnlen(message, FRAME_LOG_MAX);
	FrameHead h = { .len = (uint32_t)n, .type = FRAME_LOG, .level = (uint8_t)level };

	/* Only the supervisor itself: the processes it forks (the sandbox's
	 * init, the proxy, the stdio copier) close or reuse descriptors, and
	 * a frame must never land in whatever got wire_fd's number there. */
	if (getpid() != wire_pid)
		return;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), message, n);
	(void)fd_write_all(wire_fd, buf, sizeof(h) + n);
}

static void run_log(void *userdata, RunLogLevel level, const char *message)
{
	static const int map[] = {
		[RUN_LOG_ERROR] = WARD_LOG_ERROR,
		[RUN_LOG_WARNING] = WARD_LOG_WARNING,
		[RUN_LOG_INFO] = WARD_LOG_INFO,
		[RUN_LOG_DEBUG] = WARD_LOG_DEBUG,
	};
	int l = (unsigned)level < ELEMENTSOF(map) ? map[level] : WARD_LOG_DEBUG;

	/* Through the thread's route: the wire in the child. */
	lib_log(l, "%s", message);
}

static cJSON *encode(const Run *run, int exit_code)
{
	const RunResult *res = run ? run_result(run) : NULL;
	const WardError *e = run ? run_error(run) : NULL;
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "exit_code", exit_code);
	if (res) {
		cJSON_AddNumberToObject(o, "status", res->status);
		cJSON_AddNumberToObject(o, "signal", res->signal);
		cJSON_AddBoolToObject(o, "started", res->started);
		cJSON_AddBoolToObject(o, "timed_out", res->timed_out);
		cJSON_AddNumberToObject(o, "duration_ms", (double)res->duration_ms);
		cJSON_AddStringToObject(o, "session", res->session_id);
		cJSON_AddItemToObject(o, "degraded", json_strv_array(res->degraded));
		cJSON_AddNumberToObject(o, "net_refused", res->net_refused);
		cJSON_AddNumberToObject(o, "cow_changes", res->cow_changes);
		cJSON *j = run_result_json(run);
		if (j)
			cJSON_AddItemToObject(o, "result", j);
	}
	if (e && (e->step[0] || e->detail[0])) {
		char msg[sizeof(e->step) + sizeof(e->detail) + 2];
		snprintf(msg, sizeof(msg), "%s%s%s", e->step, e->step[0] && e->detail[0] ? ": " : "",
			 e->detail);
		cJSON_AddStringToObject(o, "error", msg);
	} else if (!run)
		cJSON_AddStringToObject(o, "error", "out of memory");
	return o;
}

_noreturn_ static void child(const RunRequest *req, int wfd, const LibLog *log)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t all;
	Run *run = NULL;
	int exit_code = WARD_EXIT_SETUP;

	/* The caller's handlers are the caller's: this process gets the
	 * defaults and an empty mask, as a freshly exec'ed `ward` would. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &dfl, NULL);
	sigemptyset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, NULL);
	/* Die with the calling thread (the run then dies with us); if it is
	 * gone already, do not start. */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != req->parent_pid)
		_exit(WARD_EXIT_SETUP);
	/* The caller's descriptors stay out of everything this run execs.
	 * The stdio and events descriptors passed are the supervisor's to
	 * use: it writes the events itself and puts stdio in place with
	 * dup2, so they too stay close-on-exec (else a passed fd 5 would
	 * reach a tier-0 command twice: as its fd 1 and as fd 5). */
	(void)syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);

	wire_fd = wfd;
	wire_pid = getpid();
	/* This process's own copy of the core's level: what the callback
	 * takes, so the run formats no more than that. */
	log_set_level(log->fn ? log->max_level : LOG_LVL_ERROR);
	LibLog route = { .fn = log->fn ? wire_log : NULL, .max_level = log->max_level }, saved;
	lib_log_push(&route, &saved);

	run = run_new(req);
	if (run)
		exit_code = run_all(run);
	cJSON *o = encode(run, exit_code);
	char *text = o ? cJSON_PrintUnformatted(o) : NULL;
	/* run_free releases what the run acquired (cgroup, session lock,
	 * ...); the caller waits for this process to end, not for the
	 * result alone, so it returns after the release. */
	run = run_free(run);
	if (text && strlen(text) <= FRAME_RESULT_MAX) {
		FrameHead h = { .len = (uint32_t)strlen(text), .type = FRAME_RESULT };
		if (fd_write_all(wfd, &h, sizeof(h)) == 0)
			(void)fd_write_all(wfd, text, h.len);
	}
	/* _exit: the caller's atexit handlers and stdio buffers are not ours. */
	_exit(0);
}

/* ---- the caller ---- */

typedef struct Reader {
	char *buf;
	size_t len, size;
	char *result;  /* the result frame's payload, NUL-terminated */
	bool bad;      /* a malformed frame */
} Reader;

/* Handle the complete frames at the start of the buffer. */
static void reader_frames(Reader *rd)
{
	size_t off = 0;

	while (!rd->bad && rd->len - off >= sizeof(FrameHead)) {
		FrameHead h;
		memcpy(&h, rd->buf + off, sizeof(h));
		if ((h.type == FRAME_LOG && h.len > FRAME_LOG_MAX) ||
		    (h.type == FRAME_RESULT && h.len > FRAME_RESULT_MAX) ||
		    (h.type != FRAME_LOG && h.type != FRAME_RESULT)) {
			rd->bad = true;
			break;
		}
		if (rd->len - off - sizeof(h) < h.len)
			break;
		const char *p = rd->buf + off + sizeof(h);
		if (h.type == FRAME_LOG)
			lib_log(h.level, "%.*s", (int)h.len, p);
		else if (!rd->result && (rd->result = malloc(h.len + 1))) {
			memcpy(rd->result, p, h.len);
			rd->result[h.len] = '\0';
		}
		off += sizeof(h) + h.len;
	}
	memmove(rd->buf, rd->buf + off, rd->len - off);
	rd->len -= off;
}

/* Read what is there; 1 at EOF, 0 when more may come, -errno. */
static int reader_read(Reader *rd, int fd)
{
	for (;;) {
		if (rd->size - rd->len < 65536) {
			size_t n = rd->size ? rd->size * 2 : 131072;
			if (n > FRAME_RESULT_MAX + 2 * PIPE_BUF)
				return -EPROTO;
			char *b = realloc(rd->buf, n);
			if (!b)
				return -ENOMEM;
			rd->buf = b;
			rd->size = n;
		}
		ssize_t k = read(fd, rd->buf + rd->len, rd->size - rd->len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (k == 0)
			return 1;
		rd->len += (size_t)k;
		reader_frames(rd);
		if (rd->bad)
			return -EPROTO;
	}
}

/* Wait for the child: read its frames until it has exited and the pipe is
 * drained. The pidfd, not EOF, says when: a process the run forked could
 * hold the pipe's write end longer. */
static int wait_child(pid_t pid, int pidfd, int rfd, Reader *rd, int *ret_status)
{
	bool exited = false;
	int r = 0, st = 0;

	while (!exited) {
		struct pollfd p[2] = { { .fd = rfd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
		if (poll(p, pidfd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (p[0].revents) {
			int k = reader_read(rd, rfd);
			if (k < 0) {
				r = k;
				break;
			}
			if (k == 1 && pidfd < 0)
				exited = true; /* no pidfd: EOF it is */
		}
		if (pidfd >= 0 && p[1].revents) {
			/* Exited: whatever it wrote is in the pipe now. */
			(void)fcntl(rfd, F_SETFL, O_NONBLOCK);
			int k = reader_read(rd, rfd);
			if (k < 0)
				r = k;
			exited = true;
		}
	}
	if (r < 0)
		(void)kill(pid, SIGKILL);
	/* This pid only: the caller's other children are the caller's. A
	 * caller's SIGCHLD handler may have reaped it (ECHILD): the pipe has
	 * the result all the same. */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*ret_status = st;
	return r;
}

static int decode(ward_run *r, const char *text)
{
	_cleanup_cjson_ cJSON *o = cJSON_Parse(text);
	cJSON *x;

	if (!cJSON_IsObject(o))
		return -EPROTO;
#define NUM(key, dflt) (cJSON_IsNumber(x = cJSON_GetObjectItem(o, key)) ? x->valuedouble : (dflt))
	r->exit_code = (int)NUM("exit_code", WARD_EXIT_SETUP);
	r->status = (int)NUM("status", -1);
	r->signal = (int)NUM("signal", 0);
	r->duration_ms = (uint64_t)NUM("duration_ms", 0);
	r->net_refused = (unsigned)NUM("net_refused", 0);
	r->cow_changes = (unsigned)NUM("cow_changes", 0);
#undef NUM
	r->started = cJSON_IsTrue(cJSON_GetObjectItem(o, "started"));
	r->timed_out = cJSON_IsTrue(cJSON_GetObjectItem(o, "timed_out"));
	x = cJSON_GetObjectItem(o, "session");
	if (cJSON_IsString(x) && x->valuestring[0] && !(r->session_id = strdup(x->valuestring)))
		return -ENOMEM;
	x = cJSON_GetObjectItem(o, "degraded");
	cJSON *d;
	cJSON_ArrayForEach(d, x)
		if (cJSON_IsString(d) && strv_extend(&r->degraded, d->valuestring) < 0)
			return -ENOMEM;
	x = cJSON_GetObjectItem(o, "result");
	if (x && !(r->result_json = cJSON_PrintUnformatted(x)))
		return -ENOMEM;
	x = cJSON_GetObjectItem(o, "error");
	if (cJSON_IsString(x))
		snprintf(r->error, sizeof(r->error), "%s", x->valuestring);
	return 0;
}

/* The request the child runs, built before the fork: the child allocates
 * nothing of libward's own before run_new. */
int lib_run_build_request(ward_run *r, const char *const *argv, RunRequest *req, char **ret_text)
{
	_cleanup_cjson_ cJSON *doc = cJSON_Duplicate(r->overrides, true);

	if (!doc)
		return -ENOMEM;
	if (r->timeout_s) {
		cJSON *l = cJSON_GetObjectItem(doc, "limits");
		if (!l)
			l = cJSON_AddObjectToObject(doc, "limits");
		cJSON_DeleteItemFromObject(l, "timeout_s");
		if (!cJSON_AddNumberToObject(l, "timeout_s", r->timeout_s))
			return -ENOMEM;
	}
	if (r->network) {
		cJSON *n = cJSON_GetObjectItem(doc, "network");
		if (!n)
			n = cJSON_AddObjectToObject(doc, "network");
		cJSON_DeleteItemFromObject(n, "mode");
		if (!cJSON_AddStringToObject(n, "mode", r->network))
			return -ENOMEM;
	}
	*ret_text = NULL;
	if (doc->child && !(*ret_text = cJSON_PrintUnformatted(doc)))
		return -ENOMEM;
	*req = (RunRequest)RUN_REQUEST_INIT;
	req->argv = (char *const *)argv;
	req->workspace = r->workspace;
	req->policy_file = r->policy_file;
	req->presets = r->presets;
	req->policy_overrides = *ret_text;
	req->overrides_source = "libward caller";
	req->env_extra = r->env;
	req->tier = r->tier;
	req->strict = r->strict;
	req->cow = r->cow;
	req->session = r->session;
	memcpy(req->stdio, r->stdio, sizeof(req->stdio));
	req->parent_pid = getpid();
	req->events_fd = r->events_fd;
	req->log = run_log;
	return 0;
}

WARD_PUBLIC int ward_run_exec(ward_run *r, const char *const *argv)
{
	_cleanup_free_ char *overrides = NULL;
	_cleanup_close_ int rfd = -EBADF, wfd = -EBADF, pidfd = -EBADF;
	Reader rd = {};
	RunRequest req;
	LibLog saved;
	int pfd[2], st = 0, k;
	pid_t pid;

	if (!r)
		return -EINVAL;
	if (r->executed)
		return lib_error(r->error, -EALREADY, "The run was executed already");
	if (!argv || !argv[0] || !argv[0][0])
		return lib_error(r->error, -EINVAL, "No command given");
	r->executed = true;
	r->error[0] = '\0';
	if (lib_run_build_request(r, argv, &req, &overrides) < 0)
		return lib_error(r->error, -ENOMEM, "Out of memory");
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return lib_error(r->error, -errno, "Failed to make a pipe: %m");
	rfd = pfd[0];
	wfd = pfd[1];
	/* A caller that closed its fd 0, 1 or 2 gets the pipe there; the
	 * command would then write into it. Above 2 it goes. */
	for (int *fd = &rfd; fd; fd = fd == &rfd ? &wfd : NULL)
		if (*fd <= 2) {
			int n = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
			if (n < 0)
				return lib_error(r->error, -errno, "Failed to move a pipe: %m");
			(void)close(*fd);
			*fd = n;
		}

	lib_log_push(&r->log, &saved);
	pid = fork();
	if (pid < 0) {
		lib_log_pop(&saved);
		return lib_error(r->error, -errno, "Failed to fork the run: %m");
	}
	if (pid == 0) {
		(void)close(rfd);
		child(&req, wfd, &r->log);
	}
	(void)close(TAKE_FD(wfd));
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* always close-on-exec */
	(void)pthread_mutex_lock(&r->lock);
	r->pidfd = pidfd;
	(void)pthread_mutex_unlock(&r->lock);
	k = wait_child(pid, pidfd, rfd, &rd, &st);
	(void)pthread_mutex_lock(&r->lock);
	r->pidfd = -1;
	(void)pthread_mutex_unlock(&r->lock);
	lib_log_pop(&saved);

	if (k >= 0 && rd.result)
		k = decode(r, rd.result);
	else if (k >= 0 || k == -EPROTO) {
		if (WIFSIGNALED(st))
			k = lib_error(r->error, -ECHILD, "The run's process was killed by signal %d",
				      WTERMSIG(st));
		else
			k = lib_error(r->error, -ECHILD,
				      "The run's process ended without a result (status %d)",
				      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	} else
		k = lib_error(r->error, k, "Failed to read the run's result: %s", strerror(-k));
	free(rd.buf);
	free(rd.result);
	if (k < 0)
		return k;
	return r->exit_code;
}

WARD_PUBLIC int ward_run_kill(ward_run *r, int sig)
{
	int k;

	if (!r)
		return -EINVAL;
	if (sig <= 0 || sig >= NSIG)
		return -EINVAL;
	(void)pthread_mutex_lock(&r->lock);
	if (r->pidfd < 0)
		k = -ESRCH;
	else
		k = syscall(SYS_pidfd_send_signal, r->pidfd, sig, NULL, 0) < 0 ? -errno : 0;
	(void)pthread_mutex_unlock(&r->lock);
	/* No message in r->error: another thread may be writing it. */
	return k;
}
