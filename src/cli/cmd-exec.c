/* ward exec ID [OPTION]... -- CMD [ARG]...: run CMD in the live session ID
 * (docs/sessions.md). The client does almost nothing before it sends its
 * request — no policy, no probe, no audit (the session's supervisor does
 * those, once): find the control socket, make the standard descriptors
 * safe to pass (stdio-relay.h: a writable file goes through a pipe this
 * process copies), send them with the request, pass on the signals it
 * gets, and exit with the command's exit code. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/strv.h"
#include "linux/pty-relay.h"
#include "linux/stdio-relay.h"
#include "session/session-client.h"
#include "session/session-paths.h"
#include "ward/ward.h"

static const char usage_exec[] =
	"Usage: ward exec ID [OPTION]... -- COMMAND [ARG]...\n"
	"Run COMMAND in the live session ID (ward session new).\n\n"
	"  -e, --env NAME=VALUE  set a variable the session's policy passes\n"
	"  -C, --cwd DIR         the directory to run in (default: the workspace)\n"
	"      --timeout SECONDS a limit at most the session's limits.timeout_s\n"
	"      --background      start COMMAND and return; it runs until it exits or\n"
	"                        the session stops (ward session ps lists it)\n"
	"      --result FILE     write the result object (docs/result.md) to FILE\n"
	"  -h, --help            show this help\n";

extern char **environ;

static int usage_error(const char *why)
{
	fprintf(stderr, "ward exec: %s\nTry 'ward exec --help'.\n", why);
	return WARD_EXIT_USAGE;
}

static int write_result(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	size_t n = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n || write(fd, "\n", 1) != 1) {
		close(fd);
		return -EIO;
	}
	return close(fd) < 0 ? -errno : 0;
}

/* ---- a terminal on stdio: the command's own pty, relayed here ---- */

/* The pty's master came: relay it to our terminal (raw while the
 * command's output is the terminal and we are in its foreground). */
static void tty_start(PtyRelay **relay, const PtyPlan *pty, int master)
{
	if (*relay || pty_relay_new(pty, relay) < 0) {
		close(master);
		return;
	}
	pty_relay_set_master(*relay, master);
}

/* The command stopped (^Z on its pty): stop with it, as a job does, with
 * the terminal's modes back; continued, continue it. */
static void tty_stopped(PtyRelay *relay, int sock)
{
	SessionRequest cont = { .kind = SESSION_REQ_SIGNAL, .value = SIGCONT,
				.flags = SESSION_SIGNAL_GROUP };

	if (!relay || !pty_relay_interactive(relay))
		return;
	pty_relay_suspend(relay);
	(void)kill(getpid(), SIGTSTP); /* stops here, unless our group is orphaned */
	pty_relay_resume(relay);
	(void)session_client_send(sock, &cont, NULL, 0);
}

/* After the command's end: what it left in the pty, until the pty is
 * gone (its init exits right after the command), then the terminal's
 * modes back. */
static PtyRelay *tty_finish(PtyRelay *relay)
{
	if (!relay)
		return NULL;
	for (int i = 0; i < 200 && !pty_relay_master_gone(relay); i++) {
		struct pollfd p[2];
		size_t n = pty_relay_pollfds(relay, p);
		if (poll(p, n, 10) < 0 && errno != EINTR)
			break;
		pty_relay_events(relay, p, n);
	}
	pty_relay_drain(relay);
	return pty_relay_free(relay);
}

