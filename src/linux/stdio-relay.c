/* Safe standard descriptors for the sandbox: see stdio-relay.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/macro.h"
#include "linux/stdio-relay.h"

#define COPY_CHUNK 65536

static int close_fd(int fd)
{
	if (fd >= 0)
		(void)close(fd);
	return -EBADF;
}

/* Are fds @a and @b the same open file description? kcmp(2) says so
 * exactly; without it (no CONFIG_KCMP) the same inode with the same flags
 * is taken as the same: one pipe then keeps the order of their writes. */
static bool same_open_file(int a, int b)
{
	pid_t self = getpid();
	struct stat sa, sb;
	long k = syscall(SYS_kcmp, self, self, KCMP_FILE, a, b);

	if (k >= 0)
		return k == 0;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino && fcntl(a, F_GETFL) == fcntl(b, F_GETFL);
}

static int null_fd(StdioRelay *r)
{
	if (r->null_fd < 0) {
		r->null_fd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
		if (r->null_fd < 0)
			return -errno;
	}
	return r->null_fd;
}

/* A pipe for relay slot @slot (0: fd 1, 1: fd 2), copied to @out. */
static int add_pipe(StdioRelay *r, int slot, int out)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	r->pipe_r[slot] = p[0];
	r->pipe_w[slot] = p[1];
	r->out_fd[slot] = out;
	return p[1];
}

/* fd 0 open for writing on a regular file: the command gets a read-only
 * description of the same file at the same offset. */
static int reopen_read_only(int fd)
{
	off_t off = lseek(fd, 0, SEEK_CUR);
	char path[32];
	int n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (n < 0)
		return -errno;
	/* O_NONBLOCK only guarded the open against a FIFO swapped in. */
	(void)fcntl(n, F_SETFL, 0);
	if (off > 0 && lseek(n, off, SEEK_SET) < 0) {
		int e = -errno;
		(void)close(n);
		return e;
	}
	return n;
}

int stdio_relay_prepare(StdioRelay *r)
{
	for (int fd = 0; fd <= 2; fd++) {
		const int src = r->src[fd];
		int flags = fcntl(src, F_GETFL), acc, w;
		struct stat st;

		if (flags < 0 || fstat(src, &st) < 0) {
			if (src != fd)
				return -EBADF; /* a passed descriptor must be open */
			continue;              /* closed: stays closed */
		}
		/* A passed descriptor goes on fd n as it is, unless replaced. */
		if (src != fd)
			r->child_fd[fd] = src;
		acc = flags & O_ACCMODE;
		if ((flags & O_PATH) || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)) {
			/* A directory or a path-only handle grants a walk into
			 * the host tree beneath it: nothing of it passes. */
			int n = null_fd(r);
			if (n < 0)
				return n;
			r->child_fd[fd] = n;
			r->replaced |= 1U << fd;
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		if (fd == 0) {
			if (acc == O_RDONLY)
				continue;
			w = reopen_read_only(src);
			if (w < 0)
				return w;
			r->child_fd[0] = r->stdin_ro = w;
			continue;
		}
		if (acc == O_RDONLY)
			continue;
		if (fd == 2 && r->pipe_w[0] >= 0 && same_open_file(r->src[1], src)) {
			r->child_fd[2] = r->pipe_w[0];
			continue;
		}
		w = add_pipe(r, fd - 1, src);
		if (w < 0)
			return w;
		r->child_fd[fd] = w;
	}
	return 0;
}

int stdio_relay_apply_child(const StdioRelay *r)
{
	for (int fd = 0; fd <= 2; fd++)
		if (r->child_fd[fd] >= 0 && dup2(r->child_fd[fd], fd) < 0)
			return -errno;
	return 0;
}

/* Everything in @out; a harness descriptor that stops taking data (disk
 * full, closed) makes the rest be read and dropped, so the command is
 * never blocked on a full pipe. */
static void write_all(int out, const char *buf, size_t n, bool *broken)
{
	while (n > 0 && !*broken) {
		ssize_t k = write(out, buf, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			*broken = true;
			return;
		}
		buf += k;
		n -= (size_t)k;
	}
}

/* One pipe's worth: splice where the kernel allows it (not into an
 * O_APPEND file), read and write otherwise. Returns false at EOF. */
