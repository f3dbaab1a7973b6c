/* ward session new|ps|stop (docs/sessions.md). `new` makes the session's
 * storage and starts its sandbox, and returns once it is ready (with
 * --storage-only, the storage alone: cmd-cow.c): the supervisor is a
 * daemon (its own process session, stdio on <state>/live/<id>/log) that
 * runs the sandbox through the run module with a SandboxServe
 * (session/session-server.h) and ends with it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/cli-args.h"
#include "cli/commands.h"
#include "cli/cow-cli.h"
#include "cli/run-request.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/log.h"
#include "common/strv.h"
#include "cow/cow.h"
#include "run/run-paths.h"
#include "run/run.h"
#include "session/session-client.h"
#include "session/session-live.h"
#include "session/session-paths.h"
#include "session/session-server.h"
#include "ward/ward.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(Run *, run_free)

/* "ward session: WHAT[ ID]: ERROR" */
static int fail(const char *what, const char *id, int err)
{
	fprintf(stderr, "ward session: %s%s%s", what, id ? " " : "", id ? id : "");
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
	return WARD_EXIT_FAILURE;
}

/* The daemon: the sandbox, served until the session ends. Never returns. */
_noreturn_ static void daemon_main(RunOptions *o, const char *state, const char *id, int listen_fd,
				   int owner_pidfd, int ready_fd)
{
	char path[4096];
	RunRequest req;
	_cleanup_free_ char *overrides = NULL;
	char *argv0[] = { "ward-session", NULL };
	int code;

	if (session_live_detach(state, id) < 0)
		_exit(WARD_EXIT_SETUP);
	SessionServerConfig cfg = { .listen_fd = listen_fd, .owner_pidfd = owner_pidfd,
				    .ready_fd = ready_fd, .session_id = id, .tier = o->tier == 3 ? 3 : 2,
				    .cow = o->cow };
	SandboxServe serve = { .loop = session_server_loop, .userdata = &cfg };
	if (cli_run_request(o, 0, &req, &overrides) < 0)
		_exit(WARD_EXIT_SETUP);
	req.argv = argv0;
	req.cow = false; /* the session exists: its storage says whether it is copy-on-write */
	req.session = id;
	req.serve = &serve;
	for (int i = 0; i < 3; i++)
		req.stdio[i] = 0; /* /dev/null, read-write (session_live_detach) */
	_cleanup_(run_freep) Run *run = run_new(&req);
	code = run ? run_all(run) : WARD_EXIT_SETUP;
	run = run_free(run);
	/* Before it was ready, `session new` shows the log and removes it. */
	if (cfg.ready)
		session_live_remove(state, id);
	else if (session_live_path(state, id, "ctl", path, sizeof(path)) == 0)
		(void)unlink(path);
	_exit(code);
}

