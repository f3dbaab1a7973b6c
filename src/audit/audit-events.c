/* The events stream. Three rules shape it:
 *
 * - It must never stall the run for long: a pipe gets a descriptor of its
 *   own (reopened through /proc/self/fd, so O_NONBLOCK does not reach the
 *   harness's end), a socket is written with MSG_DONTWAIT. A line waits at
 *   most EVENT_WAIT_MS for a reader that is behind; once one line was
 *   dropped, later lines do not wait until one gets through.
 * - It must never kill ward: SIGPIPE is blocked around the write (and a
 *   SIGPIPE it raised is taken back), sockets use MSG_NOSIGNAL. A reader
 *   that is gone stops the stream.
 * - Lines must not interleave: the supervisor, the proxy and the quarantine
 *   guard all write to it. Lines up to PIPE_BUF are atomic in a pipe; a
 *   POSIX write lock on the stream's inode keeps longer ones whole.
 *
 * The counters live in a shared anonymous mapping, so that lines the proxy
 * (a forked process) could not send are counted where the `exit` event is
 * written. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit-events.h"
#include "common/macro.h"
#include "common/time-util.h"

enum { STREAM_OK, STREAM_BEHIND, STREAM_STOPPED };

typedef struct Shared {
	atomic_uint lost;
	atomic_int state;
	atomic_int error; /* why it stopped */
} Shared;

struct EventStream {
	int fd;
	bool socket;
	bool bounded; /* a pipe or socket: waits are bounded */
	Shared *sh;
};

static int own_descriptor(int fd, const struct stat *st, bool *ret_bounded)
{
	char path[64];
	int nfd;

	*ret_bounded = false;
	if (S_ISFIFO(st->st_mode)) {
		/* A new open file description of the same pipe: O_NONBLOCK on
		 * it leaves the harness's descriptor as it is. */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		nfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (nfd >= 0) {
			struct stat nst;
			if (fstat(nfd, &nst) == 0 && nst.st_ino == st->st_ino &&
			    nst.st_dev == st->st_dev) {
				*ret_bounded = true;
				return nfd;
			}
			close(nfd);
		}
		/* No /proc (or no reader yet: ENXIO): share the description
		 * and make it non-blocking (documented in docs/audit.md). */
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (nfd < 0)
			return -errno;
		int fl = fcntl(nfd, F_GETFL);
		if (fl >= 0 && fcntl(nfd, F_SETFL, fl | O_NONBLOCK) == 0)
			*ret_bounded = true;
		return nfd;
	}
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (nfd < 0)
		return -errno;
	*ret_bounded = S_ISSOCK(st->st_mode);
	return nfd;
}

int event_stream_new(int fd, EventStream **ret)
{
	EventStream *s;
	struct stat st;
	int fl, nfd;
	bool bounded;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -EBADF;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_PATH) || (fl & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (S_ISDIR(st.st_mode))
		return -EBADF;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->sh = mmap(NULL, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		     0);
	if (s->sh == MAP_FAILED) {
		free(s);
		return -ENOMEM;
	}
	nfd = own_descriptor(fd, &st, &bounded);
	if (nfd < 0) {
		munmap(s->sh, sizeof(Shared));
		free(s);
		return nfd;
	}
	s->fd = nfd;
	s->socket = S_ISSOCK(st.st_mode);
	s->bounded = bounded;
	*ret = s;
	return 0;
}

EventStream *event_stream_free(EventStream *s)
{
	if (!s)
		return NULL;
	if (s->fd >= 0)
		close(s->fd);
	munmap(s->sh, sizeof(Shared));
	free(s);
	return NULL;
}

int event_stream_fd(const EventStream *s)
{
	return s ? s->fd : -EBADF;
}

unsigned event_stream_lost(const EventStream *s, int *ret_error)
{
	if (!s)
		return 0;
	if (ret_error)
		*ret_error = atomic_load(&s->sh->state) == STREAM_STOPPED ? atomic_load(&s->sh->error)
									   : 0;
	return atomic_load(&s->sh->lost);
}

static void stop(EventStream *s, int error)
{
	atomic_store(&s->sh->error, error);
	atomic_store(&s->sh->state, STREAM_STOPPED);
}

static ssize_t send_some(EventStream *s, const char *p, size_t n)
{
	if (s->socket)
		return send(s->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	return write(s->fd, p, n);
}

/* Wait until @s->fd takes more or @deadline (monotonic ms) passes. */
static bool wait_writable(EventStream *s, uint64_t deadline)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLOUT };
	uint64_t now = monotonic_ms();

	if (now >= deadline)
		return false;
	return RETRY_EINTR(poll(&pfd, 1, (int)(deadline - now))) > 0;
}

static void send_line(EventStream *s, const char *line, size_t len)
{
	const bool behind = atomic_load(&s->sh->state) == STREAM_BEHIND;
	uint64_t start = monotonic_ms();
	uint64_t deadline = start + (behind || !s->bounded ? 0 : EVENT_WAIT_MS);
	size_t off = 0;

	while (off < len) {
		ssize_t k = send_some(s, line + off, len - off);

		if (k > 0) {
			if (off == 0)
				deadline = start + EVENT_FINISH_MS;
			off += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_writable(s, deadline))
			continue;
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			/* The reader is gone: for every writer of the stream.
			 * Another error (a full disk under a file) is this
			 * line's: counted, and the next one tries again. */
			if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)
				stop(s, -errno);
			else if (off > 0)
				stop(s, -errno);
			atomic_fetch_add(&s->sh->lost, 1);
			return;
		}
		break;
	}
	if (off == len) {
		if (behind)
			atomic_store(&s->sh->state, STREAM_OK);
		return;
	}
	atomic_fetch_add(&s->sh->lost, 1);
	if (off > 0)
		/* Half a line is out: nothing after it could be read as JSON. */
		stop(s, -ETIMEDOUT);
	else
		atomic_store(&s->sh->state, STREAM_BEHIND);
}

void event_stream_write(EventStream *s, const char *line, size_t len)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	sigset_t pipe_set, saved, pending;
	bool was_pending;

	if (!s)
		return;
	if (atomic_load(&s->sh->state) == STREAM_STOPPED) {
		atomic_fetch_add(&s->sh->lost, 1);
		return;
	}
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	(void)sigprocmask(SIG_BLOCK, &pipe_set, &saved);
	was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
	/* Every writer of the stream takes it; a holder waits a bounded time. */
	bool locked = RETRY_EINTR(fcntl(s->fd, F_SETLKW, &fl)) == 0;

	if (atomic_load(&s->sh->state) == STREAM_STOPPED)
		atomic_fetch_add(&s->sh->lost, 1);
	else
		send_line(s, line, len);
	if (locked) {
		fl.l_type = F_UNLCK;
		(void)fcntl(s->fd, F_SETLK, &fl);
	}
	if (!was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
		struct timespec zero = { 0, 0 };
		(void)sigtimedwait(&pipe_set, NULL, &zero);
	}
	(void)sigprocmask(SIG_SETMASK, &saved, NULL);
}