int cmd_exec(int argc, char **argv)
{
	SessionRequest rq = { .kind = SESSION_REQ_EXEC };
	_cleanup_strv_ char **extra = NULL;
	_cleanup_free_ char *state = NULL, *text = NULL;
	const char *id = NULL, *result = NULL;
	StdioRelay relay = STDIO_RELAY_INIT;
	int sock = -1, i, r, code = WARD_EXIT_SETUP, fds[3];
	sigset_t mask;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_exec, stdout);
			return 0;
		}
		if (strcmp(a, "--background") == 0)
			rq.flags |= SESSION_EXEC_BACKGROUND;
		else if ((strcmp(a, "-e") == 0 || strcmp(a, "--env") == 0) && i + 1 < argc) {
			if (!strchr(argv[i + 1], '=') || argv[i + 1][0] == '=')
				return usage_error("--env takes NAME=VALUE");
			if (strv_extend(&extra, argv[++i]) < 0)
				return WARD_EXIT_SETUP;
		} else if ((strcmp(a, "-C") == 0 || strcmp(a, "--cwd") == 0) && i + 1 < argc)
			rq.cwd = argv[++i];
		else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) {
			char *end;
			errno = 0;
			unsigned long long t = strtoull(argv[++i], &end, 10);
			if (errno || *end || !*argv[i] || argv[i][0] == '-' || t == 0 || t > 2592000)
				return usage_error("--timeout takes seconds from 1 to 2592000");
			rq.value = (uint32_t)t;
		} else if (strcmp(a, "--result") == 0 && i + 1 < argc)
			result = argv[++i];
		else if (a[0] == '-')
			return usage_error("unknown option, or one without its value");
		else if (!id)
			id = a;
		else
			return usage_error("the command goes after --");
	}
	if (!id)
		return usage_error("which session? (ward exec ID -- COMMAND)");
	if (i >= argc)
		return usage_error("no command (ward exec ID -- COMMAND)");
	if (!session_id_valid(id))
		return usage_error("a session id is 16 hexadecimal digits");
	rq.argv = argv + i;
	rq.env = environ;
	rq.extra = extra;
	if (result)
		rq.flags |= SESSION_EXEC_RESULT;

	if ((r = ward_state_dir(&state)) < 0)
		return fprintf(stderr, "ward exec: no state directory: %s\n", strerror(-r)), code;
	/* Everything before the connection, then the request right after
	 * it: the supervisor wakes once, to a request already there. */
	r = stdio_relay_prepare(&relay);
	if (r < 0) {
		fprintf(stderr, "ward exec: preparing the standard descriptors: %s\n", strerror(-r));
		return code;
	}
	for (int fd = 0; fd < 3; fd++)
		fds[fd] = relay.child_fd[fd] >= 0 ? relay.child_fd[fd] : fd;
	/* A terminal: the command gets a pty of the sandbox's (as ward run's
	 * does), this process relays it. */
	PtyPlan pty;
	PtyRelay *tty = NULL;
	pty_plan_init_fds(&pty, fds);
	if (pty.enabled && !(rq.flags & SESSION_EXEC_BACKGROUND))
		rq.flags |= SESSION_EXEC_PTY;

	/* The signals a terminal or a harness sends go to the command. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGWINCH);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

	r = session_client_connect(state, id, &sock);
	if (r < 0) {
		fprintf(stderr, "ward exec: session %s has no live sandbox (%s); start one with 'ward session new'\n",
			id, strerror(-r));
		stdio_relay_done(&relay);
		return code;
	}
	r = session_client_send(sock, &rq, fds, 3);
	if (r < 0) {
		fprintf(stderr, "ward exec: sending the request: %s\n", strerror(-r));
		stdio_relay_done(&relay);
		return code;
	}
	if (stdio_relay_start(&relay) < 0)
		fprintf(stderr, "ward exec: could not start the output copier\n");

	bool errored = false;
	for (;;) {
		struct pollfd p[4] = { { .fd = sock, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		size_t np = 2;
		if (tty)
			np += pty_relay_pollfds(tty, &p[2]);
		if (poll(p, np, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (tty)
			pty_relay_events(tty, &p[2], np - 2);
		if (p[1].revents) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGWINCH) {
					if (tty)
						pty_relay_winch(tty);
					continue;
				}
				SessionRequest sg = { .kind = SESSION_REQ_SIGNAL, .value = si.ssi_signo };
				if (si.ssi_code == SI_KERNEL)
					sg.flags = SESSION_SIGNAL_GROUP;
				(void)session_client_send(sock, &sg, NULL, 0);
			}
		}
		if (!p[0].revents)
			continue;
		SessionReplyHead h;
		int rfd;
		free(text);
		text = NULL;
		r = session_client_reply_fd(sock, &h, &text, &rfd);
		if (r < 0) {
			if (!errored)
				fprintf(stderr, "ward exec: the session ended without a result (%s)\n",
					strerror(-r));
			break;
		}
		if (h.kind == SESSION_REP_ERROR) {
			fprintf(stderr, "ward exec: %s\n", text);
			code = h.code;
			errored = true;
			if (!result)
				break;
			continue;
		}
		if (h.kind == SESSION_REP_PTY && rfd >= 0) {
			tty_start(&tty, &pty, rfd);
			continue;
		}
		if (h.kind == SESSION_REP_NOTE) {
			fprintf(stderr, "ward: %s\n", text);
			continue;
		}
		if (h.kind == SESSION_REP_STOPPED) {
			tty_stopped(tty, sock);
			continue;
		}
		if (h.kind == SESSION_REP_STARTED) {
			code = 0;
			break;
		}
		if (h.kind == SESSION_REP_EXIT) {
			code = h.code;
			if (result && *text && (r = write_result(result, text)) < 0)
				fprintf(stderr, "ward exec: writing %s: %s\n", result, strerror(-r));
			break;
		}
	}
	tty = tty_finish(tty);
	close(sock);
	/* A background command's copier lives as long as it writes. */
	if (!(rq.flags & SESSION_EXEC_BACKGROUND))
		stdio_relay_done(&relay);
	return code;
}