static int session_new_live(int argc, char **argv)
{
	pid_t owner = getppid();
	bool owner_given = false;
	_cleanup_(run_options_done) RunOptions o = {};
	_cleanup_strv_ char **args = NULL;
	_cleanup_free_ char *err = NULL, *state = NULL, *ws = NULL, *id = NULL;
	_cleanup_(cow_session_freep) CowSession *s = NULL;
	bool json = false;
	int r, listen_fd = -1, owner_pidfd, ready[2];
	WardError we;

	/* ward run's options (the policy of every command in the session),
	 * but for --json and --owner, parsed as ward run parses them. */
	if (strv_extend(&args, "run") < 0)
		return WARD_EXIT_FAILURE;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
			continue;
		}
		if (strcmp(argv[i], "--owner") == 0 && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);
			/* 1 too: in a container (kubectl exec) the caller's
			 * parent is outside its pid namespace, and the
			 * container's PID 1 is the natural owner. */
			if (*end || v < 1 || v > 4194304) {
				fprintf(stderr, "ward session new: --owner takes a process id\n");
				return WARD_EXIT_USAGE;
			}
			owner = (pid_t)v;
			owner_given = true;
			continue;
		}
		if (strv_extend(&args, argv[i]) < 0)
			return WARD_EXIT_FAILURE;
	}
	if (strv_extend(&args, "--") < 0 || strv_extend(&args, "true") < 0)
		return WARD_EXIT_FAILURE;
	if (cli_parse_run((int)strv_length(args), args, &o, &err) < 0) {
		fprintf(stderr, "ward session new: %s\n", err ? err : "invalid arguments");
		return WARD_EXIT_USAGE;
	}
	if (o.session || o.result_file || o.events_fd >= 0 || o.result_fd >= 0 || o.env_extra) {
		fprintf(stderr, "ward session new: --session, --result, --result-fd, "
				"--events-fd and --env belong to each ward exec\n");
		return WARD_EXIT_USAGE;
	}
	if (o.tier >= 0 && o.tier != 2 && o.tier != 3) {
		fprintf(stderr, "ward session new: a live session needs tier 2 or 3 (--storage-only "
				"makes the storage alone, for ward run --session)\n");
		return WARD_EXIT_USAGE;
	}
	if (o.log_level >= 0)
		log_set_level(o.log_level);

	/* The owner: the process that ran us. Its exit stops the session
	 * (a pidfd; getppid() after it closes the race with its death). */
	if (!owner_given && owner == 0) {
		/* getppid() is 0 when the parent is outside our pid namespace:
		 * podman exec, kubectl exec. */
		fprintf(stderr, "ward session new: the process that started ward is outside this pid "
				"namespace (kubectl exec, podman exec): give the owner whose exit ends "
				"the session with --owner PID (in a container, --owner 1: the "
				"container's first process)\n");
		return WARD_EXIT_USAGE;
	}
	owner_pidfd = (int)pidfd_open(owner, 0);
	if (owner_pidfd < 0 || (!owner_given && getppid() != owner))
		return fail(owner_given ? "the --owner process" : "the process that started ward is gone",
			    NULL, owner_pidfd < 0 ? errno : 0);

	if (run_resolve_workspace(o.workspace, &ws, &we) < 0)
		return fail(we.detail, NULL, we.error);
	if ((r = ward_state_dir(&state)) < 0 || (r = ward_dir_ensure(state)) < 0)
		return fail("ward's state directory", NULL, r);
	if (session_within_ceiling(o.cow, ws) < 0)
		return WARD_EXIT_SETUP;
	r = cow_session_create(state, ws, o.cow, &s);
	if (r < 0)
		return fail("Failed to create a session", NULL, r);
	id = strdup(cow_session_id(s));
	if (!id)
		return WARD_EXIT_FAILURE;
	s = cow_session_free(s); /* the daemon's run holds it */
	r = session_live_listen(state, id, &listen_fd);
	if (r < 0) {
		session_live_remove(state, id);
		return fail("the control socket of session", id, r);
	}
	if (pipe2(ready, O_CLOEXEC) < 0)
		return WARD_EXIT_FAILURE;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return fail("fork", NULL, errno);
	if (pid == 0) {
		close(ready[0]);
		daemon_main(&o, state, id, listen_fd, owner_pidfd, ready[1]);
	}
	close(ready[1]);
	close(listen_fd);
	close(owner_pidfd);

	char buf[8] = "", logpath[4096], line[1024];
	ssize_t n = read(ready[0], buf, sizeof(buf) - 1);
	FILE *f;
	close(ready[0]);
	/* What the supervisor said while it started (warnings about the
	 * view, degraded protections; or why it failed), as ward run says it. */
	if (session_live_path(state, id, "log", logpath, sizeof(logpath)) == 0 &&
	    (f = fopen(logpath, "re"))) {
		while (fgets(line, sizeof(line), f))
			fputs(line, stderr);
		fclose(f);
	}
	if (n < 3 || strncmp(buf, "ok\n", 3) != 0) {
		session_live_remove(state, id);
		fprintf(stderr, "ward session new: the session's sandbox did not start\n");
		return WARD_EXIT_SETUP;
	}
	if (json) {
		char path[4096] = "";
		cJSON *obj = cJSON_CreateObject();
		_cleanup_free_ char *text = NULL;
		(void)session_live_path(state, id, "ctl", path, sizeof(path));
		cJSON_AddStringToObject(obj, "id", id);
		cJSON_AddStringToObject(obj, "workspace", ws);
		cJSON_AddBoolToObject(obj, "cow", o.cow);
		cJSON_AddBoolToObject(obj, "live", true);
		cJSON_AddNumberToObject(obj, "pid", pid);
		cJSON_AddStringToObject(obj, "socket", path);
		text = cJSON_PrintUnformatted(obj);
		cJSON_Delete(obj);
		printf("%s\n", text ? text : "{}");
	} else
		printf("%s\n", id);
	return 0;
}