static bool copy_some(int in, int out, bool *use_splice, bool *broken)
{
	static char buf[COPY_CHUNK];
	ssize_t n;

	if (*use_splice && !*broken) {
		n = splice(in, NULL, out, NULL, COPY_CHUNK, SPLICE_F_MOVE);
		if (n > 0)
			return true;
		if (n == 0)
			return false;
		if (errno == EINTR || errno == EAGAIN)
			return true;
		*use_splice = false; /* EINVAL: O_APPEND; anything else: try write(2) */
	}
	n = read(in, buf, sizeof(buf));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0)
		return false;
	write_all(out, buf, (size_t)n, broken);
	return true;
}

/* Close every fd above 2 but the @n in @keep (negative ones ignored): the
 * copier holds nothing of the supervisor's but its pipes and the harness's
 * descriptors, which are above 2 when the harness passed them
 * (RunRequest.stdio) rather than leaving them on fds 1 and 2. */
static void keep_only(const int *keep, size_t n)
{
	unsigned next = 3;

	for (;;) {
		int lo = -1;
		/* The smallest kept fd at or above @next. */
		for (size_t i = 0; i < n; i++)
			if (keep[i] >= (int)next && (lo < 0 || keep[i] < lo))
				lo = keep[i];
		if (lo < 0) {
			(void)syscall(SYS_close_range, next, ~0U, 0U);
			return;
		}
		if ((unsigned)lo > next)
			(void)syscall(SYS_close_range, next, (unsigned)lo - 1, 0U);
		next = (unsigned)lo + 1;
	}
}

_noreturn_ static void copier_main(StdioRelay *r)
{
	bool use_splice[2] = { true, true }, broken[2] = { false, false };
	int live = 0;

	/* ^C on the terminal or a signal to the harness's group must not cut
	 * the output short: the copier ends when the pipes do. */
	(void)signal(SIGINT, SIG_IGN);
	(void)signal(SIGTERM, SIG_IGN);
	(void)signal(SIGHUP, SIG_IGN);
	(void)signal(SIGQUIT, SIG_IGN);
	(void)signal(SIGPIPE, SIG_IGN);
	const int keep[] = { r->pipe_r[0], r->pipe_r[1], r->out_fd[0], r->out_fd[1] };
	keep_only(keep, 4);
	for (int i = 0; i < 2; i++)
		live += r->pipe_r[i] >= 0;
	while (live > 0) {
		struct pollfd p[2] = { { .fd = r->pipe_r[0], .events = POLLIN },
				       { .fd = r->pipe_r[1], .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		for (int i = 0; i < 2; i++) {
			if (r->pipe_r[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (!copy_some(r->pipe_r[i], r->out_fd[i], &use_splice[i], &broken[i])) {
				r->pipe_r[i] = close_fd(r->pipe_r[i]);
				live--;
			}
		}
	}
	_exit(0);
}

int stdio_relay_start(StdioRelay *r)
{
	pid_t pid;

	/* Only the sandbox may hold the write ends: the pipes end when it does. */
	for (int i = 0; i < 2; i++)
		r->pipe_w[i] = close_fd(r->pipe_w[i]);
	for (int fd = 0; fd <= 2; fd++)
		r->child_fd[fd] = -EBADF; /* aliases of the fds closed here */
	r->null_fd = close_fd(r->null_fd);
	r->stdin_ro = close_fd(r->stdin_ro);
	if (r->pipe_r[0] < 0 && r->pipe_r[1] < 0)
		return 0;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		copier_main(r);
	r->copier = pid;
	for (int i = 0; i < 2; i++)
		r->pipe_r[i] = close_fd(r->pipe_r[i]);
	return 0;
}

void stdio_relay_done(StdioRelay *r)
{
	if (r->copier > 0) {
		while (waitpid(r->copier, NULL, 0) < 0 && errno == EINTR)
			;
		r->copier = 0;
	}
	for (int i = 0; i < 2; i++) {
		r->pipe_r[i] = close_fd(r->pipe_r[i]);
		r->pipe_w[i] = close_fd(r->pipe_w[i]);
	}
	for (int fd = 0; fd <= 2; fd++)
		r->child_fd[fd] = -EBADF;
	r->null_fd = close_fd(r->null_fd);
	r->stdin_ro = close_fd(r->stdin_ro);
}
