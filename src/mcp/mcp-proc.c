/* Child processes of the MCP server (mcp-proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "mcp/mcp-proc.h"

extern char **environ;

struct McpProc {
	pid_t pid;
	int pidfd;
	int fd[2];          /* stdout, stderr read ends; -1 once at EOF */
	McpCapture *cap[2];
	bool exited;
};

McpProc *mcp_proc_free(McpProc *p)
{
	if (!p)
		return NULL;
	for (int i = 0; i < 2; i++)
		if (p->fd[i] >= 0)
			close(p->fd[i]);
	if (p->pidfd >= 0)
		close(p->pidfd);
	free(p);
	return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(McpProc *, mcp_proc_free)

int mcp_proc_spawn(const char *exe, char *const *argv, McpCapture *out, McpCapture *err,
		   McpProc **ret)
{
	_cleanup_(mcp_proc_freep) McpProc *p = calloc(1, sizeof(*p));
	_cleanup_close_ int w_out = -EBADF, w_err = -EBADF;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, deflt;
	int pipes[2][2], r;

	if (!p)
		return -ENOMEM;
	p->pidfd = p->fd[0] = p->fd[1] = -1;
	p->cap[0] = out;
	p->cap[1] = err;
	for (int i = 0; i < 2; i++) {
		if (pipe2(pipes[i], O_CLOEXEC) < 0)
			return -errno;
		p->fd[i] = pipes[i][0];
	}
	w_out = pipes[0][1];
	w_err = pipes[1][1];
	/* The pipes' write ends become the child's 1 and 2 (dup2 clears
	 * O_CLOEXEC on the copy); every other descriptor of ours is
	 * O_CLOEXEC, so the child inherits nothing else. */
	if ((r = posix_spawn_file_actions_init(&fa)) != 0)
		return -r;
	r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!r)
		r = posix_spawn_file_actions_adddup2(&fa, w_out, 1);
	if (!r)
		r = posix_spawn_file_actions_adddup2(&fa, w_err, 2);
	/* The server ignores SIGPIPE (mcp-loop.c); the command must not
	 * inherit that (`yes | head` would never end), nor a blocked mask. */
	if (!r)
		r = posix_spawnattr_init(&attr);
	if (!r) {
		sigemptyset(&none);
		sigemptyset(&deflt);
		sigaddset(&deflt, SIGPIPE);
		(void)posix_spawnattr_setsigmask(&attr, &none);
		(void)posix_spawnattr_setsigdefault(&attr, &deflt);
		(void)posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
		r = posix_spawn(&p->pid, exe, &fa, &attr, argv, environ);
		posix_spawnattr_destroy(&attr);
	}
	posix_spawn_file_actions_destroy(&fa);
	if (r)
		return -r;
	/* Our own unreaped child: its pid cannot be reused before we wait. */
	p->pidfd = pidfd_open(p->pid, 0);
	if (p->pidfd < 0) {
		r = -errno;
		(void)kill(p->pid, SIGKILL);
		(void)waitpid(p->pid, NULL, 0);
		return r;
	}
	*ret = TAKE_PTR(p);
	return 0;
}

size_t mcp_proc_pollfds(const McpProc *p, struct pollfd *fds)
{
	size_t n = 0;

	fds[n++] = (struct pollfd){ .fd = p->pidfd, .events = POLLIN };
	for (int i = 0; i < 2; i++)
		fds[n++] = (struct pollfd){ .fd = p->fd[i], .events = POLLIN };
	return n;
}

/* Read once from stream @i; at EOF or error close it. @drain: until no
 * more data is there (the child has exited, so what is in the pipe is
 * all it wrote; a process it left behind could hold the pipe open, and
 * we do not wait for that one). */
static void read_stream(McpProc *p, int i, bool drain)
{
	char buf[65536];

	while (p->fd[i] >= 0) {
		ssize_t k = read(p->fd[i], buf, sizeof(buf));
		if (k > 0) {
			mcp_capture_add(p->cap[i], buf, (size_t)k);
			if (!drain)
				return;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			return;
		close(p->fd[i]);
		p->fd[i] = -1;
	}
}

int mcp_proc_events(McpProc *p, const struct pollfd *fds, size_t n, int *ret_exit_code)
{
	siginfo_t si = {};

	for (size_t k = 1; k < n && k < 3; k++)
		if (fds[k].fd >= 0 && fds[k].revents)
			read_stream(p, (int)k - 1, false);
	if (!(fds[0].revents & POLLIN))
		return 0;
	if (waitid(P_PIDFD, (id_t)p->pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
		return 0;
	p->exited = true;
	for (int i = 0; i < 2; i++) {
		if (p->fd[i] >= 0)
			(void)fcntl(p->fd[i], F_SETFL, O_NONBLOCK);
		read_stream(p, i, true);
	}
	*ret_exit_code = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
	return 1;
}

void mcp_proc_signal(McpProc *p, int sig)
{
	if (!p->exited)
		(void)pidfd_send_signal(p->pidfd, sig, NULL, 0);
}