/* ps and stop: one request, one answer. */
static int session_request(const char *what, int argc, char **argv)
{
	_cleanup_free_ char *state = NULL, *text = NULL;
	SessionRequest rq = { .kind = strcmp(what, "ps") == 0 ? SESSION_REQ_PS : SESSION_REQ_STOP };
	const char *id = NULL;
	SessionReplyHead h;
	int sock, r;

	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 && rq.kind == SESSION_REQ_PS)
			rq.flags |= SESSION_PS_JSON;
		else if (!id && argv[i][0] != '-')
			id = argv[i];
		else {
			fprintf(stderr, "Usage: ward session %s ID%s\n", what,
				rq.kind == SESSION_REQ_PS ? " [--json]" : "");
			return WARD_EXIT_USAGE;
		}
	}
	if (!id || !session_id_valid(id)) {
		fprintf(stderr, "Usage: ward session %s ID (16 hexadecimal digits)\n", what);
		return WARD_EXIT_USAGE;
	}
	if ((r = ward_state_dir(&state)) < 0)
		return fail("ward's state directory", NULL, r);
	r = session_client_connect(state, id, &sock);
	if (r < 0) {
		/* A supervisor that was killed leaves its directory: remove it. */
		if (r == -ECONNREFUSED)
			session_live_remove(state, id);
		return fail("no live sandbox for session", id, r);
	}
	r = session_client_send(sock, &rq, NULL, 0);
	if (r < 0)
		return close(sock), fail("sending the request", NULL, r);
	r = session_client_reply(sock, &h, &text);
	if (rq.kind == SESSION_REQ_STOP) {
		/* The supervisor closes this connection when it exits, after
		 * the sandbox and everything in it are gone. */
		close(sock);
		if (r == -EPIPE)
			return 0;
		return fail("did not stop: session", id, r < 0 ? r : 0);
	}
	close(sock);
	if (r < 0)
		return fail("no answer from the session", NULL, r);
	if (h.kind == SESSION_REP_ERROR)
		return fail(text, NULL, 0);
	fputs(text, stdout);
	if (rq.flags & SESSION_PS_JSON)
		fputc('\n', stdout);
	return 0;
}

/* `session new`: a live session unless --storage-only (or --no-live)
 * asks for the storage alone; --live, the default, is still accepted.
 * Both together are a usage error. */
static int session_new(int argc, char **argv)
{
	_cleanup_free_ char **rest = NULL;
	bool live = false, storage = false;
	int n = 0;

	rest = calloc((size_t)argc + 1, sizeof(char *));
	if (!rest)
		return WARD_EXIT_FAILURE;
	bool help = false, options = true;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (i >= 2 && options && strcmp(a, "--") == 0)
			options = false;
		if (i < 2 || !options)
			rest[n++] = argv[i];
		else if (strcmp(a, "--live") == 0)
			live = true;
		else if (strcmp(a, "--storage-only") == 0 || strcmp(a, "--no-live") == 0)
			storage = true;
		else {
			if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
				help = true; /* the usage of both, from cmd-cow.c */
			rest[n++] = argv[i];
		}
	}
	if (live && storage) {
		fprintf(stderr, "ward session new: --live and --storage-only exclude each other\n");
		return WARD_EXIT_USAGE;
	}
	if (help)
		storage = true;
	return storage ? cmd_session_storage(n, rest) : session_new_live(n, rest);
}

int cmd_session(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "new") == 0)
		return session_new(argc, argv);
	if (argc >= 2 && (strcmp(argv[1], "ps") == 0 || strcmp(argv[1], "stop") == 0))
		return session_request(argv[1], argc, argv);
	return cmd_session_storage(argc, argv);
}
